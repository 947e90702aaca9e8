//! Evaluation harness for top-k summaries ([`loxo_cms::TopK`]): feed a stream,
//! compare the report with exact counts.
//!
//! Reusable by any test that has a stream of `(key, weight)` pairs and a `TopK`
//! implementation (the flow monitor's tests use it with their own keys):
//!
//! 1. compute the exact per-key totals once with [`exact_counts`];
//! 2. feed the summary with [`feed`] (hashes each key once with the given seed,
//!    exactly as a monitor would);
//! 3. score its report with [`score`]: precision, recall and F1 of the reported
//!    top-`k` set against the true top-`k` set, and the average relative error
//!    (ARE) of the reported counts of the true top-`k` keys it found.
//!
//! Definitions (`T` = true top-`k` keys, ties at rank `k` broken by key;
//! `R` = the summary's `k` heaviest reported keys):
//!
//! * precision = |R ∩ T| / |R|, recall = |R ∩ T| / |T|, F1 = their harmonic mean;
//! * ARE = mean over `x ∈ R ∩ T` of `|count(x) − f(x)| / f(x)` (0 if empty).
//!
//! ```
//! use loxo_cms::SpaceSaving;
//! use loxo_core::Seed;
//! use loxo_tests::topk::{exact_counts, feed, score};
//!
//! // Seven keys with distinct totals (key k has weight k + 1 per packet).
//! let stream: Vec<(u64, u64)> = (0..1000u64).map(|i| (i % 7, i % 7 + 1)).collect();
//! let exact = exact_counts(stream.iter().copied());
//! let mut ss = SpaceSaving::<u64, 16>::new();
//! feed(&mut ss, Seed::new(1, 2), stream.iter().copied());
//! let s = score(&ss, &exact, 5);
//! assert_eq!((s.precision, s.recall, s.are), (1.0, 1.0, 0.0));
//! ```

// Exact counts are always the std `HashMap` built by `exact_counts`.
#![allow(clippy::implicit_hasher)]

use std::collections::HashMap;

use loxo_cms::{Entry, TopK};
use loxo_core::Seed;

/// Exact total weight per key.
pub fn exact_counts(stream: impl IntoIterator<Item = (u64, u64)>) -> HashMap<u64, u64> {
    let mut m: HashMap<u64, u64> = HashMap::new();
    for (k, w) in stream {
        *m.entry(k).or_insert(0) += w;
    }
    m
}

/// The `k` heaviest keys of `exact`, count descending (ties by key, ascending).
#[must_use]
pub fn true_top(exact: &HashMap<u64, u64>, k: usize) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = exact.iter().map(|(&k, &c)| (k, c)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// Feeds `(key, weight)` pairs to `t`, hashing each `u64` key once with `seed`.
pub fn feed<T: TopK<u64>>(t: &mut T, seed: Seed, stream: impl IntoIterator<Item = (u64, u64)>) {
    for (k, w) in stream {
        t.update(&k, seed.hash_u64(k), w);
    }
}

/// Accuracy of a top-`k` report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// |R ∩ T| / |R|.
    pub precision: f64,
    /// |R ∩ T| / |T|.
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// Average relative error of the reported counts over R ∩ T.
    pub are: f64,
    /// Number of reported entries |R|.
    pub reported: usize,
}

/// Scores `t`'s top-`k` report against `exact` (`k` ≤ 1024).
///
/// # Panics
///
/// If `k > 1024`.
#[must_use]
pub fn score<T: TopK<u64>>(t: &T, exact: &HashMap<u64, u64>, k: usize) -> Score {
    assert!(k <= 1024);
    let mut out = heapless::Vec::<Entry<u64>, 1024>::new();
    t.report(&mut out);
    out.truncate(k);
    score_entries(&out, exact, k)
}

/// [`score`] from already reported entries (only the first `k` are used).
#[must_use]
pub fn score_entries(entries: &[Entry<u64>], exact: &HashMap<u64, u64>, k: usize) -> Score {
    let truth: HashMap<u64, u64> = true_top(exact, k).into_iter().collect();
    let reported = &entries[..entries.len().min(k)];
    let mut hits = 0usize;
    let mut rel = 0.0;
    for e in reported {
        if let Some(&f) = truth.get(&e.key) {
            hits += 1;
            rel += (e.count as f64 - f as f64).abs() / f as f64;
        }
    }
    let precision = if reported.is_empty() {
        0.0
    } else {
        hits as f64 / reported.len() as f64
    };
    let recall = if truth.is_empty() {
        0.0
    } else {
        hits as f64 / truth.len() as f64
    };
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Score {
        precision,
        recall,
        f1,
        are: if hits == 0 { 0.0 } else { rel / hits as f64 },
        reported: reported.len(),
    }
}
