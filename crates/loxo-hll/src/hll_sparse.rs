//! [`HllSparse<P>`]: an [`Hll<P>`] that starts as an exact list of its keys'
//! high-precision entries (HLL++'s sparse mode) and converts in place.
//!
//! # Entries
//!
//! The entries are those of [`Ull`](crate::Ull)'s sparse mode (`entry`): the
//! little-endian `u32` `index25 << 6 | rank25` of a digest, `index25` its top 25
//! bits (HLL++'s `p' = 25`, Heule et al. 2013) and `rank25` the leading zeros of the
//! other 39 bits plus one (`1 ..= 40`). An entry determines the `Hll` register
//! update of its keys at every `P ≤ 25`: register `index25 >> (25 − P)`, rank the
//! leading zeros of the `d = 25 − P` dropped index bits plus one, or `d + rank25`
//! when they are all zero (capped at `64 − P + 1`, exactly where `Hll` caps).
//!
//! # Layout: an open-addressing table in the `0.75·2^P` register bytes
//!
//! The register bytes are `S = 3m/16` slots of one `u32` each (0 = empty; an entry
//! is never 0). Register `i` lives in the 3-byte group `g = ⌊i/4⌋` (bytes
//! `3g .. 3g + 3`), which lies in slots `⌊3g/4⌋` and `⌊(3g + 2)/4⌋`, the second
//! holding the group's last byte. That second slot is the entry's **home**; the
//! entry sits in the first free slot from there on (linear probing, wrapping at the
//! end). At most `3S/4 = 9m/64` entries (load ≤ 3/4: a few probes per insert, and
//! a free slot always exists). Mode and entry count live in histogram cells 63 and
//! 62, which a dense sketch never uses (its ranks stop at `64 − P + 1 ≤ 61`), so
//! `size_of::<HllSparse<P>>() == size_of::<Hll<P>>()`.
//!
//! **In-place conversion.** Every entry sits at or after its home slot with no free
//! slot in between, and its register's bytes lie in its home slot and the slot
//! before. Walking the slots once, starting just after a free slot `f`: each
//! slot's entry is read, the slot zeroed, and the entry's rank max-ed into its
//! register. The home and the slot before it were visited already (the cluster
//! from home to the entry holds no free slot, so the walk does not start inside
//! it), except when the home is the walk's first slot: then the slot before it is
//! `f`, free, where the walk stops without reading it. Any other slot is only
//! written after it was read (writes reach the home and the slot before it,
//! visited earlier), so no entry is overwritten. O(m), no scratch memory.
//!
//! # Estimate
//!
//! The list's count `k` with the collision correction `k + q·k²/2`, `q = 2^−25/3`
//! (two keys share an entry with probability `q`): relative standard error
//! `√(q/2) = 7.05·10^−5` at every `n` the list holds (derivation in `entry`
//! and `tests/tests/sparse_accuracy.rs`).

use core::fmt;

use loxo_core::{KeyHash, MergeError, Seed};

use crate::entry::{entry_of, entry_update, list_estimate, EntryTable, SPARSE_P};
use crate::estimator::HIST_LEN;
use crate::precision::{Precision, SupportedPrecision};
use crate::registers;
use crate::Hll;

/// Histogram cell holding [`LIST_MARK`] in list mode (0 in every dense sketch).
const MODE_CELL: usize = HIST_LEN - 1;
/// Histogram cell holding the entry count in list mode (0 in every dense sketch).
const LEN_CELL: usize = HIST_LEN - 2;
/// The list-mode mark (any non-zero value would do; ASCII "LIST").
const LIST_MARK: u32 = 0x5453_494c;

/// A HyperLogLog sketch that counts **exactly** while few keys have been seen:
/// "how many distinct keys?", with relative standard error `7·10^−5` up to
/// `9m/64` keys, then the [`Hll<P>`] of the same keys.
///
/// Until [`LIST_CAPACITY`](Self::LIST_CAPACITY) `= 9m/64` distinct entries (144 at
/// `P = 10`, 576 at `P = 12`, 2 304 at `P = 14`: more than `m/8`) the register
/// bytes hold a list of high-precision entries (25 index bits and the rank below
/// them, HLL++'s sparse representation) and [`estimate`](Self::estimate) is the
/// list's count with a collision correction: relative standard error
/// `√(q/2) = 7.05·10^−5`, `q = 2^−25/3` (no error at all below a few hundred keys in
/// practice; `tests/tests/sparse_accuracy.rs`), against the dense sketch's
/// `≈ 0.7/√m` there (2.2 % at `P = 10`). The insert that would overflow the list
/// converts it in place to registers: exactly those an [`Hll::new`] sketch fed the
/// same keys holds, with the same histogram and estimate; the martingale estimate
/// continues from the list's count. [`clear`](Self::clear) returns to list mode.
///
/// The dense sketch is an [`Hll<P>`] and costs what it costs: an insert in dense
/// mode is one more well-predicted branch (a histogram cell read) before
/// [`Hll::insert_hash`].
///
/// # Memory
///
/// `size_of::<HllSparse<P>>() == size_of::<Hll<P>>()`: `0.75 · 2^P` + 296 bytes
/// (12 584 at `P = 14`). The list lives in the register bytes and its count and mode
/// in histogram cells no dense sketch uses (module docs).
///
/// # Cost
///
/// * list mode: [`insert`](Self::insert) hashes once and probes an open-addressing
///   table at load ≤ 3/4 (at most ≈ 8.5 slots on average for a new entry, 2.5 for
///   a present one); [`register`](Self::register) probes too; the conversion is
///   one O(m) pass. [`estimate`](Self::estimate) is O(1).
/// * dense mode: those of [`Hll<P>`] plus one branch.
/// * [`merge`](Self::merge): O(m) (a list merged in: O(its entries)).
///
/// # Example
///
/// ```
/// use loxo_core::Seed;
/// use loxo_hll::{Hll, HllSparse};
///
/// let seed = Seed::new(1, 2);
/// let (mut sparse, mut dense) = (HllSparse::<12>::new(seed), Hll::<12>::new(seed));
/// for k in 0..500u32 {
///     sparse.insert(&k.to_le_bytes());
///     dense.insert(&k.to_le_bytes());
/// }
/// assert!(sparse.is_sparse());
/// assert_eq!(sparse.estimate().round(), 500.0); // the list's count
/// assert_eq!(sparse, dense); // the same registers
/// for k in 500..5_000u32 {
///     sparse.insert(&k.to_le_bytes());
///     dense.insert(&k.to_le_bytes());
/// }
/// assert!(!sparse.is_sparse()); // converted at 576 keys
/// assert_eq!(sparse.estimate(), dense.estimate());
/// assert_eq!(sparse.into_dense(), dense);
/// ```
#[derive(Clone)]
pub struct HllSparse<const P: u8>
where
    Precision<P>: SupportedPrecision,
{
    /// In list mode the register bytes are the table and histogram cells
    /// [`MODE_CELL`] and [`LEN_CELL`] hold the mark and the count; otherwise a valid
    /// `Hll`.
    pub(crate) inner: Hll<P>,
}

impl<const P: u8> HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Number of registers of the dense sketch, `m = 2^P`.
    pub const M: usize = 1 << P;
    /// Most entries the list holds, `⌊3/4 · 3m/16⌋` (`9m/64` for `P ≥ 6`).
    pub const LIST_CAPACITY: u32 = <Self as EntryTable>::LIST_CAPACITY;

    /// An empty sketch in list mode whose keys are hashed with `seed`.
    ///
    /// Sketches to be [merged](Self::merge) must share their seed.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let mut inner = Hll::new(seed);
        inner.hist[MODE_CELL] = LIST_MARK;
        Self { inner }
    }

    /// The same sketch without martingale tracking once dense (see
    /// [`Hll::without_martingale`]); [`estimate_martingale`](Self::estimate_martingale)
    /// is always `None`.
    #[must_use]
    pub const fn without_martingale(mut self) -> Self {
        // As `Hll::without_martingale` (a `const fn` cannot move `inner` out).
        self.inner.hip_tracked = false;
        self.inner.hip_valid = false;
        self
    }

    /// The seed keys are hashed with.
    #[must_use]
    pub const fn seed(&self) -> Seed {
        self.inner.seed
    }

    /// The precision `P` of the dense sketch (`m = 2^P` registers).
    #[must_use]
    pub const fn precision(&self) -> u8 {
        P
    }

    /// Bytes this value occupies, `size_of::<Hll<P>>()`: `0.75 · 2^P` + 296.
    #[must_use]
    pub const fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// Whether the sketch is in list mode now (not yet converted to registers).
    #[must_use]
    pub const fn is_sparse(&self) -> bool {
        self.inner.hist[MODE_CELL] == LIST_MARK
    }

    /// Number of entries in the list (0 in dense mode).
    #[must_use]
    pub const fn list_len(&self) -> u32 {
        if self.is_sparse() {
            self.inner.hist[LEN_CELL]
        } else {
            0
        }
    }

    /// Adds a key: hashes it once with the sketch's seed, then
    /// [`insert_hash`](Self::insert_hash). Returns whether the sketch changed.
    #[inline]
    pub fn insert<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.inner.seed.hash(key))
    }

    /// Adds a key already hashed with this sketch's seed. In list mode: adds the
    /// digest's entry unless present (returns whether it was new), converting to
    /// registers first when the list is full; in dense mode: [`Hll::insert_hash`].
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        if self.is_sparse() {
            return self.insert_hash_list(h);
        }
        self.inner.insert_hash(h)
    }

    #[inline(never)]
    fn insert_hash_list(&mut self, h: KeyHash) -> bool {
        match self.list_insert(entry_of(h.get())) {
            Some(added) => added,
            None => self.inner.insert_hash(h),
        }
    }

    /// The estimated number of distinct keys: in list mode the list's count with
    /// the collision correction (relative standard error `7·10^−5`), in dense mode
    /// [`Hll::estimate`]. O(1).
    #[must_use]
    pub fn estimate(&self) -> f64 {
        if self.is_sparse() {
            self.list_estimate()
        } else {
            self.inner.estimate()
        }
    }

    /// The martingale estimate, or `None` after any merge or decoded frame
    /// without one. In list mode it is the list's estimate; after the conversion
    /// it continues from there as [`Hll::estimate_martingale`].
    #[must_use]
    pub fn estimate_martingale(&self) -> Option<f64> {
        if self.is_sparse() {
            self.inner.hip_valid.then(|| self.list_estimate())
        } else {
            self.inner.estimate_martingale()
        }
    }

    /// True if no key was inserted since creation or the last [`clear`](Self::clear).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        if self.is_sparse() {
            self.list_len() == 0
        } else {
            self.inner.is_empty()
        }
    }

    /// Empties the sketch, keeping its seed, and returns to list mode.
    pub fn clear(&mut self) {
        self.inner.clear();
        self.inner.hist[MODE_CELL] = LIST_MARK;
    }

    /// Register `index` of the dense sketch of the same keys (0 ..= 64 − P + 1),
    /// or 0 if `index ≥ m`. In list mode it probes the table.
    #[must_use]
    pub fn register(&self, index: usize) -> u8 {
        if !self.is_sparse() {
            return self.inner.register(index);
        }
        if index >= Self::M {
            return 0;
        }
        self.cluster(Self::home_of_register(index))
            .map(Self::entry_register)
            .filter(|&(i, _)| i == index)
            .fold(0, |r, (_, rank)| r.max(rank))
    }

    /// Converts a list-mode sketch to registers now (a no-op in dense mode): those
    /// an [`Hll::new`] sketch fed the same keys holds, with its histogram and
    /// estimate; the martingale estimate continues from the list's count. One
    /// O(m) pass in place (module docs).
    pub fn densify(&mut self) {
        if !self.is_sparse() {
            return;
        }
        let count = self.list_estimate();
        self.convert_in_place();
        // A fresh histogram: cells 62 and 63 (mode and count) become 0.
        self.inner.recount();
        if self.inner.hip_valid {
            self.inner.hip_estimate = count;
        }
    }

    /// The dense sketch, converting first if in list mode.
    pub fn as_dense(&mut self) -> &Hll<P> {
        self.densify();
        &self.inner
    }

    /// The dense sketch if already converted, `None` in list mode.
    #[must_use]
    pub fn dense(&self) -> Option<&Hll<P>> {
        (!self.is_sparse()).then_some(&self.inner)
    }

    /// The dense sketch, converting first if in list mode.
    #[must_use]
    pub fn into_dense(mut self) -> Hll<P> {
        self.densify();
        self.inner
    }

    /// Merges `other` into `self` in any mode mix: afterwards `self` is exactly the
    /// sketch of the union of both key streams (a list while the union's entries
    /// fit, else the union's dense `Hll`). A list is merged entry by entry; a dense
    /// `other` converts `self` first. The martingale estimate becomes `None`.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the sketches hash with different seeds;
    /// `self` is then unchanged.
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        if self.inner.seed != other.inner.seed {
            return Err(MergeError::SeedMismatch);
        }
        self.inner.hip_valid = false;
        if other.is_sparse() {
            for e in other.list_entries() {
                self.insert_entry(e);
            }
        } else {
            self.densify();
            self.inner.merge(&other.inner)?;
        }
        Ok(())
    }

    /// Merges a dense [`Hll<P>`] into `self`, converting `self` first (registers
    /// cannot become list entries). The martingale estimate becomes `None`.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the sketches hash with different seeds;
    /// `self` is then unchanged.
    pub fn merge_hll(&mut self, other: &Hll<P>) -> Result<(), MergeError> {
        if self.inner.seed != other.seed {
            return Err(MergeError::SeedMismatch);
        }
        self.inner.hip_valid = false;
        self.densify();
        self.inner.merge(other)
    }

    /// Adds an entry in either mode (merges, decodes).
    fn insert_entry(&mut self, e: u32) {
        if self.is_sparse() && self.list_insert(e).is_some() {
            return;
        }
        let (i, rank) = Self::entry_register(e);
        self.inner.merge_register(i, rank);
    }

    /// The slot holding the last byte of register `i`'s 3-byte group.
    #[inline(always)]
    const fn home_of_register(i: usize) -> usize {
        (3 * (i >> 2) + 2) >> 2
    }

    /// The dense register index and rank an entry stands for at precision `P`
    /// ([`entry_update`]: the rank `Hll::insert_hash` derives from the same digest).
    #[inline(always)]
    pub(crate) const fn entry_register(e: u32) -> (usize, u8) {
        let (i, rank) = entry_update(e, P);
        (i, rank as u8)
    }

    /// The list's count with the first-order collision correction.
    fn list_estimate(&self) -> f64 {
        list_estimate(self.list_len())
    }
}

/// The table: `3m/16` slots in the register bytes, the count and the mode in
/// histogram cells (module docs).
impl<const P: u8> EntryTable for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    /// `0.75·m / 4 = 3m/16`.
    const SLOTS: usize = Hll::<P>::REGISTER_BYTES / 4;
    const LIST_CAPACITY: u32 = (3 * Self::SLOTS / 4) as u32;

    #[inline(always)]
    fn home(e: u32) -> usize {
        Self::home_of_register((e >> (6 + SPARSE_P - P as u32)) as usize)
    }

    fn table(&self) -> &[u8] {
        self.inner.registers.as_ref()
    }

    fn table_mut(&mut self) -> &mut [u8] {
        self.inner.registers.as_mut()
    }

    fn is_list(&self) -> bool {
        self.is_sparse()
    }

    fn entries_len(&self) -> u32 {
        self.inner.hist[LEN_CELL]
    }

    fn set_entries_len(&mut self, n: u32) {
        self.inner.hist[LEN_CELL] = n;
    }

    fn convert(&mut self) {
        self.densify();
    }

    fn apply_in_place(&mut self, e: u32) {
        let (i, rank) = Self::entry_register(e);
        let bytes = self.inner.registers.as_mut();
        if rank > registers::get(bytes, i) {
            registers::set(bytes, i, rank);
        }
    }
}

/// Two sketches are equal when they share the seed and every register of the
/// dense sketch of their keys (a list equals its conversion); the martingale state
/// is not compared. O(m) probes when a list is involved.
impl<const P: u8> PartialEq for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    fn eq(&self, other: &Self) -> bool {
        match (self.dense(), other.dense()) {
            (Some(a), Some(b)) => a == b,
            _ => {
                self.seed() == other.seed()
                    && (0..Self::M).all(|i| self.register(i) == other.register(i))
            }
        }
    }
}

impl<const P: u8> Eq for HllSparse<P> where Precision<P>: SupportedPrecision {}

/// Equal when the dense sketch of `self`'s keys equals `other` (seed and registers).
impl<const P: u8> PartialEq<Hll<P>> for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    fn eq(&self, other: &Hll<P>) -> bool {
        match self.dense() {
            Some(a) => a == other,
            None => {
                self.seed() == other.seed()
                    && (0..Self::M).all(|i| self.register(i) == other.register(i))
            }
        }
    }
}

/// Prints the parameters, the mode and the estimate, not the register bytes.
impl<const P: u8> fmt::Debug for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state: [(&str, &dyn fmt::Debug); 2] = [
            ("sparse", &self.is_sparse()),
            ("list_len", &self.list_len()),
        ];
        let estimates = (self.estimate(), self.estimate_martingale());
        crate::debug::sketch(f, "HllSparse", P, self.inner.seed, &state, estimates)
    }
}

#[cfg(feature = "defmt")]
impl<const P: u8> defmt::Format for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "HllSparse {{ precision: {=u8}, seed: {}, sparse: {=bool}, list_len: {=u32}, estimate: {=f64} }}",
            P,
            self.inner.seed,
            self.is_sparse(),
            self.list_len(),
            self.estimate()
        );
    }
}

#[cfg(test)]
mod tests;
