//! The Count-Min Sketch [`Cms<W, D, C, U>`], plain or conservative update.

use core::fmt::Debug;
use core::marker::PhantomData;

use loxo_core::{KeyHash, MergeError, RowHashes, Seed};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for super::Plain {}
    impl Sealed for super::Conservative {}
}

/// An unsigned saturating counter cell: `u8`, `u16`, `u32` or `u64`.
///
/// Every operation saturates at [`Counter::MAX`]; a saturated cell *sticks* (it is
/// never halved or decremented), so it keeps meaning "at least `MAX`". Sealed.
pub trait Counter: Copy + Eq + Ord + Debug + sealed::Sealed {
    /// The empty cell.
    const ZERO: Self;
    /// The saturation value.
    const MAX: Self;
    /// `self + w`, saturating at [`Counter::MAX`].
    #[must_use]
    fn add_saturating(self, w: u64) -> Self;
    /// `self + other`, saturating at [`Counter::MAX`].
    #[must_use]
    fn merge_saturating(self, other: Self) -> Self;
    /// `⌊self / 2⌋`, except that a saturated cell stays saturated.
    #[must_use]
    fn halved(self) -> Self;
    /// The value widened to `u64`.
    fn to_u64(self) -> u64;
    /// Bytes per counter on the wire (`size_of::<Self>()`).
    const BYTES: usize;
    /// The counter from its little-endian wire bytes (`BYTES` of them).
    fn from_le(bytes: &[u8]) -> Self;
}

macro_rules! counter {
    ($($t:ty),*) => {$(
        impl Counter for $t {
            const ZERO: Self = 0;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn add_saturating(self, w: u64) -> Self {
                let w = if w > <$t>::MAX as u64 { <$t>::MAX } else { w as $t };
                self.saturating_add(w)
            }
            #[inline(always)]
            fn merge_saturating(self, other: Self) -> Self {
                self.saturating_add(other)
            }
            #[inline(always)]
            fn halved(self) -> Self {
                if self == <$t>::MAX { self } else { self >> 1 }
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            const BYTES: usize = core::mem::size_of::<$t>();
            fn from_le(bytes: &[u8]) -> Self {
                let mut w = [0u8; core::mem::size_of::<$t>()];
                for (d, s) in w.iter_mut().zip(bytes) {
                    *d = *s;
                }
                <$t>::from_le_bytes(w)
            }
        }
    )*};
}
counter!(u8, u16, u32, u64);

/// How [`Cms::add`] raises a key's `D` counters: [`Plain`] or [`Conservative`]. Sealed.
pub trait UpdateRule: Copy + Debug + Default + PartialEq + sealed::Sealed {
    /// True for conservative update.
    const CONSERVATIVE: bool;
}

/// Plain update: add the weight to each of the key's `D` counters.
///
/// The sketch is *linear* (the sketch of a concatenated stream is the cell-wise sum
/// of the sketches), so plain sketches can be [merged](Cms::merge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Plain;

/// Conservative update (Estan & Varghese 2002): raise each of the key's counters
/// only up to `min + w`, where `min` is the key's current estimate.
///
/// Never less accurate than plain update and often several times more accurate on
/// skewed streams, still an upper bound; costs a second pass over the `D` cells. It
/// breaks linearity (a cell no longer equals the sum of its keys' weights), so the
/// sum of two conservative sketches is *not* the sketch of the union:
/// `Cms<_, _, _, Conservative>` has no `merge` method at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Conservative;

impl UpdateRule for Plain {
    const CONSERVATIVE: bool = false;
}
impl UpdateRule for Conservative {
    const CONSERVATIVE: bool = true;
}

/// A Count-Min sketch with conservative update: `Cms<W, D, C, Conservative>`.
pub type CmsCu<const W: usize, const D: usize, C = u32> = Cms<W, D, C, Conservative>;

/// Euler's number, the optimal Count-Min width factor.
pub(crate) const E: f64 = core::f64::consts::E;

/// Largest supported depth. `e^−32` ≈ 1.3·10⁻¹⁴ is beyond any practical δ.
pub(crate) const MAX_DEPTH: usize = 32;

/// A Count-Min sketch (Cormode & Muthukrishnan 2005): "how often did I see this
/// key?", as an upper bound, in `D` rows of `W` counters of type `C`.
///
/// * `W` — width, 1..=2³²−1 counters per row; ε = e/W. Any `W` works: rows are
///   indexed by Lemire reduction, not `%`.
/// * `D` — depth, 1..=32 rows; δ = e^−D.
/// * `C` — the counter type ([`Counter`]: `u8`, `u16`, `u32` default, `u64`).
/// * `U` — the [`UpdateRule`]: [`Plain`] (default, mergeable) or [`Conservative`]
///   (see [`CmsCu`]).
///
/// Out-of-range `W` or `D` fail to compile.
///
/// # Guarantee
///
/// For every key with true weight `f`, `f ≤ estimate ≤ f + ε·N` with probability at
/// least `1 − δ`, where `N` = [`total`](Self::total) (‖f‖₁), `ε = e/W`, `δ = e^−D`
/// ([`error_bound`](Self::error_bound) returns `ε·N`). The lower bound is
/// deterministic. Saturation keeps it: a key whose minimum cell is saturated
/// estimates `u64::MAX` ("at least `C::MAX`"), never less than the truth.
///
/// *Proof.* Row `i` puts a key in column `r_i(h)` with its own hash function
/// ([`RowHashes`], multiply-add-shift with per-row parameters drawn from the seed):
/// for any other key's distinct digest, the two share a column with probability
/// `≈ 1/W`, independently across rows. The excess of row `i`'s cell over `f` is the
/// weight of the other keys in it, with mean `≤ N/W`; by Markov it exceeds
/// `ε·N = e·N/W` with probability `≤ 1/e`. The estimate (the minimum) exceeds
/// `f + ε·N` only if all `D` rows do: `≤ (1/e)^D = δ`. The independence is what double
/// hashing (`h1 + i·h2`, right for Bloom probes) does not give: there a pair colliding
/// in rows 0 and 1 kept colliding in row 2 in 37 % of cases and the tail was 29× δ.
/// Assumes keys are not chosen with knowledge of the seed (keep it secret).
/// Tested in `tests/tests/cms_rows.rs`: per-row co-collision rates ≈ 1/W (chi-square
/// over 10^5 colliding pairs), the D-row tail equal to the product of the rows'
/// rates, and the tail ≤ δ at the sizings (1 %, 10⁻⁶) and (0.1 %, 10⁻³) over 10^7
/// absent keys on a near-worst-case stream (`⌊W/e⌋` equal keys just above ε·N).
///
/// Sizing ([`sizing::width_for_epsilon`](crate::sizing::width_for_epsilon),
/// [`sizing::depth_for_delta`](crate::sizing::depth_for_delta)):
///
/// | ε | W = ⌈e/ε⌉ | δ | D = ⌈ln 1/δ⌉ |
/// |---|---|---|---|
/// | 10 % | 28 | 10 % | 3 |
/// | 1 % | 272 | 1 % | 5 |
/// | 0.1 % | 2719 | 0.1 % | 7 |
/// | 0.01 % | 27183 | 10⁻⁶ | 14 |
///
/// # Memory
///
/// `D·W·size_of::<C>()` bytes of cells, plus `24 + 16·D` bytes (the 16-byte seed, the
/// `u64` total and the `D` row functions), rounded up to the cells' alignment:
/// `Cms<2048, 4>` is 32 856 bytes, `Cms<272, 5, u16>` 2 824 bytes.
///
/// # Cost
///
/// [`add`](Self::add) / [`estimate`](Self::estimate): one SipHash-1-3 of the key;
/// the `_hash` variants take a pre-computed [`KeyHash`]. Then `D` probes, each one
/// 64×64→64 multiply-add (the row function) and one 32×32→64 multiply (the range
/// reduction; no division). Conservative update reads
/// the `D` cells, then writes them. [`merge`](Self::merge), [`halve`](Self::halve),
/// [`clear`](Self::clear): O(W·D).
///
/// # Example
///
/// ```
/// use loxo_cms::{Cms, CmsCu};
/// use loxo_core::Seed;
///
/// let seed = Seed::new(0x5eed, 0xcafe);
/// let mut plain = Cms::<272, 5>::new(seed);
/// let mut cu = CmsCu::<272, 5>::new(seed);
/// for i in 0..1000u32 {
///     let key = (i % 10).to_le_bytes();
///     plain.add(&key, 1);
///     cu.add(&key, 1);
/// }
/// let f = 100;
/// let e = plain.estimate(&3u32.to_le_bytes());
/// assert!(e >= f && (e - f) as f64 <= plain.error_bound());
/// assert!(cu.estimate(&3u32.to_le_bytes()) <= e);
///
/// let mut other = Cms::<272, 5>::new(seed);
/// other.add(&3u32.to_le_bytes(), 5);
/// plain.merge(&other).unwrap();
/// assert!(plain.estimate(&3u32.to_le_bytes()) >= 105);
/// // cu.merge(..) does not exist: conservative sketches are not linear.
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Cms<const W: usize, const D: usize, C: Counter = u32, U: UpdateRule = Plain> {
    pub(crate) seed: Seed,
    /// Row `i`'s index function, derived from `seed` (independent across rows).
    hashes: RowHashes<D>,
    pub(crate) total: u64,
    pub(crate) rows: [[C; W]; D],
    rule: PhantomData<U>,
}

impl<const W: usize, const D: usize, C: Counter, U: UpdateRule> Cms<W, D, C, U> {
    const CHECK: () = {
        assert!(W >= 1, "Cms: W must be at least 1");
        assert!(W <= u32::MAX as usize, "Cms: W must fit in u32");
        assert!(D >= 1 && D <= MAX_DEPTH, "Cms: D must be in 1..=32");
    };

    /// An empty sketch hashing keys with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            seed,
            hashes: RowHashes::new(seed),
            total: 0,
            rows: [[C::ZERO; W]; D],
            rule: PhantomData,
        }
    }

    /// The seed keys are hashed with.
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// Width `W` (counters per row).
    pub const fn width(&self) -> usize {
        W
    }

    /// Depth `D` (rows).
    pub const fn depth(&self) -> usize {
        D
    }

    /// ε = e/W, the relative error bound.
    pub const fn epsilon(&self) -> f64 {
        E / W as f64
    }

    /// δ = e^−D, the failure probability of the bound.
    pub const fn delta(&self) -> f64 {
        crate::sizing::delta_of_depth(D)
    }

    /// `N`, the sum of all weights added (‖f‖₁), saturating at `u64::MAX`.
    pub const fn total(&self) -> u64 {
        self.total
    }

    /// `ε·N`: with probability `1 − δ`, `estimate − f ≤ error_bound()` for any key.
    pub fn error_bound(&self) -> f64 {
        self.epsilon() * self.total as f64
    }

    /// Adds weight `w` (packets, bytes…) to `key`.
    #[inline]
    pub fn add<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K, w: u64) {
        self.add_hash(self.seed.hash(key), w);
    }

    /// Adds weight `w` to the key whose digest under [`seed`](Self::seed) is `h`.
    #[inline]
    pub fn add_hash(&mut self, h: KeyHash, w: u64) {
        if U::CONSERVATIVE {
            let _ = self.add_hash_estimate(h, w);
        } else {
            // Plain update needs no minimum. The D row indices are computed first (D
            // independent multiplies in flight), then the D cells are updated.
            self.total = self.total.saturating_add(w);
            let mut idx = [0u32; D];
            for (slot, f) in idx.iter_mut().zip(self.hashes.iter()) {
                *slot = f.index(h, W as u32);
            }
            for (row, &j) in self.rows.iter_mut().zip(idx.iter()) {
                if let Some(c) = row.get_mut(j as usize) {
                    *c = c.add_saturating(w);
                }
            }
        }
    }

    /// [`add_hash`](Self::add_hash), returning the key's [estimate](Self::estimate_hash)
    /// *after* the update at no extra cost (both rules find the key's smallest cell
    /// anyway, and the estimate becomes that cell plus `w`): an upper bound on the
    /// key's total weight including this update. `u64::MAX` when saturated.
    #[inline]
    pub fn add_hash_estimate(&mut self, h: KeyHash, w: u64) -> u64 {
        self.total = self.total.saturating_add(w);
        let mut idx = [0usize; D];
        let mut min = C::MAX;
        for ((row, f), slot) in self.rows.iter().zip(self.hashes.iter()).zip(idx.iter_mut()) {
            *slot = f.index(h, W as u32) as usize;
            if let Some(&c) = row.get(*slot) {
                min = min.min(c);
            }
        }
        let target = min.add_saturating(w);
        for (row, &j) in self.rows.iter_mut().zip(idx.iter()) {
            if let Some(c) = row.get_mut(j) {
                *c = if U::CONSERVATIVE {
                    // Branch-free: a data-dependent branch here mispredicts often.
                    (*c).max(target)
                } else {
                    c.add_saturating(w)
                };
            }
        }
        if target == C::MAX {
            u64::MAX
        } else {
            target.to_u64()
        }
    }

    /// Upper bound on the total weight of `key` (see the type's guarantee).
    #[inline]
    pub fn estimate<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> u64 {
        self.estimate_hash(self.seed.hash(key))
    }

    /// [`estimate`](Self::estimate) from a pre-computed digest.
    ///
    /// Returns `u64::MAX` when the key's smallest cell is saturated.
    #[inline]
    pub fn estimate_hash(&self, h: KeyHash) -> u64 {
        let mut min = C::MAX;
        for (row, f) in self.rows.iter().zip(self.hashes.iter()) {
            if let Some(&c) = row.get(f.index(h, W as u32) as usize) {
                min = min.min(c);
            }
        }
        if min == C::MAX {
            u64::MAX
        } else {
            min.to_u64()
        }
    }

    /// Aging (TinyLFU style): halves every counter and the total, so old traffic
    /// weighs half as much as new. Saturated cells stay saturated (they still mean
    /// "at least `C::MAX`"), which keeps every estimate an upper bound of the
    /// halved true weights.
    pub fn halve(&mut self) {
        for row in &mut self.rows {
            for c in row {
                *c = c.halved();
            }
        }
        self.total >>= 1;
    }

    /// Resets every counter and the total to zero; keeps the seed.
    pub fn clear(&mut self) {
        self.rows = [[C::ZERO; W]; D];
        self.total = 0;
    }

    /// The raw cells, row by row (for encoding or inspection).
    pub const fn rows(&self) -> &[[C; W]; D] {
        &self.rows
    }
}

impl<const W: usize, const D: usize, C: Counter> Cms<W, D, C, Plain> {
    /// Adds `other` into `self` cell by cell (saturating): afterwards `self` is the
    /// sketch of both streams. Geometry and counter type are equal by type; the
    /// seeds must be equal too.
    ///
    /// Only plain sketches have this method: conservative update is not linear.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the seeds differ (`self` is unchanged).
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        if self.seed != other.seed {
            return Err(MergeError::SeedMismatch);
        }
        for (a, b) in self.rows.iter_mut().zip(other.rows.iter()) {
            for (x, &y) in a.iter_mut().zip(b.iter()) {
                *x = x.merge_saturating(y);
            }
        }
        self.total = self.total.saturating_add(other.total);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    const SEED: Seed = Seed::new(3, 4);

    #[test]
    fn counts_exactly_without_collisions() {
        let mut s = Cms::<4096, 4>::new(SEED);
        s.add(b"a", 3);
        s.add(b"a", 4);
        assert_eq!(s.estimate(b"a"), 7);
        assert_eq!(s.estimate(b"b"), 0);
        assert_eq!(s.total(), 7);
    }

    #[test]
    fn u8_counters_saturate_and_stay_upper_bounds() {
        let mut s = Cms::<64, 3, u8>::new(SEED);
        for _ in 0..300 {
            s.add(b"k", 1);
        }
        assert_eq!(s.estimate(b"k"), u64::MAX);
        s.halve();
        assert_eq!(s.estimate(b"k"), u64::MAX);
        let mut cu = CmsCu::<64, 3, u8>::new(SEED);
        cu.add(b"k", 1 << 40);
        assert_eq!(cu.estimate(b"k"), u64::MAX);
        let mut big = Cms::<8, 1, u64>::new(SEED);
        big.add(b"x", u64::MAX);
        big.add(b"x", 5);
        assert_eq!(big.estimate(b"x"), u64::MAX);
        assert_eq!(big.total(), u64::MAX);
    }

    #[test]
    fn add_returns_the_new_estimate() {
        let mut plain = Cms::<64, 3>::new(SEED);
        let mut cu = CmsCu::<64, 3, u8>::new(SEED);
        for i in 0..500u32 {
            let h = SEED.hash(&(i % 97).to_le_bytes());
            assert_eq!(plain.add_hash_estimate(h, 3), plain.estimate_hash(h));
            assert_eq!(cu.add_hash_estimate(h, 3), cu.estimate_hash(h));
        }
    }

    #[test]
    fn halve_and_clear() {
        let mut s = CmsCu::<1024, 4, u16>::new(SEED);
        s.add(b"a", 9);
        s.halve();
        assert_eq!(s.estimate(b"a"), 4);
        assert_eq!(s.total(), 4);
        s.clear();
        assert_eq!(s.estimate(b"a"), 0);
        assert_eq!(s.total(), 0);
    }

    #[test]
    fn merge_checks_seed() {
        let mut a = Cms::<16, 2>::new(SEED);
        let b = Cms::<16, 2>::new(Seed::new(9, 9));
        assert_eq!(a.merge(&b), Err(MergeError::SeedMismatch));
    }

    #[test]
    fn sizes_are_as_documented() {
        assert_eq!(core::mem::size_of::<Cms<2048, 4>>(), 32_856);
        assert_eq!(core::mem::size_of::<Cms<272, 5, u16>>(), 2_824);
    }
}
