//! **loxo** — allocation-free probabilistic sketches for firmware.
//!
//! This is the facade crate: it re-exports the shared core and, behind cargo
//! features, each sketch family. Every type keeps its storage inline, sized by const
//! generics, so the RAM cost is known from the type alone; nothing allocates and
//! everything builds for `thumbv7em-none-eabihf`.
//!
//! | feature | module | answers |
//! |---|---|---|
//! | `bloom` | [`bloom`] | have I seen this key before? |
//! | `hll` | [`hll`] | how many distinct keys? |
//! | `theta` | [`theta`] | how many distinct keys in both, in one but not the other? |
//! | `spread` | [`spread`] | which keys have the most distinct elements (scanners, flood victims)? |
//! | `cms` | [`cms`] | how often, and which keys are the heaviest? |
//! | `flow` | [`flow`] | which flows are elephants in this traffic? |
//! | `defmt` | — | `defmt::Format` for every public type |
//!
//! The data path: frame → [`flow`] parsing → flow key → [`Seed::hash`] (one keyed
//! SipHash-1-3 per key) → the family sketches → report.
//!
//! ```
//! use loxo::Seed;
//!
//! let seed = Seed::new(0x5eed, 0xcafe);
//! let h = seed.hash(b"some flow key");
//! assert!(h.index(0, 1000) < 1000);
//! ```
#![no_std]
#![forbid(unsafe_code)]

pub use loxo_core::{mix64, reduce, DecodeError, EncodeError, KeyHash, MergeError, Probes, Seed};

/// Membership filters: Bloom (classic, blocked, counting) and cuckoo.
#[cfg(feature = "bloom")]
pub use loxo_bloom as bloom;

/// Distinct counting: HyperLogLog.
#[cfg(feature = "hll")]
pub use loxo_hll as hll;

/// Theta sketches: distinct counts with union, intersection and A-not-B.
#[cfg(feature = "theta")]
pub use loxo_theta as theta;

/// Spread: the keys with the most distinct elements, with estimates and bounds.
#[cfg(feature = "spread")]
pub use loxo_spread as spread;

/// Frequencies and heavy hitters: Count-Min, Count-Sketch, Space-Saving, HeavyKeeper.
#[cfg(feature = "cms")]
pub use loxo_cms as cms;

/// Frame parsing and the elephant-flow monitor.
#[cfg(feature = "flow")]
pub use loxo_flow as flow;

/// IPFIX (RFC 7011) export of the flow monitor's reports.
#[cfg(feature = "ipfix")]
pub use loxo_ipfix as ipfix;
