//! [`HipSpreaders<K, S, W, C, T>`]: [`Spreaders`] with a historic-inverse-probability
//! counter for up to `T` of its candidates — the estimator of a single stream.

use core::fmt;

use loxo_core::{KeyHash, MergeError, Seed, WireKey};

use crate::cells::{cells_of, for_each_key, Record};
use crate::digest::{self, MAX_RANK};
use crate::estimate::{self, Estimate};
use crate::pool::{Histogram, LEVELS};
use crate::report::{self, Spreader};
use crate::sketch::Spreaders;

/// [`Spreaders`] whose candidates' spreads are counted as the stream goes —
/// historic inverse probability (HIP; Cohen 2014, Ting 2014) over each key's virtual
/// registers — rather than estimated from the registers at the end: at 32 KiB less
/// than half the mean error of the same pool's estimate on the keys a report is about
/// and a third of its worst (`loxo-spread`'s README), but only for one stream (a
/// merge falls back to the registers' estimate).
///
/// * `K`, `S`, `W`, `C`: as for [`Spreaders`] (the pool and the cells are one inside);
/// * `T`: counters, 1 ..= 1 024, 24 bytes each — the keys followed at once.
///
/// Out-of-range parameters fail to compile (a failed `const` assertion, E0080):
///
/// ```compile_fail,E0080
/// let _ = loxo_spread::HipSpreaders::<u32, 64, 8, 64, 0>::new(loxo_core::Seed::new(1, 2)); // no counter
/// ```
///
/// Memory: `Spreaders::<K, S, W, C>::MEMORY_BYTES + 24·T + 72` bytes, rounded up to 8
/// ([`MEMORY_BYTES`](Self::MEMORY_BYTES), tested). At 32 KiB with 16-byte keys:
/// `HipSpreaders<[u8; 16], 4096, 4, 580, 64>` (32 512 bytes).
///
/// # How it works
///
/// A key's `S` registers (one per stripe, shared with other keys) raise with
/// probability `p = Σ_j P(rank > R_j) / S = Σ_j 2^−R_j / S` when a new distinct
/// element of the key arrives (`2^−15` counted as 0: the rank is capped at 15).
/// HIP adds `1/p` to the key's count each time one of its elements raises one of its
/// registers, `p` taken just before: the expected addition per new element is
/// `p·(1/p) = 1` whatever the registers hold, repeats add nothing (a repeat never
/// raises its own register), and other keys' elements only lower `p` — so the count
/// is unbiased for the elements the key brought while counted, and `Σ (1 − p)/p²`
/// over its additions is an unbiased estimate of its variance. Unlike the
/// registers' maximum-likelihood estimate ([`Spreaders::report`]), it knows which
/// register changes were the key's own: the noise of other keys costs it only
/// through a lower `p`.
///
/// `p` must be exact: every counter keeps `Σ_j 2^(15 − R_j)` of its key's registers
/// in an integer, updated whenever *any* pair raises one of them (each raise checks
/// the `T` counted keys' columns in its stripe), and set from the key's `S`
/// registers when the key is admitted. A key is admitted when one of its pairs takes
/// a candidate cell and it has no counter: it takes a free counter or the one with
/// the smallest count, starting at its registers' maximum-likelihood estimate (with
/// that estimate's variance). A key above a fraction `φ` of the pairs takes cells
/// from its first pairs on (the first `C` distinct pairs all take one), so it is
/// admitted while its spread and the pool's noise are still small, and once its
/// count is ahead of the keys that come and go it keeps its counter: a newcomer
/// starts small, so the churn of small keys stays in the smallest counters, and a
/// key loses its counter only while `T` or more counted keys count more than it —
/// never a key at ≥ 2 % of the pairs with `T` ≥ 50, up to the counts' own error
/// (at most 49 other keys hold as much). A candidate without a counter is estimated
/// from its registers, as by [`Spreaders`].
///
/// # Cost
///
/// An insert that raises a register (a few per key's register over an epoch: most
/// pairs raise nothing once the pool fills) checks the `T` counters' columns in that
/// stripe (`T` 32-bit mixes); an admission reads the key's `S` registers and solves
/// its likelihood. `HipSpreaders<[u8; 16], 4096, 4, 580, 64>`: 42.8 ns per packet on
/// an x86-64 host against 18.9 for `Spreaders<[u8; 16], 1024, 19, 512>` (`cargo bench
/// -p loxo-bench --bench spread`). For a device, the plain [`Spreaders`]' insert has
/// no loop.
///
/// # Example
///
/// ```
/// use loxo_core::Seed;
/// use loxo_spread::HipSpreaders;
///
/// let mut s = HipSpreaders::<u32, 256, 8, 64, 8>::new(Seed::new(1, 2));
/// for dst in 0..20_000u32 {
///     s.insert(&7, &dst.to_le_bytes()); // a scanner
///     s.insert(&(100 + dst % 5_000), b"one peer"); // 5 000 keys of one
/// }
/// let mut top = heapless::Vec::<_, 4>::new();
/// let threshold = 0.1 * s.distinct_pairs().value;
/// assert_eq!(s.report(threshold, 0.0, &mut top), 1);
/// assert_eq!(top[0].key, 7);
/// assert!(top[0].lower(4.0) <= 20_000.0 && 20_000.0 <= top[0].upper(4.0));
/// assert!(top[0].spread.relative_error() < 0.08); // 1.04/√256 = 6.5 % for the registers alone
/// ```
#[derive(Clone)]
pub struct HipSpreaders<K, const S: usize, const W: usize, const C: usize, const T: usize> {
    sketch: Spreaders<K, S, W, C>,
    /// The pool's register histogram, kept as registers rise.
    histogram: Histogram,
    /// The counted keys' tags (`..len`).
    tags: [u32; T],
    /// `Σ_j 2^(15 − R_j)` over each counted key's registers (0 for a capped one).
    sums: [u32; T],
    /// Each counted key's spread so far.
    counts: [f64; T],
    /// Its variance.
    variances: [f64; T],
    len: usize,
}

/// `2^(15 − v)`, 0 at the cap: a register's chance to rise, in units of `2^−15`.
const fn weight(v: u8) -> u32 {
    if v >= MAX_RANK {
        0
    } else {
        1 << (MAX_RANK - v)
    }
}

impl<K: Copy + Eq, const S: usize, const W: usize, const C: usize, const T: usize>
    HipSpreaders<K, S, W, C, T>
{
    const CHECK: () = assert!(
        T >= 1 && T <= 1024,
        "HipSpreaders needs T (counters) in 1..=1024"
    );

    /// The summary's size in bytes: `size_of::<Self>()`.
    pub const MEMORY_BYTES: usize = core::mem::size_of::<Self>();

    /// An empty summary hashing with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let mut histogram = [0u32; LEVELS];
        histogram[0] = (2 * S * W) as u32;
        Self::uncounted(Spreaders::new(seed), histogram)
    }

    /// `sketch`, whose register histogram is `histogram`, with no key counted.
    const fn uncounted(sketch: Spreaders<K, S, W, C>, histogram: Histogram) -> Self {
        let () = Self::CHECK;
        Self {
            sketch,
            histogram,
            tags: [0; T],
            sums: [0; T],
            counts: [0.0; T],
            variances: [0.0; T],
            len: 0,
        }
    }

    /// A summary continuing from `sketch` (a decoded or merged one): no key is
    /// counted yet, so every candidate is estimated from its registers until its
    /// pairs take cells again.
    #[must_use]
    pub fn from_sketch(sketch: Spreaders<K, S, W, C>) -> Self {
        let histogram = sketch.pool_ref().histogram();
        Self::uncounted(sketch, histogram)
    }

    /// The sketch inside (pool and cells): what is encoded and merged across devices.
    #[must_use]
    pub const fn sketch(&self) -> &Spreaders<K, S, W, C> {
        &self.sketch
    }

    /// The seed.
    #[must_use]
    pub const fn seed(&self) -> Seed {
        self.sketch.seed()
    }

    /// How many keys have a counter.
    #[must_use]
    pub const fn counted(&self) -> usize {
        self.len
    }

    /// Counts `element` for `key`, both hashed with the seed (as
    /// [`Spreaders::insert`]).
    pub fn insert<const L: usize>(&mut self, key: &K, element: &[u8])
    where
        K: WireKey<L>,
    {
        let seed = self.sketch.seed();
        let kh = seed.hash(&key.to_wire());
        let eh = seed.hash(element);
        self.insert_hashed(key, kh, eh);
    }

    /// Counts the element with keyed digest `element_hash` for `key` (digest
    /// `key_hash`), as [`Spreaders::insert_hashed`].
    pub fn insert_hashed(&mut self, key: &K, key_hash: KeyHash, element_hash: KeyHash) {
        let pair = KeyHash::from_u64(digest::pair(key_hash, element_hash));
        self.insert_pair_hash(key, key_hash, pair);
    }

    /// Counts a pair by its digest, as [`Spreaders::insert_pair_hash`].
    pub fn insert_pair_hash(&mut self, key: &K, key_hash: KeyHash, pair_hash: KeyHash) {
        let o = self.sketch.insert_observed(key, key_hash, pair_hash);
        if o.rank > o.old {
            if let Some(i) = self.find(o.tag) {
                self.add(i);
            }
            if let Some(a) = self.histogram.get_mut(usize::from(o.old)) {
                *a = a.saturating_sub(1);
            }
            if let Some(b) = self.histogram.get_mut(usize::from(o.rank)) {
                *b += 1;
            }
            let fall = weight(o.old) - weight(o.rank);
            let width = 2 * W;
            let len = self.len;
            for (t, sum) in self.tags.iter().zip(self.sums.iter_mut()).take(len) {
                if digest::column(*t, o.stripe, width) == o.column {
                    *sum = sum.saturating_sub(fall);
                }
            }
        }
        if o.won && self.find(o.tag).is_none() {
            self.admit(o.tag);
        }
    }

    /// HIP's addition for counter `i`, whose key just raised one of its registers.
    fn add(&mut self, i: usize) {
        let (Some(sum), Some(count), Some(var)) = (
            self.sums.get(i),
            self.counts.get_mut(i),
            self.variances.get_mut(i),
        ) else {
            return;
        };
        if *sum == 0 {
            return; // every register capped: the key can no longer raise one
        }
        let p = f64::from(*sum) / (S as f64 * f64::from(1u32 << MAX_RANK));
        *count += 1.0 / p;
        *var += (1.0 - p) / (p * p);
    }

    fn find(&self, tag: u32) -> Option<usize> {
        self.tags.iter().take(self.len).position(|&t| t == tag)
    }

    /// Gives the key with `tag` a counter: a free one, or the smallest count's.
    fn admit(&mut self, tag: u32) {
        let mut h = [0u32; LEVELS];
        let mut sum = 0u32;
        for v in self.sketch.key_registers(tag) {
            if let Some(c) = h.get_mut(usize::from(v)) {
                *c += 1;
            }
            sum += weight(v);
        }
        let e = estimate::spread(&h, &self.histogram, S);
        let i = if self.len < T {
            self.len += 1;
            self.len - 1
        } else {
            let mut smallest = 0;
            for (i, c) in self.counts.iter().enumerate() {
                if self.counts.get(smallest).is_some_and(|s| c < s) {
                    smallest = i;
                }
            }
            smallest
        };
        if let (Some(t), Some(s), Some(c), Some(v)) = (
            self.tags.get_mut(i),
            self.sums.get_mut(i),
            self.counts.get_mut(i),
            self.variances.get_mut(i),
        ) {
            *t = tag;
            *s = sum;
            *c = e.value;
            *v = e.sigma * e.sigma;
        }
    }

    /// The estimated number of distinct pairs ([`Spreaders::distinct_pairs`]).
    #[must_use]
    pub fn distinct_pairs(&self) -> Estimate {
        self.sketch.distinct_pairs()
    }

    /// The spread of one key: its count if it has one, else its registers'
    /// maximum-likelihood estimate ([`Spreaders::spread`]).
    #[must_use]
    pub fn spread(&self, key: &K, key_hash: KeyHash) -> Spreader<K> {
        let tag = digest::tag(key_hash);
        let sampled = cells_of(self.records(), tag, &key);
        self.estimate(tag, sampled).with_key(*key)
    }

    fn estimate(&self, tag: u32, sampled: u32) -> Spreader<()> {
        let registers = report::estimate_key(self.sketch.pool_ref(), &self.histogram, tag, sampled);
        match self.find(tag) {
            Some(i) => Spreader {
                spread: Estimate {
                    value: self.counts.get(i).copied().unwrap_or(0.0),
                    sigma: libm::sqrt(self.variances.get(i).copied().unwrap_or(0.0)),
                },
                ..registers
            },
            None => registers,
        }
    }

    fn records(&self) -> impl Iterator<Item = Record<&K>> + Clone + '_ {
        self.sketch.cells().map(|(_, r)| r)
    }

    /// The registers' standard error for a key of spread `spread`
    /// ([`Spreaders::sigma_at`]): what a key without a counter is estimated with,
    /// and the noise a threshold must stand above.
    #[must_use]
    pub fn sigma_at(&self, spread: f64) -> f64 {
        self.sketch.sigma_at(spread)
    }

    /// Reports the candidates whose estimate plus `z` standard errors reaches
    /// `threshold`, largest first, into `out` (cleared first; the `R` largest when
    /// more qualify). Returns how many qualified.
    ///
    /// Cost: per distinct candidate its `S` registers (its saturation, and the
    /// estimate of a key without a counter).
    pub fn report<const R: usize>(
        &self,
        threshold: f64,
        z: f64,
        out: &mut heapless::Vec<Spreader<K>, R>,
    ) -> usize {
        self.report_screened(threshold, z, 1, out)
    }

    /// [`report`](Self::report) of the candidates holding at least `min_cells`
    /// cells ([`Spreaders::report_screened`]'s rule; here the others are skipped
    /// after their cells are counted).
    pub fn report_screened<const R: usize>(
        &self,
        threshold: f64,
        z: f64,
        min_cells: u32,
        out: &mut heapless::Vec<Spreader<K>, R>,
    ) -> usize {
        out.clear();
        let records = self.records();
        let mut n = 0;
        for_each_key(&records, |r| {
            let sampled = cells_of(records.clone(), r.tag, &r.key);
            if sampled < min_cells {
                return;
            }
            let s = self.estimate(r.tag, sampled);
            if s.spread.value + z * s.spread.sigma >= threshold {
                n += 1;
                report::keep_largest(out, s.with_key(*r.key));
            }
        });
        report::sort_descending(out);
        n
    }

    /// Adds another summary's pairs ([`Spreaders::merge`]). The counts do not
    /// merge — two streams' counts of a key overlap where both saw an element — so
    /// every counter is dropped: the merged summary estimates from its registers
    /// until keys are admitted again.
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] when the seeds differ (`self` is unchanged).
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        self.sketch.merge(&other.sketch)?;
        self.len = 0;
        self.histogram = self.sketch.pool_ref().histogram();
        Ok(())
    }

    /// Empties the summary (a new epoch), keeping the seed.
    pub fn clear(&mut self) {
        self.sketch.clear();
        self.len = 0;
        self.histogram = self.sketch.pool_ref().histogram();
    }
}

impl<K, const S: usize, const W: usize, const C: usize, const T: usize> fmt::Debug
    for HipSpreaders<K, S, W, C, T>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HipSpreaders")
            .field("sketch", &self.sketch)
            .field("T", &T)
            .field("counted", &self.len)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loxo_core::mix64;

    type Small = HipSpreaders<u32, 64, 4, 32, 8>;

    fn pair(key: u32, element: u64) -> (KeyHash, KeyHash) {
        (
            KeyHash::from_u64(mix64(u64::from(key) ^ 0x6b65_7900_0000_0000)),
            KeyHash::from_u64(mix64(element ^ 0x656c_0000_0000_0000)),
        )
    }

    #[test]
    fn every_counter_holds_its_keys_exact_register_sum_and_the_histogram_the_pools() {
        let mut s = Small::new(Seed::new(1, 2));
        let mut x = 1u64;
        for _ in 0..20_000 {
            x = mix64(x);
            // Keys 0..40 with a skew: key k gets elements at rate ~ 1/(k + 1).
            let key = ((x >> 40) % 40) as u32;
            let key = key * key / 40;
            let (kh, eh) = pair(key, x & 0xfff);
            s.insert_hashed(&key, kh, eh);
            for i in 0..s.len {
                let exact: u32 = s.sketch.key_registers(s.tags[i]).map(weight).sum();
                assert_eq!(s.sums[i], exact, "counter {i}");
            }
        }
        assert_eq!(s.len, 8);
        assert_eq!(s.histogram, s.sketch.pool_ref().histogram());
    }

    #[test]
    fn a_scanner_among_noise_is_counted_within_its_error_and_better_than_its_registers() {
        let mut s = HipSpreaders::<u32, 256, 8, 64, 8>::new(Seed::new(3, 4));
        let mut x = 7u64;
        for e in 0..30_000u64 {
            let (kh, eh) = pair(9, e);
            s.insert_hashed(&9, kh, eh);
            x = mix64(x);
            let small = 1000 + (x % 20_000) as u32;
            let (kh, eh) = pair(small, x >> 60);
            s.insert_hashed(&small, kh, eh);
        }
        let (kh, _) = pair(9, 0);
        let hip = s.spread(&9, kh);
        let registers = s.sketch.spread(&9, kh);
        assert!(s.find(digest::tag(kh)).is_some());
        assert!(
            hip.lower(4.0) <= 30_000.0 && 30_000.0 <= hip.upper(4.0),
            "{hip:?}"
        );
        assert!(
            hip.spread.sigma < registers.spread.sigma,
            "{hip:?} {registers:?}"
        );
    }

    #[test]
    fn a_merge_drops_the_counters_and_estimates_from_the_registers() {
        let (mut a, mut b) = (Small::new(Seed::new(1, 2)), Small::new(Seed::new(1, 2)));
        for e in 0..3000u64 {
            let (kh, eh) = pair(5, e);
            if e % 2 == 0 { &mut a } else { &mut b }.insert_hashed(&5, kh, eh);
        }
        assert!(a.counted() > 0);
        assert_eq!(a.merge(&b), Ok(()));
        assert_eq!(a.counted(), 0);
        let (kh, _) = pair(5, 0);
        assert_eq!(a.spread(&5, kh), a.sketch().spread(&5, kh));
        assert_eq!(a.histogram, a.sketch.pool_ref().histogram());
        assert_eq!(
            a.merge(&Small::new(Seed::new(9, 9))),
            Err(MergeError::SeedMismatch)
        );
        a.clear();
        assert!(a.sketch().is_empty() && a.counted() == 0);
        assert_eq!(a.histogram, Small::new(Seed::new(1, 2)).histogram);
    }

    #[test]
    fn memory_is_the_sketch_and_24_bytes_a_counter() {
        assert_eq!(
            HipSpreaders::<[u8; 16], 4096, 4, 580, 64>::MEMORY_BYTES,
            Spreaders::<[u8; 16], 4096, 4, 580>::MEMORY_BYTES + 24 * 64 + 72
        );
        assert_eq!(
            HipSpreaders::<[u8; 16], 4096, 4, 580, 64>::MEMORY_BYTES,
            32_512
        );
    }
}
