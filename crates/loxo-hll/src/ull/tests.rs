//! Unit tests of `ull`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::test_util::digests;

const SEED: Seed = Seed::new(0x1234, 0x5678);

/// A sketch fed `keys`.
fn fed<const P: u8>(keys: impl Iterator<Item = KeyHash>) -> Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    let mut u = Ull::new(SEED);
    for d in keys {
        u.insert_hash(d);
    }
    u
}

/// The running sums and counters recomputed from the registers.
fn assert_consistent<const P: u8>(u: &Ull<P>)
where
    Precision<P>: SupportedPrecision,
{
    let mut fresh = u.clone();
    fresh.recount();
    assert_eq!(fresh.change_sum, u.change_sum);
    assert_eq!(fresh.fgra_sum, u.fgra_sum);
    assert_eq!(fresh.small, u.small);
    assert_eq!(fresh.large, u.large);
    assert_eq!(
        u.small.iter().chain(&u.large).sum::<u32>() as usize
            + u.registers()
                .iter()
                .filter(|&&r| r > 4 * P + 3 && r < 252)
                .count(),
        Ull::<P>::M
    );
}

#[test]
fn sizes_are_registers_plus_80_bytes() {
    use core::mem::size_of;
    assert_eq!(size_of::<Ull<4>>(), 16 + 80);
    assert_eq!(size_of::<Ull<14>>(), 16_384 + 80);
    assert_eq!(Ull::<14>::new(SEED).memory_bytes(), 16_464);
}

#[test]
fn pack_inverts_unpack_on_every_valid_byte() {
    assert_eq!(unpack(0), 0);
    assert_eq!(pack(0), 0);
    for r in 4 * 4 - 4..=255u8 {
        assert_eq!(pack(unpack(r)), r, "{r}");
        assert_eq!(unpack(r).count_ones(), 1 + (r & 3).count_ones());
    }
    // Only the two bits below the top are kept.
    assert_eq!(pack(0b1_0111 << 20), (24 << 2) | 0b01);
}

#[test]
fn registers_follow_the_paper() {
    let mut u = Ull::<10>::new(SEED);
    let at = |v: u32| KeyHash::from_u64(5 << 54 | 1 << (54 - v)); // update value v
    assert!(u.insert_hash(at(3)));
    assert_eq!(u.register(5), 4 * (3 + 8));
    assert!(u.insert_hash(at(1))); // U − 2
    assert_eq!(u.register(5), 4 * 11 + 1);
    assert!(u.insert_hash(at(4))); // new max: 3 becomes U − 1, 1 is forgotten
    assert_eq!(u.register(5), 4 * 12 + 2);
    assert!(u.insert_hash(at(2)));
    assert_eq!(u.register(5), 4 * 12 + 3);
    assert!(!u.insert_hash(at(1))); // below the window: no change
    assert!(u.insert_hash(KeyHash::from_u64(5 << 54))); // all zero: v = w = 55
    assert_eq!(u.register(5), 252);
    assert_eq!(Ull::<10>::MAX_UPDATE, 55);
    assert_consistent(&u);
}

#[test]
fn sums_stay_consistent_and_hll_matches() {
    for s in 0..20 {
        let mut u = Ull::<6>::new(SEED);
        let mut h = Hll::<6>::new(SEED);
        for d in digests(s).take(1 << (s % 12)) {
            // Every HyperLogLog change is an UltraLogLog change (not conversely).
            let (cu, ch) = (u.insert_hash(d), h.insert_hash(d));
            assert!(cu || !ch);
        }
        assert_consistent(&u);
        assert_eq!(u.to_hll(), h);
        assert_eq!(u.to_hll().histogram(), h.histogram());
    }
    // Saturated: every register at w with both flags.
    let mut u = Ull::<4>::new(SEED);
    for i in 0..16u64 {
        for v in [59u32, 60] {
            u.insert_hash(KeyHash::from_u64(i << 60 | 1 << (60 - v)));
        }
        u.insert_hash(KeyHash::from_u64(i << 60));
    }
    assert!(u.registers().iter().all(|&r| r == 255));
    assert_consistent(&u);
    assert_eq!(u.change_sum, 0);
    assert_eq!(u.state_change_probability(), 0.0);
    assert!(u.estimate().is_infinite());
    assert!(u.estimate_ml().is_infinite());
}

#[test]
fn change_probability_is_exact() {
    let mut u = Ull::<8>::new(SEED);
    assert_eq!(u.state_change_probability(), 1.0);
    for d in digests(3).take(3000) {
        u.insert_hash(d);
    }
    // Brute force: the mass of update values that would change each register.
    let mut total = 0.0;
    for &r in u.registers() {
        let x = unpack(r);
        for v in 1..=u32::from(Ull::<8>::MAX_UPDATE) {
            let bit = v + 8 - 2;
            let p = if v < 57 {
                0.5f64.powi(v as i32)
            } else {
                0.5f64.powi(56)
            };
            if pack(x | 1 << bit) != r {
                total += p / 256.0;
            }
        }
    }
    assert!((total - u.state_change_probability()).abs() < 1e-15);
}

#[test]
fn empty_one_key_and_martingale() {
    let mut u = Ull::<8>::new(SEED);
    assert!(u.is_empty());
    assert_eq!(u.estimate(), 0.0);
    assert_eq!(u.estimate_ml(), 0.0);
    assert_eq!(u.estimate_martingale(), Some(0.0));
    u.insert(b"a");
    assert_eq!(u.estimate_martingale(), Some(1.0));
    assert!((u.estimate() - 1.0).abs() < 0.01, "{}", u.estimate());
    assert!((u.estimate_ml() - 1.0).abs() < 0.01, "{}", u.estimate_ml());
    u.merge(&Ull::new(SEED)).unwrap();
    assert_eq!(u.estimate_martingale(), None);
    u.clear();
    assert_eq!(u, Ull::new(SEED));
    assert_eq!(u.estimate_martingale(), Some(0.0));
    let v = Ull::<8>::new(SEED).without_martingale();
    assert_eq!(v.estimate_martingale(), None);
}

#[test]
fn merge_is_the_union_and_checks_seeds() {
    for s in 0..10 {
        let keys = || digests(100 + s).take(500 << (s % 5));
        let (a, mut b, all): (Ull<7>, Ull<7>, Ull<7>) = (
            fed(keys().step_by(3)),
            fed(keys()
                .enumerate()
                .filter(|(i, _)| i % 3 != 0)
                .map(|(_, d)| d)),
            fed(keys()),
        );
        let mut ab = a.clone();
        ab.merge(&b).unwrap();
        assert_eq!(ab, all);
        assert_consistent(&ab);
        assert_eq!(ab.estimate().to_bits(), all.estimate().to_bits());
        b.merge(&a).unwrap();
        assert_eq!(b, all);
    }
    let mut a = Ull::<7>::new(SEED);
    a.insert(b"x");
    let before = a.clone();
    assert_eq!(
        a.merge(&Ull::<7>::new(Seed::new(9, 9))),
        Err(MergeError::SeedMismatch)
    );
    assert_eq!(a, before);
    assert!(a.estimate_martingale().is_some());
    let mut c = Ull::<5>::new(Seed::new(9, 9));
    assert_eq!(c.merge_from(&a), Err(MergeError::SeedMismatch));
    assert!(c.is_empty());
}

#[test]
fn fold_equals_the_coarse_sketch() {
    for s in 0..10 {
        let keys = || digests(200 + s).take(100 << s);
        let (fine, coarse, coarser): (Ull<10>, Ull<7>, Ull<4>) =
            (fed(keys()), fed(keys()), fed(keys()));
        let folded: Ull<7> = fine.fold();
        assert_eq!(folded, coarse);
        assert_consistent(&folded);
        assert_eq!(folded.estimate_martingale(), None);
        assert_eq!(fine.fold::<4>(), coarser);
        let mut into = Ull::<4>::new(SEED);
        into.merge_from(&coarse).unwrap();
        assert_eq!(into, coarser);
    }
    // The all-zero digest: update value w at every precision.
    let mut fine = Ull::<10>::new(SEED);
    fine.insert_hash(KeyHash::from_u64(0));
    let mut coarse = Ull::<4>::new(SEED);
    coarse.insert_hash(KeyHash::from_u64(0));
    assert_eq!(fine.fold::<4>(), coarse);
    assert_eq!(coarse.register(0), 252);
}

/// The FGRA sum stays inside the table of `ull_pow` (`2^−64 ..= 2^64`) from one
/// key to saturation, at the smallest and the largest precision.
#[test]
fn fgra_sum_stays_in_the_power_table() {
    fn walk<const P: u8>()
    where
        Precision<P>: SupportedPrecision,
    {
        let in_table = |u: &Ull<P>| {
            let s = u.fgra_total();
            // 0 only once every register is saturated with both flags: ∞ keys.
            if s == 0.0 && u.registers().iter().all(|&r| r == 255) {
                return;
            }
            let e = libm::ilogb(s);
            assert!((-64..64).contains(&e), "P = {P}: 2^{e}");
        };
        let mut u = Ull::<P>::new(SEED);
        for (i, d) in digests(P.into()).take(1 << (P + 6)).enumerate() {
            u.insert_hash(d);
            if i.is_power_of_two() {
                in_table(&u);
            }
        }
        // Every register at U = w − 1 and then at w, with each flag pattern.
        let w = u32::from(Ull::<P>::MAX_UPDATE);
        for v in [w - 3, w - 2, w - 1, w] {
            for i in 0..Ull::<P>::M as u64 {
                let rest = if v == w { 0 } else { 1u64 << (w - 1 - v) };
                u.insert_hash(KeyHash::from_u64(i << (64 - P) | rest));
                if i % 7 == 0 {
                    in_table(&u);
                }
            }
        }
    }
    walk::<4>();
    walk::<10>();
    walk::<18>();
}

#[test]
fn relative_standard_error_is_0_782_over_root_m() {
    let e = Ull::<14>::new(SEED).relative_standard_error();
    assert!((e - 0.782_236 / 128.0).abs() < 1e-8);
}

#[test]
fn debug_does_not_dump_registers() {
    extern crate std;
    let s = std::format!("{:?}", Ull::<10>::new(SEED));
    assert!(s.starts_with("Ull { precision: 10"), "{s}");
    assert!(s.len() < 200);
}
