//! HyperLogLog and UltraLogLog distinct counting for firmware: [`Hll<P>`] and
//! [`Ull<P>`], `#![no_std]`, no allocation, storage inline in the value.
//!
//! "How many distinct flows (sources, destinations…) did this link see?" in
//! `0.75 · 2^P` bytes of registers, within a relative standard error of
//! at most `1.04 / √(2^P)` at every cardinality, mergeable across devices and time windows.
//!
//! | `P` | registers `m` | `size_of::<Hll<P>>()` | std. error `1.04/√m` |
//! |---:|---:|---:|---:|
//! | 4 | 16 | 304 B | 26 % |
//! | 10 | 1 024 | 1 064 B | 3.25 % |
//! | 12 | 4 096 | 3 368 B | 1.63 % |
//! | 14 | 16 384 | 12 584 B | 0.81 % |
//! | 16 | 65 536 | 49 448 B | 0.41 % |
//! | 18 | 262 144 | 196 904 B | 0.20 % |
//!
//! * One keyed SipHash-1-3 per key ([`loxo_core::Seed`]); or feed a digest computed
//!   once for several sketches with [`Hll::insert_hash`].
//! * [`Hll::estimate`]: Ertl's improved raw estimator (2017, as in Redis) from a
//!   register histogram kept exact on every insert, so it costs O(1) in `m` and has
//!   no bias tables, no linear-counting switch and no bump.
//!   [`Hll::estimate_classic`] keeps the textbook estimator for comparison.
//! * [`Hll::estimate_martingale`]: the martingale (HIP) estimate, about 20 % more
//!   accurate while the sketch has only seen inserts; `None` after any merge.
//! * [`Hll::merge`] (same precision, register max, seed-checked) and
//!   [`Hll::merge_from`] / [`Hll::fold`] (a finer sketch into a coarser one; the
//!   other direction does not compile).
//! * [`Ull<P>`]: UltraLogLog (Ertl 2024), one byte per register (`2^P + 80` bytes),
//!   relative standard error `0.782/√m` (FGRA, O(1)), `0.761/√m` (maximum
//!   likelihood) or `0.658/√m` (martingale, inserts only): the error of an `Hll` in
//!   about 25 % less memory (memory × variance 4.90 bits against 6.49). Same digest,
//!   same merge / fold API, and [`Ull::to_hll`] gives the `Hll` of the same keys for
//!   Redis or DataSketches export. Register bytes equal hash4j's (the reference
//!   implementation) for the same 64-bit hashes.
//! * [`HllSparse<P>`]: an `Hll<P>` of the same size that counts exactly (relative
//!   standard error `7·10^−5`) up to `9m/64` keys, keeping HLL++'s high-precision
//!   list in the register bytes, then converts in place to exactly the registers
//!   `Hll<P>` holds for the same keys.
//! * [`RegisterSketch`]: an `Hll<P>` or `Ull<P>` behind `&dyn` with `P` erased (as
//!   heapless's `VecView` erases a capacity), for collectors that handle any
//!   precision with one piece of code; [`with_precision`] turns a precision read
//!   at run time into the type parameter.
//!
//! ```
//! use loxo_core::Seed;
//! use loxo_hll::Hll;
//!
//! let seed = Seed::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
//! let mut monday = Hll::<14>::new(seed);
//! let mut tuesday = Hll::<14>::new(seed);
//! for flow in 0..30_000u32 {
//!     monday.insert(&flow.to_le_bytes());
//! }
//! for flow in 20_000..50_000u32 {
//!     tuesday.insert(&flow.to_le_bytes());
//! }
//! monday.merge(&tuesday)?;
//! let e = monday.estimate(); // ≈ 50 000 distinct flows
//! assert!((e - 50_000.0).abs() < 4.0 * monday.relative_standard_error() * 50_000.0);
//! assert_eq!(monday.estimate_martingale(), None); // history lost by the merge
//! # Ok::<(), loxo_core::MergeError>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]

mod debug;
mod entry;
mod estimator;
mod hll;
mod hll_sparse;
mod hll_wire;
mod precision;
mod registers;
#[cfg(test)]
mod test_util;
mod ull;
mod ull_estimator;
mod ull_pow;
mod ull_sparse;
mod ull_wire;
mod view;
mod wire;

pub use hll::Hll;
pub use hll_sparse::HllSparse;
pub use precision::{
    with_precision, FoldsInto, ForPrecision, Precision, RegisterStorage, SupportedPrecision,
};
pub use registers::Registers;
pub use ull::Ull;
pub use view::RegisterSketch;
