//! `const fn` sizing of Count-Min sketches: width from ε, depth from δ.
//!
//! The Count-Min guarantee `estimate ≤ f + ε·N` with probability `1 − δ` needs
//! `W = ⌈e/ε⌉` and `D = ⌈ln(1/δ)⌉` (Cormode & Muthukrishnan 2005).
//!
//! | ε | W | δ | D |
//! |---|---|---|---|
//! | 10 % | 28 | 10 % | 3 |
//! | 1 % | 272 | 1 % | 5 |
//! | 0.1 % | 2719 | 0.1 % | 7 |
//! | 0.01 % | 27183 | 10⁻⁶ | 14 |
//!
//! Usable directly in the type:
//!
//! ```
//! use loxo_cms::{sizing::{depth_for_delta, width_for_epsilon}, Cms};
//! use loxo_core::Seed;
//!
//! const W: usize = width_for_epsilon(0.01);
//! const D: usize = depth_for_delta(0.01);
//! assert_eq!((W, D), (272, 5));
//! let s = Cms::<W, D>::new(Seed::new(1, 2));
//! assert!(s.epsilon() <= 0.01 && s.delta() <= 0.01);
//! ```

use core::f64::consts::E;

/// `W = ⌈e/ε⌉`, the Count-Min width that bounds the overestimate by `ε·N`.
///
/// `ε` must be in `(0, 1]`; values outside are clamped (a non-positive or NaN `ε`
/// gives `usize::MAX`, which a `Cms` refuses to compile with).
#[must_use]
pub const fn width_for_epsilon(epsilon: f64) -> usize {
    if epsilon.is_nan() || epsilon <= 0.0 {
        return usize::MAX;
    }
    let x = E / epsilon;
    if x >= usize::MAX as f64 {
        return usize::MAX;
    }
    let t = x as usize;
    if (t as f64) < x {
        t + 1
    } else {
        t
    }
}

/// `D = ⌈ln(1/δ)⌉`, the Count-Min depth that makes the bound fail with
/// probability at most `δ`.
///
/// `δ ≥ 1` gives 1 (one row is the minimum); a non-positive or NaN `δ` gives
/// `usize::MAX`.
#[must_use]
pub const fn depth_for_delta(delta: f64) -> usize {
    if delta.is_nan() || delta <= 0.0 {
        return usize::MAX;
    }
    // Smallest d ≥ 1 with e^−d ≤ δ; no `ln` in const fn, so multiply down.
    let mut d = 1;
    let mut p = 1.0 / E;
    while p > delta && d < 1100 {
        p /= E;
        d += 1;
    }
    d
}

/// `ε = e/W` of a given width.
#[must_use]
pub const fn epsilon_of_width(width: usize) -> f64 {
    E / width as f64
}

/// `δ = e^−D` of a given depth.
#[must_use]
pub const fn delta_of_depth(depth: usize) -> f64 {
    let mut p = 1.0;
    let mut i = 0;
    while i < depth {
        p /= E;
        i += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_table() {
        assert_eq!(width_for_epsilon(0.1), 28);
        assert_eq!(width_for_epsilon(0.01), 272);
        assert_eq!(width_for_epsilon(0.001), 2719);
        assert_eq!(width_for_epsilon(0.0001), 27183);
        assert_eq!(depth_for_delta(0.1), 3);
        assert_eq!(depth_for_delta(0.01), 5);
        assert_eq!(depth_for_delta(0.001), 7);
        assert_eq!(depth_for_delta(1e-6), 14);
        assert_eq!(depth_for_delta(1.0), 1);
        assert_eq!(width_for_epsilon(0.0), usize::MAX);
        assert_eq!(depth_for_delta(f64::NAN), usize::MAX);
    }

    #[test]
    fn round_trips() {
        for w in [28usize, 272, 2719] {
            assert!(epsilon_of_width(w) <= E / (w as f64 - 0.5));
        }
        assert!((delta_of_depth(5) - 0.006_737_946_999).abs() < 1e-12);
    }
}
