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
    /// The number (1-based) of the last summary that listed the key.
    mark: u32,
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
            mark: 0,
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
/// The storage: `size_of::<MergedEntry<K>>()` (`size_of::<K>() + 32`, rounded to 8)
/// bytes per cell; `Σ len()` cells of the merged summaries always suffice. Adding a
/// summary of `n` entries to a merge holding `M` keys costs `O(n·M)` key comparisons
/// (a linear search: no hashing, no allocation) plus an `O(M)` pass.
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
/// merge.sort_by_count();
/// let top = merge.entries()[0];
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
    len: usize,
    summaries: u32,
    total: u64,
    unlisted: u64,
}

impl<'a, K: Copy + Eq> SpaceSavingMerge<'a, K> {
    /// An empty merge writing into `cells` (their contents are overwritten).
    pub fn new(cells: &'a mut [MergedEntry<K>]) -> Self {
        Self {
            cells,
            len: 0,
            summaries: 0,
            total: 0,
            unlisted: 0,
        }
    }

    /// Adds one summary's stream to the union.
    ///
    /// # Errors
    /// [`MergeFull`] if the keys it lists that the merge does not hold yet do not fit
    /// in the cells left; the merge is then unchanged.
    pub fn add<const N: usize>(&mut self, s: &SpaceSaving<K, N>) -> Result<(), MergeFull> {
        let held = &self.cells[..self.len];
        let new = s
            .entries()
            .filter(|e| !held.iter().any(|c| c.key == e.key))
            .count();
        if self.len + new > self.cells.len() {
            return Err(MergeFull {
                needed: self.len + new,
                capacity: self.cells.len(),
            });
        }
        let m = s.min_count();
        let mark = self.summaries.saturating_add(1);
        let before = self.len;
        for e in s.entries() {
            let held = self.cells[..self.len].iter().position(|c| c.key == e.key);
            let i = held.unwrap_or_else(|| {
                // A key new to the merge was on none of the earlier lists.
                self.cells[self.len] = MergedEntry {
                    upper: self.unlisted,
                    ..MergedEntry::new(e.key)
                };
                self.len += 1;
                self.len - 1
            });
            let c = &mut self.cells[i];
            c.count = c.count.saturating_add(e.count);
            c.lower = c.lower.saturating_add(e.lower.unwrap_or(0));
            c.upper = c.upper.saturating_add(e.upper.unwrap_or(u64::MAX));
            c.summaries = c.summaries.saturating_add(1);
            c.mark = mark;
        }
        for c in self.cells[..before].iter_mut().filter(|c| c.mark != mark) {
            c.upper = c.upper.saturating_add(m);
        }
        self.summaries = mark;
        self.total = self.total.saturating_add(s.total());
        self.unlisted = self.unlisted.saturating_add(m);
        Ok(())
    }

    /// The merged keys, in the order they were first listed (or by count after
    /// [`sort_by_count`](Self::sort_by_count)).
    #[must_use]
    pub fn entries(&self) -> &[MergedEntry<K>] {
        &self.cells[..self.len]
    }

    /// Orders the keys by `count` descending, ties by key ascending (in place, no
    /// allocation).
    pub fn sort_by_count(&mut self)
    where
        K: Ord,
    {
        // Keys are unique, so the order is total and an unstable sort is deterministic.
        self.cells[..self.len]
            .sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
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
        m.sort_by_count();
        assert_eq!(m.summaries(), D as u32);
        assert_eq!(m.total(), truth.iter().sum::<u64>());
        assert_eq!(
            m.unlisted_upper(),
            sums.iter().map(SpaceSaving::min_count).sum::<u64>()
        );
        assert!(m.entries().windows(2).all(|w| w[0].count >= w[1].count));
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
                assert!(f <= m.unlisted_upper(), "seed {seed}: key {k} f = {f}");
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
        let mut cells = [MergedEntry::new(0); KEYS];
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
                needed: 6,
                capacity: 5
            })
        );
        assert_eq!(m.entries(), &before[..]);
        assert_eq!((m.total(), m.summaries()), (total, 1));
    }
}
