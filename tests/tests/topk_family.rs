//! Top-k on streams nobody tuned for (issue 30): the family of
//! [`loxo_tests::family`] — class and parameters drawn per seed from wide ranges
//! (Zipf 0.6–1.5, lognormal and Pareto flow sizes, bursts, hot-set swaps, one-off
//! floods of 0–95 %, rare heavy keys in 1500-byte packets with long gaps; weighted
//! by packets or bytes) — judged by the rules of the issue at three sizes:
//! `TieredTopK` at 4 KiB reporting the top 50, at 8 KiB the top 100, at 16 KiB the
//! top 200, and HeavyKeeper at the crate README's 8 KiB sizing for comparison.
//!
//! **Seeds.** [`TUNING`] is the only range any design choice looked at: on seeds
//! 0..100 the layouts `<32, 200, 1340>`, `<64, 400, 2700>`, `<128, 800, 5420>` were
//! chosen over `<24, 139, 2100>`, `<48, 278, 4200>`, `<96, 556, 8400>` (and over
//! other splits of 8 KiB, cold decay bases 1.3–4, cold epochs 2¹¹–2¹⁷, and two
//! weight-aware decay rules, which did not help); seeds 100..200 were looked at
//! afterwards to see where it still fails, with no change made. [`HELD_OUT`] is run
//! here and nowhere else; its figures are the README's.
//!
//! **Scale.** [`PACKETS`] = 10⁶ packets per stream (the Zipf classes over
//! 2·10⁴–2·10⁵ flows, the flow-size classes until the packets are used), so 240
//! streams × 7 summaries (the four and [`held_out_memory_scaling`]'s 32 KiB, 64 KiB
//! and Space-Saving ones; each stream drawn and counted once, the 16 KiB summary fed
//! once and judged at both k) run in about 2 minutes on 2 shared cores (CI's dev
//! profile; 2.5 minutes when each table drew its own streams). The figures do not carry
//! over to longer streams unchanged: at 10⁷ packets with populations 10× larger
//! the k-th key has the same share of the stream but 10× the arrivals, and the
//! cold tier's idle epoch (`2^15` updates) and the first-arrival records' lifetime
//! (`S` first arrivals) are fixed in updates, so a slow key's gaps grow 10×
//! against them: the flat-tailed classes that miss here miss more there.
//!
//! `cargo test --release -p loxo-tests --test topk_family -- --nocapture` prints
//! the held-out table; `-- --ignored tuning_range --nocapture` the tuning range
//! stream by stream; `-- --ignored issue_30_target` asserts the issue's target
//! (not met today: it fails, with the figures); `held_out_memory_scaling` prints
//! what memory the same design would need (16–64 KiB), held to regression pins.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::mem::size_of;
use std::ops::Range;
use std::sync::OnceLock;

use loxo_cms::{HeavyKeeper, TieredTopK, TopK};
use loxo_core::Seed;
use loxo_tests::family;
use loxo_tests::topk::{dist, exact_counts, feed, judge, Judged};

/// The seeds design choices may look at: the layouts were chosen on 0..100, and
/// 100..200 were looked at afterwards (no change made).
const TUNING: Range<u64> = 0..200;
/// The seeds the claims are made on: never looked at for a design choice.
const HELD_OUT: Range<u64> = 1_000_000..1_000_240;
/// Packets per stream.
const PACKETS: usize = 1_000_000;
/// The harness's hashing seed.
const SEED: Seed = Seed::new(0x70b_c0de, 0x5eed_cafe);

type T4 = TieredTopK<32, 200, 1340, u64>;
type T8 = TieredTopK<64, 400, 2700, u64>;
type T16 = TieredTopK<128, 800, 5420, u64>;
type Hk = HeavyKeeper<272, 2, 100, u64, 160>;

/// (name, budget in bytes, k) of each summary, in the order of [`judge_all`].
const SUMMARIES: [(&str, usize, usize); 4] = [
    ("TieredTopK<32, 200, 1340> 4 KiB, top 50", 4096, 50),
    ("TieredTopK<64, 400, 2700> 8 KiB, top 100", 8192, 100),
    ("TieredTopK<128, 800, 5420> 16 KiB, top 200", 16384, 200),
    (
        "HeavyKeeper<272, 2, 100, b = 1.6> 8 KiB, top 100",
        8192,
        100,
    ),
];

/// Regression pins, measured on [`HELD_OUT`] — not targets (the issue's target is
/// [`issue_30_target`]): per summary, the lowest F1 (a floor: F1 = hits/k here, one
/// exact number), the number of streams with F1 ≥ 0.95 (floor), the median ARE
/// (ceiling: the measured value rounded up to two significant digits) and the heavy
/// keys (≥ 2× the k-th weight) missing from the reports over all streams
/// (ceiling). A change that lowers any of them fails here; one that raises them
/// should move the pins and the README's figures with them.
const PINS: [(f64, usize, f64, usize); 4] = [
    (0.200, 132, 0.016, 83),
    (0.240, 164, 0.012, 95),
    (0.265, 159, 0.012, 81),
    (0.010, 39, 0.035, 1428),
];

fn run<T: TopK<u64>>(t: &mut T, d: &family::Drawn, exact: &HashMap<u64, u64>, k: usize) -> Judged {
    feed(t, SEED, d.pairs());
    judge(t, exact, k)
}

/// Everything judged on one held-out stream: its label, its flatness `N/w₁₀₀`, the
/// four summaries of [`SUMMARIES`] and the four scaled ones of [`SCALED`].
type Row = (String, f64, [Judged; 4], Option<[Judged; 4]>);

/// The four summaries on stream `seed`, and (with `scaled`) the scaled ones of
/// [`SCALED`] on the same stream: each stream is drawn and counted once, and the
/// 16 KiB summary, fed once, judged at both k (200 and 100).
fn judge_all(seed: u64, scaled: bool) -> Row {
    let d = family::draw(seed, PACKETS);
    let exact = exact_counts(d.pairs());
    let mut t16 = T16::new(1);
    feed(&mut t16, SEED, d.pairs());
    let r = [
        run(&mut T4::new(1), &d, &exact, SUMMARIES[0].2),
        run(&mut T8::new(1), &d, &exact, SUMMARIES[1].2),
        judge(&t16, &exact, SUMMARIES[2].2),
        run(&mut Hk::new(1), &d, &exact, SUMMARIES[3].2),
    ];
    let total: u64 = exact.values().sum();
    let w100 = loxo_tests::topk::true_top(&exact, 100)
        .last()
        .map_or(1, |e| e.1);
    let s = scaled.then(|| {
        [
            judge(&t16, &exact, 100),
            run(&mut *Box::new(T32::new(1)), &d, &exact, 100),
            run(&mut *Box::new(T64::new(1)), &d, &exact, 100),
            run(&mut *Box::new(Ss64::new()), &d, &exact, 100),
        ]
    });
    (d.label, total as f64 / w100.max(1) as f64, r, s)
}

fn judge_range(seeds: Range<u64>) -> Vec<(String, [Judged; 4])> {
    // Two threads: the CI machine's cores.
    family::on_seeds(seeds, 2, |seed| {
        let (label, _, r, _) = judge_all(seed, false);
        (label, r)
    })
}

/// The held-out results with the scaled summaries', computed once for every test of
/// this binary (each stream drawn once for both tables).
fn held_out_rows() -> &'static [Row] {
    static R: OnceLock<Vec<Row>> = OnceLock::new();
    R.get_or_init(|| family::on_seeds(HELD_OUT, 2, |seed| judge_all(seed, true)))
}

/// The held-out results of [`SUMMARIES`].
fn held_out() -> Vec<(String, [Judged; 4])> {
    held_out_rows()
        .iter()
        .map(|(label, _, r, _)| (label.clone(), *r))
        .collect()
}

fn column(r: &[(String, [Judged; 4])], i: usize) -> Vec<Judged> {
    r.iter().map(|e| e.1[i]).collect()
}

fn table(r: &[(String, [Judged; 4])]) -> String {
    let mut t = String::from(
        "| summary | streams | F1 min / p5 / median | F1 ≥ 0.95 | F1 ≥ 0.90 | ARE median / p90 | heavy keys missing (streams, worst ×k-th) |\n|---|---|---|---|---|---|---|\n",
    );
    for (i, (name, ..)) in SUMMARIES.iter().enumerate() {
        let d = dist(&column(r, i));
        writeln!(
            t,
            "| {name} | {} | {:.3} / {:.3} / {:.3} | {} ({:.1} %) | {} ({:.1} %) | {:.2} % / {:.2} % | {} ({}, {:.2}×) |",
            d.streams,
            d.f1_min,
            d.f1_p5,
            d.f1_median,
            d.f1_ge_095,
            100.0 * d.f1_ge_095 as f64 / d.streams as f64,
            d.f1_ge_090,
            100.0 * d.f1_ge_090 as f64 / d.streams as f64,
            100.0 * d.are_median,
            100.0 * d.are_p90,
            d.missing_heavy,
            d.streams_missing,
            d.worst_missing_ratio,
        )
        .unwrap();
    }
    t
}

#[test]
fn budgets() {
    assert_eq!(size_of::<T4>(), 4096);
    assert_eq!(size_of::<T8>(), 8192);
    assert_eq!(size_of::<T16>(), 16384);
    assert!(size_of::<Hk>() <= 8192);
    let sizes = [
        size_of::<T4>(),
        size_of::<T8>(),
        size_of::<T16>(),
        size_of::<Hk>(),
    ];
    for ((name, budget, _), size) in SUMMARIES.into_iter().zip(sizes) {
        assert!(size <= budget, "{name}: {size} bytes");
    }
}

// The ranges are disjoint, and the held-out one has at least 200 streams.
const _: () = assert!(TUNING.end <= HELD_OUT.start && HELD_OUT.end - HELD_OUT.start >= 200);

/// The bound contract on every reported entry of every held-out stream: each
/// `Some` bound contains the key's true weight.
#[test]
fn held_out_bounds_hold() {
    for (i, (name, ..)) in SUMMARIES.iter().enumerate() {
        let d = dist(&column(&held_out(), i));
        assert!(d.bounds_checked >= d.streams, "{name}: {d:?}");
        assert_eq!(d.bound_violations, 0, "{name}: {d:?}");
    }
}

/// The held-out table, every summary's figures held to its regression pins.
#[test]
fn held_out_regression_pins() {
    let r = &held_out();
    println!("{}", table(r));
    let mut failures = Vec::new();
    for (i, ((name, ..), &(f1_min, ge_095, are_median, missing))) in
        SUMMARIES.iter().zip(&PINS).enumerate()
    {
        let d = dist(&column(r, i));
        if d.f1_min < f1_min - 1e-9
            || d.f1_ge_095 < ge_095
            || d.are_median > are_median
            || d.missing_heavy > missing
        {
            failures.push(format!("{name}: {d:?} vs pins {:?}", PINS[i]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 30's target on the held-out range, for the three `TieredTopK` sizes: F1 ≥
/// 0.95 on ≥ 95 % of the streams and ≥ 0.90 on all, median ARE ≤ 1 %, no key of
/// ≥ 2× the k-th weight missing from the report. **Not met today** (the figures
/// are in `crates/loxo-cms/README.md`); ignored so CI stays green, run with
/// `--ignored issue_30_target` to see where it fails.
#[test]
#[ignore = "issue 30's target: not met by TieredTopK today (README, 'Streams nobody tuned for')"]
fn issue_30_target() {
    let r = &held_out();
    let mut failures = Vec::new();
    for (i, (name, ..)) in SUMMARIES.iter().enumerate().take(3) {
        let d = dist(&column(r, i));
        if d.f1_ge_095 * 100 < 95 * d.streams
            || d.f1_ge_090 < d.streams
            || d.are_median > 0.01
            || d.missing_heavy > 0
        {
            failures.push(format!("{name}: {d:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The tuning range, stream by stream (printed, not asserted): what the layouts
/// were chosen on.
///
/// `cargo test --release -p loxo-tests --test topk_family -- --ignored tuning_range --nocapture`
#[test]
#[ignore = "the tuning range, printed only"]
fn tuning_range() {
    let r = judge_range(TUNING);
    for (seed, (label, j)) in TUNING.zip(&r) {
        let mut line = format!("{seed:4}");
        for x in j {
            write!(
                line,
                " | {:.3} {:.2} % {}",
                x.score.f1,
                100.0 * x.score.are,
                x.missing_heavy
            )
            .unwrap();
        }
        println!("{line} | {label}");
    }
    println!("{}", table(&r));
}

/// The same `TieredTopK` design scaled, untuned, to 16, 32 and 64 KiB (every part of
/// the 16 KiB layout ×2 and ×4, records filling the rest), all reporting the top
/// **100**, and Space-Saving at 64 KiB — what issue 30's 8 KiB target would need.
type T16k100 = T16;
type T32 = TieredTopK<256, 1600, 10860, u64>;
type T64 = TieredTopK<512, 3200, 21740, u64>;
type Ss64 = loxo_cms::SpaceSaving<u64, 1700>;

/// (name, budget in bytes) of each summary of [`scaling`], after the 8 KiB one of
/// [`SUMMARIES`] (top 100 for all).
const SCALED: [(&str, usize); 4] = [
    ("TieredTopK<128, 800, 5420> 16 KiB", 16384),
    ("TieredTopK<256, 1600, 10860> 32 KiB", 32768),
    ("TieredTopK<512, 3200, 21740> 64 KiB", 65536),
    ("SpaceSaving<u64, 1700> 64 KiB", 65536),
];

/// Regression pins of [`scaling`] on [`HELD_OUT`] (as [`PINS`]: F1 min and streams at
/// F1 ≥ 0.95 floors, median ARE and heavy keys missing ceilings).
const SCALED_PINS: [(f64, usize, f64, usize); 4] = [
    (0.420, 193, 0.0049, 28),
    (0.600, 206, 0.0015, 6),
    (0.700, 220, 0.00060, 0),
    (0.000, 89, 0.087, 1754),
];

/// Flatness bands of `N/w₁₀₀` (a stream's total over its 100th key's weight), and per
/// band the streams reaching F1 ≥ 0.95 at 8 / 16 / 32 / 64 KiB (floors: regression pins).
const BANDS: [(f64, f64, [usize; 4]); 5] = [
    (0.0, 2e3, [86, 95, 95, 95]),
    (2e3, 5e3, [42, 49, 53, 53]),
    (5e3, 1e4, [25, 35, 38, 43]),
    (1e4, 2e4, [10, 12, 17, 20]),
    (2e4, f64::INFINITY, [1, 2, 3, 9]),
];

/// Per held-out stream, in seed order: its flatness `N/w₁₀₀` and the scaled summaries'
/// judgements ([`SCALED`]).
fn scaling() -> Vec<(f64, [Judged; 4])> {
    held_out_rows()
        .iter()
        .filter_map(|r| Some((r.1, r.3?)))
        .collect()
}

/// What memory the 8 KiB target would need, on the held-out streams: the scaled
/// summaries' table and, by flatness, the streams reaching F1 ≥ 0.95 at each size —
/// printed (the README's "What the target would need") and held to regression pins.
#[test]
fn held_out_memory_scaling() {
    assert_eq!(size_of::<T32>(), 32768);
    assert_eq!(size_of::<T64>(), 65536);
    for ((name, budget), size) in SCALED.into_iter().zip([
        size_of::<T16k100>(),
        size_of::<T32>(),
        size_of::<T64>(),
        size_of::<Ss64>(),
    ]) {
        assert!(size <= budget, "{name}: {size} bytes");
    }
    let t8 = column(&held_out(), 1);
    let r = scaling();
    assert_eq!(r.len(), t8.len());
    let mut t = String::from(
        "| summary, top 100 | F1 min / p5 / median | F1 ≥ 0.95 | F1 ≥ 0.90 | ARE median / p90 | keys ≥ 2× the 100th missing (streams) |\n|---|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for i in 0..5 {
        let col: Vec<Judged> = if i == 0 {
            t8.clone()
        } else {
            r.iter().map(|j| j.1[i - 1]).collect()
        };
        let d = dist(&col);
        let name = if i == 0 {
            SUMMARIES[1].0
        } else {
            SCALED[i - 1].0
        };
        writeln!(
            t,
            "| {name} | {:.3} / {:.3} / {:.3} | {:.1} % | {:.1} % | {:.3} % / {:.2} % | {} ({}) |",
            d.f1_min,
            d.f1_p5,
            d.f1_median,
            100.0 * d.f1_ge_095 as f64 / d.streams as f64,
            100.0 * d.f1_ge_090 as f64 / d.streams as f64,
            100.0 * d.are_median,
            100.0 * d.are_p90,
            d.missing_heavy,
            d.streams_missing,
        )
        .unwrap();
        if i > 0 {
            let (f1_min, ge_095, are_median, missing) = SCALED_PINS[i - 1];
            if d.f1_min < f1_min - 1e-9
                || d.f1_ge_095 < ge_095
                || d.are_median > are_median
                || d.missing_heavy > missing
            {
                failures.push(format!("{name}: {d:?} vs pins {:?}", SCALED_PINS[i - 1]));
            }
        }
    }
    let mut by = String::from(
        "| total / 100th weight | streams | F1 ≥ 0.95 at 8 / 16 / 32 / 64 KiB |\n|---|---|---|\n",
    );
    for &(lo, hi, pins) in &BANDS {
        let inb: Vec<usize> = (0..r.len())
            .filter(|&k| r[k].0 >= lo && r[k].0 < hi)
            .collect();
        let reached = |i: usize| {
            inb.iter()
                .filter(|&&k| {
                    let f1 = if i == 0 {
                        t8[k].score.f1
                    } else {
                        r[k].1[i - 1].score.f1
                    };
                    f1 >= 0.95
                })
                .count()
        };
        let got = [reached(0), reached(1), reached(2), reached(3)];
        let pct = got.map(|g| (100.0 * g as f64 / inb.len().max(1) as f64).round());
        writeln!(
            by,
            "| {lo:.0}–{} | {} | {} / {} / {} / {} % ({got:?}) |",
            if hi.is_finite() {
                format!("{hi:.0}")
            } else {
                String::new()
            },
            inb.len(),
            pct[0],
            pct[1],
            pct[2],
            pct[3],
        )
        .unwrap();
        if got.iter().zip(pins).any(|(g, p)| *g < p) {
            failures.push(format!("band {lo}–{hi}: {got:?} vs pins {pins:?}"));
        }
    }
    println!("{t}");
    println!("{by}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
