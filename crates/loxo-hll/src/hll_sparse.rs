//! [`HllSparse<P>`]: an [`Hll<P>`] that starts as an exact list of its keys'
//! high-precision entries (HLL++'s sparse mode) and converts in place.
//!
//! # Entries
//!
//! The entries are those of [`Ull`](crate::Ull)'s sparse mode (`ull_sparse`): the
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
//! `√(q/2) = 7.05·10^−5` at every `n` the list holds (derivation in `ull_sparse`
//! and `tests/tests/sparse_accuracy.rs`).

use core::fmt;

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, KeyHash, MergeError, Seed};

use crate::estimator::HIST_LEN;
use crate::precision::{Precision, SupportedPrecision};
use crate::registers;
use crate::ull_sparse::{entry_of, HALF_Q, SPARSE_P};
use crate::wire::{le_u32, FLAG_LIST, FLAG_MARTINGALE, LIST_ENTRY};
use crate::Hll;

/// Histogram cell holding [`LIST_MARK`] in list mode (0 in every dense sketch).
const MODE_CELL: usize = HIST_LEN - 1;
/// Histogram cell holding the entry count in list mode (0 in every dense sketch).
const LEN_CELL: usize = HIST_LEN - 2;
/// The list-mode mark (any non-zero value would do; ASCII "LIST").
const LIST_MARK: u32 = 0x5453_494c;

/// The estimate of a list of `k` entries, `k + q·k²/2` (module docs); also the
/// martingale value of a list frame, which decoders take from the count.
pub(crate) fn list_estimate(k: u32) -> f64 {
    let k = f64::from(k);
    k + HALF_Q * k * k
}

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
    inner: Hll<P>,
}

impl<const P: u8> HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Number of registers of the dense sketch, `m = 2^P`.
    pub const M: usize = 1 << P;
    /// Slots of the table, `0.75·m / 4 = 3m/16`.
    const SLOTS: usize = Hll::<P>::REGISTER_BYTES / 4;
    /// Most entries the list holds, `⌊3/4 · 3m/16⌋` (`9m/64` for `P ≥ 6`).
    pub const LIST_CAPACITY: u32 = (3 * Self::SLOTS / 4) as u32;

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
        // A free slot `f` exists (load ≤ 3/4): start right after it and stop before
        // it (it holds no entry, and may hold register bits by then).
        let mut s = (0..Self::SLOTS).find(|&s| self.slot(s) == 0).unwrap_or(0);
        for _ in 1..Self::SLOTS {
            s = Self::next(s);
            let e = self.slot(s);
            if e != 0 {
                self.set_slot(s, 0);
                let (i, rank) = Self::entry_register(e);
                let bytes = self.inner.registers.as_mut();
                if rank > registers::get(bytes, i) {
                    registers::set(bytes, i, rank);
                }
            }
        }
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

    /// Inserts `e` into the table: `Some(whether it was new)`, or `None` after
    /// converting to registers because the list was full.
    fn list_insert(&mut self, e: u32) -> Option<bool> {
        let mut s = Self::home(e);
        // Ends at a free slot within `SLOTS` probes: at most 3/4 are used.
        for _ in 0..Self::SLOTS {
            match self.slot(s) {
                0 => break,
                x if x == e => return Some(false),
                _ => s = Self::next(s),
            }
        }
        if self.list_len() >= Self::LIST_CAPACITY || self.slot(s) != 0 {
            self.densify();
            return None;
        }
        self.set_slot(s, e);
        self.inner.hist[LEN_CELL] += 1;
        Some(true)
    }

    /// The slot after `s`, wrapping (the slot count `3m/16` is not a power of two:
    /// a compare, no `%`).
    #[inline(always)]
    const fn next(s: usize) -> usize {
        if s + 1 >= Self::SLOTS {
            0
        } else {
            s + 1
        }
    }

    /// The slot holding the last byte of register `i`'s 3-byte group.
    #[inline(always)]
    const fn home_of_register(i: usize) -> usize {
        (3 * (i >> 2) + 2) >> 2
    }

    /// The home slot of an entry.
    #[inline(always)]
    const fn home(e: u32) -> usize {
        Self::home_of_register((e >> (6 + SPARSE_P - P as u32)) as usize)
    }

    /// The dense register index and rank an entry stands for at precision `P`
    /// (module docs); the rank is capped at `64 − P + 1` as `Hll` caps it.
    #[inline(always)]
    pub(crate) const fn entry_register(e: u32) -> (usize, u8) {
        let d = SPARSE_P - P as u32;
        let index25 = e >> 6;
        let low = index25 & ((1 << d) - 1);
        let rank = if low == 0 {
            // The d dropped index bits are zero: d more leading zeros.
            d + (e & 63)
        } else {
            // Leading zeros of the d bits plus one.
            d - (32 - low.leading_zeros()) + 1
        };
        let max = Hll::<P>::MAX_RANK as u32;
        let rank = if rank > max { max } else { rank };
        ((index25 >> d) as usize, rank as u8)
    }

    fn slot(&self, s: usize) -> u32 {
        self.inner
            .registers
            .as_ref()
            .get(4 * s..4 * s + 4)
            .map_or(0, le_u32)
    }

    fn set_slot(&mut self, s: usize, e: u32) {
        if let Some(dst) = self.inner.registers.as_mut().get_mut(4 * s..4 * s + 4) {
            dst.copy_from_slice(&e.to_le_bytes());
        }
    }

    /// The list's entries in table order (nothing in dense mode).
    fn list_entries(&self) -> impl Iterator<Item = u32> + '_ {
        let slots = if self.is_sparse() { Self::SLOTS } else { 0 };
        (0..slots).map(|s| self.slot(s)).filter(|&e| e != 0)
    }

    /// The list's entries in increasing order (the wire format's): the home slot
    /// grows with the entry, so per home slot, the entries of its cluster that
    /// belong to it, smallest first.
    fn list_entries_sorted(&self) -> impl Iterator<Item = u32> + '_ {
        let slots = if self.is_sparse() { Self::SLOTS } else { 0 };
        (0..slots).flat_map(move |home| {
            let mut last: Option<u32> = None;
            core::iter::from_fn(move || {
                let next = self
                    .cluster(home)
                    .filter(|&e| Self::home(e) == home && last.is_none_or(|l| e > l))
                    .min();
                last = next.or(last);
                next
            })
        })
    }

    /// The occupied slots from `home` up to the next free one.
    fn cluster(&self, home: usize) -> impl Iterator<Item = u32> + '_ {
        let mut s = home;
        (0..Self::SLOTS)
            .map(move |_| {
                let e = self.slot(s);
                s = Self::next(s);
                e
            })
            .take_while(|&e| e != 0)
    }

    /// The list's count with the first-order collision correction.
    fn list_estimate(&self) -> f64 {
        list_estimate(self.list_len())
    }

    fn list_header(&self, fingerprint: u64) -> Header {
        let mut payload = 4 + LIST_ENTRY * self.list_len() as usize;
        let mut flags = FLAG_LIST;
        if self.inner.hip_valid {
            flags |= FLAG_MARTINGALE;
            payload += 8;
        }
        let mut h = Header::new(
            SketchKind::Hll,
            fingerprint,
            Hll::<P>::PARAMS,
            payload as u32,
        );
        h.flags = flags;
        h
    }

    /// Length in bytes of the frame [`encode_into`](Self::encode_into) writes now:
    /// in list mode `36 + 8 + 4 + 4k + 4` for `k` entries (at most 9 268 at
    /// `P = 14`), in dense mode [`Hll::encoded_len`].
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        if self.is_sparse() {
            wire::frame_len(self.list_header(0).payload_len as usize)
        } else {
            self.inner.encoded_len()
        }
    }

    /// Serializes the sketch in the loxo wire format (kind `hll`, see
    /// `docs/format.md`): in list mode flag bit 2 and the list of entries in
    /// increasing order (and the martingale value, the list's estimate, unless a
    /// merge happened); in dense mode exactly [`Hll::encode_into`]'s bytes. An
    /// [`Hll`] decoding a list frame holds the registers of the same keys.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::{Hll, HllSparse};
    ///
    /// let seed = Seed::new(7, 8);
    /// let mut s = HllSparse::<12>::new(seed);
    /// for i in 0..100u32 {
    ///     s.insert(&i.to_le_bytes());
    /// }
    /// let mut buf = [0u8; 4096];
    /// let n = s.encode_into(&mut buf)?;
    /// assert_eq!(n, 36 + 8 + 4 + 4 * 100 + 4);
    /// let mut back = HllSparse::<12>::new(seed);
    /// back.decode_into(&buf[..n])?;
    /// assert!(back.is_sparse() && back == s);
    /// let mut dense = Hll::<12>::new(seed); // reads the list as registers
    /// dense.decode_into(&buf[..n])?;
    /// assert_eq!(s, dense);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_into_with_fingerprint(buf, self.inner.seed.fingerprint())
    }

    /// Like [`encode_into`](Self::encode_into), but writes `fingerprint` as the
    /// frame's seed fingerprint (for collectors that never learnt the seed).
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] as for [`encode_into`](Self::encode_into).
    pub fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError> {
        if !self.is_sparse() {
            return self.inner.encode_into_with_fingerprint(buf, fingerprint);
        }
        let header = self.list_header(fingerprint);
        let mut enc = Encoder::new(buf, &header)?;
        if header.flags & FLAG_MARTINGALE != 0 {
            enc.put(&self.list_estimate().to_le_bytes());
        }
        enc.put_u32(self.list_len());
        for e in self.list_entries_sorted() {
            enc.put_u32(e);
        }
        Ok(enc.finish())
    }

    /// Replaces this sketch with the one serialized in `bytes`, an `hll` frame of
    /// the same precision and seed: a list frame is kept as a list, any other
    /// leaves the sketch dense.
    ///
    /// Validates everything before writing: on error `self` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`Hll::decode_into`]; for a list frame [`DecodeError::InvalidValue`] also
    /// for more than [`LIST_CAPACITY`](Self::LIST_CAPACITY) entries, entries not
    /// strictly increasing or no digest produces (rank 0 or above 40, bit 31 set),
    /// flag bits 0 and 2 together, and a martingale value below the count.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let frame = Frame::parse(bytes)?;
        frame.header().expect(SketchKind::Hll, Hll::<P>::PARAMS)?;
        if frame.header().seed_fingerprint != self.inner.seed.fingerprint() {
            return Err(DecodeError::SeedMismatch {
                expected: self.inner.seed.fingerprint(),
                found: frame.header().seed_fingerprint,
            });
        }
        self.decode_frame(&frame)
    }

    /// Like [`decode_into`](Self::decode_into) but without the seed check; returns
    /// the frame's seed fingerprint (for collectors: merge only equal
    /// fingerprints, never insert keys into a sketch decoded this way).
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into), except `SeedMismatch`.
    pub fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        let frame = Frame::parse(bytes)?;
        frame.header().expect(SketchKind::Hll, Hll::<P>::PARAMS)?;
        self.decode_frame(&frame)?;
        Ok(frame.header().seed_fingerprint)
    }

    fn decode_frame(&mut self, frame: &Frame<'_>) -> Result<(), DecodeError> {
        match Hll::<P>::list_payload(frame)? {
            Some((hip, entries)) => {
                self.clear();
                // At most `LIST_CAPACITY` distinct entries: all fit in the list.
                for e in entries.chunks_exact(LIST_ENTRY).map(le_u32) {
                    self.list_insert(e);
                }
                // The list's martingale is its estimate: the value only says
                // whether there is one.
                self.inner.hip_valid = hip.is_some() && self.inner.hip_tracked;
                Ok(())
            }
            // Registers (dense or sparse payload): written only if valid, and then
            // a full histogram without the list mark.
            None => self.inner.decode_frame(frame),
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
        f.debug_struct("HllSparse")
            .field("precision", &P)
            .field("seed", &self.inner.seed)
            .field("sparse", &self.is_sparse())
            .field("list_len", &self.list_len())
            .field("estimate", &self.estimate())
            .field("estimate_martingale", &self.estimate_martingale())
            .finish_non_exhaustive()
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    extern crate std;

    use std::vec::Vec;

    use super::*;

    const SEED: Seed = Seed::new(0x5eed, 0x5a5e);

    fn digests(seed: u64) -> impl Iterator<Item = KeyHash> {
        let mut s = seed;
        core::iter::from_fn(move || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            Some(KeyHash::from_u64(loxo_core::mix64(s)))
        })
    }

    #[test]
    fn same_size_as_hll() {
        use core::mem::size_of;
        assert_eq!(size_of::<HllSparse<4>>(), size_of::<Hll<4>>());
        assert_eq!(size_of::<HllSparse<5>>(), size_of::<Hll<5>>());
        assert_eq!(size_of::<HllSparse<10>>(), size_of::<Hll<10>>());
        assert_eq!(size_of::<HllSparse<14>>(), size_of::<Hll<14>>());
        assert_eq!(size_of::<HllSparse<18>>(), size_of::<Hll<18>>());
        assert_eq!(HllSparse::<14>::new(SEED).memory_bytes(), 12_584);
        // 9m/64, above m/8 (the issue's exactness target)
        assert_eq!(HllSparse::<10>::LIST_CAPACITY, 144);
        assert_eq!(HllSparse::<14>::LIST_CAPACITY, 2304);
        assert_eq!(HllSparse::<4>::LIST_CAPACITY, 2);
        assert_eq!(HllSparse::<5>::LIST_CAPACITY, 4);
    }

    /// An entry's register and rank are those `Hll::insert_hash` derives.
    #[test]
    fn entries_give_the_hll_register_at_every_precision() {
        fn check<const P: u8>(h: KeyHash)
        where
            Precision<P>: SupportedPrecision,
        {
            let mut hll = Hll::<P>::new(SEED);
            hll.insert_hash(h);
            let (i, rank) = HllSparse::<P>::entry_register(entry_of(h.get()));
            assert_eq!(i, (h.get() >> (64 - P)) as usize);
            assert_eq!(hll.register(i), rank, "{:x} at P = {P}", h.get());
        }
        let special = [0, 1, 1 << 38, 1 << 39, 1 << 40, u64::MAX, 1 << 63, 1 << 50];
        for h in digests(1)
            .take(20_000)
            .chain(special.map(KeyHash::from_u64))
        {
            check::<4>(h);
            check::<5>(h);
            check::<10>(h);
            check::<14>(h);
            check::<18>(h);
        }
    }

    /// Across the conversion, over many seeds: the list-mode registers, the
    /// converted registers, histogram and estimate equal a dense `Hll`'s.
    fn conversion_equals_dense<const P: u8>(seeds: u64, keys: usize)
    where
        Precision<P>: SupportedPrecision,
    {
        let cap = HllSparse::<P>::LIST_CAPACITY;
        for seed in 0..seeds {
            let mut sparse = HllSparse::<P>::new(SEED);
            let mut dense = Hll::<P>::new(SEED);
            let mut converted_at = None;
            for h in digests(seed << 32).take(keys) {
                let was = sparse.list_len();
                let changed = sparse.insert_hash(h);
                dense.insert_hash(h);
                if sparse.is_sparse() {
                    assert_eq!(changed, sparse.list_len() == was + 1);
                    assert!(sparse.list_len() <= cap);
                } else if converted_at.is_none() {
                    converted_at = Some(was);
                    // Converted exactly when the list was full.
                    assert_eq!(was, cap, "P = {P}, seed {seed}");
                    let d = sparse.dense().unwrap();
                    assert_eq!(d, &dense);
                    assert_eq!(d.histogram(), dense.histogram());
                    assert_eq!(sparse.estimate().to_bits(), dense.estimate().to_bits());
                }
                if sparse.is_sparse() && sparse.list_len().is_multiple_of(7) {
                    assert_eq!(sparse, dense);
                    let mut copy = sparse.clone();
                    copy.densify();
                    assert!(!copy.is_sparse());
                    assert_eq!(copy.dense().unwrap(), &dense);
                    assert_eq!(copy.dense().unwrap().histogram(), dense.histogram());
                    assert_eq!(copy.estimate().to_bits(), dense.estimate().to_bits());
                    assert_eq!(copy.estimate_martingale(), sparse.estimate_martingale());
                }
            }
            assert!(converted_at.is_some(), "P = {P}: never converted");
            let d = sparse.into_dense();
            assert_eq!(d, dense);
            assert_eq!(d.histogram(), dense.histogram());
            assert_eq!(d.estimate().to_bits(), dense.estimate().to_bits());
        }
    }

    #[test]
    fn conversion_equals_dense_over_many_seeds() {
        conversion_equals_dense::<4>(2000, 40);
        conversion_equals_dense::<5>(2000, 60);
        conversion_equals_dense::<7>(1000, 200);
        conversion_equals_dense::<10>(300, 400);
        conversion_equals_dense::<12>(40, 1500);
    }

    /// Entries crowded onto a few registers: long clusters that wrap around the
    /// table's end, converted in place without losing one.
    #[test]
    fn conversion_survives_wrapping_clusters() {
        for top in [0u64, 1, 15, 63, 62, 60] {
            let mut sparse = HllSparse::<6>::new(SEED);
            let mut dense = Hll::<6>::new(SEED);
            // 64 − 6 bits below the index: vary dropped index bits and rank bits.
            for k in 0..40u64 {
                let h = KeyHash::from_u64(top << 58 | (k * 0x0123_4567) << 20 | 1 << (k % 19));
                sparse.insert_hash(h);
                dense.insert_hash(h);
                if sparse.is_sparse() {
                    assert_eq!(sparse, dense, "top {top}, k {k}");
                }
            }
            let d = sparse.into_dense();
            assert_eq!(d, dense, "top {top}");
            assert_eq!(d.histogram(), dense.histogram());
        }
        // Every home slot, including the last (wrap) and the first.
        let mut sparse = HllSparse::<4>::new(SEED);
        let mut dense = Hll::<4>::new(SEED);
        for h in [15u64 << 60 | 1, 15 << 60 | 1 << 40, 5] {
            sparse.insert_hash(KeyHash::from_u64(h));
            dense.insert_hash(KeyHash::from_u64(h));
        }
        assert!(!sparse.is_sparse());
        assert_eq!(sparse.into_dense(), dense);
    }

    #[test]
    fn duplicates_estimates_and_martingale() {
        let mut s = HllSparse::<10>::new(SEED);
        assert!(s.is_empty() && s.is_sparse());
        assert_eq!(s.estimate(), 0.0);
        assert_eq!(s.estimate_martingale(), Some(0.0));
        for h in digests(7).take(100) {
            assert!(s.insert_hash(h));
            assert!(!s.insert_hash(h));
        }
        assert!(!s.is_empty());
        assert_eq!(s.estimate().round(), 100.0);
        assert_eq!(s.estimate_martingale().map(f64::round), Some(100.0));
        let mut d = s.clone();
        let before = d.estimate_martingale().unwrap();
        assert!(!d.as_dense().is_empty());
        assert_eq!(d.estimate_martingale(), Some(before));
        d.insert(b"one more");
        assert!(d.estimate_martingale().unwrap() > before);
        d.clear();
        assert!(d.is_sparse() && d.is_empty());
        assert_eq!(d.estimate_martingale(), Some(0.0));
        let u = HllSparse::<10>::new(SEED).without_martingale();
        assert_eq!(u.estimate_martingale(), None);
        assert!(std::format!("{s:?}").starts_with("HllSparse { precision: 10"));
    }

    #[test]
    fn merge_in_every_mode() {
        for n in [10usize, 60, 100, 140, 200, 1000] {
            let keys: Vec<KeyHash> = digests(n as u64).take(n).collect();
            let union = {
                let mut h = Hll::<10>::new(SEED);
                for &k in &keys {
                    h.insert_hash(k);
                }
                h
            };
            // Part `part` of three, as a list-mode sketch converted or not.
            let build = |dense: bool, part: usize| {
                let mut s = HllSparse::<10>::new(SEED);
                for (i, &k) in keys.iter().enumerate() {
                    if i % 3 == part {
                        s.insert_hash(k);
                    }
                }
                if dense {
                    s.densify();
                }
                s
            };
            for (da, db) in [(false, false), (false, true), (true, false), (true, true)] {
                let mut a = build(da, 0);
                a.merge(&build(db, 1)).unwrap();
                a.merge(&build(da, 2)).unwrap();
                assert_eq!(a, union, "n = {n}, modes {da} {db}");
                assert_eq!(a.estimate_martingale(), None);
                if a.is_sparse() {
                    // Every key's entry kept: the union's count.
                    assert!(n <= HllSparse::<10>::LIST_CAPACITY as usize);
                    assert_eq!(a.estimate().round(), n as f64);
                } else {
                    let d = a.dense().unwrap();
                    assert_eq!(d.histogram(), union.histogram());
                    assert_eq!(a.estimate().to_bits(), union.estimate().to_bits());
                }
            }
            let mut a = build(false, 0);
            let mut third = Hll::<10>::new(SEED);
            for (i, &k) in keys.iter().enumerate() {
                if i % 3 != 0 {
                    third.insert_hash(k);
                }
            }
            a.merge_hll(&third).unwrap();
            assert!(!a.is_sparse());
            assert_eq!(a, union);
        }
        let mut a = HllSparse::<10>::new(SEED);
        a.insert(b"x");
        let before = a.clone();
        let mut other = HllSparse::<10>::new(Seed::new(1, 1));
        other.insert(b"y");
        assert_eq!(a.merge(&other), Err(MergeError::SeedMismatch));
        assert_eq!(
            a.merge_hll(&Hll::new(Seed::new(1, 1))),
            Err(MergeError::SeedMismatch)
        );
        assert!(a.is_sparse());
        assert_eq!(a, before);
        assert!(a.estimate_martingale().is_some());
    }

    fn encode<const P: u8>(s: &HllSparse<P>) -> Vec<u8>
    where
        Precision<P>: SupportedPrecision,
    {
        let mut buf = std::vec![0u8; s.encoded_len()];
        let n = s.encode_into(&mut buf).unwrap();
        assert_eq!(n, buf.len());
        buf
    }

    #[test]
    fn wire_round_trip_in_both_modes() {
        for n in [0usize, 1, 50, 144, 145, 3000] {
            let mut s = HllSparse::<10>::new(SEED);
            let mut dense = Hll::<10>::new(SEED);
            for h in digests(n as u64).take(n) {
                s.insert_hash(h);
                dense.insert_hash(h);
            }
            let bytes = encode(&s);
            let mut back = HllSparse::<10>::new(SEED);
            back.decode_into(&bytes).unwrap();
            assert_eq!(back.is_sparse(), s.is_sparse());
            assert_eq!(back, s);
            assert_eq!(back.list_len(), s.list_len());
            assert_eq!(back.estimate().to_bits(), s.estimate().to_bits());
            assert_eq!(back.estimate_martingale(), s.estimate_martingale());
            assert_eq!(encode(&back), bytes, "n = {n}: re-encoding differs");
            // A dense target holds the registers of the same keys.
            let mut h = Hll::<10>::new(SEED);
            h.decode_into(&bytes).unwrap();
            assert_eq!(h, dense);
            assert_eq!(h.histogram(), dense.histogram());
            assert_eq!(h.estimate_martingale(), s.estimate_martingale());
            if s.is_sparse() {
                assert_eq!(bytes.len(), 36 + 8 + 4 + 4 * n + 4);
                assert_eq!(bytes[7], 4 | 2);
            } else {
                // Dense mode: `Hll`'s frame (header, registers); only the
                // martingale value (from the list's count) and so the CRC differ.
                let mut buf = std::vec![0u8; dense.encoded_len()];
                dense.encode_into(&mut buf).unwrap();
                assert_eq!(bytes.len(), buf.len());
                assert_eq!(bytes[..36], buf[..36]);
                assert_eq!(bytes[44..bytes.len() - 4], buf[44..buf.len() - 4]);
            }
            // A list-mode target decodes a register frame into dense mode.
            let mut buf = std::vec![0u8; dense.encoded_len()];
            dense.encode_into(&mut buf).unwrap();
            let mut from_hll = HllSparse::<10>::new(SEED);
            from_hll.decode_into(&buf).unwrap();
            assert!(!from_hll.is_sparse());
            assert_eq!(from_hll, dense);
            assert_eq!(from_hll.estimate().to_bits(), dense.estimate().to_bits());
        }
        // After a merge: no martingale in the frame, none decoded.
        let mut a = HllSparse::<10>::new(SEED);
        a.insert(b"a");
        a.merge(&HllSparse::new(SEED)).unwrap();
        let bytes = encode(&a);
        assert_eq!(bytes[7], 4);
        let mut back = HllSparse::<10>::new(SEED);
        back.decode_into(&bytes).unwrap();
        assert_eq!(back.estimate_martingale(), None);
        assert_eq!(back, a);
        let mut other = HllSparse::<10>::new(Seed::new(3, 3));
        assert!(matches!(
            other.decode_into(&bytes),
            Err(DecodeError::SeedMismatch { .. })
        ));
        assert_eq!(other.decode_into_any_seed(&bytes), Ok(SEED.fingerprint()));
        assert_eq!(other.list_len(), 1);
    }

    /// Re-signs a frame after its payload was edited: a fresh envelope (length
    /// field and CRC) around the same flags and payload.
    fn resign(bytes: &[u8]) -> Vec<u8> {
        let payload = &bytes[36..bytes.len() - 4];
        let mut h = Header::new(
            SketchKind::Hll,
            SEED.fingerprint(),
            Hll::<8>::PARAMS,
            payload.len() as u32,
        );
        h.flags = bytes[7];
        let mut out = std::vec![0u8; wire::frame_len(payload.len())];
        let mut enc = Encoder::new(&mut out, &h).unwrap();
        enc.put(payload);
        enc.finish();
        out
    }

    #[test]
    fn bad_lists_are_refused_and_leave_the_target_unchanged() {
        let mut s = HllSparse::<8>::new(SEED);
        for h in digests(3).take(20) {
            s.insert_hash(h);
        }
        let good = encode(&s);
        // Payload: martingale f64 at 36, count at 44, entries from 48.
        let entry = |b: &[u8], k: usize| le_u32(&b[48 + 4 * k..52 + 4 * k]);
        let with_entry = |k: usize, e: u32| {
            let mut b = good.clone();
            b[48 + 4 * k..52 + 4 * k].copy_from_slice(&e.to_le_bytes());
            resign(&b)
        };
        let e0 = entry(&good, 0);
        let e1 = entry(&good, 1);
        let mut bad: Vec<(&str, Vec<u8>)> = std::vec![
            ("repeated", with_entry(1, e0)),
            ("unordered", with_entry(0, e1 + 1)),
            ("rank 0", with_entry(0, e0 & !63)),
            ("rank 41", with_entry(0, e0 & !63 | 0x29)),
            ("bit 31", with_entry(19, 1 << 31 | 1)),
            ("zero", with_entry(0, 0)),
        ];
        let mut b = good.clone();
        b[7] |= 1; // list and sparse flags together
        bad.push(("flags 0 and 2", resign(&b)));
        let mut b = good.clone();
        b[7] |= 8;
        bad.push(("unknown flag", resign(&b)));
        let mut b = good.clone();
        b[36..44].copy_from_slice(&19.5f64.to_le_bytes());
        bad.push(("martingale below the count", resign(&b)));
        let mut b = good.clone();
        b[36..44].copy_from_slice(&f64::NAN.to_le_bytes());
        bad.push(("martingale NaN", resign(&b)));
        // A list longer than the capacity (36 entries at P = 8).
        let cap = HllSparse::<8>::LIST_CAPACITY;
        let mut b = good[..48].to_vec();
        b[44..48].copy_from_slice(&(cap + 1).to_le_bytes());
        b[36..44].copy_from_slice(&1000.0f64.to_le_bytes());
        for k in 0..=cap {
            b.extend_from_slice(&((k + 1) << 6 | 1).to_le_bytes());
        }
        b.extend_from_slice(&[0; 4]);
        bad.push(("too long", resign(&b)));
        for (what, bytes) in &bad {
            let mut t = s.clone();
            assert_eq!(
                t.decode_into(bytes),
                Err(DecodeError::InvalidValue),
                "{what}"
            );
            assert!(t.is_sparse() && t.list_len() == 20 && t == s, "{what}");
            assert!(t.estimate_martingale().is_some());
            let mut h = Hll::<8>::new(SEED);
            h.insert(b"keep");
            let before = h.clone();
            assert_eq!(
                h.decode_into(bytes),
                Err(DecodeError::InvalidValue),
                "{what}"
            );
            assert_eq!(h, before);
            assert!(h.estimate_martingale().is_some());
        }
        // A count that does not match the payload.
        let mut b = good.clone();
        b[44..48].copy_from_slice(&21u32.to_le_bytes());
        let mut t = s.clone();
        assert_eq!(t.decode_into(&resign(&b)), Err(DecodeError::Truncated));
        assert_eq!(t, s);
        // The capacity itself is accepted.
        let mut b = good[..48].to_vec();
        b[44..48].copy_from_slice(&cap.to_le_bytes());
        b[36..44].copy_from_slice(&1000.0f64.to_le_bytes());
        for k in 0..cap {
            b.extend_from_slice(&((k + 1) << 6 | 1).to_le_bytes());
        }
        b.extend_from_slice(&[0; 4]);
        let mut t = s.clone();
        t.decode_into(&resign(&b)).unwrap();
        assert!(t.is_sparse());
        assert_eq!(t.list_len(), cap);
    }
}
