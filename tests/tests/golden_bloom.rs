//! Golden files of the Bloom-family wire formats, decoded and re-encoded byte for
//! byte. Regenerate only after a deliberate, versioned format change:
//! `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_bloom`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::{BlockedBloom, Bloom, CountingBloom, Cuckoo, RegisterBloom};
use loxo_core::Seed;

const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);

fn keys() -> impl Iterator<Item = [u8; 4]> {
    (0u32..40).map(u32::to_le_bytes)
}

#[test]
fn bloom() {
    let mut f = Bloom::<16, 4>::new(SEED);
    keys().for_each(|k| f.insert(&k));
    let (back, _) =
        loxo_tests::golden_round_trip!("bloom.bin", f, Bloom::<16, 4>::new(SEED), 36 + 64 + 4);
    assert!(keys().all(|k| back.contains(&k)));
}

#[test]
fn blocked_bloom() {
    let mut f = BlockedBloom::<2, 5>::new(SEED);
    keys().for_each(|k| f.insert(&k));
    let (back, _) = loxo_tests::golden_round_trip!(
        "blocked_bloom.bin",
        f,
        BlockedBloom::<2, 5>::new(SEED),
        36 + 128 + 4
    );
    assert!(keys().all(|k| back.contains(&k)));
}

#[test]
fn register_bloom() {
    let mut f = RegisterBloom::<8, 5>::new(SEED);
    keys().for_each(|k| f.insert(&k));
    let (back, _) = loxo_tests::golden_round_trip!(
        "register_bloom.bin",
        f,
        RegisterBloom::<8, 5>::new(SEED),
        36 + 64 + 4
    );
    assert!(keys().all(|k| back.contains(&k)));
}

#[test]
fn counting_bloom() {
    let mut f = CountingBloom::<32, 3>::new(SEED);
    keys().for_each(|k| f.insert(&k));
    assert!(f.remove(&0u32.to_le_bytes()));
    let (back, _) = loxo_tests::golden_round_trip!(
        "counting_bloom.bin",
        f,
        CountingBloom::<32, 3>::new(SEED),
        36 + 128 + 4
    );
    assert!(keys().skip(1).all(|k| back.contains(&k)));
}

#[test]
fn cuckoo() {
    let mut f = Cuckoo::<16, u16>::new(SEED);
    keys().for_each(|k| f.insert(&k).unwrap());
    let (back, _) = loxo_tests::golden_round_trip!(
        "cuckoo.bin",
        f,
        Cuckoo::<16, u16>::new(SEED),
        36 + 16 * 4 * 2 + 8 + 1 + 4 + 2 + 4
    );
    assert!(keys().all(|k| back.contains(&k)));
    assert_eq!(back.len(), 40);
}
