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
//! streams × 4 summaries run in about 70 s on 2 shared cores (CI's dev profile). The figures do not carry
//! over to longer streams unchanged: at 10⁷ packets with populations 10× larger
//! the k-th key has the same share of the stream but 10× the arrivals, and the
//! cold tier's idle epoch (`2^15` updates) and the first-arrival records' lifetime
//! (`S` first arrivals) are fixed in updates, so a slow key's gaps grow 10×
//! against them: the flat-tailed classes that miss here miss more there.
//!
//! `cargo test --release -p loxo-tests --test topk_family -- --nocapture` prints
//! the held-out table; `-- --ignored tuning_range --nocapture` the tuning range
//! stream by stream; `-- --ignored issue_30_target` asserts the issue's target
//! (not met today: it fails, with the figures); `-- --ignored memory_scaling` what
//! memory the same design would need (printed).
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

/// The four summaries on stream `seed`.
fn judge_all(seed: u64) -> (String, [Judged; 4]) {
    let d = family::draw(seed, PACKETS);
    let exact = exact_counts(d.pairs());
    let r = [
        run(&mut T4::new(1), &d, &exact, SUMMARIES[0].2),
        run(&mut T8::new(1), &d, &exact, SUMMARIES[1].2),
        run(&mut T16::new(1), &d, &exact, SUMMARIES[2].2),
        run(&mut Hk::new(1), &d, &exact, SUMMARIES[3].2),
    ];
    (d.label, r)
}

fn judge_range(seeds: Range<u64>) -> Vec<(String, [Judged; 4])> {
    // Two threads: the CI machine's cores.
    family::on_seeds(seeds, 2, judge_all)
}

/// The held-out results, computed once for every test of this binary.
fn held_out() -> &'static [(String, [Judged; 4])] {
    static R: OnceLock<Vec<(String, [Judged; 4])>> = OnceLock::new();
    R.get_or_init(|| judge_range(HELD_OUT))
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
        let d = dist(&column(held_out(), i));
        assert!(d.bounds_checked >= d.streams, "{name}: {d:?}");
        assert_eq!(d.bound_violations, 0, "{name}: {d:?}");
    }
}

/// The held-out table, every summary's figures held to its regression pins.
#[test]
fn held_out_regression_pins() {
    let r = held_out();
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
    let r = held_out();
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

/// What memory issue 30's 8 KiB target would need (printed, not asserted): the same
/// `TieredTopK` design scaled, untuned, to 16, 32 and 64 KiB (every part of the
/// 16 KiB layout ×2 and ×4, records filling the rest), all reporting the top **100**,
/// and Space-Saving at 64 KiB, on the held-out streams — and, per stream, the
/// smallest of these sizes at which `TieredTopK` reaches F1 ≥ 0.95.
///
/// `cargo test --release -p loxo-tests --test topk_family -- --ignored memory_scaling --nocapture`
#[test]
#[ignore = "a measurement on the held-out range, printed only"]
fn memory_scaling() {
    type T32 = TieredTopK<256, 1600, 10860, u64>;
    type T64 = TieredTopK<512, 3200, 21740, u64>;
    type Ss64 = loxo_cms::SpaceSaving<u64, 1700>;
    const NAMES: [&str; 5] = [
        "TieredTopK<64, 400, 2700> 8 KiB",
        "TieredTopK<128, 800, 5420> 16 KiB",
        "TieredTopK<256, 1600, 10860> 32 KiB",
        "TieredTopK<512, 3200, 21740> 64 KiB",
        "SpaceSaving<u64, 1700> 64 KiB (63.1 KiB)",
    ];
    assert_eq!(size_of::<T32>(), 32768);
    assert_eq!(size_of::<T64>(), 65536);
    assert!(size_of::<Ss64>() <= 65536);
    let r = family::on_seeds(HELD_OUT, 2, |seed| {
        let d = family::draw(seed, PACKETS);
        let exact = exact_counts(d.pairs());
        let total: u64 = exact.values().sum();
        let w100 = loxo_tests::topk::true_top(&exact, 100)
            .last()
            .map_or(1, |e| e.1);
        let flat = total as f64 / w100.max(1) as f64;
        (
            flat,
            [
                run(&mut *Box::new(T8::new(1)), &d, &exact, 100),
                run(&mut *Box::new(T16::new(1)), &d, &exact, 100),
                run(&mut *Box::new(T32::new(1)), &d, &exact, 100),
                run(&mut *Box::new(T64::new(1)), &d, &exact, 100),
                run(&mut *Box::new(Ss64::new()), &d, &exact, 100),
            ],
        )
    });
    let mut t = String::from(
        "| summary, top 100 | F1 min / p5 / median | F1 ≥ 0.95 | F1 ≥ 0.90 | ARE median / p90 | keys ≥ 2× the 100th missing (streams) |\n|---|---|---|---|---|---|\n",
    );
    for (i, name) in NAMES.iter().enumerate() {
        let col: Vec<Judged> = r.iter().map(|j| j.1[i]).collect();
        let d = dist(&col);
        writeln!(
            t,
            "| {name} | {:.3} / {:.3} / {:.3} | {:.1} % | {:.1} % | {:.2} % / {:.2} % | {} ({}) |",
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
    }
    // The smallest TieredTopK size reaching F1 ≥ 0.95, per stream.
    let mut smallest = [0usize; 5];
    for (_, j) in &r {
        let i = j[..4].iter().position(|x| x.score.f1 >= 0.95).unwrap_or(4);
        smallest[i] += 1;
    }
    // By flatness: the stream's total over its 100th weight (1/φ of the 100th key).
    let mut by = String::from(
        "| total / 100th weight | streams | F1 ≥ 0.95 at 8 / 16 / 32 / 64 KiB |\n|---|---|---|\n",
    );
    for (lo, hi) in [
        (0.0, 2e3),
        (2e3, 5e3),
        (5e3, 1e4),
        (1e4, 2e4),
        (2e4, f64::INFINITY),
    ] {
        let inb: Vec<&[Judged; 5]> = r
            .iter()
            .filter(|(f, _)| *f >= lo && *f < hi)
            .map(|(_, j)| j)
            .collect();
        let share = |i: usize| {
            inb.iter().filter(|j| j[i].score.f1 >= 0.95).count() as f64 / inb.len().max(1) as f64
        };
        writeln!(
            by,
            "| {lo:.0}–{} | {} | {:.0} / {:.0} / {:.0} / {:.0} % |",
            if hi.is_finite() {
                format!("{hi:.0}")
            } else {
                String::new()
            },
            inb.len(),
            100.0 * share(0),
            100.0 * share(1),
            100.0 * share(2),
            100.0 * share(3),
        )
        .unwrap();
    }
    println!("{t}");
    println!("{by}");
    println!(
        "streams first at F1 ≥ 0.95 with 8 / 16 / 32 / 64 KiB / none of these: {smallest:?} of {}",
        r.len()
    );
}
