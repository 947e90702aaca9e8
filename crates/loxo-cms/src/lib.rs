//! Count-Min Sketch, Count-Sketch, Space-Saving and HeavyKeeper: frequencies and heavy hitters, no_std.
//!
//! Work in progress: this crate is being filled in by its own issue.
#![no_std]
#![forbid(unsafe_code)]
