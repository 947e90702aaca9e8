//! Keyed hashing, index derivation and shared error types for the loxo sketches.
//!
//! Every loxo sketch hashes a key **once** with keyed SipHash-1-3 ([`Seed::hash`]),
//! then derives all the indices it needs (Bloom probes, Count-Min rows, the
//! HyperLogLog register and rank) from that one 64-bit [`KeyHash`]:
//!
//! ```
//! use loxo_core::Seed;
//!
//! // A fixed seed: reproducible, and sketches built with it can be merged.
//! // On a device, draw it from the hardware RNG instead (see `Seed`).
//! let seed = Seed::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
//! let h = seed.hash(b"10.0.0.1:443 -> 10.0.0.2:51000/tcp");
//!
//! // Three Bloom probes into a 1000-bit array (double hashing):
//! let bits: [u32; 3] = core::array::from_fn(|i| h.index(i as u32, 1000));
//! assert!(bits.iter().all(|&b| b < 1000));
//! // Two Count-Min rows of 272 counters (independent per-row hash functions):
//! let rows = loxo_core::RowHashes::<2>::new(seed);
//! assert!(rows.iter().all(|r| r.index(h, 272) < 272));
//! ```
//!
//! Bloom probes may share one double-hashing sequence ([`KeyHash::probes`]); rows
//! of a sketch whose guarantee multiplies per-row failure probabilities may not, so
//! they use [`RowHashes`] (see its docs for why).
//!
//! The crate is `#![no_std]` and allocates nothing. Its only `unsafe` is the x86_64
//! [`prefetch`] hint, confined to one module and run under Miri.
#![no_std]
#![deny(unsafe_code)]

mod error;
mod half_sip_key;
mod hash;
mod prefetch;
mod rows;
mod seed;
mod sip_key;
pub mod wire;
mod wire_key;

pub use error::{DecodeError, EncodeError, MergeError};
pub use half_sip_key::{HalfSipKey, HalfSipPrefix};
pub use hash::{mix64, reduce, KeyHash, Probes};
pub use prefetch::prefetch;
pub use rows::{RowHash, RowHashes};
pub use seed::Seed;
pub use sip_key::SipKey;
pub use wire_key::WireKey;
