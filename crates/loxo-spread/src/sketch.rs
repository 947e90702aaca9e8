//! [`Spreaders<K, S, W, C>`]: the sketch.

use core::fmt;

use loxo_core::{KeyHash, MergeError, Seed, WireKey};

use crate::cells::{self, Record};
use crate::digest;
use crate::estimate::Estimate;
use crate::pool::{self, PoolRef};
use crate::report::{self, Spreader};

/// The keys with the most distinct elements — a source's distinct destinations, a
/// destination's distinct sources or ports — with estimates and bounds, in fixed
/// memory inline: `S·W + C·(size_of::<Option<K>>() + 8) + 16` bytes, rounded up to
/// the alignment (8); `S·W + C·(L + 9) + 16` for `[u8; L]` keys.
///
/// * `K`: the key type (`Copy + Eq`; an address as `[u8; 16]`, a `u32`);
/// * `S`: registers per key (a power of two, 16 ..= 4096) — the estimate's
///   relative standard error far above the noise is about `1.04/√S`;
/// * `W`: bytes per stripe, 1 ..= 32 768: the pool is `S` stripes of `2W` four-bit
///   registers, `2·S·W` in all;
/// * `C`: candidate cells, 1 ..= 65 536, each holding one sampled pair's key.
///
/// Out-of-range parameters fail to compile (a failed `const` assertion, E0080):
///
/// ```compile_fail,E0080
/// let _ = loxo_spread::Spreaders::<u32, 100, 8, 64>::new(loxo_core::Seed::new(1, 2)); // S not a power of two
/// ```
///
/// # How it works
///
/// A pair `(key, element)` has one keyed 64-bit digest. It raises one of the key's
/// `S` registers (stripe `j` from the digest, the column from the key's digest —
/// every key has one register per stripe, shared at random with other keys: a
/// *virtual* HyperLogLog) to its rank, and offers itself to one of `C` cells, which
/// keeps the pair of smallest priority and that pair's key. Repeated pairs change
/// nothing, so the structure sees distinct pairs only. A key with spread `n` holds
/// about `C·n/N` cells (`N` the distinct pairs of all keys): the cells are a uniform
/// sample of the distinct pairs, so every key above a fraction `φ` of them is a
/// candidate unless it missed all its `≈ C·φ` draws (probability `e^−Cφ`, 0.6 % for
/// `C = 512` at `φ = 1 %`). A candidate's spread is the maximum-likelihood estimate
/// over its `S` registers given the pool's noise ([`Estimate`]; see the crate docs).
///
/// # Cost
///
/// [`insert_hashed`](Self::insert_hashed): one 64-bit mix of the two digests (the
/// pair digest), a 32-bit mix for the column, one register read-modify-write and one
/// cell comparison — no division, no floating point, no loop; the cell's key is
/// copied only when the pair wins it (about `C·ln(N/C)` times per epoch in all).
/// The caller computes the key's and the element's keyed digests (which a flow
/// monitor has anyway); [`insert`](Self::insert) computes them with SipHash-1-3.
///
/// [`report`](Self::report) and [`spread`](Self::spread) read the pool once
/// (`2·S·W` registers) and, per candidate, its `S` registers and a few Newton steps
/// of the likelihood in `f64`.
///
/// # Guarantees
///
/// Statistical, from a secret seed (keys and elements cannot be aimed at registers
/// or cells without it): every reported estimate comes with its standard error,
/// computed from the Fisher information of its registers, and `[lower(4), upper(4)]`
/// holds the true spread except with the normal tail's probability (≈ 6·10⁻⁵;
/// `tests/spread_accuracy.rs` checks the calibration). The lower bound is never
/// below [`sampled`](Spreader::sampled), which is exact. There is no deterministic
/// upper bound: the structure forgets which pairs it saw.
///
/// # Example
///
/// ```
/// use loxo_core::Seed;
/// use loxo_spread::Spreaders;
///
/// let mut s = Spreaders::<u32, 64, 8, 64>::new(Seed::new(1, 2));
/// // A scanner: source 7 contacts 3 000 destinations; 300 sources contact 3 each.
/// for dst in 0..3000u32 {
///     s.insert(&7, &dst.to_le_bytes());
/// }
/// for src in 100..400u32 {
///     for dst in 0..3u32 {
///         s.insert(&src, &dst.to_le_bytes());
///     }
/// }
/// let mut top = heapless::Vec::<_, 4>::new();
/// let threshold = 0.1 * s.distinct_pairs().value; // 10 % of the distinct pairs
/// assert_eq!(s.report(threshold, 0.0, &mut top), 1);
/// assert_eq!(top[0].key, 7);
/// assert!(top[0].lower(4.0) <= 3000.0 && 3000.0 <= top[0].upper(4.0));
/// ```
#[derive(Clone, PartialEq)]
pub struct Spreaders<K, const S: usize, const W: usize, const C: usize> {
    pool: [[u8; W]; S],
    keys: [Option<K>; C],
    tags: [u32; C],
    priorities: [u32; C],
    seed: Seed,
}

impl<K: Copy + Eq, const S: usize, const W: usize, const C: usize> Spreaders<K, S, W, C> {
    const CHECK: () = assert!(
        S.is_power_of_two()
            && S >= 16
            && S <= 4096
            && W >= 1
            && W <= 32_768
            && C >= 1
            && C <= 65_536,
        "Spreaders needs S a power of two in 16..=4096, W in 1..=32768, C in 1..=65536"
    );

    /// The sketch's size in bytes: `size_of::<Self>()`.
    pub const MEMORY_BYTES: usize = core::mem::size_of::<Self>();

    /// An empty sketch hashing with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            pool: [[0; W]; S],
            keys: [None; C],
            tags: [0; C],
            priorities: [0; C],
            seed,
        }
    }

    /// The seed: it keys [`insert`](Self::insert)'s digests and its fingerprint
    /// goes into every frame.
    #[must_use]
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// Counts `element` for `key`, both hashed with the sketch's seed (SipHash-1-3
    /// of the key's [wire bytes](WireKey) and of the element's bytes).
    pub fn insert<const L: usize>(&mut self, key: &K, element: &[u8])
    where
        K: WireKey<L>,
    {
        let kh = self.seed.hash(&key.to_wire());
        let eh = self.seed.hash(element);
        self.insert_hashed(key, kh, eh);
    }

    /// Counts the element whose keyed digest is `element_hash` for `key`, whose
    /// keyed digest is `key_hash` — the device's path: the digests come from the
    /// caller's per-frame hashing (a flow monitor hashes each address once and
    /// feeds the same digests to both directions' sketches).
    ///
    /// Both digests must be keyed by this sketch's seed (for instance
    /// [`Seed::hash`] or [`HalfSipKey`](loxo_core::HalfSipKey) derived from it),
    /// always the same function for the same key: the cells keep the key digest's
    /// high 32 bits to find the key's registers at report time.
    #[inline]
    pub fn insert_hashed(&mut self, key: &K, key_hash: KeyHash, element_hash: KeyHash) {
        self.insert_pair_hash(
            key,
            key_hash,
            KeyHash::from_u64(digest::pair(key_hash, element_hash)),
        );
    }

    /// [`insert_hashed`](Self::insert_hashed) with the pair's digest computed by the
    /// caller: any keyed 64-bit digest of the (key, element) pair, equal for equal
    /// pairs (a flow's digest, to count a source's distinct flows).
    #[inline]
    pub fn insert_pair_hash(&mut self, key: &K, key_hash: KeyHash, pair_hash: KeyHash) {
        let p = pair_hash.get();
        let tag = digest::tag(key_hash);
        let j = digest::stripe(p, S);
        if let Some(stripe) = self.pool.get_mut(j) {
            pool::raise(stripe, digest::column(tag, j, 2 * W), digest::rank(p));
        }
        let (c, priority) = digest::cell(p, C);
        self.offer(c, tag, priority, key);
    }

    /// [`insert_pair_hash`](Self::insert_pair_hash), telling what changed: the
    /// register's place and its value before, the pair's rank, the key's tag and
    /// whether the pair won its cell (for [`HipSpreaders`](crate::HipSpreaders); the
    /// plain path stays as it is, so its code is not touched by this one).
    #[inline]
    pub(crate) fn insert_observed(
        &mut self,
        key: &K,
        key_hash: KeyHash,
        pair_hash: KeyHash,
    ) -> Observed {
        let p = pair_hash.get();
        let tag = digest::tag(key_hash);
        let rank = digest::rank(p);
        let stripe = digest::stripe(p, S);
        let column = digest::column(tag, stripe, 2 * W);
        let old = self
            .pool
            .get_mut(stripe)
            .map_or(rank, |s| pool::raise_observed(s, column, rank));
        let (c, priority) = digest::cell(p, C);
        let won = match (self.keys.get(c), self.tags.get(c), self.priorities.get(c)) {
            (Some(k), Some(&t), Some(&q)) => k.is_none() || (priority, tag) < (q, t),
            _ => false,
        };
        if won {
            self.set_cell(c, tag, priority, *key);
        }
        Observed {
            stripe,
            column,
            old,
            rank,
            tag,
            won,
        }
    }

    /// The key's `S` registers' value for `tag`, stripe by stripe.
    pub(crate) fn key_registers(&self, tag: u32) -> impl Iterator<Item = u8> + '_ {
        self.pool
            .iter()
            .enumerate()
            .map(move |(j, s)| pool::register(s, digest::column(tag, j, 2 * W)))
    }

    /// Puts `(tag, priority, key)` into cell `c` if it is empty or holds a larger
    /// `(priority, tag)`: the cell keeps the pair of smallest priority, whatever the
    /// order pairs (or merged sketches) arrive in.
    #[inline(always)]
    fn offer(&mut self, c: usize, tag: u32, priority: u32, key: &K) {
        if let (Some(k), Some(t), Some(p)) = (
            self.keys.get_mut(c),
            self.tags.get_mut(c),
            self.priorities.get_mut(c),
        ) {
            if k.is_none() || (priority, tag) < (*p, *t) {
                *k = Some(*key);
                *t = tag;
                *p = priority;
            }
        }
    }

    /// The estimated number of distinct (key, element) pairs inserted, from the
    /// cells: relative standard error `1/√occupied` (4.4 % with 512 cells full).
    /// Thresholds are naturally a fraction of it.
    #[must_use]
    pub fn distinct_pairs(&self) -> Estimate {
        cells::distinct_pairs(self.records(), C)
    }

    /// The estimated spread of one key (any key, a candidate or not): O(`2·S·W`).
    #[must_use]
    pub fn spread(&self, key: &K, key_hash: KeyHash) -> Spreader<K> {
        let tag = digest::tag(key_hash);
        let sampled = self
            .records()
            .filter(|r| r.tag == tag && r.key == key)
            .count() as u32;
        let pool = self.pool_ref();
        report::estimate_key(pool, &pool.histogram(), tag, sampled).with_key(*key)
    }

    /// The standard error this sketch would state for a key of spread `spread`, given
    /// its noise (the other keys' pairs in its registers): `σ_T` of
    /// [`report`](Self::report) at `spread` = the threshold. Where it is a large part
    /// of the threshold, keys with no spread of their own can reach the threshold in
    /// noise (a report among many candidates then holds a few of them): thresholds
    /// of 4 `σ_T` or more keep them out (`loxo_flow::Participants` flags the others).
    /// Reads the pool once (`2·S·W` registers).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_spread::Spreaders;
    /// let mut s = Spreaders::<u32, 64, 8, 64>::new(Seed::new(1, 2));
    /// for k in 0..2000u32 {
    ///     s.insert(&k, b"one element each");
    /// }
    /// // 2 000 pairs in 1 024 registers: a key of 10 is lost in the noise, a key of
    /// // 1 000 stands out.
    /// assert!(s.sigma_at(10.0) > 5.0);
    /// assert!(s.sigma_at(1000.0) < 200.0);
    /// ```
    #[must_use]
    pub fn sigma_at(&self, spread: f64) -> f64 {
        crate::estimate::sigma_at(&self.pool_ref().histogram(), S, spread)
    }

    /// Reports the candidate keys whose estimate reaches `threshold − z·σ_T`, `σ_T`
    /// the standard error of a spread equal to the threshold among this sketch's
    /// noise, largest estimate
    /// first, into `out` (cleared first; when more qualify than it holds, it keeps
    /// the `R` largest). Returns how many qualified.
    ///
    /// `z = 0` reports on the point estimate (a key just above the threshold is
    /// missed about as often as one just below is reported); `z > 0` trades
    /// precision for recall near the threshold (`tests/spread_accuracy.rs` uses
    /// 0.5). A key is a candidate when one of its pairs holds a cell (see the type's
    /// docs for the probability that a key above a fraction of the pairs is not).
    ///
    /// Cost: the pool's histogram (`2·S·W` registers), then per distinct candidate
    /// its `S` registers and one evaluation of its likelihood's slope in `f32`;
    /// only the keys that qualify are estimated in full (a few Newton steps). On a
    /// Cortex-M4F, `Spreaders<[u8; 16], 128, 16, 128>` with all cells taken reports
    /// at a 1 % threshold in 568 000 instructions, most of them reading the 107
    /// candidates' registers (`README.md`).
    pub fn report<const R: usize>(
        &self,
        threshold: f64,
        z: f64,
        out: &mut heapless::Vec<Spreader<K>, R>,
    ) -> usize {
        self.report_screened(threshold, z, 1, out)
    }

    /// [`report`](Self::report) of the candidates holding at least `min_cells`
    /// cells: the others are skipped before their registers are read. A key holding
    /// a fraction `φ` of the distinct pairs holds a Poisson number of cells of mean
    /// `C·φ`, so a key at `φ` is skipped with probability `Σ_{k<min_cells} e^−λ λ^k/k!`
    /// (`λ = C·φ`; for `min_cells` = 2, `e^−λ(1 + λ)`: 3.7 % at `λ` = 5.1). A device
    /// whose cells are mostly held by keys of one pair (a flood from random sources)
    /// reports in a fraction of the time: the registers of every singleton key are
    /// the bulk of [`report`](Self::report)'s cost. Stack: `4·C` bytes (the cells'
    /// tags, sorted) when `min_cells` > 1.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_spread::Spreaders;
    /// let mut s = Spreaders::<u32, 16, 8, 64>::new(Seed::new(1, 2));
    /// for e in 0..2000u32 {
    ///     s.insert(&7, &e.to_le_bytes()); // a key of 2 000
    ///     s.insert(&(100 + e), b"x"); // 2 000 keys of one
    /// }
    /// let mut top = heapless::Vec::<_, 4>::new();
    /// assert_eq!(s.report_screened(100.0, 0.0, 2, &mut top), 1);
    /// assert_eq!(top[0].key, 7);
    /// ```
    pub fn report_screened<const R: usize>(
        &self,
        threshold: f64,
        z: f64,
        min_cells: u32,
        out: &mut heapless::Vec<Spreader<K>, R>,
    ) -> usize {
        out.clear();
        let mut keep = |r: Record<&K>, s: Spreader<()>| {
            report::keep_largest(out, s.with_key(*r.key));
        };
        let n = if min_cells > 1 {
            // The occupied cells' tags, sorted: runs shorter than `min_cells` are
            // skipped whole (4·C bytes of stack).
            let mut tags = [0u32; C];
            let mut len = 0;
            for (slot, r) in tags.iter_mut().zip(self.records()) {
                *slot = r.tag;
                len += 1;
            }
            let tags = tags.get_mut(..len).unwrap_or(&mut []);
            tags.sort_unstable();
            report::report_runs(
                self.pool_ref(),
                &self.records(),
                tags,
                threshold,
                z,
                min_cells,
                &mut keep,
            )
        } else {
            report::report(self.pool_ref(), &self.records(), threshold, z, &mut keep)
        };
        report::sort_descending(out);
        n
    }

    /// Adds another sketch's pairs: afterwards `self` is exactly the sketch of both
    /// streams (register-wise maximum, each cell the smaller priority).
    ///
    /// ```
    /// use loxo_core::{MergeError, Seed};
    /// use loxo_spread::Spreaders;
    /// type S = Spreaders<u32, 16, 4, 8>;
    /// let (mut a, mut b, mut both) = (S::new(Seed::new(1, 2)), S::new(Seed::new(1, 2)), S::new(Seed::new(1, 2)));
    /// for e in 0..100u32 {
    ///     let half = if e < 50 { &mut a } else { &mut b };
    ///     half.insert(&1, &e.to_le_bytes());
    ///     both.insert(&1, &e.to_le_bytes());
    /// }
    /// a.merge(&b)?;
    /// assert!(a == both);
    /// assert_eq!(a.merge(&S::new(Seed::new(9, 9))), Err(MergeError::SeedMismatch));
    /// # Ok::<(), MergeError>(())
    /// ```
    ///
    /// # Errors
    /// [`MergeError::SeedMismatch`] when the seeds differ (`self` is unchanged).
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        if self.seed != other.seed {
            return Err(MergeError::SeedMismatch);
        }
        for (a, b) in self.pool.iter_mut().zip(&other.pool) {
            for (x, &y) in a.iter_mut().zip(b) {
                *x = pool::max_nibbles(*x, y);
            }
        }
        for (c, (k, (&t, &p))) in other
            .keys
            .iter()
            .zip(other.tags.iter().zip(&other.priorities))
            .enumerate()
        {
            if let Some(k) = k {
                self.offer(c, t, p, k);
            }
        }
        Ok(())
    }

    /// Empties the sketch (a new epoch), keeping the seed.
    pub fn clear(&mut self) {
        self.pool = [[0; W]; S];
        self.clear_cells();
    }

    pub(crate) fn clear_cells(&mut self) {
        self.keys = [None; C];
        self.tags = [0; C];
        self.priorities = [0; C];
    }

    /// How many cells hold a pair.
    #[must_use]
    pub fn occupied(&self) -> usize {
        self.keys.iter().filter(|k| k.is_some()).count()
    }

    /// True when nothing was inserted since [`new`](Self::new) or
    /// [`clear`](Self::clear).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.keys.iter().all(Option::is_none)
    }

    pub(crate) fn pool_ref(&self) -> PoolRef<'_> {
        PoolRef {
            bytes: self.pool.as_flattened(),
            stripes: S,
            width: W,
        }
    }

    pub(crate) fn pool_bytes_mut(&mut self) -> &mut [u8] {
        self.pool.as_flattened_mut()
    }

    /// The occupied cells in index order, as `(cell, record)`.
    pub(crate) fn cells(&self) -> impl Iterator<Item = (usize, Record<&K>)> + Clone + '_ {
        self.keys
            .iter()
            .zip(self.tags.iter().zip(&self.priorities))
            .enumerate()
            .filter_map(|(c, (k, (&tag, &priority)))| {
                k.as_ref().map(|key| (c, Record { tag, priority, key }))
            })
    }

    fn records(&self) -> impl Iterator<Item = Record<&K>> + Clone + '_ {
        self.cells().map(|(_, r)| r)
    }

    /// Sets cell `c` (a decoded frame's record), unconditionally.
    pub(crate) fn set_cell(&mut self, c: usize, tag: u32, priority: u32, key: K) {
        if let (Some(k), Some(t), Some(p)) = (
            self.keys.get_mut(c),
            self.tags.get_mut(c),
            self.priorities.get_mut(c),
        ) {
            *k = Some(key);
            *t = tag;
            *p = priority;
        }
    }

    /// Offers a decoded frame's record to cell `c` (a merge from bytes).
    pub(crate) fn offer_cell(&mut self, c: usize, tag: u32, priority: u32, key: &K) {
        self.offer(c, tag, priority, key);
    }
}

/// What one insert changed ([`Spreaders::insert_observed`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Observed {
    /// The stripe of the register the pair offered its rank to.
    pub(crate) stripe: usize,
    /// Its column (the key's register in that stripe).
    pub(crate) column: usize,
    /// The register's value before the insert.
    pub(crate) old: u8,
    /// The pair's rank (the register is now `max(old, rank)`).
    pub(crate) rank: u8,
    /// The key's tag.
    pub(crate) tag: u32,
    /// Whether the pair took its cell.
    pub(crate) won: bool,
}

impl<K, const S: usize, const W: usize, const C: usize> fmt::Debug for Spreaders<K, S, W, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spreaders")
            .field("S", &S)
            .field("W", &W)
            .field("C", &C)
            .field(
                "occupied",
                &self.keys.iter().filter(|k| k.is_some()).count(),
            )
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}
