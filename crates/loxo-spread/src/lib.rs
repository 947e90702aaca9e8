//! Spread sketches for firmware: **which keys have the most distinct elements?** —
//! `#![no_std]`, no allocation, the memory in the type.
//!
//! A key's *spread* is its number of distinct associated elements: a source's
//! distinct destinations (a horizontal scan, a worm), a destination's distinct ports
//! (a vertical scan) or distinct sources (the victim of a distributed flood). A
//! frequency sketch cannot see it — a victim receiving one packet from each of 100 000
//! spoofed sources is not a heavy flow, and a heavy flow between two hosts has a
//! spread of one. [`Spreaders<K, S, W, C>`] reports the keys above a spread threshold,
//! typically a fraction of the epoch's distinct (key, element) pairs, each with an
//! estimate, its standard error and `[lower, upper]` bounds.
//!
//! ```
//! use loxo_core::Seed;
//! use loxo_spread::Spreaders;
//!
//! // Fan-in: destination -> distinct sources (IPv6-sized keys).
//! let mut victims = Spreaders::<[u8; 16], 128, 16, 128>::new(Seed::new(1, 2));
//! let victim = [10; 16];
//! for src in 0..20_000u32 {
//!     victims.insert(&victim, &src.to_le_bytes()); // spoofed sources
//! }
//! for host in 0..2_000u32 {
//!     let mut dst = [0u8; 16];
//!     dst[..4].copy_from_slice(&host.to_le_bytes());
//!     victims.insert(&dst, b"one client"); // ordinary traffic
//!     victims.insert(&dst, b"another");
//! }
//! let mut top = heapless::Vec::<_, 8>::new();
//! let threshold = 0.01 * victims.distinct_pairs().value;
//! victims.report(threshold, 0.5, &mut top);
//! assert_eq!(top.len(), 1);
//! assert_eq!(top[0].key, victim);
//! assert!(top[0].lower(4.0) <= 20_000.0 && 20_000.0 <= top[0].upper(4.0));
//! ```
//!
//! # Design, and why this one
//!
//! Three published designs fit "find the keys and estimate their spreads in fixed
//! memory"; prototypes of each at 32 KiB with IPv6-sized keys, on streams like those
//! of `tests/spread_accuracy.rs` (the tuning seeds its docs name), decided:
//!
//! * **SpreadSketch** (Tang, Huang & Lee, INFOCOM 2020): `d × w` buckets, each a
//!   multiresolution bitmap plus one candidate key and its level. Key recovery is
//!   built in, but a bucket names only the key owning its highest-level pair, so a
//!   key of spread `n` is recovered in a row with probability ≈ `n / (n + N/w)`: a
//!   1 % threshold needs `w ≫ 100` and `d ≥ 3`, and a 16-byte key in each of the
//!   `d·w` buckets then costs more than the counters. At 32 KiB (`d = 3`, `w = 200`,
//!   64 registers per bucket) recall at a 1 % threshold was 0.76, and the minimum
//!   over rows of noisy bucket estimates biased the spreads low.
//! * **vHLL** (Xiao, Chen, Chen & Ling, SIGMETRICS 2015): one shared pool of
//!   HyperLogLog registers, each key owning `S` of them at pseudo-random places (a
//!   virtual HyperLogLog), the noise of other keys subtracted. The most accurate
//!   estimator per byte (no whole-bucket collisions: other keys overlap a key in a
//!   few registers each), but it has no key recovery, and its subtraction of a
//!   harmonic-mean pool estimate is biased by lumpy noise: a heavy key's registers
//!   hold many pairs, and the harmonic mean under-counts them — +6 to +10 % on the
//!   keys near a 1 % threshold.
//! * **A Count-Min of small distinct counters** (one HyperLogLog per bucket, the
//!   row's mean load subtracted): like SpreadSketch's counters, a key shares *all*
//!   of a bucket with whatever else hashed there, and at this size a bucket holding a
//!   key near the threshold often holds another sizeable key too — with 2 × 88
//!   buckets of 256 registers, precision at a 1 % threshold was 0.63.
//!
//! `Spreaders` keeps vHLL's pool and fixes both of its problems:
//!
//! 1. **Candidates from a distinct sample of the pairs.** Each pair offers itself to
//!    one of `C` cells, which keeps the pair of smallest priority and its key: the
//!    cells hold a uniform sample of the *distinct* pairs (repeats change nothing),
//!    so a key holding a fraction `φ` of the pairs is a candidate unless it missed
//!    `C·φ` draws in a row (`e^−Cφ`: 0.6 % for 512 cells at 1 %, 0.004 % at 2 %).
//!    Keys cost memory once per cell, not once per bucket and row, and the cells'
//!    priorities also estimate the number of distinct pairs (the threshold's base).
//! 2. **A maximum-likelihood estimate that knows the noise.** A key's registers are
//!    a random sample of the pool, so the distribution of the noise in them is the
//!    pool's own register histogram; the likelihood of the key's register values
//!    under "load `n/S` of its own on top of that noise" gives an estimate unbiased
//!    within ±1 % however lumpy the noise, and its Fisher information gives a
//!    standard error per key (calibrated in the tests).
//!
//! # One stream: counting as it goes ([`HipSpreaders`])
//!
//! The registers' estimate of a key holding `S` registers cannot beat HyperLogLog's
//! `1.04/√S` however little noise it carries, and more registers per key in the same
//! bytes means more noise in each: at 32 KiB the worst of a few hundred keys at ≥ 2 %
//! of the pairs erred by 13–15 %. [`HipSpreaders`] wraps the same pool and cells and
//! gives up to `T` candidates a *historic inverse probability* counter (Cohen,
//! *All-distances sketches, revisited: HIP estimators*, PODC 2014; Ting, *Streamed
//! approximate counting of distinct elements*, KDD 2014): each raise of one of the
//! key's registers by one of its own elements adds `1/p`, `p` the exact chance that
//! a new element raises one of them. It knows which register changes were the key's
//! own, so other keys' noise costs it only through a lower `p` — and a key can have
//! many more, shallower-shared registers: at 32 KiB (`HipSpreaders<[u8; 16], 4096, 4,
//! 580, 64>`: 4 096 registers per key, 8 per stripe) the worst key at ≥ 2 % errs by
//! 5.5 % on held-out epochs, with calibrated standard errors. The counts are the
//! estimator of one stream: they do not merge (a merge falls back to the registers'
//! estimate, which the wire format carries).
//!
//! Registers are arranged in `S` stripes, one per virtual register of a key, so a
//! key's `S` registers are always distinct. Both parts merge exactly (register-wise
//! maximum, the smaller priority per cell): the merge of two devices' sketches is the
//! sketch of both streams.
//!
//! # Hashing
//!
//! Every position comes from keyed digests (a [`Seed`](loxo_core::Seed), SipHash-1-3
//! via [`Spreaders::insert`], or the caller's own keyed digests via
//! [`Spreaders::insert_hashed`]: a monitor's HalfSipHash digests of the addresses), so
//! without the seed no one can aim keys or elements at a register or a cell. An insert
//! is one 64-bit mix of the key's and the element's digests, one 32-bit mix, a nibble
//! update and a comparison: no division, no floating point, no loop.
//!
//! # Wire format
//!
//! Kind `spread` (15) of the loxo format: [`Spreaders::encode_into`],
//! [`Spreaders::decode_into`], [`Spreaders::merge_encoded`] (a collector merges a
//! device's frame in place), and [`SpreadView`] for tools that know the geometry only
//! at run time.
#![no_std]
#![forbid(unsafe_code)]

mod cells;
mod digest;
mod estimate;
mod hip;
mod pool;
mod report;
mod sketch;
mod summary;
#[cfg(test)]
mod tests;
mod view;
mod wire;

pub use estimate::Estimate;
pub use hip::HipSpreaders;
pub use report::Spreader;
pub use sketch::Spreaders;
pub use summary::SpreadSummary;
pub use view::{SpreadView, MAX_KEY_LEN};
