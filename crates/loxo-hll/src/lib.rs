//! HyperLogLog distinct counting with Ertl's estimator, martingale estimate and cross-precision merge, no_std.
//!
//! Work in progress: this crate is being filled in by its own issue.
#![no_std]
#![forbid(unsafe_code)]
