//! The register-blocked Bloom filter [`RegisterBloom<W, K>`].

use core::fmt;

use loxo_core::wire::{self, SketchKind};
use loxo_core::{reduce, DecodeError, EncodeError, KeyHash, MergeError, Seed};

/// Odd multiplier spreading the digest's low half over the 64 bits the in-word
/// positions are cut from (2^64/φ).
const MASK_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// Bits of one word.
const WORD_BITS: u32 = 64;

/// Most probes one multiply provides: ten 6-bit positions of a 64-bit product.
const MAX_K: u32 = 10;

/// A register-blocked Bloom filter (Putze, Sanders, Singler 2007, "one word per
/// key"; the layout of Impala's and fastbloom's 64-bit blocks): the key's hash picks
/// one 64-bit word and all `K` probes are bits of it, so a lookup is one load and one
/// mask compare.
///
/// * `W` — number of 64-bit words (`1 ≤ W < 2^32`): `64·W` bits, `8·W` bytes;
///   [`register_words`](crate::register_words) and
///   [`register_k`](crate::register_k) size it for a capacity and a rate.
/// * `K` — bits per key, `1..=10` (one multiply yields ten 6-bit positions). At 10–12
///   bits per key `K = 5` is optimal, not the classic filter's 7.
///
/// ```compile_fail,E0080
/// let _ = loxo_bloom::RegisterBloom::<0, 5>::new(loxo_core::Seed::new(1, 2));
/// ```
/// ```compile_fail,E0080
/// let _ = loxo_bloom::RegisterBloom::<8, 11>::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// **Memory**: `8·W + 16` bytes. **Cost**: one SipHash-1-3, one multiply-shift for
/// the word, one 64-bit multiply and `K` shift-ors for the mask (on 32-bit targets
/// `K` loads from a table of one-hot words instead of 64-bit shifts), one load.
/// **Error**: the highest of the family at equal bits — a word holds a Poisson number
/// of keys, and a key's `K` positions may repeat. The exact rate after `n` keys is
/// [`RegisterBloom::theoretical_fpr`]; at the classic filter's 1 % sizing (9.6
/// bits/key) it is ≈ 2.0 % with `K = 5` (blocked: 1.18 %, classic: 1.0 %). To get a
/// rate `p` it needs more bits per key, which the sizing functions supply: 12.1 at
/// 1 % (`K = 5`), 15.0 at 0.5 %, 29.1 at 0.05 % (`K = 8`), against the classic
/// filter's 9.6, 11.0 and 15.8. In exchange it is the fastest lookup: the crate README
/// has the numbers.
///
/// ```
/// use loxo_bloom::{register_k, register_words, RegisterBloom};
/// use loxo_core::Seed;
///
/// const N: u64 = 1_000;
/// let mut f = RegisterBloom::<{ register_words(N, 0.01) }, { register_k(N, 0.01) }>::new(Seed::new(3, 4));
/// f.insert(b"key");
/// assert!(f.contains(b"key"));
/// assert!(!f.insert_checked(b"other")); // certainly new
/// assert!(f.insert_checked(b"other"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RegisterBloom<const W: usize, const K: u32> {
    words: [u64; W],
    seed: Seed,
}

impl<const W: usize, const K: u32> RegisterBloom<W, K> {
    /// Bits in the filter, `64·W`.
    pub const BITS: usize = 64 * W;

    const CHECK: () = {
        assert!(W > 0, "RegisterBloom<W, K>: W (words) must be at least 1");
        assert!(
            W <= u32::MAX as usize,
            "RegisterBloom<W, K>: at most 2^32 − 1 words"
        );
        assert!(K > 0, "RegisterBloom<W, K>: K must be at least 1");
        assert!(K <= MAX_K, "RegisterBloom<W, K>: at most 10 bits per key");
    };

    /// An empty filter whose keys are hashed with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            words: [0; W],
            seed,
        }
    }

    seed_and_memory!(": `8·W + 16`");
    keyed_set_methods!();
    batch_lookups!("its word is", "RegisterBloom", "128, 5");

    /// The word (high 32 bits of the digest, Lemire-reduced) and the key's mask: the
    /// low 32 bits, doubled to 64 and multiplied by an odd constant, cut into `K`
    /// 6-bit positions from the top (position `i` is bits `58 − 6i ..= 63 − 6i` of
    /// the product).
    #[inline(always)]
    fn locate(h: KeyHash) -> (usize, u64) {
        let d = h.get();
        let word = reduce(d, W as u32) as usize;
        let lo = d & 0xffff_ffff;
        let x = (lo | lo << 32).wrapping_mul(MASK_MUL);
        let mut mask = 0u64;
        for i in 0..K {
            // K ≤ 10, so 58 − 6i ≥ 4.
            mask |= one_hot((x >> (58 - 6 * i)) as u32 & 63);
        }
        (word, mask)
    }

    /// Inserts a key hashed by the caller with this filter's seed.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) {
        let (w, mask) = Self::locate(h);
        if let Some(x) = self.words.get_mut(w) {
            *x |= mask;
        }
    }

    /// [`contains`](Self::contains) for a key hashed by the caller.
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let (w, mask) = Self::locate(h);
        self.words.get(w).is_some_and(|x| x & mask == mask)
    }

    /// Prefetches the word a lookup of `h` reads.
    #[inline(always)]
    fn prefetch_hash(&self, h: KeyHash) {
        if let Some(x) = self.words.get(Self::locate(h).0) {
            crate::prefetch::prefetch(x);
        }
    }

    /// [`insert_checked`](Self::insert_checked) for a key hashed by the caller.
    #[inline]
    pub fn insert_checked_hash(&mut self, h: KeyHash) -> bool {
        let (w, mask) = Self::locate(h);
        let Some(x) = self.words.get_mut(w) else {
            return false;
        };
        let present = *x & mask == mask;
        *x |= mask;
        present
    }

    /// [`insert_checked_hash`](Self::insert_checked_hash) that also says how full
    /// the key's word was: `None` when every bit of the key's mask was already set
    /// (the key is known, or a false positive; nothing is written — the known key's
    /// path costs what `insert_checked_hash`'s does), else the word's set bits
    /// before and after the insert ([`WordFill`], `before < after ≤ 64`). A caller
    /// that sums [`word_rate`](Self::word_rate) over the words, updating the sum by
    /// `word_rate(after) − word_rate(before)` at each insert, follows the filter's
    /// exact false-positive rate ([`estimated_fpr`](Self::estimated_fpr) is that sum
    /// divided by `W`) in O(1) per insert, without walking the words and without
    /// keeping a counter per word.
    ///
    /// ```
    /// use loxo_bloom::RegisterBloom;
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let mut f = RegisterBloom::<4, 5>::new(seed);
    /// let h = seed.hash(b"flow");
    /// let fill = f.insert_counted_hash(h).expect("an empty filter: new");
    /// assert_eq!(fill.before, 0);
    /// assert!((1..=5).contains(&fill.after)); // 5 positions, some may coincide
    /// assert_eq!(f.insert_counted_hash(h), None); // known
    /// assert_eq!(f.count_ones(), fill.after as usize);
    /// let rate = RegisterBloom::<4, 5>::word_rate(fill.after) / 4.0;
    /// assert!((rate - f.estimated_fpr()).abs() < 1e-15);
    /// ```
    #[inline]
    pub fn insert_counted_hash(&mut self, h: KeyHash) -> Option<WordFill> {
        let (w, mask) = Self::locate(h);
        let x = self.words.get_mut(w)?;
        let old = *x;
        if old & mask == mask {
            return None;
        }
        let new = old | mask;
        *x = new;
        Some(WordFill {
            before: old.count_ones(),
            after: new.count_ones(),
        })
    }

    /// The false-positive rate of one word with `ones` set bits (clamped to 64):
    /// `(ones/64)^K`, the chance that an absent key's `K` positions — independent
    /// and uniform over the word's 64 bits, so they may repeat — all fall on set
    /// bits. The filter's rate is the mean of this over its words
    /// ([`estimated_fpr`](Self::estimated_fpr)).
    ///
    /// ```
    /// use loxo_bloom::RegisterBloom;
    /// assert_eq!(RegisterBloom::<8, 5>::word_rate(0), 0.0);
    /// assert_eq!(RegisterBloom::<8, 5>::word_rate(32), 1.0 / 32.0);
    /// assert_eq!(RegisterBloom::<8, 5>::word_rate(64), 1.0);
    /// ```
    #[must_use]
    pub fn word_rate(ones: u32) -> f64 {
        libm::pow(
            f64::from(ones.min(WORD_BITS)) / f64::from(WORD_BITS),
            f64::from(K),
        )
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.words = [0; W];
    }

    /// True if no bit is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of set bits.
    #[must_use]
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Share of set bits.
    #[must_use]
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / Self::BITS as f64
    }

    /// False-positive rate estimated from each word's fill: the mean over words of
    /// the chance that a query's positions all fall on that word's `x` set bits,
    /// `Σ_q P(q distinct of K)·C(x, q)/C(64, q)`.
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        let distinct = distinct_positions(K);
        let mut by_fill = [0.0f64; WORD_BITS as usize + 1];
        for (x, p) in by_fill.iter_mut().enumerate() {
            // C(x, q)/C(64, q) = Π_{t<q} (x − t)/(64 − t).
            let mut ratio = 1.0;
            for (q, pq) in distinct.iter().enumerate() {
                if q > 0 {
                    let t = (q - 1) as f64;
                    ratio *= ((x as f64 - t) / (f64::from(WORD_BITS) - t)).max(0.0);
                }
                *p += pq * ratio;
            }
        }
        let sum: f64 = self
            .words
            .iter()
            .map(|w| by_fill.get(w.count_ones() as usize).copied().unwrap_or(1.0))
            .sum();
        sum / W as f64
    }

    /// Estimated number of distinct keys, infinite once every bit is set. The
    /// Swamidass–Baldi idea with this layout's expectation: `n` keys spread as
    /// Poisson(`n/W`) over the words leave a bit unset with probability
    /// `exp(−(n/W)·(1 − (63/64)^K))` (a key's `K` positions may coincide, so it sets
    /// fewer than `K` bits on average), hence `n ≈ −W·ln(1 − X/64W) / (1 − (63/64)^K)`
    /// for `X` set bits. (The classic formula would under-count by ≈ 3 % at `K = 5`.)
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        let set = self.count_ones();
        if set >= Self::BITS {
            return f64::INFINITY;
        }
        let per_key = 1.0 - libm::pow(1.0 - 1.0 / f64::from(WORD_BITS), f64::from(K));
        -(W as f64) * libm::log(1.0 - set as f64 / Self::BITS as f64) / per_key
    }

    /// The exact expected false-positive rate after `n` distinct keys. A query's `K`
    /// draws hit `q` distinct positions of its word with probability `P(q)`
    /// (occupancy); a given set of `i` positions stays clear of one key with
    /// probability `1 − (1 − m_i)/W`, `m_i = (1 − i/64)^K` (the key lands in another
    /// word, or in this one and misses all `i`), independently over the `n` keys; by
    /// inclusion–exclusion over the positions left clear:
    /// `Σ_i (−1)^i A_i (1 − (1 − m_i)/W)^n` with `A_i = Σ_q P(q)·C(q, i)`.
    #[must_use]
    pub fn theoretical_fpr(n: u64) -> f64 {
        exact_fpr(K, W as u64, n)
    }

    /// Union (bit-wise OR).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] if the seeds differ.
    pub fn union_with(&mut self, other: &Self) -> Result<(), MergeError> {
        let seeds = [&self.seed, &other.seed];
        crate::words::merge(seeds, &mut self.words, &other.words, |x, y| x | y)
    }

    /// Intersection (bit-wise AND); its false-positive rate is higher than that of a
    /// filter built from the intersection (see [`Bloom::intersect_with`](crate::Bloom::intersect_with)).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] if the seeds differ.
    pub fn intersect_with(&mut self, other: &Self) -> Result<(), MergeError> {
        let seeds = [&self.seed, &other.seed];
        crate::words::merge(seeds, &mut self.words, &other.words, |x, y| x & y)
    }

    const PARAMS: [u32; 4] = [W as u32, K, 0, 0];

    /// Length of the encoded frame: `36 + 8·W + 4`.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(8 * W)
    }

    /// Serializes the filter (kind `register-bloom`, params `[W, K]`, payload the `W`
    /// words, `u64` little-endian).
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let (kind, words) = (SketchKind::RegisterBloom, &self.words);
        crate::words::encode(kind, &self.seed, Self::PARAMS, words, W, buf)
    }

    /// Replaces the filter with a serialized one (same `W`, `K`, seed); on error
    /// `self` is unchanged.
    ///
    /// # Errors
    /// As [`Bloom::decode_into`](crate::Bloom::decode_into).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let (kind, words) = (SketchKind::RegisterBloom, &mut self.words);
        crate::words::decode(bytes, kind, &self.seed, Self::PARAMS, words, W)
    }
}

/// `1 << p` for `p < 64`, as one shift where 64-bit shifts are native.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn one_hot(p: u32) -> u64 {
    1u64 << (p & 63)
}

/// `1 << p` for `p < 64`, as one load from [`ONE_HOT`] on 32-bit targets, where a
/// 64-bit shift by a variable amount costs about six instructions (Cortex-M4: a
/// lookup 23 instructions instead of 75 at `K = 5`).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn one_hot(p: u32) -> u64 {
    ONE_HOT[(p & 63) as usize]
}

/// `ONE_HOT[p] = 1 << p` (512 bytes of flash, 32-bit targets only).
#[cfg(any(test, not(target_pointer_width = "64")))]
static ONE_HOT: [u64; 64] = {
    let mut t = [0; 64];
    let mut p = 0;
    while p < 64 {
        t[p] = 1 << p;
        p += 1;
    }
    t
};

/// What [`RegisterBloom::insert_counted_hash`] did to the key's word: its number of
/// set bits before and after the insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WordFill {
    /// Set bits of the word before the insert (`0..64`).
    pub before: u32,
    /// Set bits after it (`before + 1..=before + K`, at most 64).
    pub after: u32,
}

/// [`RegisterBloom::theoretical_fpr`] for `k` bits per key (`1..=10`), `words` words
/// and `n` keys.
pub(crate) fn exact_fpr(k: u32, words: u64, n: u64) -> f64 {
    let m = crate::sizing::register_mixture(k.clamp(1, MAX_K));
    let (n, words) = (n as f64, words.max(1) as f64);
    // Term i = 0 is A_0 = 1 (rate 0); the others' (·)^n − 1 parts cancel it, and
    // summing them with expm1 keeps precision when the rate is small.
    let mut total = 0.0;
    for (coef, rate) in m.coef.iter().zip(&m.rate).take(m.terms).skip(1) {
        total += coef * libm::expm1(n * libm::log1p(-rate / words));
    }
    total
}

/// `P(q)` for `q = 0..=K`: the chance that `K` uniform draws from 64 positions hit
/// exactly `q` distinct ones.
fn distinct_positions(k: u32) -> [f64; MAX_K as usize + 1] {
    // Row-by-row occupancy recursion: after one more draw, q distinct stays q with
    // probability q/64 or grows from q − 1 with probability (64 − q + 1)/64.
    let mut p = [0.0f64; MAX_K as usize + 1];
    p[0] = 1.0;
    let m = f64::from(WORD_BITS);
    for _ in 0..k.min(MAX_K) {
        let mut next = [0.0f64; MAX_K as usize + 1];
        for (q, slot) in next.iter_mut().enumerate() {
            let stay = p[q] * q as f64 / m;
            let grow = if q > 0 {
                p[q - 1] * (m - (q - 1) as f64) / m
            } else {
                0.0
            };
            *slot = stay + grow;
        }
        p = next;
    }
    p
}

impl<const W: usize, const K: u32> fmt::Debug for RegisterBloom<W, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisterBloom")
            .field("words", &W)
            .field("k", &K)
            .field("seed", &self.seed)
            .field("set_bits", &self.count_ones())
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl<const W: usize, const K: u32> defmt::Format for RegisterBloom<W, K> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "RegisterBloom {{ bits: {}, k: {}, set: {} }}",
            Self::BITS,
            K,
            self.count_ones()
        );
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use loxo_core::KeyHash;

    use super::{distinct_positions, RegisterBloom};

    /// The word and mask of `docs/format.md`, recomputed from its text.
    #[test]
    fn probes_match_the_format_doc() {
        for d in [
            0u64,
            1,
            0x0123_4567_89ab_cdef,
            u64::MAX,
            0xdead_beef_0000_0001,
        ] {
            let (word, mask) = RegisterBloom::<1000, 7>::locate(KeyHash::from_u64(d));
            assert_eq!(word as u64, ((d >> 32) * 1000) >> 32);
            let a = d & 0xffff_ffff;
            let x = a
                .wrapping_mul((1 << 32) + 1)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let expected = (0..7).fold(0u64, |m, i| m | 1 << (x.wrapping_shl(6 * i) >> 58));
            assert_eq!(mask, expected, "{d:#x}");
        }
        // Literal known answers (Python, from the same text), so that a change to both
        // the code and the recomputation above still shows.
        for (d, word, mask) in [
            (0u64, 0, 0x0000_0000_0000_0001u64),
            (1, 0, 0x2028_0080_0100_0080),
            (0x0123_4567_89ab_cdef, 4, 0x0680_0804_0018_0000),
            (u64::MAX, 999, 0x0000_0104_1102_0044),
            (0xdead_beef_0000_0001, 869, 0x2028_0080_0100_0080),
        ] {
            assert_eq!(
                RegisterBloom::<1000, 7>::locate(KeyHash::from_u64(d)),
                (word, mask)
            );
        }
    }

    /// The closed form behind `theoretical_fpr` and the sizing equals the direct sum
    /// over a word's Poisson(λ) load `j`: `Σ_j Poisson(j; λ) Σ_q P(q) Σ_i (−1)^i C(q, i)
    /// (1 − i/64)^{jK}` (the formula this crate documented before), and the binomial
    /// form of `exact_fpr` tends to it for many words.
    #[test]
    fn closed_form_matches_the_direct_sum() {
        for k in 1..=10 {
            let distinct = distinct_positions(k);
            for lambda in [0.0625, 1.0, 7.25, 30.0] {
                let mut direct = 0.0;
                let mut p = libm::exp(-lambda);
                for j in 0..200u32 {
                    if j > 0 {
                        p *= lambda / f64::from(j);
                    }
                    let draws = f64::from(j) * f64::from(k);
                    for (q, pq) in distinct.iter().enumerate() {
                        let mut binom = 1.0;
                        for i in 0..=q {
                            if i > 0 {
                                binom = binom * (q + 1 - i) as f64 / i as f64;
                            }
                            let t = binom * libm::pow(1.0 - i as f64 / 64.0, draws);
                            direct += p * pq * if i % 2 == 0 { t } else { -t };
                        }
                    }
                }
                let closed = crate::sizing::register_mixture(k).at(lambda);
                assert!(
                    (closed - direct).abs() <= 1e-12 + 1e-9 * direct,
                    "k {k} λ {lambda}: {closed} vs {direct}"
                );
                let words = 1u64 << 24;
                let binomial = super::exact_fpr(k, words, (lambda * words as f64) as u64);
                assert!(
                    (binomial - direct).abs() <= 1e-12 + 1e-6 * direct,
                    "k {k} λ {lambda}: {binomial} vs {direct}"
                );
            }
        }
    }

    /// `word_rate(c) = (c/64)^K` is the occupancy form `Σ_q P(q)·C(c, q)/C(64, q)`
    /// that `estimated_fpr` uses, for every fill; and the sum of `word_rate` followed
    /// through `insert_counted_hash` is `W·estimated_fpr` at every step.
    #[test]
    fn followed_word_rates_are_the_estimated_rate() {
        type F = RegisterBloom<64, 5>;
        let distinct = distinct_positions(5);
        for c in 0..=64u32 {
            let mut occupancy = 0.0;
            let mut ratio = 1.0;
            for (q, pq) in distinct.iter().enumerate() {
                if q > 0 {
                    let t = (q - 1) as f64;
                    ratio *= ((f64::from(c) - t) / (64.0 - t)).max(0.0);
                }
                occupancy += pq * ratio;
            }
            let r = F::word_rate(c);
            assert!(
                (r - occupancy).abs() <= 1e-15 + 1e-12 * r,
                "{c}: {r} vs {occupancy}"
            );
        }
        assert_eq!(F::word_rate(65), 1.0);
        let mut f = F::new(loxo_core::Seed::new(7, 8));
        let (mut sum, mut known) = (0.0, 0);
        for i in 0..600u64 {
            match f.insert_counted_hash(f.seed().hash(&i.to_le_bytes())) {
                None => known += 1,
                Some(fill) => {
                    assert!(fill.before < fill.after && fill.after <= fill.before + 5);
                    sum += F::word_rate(fill.after) - F::word_rate(fill.before);
                }
            }
            if i % 97 == 0 || i == 599 {
                let exact = f.estimated_fpr();
                assert!((sum / 64.0 - exact).abs() <= 1e-12, "{i}: {sum} vs {exact}");
            }
        }
        // 600 keys in 4 096 bits: most are new, a few are false positives.
        assert!((1..100).contains(&known), "{known}");
        assert_eq!(
            f.insert_counted_hash(f.seed().hash(&7u64.to_le_bytes())),
            None
        );
    }

    /// The rate `estimated_fpr` states is the one absent keys meet: 200 000 fresh
    /// keys against filters at 1×, 2× and 4× a 1 % sizing, within 4σ of the binomial
    /// (so a key's positions behave as independent uniform draws, as `word_rate`
    /// assumes).
    #[test]
    fn estimated_rate_is_the_observed_rate() {
        type F = RegisterBloom<768, 5>;
        let mut f = F::new(loxo_core::Seed::new(9, 10));
        let mut next = 0u64;
        for n in [4_000u64, 8_000, 16_000] {
            while next < n {
                f.insert(&next.to_le_bytes());
                next += 1;
            }
            let p = f.estimated_fpr();
            let trials = 200_000u64;
            let hits = (0..trials)
                .filter(|i| f.contains(&(u64::MAX - i).to_le_bytes()))
                .count() as f64;
            let expected = p * trials as f64;
            let sd = (expected * (1.0 - p)).sqrt();
            std::println!("{n} keys: observed {hits}, expected {expected:.1} ± {sd:.1}");
            assert!(
                (hits - expected).abs() <= 4.0 * sd,
                "{n}: {hits} vs {expected}"
            );
        }
    }

    /// The mask from the 32-bit targets' table is the 64-bit targets' shift, and
    /// the old shift-by-6 loop's.
    #[test]
    fn one_hot_table_is_the_shift() {
        for p in 0..64u32 {
            assert_eq!(super::ONE_HOT[p as usize], super::one_hot(p));
            assert_eq!(super::one_hot(p), 1u64 << p);
        }
        let mut d = 0x0123_4567_89ab_cdefu64;
        for _ in 0..1_000 {
            d = loxo_core::mix64(d);
            let lo = d & 0xffff_ffff;
            let mut x = (lo | lo << 32).wrapping_mul(super::MASK_MUL);
            let mut shifted = 0u64;
            for _ in 0..10 {
                shifted |= 1u64 << (x >> 58);
                x <<= 6;
            }
            let (_, mask) = RegisterBloom::<7, 10>::locate(KeyHash::from_u64(d));
            assert_eq!(mask, shifted, "{d:#x}");
        }
    }

    #[test]
    fn occupancy_is_a_distribution() {
        for k in 1..=10 {
            let p = distinct_positions(k);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "k = {k}");
            // One draw is always one distinct position; two collide with p = 1/64.
            if k == 2 {
                assert!((p[1] - 1.0 / 64.0).abs() < 1e-15);
            }
        }
    }
}
