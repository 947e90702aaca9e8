//! Frames of format version 1 (kept under `tests/golden/v1/`, written before the
//! version-2 change of row and blocked-Bloom index derivation): kinds whose payload
//! kept its meaning still decode to the same sketch as their version-2 golden file;
//! kinds whose meaning changed are refused with `UnsupportedVersion(1)` instead of
//! being read into the wrong cells.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::Bloom;
use loxo_cms::{Cms, CountSketch};
use loxo_core::{DecodeError, Seed};
use loxo_hll::Hll;

fn read(name: &str) -> Vec<u8> {
    std::fs::read(loxo_tests::golden::path(name)).unwrap()
}

#[test]
fn unchanged_kinds_still_read_version_1() {
    let (v1, v2) = (read("v1/hll_p10_dense.bin"), read("hll_p10_dense.bin"));
    assert_eq!((v1[4], v2[4]), (1, 2));
    let seed = Seed::new(0x676f_6c64_656e, 0x0068_6c6c);
    let (mut a, mut b) = (Hll::<10>::new(seed), Hll::<10>::new(seed));
    a.decode_into(&v1).unwrap();
    b.decode_into(&v2).unwrap();
    assert_eq!(a, b);
    assert!(a.estimate() > 0.0);

    let (v1, v2) = (read("v1/bloom.bin"), read("bloom.bin"));
    let seed = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);
    let (mut a, mut b) = (Bloom::<16, 4>::new(seed), Bloom::<16, 4>::new(seed));
    a.decode_into(&v1).unwrap();
    b.decode_into(&v2).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, Bloom::<16, 4>::new(seed));
}

#[test]
fn changed_kinds_refuse_version_1() {
    let seed = Seed::new(0x676f_6c64_656e, 0x0063_6d73);
    assert_eq!(
        Cms::<32, 3>::new(seed).decode_into(&read("v1/cms.bin")),
        Err(DecodeError::UnsupportedVersion(1))
    );
    assert_eq!(
        CountSketch::<16, 3>::new(seed).decode_into(&read("v1/count_sketch.bin")),
        Err(DecodeError::UnsupportedVersion(1))
    );
}

#[test]
fn theta_has_no_version_1() {
    // Theta frames were introduced in version 2: a frame claiming version 1 is refused
    // by the envelope, before any payload rule.
    let seed = Seed::new(0x676f_6c64_656e, 0x0074_6865_7461);
    let mut v1 = read("theta_exact.bin");
    assert!(loxo_theta::ThetaSketch::<256>::decode(&v1, seed).is_ok());
    v1[4] = 1;
    loxo_tests::wire::resign(&mut v1);
    assert_eq!(
        loxo_theta::ThetaSketch::<256>::decode(&v1, seed),
        Err(DecodeError::UnsupportedVersion(1))
    );
}
