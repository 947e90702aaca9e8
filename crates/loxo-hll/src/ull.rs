//! The UltraLogLog sketch [`Ull<P>`] (Ertl, PVLDB 17(7), 2024).

use core::fmt;

use loxo_core::{KeyHash, MergeError, Seed};

use crate::entry::EntryTable;
use crate::precision::{FoldsInto, Precision, SupportedPrecision};
use crate::ull_estimator as est;
use crate::Hll;

/// An UltraLogLog sketch with `m = 2^P` one-byte registers: "how many distinct
/// keys?", with HyperLogLog's error in about 25 % less memory.
///
/// `P` is the precision, 4..=18; any other value fails to compile (see
/// [`SupportedPrecision`]). Relative standard error for large `n` (Ertl 2024; lower
/// for `n` up to a few hundred `m`, see the accuracy test):
///
/// | estimator | relative standard error | memory × variance (bits) |
/// |---|---|---:|
/// | [`estimate`](Self::estimate) (FGRA) | `√(0.6119/m) = 0.782/√m` | 4.90 |
/// | [`estimate_ml`](Self::estimate_ml) (maximum likelihood) | `√(ln 2 / ζ(2, 5/4))/√m = 0.761/√m` | 4.63 |
/// | [`estimate_martingale`](Self::estimate_martingale) (inserts only) | `√(5·ln 2 / 8)/√m = 0.658/√m` | 3.47 |
/// | [`Hll::estimate`] (6-bit registers), for comparison | `1.04/√m` | 6.49 |
///
/// # Registers (a contract: the wire format and [`to_hll`](Self::to_hll) depend on it)
///
/// From the key's 64-bit keyed digest `h = KeyHash::get()`, exactly as for [`Hll`]:
/// **index** = the top `P` bits; **update value** `u` = leading zeros of the other
/// `64 − P` bits plus one, in `1 ..= w = 65 − P` (the [`Hll`] rank). A register
/// remembers the largest `u` it has seen, `U`, and whether `U − 1` and `U − 2` were
/// seen too: in the paper's notation `r = 4U + 2·[U − 1 seen] + [U − 2 seen]`
/// (0 = never hit). The byte stored is the paper's `r + 4P − 8` for `r ≠ 0`, the
/// encoding of the reference implementation (hash4j's `UltraLogLog.getState()`):
/// its value no longer depends on `P`, saturates at 255, and its top bits
/// `t = byte >> 2 = U + P − 2` are the position of the highest update in a 64-bit
/// "hash prefix" bitmap whose positions stay put when precision is folded. So:
///
/// * `U = (byte >> 2) − P + 2`, and the [`Hll`] register fed the same keys is
///   exactly that `U` ([`to_hll`](Self::to_hll));
/// * valid bytes are 0, `4P − 4` (`U = 1`), `4P` and `4P + 2` (`U = 2`), and every
///   byte from `4P + 4` to 255.
///
/// # Memory
///
/// `2^P` bytes of registers plus an 80-byte header: the seed (16), the state-change
/// probability as an exact integer (8), the FGRA register sum in fixed point (8),
/// the martingale estimate (8), eight register counters for the small- and
/// large-range corrections (32), the sparse list's length (4) and four flags. `size_of::<Ull<14>>()` is 16 464
/// bytes (`Hll<14>`: 12 584 bytes at 1.33× the standard error; an `Ull<13>` of
/// 8 272 bytes has `0.782/√8192 = 0.86 %` against `Hll<14>`'s 0.81 %).
///
/// # Sparse mode
///
/// [`new_sparse`](Self::new_sparse) builds a sketch that counts exactly while few
/// keys have been seen (up to `3m/16`, relative standard error `7·10^−5`: a list
/// of 25-bit-index entries in the register bytes, HLL++'s sparse representation)
/// and then converts in place to the registers a [`new`](Self::new) sketch fed the
/// same keys holds. Opt-in: a dense sketch's insert pays one well-predicted branch.
///
/// # Cost
///
/// * [`insert`](Self::insert): one SipHash-1-3, then [`insert_hash`](Self::insert_hash):
///   a shift, a leading-zero count, a one-byte read and the register update
///   (unpack to a bitmap, OR, repack: shifts and one more leading-zero count). On the
///   rare register change also: two integer sums and two counters updated, and one
///   `f64` division for the martingale.
/// * [`estimate`](Self::estimate): O(1) in `m` — the register sum is kept up to date
///   on every change; the power `S^(−1/τ)` comes from two small tables (the
///   exponent's and the mantissa's top six bits, 1.5 KiB of flash) and a degree-7
///   series, within `10^−15` of `libm::pow`; plus, while registers are still at 0,
///   1 or 2 (`n` below a few `m`), the small-range correction (a square root and a
///   short series). Measured on x86-64 (`cargo bench -p loxo-bench --bench hll --
///   estimate`): 6.4 ns at `P = 14` and 10^6 keys (was 28 ns with `libm`'s `exp2`
///   and `log2`; `Hll`'s estimate 2.2 ns in the same run), 41 ns at 1024 keys.
/// * [`estimate_ml`](Self::estimate_ml): O(m) scan, then a Newton iteration.
/// * [`merge`](Self::merge), [`to_hll`](Self::to_hll): O(m); [`fold`](Self::fold): O(2^P).
///
/// # Example
///
/// ```
/// use loxo_core::Seed;
/// use loxo_hll::Ull;
///
/// let mut ull = Ull::<12>::new(Seed::new(0x5eed, 0xcafe));
/// for i in 0..10_000u32 {
///     ull.insert(&i.to_le_bytes());
///     ull.insert(&i.to_le_bytes()); // duplicates change nothing
/// }
/// let e = ull.estimate();
/// assert!((e - 10_000.0).abs() < 4.0 * ull.relative_standard_error() * 10_000.0, "{e}");
/// let ml = ull.estimate_ml();
/// assert!((ml - 10_000.0).abs() < 4.0 * 0.761 / 64.0 * 10_000.0, "{ml}");
/// let hip = ull.estimate_martingale().unwrap();
/// assert!((hip - 10_000.0).abs() < 4.0 * 0.658 / 64.0 * 10_000.0, "{hip}");
/// // The HyperLogLog those keys would have built, for Redis or DataSketches export:
/// let hll = ull.to_hll();
/// assert!((hll.estimate() - 10_000.0).abs() < 4.0 * 1.04 / 64.0 * 10_000.0);
/// ```
// Four flags: separate `bool`s fill the header's padding (80 bytes either way) and
// keep the insert path's one test a byte load.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone)]
pub struct Ull<const P: u8>
where
    Precision<P>: SupportedPrecision,
{
    pub(crate) seed: Seed,
    /// `Σ_j h(r_j) mod 2^64`, `h(r)` = `2^64/m ×` the probability that a new key
    /// changes register `r` (exact integers). The true sum is `2^64` exactly when
    /// every register is 0, and `< 2^64` otherwise.
    pub(crate) change_sum: u64,
    /// `Σ` of [`est::FGRA_TERMS`] over the mid-range registers (`3 ≤ U < w`).
    pub(crate) fgra_sum: u64,
    /// Registers in the small-range states: 0, `U = 1`, `U = 2`, `U = 2` with `U − 1`.
    pub(crate) small: [u32; 4],
    /// Registers at `U = w` (saturated update value), by their two flag bits.
    pub(crate) large: [u32; 4],
    pub(crate) hip_estimate: f64,
    /// Entries in the sparse list (list mode only).
    pub(crate) list_len: u32,
    pub(crate) hip_valid: bool,
    pub(crate) hip_tracked: bool,
    /// Built with [`new_sparse`](Ull::new_sparse): starts (and restarts after
    /// [`clear`](Ull::clear)) in list mode.
    pub(crate) sparse_enabled: bool,
    /// List mode: `registers` holds the sparse hash table (see `ull_sparse`), and
    /// the running sums and counters above are those of an empty sketch.
    pub(crate) list_mode: bool,
    pub(crate) registers: <Precision<P> as SupportedPrecision>::UllRegisters,
}

/// The update-value bitmap of a register byte: bit `t = byte >> 2` and, from the
/// flags, bits `t − 1`, `t − 2`. Byte 0 maps to 0 (the shift wraps to 62, pushing
/// the 3-bit pattern out).
#[inline(always)]
pub(crate) const fn unpack(r: u8) -> u64 {
    ((4 | (r & 3)) as u64).wrapping_shl(((r >> 2) as u32).wrapping_sub(2))
}

/// The register byte of a non-empty bitmap: its highest bit `t` and the two bits
/// below it (lower bits are forgotten). 0 for an empty bitmap.
#[inline(always)]
pub(crate) const fn pack(x: u64) -> u8 {
    if x == 0 {
        return 0;
    }
    let t = x.ilog2();
    ((t << 2) as u8) | (x.wrapping_shr(t.wrapping_sub(2)) & 3) as u8
}

impl<const P: u8> Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Number of registers, `m = 2^P`.
    pub const M: usize = 1 << P;
    /// Largest update value, `w = 65 − P` (the largest [`Hll`] rank).
    pub const MAX_UPDATE: u8 = 65 - P;
    /// The byte of a register whose largest update is 1 (`4P − 4`).
    const R1: u8 = 4 * P - 4;
    /// The byte of a register whose largest update is 2, without / with update 1.
    const R2: u8 = 4 * P;
    const R2_WITH_1: u8 = 4 * P + 2;
    /// Fixed-point FGRA terms (indexed by byte, `2^59·η·2^(−τ·t)`) to the paper's
    /// `η·2^(−τ·U)`: `2^(−59)·2^(τ(P − 2))`.
    const MID_SCALE: f64 = est::mid_scale(P);
    /// `m^(1 + 1/τ) / (1 + (1 + τ)·V/(2m))`: the paper's scale and first-order bias
    /// correction.
    const FGRA_FACTOR: f64 = est::fgra_factor(P);
    /// `2^(−τ·w)`, the scale of the large-range correction.
    const LARGE_SCALE: f64 = est::pow_2_minus_tau(65 - P);

    /// An empty sketch whose keys are hashed with `seed`.
    ///
    /// Sketches to be [merged](Self::merge) must share their seed.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        Self {
            seed,
            change_sum: 0,
            fgra_sum: 0,
            small: [1 << P, 0, 0, 0],
            large: [0; 4],
            hip_estimate: 0.0,
            list_len: 0,
            hip_valid: true,
            hip_tracked: true,
            sparse_enabled: false,
            list_mode: false,
            registers: <Precision<P> as SupportedPrecision>::ULL_ZERO,
        }
    }

    /// The same sketch without martingale tracking (see
    /// [`Hll::without_martingale`]): no `f64` division per register change,
    /// [`estimate_martingale`](Self::estimate_martingale) always `None`.
    #[must_use]
    pub const fn without_martingale(mut self) -> Self {
        self.hip_tracked = false;
        self.hip_valid = false;
        self
    }

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

    /// Bytes this value occupies, `size_of::<Ull<P>>()`: `2^P + 80`.
    #[must_use]
    pub const fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// The relative standard error of [`estimate`](Self::estimate) for large `n`,
    /// `√(0.6119/m) = 0.782/√m` (Ertl 2024, the optimal FGRA estimator).
    #[must_use]
    pub fn relative_standard_error(&self) -> f64 {
        libm::sqrt(est::FGRA_V / Self::M as f64)
    }

    /// Adds a key: hashes it once with the sketch's seed, then
    /// [`insert_hash`](Self::insert_hash). Returns whether a register changed.
    #[inline]
    pub fn insert<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.seed.hash(key))
    }

    /// Adds a key already hashed with this sketch's seed. Returns whether a register
    /// changed (false for every duplicate).
    ///
    /// ```
    /// use loxo_core::{KeyHash, Seed};
    /// use loxo_hll::Ull;
    ///
    /// let mut ull = Ull::<10>::new(Seed::new(7, 8));
    /// // index 3 (top 10 bits), then 5 zeros and a one: update value 6
    /// let h = KeyHash::from_u64(3 << 54 | 1 << 48);
    /// assert!(ull.insert_hash(h));
    /// assert_eq!(ull.register(3), 4 * (6 + 10 - 2)); // 4·(U + P − 2), no flags
    /// // update value 5 is U − 1: sets the flag
    /// assert!(ull.insert_hash(KeyHash::from_u64(3 << 54 | 1 << 49)));
    /// assert_eq!(ull.register(3), 4 * 14 + 2);
    /// assert!(!ull.insert_hash(KeyHash::from_u64(3 << 54 | 1 << 49)));
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        if self.list_mode {
            return self.insert_hash_sparse(h.get());
        }
        self.insert_hash_dense(h.get())
    }

    /// [`insert_hash`](Self::insert_hash) on the register bytes.
    #[inline(always)]
    pub(crate) fn insert_hash_dense(&mut self, h: u64) -> bool {
        let index = (h >> (64 - P)) as usize;
        // The sentinel bit caps the leading zeros at 64 − P: bit in P − 1 ..= 63.
        let bit = ((h << P) | (1 << (P - 1))).leading_zeros() + u32::from(P) - 1;
        let Some(slot) = self.registers.as_mut().get_mut(index) else {
            return false;
        };
        let old = *slot;
        let new = pack(unpack(old) | 1 << bit);
        if new == old {
            return false;
        }
        *slot = new;
        if self.hip_valid {
            // HIP (Cohen 2015, Ting 2014): the change had probability
            // change_sum / 2^64, so it stands for 2^64 / change_sum new keys.
            self.hip_estimate += if self.small[0] as usize == Self::M {
                1.0
            } else {
                18_446_744_073_709_551_616.0 / self.change_sum as f64
            };
        }
        self.account(old, new);
        true
    }

    /// Recomputes the running sums and counters from the registers.
    pub(crate) fn recount(&mut self) {
        self.change_sum = 0;
        self.fgra_sum = 0;
        self.small = [0; 4];
        self.large = [0; 4];
        for i in 0..Self::M {
            let r = self.register(i);
            self.change_sum = self.change_sum.wrapping_add(Self::change_term(r));
            self.count(r, true);
        }
    }

    /// Moves a register from `old` to `new` in the running sums and counters.
    #[inline(always)]
    pub(crate) fn account(&mut self, old: u8, new: u8) {
        self.change_sum = self
            .change_sum
            .wrapping_sub(Self::change_term(old))
            .wrapping_add(Self::change_term(new));
        self.count(old, false);
        self.count(new, true);
    }

    #[inline(always)]
    fn count(&mut self, r: u8, add: bool) {
        let counter = match r {
            0 => &mut self.small[0],
            r if r == Self::R1 => &mut self.small[1],
            r if r == Self::R2 => &mut self.small[2],
            r if r == Self::R2_WITH_1 => &mut self.small[3],
            252..=255 => &mut self.large[usize::from(r & 3)],
            _ => {
                let t = est::FGRA_TERMS[usize::from(r)];
                self.fgra_sum = if add {
                    self.fgra_sum.wrapping_add(t)
                } else {
                    self.fgra_sum.wrapping_sub(t)
                };
                return;
            }
        };
        *counter = if add {
            counter.saturating_add(1)
        } else {
            counter.saturating_sub(1)
        };
    }

    /// `2^64/m ×` the probability that a new key changes a register holding `r`:
    /// the mass of the update values it has not recorded among `U − 2`, `U − 1`
    /// and everything above `U`. Update value `v` has probability `2^−v` for
    /// `v < w` and `2^−(w−1)` for `v = w`; at bitmap position `b = v + P − 2` that
    /// is `2^(62 − b)` in these units for `b ≤ 62` and 1 for `b = 63`.
    #[inline(always)]
    pub(crate) const fn change_term(r: u8) -> u64 {
        if r == 0 {
            return 1 << (64 - P);
        }
        let t = (r >> 2) as u32;
        let above = if t < 63 { 1u64 << (62 - t) } else { 0 };
        let minus1 = if r & 2 == 0 && t >= P as u32 {
            1u64 << (63 - t)
        } else {
            0
        };
        let minus2 = if r & 1 == 0 && t > P as u32 {
            1u64 << (64 - t)
        } else {
            0
        };
        above + minus1 + minus2
    }

    /// The estimated number of distinct keys: Ertl's optimal FGRA estimator
    /// ("further generalized remaining area"), O(1) in `m`.
    ///
    /// Relative standard error `0.782/√m` for large `n`, lower below a few hundred
    /// `m`; bias negligible against it. Returns 0 for an empty sketch. In
    /// [sparse mode](Self::new_sparse): the list's count (relative standard error
    /// `7·10^−5`), as are [`estimate_ml`](Self::estimate_ml) and
    /// [`estimate_martingale`](Self::estimate_martingale).
    #[must_use]
    pub fn estimate(&self) -> f64 {
        if self.list_mode {
            return self.list_estimate();
        }
        // S^(−1/τ) from a mantissa table and a short series (`ull_pow`): a third of
        // the cost of libm's exp2 and log2, within a few 10^−16 of them.
        Self::FGRA_FACTOR * crate::ull_pow::pow_minus_inv_tau(self.fgra_total())
    }

    /// The paper's FGRA sum `S` (with the small- and large-range corrections).
    fn fgra_total(&self) -> f64 {
        let mut s = self.fgra_sum as f64 * Self::MID_SCALE;
        if self.small != [0; 4] {
            s += est::small_range(self.small, Self::M as f64);
        }
        if self.large != [0; 4] {
            s += est::large_range(self.large, Self::M as f64, Self::LARGE_SCALE);
        }
        s
    }

    /// The maximum-likelihood estimate (Ertl 2024, with its first-order bias
    /// correction): relative standard error `0.761/√m` for large `n`, a little
    /// below [`estimate`](Self::estimate)'s. Cost O(m) (one pass over the registers)
    /// plus a Newton iteration on the likelihood equation.
    #[must_use]
    pub fn estimate_ml(&self) -> f64 {
        if self.list_mode {
            return self.list_estimate();
        }
        if self.is_empty() {
            return 0.0;
        }
        let mut b = [0u32; 64];
        let first = u32::from(P) - 1;
        for &r in self.registers.as_ref() {
            let mut x = unpack(r);
            while x != 0 {
                // Level v = bit − P + 2 has probability 2^−v; index k = v − 1. The
                // top level (v = w) has the probability of v = w − 1: same index.
                let k = (x.trailing_zeros() - first).min(u32::from(Self::MAX_UPDATE) - 2);
                if let Some(c) = b.get_mut(k as usize) {
                    *c += 1;
                }
                x &= x - 1;
            }
        }
        let m = Self::M as f64;
        // Unobserved probability mass over all registers, Σ_j h_j = m · change_sum /
        // 2^64, times 2 for the likelihood in x = n / (2m).
        let a = 2.0 * m * (self.change_sum as f64 * est::TWO_POW_MINUS_64);
        2.0 * m * est::solve_ml(a, &b) / (1.0 + est::ML_BIAS / m)
    }

    /// The martingale (historic inverse probability) estimate, or `None` if the
    /// registers were ever changed by anything but inserts (a merge, a fold, a
    /// decode without one).
    ///
    /// Relative standard error `√(5·ln 2 / 8)/√m = 0.658/√m` for large `n` (Ertl
    /// 2024), exactly 1 after the first key. Valid for inserts only: after a
    /// [`merge`](Self::merge) the union's insertion history is unknown, so this
    /// returns `None` until [`clear`](Self::clear).
    #[must_use]
    pub fn estimate_martingale(&self) -> Option<f64> {
        if self.list_mode {
            return self.hip_valid.then(|| self.list_estimate());
        }
        self.hip_valid.then_some(self.hip_estimate)
    }

    /// The probability that a new distinct key changes the sketch (in sparse mode:
    /// adds an entry to the list; O(m) then).
    #[must_use]
    pub fn state_change_probability(&self) -> f64 {
        if self.list_mode {
            return self.list_change_probability();
        }
        if self.is_empty() {
            1.0
        } else {
            self.change_sum as f64 * est::TWO_POW_MINUS_64
        }
    }

    /// True if no key was inserted since creation or the last [`clear`](Self::clear).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        if self.list_mode {
            return self.list_len == 0;
        }
        self.small[0] as usize == Self::M
    }

    /// Empties the sketch, keeping its seed; the martingale estimate is valid again
    /// (unless built [`without_martingale`](Self::without_martingale)).
    pub fn clear(&mut self) {
        self.registers.as_mut().fill(0);
        self.change_sum = 0;
        self.fgra_sum = 0;
        self.small = [1 << P, 0, 0, 0];
        self.large = [0; 4];
        self.hip_estimate = 0.0;
        self.hip_valid = self.hip_tracked;
        self.list_len = 0;
        self.list_mode = self.sparse_enabled;
    }

    /// Register byte `index` (see the type docs for its meaning), or 0 if `index ≥ m`.
    /// In [sparse mode](Self::new_sparse), the byte the keys listed so far would
    /// have built (a short probe of the list).
    #[must_use]
    pub fn register(&self, index: usize) -> u8 {
        if self.list_mode {
            return self.list_register(index);
        }
        self.registers.as_ref().get(index).copied().unwrap_or(0)
    }

    /// The `m` register bytes in index order: the same bytes as hash4j's
    /// `UltraLogLog.getState()` for the same 64-bit hashes.
    ///
    /// **Empty while the sketch is in [sparse mode](Self::new_sparse)**
    /// ([`is_sparse`](Self::is_sparse)): its bytes then hold the list, not
    /// registers. Read them one by one with [`register`](Self::register) or
    /// [`register_bytes`](Self::register_bytes), or [`densify`](Self::densify) first.
    #[must_use]
    pub fn registers(&self) -> &[u8] {
        if self.list_mode {
            return &[];
        }
        self.registers.as_ref()
    }

    /// The `m` register bytes in index order, in either mode (in sparse mode each
    /// one is probed from the list: O(m) in all).
    pub fn register_bytes(&self) -> impl Iterator<Item = u8> + Clone + '_ {
        (0..Self::M).map(|i| self.register(i))
    }

    /// The largest update value a register byte records (its [`Hll`] rank), 0 for 0.
    #[inline]
    const fn hll_rank(r: u8) -> u8 {
        if r == 0 {
            0
        } else {
            (r >> 2) + 2 - P
        }
    }

    /// The [`Hll<P>`] of the same keys: register for register, the `Hll` that the
    /// keys inserted here (hashed with the same seed) would have built, since an
    /// UltraLogLog register's largest update value is the HyperLogLog rank. Use it
    /// to export to Redis or Apache DataSketches. Cost O(m); the result has no
    /// martingale estimate.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::{Hll, Ull};
    ///
    /// let seed = Seed::new(1, 2);
    /// let (mut ull, mut hll) = (Ull::<10>::new(seed), Hll::<10>::new(seed));
    /// for k in 0..5_000u32 {
    ///     ull.insert(&k.to_le_bytes());
    ///     hll.insert(&k.to_le_bytes());
    /// }
    /// assert_eq!(ull.to_hll(), hll);
    /// ```
    #[must_use]
    pub fn to_hll(&self) -> Hll<P> {
        let mut hll = Hll::<P>::new(self.seed);
        let ranks = self.register_bytes().map(Self::hll_rank);
        // Exactly m values, each at most 65 − P: cannot fail.
        let res = hll.set_registers(ranks);
        debug_assert!(res.is_ok());
        hll
    }

    /// Merges `other` into `self`: afterwards `self` is exactly the sketch of the
    /// union of both key streams (each register keeps the union of the update
    /// values both recorded, as one bitmap). Commutative, associative and
    /// idempotent. Cost O(m). The martingale estimate becomes `None`.
    ///
    /// ```
    /// use loxo_core::{MergeError, Seed};
    /// use loxo_hll::Ull;
    ///
    /// let seed = Seed::new(1, 2);
    /// let (mut a, mut b) = (Ull::<12>::new(seed), Ull::<12>::new(seed));
    /// (0..1000u32).for_each(|k| { a.insert(&k.to_le_bytes()); });
    /// (500..1500u32).for_each(|k| { b.insert(&k.to_le_bytes()); });
    /// a.merge(&b)?;
    /// assert!((a.estimate() - 1500.0).abs() < 60.0);
    /// assert_eq!(a.estimate_martingale(), None);
    /// assert_eq!(a.merge(&Ull::<12>::new(Seed::new(3, 4))), Err(MergeError::SeedMismatch));
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
        if other.list_mode {
            // Its entries, as if inserted here (into the list while it has room).
            for e in other.list_entries() {
                self.insert_entry(e);
            }
            self.hip_valid = false;
            return Ok(());
        }
        self.densify();
        for i in 0..Self::M {
            let (a, b) = (self.register(i), other.register(i));
            if b != 0 && a != b {
                self.raise_to(i, unpack(a) | unpack(b));
            }
        }
        self.hip_valid = false;
        Ok(())
    }

    /// Stores the bitmap `x` in register `i` (already holding a subset of it).
    /// Dense mode only.
    pub(crate) fn raise_to(&mut self, i: usize, x: u64) {
        let old = self.register(i);
        let new = pack(x);
        if new != old {
            if let Some(slot) = self.registers.as_mut().get_mut(i) {
                *slot = new;
                self.account(old, new);
            }
        }
    }

    /// Folds this sketch into a new, coarser sketch of precision `Q < P`, equal
    /// register for register to a precision-`Q` sketch fed the same keys.
    ///
    /// Only `Q < P` compiles. Cost O(m). The result has no martingale estimate.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Ull;
    ///
    /// let seed = Seed::new(3, 4);
    /// let (mut fine, mut coarse) = (Ull::<12>::new(seed), Ull::<8>::new(seed));
    /// for i in 0..5_000u32 {
    ///     fine.insert(&i.to_le_bytes());
    ///     coarse.insert(&i.to_le_bytes());
    /// }
    /// let folded: Ull<8> = fine.fold();
    /// assert_eq!(folded, coarse);
    /// ```
    #[must_use]
    pub fn fold<const Q: u8>(&self) -> Ull<Q>
    where
        Precision<P>: FoldsInto<Q>,
        Precision<Q>: SupportedPrecision,
    {
        let mut out = Ull::<Q>::new(self.seed);
        if self.list_mode {
            // The entries do not depend on the precision: a sparse sketch folds into
            // a sparse one holding the same list (dense once it outgrows it).
            out.sparse_enabled = true;
            out.list_mode = true;
        }
        out.fold_in(self);
        out
    }

    /// Merges a finer sketch (precision `F > P`) into this one, as if its keys had
    /// been inserted here. Only `F > P` compiles. Cost O(2^F). The martingale
    /// estimate becomes `None`.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the sketches hash with different seeds;
    /// `self` is then unchanged.
    pub fn merge_from<const F: u8>(&mut self, finer: &Ull<F>) -> Result<(), MergeError>
    where
        Precision<F>: FoldsInto<P>,
    {
        if self.seed != finer.seed() {
            return Err(MergeError::SeedMismatch);
        }
        self.fold_in(finer);
        Ok(())
    }

    fn fold_in<const F: u8>(&mut self, finer: &Ull<F>)
    where
        Precision<F>: SupportedPrecision,
    {
        if finer.list_mode {
            for e in finer.list_entries() {
                self.insert_entry(e);
            }
            self.hip_valid = false;
            return;
        }
        self.densify();
        // d = F − P index bits move into the update value. Bitmap positions
        // (leading zeros + precision − 1) are the same at both precisions, so a
        // fine register whose moved bits are all zero contributes its bitmap as it
        // is; any other non-empty one contributes the single update value its moved
        // bits give (all its keys share them): leading zeros of the d bits plus one,
        // at position F − 1 − bit length.
        let d = u32::from(F.saturating_sub(P));
        for (i, block) in finer.registers().chunks_exact(1 << d).enumerate() {
            let mut x = 0u64;
            for (low, &r) in block.iter().enumerate() {
                if r == 0 {
                    continue;
                }
                x |= if low == 0 {
                    unpack(r)
                } else {
                    1 << (u32::from(F) - 1 - (usize::BITS - low.leading_zeros()))
                };
            }
            if x != 0 {
                self.raise_to(i, unpack(self.register(i)) | x);
            }
        }
        self.hip_valid = false;
    }
}

/// Two sketches are equal when they share the seed and every register (in sparse
/// mode: the registers its list would build); the martingale state (insertion
/// history) and the mode are not compared.
impl<const P: u8> PartialEq for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    fn eq(&self, other: &Self) -> bool {
        self.seed == other.seed
            && if self.list_mode || other.list_mode {
                self.register_bytes().eq(other.register_bytes())
            } else {
                self.registers == other.registers
            }
    }
}

impl<const P: u8> Eq for Ull<P> where Precision<P>: SupportedPrecision {}

/// Prints the parameters and estimates, not the `2^P` register bytes.
impl<const P: u8> fmt::Debug for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count: (&str, &dyn fmt::Debug) = if self.list_mode {
            ("list_entries", &self.list_len)
        } else {
            ("zero_registers", &self.small[0])
        };
        let state = [("sparse", &self.list_mode as &dyn fmt::Debug), count];
        let estimates = (self.estimate(), self.estimate_martingale());
        crate::debug::sketch(f, "Ull", P, self.seed, &state, estimates)
    }
}

#[cfg(feature = "defmt")]
impl<const P: u8> defmt::Format for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Ull {{ precision: {=u8}, seed: {}, estimate: {=f64} }}",
            P,
            self.seed,
            self.estimate()
        );
    }
}

#[cfg(test)]
mod tests;
