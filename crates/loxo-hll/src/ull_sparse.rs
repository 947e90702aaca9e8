//! Sparse (list) mode of [`Ull<P>`]: exact small counts in the register bytes.
//!
//! While few keys have been seen, a sketch built with [`Ull::new_sparse`] keeps,
//! instead of registers, one entry per distinct pair (25-bit index, rank) of its
//! keys' digests (the entries, their estimate and the table: `entry`). An entry
//! determines the register update the key makes at every precision `P ≤ 25` (as
//! [`fold`](Ull::fold) does for index bits), so the conversion to registers is
//! exact: the sketch equals, register for register, the dense sketch fed the same
//! keys, before and after it.
//!
//! # Layout: an open-addressing table in the `2^P` register bytes
//!
//! The bytes are `m/4` slots of one `u32` each. An entry's home slot is its dense
//! register index divided by 4 (`index25 >> (25 − P + 2)`). At most `3m/16`
//! entries (load ≤ 3/4), so a free slot always exists. No size change: the table
//! is the register array.
//!
//! **In-place conversion** (once the list would exceed `3m/16`): every entry sits at
//! or after its home slot with no free slot in between, and the target register
//! lies in the home slot's 4 bytes. So, walking the slots once, starting just after
//! a free slot, each slot's entry is read, the slot is zeroed (it now holds 4
//! registers), and the entry's update is ORed into its register, whose slot was
//! already converted (or is this one). O(m), no scratch memory.

use loxo_core::Seed;

use crate::entry::{entry_of, entry_update, list_estimate, EntryTable, MAX_RANK25, SPARSE_P};
use crate::precision::{Precision, SupportedPrecision};
use crate::ull::{pack, unpack};
use crate::Ull;

impl<const P: u8> Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    /// An empty sketch in **sparse mode**: exact counts while few keys have been
    /// seen, then, in place, the same sketch as [`new`](Self::new) would have built.
    ///
    /// Until `3m/16` distinct keys (768 at `P = 12`, 3 072 at `P = 14`) the register
    /// bytes hold a list of high-precision entries (25 index bits and the rank
    /// below them, HLL++'s sparse representation) and every estimate is the list's
    /// count, relative standard error `7·10^−5` (a collision correction; zero
    /// error below a few hundred keys in practice). The insert that would overflow
    /// the list converts it to registers in place, exactly: afterwards the sketch
    /// equals, register for register, a [`new`](Self::new) sketch fed the same keys,
    /// and its martingale estimate continues from the list's count. Same size, no
    /// allocation. [`clear`](Self::clear) returns to sparse mode.
    ///
    /// Costs in sparse mode: an insert probes an open-addressing table (a few
    /// slots on average at load ≤ 3/4); [`register`](Self::register) probes too;
    /// [`registers`](Self::registers) is empty (see there); the conversion is one
    /// O(m) pass. Dense mode costs what it costs in a [`new`](Self::new) sketch
    /// (one more well-predicted branch per insert).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Ull;
    ///
    /// let seed = Seed::new(1, 2);
    /// let (mut sparse, mut dense) = (Ull::<12>::new_sparse(seed), Ull::<12>::new(seed));
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
    /// assert!(!sparse.is_sparse()); // converted at 768 keys
    /// assert_eq!(sparse.registers(), dense.registers());
    /// assert_eq!(sparse.estimate(), dense.estimate());
    /// ```
    #[must_use]
    pub const fn new_sparse(seed: Seed) -> Self {
        let mut s = Self::new(seed);
        s.sparse_enabled = true;
        s.list_mode = true;
        s
    }

    /// Whether the sketch is in sparse mode now (built with
    /// [`new_sparse`](Self::new_sparse) and not yet converted).
    #[must_use]
    pub const fn is_sparse(&self) -> bool {
        self.list_mode
    }

    /// Converts a sparse-mode sketch to registers now (a no-op in dense mode). The
    /// registers are those a [`new`](Self::new) sketch fed the same keys holds; the
    /// martingale estimate continues from the list's count. Cost O(m).
    pub fn densify(&mut self) {
        if !self.list_mode {
            return;
        }
        let count = self.list_estimate();
        self.list_mode = false;
        self.list_len = 0;
        self.convert_in_place();
        self.recount();
        if self.hip_valid {
            self.hip_estimate = count;
        }
    }

    /// The list-mode insert: add the digest's entry unless present; convert and
    /// insert densely when the list is full.
    #[inline(never)]
    pub(crate) fn insert_hash_sparse(&mut self, h: u64) -> bool {
        match self.list_insert(entry_of(h)) {
            Some(added) => added,
            None => self.insert_hash_dense(h),
        }
    }

    /// Adds an entry in either mode (merges, folds, decodes); returns whether the
    /// sketch changed.
    pub(crate) fn insert_entry(&mut self, e: u32) -> bool {
        if self.list_mode {
            if let Some(added) = self.list_insert(e) {
                return added;
            }
        }
        let (i, bit) = Self::entry_register(e);
        let old = self.register(i);
        let x = unpack(old) | 1 << bit;
        if pack(x) == old {
            return false;
        }
        self.raise_to(i, x);
        true
    }

    /// The register index of an entry at this precision and the bitmap position
    /// of its update value ([`entry_update`]'s `u`, at `u + P − 2` as
    /// [`insert_hash`](Self::insert_hash) puts it).
    #[inline(always)]
    pub(crate) const fn entry_register(e: u32) -> (usize, u32) {
        let (i, u) = entry_update(e, P);
        (i, u + P as u32 - 2)
    }

    /// Register `i` as the listed keys would have built it.
    pub(crate) fn list_register(&self, i: usize) -> u8 {
        if i >= Self::M {
            return 0;
        }
        let x = self
            .cluster(i >> 2)
            .map(Self::entry_register)
            .filter(|&(j, _)| j == i)
            .fold(0u64, |x, (_, bit)| x | 1 << bit);
        pack(x)
    }

    /// The list's count with the first-order collision correction (module docs).
    pub(crate) fn list_estimate(&self) -> f64 {
        list_estimate(self.list_len)
    }

    /// The probability that a new distinct key adds an entry: 1 minus the mass of
    /// the entries present (`2^−25·2^−rank` each, `2^−25·2^−39` for rank 40).
    pub(crate) fn list_change_probability(&self) -> f64 {
        let taken: f64 = self
            .list_entries()
            .map(|e| {
                let rank = (e & 63).min(MAX_RANK25 - 1);
                libm::ldexp(1.0, -(SPARSE_P as i32) - rank as i32)
            })
            .sum();
        1.0 - taken
    }
}

/// The table: `m/4` slots in the register bytes; an entry's home slot holds its
/// register (module docs).
impl<const P: u8> EntryTable for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    const SLOTS: usize = 1 << (P - 2);
    /// `3m/16` (load 3/4).
    const LIST_CAPACITY: u32 = 3 << (P - 4);

    /// Its register index divided by 4.
    #[inline(always)]
    fn home(e: u32) -> usize {
        (e >> (6 + SPARSE_P - P as u32 + 2)) as usize
    }

    fn table(&self) -> &[u8] {
        self.registers.as_ref()
    }

    fn table_mut(&mut self) -> &mut [u8] {
        self.registers.as_mut()
    }

    fn is_list(&self) -> bool {
        self.list_mode
    }

    fn entries_len(&self) -> u32 {
        self.list_len
    }

    fn set_entries_len(&mut self, n: u32) {
        self.list_len = n;
    }

    fn convert(&mut self) {
        self.densify();
    }

    fn apply_in_place(&mut self, e: u32) {
        let (i, bit) = Self::entry_register(e);
        if let Some(r) = self.registers.as_mut().get_mut(i) {
            *r = pack(unpack(*r) | 1 << bit);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::entry::is_valid_entry;
    use loxo_core::KeyHash;

    const SEED: Seed = Seed::new(0xabc, 0xdef);

    fn digests(seed: u64) -> impl Iterator<Item = u64> {
        crate::test_util::digests(seed).map(KeyHash::get)
    }

    #[test]
    fn entries_give_the_dense_update_at_every_precision() {
        fn check<const P: u8>(h: u64)
        where
            Precision<P>: SupportedPrecision,
        {
            let e = entry_of(h);
            assert!(is_valid_entry(e));
            let index = (h >> (64 - P)) as usize;
            let bit = ((h << P) | (1 << (P - 1))).leading_zeros() + u32::from(P) - 1;
            assert_eq!(Ull::<P>::entry_register(e), (index, bit), "{h:x}");
        }
        let special = [0, 1, 1 << 38, 1 << 39, 1 << 40, u64::MAX, 1 << 63, 1 << 50];
        for h in digests(1).take(20_000).chain(special) {
            check::<4>(h);
            check::<10>(h);
            check::<14>(h);
            check::<18>(h);
        }
    }

    /// Sparse sketches equal dense ones fed the same keys, before, across and after
    /// the conversion, and convert at the capacity.
    #[test]
    fn sparse_equals_dense_across_the_conversion() {
        for seed in 0..6u64 {
            let mut sparse = Ull::<8>::new_sparse(SEED);
            let mut dense = Ull::<8>::new(SEED);
            for (n, h) in digests(seed).take(2000).enumerate() {
                let n = n as u32;
                let changed = sparse.insert_hash(KeyHash::from_u64(h));
                dense.insert_hash(KeyHash::from_u64(h));
                assert_eq!(sparse.is_sparse(), n < Ull::<8>::LIST_CAPACITY, "{n}");
                if sparse.is_sparse() {
                    assert!(changed);
                    assert_eq!(sparse.list_len, n + 1);
                }
                if n.is_multiple_of(17) || (40..60).contains(&n) {
                    assert_eq!(sparse, dense, "{n}");
                    assert!(sparse
                        .register_bytes()
                        .eq(dense.registers().iter().copied()));
                    assert_eq!(sparse.to_hll(), dense.to_hll());
                }
            }
            assert_eq!(sparse.registers(), dense.registers());
            assert_eq!(sparse.estimate().to_bits(), dense.estimate().to_bits());
            let (a, b) = (sparse.clone(), dense.clone());
            sparse.clear();
            assert!(sparse.is_sparse() && sparse.is_empty());
            assert_eq!(sparse.estimate(), 0.0);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn duplicates_and_densify() {
        let mut u = Ull::<10>::new_sparse(SEED);
        assert_eq!(u.registers(), &[] as &[u8]);
        for h in digests(7).take(100) {
            assert!(u.insert_hash(KeyHash::from_u64(h)));
            assert!(!u.insert_hash(KeyHash::from_u64(h)));
        }
        assert_eq!(u.estimate().round(), 100.0);
        assert_eq!(u.estimate_ml().round(), 100.0);
        assert_eq!(u.estimate_martingale().map(f64::round), Some(100.0));
        let p = u.state_change_probability();
        // 100 entries of mass 2^−25·2^−rank each, ≈ 100·2^−26 in all.
        assert!(p < 1.0 && p > 1.0 - 1e-5, "{p}");
        let mut d = u.clone();
        d.densify();
        assert!(!d.is_sparse());
        assert_eq!(d, u);
        let mut dense = Ull::<10>::new(SEED);
        for h in digests(7).take(100) {
            dense.insert_hash(KeyHash::from_u64(h));
        }
        assert_eq!(d.registers(), dense.registers());
        // The martingale continues from the list's count.
        assert_eq!(d.estimate_martingale(), u.estimate_martingale());
        let before = d.estimate_martingale().unwrap();
        d.insert(b"one more");
        assert!(d.estimate_martingale().unwrap() > before);
    }

    #[test]
    fn merge_and_fold_in_every_mode() {
        for n in [10usize, 100, 150, 400] {
            let keys: std::vec::Vec<u64> = digests(n as u64).take(n).collect();
            let build = |sparse: bool, part: usize| {
                let mut u = if sparse {
                    Ull::<10>::new_sparse(SEED)
                } else {
                    Ull::<10>::new(SEED)
                };
                for (i, &h) in keys.iter().enumerate() {
                    if i % 3 == part || part == 3 {
                        u.insert_hash(KeyHash::from_u64(h));
                    }
                }
                u
            };
            let all = build(false, 3);
            for (sa, sb) in [(true, true), (true, false), (false, true)] {
                let mut a = build(sa, 0);
                let b = build(sb, 1);
                let c = build(sa, 2);
                a.merge(&b).unwrap();
                a.merge(&c).unwrap();
                assert_eq!(a, all, "{n} {sa} {sb}");
                assert_eq!(a.estimate_martingale(), None);
                if !a.is_sparse() {
                    assert_eq!(a.estimate().to_bits(), all.estimate().to_bits());
                }
            }
            let sparse = build(true, 3);
            let folded: Ull<6> = sparse.fold();
            assert_eq!(folded, all.fold::<6>());
            let mut into = Ull::<8>::new(SEED);
            into.merge_from(&sparse).unwrap();
            assert_eq!(into, all.fold::<8>());
            let mut into = Ull::<8>::new_sparse(SEED);
            into.merge_from(&all).unwrap();
            assert_eq!(into, all.fold::<8>());
        }
    }

    #[test]
    fn sorted_entries_are_sorted_and_complete() {
        let mut u = Ull::<6>::new_sparse(SEED);
        // Many entries on one register: a long cluster.
        for h in (0..12u64).map(|k| k << 40 | 1) {
            u.insert_hash(KeyHash::from_u64(h));
        }
        let sorted: std::vec::Vec<u32> = u.list_entries_sorted().collect();
        let mut all: std::vec::Vec<u32> = u.list_entries().collect();
        all.sort_unstable();
        assert_eq!(sorted, all);
        assert_eq!(sorted.len(), 12);
    }

    extern crate std;
}
