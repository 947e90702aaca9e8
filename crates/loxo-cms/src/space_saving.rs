//! Metwally's Space-Saving [`SpaceSaving<K, N>`].

use loxo_core::KeyHash;

use crate::entry::Entry;
use crate::heap::KeyHeap;
use crate::topk::TopK;

/// Levels of a deferred sift ([`SpaceSaving::settle_some`]) that a gated update
/// admitting nothing moves on: about 40 Cortex-M4 instructions each.
const SETTLE_LEVELS: usize = 2;

/// [`SETTLE_LEVELS`] while two deferred sifts wait (evictions in a cluster: an
/// epoch's first few hundred frames after its candidates were emptied). The next
/// eviction would finish the first sift in full on its own frame, on top of its own
/// work: so a gated update admitting nothing moves the first on further. On the
/// firmware's traffic classes (`firmware_cost_classes`, Cortex-M4) six levels took
/// the tail (p99.9) of four classes of 14 down one 40-instruction tick each (mix's
/// to 1 120) and changed no mean; four levels did as much on three, the whole sift
/// two ticks fewer.
const SETTLE_LEVELS_CROWDED: usize = 6;

/// Space-Saving (Metwally, Agrawal & El Abbadi 2005): top-k with `N` monitored keys
/// and deterministic error bounds, weighted updates.
///
/// A monitored key's count grows by each weight; an unmonitored key replaces the
/// key with the smallest count `m`, inheriting `count = m + w` and `error = m`.
///
/// * `K`: the key type (`Copy + Eq`, stored inline); `N`: capacity, 1..=32767
///   (compile-time checked: a failed `const` assertion, E0080).
///
/// ```compile_fail,E0080
/// let _ = loxo_cms::SpaceSaving::<u64, 0>::new(); // N = 0
/// ```
///
/// # Guarantees (deterministic, `N_tot` = [`total`](TopK::total))
///
/// * every reported entry has `count − error ≤ f ≤ count`, reported as
///   [`Entry::lower`] and [`Entry::upper`];
/// * the minimum count is at most `N_tot / N`, so every key with `f > N_tot / N`
///   is monitored, and every estimate is within `N_tot / N` of the truth.
///
/// After [`halve`](TopK::halve) the bounds hold for the halved weights up to ±1
/// rounding per halving.
///
/// # Memory
///
/// `N·(size_of::<Slot<K>>() + 14) + 8` bytes: `N` slots (key, error, hash tag and
/// index cell), `N` heap entries (count and slot packed in 8 bytes), `N` heap
/// positions and a `2N`-cell `u16` index. `SpaceSaving<u64, 215>` is 8 192 bytes;
/// with a 40-byte key each slot is 56 bytes.
///
/// # Cost
///
/// [`update`](TopK::update): an index probe (expected O(1), load ≤ ½), then
/// O(log N) sift of the min-heap. No division.
///
/// # Example
///
/// ```
/// use loxo_cms::{SpaceSaving, TopK};
/// use loxo_core::Seed;
///
/// let seed = Seed::new(1, 2);
/// let mut ss = SpaceSaving::<u32, 4>::new();
/// for k in [1u32, 1, 2, 3, 1, 4, 5, 1] {
///     ss.update(&k, seed.hash(&k.to_le_bytes()), 100);
/// }
/// let mut top = heapless::Vec::<_, 1>::new();
/// ss.report(&mut top);
/// assert_eq!(top[0].key, 1);
/// assert!(top[0].admits(400)); // count − error ≤ 400 ≤ count
/// assert_eq!(top[0].upper, Some(top[0].count));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SpaceSaving<K, const N: usize> {
    pub(crate) heap: KeyHeap<K, N>,
    pub(crate) total: u64,
}

impl<K: Copy + Eq, const N: usize> SpaceSaving<K, N> {
    /// An empty summary.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            heap: KeyHeap::new(),
            total: 0,
        }
    }

    /// The monitored entry of `key`, with its error bound.
    pub fn entry(&self, key: &K, hash: KeyHash) -> Option<Entry<K>> {
        let id = self.heap.find(key, hash)?;
        self.heap.entry(id)
    }

    /// Every monitored entry with its bounds, in heap order (no copy, unlike
    /// [`report`](TopK::report), so a caller can scan all `N` entries on a small stack).
    pub fn entries(&self) -> impl Iterator<Item = Entry<K>> + '_ {
        self.heap.entries()
    }

    /// Space-Saving update **gated by an upper bound**: `upper` must be at least the
    /// key's true total weight including this update — e.g. the estimate a Count-Min
    /// sketch returns after adding it ([`Cms::add_hash_estimate`](crate::Cms::add_hash_estimate)).
    /// [`update`](TopK::update) is this with `upper = u64::MAX`.
    ///
    /// A monitored key is counted as usual. An unmonitored key replaces the minimum `m`
    /// only if `upper > m`, with `count = min(upper, m + weight)` and `error = count −
    /// weight`; otherwise it is skipped. Every guarantee of the type still holds:
    /// *unmonitored keys weigh at most `m`* (a skipped key's weight is `≤ upper ≤ m`;
    /// an evicted key's was `≤` its count, then the minimum; minima only grow);
    /// *counts are upper bounds* (`f ≤ upper` and, the key being unmonitored before,
    /// `f ≤ m + weight`); *`count − error` is a lower bound* (the weight counted since
    /// admission); and *the counts sum to at most the total*, so `m ≤ total / N`. What
    /// changes is the cost: most mice of a skewed stream never pass the gate, so they
    /// cost an index probe instead of an eviction and an O(log N) sift.
    #[inline]
    pub fn update_bounded(&mut self, key: &K, hash: KeyHash, weight: u64, upper: u64) {
        if weight == 0 {
            return;
        }
        self.total = self.total.saturating_add(weight);
        match self.heap.find_or_vacancy(key, hash) {
            Ok(id) => {
                self.heap.add(id, weight);
            }
            Err(_) if !self.heap.is_full() => self.heap.push(*key, hash, weight, 0),
            Err(vacancy) => {
                let m = self.heap.min_held();
                if upper > m {
                    let count = upper.min(m.saturating_add(weight));
                    let error = count.saturating_sub(weight);
                    self.heap.replace_min_at(vacancy, *key, hash, count, error);
                }
            }
        }
    }

    /// [`update_bounded`](Self::update_bounded) for a key the caller has found to be
    /// **not monitored** by a cheaper test than the summary's index probe (a flow
    /// monitor keeps a bitmap of the digests it ever admitted): the probe is made only
    /// when the key passes the gate (`upper` above the minimum, or the summary not
    /// full), to find where to put it. Returns whether the key is monitored now (it
    /// was admitted).
    ///
    /// Same state and guarantees as `update_bounded`: if the key was monitored after
    /// all, it is counted as a hit when it passes the gate — and when it does not
    /// (`upper ≤` the minimum), its weight goes to the total only, which keeps every
    /// bound (`count` never exceeds what the key weighs) but loses the weight from its
    /// count. So a caller's test must have no false "not monitored"; a stale "maybe
    /// monitored" only costs a probe.
    ///
    /// ```
    /// use loxo_cms::{SpaceSaving, TopK};
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let mut ss = SpaceSaving::<u32, 1>::new();
    /// let h = |k: u32| seed.hash(&k.to_le_bytes());
    /// assert!(ss.update_unmonitored(&7, h(7), 10, 10)); // room: admitted
    /// assert!(!ss.update_unmonitored(&8, h(8), 5, 5)); // full, 5 ≤ min 10: skipped
    /// assert!(ss.update_unmonitored(&9, h(9), 5, 30)); // 30 > 10: replaces 7
    /// assert_eq!(ss.entry(&9, h(9)).map(|e| (e.count, e.lower)), Some((15, Some(5))));
    /// assert_eq!(ss.total(), 20);
    /// ```
    #[inline]
    pub fn update_unmonitored(&mut self, key: &K, hash: KeyHash, weight: u64, upper: u64) -> bool {
        if weight == 0 {
            return false;
        }
        self.total = self.total.saturating_add(weight);
        let full = self.heap.is_full();
        let m = if full {
            let m = self.heap.min_held();
            if upper <= m {
                // Nothing changes: time to move a deferred sift on.
                self.heap
                    .settle_some_or(SETTLE_LEVELS, SETTLE_LEVELS_CROWDED);
                return false;
            }
            m
        } else {
            0
        };
        match self.heap.find_or_vacancy_inline(key, hash) {
            Ok(id) => self.heap.add(id, weight),
            Err(_) if !full => self.heap.push(*key, hash, weight, 0),
            Err(vacancy) => {
                let count = upper.min(m.saturating_add(weight));
                let error = count.saturating_sub(weight);
                self.heap
                    .replace_min_deferred(vacancy, *key, hash, count, error, 1);
            }
        }
        true
    }

    /// [`update_bounded`](Self::update_bounded) with the upper bound computed only
    /// when it is needed: a monitored key is counted without calling `upper` (returns
    /// `true`); for any other key `upper()` is called once, always (so work the caller
    /// does in it, such as updating a sketch, happens for every unmonitored key), and
    /// the key is admitted or skipped exactly as `update_bounded` with that bound would
    /// (returns `false`). Same state, same guarantees, one index probe.
    ///
    /// A flow monitor uses the answer to skip work a monitored key cannot need: its
    /// first frame, which went through the new-flow filter, came before.
    ///
    /// ```
    /// use loxo_cms::SpaceSaving;
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let mut ss = SpaceSaving::<u32, 2>::new();
    /// let h = |k: u32| seed.hash(&k.to_le_bytes());
    /// let mut calls = 0;
    /// assert!(!ss.update_gated(&7, h(7), 10, || { calls += 1; 10 }));
    /// assert!(ss.update_gated(&7, h(7), 10, || { calls += 1; 20 }));
    /// assert_eq!(calls, 1);
    /// assert_eq!(ss.entry(&7, h(7)).map(|e| e.count), Some(20));
    /// ```
    #[inline]
    pub fn update_gated(
        &mut self,
        key: &K,
        hash: KeyHash,
        weight: u64,
        upper: impl FnOnce() -> u64,
    ) -> bool {
        match self.heap.find_or_vacancy(key, hash) {
            Ok(id) => {
                if weight != 0 {
                    self.total = self.total.saturating_add(weight);
                    self.heap.add(id, weight);
                }
                true
            }
            Err(vacancy) => {
                let upper = upper();
                if weight == 0 {
                    return false;
                }
                self.total = self.total.saturating_add(weight);
                if self.heap.is_full() {
                    let m = self.heap.min_held();
                    if upper > m {
                        let count = upper.min(m.saturating_add(weight));
                        let error = count.saturating_sub(weight);
                        self.heap
                            .replace_min_deferred(vacancy, *key, hash, count, error, 1);
                    } else {
                        self.heap
                            .settle_some_or(SETTLE_LEVELS, SETTLE_LEVELS_CROWDED);
                    }
                } else {
                    self.heap.push(*key, hash, weight, 0);
                }
                false
            }
        }
    }

    /// Moves a deferred sift on by at most `levels` levels of the heap: a caller's
    /// spare time. A no-op when none is deferred.
    ///
    /// An eviction by [`update_unmonitored`](Self::update_unmonitored) or
    /// [`update_gated`](Self::update_gated) sifts the new key one level down the
    /// min-heap at once and **defers the rest** (about four levels of the five a
    /// 128-key flood eviction takes): the next updates of those two that a key does
    /// not pass the gate move it on two levels each, the next update that changes
    /// the summary finishes it first, and so do calls of this method. Nothing else can tell:
    /// every count, bound, the minimum, reports and encodings (heap order included)
    /// are those of the summary with the sift done. What changes is *which* update
    /// pays for it — a device that calls this on frames with time to spare keeps the
    /// eviction's frame short (a flood's frame on a Cortex-M4: issue 27).
    ///
    /// ```
    /// use loxo_cms::{SpaceSaving, TopK};
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let h = |k: u32| seed.hash(&k.to_le_bytes());
    /// let (mut lazy, mut eager) = (SpaceSaving::<u32, 64>::new(), SpaceSaving::<u32, 64>::new());
    /// for k in 0..1000u32 {
    ///     lazy.update_unmonitored(&k, h(k), 1, 2);
    ///     lazy.settle_some(1);
    ///     eager.update_bounded(&k, h(k), 1, 2);
    /// }
    /// assert!(lazy.entries().eq(eager.entries()));
    /// lazy.settle();
    /// assert_eq!(lazy, eager);
    /// ```
    #[inline]
    pub fn settle_some(&mut self, levels: usize) {
        self.heap.settle_some(levels);
    }

    /// Finishes a deferred sift (see [`settle_some`](Self::settle_some)).
    #[inline]
    pub fn settle(&mut self) {
        self.heap.settle();
    }

    /// Whether a deferred sift waits (see [`settle_some`](Self::settle_some)): the
    /// next update that changes the summary finishes it first, at the cost of up to
    /// two sifts down the heap. A caller that puts work off to cheap updates skips
    /// the one that will pay for it.
    ///
    /// ```
    /// use loxo_cms::{SpaceSaving, TopK};
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let h = |k: u32| seed.hash(&k.to_le_bytes());
    /// let mut ss = SpaceSaving::<u32, 64>::new();
    /// for k in 0..64u32 {
    ///     ss.update_bounded(&k, h(k), 10, 10);
    /// }
    /// assert!(!ss.sift_waiting());
    /// ss.update_unmonitored(&100, h(100), 1, 20); // evicts, sifts one level
    /// assert!(ss.sift_waiting());
    /// ss.settle();
    /// assert!(!ss.sift_waiting());
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn sift_waiting(&self) -> bool {
        self.heap.sift_waiting()
    }

    /// The smallest monitored count (`≤ total / N` once full), 0 when not full.
    ///
    /// Every key that is **not** monitored has true weight `≤ min_count()`
    /// (Metwally et al., Lemma 3): when it is below a threshold, no key above the
    /// threshold was missed.
    pub fn min_count(&self) -> u64 {
        if self.heap.is_full() {
            self.heap.min_count().unwrap_or(0)
        } else {
            0
        }
    }
}

impl<K: Copy + Eq, const N: usize> Default for SpaceSaving<K, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Copy + Eq, const N: usize> TopK<K> for SpaceSaving<K, N> {
    #[inline]
    fn update(&mut self, key: &K, hash: KeyHash, weight: u64) {
        self.update_bounded(key, hash, weight, u64::MAX);
    }

    fn estimate(&self, key: &K, hash: KeyHash) -> Option<u64> {
        self.entry(key, hash).map(|e| e.count)
    }

    fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>) {
        self.heap.report(out);
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn capacity(&self) -> usize {
        N
    }

    fn clear(&mut self) {
        self.heap.clear();
        self.total = 0;
    }

    fn halve(&mut self) {
        self.heap.halve();
        self.total >>= 1;
    }
}
