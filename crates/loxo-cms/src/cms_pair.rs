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
/// Each measure on its own *is* a conservative-update Count-Min sketch (the
/// algorithm of [`CmsCu<W, D>`](crate::CmsCu), `u32` cells): an update raises each
/// measure's `D` cells to that measure's own minimum plus its weight, independently
/// of the other measure. So for every key with true weights `f_a`,
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
/// # Rows
///
/// Where the geometry allows — 2 to 4 rows, each row's `64/D`-bit slice of the
/// digest 10 bits wider than `W` needs and `slice·W` within 32 bits, as the flow
/// monitor's `848 × 3` (21-bit slices) — row `i`'s cell is the `i`-th slice of the
/// digest reduced by a multiply-shift, `⌊slice·W/2^(64/D)⌋`: a 32-bit multiply and a
/// shift, no row function. The digest is a keyed PRF output (SipHash, or the flow
/// monitor's HalfSipHash under the device's secret seed), so its disjoint slices are
/// independent and uniform for every key: two keys collide in a row with
/// probability `1/W` (within `W/2^(64/D)` ≤ 2⁻¹⁰ of it), independently across rows,
/// which is all the ε and δ above use — and what a chosen-key attack cannot steer
/// without the seed. On a Cortex-M4 this saves about 30 instructions per update
/// over the `D` multiply-add row functions (`firmware_cost_classes`: every traffic
/// class's mean fell 23–33). Other geometries use
/// [`CmsCu`](crate::CmsCu)'s row functions (`a_i·h + b_i`, seeded), so such a pair's
/// measures equal two `CmsCu<W, D>` of the same seed, cell for cell. The sketch is
/// not serialized, so the choice concerns no wire format.
///
/// # Memory and cost
///
/// `8·D·W` bytes of cells plus the seed and the `D` row functions (`16 + 16·D`
/// bytes): `CmsPair<848, 3>` is 20 416 bytes — no more than a `1024 × 2` and a
/// `1024 × 3` sketch of `u32` (20 480 bytes of cells), with three rows for both
/// measures. An update is `D` row indices (above), then `D` pair reads and `D` pair
/// writes; on a Cortex-M4 less than half of two separate sketches' instructions
/// (the firmware's `costs` build).
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

    /// Bits of the digest each row takes when the rows are slices of it.
    const SLICE_BITS: u32 = 64 / D as u32;

    /// Whether the rows are disjoint slices of the digest (see the type's docs):
    /// at least two rows, and each slice 10 bits wider than `W` needs, with
    /// `slice·W` within 32 bits (the flow monitor's 848 × 3: 21-bit slices).
    const SLICED: bool = D >= 2
        && D <= 4
        && (W as u64) << Self::SLICE_BITS <= 1 << 32
        && (W as u64) << 10 <= 1 << Self::SLICE_BITS;

    /// The cell digest `h` takes in each row (sliced rows or row functions, see the
    /// type's docs) — what anyone who knows the seed can compute, which is why the
    /// seed must be secret (`tests/tests/attack_seed.rs` crafts colliding keys with it).
    ///
    /// ```
    /// use loxo_cms::CmsPair;
    /// use loxo_core::Seed;
    /// let s = CmsPair::<848, 3>::new(Seed::new(1, 2));
    /// let h = Seed::new(1, 2).hash(b"flow");
    /// assert!(s.columns(h).iter().all(|&c| c < 848));
    /// ```
    #[must_use]
    pub fn columns(&self, h: KeyHash) -> [usize; D] {
        core::array::from_fn(|i| self.index(i, h))
    }

    /// Row `i`'s cell of digest `h`.
    #[inline(always)]
    fn index(&self, i: usize, h: KeyHash) -> usize {
        if Self::SLICED {
            let slice =
                (h.get() >> (Self::SLICE_BITS * i as u32)) as u32 & ((1 << Self::SLICE_BITS) - 1);
            (slice.wrapping_mul(W as u32) >> Self::SLICE_BITS) as usize
        } else {
            self.hashes
                .get(i)
                .map_or(0, |f| f.index(h, W as u32) as usize)
        }
    }

    /// An empty sketch hashing keys with `seed` (rows: see the type's docs).
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
        for (i, (row, slot)) in self.rows.iter().zip(idx.iter_mut()).enumerate() {
            *slot = self.index(i, h);
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
        for (i, row) in self.rows.iter().enumerate() {
            if let Some(&[x, y]) = row.get(self.index(i, h)) {
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

    /// A reference conservative-update sketch of one measure over the pair's rows
    /// (`index`), written the textbook way.
    struct Reference<const W: usize, const D: usize> {
        rows: [[u64; W]; D],
    }

    impl<const W: usize, const D: usize> Reference<W, D> {
        fn add(&mut self, pair: &CmsPair<W, D>, h: KeyHash, w: u64) -> u64 {
            let min = self.estimate(pair, h);
            for (i, row) in self.rows.iter_mut().enumerate() {
                let c = &mut row[pair.index(i, h)];
                *c = (*c).max(min + w);
            }
            min + w
        }

        fn estimate(&self, pair: &CmsPair<W, D>, h: KeyHash) -> u64 {
            (0..D)
                .map(|i| self.rows[i][pair.index(i, h)])
                .min()
                .unwrap()
        }
    }

    /// Each measure is exactly a conservative-update sketch of its own: the pair's
    /// estimates equal two single-measure sketches fed the same digests, weight for
    /// weight — textbook ones over the pair's rows, and, where the rows are
    /// [`CmsCu`]'s row functions (not sliced), two `CmsCu<W, D>`.
    #[test]
    fn each_measure_is_a_conservative_sketch() {
        fn check<const W: usize, const D: usize>(sliced: bool) {
            let seed = Seed::new(7, 9);
            assert_eq!(CmsPair::<W, D>::SLICED, sliced);
            let mut pair = CmsPair::<W, D>::new(seed);
            let (mut a, mut b) = (CmsCu::<W, D>::new(seed), CmsCu::<W, D>::new(seed));
            let (mut ra, mut rb) = (
                Reference::<W, D> { rows: [[0; W]; D] },
                Reference::<W, D> { rows: [[0; W]; D] },
            );
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
                assert_eq!(up, ra.add(&pair, h, wa));
                rb.add(&pair, h, wb);
                if !sliced {
                    assert_eq!(up, a.add_hash_estimate(h, wa));
                    b.add_hash(h, wb);
                }
                keys.push(h);
            }
            for h in keys {
                let want = (ra.estimate(&pair, h), rb.estimate(&pair, h));
                assert_eq!(pair.estimate_hash(h), want);
                if !sliced {
                    assert_eq!(want, (a.estimate_hash(h), b.estimate_hash(h)));
                }
            }
            pair.halve();
            for r in [&mut ra, &mut rb] {
                r.rows.iter_mut().flatten().for_each(|c| *c >>= 1);
            }
            let h = seed.hash(&3u64.to_le_bytes());
            assert_eq!(
                pair.estimate_hash(h),
                (ra.estimate(&pair, h), rb.estimate(&pair, h))
            );
            pair.clear();
            assert_eq!(pair.estimate_hash(h), (0, 0));
        }
        check::<61, 3>(true);
        check::<848, 3>(true);
        check::<61, 5>(false);
        check::<4099, 3>(false);
    }

    /// Sliced rows are uniform and collide independently: 300 000 digests into
    /// `CmsPair<848, 3>` (the flow monitor's); each row's cell counts pass a χ² test
    /// at 4σ, and pairs of keys that collide in rows 0 and 1 collide in row 2 at the
    /// rate `1/W` (within 4σ) — what the depth's `δ = e^−D` multiplies.
    #[test]
    fn sliced_rows_are_uniform_and_independent() {
        const W: usize = 848;
        let pair = CmsPair::<W, 3>::new(Seed::new(3, 5));
        const { assert!(CmsPair::<W, 3>::SLICED) };
        let seed = Seed::new(11, 13);
        let n = 300_000u64;
        let cols: Vec<[usize; 3]> = (0..n)
            .map(|k| {
                let h = seed.hash_u64(k);
                [pair.index(0, h), pair.index(1, h), pair.index(2, h)]
            })
            .collect();
        for i in 0..3 {
            let mut counts = [0u64; W];
            for c in &cols {
                counts[c[i]] += 1;
            }
            let e = n as f64 / W as f64;
            let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
            let df = (W - 1) as f64;
            assert!(
                (chi2 - df).abs() <= 4.0 * (2.0 * df).sqrt(),
                "row {i}: χ² {chi2}"
            );
        }
        let mut by_first_two: std::collections::HashMap<(usize, usize), Vec<usize>> =
            std::collections::HashMap::new();
        for c in &cols {
            by_first_two.entry((c[0], c[1])).or_default().push(c[2]);
        }
        let (mut pairs, mut third) = (0u64, 0u64);
        for v in by_first_two.values() {
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    pairs += 1;
                    third += u64::from(v[i] == v[j]);
                }
            }
        }
        let p = 1.0 / W as f64;
        let (expect, sd) = (pairs as f64 * p, (pairs as f64 * p * (1.0 - p)).sqrt());
        assert!(pairs > 50_000, "{pairs} pairs");
        assert!(
            (third as f64 - expect).abs() <= 4.0 * sd + 1.0,
            "{third} of {pairs} pairs collide in row 2, expected {expect:.1}"
        );
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
