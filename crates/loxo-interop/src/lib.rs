//! Interoperability of loxo's HyperLogLog, top-k and Theta sketches with the engines
//! fleets already run: **Redis** (`PFADD` / `PFCOUNT` / `PFMERGE`, the `HYLL` string) and **Apache
//! DataSketches** HLL, frequent items and theta (Java, C++, Python; Druid, Spark, Pinot).
//! `#![no_std]`, no allocation.
//!
//! * [`redis::RedisHll`]: `Hll<14>` fed with Redis's MurmurHash64A and register
//!   derivation; exports the dense `HYLL` string (`SET key` → `PFCOUNT key` equals
//!   [`RedisHll::count`](redis::RedisHll::count)), imports dense and sparse
//!   strings (`GET key`).
//! * [`datasketches::DataSketchesHll<P>`]: `Hll<P>` fed with DataSketches'
//!   MurmurHash3_x64_128 (seed 9001) and coupon derivation; exports compact
//!   HLL_4 / HLL_6 / HLL_8 images, imports every image of `lgK = P`.
//! * [`frequent`]: a [`loxo_cms::SpaceSaving`] top-k summary as the image of a
//!   DataSketches `frequent_strings_sketch` (keys as text, e.g. flow keys'
//!   `Display`), with DataSketches' bounds proven to hold (weight `count − m`, offset
//!   `m`, the Misra–Gries view of Space-Saving), so a fleet's summaries merge in
//!   DataSketches; [`FrequentItemsView`] reads such images in place.
//! * [`theta`]: a [`loxo_theta::ThetaSketch`] as a DataSketches compact theta image
//!   (written as serial version 3, read 1–4), so DataSketches' union, intersection
//!   and A-not-B run on loxo's sketches; the loxo seed maps to DataSketches' seed
//!   hash through its public fingerprint.
//!
//! The HLL types wrap a [`loxo_hll::Hll`], so each costs what that `Hll` costs
//! (`0.75 · 2^P + 296` bytes) and estimates as well (`1.04 / √(2^P)`).
//!
//! **Interop hashing is unkeyed.** loxo's own sketches hash with a per-device
//! secret [`loxo_core::Seed`] so nobody can craft keys that collide; Redis and
//! DataSketches hash with public constants, and matching them register for register
//! means giving that defence up. The wrapped `Hll`s carry a fixed tag seed, so they
//! cannot be merged into a keyed loxo sketch by mistake.
//!
//! ```
//! use loxo_interop::{redis::RedisHll, datasketches::DataSketchesHll};
//!
//! let mut r = RedisHll::new();
//! let mut d = DataSketchesHll::<14>::new();
//! for i in 0..10_000u32 {
//!     let key = format!("flow-{i}");
//!     r.insert(key.as_bytes());
//!     d.insert(key.as_bytes());
//! }
//! // Different hashes, same accuracy: both within 4σ = 4 · 0.81 %.
//! assert!((r.estimate() - 10_000.0).abs() < 324.0);
//! assert!((d.estimate() - 10_000.0).abs() < 324.0);
//! ```
#![no_std]
#![forbid(unsafe_code)]

pub mod datasketches;
pub mod frequent;
pub mod redis;
pub mod theta;

pub use datasketches::{DataSketchesHll, TargetType};
pub use frequent::{encode_space_saving, FrequentItemsView};
pub use redis::RedisHll;
