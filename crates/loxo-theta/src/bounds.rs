//! Confidence bounds on a Theta sketch's estimate from its retained count `n` and θ:
//! Apache DataSketches' binomial bounds (`BinomialBoundsN`), case for case, so a loxo
//! sketch and a DataSketches sketch with the same `n` and θ print the same bounds.
//!
//! For a set of N keys the retained count is Binomial(N, θ). A bound at `s` standard
//! deviations is the N at which observing `n` (or more, or fewer) has the one-sided
//! Gaussian tail probability δ(s) (≈ 15.9 %, 2.3 %, 0.13 %), found by the cheapest
//! method accurate enough for `n`:
//!
//! * θ = 1 (or the sketch is empty): the count is exact, both bounds are `n`;
//! * `n = 0` (upper) and `n = 1` (lower): closed forms, `ln δ / ln(1 − θ)` rounded up
//!   and `ln(1 − δ) / ln(1 − θ)` rounded down;
//! * `n > 120`: the Gaussian approximation with a continuity correction ("classic");
//! * `2 ..= 120` with θ within 10⁻⁵ of 1: `n` and `n + 1`;
//! * small θ (θ < n/360): the Gaussian approximation at an *equivalent* number of
//!   standard deviations for this `n` (DataSketches' tables, [`equiv`]);
//! * otherwise (the estimate is at most 360): the exact bound, by summing the
//!   negative-binomial posterior term by term.
//!
//! Finally the lower bound is clamped into `n ..= n/θ` and the upper bound to at
//! least `n/θ`.

mod equiv;
#[cfg(test)]
mod tests;

use equiv::{LB_EQUIV, UB_EQUIV};

/// δ(s): the one-sided confidence each bound misses at `s` = 1, 2, 3 standard
/// deviations. DataSketches' constants (they differ from 1 − Φ(s) in the 6th digit;
/// kept so that the bounds agree to the last bit).
const DELTA: [f64; 3] = [
    0.158_655_319_158_602_6,
    0.022_750_261_890_413_57,
    0.001_349_812_686_173_179_6,
];

/// Counts above this use the plain Gaussian approximation.
const GAUSSIAN_ABOVE: u64 = 120;

/// θ above this counts as 1 for 2 ..= 120 values.
const THETA_NEAR_ONE: f64 = 1.0 - 1e-5;

/// Small θ: θ < n / this uses the equivalence tables.
const SMALL_THETA_DIVISOR: f64 = 360.0;

/// An upper limit on the terms the exact sums add. They stop after about
/// `(n + 4√n)/θ` ≤ 3 000 terms in the range they are used (estimate ≤ 360); the cap
/// only guarantees termination should rounding keep a sum from reaching its target.
const MAX_TERMS: u64 = 1 << 20;

/// `std_devs` clamped to 1..=3, as an index into the tables (0..=2).
fn index(std_devs: u8) -> usize {
    usize::from(std_devs.clamp(1, 3)) - 1
}

/// Lower bound on N at `std_devs` standard deviations (`n` when the count is exact).
pub(crate) fn lower(n: u64, theta: f64, std_devs: u8, empty: bool) -> f64 {
    if empty || theta >= 1.0 {
        return n as f64;
    }
    let estimate = n as f64 / theta;
    let lb = approx_lower(n, theta, index(std_devs));
    lb.max(n as f64).min(estimate)
}

/// Upper bound on N at `std_devs` standard deviations (`n` when the count is exact).
pub(crate) fn upper(n: u64, theta: f64, std_devs: u8, empty: bool) -> f64 {
    if empty || theta >= 1.0 {
        return n as f64;
    }
    let estimate = n as f64 / theta;
    approx_upper(n, theta, index(std_devs)).max(estimate)
}

fn approx_lower(n: u64, theta: f64, s: usize) -> f64 {
    let delta = DELTA[s];
    if n == 0 {
        return 0.0;
    }
    if n == 1 {
        // P(no key among the N − 1 others is kept) = (1 − θ)^(N−1) ≥ 1 − δ.
        return libm::floor(libm::log(1.0 - delta) / libm::log(1.0 - theta));
    }
    if n > GAUSSIAN_ABOVE {
        return classic_lower(n, theta, (s + 1) as f64) - 0.5;
    }
    if theta > THETA_NEAR_ONE {
        return n as f64;
    }
    if theta < n as f64 / SMALL_THETA_DIVISOR {
        let sds = LB_EQUIV.get(n as usize).map_or(1.0, |row| row[s]);
        return classic_lower(n, theta, sds) - 0.5;
    }
    exact_lower(n, theta, delta) as f64
}

fn approx_upper(n: u64, theta: f64, s: usize) -> f64 {
    let delta = DELTA[s];
    if n == 0 {
        // The largest N with (1 − θ)^N ≥ δ: seeing nothing is still plausible.
        return libm::ceil(libm::log(delta) / libm::log(1.0 - theta));
    }
    if n > GAUSSIAN_ABOVE {
        return classic_upper(n, theta, (s + 1) as f64) + 0.5;
    }
    if theta > THETA_NEAR_ONE {
        return (n + 1) as f64;
    }
    if theta < n as f64 / SMALL_THETA_DIVISOR {
        let sds = UB_EQUIV.get(n as usize).map_or(1.0, |row| row[s]);
        return classic_upper(n, theta, sds) + 0.5;
    }
    exact_upper(n + 1, theta, delta) as f64
}

/// The Gaussian bounds with a continuity correction: the roots N of
/// `N − n̂ = ∓ b·√N` with `n̂ = (n ∓ ½)/θ` and `b = sds·√((1 − θ)/θ)` (the count's
/// standard deviation `√(Nθ(1 − θ))` scaled to N).
fn classic_lower(n: u64, theta: f64, sds: f64) -> f64 {
    let n_hat = (n as f64 - 0.5) / theta;
    let (center, half_width) = classic_interval(n_hat, theta, sds);
    center - half_width
}

fn classic_upper(n: u64, theta: f64, sds: f64) -> f64 {
    let n_hat = (n as f64 + 0.5) / theta;
    let (center, half_width) = classic_interval(n_hat, theta, sds);
    center + half_width
}

fn classic_interval(n_hat: f64, theta: f64, sds: f64) -> (f64, f64) {
    let b = sds * libm::sqrt((1.0 - theta) / theta);
    let half_width = 0.5 * b * libm::sqrt(b * b + 4.0 * n_hat);
    (n_hat + 0.5 * (b * b), half_width)
}

/// Sums `P(the n-th kept key is key number m) = C(m−1, n−1)·θ^n·(1 − θ)^(m−n)` over
/// `m = n, n+1, …` while `go_on(total)` holds and returns the `m` it stopped at: the
/// total up to `m` is `P(Binomial(m, θ) ≥ n)`. The caller keeps the estimate ≤ 360,
/// so θ^n stays far above the smallest double and the loop short.
fn sum_until(n: u64, p: f64, mut go_on: impl FnMut(f64) -> bool) -> u64 {
    let q = 1.0 - p;
    let mut term = libm::pow(p, n as f64);
    let mut total = term;
    let mut m = n;
    while go_on(total) && m - n < MAX_TERMS {
        // C(m, n−1)/C(m−1, n−1) = m/(m + 1 − n); multiplied in DataSketches' order
        // so that the sums are bit-equal.
        term = term * q * m as f64 / (m + 1 - n) as f64;
        total += term;
        m += 1;
    }
    m
}

/// The largest N with `P(Binomial(N, θ) ≥ n) ≤ δ`: more keys would make `n` kept
/// values likelier than δ.
fn exact_lower(n: u64, p: f64, delta: f64) -> u64 {
    sum_until(n, p, |total| total <= delta) - 1
}

/// The smallest N with `P(Binomial(N, θ) ≥ n) ≥ 1 − δ`. The caller passes the kept
/// count plus one: then N is the first with `P(Binomial(N, θ) ≤ kept) ≤ δ`.
fn exact_upper(n: u64, p: f64, delta: f64) -> u64 {
    let one_minus_delta = 1.0 - delta;
    sum_until(n, p, |total| total < one_minus_delta)
}
