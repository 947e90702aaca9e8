//! UltraLogLog estimators (Otmar Ertl, "UltraLogLog: A Practical and More
//! Space-Efficient Alternative to HyperLogLog for Approximate Distinct Counting",
//! PVLDB 17(7), 2024; arXiv:2308.16862).
//!
//! * **FGRA** ("further generalized remaining area", the paper's section 4): with
//!   `g(r) = η_{flags}·2^(−τ·U)` for a register whose largest update is `U` and
//!   whose two flag bits select one of four weights `η`, the estimate is
//!   `c_m · (Σ_j g(r_j))^(−1/τ)`. The constants `τ`, `η_0..η_3` minimise the
//!   asymptotic variance, `V/m` with `V = 0.6119`. Registers still in the small
//!   range (`U ≤ 2`) or at the largest update value `w` get analytical corrections
//!   instead of `g` (the paper's σ, ψ and φ series), which removes the bias there
//!   without tables. The mid-range sum is kept up to date on every register change
//!   in fixed point (exact integers, so the estimate is a function of the registers
//!   alone, not of the insertion order), which makes the estimate O(1) in `m`.
//! * **Maximum likelihood** (section 3): a register's state says, for up to three
//!   update values, whether each was seen; under Poissonisation these are
//!   independent, and the log-likelihood in `x = n/(2m)` is
//!   `−a·x + Σ_k b_k·ln(1 − e^(−x/2^k))`, `b_k` the number of registers that saw
//!   update value `k + 1` and `a` twice the probability mass not seen. It is concave;
//!   its root is found by Newton's method from a lower bound (Ertl 2017, section 4).
//!   The result is divided by `1 + 0.4815/m`, the first-order bias.

/// τ of the optimal FGRA estimator.
const TAU: f64 = 0.819_491_137_591_089_7;
/// `1/τ`.
pub(crate) const INV_TAU: f64 = 1.220_269_450_307_320_8;
/// `V`: the FGRA estimator's asymptotic relative variance times `m`.
pub(crate) const FGRA_V: f64 = 0.611_893_149_697_843_7;
/// The optimal `η_0..η_3`, indexed by the register's two flag bits
/// (`2·[U − 1 seen] + [U − 2 seen]`).
const ETA: [f64; 4] = [
    4.663_135_422_063_788,
    2.137_850_213_795_852_4,
    2.781_144_650_979_996,
    0.982_408_254_515_371_5,
];
/// `2^τ` and `2^−τ`.
const POW_2_TAU: f64 = 1.764_783_414_484_050_2;
const POW_2_MINUS_TAU: f64 = 0.566_641_771_331_672_8;
const POW_4_MINUS_TAU: f64 = POW_2_MINUS_TAU * POW_2_MINUS_TAU;
/// `2^(1/τ)`.
const POW_2_INV_TAU: f64 = 2.329_902_285_172_407;
/// `η_X = η_0 − η_1 − η_2 + η_3` and the normalised coefficients of
/// `ψ(z)/η_X = (z + η₂₃)(z² + η₁₃) + η₃₀₁₂`.
const ETA_X: f64 = ETA[0] - ETA[1] - ETA[2] + ETA[3];
const ETA_23: f64 = (ETA[2] - ETA[3]) / ETA_X;
const ETA_13: f64 = (ETA[1] - ETA[3]) / ETA_X;
const ETA_3012: f64 = (ETA[3] * ETA[0] - ETA[1] * ETA[2]) / (ETA_X * ETA_X);
/// `φ(1)` and the first factor of φ's product.
const PHI_1: f64 = ETA[0] / (POW_2_TAU * (2.0 * POW_2_TAU - 1.0));
const PHI_P0: f64 = ETA_X * (POW_4_MINUS_TAU / (2.0 - POW_2_MINUS_TAU));
/// `(1 + τ)·V/2`: the FGRA estimate's first-order relative bias times `m`.
const FGRA_BIAS: f64 = (1.0 + TAU) * FGRA_V / 2.0;
/// `(3/2)·ln 2·ζ(3, 5/4)/ζ(2, 5/4)²`: the ML estimate's first-order bias times `m`.
pub(crate) const ML_BIAS: f64 = 0.481_473_765_277_200_66;
pub(crate) const TWO_POW_MINUS_64: f64 = 1.0 / 18_446_744_073_709_551_616.0;

/// Fixed-point scale of [`FGRA_TERMS`]: `2^59`. The mid-range sum of `m ≤ 2^18`
/// terms stays below `2^64` (the largest term, `t = P + 1`, is `η_0·2^(−τ(P+1))`, and
/// `2^P·η_0·2^(−τ(P+1)) < 25.2` for every `P ≤ 18`), and the smallest term, at
/// `t = 62`, is still 286: rounding moves the estimate by less than `10^−3` of its
/// standard error until `n` approaches `2^60`.
const FIXED_ONE: f64 = 576_460_752_303_423_488.0;

/// `round(2^59 · η_{byte & 3} · 2^(−τ·(byte >> 2)))` for every register byte; only the
/// mid-range bytes (`P + 1 ≤ byte >> 2 ≤ 62`) are ever summed.
pub(crate) static FGRA_TERMS: [u64; 256] = {
    let mut out = [0u64; 256];
    let mut pow = FIXED_ONE;
    let mut t = 0;
    while t < 64 {
        let mut flags = 0;
        while flags < 4 {
            out[4 * t + flags] = (ETA[flags] * pow + 0.5) as u64;
            flags += 1;
        }
        pow *= POW_2_MINUS_TAU;
        t += 1;
    }
    out
};

/// `2^(−τ·k)`.
pub(crate) const fn pow_2_minus_tau(k: u8) -> f64 {
    let mut x = 1.0;
    let mut i = 0;
    while i < k {
        x *= POW_2_MINUS_TAU;
        i += 1;
    }
    x
}

/// From the fixed-point sum of bytes (`2^59·η·2^(−τ·t)`, `t = U + P − 2`) to the
/// paper's `Σ η·2^(−τ·U)`: `2^(−59)·2^(τ(P − 2))`.
pub(crate) const fn mid_scale(p: u8) -> f64 {
    let mut x = 1.0 / FIXED_ONE;
    let mut i = 2;
    while i < p {
        x *= POW_2_TAU;
        i += 1;
    }
    x
}

/// `m^(1 + 1/τ) / (1 + (1 + τ)·V/(2m))`: the estimate is this times `S^(−1/τ)`.
pub(crate) const fn fgra_factor(p: u8) -> f64 {
    let m = (1u64 << p) as f64;
    let mut x = m;
    let mut i = 0;
    while i < p {
        x *= POW_2_INV_TAU;
        i += 1;
    }
    x / (1.0 + FGRA_BIAS / m)
}

/// `ψ(z)/η_X`.
#[inline]
fn psi(z: f64, z2: f64) -> f64 {
    (z + ETA_23) * (z2 + ETA_13) + ETA_3012
}

/// The paper's σ(z) for empty registers: `Σ_k η_X·2^(τk)·(z^(2^k) − z^(2^(k+1)))·
/// ψ(z^(2^(k+1)))/z`, summed until a term no longer changes the sum (doubly
/// exponential convergence; at most ~60 rounds as z → 1). `σ(0) = η_3`, `σ(1) = ∞`.
fn sigma(z: f64) -> f64 {
    if z <= 0.0 {
        return ETA[3];
    }
    if z >= 1.0 {
        return f64::INFINITY;
    }
    let (mut zk, mut zk1) = (z, z * z);
    let mut weight = ETA_X;
    let mut s = 0.0;
    loop {
        let zk2 = zk1 * zk1;
        let next = s + weight * (zk - zk1) * psi(zk1, zk2);
        if next <= s {
            return s / z;
        }
        s = next;
        zk = zk1;
        zk1 = zk2;
        weight *= POW_2_TAU;
    }
}

/// The paper's φ(z) for registers at the largest update value: a series in
/// `z^(2^−k)` (repeated square roots), summed until it stops growing.
fn phi(z: f64, z2: f64) -> f64 {
    if z <= 0.0 {
        return 0.0;
    }
    if z >= 1.0 {
        return PHI_1;
    }
    let mut prev = z2;
    let mut zk = z;
    let mut root = libm::sqrt(zk);
    let mut factor = PHI_P0 / (1.0 + root);
    let mut ps = psi(zk, prev);
    let mut s = root * 2.0 * ps * factor;
    loop {
        prev = zk;
        zk = root;
        root = libm::sqrt(zk);
        let ps_next = psi(zk, prev);
        factor *= POW_2_MINUS_TAU / (1.0 + root);
        let next = s + root * (2.0 * ps_next - (zk + root) * ps) * factor;
        if next <= s {
            return s;
        }
        s = next;
        ps = ps_next;
    }
}

/// Contribution of the small-range registers (counts of bytes 0, `U = 1`, `U = 2`,
/// `U = 2` with 1) to the paper's sum: `z` is the root of the quadratic the paper
/// derives from their counts (an estimate of `e^(−n/m)`-like occupancy), then each
/// state adds its own expected-weight function of `z`.
pub(crate) fn small_range(c: [u32; 4], m: f64) -> f64 {
    let [c0, c4, c8, c10] = c.map(f64::from);
    let alpha = m + 3.0 * (c0 + c4 + c8 + c10);
    let beta = m - c0 - c4;
    let gamma = 4.0 * c0 + 2.0 * c4 + 3.0 * c8 + c10;
    let root = (libm::sqrt(beta * beta + 4.0 * alpha * gamma) - beta) / (2.0 * alpha);
    let z = (root * root) * (root * root);
    let mut s = 0.0;
    if c0 > 0.0 {
        s += c0 * sigma(z);
    }
    if c4 > 0.0 {
        s += c4 * POW_2_MINUS_TAU * ETA_X * psi(z, z * z);
    }
    if c8 > 0.0 {
        s += c8 * POW_4_MINUS_TAU * (z * (ETA[0] - ETA[1]) + ETA[1]);
    }
    if c10 > 0.0 {
        s += c10 * POW_4_MINUS_TAU * (z * (ETA[2] - ETA[3]) + ETA[3]);
    }
    s
}

/// Contribution of the registers at the largest update value `w` (counts by flag
/// bits), scaled by `2^(−τ·w)` (`scale`).
pub(crate) fn large_range(c: [u32; 4], m: f64, scale: f64) -> f64 {
    let [c0, c1, c2, c3] = c.map(f64::from);
    let alpha = m + 3.0 * (c0 + c1 + c2 + c3);
    let beta = c0 + c1 + 2.0 * (c2 + c3);
    let gamma = m + 2.0 * c0 + c2 - c3;
    let z = libm::sqrt((libm::sqrt(beta * beta + 4.0 * alpha * gamma) - beta) / (2.0 * alpha));
    let rz = libm::sqrt(z);
    let mut s = phi(rz, z) * (c0 + c1 + c2 + c3);
    s += z * (1.0 + rz) * (c0 * ETA[0] + c1 * ETA[1] + c2 * ETA[2] + c3 * ETA[3]);
    s += rz
        * POW_2_MINUS_TAU
        * ((c0 + c1) * (z * (ETA[0] - ETA[2]) + ETA[2])
            + (c2 + c3) * (z * (ETA[1] - ETA[3]) + ETA[3]));
    s * scale / ((1.0 + rz) * (1.0 + z))
}

/// The `x > 0` maximising `−a·x + Σ_k b_k·ln(1 − e^(−x/2^k))`: the root of the
/// derivative `f(x) = Σ_k b_k·2^−k / (e^(x/2^k) − 1) − a`, which is convex and
/// decreasing. Newton's method from a point left of the root then climbs to it
/// monotonically (each tangent lies below the curve). The start
/// `s₁ / (s₂/2 + a)`, `s₁ = Σ b_k`, `s₂ = Σ b_k·2^−k`, is a lower bound of the root
/// (Jensen's inequality on the concave `1 − y/(e^y − 1)`; Ertl 2017, Algorithm 8).
/// `∞` when `a = 0` (every level seen), 0 when every `b_k` is 0.
pub(crate) fn solve_ml(a: f64, b: &[u32; 64]) -> f64 {
    let (mut s1, mut s2) = (0.0, 0.0);
    let mut scale = 1.0;
    for &bk in b {
        s1 += f64::from(bk);
        s2 += f64::from(bk) * scale;
        scale *= 0.5;
    }
    if s1 == 0.0 {
        return 0.0;
    }
    if a <= 0.0 {
        return f64::INFINITY;
    }
    let mut x = s1 / (0.5 * s2 + a);
    for _ in 0..100 {
        let (mut f, mut df) = (-a, 0.0);
        let mut scale = 1.0;
        for &bk in b {
            if bk != 0 {
                let e = libm::expm1(x * scale);
                let bk = f64::from(bk);
                f += bk * scale / e;
                df -= bk * scale * scale * (1.0 + e) / (e * e);
            }
            scale *= 0.5;
        }
        // df < 0 unless every term underflowed (or a NaN crept in): stop there.
        if df.is_nan() || df >= 0.0 {
            break;
        }
        let step = -f / df;
        x += step;
        if step.is_nan() || step.abs() <= 1e-13 * x {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_agree_with_their_definitions() {
        assert!((libm::pow(2.0, -TAU) - POW_2_MINUS_TAU).abs() < 1e-15);
        assert!((libm::pow(2.0, TAU) - POW_2_TAU).abs() < 1e-15);
        assert!((libm::pow(2.0, INV_TAU) - POW_2_INV_TAU).abs() < 1e-14);
        assert!((TAU * INV_TAU - 1.0).abs() < 1e-15);
        // The reference implementation's table entry for U = 3, no flags.
        // Byte 12 is t = 3, no flags: η_0·2^(−3τ), the reference implementation's
        // table entry for U = 3.
        let g = FGRA_TERMS[12] as f64 / FIXED_ONE;
        assert!((g - 0.848_406_109_335_940_6).abs() < 1e-14, "{g}");
        let g = FGRA_TERMS[4 * 9 + 3] as f64 / FIXED_ONE / pow_2_minus_tau(9);
        assert!((g - ETA[3]).abs() < 1e-14, "{g}");
        // ... and its estimation factor for P = 14.
        let f = fgra_factor(14);
        assert!((f / 2.275_794_725_435_168e9 - 1.0).abs() < 1e-13, "{f}");
        let f = fgra_factor(4);
        assert!((f / 455.635_840_461_518_6 - 1.0).abs() < 1e-13, "{f}");
    }

    #[test]
    fn series_limits() {
        assert_eq!(sigma(0.0), ETA[3]);
        assert!(sigma(1.0).is_infinite());
        assert!(sigma(0.5).is_finite() && sigma(0.5) > 0.0);
        assert_eq!(phi(0.0, 0.0), 0.0);
        assert_eq!(phi(1.0, 1.0), PHI_1);
        // φ approaches φ(1) from below.
        assert!(phi(0.999_999, 0.999_998) < PHI_1);
        assert!((phi(0.999_999, 0.999_998) / PHI_1 - 1.0).abs() < 1e-3);
    }

    #[test]
    fn ml_solver_finds_the_root() {
        // One level, b_0 registers seen it out of a mass a: the root of
        // b/(e^x − 1) = a is ln(1 + b/a).
        let mut b = [0u32; 64];
        b[0] = 300;
        let x = solve_ml(100.0, &b);
        assert!((x - 4f64.ln()).abs() < 1e-12, "{x}");
        assert_eq!(solve_ml(1.0, &[0; 64]), 0.0);
        assert!(solve_ml(0.0, &b).is_infinite());
    }
}
