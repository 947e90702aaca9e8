//! Filter health from the fill: estimated false-positive rate and distinct keys.

/// False-positive rate of a filter whose cells are set with probability `fill`:
/// all `k` probes must hit set cells, `fill^k`.
pub(crate) fn fpr_from_fill(fill: f64, k: u32) -> f64 {
    libm::pow(fill, f64::from(k))
}

/// Swamidass & Baldi (2007): `n ≈ −(m/k)·ln(1 − X/m)` for `X` set cells of `m`;
/// infinite when every cell is set.
pub(crate) fn swamidass_baldi(set: usize, m: usize, k: u32) -> f64 {
    if set >= m {
        return f64::INFINITY;
    }
    -(m as f64 / f64::from(k)) * libm::log(1.0 - set as f64 / m as f64)
}
