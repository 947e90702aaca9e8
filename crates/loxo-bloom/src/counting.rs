//! The counting Bloom filter [`CountingBloom<M, K>`] (4-bit counters, with removal).

use core::fmt;

use loxo_core::wire::{self, SketchKind};
use loxo_core::{DecodeError, EncodeError, KeyHash, Seed};

use crate::health;

/// Counters per 64-bit word.
const PER_WORD: usize = 8;
/// A counter that reached this value sticks there.
pub const COUNTER_MAX: u8 = 15;

/// A counting Bloom filter (Fan et al. 2000): a Bloom filter whose cells are 4-bit
/// saturating counters, so inserted keys can be [removed](Self::remove).
///
/// * `M` — 32-bit words of storage: `8·M` counters, packed two per byte
///   (counter `j` is bits `4·(j mod 8) ..` of little-endian word `⌊j/8⌋`, i.e. the
///   low nibble of byte `⌊j/2⌋` for even `j`). `1 ≤ M < 2^28`.
/// * `K` — probes, `1..=32`, as in [`Bloom`](crate::Bloom).
///
/// **Saturation**: a counter that reaches 15 **sticks** at 15: inserts no longer
/// raise it and removals no longer lower it. A stuck counter has lost count of how
/// many keys share it; decrementing it could bring it to 0 while one of those keys
/// is still present, which would be a false negative. Never decrementing it keeps
/// the guarantee: every inserted key that was not removed is still found (at the
/// price of one cell that can no longer be cleared). With 4-bit counters and the
/// optimal `K`, the chance that any counter reaches 15 is about `1.37·10^−15 · m`
/// (Fan et al.).
///
/// ```compile_fail,E0080
/// let _ = loxo_bloom::CountingBloom::<0, 4>::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// **Memory**: `4·M + 16` bytes (4 × a classic filter of the same cell count).
/// **Cost**: one SipHash, `K` nibble updates. **Error**: the classic rate with
/// `m = 8·M` cells; [`remove`](Self::remove) of a key that was never inserted is
/// refused (it would create false negatives) when the filter can tell, i.e. unless
/// the key is a false positive.
///
/// ```
/// use loxo_bloom::CountingBloom;
/// use loxo_core::Seed;
///
/// let mut f = CountingBloom::<64, 5>::new(Seed::new(1, 2));
/// f.insert(b"a");
/// f.insert(b"b");
/// assert!(f.remove(b"a"));
/// assert!(!f.contains(b"a"));
/// assert!(f.contains(b"b"));
/// assert!(!f.remove(b"never"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct CountingBloom<const M: usize, const K: u32> {
    words: [u32; M],
    seed: Seed,
}

impl<const M: usize, const K: u32> CountingBloom<M, K> {
    /// Number of counters, `8·M`.
    pub const COUNTERS: usize = PER_WORD * M;

    const CHECK: () = {
        assert!(
            M > 0,
            "CountingBloom<M, K>: M (32-bit words) must be at least 1"
        );
        assert!(M < 1 << 28, "CountingBloom<M, K>: at most 2^28 − 1 words");
        assert!(K > 0, "CountingBloom<M, K>: K must be at least 1");
        assert!(K <= 32, "CountingBloom<M, K>: at most 32 probes");
    };

    /// An empty filter whose keys are hashed with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            words: [0; M],
            seed,
        }
    }

    seed_and_memory!(": `4·M + 16`");
    keyed_set_methods!();

    #[inline(always)]
    fn cell(h: KeyHash, i: u32) -> (usize, u32) {
        let j = h.index(i, Self::COUNTERS as u32) as usize;
        (j / PER_WORD, 4 * (j % PER_WORD) as u32)
    }

    /// Counter `j` (0 beyond the end).
    #[must_use]
    pub fn counter(&self, j: usize) -> u8 {
        self.words
            .get(j / PER_WORD)
            .map_or(0, |w| ((w >> (4 * (j % PER_WORD))) & 15) as u8)
    }

    fn get(&self, h: KeyHash, i: u32) -> u8 {
        let (w, s) = Self::cell(h, i);
        self.words.get(w).map_or(0, |x| ((x >> s) & 15) as u8)
    }

    /// Inserts a key hashed by the caller with this filter's seed.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) {
        self.insert_checked_hash(h);
    }

    /// [`insert_checked`](Self::insert_checked) for a key hashed by the caller.
    pub fn insert_checked_hash(&mut self, h: KeyHash) -> bool {
        let present = self.contains_hash(h);
        for i in 0..K {
            let (w, s) = Self::cell(h, i);
            if let Some(x) = self.words.get_mut(w) {
                let c = (*x >> s) & 15;
                if c < u32::from(COUNTER_MAX) {
                    *x += 1 << s;
                }
            }
        }
        present
    }

    /// [`contains`](Self::contains) for a key hashed by the caller.
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        (0..K).all(|i| self.get(h, i) != 0)
    }

    /// Removes one insertion of a key. Returns `false` (and changes nothing) if the
    /// key is certainly absent. Counters stuck at 15 are not decremented. Removing a
    /// key that was never inserted but tests positive (a false positive) lowers other
    /// keys' counters: only remove keys you inserted.
    #[inline]
    pub fn remove<Q: AsRef<[u8]> + ?Sized>(&mut self, key: &Q) -> bool {
        self.remove_hash(self.seed.hash(key))
    }

    /// [`remove`](Self::remove) for a key hashed by the caller.
    pub fn remove_hash(&mut self, h: KeyHash) -> bool {
        if !self.contains_hash(h) {
            return false;
        }
        for i in 0..K {
            let (w, s) = Self::cell(h, i);
            if let Some(x) = self.words.get_mut(w) {
                let c = (*x >> s) & 15;
                if c != 0 && c < u32::from(COUNTER_MAX) {
                    *x -= 1 << s;
                }
            }
        }
        true
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.words = [0; M];
    }

    /// True if every counter is 0.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of non-zero counters.
    #[must_use]
    pub fn count_nonzero(&self) -> usize {
        self.words
            .iter()
            .map(|&w| {
                // A nibble is non-zero iff any of its 4 bits is set.
                let any = w | (w >> 1) | (w >> 2) | (w >> 3);
                (any & 0x1111_1111).count_ones() as usize
            })
            .sum()
    }

    /// Number of counters stuck at 15.
    #[must_use]
    pub fn count_saturated(&self) -> usize {
        (0..Self::COUNTERS)
            .filter(|&j| self.counter(j) == COUNTER_MAX)
            .count()
    }

    /// Share of non-zero counters.
    #[must_use]
    pub fn fill_ratio(&self) -> f64 {
        self.count_nonzero() as f64 / Self::COUNTERS as f64
    }

    /// False-positive rate estimated from the fill, `fill^K`.
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        health::fpr_from_fill(self.fill_ratio(), K)
    }

    /// Estimated number of keys present (Swamidass–Baldi over non-zero counters).
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        health::swamidass_baldi(self.count_nonzero(), Self::COUNTERS, K)
    }

    const PARAMS: [u32; 4] = [M as u32, K, 4, 0];

    /// Length of the encoded frame: `36 + 4·M + 4`.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(4 * M)
    }

    /// Serializes the filter (kind `counting-bloom`, params `[M, K, 4]`, payload the
    /// `M` 32-bit words little-endian: counters two per byte, low nibble first).
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let (kind, words) = (SketchKind::CountingBloom, &self.words);
        crate::words::encode(kind, &self.seed, Self::PARAMS, words, M, buf)
    }

    /// Replaces the filter with a serialized one; on error `self` is unchanged.
    ///
    /// # Errors
    /// As [`Bloom::decode_into`](crate::Bloom::decode_into).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let (kind, words) = (SketchKind::CountingBloom, &mut self.words);
        crate::words::decode(bytes, kind, &self.seed, Self::PARAMS, words, M)
    }
}

impl<const M: usize, const K: u32> fmt::Debug for CountingBloom<M, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingBloom")
            .field("counters", &Self::COUNTERS)
            .field("k", &K)
            .field("seed", &self.seed)
            .field("nonzero", &self.count_nonzero())
            .finish_non_exhaustive()
    }
}
