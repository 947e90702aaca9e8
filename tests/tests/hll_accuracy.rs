//! Accuracy sweep of `loxo_hll::Hll`: relative RMSE and bias of every estimator
//! against the theory at each cardinality, over many independent seeded trials.
//!
//! Each trial feeds `insert_hash` with a seeded SplitMix64 stream
//! ([`loxo_tests::DistinctKeys`]): distinct, uniformly distributed 64-bit digests.
//! The keyed hash's own uniformity is tested in `hashing.rs`, so feeding digests
//! directly tests the sketch and the estimators, ~20× faster than hashing keys.
//! Trials run on two threads; all results are deterministic (seeded, and the sums
//! are combined in a fixed order).
//!
//! The bands are not a flat `1.1 · 1.04/√m`: the standard error of each estimator
//! is derived at each `n` ([`theory`]), and the band around a measured RMSE is its
//! own sampling error at 4σ. At `P = 10`, `n = 100` the theory is 2.23 %: the old
//! flat band, 1.1 · 3.25 % = 3.58 %, let the estimator be 60 % worse than it is.
//!
//! Run `cargo test --release -p loxo-tests --test hll_accuracy -- --nocapture` to see
//! the tables quoted in the README.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{KeyHash, Seed};
use loxo_hll::{Hll, Precision, SupportedPrecision};
use loxo_tests::DistinctKeys;

/// Estimators measured at each checkpoint.
const ERTL: usize = 0;
const CLASSIC: usize = 1;
const MARTINGALE: usize = 2;
const LINEAR: usize = 3;

/// Trials at `P = 14` (10¹⁰ inserts) and at `P = 10`. The sampling error of an RMSE
/// from `T` normal errors is `1/√(2T)` of it: a 4σ band is ±8.9 % at 1000 trials,
/// ±6.3 % at 2000.
const TRIALS_P14: u64 = 1000;
const TRIALS_P10: u64 = 2000;

/// Running sums of the relative error `e = (ê − n) / n` of one estimator at one `n`.
#[derive(Clone, Copy, Default)]
struct Acc {
    count: u64,
    sum: f64,
    sum2: f64,
    sum4: f64,
}

impl Acc {
    fn add(&mut self, e: f64) {
        self.count += 1;
        self.sum += e;
        self.sum2 += e * e;
        self.sum4 += e * e * e * e;
    }
    fn merge(&mut self, o: &Acc) {
        self.count += o.count;
        self.sum += o.sum;
        self.sum2 += o.sum2;
        self.sum4 += o.sum4;
    }
    fn t(&self) -> f64 {
        self.count as f64
    }
    fn bias(&self) -> f64 {
        self.sum / self.t()
    }
    fn mse(&self) -> f64 {
        self.sum2 / self.t()
    }
    fn rmse(&self) -> f64 {
        self.mse().sqrt()
    }
    /// Standard deviation of the error (RMSE without the bias).
    fn sd(&self) -> f64 {
        (self.mse() - self.bias() * self.bias()).max(0.0).sqrt()
    }
    /// `E[e⁴] / E[e²]²` (3 for a normal error).
    fn kurtosis(&self) -> f64 {
        if self.sum2 == 0.0 {
            return 3.0;
        }
        (self.sum4 / self.t()) / (self.mse() * self.mse())
    }
    /// Relative standard deviation of the measured RMSE (and SD): the mean of `T`
    /// squared errors has variance `(E[e⁴] − E[e²]²)/T`, and the square root halves
    /// a relative error, so `½·√((κ − 1)/T)` with `κ` the kurtosis: `1/√(2T)` for a
    /// normal error. `κ` is the measured one, never below the normal 3: at small
    /// `n` the error is a count of register collisions, heavier-tailed than normal.
    fn rmse_rel_sigma(&self) -> f64 {
        0.5 * ((self.kurtosis().max(3.0) - 1.0) / self.t()).sqrt()
    }
}

/// One checkpoint: the four estimators, and `Σ e_ertl² · e_martingale²` for the
/// paired comparison of their RMSEs.
#[derive(Clone, Copy, Default)]
struct Point {
    acc: [Acc; 4],
    cross: f64,
}

/// Digest stream of trial `t`: SplitMix64 from a well-spread starting state.
fn stream(p: u8, t: u64) -> DistinctKeys {
    DistinctKeys::new(loxo_core::mix64(
        0x4c4f_584f_0000_0000 ^ (u64::from(p) << 40) ^ (t + 1),
    ))
}

/// Runs `trials` trials, each inserting up to `checkpoints.last()` distinct keys and
/// scoring every estimator at every checkpoint.
fn sweep<const P: u8>(trials: u64, checkpoints: &[u64]) -> Vec<Point>
where
    Precision<P>: SupportedPrecision,
{
    let m = 1u64 << P;
    let run = |first: u64| {
        let mut points = vec![Point::default(); checkpoints.len()];
        let mut hll = Hll::<P>::new(Seed::new(1, 2));
        for t in (first..trials).step_by(2) {
            hll.clear();
            let mut keys = stream(P, t);
            let mut n = 0u64;
            for (c, &target) in checkpoints.iter().enumerate() {
                for key in keys.by_ref().take((target - n) as usize) {
                    hll.insert_hash(KeyHash::from_u64(key));
                }
                n = target;
                let rel = |e: f64| (e - n as f64) / n as f64;
                let pt = &mut points[c];
                let (ertl, hip) = (
                    rel(hll.estimate()),
                    rel(hll.estimate_martingale().expect("inserts only")),
                );
                pt.acc[ERTL].add(ertl);
                pt.acc[CLASSIC].add(rel(hll.estimate_classic()));
                pt.acc[MARTINGALE].add(hip);
                pt.cross += ertl * ertl * hip * hip;
                if n <= m {
                    pt.acc[LINEAR].add(rel(hll.estimate_linear_counting()));
                }
            }
        }
        points
    };
    let (even, odd) = std::thread::scope(|s| {
        let h = s.spawn(|| run(1));
        let even = run(0);
        (even, h.join().unwrap())
    });
    even.into_iter()
        .zip(odd)
        .map(|(mut a, b)| {
            for (x, y) in a.acc.iter_mut().zip(&b.acc) {
                x.merge(y);
            }
            a.cross += b.cross;
            a
        })
        .collect()
}

use loxo_tests::hll_theory as theory;

fn print_table(p: u8, trials: u64, checkpoints: &[u64], points: &[Point]) {
    let rse = 1.04 / f64::from(1u32 << p).sqrt();
    println!(
        "\nP = {p}, m = {}, {trials} trials, 1.04/√m = {:.4} %",
        1u32 << p,
        100.0 * rse
    );
    println!("| n | n/m | estimate RMSE (theory) | estimate bias | classic RMSE | classic bias | martingale RMSE (theory) | martingale bias | martingale ÷ estimate (theory) | linear counting RMSE |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (&n, pt) in checkpoints.iter().zip(points) {
        let a = &pt.acc;
        let lc = if a[LINEAR].count > 0 {
            format!("{:.3} %", 100.0 * a[LINEAR].rmse())
        } else {
            "—".into()
        };
        let (te, th) = (theory::ertl_rse(n as f64, p), theory::hip_rse(n, p));
        println!(
            "| {n} | {:.3} | {:.3} % ({:.3} %) | {:+.3} % | {:.3} % | {:+.3} % | {:.3} % ({:.3} %) | {:+.3} % | {:.3} ({:.3}) | {lc} |",
            n as f64 / f64::from(1u32 << p),
            100.0 * a[ERTL].rmse(),
            100.0 * te,
            100.0 * a[ERTL].bias(),
            100.0 * a[CLASSIC].rmse(),
            100.0 * a[CLASSIC].bias(),
            100.0 * a[MARTINGALE].rmse(),
            100.0 * th,
            100.0 * a[MARTINGALE].bias(),
            ratio(pt),
            if te > 0.0 { th / te } else { 0.0 },
        );
    }
}

/// Measured `RMSE(martingale) / RMSE(estimate)` on the same sketches.
fn ratio(pt: &Point) -> f64 {
    let (h, e) = (&pt.acc[MARTINGALE], &pt.acc[ERTL]);
    if e.mse() == 0.0 {
        return 0.0;
    }
    (h.mse() / e.mse()).sqrt()
}

/// Relative standard deviation of [`ratio`]: by the delta method,
/// `Var(ln r) = ¼·Var(ln MSE_h − ln MSE_e)
///            = ¼·((κ_h − 1) + (κ_e − 1) − 2·(c − 1)) / T`,
/// `κ` the kurtosis of each error and `c = E[e_h²·e_e²] / (E[e_h²]·E[e_e²])` (the
/// errors of the two estimators on one sketch are correlated, which narrows it).
fn ratio_rel_sigma(pt: &Point) -> f64 {
    let (h, e) = (&pt.acc[MARTINGALE], &pt.acc[ERTL]);
    let c = (pt.cross / e.t()) / (h.mse() * e.mse());
    let v = ((h.kurtosis() - 1.0) + (e.kurtosis() - 1.0) - 2.0 * (c - 1.0)) / e.t();
    0.5 * v.max(0.0).sqrt()
}

/// Every band at every checkpoint, each at 4σ of its own sampling error. About 170
/// one- or two-sided checks at 4σ: a correct estimator trips one with probability
/// below 1 % (and, the seeds being fixed, it would do so on every run, not
/// intermittently). All violations are listed.
///
/// * `estimate()`: `SD ≤ θ·(1 + 4·s)`, `θ` from [`theory::ertl`], `s` from
///   [`Acc::rmse_rel_sigma`] (the SD rather than the RMSE, so that the bias is
///   checked on its own). Also `SD ≥ θ·(1 − 4·s)` where the error is a sum of many
///   register collisions, `n²/(2m) ≥ 20`: below that a trial sees a handful of
///   collisions and the sample SD says little.
/// * bias of `estimate()`: `|bias − b| ≤ 4·SD/√T`, `b` the second-order bias of
///   [`theory::ertl`] (+0.05 % to +0.11 % at `P = 10`, the sampling error of the
///   mean of `T` errors being `SD/√T`).
/// * martingale: the same SD bands with [`theory::hip_rse`], `|bias| ≤ 4·SD/√T` (a
///   martingale is unbiased), and exactly 1 at `n = 1`.
/// * martingale vs `estimate()` on the same sketches, where `n²/(2m) ≥ 20`:
///   `|r / r_theory − 1| ≤ 4·s_r` with `r_theory = hip_rse / ertl_rse` (0.78–0.81
///   at every `n`) and `s_r` from [`ratio_rel_sigma`]. This checks the docs' "about
///   20 % more accurate" at every `n`, not only for `n ≫ m`.
///
/// How close the theory is (16 000 trials at `P = 10`, `n` = 64 … 10⁵, and 8 000 at
/// `P = 14`, `n` = 300 … 10⁵): measured SD / theory 0.989–1.025 for both
/// estimators, bias − theory within 1.5σ of that run's sampling error, ratio /
/// theory 0.986–1.007; all within 3σ of their own sampling error.
fn check_bounds(p: u8, checkpoints: &[u64], points: &[Point]) {
    let m = f64::from(1u32 << p);
    // Every violation is listed, not only the first.
    let mut failures = Vec::new();
    let mut check = |ok: bool, msg: String| {
        if !ok {
            failures.push(msg);
        }
    };
    for (&n, pt) in checkpoints.iter().zip(points) {
        let nf = n as f64;
        let many_collisions = nf * nf / (2.0 * m) >= 20.0;
        let (ertl_th, ertl_bias) = theory::ertl(nf, p);
        for (idx, name, th) in [
            (ERTL, "estimate", ertl_th),
            (MARTINGALE, "martingale", theory::hip_rse(n, p)),
        ] {
            let a = &pt.acc[idx];
            let s = a.rmse_rel_sigma();
            check(
                a.sd() <= th * (1.0 + 4.0 * s),
                format!(
                    "P = {p}, n = {n}: {name} SD {:.5} > theory {th:.5} + 4σ ({:.1} %)",
                    a.sd(),
                    400.0 * s
                ),
            );
            if many_collisions {
                check(
                    a.sd() >= th * (1.0 - 4.0 * s),
                    format!(
                        "P = {p}, n = {n}: {name} SD {:.5} < theory {th:.5} − 4σ ({:.1} %): \
                         better than the theory allows, the trials are not what they seem",
                        a.sd(),
                        400.0 * s
                    ),
                );
            }
            let center = if idx == ERTL { ertl_bias } else { 0.0 };
            // 1e-9: rounding, for the deterministic error of one key.
            let band = 4.0 * a.sd() / a.t().sqrt() + 1e-9;
            check(
                (a.bias() - center).abs() <= band,
                format!(
                    "P = {p}, n = {n}: {name} bias {:+.5} beyond {center:+.5} ± {band:.5}",
                    a.bias()
                ),
            );
        }
        if n == 1 {
            // One key always changes a register (probability 1): the martingale
            // counts exactly 1.
            check(
                pt.acc[MARTINGALE].sum2 == 0.0,
                format!("P = {p}: martingale not exact at n = 1"),
            );
        }
        if many_collisions {
            let r_th = theory::hip_rse(n, p) / ertl_th;
            let (r, s) = (ratio(pt), ratio_rel_sigma(pt));
            check(
                (r / r_th - 1.0).abs() <= 4.0 * s,
                format!(
                    "P = {p}, n = {n}: RMSE martingale/estimate {r:.4}, theory {r_th:.4} ± 4σ ({:.1} %)",
                    400.0 * s
                ),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The theory's own limits: exact collisions for a few keys, linear counting for
/// `1 ≪ n ≪ m`, `√(3 ln 2 − 1)/√m` and `√(ln 2 / m)` for `n ≫ m` (so that a wrong
/// formula cannot hide behind a band).
#[test]
fn theory_has_the_known_limits() {
    let m = 1024.0;
    // One key: no error at all. Ten keys: the number of colliding pairs, variance
    // n(n − 1)/(2m) to first order, relative (n − 1)/(2nm).
    assert!(theory::ertl_rse(1.0, 10) < 1e-6);
    let ten = theory::ertl_rse(10.0, 14);
    let pairs = (9.0 / (20.0 * 16_384.0f64)).sqrt();
    assert!((ten / pairs - 1.0).abs() < 0.01, "{ten} vs {pairs}");
    for n in [128.0, 256.0] {
        let t: f64 = n / m;
        let lc = (m * (t.exp() - t - 1.0)).sqrt() / n;
        let e = theory::ertl_rse(n, 10);
        assert!(
            (e / lc - 1.0).abs() < 0.01,
            "n = {n}: {e} vs linear counting {lc}"
        );
    }
    let big = theory::ertl_rse(1e9, 10) * m.sqrt();
    assert!(
        (big - (3.0 * 2f64.ln() - 1.0).sqrt()).abs() < 0.005,
        "{big}"
    );
    let hip = theory::hip_rse(100_000_000, 10) * m.sqrt();
    assert!((hip - 2f64.ln().sqrt()).abs() < 0.005, "{hip}");
    for n in [1.0, 3.7 * m, 1e12] {
        assert!((theory::register_pmf(n, 10).iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn accuracy_p10_2000_seeds() {
    // The cardinalities plus points around the classic switch at 2.5·m = 2560
    // to show the classic estimator's bump.
    let checkpoints = [
        1, 10, 64, 100, 300, 1000, 2000, 2560, 2800, 3000, 3500, 5000, 10_000, 100_000, 1_000_000,
    ];
    let points = sweep::<10>(TRIALS_P10, &checkpoints);
    print_table(10, TRIALS_P10, &checkpoints, &points);
    check_bounds(10, &checkpoints, &points);

    // Small range, n ≤ m/16 = 64: not worse than linear counting, measured on the
    // very same sketches. Both are functions of the same registers and agree to
    // first order while few registers are hit (Ertl's σ(V/m) term is then the
    // linear-counting term), so the paired comparison carries no sampling noise;
    // the 1 % allows only for the second-order terms in which the formulas differ.
    for (&n, pt) in checkpoints.iter().zip(&points) {
        if n <= 64 {
            assert!(
                pt.acc[ERTL].rmse() <= 1.01 * pt.acc[LINEAR].rmse() + 1e-9,
                "n = {n}: estimate RMSE {} vs linear counting {}",
                pt.acc[ERTL].rmse(),
                pt.acc[LINEAR].rmse()
            );
        }
    }
}

#[test]
fn accuracy_p14_to_ten_million() {
    let checkpoints = [
        1, 10, 100, 300, 1000, 3000, 10_000, 41_000, 100_000, 1_000_000, 10_000_000,
    ];
    let points = sweep::<14>(TRIALS_P14, &checkpoints);
    print_table(14, TRIALS_P14, &checkpoints, &points);
    check_bounds(14, &checkpoints, &points);
}
