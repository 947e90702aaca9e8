//! Confidence bounds on a Theta sketch's estimate from its retained count `n` and θ.
//!
//! The count of retained values is Binomial(N, θ) for a set of N keys; the bounds
//! invert it at 1, 2 or 3 standard deviations. This is the continuous "classic"
//! approximation DataSketches uses for large counts (`BinomialBoundsN`); small
//! counts use the same formula (a port of DataSketches' small-count tables is pending).

/// `std_devs` clamped to 1..=3.
fn sd(std_devs: u8) -> f64 {
    f64::from(std_devs.clamp(1, 3))
}

/// Lower bound on N at `std_devs` standard deviations.
pub(crate) fn lower(n: u64, theta: f64, std_devs: u8, empty: bool) -> f64 {
    if empty || n == 0 || theta >= 1.0 {
        return n as f64;
    }
    let n_hat = (n as f64 - 0.5) / theta;
    let b = sd(std_devs) * libm::sqrt((1.0 - theta) / theta);
    let d = 0.5 * b * libm::sqrt(b * b + 4.0 * n_hat);
    let center = n_hat + 0.5 * b * b;
    (center - d - 0.5).max(n as f64)
}

/// Upper bound on N at `std_devs` standard deviations.
pub(crate) fn upper(n: u64, theta: f64, std_devs: u8, empty: bool) -> f64 {
    if empty || theta >= 1.0 {
        return n as f64;
    }
    let n_hat = (n as f64 + 0.5) / theta;
    let b = sd(std_devs) * libm::sqrt((1.0 - theta) / theta);
    let d = 0.5 * b * libm::sqrt(b * b + 4.0 * n_hat);
    let center = n_hat + 0.5 * b * b;
    center + d + 0.5
}
