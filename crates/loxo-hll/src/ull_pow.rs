//! `S^(−1/τ)` for the FGRA estimate without `libm`'s `log2` and `exp2`.
//!
//! Write `S = 2^e · x` with `x ∈ [1, 2)` (read from the bits). Then
//! `S^(−c) = 2^(−c·e) · x^(−c)`, `c = 1/τ`:
//!
//! * `2^(−c·e)`: a table over the exponents `S` can take (`e ∈ [−64, 64)`; the
//!   estimate's sums stay within `2^−50 ..= 2^36` at every supported `P`, see
//!   [`pow_minus_inv_tau`]); anything else (0, subnormal, infinite, NaN, far out of
//!   range) takes the `libm` path, so the result is the same function everywhere;
//! * `x^(−c)`: the top [`J_BITS`] mantissa bits pick `r_j ≈ 1/x_j` (`x_j` the middle
//!   of the bit pattern's interval), `t = x·r_j − 1` (`|t| ≤ 2^−7`), and
//!   `x^(−c) = r_j^c · (1 + t)^(−c)`, the second factor a degree-7 binomial series
//!   evaluated in Estrin form (three dependent multiply-add levels).
//!
//! Error budget (relative): series truncation `≤ C(c + 7, 8)·2^−56 ≈ 2.5·10^−17`;
//! `t` is exact up to the rounding of `x·r_j` (`2^−53`, times `c`); each table entry
//! is computed at compile time by the `const fn`s below (Horner-summed Taylor series
//! of `exp` and `atanh`, a few ulps) and `r_j^c` is taken of the `f64` `r_j` itself,
//! so its rounding does not matter; plus four roundings of the final products. In
//! all, a few `10^−16`; the test `matches_libm_over_the_range` measures it against
//! `libm::pow` over 10^6 values of `S` (asserts `≤ 2·10^−15`; against the
//! `exp2(−c·log2 S)` this replaces, whose own rounding of `−c·log2 S` reaches
//! `10^−14`, `≤ 10^−13`).

use crate::ull_estimator::INV_TAU;

/// Mantissa bits that select the table entry.
const J_BITS: u32 = 6;
const J: usize = 1 << J_BITS;
/// Smallest tabulated binary exponent of `S`, and the number of exponents.
const E_MIN: i32 = -64;
const E_LEN: usize = 128;

const LN_2: f64 = core::f64::consts::LN_2;

/// `e^x` for `|x| ≤ 1`: Taylor series to `x^29/29!` in Horner form (a few ulps).
const fn exp_small(x: f64) -> f64 {
    let mut k = 29;
    let mut acc = 1.0;
    while k > 0 {
        acc = 1.0 + x * acc / k as f64;
        k -= 1;
    }
    acc
}

/// `ln x` for `x ∈ [1/2, 2]`: `2·atanh(s)`, `s = (x − 1)/(x + 1)`, `|s| ≤ 1/3`, to
/// `s^61` (the next term is below `10^−30`).
const fn ln_near_one(x: f64) -> f64 {
    let s = (x - 1.0) / (x + 1.0);
    let s2 = s * s;
    let mut k = 61;
    let mut acc = 0.0;
    while k > 0 {
        acc = 1.0 / k as f64 + s2 * acc;
        k -= 2;
    }
    2.0 * s * acc
}

/// `2^k` for an exponent of a normal `f64`.
const fn pow2i(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `2^(−c·e)`, `c = 1/τ`, for `e ∈ [E_MIN, E_MIN + E_LEN)`. `c` is split into a
/// 20-bit head (so `c_hi·e` is exact) and the rest, which keeps the argument of the
/// final `e^x` exact to `2^−52` however large `e` is.
const fn pow2_minus_c_times(e: i32) -> f64 {
    let c_hi = (INV_TAU * 1_048_576.0) as i64 as f64 / 1_048_576.0;
    let c_lo = INV_TAU - c_hi;
    let y_hi = -c_hi * e as f64;
    let mut k = y_hi as i32;
    if (k as f64) > y_hi {
        k -= 1;
    }
    let f = (y_hi - k as f64) - c_lo * e as f64;
    pow2i(k) * exp_small(f * LN_2)
}

/// The three tables of [`pow_minus_inv_tau`], built by one loop ([`table`]).
#[derive(Clone, Copy)]
enum Table {
    /// `r_j = 1/x_j`, `x_j = 1 + (j + ½)/J`, rounded once.
    Recip,
    /// `r_j^c` of the `f64` `r_j`: `e^(c·ln r_j)`.
    RecipPow,
    /// `2^(−c·e)` for `e = E_MIN + i`.
    ExpPow,
}

/// Entry `i` of `t`.
const fn entry(t: Table, i: usize) -> f64 {
    match t {
        Table::Recip => 1.0 / (1.0 + (i as f64 + 0.5) / J as f64),
        Table::RecipPow => exp_small(INV_TAU * ln_near_one(entry(Table::Recip, i))),
        Table::ExpPow => pow2_minus_c_times(E_MIN + i as i32),
    }
}

/// The first `N` entries of `t`, evaluated at compile time.
const fn table<const N: usize>(t: Table) -> [f64; N] {
    let mut out = [0.0; N];
    let mut i = 0;
    while i < N {
        out[i] = entry(t, i);
        i += 1;
    }
    out
}

/// `r_j = 1/x_j`, `x_j = 1 + (j + ½)/J`, rounded once.
static RECIP: [f64; J] = table(Table::Recip);
/// `r_j^c` of the `f64` `r_j` above: `e^(c·ln r_j)`.
static RECIP_POW: [f64; J] = table(Table::RecipPow);
/// `2^(−c·e)` for `e = E_MIN + i`.
static EXP_POW: [f64; E_LEN] = table(Table::ExpPow);

/// The binomial coefficients `C(−c, k)` of `(1 + t)^(−c) = Σ_k C(−c, k)·t^k`.
const fn binomial(k: u32) -> f64 {
    let mut acc = 1.0;
    let mut i = 0;
    while i < k {
        acc *= (-INV_TAU - i as f64) / (i + 1) as f64;
        i += 1;
    }
    acc
}

const A1: f64 = binomial(1);
const A2: f64 = binomial(2);
const A3: f64 = binomial(3);
const A4: f64 = binomial(4);
const A5: f64 = binomial(5);
const A6: f64 = binomial(6);
const A7: f64 = binomial(7);

/// `s^(−1/τ)` for `s > 0` (`∞` at 0, 0 at `∞`, NaN for NaN or negative `s`).
///
/// Table path for `s ∈ [2^−64, 2^64)`: the FGRA sum `S` of any sketch lies far
/// inside it (each register adds at least `η_3·2^(−τ·w) > 2^−51` once every
/// register is past the small range, and at `n = 1` the sum is about
/// `m^(1 + τ) ≤ 2^33`). Outside, `libm` as before.
#[inline]
pub(crate) fn pow_minus_inv_tau(s: f64) -> f64 {
    let bits = s.to_bits();
    // Negative, zero, subnormal, infinite and NaN inputs all land outside the table.
    let i = ((bits >> 52) as i32 - 1023 - E_MIN) as usize;
    let j = (bits >> (52 - J_BITS)) as usize & (J - 1);
    match (EXP_POW.get(i), RECIP.get(j), RECIP_POW.get(j)) {
        (Some(&scale), Some(&r), Some(&g)) => {
            let x = f64::from_bits((bits & ((1 << 52) - 1)) | 1.0f64.to_bits());
            let t = x * r - 1.0;
            let t2 = t * t;
            let t4 = t2 * t2;
            let p = (1.0 + A1 * t) + t2 * (A2 + A3 * t) + t4 * ((A4 + A5 * t) + t2 * (A6 + A7 * t));
            p * g * scale
        }
        _ => libm::exp2(-INV_TAU * libm::log2(s)),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// SplitMix64.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        loxo_core::mix64(*state)
    }

    #[test]
    fn const_helpers_are_accurate() {
        for x in [-1.0, -0.5, -1e-9, 0.0, 0.3, 0.69, 1.0] {
            assert!((exp_small(x) / libm::exp(x) - 1.0).abs() < 1e-15, "{x}");
        }
        for x in [0.5, 0.7, 0.999, 1.0, 1.001, 1.5, 2.0] {
            assert!((ln_near_one(x) - libm::log(x)).abs() < 3e-16, "{x}");
        }
        for e in E_MIN..E_MIN + E_LEN as i32 {
            let want = libm::pow(libm::ldexp(1.0, e), -INV_TAU);
            assert!((pow2_minus_c_times(e) / want - 1.0).abs() < 3e-16, "{e}");
        }
    }

    #[test]
    fn matches_libm_over_the_range() {
        let mut state = 0x5eed;
        let (mut worst_pow, mut worst_exp2) = (0.0f64, 0.0f64);
        let mut check = |s: f64| {
            let got = pow_minus_inv_tau(s);
            let pow = libm::pow(s, -INV_TAU);
            let exp2 = libm::exp2(-INV_TAU * libm::log2(s));
            if !(-64..64).contains(&libm::ilogb(s)) {
                assert_eq!(got.to_bits(), exp2.to_bits(), "{s:e}");
                return;
            }
            worst_pow = worst_pow.max((got / pow - 1.0).abs());
            worst_exp2 = worst_exp2.max((got / exp2 - 1.0).abs());
        };
        for _ in 0..1_000_000 {
            // Uniform mantissa, exponent over the table and a little beyond it.
            let r = next(&mut state);
            let e = (r >> 52) % 140;
            check(f64::from_bits(
                (e + 1023 - 70) << 52 | (r & ((1 << 52) - 1)),
            ));
        }
        // Every table cell's edges.
        for e in -66..66 {
            for j in 0..=J as u64 {
                let base = f64::from_bits(((e + 1023) as u64) << 52);
                let s = base * (1.0 + j as f64 / J as f64);
                check(s);
                check(f64::from_bits(s.to_bits() - 1));
            }
        }
        std::println!(
            "largest relative difference: {worst_pow:.1e} to pow, {worst_exp2:.1e} to exp2∘log2"
        );
        assert!(worst_pow < 2e-15, "{worst_pow:e}");
        // exp2(−c·log2 S) itself rounds −c·log2 S to an ulp of up to 2^6.
        assert!(worst_exp2 < 1e-13, "{worst_exp2:e}");
    }

    #[test]
    fn special_values_take_the_libm_path() {
        assert_eq!(pow_minus_inv_tau(0.0), f64::INFINITY);
        assert_eq!(pow_minus_inv_tau(f64::INFINITY), 0.0);
        assert!(pow_minus_inv_tau(f64::NAN).is_nan());
        assert!(pow_minus_inv_tau(-1.0).is_nan());
        assert_eq!(pow_minus_inv_tau(1.0), 1.0);
        let tiny = f64::from_bits(1);
        assert_eq!(
            pow_minus_inv_tau(tiny),
            libm::exp2(-INV_TAU * libm::log2(tiny))
        );
        let big = 1e300;
        assert_eq!(
            pow_minus_inv_tau(big),
            libm::exp2(-INV_TAU * libm::log2(big))
        );
    }
}
