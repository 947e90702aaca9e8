//! [`ThetaSketch<K>`]: the QuickSelect Theta sketch in a fixed array, with union,
//! intersection and A-not-B in place.

use core::fmt;

use loxo_core::{KeyHash, MergeError, Seed};

use crate::bounds;
use crate::select::select;
use crate::table::Table;

/// θ's scale: hash values and θ are 63-bit integers, θ = `THETA_MAX` is 1.0 (no
/// sampling). The same scale as Apache DataSketches (`Long.MAX_VALUE`), so a loxo θ
/// and its retained values go into a DataSketches image as they are.
pub const THETA_MAX: u64 = i64::MAX as u64;

/// The retained value of a key's digest: its top 63 bits (`h >> 1`), 0 meaning "none".
/// DataSketches keeps bits 1..63 of its hash the same way.
#[inline(always)]
#[must_use]
pub const fn theta_value(h: KeyHash) -> u64 {
    h.get() >> 1
}

/// A Theta sketch (Dasgupta, Lang, Rhodes & Thaler 2016; the "QuickSelect" update
/// sketch of Apache DataSketches) in a fixed table of `K` 64-bit slots: `K·8` bytes
/// plus a 32-byte header (`size_of::<ThetaSketch<K>>() = 8·K + 32`, pinned by a
/// test), no allocation.
///
/// It keeps every key's 63-bit keyed hash value below a threshold θ. Until the table
/// is 15/16 full θ is 1 (every distinct key is kept: the count is exact); then a
/// *rebuild* selects the `k = K/2` smallest values (the nominal entries,
/// DataSketches' `lg_k = log2 K − 1`), sets θ to the next one and drops the rest, so
/// between rebuilds it holds `k ..= 15K/16` values. The estimate of the distinct keys
/// is `retained / θ` (θ as a fraction of 2^63), unbiased, with relative standard
/// error at most `1/√(k − 1)` ([`relative_standard_error`](Self::relative_standard_error)).
///
/// | `K` | nominal `k` | bytes | RSE `1/√(k−1)` |
/// |---:|---:|---:|---:|
/// | 256 | 128 | 2 080 | 8.9 % |
/// | 1 024 | 512 | 8 224 | 4.4 % |
/// | 4 096 | 2 048 | 32 800 | 2.2 % |
/// | 8 192 | 4 096 | 65 568 | 1.6 % |
///
/// What a Theta sketch adds over HyperLogLog is **set expressions**: the retained
/// values are a uniform sample of the set, shared between sketches of the same seed,
/// so [`merge`](Self::merge) (A ∪ B), [`intersect`](Self::intersect) (A ∩ B) and
/// [`subtract`](Self::subtract) (A \ B) work on samples at the smaller θ, in place,
/// in O(K) and no extra memory. Their error is relative to the **union**: a result
/// of `n_r` keys drawn from a union of `n_u` has standard deviation about
/// `√(n_r·(1 − θ)/θ)` with `θ ≈ k/n_u`, i.e. a relative error of about
/// `√(n_u/(k·n_r))` — small overlaps of large sets are hard, as for every sketch,
/// but the estimate is unbiased and [`lower_bound`](Self::lower_bound) /
/// [`upper_bound`](Self::upper_bound) (DataSketches' binomial bounds) say how far it
/// can be.
///
/// Cost: one keyed SipHash per key ([`insert`](Self::insert), or
/// [`insert_hash`](Self::insert_hash) with a digest shared by other sketches); a key
/// at or above θ is rejected by one comparison, one below θ costs a few probes (the
/// table is at most 15/16 full; probes are double-hashed). A rebuild is O(K)
/// (quickselect plus an in-place rehash) and happens once per `7K/16` new retained
/// values, i.e. amortized O(1) per key.
///
/// ```
/// use loxo_core::Seed;
/// use loxo_theta::ThetaSketch;
///
/// let seed = Seed::new(7, 11);
/// let (mut monday, mut tuesday) = (ThetaSketch::<4096>::new(seed), ThetaSketch::<4096>::new(seed));
/// for flow in 0..60_000u32 {
///     monday.insert(&flow.to_le_bytes());
/// }
/// for flow in 40_000..100_000u32 {
///     tuesday.insert(&flow.to_le_bytes());
/// }
/// // Flows of Tuesday that Monday did not have: 40 000.
/// let mut new = tuesday.clone();
/// new.subtract(&monday)?;
/// let (lo, hi) = (new.lower_bound(3), new.upper_bound(3));
/// assert!(lo <= 40_000.0 && 40_000.0 <= hi, "{lo} ..= {hi}");
/// // Flows of both days: 20 000.
/// let mut both = tuesday.clone();
/// both.intersect(&monday)?;
/// assert!(both.lower_bound(3) <= 20_000.0 && 20_000.0 <= both.upper_bound(3));
/// # Ok::<(), loxo_core::MergeError>(())
/// ```
#[derive(Clone)]
pub struct ThetaSketch<const K: usize> {
    seed: Seed,
    theta: u64,
    /// Values in the table (all below θ).
    count: u32,
    /// No key was ever offered (DataSketches' "empty": θ may still be below 1 after a
    /// set operation, with no value retained).
    empty: bool,
    table: Table<K>,
}

impl<const K: usize> ThetaSketch<K> {
    /// Compile-time check of `K`: a power of two, 32 ..= 2^26.
    const VALID: () = assert!(
        K.is_power_of_two() && K >= 32 && K <= 1 << 26,
        "ThetaSketch<K>: K must be a power of two in 32..=2^26"
    );

    /// Nominal entries `k = K/2`: a rebuild keeps this many values.
    pub const NOMINAL: usize = K / 2;

    /// Values the table holds before a rebuild: 15/16 of `K`.
    pub const REBUILD_AT: usize = K / 16 * 15;

    /// An empty sketch keyed with `seed` (θ = 1, nothing retained). `const`, so a
    /// firmware can place one in a `static`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::VALID;
        Self {
            seed,
            theta: THETA_MAX,
            count: 0,
            empty: true,
            table: Table::new(),
        }
    }

    /// The seed keys are hashed with.
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// θ on the 63-bit scale ([`THETA_MAX`] = 1.0).
    pub const fn theta_long(&self) -> u64 {
        self.theta
    }

    /// θ as a fraction in `(0, 1]`: the sampling probability of a key.
    pub fn theta(&self) -> f64 {
        self.theta as f64 / THETA_MAX as f64
    }

    /// Values retained (all below θ).
    pub const fn retained(&self) -> usize {
        self.count as usize
    }

    /// No key was ever inserted (nor merged in).
    pub const fn is_empty(&self) -> bool {
        self.empty
    }

    /// θ < 1: the sketch samples, its figures are estimates.
    pub const fn is_estimation_mode(&self) -> bool {
        self.theta < THETA_MAX
    }

    /// Bytes of RAM the sketch occupies (`8·K + 32`).
    pub const fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// Hashes `key` with the seed and inserts it. Returns `true` when the sketch
    /// changed (the key's value is below θ and was not retained yet).
    pub fn insert<T: AsRef<[u8]> + ?Sized>(&mut self, key: &T) -> bool {
        self.insert_hash(self.seed.hash(key))
    }

    /// Inserts a key already hashed with this sketch's seed (pre-hashed insertion:
    /// one digest per flow for several sketches). Returns `true` when the sketch
    /// changed.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        self.empty = false;
        self.insert_value(theta_value(h))
    }

    /// Inserts a retained value (63-bit, as [`theta_value`] makes it).
    #[inline]
    fn insert_value(&mut self, v: u64) -> bool {
        if v == 0 || v >= self.theta {
            return false;
        }
        if !self.table.insert(v) {
            return false;
        }
        self.count += 1;
        if self.count as usize >= Self::REBUILD_AT {
            self.rebuild();
        }
        true
    }

    /// Whether `h`'s value is retained (a key below θ that was inserted, or a
    /// collision of 63-bit values).
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        self.contains_value(theta_value(h))
    }

    fn contains_value(&self, v: u64) -> bool {
        v != 0 && v < self.theta && self.table.contains(v)
    }

    /// The retained values, in no particular order (each below θ).
    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.table.values()
    }

    /// Keeps the `k` smallest values, θ = the next one.
    fn rebuild(&mut self) {
        let n = self.table.compact(|_| true);
        let k = Self::NOMINAL;
        if n > k {
            let prefix = self.table.prefix_mut(n);
            select(prefix, k);
            if let Some(&t) = prefix.get(k) {
                self.theta = t;
            }
            // Values from index k on are ≥ the new θ: drop them.
            for v in prefix.iter_mut().skip(k) {
                *v = 0;
            }
            self.count = k as u32;
            self.table.rehash_in_place(k);
        } else {
            self.count = n as u32;
            self.table.rehash_in_place(n);
        }
    }

    /// Lowers θ to `theta` and keeps the values below it that `keep` accepts, then
    /// rebuilds if the table is too full.
    fn retain_below(&mut self, theta: u64, mut keep: impl FnMut(u64) -> bool) {
        self.theta = self.theta.min(theta);
        let t = self.theta;
        let n = self.table.compact(|v| v < t && keep(v));
        self.count = n as u32;
        self.table.rehash_in_place(n);
    }

    /// Checks that `other` hashes keys the same way.
    fn same_seed<const K2: usize>(&self, other: &ThetaSketch<K2>) -> Result<(), MergeError> {
        if self.seed == other.seed {
            Ok(())
        } else {
            Err(MergeError::SeedMismatch)
        }
    }

    /// Union in place: `self` becomes a sketch of `self ∪ other` (θ the smaller of
    /// the two, then at most the `k`-th smallest value if the union needed a
    /// rebuild). Sketches of any `K` merge.
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] when the seeds differ (`self` is untouched).
    pub fn merge<const K2: usize>(&mut self, other: &ThetaSketch<K2>) -> Result<(), MergeError> {
        self.same_seed(other)?;
        if other.theta < self.theta {
            self.retain_below(other.theta, |_| true);
        }
        self.empty &= other.empty;
        for v in other.values() {
            self.insert_value(v);
        }
        Ok(())
    }

    /// Intersection in place: `self` becomes a sketch of `self ∩ other` (θ the
    /// smaller of the two; the values below it that both retain).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] when the seeds differ (`self` is untouched).
    pub fn intersect<const K2: usize>(
        &mut self,
        other: &ThetaSketch<K2>,
    ) -> Result<(), MergeError> {
        self.same_seed(other)?;
        if self.empty || other.empty {
            // The intersection with an empty set is empty, θ = 1 (as DataSketches).
            self.clear();
            return Ok(());
        }
        self.retain_below(other.theta, |v| other.table.contains(v));
        Ok(())
    }

    /// Set difference (DataSketches' A-not-B) in place: `self` becomes a sketch of
    /// `self \ other` (θ the smaller of the two; the values below it that `other`
    /// does not retain).
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] when the seeds differ (`self` is untouched).
    pub fn subtract<const K2: usize>(&mut self, other: &ThetaSketch<K2>) -> Result<(), MergeError> {
        self.same_seed(other)?;
        if self.empty {
            // Nothing minus anything is empty, θ = 1 (as DataSketches' A-not-B).
            return Ok(());
        }
        self.retain_below(other.theta, |v| !other.table.contains(v));
        Ok(())
    }

    /// Forgets every key (θ back to 1). O(K).
    pub fn clear(&mut self) {
        self.table.clear();
        self.theta = THETA_MAX;
        self.count = 0;
        self.empty = true;
    }

    /// The estimated number of distinct keys: `retained / θ` (exact while θ = 1).
    pub fn estimate(&self) -> f64 {
        if self.is_estimation_mode() {
            self.count as f64 / self.theta()
        } else {
            self.count as f64
        }
    }

    /// A lower bound on the distinct keys at `std_devs` (1, 2 or 3; others are
    /// clamped) standard deviations: DataSketches' binomial bound (holds with about
    /// 84 %, 97.7 %, 99.9 % confidence). Exact (`retained`) while θ = 1.
    pub fn lower_bound(&self, std_devs: u8) -> f64 {
        bounds::lower(self.count as u64, self.theta(), std_devs, self.empty)
    }

    /// An upper bound on the distinct keys at `std_devs` (1, 2 or 3) standard
    /// deviations: DataSketches' binomial bound. Exact while θ = 1.
    pub fn upper_bound(&self, std_devs: u8) -> f64 {
        bounds::upper(self.count as u64, self.theta(), std_devs, self.empty)
    }

    /// The relative standard error of a fresh sketch's estimate in estimation mode,
    /// `1/√(k − 1)` with `k` = [`NOMINAL`](Self::NOMINAL); 0 while the count is exact.
    pub fn relative_standard_error(&self) -> f64 {
        if self.is_estimation_mode() {
            1.0 / libm::sqrt((Self::NOMINAL - 1) as f64)
        } else {
            0.0
        }
    }

    /// Rebuilds a sketch from decoded parts: θ, whether it is empty, and the retained
    /// values (each non-zero and below θ, no duplicates). For the wire decoders. More
    /// values than the table holds are down-sampled as inserts would be (a rebuild
    /// lowers θ): a valid sketch of the same set, so a larger sketch's image decodes
    /// into a smaller `K`.
    ///
    /// `None` when the parts break a rule (θ out of range, a value 0 or not below θ,
    /// a duplicate, an empty sketch with values). Public for decoders of foreign
    /// formats (loxo-interop's DataSketches images).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_theta::{ThetaSketch, THETA_MAX};
    ///
    /// let half = THETA_MAX / 2 + 1; // θ = 1/2
    /// let s = ThetaSketch::<64>::from_parts(Seed::new(1, 2), half, false, [5, 9].into_iter());
    /// assert_eq!(s.map(|s| s.estimate().round()), Some(4.0)); // 2 values / θ
    /// assert!(ThetaSketch::<64>::from_parts(Seed::new(1, 2), 10, false, [11].into_iter()).is_none());
    /// ```
    pub fn from_parts(
        seed: Seed,
        theta: u64,
        empty: bool,
        values: impl Iterator<Item = u64>,
    ) -> Option<Self> {
        if theta == 0 || theta > THETA_MAX {
            return None;
        }
        let mut s = Self::new(seed);
        s.theta = theta;
        s.empty = empty;
        for v in values {
            if v == 0 || v >= theta || empty {
                return None;
            }
            if v >= s.theta {
                continue; // below the image's θ, above the one a rebuild set
            }
            if !s.table.insert(v) {
                return None;
            }
            s.count += 1;
            if s.count as usize >= Self::REBUILD_AT {
                s.rebuild();
            }
        }
        Some(s)
    }
}

impl<const K: usize> fmt::Debug for ThetaSketch<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThetaSketch")
            .field("K", &K)
            .field("seed_fingerprint", &self.seed.fingerprint())
            .field("theta", &self.theta())
            .field("retained", &self.count)
            .field("empty", &self.empty)
            .field("estimate", &self.estimate())
            .finish_non_exhaustive()
    }
}

/// Two sketches are equal when they hash with the same seed and hold the same
/// sketch: θ, emptiness and the same set of retained values (whatever their slots).
impl<const K: usize> PartialEq for ThetaSketch<K> {
    fn eq(&self, other: &Self) -> bool {
        self.seed == other.seed
            && self.theta == other.theta
            && self.empty == other.empty
            && self.count == other.count
            && other.values().all(|v| self.table.contains(v))
    }
}
