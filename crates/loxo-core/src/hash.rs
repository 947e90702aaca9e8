//! One hash per key, many indices: double hashing and range reduction.

/// Maps `x` uniformly onto `[0, n)` without a division (Lemire's multiply-shift).
///
/// Uses the **high** 32 bits of `x`: `((x >> 32) · n) >> 32`. That is one 32×32→64
/// multiply (a single `UMULL` on Cortex-M4), branch-free, and exact-uniform up to a
/// bias of at most `n / 2^32` per bucket — far below any sketch's own error.
/// For a power-of-two `n = 2^b` it returns the top `b` bits of `x`.
///
/// `n = 0` yields 0 (callers check their sizes at compile time).
///
/// ```
/// use loxo_core::reduce;
/// assert_eq!(reduce(0, 1000), 0);
/// assert_eq!(reduce(u64::MAX, 1000), 999);
/// assert_eq!(reduce(0x8000_0000_0000_0000, 1000), 500);
/// ```
#[inline(always)]
#[must_use]
pub const fn reduce(x: u64, n: u32) -> u32 {
    (((x >> 32) * n as u64) >> 32) as u32
}

/// The 64-bit finaliser of MurmurHash3 (`fmix64`): a fast bijective mixer.
///
/// Used to derive the second hash of double hashing from the first, and available
/// to sketches that need extra well-mixed bits (fingerprints, signs) from one
/// [`KeyHash`] without hashing the key again.
///
/// ```
/// assert_ne!(loxo_core::mix64(1), loxo_core::mix64(2));
/// assert_eq!(loxo_core::mix64(0), 0); // fixed point: mix an odd or offset input
/// ```
#[inline(always)]
#[must_use]
pub const fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// The keyed 64-bit digest of one key, from which a sketch derives every index.
///
/// Obtain it from [`Seed::hash`](crate::Seed::hash), or build it with
/// [`KeyHash::from_u64`] when the caller already hashed the key (pre-hashed
/// insertion: hash a flow key once and feed the same `KeyHash` to a Bloom filter,
/// a HyperLogLog and a Count-Min sketch).
///
/// Index derivation is Kirsch–Mitzenmacher double hashing: probe `i` is
/// `g_i = h1 + i·h2 (mod 2^64)`, with `h1` the digest and `h2 = mix64(h1 ^ C) | 1`
/// (forced odd, so the probe sequence never collapses onto one value), then
/// [`reduce`]d into the table size. Kirsch and Mitzenmacher (2006) show that `k`
/// probes built this way give the same asymptotic false-positive rate as `k`
/// independent hash functions — right for a Bloom filter's probes into one array,
/// **not** for the rows of a Count-Min or Count-Sketch, whose guarantee needs rows
/// that collide independently: those use [`RowHashes`](crate::RowHashes).
///
/// Memory: 8 bytes. Every method is `#[inline]`, branch-free and division-free.
///
/// ```
/// use loxo_core::{KeyHash, Seed};
///
/// let h = Seed::new(1, 2).hash(b"flow");
/// let same = KeyHash::from_u64(h.get());
/// assert_eq!(h.index(3, 4096), same.index(3, 4096));
/// let first: Vec<u64> = h.probes().take(4).collect();
/// assert_eq!(first[2], h.probe(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct KeyHash(u64);

/// Offset that keeps `h2` from being a function of `h1`'s fixed point 0.
const H2_DOMAIN: u64 = 0x9e37_79b9_7f4a_7c15;

impl KeyHash {
    /// Wraps a digest computed elsewhere (pre-hashed insertion).
    ///
    /// The value must be a uniformly distributed 64-bit hash for the sketches'
    /// error guarantees to hold.
    #[inline(always)]
    #[must_use]
    pub const fn from_u64(digest: u64) -> Self {
        Self(digest)
    }

    /// The raw 64-bit digest.
    #[inline(always)]
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// First hash of double hashing: the digest itself.
    #[inline(always)]
    #[must_use]
    pub const fn h1(self) -> u64 {
        self.0
    }

    /// Second hash of double hashing: derived from the digest by [`mix64`], odd.
    #[inline(always)]
    #[must_use]
    pub const fn h2(self) -> u64 {
        mix64(self.0 ^ H2_DOMAIN) | 1
    }

    /// The `i`-th probe value `g_i = h1 + i·h2`, full 64 bits (before reduction).
    #[inline(always)]
    #[must_use]
    pub const fn probe(self, i: u32) -> u64 {
        self.h1().wrapping_add((i as u64).wrapping_mul(self.h2()))
    }

    /// The `i`-th index in `[0, n)`: [`reduce`]`(g_i, n)`.
    #[inline(always)]
    #[must_use]
    pub const fn index(self, i: u32, n: u32) -> u32 {
        reduce(self.probe(i), n)
    }

    /// The probe values `g_0, g_1, …` as an endless iterator (take `k` of them).
    ///
    /// Each step is one 64-bit addition.
    #[inline(always)]
    #[must_use]
    pub const fn probes(self) -> Probes {
        Probes {
            next: self.0,
            step: self.h2(),
        }
    }
}

/// Endless iterator over the double-hashing probe values of a [`KeyHash`].
///
/// Created by [`KeyHash::probes`]; reduce each value with [`reduce`].
#[derive(Clone, Debug)]
pub struct Probes {
    next: u64,
    step: u64,
}

impl Iterator for Probes {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        let g = self.next;
        self.next = self.next.wrapping_add(self.step);
        Some(g)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (usize::MAX, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_stays_in_range_and_covers_it() {
        for n in [1u32, 2, 3, 7, 1000, 272, 1 << 20, u32::MAX] {
            assert!(reduce(0, n) == 0);
            assert!(reduce(u64::MAX, n) == n - 1);
            for x in [1u64 << 63, 12_345_678_901_234, 0xdead_beef_0000_0000] {
                assert!(reduce(x, n) < n);
            }
        }
        assert_eq!(reduce(u64::MAX, 0), 0);
    }

    #[test]
    fn power_of_two_reduce_is_top_bits() {
        let x = 0xabcd_ef01_2345_6789_u64;
        assert_eq!(reduce(x, 1 << 10), (x >> 54) as u32);
    }

    #[test]
    fn h2_is_odd_and_probes_step_by_it() {
        for d in [0u64, 1, u64::MAX, 0x1234_5678_9abc_def0] {
            let h = KeyHash::from_u64(d);
            assert_eq!(h.h2() & 1, 1);
            let mut it = h.probes();
            for i in 0..8 {
                assert_eq!(it.next(), Some(h.probe(i)));
            }
        }
    }

    #[test]
    fn mix64_is_a_bijection_on_samples() {
        // fmix64 is invertible; spot-check that distinct inputs stay distinct.
        let mut seen = [0u64; 256];
        for (i, slot) in seen.iter_mut().enumerate() {
            *slot = mix64(i as u64);
        }
        for i in 0..256 {
            for j in (i + 1)..256 {
                assert_ne!(seen[i], seen[j]);
            }
        }
    }
}
