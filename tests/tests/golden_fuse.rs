//! Golden files of the `binary-fuse` wire format (kind 13), 8- and 16-bit: the
//! host construction is deterministic, so building the same set gives the same bytes;
//! the stored frames view back into the same filter and re-encode byte for byte.
//! Regenerate (after a deliberate, versioned format change only) with
//! `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_fuse`.
//!
//! The set is what `loxo build-filter` makes of the lines `10.0.0.0/26`, `10.0.1.7`
//! and `2001:db8::1`: 64 + 1 IPv4 addresses hashed as their 4 bytes and one IPv6
//! address as its 16 (`crates/loxo-cli/tests/build_filter.rs` checks that the tool
//! writes these very files).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::{BinaryFuse16, BinaryFuse8};
use loxo_core::wire::{Frame, SketchKind, HEADER_LEN};
use loxo_core::{DecodeError, KeyHash, Seed};
use loxo_tests::golden::check;
use loxo_tests::wire::resign;

/// `loxo build-filter --seed 6e65646c6f6700006d6f6f6c62000000` (the 16 bytes in order).
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);

fn set() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..64u8).map(|i| vec![10, 0, 0, i]).collect();
    keys.push(vec![10, 0, 1, 7]);
    let mut v6 = [0u8; 16];
    v6[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6[15] = 1;
    keys.push(v6.to_vec());
    keys
}

fn hashes() -> Vec<KeyHash> {
    set().iter().map(|k| SEED.hash(k)).collect()
}

fn absent(k: &[u8]) -> bool {
    !set().iter().any(|s| s == k)
}

#[test]
fn binary_fuse8() {
    let built = BinaryFuse8::build(&hashes()).unwrap();
    let f = BinaryFuse8::from_parts(SEED, built.layout, &built.fingerprints).unwrap();
    let mut buf = vec![0u8; f.encoded_len()];
    let n = f.encode_into(&mut buf).unwrap();
    // 66 keys: segment length 2^⌊log(66)/log(3.33) + 2.25⌋ = 32, size factor
    // 0.875 + 0.25·log(10^6)/log(66) = 1.70 → 112 slots → 4 segments, 2 of which
    // take first probes: 128 slots, 15.5 bits per key (small sets pay more).
    assert_eq!((f.layout().segment_length(), f.layout().slots()), (32, 128));
    assert_eq!(n, HEADER_LEN + 12 + 128 + 4);
    let stored = check("binary_fuse8.bin", &buf);
    let frame = Frame::parse(&stored).unwrap();
    assert_eq!(frame.header().kind, SketchKind::BinaryFuse);
    assert_eq!(frame.header().params, [8, 3, 32, 64]);
    let back = BinaryFuse8::from_bytes(&stored, SEED).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.len(), 66);
    assert!(set().iter().all(|k| back.contains(k)));
    let mut again = vec![0u8; n];
    back.encode_into(&mut again).unwrap();
    assert_eq!(again, stored);
    // A few absent keys: 2^−8 each, and this set's answers are fixed bytes.
    let fp = (0..=255u8)
        .map(|i| [192, 168, 0, i])
        .filter(|k| absent(k) && back.contains(k))
        .count();
    assert!(fp <= 5, "{fp} of 256 absent keys reported present");
}

#[test]
fn binary_fuse16() {
    let built = BinaryFuse16::build(&hashes()).unwrap();
    let f = BinaryFuse16::from_parts(SEED, built.layout, &built.fingerprints).unwrap();
    let mut buf = vec![0u8; f.encoded_len()];
    let n = f.encode_into(&mut buf).unwrap();
    assert_eq!(n, HEADER_LEN + 12 + 2 * f.layout().slots() + 4);
    let stored = check("binary_fuse16.bin", &buf);
    let back = BinaryFuse16::from_bytes(&stored, SEED).unwrap();
    assert_eq!(back, f);
    assert!(set().iter().all(|k| back.contains(k)));
    let fp = (0..=255u8)
        .map(|i| [192, 168, 0, i])
        .filter(|k| back.contains(k))
        .count();
    assert_eq!(fp, 0);
}

/// Wrong width, seed, kind or version, and payloads re-signed after an edit that
/// breaks the geometry or the length: each its own error, never a panic.
#[test]
fn refusals() {
    let g8 = std::fs::read(loxo_tests::golden::path("binary_fuse8.bin")).unwrap();
    let g16 = std::fs::read(loxo_tests::golden::path("binary_fuse16.bin")).unwrap();
    // The identity checks say what they expected and what they found.
    assert_eq!(
        BinaryFuse16::from_bytes(&g8, SEED).err(),
        Some(DecodeError::ParameterMismatch {
            expected: 16,
            found: 8
        })
    );
    assert_eq!(
        BinaryFuse8::from_bytes(&g16, SEED).err(),
        Some(DecodeError::ParameterMismatch {
            expected: 8,
            found: 16
        })
    );
    assert_eq!(
        BinaryFuse8::from_bytes(&g8, Seed::new(1, 2)).err(),
        Some(DecodeError::SeedMismatch {
            expected: Seed::new(1, 2).fingerprint(),
            found: SEED.fingerprint()
        })
    );
    let edit = |at: usize, value: &[u8]| {
        let mut b = g8.clone();
        b[at..at + value.len()].copy_from_slice(value);
        resign(&mut b);
        BinaryFuse8::from_bytes(&b, SEED).err()
    };
    // Version 1: the kind did not exist.
    assert_eq!(edit(4, &[1, 0]), Some(DecodeError::UnsupportedVersion(1)));
    assert_eq!(
        edit(6, &[SketchKind::Cuckoo as u8]),
        Some(DecodeError::WrongKind {
            expected: SketchKind::BinaryFuse as u8,
            found: SketchKind::Cuckoo as u8
        })
    );
    assert_eq!(edit(7, &[1]), Some(DecodeError::InvalidValue)); // flags
    assert_eq!(
        edit(20, &[4]),
        Some(DecodeError::ParameterMismatch {
            expected: 3,
            found: 4
        })
    ); // arity 4
    assert_eq!(edit(24, &[3]), Some(DecodeError::InvalidValue)); // segment length 3
    assert_eq!(edit(28, &[60]), Some(DecodeError::InvalidValue)); // not a multiple
    assert_eq!(edit(28, &[32]), Some(DecodeError::TrailingBytes)); // fewer slots
    assert_eq!(edit(28, &[96]), Some(DecodeError::Truncated)); // more slots
    assert_eq!(edit(44, &[129, 0, 0, 0]), Some(DecodeError::InvalidValue)); // keys > slots
    assert!(BinaryFuse8::from_bytes(&g8, SEED).is_ok());
}
