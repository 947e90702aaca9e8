//! Golden files of the `ull` wire format (kind 12): decoded and re-encoded byte for
//! byte, so the format cannot change silently. Regenerate (after a deliberate,
//! versioned format change only) with `LOXO_BLESS=1 cargo test -p loxo-tests --test
//! golden_ull`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::wire::{Frame, SketchKind};
use loxo_core::{DecodeError, Seed};
use loxo_hll::{Hll, Precision, SupportedPrecision, Ull};

use loxo_tests::golden::check;

const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0068_6c6c);

fn fed<const P: u8>(n: u32, offset: u32) -> Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    let mut u = Ull::<P>::new(SEED);
    for i in offset..offset + n {
        u.insert(&i.to_le_bytes());
    }
    u
}

fn round_trip<const P: u8>(name: &str, sketch: &Ull<P>, expect_len: usize)
where
    Precision<P>: SupportedPrecision,
{
    let mut buf = vec![0u8; sketch.encoded_len()];
    let n = sketch.encode_into(&mut buf).unwrap();
    assert_eq!(n, expect_len, "{name}: encoded length");
    let stored = check(name, &buf[..n]);
    let frame = Frame::parse(&stored).unwrap();
    assert_eq!(frame.header().kind, SketchKind::Ull);
    assert_eq!(frame.header().params, [u32::from(P), 8, 0, 0]);
    let mut back = Ull::<P>::new(SEED);
    back.decode_into(&stored).unwrap();
    assert_eq!(&back, sketch);
    assert_eq!(back.estimate().to_bits(), sketch.estimate().to_bits());
    assert_eq!(back.estimate_ml().to_bits(), sketch.estimate_ml().to_bits());
    assert_eq!(
        back.estimate_martingale().map(f64::to_bits),
        sketch.estimate_martingale().map(f64::to_bits)
    );
    let mut again = vec![0u8; n];
    assert_eq!(back.encode_into(&mut again).unwrap(), n);
    assert_eq!(again, stored, "{name}: re-encoding differs");
}

#[test]
fn sparse_with_martingale() {
    // 50 keys at P = 10: ≤ 50 non-zero registers, 4 bytes each + count + HIP f64.
    let u = fed::<10>(50, 0);
    let nz = u.registers().iter().filter(|&&r| r != 0).count();
    round_trip("ull_p10_sparse.bin", &u, 36 + 8 + 4 + 4 * nz + 4);
}

#[test]
fn dense_with_martingale() {
    round_trip("ull_p10_dense.bin", &fed::<10>(5_000, 0), 36 + 8 + 1024 + 4);
}

#[test]
fn dense_merged_without_martingale() {
    let mut u = fed::<10>(3_000, 0);
    u.merge(&fed::<10>(3_000, 2_000)).unwrap();
    assert!(u.estimate_martingale().is_none());
    round_trip("ull_p10_merged.bin", &u, 36 + 1024 + 4);
}

#[test]
fn empty_p14() {
    round_trip("ull_p14_empty.bin", &Ull::<14>::new(SEED), 36 + 8 + 4 + 4);
}

#[test]
fn golden_files_refuse_other_targets() {
    let bytes = std::fs::read(loxo_tests::golden::path("ull_p10_dense.bin")).unwrap();
    let mut p12 = fed::<12>(10, 0);
    let before = p12.clone();
    assert!(matches!(
        p12.decode_into(&bytes),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert_eq!(p12, before);
    let mut other = Ull::<10>::new(Seed::new(1, 2));
    assert!(matches!(
        other.decode_into(&bytes),
        Err(DecodeError::SeedMismatch { .. })
    ));
    assert!(other.is_empty());
    // An HLL of the same precision is another kind.
    let mut hll = Hll::<10>::new(SEED);
    assert!(matches!(
        hll.decode_into(&bytes),
        Err(DecodeError::WrongKind { .. })
    ));
    // A collector without the seed still reads it, and learns the fingerprint.
    let fp = other.decode_into_any_seed(&bytes).unwrap();
    assert_eq!(fp, SEED.fingerprint());
    assert_eq!(other.registers(), fed::<10>(5_000, 0).registers());
}

/// The kind is new in version 2: a version-1 `ull` frame never existed and is
/// refused, even re-signed.
#[test]
fn version_one_is_refused() {
    let mut bytes = std::fs::read(loxo_tests::golden::path("ull_p10_sparse.bin")).unwrap();
    bytes[4] = 1;
    loxo_tests::wire::resign(&mut bytes);
    assert_eq!(
        Frame::parse(&bytes).err(),
        Some(DecodeError::UnsupportedVersion(1))
    );
}

/// Corrupted payloads (re-signed so they pass the CRC): every bad value is an
/// error and leaves the target unchanged.
#[test]
fn corrupt_payloads_are_refused() {
    let good = std::fs::read(loxo_tests::golden::path("ull_p10_sparse.bin")).unwrap();
    let target = fed::<10>(7, 100);
    let cases: [(usize, u8, DecodeError); 4] = [
        (7, 0x80, DecodeError::InvalidValue),          // unknown flag
        (36 + 8 + 4, 0x00, DecodeError::InvalidValue), // first entry's byte 0
        (36 + 8 + 4, 0x25, DecodeError::InvalidValue), // 37: not a P = 10 register
        (36 + 7, 0xff, DecodeError::InvalidValue),     // martingale NaN
    ];
    for (at, value, want) in cases {
        let mut bytes = good.clone();
        bytes[at] = value;
        loxo_tests::wire::resign(&mut bytes);
        let mut t = target.clone();
        assert_eq!(t.decode_into(&bytes), Err(want), "byte {at} = {value:#x}");
        assert_eq!(t, target);
        assert!(t.estimate_martingale().is_some());
    }
}

/// A sketch in sparse mode (`Ull::new_sparse`, 50 keys): flag bit 2, the list of
/// 25-bit-index entries. A sparse-mode target keeps the list; a dense one holds
/// the registers of the dense sketch of the same keys. (In a subdirectory for now:
/// the CLI tests count the top-level golden files, one per kind and variant.)
#[test]
fn list_p10_sparse_mode() {
    let mut u = Ull::<10>::new_sparse(SEED);
    for i in 0..50u32 {
        u.insert(&i.to_le_bytes());
    }
    let mut buf = vec![0u8; u.encoded_len()];
    let n = u.encode_into(&mut buf).unwrap();
    assert_eq!(n, 36 + 8 + 4 + 4 * 50 + 4);
    let stored = check("ull_sparse/ull_p10_list.bin", &buf[..n]);
    let frame = Frame::parse(&stored).unwrap();
    assert_eq!(frame.header().flags, 4 | 2);
    let mut back = Ull::<10>::new_sparse(SEED);
    back.decode_into(&stored).unwrap();
    assert!(back.is_sparse());
    assert_eq!(back, u);
    assert_eq!(back.estimate().to_bits(), u.estimate().to_bits());
    assert_eq!(
        back.estimate_martingale(),
        Some(50.0 + 50.0 * 50.0 / 6.0 / 33_554_432.0)
    );
    let mut again = vec![0u8; n];
    assert_eq!(back.encode_into(&mut again).unwrap(), n);
    assert_eq!(again, stored, "re-encoding differs");
    let mut dense = Ull::<10>::new(SEED);
    dense.decode_into(&stored).unwrap();
    assert!(!dense.is_sparse());
    assert_eq!(dense.registers(), fed::<10>(50, 0).registers());
    assert_eq!(dense.estimate_martingale(), u.estimate_martingale());
}
