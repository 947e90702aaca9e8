//! The firmware's per-frame cost histogram (`firmware/src/cost_hist.rs`, included by
//! path: the firmware itself only builds for the MCU) against a sorted copy of the
//! same ticks — the exact nearest-rank percentile.
#![allow(clippy::unwrap_used)]

#[path = "../../firmware/src/cost_hist.rs"]
#[allow(dead_code)]
mod cost_hist;

use cost_hist::{CostHistogram, BUCKETS};

/// Nearest-rank percentile of `v` (sorted): the ⌈q·n⌉-th smallest value.
fn exact(v: &[u32], per_mille: u64) -> u32 {
    let rank = (per_mille * v.len() as u64).div_ceil(1000).max(1) as usize;
    v[rank - 1]
}

#[test]
fn percentiles_are_exact_below_the_overflow_bucket() {
    // A heavy-tailed cost mix like a flood's: most frames cheap, some evictions,
    // a few epoch-crossing outliers past the last bucket.
    let mut state = 0x1234_5678_9abc_def0_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for n in [1usize, 2, 7, 999, 1000, 1001, 100_000] {
        let mut h = CostHistogram::new();
        let mut ticks: Vec<u32> = (0..n)
            .map(|_| {
                let r = next();
                match r % 1000 {
                    0 => (BUCKETS as u32) + (r >> 40) as u32 % 5000,
                    1..=70 => 25 + (r >> 20) as u32 % 15,
                    _ => 18 + (r >> 20) as u32 % 6,
                }
            })
            .collect();
        for &t in &ticks {
            h.record(t);
        }
        ticks.sort_unstable();
        assert_eq!(h.frames(), n as u64);
        assert_eq!(h.max(), *ticks.last().unwrap());
        assert_eq!(h.sum(), ticks.iter().map(|&t| u64::from(t)).sum::<u64>());
        for q in [0, 1, 500, 900, 990, 999, 1000] {
            let want = exact(&ticks, q);
            let got = h.percentile(q as u32);
            if (want as usize) < BUCKETS - 1 {
                assert_eq!(got, want, "n={n} q={q}");
            } else {
                // In the overflow bucket: the maximum, an upper bound.
                assert_eq!(got, h.max(), "n={n} q={q}");
                assert!(got >= want);
            }
        }
    }
}

#[test]
fn empty_and_saturating() {
    let h = CostHistogram::new();
    assert_eq!((h.frames(), h.max(), h.percentile(999)), (0, 0, 0));
    let mut h = CostHistogram::new();
    h.record(u32::MAX);
    h.record(3);
    assert_eq!(h.percentile(500), 3);
    assert_eq!(h.percentile(1000), u32::MAX);
    assert_eq!(h.sum(), u64::from(u32::MAX) + 3);
}

/// The firmware keeps one histogram per epoch and folds it into the run's at each
/// epoch close: the fold of the parts is the histogram of the whole, and a cleared
/// histogram is an empty one.
#[test]
fn epochs_fold_into_the_run() {
    let ticks = |seed: u32, n: u32| (0..n).map(move |i| (i.wrapping_mul(seed) >> 3) % 300);
    let mut whole = CostHistogram::new();
    let mut run = CostHistogram::new();
    let mut epoch = CostHistogram::new();
    for (seed, n) in [(2_654_435_761, 1000), (40_503, 17), (7, 0), (97, 5000)] {
        for t in ticks(seed, n) {
            whole.record(t);
            epoch.record(t);
        }
        run.merge(&epoch);
        epoch.clear();
        assert_eq!(epoch, CostHistogram::new());
        assert_eq!(run, whole);
    }
    assert!(
        run.max() >= BUCKETS as u32 - 1,
        "the overflow bucket is used"
    );
    // A merge saturates (a bucket's u32 stops at 2^32 − 1, no overflow panic; the
    // 64-bit frame count goes on) and percentiles still answer.
    let mut a = CostHistogram::new();
    a.record(1);
    let mut big = a.clone();
    for _ in 0..40 {
        let b = big.clone();
        big.merge(&b);
    }
    assert_eq!(big.frames(), 1 << 40);
    assert_eq!(big.percentile(1000), 1);
}
