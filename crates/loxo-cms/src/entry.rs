//! [`Entry`], one reported heavy hitter with its guaranteed bounds: the report type of
//! every top-k summary ([`TopK::report`](crate::TopK::report)). It depends on nothing
//! else in the crate, so the candidate store (`heap`) and the summaries (`topk`,
//! `space_saving`, `heavy_keeper`) all build on it without importing each other.

/// One reported heavy hitter: `key` with estimated weight `count`, and the bounds on
/// its true weight `f` that the algorithm can **guarantee**.
///
/// A bound is `Some` only if it holds for every stream, deterministically (no
/// probability, no assumption beyond the summary's own arithmetic); where the
/// algorithm has no such bound the field is `None`, so a caller can never mistake
/// an estimate for a bound:
///
/// | summary | `lower` | `upper` |
/// |---|---|---|
/// | [`SpaceSaving`](crate::SpaceSaving) | `count − error` (Metwally et al.) | `count` |
/// | [`CmsTopK`](crate::CmsTopK) | `None` (`count − ε·N` holds only w.p. `1 − δ`) | `count` (Count-Min never under-counts) |
/// | [`HeavyKeeper`](crate::HeavyKeeper) | `None` (counts are lower estimates unless two keys share a 32-bit fingerprint) | `None` (decay can lose any amount) |
/// | [`HeavyGuardian`](crate::HeavyGuardian) | `count` (full keys: a cell only counts its own key's weight) | `None` (decay and late entry lose any amount) |
/// | [`TieredTopK`](crate::TieredTopK) | `None` (the carried cold weight may include a fingerprint collision, and by bytes an estimated first arrival) | `None` (decay and late entry lose any amount) |
///
/// Tested on every stream of `tests/tests/topk_properties.rs`: every `Some` bound
/// contains the exact count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Entry<K> {
    /// The key.
    pub key: K,
    /// Estimated total weight (packets or bytes, whatever was passed to `update`).
    pub count: u64,
    /// `f ≥ lower`, always — or `None` if the algorithm has no such bound.
    pub lower: Option<u64>,
    /// `f ≤ upper`, always — or `None` if the algorithm has no such bound.
    pub upper: Option<u64>,
}

impl<K> Entry<K> {
    /// True if `f` lies within every bound the entry has (a `None` bound excludes
    /// nothing).
    pub fn admits(&self, f: u64) -> bool {
        self.lower.is_none_or(|l| l <= f) && self.upper.is_none_or(|u| f <= u)
    }
}
