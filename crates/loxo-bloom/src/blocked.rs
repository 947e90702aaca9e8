//! The cache-line blocked Bloom filter [`BlockedBloom<B, K>`].

use core::fmt;

use loxo_core::wire::{self, SketchKind};
use loxo_core::{reduce, DecodeError, EncodeError, KeyHash, MergeError, Seed};

/// Odd multiplier of the digest's high half: its top bits give the key's word pattern,
/// its low bits the bits of probes 6–9 (2^32/φ, Knuth's multiplicative-hashing
/// constant).
const PATTERN_MUL: u32 = 0x9e37_79b9;

/// 32-bit words of one 512-bit block (a 64-byte cache line). 32-bit words keep
/// every probe a single-word shift on 32-bit MCUs; on the wire they are the same
/// bytes as eight little-endian 64-bit words.
const BLOCK_WORDS: usize = 16;

/// Word patterns up to reflection: a key's words are `w0 + i·s mod 16` (`i < K`) for
/// one of 16 starts `w0` and 8 odd steps `s`; steps `s` and `16 − s` give the same
/// families of word sets, so averages over patterns run over these 64.
const PATTERN_STEPS: [u32; 4] = [1, 3, 5, 7];

/// A cache-line blocked Bloom filter (Putze, Sanders, Singler 2007) in the
/// *split-block* layout (Impala's and Parquet's filters): the key's hash picks one
/// 512-bit block, and its `K` probes set **one bit in each of `K` distinct 32-bit
/// words** of it, so a lookup touches one cache line instead of `K` and a key's `K`
/// bits never coincide.
///
/// * `B` — number of 512-bit blocks (`1 ≤ B < 2^32`): `512·B` bits, `64·B` bytes;
///   [`blocked_blocks`](crate::blocked_blocks) and [`blocked_k`](crate::blocked_k)
///   size it for a capacity and a rate.
/// * `K` — probes (= words touched) per key, `1..=16`.
///
/// ```compile_fail,E0080
/// let _ = loxo_bloom::BlockedBloom::<0, 6>::new(loxo_core::Seed::new(1, 2));
/// ```
/// ```compile_fail,E0080
/// let _ = loxo_bloom::BlockedBloom::<8, 17>::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// **Probes** (the contract is in `docs/format.md`): from the digest `d`, the block is
/// `⌊(d >> 32)·B / 2^32⌋`; with `x = (d >> 32)·0x9e3779b9 mod 2^32`, probe `i` lands in
/// word `(w0 + i·s) mod 16` where `w0 = x >> 28` and `s = (x >> 24) | 1` is odd, so the
/// `K ≤ 16` words are distinct; its bit in that word is a 5-bit field of the digest:
/// fields 0–5 of the low half for probes 0–5, fields 0–3 of `x` for probes 6–9, and
/// (only when `K > 10`) fields of a 32-bit mix of both for probes 10–15. Up to `K = 10`
/// the bit positions are disjoint digest bits, hence independent.
///
/// **Memory**: `64·B + 16` bytes, 64-byte aligned blocks. **Cost**: one SipHash-1-3,
/// one multiply-shift for the block, one 32-bit multiply for the pattern, `K`
/// single-word bit tests inside one cache line (no multiply per probe).
/// **Error**: higher than the classic filter's at equal bits, because blocks receive
/// uneven loads: at the classic filter's 1 % sizing (9.6 bits/key) and `K = 7` it is
/// 1.18 % where the classic filter gives 1.00 %. [`BlockedBloom::theoretical_fpr`] is
/// the exact expectation after `n` keys (inclusion–exclusion over the query's probes,
/// averaged over the word patterns); measured rates match it at every `K`
/// (`tests/tests/bloom_accuracy.rs`). The sizing functions deliver a requested rate
/// with more bits than the classic filter needs: 4 % more at 1 %, 10 % more at 0.05 %
/// (see [`blocked_blocks`](crate::blocked_blocks)).
///
/// Double hashing would be fine for the classic filter (see the crate docs), but not
/// inside a 512-bit block: 32-bit double hashing `a + i·s` cut to 9 bits repeated a
/// position for 1.4–2 % of keys and correlated the probes of keys and queries, which
/// measured 5–9 % above the theory; an arithmetic progression mod 512 (always
/// distinct) measured 13–16 % above. One bit per word with independent bit fields has
/// neither problem.
///
/// **Health**: [`estimated_fpr`](Self::estimated_fpr) is this filter's exact rate for
/// fresh keys, computed from the words' fill; [`estimated_len`](Self::estimated_len)
/// stays finite past saturation, and [`saturated_blocks`](Self::saturated_blocks)
/// reports blocks whose every bit is set.
///
/// ```
/// use loxo_bloom::{blocked_blocks, blocked_k, BlockedBloom};
/// use loxo_core::Seed;
///
/// const N: u64 = 1_000;
/// let mut f = BlockedBloom::<{ blocked_blocks(N, 0.01) }, { blocked_k(N, 0.01) }>::new(Seed::new(3, 4));
/// f.insert(b"key");
/// assert!(f.contains(b"key"));
/// assert!(!f.insert_checked(b"other")); // certainly new
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct BlockedBloom<const B: usize, const K: u32> {
    blocks: [Block; B],
    seed: Seed,
}

/// One cache line of bits.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
struct Block([u32; BLOCK_WORDS]);

/// A key's probes inside its block (see [`BlockedBloom`]'s docs).
#[derive(Clone, Copy)]
struct Probes {
    /// The digest's low half: bit fields of probes 0–5.
    lo: u32,
    /// `(d >> 32)·PATTERN_MUL`: the pattern (top 8 bits), bit fields of probes 6–9.
    x: u32,
    /// Bit fields of probes 10–15 (computed only when `K > 10`).
    more: u32,
}

impl Probes {
    #[inline(always)]
    fn new<const K: u32>(d: u64) -> Self {
        let lo = d as u32;
        let x = ((d >> 32) as u32).wrapping_mul(PATTERN_MUL);
        let more = if K > 10 {
            fmix32(lo ^ x.rotate_left(16))
        } else {
            0
        };
        Self { lo, x, more }
    }

    /// Word and bit of probe `i` (`i < 16`).
    #[inline(always)]
    fn at(self, i: u32) -> (usize, u32) {
        let w0 = self.x >> 28;
        let step = (self.x >> 24) | 1;
        let word = (w0.wrapping_add(i.wrapping_mul(step)) as usize) & (BLOCK_WORDS - 1);
        let field = if i < 6 {
            self.lo >> (5 * i)
        } else if i < 10 {
            self.x >> (5 * (i - 6))
        } else {
            self.more >> (5 * (i - 10))
        };
        (word, field & 31)
    }
}

/// MurmurHash3's 32-bit finaliser: extra bit fields for `K > 10`.
#[inline(always)]
const fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

impl<const B: usize, const K: u32> BlockedBloom<B, K> {
    /// Bits in the filter, `512·B`.
    pub const BITS: usize = 512 * B;

    const CHECK: () = {
        assert!(B > 0, "BlockedBloom<B, K>: B (blocks) must be at least 1");
        assert!(
            B <= u32::MAX as usize,
            "BlockedBloom<B, K>: at most 2^32 − 1 blocks"
        );
        assert!(K > 0, "BlockedBloom<B, K>: K must be at least 1");
        assert!(
            K <= 16,
            "BlockedBloom<B, K>: at most 16 probes (one per 32-bit word of a block)"
        );
    };

    /// An empty filter whose keys are hashed with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            blocks: [Block([0; BLOCK_WORDS]); B],
            seed,
        }
    }

    seed_and_memory!(" (`64·B` plus the seed, padded to 64)");
    keyed_set_methods!();
    batch_lookups!("its block is", "BlockedBloom", "64, 7");

    /// The key's block (high 32 bits of the digest, Lemire-reduced) and probes.
    #[inline(always)]
    fn locate(h: KeyHash) -> (usize, Probes) {
        let d = h.get();
        (reduce(d, B as u32) as usize, Probes::new::<K>(d))
    }

    /// Inserts a key hashed by the caller with this filter's seed.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) {
        let (b, probes) = Self::locate(h);
        if let Some(Block(words)) = self.blocks.get_mut(b) {
            for i in 0..K {
                let (w, bit) = probes.at(i);
                words[w] |= 1 << bit;
            }
        }
    }

    /// [`contains`](Self::contains) for a key hashed by the caller.
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let (b, probes) = Self::locate(h);
        self.blocks.get(b).is_some_and(|Block(words)| {
            // Branch-free: every probe is tested, so a miss costs one cache line and
            // no mispredicted early exit.
            let mut all = 1;
            for i in 0..K {
                let (w, bit) = probes.at(i);
                all &= words[w] >> bit;
            }
            all & 1 != 0
        })
    }

    /// Prefetches the block a lookup of `h` reads.
    #[inline(always)]
    fn prefetch_hash(&self, h: KeyHash) {
        if let Some(block) = self.blocks.get(Self::locate(h).0) {
            crate::prefetch::prefetch(block);
        }
    }

    /// [`insert_checked`](Self::insert_checked) for a key hashed by the caller.
    #[inline]
    pub fn insert_checked_hash(&mut self, h: KeyHash) -> bool {
        let (b, probes) = Self::locate(h);
        let Some(Block(words)) = self.blocks.get_mut(b) else {
            return false;
        };
        // Test first, write only if a bit was missing: a known key (the common case
        // of a new-flow detector) costs a lookup and no stores.
        let mut all = 1;
        for i in 0..K {
            let (w, bit) = probes.at(i);
            all &= words[w] >> bit;
        }
        if all & 1 == 0 {
            for i in 0..K {
                let (w, bit) = probes.at(i);
                words[w] |= 1 << bit;
            }
        }
        all & 1 != 0
    }

    /// [`insert_checked_hash`](Self::insert_checked_hash) that also says how many
    /// bits the key set: 0 when every probed bit was already set (the key is known,
    /// or a false positive; nothing is written), else how many of its `K` bits were 0
    /// before (`1..=K`: the probes are in distinct words), all in the key's block
    /// ([`block_of_hash`](Self::block_of_hash)). A caller that keeps per-block bit
    /// counts from it can follow the filter's false-positive rate insert by insert,
    /// in O(1), instead of walking every block with
    /// [`estimated_fpr`](Self::estimated_fpr). A known key costs what it costs
    /// `insert_checked_hash`.
    ///
    /// ```
    /// use loxo_bloom::BlockedBloom;
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let mut f = BlockedBloom::<4, 7>::new(seed);
    /// let h = seed.hash(b"flow");
    /// assert_eq!(f.insert_counted_hash(h), 7); // an empty filter: all 7 bits new
    /// assert_eq!(f.insert_counted_hash(h), 0);
    /// assert!(BlockedBloom::<4, 7>::block_of_hash(h) < 4);
    /// assert_eq!(f.count_ones(), 7);
    /// ```
    #[inline]
    pub fn insert_counted_hash(&mut self, h: KeyHash) -> u32 {
        let (b, probes) = Self::locate(h);
        let Some(Block(words)) = self.blocks.get_mut(b) else {
            return 0;
        };
        // The known key's path is `insert_checked_hash`'s, instruction for
        // instruction; the count is taken while writing.
        let mut all = 1;
        for i in 0..K {
            let (w, bit) = probes.at(i);
            all &= words[w] >> bit;
        }
        if all & 1 != 0 {
            return 0;
        }
        let mut newly = 0;
        for i in 0..K {
            let (w, bit) = probes.at(i);
            newly += !(words[w] >> bit) & 1;
            words[w] |= 1 << bit;
        }
        newly
    }

    /// The block a key hashed by the caller lands in (`0..B`).
    #[inline]
    #[must_use]
    pub fn block_of_hash(h: KeyHash) -> usize {
        Self::locate(h).0
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.blocks = [Block([0; BLOCK_WORDS]); B];
    }

    /// True if no bit is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.blocks.iter().all(|b| b.0 == [0; BLOCK_WORDS])
    }

    /// Number of set bits.
    #[must_use]
    pub fn count_ones(&self) -> usize {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| w.count_ones() as usize)
            .sum()
    }

    /// Share of set bits.
    #[must_use]
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / Self::BITS as f64
    }

    /// This filter's false-positive rate for keys that were not inserted, from its
    /// words' fill: a query lands in a uniformly random block, on one of the 64 word
    /// patterns, and each of its `K` bits is set with probability `x_w/32` for a word
    /// holding `x_w` set bits, so the rate is the mean over blocks and patterns of
    /// `Π_i x_{w_i}/32`. Exact for this filter's bits (not an estimate of an
    /// expectation), so a measured rate over `q` absent keys is binomial around it.
    ///
    /// Cost: `64·K` integer multiplies per block (`K ≤ 12`; floating point above).
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        // 1/(64·32^K): the patterns' mean and the words' 32 bits, as a power of two.
        let scale = f64::from_bits((1023 - 6 - 5 * u64::from(K)) << 52);
        let sum: f64 = self.blocks.iter().map(|b| block_fpr::<K>(&b.0)).sum();
        sum * scale / B as f64
    }

    /// Estimated number of distinct keys inserted, finite at any load.
    ///
    /// Every key sets `K` distinct bits of one block, so a given bit stays unset with
    /// probability exactly `1 − K/512B` per key, and `U` unset bits after `n` keys give
    /// `n ≈ ln(U/512B) / ln(1 − K/512B)` (Swamidass–Baldi for this layout, over the whole
    /// filter: saturated blocks hold no unset bits and simply do not contribute).
    /// Within 1 % from the design load up to 10× it while a few hundred bits stay
    /// unset (test `blocked_health_at_ten_times_the_load`). When every bit is set
    /// (`saturated_blocks() == B`) nothing is left to count: it returns the count for
    /// half an unset bit, a floor rather than an estimate.
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        let bits = Self::BITS as f64;
        let unset = (Self::BITS - self.count_ones()) as f64;
        libm::log(unset.max(0.5) / bits) / libm::log1p(-f64::from(K) / bits)
    }

    /// Blocks whose 512 bits are all set: every query landing in one is a false
    /// positive. Non-zero means the filter is past any useful load (at the design load
    /// of a 1 % filter, the chance that a given block is saturated is below 10^−100).
    #[must_use]
    pub fn saturated_blocks(&self) -> usize {
        self.blocks
            .iter()
            .filter(|b| b.0 == [u32::MAX; BLOCK_WORDS])
            .count()
    }

    /// The expected false-positive rate after `n` distinct keys, exact for this
    /// layout (given independent uniform bit fields, which they are for `K ≤ 10`):
    ///
    /// `Σ_{S ⊆ {0..K}} (−1)^{|S|} (1 − (1 − m_S)/B)^n`,
    ///
    /// inclusion–exclusion over the sets `S` of the query's probes that no key covers:
    /// one key lands in the query's block with probability `1/B` and then misses all of
    /// `S` with probability `m_S`, the mean over the 64 word patterns of
    /// `(31/32)^{|S ∩ pattern|}` (it shares a word with the query on `|S ∩ pattern|` of
    /// them and picks the same bit there with probability 1/32 each). Queries are
    /// normalised to words `0..K` (an affine map of the word indices that permutes the
    /// patterns). Block loads are binomial, not Poisson: the formula is exact for `n`
    /// keys.
    ///
    /// Cost: `64·2^K` steps — microseconds at `K = 7`, about 20 ms at `K = 16`; a test
    /// and sizing aid, not for a hot path. Precision: an alternating sum of `2^K` terms,
    /// good to about 10^−11 absolute.
    #[must_use]
    pub fn theoretical_fpr(n: u64) -> f64 {
        exact_fpr(K, B as u64, n)
    }

    /// Union (bit-wise OR).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] if the seeds differ.
    pub fn union_with(&mut self, other: &Self) -> Result<(), MergeError> {
        let words = self.blocks.iter_mut().flat_map(|b| &mut b.0);
        let other_words = other.blocks.iter().flat_map(|b| &b.0);
        crate::words::merge([&self.seed, &other.seed], words, other_words, |x, y| x | y)
    }

    /// Intersection (bit-wise AND); its false-positive rate is higher than that of a
    /// filter built from the intersection (see [`Bloom::intersect_with`](crate::Bloom::intersect_with)).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] if the seeds differ.
    pub fn intersect_with(&mut self, other: &Self) -> Result<(), MergeError> {
        let words = self.blocks.iter_mut().flat_map(|b| &mut b.0);
        let other_words = other.blocks.iter().flat_map(|b| &b.0);
        crate::words::merge([&self.seed, &other.seed], words, other_words, |x, y| x & y)
    }

    const PARAMS: [u32; 4] = [B as u32, K, 0, 0];

    /// Length of the encoded frame: `36 + 64·B + 4`.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(64 * B)
    }

    /// Serializes the filter (kind `blocked-bloom`, params `[B, K]`, payload the
    /// `16·B` 32-bit words, little-endian, block by block — bit `x` of a block is bit
    /// `x mod 8` of its byte `x / 8`).
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let (kind, words) = (
            SketchKind::BlockedBloom,
            self.blocks.iter().flat_map(|b| &b.0),
        );
        crate::words::encode(kind, &self.seed, Self::PARAMS, words, BLOCK_WORDS * B, buf)
    }

    /// Replaces the filter with a serialized one (same `B`, `K`, seed); on error
    /// `self` is unchanged.
    ///
    /// # Errors
    /// As [`Bloom::decode_into`](crate::Bloom::decode_into).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let words = self.blocks.iter_mut().flat_map(|b| &mut b.0);
        let (kind, count) = (SketchKind::BlockedBloom, BLOCK_WORDS * B);
        crate::words::decode(bytes, kind, &self.seed, Self::PARAMS, words, count)
    }
}

/// `Σ_pattern Π_i x_{w_i}` over the 64 word patterns of a block with words `words`
/// (`x_w` = set bits of word `w`); [`BlockedBloom::estimated_fpr`] scales it.
///
/// An odd step `s` visits all 16 words, so the counts read along it, `y_j =
/// x_{j·s mod 16}`, form a cycle, and the pattern `(w0, s)` with `w0 = j0·s mod 16` is
/// the window `y_{j0} … y_{j0+K−1}` of that cycle: each step is 16 sliding windows over
/// a doubled copy of `y`, read without index arithmetic. Every product is the same
/// integer as `Π_i x_{(w0 + i·s) mod 16}`, so the sum, and the `f64` it is turned
/// into, are exactly those of the pattern-by-pattern definition (test
/// `block_fpr_is_the_pattern_sum`). For `K ≤ 12` the products are exact integers: a
/// count is at most 32 = 2^5, so six factors fit a `u32` and two such halves a 64-bit
/// product (one `UMULL` on a Cortex-M4); 64 products of at most `2^(5K)` fit a `u64`
/// up to `K = 11` and a `u128` at 12. This is about a third of the instructions of the
/// direct loop (a walk of the new-flow filter at every epoch end of `loxo-flow`).
fn block_fpr<const K: u32>(words: &[u32; BLOCK_WORDS]) -> f64 {
    let x = words.map(u32::count_ones);
    let k = K as usize;
    if (2..=7).contains(&K) {
        let mut sum = 0u64;
        for s in PATTERN_STEPS {
            sum += window_products::<K>(&x, s as usize);
        }
        sum as f64
    } else if K <= 12 {
        let mut sum = 0u128;
        for s in PATTERN_STEPS {
            let mut y = [0u32; 2 * BLOCK_WORDS];
            for (j, v) in y.iter_mut().enumerate() {
                *v = x[(j * s as usize) & (BLOCK_WORDS - 1)];
            }
            // K ≤ 11: 16 products of at most 2^55 add up to at most 2^59. At K = 12
            // (products up to 2^60) each goes straight into the u128.
            let mut part = 0u64;
            for j0 in 0..BLOCK_WORDS {
                let window = &y[j0..j0 + k];
                let (a, b) = window.split_at(k.min(6));
                let lo: u32 = a.iter().product();
                let hi: u32 = b.iter().product();
                let prod = u64::from(lo) * u64::from(hi);
                if K <= 11 {
                    part += prod;
                } else {
                    sum += u128::from(prod);
                }
            }
            sum += u128::from(part);
        }
        sum as f64
    } else {
        let mut sum = 0.0;
        for s in PATTERN_STEPS {
            for w0 in 0..BLOCK_WORDS as u32 {
                let mut prod = 1.0;
                for i in 0..K {
                    prod *= f64::from(x[(w0.wrapping_add(i * s) & 15) as usize]);
                }
                sum += prod;
            }
        }
        sum
    }
}

/// `Σ_{j0 < 16} Π_{i < K} y_{j0+i}` for the cycle `y_j = x_{j·s mod 16}` (odd `s`),
/// `2 ≤ K ≤ 7`, exactly, with three multiplies per window instead of `K − 1`.
///
/// The doubled cycle is cut into blocks of `K`; a window that starts at offset
/// `o ≠ 0` of a block is the block's suffix from `o` (`K − o` factors) times the next
/// block's prefix of `o` factors, both running products; a window at offset 0 is a
/// whole block, `y` at its start times the suffix after it. Every partial product has
/// at most `K − 1 ≤ 6` factors of at most 32, so it fits a `u32`, and a window is one
/// 32×32→64-bit multiply of two of them: the same integers as the direct products,
/// their sum below 16 · 2^35.
fn window_products<const K: u32>(x: &[u32; BLOCK_WORDS], s: usize) -> u64 {
    const LEN: usize = 2 * BLOCK_WORDS;
    let k = K as usize;
    // Windows start at 0..16 and reach 16 + K − 1 ≤ 22 < LEN.
    let len = BLOCK_WORDS + k - 1;
    let mut y = [0u32; LEN];
    for (j, v) in y.iter_mut().enumerate().take(len) {
        *v = x[(j * s) & (BLOCK_WORDS - 1)];
    }
    // suf[i] = y[i] · … · y[end of i's block], pre[i] = y[start of i's block] · … · y[i]
    // (wrapping only where a whole block of K ≥ 7 factors could exceed 32 bits: those
    // entries are never read).
    let (mut suf, mut pre) = ([1u32; LEN], [1u32; LEN]);
    let mut i = len;
    while i > 0 {
        i -= 1;
        let last = (i + 1).is_multiple_of(k) || i + 1 == len;
        suf[i] = if last {
            y[i]
        } else {
            y[i].wrapping_mul(suf[i + 1])
        };
    }
    for i in 0..len {
        pre[i] = if i % k == 0 {
            y[i]
        } else {
            pre[i - 1].wrapping_mul(y[i])
        };
    }
    let mut sum = 0u64;
    for j0 in 0..BLOCK_WORDS {
        sum += if j0 % k == 0 {
            u64::from(y[j0]) * u64::from(suf[j0 + 1])
        } else {
            u64::from(suf[j0]) * u64::from(pre[j0 + k - 1])
        };
    }
    sum
}

/// [`BlockedBloom::theoretical_fpr`] for `k` probes (`1..=16`), `blocks` blocks and `n`
/// keys.
pub(crate) fn exact_fpr(k: u32, blocks: u64, n: u64) -> f64 {
    let k = k.clamp(1, 16);
    // Bit i of a pattern's mask: the pattern covers word i, i.e. the query's probe i.
    let mut masks = [0u32; 64];
    for (mask, (s, w0)) in masks.iter_mut().zip(
        PATTERN_STEPS
            .iter()
            .flat_map(|&s| (0..BLOCK_WORDS as u32).map(move |w0| (s, w0))),
    ) {
        for i in 0..k {
            let w = w0.wrapping_add(i * s) & 15;
            if w < k {
                *mask |= 1 << w;
            }
        }
    }
    let mut miss = [1.0f64; 17]; // (31/32)^t
    for t in 1..miss.len() {
        miss[t] = miss[t - 1] * (31.0 / 32.0);
    }
    let (n, blocks) = (n as f64, blocks.max(1) as f64);
    let mut total = 0.0;
    for set in 1u32..1 << k {
        let m_s: f64 = masks
            .iter()
            .map(|&mask| {
                miss.get((set & mask).count_ones() as usize)
                    .copied()
                    .unwrap_or(0.0)
            })
            .sum::<f64>()
            / 64.0;
        // (1 − (1 − m_S)/B)^n − 1: the −1s of all terms cancel (Σ_S (−1)^{|S|} = 0), and
        // dropping them keeps precision when the rate is small.
        let term = libm::expm1(n * libm::log1p(-(1.0 - m_s) / blocks));
        total += if set.count_ones() % 2 == 0 {
            term
        } else {
            -term
        };
    }
    total
}

impl<const B: usize, const K: u32> fmt::Debug for BlockedBloom<B, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockedBloom")
            .field("blocks", &B)
            .field("k", &K)
            .field("seed", &self.seed)
            .field("set_bits", &self.count_ones())
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl<const B: usize, const K: u32> defmt::Format for BlockedBloom<B, K> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "BlockedBloom {{ bits: {}, k: {}, set: {} }}",
            Self::BITS,
            K,
            self.count_ones()
        );
    }
}

#[cfg(test)]
mod tests {
    use loxo_core::{KeyHash, Seed};

    use super::{block_fpr, exact_fpr, BlockedBloom, BLOCK_WORDS, PATTERN_STEPS};

    /// The definition, pattern by pattern, in exact integers (`u128`: 32^16 · 64 fits).
    fn pattern_sum(words: &[u32; BLOCK_WORDS], k: u32) -> u128 {
        let x = words.map(u32::count_ones);
        let mut sum = 0u128;
        for s in PATTERN_STEPS {
            for w0 in 0..BLOCK_WORDS as u32 {
                let mut prod = 1u128;
                for i in 0..k {
                    prod *= u128::from(x[(w0.wrapping_add(i * s) & 15) as usize]);
                }
                sum += prod;
            }
        }
        sum
    }

    fn check_block_fpr<const K: u32>(words: &[u32; BLOCK_WORDS]) {
        let want = pattern_sum(words, K);
        let got = block_fpr::<K>(words);
        if K <= 12 {
            // Exact integers: the same sum, hence the same f64.
            assert_eq!(got.to_bits(), (want as f64).to_bits(), "K = {K}");
        } else {
            assert!((got - want as f64).abs() <= 1e-12 * want as f64, "K = {K}");
        }
    }

    /// The sliding-window sum is bit for bit the pattern-by-pattern one, on random
    /// blocks of every fill, on full blocks (the largest products: 32^K) and on blocks
    /// with empty words (zero products), for every K.
    #[test]
    fn block_fpr_is_the_pattern_sum() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            x = loxo_core::mix64(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
            x
        };
        let check = |w: &[u32; BLOCK_WORDS]| {
            check_block_fpr::<1>(w);
            check_block_fpr::<2>(w);
            check_block_fpr::<3>(w);
            check_block_fpr::<4>(w);
            check_block_fpr::<5>(w);
            check_block_fpr::<6>(w);
            check_block_fpr::<7>(w);
            check_block_fpr::<8>(w);
            check_block_fpr::<9>(w);
            check_block_fpr::<10>(w);
            check_block_fpr::<11>(w);
            check_block_fpr::<12>(w);
            check_block_fpr::<13>(w);
            check_block_fpr::<16>(w);
        };
        check(&[u32::MAX; BLOCK_WORDS]);
        check(&[0; BLOCK_WORDS]);
        for density in 0..8 {
            for _ in 0..40 {
                let mut w = [0u32; BLOCK_WORDS];
                for v in &mut w {
                    // AND of (8 − density) random words: fill about 2^−(8−density).
                    *v = u32::MAX;
                    for _ in density..8 {
                        *v &= next() as u32;
                    }
                    if next() % 7 == 0 {
                        *v = if next() % 2 == 0 { 0 } else { u32::MAX };
                    }
                }
                check(&w);
            }
        }
    }

    /// The words a key sets, inserted alone into an empty filter.
    fn masks<const B: usize, const K: u32>(d: u64) -> (usize, [u32; 16]) {
        let mut f = BlockedBloom::<B, K>::new(Seed::new(1, 2));
        f.insert_hash(KeyHash::from_u64(d));
        let (b, block) = f
            .blocks
            .iter()
            .enumerate()
            .find(|(_, b)| b.0 != [0; 16])
            .map(|(i, b)| (i, b.0))
            .unwrap_or_default();
        (b, block)
    }

    /// A key's (word, bit) per probe at `K = 7`.
    type Probes7 = [(usize, u32); 7];

    /// Known answers, computed in Python from the formulas of `docs/format.md` (block
    /// `⌊(d >> 32)·B/2^32⌋`; `x = (d >> 32)·0x9e3779b9`, words `(x >> 28) + i·((x >> 24)
    /// | 1) mod 16`; bits: 5-bit fields of the low half, of `x`, then of
    /// `fmix32(lo ⊕ rotl(x, 16))`).
    #[test]
    fn probes_match_the_format_doc() {
        let k16: [(u64, usize, [u32; 16]); 3] = [
            (0, 0, [1; 16]),
            (
                0x0123_4567_89ab_cdef,
                4,
                [
                    0x0080_0000,
                    0x0008_0000,
                    0x1000_0000,
                    0x0400_0000,
                    0x0000_1000,
                    0x0000_8000,
                    0x0000_0040,
                    0x0020_0000,
                    0x0000_8000,
                    0x0010_0000,
                    0x0080_0000,
                    0x0000_0040,
                    0x0000_0010,
                    0x0100_0000,
                    0x0008_0000,
                    0x0000_8000,
                ],
            ),
            (
                u64::MAX,
                999,
                [
                    0x0001_0000,
                    0x0400_0000,
                    0x0000_0001,
                    0x0000_0800,
                    0x1000_0000,
                    0x0000_2000,
                    0x8000_0000,
                    0x8000_0000,
                    0x8000_0000,
                    0x8000_0000,
                    0x8000_0000,
                    0x8000_0000,
                    0x0000_0080,
                    0x0004_0000,
                    0x0000_0002,
                    0x0002_0000,
                ],
            ),
        ];
        for (d, block, words) in k16 {
            assert_eq!(masks::<1000, 16>(d), (block, words), "{d:#x}");
        }
        // K = 7 in 96 blocks (the flow monitor's filter): (word, bit) per probe.
        let k7: [(u64, usize, Probes7); 2] = [
            (
                0x0123_4567_89ab_cdef,
                0,
                [
                    (15, 15),
                    (8, 15),
                    (1, 19),
                    (10, 23),
                    (3, 26),
                    (12, 4),
                    (5, 15),
                ],
            ),
            (
                0xdead_beef_0000_0001,
                83,
                [(9, 1), (12, 0), (15, 0), (2, 0), (5, 0), (8, 0), (11, 23)],
            ),
        ];
        for (d, block, probes) in k7 {
            let mut words = [0u32; 16];
            for (w, bit) in probes {
                words[w] |= 1 << bit;
            }
            assert_eq!(masks::<96, 7>(d), (block, words), "{d:#x}");
        }
    }

    /// A key's K probes hit K distinct words, one bit each, for every K.
    #[test]
    fn k_distinct_words_one_bit_each() {
        let seed = Seed::new(0xd157, 0x1);
        macro_rules! each_k {
            ($($k:literal)*) => {$(
                for key in 0u32..2_000 {
                    let (_, words) = masks::<3, $k>(seed.hash(&key.to_le_bytes()).get());
                    assert_eq!(words.iter().filter(|w| **w != 0).count(), $k);
                    assert!(words.iter().all(|w| w.count_ones() <= 1));
                }
            )*};
        }
        each_k!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }

    /// Cases the exact theory reduces to a short sum: one probe (a bit is set by a key
    /// with probability 1/512B), and sixteen (every key covers every word, so given
    /// the block's `J` keys the query's 16 bits are independent: `E[(1 − c^J)^16]`,
    /// `c = 31/32`, `J ~ Binomial(n, 1/B)`, i.e. `Σ_i (−1)^i C(16, i)(1 − (1 − c^i)/B)^n`;
    /// with one block, `J = n`).
    #[test]
    fn exact_theory_closed_forms() {
        let c: f64 = 31.0 / 32.0;
        for (b, n) in [(1u64, 10u64), (1, 200), (100, 5_000), (10_000, 1_000_000)] {
            let (bf, nf) = (b as f64, n as f64);
            // (1 − x)^n as exp(n·ln(1 − x)): pow(1 − x, n) loses x's low digits.
            let pow1m = |x: f64| libm::exp(nf * libm::log1p(-x));
            let one = 1.0 - pow1m(1.0 / (512.0 * bf));
            assert!(
                (exact_fpr(1, b, n) - one).abs() <= 1e-12 * one,
                "{} vs {one}",
                exact_fpr(1, b, n)
            );
            let mut sixteen = 0.0;
            let mut binom = 1.0;
            for i in 0..=16 {
                let term = binom * pow1m((1.0 - libm::pow(c, f64::from(i))) / bf);
                sixteen += if i % 2 == 0 { term } else { -term };
                binom = binom * f64::from(16 - i) / f64::from(i + 1);
            }
            if b == 1 {
                let direct = libm::pow(1.0 - libm::pow(c, nf), 16.0);
                assert!((sixteen - direct).abs() <= 1e-12, "{sixteen} vs {direct}");
            }
            // The enumeration is an alternating sum of 2^16 terms: 10^−11 absolute.
            let exact = exact_fpr(16, b, n);
            assert!(
                (exact - sixteen).abs() <= 1e-11_f64.max(1e-9 * sixteen),
                "{exact} vs {sixteen}"
            );
        }
        assert_eq!(exact_fpr(7, 10, 0), 0.0);
    }

    #[test]
    fn estimates_of_an_empty_and_a_full_filter() {
        let mut f = BlockedBloom::<4, 7>::new(Seed::new(1, 2));
        assert_eq!(
            (f.estimated_fpr(), f.estimated_len(), f.saturated_blocks()),
            (0.0, 0.0, 0)
        );
        for k in 0u32..20_000 {
            f.insert(&k.to_le_bytes());
        }
        assert_eq!((f.estimated_fpr(), f.saturated_blocks()), (1.0, 4));
        // Half an unset bit: ln(0.5/2048)/ln(1 − 7/2048).
        let floor = libm::log(0.5 / 2048.0) / libm::log1p(-7.0 / 2048.0);
        assert_eq!(f.estimated_len(), floor);
    }
}
