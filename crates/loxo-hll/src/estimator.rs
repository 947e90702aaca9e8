//! Cardinality estimators over the register histogram.
//!
//! Both estimators read only the histogram `C[k]` = number of registers holding
//! value `k` (64 counters, kept exact by every register change), so an estimate
//! costs O(64 − P) = O(1) in the number of registers, never a scan.
//!
//! * [`ertl`]: Otmar Ertl, "New cardinality estimation algorithms for HyperLogLog
//!   sketches" (2017), the *improved raw estimator* (his Algorithm 6, the one Redis
//!   ships since 5.0). It corrects the harmonic mean for registers still at 0 (σ)
//!   and registers at the maximum value (τ) analytically, so it needs neither the
//!   empirical bias tables of HLL++ nor a switch to linear counting, and it has no
//!   error bump anywhere between n = 0 and n ≫ 2^64 / m.
//! * [`classic`]: Flajolet et al. (2007): `E = α_m · m² / Σ 2^−r`, replaced by linear
//!   counting `m · ln(m / V)` when `E ≤ 2.5 · m` and `V` registers are still 0.
//!   With a 64-bit hash there is no large-range correction. Its error shows the
//!   known bump just above the switch point (see the crate docs for numbers).

/// Number of histogram buckets: register values 0 ..= 64 − P + 1 ≤ 61 fit in 64.
pub(crate) const HIST_LEN: usize = 64;

/// `2^−r` for `r` in 0..=1022, exactly, without a `powi` call.
#[inline(always)]
pub(crate) const fn pow2_neg(r: u32) -> f64 {
    f64::from_bits(((1023 - r) as u64) << 52)
}

/// `α_∞ = 1 / (2 ln 2)`, the limit of the HyperLogLog bias constant.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Ertl's σ(x) = x + Σ_{k≥1} x^(2^k) · 2^(k−1), for x in [0, 1].
///
/// The series converges because x^(2^k) falls doubly exponentially; the loop stops
/// when a term no longer changes the sum in f64 (at most ~60 rounds near x = 1).
fn sigma(mut x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_old = z;
        z += x * y;
        y += y;
        if z == z_old {
            return z;
        }
    }
}

/// Ertl's τ(x) = (1 − x − Σ_{k≥1} (1 − x^(2^−k))² · 2^−k) / 3, for x in [0, 1].
fn tau(mut x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = libm::sqrt(x);
        let z_old = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if z == z_old {
            return z / 3.0;
        }
    }
}

/// Ertl's improved raw estimate from the histogram of a precision-`p` sketch
/// (O(64 − p): the estimate of untracked sketches, which keep no running register
/// sum, and the reference [`ertl_from_sum`] is checked against).
///
/// `z = m·τ(1 − C[q+1]/m)`, then `z = (z + C[k]) / 2` for `k = q … 1`, then
/// `z += m·σ(C[0]/m)`, estimate `α_∞ · m² / z`, where `q = 64 − p` (computed
/// in the equivalent unrolled form).
pub(crate) fn ertl(hist: &[u32; HIST_LEN], p: u8) -> f64 {
    let q = 64 - usize::from(p);
    let m = (1u64 << p) as f64;
    let top = hist.get(q + 1).copied().unwrap_or(0);
    // Unrolled, Ertl's halving loop `z = (z + C[k]) / 2` for k = q … 1 is
    // `z = m·τ·2^−q + Σ_k C[k]·2^−k`. The terms are exact and independent, so four
    // partial sums replace a chain of 2·q dependent floating-point operations.
    let mut part = [0.0f64; 4];
    let mut k = 1;
    let mut chunks = hist.get(1..=q).unwrap_or(&[]).chunks_exact(4);
    for c in chunks.by_ref() {
        for (p, &ci) in part.iter_mut().zip(c) {
            *p += f64::from(ci) * pow2_neg(k);
            k += 1;
        }
    }
    for (p, &ci) in part.iter_mut().zip(chunks.remainder()) {
        *p += f64::from(ci) * pow2_neg(k);
        k += 1;
    }
    let mut z = m * tau(1.0 - f64::from(top) / m) * pow2_neg(q as u32);
    z += (part[0] + part[1]) + (part[2] + part[3]);
    z += m * sigma(f64::from(hist[0]) / m);
    ALPHA_INF * m * m / z
}

/// [`ertl`] in O(1): the register sum `Σ_{k=1}^{q} C[k]·2^−k` comes from the
/// exact integer `hip_sum = Σ_j 2^(63 − p − r_j)` over ranks `r_j ≤ 63 − p` (rank 0
/// included), kept by every register change, as
/// `(hip_sum − C[0]·2^(63 − p))·2^(p − 63) + C[q]·2^−q`; only the σ and τ terms
/// (trivial once no register is 0 and none saturated) remain.
pub(crate) fn ertl_from_sum(hist: &[u32; HIST_LEN], hip_sum: u64, p: u8) -> f64 {
    let q = 64 - usize::from(p);
    let m = (1u64 << p) as f64;
    let c0 = hist[0];
    let top = hist.get(q + 1).copied().unwrap_or(0);
    let at_q = hist.get(q).copied().unwrap_or(0);
    let mid = hip_sum.wrapping_sub(u64::from(c0) << (63 - u32::from(p)));
    let mut z = mid as f64 * pow2_neg(63 - u32::from(p)) + f64::from(at_q) * pow2_neg(q as u32);
    if top != 0 {
        z += m * tau(1.0 - f64::from(top) / m) * pow2_neg(q as u32);
    }
    if c0 != 0 {
        z += m * sigma(f64::from(c0) / m);
    }
    ALPHA_INF * m * m / z
}

/// The bias constant α_m of the classic estimator (Flajolet et al., 2007).
fn alpha(m: f64) -> f64 {
    match m as u32 {
        16 => 0.673,
        32 => 0.697,
        64 => 0.709,
        _ => 0.7213 / (1.0 + 1.079 / m),
    }
}

/// The classic estimate: harmonic mean with α_m, linear counting below 2.5·m.
pub(crate) fn classic(hist: &[u32; HIST_LEN], p: u8) -> f64 {
    let m = (1u64 << p) as f64;
    let mut sum = 0.0;
    for (r, &c) in hist.iter().enumerate() {
        sum += f64::from(c) * pow2_neg(r as u32);
    }
    let raw = alpha(m) * m * m / sum;
    let zeros = hist[0];
    if raw <= 2.5 * m && zeros > 0 {
        m * libm::log(m / f64::from(zeros))
    } else {
        raw
    }
}

/// Linear counting `m · ln(m / V)` alone (infinite when no register is 0).
pub(crate) fn linear_counting(hist: &[u32; HIST_LEN], p: u8) -> f64 {
    let m = (1u64 << p) as f64;
    m * libm::log(m / f64::from(hist[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pow2_neg_is_exact() {
        assert_eq!(pow2_neg(0), 1.0);
        assert_eq!(pow2_neg(1), 0.5);
        assert_eq!(pow2_neg(60), 1.0 / (1u64 << 60) as f64);
    }

    #[test]
    fn sigma_and_tau_limits() {
        assert_eq!(sigma(0.0), 0.0);
        assert!(sigma(1.0).is_infinite());
        // σ(1/2) = 1/2 + 1/4 + 2/16 + 4/256 + … ≈ 0.890625 + small terms
        assert!((sigma(0.5) - 0.890_625).abs() < 1e-3);
        assert_eq!(tau(0.0), 0.0);
        assert_eq!(tau(1.0), 0.0);
        assert!(tau(0.5) > 0.0 && tau(0.5) < 1.0 / 3.0);
    }

    #[test]
    fn empty_sketch_estimates_zero() {
        let mut hist = [0u32; HIST_LEN];
        hist[0] = 1 << 10;
        assert_eq!(ertl(&hist, 10), 0.0);
        assert_eq!(classic(&hist, 10), 0.0);
    }

    #[test]
    fn one_key_estimates_about_one() {
        let mut hist = [0u32; HIST_LEN];
        hist[0] = (1 << 10) - 1;
        hist[1] = 1;
        assert!((ertl(&hist, 10) - 1.0).abs() < 0.01, "{}", ertl(&hist, 10));
        assert!((classic(&hist, 10) - 1.0).abs() < 0.01);
    }

    #[test]
    fn nearly_full_sketch_is_huge_and_full_is_infinite() {
        let mut hist = [0u32; HIST_LEN];
        hist[64 - 10 + 1] = (1 << 10) - 1;
        hist[64 - 10] = 1;
        let e = ertl(&hist, 10);
        assert!(e.is_finite() && e > 1e18, "{e}");
        // Every register at its maximum: the maximum-likelihood cardinality is
        // unbounded (Ertl 2017), reached only after ~2^64 distinct keys.
        hist[64 - 10 + 1] = 1 << 10;
        hist[64 - 10] = 0;
        assert!(ertl(&hist, 10).is_infinite());
    }
}
