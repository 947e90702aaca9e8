//! Top-100 accuracy at 8 KiB on the hard stream classes of issue 17
//! (`loxo_tests::streams`: Zipf 0.8 / 1.0 / 1.2, lognormal sizes, hot-set change,
//! 50 % and 90 % one-off floods), packet- and byte-weighted, several seeds, every
//! summary side by side at (almost) equal bytes:
//!
//! `cargo test --release -p loxo-tests --test topk_classes -- --nocapture`
//!
//! prints the table of `crates/loxo-cms/README.md` (mean F1 over the seeds, then the
//! worst seed's; mean ARE, then the worst seed's). Every figure is a **regression
//! pin** ([`EXPECTED`]), not a target: these seven classes and seeds 1–3 are the ones
//! the summaries were designed on, so the figures say nothing about streams nobody
//! tuned for — that is `topk_family.rs` (issue 30: a family of streams drawn per
//! seed, a tuning range and a disjoint held-out range, the target). The
//! streams and summaries are pure functions of their seeds, so each figure is one
//! deterministic number; the test checks the worst seed's F1 ≥ the printed floor and
//! the worst seed's ARE ≤ the printed ceiling (rounded up to two significant digits).
//!
//! Scale: the issue's, 10⁷ packets per stream over Zipf populations of 10⁶ flows, 3
//! seeds (7 classes × 3 seeds × 2 weights × 6 summaries, 2.5·10⁹ updates: about 3
//! minutes in release on 2 shared cores). Until the first-arrival records of
//! `TieredTopK` the table ran at 4·10⁶ packets for CPU time; that scale, where a
//! rank-100 key has 2.5× fewer packets and so a larger relative error, is printed
//! by the ignored `topk_classes_confirmation`. The ignored tests here are
//! diagnostics: no README figure rests on them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::mem::size_of;

use loxo_cms::{CmsTopK, HeavyGuardian, HeavyKeeper, SpaceSaving, TieredTopK, TopK};
use loxo_core::Seed;
use loxo_tests::streams::{Class, Scale};
use loxo_tests::topk::{exact_counts, feed, score, Score};
use loxo_tests::zipf::Packet;

const K: usize = 100;
const BUDGET: usize = 8 * 1024;
const SCALE: Scale = Scale {
    packets: 10_000_000,
    flows: 1_000_000,
};
const SEEDS: [u64; 3] = [1, 2, 3];
const SEED: Seed = Seed::new(0x70b_c0de, 0x5eed_cafe);

// The 8 KiB types: HeavyKeeper as evaluated in `topk_accuracy.rs` (b = 1.6), the
// baselines, HeavyGuardian as in the paper (one bucket of 8 cells per key) and the
// one with two buckets of 4 cells per key (`D = 2`), and the two-tier summary (256
// full-key heavy cells behind 400 cold fingerprint cells and 2 700 one-byte
// first-arrival records: the layout chosen on the tuning range of `topk_family.rs`;
// the one before it, 192 / 278 / 4 200, was chosen on these classes).
type Hk = HeavyKeeper<272, 2, 100, u64, 160>;
type Ss = SpaceSaving<u64, 215>;
type Cu = CmsTopK<268, 4, 100, u64>;
type Hg1 = HeavyGuardian<85, 1, 8, u64>;
type Hg = HeavyGuardian<170, 2, 4, u64>;
type Tt = TieredTopK<64, 400, 2700, u64>;

const HK: &str = "HeavyKeeper 272×2, b = 1.6";
const SS: &str = "Space-Saving 215";
const CU: &str = "CMS-CU 268×4 + heap";
const HG1: &str = "HeavyGuardian 85×8, d = 1";
const HG: &str = "HeavyGuardian 170×4, d = 2";
const TT: &str = "TieredTopK 64×4 + 400 cold + 2700 rec";

const ALGOS: [(&str, usize); 6] = [
    (HK, size_of::<Hk>()),
    (SS, size_of::<Ss>()),
    (CU, size_of::<Cu>()),
    (HG1, size_of::<Hg1>()),
    (HG, size_of::<Hg>()),
    (TT, size_of::<Tt>()),
];

/// Regression pins, measured and bounded: (class, weight, summary, worst seed's F1
/// floor, worst seed's ARE ceiling). Every summary reports exactly 100 keys, so F1 = hits/100 and
/// the floor is the measured minimum itself; the ARE ceiling is the measured maximum
/// rounded up to two significant digits.
const EXPECTED: &[(&str, &str, &str, f64, f64)] = &[
    (
        "Zipf 0.8",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.93,
        1.5e-2,
    ),
    ("Zipf 0.8", "packets", "Space-Saving 215", 0.10, 3.6e0),
    ("Zipf 0.8", "packets", "CMS-CU 268×4 + heap", 0.25, 6.2e-1),
    (
        "Zipf 0.8",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.94,
        3.5e-3,
    ),
    (
        "Zipf 0.8",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        1.00,
        2.1000000000000003e-3,
    ),
    (
        "Zipf 0.8",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        1.5000000000000001e-4,
    ),
    (
        "Zipf 0.8",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.93,
        9.2e-3,
    ),
    ("Zipf 0.8", "bytes", "Space-Saving 215", 0.14, 4.5e0),
    ("Zipf 0.8", "bytes", "CMS-CU 268×4 + heap", 0.26, 7.4e-1),
    (
        "Zipf 0.8",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.95,
        3.4000000000000002e-3,
    ),
    (
        "Zipf 0.8",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        0.99,
        2.7e-3,
    ),
    (
        "Zipf 0.8",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        6.3e-4,
    ),
    (
        "Zipf 1.0",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.96,
        5.200000000000001e-4,
    ),
    ("Zipf 1.0", "packets", "Space-Saving 215", 0.29, 6.8e-1),
    ("Zipf 1.0", "packets", "CMS-CU 268×4 + heap", 0.36, 2.1e-5),
    (
        "Zipf 1.0",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.98,
        2.4000000000000003e-4,
    ),
    (
        "Zipf 1.0",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        1.00,
        1.7e-4,
    ),
    (
        "Zipf 1.0",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        2.9999999999999997e-5,
    ),
    (
        "Zipf 1.0",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.96,
        7.300000000000001e-4,
    ),
    ("Zipf 1.0", "bytes", "Space-Saving 215", 0.32, 7.8e-1),
    ("Zipf 1.0", "bytes", "CMS-CU 268×4 + heap", 0.36, 2.8e-5),
    (
        "Zipf 1.0",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.99,
        3.6e-4,
    ),
    (
        "Zipf 1.0",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        1.00,
        2e-4,
    ),
    (
        "Zipf 1.0",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        1.4000000000000001e-4,
    ),
    (
        "Zipf 1.2",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.94,
        1.4000000000000001e-4,
    ),
    ("Zipf 1.2", "packets", "Space-Saving 215", 0.56, 2.6e-1),
    ("Zipf 1.2", "packets", "CMS-CU 268×4 + heap", 0.43, 3e-6),
    (
        "Zipf 1.2",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.99,
        4.9e-5,
    ),
    (
        "Zipf 1.2",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        1.00,
        2.7e-5,
    ),
    (
        "Zipf 1.2",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        1.8999999999999998e-5,
    ),
    (
        "Zipf 1.2",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.95,
        2.2e-4,
    ),
    ("Zipf 1.2", "bytes", "Space-Saving 215", 0.60, 2.5e-1),
    (
        "Zipf 1.2",
        "bytes",
        "CMS-CU 268×4 + heap",
        0.43,
        9.299999999999999e-6,
    ),
    (
        "Zipf 1.2",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        1.00,
        4.9e-5,
    ),
    (
        "Zipf 1.2",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        1.00,
        1.7e-5,
    ),
    (
        "Zipf 1.2",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        1.2000000000000002e-4,
    ),
    (
        "lognormal",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.90,
        1.9e-2,
    ),
    (
        "lognormal",
        "packets",
        "Space-Saving 215",
        0.03,
        3.3000000000000003e0,
    ),
    (
        "lognormal",
        "packets",
        "CMS-CU 268×4 + heap",
        0.14,
        1.4000000000000001e0,
    ),
    (
        "lognormal",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.89,
        5.1e-3,
    ),
    (
        "lognormal",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        0.97,
        5.9e-3,
    ),
    (
        "lognormal",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.99,
        6.000000000000001e-4,
    ),
    (
        "lognormal",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.90,
        1.9e-2,
    ),
    (
        "lognormal",
        "bytes",
        "Space-Saving 215",
        0.06,
        6.1000000000000005e0,
    ),
    (
        "lognormal",
        "bytes",
        "CMS-CU 268×4 + heap",
        0.15,
        9.500000000000001e-1,
    ),
    (
        "lognormal",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.79,
        4e-3,
    ),
    (
        "lognormal",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        0.96,
        5.8000000000000005e-3,
    ),
    (
        "lognormal",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.99,
        1.1e-3,
    ),
    (
        "hot-set change",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.67,
        2.5e-3,
    ),
    ("hot-set change", "packets", "Space-Saving 215", 0.35, 1.1e0),
    (
        "hot-set change",
        "packets",
        "CMS-CU 268×4 + heap",
        0.33,
        1.1e-1,
    ),
    (
        "hot-set change",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.69,
        3.1e-2,
    ),
    (
        "hot-set change",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        0.97,
        3.3e-3,
    ),
    (
        "hot-set change",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.98,
        4.8000000000000004e-3,
    ),
    (
        "hot-set change",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.64,
        3.1e-4,
    ),
    (
        "hot-set change",
        "bytes",
        "Space-Saving 215",
        0.34,
        1.2000000000000002e0,
    ),
    (
        "hot-set change",
        "bytes",
        "CMS-CU 268×4 + heap",
        0.33,
        9.9e-2,
    ),
    (
        "hot-set change",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.72,
        3.1e-2,
    ),
    (
        "hot-set change",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        0.97,
        5.5000000000000005e-3,
    ),
    (
        "hot-set change",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.98,
        5e-3,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.92,
        2.4e-2,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "Space-Saving 215",
        0.10,
        2.7e0,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "CMS-CU 268×4 + heap",
        0.27,
        5.3e-1,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.98,
        5.4e-3,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        0.99,
        3.4000000000000002e-3,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        2.5e-4,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.79,
        3.3e-2,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "Space-Saving 215",
        0.05,
        2.3000000000000003e0,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "CMS-CU 268×4 + heap",
        0.09,
        1.2000000000000002e0,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.98,
        1.4e-2,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        0.99,
        6.8000000000000005e-3,
    ),
    (
        "Zipf 0.9 + 50 % flood",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        1.00,
        5.300000000000001e-4,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "HeavyKeeper 272×2, b = 1.6",
        0.66,
        9.9e-3,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "Space-Saving 215",
        0.01,
        2.9e1,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "CMS-CU 268×4 + heap",
        0.04,
        6.9e0,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "HeavyGuardian 85×8, d = 1",
        0.86,
        9.7e-2,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "HeavyGuardian 170×4, d = 2",
        0.91,
        5.7e-2,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "packets",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.99,
        5.6e-3,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "HeavyKeeper 272×2, b = 1.6",
        0.66,
        2.8e-2,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "Space-Saving 215",
        0.00,
        3.2e1,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "CMS-CU 268×4 + heap",
        0.01,
        2.3000000000000003e0,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "HeavyGuardian 85×8, d = 1",
        0.76,
        1.8e-1,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "HeavyGuardian 170×4, d = 2",
        0.82,
        1.3e-1,
    ),
    (
        "Zipf 0.9 + 90 % flood",
        "bytes",
        "TieredTopK 64×4 + 400 cold + 2700 rec",
        0.98,
        6.7e-3,
    ),
];

fn run<T: TopK<u64>>(t: T, s: &[Packet], exact: &HashMap<u64, u64>, bytes: bool) -> Score {
    run_k(t, s, exact, bytes, K)
}

/// `run` reporting the top `k`.
fn run_k<T: TopK<u64>>(
    mut t: T,
    s: &[Packet],
    exact: &HashMap<u64, u64>,
    bytes: bool,
    k: usize,
) -> Score {
    feed(
        &mut t,
        SEED,
        s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })),
    );
    score(&t, exact, k)
}

/// The six summaries on one stream, two threads.
fn run_all(s: &[Packet], exact: &HashMap<u64, u64>, bytes: bool) -> Vec<Score> {
    std::thread::scope(|sc| {
        let a = sc.spawn(|| {
            vec![
                run(Hk::new(1), s, exact, bytes),
                run(Ss::new(), s, exact, bytes),
                run(Cu::new(SEED), s, exact, bytes),
            ]
        });
        let mut b = vec![
            run(Hg1::new(1), s, exact, bytes),
            run(Hg::new(1), s, exact, bytes),
            run(Tt::new(1), s, exact, bytes),
        ];
        let mut v = a.join().unwrap();
        v.append(&mut b);
        v
    })
}

/// `x` rounded up to two significant digits.
fn ceil2(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let p = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / p).ceil() * p
}

/// `f` of every item, computed on `threads` threads (items taken in turn), in the
/// items' order.
fn scored_in_parallel<T: Copy + Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&item) = items.get(i) else { break };
                let r = f(item);
                out.lock().unwrap()[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item scored"))
        .collect()
}

#[test]
fn budgets_are_8_kib() {
    for (name, b) in ALGOS {
        assert!(b <= BUDGET && b + 64 >= BUDGET, "{name}: {b} bytes");
    }
}

/// The full table (about a minute in release on 2 shared cores), every figure
/// asserted.
#[test]
fn topk_classes_table() {
    let t0 = std::time::Instant::now();
    let mut table = String::from(
        "| class | weight | summary | F1 mean (worst seed) | ARE mean (worst seed) |\n|---|---|---|---|---|\n",
    );
    let mut rows = String::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    // The classes are independent, pure functions of their seeds: scored on two
    // threads (the CI machine's cores; this binary's other test is instant), the
    // same figures in half the time.
    let all = scored_in_parallel(&Class::ALL, 2, |class| {
        // scores[weight][summary]: one score per seed.
        let mut scores: Vec<Vec<Vec<Score>>> = vec![vec![Vec::new(); ALGOS.len()]; 2];
        for seed in SEEDS {
            let s = class.packets(SCALE, seed);
            for (wi, bytes) in [false, true].into_iter().enumerate() {
                let exact =
                    exact_counts(s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })));
                for (ai, sc) in run_all(&s, &exact, bytes).into_iter().enumerate() {
                    scores[wi][ai].push(sc);
                }
            }
        }
        eprintln!("{}: {:?}", class.name(), t0.elapsed());
        scores
    });
    for (class, scores) in Class::ALL.into_iter().zip(all) {
        let name = class.name();
        for (wi, weight) in ["packets", "bytes"].into_iter().enumerate() {
            for (ai, (algo, _)) in ALGOS.iter().enumerate() {
                let v = &scores[wi][ai];
                let n = v.len() as f64;
                let f1 = v.iter().map(|s| s.f1).sum::<f64>() / n;
                let f1min = v.iter().map(|s| s.f1).fold(1.0, f64::min);
                let are = v.iter().map(|s| s.are).sum::<f64>() / n;
                let aremax = v.iter().map(|s| s.are).fold(0.0, f64::max);
                writeln!(
                    table,
                    "| {name} | {weight} | {algo} | {f1:.3} ({f1min:.2}) | {are:.2e} ({aremax:.2e}) |"
                )
                .unwrap();
                writeln!(
                    rows,
                    "    (\"{name}\", \"{weight}\", \"{algo}\", {f1min:.2}, {:e}),",
                    ceil2(aremax)
                )
                .unwrap();
                let Some(&(.., floor, ceiling)) = EXPECTED
                    .iter()
                    .find(|e| e.0 == name && e.1 == weight && e.2 == *algo)
                else {
                    failures.push(format!("{name} / {weight} / {algo}: no expected figures"));
                    continue;
                };
                checked += 1;
                // F1 = 2·p·r/(p + r) may land one ulp below hits/100.
                if f1min < floor - 1e-9 || aremax > ceiling {
                    failures.push(format!(
                        "{name} / {weight} / {algo}: F1 {f1min:.4} (floor {floor}), ARE {aremax:.5} (ceiling {ceiling})"
                    ));
                }
            }
        }
    }
    println!("{table}");
    if !failures.is_empty() {
        println!("measured (EXPECTED rows):\n{rows}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, EXPECTED.len(), "every expected row was measured");
}

/// Confirmation runs, printed and not asserted (about 4 minutes in release): the
/// table for `TieredTopK`, HeavyGuardian `D = 2` and HeavyKeeper on seeds 4..=6 —
/// seeds nobody tuned for — and on seeds 1–3 at 4·10⁶ packets over 4·10⁵ flows
/// (the table's former scale):
///
/// `cargo test --release -p loxo-tests --test topk_classes -- --ignored --nocapture confirmation`
#[test]
#[ignore = "confirmation runs, printed only"]
fn topk_classes_confirmation() {
    let small = Scale {
        packets: 4_000_000,
        flows: 400_000,
    };
    for (title, scale, seeds) in [
        (
            "seeds 4..=6, 10⁷ packets, 10⁶ flows",
            SCALE,
            &[4u64, 5, 6][..],
        ),
        (
            "seeds 1..=3, 4·10⁶ packets, 4·10⁵ flows",
            small,
            &[1u64, 2, 3][..],
        ),
    ] {
        println!("\n{title}\n\n| class | weight | {TT} | {HG} | {HK} |\n|---|---|---|---|---|");
        for class in Class::ALL {
            // scores[weight][summary]
            let mut scores = vec![vec![Vec::new(); 3]; 2];
            for &seed in seeds {
                let s = class.packets(scale, seed);
                for (wi, bytes) in [false, true].into_iter().enumerate() {
                    let exact =
                        exact_counts(s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })));
                    let (tt, (hg, hk)) = std::thread::scope(|sc| {
                        let a = sc.spawn(|| run(Tt::new(1), &s, &exact, bytes));
                        let hg = run(Hg::new(1), &s, &exact, bytes);
                        let hk = run(Hk::new(1), &s, &exact, bytes);
                        (a.join().unwrap(), (hg, hk))
                    });
                    for (ai, sc) in [tt, hg, hk].into_iter().enumerate() {
                        scores[wi][ai].push(sc);
                    }
                }
            }
            for (wi, weight) in ["packets", "bytes"].into_iter().enumerate() {
                let mut row = format!("| {} | {weight} |", class.name());
                for v in &scores[wi] {
                    let n = v.len() as f64;
                    let f1 = v.iter().map(|s| s.f1).sum::<f64>() / n;
                    let f1min = v.iter().map(|s| s.f1).fold(1.0, f64::min);
                    let are = v.iter().map(|s| s.are).sum::<f64>() / n;
                    write!(row, " {f1:.3} ({f1min:.2}) / {are:.2e} |").unwrap();
                }
                println!("{row}");
            }
        }
    }
}

/// `TieredTopK` at other sizes and K on these classes (printed, not asserted; one
/// run, seed 7, at the table's scale, 10⁷ packets over 10⁶ flows): the 4 KiB layout
/// `<32, 200, 1340>` and HeavyGuardian 85×4, d = 2 (4 KiB) reporting the top 50; the
/// 8 KiB layout reporting the top 50; the 16 KiB layout `<128, 800, 5420>` reporting
/// the top 200. A diagnostic: the sizes' claims are `topk_family.rs`'s:
///
/// `cargo test --release -p loxo-tests --test topk_classes -- --ignored --nocapture other_sizes`
#[test]
#[ignore = "other sizes and K, printed only"]
fn topk_classes_other_sizes() {
    type Tt4 = TieredTopK<32, 200, 1340, u64>;
    type Hg4 = HeavyGuardian<85, 2, 4, u64>;
    type Tt16 = TieredTopK<128, 800, 5420, u64>;
    const COLUMNS: [&str; 4] = [
        "TieredTopK 4 KiB, top 50",
        "HeavyGuardian 85×4 d = 2 (4 KiB), top 50",
        "TieredTopK 8 KiB, top 50",
        "TieredTopK 16 KiB, top 200",
    ];
    println!(
        "sizes: {} / {} / {} / {} bytes",
        size_of::<Tt4>(),
        size_of::<Hg4>(),
        size_of::<Tt>(),
        size_of::<Tt16>()
    );
    println!(
        "seed 7, 10⁷ packets, 10⁶ flows: F1 / ARE\n\n| class | weight | {} |\n|---|---|---|---|---|---|",
        COLUMNS.join(" | ")
    );
    for class in Class::ALL {
        let s = class.packets(SCALE, 7);
        for bytes in [false, true] {
            let exact = exact_counts(s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })));
            let scores = std::thread::scope(|sc| {
                let a = sc.spawn(|| {
                    [
                        run_k(Tt4::new(1), &s, &exact, bytes, 50),
                        run_k(Hg4::new(1), &s, &exact, bytes, 50),
                    ]
                });
                let b = [
                    run_k(Tt::new(1), &s, &exact, bytes, 50),
                    run_k(Tt16::new(1), &s, &exact, bytes, 200),
                ];
                let a = a.join().unwrap();
                [a[0], a[1], b[0], b[1]]
            });
            let mut row = format!(
                "| {} | {} |",
                class.name(),
                if bytes { "bytes" } else { "packets" }
            );
            for sc in scores {
                write!(row, " {:.3} / {:.2} % |", sc.f1, 100.0 * sc.are).unwrap();
            }
            println!("{row}");
        }
    }
}

/// Where `TieredTopK`'s error under the 90 % flood comes from (printed, not asserted;
/// ≈ 1 min in release): for each key of the true top 100, its deficit when it first
/// entered the heavy tier (weight before it held a cold cell, and cold decay) and
/// what it lost to evictions from the heavy tier afterwards; the share of its final
/// weight it had when promoted; and the mean relative error left after the best
/// constant correction any estimator could add (the median relative deficit, the
/// minimiser of the mean absolute error — an oracle that knows the truth):
///
/// `cargo test --release -p loxo-tests --test topk_classes -- --ignored --nocapture flood_error`
#[test]
#[ignore = "diagnosis, printed only"]
fn tiered_flood_error_breakdown() {
    let class = Class::ALL
        .into_iter()
        .find(|c| c.name().contains("90 %"))
        .expect("the 90 % flood class");
    println!("\n| seed | weight | ARE | deficit at promotion | lost to evictions | share of final weight at promotion: mean / median / p90 | ARE after the oracle's constant correction |\n|---|---|---|---|---|---|---|");
    for seed in SEEDS {
        let s = class.packets(SCALE, seed);
        for bytes in [false, true] {
            let w = |p: &Packet| if bytes { p.bytes } else { 1 };
            let exact = exact_counts(s.iter().map(|p| (p.key, w(p))));
            let top = loxo_tests::topk::true_top(&exact, K);
            let idx: HashMap<u64, usize> =
                top.iter().enumerate().map(|(i, &(k, _))| (k, i)).collect();
            let hashes: Vec<_> = top.iter().map(|&(k, _)| SEED.hash_u64(k)).collect();
            let mut t = Tt::new(1);
            let (mut so_far, mut held, mut last) = (vec![0u64; K], vec![false; K], vec![0u64; K]);
            let (mut deficit, mut share) = (vec![None::<i64>; K], vec![0f64; K]);
            let mut evicted = vec![0u64; K];
            for p in &s {
                let h = SEED.hash_u64(p.key);
                let before = t.estimate(&p.key, h);
                t.update(&p.key, h, w(p));
                let after = t.estimate(&p.key, h);
                if let Some(&i) = idx.get(&p.key) {
                    so_far[i] += w(p);
                    if let (None, Some(a), None) = (before, after, deficit[i]) {
                        deficit[i] = Some(so_far[i] as i64 - a as i64);
                        share[i] = so_far[i] as f64 / top[i].1 as f64;
                    }
                    held[i] = after.is_some();
                    last[i] = after.unwrap_or(0);
                }
                // A promotion may have evicted a top key from the heavy tier.
                if before.is_none() && after.is_some() {
                    for i in 0..K {
                        if held[i]
                            && top[i].0 != p.key
                            && t.estimate(&top[i].0, hashes[i]).is_none()
                        {
                            held[i] = false;
                            evicted[i] += last[i];
                        }
                    }
                }
            }
            let (mut are, mut at_promotion, mut at_eviction, mut rel) = (0.0, 0.0, 0.0, Vec::new());
            let mut shares = Vec::new();
            for i in 0..K {
                let Some(e) = t.estimate(&top[i].0, hashes[i]) else {
                    continue;
                };
                let f = top[i].1 as f64;
                let r = (f - e as f64) / f;
                are += r.abs();
                rel.push(r);
                at_promotion += deficit[i].unwrap_or(0) as f64 / f;
                at_eviction += evicted[i] as f64 / f;
                shares.push(share[i]);
            }
            let n = rel.len() as f64;
            rel.sort_by(f64::total_cmp);
            shares.sort_by(f64::total_cmp);
            let median = rel[rel.len() / 2];
            let corrected = rel.iter().map(|r| (r - median).abs()).sum::<f64>() / n;
            println!(
                "| {seed} | {} | {:.4} | {:.4} | {:.4} | {:.3} / {:.3} / {:.3} | {corrected:.4} |",
                if bytes { "bytes" } else { "packets" },
                are / n,
                at_promotion / n,
                at_eviction / n,
                shares.iter().sum::<f64>() / n,
                shares[shares.len() / 2],
                shares[shares.len() * 9 / 10],
            );
        }
    }
}
