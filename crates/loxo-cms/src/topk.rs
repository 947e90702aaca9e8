//! The [`TopK`] trait shared by the heavy-hitter summaries, and [`CmsTopK`], a
//! conservative Count-Min sketch plus a min-heap of candidates.
//!
//! Module dependencies run one way: `entry` (the report type) ← `heap` (the candidate
//! store) ← `topk` and the summaries.

use loxo_core::{KeyHash, Seed};

use crate::cms::{CmsCu, Counter};
use crate::entry::Entry;
use crate::heap::KeyHeap;

/// A fixed-memory "which keys are the heaviest?" summary of a weighted stream.
///
/// Implemented by [`SpaceSaving<K, N>`](crate::SpaceSaving),
/// [`HeavyKeeper<W, D, N, K>`](crate::HeavyKeeper), [`CmsTopK<W, D, N, K>`] and
/// [`HeavyGuardian<W, D, L, K>`](crate::HeavyGuardian) (`N = W·L` cells) and
/// [`TieredTopK<H, C, S, K>`](crate::TieredTopK) (`N = 4·H` heavy cells), so
/// a flow monitor can be generic over the algorithm. Every implementation holds at
/// most `N` candidate keys ([`capacity`](Self::capacity)) in inline storage and
/// never allocates.
///
/// # Contract
///
/// * **Keys and hashes.** `K` is any `Copy + Eq` value (an integer, a byte array, a
///   `FlowKey` enum); it is stored as is and compared with `==`. The caller hashes
///   each key **once** — `seed.hash(&key_bytes)` with one fixed
///   [`Seed`] — and passes the same [`KeyHash`] to
///   every sketch and to every call of [`update`](Self::update) and
///   [`estimate`](Self::estimate) for that key. The structures never hash keys
///   themselves; a different hash for the same key makes it a different key.
/// * **Weights.** `weight` is packets (1 per call) or bytes; any `u64`, counts
///   saturate at `u64::MAX` (HeavyKeeper's buckets at `u32::MAX`). A zero weight
///   is ignored.
/// * **Reports.** [`report`](Self::report) clears the caller's
///   `heapless::Vec<Entry<K>, M>` and fills it with the `min(M, len)` largest
///   entries, sorted by `count` descending; it never allocates and costs
///   O(N·M) moves in the worst case (O(N log M) compares).
/// * **Epochs.** [`halve`](Self::halve) halves every count (and every sketch cell
///   behind it): call it at an epoch boundary to let old traffic fade
///   (exponential aging); [`clear`](Self::clear) forgets everything.
///
/// # Example: generic over the algorithm
///
/// ```
/// use loxo_cms::{CmsTopK, Entry, HeavyKeeper, SpaceSaving, TopK};
/// use loxo_core::Seed;
///
/// fn feed<T: TopK<[u8; 4]>>(t: &mut T, seed: Seed) -> heapless::Vec<Entry<[u8; 4]>, 2> {
///     for i in 0..1000u32 {
///         let key = if i % 2 == 0 { [1, 1, 1, 1] } else { (i % 50).to_le_bytes() };
///         t.update(&key, seed.hash(&key), 1);
///     }
///     let mut out = heapless::Vec::new();
///     t.report(&mut out);
///     out
/// }
/// let seed = Seed::new(1, 2);
/// let top = feed(&mut SpaceSaving::<[u8; 4], 16>::new(), seed);
/// assert_eq!(top[0].key, [1, 1, 1, 1]);
/// assert_eq!(top[0].lower.zip(top[0].upper).map(|(l, u)| l <= 500 && 500 <= u), Some(true));
/// let top = feed(&mut HeavyKeeper::<64, 2, 16, [u8; 4]>::new(9), seed);
/// assert_eq!((top[0].key, top[0].count), ([1, 1, 1, 1], 500));
/// assert_eq!((top[0].lower, top[0].upper), (None, None)); // an estimate, no bounds
/// let top = feed(&mut CmsTopK::<64, 2, 16, [u8; 4]>::new(seed), seed);
/// assert_eq!(top[0].key, [1, 1, 1, 1]);
/// assert!(top[0].lower.is_none() && top[0].upper.is_some_and(|u| u >= 500));
/// ```
pub trait TopK<K: Copy + Eq> {
    /// Adds `weight` to `key`, whose digest is `hash` (never recomputed).
    fn update(&mut self, key: &K, hash: KeyHash, weight: u64);

    /// Estimated weight of `key` if it is currently monitored, else `None`.
    fn estimate(&self, key: &K, hash: KeyHash) -> Option<u64>;

    /// Writes the `min(M, len)` heaviest monitored keys into `out`, count descending.
    fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>);

    /// Sum of all weights passed to [`update`](Self::update) (halved by
    /// [`halve`](Self::halve)), saturating.
    fn total(&self) -> u64;

    /// Number of monitored keys, at most [`capacity`](Self::capacity).
    fn len(&self) -> usize;

    /// True when no key is monitored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Maximum number of monitored keys (`N`).
    fn capacity(&self) -> usize;

    /// Forgets every key and count (RNG state, if any, is kept).
    fn clear(&mut self);

    /// Epoch aging: halves every count, error and total (`⌊x/2⌋`).
    fn halve(&mut self);
}

/// Top-k from a conservative-update Count-Min sketch plus an `N`-entry min-heap
/// ("CMS-CU + heap", the classic sketch-based heavy-hitter tracker).
///
/// Each update adds the weight to a [`CmsCu<W, D, C>`](CmsCu), reads the key's
/// estimate back and, if the key is monitored, raises its heap count to it; an
/// unmonitored key enters when the heap has room or its estimate exceeds the
/// heap's minimum (which it evicts).
///
/// * `W`, `D`, `C`: the sketch's width, depth, counter type (see [`Cms`](crate::Cms)).
/// * `N`: heap capacity, 1..=32767; `K`: the key type.
///
/// Counts are CMS estimates: `f ≤ count` always (reported as [`Entry::upper`]) and
/// `count ≤ f + ε·N` with probability `1 − δ` (not a deterministic bound, so
/// [`Entry::lower`] is `None`; the caller may use
/// [`sketch`](Self::sketch)`().error_bound()` at its own stated probability). A key
/// that dropped out of the heap and re-enters gets its full sketch estimate back
/// (nothing is lost, unlike Space-Saving).
///
/// Memory: `size_of::<CmsCu<W, D, C>>() + N·(size_of::<Slot<K>>() + 14) + 8`;
/// `CmsTopK<268, 4, 100, u64>` is 8 192 bytes. Cost per update: `D` probes, a
/// `D`-cell read-modify-write, an index probe and O(log N) heap work.
///
/// `seed` should be the seed the caller hashes keys with: the sketch derives its
/// independent row functions from it (see [`Cms`](crate::Cms)), and then the inner
/// sketch's keyed [`estimate`](crate::Cms::estimate) agrees with the digests passed to
/// [`update`](TopK::update).
#[derive(Clone, Debug, PartialEq)]
pub struct CmsTopK<const W: usize, const D: usize, const N: usize, K, C: Counter = u32> {
    cms: CmsCu<W, D, C>,
    heap: KeyHeap<K, N>,
}

impl<const W: usize, const D: usize, const N: usize, K: Copy + Eq, C: Counter>
    CmsTopK<W, D, N, K, C>
{
    /// An empty tracker whose sketch rows are derived from `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        Self {
            cms: CmsCu::new(seed),
            heap: KeyHeap::new(),
        }
    }

    /// The sketch behind the heap (for frequency queries of any key).
    pub const fn sketch(&self) -> &CmsCu<W, D, C> {
        &self.cms
    }
}

impl<const W: usize, const D: usize, const N: usize, K: Copy + Eq, C: Counter> TopK<K>
    for CmsTopK<W, D, N, K, C>
{
    #[inline]
    fn update(&mut self, key: &K, hash: KeyHash, weight: u64) {
        if weight == 0 {
            return;
        }
        self.cms.add_hash(hash, weight);
        let est = self.cms.estimate_hash(hash);
        if let Some(pos) = self.heap.find(key, hash) {
            self.heap.raise(pos, est);
        } else if !self.heap.is_full() {
            self.heap.push(*key, hash, est, 0);
        } else if self.heap.min_count().is_some_and(|m| est > m) {
            self.heap.replace_min(*key, hash, est, 0);
        }
    }

    fn estimate(&self, key: &K, hash: KeyHash) -> Option<u64> {
        self.heap.count_of(key, hash)
    }

    fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>) {
        self.heap.report(out);
        for e in out.iter_mut() {
            e.lower = None;
        }
    }

    fn total(&self) -> u64 {
        self.cms.total()
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn capacity(&self) -> usize {
        N
    }

    fn clear(&mut self) {
        self.cms.clear();
        self.heap.clear();
    }

    fn halve(&mut self) {
        self.cms.halve();
        self.heap.halve();
    }
}
