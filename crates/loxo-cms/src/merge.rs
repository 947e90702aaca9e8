//! [`SpaceSavingMerge`]: the union of several [`SpaceSaving`] summaries (one per
//! device, per shard…) with bounds that hold deterministically, merged into storage
//! the caller provides.

use core::fmt;

use crate::space_saving::SpaceSaving;
use crate::topk::TopK;

/// One key of a [`SpaceSavingMerge`], with bounds on its true weight `f` in the union
/// of the merged streams: `lower ≤ f ≤ upper`, always (and `lower ≤ count ≤ upper`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct MergedEntry<K> {
    /// The key.
    pub key: K,
    /// Sum of the counts of the summaries listing the key (an estimate).
    pub count: u64,
    /// Sum of their `count − error`: the weight counted since each admitted the key.
    pub lower: u64,
    /// `count` plus the smallest count of every merged summary **not** listing the key.
    pub upper: u64,
    /// How many merged summaries list the key.
    pub summaries: u32,
    /// Sum of the listing summaries' upper bounds (`count` for Space-Saving).
    listed_upper: u64,
    /// Sum of the listing summaries' minimum counts.
    listed_min: u64,
}

impl<K> MergedEntry<K> {
    /// A key with no weight, for filling storage before a merge: what a cell holds
    /// before the merge writes it does not matter.
    #[must_use]
    pub const fn new(key: K) -> Self {
        Self {
            key,
            count: 0,
            lower: 0,
            upper: 0,
            summaries: 0,
            listed_upper: 0,
            listed_min: 0,
        }
    }
}

/// The storage of a [`SpaceSavingMerge`] has no cell left for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct MergeFull {
    /// Cells the summary needed with those already taken.
    pub needed: usize,
    /// Cells of the storage.
    pub capacity: usize,
}

impl fmt::Display for MergeFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "merge storage full: {} keys need a cell, it has {}",
            self.needed, self.capacity
        )
    }
}

impl core::error::Error for MergeFull {}

/// The union of [`SpaceSaving`] summaries of disjoint streams (devices, shards),
/// built one summary at a time into a caller-provided slice of [`MergedEntry`].
///
/// For a key listed by the summaries `L` out of the merged summaries `A`, with summary
/// `i`'s entry `(countᵢ, errorᵢ)` and smallest monitored count `mᵢ`
/// ([`SpaceSaving::min_count`], 0 while it is not full):
///
/// * `count = Σ_{i∈L} countᵢ`;
/// * `lower = Σ_{i∈L} (countᵢ − errorᵢ)`, a lower bound since each term is;
/// * `upper = count + Σ_{i∈A∖L} mᵢ`: a key absent from a full summary weighs at most
///   its minimum there (Metwally et al., Lemma 3), and nothing in one not full;
/// * a key listed by no summary weighs at most [`unlisted_upper`](Self::unlisted_upper)
///   `= Σ mᵢ` in the union.
///
/// The bounds hold for every stream (no probability), summing with saturation. The
/// ranking by `count` is an estimate: a key spread thinly over many summaries can rank
/// below its weight. Unlike a merged Space-Saving summary, nothing is evicted: the
/// merge keeps every listed key, so the bounds are as tight as the summaries allow.
///
/// The summaries must share the hash seed and describe **disjoint** streams (a packet
/// counted by two summaries is counted twice); `N` may differ between them.
///
/// # Memory and cost
///
/// The storage: `size_of::<MergedEntry<K>>()` (`size_of::<K>() + 48`, rounded to 8)
/// bytes per cell; `Σ len()` cells of the merged summaries always suffice (fewer do
/// when the lists share keys). [`add`](Self::add) copies a summary's `n` entries into
/// free cells, `O(n)`; the keys listed twice are combined when the entries are read
/// ([`entries`](Self::entries), [`sort_by_count`](Self::sort_by_count)) or when the
/// cells run out: a sort by key and one pass, `O(M log M)` for `M` cells in use,
/// no hashing, no allocation.
///
/// # Example
///
/// ```
/// use loxo_cms::{MergedEntry, SpaceSaving, SpaceSavingMerge, TopK};
/// use loxo_core::Seed;
///
/// let seed = Seed::new(1, 2);
/// let h = |k: u32| seed.hash(&k.to_le_bytes());
/// let mut a = SpaceSaving::<u32, 2>::new();
/// let mut b = SpaceSaving::<u32, 2>::new();
/// for k in [1u32, 1, 1, 2, 3] {
///     a.update(&k, h(k), 10); // full: key 3 replaced key 2 (count 20, error 10)
/// }
/// for k in [1u32, 4] {
///     b.update(&k, h(k), 5); // full too (N = 2), exact, minimum 5
/// }
/// let mut cells = [MergedEntry::new(0u32); 4];
/// let mut merge = SpaceSavingMerge::new(&mut cells);
/// merge.add(&a)?;
/// merge.add(&b)?;
/// let top = merge.sort_by_count()[0];
/// assert_eq!((top.key, top.count, top.lower, top.upper), (1, 35, 35, 35));
/// let four = merge.entries().iter().find(|e| e.key == 4).unwrap();
/// // Key 4 may have weighed up to a's minimum (20) in a's stream: f ∈ [5, 25].
/// assert_eq!((four.count, four.lower, four.upper), (5, 5, 25));
/// let three = merge.entries().iter().find(|e| e.key == 3).unwrap();
/// assert_eq!((three.count, three.lower, three.upper), (20, 10, 25)); // f = 10: + b's minimum
/// assert_eq!(merge.total(), 60);
/// assert_eq!(merge.unlisted_upper(), 25); // key 2 (f = 10) is on no list
/// # Ok::<(), loxo_cms::MergeFull>(())
/// ```
#[derive(Debug)]
pub struct SpaceSavingMerge<'a, K> {
    cells: &'a mut [MergedEntry<K>],
    /// Cells in use.
    len: usize,
    /// Cells `..settled` hold distinct keys, sorted by key.
    settled: usize,
    summaries: u32,
    total: u64,
    unlisted: u64,
}

impl<'a, K: Copy + Ord> SpaceSavingMerge<'a, K> {
    /// An empty merge writing into `cells` (their contents are overwritten).
    pub fn new(cells: &'a mut [MergedEntry<K>]) -> Self {
        Self {
            cells,
            len: 0,
            settled: 0,
            summaries: 0,
            total: 0,
            unlisted: 0,
        }
    }

    /// Adds one summary's stream to the union.
    ///
    /// # Errors
    /// [`MergeFull`] if its entries do not fit in the cells left once the keys listed
    /// twice are combined; the union is then unchanged.
    pub fn add<const N: usize>(&mut self, s: &SpaceSaving<K, N>) -> Result<(), MergeFull> {
        let n = s.len();
        if self.len + n > self.cells.len() {
            self.settle();
        }
        if self.len + n > self.cells.len() {
            return Err(MergeFull {
                needed: self.len + n,
                capacity: self.cells.len(),
            });
        }
        let m = s.min_count();
        for (c, e) in self.cells[self.len..].iter_mut().zip(s.entries()) {
            *c = MergedEntry {
                count: e.count,
                lower: e.lower.unwrap_or(0),
                summaries: 1,
                listed_upper: e.upper.unwrap_or(u64::MAX),
                listed_min: m,
                ..MergedEntry::new(e.key)
            };
        }
        self.len += n;
        self.summaries = self.summaries.saturating_add(1);
        self.total = self.total.saturating_add(s.total());
        self.unlisted = self.unlisted.saturating_add(m);
        Ok(())
    }

    /// Combines the cells of one key and sets every `upper`: sort by key, one pass.
    fn settle(&mut self) {
        let cells = &mut self.cells[..self.len];
        if self.settled < cells.len() {
            cells.sort_unstable_by_key(|c| c.key);
            let mut kept = 0;
            for i in 0..cells.len() {
                let c = cells[i];
                if kept > 0 && cells[kept - 1].key == c.key {
                    // Sums of non-negative terms: saturating sums are order-free.
                    let k = &mut cells[kept - 1];
                    k.count = k.count.saturating_add(c.count);
                    k.lower = k.lower.saturating_add(c.lower);
                    k.summaries = k.summaries.saturating_add(c.summaries);
                    k.listed_upper = k.listed_upper.saturating_add(c.listed_upper);
                    k.listed_min = k.listed_min.saturating_add(c.listed_min);
                } else {
                    cells[kept] = c;
                    kept += 1;
                }
            }
            self.len = kept;
            self.settled = kept;
        }
        let unlisted = self.unlisted;
        for c in &mut self.cells[..self.len] {
            c.upper = c
                .listed_upper
                .saturating_add(unlisted.saturating_sub(c.listed_min));
        }
    }

    /// The merged keys, sorted by key.
    pub fn entries(&mut self) -> &[MergedEntry<K>] {
        self.settle();
        &self.cells[..self.len]
    }

    /// The merged keys by `count` descending, ties by key ascending (sorted in place).
    pub fn sort_by_count(&mut self) -> &[MergedEntry<K>] {
        self.settle();
        // Keys are distinct, so the order is total and an unstable sort deterministic.
        self.cells[..self.len]
            .sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
        // Sorted by count, the cells must be sorted by key again before a merge.
        self.settled = 0;
        &self.cells[..self.len]
    }

    /// Summaries merged.
    #[must_use]
    pub const fn summaries(&self) -> u32 {
        self.summaries
    }

    /// Sum of the merged summaries' stream totals ([`TopK::total`]).
    #[must_use]
    pub const fn total(&self) -> u64 {
        self.total
    }

    /// A key listed by no merged summary weighs at most this in the union: `Σ mᵢ`.
    #[must_use]
    pub const fn unlisted_upper(&self) -> u64 {
        self.unlisted
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use loxo_core::{KeyHash, Seed};

    const KEYS: usize = 300;

    fn h(k: u32) -> KeyHash {
        Seed::new(7, 11).hash(&k.to_le_bytes())
    }

    /// A seeded xorshift64 stream of `(key, weight)`: key `⌊300·u³⌋` (skewed to small
    /// keys, so some are heavy and most light), weight 1..=16.
    fn stream(seed: u64, len: usize, mut f: impl FnMut(u32, u64)) {
        let mut x = seed | 1;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let key = ((KEYS as f64) * u * u * u) as u32;
            f(key, 1 + (x & 15));
        }
    }

    /// Merges `D` summaries of `SpaceSaving<u32, N>` over seeded streams; checks every
    /// bound against an exact counter of the union.
    fn check<const N: usize, const D: usize>(seed: u64, len: usize) {
        let mut truth = [0u64; KEYS];
        let mut sums = [const { SpaceSaving::<u32, N>::new() }; D];
        for (d, s) in sums.iter_mut().enumerate() {
            stream(seed.wrapping_mul(31).wrapping_add(d as u64), len, |k, w| {
                s.update(&k, h(k), w);
                truth[k as usize] += w;
            });
        }
        let mut cells = [MergedEntry::new(u32::MAX); 256];
        let mut m = SpaceSavingMerge::new(&mut cells);
        for s in &sums {
            m.add(s).unwrap();
        }
        assert!(m
            .sort_by_count()
            .windows(2)
            .all(|w| w[0].count >= w[1].count));
        assert_eq!(m.summaries(), D as u32);
        assert_eq!(m.total(), truth.iter().sum::<u64>());
        assert_eq!(
            m.unlisted_upper(),
            sums.iter().map(SpaceSaving::min_count).sum::<u64>()
        );
        let unlisted = m.unlisted_upper();
        let mut listed = [false; KEYS];
        for e in m.entries() {
            let f = truth[e.key as usize];
            assert!(e.lower <= f && f <= e.upper, "seed {seed}: {e:?}, f = {f}");
            assert!(e.lower <= e.count && e.count <= e.upper, "{e:?}");
            let on: u32 = sums
                .iter()
                .map(|s| u32::from(s.entry(&e.key, h(e.key)).is_some()))
                .sum();
            assert_eq!(e.summaries, on);
            assert!(!listed[e.key as usize], "key {} twice", e.key);
            listed[e.key as usize] = true;
        }
        for (k, &f) in truth.iter().enumerate() {
            if !listed[k] {
                assert!(f <= unlisted, "seed {seed}: key {k} f = {f}");
            }
        }
    }

    #[test]
    fn bounds_contain_the_truth_of_full_summaries() {
        for seed in 1..=20 {
            check::<16, 4>(seed, 2_000);
            check::<64, 3>(seed, 5_000);
        }
    }

    #[test]
    #[allow(clippy::large_stack_arrays)] // 38 KiB of cells on a test thread's 2 MiB
    fn summaries_not_full_merge_exactly() {
        // 300 keys fit in N = 512: every count is exact, and so are the bounds.
        let mut truth = [0u64; KEYS];
        let mut a = SpaceSaving::<u32, 512>::new();
        let mut b = SpaceSaving::<u32, 512>::new();
        stream(5, 3_000, |k, w| {
            a.update(&k, h(k), w);
            truth[k as usize] += w;
        });
        stream(6, 3_000, |k, w| {
            b.update(&k, h(k), w);
            truth[k as usize] += w;
        });
        let mut cells = [MergedEntry::new(0); 2 * KEYS];
        let mut m = SpaceSavingMerge::new(&mut cells);
        m.add(&a).unwrap();
        m.add(&b).unwrap();
        assert_eq!(m.unlisted_upper(), 0);
        for e in m.entries() {
            let f = truth[e.key as usize];
            assert_eq!((e.count, e.lower, e.upper), (f, f, f));
        }
        assert_eq!(m.entries().len(), truth.iter().filter(|&&f| f > 0).count());
    }

    #[test]
    fn cells_for_the_distinct_keys_and_one_list_suffice() {
        // Five lists of keys 0..8 (weights 1..=5 per summary): 40 entries, 8 keys; 16
        // cells hold them because each add combines the keys listed twice first.
        let mut sums = [const { SpaceSaving::<u32, 8>::new() }; 5];
        for (d, s) in (1u64..).zip(&mut sums) {
            for k in 0..8 {
                s.update(&k, h(k), d);
            }
        }
        let mut cells = [MergedEntry::new(0); 16];
        let mut m = SpaceSavingMerge::new(&mut cells);
        for s in &sums {
            m.add(s).unwrap();
        }
        assert_eq!(m.entries().len(), 8);
        assert!(m
            .entries()
            .iter()
            .all(|e| (e.count, e.lower, e.upper, e.summaries) == (15, 15, 15, 5)));
    }

    #[test]
    fn full_storage_is_refused_and_leaves_the_merge_unchanged() {
        let mut a = SpaceSaving::<u32, 4>::new();
        let mut b = SpaceSaving::<u32, 4>::new();
        for k in 0..4 {
            a.update(&k, h(k), 1);
            b.update(&(k + 2), h(k + 2), 1);
        }
        let mut cells = [MergedEntry::new(0); 5];
        let mut m = SpaceSavingMerge::new(&mut cells);
        m.add(&a).unwrap();
        let before: [MergedEntry<u32>; 4] = m.entries().try_into().unwrap();
        let total = m.total();
        assert_eq!(
            m.add(&b),
            Err(MergeFull {
                needed: 8,
                capacity: 5
            })
        );
        assert_eq!(m.entries(), &before[..]);
        assert_eq!((m.total(), m.summaries()), (total, 1));
    }
}
