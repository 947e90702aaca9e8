//! Fixed-memory set membership for firmware: "have I seen this key before?" with no
//! false negatives. `#![no_std]`, no allocation, storage inline in the value, sizes in
//! the type, stable Rust.
//!
//! | type | answers | memory | notes |
//! |---|---|---|---|
//! | [`Bloom<M, K>`] | membership | `4·M` bytes (`32·M` bits) | classic; union/intersection; health estimates |
//! | [`BlockedBloom<B, K>`] | membership | `64·B` bytes | one cache line per key: fastest (above all batched, [`BlockedBloom::contains_batch`]); 4–10 % more bits for the same FPR |
//! | [`RegisterBloom<W, K>`] | membership | `8·W` bytes | one 64-bit word per key: one load and a mask compare per lookup; 27–84 % more bits for the same FPR |
//! | [`CountingBloom<M, K>`] | membership with removal | `4·M` bytes (`8·M` 4-bit counters) | sticky saturation at 15 |
//! | [`Cuckoo<B, F>`] | membership with removal | `4·B·size_of::<F>()` bytes | fewer bits/key below ≈ 3 % FPR |
//! | [`BinaryFuse<F>`]: [`BinaryFuse8`], [`BinaryFuse16`] | static membership (built on a host, then read-only) | `slots·f/8` bytes, borrowed (flash) | ≈ 1.13·log₂(1/p) bits/key at p = 2^−f; construction with feature `alloc` |
//!
//! Every filter hashes a key once with keyed SipHash-1-3 ([`loxo_core::Seed`]) and
//! derives all its probes from that digest; pre-hashed variants (`*_hash`) take a
//! [`loxo_core::KeyHash`] computed once and shared with other sketches. Sizing helpers
//! ([`bloom_words`] and [`bloom_k`], [`blocked_blocks`] and [`blocked_k`],
//! [`register_words`] and [`register_k`], [`cuckoo_buckets`]) are `const fn`, so a
//! capacity and a target rate become a type, and each pair delivers the rate:
//!
//! ```
//! use loxo_bloom::{bloom_k, bloom_words, Bloom};
//! type NewFlows = Bloom<{ bloom_words(5_000, 0.01) }, { bloom_k(5_000, 0.01) }>;
//! let mut seen = NewFlows::new(loxo_core::Seed::new(7, 7));
//! assert!(!seen.insert_checked(b"flow"));
//! assert!(seen.insert_checked(b"flow"));
//! ```
//!
//! **Why double hashing is fine here.** The classic and counting filters derive their
//! `K` probes from one digest by Kirsch–Mitzenmacher double hashing, `g_i = h1 + i·h2`.
//! A Bloom filter's guarantee needs only that a key's `K` probes be (nearly always)
//! distinct positions of one array, spread uniformly; Kirsch and Mitzenmacher (2006)
//! show that the false-positive rate with double hashing is asymptotically that of `K`
//! independent hash functions, and the measured rates match `(1 − e^{−Kn/m})^K` within
//! their binomial noise (`tests/tests/bloom_accuracy.rs`). A Count-Min guarantee is
//! different: its failure probability `δ = e^{−d}` is a *product* of the rows' failure
//! probabilities, which holds only if the rows' indices are independent across rows;
//! rows derived as `h1 + i·h2` from one digest collide together (two keys that share
//! `h1` and `h2` collide in every row), so loxo-cms derives each row independently.
//! Inside a 512-bit block double hashing is *not* fine either — too few positions for
//! the asymptotics; see [`BlockedBloom`].
//!
//! **Static sets.** For a set known in advance — a blocklist compiled on a host and
//! flashed to every device — [`BinaryFuse8`] and [`BinaryFuse16`] answer the same
//! question in 9 and 18 bits per key at `2^−8` and `2^−16` (a Bloom filter needs
//! 11.5 and 23.1), as views over borrowed bytes. Their construction needs memory
//! proportional to the set and lives behind the `alloc` feature (host tools); the
//! default build stays allocation-free.
//!
//! No `unsafe`: the batched lookups' (`contains_batch`) x86_64 prefetch hint is
//! [`loxo_core::prefetch`].
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[macro_use]
mod keyed;

mod binary_fuse;
mod blocked;
mod bloom;
mod counting;
mod cuckoo;
mod fingerprint;
mod fuse;
mod health;
mod prefetch;
mod register;
mod sizing;
mod words;

pub use binary_fuse::{BinaryFuse, BinaryFuse16, BinaryFuse8};
pub use blocked::BlockedBloom;
pub use bloom::Bloom;
pub use counting::{CountingBloom, COUNTER_MAX};
pub use cuckoo::{Cuckoo, Full, MAX_KICKS, SLOTS};
pub use fingerprint::Fingerprint;
#[cfg(feature = "alloc")]
pub use fuse::FuseBuild;
pub use fuse::{
    BuildError, FuseLayout, FUSE_ARITY, MAX_FUSE_ATTEMPTS, MAX_FUSE_KEYS, MAX_SEGMENT_LENGTH,
};
pub use register::{RegisterBloom, WordFill};
pub use sizing::{
    blocked_blocks, blocked_k, bloom_bits, bloom_fpr, bloom_k, bloom_words, cuckoo_buckets, ln,
    optimal_k, register_k, register_words,
};

/// A little-endian `u64` from (up to) 8 bytes.
fn le_u64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    if let Some(dst) = w.get_mut(..b.len().min(8)) {
        dst.copy_from_slice(b.get(..dst.len()).unwrap_or(&[]));
    }
    u64::from_le_bytes(w)
}
