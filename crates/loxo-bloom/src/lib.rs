//! Bloom filters (classic, blocked, counting) and cuckoo filters: fixed-memory set membership, no_std.
//!
//! Work in progress: this crate is being filled in by its own issue.
#![no_std]
#![forbid(unsafe_code)]
