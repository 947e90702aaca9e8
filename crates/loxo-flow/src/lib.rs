//! Ethernet/IP frame parsing into flow keys and an elephant-flow monitor composed from loxo sketches, no_std.
//!
//! Work in progress: this crate is being filled in by its own issue.
#![no_std]
#![forbid(unsafe_code)]
