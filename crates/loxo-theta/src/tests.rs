//! Unit tests of `ThetaSketch`: exact mode, rebuilds, set operations against exact
//! sets, seed checks, size.
#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;

use loxo_core::{MergeError, Seed};
use std::collections::BTreeSet;
use std::vec::Vec;

use crate::{theta_value, ThetaSketch, THETA_MAX};

const SEED: Seed = Seed::new(0x1234, 0x5678);

fn sketch<const K: usize>(keys: impl Iterator<Item = u64>) -> ThetaSketch<K> {
    let mut s = ThetaSketch::<K>::new(SEED);
    for k in keys {
        s.insert(&k.to_le_bytes());
    }
    s
}

/// The values a sketch of `keys` must retain: those below its θ.
fn expected_values(keys: impl Iterator<Item = u64>, theta: u64) -> BTreeSet<u64> {
    keys.map(|k| theta_value(SEED.hash(&k.to_le_bytes())))
        .filter(|&v| v != 0 && v < theta)
        .collect()
}

fn values<const K: usize>(s: &ThetaSketch<K>) -> BTreeSet<u64> {
    s.values().collect()
}

#[test]
fn size_is_eight_bytes_per_slot_plus_a_header() {
    assert_eq!(core::mem::size_of::<ThetaSketch<256>>(), 8 * 256 + 32);
    assert_eq!(core::mem::size_of::<ThetaSketch<4096>>(), 8 * 4096 + 32);
    assert_eq!(ThetaSketch::<4096>::new(SEED).memory_bytes(), 32_800);
}

#[test]
fn exact_below_the_rebuild_point() {
    let n = ThetaSketch::<256>::REBUILD_AT as u64 - 1;
    let mut s = sketch::<256>(0..n);
    assert!(!s.is_estimation_mode());
    assert_eq!(s.estimate(), n as f64);
    assert_eq!((s.lower_bound(3), s.upper_bound(3)), (n as f64, n as f64));
    // Duplicates change nothing.
    assert!(!s.insert(&3u64.to_le_bytes()));
    assert_eq!(s.retained() as u64, n);
    assert_eq!(s.relative_standard_error(), 0.0);
}

#[test]
fn a_rebuild_keeps_exactly_the_k_smallest_values() {
    let n = ThetaSketch::<256>::REBUILD_AT as u64;
    let s = sketch::<256>(0..n);
    assert!(s.is_estimation_mode());
    assert_eq!(s.retained(), ThetaSketch::<256>::NOMINAL);
    let all: Vec<u64> = expected_values(0..n, THETA_MAX).into_iter().collect();
    // θ is the (k+1)-th smallest value; the retained ones are the k below it.
    assert_eq!(s.theta_long(), all[ThetaSketch::<256>::NOMINAL]);
    assert_eq!(
        values(&s),
        all[..ThetaSketch::<256>::NOMINAL].iter().copied().collect()
    );
}

#[test]
fn retains_exactly_the_values_below_theta_over_many_rebuilds() {
    let keys = || (0..50_000u64).map(|i| i * 7 + 1);
    let s = sketch::<512>(keys());
    assert_eq!(values(&s), expected_values(keys(), s.theta_long()));
    for k in keys().take(2000) {
        let v = theta_value(SEED.hash(&k.to_le_bytes()));
        assert_eq!(
            s.contains_hash(SEED.hash(&k.to_le_bytes())),
            v < s.theta_long()
        );
    }
}

#[test]
fn set_operations_keep_exactly_the_sampled_set_expression() {
    let a = || 0..30_000u64;
    let b = || 20_000..60_000u64;
    let (sa, sb) = (sketch::<1024>(a()), sketch::<1024>(b()));
    let theta = sa.theta_long().min(sb.theta_long());
    let va = expected_values(a(), theta);
    let vb = expected_values(b(), theta);

    let mut i = sa.clone();
    i.intersect(&sb).unwrap();
    assert_eq!(i.theta_long(), theta);
    assert_eq!(values(&i), va.intersection(&vb).copied().collect());

    let mut d = sa.clone();
    d.subtract(&sb).unwrap();
    assert_eq!(d.theta_long(), theta);
    assert_eq!(values(&d), va.difference(&vb).copied().collect());

    let mut u = sa.clone();
    u.merge(&sb).unwrap();
    assert!(u.theta_long() <= theta);
    assert_eq!(values(&u), expected_values(0..60_000u64, u.theta_long()));
}

#[test]
fn merging_sketches_equals_sketching_the_union() {
    let parts: Vec<ThetaSketch<512>> = (0..8u64)
        .map(|p| sketch::<512>((0..10_000u64).map(move |i| i * 8 + p)))
        .collect();
    let mut u = ThetaSketch::<512>::new(SEED);
    for p in &parts {
        u.merge(p).unwrap();
    }
    let all = expected_values(0..80_000u64, u.theta_long());
    assert_eq!(values(&u), all);
    let rse = 1.0 / ((ThetaSketch::<512>::NOMINAL - 1) as f64).sqrt();
    assert!((u.estimate() / 80_000.0 - 1.0).abs() < 4.0 * rse);
}

#[test]
fn different_seeds_do_not_combine() {
    let mut a = sketch::<256>(0..10);
    let b = ThetaSketch::<256>::new(Seed::new(9, 9));
    let before = values(&a);
    assert_eq!(a.merge(&b), Err(MergeError::SeedMismatch));
    assert_eq!(a.intersect(&b), Err(MergeError::SeedMismatch));
    assert_eq!(a.subtract(&b), Err(MergeError::SeedMismatch));
    assert_eq!(values(&a), before);
}

#[test]
fn empty_sets() {
    let e = ThetaSketch::<256>::new(SEED);
    let a = sketch::<256>(0..10_000);
    assert!(e.is_empty() && !a.is_empty());
    let mut i = a.clone();
    i.intersect(&e).unwrap();
    assert!(i.is_empty() && i.estimate() == 0.0 && !i.is_estimation_mode());
    let mut d = a.clone();
    d.subtract(&e).unwrap();
    assert_eq!(values(&d), values(&a));
    let mut u = e.clone();
    u.merge(&a).unwrap();
    assert!(!u.is_empty());
    let mut c = a.clone();
    c.clear();
    assert!(c.is_empty() && c.retained() == 0 && c.theta_long() == THETA_MAX);
}

#[test]
fn from_parts_checks_and_down_samples() {
    let a = sketch::<1024>(0..100_000);
    let vals: Vec<u64> = a.values().collect();
    // Into the same K: identical.
    let same =
        ThetaSketch::<1024>::from_parts(SEED, a.theta_long(), false, vals.iter().copied()).unwrap();
    assert_eq!(values(&same), values(&a));
    // Into a smaller K: a valid down-sample (the smallest values, θ lowered).
    let small =
        ThetaSketch::<256>::from_parts(SEED, a.theta_long(), false, vals.iter().copied()).unwrap();
    assert!(small.theta_long() < a.theta_long());
    let want: BTreeSet<u64> = values(&a)
        .into_iter()
        .filter(|&v| v < small.theta_long())
        .collect();
    assert_eq!(values(&small), want);
    // Broken parts.
    let t = a.theta_long();
    assert!(ThetaSketch::<1024>::from_parts(SEED, t, false, [t].into_iter()).is_none());
    assert!(ThetaSketch::<1024>::from_parts(SEED, t, false, [0].into_iter()).is_none());
    assert!(ThetaSketch::<1024>::from_parts(SEED, t, false, [5, 5].into_iter()).is_none());
    assert!(ThetaSketch::<1024>::from_parts(SEED, 0, false, core::iter::empty()).is_none());
    assert!(
        ThetaSketch::<1024>::from_parts(SEED, THETA_MAX + 1, false, core::iter::empty()).is_none()
    );
    assert!(ThetaSketch::<1024>::from_parts(SEED, THETA_MAX, true, [5].into_iter()).is_none());
}
