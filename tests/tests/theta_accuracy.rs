//! Accuracy of `loxo_theta::ThetaSketch` against the theory, at parameters nobody
//! tuned for.
//!
//! **Held out.** The design was explored at `K` = 256 and 1 024, `n` = 1 000 …
//! 200 000, stream seeds `7919·t + 13`. These checks run at `K` = 64, 512, 2 048, `n`
//! = 900, 11 000, 120 000 and unions/set operations of 30 000 keys, stream seeds
//! `mix64(0xACC0_0000 + …)`, none of which was looked at while writing the code.
//!
//! **Theory.** Given θ, each of the `n` keys of a set is retained with probability θ,
//! so `estimate = retained/θ` has standard deviation `σ = √(n·(1 − θ)/θ)` — the same
//! formula for a single sketch, a union, and an intersection or difference of `n_r`
//! keys (whose θ comes from the operands, i.e. from the union: the error is relative
//! to the union's size). θ is itself random, but the standardized error
//! `z = (estimate − n)/σ` still has `E[z²] ≈ 1` (checked below at 4σ: a mean of `T`
//! squares has sampling sd `√(Var(z²)/T)`, `Var(z²)` measured, 2 for a normal `z`).
//! The estimate is unbiased: the mean relative error is within `4·sd/√T` of 0 (the
//! mean of `z` is not: σ grows with the estimate, so low estimates weigh more). For single sketches and unions the
//! relative error is also bounded by the nominal `σ = 1/√(k − 1)` (`k = K/2`;
//! exactly that just after a rebuild, less between rebuilds): the mean squared
//! relative error is at most `1/(k − 1)` plus its 4σ sampling band, and the trials
//! beyond 4σ are no more than the (skewed, gamma) law allows ([`beyond_4_sigma`]).
//!
//! **Bounds.** `lower_bound(s) ..= upper_bound(s)` is DataSketches' two-sided
//! interval at `s` standard deviations: it should contain the truth in about
//! 68.27 %, 95.45 %, 99.73 % of the trials. DataSketches' bounds are approximate, so
//! the check is one-sided: coverage ≥ stated − 4·√(p(1 − p)/T) over `T ≥ 1000`
//! trials.
//!
//! In exact mode (θ = 1) the estimate and both bounds must equal `n`.
//!
//! Keys go in through `insert_hash` with a seeded SplitMix64 stream
//! ([`loxo_tests::DistinctKeys`]); the keyed hash's uniformity is tested in
//! `hashing.rs`. `--nocapture` prints the tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{mix64, KeyHash, Seed};
use loxo_tests::DistinctKeys;
use loxo_theta::ThetaSketch;

const SEED: Seed = Seed::new(0x7e7a, 0xacc);
/// Stated two-sided confidence of the interval at 1, 2, 3 sd.
const STATED: [f64; 3] = [0.682_689_5, 0.954_499_7, 0.997_300_2];
/// Checkpoints of the single-sketch streams.
const SINGLE_N: [u64; 3] = [900, 11_000, 120_000];

/// Keys of trial `t` of experiment `exp`: a fresh stream.
fn keys(exp: u64, t: u64) -> impl Iterator<Item = KeyHash> {
    DistinctKeys::new(mix64(0xACC0_0000 + (exp << 20) + t)).map(KeyHash::from_u64)
}

/// Accumulates the standardized errors of one experiment cell.
#[derive(Default)]
struct Tally {
    trials: u64,
    exact: u64,
    z: Vec<f64>,
    rel: Vec<f64>,
    covered: [u64; 3],
    worst_rel: f64,
}

impl Tally {
    fn record<const K: usize>(&mut self, s: &ThetaSketch<K>, truth: u64) {
        self.trials += 1;
        let n = truth as f64;
        let est = s.estimate();
        if !s.is_estimation_mode() {
            assert_eq!(est, n, "exact mode must count exactly");
            for sd in 1..=3 {
                assert_eq!((s.lower_bound(sd), s.upper_bound(sd)), (n, n));
            }
            self.exact += 1;
            return;
        }
        let theta = s.theta();
        self.z.push((est - n) / (n * (1.0 - theta) / theta).sqrt());
        let rel = (est - n) / n;
        self.rel.push(rel);
        self.worst_rel = self.worst_rel.max(rel.abs());
        for (sd, c) in (1u8..=3).zip(&mut self.covered) {
            if s.lower_bound(sd) <= n && n <= s.upper_bound(sd) {
                *c += 1;
            }
        }
    }

    /// Checks the cell; `nominal_k` is `Some(k)` where the `1/√(k − 1)` bound applies.
    fn check(&self, name: &str, nominal_k: Option<usize>) {
        assert!(self.trials >= 1000, "{name}: too few trials");
        if self.exact > 0 {
            // A cell is all exact or all estimating at these n; nothing to average.
            assert_eq!(
                self.exact, self.trials,
                "{name}: mixed exact and estimating trials"
            );
            println!("{name:<34} exact in all {} trials", self.trials);
            return;
        }
        let t = self.z.len() as f64;
        let mean_z = mean(&self.z);
        let bias = mean(&self.rel);
        let sd_rel = var(&self.rel, bias).sqrt();
        let z2: Vec<f64> = self.z.iter().map(|z| z * z).collect();
        let mean_z2 = mean(&z2);
        let band_z2 = 4.0 * (var(&z2, mean_z2) / t).sqrt();
        let cover: Vec<f64> = self.covered.iter().map(|&c| c as f64 / t).collect();
        println!(
            "{name:<34} T {t:>5}  bias {bias:+.4}  mean z {mean_z:+.3}  E[z²] {mean_z2:.3} ± {band_z2:.3}  \
             worst |rel| {:.4}  coverage {:.4} {:.4} {:.4}",
            self.worst_rel, cover[0], cover[1], cover[2]
        );
        assert!(bias.abs() <= 4.0 * sd_rel / t.sqrt(), "{name}: bias {bias}");
        assert!(
            (mean_z2 - 1.0).abs() <= band_z2,
            "{name}: E[z²] {mean_z2} ± {band_z2}"
        );
        for ((c, p), sd) in cover.iter().zip(STATED).zip(1..) {
            let margin = 4.0 * (p * (1.0 - p) / t).sqrt();
            assert!(
                *c >= p - margin,
                "{name}: {sd} sd coverage {c} < {p} − {margin}"
            );
        }
        if let Some(k) = nominal_k {
            let sigma = 1.0 / ((k - 1) as f64).sqrt();
            let beyond = self.rel.iter().filter(|r| r.abs() > 4.0 * sigma).count() as f64;
            let expected = t * beyond_4_sigma(k);
            assert!(
                beyond <= expected + 4.0 * expected.sqrt(),
                "{name}: {beyond} trials beyond 4σ, expected {expected:.3}"
            );
            let rel2: Vec<f64> = self.rel.iter().map(|r| r * r).collect();
            let mse = mean(&rel2);
            let band = 4.0 * (var(&rel2, mse) / t).sqrt();
            assert!(
                mse <= sigma * sigma + band,
                "{name}: MSE {mse} > {} + {band}",
                sigma * sigma
            );
        }
    }
}

/// The probability that one estimate is more than `4/√(k − 1)` off, in the worst
/// state (just after a rebuild: `k` values below θ = the `(k+1)`-th smallest of `n ≫ k`
/// uniform values, so `estimate/n ≈ k/G` with `G ~ Gamma(k + 1)`). The law is skewed
/// (for `k = 32` the high tail alone is 0.17 %, not the normal 0.003 %), so the count
/// of trials beyond 4σ is checked against this expectation plus 4 Poisson σ.
fn beyond_4_sigma(k: usize) -> f64 {
    let (kf, c) = (k as f64, 4.0 / ((k - 1) as f64).sqrt());
    // P(G < x) = P(Poisson(x) ≥ k + 1); P(G > x) = P(Poisson(x) ≤ k).
    let high = 1.0 - poisson_cdf(kf / (1.0 + c), k);
    let low = if c < 1.0 {
        poisson_cdf(kf / (1.0 - c), k)
    } else {
        0.0
    };
    high + low
}

/// `P(Poisson(λ) ≤ m)`, summed in log space.
fn poisson_cdf(lambda: f64, m: usize) -> f64 {
    let mut log_term = -lambda;
    let mut total = log_term.exp();
    for i in 1..=m {
        log_term += lambda.ln() - (i as f64).ln();
        total += log_term.exp();
    }
    total.min(1.0)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn var(xs: &[f64], m: f64) -> f64 {
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// One stream per trial, checked at each of [`SINGLE_N`].
fn single<const K: usize>(exp: u64, trials: u64) {
    let mut cells: Vec<Tally> = SINGLE_N.iter().map(|_| Tally::default()).collect();
    for t in 0..trials {
        let mut s = ThetaSketch::<K>::new(SEED);
        let mut inserted = 0;
        for (&n, cell) in SINGLE_N.iter().zip(&mut cells) {
            for h in keys(exp, t)
                .skip(inserted as usize)
                .take((n - inserted) as usize)
            {
                s.insert_hash(h);
            }
            inserted = n;
            cell.record(&s, n);
        }
    }
    for (&n, cell) in SINGLE_N.iter().zip(&cells) {
        cell.check(&format!("single K={K} n={n}"), Some(K / 2));
    }
}

#[test]
fn single_sketches_k64() {
    single::<64>(1, 1000);
}

#[test]
fn single_sketches_k512() {
    single::<512>(2, 1000);
}

#[test]
fn single_sketches_k2048() {
    single::<2048>(3, 1000);
}

/// Four overlapping sketches (each 2/5 of the union, shifted by 1/5) merged into one.
fn union<const K: usize>(exp: u64, n_union: u64, trials: u64) {
    let mut cell = Tally::default();
    let part = n_union / 5;
    for t in 0..trials {
        let all: Vec<KeyHash> = keys(exp, t).take(n_union as usize).collect();
        let mut u = ThetaSketch::<K>::new(SEED);
        for j in 0..4 {
            let mut s = ThetaSketch::<K>::new(SEED);
            let from = (j * part) as usize;
            let to = if j == 3 {
                all.len()
            } else {
                from + 2 * part as usize
            };
            for &h in &all[from..to] {
                s.insert_hash(h);
            }
            u.merge(&s).unwrap();
        }
        cell.record(&u, n_union);
    }
    cell.check(&format!("union of 4, K={K} n={n_union}"), Some(K / 2));
}

#[test]
fn unions_of_several_sketches() {
    union::<64>(4, 7_000, 1000);
    union::<512>(5, 30_000, 1000);
    union::<2048>(6, 30_000, 1000);
}

/// A = keys[0 .. a_end), B = keys[b_start .. n): intersection `a_end − b_start`,
/// difference A \ B `b_start` keys, the error relative to the union `n`.
fn set_operations<const K: usize>(exp: u64, n: u64, a_end: u64, b_start: u64, trials: u64) {
    let (mut inter, mut diff) = (Tally::default(), Tally::default());
    for t in 0..trials {
        let (mut a, mut b) = (ThetaSketch::<K>::new(SEED), ThetaSketch::<K>::new(SEED));
        for (i, h) in keys(exp, t).take(n as usize).enumerate() {
            let i = i as u64;
            if i < a_end {
                a.insert_hash(h);
            }
            if i >= b_start {
                b.insert_hash(h);
            }
        }
        let mut both = a.clone();
        both.intersect(&b).unwrap();
        inter.record(&both, a_end - b_start);
        a.subtract(&b).unwrap();
        diff.record(&a, b_start);
    }
    let pct = |x: u64| 100.0 * x as f64 / n as f64;
    inter.check(
        &format!("A∩B {:.0} % of {n}, K={K}", pct(a_end - b_start)),
        None,
    );
    diff.check(&format!("A\\B {:.0} % of {n}, K={K}", pct(b_start)), None);
}

#[test]
fn small_intersection_and_large_difference() {
    // A∩B = 1 % of the union (the hard case), A \ B = 49.5 %.
    set_operations::<512>(7, 30_000, 15_150, 14_850, 1000);
    set_operations::<2048>(8, 30_000, 15_150, 14_850, 1000);
}

#[test]
fn small_difference_and_large_intersection() {
    // A \ B = 1 % of the union, A∩B = 59 %.
    set_operations::<512>(9, 30_000, 18_000, 300, 1000);
    set_operations::<2048>(10, 30_000, 18_000, 300, 1000);
}

#[test]
fn half_overlap() {
    set_operations::<64>(11, 5_000, 3_750, 1_250, 1000);
    set_operations::<2048>(12, 30_000, 22_500, 7_500, 1000);
}
