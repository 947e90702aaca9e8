//! [`SpreadSummary`]: what a spread summary does, for code generic over
//! [`Spreaders`] (mergeable, an insert without a loop) and [`HipSpreaders`] (one
//! stream, a tighter estimate per key).

use loxo_core::KeyHash;

use crate::estimate::Estimate;
use crate::hip::HipSpreaders;
use crate::report::Spreader;
use crate::sketch::Spreaders;

/// A spread summary of keys `K`: inserts, the distinct pairs, the report. Implemented
/// by [`Spreaders`] and [`HipSpreaders`], whose inherent methods of the same names
/// document each.
///
/// ```
/// use loxo_core::{KeyHash, Seed};
/// use loxo_spread::{HipSpreaders, SpreadSummary, Spreaders};
///
/// fn scanners<S: SpreadSummary<u32>>(mut s: S) -> usize {
///     for dst in 0..5_000u64 {
///         s.insert_hashed(&7, KeyHash::from_u64(7), KeyHash::from_u64(dst.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
///     }
///     let mut out = heapless::Vec::<_, 4>::new();
///     s.report_screened(1_000.0, 0.0, 1, &mut out)
/// }
/// assert_eq!(scanners(Spreaders::<u32, 64, 8, 64>::new(Seed::new(1, 2))), 1);
/// assert_eq!(scanners(HipSpreaders::<u32, 64, 8, 64, 4>::new(Seed::new(1, 2))), 1);
/// ```
pub trait SpreadSummary<K> {
    /// Counts an element for a key by their keyed digests.
    fn insert_hashed(&mut self, key: &K, key_hash: KeyHash, element_hash: KeyHash);
    /// Counts a pair by its digest.
    fn insert_pair_hash(&mut self, key: &K, key_hash: KeyHash, pair_hash: KeyHash);
    /// The estimated number of distinct pairs.
    fn distinct_pairs(&self) -> Estimate;
    /// The registers' standard error for a key of spread `spread`.
    fn sigma_at(&self, spread: f64) -> f64;
    /// Reports the candidates holding at least `min_cells` cells whose estimate
    /// reaches the threshold (within `z` standard errors), largest first; returns how
    /// many qualified.
    fn report_screened<const R: usize>(
        &self,
        threshold: f64,
        z: f64,
        min_cells: u32,
        out: &mut heapless::Vec<Spreader<K>, R>,
    ) -> usize;
    /// Empties the summary, keeping the seed.
    fn clear(&mut self);
}

/// `SpreadSummary` for a summary type whose inherent methods of the same names it
/// forwards to (inherent methods take precedence in `Self::name`).
macro_rules! forward {
    ($ty:ty, $($p:ident),+) => {
        impl<K: Copy + Eq, $(const $p: usize),+> SpreadSummary<K> for $ty {
            #[inline(always)]
            fn insert_hashed(&mut self, key: &K, key_hash: KeyHash, element_hash: KeyHash) {
                Self::insert_hashed(self, key, key_hash, element_hash);
            }
            #[inline(always)]
            fn insert_pair_hash(&mut self, key: &K, key_hash: KeyHash, pair_hash: KeyHash) {
                Self::insert_pair_hash(self, key, key_hash, pair_hash);
            }
            fn distinct_pairs(&self) -> Estimate {
                Self::distinct_pairs(self)
            }
            fn sigma_at(&self, spread: f64) -> f64 {
                Self::sigma_at(self, spread)
            }
            fn report_screened<const R: usize>(
                &self,
                threshold: f64,
                z: f64,
                min_cells: u32,
                out: &mut heapless::Vec<Spreader<K>, R>,
            ) -> usize {
                Self::report_screened(self, threshold, z, min_cells, out)
            }
            fn clear(&mut self) {
                Self::clear(self);
            }
        }
    };
}

forward!(Spreaders<K, S, W, C>, S, W, C);
forward!(HipSpreaders<K, S, W, C, T>, S, W, C, T);
