//! Golden files of the `hll` wire format: decoded and re-encoded byte for byte, so
//! the format cannot change silently. Regenerate (after a deliberate, versioned format
//! change only) with `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_hll`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::wire::Frame;
use loxo_core::{DecodeError, Seed};
use loxo_hll::{Hll, HllSparse};

use loxo_tests::golden::check;

const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0068_6c6c);

fn fed<const P: u8>(n: u32, offset: u32) -> Hll<P>
where
    loxo_hll::Precision<P>: loxo_hll::SupportedPrecision,
{
    let mut h = Hll::<P>::new(SEED);
    for i in offset..offset + n {
        h.insert(&i.to_le_bytes());
    }
    h
}

fn round_trip<const P: u8>(name: &str, sketch: &Hll<P>, expect_len: usize)
where
    loxo_hll::Precision<P>: loxo_hll::SupportedPrecision,
{
    let mut buf = vec![0u8; sketch.encoded_len()];
    let n = sketch.encode_into(&mut buf).unwrap();
    assert_eq!(n, expect_len, "{name}: encoded length");
    let stored = check(name, &buf[..n]);
    let mut back = Hll::<P>::new(SEED);
    back.decode_into(&stored).unwrap();
    assert_eq!(&back, sketch);
    assert_eq!(back.estimate().to_bits(), sketch.estimate().to_bits());
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
    // 50 keys at P = 10: ≤ 50 non-zero registers, 3 bytes each + count + HIP f64.
    let h = fed::<10>(50, 0);
    let nz = h.registers().filter(|&r| r != 0).count();
    round_trip("hll_p10_sparse.bin", &h, 36 + 8 + 4 + 3 * nz + 4);
}

#[test]
fn dense_with_martingale() {
    let h = fed::<10>(5_000, 0);
    round_trip("hll_p10_dense.bin", &h, 36 + 8 + 768 + 4);
}

#[test]
fn dense_merged_without_martingale() {
    let mut h = fed::<10>(3_000, 0);
    h.merge(&fed::<10>(3_000, 2_000)).unwrap();
    assert!(h.estimate_martingale().is_none());
    round_trip("hll_p10_merged.bin", &h, 36 + 768 + 4);
}

#[test]
fn empty_p14() {
    let h = Hll::<14>::new(SEED);
    round_trip("hll_p14_empty.bin", &h, 36 + 8 + 4 + 4);
}

#[test]
fn golden_files_refuse_other_targets() {
    let bytes = std::fs::read(loxo_tests::golden::path("hll_p10_dense.bin")).unwrap();
    // Another precision, another seed: refused, target unchanged.
    let mut p12 = fed::<12>(10, 0);
    let before = p12.clone();
    assert!(matches!(
        p12.decode_into(&bytes),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert_eq!(p12, before);
    let mut other = Hll::<10>::new(Seed::new(1, 2));
    assert!(matches!(
        other.decode_into(&bytes),
        Err(DecodeError::SeedMismatch { .. })
    ));
    assert!(other.is_empty());
    // A collector without the seed still reads it, and learns the fingerprint.
    let fp = other.decode_into_any_seed(&bytes).unwrap();
    assert_eq!(fp, SEED.fingerprint());
    assert!(other.registers().eq(fed::<10>(5_000, 0).registers()));
}

/// An `HllSparse` in list mode (50 keys): flag bit 2, the list of 25-bit-index
/// entries. An `HllSparse` target keeps the list; an `Hll` holds the registers of
/// the dense sketch of the same keys. (In a subdirectory: the CLI tests count the
/// top-level golden files, one per kind and variant.)
#[test]
fn list_p10_hll_sparse() {
    let mut s = HllSparse::<10>::new(SEED);
    for i in 0..50u32 {
        s.insert(&i.to_le_bytes());
    }
    let mut buf = vec![0u8; s.encoded_len()];
    let n = s.encode_into(&mut buf).unwrap();
    assert_eq!(n, 36 + 8 + 4 + 4 * 50 + 4);
    let stored = check("hll_sparse/hll_p10_list.bin", &buf[..n]);
    let frame = Frame::parse(&stored).unwrap();
    assert_eq!(frame.header().flags, 4 | 2);
    assert_eq!(frame.header().params, [10, 6, 0, 0]);
    let mut back = HllSparse::<10>::new(SEED);
    back.decode_into(&stored).unwrap();
    assert!(back.is_sparse());
    assert_eq!(back, s);
    assert_eq!(back.estimate().to_bits(), s.estimate().to_bits());
    assert_eq!(
        back.estimate_martingale(),
        Some(50.0 + 50.0 * 50.0 / 6.0 / 33_554_432.0)
    );
    let mut again = vec![0u8; n];
    assert_eq!(back.encode_into(&mut again).unwrap(), n);
    assert_eq!(again, stored, "re-encoding differs");
    // A dense target: the registers of the same keys, the martingale carried on.
    let mut dense = Hll::<10>::new(SEED);
    dense.decode_into(&stored).unwrap();
    assert!(dense.registers().eq(fed::<10>(50, 0).registers()));
    assert_eq!(dense.estimate_martingale(), s.estimate_martingale());
    // Converted, the list-mode sketch is the golden dense-file sketch's kind again.
    assert_eq!(back.into_dense(), fed::<10>(50, 0));
}
