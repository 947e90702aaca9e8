//! Standard error and bias of `Hll::estimate` at exactly `n` distinct keys, for tests
//! that compare a distinct count with the exact one at any `n`: the band is derived
//! at that `n` and that load, not from the large-`n` figure `1.04/√m`, which is up
//! to 1.47× too wide at `n ≪ m` (linear counting's regime, `1/√(2m)`) and 1.2–1.3×
//! too wide around `n ≈ m`.
//!
//! This is the theory `tests/tests/hll_accuracy.rs` checks against thousands of
//! seeded trials per `n` (it imports this module), shared with the tests of other
//! crates: the delta method over the exact distribution of the registers after `n`
//! keys, and the martingale's exact variance ([`hip_rse`]). Limits: 0 at `n = 1`; linear counting's
//! `√(m(e^t − t − 1))/n` (`t = n/m`, Whang et al. 1990) for `1 ≪ n ≪ m`;
//! `√(3 ln 2 − 1)/√m = 1.0385/√m` for `n ≫ m` (checked below).
//!
//! ```
//! use loxo_tests::hll_theory::{estimate_error, check_estimate};
//! let (rse, _) = estimate_error(1_000, 14);
//! assert!((rse * (2.0f64 * 16_384.0).sqrt() - 1.0).abs() < 0.01); // ≈ 1/√(2m)
//! assert!(check_estimate(1_004.0, 1_000, 14, 4.0).is_ok());
//! ```

/// `ln(1 − u_k)`, `u_k = 2^−k/m` (0 for `k > q = 64 − P`).
fn ln_stay(k: usize, p: u8) -> f64 {
    if k > 64 - usize::from(p) {
        0.0
    } else {
        (-(2f64.powi(-(k as i32) - i32::from(p)))).ln_1p()
    }
}

/// `P(R ≤ k)` after `n` keys.
fn cdf(k: usize, n: f64, p: u8) -> f64 {
    (n * ln_stay(k, p)).exp()
}

/// `P(R > k)`, without cancellation.
fn above(k: usize, n: f64, p: u8) -> f64 {
    -(n * ln_stay(k, p)).exp_m1()
}

/// `P(R = k)` for `k = 0 ..= q + 1`: `P(R ≤ k)·(1 − P(R ≤ k − 1)/P(R ≤ k))`.
pub fn register_pmf(n: f64, p: u8) -> Vec<f64> {
    let q1 = 64 - usize::from(p) + 1;
    let mut pmf = vec![cdf(0, n, p)];
    for k in 1..=q1 {
        let d = n * (ln_stay(k - 1, p) - ln_stay(k, p));
        pmf.push(cdf(k, n, p) * -d.exp_m1());
    }
    pmf
}

/// `Cov(1{R₁ ≤ a}, 1{R₂ ≤ b})` for two distinct registers: `A^n − B^n` with
/// `A = 1 − u_a − u_b`, `B = (1 − u_a)(1 − u_b) = A + u_a·u_b`, formed as
/// `B^n·expm1(n·ln(1 − u_a·u_b/B))` (negative: keys in one register are keys
/// not in the other).
fn pair_cov(a: usize, b: usize, n: f64, p: u8) -> f64 {
    let (la, lb) = (ln_stay(a, p), ln_stay(b, p));
    let (ua, ub) = (-la.exp_m1(), -lb.exp_m1());
    let ln_b = la + lb;
    (n * ln_b).exp() * (n * (-(ua * ub) / ln_b.exp()).ln_1p()).exp_m1()
}

/// `Cov(1{R ≤ a}, 1{R ≤ b})` for one register: `P(R ≤ min)·P(R > max)`.
fn self_cov(a: usize, b: usize, n: f64, p: u8) -> f64 {
    cdf(a.min(b), n, p) * above(a.max(b), n, p)
}

/// Ertl's `σ(x) = x + Σ_{k≥1} x^(2^k)·2^(k−1)` and its first two derivatives.
fn sigma(x: f64) -> [f64; 3] {
    if x == 0.0 {
        return [0.0, 1.0, 0.0];
    }
    let mut d = [x, 1.0, 0.0];
    let (mut xp, mut k) = (x, 1);
    while k < 64 {
        // xp = x^(2^(k−1)); term k is x^(2^k)·2^(k−1), with derivatives
        // x^(2^k − 1)·2^(2k−1) and (2^k − 1)·x^(2^k − 2)·2^(2k−1).
        let xk = xp * xp;
        let d1 = xk / x * 2f64.powi(2 * k - 1);
        let d2 = d1 / x * (2f64.powi(k) - 1.0);
        d[0] += xk * 2f64.powi(k - 1);
        d[1] += d1;
        d[2] += d2;
        if d2 < 1e-17 * d[2] && d1 < 1e-17 * d[1] {
            break;
        }
        xp = xk;
        k += 1;
    }
    d
}

/// `α∞ = 1/(2 ln 2)`.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Relative standard error `θ` and relative bias `b` of `Hll::estimate`
/// (Ertl's improved raw estimator) at `n` keys, by the delta method.
///
/// The estimate is `α∞·m²/z`, `z = m·σ(C₀/m) + Σ_{k=1}^{q} C_k·2^−k` (+ a `τ`
/// term for registers at `q + 1`, which take `n ≈ 2^64` and are left out), `C_k`
/// the number of registers at `k`. Linearised at the mean, `z` is a sum over the
/// registers of `φ(R)`, with `φ(0) = σ'(E[C₀]/m)`, `φ(k) = 2^−k`, `φ(q+1) = 0`;
/// writing `φ(R) = φ(0) + Σ_a Δ_a·1{R > a}`, `Δ_a = φ(a+1) − φ(a)`:
///
/// `Var(z) = m·Σ_{a,b} Δ_a Δ_b·Cov(1{R ≤ a}, 1{R ≤ b})
///         + m(m − 1)·Σ_{a,b} Δ_a Δ_b·Cov(1{R₁ ≤ a}, 1{R₂ ≤ b})`
///
/// and `θ² = Var(z)/E[z]²`. Limits: linear counting's `√((e^t − t − 1)/m)/t`
/// (`t = n/m`, Whang et al.) for `1 ≪ n ≪ m`, `√(3·ln 2 − 1)/√m = 1.0385/√m` —
/// the familiar `1.04/√m` — for `n ≫ m`, and 0 at `n = 1`.
///
/// The bias to second order: `α∞·m²/(n·E[z]) − 1` (the formula at the mean:
/// `+1/(2m)` for one key, as linear counting's `m·ln(m/(m−1))`), plus `θ²` from
/// the convexity of `1/z` (`E[1/z] = (1 + θ²)/E[z]`), minus the share of `z`
/// added by the convexity of `σ`, `½·σ''·Var(C₀)/m²` of `E[z]/m`. The last two
/// cancel for `n ≪ m` (linear counting's own bias, `(e^t − t − 1)/(2n)`, is
/// `θ²·t/2`) and the second alone is left for `n ≫ m`: `1.08/m`, the term that
/// the classic estimator's `α_m = 0.7213/(1 + 1.079/m)` divides out.
pub fn ertl(n: f64, p: u8) -> (f64, f64) {
    let m = 2f64.powi(i32::from(p));
    let q1 = 64 - usize::from(p) + 1;
    let pmf = register_pmf(n, p);
    let [s0, ds0, dds0] = sigma(pmf[0]);
    let phi = |k: usize| match k {
        0 => ds0,
        k if k < q1 => 2f64.powi(-(k as i32)),
        _ => 0.0,
    };
    let mean_z = m * (s0 + (1..q1).map(|k| pmf[k] * phi(k)).sum::<f64>());
    let delta: Vec<f64> = (0..q1).map(|a| phi(a + 1) - phi(a)).collect();
    let (mut one, mut two) = (0.0, 0.0);
    for (a, &da) in delta.iter().enumerate() {
        for (b, &db) in delta.iter().enumerate() {
            one += da * db * self_cov(a, b, n, p);
            two += da * db * pair_cov(a, b, n, p);
        }
    }
    let var_z = m * one + m * (m - 1.0) * two;
    let theta2 = var_z.max(0.0) / (mean_z * mean_z);
    let var_c0 = m * self_cov(0, 0, n, p) + m * (m - 1.0) * pair_cov(0, 0, n, p);
    let curvature = 0.5 * dds0 * var_c0 / m;
    let bias = ALPHA_INF * m * m / (n * mean_z) - 1.0 + theta2 - curvature / mean_z;
    (theta2.sqrt(), bias)
}

/// Relative standard error `σ` and relative bias `b` of `Hll::<P>::estimate()` after
/// `n` distinct keys (`ê/n − 1` has mean `b` and standard deviation `σ`).
#[must_use]
pub fn estimate_error(n: u64, p: u8) -> (f64, f64) {
    ertl(n as f64, p)
}

/// Relative standard error of `Hll::estimate` at `n` keys (see [`ertl`]).
#[must_use]
pub fn ertl_rse(n: f64, p: u8) -> f64 {
    ertl(n, p).0
}

/// `E[2^−R]` after `i` keys: the probability that a new distinct key changes
/// some register is `(1/m)·Σ_j 2^−R_j` (ranks up to `q`), whose mean this is.
fn change_probability(i: f64, p: u8) -> f64 {
    register_pmf(i, p)
        .iter()
        .enumerate()
        .take(64 - usize::from(p) + 1)
        .map(|(k, &w)| w * 2f64.powi(-(k as i32)))
        .sum()
}

/// Relative standard error of `Hll::estimate_martingale` (HIP) at `n` keys.
///
/// The `i`-th distinct key changes a register with probability `p_i` (given the
/// registers before it) and then adds `1/p_i`, so the estimate is a martingale
/// with exact variance `Σ_{i<n} E[(1 − p_i)/p_i]` (Ting 2014). `p_i` averages
/// `m` registers, so `E[1/p_i] = (1/E[p_i])·(1 + O(1/m))`, `E[p_i] = E[2^−R]`
/// after `i` keys. The sum is exact up to `n = 4096` and a trapezoid over a log
/// grid beyond (the summand is smooth in `i`).
///
/// Limit for `n ≫ m`: `E[2^−R] → m/(2·ln 2·n)`, so the variance is
/// `Σ 2·ln 2·i/m = ln 2·n²/m`: `√(ln 2/m) = 0.833/√m`, 0.80× Ertl's `1.0385/√m`.
pub fn hip_rse(n: u64, p: u8) -> f64 {
    let f = |i: f64| 1.0 / change_probability(i, p) - 1.0;
    let var = if n <= 4096 {
        (0..n).map(|i| f(i as f64)).sum::<f64>()
    } else {
        let head: f64 = (0..4096).map(|i| f(i as f64)).sum();
        let steps = 4000;
        let (a, b) = (4096f64.ln(), (n as f64).ln());
        let mut tail = 0.0;
        let mut prev = (4096.0, f(4096.0));
        for s in 1..=steps {
            let x = (a + (b - a) * f64::from(s) / f64::from(steps)).exp();
            let fx = f(x);
            tail += 0.5 * (prev.1 + fx) * (x - prev.0);
            prev = (x, fx);
        }
        head + tail
    };
    var.sqrt() / n as f64
}

/// Checks an HLL estimate of a set of `exact` distinct keys against the theory at
/// that `n`: `|ê − n(1 + b)| ≤ z·σ·n`. Returns the deviation in units of `σ·n`.
///
/// # Errors
/// A message with the figures when the estimate is outside the band.
pub fn check_estimate(estimate: f64, exact: u64, p: u8, z: f64) -> Result<f64, String> {
    if exact == 0 {
        return if estimate == 0.0 {
            Ok(0.0)
        } else {
            Err(format!("estimate {estimate} of an empty set"))
        };
    }
    let (rse, bias) = estimate_error(exact, p);
    let n = exact as f64;
    let sd = (rse * n).max(f64::MIN_POSITIVE);
    let dev = (estimate - n * (1.0 + bias)) / sd;
    if dev.abs() <= z {
        Ok(dev)
    } else {
        Err(format!(
            "estimate {estimate:.1} of {exact} distinct keys at P = {p}: {dev:+.2}σ \
             (σ = {:.3} % at n/m = {:.3}, bias {:+.4} %), band ±{z}σ",
            100.0 * rse,
            n / 2f64.powi(i32::from(p)),
            100.0 * bias
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The theory's known limits (as `hll_accuracy.rs` checks its copy).
    #[test]
    fn known_limits() {
        let m = 1024.0;
        assert!(estimate_error(1, 10).0 < 1e-6);
        for n in [128u32, 256] {
            let n = f64::from(n);
            let t: f64 = n / m;
            let lc = (m * (t.exp() - t - 1.0)).sqrt() / n;
            let e = ertl(n, 10).0;
            assert!((e / lc - 1.0).abs() < 0.01, "n = {n}: {e} vs {lc}");
        }
        let big = ertl(1e9, 10).0 * m.sqrt();
        assert!(
            (big - (3.0 * 2f64.ln() - 1.0).sqrt()).abs() < 0.005,
            "{big}"
        );
        for n in [1.0, 3.7 * m, 1e12] {
            assert!((register_pmf(n, 10).iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
}
