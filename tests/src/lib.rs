//! Host-side helpers shared by loxo's integration tests: seeded key streams and
//! statistics. The tests themselves live in `tests/tests/`.

pub mod bloom_theory;
pub mod collectors;
pub mod datasketches;
pub mod demo;
pub mod family;
pub mod golden;
pub mod hll_theory;
pub mod redis;
pub mod spread;
pub mod streams;
pub mod topk;
pub mod traffic;
pub mod wire;
pub mod zipf;

/// The environment variable that overrides every property test's RNG seed (a decimal
/// `u64`); `tests/proptest-fresh-seed.sh` sets it to a fresh random value.
pub const PROPTEST_SEED_VAR: &str = "LOXO_PROPTEST_SEED";

/// The RNG seed of a property test: `default` — fixed, so that a plain `cargo test`
/// explores the same cases every run and a failure reproduces — unless
/// [`PROPTEST_SEED_VAR`] is set, in which case its value, so that the "for all" of a
/// property is explored beyond one fixed sample (a failure then reproduces with the
/// same value). Use as `RngSeed::Fixed(loxo_tests::proptest_seed(7))`.
///
/// # Panics
/// If the variable is set but is not a decimal `u64` (a typo must not silently run
/// the fixed cases again).
#[must_use]
pub fn proptest_seed(default: u64) -> u64 {
    match std::env::var(PROPTEST_SEED_VAR) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{PROPTEST_SEED_VAR}={s:?}: not a decimal u64 ({e})")),
        Err(_) => default,
    }
}

/// A property test's configuration: `cases` cases from the RNG seed
/// [`proptest_seed`]`(default_seed)` (fixed unless [`PROPTEST_SEED_VAR`] is set), the
/// rest proptest's defaults. Use as
/// `#![proptest_config(loxo_tests::proptest_config(256, 7))]`.
#[must_use]
pub fn proptest_config(cases: u32, default_seed: u64) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(proptest_seed(default_seed)),
        ..proptest::test_runner::Config::default()
    }
}

/// Chi-square statistic of observed bucket counts against a uniform expectation.
///
/// With `b` buckets the statistic follows χ² with `b − 1` degrees of freedom when
/// the counts are uniform: mean `b − 1`, standard deviation `√(2(b − 1))`.
#[must_use]
pub fn chi_square_uniform(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&c| {
            let d = c as f64 - expected;
            d * d / expected
        })
        .sum()
}

/// Upper critical value of χ² with `dof` degrees of freedom at significance
/// `z` standard normal deviations, by the Wilson–Hilferty approximation
/// (accurate to a fraction of a percent for `dof` ≥ 30).
#[must_use]
pub fn chi_square_critical(dof: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * dof);
    dof * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Distinct 64-bit keys from a seeded SplitMix64 sequence (a bijection of a
/// counter, so no key repeats within 2^64 draws).
#[derive(Clone, Debug)]
pub struct DistinctKeys {
    state: u64,
}

impl DistinctKeys {
    /// A key stream determined by `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }
}

impl Iterator for DistinctKeys {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        Some(loxo_core::mix64(self.state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_hilferty_matches_tables() {
        // χ²(0.999, 999) = 1142.85 (regularised incomplete gamma); z(0.999) = 3.0902.
        let c = chi_square_critical(999.0, 3.0902);
        assert!((c - 1142.85).abs() < 0.5, "{c}");
    }

    #[test]
    fn distinct_keys_do_not_repeat_early() {
        let mut v: Vec<u64> = DistinctKeys::new(1).take(100_000).collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 100_000);
    }
}
