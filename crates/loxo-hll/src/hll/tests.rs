//! Unit tests of `hll`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;

use super::*;

/// Without tracking: same registers, no martingale in the encoding, and a
/// martingale-carrying frame decodes into it without one.
#[test]
fn untracked_martingale_is_never_kept() {
    let seed = Seed::new(5, 6);
    let mut tracked = Hll::<8>::new(seed);
    let mut untracked = Hll::<8>::new(seed).without_martingale();
    for k in 0..500u32 {
        tracked.insert(&k.to_le_bytes());
        untracked.insert(&k.to_le_bytes());
    }
    assert_eq!(tracked, untracked);
    assert!(untracked.estimate_martingale().is_none());
    let mut a = [0u8; 512];
    let mut b = [0u8; 512];
    let na = tracked.encode_into(&mut a).unwrap();
    let nb = untracked.encode_into(&mut b).unwrap();
    assert_eq!(na, nb + 8, "the martingale is 8 bytes");
    let mut fresh = Hll::<8>::new(seed).without_martingale();
    fresh.decode_into(&a[..na]).unwrap();
    assert_eq!(fresh, tracked);
    assert!(fresh.estimate_martingale().is_none());
    let mut back = Hll::<8>::new(seed);
    back.decode_into(&a[..na]).unwrap();
    assert_eq!(back.estimate_martingale(), tracked.estimate_martingale());
}

const SEED: Seed = Seed::new(0x1234, 0x5678);

/// A digest with the given index (top P bits) and rank.
fn digest<const P: u8>(index: u64, rank: u8) -> KeyHash
where
    Precision<P>: SupportedPrecision,
{
    let rest = if u32::from(rank) > 64 - u32::from(P) {
        0
    } else {
        1u64 << (64 - u32::from(P) - u32::from(rank))
    };
    KeyHash::from_u64(index << (64 - P) | rest)
}

#[test]
fn sizes_are_registers_plus_a_small_header() {
    use core::mem::size_of;
    assert_eq!(size_of::<Hll<4>>(), 304); // 12 + 289, padded to 8
    assert_eq!(size_of::<Hll<10>>(), 768 + 296);
    assert_eq!(size_of::<Hll<12>>(), 3072 + 296);
    assert_eq!(size_of::<Hll<14>>(), 12_288 + 296);
    assert_eq!(size_of::<Hll<16>>(), 49_152 + 296);
    assert_eq!(Hll::<14>::REGISTER_BYTES, 12_288);
    assert_eq!(Hll::<14>::new(SEED).memory_bytes(), size_of::<Hll<14>>());
}

#[test]
fn size_of_p18_without_touching_the_stack() {
    assert_eq!(core::mem::size_of::<Hll<18>>(), 196_608 + 296);
}

#[test]
fn register_derivation_follows_the_contract() {
    let mut h = Hll::<10>::new(SEED);
    // index = top 10 bits; rank = leading zeros of the other 54 bits + 1
    assert!(h.insert_hash(KeyHash::from_u64(0x8000_0000_0000_0000 | 1 << 53)));
    assert_eq!(h.register(512), 1);
    assert!(h.insert_hash(KeyHash::from_u64(3 << 54 | 1 << 40)));
    assert_eq!(h.register(3), 54 - 40);
    // all 54 remaining bits zero: capped at 64 − 10 + 1 = 55
    assert!(h.insert_hash(KeyHash::from_u64(7 << 54)));
    assert_eq!(h.register(7), 55);
    assert_eq!(Hll::<10>::MAX_RANK, 55);
    assert!(!h.insert_hash(KeyHash::from_u64(7 << 54)));
    for (i, rank) in [(0, 1), (1023, 55), (5, 30)] {
        let mut g = Hll::<10>::new(SEED);
        g.insert_hash(digest::<10>(i, rank));
        assert_eq!(g.register(i as usize), rank);
    }
}

#[test]
fn histogram_tracks_registers() {
    let mut h = Hll::<6>::new(SEED);
    h.insert_hash(digest::<6>(1, 3));
    h.insert_hash(digest::<6>(1, 5));
    h.insert_hash(digest::<6>(2, 5));
    let hist = h.histogram();
    assert_eq!(hist[0], 62);
    assert_eq!(hist[5], 2);
    assert_eq!(hist[3], 0);
    assert_eq!(hist.iter().sum::<u32>(), 64);
}

#[test]
fn empty_clear_and_estimates() {
    let mut h = Hll::<8>::new(SEED);
    assert!(h.is_empty());
    assert_eq!(h.estimate(), 0.0);
    assert_eq!(h.estimate_martingale(), Some(0.0));
    h.insert(b"a");
    assert!(!h.is_empty());
    // first insert changes a register with probability 1: HIP counts exactly 1
    assert_eq!(h.estimate_martingale(), Some(1.0));
    h.merge(&Hll::new(SEED)).unwrap();
    assert_eq!(h.estimate_martingale(), None);
    h.clear();
    assert!(h.is_empty());
    assert_eq!(h, Hll::new(SEED));
    assert_eq!(h.estimate_martingale(), Some(0.0));
}

#[test]
fn merge_rejects_other_seeds_and_leaves_self_alone() {
    let mut a = Hll::<8>::new(SEED);
    a.insert(b"x");
    let mut b = Hll::<8>::new(Seed::new(9, 9));
    b.insert(b"y");
    let before = a.clone();
    assert_eq!(a.merge(&b), Err(MergeError::SeedMismatch));
    assert_eq!(a, before);
    assert!(a.estimate_martingale().is_some());
    let mut c = Hll::<6>::new(Seed::new(9, 9));
    assert_eq!(c.merge_from(&a), Err(MergeError::SeedMismatch));
    assert!(c.is_empty());
}

#[test]
fn update_register_caps_and_ignores_out_of_range() {
    let mut h = Hll::<4>::new(SEED);
    assert!(h.update_register(3, 200));
    assert_eq!(h.register(3), 61);
    assert!(!h.update_register(16, 5));
    assert!(!h.update_register(3, 7));
    assert_eq!(h.register(16), 0);
    assert!(h.estimate_martingale().is_some());
    assert_eq!(h.histogram()[61], 1);
}

#[test]
fn set_registers_validates_before_writing() {
    let mut h = Hll::<4>::new(SEED);
    h.insert(b"keep");
    let before = h.clone();
    assert_eq!(
        h.set_registers([1u8; 15]),
        Err(DecodeError::ParameterMismatch {
            expected: 16,
            found: 15
        })
    );
    assert_eq!(
        h.set_registers([1u8; 17]),
        Err(DecodeError::ParameterMismatch {
            expected: 16,
            found: 17
        })
    );
    let mut bad = [1u8; 16];
    bad[15] = 62; // 64 − 4 + 1 = 61 is the maximum
    assert_eq!(h.set_registers(bad), Err(DecodeError::InvalidValue));
    assert_eq!(h, before);
    assert!(h.estimate_martingale().is_some());

    let regs: [u8; 16] = core::array::from_fn(|i| (i * 4) as u8);
    h.set_registers(regs).unwrap();
    assert!(h.registers().eq(regs));
    assert_eq!(h.estimate_martingale(), None);
    assert_eq!(h.histogram()[0], 1);
    assert_eq!(h.histogram()[60], 1);
    assert_eq!(h.histogram().iter().sum::<u32>(), 16);
}

#[test]
fn fold_maps_index_bits_into_rank() {
    let mut fine = Hll::<6>::new(SEED);
    let mut coarse = Hll::<4>::new(SEED);
    for (i, r) in [(0u64, 1u8), (1, 5), (2, 1), (3, 59), (63, 7), (8, 2)] {
        fine.insert_hash(digest::<6>(i, r));
        coarse.insert_hash(digest::<6>(i, r));
    }
    let folded: Hll<4> = fine.fold();
    assert!(folded.registers().eq(coarse.registers()));
    assert_eq!(folded.histogram(), coarse.histogram());
    // 6-bit index 3 = 0b0000_11: coarse index 0, moved bits 11 → rank 1 would
    // be beaten by index 0's moved bits 00 + rank 1 = rank 3.
    assert_eq!(folded.register(0), 3);
}

/// The O(1) estimate (register sum from `hip_sum`) is Ertl's estimator over the
/// histogram, after inserts, merges, folds and imports, tracked or not.
#[test]
fn estimate_from_the_running_sum_is_ertls() {
    let close = |h: &Hll<10>| {
        let (a, b) = (h.estimate(), estimator::ertl(&h.hist, 10));
        assert!(a == b || (a / b - 1.0).abs() < 1e-13, "{a} vs {b}");
    };
    let mut stream = crate::test_util::digests(0x1234_5678);
    let mut next = || stream.next().unwrap_or(KeyHash::from_u64(0));
    for n in [0u32, 1, 10, 100, 1000, 5000, 100_000] {
        let (mut a, mut b) = (
            Hll::<10>::new(SEED),
            Hll::<10>::new(SEED).without_martingale(),
        );
        for _ in 0..n {
            a.insert_hash(next());
            b.insert_hash(next());
        }
        close(&a);
        close(&b);
        a.merge(&b).unwrap();
        close(&a);
        let mut fine = Hll::<12>::new(SEED);
        for _ in 0..n {
            fine.insert_hash(next());
        }
        a.merge_from(&fine).unwrap();
        close(&a);
        close(&fine.fold());
        let regs: std::vec::Vec<u8> = a.registers().collect();
        let mut c = Hll::<10>::new(SEED);
        c.set_registers(regs.iter().copied()).unwrap();
        close(&c);
        assert_eq!(c.estimate().to_bits(), a.estimate().to_bits());
    }
    // Saturated registers (τ term) and a full sketch.
    let mut h = Hll::<10>::new(SEED);
    for i in 0..1024u64 {
        h.insert_hash(KeyHash::from_u64(i << 54));
    }
    assert!(h.estimate().is_infinite());
    h.clear();
    h.insert_hash(KeyHash::from_u64(5 << 54));
    h.insert_hash(KeyHash::from_u64(6 << 54 | 1));
    close(&h);
}

#[test]
fn relative_standard_error_is_1_04_over_root_m() {
    let e14 = Hll::<14>::new(SEED).relative_standard_error();
    assert!((e14 - 1.04 / 128.0).abs() < 1e-15);
    let e13 = Hll::<13>::new(SEED).relative_standard_error();
    assert!((e13 - 1.04 / libm::sqrt(8192.0)).abs() < 1e-12);
}

#[test]
fn debug_does_not_dump_registers() {
    extern crate std;
    let s = std::format!("{:?}", Hll::<10>::new(SEED));
    assert!(s.starts_with("Hll { precision: 10"), "{s}");
    assert!(s.len() < 200);
}
