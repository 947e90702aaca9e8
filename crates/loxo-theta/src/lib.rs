//! Theta sketches for firmware: [`ThetaSketch<K>`], `#![no_std]`, no allocation, the
//! retained hash values inline in the value.
//!
//! "How many distinct sources did *both* sites see? Which flows are *new* since the
//! last epoch?" HyperLogLog answers unions only: an intersection by
//! inclusion–exclusion (`|A| + |B| − |A ∪ B|`) subtracts large estimates and the
//! difference drowns in their errors. A Theta sketch keeps a uniform sample of the
//! set's keyed hash values — the same sample for every sketch of the same seed — so
//! union, intersection and difference are set operations on the samples, with an
//! unbiased estimate and confidence bounds.
//!
//! * [`ThetaSketch<K>`]: the QuickSelect sketch of Apache DataSketches in `K` 64-bit
//!   slots (`8·K + 32` bytes), nominal entries `K/2`, relative standard error
//!   `1/√(K/2 − 1)`; in-place [`merge`](ThetaSketch::merge),
//!   [`intersect`](ThetaSketch::intersect) and [`subtract`](ThetaSketch::subtract)
//!   (A-not-B); [`lower_bound`](ThetaSketch::lower_bound) /
//!   [`upper_bound`](ThetaSketch::upper_bound) at 1–3 standard deviations.
//! * Hash values and θ are on DataSketches' 63-bit scale ([`THETA_MAX`]).
//! * Wire: kind `theta` of the loxo format ([`encode_into`](ThetaSketch::encode_into),
//!   [`decode`](ThetaSketch::decode)), θ and the retained values in ascending order;
//!   a frame of any `K` decodes into any other (a smaller `K` down-samples it).
//!
//! ```
//! use loxo_core::Seed;
//! use loxo_theta::ThetaSketch;
//!
//! let mut s = ThetaSketch::<1024>::new(Seed::new(1, 2));
//! for key in 0..100_000u32 {
//!     s.insert(&key.to_le_bytes());
//! }
//! let e = s.estimate();
//! assert!((e - 100_000.0).abs() < 4.0 * s.relative_standard_error() * 100_000.0);
//! assert!(s.lower_bound(2) <= 100_000.0 && 100_000.0 <= s.upper_bound(2));
//! ```
#![no_std]
#![forbid(unsafe_code)]

mod bounds;
mod select;
mod sketch;
mod table;
#[cfg(test)]
mod tests;
mod wire;

pub use sketch::{theta_value, ThetaSketch, THETA_MAX};
