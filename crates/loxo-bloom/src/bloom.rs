//! The classic Bloom filter [`Bloom<M, K>`].

use core::fmt;

use bitvec::array::BitArray;
use bitvec::order::Lsb0;
use loxo_core::wire::{self, SketchKind};
use loxo_core::{DecodeError, EncodeError, KeyHash, MergeError, Seed};

use crate::health;

/// A classic Bloom filter: "have I seen this key before?" with no false negatives.
///
/// * `M` — the number of **32-bit words** of bit storage: the filter has `32·M`
///   bits. (Stable Rust cannot size an array `[u32; BITS / 32]` from a bit count, so
///   the word count is the parameter; [`bloom_words`](crate::bloom_words) computes
///   it from a capacity and a target rate. The words are `u32` — `bitvec` stores
///   `u64` only on 64-bit targets, and this filter must be bit-identical on a
///   Cortex-M and on the host.) `1 ≤ M ≤ 2^27 − 1` (indices are 32-bit).
/// * `K` — probes per key, `1..=32`, derived from one keyed 64-bit hash by
///   Kirsch–Mitzenmacher double hashing `g_i = h1 + i·h2` reduced into `[0, 64·M)`
///   with Lemire's multiply-shift (no division).
///
/// Invalid parameters fail to compile:
///
/// ```compile_fail,E0080
/// let _ = loxo_bloom::Bloom::<0, 7>::new(loxo_core::Seed::new(1, 2));
/// ```
/// ```compile_fail,E0080
/// let _ = loxo_bloom::Bloom::<64, 0>::new(loxo_core::Seed::new(1, 2));
/// ```
/// ```compile_fail,E0080
/// let _ = loxo_bloom::Bloom::<64, 33>::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// **Memory**: `4·M + 16` bytes (bits + seed), inline. **Cost**: one SipHash-1-3 of the
/// key, then `K` multiply-shift reductions and `K` word accesses (random, so `K`
/// cache misses on a large filter — see [`BlockedBloom`](crate::BlockedBloom)).
/// **Error**: after `n` distinct inserts the false-positive rate is
/// `(1 − e^{−Kn/(32M)})^K` ([`bloom_fpr`](crate::bloom_fpr)); at the design load
/// with the optimal `K`, half the bits are set.
///
/// ```
/// use loxo_bloom::{bloom_k, bloom_words, Bloom};
/// use loxo_core::Seed;
///
/// const N: u64 = 10_000;
/// let mut seen = Bloom::<{ bloom_words(N, 0.01) }, { bloom_k(N, 0.01) }>::new(Seed::new(1, 2));
/// assert!(!seen.insert_checked(b"10.0.0.1:443"));  // new
/// assert!(seen.insert_checked(b"10.0.0.1:443"));   // seen before
/// assert!(seen.contains(b"10.0.0.1:443"));
/// for i in 0..N {
///     seen.insert(&i.to_le_bytes());
/// }
/// assert!((seen.fill_ratio() - 0.5).abs() < 0.02);
/// assert!((seen.estimated_len() - N as f64).abs() < 0.05 * N as f64);
/// assert!(seen.estimated_fpr() < 0.012);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Bloom<const M: usize, const K: u32> {
    bits: BitArray<[u32; M], Lsb0>,
    seed: Seed,
}

impl<const M: usize, const K: u32> Bloom<M, K> {
    /// Bits in the filter, `32·M`.
    pub const BITS: usize = 32 * M;

    const CHECK: () = {
        assert!(M > 0, "Bloom<M, K>: M (32-bit words) must be at least 1");
        assert!(
            M < 1 << 27,
            "Bloom<M, K>: at most 2^27 − 1 words (32-bit indices)"
        );
        assert!(K > 0, "Bloom<M, K>: K (probes) must be at least 1");
        assert!(K <= 32, "Bloom<M, K>: more than 32 probes is never optimal");
    };

    /// An empty filter whose keys are hashed with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            bits: BitArray::ZERO,
            seed,
        }
    }

    seed_and_memory!(": `4·M + 16`");
    keyed_set_methods!();
    batch_lookups!("its `K` words are", "Bloom", "1024, 7");

    #[inline(always)]
    fn word_bit(h: KeyHash, i: u32) -> (usize, u32) {
        let idx = h.index(i, Self::BITS as u32) as usize;
        (idx >> 5, 1u32 << (idx & 31))
    }

    /// Inserts a key hashed by the caller with this filter's [`seed`](Self::seed).
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) {
        let words = self.bits.as_raw_mut_slice();
        for i in 0..K {
            let (w, b) = Self::word_bit(h, i);
            if let Some(x) = words.get_mut(w) {
                *x |= b;
            }
        }
    }

    /// [`contains`](Self::contains) for a key hashed by the caller.
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let words = self.bits.as_raw_slice();
        let mut all = true;
        for i in 0..K {
            let (w, b) = Self::word_bit(h, i);
            all &= words.get(w).is_some_and(|x| x & b != 0);
        }
        all
    }

    /// Prefetches the `K` words a lookup of `h` reads.
    #[inline(always)]
    fn prefetch_hash(&self, h: KeyHash) {
        let words = self.bits.as_raw_slice();
        for i in 0..K {
            if let Some(x) = words.get(Self::word_bit(h, i).0) {
                crate::prefetch::prefetch(x);
            }
        }
    }

    /// [`insert_checked`](Self::insert_checked) for a key hashed by the caller.
    #[inline]
    pub fn insert_checked_hash(&mut self, h: KeyHash) -> bool {
        let words = self.bits.as_raw_mut_slice();
        let mut all = true;
        for i in 0..K {
            let (w, b) = Self::word_bit(h, i);
            if let Some(x) = words.get_mut(w) {
                all &= *x & b != 0;
                *x |= b;
            }
        }
        all
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.bits = BitArray::ZERO;
    }

    /// True if no key was inserted (no bit set).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bits.not_any()
    }

    /// Number of set bits.
    #[must_use]
    pub fn count_ones(&self) -> usize {
        self.bits.count_ones()
    }

    /// Share of set bits, `X/m`: about 0.5 at the design load with the optimal `K`;
    /// well above it, the filter is overfilled.
    #[must_use]
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / Self::BITS as f64
    }

    /// False-positive rate estimated from the fill: `(X/m)^K`. Reports the real
    /// degradation of an overfilled filter, whatever was inserted.
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        health::fpr_from_fill(self.fill_ratio(), K)
    }

    /// Estimated number of distinct keys inserted (Swamidass–Baldi 2007):
    /// `−(m/K)·ln(1 − X/m)`; infinite when every bit is set.
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        health::swamidass_baldi(self.count_ones(), Self::BITS, K)
    }

    /// `op` word by word over both filters' bits, if their seeds are equal.
    fn merge(&mut self, other: &Self, op: impl Fn(u32, u32) -> u32) -> Result<(), MergeError> {
        let (words, seeds) = (self.bits.as_raw_mut_slice(), [&self.seed, &other.seed]);
        crate::words::merge(seeds, words, other.bits.as_raw_slice(), op)
    }

    /// Union: afterwards `self` is bit for bit the filter of both key sets. Equal
    /// geometry is enforced by the type.
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] if the filters hash with different seeds (`self`
    /// is then unchanged).
    pub fn union_with(&mut self, other: &Self) -> Result<(), MergeError> {
        self.merge(other, |a, b| a | b)
    }

    /// Intersection (bit-wise AND). Every key in both sets is still reported, but the
    /// false-positive rate is **higher** than that of a filter built from the
    /// intersection alone: a bit survives if it was set by *any* key in each filter,
    /// not only by common keys, so the result has more set bits than needed.
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] as for [`union_with`](Self::union_with).
    pub fn intersect_with(&mut self, other: &Self) -> Result<(), MergeError> {
        self.merge(other, |a, b| a & b)
    }

    const PARAMS: [u32; 4] = [M as u32, K, 0, 0];

    /// Length of the frame [`encode_into`](Self::encode_into) writes: `36 + 4·M + 4`.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(4 * M)
    }

    /// Serializes the filter (kind `bloom`, params `[M, K]`, payload the `M` 32-bit words,
    /// little-endian) and returns the bytes written.
    ///
    /// ```
    /// use loxo_bloom::Bloom;
    /// use loxo_core::Seed;
    ///
    /// let mut f = Bloom::<16, 4>::new(Seed::new(1, 2));
    /// f.insert(b"k");
    /// let mut buf = [0u8; 256];
    /// let n = f.encode_into(&mut buf)?;
    /// let mut g = Bloom::<16, 4>::new(Seed::new(1, 2));
    /// g.decode_into(&buf[..n])?;
    /// assert_eq!(f, g);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len).
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let words = self.bits.as_raw_slice();
        crate::words::encode(SketchKind::Bloom, &self.seed, Self::PARAMS, words, M, buf)
    }

    /// Replaces the filter with the one serialized in `bytes` (same `M`, `K` and
    /// seed). On error `self` is unchanged.
    ///
    /// # Errors
    /// The envelope's errors, [`DecodeError::WrongKind`],
    /// [`DecodeError::ParameterMismatch`], [`DecodeError::SeedMismatch`],
    /// [`DecodeError::InvalidValue`] for non-zero flags.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let words = self.bits.as_raw_mut_slice();
        crate::words::decode(bytes, SketchKind::Bloom, &self.seed, Self::PARAMS, words, M)
    }
}

impl<const M: usize, const K: u32> fmt::Debug for Bloom<M, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bloom")
            .field("bits", &Self::BITS)
            .field("k", &K)
            .field("seed", &self.seed)
            .field("set_bits", &self.count_ones())
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl<const M: usize, const K: u32> defmt::Format for Bloom<M, K> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Bloom {{ bits: {}, k: {}, set: {} }}",
            Self::BITS,
            K,
            self.count_ones()
        );
    }
}
