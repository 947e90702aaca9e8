//! HeavyGuardian [`HeavyGuardian<W, D, L, K>`]: top-k in `W` buckets of `L` keyed
//! cells, exponential-weakening decay of the weakest cell among a key's `D` buckets.

use loxo_core::KeyHash;

use crate::bucket::{self, report_heaviest, Bucket};
use crate::entry::Entry;
use crate::heavy_keeper::{Decay, DECAY_BASE_PERCENT, DECAY_LEN};
use crate::topk::TopK;

/// HeavyGuardian (Yang, Gong, Zhang et al., KDD 2018), heavy part only, keys stored in
/// full, optionally with two bucket choices: top-k by *exponential-weakening decay*
/// of the weakest cell.
///
/// `W` buckets of `L` cells each hold a key and its count; there is no separate
/// heap: every cell is a candidate and [`report`](TopK::report) returns the heaviest
/// cells. Per update of key `x` with weight `w`, over the `D` buckets the key's digest
/// selects (double-hashing probes; `D = 1` is the paper's structure):
///
/// * `x` holds a cell → its count grows by `w`;
/// * else a free cell → `x` takes it with count `w`;
/// * else the cell with the smallest count `C` among the `D·L` cells (the *weakest*)
///   decays with
///   probability `b^−⌈C/w⌉` (`b = B/100`): `C ← C − w`, and if that reaches `C ≤ 0`,
///   `x` takes the cell with count `w`.
///
/// A weight is one arrival measured in units of `w`, exactly as in
/// [`HeavyKeeper`](crate::HeavyKeeper) (for `w = 1` this is the paper's rule).
///
/// Why it suits hard streams better than HeavyKeeper at the same bytes: a newcomer
/// only ever decays the *weakest* cell of its bucket, so the churn of one-off keys
/// (floods, a long tail) lands on the one or two cells of each bucket that hold
/// mice, and never erodes the elephants beside them; and without a heap, all of the
/// memory is candidate cells (680 at 8 KiB with `u64` keys, against HeavyKeeper's 544
/// fingerprint buckets plus a 100-key heap). Two choices (`D = 2`, "power of two
/// choices") let a newcomer displace the weaker of two buckets' weakest cells, so a
/// bucket crowded with established keys no longer locks heavy newcomers out: at 8 KiB
/// on the lognormal and hot-set-change streams, top-100 F1 went from 0.86–0.92
/// (`HeavyGuardian<85, 1, 8, u64>`) to ≥ 0.95 (`HeavyGuardian<170, 2, 4, u64>`); see
/// `crates/loxo-cms/README.md`.
///
/// # Parameters
///
/// * `W` — buckets, 1..=2³²−1; `D` — buckets per key, 1..=4 (1 in the paper, 2
///   recommended); `L` — cells per bucket, 1..=64 (the paper's λ_h = 8);
/// * `K` — the key type (compared with `==`, stored inline);
/// * `B` — the decay base `b` in hundredths, 102..=1000 (default 1.08).
///
/// Out-of-range parameters fail to compile (a failed `const` assertion, E0080):
///
/// ```compile_fail,E0080
/// let _ = loxo_cms::HeavyGuardian::<64, 1, 0, u64>::new(1); // L = 0
/// ```
///
/// # Guarantee (deterministic)
///
/// Every reported count is a **lower bound** of the key's true weight `f`: a cell's
/// count only grows by its own key's weights (keys are compared in full, no
/// fingerprints), starts at the weight of the update that took it, and decay only
/// lowers it — so [`Entry::lower`](crate::Entry::lower) is `Some(count)`, on every
/// stream (a key holds at most one cell: all `D` buckets are searched before it takes
/// one). There is no upper bound ([`Entry::upper`](crate::Entry::upper) is
/// `None`): a key loses whatever it sent before it held a cell, and what decay took.
/// After [`halve`](TopK::halve) the bound holds for the halved weights (`⌊c/2⌋ ≤
/// ⌊f/2⌋`). Counts saturate at `u32::MAX` (still a lower bound). Tested by
/// `lower_bounds_hold_and_top_keys_are_found` (unit test: one-off flood, weights
/// 1..=1500, halvings).
///
/// # Memory
///
/// `W·L·(size_of::<K>() + 4)` bytes of cells (plus padding of a bucket to `K`'s
/// alignment) + 16 (RNG, total): `HeavyGuardian<170, 2, 4, u64>` and
/// `HeavyGuardian<85, 1, 8, u64>` are 8 176 bytes (680 cells). The decay table is a `const` (4.8 KB of flash per `B` in use, shared with
/// `HeavyKeeper` of the same `B`).
///
/// # Cost
///
/// [`update`](TopK::update): `D` buckets (`D·L` key compares and count reads; a
/// bucket of 4 `u64` keys is 48 bytes, one cache line), at most one xorshift draw, one
/// integer division when a cell decays under `w > 1` (skipped on 64-bit hosts when
/// the decay is certainly 0). No heap. Measured: see `crates/loxo-cms/README.md`.
/// [`report`](TopK::report): a scan of all `W·L` cells, O(W·L·M) moves at worst.
///
/// # Example
///
/// ```
/// use loxo_cms::{HeavyGuardian, TopK};
/// use loxo_core::Seed;
///
/// let seed = Seed::new(1, 2);
/// let mut hg = HeavyGuardian::<16, 1, 8, u64>::new(42);
/// for i in 0..10_000u64 {
///     let key = if i % 3 == 0 { u64::MAX } else { i }; // 3334 times u64::MAX
///     hg.update(&key, seed.hash_u64(key), 1);
/// }
/// let mut top = heapless::Vec::<_, 1>::new();
/// hg.report(&mut top);
/// assert_eq!(top[0].key, u64::MAX);
/// assert!(top[0].count > 3300 && top[0].count <= 3334, "{top:?}");
/// assert_eq!((top[0].lower, top[0].upper), (Some(top[0].count), None));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HeavyGuardian<
    const W: usize,
    const D: usize,
    const L: usize,
    K,
    const B: u32 = DECAY_BASE_PERCENT,
> {
    buckets: [Bucket<K, L>; W],
    rng: u64,
    total: u64,
}

impl<const W: usize, const D: usize, const L: usize, K: Copy + Eq, const B: u32>
    HeavyGuardian<W, D, L, K, B>
{
    /// The decay base `b = B/100`.
    pub const DECAY_BASE: f64 = B as f64 / 100.0;

    const CHECK: () = {
        assert!(
            B >= 102 && B <= 1_000,
            "HeavyGuardian: decay base B/100 must be in 1.02..=10"
        );
        assert!(
            W >= 1 && W <= u32::MAX as usize,
            "HeavyGuardian: W must be in 1..=u32::MAX"
        );
        assert!(L >= 1 && L <= 64, "HeavyGuardian: L must be in 1..=64");
        assert!(D >= 1 && D <= 4, "HeavyGuardian: D must be in 1..=4");
    };

    /// An empty summary whose decay RNG is seeded from `rng_seed`; `K::default()`
    /// fills the free cells (never reported, never matched).
    #[must_use]
    pub fn new(rng_seed: u64) -> Self
    where
        K: Default,
    {
        Self::with_filler(rng_seed, K::default())
    }

    /// [`new`](Self::new) as a `const fn` (for a `static`), with `filler` as the
    /// placeholder key of free cells — any value: a free cell's key is never
    /// reported or matched.
    #[must_use]
    pub const fn with_filler(rng_seed: u64, filler: K) -> Self {
        let () = Self::CHECK;
        Self {
            buckets: [Bucket::empty(filler); W],
            rng: bucket::rng_start(rng_seed),
            total: 0,
        }
    }
}

impl<const W: usize, const D: usize, const L: usize, K: Copy + Eq, const B: u32> TopK<K>
    for HeavyGuardian<W, D, L, K, B>
{
    #[inline]
    fn update(&mut self, key: &K, hash: KeyHash, weight: u64) {
        if weight == 0 {
            return;
        }
        self.total = self.total.saturating_add(weight);
        let w = u32::try_from(weight).unwrap_or(u32::MAX);
        // One pass over the key's D buckets: its cell, else the weakest cell (a free
        // cell has count 0; ties go to the first bucket, then the first cell).
        let (mut at, mut min) = ((0usize, 0usize), u32::MAX);
        for i in 0..D {
            let j = hash.index(i as u32, W as u32) as usize;
            let Some(b) = self.buckets.get(j) else {
                continue;
            };
            for (c, (k, &n)) in b.keys.iter().zip(&b.counts).enumerate() {
                if n > 0 && k == key {
                    if let Some(n) = self.buckets.get_mut(j).and_then(|b| b.counts.get_mut(c)) {
                        *n = n.saturating_add(w);
                    }
                    return;
                }
                if n < min {
                    (at, min) = ((j, c), n);
                }
            }
        }
        let take = if min == 0 {
            true
        } else {
            // k = ⌈C/w⌉ indexes the decay table; past its end there is no draw and
            // no decay (see `HeavyKeeper::update` for the 64-bit shortcut).
            let beyond = cfg!(target_pointer_width = "64")
                && u64::from(min) > (DECAY_LEN as u64 - 1) * u64::from(w);
            let decays = !beyond && {
                let k = if w == 1 { min } else { min.div_ceil(w) } as usize;
                Decay::<B>::TABLE
                    .get(k)
                    .is_some_and(|&p| bucket::next_u32(&mut self.rng) < p)
            };
            if !decays {
                return;
            }
            min <= w
        };
        let Some(b) = self.buckets.get_mut(at.0) else {
            return;
        };
        if take {
            b.put(at.1, *key, w);
        } else if let Some(n) = b.counts.get_mut(at.1) {
            *n -= w;
        }
    }

    fn estimate(&self, key: &K, hash: KeyHash) -> Option<u64> {
        Bucket::estimate(&self.buckets, D as u32, key, hash)
    }

    fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>) {
        report_heaviest(Bucket::held(&self.buckets), true, out);
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn len(&self) -> usize {
        Bucket::held(&self.buckets).count()
    }

    fn capacity(&self) -> usize {
        W * L
    }

    fn clear(&mut self) {
        Bucket::clear_all(&mut self.buckets);
        self.total = 0;
    }

    fn halve(&mut self) {
        Bucket::halve_all(&mut self.buckets);
        self.total >>= 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    extern crate std;
    use std::collections::HashMap;
    use std::vec::Vec;

    use super::*;
    use crate::bucket::test_stream::{h, skewed};

    #[test]
    fn documented_size() {
        assert_eq!(core::mem::size_of::<HeavyGuardian<85, 1, 8, u64>>(), 8176);
        assert_eq!(core::mem::size_of::<HeavyGuardian<170, 2, 4, u64>>(), 8176);
    }

    #[test]
    fn lower_bounds_hold_and_top_keys_are_found() {
        for weighted in [false, true] {
            let mut hg = HeavyGuardian::<8, 2, 8, u64>::new(3);
            let mut exact: HashMap<u64, u64> = HashMap::new();
            for (i, (k, w)) in skewed(60_000, 3).into_iter().enumerate() {
                let w = if weighted { w } else { 1 };
                hg.update(&k, h(k), w);
                *exact.entry(k).or_default() += w;
                if i % 16_384 == 16_383 {
                    hg.halve();
                    for f in exact.values_mut() {
                        *f /= 2;
                    }
                }
            }
            let mut top = heapless::Vec::<Entry<u64>, 32>::new();
            hg.report(&mut top);
            assert_eq!(top.len(), 32);
            assert!(top.windows(2).all(|p| p[0].count >= p[1].count));
            for e in &top {
                assert!(e.admits(exact[&e.key]), "{e:?} vs {}", exact[&e.key]);
                assert_eq!(hg.estimate(&e.key, h(e.key)), Some(e.count));
            }
            // The 16 heaviest keys (trailing_zeros 0 and 1, 8 low values each: ~1/16
            // and ~1/32 of the non-flood weight each) are all reported among the 32.
            let mut truth: Vec<(u64, u64)> = exact.into_iter().collect();
            truth.sort_unstable_by_key(|e| core::cmp::Reverse(e.1));
            for (k, _) in &truth[..16] {
                assert!(top.iter().any(|e| e.key == *k), "{k} missing");
            }
        }
    }

    #[test]
    fn exact_while_nothing_competes() {
        let mut hg = HeavyGuardian::<4, 1, 4, u32>::new(1);
        for i in 0..1000u32 {
            hg.update(&(i % 8), KeyHash::from_u64(u64::from(i % 8) << 61), 2);
        }
        // Keys 0..8 land in buckets 0..4 by their top bits, two per bucket: no decay.
        for k in 0..8u32 {
            assert_eq!(
                hg.estimate(&k, KeyHash::from_u64(u64::from(k) << 61)),
                Some(250)
            );
        }
        assert_eq!((hg.len(), hg.capacity(), hg.total()), (8, 16, 2000));
    }

    #[test]
    fn halve_and_clear() {
        let mut hg = HeavyGuardian::<8, 2, 8, u64>::new(3);
        for (k, w) in skewed(10_000, 3) {
            hg.update(&k, h(k), w);
        }
        let before = hg.total();
        hg.halve();
        assert_eq!(hg.total(), before / 2);
        hg.clear();
        assert!(hg.is_empty());
        assert_eq!(hg.estimate(&0, h(0)), None);
    }

    #[test]
    fn const_constructor() {
        static HG: HeavyGuardian<4, 2, 2, [u8; 4]> = HeavyGuardian::with_filler(1, [0; 4]);
        assert!(HG.is_empty());
    }
}
