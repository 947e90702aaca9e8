//! The `Debug` output every sketch of this crate shares: parameters, mode and
//! estimates, never the register bytes.

use core::fmt;

use loxo_core::Seed;

/// Writes `name { precision, seed, <state…>, estimate, estimate_martingale, .. }`.
pub(crate) fn sketch(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    precision: u8,
    seed: Seed,
    state: &[(&str, &dyn fmt::Debug)],
    estimates: (f64, Option<f64>),
) -> fmt::Result {
    let mut d = f.debug_struct(name);
    d.field("precision", &precision).field("seed", &seed);
    for (field, value) in state {
        d.field(field, value);
    }
    d.field("estimate", &estimates.0)
        .field("estimate_martingale", &estimates.1)
        .finish_non_exhaustive()
}
