//! [`CmsPair`]: one conservative-update Count-Min sketch of *two* measures of the same
//! keys (packets and bytes of a flow), their cells side by side.

use loxo_core::{KeyHash, RowHashes, Seed};

use crate::cms::{E, MAX_DEPTH};

/// Two conservative-update Count-Min sketches (Estan & Varghese 2002) of two measures
/// `a` and `b` of the same keys — a flow's bytes and packets — that share their row
/// functions, so each row's cell holds the pair `[a, b]`: one index computation and
/// one 8-byte access per row update both.
///
/// * `W` — width, 1..=2³²−1 cells per row; ε = e/W.
/// * `D` — depth, 1..=32 rows; δ = e^−D.
///
/// # Guarantee
///
/// Each measure on its own *is* a conservative-update Count-Min sketch
/// ([`CmsCu<W, D>`](crate::CmsCu) with `u32` cells, under the same seed): an update
/// raises each measure's `D` cells to that measure's own minimum plus its weight,
/// independently of the other measure. So for every key with true weights `f_a`,
/// `f_b`, and `N_a`, `N_b` the sums of all weights added:
/// `f_a ≤ estimate_a ≤ f_a + ε·N_a` with probability at least `1 − δ` (and the same
/// for `b`); the lower bound is deterministic. Sharing the rows makes the two
/// measures' errors correlated (a key colliding with a heavy key in bytes does so in
/// packets too), never either one's bound weaker. Saturated cells (`u32::MAX`) keep
/// it: such a key estimates `u64::MAX` ("at least `u32::MAX`").
///
/// The sketch keeps no totals: its user already counts `N_a` and `N_b` (a flow
/// monitor counts an epoch's packets and bytes), and passes the one it needs to
/// [`error_bound`](Self::error_bound). Not having them here spares two 64-bit
/// saturating additions per update.
///
/// # Memory and cost
///
/// `8·D·W` bytes of cells plus the seed and the `D` row functions (`16 + 16·D`
/// bytes): `CmsPair<848, 3>` is 20 416 bytes — no more than a `1024 × 2` and a
/// `1024 × 3` sketch of `u32` (20 480 bytes of cells), with three rows for both
/// measures. An update is `D` row functions (a 64×64 multiply-add and a range
/// reduction each), then `D` pair reads and `D` pair writes; on a Cortex-M4 about
/// half of two separate sketches' instructions (the firmware's `costs` build).
///
/// ```
/// use loxo_cms::CmsPair;
/// use loxo_core::Seed;
///
/// let mut s = CmsPair::<272, 4>::new(Seed::new(1, 2));
/// let (mut bytes, mut packets) = (0, 0);
/// for (flow, len) in [(1u32, 1500u64), (2, 64), (1, 1500), (3, 60)] {
///     s.add(&flow.to_le_bytes(), len, 1);
///     (bytes, packets) = (bytes + len, packets + 1);
/// }
/// let (b, p) = s.estimate(&1u32.to_le_bytes());
/// assert!(b >= 3000 && p >= 2);
/// assert!((b - 3000) as f64 <= s.error_bound(bytes));
/// assert!((p - 2) as f64 <= s.error_bound(packets));
/// ```
///
/// Out-of-range sizes fail to compile:
///
/// ```compile_fail,E0080
/// let _ = loxo_cms::CmsPair::<64, 0>::new(loxo_core::Seed::new(1, 2)); // D = 0
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CmsPair<const W: usize, const D: usize> {
    seed: Seed,
    hashes: RowHashes<D>,
    rows: [[[u32; 2]; W]; D],
}

/// A weight as a `u32` cell increment, saturating.
#[inline(always)]
fn clamp(w: u64) -> u32 {
    if w > u64::from(u32::MAX) {
        u32::MAX
    } else {
        w as u32
    }
}

/// A cell's value as an estimate: `u64::MAX` for a saturated cell.
#[inline(always)]
fn widen(c: u32) -> u64 {
    if c == u32::MAX {
        u64::MAX
    } else {
        u64::from(c)
    }
}

impl<const W: usize, const D: usize> CmsPair<W, D> {
    const CHECK: () = {
        assert!(W >= 1, "CmsPair: W must be at least 1");
        assert!(W <= u32::MAX as usize, "CmsPair: W must fit in u32");
        assert!(D >= 1 && D <= MAX_DEPTH, "CmsPair: D must be in 1..=32");
    };

    /// An empty sketch hashing keys with `seed` (the same row functions as a
    /// [`Cms`](crate::Cms) of that seed).
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            seed,
            hashes: RowHashes::new(seed),
            rows: [[[0; 2]; W]; D],
        }
    }

    /// The seed keys are hashed with.
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// Width `W` (cells per row).
    pub const fn width(&self) -> usize {
        W
    }

    /// Depth `D` (rows).
    pub const fn depth(&self) -> usize {
        D
    }

    /// ε = e/W, the relative error bound of each measure.
    pub const fn epsilon(&self) -> f64 {
        E / W as f64
    }

    /// δ = e^−D, the failure probability of each measure's bound.
    pub const fn delta(&self) -> f64 {
        crate::sizing::delta_of_depth(D)
    }

    /// `ε·total`: with `total` the sum of one measure's weights added since the
    /// sketch was empty (halved along with it by [`halve`](Self::halve)), that
    /// measure's estimate of any key exceeds its truth by at most this, with
    /// probability `1 − δ`.
    pub fn error_bound(&self, total: u64) -> f64 {
        self.epsilon() * total as f64
    }

    /// Adds weights `a` and `b` to `key` (hashed with the sketch's seed).
    #[inline]
    pub fn add<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K, a: u64, b: u64) {
        self.add_hash(self.seed.hash(key), a, b);
    }

    /// [`add`](Self::add) with a pre-computed digest.
    #[inline]
    pub fn add_hash(&mut self, h: KeyHash, a: u64, b: u64) {
        let _ = self.add_hash_estimate(h, a, b);
    }

    /// [`add_hash`](Self::add_hash), returning measure `a`'s estimate *after* the
    /// update at no extra cost (conservative update finds the smallest cell anyway):
    /// an upper bound on the key's total `a` including this update, `u64::MAX` when
    /// saturated.
    #[inline]
    pub fn add_hash_estimate(&mut self, h: KeyHash, a: u64, b: u64) -> u64 {
        let (a, b) = (clamp(a), clamp(b));
        let mut idx = [0usize; D];
        let (mut min_a, mut min_b) = (u32::MAX, u32::MAX);
        for ((row, f), slot) in self.rows.iter().zip(self.hashes.iter()).zip(idx.iter_mut()) {
            *slot = f.index(h, W as u32) as usize;
            if let Some(&[x, y]) = row.get(*slot) {
                min_a = min_a.min(x);
                min_b = min_b.min(y);
            }
        }
        let (ta, tb) = (min_a.saturating_add(a), min_b.saturating_add(b));
        for (row, &j) in self.rows.iter_mut().zip(idx.iter()) {
            if let Some(c) = row.get_mut(j) {
                // Branch-free: each measure's cells rise to its own target.
                *c = [c[0].max(ta), c[1].max(tb)];
            }
        }
        widen(ta)
    }

    /// Upper bounds on `key`'s total of each measure, `(a, b)` (see the type's
    /// guarantee); `u64::MAX` for a measure whose smallest cell is saturated.
    #[inline]
    pub fn estimate<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> (u64, u64) {
        self.estimate_hash(self.seed.hash(key))
    }

    /// [`estimate`](Self::estimate) from a pre-computed digest.
    #[inline]
    pub fn estimate_hash(&self, h: KeyHash) -> (u64, u64) {
        let (mut min_a, mut min_b) = (u32::MAX, u32::MAX);
        for (row, f) in self.rows.iter().zip(self.hashes.iter()) {
            if let Some(&[x, y]) = row.get(f.index(h, W as u32) as usize) {
                min_a = min_a.min(x);
                min_b = min_b.min(y);
            }
        }
        (widen(min_a), widen(min_b))
    }

    /// Aging: halves every cell (a saturated cell stays saturated, still meaning "at
    /// least `u32::MAX`"), so every estimate stays an upper bound of the halved
    /// true weights; the caller halves its totals too.
    pub fn halve(&mut self) {
        for row in &mut self.rows {
            for c in row {
                for x in c {
                    if *x != u32::MAX {
                        *x >>= 1;
                    }
                }
            }
        }
    }

    /// Resets every cell to zero; keeps the seed.
    pub fn clear(&mut self) {
        self.rows = [[[0; 2]; W]; D];
    }

    /// The raw cells, row by row, each `[a, b]`.
    pub const fn rows(&self) -> &[[[u32; 2]; W]; D] {
        &self.rows
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    extern crate std;

    use super::*;
    use crate::CmsCu;
    use std::vec::Vec;

    /// Each measure is exactly a conservative-update sketch of its own: the pair's
    /// estimates equal two `CmsCu<W, D>` fed the same digests, weight for weight.
    #[test]
    fn each_measure_is_a_conservative_sketch() {
        let seed = Seed::new(7, 9);
        let mut pair = CmsPair::<61, 3>::new(seed);
        let (mut a, mut b) = (CmsCu::<61, 3>::new(seed), CmsCu::<61, 3>::new(seed));
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut keys = Vec::new();
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 500;
            let h = seed.hash(&key.to_le_bytes());
            let (wa, wb) = (60 + x % 1400, 1 + (i & 1));
            let up = pair.add_hash_estimate(h, wa, wb);
            assert_eq!(up, a.add_hash_estimate(h, wa));
            b.add_hash(h, wb);
            keys.push(h);
        }
        for h in keys {
            assert_eq!(
                pair.estimate_hash(h),
                (a.estimate_hash(h), b.estimate_hash(h))
            );
        }
        pair.halve();
        a.halve();
        b.halve();
        let h = seed.hash(&3u64.to_le_bytes());
        assert_eq!(
            pair.estimate_hash(h),
            (a.estimate_hash(h), b.estimate_hash(h))
        );
        pair.clear();
        assert_eq!(pair.estimate_hash(h), (0, 0));
    }

    #[test]
    fn saturates_never_wraps() {
        let mut s = CmsPair::<8, 2>::new(Seed::new(1, 2));
        let h = KeyHash::from_u64(42);
        assert_eq!(s.add_hash_estimate(h, u64::MAX, 1), u64::MAX);
        s.add_hash(h, 5, u64::MAX);
        assert_eq!(s.estimate_hash(h), (u64::MAX, u64::MAX));
        s.halve();
        assert_eq!(s.estimate_hash(h), (u64::MAX, u64::MAX));
        assert_eq!(s.error_bound(0), 0.0);
        assert_eq!((s.width(), s.depth()), (8, 2));
    }
}
