//! The firmware's per-frame cost histogram (`firmware/src/cost_hist.rs`, included by
//! path: the firmware itself only builds for the MCU) against the exact figures: its
//! tick-to-instruction conversion and buckets exact for every tick reading an
//! interval of `c` instructions can give under `-icount shift=7`, and its
//! percentiles against a sorted copy of the same frames' instructions (the exact
//! nearest-rank percentile).
#![allow(clippy::unwrap_used)]

#[path = "../../firmware/src/cost_hist.rs"]
#[allow(dead_code)]
mod cost_hist;

use cost_hist::{insns, CostHistogram, BUCKETS, BUCKET_INSNS};

/// Nearest-rank percentile of `v` (sorted): the ⌈q·n⌉-th smallest value.
fn exact(v: &[u32], per_mille: u64) -> u32 {
    let rank = (per_mille * v.len() as u64).div_ceil(1000).max(1) as usize;
    v[rank - 1]
}

/// The two SysTick readings of an interval of `c` instructions: 3.2·c ticks of
/// virtual time, read as whole ticks (⌊3.2·c⌋ or ⌈3.2·c⌉, by where in a tick it
/// began).
fn readings(c: u64) -> [u32; 2] {
    let (lo, hi) = ((32 * c) / 10, (32 * c).div_ceil(10));
    [lo as u32, hi as u32]
}

#[test]
fn instruction_counts_and_buckets_are_exact() {
    for c in 0..2_000_000u64 {
        for t in readings(c) {
            assert_eq!(insns(u64::from(t)), c, "c={c} ticks={t}");
            let mut h = CostHistogram::new();
            h.record(t);
            assert_eq!(h.max(), c as u32);
            assert_eq!(h.mean(), c);
            // The frame's bucket is ⌊c/10⌋: its percentile reads as the bucket's last
            // value, or the frame's own cost if that is lower (it always is: one frame).
            assert_eq!(h.percentile(999), c as u32);
        }
    }
    // The line-rate budget is a bucket edge: 1 129 and 1 130 fall on either side.
    let mut h = CostHistogram::new();
    for t in readings(1_129) {
        h.record(t);
    }
    h.record(readings(1_000)[0]);
    assert_eq!(h.percentile(0), 1_009);
    assert_eq!(h.percentile(1000), 1_129);
    assert_eq!(h.frames_from(1_130), 0);
    for t in readings(1_130) {
        h.record(t);
    }
    assert_eq!(h.percentile(1000), 1_130);
    assert_eq!((h.frames_from(1_130), h.frames_from(1_120)), (2, 4));
    assert_eq!(BUCKET_INSNS, 10);
}

/// `cargo xtask demo --icount` runs QEMU at the shift the firmware's conversion
/// assumes (the two live in separate workspaces: the firmware's constant cannot be
/// imported by the host tool).
#[test]
fn the_demo_runs_qemu_at_the_shift_the_counts_assume() {
    let xtask = include_str!("../../crates/xtask/src/main.rs");
    let want = format!("const ICOUNT_SHIFT: u32 = {};", cost_hist::ICOUNT_SHIFT);
    assert!(xtask.contains(&want), "xtask lacks `{want}`");
    assert!(xtask.contains(r#"qemu.args(["-icount", &format!("shift={ICOUNT_SHIFT}")]);"#));
}

#[test]
fn percentiles_bound_the_exact_ones_within_a_bucket() {
    // A heavy-tailed cost mix like a flood's: most frames cheap, some evictions,
    // a few epoch-crossing outliers past the last bucket.
    let mut state = 0x1234_5678_9abc_def0_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let last = BUCKETS as u32 * BUCKET_INSNS;
    for n in [1usize, 2, 7, 999, 1000, 1001, 100_000] {
        let mut h = CostHistogram::new();
        let mut costs = Vec::with_capacity(n);
        let mut ticks_sum = 0u64;
        for _ in 0..n {
            let r = next();
            let c = match r % 1000 {
                0 => last + (r >> 40) as u32 % 50_000,
                1..=70 => 1_000 + (r >> 20) as u32 % 600,
                _ => 700 + (r >> 20) as u32 % 240,
            };
            let t = readings(u64::from(c))[(r >> 63) as usize];
            h.record(t);
            ticks_sum += u64::from(t);
            costs.push(c);
        }
        costs.sort_unstable();
        let max = *costs.last().unwrap();
        assert_eq!(h.frames(), n as u64);
        assert_eq!(h.max(), max);
        assert_eq!(h.mean(), insns(ticks_sum) / n as u64);
        let exact_mean = costs.iter().map(|&c| u64::from(c)).sum::<u64>() as f64 / n as f64;
        assert!((h.mean() as f64 - exact_mean).abs() < 1.0, "n={n}");
        for from in [0, 700, 1_130, last - BUCKET_INSNS] {
            let want = costs.iter().filter(|&&c| c >= from).count() as u64;
            assert_eq!(h.frames_from(from), want, "n={n} from={from}");
        }
        // Beyond the last bucket's first value: that bucket's frames, an upper bound.
        assert_eq!(
            h.frames_from(last + 500),
            h.frames_from(last - BUCKET_INSNS)
        );
        for q in [0, 1, 500, 900, 990, 999, 1000] {
            let want = exact(&costs, q);
            let got = h.percentile(q as u32);
            if want < last - BUCKET_INSNS {
                // Its bucket's last value, or the maximum if lower.
                let edge = want / BUCKET_INSNS * BUCKET_INSNS + BUCKET_INSNS - 1;
                assert_eq!(got, edge.min(max), "n={n} q={q}");
            } else {
                // In the overflow bucket: the maximum, an upper bound.
                assert_eq!(got, max, "n={n} q={q}");
                assert!(got >= want);
            }
        }
    }
}

#[test]
fn empty_and_saturating() {
    let h = CostHistogram::new();
    assert_eq!(
        (h.frames(), h.max(), h.mean(), h.percentile(999)),
        (0, 0, 0, 0)
    );
    let mut h = CostHistogram::new();
    // SysTick is 24 bits: no interval reads more than 2²⁴ − 1 ticks.
    h.record((1 << 24) - 1);
    h.record(readings(3)[0]);
    // The median frame's bucket, 0 to 9 instructions: its last value.
    assert_eq!(h.percentile(500), 9);
    assert_eq!(h.percentile(1000), insns((1 << 24) - 1) as u32);
}

/// The firmware keeps one histogram per epoch and folds it into the run's at each
/// epoch close: the fold of the parts is the histogram of the whole, and a cleared
/// histogram is an empty one.
#[test]
fn epochs_fold_into_the_run() {
    let ticks = |seed: u32, n: u32| (0..n).map(move |i| (i.wrapping_mul(seed) >> 3) % 9_000);
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
        run.max() >= BUCKETS as u32 * BUCKET_INSNS,
        "the overflow bucket is used"
    );
    // A merge saturates (a bucket's u32 stops at 2^32 − 1, no overflow panic; the
    // 64-bit frame count goes on) and percentiles still answer.
    let mut a = CostHistogram::new();
    a.record(readings(1)[1]);
    let mut big = a.clone();
    for _ in 0..40 {
        let b = big.clone();
        big.merge(&b);
    }
    assert_eq!(big.frames(), 1 << 40);
    assert_eq!(big.percentile(1000), 1);
}
