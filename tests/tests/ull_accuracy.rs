//! Accuracy sweep of `loxo_hll::Ull` (UltraLogLog): relative RMSE and bias of its
//! three estimators at `P` = 8, 12, 14, `n` from 1 to `10·m` … `1000·m`, over many
//! independent seeded trials, against
//!
//! 1. **the theory's asymptotic standard errors** (Ertl 2024), an upper bound at
//!    every `n` — UltraLogLog is more accurate below a few hundred `m` and reaches
//!    them from below, with no bump anywhere: FGRA `√(V/m)`, `V = 0.6119`
//!    (`0.782/√m`); ML `√(ln 2/ζ(2, 5/4))/√m = 0.761/√m` (the inverse square root
//!    of the Fisher information); martingale `√(5·ln 2/8)/√m = 0.658/√m`;
//! 2. **the martingale's exact variance at each `n`** ([`martingale_rse`], derived
//!    below): two-sided;
//! 3. **the published simulation of the reference implementation** (hash4j's
//!    `test-results/ultraloglog-estimation-error-pNN.csv`, 100 000 runs per `n`,
//!    commit 41d814f, the same `n` grid), two-sided for FGRA and ML, whose exact
//!    finite-`n` error has no closed form. `ull_hash4j.rs` shows that both
//!    implementations compute the same estimates on the same registers, so this
//!    checks loxo's register updates and the digest-to-register path statistically,
//!    at `n` nobody tuned for.
//!
//! Bands: the sampling error of an RMSE from `T` trials is `½·√((κ − 1)/T)` of it
//! (`κ` the measured kurtosis of the error, at least the normal 3): ±8.9 % at 4σ for
//! `T = 1000`, ±6.3 % for `T = 2000`; of a mean (the bias) `SD/√T`. Every band is
//! 4σ of the combined sampling errors (for the reference, `T = 100 000`). About 400
//! checks at 4σ: a correct sketch trips one with probability below 3 %, and with
//! fixed seeds it would do so on every run, not intermittently. Two-sided checks
//! apply where the error is a sum of many register collisions (`n²/(2m) ≥ 20`);
//! below that a trial sees a handful of collisions and the sample SD says little.
//! The upper bound and the bias check apply at `n = 1` (no collision possible) and
//! wherever at least 20 trials are expected to see a collision
//! (`T·min(1, n²/(2m)) ≥ 20`): with fewer, the RMSE and the mean are those of zero,
//! one or two rare events (at `P = 14`, `n = 2`, one trial in 1000 with both keys
//! in one register gives an RMSE of 1.6 %), which no normal band describes.
//!
//! Each trial feeds `insert_hash` with a seeded SplitMix64 stream
//! ([`loxo_tests::DistinctKeys`]): the keyed hash's own uniformity is tested in
//! `hashing.rs`. Run `cargo test --release -p loxo-tests --test ull_accuracy --
//! --nocapture` for the tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{KeyHash, Seed};
use loxo_hll::{Hll, Precision, SupportedPrecision, Ull};
use loxo_tests::DistinctKeys;

const FGRA: usize = 0;
const ML: usize = 1;
const MARTINGALE: usize = 2;
const NAMES: [&str; 3] = ["FGRA", "ML", "martingale"];
/// Asymptotic `RSE·√m` of each estimator (see the module docs).
const ASYMPTOTIC: [f64; 3] = [
    0.782_235_993_609_245_6,
    0.760_862_100_272_518_2,
    0.658_192_211_933_539_8,
];
/// Runs behind each reference figure.
const REF_TRIALS: f64 = 100_000.0;

/// hash4j's published relative bias and RMSE (`[bias, rmse]`) of FGRA, ML and the
/// martingale estimator at `n`, 100 000 runs each
/// (`test-results/ultraloglog-estimation-error-p08.csv`, `-p12`, `-p14`).
type Reference = (u64, [f64; 2], [f64; 2], [f64; 2]);

const REF_P8: &[Reference] = &[
    (
        1,
        [-6.94346e-04, 1.36663e-03],
        [-9.00172e-04, 1.16669e-03],
        [0.00000e+00, 0.00000e+00],
    ),
    (
        2,
        [-8.66010e-04, 2.86894e-02],
        [-1.00892e-03, 2.33224e-02],
        [-5.69299e-05, 2.08757e-02],
    ),
    (
        10,
        [-6.34855e-04, 3.64688e-02],
        [-8.62295e-04, 2.96687e-02],
        [4.40781e-05, 2.70816e-02],
    ),
    (
        50,
        [-5.04600e-04, 3.86143e-02],
        [-7.78526e-04, 3.12771e-02],
        [9.07467e-05, 2.84795e-02],
    ),
    (
        100,
        [-6.37120e-04, 3.91346e-02],
        [-9.46782e-04, 3.17222e-02],
        [-8.69369e-05, 2.88854e-02],
    ),
    (
        260,
        [-7.90789e-04, 3.89006e-02],
        [-8.95412e-04, 3.29750e-02],
        [-6.38731e-05, 2.98831e-02],
    ),
    (
        503,
        [-7.31689e-04, 3.81208e-02],
        [-6.05207e-04, 3.47776e-02],
        [3.46707e-05, 3.11603e-02],
    ),
    (
        1035,
        [-4.72968e-04, 3.97937e-02],
        [-3.63578e-04, 3.79949e-02],
        [-9.56562e-05, 3.35283e-02],
    ),
    (
        2040,
        [-1.80935e-04, 4.36255e-02],
        [-1.42121e-04, 4.21203e-02],
        [-5.37817e-05, 3.63131e-02],
    ),
    (
        4026,
        [-3.62572e-06, 4.63031e-02],
        [7.96373e-06, 4.48829e-02],
        [1.25866e-05, 3.83445e-02],
    ),
    (
        8356,
        [-2.73187e-05, 4.77313e-02],
        [-8.78706e-06, 4.63514e-02],
        [-1.25237e-04, 3.97308e-02],
    ),
    (
        16533,
        [-2.65311e-04, 4.83869e-02],
        [-2.60676e-04, 4.70961e-02],
        [-3.50462e-04, 4.04607e-02],
    ),
    (
        32724,
        [2.46549e-05, 4.86134e-02],
        [3.37536e-05, 4.73133e-02],
        [4.07661e-05, 4.07418e-02],
    ),
    (
        64780,
        [7.15745e-05, 4.87001e-02],
        [7.55920e-05, 4.73622e-02],
        [8.07946e-05, 4.10374e-02],
    ),
    (
        128250,
        [4.72983e-05, 4.89306e-02],
        [1.32150e-05, 4.75834e-02],
        [5.34569e-05, 4.11944e-02],
    ),
    (
        163681,
        [1.72438e-04, 4.89478e-02],
        [1.36369e-04, 4.76084e-02],
        [9.59686e-05, 4.11657e-02],
    ),
    (
        253918,
        [1.18720e-04, 4.88739e-02],
        [7.22348e-05, 4.75420e-02],
        [7.13686e-05, 4.11836e-02],
    ),
];

const REF_P12: &[Reference] = &[
    (
        1,
        [-3.98450e-05, 8.22056e-05],
        [-5.63977e-05, 7.30080e-05],
        [0.00000e+00, 0.00000e+00],
    ),
    (
        2,
        [-3.84158e-05, 6.70904e-03],
        [-5.03118e-05, 5.24457e-03],
        [1.08872e-05, 4.47248e-03],
    ),
    (
        10,
        [-5.77613e-05, 9.14961e-03],
        [-6.73277e-05, 7.49606e-03],
        [-1.62808e-05, 6.88893e-03],
    ),
    (
        50,
        [-3.96547e-05, 9.46390e-03],
        [-4.74107e-05, 7.74595e-03],
        [-4.58730e-06, 7.07220e-03],
    ),
    (
        100,
        [-1.20195e-05, 9.52372e-03],
        [-4.10160e-05, 7.79144e-03],
        [-1.11079e-05, 7.13274e-03],
    ),
    (
        260,
        [-1.68646e-05, 9.60417e-03],
        [-5.27263e-05, 7.83132e-03],
        [-5.55858e-06, 7.14083e-03],
    ),
    (
        503,
        [-3.00321e-05, 9.65209e-03],
        [-3.98282e-05, 7.85160e-03],
        [4.97196e-06, 7.15708e-03],
    ),
    (
        1035,
        [-3.71106e-05, 9.77862e-03],
        [-5.05449e-05, 7.89111e-03],
        [1.21894e-05, 7.19258e-03],
    ),
    (
        2040,
        [-7.13965e-05, 9.86762e-03],
        [-8.68589e-05, 8.03465e-03],
        [-4.29925e-05, 7.30722e-03],
    ),
    (
        4026,
        [-9.28256e-05, 9.73384e-03],
        [-9.47365e-05, 8.23818e-03],
        [-3.73310e-05, 7.46861e-03],
    ),
    (
        8356,
        [-8.50127e-05, 9.54032e-03],
        [-6.45599e-05, 8.72629e-03],
        [-3.30443e-05, 7.82927e-03],
    ),
    (
        16533,
        [-5.52008e-05, 9.95879e-03],
        [-4.37295e-05, 9.50908e-03],
        [-2.75394e-05, 8.35895e-03],
    ),
    (
        32724,
        [3.44901e-05, 1.09132e-02],
        [4.36617e-05, 1.05437e-02],
        [5.31918e-05, 9.06081e-03],
    ),
    (
        64780,
        [3.84894e-05, 1.15614e-02],
        [4.45026e-05, 1.11984e-02],
        [3.29700e-05, 9.58307e-03],
    ),
    (
        128250,
        [-9.95643e-06, 1.18845e-02],
        [-3.66061e-06, 1.15390e-02],
        [2.58710e-05, 9.92430e-03],
    ),
    (
        163681,
        [1.42999e-05, 1.19658e-02],
        [2.45340e-05, 1.16340e-02],
        [3.65236e-05, 1.00078e-02],
    ),
    (
        253918,
        [3.65222e-05, 1.20564e-02],
        [2.74323e-05, 1.17249e-02],
        [1.54131e-05, 1.01055e-02],
    ),
];

const REF_P14: &[Reference] = &[
    (
        1,
        [-6.85760e-06, 1.91745e-05],
        [-1.41497e-05, 1.82328e-05],
        [0.00000e+00, 0.00000e+00],
    ),
    (
        2,
        [1.03392e-06, 2.73871e-03],
        [-8.89481e-06, 2.23612e-03],
        [7.71195e-06, 1.58120e-03],
    ),
    (
        10,
        [-2.34597e-05, 4.63350e-03],
        [-3.09224e-05, 3.92245e-03],
        [-1.46785e-05, 3.59025e-03],
    ),
    (
        50,
        [-2.89052e-05, 4.77150e-03],
        [-3.58275e-05, 3.93841e-03],
        [-1.43626e-05, 3.57599e-03],
    ),
    (
        100,
        [6.45861e-06, 4.72364e-03],
        [-1.11796e-05, 3.87468e-03],
        [-1.48655e-06, 3.54205e-03],
    ),
    (
        260,
        [-1.24399e-05, 4.77688e-03],
        [-1.64278e-05, 3.90314e-03],
        [-6.91947e-06, 3.56356e-03],
    ),
    (
        503,
        [-2.43342e-05, 4.78499e-03],
        [-2.73276e-05, 3.91856e-03],
        [-2.05492e-05, 3.57698e-03],
    ),
    (
        1035,
        [-8.49451e-06, 4.79578e-03],
        [-1.94280e-05, 3.91689e-03],
        [-7.31277e-06, 3.57047e-03],
    ),
    (
        2040,
        [1.35302e-05, 4.82892e-03],
        [2.41590e-06, 3.92115e-03],
        [1.09686e-05, 3.57783e-03],
    ),
    (
        4026,
        [-3.26469e-06, 4.89900e-03],
        [-2.80028e-06, 3.97228e-03],
        [6.36534e-06, 3.61881e-03],
    ),
    (
        8356,
        [-5.71088e-06, 4.94579e-03],
        [1.75918e-06, 4.03185e-03],
        [1.22428e-05, 3.67361e-03],
    ),
    (
        16533,
        [-1.10640e-05, 4.89622e-03],
        [-1.74543e-05, 4.14919e-03],
        [-9.49656e-06, 3.76086e-03],
    ),
    (
        32724,
        [2.37880e-05, 4.74856e-03],
        [1.23124e-05, 4.34570e-03],
        [2.28270e-05, 3.90606e-03],
    ),
    (
        64780,
        [1.90643e-05, 4.95079e-03],
        [1.52295e-05, 4.72222e-03],
        [2.46481e-05, 4.16297e-03],
    ),
    (
        128250,
        [1.96092e-05, 5.42251e-03],
        [1.25849e-05, 5.23276e-03],
        [1.47239e-05, 4.50144e-03],
    ),
    (
        163681,
        [9.86071e-06, 5.57695e-03],
        [1.32570e-05, 5.38969e-03],
        [2.11736e-05, 4.61351e-03],
    ),
    (
        253918,
        [1.78983e-05, 5.77498e-03],
        [7.85794e-06, 5.59120e-03],
        [1.81472e-05, 4.77808e-03],
    ),
];

/// Running sums of the relative error `e = (ê − n)/n`.
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
    fn rmse(&self) -> f64 {
        (self.sum2 / self.t()).sqrt()
    }
    fn sd(&self) -> f64 {
        (self.sum2 / self.t() - self.bias() * self.bias())
            .max(0.0)
            .sqrt()
    }
    fn kurtosis(&self) -> f64 {
        if self.sum2 == 0.0 {
            return 3.0;
        }
        let mse = self.sum2 / self.t();
        (self.sum4 / self.t()) / (mse * mse)
    }
    /// Relative standard deviation of the measured RMSE from `trials` trials with
    /// this error distribution.
    fn rmse_rel_sigma(&self, trials: f64) -> f64 {
        0.5 * ((self.kurtosis().max(3.0) - 1.0) / trials).sqrt()
    }
}

/// Digest stream of trial `t` at precision `p`.
fn stream(p: u8, t: u64) -> DistinctKeys {
    DistinctKeys::new(loxo_core::mix64(
        0x554c_4c00_0000_0000 ^ (u64::from(p) << 40) ^ (t + 1),
    ))
}

/// Runs `trials` trials (on two threads) of up to the last reference `n`, scoring
/// the three estimators at every reference `n`.
fn sweep<const P: u8>(trials: u64, refs: &[Reference]) -> Vec<[Acc; 3]>
where
    Precision<P>: SupportedPrecision,
{
    let run = |first: u64| {
        let mut points = vec![[Acc::default(); 3]; refs.len()];
        let mut ull = Ull::<P>::new(Seed::new(1, 2));
        for t in (first..trials).step_by(2) {
            ull.clear();
            let mut keys = stream(P, t);
            let mut n = 0;
            for (c, r) in refs.iter().enumerate() {
                for key in keys.by_ref().take((r.0 - n) as usize) {
                    ull.insert_hash(KeyHash::from_u64(key));
                }
                n = r.0;
                let rel = |e: f64| (e - n as f64) / n as f64;
                let pt = &mut points[c];
                pt[FGRA].add(rel(ull.estimate()));
                pt[ML].add(rel(ull.estimate_ml()));
                pt[MARTINGALE].add(rel(ull.estimate_martingale().expect("inserts only")));
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
            for (x, y) in a.iter_mut().zip(&b) {
                x.merge(y);
            }
            a
        })
        .collect()
}

/// Relative standard error of `Ull::estimate_martingale` at `n` distinct keys, at
/// precision `p`.
///
/// The `i`-th distinct key changes the state with probability `p_i` and then adds
/// `1/p_i`, so the estimate is a martingale with variance `Σ_{i<n} E[1/p_i − 1]`
/// (Ting 2014). A register is changed by update value `v` exactly when `v` is not
/// recorded and no value `≥ v + 3` was seen (a register keeps its maximum and the
/// two values below it), so over the `m` registers
/// `E[p_i] = Σ_v q_v·(1 − (q_v + Q_{v+3})/m)^i`, with `q_v = 2^−v` (`v < w`),
/// `q_w = 2^−(w−1)`, `Q_k = Σ_{v≥k} q_v = 2^−(k−1)` (`k ≤ w`, else 0): "no key
/// among `i` landed in this register with a value in a set of mass `s`" has
/// probability `(1 − s/m)^i` exactly. `p_i` averages `m` registers, so
/// `E[1/p_i] = (1/E[p_i])·(1 + O(1/m))`; the `O(1/m)` is left out (the reference's
/// 100 000-run RMSE is within −0.35 … +0.53 % of this theory at every checked `n`,
/// within 2.4σ of its own sampling error, 0.22 %: `martingale_theory_matches_the_reference`). Limit for
/// `n ≫ m`: `E[p_i] → 4m/(5·ln 2·i)`, variance `(5·ln 2/8)·n²/m`, RSE
/// `√(5·ln 2/8)/√m = 0.658/√m`.
fn martingale_rse(checkpoints: &[u64], p: u8) -> Vec<f64> {
    let m = f64::from(1u32 << p);
    let w = 65 - i32::from(p);
    let q = |v: i32| match v.cmp(&w) {
        std::cmp::Ordering::Less => 0.5f64.powi(v),
        std::cmp::Ordering::Equal => 0.5f64.powi(w - 1),
        std::cmp::Ordering::Greater => 0.0,
    };
    let tail = |k: i32| if k <= w { 0.5f64.powi(k - 1) } else { 0.0 };
    // ln(1 − (q_v + Q_{v+3})/m) per update value v.
    let logs: Vec<(f64, f64)> = (1..=w)
        .map(|v| (q(v), (-(q(v) + tail(v + 3)) / m).ln_1p()))
        .collect();
    let mut out = Vec::new();
    let (mut var, mut i) = (0.0, 0u64);
    for &n in checkpoints {
        while i < n {
            let e: f64 = logs.iter().map(|&(qv, l)| qv * (i as f64 * l).exp()).sum();
            var += 1.0 / e - 1.0;
            i += 1;
        }
        out.push(var.sqrt() / n as f64);
    }
    out
}

fn print_table(p: u8, trials: u64, refs: &[Reference], points: &[[Acc; 3]], mart: &[f64]) {
    let root_m = f64::from(1u32 << p).sqrt();
    println!(
        "\nP = {p}, m = {}, {trials} trials; asymptotic RSE: FGRA {:.3} %, ML {:.3} %, martingale {:.3} %",
        1u32 << p,
        100.0 * ASYMPTOTIC[FGRA] / root_m,
        100.0 * ASYMPTOTIC[ML] / root_m,
        100.0 * ASYMPTOTIC[MARTINGALE] / root_m
    );
    println!("| n | n/m | FGRA RMSE (hash4j) | FGRA bias | ML RMSE (hash4j) | ML bias | martingale RMSE (theory) | martingale bias |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((r, pt), th) in refs.iter().zip(points).zip(mart) {
        println!(
            "| {} | {:.3} | {:.3} % ({:.3} %) | {:+.3} % | {:.3} % ({:.3} %) | {:+.3} % | {:.3} % ({:.3} %) | {:+.3} % |",
            r.0,
            r.0 as f64 / f64::from(1u32 << p),
            100.0 * pt[FGRA].rmse(),
            100.0 * r.1[1],
            100.0 * pt[FGRA].bias(),
            100.0 * pt[ML].rmse(),
            100.0 * r.2[1],
            100.0 * pt[ML].bias(),
            100.0 * pt[MARTINGALE].rmse(),
            100.0 * th,
            100.0 * pt[MARTINGALE].bias(),
        );
    }
}

/// Every band of the module docs at every checkpoint; all violations are listed.
fn check_bounds(p: u8, refs: &[Reference], points: &[[Acc; 3]], mart: &[f64]) {
    let m = f64::from(1u32 << p);
    let mut failures = Vec::new();
    let mut check = |ok: bool, msg: String| {
        if !ok {
            failures.push(msg);
        }
    };
    for ((r, pt), &mart_th) in refs.iter().zip(points).zip(mart) {
        let n = r.0;
        let nf = n as f64;
        let many_collisions = nf * nf / (2.0 * m) >= 20.0;
        for (idx, reference) in [(FGRA, r.1), (ML, r.2), (MARTINGALE, r.3)] {
            let a = &pt[idx];
            let name = NAMES[idx];
            let sampled = n == 1 || a.t() * (nf * nf / (2.0 * m)).min(1.0) >= 20.0;
            let s = a.rmse_rel_sigma(a.t());
            // 1. The asymptotic RSE bounds the RMSE at every n.
            let bound = ASYMPTOTIC[idx] / m.sqrt();
            check(
                !sampled || a.rmse() <= bound * (1.0 + 4.0 * s),
                format!(
                    "P = {p}, n = {n}: {name} RMSE {:.5} > asymptotic {bound:.5} + 4σ ({:.1} %)",
                    a.rmse(),
                    400.0 * s
                ),
            );
            // 2./3. Two-sided: the martingale's exact theory, the reference's RMSE.
            let (center, s_center) = if idx == MARTINGALE {
                (mart_th, 0.0)
            } else {
                (reference[1], a.rmse_rel_sigma(REF_TRIALS))
            };
            if many_collisions {
                let band = 4.0 * (s * s + s_center * s_center).sqrt();
                let measured = if idx == MARTINGALE { a.sd() } else { a.rmse() };
                check(
                    (measured / center - 1.0).abs() <= band,
                    format!(
                        "P = {p}, n = {n}: {name} {} {measured:.5} vs {center:.5} ± {:.1} %",
                        if idx == MARTINGALE { "SD" } else { "RMSE" },
                        100.0 * band
                    ),
                );
            }
            // Bias: the martingale is unbiased; FGRA and ML as the reference's.
            let center = if idx == MARTINGALE { 0.0 } else { reference[0] };
            let sd_ref = (reference[1] * reference[1] - reference[0] * reference[0])
                .max(0.0)
                .sqrt();
            let band = 4.0 * (a.sd() * a.sd() / a.t() + sd_ref * sd_ref / REF_TRIALS).sqrt() + 1e-9;
            check(
                !sampled || (a.bias() - center).abs() <= band,
                format!(
                    "P = {p}, n = {n}: {name} bias {:+.6} beyond {center:+.6} ± {band:.6}",
                    a.bias()
                ),
            );
        }
        if n == 1 {
            check(
                pt[MARTINGALE].sum2 == 0.0,
                format!("P = {p}: martingale not exact at n = 1"),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn accuracy<const P: u8>(trials: u64, refs: &[Reference])
where
    Precision<P>: SupportedPrecision,
{
    let points = sweep::<P>(trials, refs);
    let ns: Vec<u64> = refs.iter().map(|r| r.0).collect();
    let mart = martingale_rse(&ns, P);
    print_table(P, trials, refs, &points, &mart);
    check_bounds(P, refs, &points, &mart);
}

#[test]
fn accuracy_p8_to_1000m() {
    accuracy::<8>(2000, REF_P8);
}

#[test]
fn accuracy_p12_to_40m() {
    accuracy::<12>(1000, &REF_P12[..REF_P12.len() - 1]);
}

#[test]
fn accuracy_p14_to_10m() {
    accuracy::<14>(1000, &REF_P14[..REF_P14.len() - 1]);
}

/// The martingale theory against the reference's 100 000-run RMSE at every `n`
/// (a check of the derivation itself, independent of loxo's sketch), and its limit.
#[test]
fn martingale_theory_matches_the_reference() {
    for (p, refs) in [(8u8, REF_P8), (12, REF_P12), (14, REF_P14)] {
        let ns: Vec<u64> = refs.iter().map(|r| r.0).collect();
        let th = martingale_rse(&ns, p);
        let worst = refs
            .iter()
            .zip(&th)
            .filter(|(r, _)| (r.0 as f64).powi(2) / f64::from(2u32 << p) >= 20.0)
            .map(|(r, t)| r.3[1] / t - 1.0)
            .fold(0.0f64, |a, d| if d.abs() > a.abs() { d } else { a });
        println!(
            "P = {p}: reference / theory − 1 at most {:+.2} %",
            100.0 * worst
        );
        for (r, t) in refs.iter().zip(&th) {
            let m = f64::from(1u32 << p);
            if (r.0 as f64).powi(2) / (2.0 * m) < 20.0 {
                continue;
            }
            // 4σ of the reference's sampling error (normal errors: 1/√(2·10⁵) =
            // 0.22 %) plus 0.5 % for the left-out O(1/m) Jensen term.
            assert!(
                (r.3[1] / t - 1.0).abs() < 4.0 / (2.0 * REF_TRIALS).sqrt() + 0.005,
                "P = {p}, n = {}: theory {t} vs reference {}",
                r.0,
                r.3[1]
            );
        }
    }
    let big = martingale_rse(&[2_000_000], 8)[0] * 16.0;
    assert!((big / ASYMPTOTIC[MARTINGALE] - 1.0).abs() < 0.01, "{big}");
}

/// Merge is the union, fold is the coarser sketch, `to_hll` is the `Hll` of the same
/// keys: exact equalities, over many seeds and sizes at each precision.
fn exact_operations<const P: u8>()
where
    Precision<P>: SupportedPrecision + loxo_hll::FoldsInto<6>,
{
    let m = 1u64 << P;
    for t in 0..40u64 {
        let seed = Seed::new(loxo_core::mix64(t + 1), t);
        let n = [1, 7, m / 8, m, 3 * m, 10 * m][(t % 6) as usize];
        let (mut a, mut b, mut all) = (
            Ull::<P>::new(seed),
            Ull::<P>::new(seed),
            Ull::<P>::new(seed),
        );
        let mut hll = Hll::<P>::new(seed);
        let mut coarse = Ull::<6>::new(seed);
        for (i, key) in stream(P, 10_000 + t).take(n as usize).enumerate() {
            let h = KeyHash::from_u64(key);
            // Overlapping halves: every third key in both.
            if i % 3 != 1 {
                a.insert_hash(h);
            }
            if i % 3 != 2 {
                b.insert_hash(h);
            }
            all.insert_hash(h);
            hll.insert_hash(h);
            coarse.insert_hash(h);
        }
        let mut u = a.clone();
        u.merge(&b).unwrap();
        assert_eq!(u, all, "P = {P}, trial {t}: merge is not the union");
        assert_eq!(u.estimate().to_bits(), all.estimate().to_bits());
        assert_eq!(u.estimate_ml().to_bits(), all.estimate_ml().to_bits());
        assert_eq!(u.estimate_martingale(), None);
        assert_eq!(all.to_hll(), hll, "P = {P}, trial {t}: to_hll");
        assert_eq!(all.to_hll().estimate().to_bits(), hll.estimate().to_bits());
        assert_eq!(all.fold::<6>(), coarse, "P = {P}, trial {t}: fold");
        assert_eq!(
            all.fold::<6>().estimate().to_bits(),
            coarse.estimate().to_bits()
        );
    }
}

#[test]
fn merge_fold_and_to_hll_are_exact() {
    exact_operations::<8>();
    exact_operations::<12>();
    exact_operations::<14>();
}
