//! A reported key ([`Spreader`]) and the report procedure shared by the typed sketch
//! and a frame's view.

use crate::cells::{cells_of, for_each_key, Record};
use crate::estimate::{reaches, report_load, spread, Estimate};
use crate::pool::{Histogram, PoolRef};

/// One key of a report: its estimated spread (distinct elements) with the standard
/// error, the cells it holds and whether its registers saturated.
///
/// ```
/// use loxo_spread::{Estimate, Spreader};
/// let s = Spreader { key: 7u32, spread: Estimate { value: 1000.0, sigma: 50.0 }, sampled: 4, saturated: false };
/// assert_eq!((s.lower(4.0), s.upper(4.0)), (800.0, 1200.0));
/// // Each cell a key holds is one of its distinct pairs: a hard floor.
/// let small = Spreader { spread: Estimate { value: 1.0, sigma: 5.0 }, ..s };
/// assert_eq!(small.lower(4.0), 4.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Spreader<K> {
    /// The key.
    pub key: K,
    /// Its spread: the maximum-likelihood estimate and its standard error.
    pub spread: Estimate,
    /// How many cells hold one of its pairs: each is a distinct pair of the key, so
    /// the spread is at least this (exactly, not statistically).
    pub sampled: u32,
    /// A quarter or more of its registers are at the cap (15): its spread is beyond
    /// about `S·2¹²` and the estimate only says "at least that large".
    pub saturated: bool,
}

impl Spreader<()> {
    /// The same figures for `key`.
    pub(crate) const fn with_key<K>(self, key: K) -> Spreader<K> {
        Spreader {
            key,
            spread: self.spread,
            sampled: self.sampled,
            saturated: self.saturated,
        }
    }
}

impl<K> Spreader<K> {
    /// The lower bound at `z` standard errors, never below [`sampled`](Self::sampled).
    #[must_use]
    pub fn lower(&self, z: f64) -> f64 {
        self.spread.lower(z).max(f64::from(self.sampled))
    }

    /// The upper bound at `z` standard errors (at least the lower bound).
    #[must_use]
    pub fn upper(&self, z: f64) -> f64 {
        self.spread.upper(z).max(self.lower(z))
    }
}

/// Estimates every distinct key of the records against the pool and calls `f` for
/// those whose estimate reaches `threshold − z·σ_T` (`σ_T` the standard error of a
/// spread at the threshold, [`report_load`]); returns how many did.
///
/// A key is screened with one evaluation of its likelihood's slope ([`reaches`]);
/// only the keys that pass are estimated in full and have their cells counted.
pub(crate) fn report<R: PartialEq + Copy, I>(
    pool: PoolRef<'_>,
    records: &I,
    threshold: f64,
    z: f64,
    mut f: impl FnMut(Record<R>, Spreader<()>),
) -> usize
where
    I: Iterator<Item = Record<R>> + Clone,
{
    let hist = pool.histogram();
    let cut = report_load(&hist, pool.stripes, threshold, z);
    let mut n = 0;
    for_each_key(records, |r| {
        let key = pool.key_histogram(r.tag);
        if reaches(&key, &hist, cut) {
            n += 1;
            let sampled = cells_of(records.clone(), r.tag, &r.key);
            f(r, spreader(&key, &hist, pool.stripes, sampled));
        }
    });
    n
}

/// [`report`] of the keys whose tag holds at least `min_cells` cells, given the
/// occupied cells' tags sorted (`tags`): a run of equal tags shorter than
/// `min_cells` is skipped without a look at its records or registers, so the cost
/// is the sort's and the surviving keys' (a key's cells are at most its tag's: tags
/// of different keys collide with probability `2^−32` per pair).
pub(crate) fn report_runs<R: PartialEq + Copy, I>(
    pool: PoolRef<'_>,
    records: &I,
    tags: &[u32],
    threshold: f64,
    z: f64,
    min_cells: u32,
    mut f: impl FnMut(Record<R>, Spreader<()>),
) -> usize
where
    I: Iterator<Item = Record<R>> + Clone,
{
    let hist = pool.histogram();
    let cut = report_load(&hist, pool.stripes, threshold, z);
    let mut n = 0;
    let mut at = 0;
    while let Some(&tag) = tags.get(at) {
        let run = tags
            .get(at..)
            .map_or(0, |t| t.iter().take_while(|&&t| t == tag).count());
        at += run.max(1);
        if (run as u32) < min_cells {
            continue;
        }
        let same = records.clone().filter(|r| r.tag == tag);
        for_each_key(&same, |r| {
            let sampled = cells_of(records.clone(), r.tag, &r.key);
            if sampled < min_cells {
                return;
            }
            let key = pool.key_histogram(r.tag);
            if reaches(&key, &hist, cut) {
                n += 1;
                f(r, spreader(&key, &hist, pool.stripes, sampled));
            }
        });
    }
    n
}

/// The spread of a key from its register histogram.
fn spreader(key: &Histogram, hist: &Histogram, stripes: usize, sampled: u32) -> Spreader<()> {
    let capped = key.last().copied().unwrap_or(0) as usize;
    Spreader {
        key: (),
        spread: spread(key, hist, stripes),
        sampled,
        saturated: 4 * capped >= stripes,
    }
}

/// The spread of the key with `tag`, given the pool's histogram.
pub(crate) fn estimate_key(
    pool: PoolRef<'_>,
    hist: &Histogram,
    tag: u32,
    sampled: u32,
) -> Spreader<()> {
    spreader(&pool.key_histogram(tag), hist, pool.stripes, sampled)
}

/// Keeps the `R` largest estimates in `out` (replacing the smallest when full).
pub(crate) fn keep_largest<K, const R: usize>(
    out: &mut heapless::Vec<Spreader<K>, R>,
    s: Spreader<K>,
) {
    if let Err(s) = out.push(s) {
        let smallest = out
            .iter_mut()
            .min_by(|a, b| a.spread.value.total_cmp(&b.spread.value));
        if let Some(m) = smallest {
            if s.spread.value > m.spread.value {
                *m = s;
            }
        }
    }
}

/// Sorts a report by estimate, largest first.
pub(crate) fn sort_descending<K>(out: &mut [Spreader<K>]) {
    out.sort_unstable_by(|a, b| b.spread.value.total_cmp(&a.spread.value));
}
