//! The estimators: a key's spread by maximum likelihood over its registers given the
//! pool's noise, and the number of distinct pairs from the cells' priorities.
//!
//! # A key's spread
//!
//! A key with spread `n` puts `a = n/S` distinct pairs, on average, into each of its
//! `S` registers (one per stripe); the other keys' pairs land there too. Under the
//! usual Poisson model a register that received `λ` pairs holds a value below `v`
//! with probability `exp(−λ·2^−(v−1))` (`1 ≤ v ≤ 15`; 15 is the cap). The key's
//! pairs and the noise are independent, so for the key's register
//!
//! ```text
//! P(value < v) = exp(−a·2^−(v−1)) · F(v)
//! ```
//!
//! where `F(v)` is the probability that the noise alone leaves the register below
//! `v`. The key's registers are a random sample of the pool's positions, so `F` is
//! the pool's own distribution: the histogram of every register except the key's.
//! That holds whatever the noise looks like — heavy keys make it lumpy (a few
//! registers carry a big key's pairs), which biases the subtraction estimator of
//! virtual HyperLogLog (Xiao et al. 2015: it subtracts a harmonic-mean estimate of
//! the whole pool, biased low by lumpy loads; +6 to +10 % on the keys near a 1 %
//! threshold in our prototype); the likelihood uses the measured `F` and is unbiased
//! within ±1 % there.
//!
//! The estimate `n̂ = S·â` maximises the log-likelihood of the key's register
//! histogram (concave in `a`: Newton's method inside a bisection bracket); its
//! standard error is `√(S / i(â))`, `i` the expected Fisher information of one
//! register. Both are computed in `f32` at report time only.
//!
//! # Distinct pairs
//!
//! Every pair falls into one cell and each cell keeps the smallest priority offered,
//! so a cell that received `k` pairs holds the minimum of `k` uniforms: Poissonized,
//! an exponential variable of rate `N/C`, censored at 1 for an empty cell. The
//! maximum-likelihood rate is `k_occupied / Σ u` (`u` the cells' minima, 1 for an
//! empty cell), so `N̂ = C·k/Σu` with a relative standard error of `1/√k` — exact
//! in expectation for a few pairs (each in its own cell) and for many.

/// A point estimate and its standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Its standard error (`σ`).
    pub sigma: f64,
}

impl Estimate {
    /// `value − z·σ`, at least 0.
    #[must_use]
    pub fn lower(&self, z: f64) -> f64 {
        (self.value - z * self.sigma).max(0.0)
    }

    /// `value + z·σ`.
    #[must_use]
    pub fn upper(&self, z: f64) -> f64 {
        self.value + z * self.sigma
    }

    /// The relative standard error `σ / value` (infinite for a zero estimate).
    #[must_use]
    pub fn relative_error(&self) -> f64 {
        if self.value > 0.0 {
            self.sigma / self.value
        } else {
            f64::INFINITY
        }
    }
}

use crate::pool::{Histogram, LEVELS};

/// `b[v] = 2^−(v−1)` for `v` in 1 ..= 15: how fast register value `v` is passed.
/// `b[0] = b[16] = 0`: `P(value < 0) = 0` and `P(value < 16) = 1` do not move.
const fn rates() -> [f32; LEVELS + 1] {
    let mut b = [0.0; LEVELS + 1];
    let mut v = 1;
    let mut x = 1.0;
    while v < LEVELS {
        b[v] = x;
        x *= 0.5;
        v += 1;
    }
    b
}
const B: [f32; LEVELS + 1] = rates();

/// The smallest per-register load the estimator tells from zero.
const A_MIN: f32 = 1e-9;
/// Above this per-register load every register is at the cap: no information.
const A_MAX: f32 = (1u64 << 40) as f32;

/// The per-register model at load `a`: `G[v] = P(value < v)` for `v` in 0 ..= 16.
///
/// Single precision: a Cortex-M4F computes it in hardware (a double would be
/// emulated, about 20 times slower), and its rounding (below 10⁻⁵ relative, see
/// [`levels`](Self::levels)) is far below any estimate's standard error.
struct Model {
    /// `F(v)`, `v` in 0 ..= 16.
    f: [f32; LEVELS + 1],
    /// `F(v + 1) − F(v)`, the noise's mass at `v`, `v` in 0 ..= 15 (not a difference
    /// of two sums near 1).
    mass: [f32; LEVELS],
}

impl Model {
    /// `F(v)` from the histogram of the pool without the key's registers.
    fn new(pool: &Histogram, key: &Histogram) -> Self {
        let mut noise = [0f32; LEVELS];
        for ((n, &p), &k) in noise.iter_mut().zip(pool).zip(key) {
            *n = p.saturating_sub(k) as f32;
        }
        let total: f32 = noise.iter().sum();
        let mut f = [1.0; LEVELS + 1];
        let mut mass = [0.0; LEVELS];
        f[0] = 0.0;
        if total > 0.0 {
            let mut acc = 0.0;
            for v in 1..LEVELS {
                acc += noise[v - 1];
                f[v] = acc / total;
            }
            for (m, n) in mass.iter_mut().zip(noise) {
                *m = n / total;
            }
        } else {
            mass[0] = 1.0;
        }
        Self { f, mass }
    }

    /// `e[v] = exp(−a·b_v)` and `m[v] = 1 − e[v]` for `v` in 1 ..= 15 (`e[16] = 1`,
    /// `m[16] = 0`): two anchors (`v` = 8 and 15) from `expf` / `expm1f`, the other
    /// levels by `e_v = e_{v+1}²` and `m_v = m_{v+1}·(2 − m_{v+1})`. The second
    /// recurrence keeps `m`'s relative error; the first doubles `e`'s at most seven
    /// times (below 10⁻⁵ relative).
    fn levels(a: f32) -> ([f32; LEVELS + 1], [f32; LEVELS + 1]) {
        let mut e = [1.0f32; LEVELS + 1];
        let mut m = [0.0f32; LEVELS + 1];
        for (top, bottom) in [(LEVELS - 1, 9), (8, 1)] {
            let (mut x, mut y) = (libm::expf(-a * B[top]), -libm::expm1f(-a * B[top]));
            for v in (bottom..=top).rev() {
                e[v] = x;
                m[v] = y;
                x *= x;
                y *= 2.0 - y;
            }
        }
        (e, m)
    }

    /// `(L′(a), L″(a))` of the key's histogram `c` (the derivatives of its
    /// log-likelihood in `a`), and the expected Fisher information of one register.
    ///
    /// `L` is concave: each `P(value = v) = F(v+1)·e^(−a·b_{v+1}) − F(v)·e^(−a·b_v)`
    /// is log-concave in `a` (a positive difference of two exponentials with the
    /// faster one subtracted), so `L′` decreases and its sign at any load says on
    /// which side of it the maximum lies.
    ///
    /// `P(value = v)` is formed without cancellation, as
    /// `(F(v+1) − F(v))·e_{v+1} + F(v)·(e_{v+1} − e_v)` with `e_{v+1} − e_v =
    /// e_{v+1}·m_{v+1}` (`m_16` for the last level): at small loads, where the two
    /// terms of the difference agree to many digits, single precision still resolves
    /// it.
    fn derivatives(&self, c: &Histogram, a: f32) -> (f32, f32, f32) {
        let (e, m) = Self::levels(a);
        let f = &self.f;
        let (mut d1, mut d2, mut info) = (0.0, 0.0, 0.0);
        for v in 0..LEVELS {
            let gap = if v + 1 == LEVELS {
                m[v]
            } else {
                e[v + 1] * m[v + 1]
            };
            let p = self.mass[v] * e[v + 1] + f[v] * gap;
            let (g0, g1) = (f[v] * e[v], f[v + 1] * e[v + 1]);
            let p1 = B[v] * g0 - B[v + 1] * g1;
            let p2 = B[v + 1] * B[v + 1] * g1 - B[v] * B[v] * g0;
            if p > 0.0 {
                info += p1 * p1 / p;
            }
            let n = c[v] as f32;
            if n == 0.0 {
                continue;
            }
            if p > 0.0 {
                let r = p1 / p;
                d1 += n * r;
                d2 += n * (p2 / p - r * r);
            } else if g1 == 0.0 && f[v + 1] > 0.0 {
                // Underflow at a load far above this register's value: the bin's
                // score tends to −b_{v+1} (P ≈ G[v+1]), its curvature to 0.
                d1 -= n * B[v + 1];
            }
            // Otherwise the bin is impossible at every load (the noise never leaves
            // a register that low): it carries no information about `a`.
        }
        (d1, d2, info)
    }

    /// The standard error of the spread at load `a`: `√(s / i(a))`.
    fn sigma(&self, c: &Histogram, a: f32, s: f32) -> f32 {
        let (_, _, info) = self.derivatives(c, a);
        if info > 0.0 {
            libm::sqrtf(s / info)
        } else {
            f32::INFINITY
        }
    }
}

/// The maximum-likelihood spread of a key whose `s` registers have histogram `key`,
/// in a pool whose histogram (all registers, the key's included) is `pool`.
pub(crate) fn spread(key: &Histogram, pool: &Histogram, s: usize) -> Estimate {
    let model = Model::new(pool, key);
    let a = solve(&model, key);
    let s = s as f32;
    Estimate {
        value: f64::from(s * a),
        sigma: f64::from(model.sigma(key, a, s)),
    }
}

/// The standard error of a key of spread `spread` among the pool's noise (the
/// expected Fisher information of `s` registers at load `spread/s`): what a report
/// states for a key there. Infinite where the registers no longer resolve it.
pub(crate) fn sigma_at(pool: &Histogram, s: usize, spread: f64) -> f64 {
    let s = s as f32;
    let model = Model::new(pool, &[0; LEVELS]);
    f64::from(model.sigma(&[0; LEVELS], (spread as f32 / s).max(A_MIN), s))
}

/// The load a key's estimate must reach to be reported at `threshold` with `z`:
/// `(threshold − z·σ_T)/s`, `σ_T` the standard error of a spread equal to the
/// threshold among the pool's noise (the same for every key of one report, so it is
/// computed once). The shift is left out where the threshold is beyond what the
/// registers resolve (σ infinite: every register would be at the cap).
pub(crate) fn report_load(pool: &Histogram, s: usize, threshold: f64, z: f64) -> f32 {
    let s = s as f32;
    let threshold = threshold as f32;
    let mut shift = 0.0;
    if z > 0.0 {
        let model = Model::new(pool, &[0; LEVELS]);
        let sigma_t = model.sigma(&[0; LEVELS], (threshold / s).max(A_MIN), s);
        if sigma_t.is_finite() {
            shift = z as f32 * sigma_t;
        }
    }
    (threshold - shift) / s
}

/// Whether the maximum-likelihood load of the key reaches `cut` — decided with one
/// evaluation of the likelihood's slope instead of the whole estimate: `L′`
/// decreases, so the estimate reaches a load exactly when `L′` is not negative
/// there.
pub(crate) fn reaches(key: &Histogram, pool: &Histogram, cut: f32) -> bool {
    // Not above the smallest load (or NaN): every estimate reaches it.
    if cut.is_nan() || cut <= A_MIN {
        return true;
    }
    cut < A_MAX && Model::new(pool, key).derivatives(key, cut).0 >= 0.0
}

/// The root of `L′` in `[0, A_MAX]`: 0 when the likelihood falls from the start.
fn solve(model: &Model, key: &Histogram) -> f32 {
    let (d, _, _) = model.derivatives(key, A_MIN);
    if d <= 0.0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (A_MIN, 1.0);
    loop {
        let (d, _, _) = model.derivatives(key, hi);
        if d <= 0.0 {
            break;
        }
        lo = hi;
        hi *= 2.0;
        if hi > A_MAX {
            return A_MAX;
        }
    }
    // Newton inside the bracket [lo, hi] (L′(lo) > 0 ≥ L′(hi)), bisecting when a
    // step would leave it; L is concave, so this converges in a few steps.
    let mut a = 0.5 * (lo + hi);
    for _ in 0..60 {
        let (d1, d2, _) = model.derivatives(key, a);
        if d1 > 0.0 {
            lo = a;
        } else {
            hi = a;
        }
        let newton = if d2 < 0.0 { a - d1 / d2 } else { f32::NAN };
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - a).abs() <= 1e-6 * a || hi - lo <= 1e-6 * hi {
            return next;
        }
        a = next;
    }
    a
}

/// The number of distinct pairs from the cells: `occupied` cells out of `cells`
/// whose priorities (as fractions of 2³², empty cells not included) sum to `sum`.
pub(crate) fn distinct_pairs(occupied: u32, cells: usize, sum: f64) -> Estimate {
    if occupied == 0 {
        return Estimate {
            value: 0.0,
            sigma: 0.0,
        };
    }
    let k = f64::from(occupied);
    let exposure = sum + (cells as f64 - k);
    let value = cells as f64 * k / exposure;
    Estimate {
        value,
        sigma: value / libm::sqrt(k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// A histogram of `m` registers each holding the maximum rank of `load` pairs
    /// drawn from a fixed sequence (splitmix64).
    fn registers(m: usize, loads: impl Fn(usize) -> u64, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..m)
            .map(|r| {
                let mut best = 0u8;
                for _ in 0..loads(r) {
                    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let p = loxo_core::mix64(x);
                    best = best.max(crate::digest::rank(p));
                }
                best
            })
            .collect()
    }

    fn hist(regs: &[u8]) -> Histogram {
        let mut h = [0u32; LEVELS];
        for &r in regs {
            h[usize::from(r)] += 1;
        }
        h
    }

    #[test]
    fn a_key_alone_is_estimated_within_its_error() {
        // 512 registers of a key with spread 5120 (load 10) in an empty pool.
        let key = registers(512, |_| 10, 1);
        let mut pool = hist(&key);
        pool[0] += 100_000;
        let e = spread(&hist(&key), &pool, 512);
        assert!((e.value - 5120.0).abs() < 4.0 * e.sigma, "{e:?}");
        // σ ≈ 1.04/√512 relative at this load, as for a HyperLogLog.
        assert!(
            e.relative_error() > 0.03 && e.relative_error() < 0.07,
            "{e:?}"
        );
    }

    #[test]
    fn lumpy_noise_is_not_mistaken_for_spread() {
        // Noise: most registers load 2, one in ten load 40 (a heavy key's registers).
        let lumpy = |r: usize| if r.is_multiple_of(10) { 40 } else { 2 };
        let noise = registers(40_960, lumpy, 2);
        let mut pool = hist(&noise);
        // The key: spread 2048 over 1024 registers (load 2) on top of the same noise.
        let key = registers(1024, |r| 2 + lumpy(r), 3);
        let kh = hist(&key);
        for (p, k) in pool.iter_mut().zip(&kh) {
            *p += k;
        }
        let e = spread(&kh, &pool, 1024);
        assert!((e.value - 2048.0).abs() < 4.0 * e.sigma, "{e:?}");
        // A register set with no spread of its own estimates ~0.
        let other = hist(&registers(1024, lumpy, 4));
        let e0 = spread(&other, &pool, 1024);
        assert!(e0.value < 4.0 * e0.sigma, "{e0:?}");
    }

    #[test]
    fn an_empty_or_silent_key_is_zero() {
        let mut pool = [0u32; LEVELS];
        pool[0] = 1000;
        let mut key = [0u32; LEVELS];
        key[0] = 16;
        let e = spread(&key, &pool, 16);
        assert_eq!(e.value, 0.0);
        assert!(e.sigma.is_finite());
    }

    #[test]
    fn saturated_registers_give_a_finite_large_estimate() {
        let mut pool = [0u32; LEVELS];
        pool[15] = 1000;
        pool[3] = 1000;
        let mut key = [0u32; LEVELS];
        key[15] = 64;
        let e = spread(&key, &pool, 64);
        assert!(e.value.is_finite() && e.value > 1e6, "{e:?}");
    }

    #[test]
    fn distinct_pairs_of_a_few_is_about_right() {
        assert_eq!(distinct_pairs(0, 10, 0.0).value, 0.0);
        // One pair in 1000 cells, its priority 0.5: N̂ = 1000/(999.5) ≈ 1.
        let e = distinct_pairs(1, 1000, 0.5);
        assert!((e.value - 1.0).abs() < 0.01);
    }
}
