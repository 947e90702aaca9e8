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

/// A report judged by the rules of issue 30: its [`Score`], the heavy keys it
/// misses and the bound contract on every entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judged {
    /// F1 and ARE of the top-`k` report.
    pub score: Score,
    /// Keys weighing at least twice the `k`-th heaviest that are not among the
    /// `k` reported.
    pub missing_heavy: usize,
    /// The heaviest of those missing keys as a multiple of the `k`-th weight (0 if none).
    pub worst_missing_ratio: f64,
    /// Reported entries (all of them, not only the first `k`) whose bounds exclude
    /// the key's true weight.
    pub bound_violations: usize,
    /// Reported entries checked against their bounds.
    pub bounds_checked: usize,
}

/// Judges `t`'s report against `exact`, `k` ≤ 1024.
///
/// # Panics
///
/// If `k > 1024` or `k == 0`.
#[must_use]
pub fn judge<T: TopK<u64>>(t: &T, exact: &HashMap<u64, u64>, k: usize) -> Judged {
    assert!(k > 0 && k <= 1024);
    let mut out = heapless::Vec::<Entry<u64>, 1024>::new();
    t.report(&mut out);
    let bound_violations = out
        .iter()
        .filter(|e| !e.admits(exact.get(&e.key).copied().unwrap_or(0)))
        .count();
    let score = score_entries(&out, exact, k);
    let top = true_top(exact, k.max(1));
    let fk = top.last().map_or(0, |e| e.1);
    let reported: std::collections::HashSet<u64> = out.iter().take(k).map(|e| e.key).collect();
    let missing: Vec<u64> = top
        .iter()
        .filter(|&&(key, f)| fk > 0 && f >= 2 * fk && !reported.contains(&key))
        .map(|e| e.1)
        .collect();
    Judged {
        score,
        missing_heavy: missing.len(),
        worst_missing_ratio: missing
            .iter()
            .map(|&f| f as f64 / fk as f64)
            .fold(0.0, f64::max),
        bound_violations,
        bounds_checked: out.len(),
    }
}

/// The distribution of a summary's [`Judged`] over many streams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dist {
    /// Streams judged.
    pub streams: usize,
    /// Lowest F1.
    pub f1_min: f64,
    /// 5th-percentile F1.
    pub f1_p5: f64,
    /// Median F1.
    pub f1_median: f64,
    /// Streams with F1 ≥ 0.95.
    pub f1_ge_095: usize,
    /// Streams with F1 ≥ 0.90.
    pub f1_ge_090: usize,
    /// Median ARE.
    pub are_median: f64,
    /// 90th-percentile ARE.
    pub are_p90: f64,
    /// Largest ARE.
    pub are_max: f64,
    /// Heavy keys (≥ 2× the k-th) missing from the reports, over all streams.
    pub missing_heavy: usize,
    /// Streams with at least one such key missing.
    pub streams_missing: usize,
    /// The heaviest missing key as a multiple of its stream's k-th weight.
    pub worst_missing_ratio: f64,
    /// Reported entries whose bounds exclude the true weight.
    pub bound_violations: usize,
    /// Reported entries checked.
    pub bounds_checked: usize,
}

/// The distribution of `v` (at least one judgement).
///
/// # Panics
///
/// If `v` is empty.
#[must_use]
pub fn dist(v: &[Judged]) -> Dist {
    assert!(!v.is_empty());
    let mut f1: Vec<f64> = v.iter().map(|j| j.score.f1).collect();
    let mut are: Vec<f64> = v.iter().map(|j| j.score.are).collect();
    f1.sort_by(f64::total_cmp);
    are.sort_by(f64::total_cmp);
    let n = v.len();
    // F1 = 2·p·r/(p + r) may land one ulp below hits/k.
    let at_least = |t: f64| f1.iter().filter(|&&x| x >= t - 1e-9).count();
    Dist {
        streams: n,
        f1_min: f1[0],
        f1_p5: f1[n / 20],
        f1_median: f1[n / 2],
        f1_ge_095: at_least(0.95),
        f1_ge_090: at_least(0.90),
        are_median: are[n / 2],
        are_p90: are[n * 9 / 10],
        are_max: are[n - 1],
        missing_heavy: v.iter().map(|j| j.missing_heavy).sum(),
        streams_missing: v.iter().filter(|j| j.missing_heavy > 0).count(),
        worst_missing_ratio: v.iter().map(|j| j.worst_missing_ratio).fold(0.0, f64::max),
        bound_violations: v.iter().map(|j| j.bound_violations).sum(),
        bounds_checked: v.iter().map(|j| j.bounds_checked).sum(),
    }
}
