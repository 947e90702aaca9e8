//! Accuracy of `loxo_spread::Spreaders` on epochs with known spreads, at parameters
//! nobody tuned for, against the exact answer and against the simplest alternative at
//! equal bytes (a Space-Saving table of keys with a small HyperLogLog each).
//!
//! **Tuned on / checked on.** The design and its sizes (`S = 1024`, `W = 19`, `C =
//! 512` at 32 KiB; `S = 128`, `W = 16`, `C = 128` at 5 KiB) and the report's `z = 0.5`
//! were chosen with a prototype on epochs of 2¹⁸ pairs (and 2¹⁴ for the small size)
//! made of 12 super-spreaders log-uniform in [0.5 %, 15 %] (and 25 in [0.2 %, 6 %]),
//! seeds 1000–1039 and 5000–5199 of its own generator. Here the streams come from
//! another generator ([`loxo_tests::spread`]) with seeds `mix64(0x5eed_5e7d_0000 +
//! …)`, at 150 000 and 400 000 pairs (32 KiB) and 16 384 pairs (the device's epoch),
//! 10 and 16 super-spreaders in [0.5 %, 20 %] — none of which was looked at while
//! choosing.
//!
//! **Claims** (the issue's, at 32 KiB, thresholds 1, 2 and 5 % of the epoch's
//! distinct pairs, every trial pooled): recall ≥ 0.99 and precision ≥ 0.95 of the
//! keys above the threshold; mean relative error ≤ 10 % over the keys at ≥ 2× the
//! threshold (a missed one counts as 100 %); the heavy-traffic key (4 elements, the
//! most packets) never reported. Calibration (statistical, the 4σ bands): each
//! candidate's `z = (estimate − spread)/σ` (spread ≥ 0.2 % of the pairs at 32 KiB, ≥
//! 1 % at 5 KiB) — σ the standard error the sketch states — should be standard
//! normal: the mean of `z²` within `4·√(2/n)` of 1, the fraction beyond 2 within 4
//! binomial σ of 4.55 %, none beyond 5 (for `n` ≤ 5 000 values a normal `z` passes 5
//! with probability `n·5.7·10⁻⁷ < 0.3 %`); the distinct-pair estimate within 4σ of
//! the truth in every trial. At the device's 5 KiB the same table is measured and
//! printed; the test asserts the calibration and recall and precision ≥ 0.9 at 5
//! and 10 %, not the 32 KiB claims.
//!
//! A key at the threshold's edge is misclassified about as often as its estimate
//! errs, so the numbers depend on how many keys sit near it: the printed "dense"
//! rows (25 super-spreaders in [0.2 %, 6 %], a 5 % threshold at their top) show a
//! stream where they crowd it; they are printed, not asserted.
//!
//! Runtime: about 5 s in the default test profile (`cargo test -p loxo-tests --test
//! spread_accuracy -- --nocapture` prints the tables).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{mix64, KeyHash, Seed};
use loxo_spread::{HipSpreaders, SpreadSummary, Spreaders};
use loxo_tests::spread::{Key, Mix, Reported, Rng, Score, SsHll, Stream};

const SEED: Seed = Seed::new(0x5350_5245_4144, 0x4143_4355);
/// The report rule's `z` (estimate + z·σ ≥ threshold).
const Z: f64 = 0.5;
const THRESHOLDS: [f64; 3] = [0.01, 0.02, 0.05];
const DEVICE_THRESHOLDS: [f64; 4] = [0.01, 0.02, 0.05, 0.10];

/// At most 32 KiB with IPv6-sized keys.
type Big = Spreaders<Key, 1024, 19, 512>;
/// At most 32 KiB with IPv6-sized keys, counting its candidates as the stream goes
/// (the single-stream estimator; how the layout was chosen: see
/// [`hip_thirty_two_kib_meets_every_claim`]).
type Hip = HipSpreaders<Key, 4096, 4, 580, 64>;
/// The device's size: about 5 KiB per direction.
type Device = Spreaders<Key, 128, 16, 128>;

fn stream(class: u64, trial: u64, mix: Mix) -> Stream {
    let mut rng = Rng::new(mix64(0x5eed_5e7d_0000 + (class << 16) + trial));
    Stream::new(mix, SEED, &mut rng)
}

/// Feeds a stream to a sketch (the device path: digests computed once per key and
/// element, as a monitor would).
fn feed(sketch: &mut impl SpreadSummary<Key>, st: &Stream) {
    for &p in &st.packets {
        let (k, eh) = st.pairs[p as usize];
        let k = k as usize;
        sketch.insert_hashed(&st.keys[k], st.key_hashes[k], eh);
    }
}

fn report(sketch: &impl SpreadSummary<Key>, st: &Stream, threshold: f64, z: f64) -> Reported {
    let index = st.index();
    let mut out = heapless::Vec::<_, 128>::new();
    let n = sketch.report_screened(threshold, z, 1, &mut out);
    assert!(n <= out.capacity(), "report truncated");
    out.iter()
        .map(|s| (index[&s.key], s.spread.value, s.spread.sigma))
        .collect()
}

/// The exact answer at `threshold`: every key at or above it.
fn exact_report(st: &Stream, threshold: f64) -> Reported {
    (0..st.keys.len())
        .filter(|&k| st.spread[k] as f64 >= threshold)
        .map(|k| (k, st.spread[k] as f64, 0.0))
        .collect()
}

fn baseline(st: &Stream, bytes: usize) -> SsHll {
    let mut b = SsHll::with_bytes(bytes, 64);
    for &p in &st.packets {
        let (k, eh) = st.pairs[p as usize];
        let kh: KeyHash = st.key_hashes[k as usize];
        b.insert(
            &st.keys[k as usize],
            mix64(kh.get().wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ eh.get()),
        );
    }
    b
}

fn baseline_report(b: &SsHll, st: &Stream, threshold: f64) -> Reported {
    let index = st.index();
    b.report(threshold)
        .map(|(k, e)| (index[k], e, 0.0))
        .collect()
}

/// Standardized errors of the candidates with spread ≥ `floor`.
#[derive(Default)]
struct Calibration {
    z: Vec<f64>,
    pairs_z: Vec<f64>,
}

impl Calibration {
    fn add(&mut self, sketch: &impl SpreadSummary<Key>, st: &Stream, floor: f64) {
        let index = st.index();
        let mut out = heapless::Vec::<_, 512>::new();
        sketch.report_screened(0.0, 0.0, 1, &mut out);
        for s in &out {
            let truth = st.spread[index[&s.key]] as f64;
            if truth >= floor {
                self.z.push((s.spread.value - truth) / s.spread.sigma);
            }
        }
        let d = sketch.distinct_pairs();
        self.pairs_z
            .push((d.value - st.distinct_pairs() as f64) / d.sigma);
    }

    fn check(&self, what: &str) {
        let n = self.z.len() as f64;
        let beyond2 = self.z.iter().filter(|z| z.abs() > 2.0).count() as f64 / n;
        let p = 0.0455;
        let band = 4.0 * (p * (1.0 - p) / n).sqrt();
        let worst = self.z.iter().fold(0.0f64, |m, z| m.max(z.abs()));
        let mean = self.z.iter().sum::<f64>() / n;
        let ms = self.z.iter().map(|z| z * z).sum::<f64>() / n;
        println!(
            "{what}: {} candidate estimates: mean z {mean:+.3}, mean z² {ms:.3}, |z| > 2: {:.2} % (normal 4.55 ± {:.2}), max |z| {worst:.2}; distinct pairs: max |z| {:.2} over {} trials",
            self.z.len(),
            100.0 * beyond2,
            100.0 * band,
            self.pairs_z.iter().fold(0.0f64, |m, z| m.max(z.abs())),
            self.pairs_z.len()
        );
        assert!(self.z.len() <= 5000);
        assert!(
            (beyond2 - p).abs() <= band,
            "{what}: tail fraction {beyond2}"
        );
        // The mean of n squared standard normals has sd √(2/n).
        assert!(
            (ms - 1.0).abs() <= 4.0 * (2.0 / n).sqrt(),
            "{what}: mean z² {ms}"
        );
        assert!(worst <= 5.0, "{what}: |z| = {worst}");
        assert!(
            self.pairs_z.iter().all(|z| z.abs() <= 4.0),
            "{what}: distinct pairs"
        );
    }
}

fn print_row(what: &str, bytes: usize, threshold: f64, s: &Score) {
    println!(
        "| {what:<34} | {bytes:>9} | {:>4.0} % | {:.4} ({:>3} missed) | {:.4} ({:>3} false) | {:>6.2} % | {:>6.1} % |",
        100.0 * threshold,
        s.recall(),
        s.misses,
        s.precision(),
        s.false_alarms,
        100.0 * s.mean_rel(),
        100.0 * s.rel_max
    );
}

fn header() {
    println!("| method | bytes | threshold | recall | precision | mean rel. error (≥ 2T) | max |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
}

/// The 32 KiB claims' held-out epochs: (class, mix, trials) — 12 of 150 000 and 8 of
/// 400 000 distinct pairs.
const BIG_MIXES: [(u64, Mix, u64); 2] = [
    (
        1,
        Mix {
            pairs: 150_000,
            spreaders: 10,
            lo: 0.005,
            hi: 0.2,
        },
        12,
    ),
    (
        2,
        Mix {
            pairs: 400_000,
            spreaders: 16,
            lo: 0.005,
            hi: 0.2,
        },
        8,
    ),
];

#[test]
fn thirty_two_kib_meets_the_claims() {
    let bytes = Big::MEMORY_BYTES;
    assert!(bytes <= 32 * 1024);
    let mut ours = vec![Score::default(); THRESHOLDS.len()];
    let mut point = vec![Score::default(); THRESHOLDS.len()];
    let mut base = vec![Score::default(); THRESHOLDS.len()];
    let mut exact = vec![Score::default(); THRESHOLDS.len()];
    let mut cal = Calibration::default();
    let mut exact_bytes = 0;
    let mut base_bytes = 0;
    for &(class, mix, trials) in &BIG_MIXES {
        for t in 0..trials {
            let st = stream(class, t, mix);
            let mut s = Box::new(Big::new(SEED));
            feed(&mut *s, &st);
            let b = baseline(&st, bytes);
            base_bytes = b.bytes();
            exact_bytes = exact_bytes.max(st.exact_bytes());
            let n = st.distinct_pairs() as f64;
            for (i, &f) in THRESHOLDS.iter().enumerate() {
                let th = f * n;
                ours[i].add(&st, th, &report(&*s, &st, th, Z));
                point[i].add(&st, th, &report(&*s, &st, th, 0.0));
                base[i].add(&st, th, &baseline_report(&b, &st, th));
                exact[i].add(&st, th, &exact_report(&st, th));
            }
            cal.add(&*s, &st, 0.002 * n);
        }
    }
    println!("32 KiB, 20 epochs of 150 000 and 400 000 distinct pairs:");
    header();
    for (i, &f) in THRESHOLDS.iter().enumerate() {
        print_row(
            "exact (hash set of pairs, largest)",
            exact_bytes,
            f,
            &exact[i],
        );
        print_row("Spreaders<_, 1024, 19, 512>, z 0.5", bytes, f, &ours[i]);
        print_row("Spreaders, point estimate (z 0)", bytes, f, &point[i]);
        print_row("Space-Saving + HLL (64 regs)", base_bytes, f, &base[i]);
    }
    cal.check("32 KiB");
    for (i, s) in ours.iter().enumerate() {
        let f = THRESHOLDS[i];
        assert!(s.hits >= 50, "too few keys above {f} to judge");
        assert!(s.recall() >= 0.99, "recall {} at {f}", s.recall());
        assert!(s.precision() >= 0.95, "precision {} at {f}", s.precision());
        assert!(
            s.mean_rel() <= 0.10,
            "mean relative error {} at {f}",
            s.mean_rel()
        );
        assert_eq!(s.heavy_reported, 0);
    }
}

#[test]
fn device_size_measured() {
    let mix = Mix {
        pairs: 16_384,
        spreaders: 10,
        lo: 0.005,
        hi: 0.2,
    };
    let bytes = Device::MEMORY_BYTES;
    let mut ours = vec![Score::default(); DEVICE_THRESHOLDS.len()];
    let mut base = vec![Score::default(); DEVICE_THRESHOLDS.len()];
    let mut cal = Calibration::default();
    let mut base_bytes = 0;
    for t in 0..40 {
        let st = stream(3, t, mix);
        let mut s = Box::new(Device::new(SEED));
        feed(&mut *s, &st);
        let b = baseline(&st, bytes);
        base_bytes = b.bytes();
        let n = st.distinct_pairs() as f64;
        for (i, &f) in DEVICE_THRESHOLDS.iter().enumerate() {
            ours[i].add(&st, f * n, &report(&*s, &st, f * n, Z));
            base[i].add(&st, f * n, &baseline_report(&b, &st, f * n));
        }
        cal.add(&*s, &st, 0.01 * n);
    }
    println!("device size, 40 epochs of 16 384 distinct pairs:");
    header();
    for (i, &f) in DEVICE_THRESHOLDS.iter().enumerate() {
        print_row("Spreaders<_, 128, 16, 128>, z 0.5", bytes, f, &ours[i]);
        print_row("Space-Saving + HLL (64 regs)", base_bytes, f, &base[i]);
    }
    cal.check("5 KiB");
    for (i, s) in ours.iter().enumerate().skip(2) {
        let f = DEVICE_THRESHOLDS[i];
        assert!(s.recall() >= 0.9, "recall {} at {f}", s.recall());
        assert!(s.precision() >= 0.9, "precision {} at {f}", s.precision());
        assert_eq!(s.heavy_reported, 0);
    }
}

#[test]
fn dense_near_the_threshold_printed() {
    let mix = Mix {
        pairs: 200_000,
        spreaders: 25,
        lo: 0.002,
        hi: 0.06,
    };
    let mut ours = vec![Score::default(); THRESHOLDS.len()];
    for t in 0..8 {
        let st = stream(4, t, mix);
        let mut s = Box::new(Big::new(SEED));
        feed(&mut *s, &st);
        let n = st.distinct_pairs() as f64;
        for (i, &f) in THRESHOLDS.iter().enumerate() {
            ours[i].add(&st, f * n, &report(&*s, &st, f * n, Z));
        }
    }
    let mut hip = vec![Score::default(); THRESHOLDS.len()];
    for t in 0..8 {
        let st = stream(4, t, mix);
        let mut s = Box::new(Hip::new(SEED));
        feed(&mut *s, &st);
        let n = st.distinct_pairs() as f64;
        for (i, &f) in THRESHOLDS.iter().enumerate() {
            hip[i].add(&st, f * n, &report(&*s, &st, f * n, Z));
        }
    }
    println!("32 KiB, dense: 25 super-spreaders in [0.2 %, 6 %], 8 epochs of 200 000 pairs:");
    header();
    for (i, &f) in THRESHOLDS.iter().enumerate() {
        print_row(
            "Spreaders<_, 1024, 19, 512>, z 0.5",
            Big::MEMORY_BYTES,
            f,
            &ours[i],
        );
        print_row(
            "HipSpreaders<_, 4096, 4, 580, 64>, z 0.5",
            Hip::MEMORY_BYTES,
            f,
            &hip[i],
        );
        assert_eq!(ours[i].heavy_reported, 0);
        assert_eq!(hip[i].heavy_reported, 0);
    }
}

/// What issue 28's per-key bound (≤ 10 % relative error for every key at ≥ 2× the
/// threshold) would need: the same design with 2× and 4× the registers per key and
/// the cells (`S`, `C` doubled; `W` kept), on the same held-out epochs as
/// [`thirty_two_kib_meets_the_claims`] — printed (the README's table) and held to
/// regression pins: recall and precision floors, the worst key's error a ceiling
/// (each the measured figure, rounded down / up at the third decimal).
///
/// `cargo test --release -p loxo-tests --test spread_accuracy -- worst_key_by_memory --nocapture`
#[test]
fn worst_key_by_memory() {
    const _: () = assert!(
        Spreaders::<Key, 2048, 19, 1024>::MEMORY_BYTES <= 64 * 1024
            && Spreaders::<Key, 4096, 19, 2048>::MEMORY_BYTES <= 128 * 1024
    );
    /// Per threshold: (recall floor, precision floor, worst-key ceiling).
    type Pins = [(f64, f64, f64); 3];
    fn run<const S: usize, const W: usize, const C: usize>(name: &str, pins: &Pins) {
        let mut ours = vec![Score::default(); THRESHOLDS.len()];
        for &(class, mix, trials) in &BIG_MIXES {
            for t in 0..trials {
                let st = stream(class, t, mix);
                let mut s = Box::new(Spreaders::<Key, S, W, C>::new(SEED));
                feed(&mut *s, &st);
                let n = st.distinct_pairs() as f64;
                for (i, &f) in THRESHOLDS.iter().enumerate() {
                    ours[i].add(&st, f * n, &report(&*s, &st, f * n, Z));
                }
            }
        }
        for (i, &f) in THRESHOLDS.iter().enumerate() {
            print_row(name, Spreaders::<Key, S, W, C>::MEMORY_BYTES, f, &ours[i]);
            let (recall, precision, worst) = pins[i];
            let s = &ours[i];
            assert!(
                s.recall() >= recall && s.precision() >= precision && s.rel_max <= worst,
                "{name} at {f}: recall {}, precision {}, worst {} against pins {:?}",
                s.recall(),
                s.precision(),
                s.rel_max,
                pins[i]
            );
        }
    }
    header();
    run::<2048, 19, 1024>(
        "Spreaders<_, 2048, 19, 1024>",
        &[(1.0, 0.980, 0.111), (1.0, 0.993, 0.070), (1.0, 1.0, 0.070)],
    );
    run::<4096, 19, 2048>(
        "Spreaders<_, 4096, 19, 2048>",
        &[(1.0, 0.976, 0.056), (1.0, 0.993, 0.048), (1.0, 1.0, 0.044)],
    );
}

/// Held-out epochs no choice of [`Hip`]'s was made on, beside [`BIG_MIXES`]: 250 000
/// distinct pairs with 13 super-spreaders in [0.5 %, 25 %] (class 7, never used by
/// any other test here).
const HIP_EXTRA: (u64, Mix, u64) = (
    7,
    Mix {
        pairs: 250_000,
        spreaders: 13,
        lo: 0.005,
        hi: 0.25,
    },
    10,
);

/// Issue 28's per-key bound at 32 KiB: with every candidate counted as the stream
/// goes ([`HipSpreaders`]: 4 096 registers per key in stripes of 8, 580 cells, 64
/// counters), on the held-out epochs of [`thirty_two_kib_meets_the_claims`] and ten
/// more: recall ≥ 0.99, precision ≥ 0.95 and **every** key at ≥ 2× the threshold
/// within 10 % of its spread, at thresholds of 1, 2 and 5 % of the distinct pairs; the
/// stated standard errors calibrated as the plain sketch's are.
///
/// **Tuned on / checked on.** The layout was chosen first with a Python prototype on
/// its own generator (numpy's PCG64 seeds 11–13: 16 epochs alternating 150 000 /
/// 400 000 pairs and 10 / 16 super-spreaders in [0.5 %, 20 %]: `S` = 2 048, `W` = 9),
/// then changed to `S` = 4 096, `W` = 4, `C` = 580 on an exploratory range of this
/// file's generator — hash seeds `(11, 12)`, `(0xdead, 0xbeef)`, `(777, 1)`, `(5, 55)`,
/// streams `mix64(0x0b5e_0000_0000 + …)`, four mixes (150 000 / 10 and 400 000 / 16 in
/// [0.5 %, 20 %], 300 000 / 30 in [0.3 %, 8 %], 100 000 / 6 in [1 %, 30 %]), 96 epochs —
/// where the first layout's worst key was 10.9 % (a 4.2σ draw) and this one's 7.0 %.
/// The epochs below were not used for either choice (they were run once per layout).
///
/// `cargo test --release -p loxo-tests --test spread_accuracy -- hip --nocapture`
#[test]
fn hip_thirty_two_kib_meets_every_claim() {
    let bytes = Hip::MEMORY_BYTES;
    assert!(bytes <= 32 * 1024);
    let mut ours = vec![Score::default(); THRESHOLDS.len()];
    let mut point = vec![Score::default(); THRESHOLDS.len()];
    let mut plain = vec![Score::default(); THRESHOLDS.len()];
    let mut base = vec![Score::default(); THRESHOLDS.len()];
    let mut exact = vec![Score::default(); THRESHOLDS.len()];
    let (mut exact_bytes, mut base_bytes) = (0, 0);
    let mut cal = Calibration::default();
    for &(class, mix, trials) in BIG_MIXES.iter().chain([&HIP_EXTRA]) {
        for t in 0..trials {
            let st = stream(class, t, mix);
            let mut s = Box::new(Hip::new(SEED));
            feed(&mut *s, &st);
            let b = baseline(&st, bytes);
            base_bytes = b.bytes();
            exact_bytes = exact_bytes.max(st.exact_bytes());
            let n = st.distinct_pairs() as f64;
            for (i, &f) in THRESHOLDS.iter().enumerate() {
                let th = f * n;
                ours[i].add(&st, th, &report(&*s, &st, th, Z));
                point[i].add(&st, th, &report(&*s, &st, th, 0.0));
                // The same registers and cells, estimated at the end.
                plain[i].add(&st, th, &report(s.sketch(), &st, th, Z));
                base[i].add(&st, th, &baseline_report(&b, &st, th));
                exact[i].add(&st, th, &exact_report(&st, th));
            }
            cal.add(&*s, &st, 0.002 * n);
        }
    }
    println!("32 KiB, 30 epochs of 150 000, 250 000 and 400 000 distinct pairs:");
    header();
    for (i, &f) in THRESHOLDS.iter().enumerate() {
        print_row(
            "exact (hash set of pairs, largest)",
            exact_bytes,
            f,
            &exact[i],
        );
        print_row(
            "HipSpreaders<_, 4096, 4, 580, 64>, z 0.5",
            bytes,
            f,
            &ours[i],
        );
        print_row("HipSpreaders, point estimate (z 0)", bytes, f, &point[i]);
        print_row(
            "its registers alone (Spreaders)",
            Spreaders::<Key, 4096, 4, 580>::MEMORY_BYTES,
            f,
            &plain[i],
        );
        print_row("Space-Saving + HLL (64 regs)", base_bytes, f, &base[i]);
    }
    cal.check("32 KiB, HIP");
    for (i, s) in ours.iter().enumerate() {
        let f = THRESHOLDS[i];
        assert!(s.hits >= 50, "too few keys above {f} to judge");
        assert!(s.recall() >= 0.99, "recall {} at {f}", s.recall());
        assert!(s.precision() >= 0.95, "precision {} at {f}", s.precision());
        assert!(
            s.rel_max <= 0.10,
            "worst key's relative error {} at {f}",
            s.rel_max
        );
        assert_eq!(s.heavy_reported, 0);
    }
}

/// The exploratory range [`Hip`]'s layout was chosen on (see
/// [`hip_thirty_two_kib_meets_every_claim`]): four hash seeds, four mixes, 96 epochs,
/// the final layout beside the first (`S` = 2 048, `W` = 9). Printed; the final
/// layout's worst key held to ≤ 10 % as a regression pin (this is where it was
/// chosen, so it backs no claim of its own).
///
/// `cargo test --release -p loxo-tests --test spread_accuracy -- exploratory --nocapture`
#[test]
fn hip_exploratory_range_printed() {
    let mixes = [
        Mix {
            pairs: 150_000,
            spreaders: 10,
            lo: 0.005,
            hi: 0.2,
        },
        Mix {
            pairs: 400_000,
            spreaders: 16,
            lo: 0.005,
            hi: 0.2,
        },
        Mix {
            pairs: 300_000,
            spreaders: 30,
            lo: 0.003,
            hi: 0.08,
        },
        Mix {
            pairs: 100_000,
            spreaders: 6,
            lo: 0.01,
            hi: 0.3,
        },
    ];
    let seeds = [
        Seed::new(11, 12),
        Seed::new(0xdead, 0xbeef),
        Seed::new(777, 1),
        Seed::new(5, 55),
    ];
    header();
    for (si, seed) in seeds.into_iter().enumerate() {
        let mut last = vec![Score::default(); THRESHOLDS.len()];
        let mut first = vec![Score::default(); THRESHOLDS.len()];
        for (ci, mix) in mixes.into_iter().enumerate() {
            for t in 0..6u64 {
                let mut rng = Rng::new(mix64(
                    0x0b5e_0000_0000 + ((si as u64) << 24) + ((ci as u64) << 16) + t,
                ));
                let st = Stream::new(mix, seed, &mut rng);
                let mut a = Box::new(Hip::new(seed));
                let mut b = Box::new(HipSpreaders::<Key, 2048, 9, 500, 64>::new(seed));
                feed(&mut *a, &st);
                feed(&mut *b, &st);
                let n = st.distinct_pairs() as f64;
                for (i, &f) in THRESHOLDS.iter().enumerate() {
                    last[i].add(&st, f * n, &report(&*a, &st, f * n, Z));
                    first[i].add(&st, f * n, &report(&*b, &st, f * n, Z));
                }
            }
        }
        for (i, &f) in THRESHOLDS.iter().enumerate() {
            print_row(
                &format!("seed {si}: <4096, 4, 580, 64>"),
                Hip::MEMORY_BYTES,
                f,
                &last[i],
            );
            print_row(
                &format!("seed {si}: <2048, 9, 500, 64>"),
                HipSpreaders::<Key, 2048, 9, 500, 64>::MEMORY_BYTES,
                f,
                &first[i],
            );
            assert!(
                last[i].rel_max <= 0.10,
                "seed {si} at {f}: {}",
                last[i].rel_max
            );
        }
    }
}
