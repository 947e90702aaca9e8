//! The HyperLogLog sketch [`Hll<P>`].

use core::fmt;

use loxo_core::{DecodeError, KeyHash, MergeError, Seed};

use crate::estimator::{self, HIST_LEN};
use crate::precision::{FoldsInto, Precision, SupportedPrecision};
use crate::registers::{self, Registers};

/// `hip_sum` of an empty sketch: `m · 2^(63 − P) = 2^63`.
const HIP_SUM_EMPTY: u64 = 1 << 63;

/// `2^63 / hip_sum` new keys: `m / Σ 2^−r` with the sum exact and rounded once, so
/// the increments (and the estimate) equal Apache DataSketches' to the bit.
#[inline(always)]
fn hip_increment(hip_sum: u64) -> f64 {
    9_223_372_036_854_775_808.0 / hip_sum as f64
}

/// A HyperLogLog sketch with `m = 2^P` six-bit registers: "how many distinct keys?".
///
/// `P` is the precision, 4..=18; any other value fails to compile (see
/// [`SupportedPrecision`]). Relative standard error of [`estimate`](Self::estimate):
/// `1.04 / √m` (0.81 % at `P = 14`); of the [martingale
/// estimate](Self::estimate_martingale), while only inserts were made:
/// `≈ √(ln 2 / m) ≈ 0.83 / √m` (Ting 2014, Ertl 2017), about 20 % lower.
///
/// # Register derivation (a contract: wire and interop formats depend on it)
///
/// From the key's 64-bit keyed digest `h = KeyHash::get()`:
/// * **index** = the top `P` bits, `h >> (64 − P)`;
/// * **rank** = number of leading zeros of the remaining `64 − P` bits, plus one,
///   capped at `64 − P + 1` (all remaining bits zero).
///
/// Register `index` keeps the maximum rank seen. Register values are thus in
/// `0 ..= 64 − P + 1`, 0 meaning "never hit".
///
/// # Memory
///
/// Registers: `0.75 · 2^P` bytes (four 6-bit registers per three bytes, see the
/// layout below), plus a fixed header of 296 bytes: the seed (16), the register
/// histogram (64 × `u32` = 256) and the martingale state (two `f64` and a flag),
/// 289 bytes padded to 8-byte alignment (for `P = 4` the total is 304 bytes).
/// `size_of::<Hll<14>>()` is 12 584 bytes (12 KiB of registers); `Hll<4>` is 304 bytes;
/// `Hll<18>` is 196 904 bytes — construct large sketches in a `static` or a `Box`, not
/// on a small stack.
///
/// Register layout: register `i` is bits `6·(i mod 4) ..` of the 24-bit
/// little-endian word formed by bytes `3·⌊i/4⌋ .. 3·⌊i/4⌋ + 3` (a little-endian bit
/// stream, register `i` at bit `6·i`).
///
/// # Cost
///
/// * [`insert`](Self::insert): one SipHash-1-3 of the key, then
///   [`insert_hash`](Self::insert_hash): a shift, a leading-zero count, a 3-byte
///   read; on the rare register change also a 3-byte write, two histogram updates
///   and one division for the martingale estimate. No other division, no `%`.
/// * [`estimate`](Self::estimate): O(1): Ertl's register sum is kept as an exact
///   integer on every change; while registers are still 0 (`n` up to a few `m`)
///   its σ series adds up to ~60 cheap rounds. A sketch built
///   [`without_martingale`](Self::without_martingale) keeps no running sum (its
///   inserts stay as cheap as they can be) and estimates in O(64 − P) from the
///   histogram.
/// * [`merge`](Self::merge): O(m).
///
/// # Example
///
/// ```
/// use loxo_core::Seed;
/// use loxo_hll::Hll;
///
/// let mut hll = Hll::<12>::new(Seed::new(0x5eed, 0xcafe));
/// for i in 0..10_000u32 {
///     hll.insert(&i.to_le_bytes());
///     hll.insert(&i.to_le_bytes()); // duplicates change nothing
/// }
/// let e = hll.estimate();
/// let err = (e - 10_000.0).abs() / 10_000.0;
/// assert!(err < 4.0 * hll.relative_standard_error(), "{e}");
/// assert!(hll.estimate_martingale().is_some());
/// ```
#[derive(Clone)]
pub struct Hll<const P: u8>
where
    Precision<P>: SupportedPrecision,
{
    pub(crate) seed: Seed,
    /// `hist[k]` = number of registers holding `k`; always sums to `m`.
    pub(crate) hist: [u32; HIST_LEN],
    /// Martingale (HIP) estimate accumulated over register changes.
    pub(crate) hip_estimate: f64,
    /// `Σ_j 2^(63 − P − r_j)` over registers with `r_j ≤ 63 − P`: exactly `2^63 ×` the
    /// probability that a new distinct key changes a register (ranks above `63 − P`,
    /// reached with probability `2^−(63 − P)` per key, are left out). Kept by every
    /// register change (also after merges): it is the estimate's register sum.
    pub(crate) hip_sum: u64,
    /// False once the registers were changed by anything but inserts.
    pub(crate) hip_valid: bool,
    /// Whether this sketch maintains the martingale at all (see
    /// [`without_martingale`](Hll::without_martingale)).
    pub(crate) hip_tracked: bool,
    pub(crate) registers: <Precision<P> as SupportedPrecision>::Registers,
}

impl<const P: u8> Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Number of registers, `m = 2^P`.
    pub const M: usize = 1 << P;
    /// Largest register value (rank), `64 − P + 1`.
    pub const MAX_RANK: u8 = 64 - P + 1;
    /// Bytes of packed register storage, `0.75 · m`.
    pub const REGISTER_BYTES: usize = 3 << (P - 2);

    /// A register's share of `hip_sum`: `2^(63 − P − r)`, 0 above rank `63 − P`.
    #[inline(always)]
    pub(crate) const fn hip_term(r: u8) -> u64 {
        match (1u64 << (63 - P)).checked_shr(r as u32) {
            Some(t) => t,
            None => 0,
        }
    }

    /// An empty sketch whose keys are hashed with `seed`.
    ///
    /// Sketches to be [merged](Self::merge) must share their seed.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        Self {
            seed,
            hist: Self::EMPTY_HIST,
            hip_estimate: 0.0,
            hip_sum: HIP_SUM_EMPTY,
            hip_valid: true,
            hip_tracked: true,
            registers: <Precision<P> as SupportedPrecision>::ZERO,
        }
    }

    /// The same sketch without martingale (HIP) tracking: registers, histogram and
    /// [`estimate`](Self::estimate) are unchanged, [`estimate_martingale`](Self::estimate_martingale)
    /// is always `None` (also after [`clear`](Self::clear)) and encodings carry no
    /// martingale. Tracking costs an `f64` division and addition per register change,
    /// done in software on a Cortex-M4F (single-precision FPU): a sketch that is only
    /// merged (fleet-wide flow counts) or read through `estimate` should not pay it.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    /// static FLOWS: Hll<10> = Hll::new(Seed::new(1, 2)).without_martingale();
    /// let mut a = FLOWS.clone();
    /// let mut b = Hll::<10>::new(Seed::new(1, 2));
    /// for k in 0..1000u32 {
    ///     a.insert(&k.to_le_bytes());
    ///     b.insert(&k.to_le_bytes());
    /// }
    /// assert_eq!(a, b);
    /// assert_eq!(a.estimate(), b.estimate());
    /// assert!(a.estimate_martingale().is_none() && b.estimate_martingale().is_some());
    /// a.clear();
    /// assert!(a.estimate_martingale().is_none());
    /// ```
    #[must_use]
    pub const fn without_martingale(mut self) -> Self {
        self.hip_tracked = false;
        self.hip_valid = false;
        self
    }

    const EMPTY_HIST: [u32; HIST_LEN] = {
        let mut h = [0; HIST_LEN];
        h[0] = 1 << P;
        h
    };

    /// The seed keys are hashed with.
    #[must_use]
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// The precision `P` (`m = 2^P` registers).
    #[must_use]
    pub const fn precision(&self) -> u8 {
        P
    }

    /// Bytes this value occupies, `size_of::<Hll<P>>()`: `0.75 · 2^P` + 296.
    #[must_use]
    pub const fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// The relative standard error of [`estimate`](Self::estimate), `1.04 / √m`.
    #[must_use]
    pub const fn relative_standard_error(&self) -> f64 {
        // √m = 2^(P/2), times √2 when P is odd.
        let root = (1u32 << (P / 2)) as f64;
        let root = if P % 2 == 1 {
            root * core::f64::consts::SQRT_2
        } else {
            root
        };
        1.04 / root
    }

    /// Adds a key: hashes it once with the sketch's seed, then
    /// [`insert_hash`](Self::insert_hash). Returns whether a register changed.
    #[inline]
    pub fn insert<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.seed.hash(key))
    }

    /// Adds a key already hashed with this sketch's seed (pre-hashed insertion:
    /// hash a flow key once, feed the same [`KeyHash`] to several sketches).
    ///
    /// Returns whether a register changed (false for every duplicate).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    ///
    /// let seed = Seed::new(7, 8);
    /// let (mut a, mut b) = (Hll::<10>::new(seed), Hll::<10>::new(seed));
    /// let h = seed.hash(b"10.0.0.1 -> 10.0.0.2"); // hash once …
    /// a.insert_hash(h); // … feed it to several sketches
    /// b.insert(b"10.0.0.1 -> 10.0.0.2");
    /// assert_eq!(a, b);
    /// // index = top 10 bits of the digest, rank = leading zeros of the rest + 1
    /// let index = (h.get() >> 54) as usize;
    /// let rank = (h.get() << 10 | 1 << 9).leading_zeros() as u8 + 1;
    /// assert_eq!(a.register(index), rank);
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        let h = h.get();
        let index = (h >> (64 - P)) as usize;
        // The remaining 64 − P bits moved to the top; the sentinel bit just below
        // them caps the leading-zero count at 64 − P, so rank ≤ 64 − P + 1.
        let rank = ((h << P) | (1 << (P - 1))).leading_zeros() as u8 + 1;
        self.raise(index, rank)
    }

    /// Raises register `index` to `rank` if that is larger, keeping the histogram
    /// and the martingale estimate up to date. Returns whether it changed.
    #[inline(always)]
    fn raise(&mut self, index: usize, rank: u8) -> bool {
        let old = registers::get(self.registers.as_ref(), index);
        if rank <= old {
            return false;
        }
        registers::set(self.registers.as_mut(), index, rank);
        // An untracked sketch (`without_martingale`) keeps neither the martingale nor
        // the running register sum: one test per change, as cheap as the insert path
        // was before the O(1) estimate (the flow monitor's two sketches are untracked:
        // the sum cost its firmware 14 instructions per frame).
        if self.hip_tracked {
            // Skipped once invalid (after a merge): it would never be read.
            if self.hip_valid {
                // HIP (Cohen 2015, Ting 2014): the change happened with probability
                // hip_sum / 2^63, so it stands for 2^63 / hip_sum new distinct keys.
                // The sum is kept as an exact integer: one f64 division and one
                // addition per change (both in software on a Cortex-M4F, whose FPU is
                // single precision).
                self.hip_estimate += hip_increment(self.hip_sum);
            }
            self.hip_sum = self
                .hip_sum
                .wrapping_sub(Self::hip_term(old))
                .wrapping_add(Self::hip_term(rank));
        }
        self.move_in_histogram(old, rank);
        true
    }

    /// Moves one register from `old` to `new` in the histogram and in `hip_sum`
    /// (an exact integer, kept by every change: [`estimate`](Self::estimate) reads
    /// its register sum from it).
    #[inline(always)]
    fn move_register(&mut self, old: u8, new: u8) {
        self.hip_sum = self
            .hip_sum
            .wrapping_sub(Self::hip_term(old))
            .wrapping_add(Self::hip_term(new));
        self.move_in_histogram(old, new);
    }

    #[inline(always)]
    fn move_in_histogram(&mut self, old: u8, new: u8) {
        // `hist[v]` counts the registers holding `v` (six bits: masking changes no
        // value, and lets the compiler drop both bounds checks): `hist[old] ≥ 1` and
        // the counts sum to `m`, so neither step wraps.
        let h = &mut self.hist;
        if let Some(c) = h.get_mut(usize::from(old & 63)) {
            *c = c.wrapping_sub(1);
        }
        if let Some(c) = h.get_mut(usize::from(new & 63)) {
            *c = c.wrapping_add(1);
        }
    }

    /// Raises register `index` to `rank` as a merge does: histogram and register
    /// sum kept, the martingale left to the caller (which invalidates it). For
    /// [`HllSparse`](crate::HllSparse)'s list entries; not on the insert path.
    /// Returns whether the register changed.
    pub(crate) fn merge_register(&mut self, index: usize, rank: u8) -> bool {
        let old = registers::get(self.registers.as_ref(), index);
        if index >= Self::M || rank <= old {
            return false;
        }
        registers::set(self.registers.as_mut(), index, rank);
        self.move_register(old, rank);
        true
    }

    /// Recomputes the histogram and the register sum from the register bytes,
    /// after they were written directly (a list converted in place or decoded).
    pub(crate) fn recount(&mut self) {
        let mut hist = [0u32; HIST_LEN];
        let mut sum = 0u64;
        for r in Registers::new(self.registers.as_ref()) {
            if let Some(c) = hist.get_mut(usize::from(r)) {
                *c += 1;
            }
            sum = sum.wrapping_add(Self::hip_term(r));
        }
        self.hist = hist;
        self.hip_sum = sum;
    }

    /// The estimated number of distinct keys inserted: Ertl's improved raw
    /// estimator over the register histogram (O(1) in `m`).
    ///
    /// Relative standard error at most `1.04 / √m` at every cardinality (measured:
    /// about `0.71/√m` for `n ≪ m`, `0.85/√m` near `2.5·m`, `1.04/√m` for large `n`),
    /// with no bias tables and no bump: at small `n` it is at least as accurate as
    /// linear counting. Returns 0 for an empty sketch.
    #[must_use]
    pub fn estimate(&self) -> f64 {
        if self.hip_tracked {
            estimator::ertl_from_sum(&self.hist, self.hip_sum, P)
        } else {
            estimator::ertl(&self.hist, P)
        }
    }

    /// The classic HyperLogLog estimate (Flajolet et al. 2007): `α_m · m² / Σ 2^−r`,
    /// replaced by linear counting `m · ln(m / V)` when that is `≤ 2.5 · m` and `V`
    /// registers are 0. Kept for comparison: its error has a bump just above
    /// `n ≈ 2.5 · m` where the two formulas meet. Prefer [`estimate`](Self::estimate).
    #[must_use]
    pub fn estimate_classic(&self) -> f64 {
        estimator::classic(&self.hist, P)
    }

    /// Linear counting alone, `m · ln(m / V)` with `V` registers at 0: accurate for
    /// `n ≪ m`, infinite once every register is hit.
    #[must_use]
    pub fn estimate_linear_counting(&self) -> f64 {
        estimator::linear_counting(&self.hist, P)
    }

    /// The martingale (historic inverse probability, HIP) estimate, or `None` if
    /// the registers were ever changed by anything but inserts.
    ///
    /// Every register change adds `1 / P(change)` to a running sum; this uses the
    /// order of insertions, which the final registers forget, and so has a lower
    /// relative standard error, `≈ 0.83 / √m` (Ertl 2017) against `1.04 / √m`.
    /// After a [`merge`](Self::merge), [`merge_from`](Self::merge_from) or
    /// [`set_registers`](Self::set_registers) the insertion history of the union is
    /// unknown, so this returns `None` until [`clear`](Self::clear).
    #[must_use]
    pub fn estimate_martingale(&self) -> Option<f64> {
        self.hip_valid.then_some(self.hip_estimate)
    }

    /// True if no key was inserted since creation or the last [`clear`](Self::clear).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.hist[0] as usize == Self::M
    }

    /// Empties the sketch, keeping its seed; the martingale estimate is valid again
    /// (unless the sketch was built [`without_martingale`](Self::without_martingale)).
    pub fn clear(&mut self) {
        self.registers.as_mut().fill(0);
        self.hist = Self::EMPTY_HIST;
        self.hip_estimate = 0.0;
        self.hip_sum = HIP_SUM_EMPTY;
        self.hip_valid = self.hip_tracked;
    }

    /// Register `index` (0 ..= 64 − P + 1), or 0 if `index ≥ m`.
    #[must_use]
    pub fn register(&self, index: usize) -> u8 {
        registers::get(self.registers.as_ref(), index)
    }

    /// The `m` registers in index order (see the type docs for their meaning).
    pub fn registers(&self) -> Registers<'_> {
        Registers::new(self.registers.as_ref())
    }

    /// The register histogram: element `k` counts registers holding `k`
    /// (elements above `64 − P + 1` are always 0). Sums to `m`.
    #[must_use]
    pub fn histogram(&self) -> &[u32; 64] {
        &self.hist
    }

    /// Raises register `index` to `rank` if larger, as an insert whose digest gave
    /// that index and rank would (the histogram stays exact and the martingale
    /// estimate counts it as an insert). `rank` above `64 − P + 1` is capped there;
    /// an `index ≥ m` is ignored. Returns whether the register changed.
    ///
    /// To load registers decoded from another format, use
    /// [`set_registers`](Self::set_registers), which validates them first.
    pub fn update_register(&mut self, index: usize, rank: u8) -> bool {
        if index >= Self::M {
            return false;
        }
        self.raise(index, rank.min(Self::MAX_RANK))
    }

    /// Replaces all registers with `regs` (e.g. decoded from Redis or Apache
    /// DataSketches), keeping the seed.
    ///
    /// Validates everything before writing anything: on error the sketch is
    /// unchanged. The iterator is walked twice (validate, then write), hence the
    /// `Clone` bound; slice iterators qualify. On success the martingale estimate
    /// becomes `None` (the insertion history is unknown).
    ///
    /// ```
    /// use loxo_core::{DecodeError, Seed};
    /// use loxo_hll::Hll;
    ///
    /// let mut hll = Hll::<4>::new(Seed::new(1, 2));
    /// let decoded = [3u8, 0, 1, 7, 0, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 1];
    /// hll.set_registers(decoded)?;
    /// assert!(hll.registers().eq(decoded));
    /// assert_eq!(hll.estimate_martingale(), None);
    /// assert_eq!(hll.set_registers([99u8; 16]), Err(DecodeError::InvalidValue));
    /// assert!(hll.registers().eq(decoded)); // unchanged on error
    /// # Ok::<(), DecodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// * [`DecodeError::ParameterMismatch`] if `regs` does not yield exactly `m`
    ///   values (a sketch of another precision);
    /// * [`DecodeError::InvalidValue`] if a value exceeds `64 − P + 1`.
    pub fn set_registers<I>(&mut self, regs: I) -> Result<(), DecodeError>
    where
        I: IntoIterator<Item = u8>,
        I::IntoIter: Clone,
    {
        let regs = regs.into_iter();
        let mut count = 0usize;
        for r in regs.clone() {
            if r > Self::MAX_RANK {
                return Err(DecodeError::InvalidValue);
            }
            count += 1;
            if count > Self::M {
                // `found` is the count seen when the excess was noticed: at least M + 1.
                return Err(DecodeError::ParameterMismatch {
                    expected: Self::M as u32,
                    found: count as u32,
                });
            }
        }
        if count != Self::M {
            return Err(DecodeError::ParameterMismatch {
                expected: Self::M as u32,
                found: count as u32,
            });
        }
        for (i, r) in regs.enumerate() {
            registers::set(self.registers.as_mut(), i, r);
        }
        self.recount();
        self.hip_valid = false;
        Ok(())
    }

    /// Merges `other` into `self` (register-wise maximum): afterwards `self` is
    /// exactly the sketch of the union of both key streams. Commutative,
    /// associative and idempotent. Cost O(m). The martingale estimate becomes `None`.
    ///
    /// ```
    /// use loxo_core::{MergeError, Seed};
    /// use loxo_hll::Hll;
    ///
    /// let seed = Seed::new(1, 2);
    /// let (mut a, mut b) = (Hll::<12>::new(seed), Hll::<12>::new(seed));
    /// (0..1000u32).for_each(|k| { a.insert(&k.to_le_bytes()); });
    /// (500..1500u32).for_each(|k| { b.insert(&k.to_le_bytes()); });
    /// a.merge(&b)?;
    /// assert!((a.estimate() - 1500.0).abs() < 100.0);
    /// let other_seed = Hll::<12>::new(Seed::new(3, 4));
    /// assert_eq!(a.merge(&other_seed), Err(MergeError::SeedMismatch));
    /// # Ok::<(), MergeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the sketches hash with different seeds;
    /// `self` is then unchanged.
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        if self.seed != other.seed {
            return Err(MergeError::SeedMismatch);
        }
        let dst = self.registers.as_mut();
        let src = other.registers.as_ref();
        for (d, s) in dst.chunks_exact_mut(3).zip(src.chunks_exact(3)) {
            let (dw, sw) = (word(d), word(s));
            if dw == sw {
                continue;
            }
            let mut out = 0;
            for j in 0..4 {
                let shift = registers::BITS * j;
                let a = ((dw >> shift) & 63) as u8;
                let b = ((sw >> shift) & 63) as u8;
                if b > a {
                    // `self.registers` is borrowed: update the fields directly.
                    self.hip_sum = self
                        .hip_sum
                        .wrapping_sub(Self::hip_term(a))
                        .wrapping_add(Self::hip_term(b));
                    if let Some(c) = self.hist.get_mut(usize::from(a)) {
                        *c = c.saturating_sub(1);
                    }
                    if let Some(c) = self.hist.get_mut(usize::from(b)) {
                        *c = c.saturating_add(1);
                    }
                }
                out |= u32::from(a.max(b)) << shift;
            }
            d.copy_from_slice(&out.to_le_bytes()[..3]);
        }
        self.hip_valid = false;
        Ok(())
    }

    /// Folds this sketch into a new, coarser sketch of precision `Q < P`, equal
    /// register for register to a precision-`Q` sketch fed the same keys.
    ///
    /// Only `Q < P` compiles. Cost O(m). The result has no martingale estimate.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    ///
    /// let seed = Seed::new(3, 4);
    /// let (mut fine, mut coarse) = (Hll::<12>::new(seed), Hll::<8>::new(seed));
    /// for i in 0..5_000u32 {
    ///     fine.insert(&i.to_le_bytes());
    ///     coarse.insert(&i.to_le_bytes());
    /// }
    /// let folded: Hll<8> = fine.fold();
    /// assert!(folded.registers().eq(coarse.registers()));
    /// ```
    #[must_use]
    pub fn fold<const Q: u8>(&self) -> Hll<Q>
    where
        Precision<P>: FoldsInto<Q>,
        Precision<Q>: SupportedPrecision,
    {
        let mut out = Hll::<Q>::new(self.seed);
        out.fold_in(self);
        out
    }

    /// Merges a finer sketch (precision `F > P`) into this one, as if its keys had
    /// been inserted here: each of its registers is mapped to this precision
    /// (index = its top `P` index bits; rank from the dropped index bits, or
    /// their count plus its own rank when they are all zero) and max-merged.
    ///
    /// Only `F > P` compiles. Cost O(2^F). The martingale estimate becomes `None`.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the sketches hash with different seeds;
    /// `self` is then unchanged.
    pub fn merge_from<const F: u8>(&mut self, finer: &Hll<F>) -> Result<(), MergeError>
    where
        Precision<F>: FoldsInto<P>,
    {
        if self.seed != finer.seed() {
            return Err(MergeError::SeedMismatch);
        }
        self.fold_in(finer);
        Ok(())
    }

    fn fold_in<const F: u8>(&mut self, finer: &Hll<F>)
    where
        Precision<F>: SupportedPrecision,
    {
        // d = F − P index bits move from the index into the rank's bit string.
        let d = u32::from(F.saturating_sub(P));
        let low_mask = (1usize << d) - 1;
        for (j, r) in finer.registers().enumerate() {
            if r == 0 {
                continue;
            }
            let low = j & low_mask;
            let rank = if low == 0 {
                // The d moved bits are all zero: they add d leading zeros.
                (d as u8).saturating_add(r).min(Self::MAX_RANK)
            } else {
                // Leading zeros of `low` within its d bits, plus one.
                (low.leading_zeros() - (usize::BITS - d)) as u8 + 1
            };
            let i = j >> d;
            let old = registers::get(self.registers.as_ref(), i);
            if rank > old {
                registers::set(self.registers.as_mut(), i, rank);
                self.move_register(old, rank);
            }
        }
        self.hip_valid = false;
    }
}

/// The 24-bit little-endian word of a 3-byte register group.
#[inline(always)]
fn word(g: &[u8]) -> u32 {
    match *g {
        [b0, b1, b2] => u32::from(b0) | u32::from(b1) << 8 | u32::from(b2) << 16,
        _ => 0,
    }
}

/// Two sketches are equal when they share the seed and every register; the
/// martingale state (insertion history) is not compared.
impl<const P: u8> PartialEq for Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn eq(&self, other: &Self) -> bool {
        self.seed == other.seed && self.registers == other.registers
    }
}

impl<const P: u8> Eq for Hll<P> where Precision<P>: SupportedPrecision {}

/// Prints the parameters and estimates, not the `0.75 · 2^P` register bytes.
impl<const P: u8> fmt::Debug for Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state: [(&str, &dyn fmt::Debug); 1] = [("zero_registers", &self.hist[0])];
        let estimates = (self.estimate(), self.estimate_martingale());
        crate::debug::sketch(f, "Hll", P, self.seed, &state, estimates)
    }
}

#[cfg(feature = "defmt")]
impl<const P: u8> defmt::Format for Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Hll {{ precision: {=u8}, seed: {}, estimate: {=f64} }}",
            P,
            self.seed,
            self.estimate()
        );
    }
}

#[cfg(test)]
mod tests;
