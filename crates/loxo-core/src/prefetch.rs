//! The workspace's one host-side `unsafe`: a software prefetch hint, used by the
//! batched Bloom lookups (`contains_batch` in `loxo-bloom`) and by
//! `FlowMonitor::feed_burst` (`loxo-flow`).
//!
//! A prefetch retires at once, unlike a load, so a batch can work on its current
//! items while the cache lines of the next ones are on their way (RocksDB's
//! `MultiGet` does the same for its filters, DPDK applications for the packets of a
//! burst). A plain load does not do that: it blocks retirement until its line
//! arrives (measured on `feed_burst`: a load of the frame ahead gained 2/3 of what
//! the prefetch gains). On targets without a stable prefetch intrinsic (Cortex-M,
//! aarch64 on stable Rust) it compiles to nothing.
#![allow(unsafe_code)]

/// Asks the CPU to bring the cache line holding the first byte of `*value` into L1.
///
/// A hint: it changes no state the program can observe, never faults, and is a no-op
/// where the target has no stable prefetch intrinsic (everything but `x86_64`).
///
/// ```
/// let frames = [[0u8; 64]; 4];
/// for (i, f) in frames.iter().enumerate() {
///     if let Some(next) = frames.get(i + 1) {
///         loxo_core::prefetch(next);
///     }
///     assert_eq!(f[12], 0);
/// }
/// ```
#[inline(always)]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: `_mm_prefetch` is `unsafe` only because it is a `#[target_feature(enable =
    // "sse")]` function, and `sse` is enabled (the `cfg` above; it is part of the
    // x86_64 baseline). It is a hint that never faults and never reads into the
    // program, and the pointer comes from a live reference anyway. Run under Miri:
    // `cargo +nightly miri test -p loxo-core --lib prefetch` (and the callers' tests,
    // see `.ci/run`).
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            core::ptr::from_ref(value).cast::<i8>(),
        );
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    /// Sized and unsized values, an empty slice (a dangling but aligned pointer) and
    /// a zero-sized value: hints only, nothing changes. Small enough for Miri.
    #[test]
    fn prefetch_is_only_a_hint() {
        let words = [1u64, 2, 3, 4];
        let bytes = [7u8; 100];
        prefetch(&words);
        prefetch(&words[3]);
        prefetch(&bytes[..]);
        prefetch(&bytes[100..]);
        prefetch(&());
        prefetch("text");
        assert_eq!(words, [1, 2, 3, 4]);
        assert!(bytes.iter().all(|&b| b == 7));
    }
}
