//! Top-k accuracy of the three `TopK` summaries at 8 KiB of state each, on seeded
//! Zipf and scan/flood streams (`cargo test -p loxo-tests --test topk_accuracy --
//! --nocapture` prints the table).
//!
//! Floors asserted (issue 5): HeavyKeeper top-100 F1 ≥ 0.95 on Zipf 1.0 with 10⁷
//! packets over 10⁶ flows and ≥ 0.90 on Zipf 0.8, packet-weighted. The aims
//! (F1 ≥ 0.99 / ≥ 0.95, ARE ≤ 0.005) are printed, not asserted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::mem::size_of;

use loxo_cms::{CmsTopK, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use loxo_tests::topk::{exact_counts, feed, score, Score};
use loxo_tests::zipf::{Packet, Zipf};

/// Top-k size evaluated.
const K: usize = 100;
/// Memory budget per algorithm, all arrays, keys, heap and index included.
const BUDGET: usize = 8 * 1024;

// The three configurations, each the largest of its shape within 8 KiB with
// u64 keys. Heap slot = 32 B + 4 B of index per monitored key.
// HeavyKeeper with decay base b = 1.6 (`B = 160`): in 8 KiB only ~570 buckets remain
// beside a 100-entry heap, and with the default b = 1.08 the tail decays heavy buckets
// too easily (top-100 F1 on Zipf 0.8, 10^7 packets: 0.77 with 570×1 at b = 1.08;
// 0.93 at b = 1.35; 0.94 with 285×2 at b = 1.6, measured; 272×2 since the heap's indirect layout).
type Hk = HeavyKeeper<272, 2, 100, u64, 160>;
type Cu = CmsTopK<268, 4, 100, u64>;
type Ss = SpaceSaving<u64, 215>;

const SEED: Seed = Seed::new(0x70b_c0de, 0x5eed_cafe);

#[derive(Clone, Copy, Debug)]
struct Row {
    algo: &'static str,
    bytes: usize,
    weight: &'static str,
    s: Score,
}

fn run<T: TopK<u64>>(
    mut t: T,
    stream: &[Packet],
    exact: &HashMap<u64, u64>,
    by_bytes: bool,
) -> Score {
    feed(
        &mut t,
        SEED,
        stream
            .iter()
            .map(|p| (p.key, if by_bytes { p.bytes } else { 1 })),
    );
    score(&t, exact, K)
}

/// Runs the three algorithms, packet- and byte-weighted, two threads at a time.
fn evaluate(stream: &[Packet]) -> Vec<Row> {
    let exact_p = exact_counts(stream.iter().map(|p| (p.key, 1)));
    let exact_b = exact_counts(stream.iter().map(|p| (p.key, p.bytes)));
    let mut rows = Vec::new();
    for (weight, exact, by_bytes) in [("packets", &exact_p, false), ("bytes", &exact_b, true)] {
        std::thread::scope(|s| {
            let hk = s.spawn(|| run(Hk::new(1), stream, exact, by_bytes));
            let ss = s.spawn(|| run(Ss::new(), stream, exact, by_bytes));
            let cu = run(Cu::new(SEED), stream, exact, by_bytes);
            rows.push(Row {
                algo: "CMS-CU + heap",
                bytes: size_of::<Cu>(),
                weight,
                s: cu,
            });
            rows.push(Row {
                algo: "Space-Saving",
                bytes: size_of::<Ss>(),
                weight,
                s: ss.join().unwrap(),
            });
            rows.push(Row {
                algo: "HeavyKeeper",
                bytes: size_of::<Hk>(),
                weight,
                s: hk.join().unwrap(),
            });
        });
    }
    rows
}

fn table(name: &str, rows: &[Row]) -> String {
    let mut t = String::new();
    for r in rows {
        writeln!(
            t,
            "| {name} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.4} |",
            r.weight, r.algo, r.bytes, r.s.precision, r.s.recall, r.s.f1, r.s.are
        )
        .unwrap();
    }
    t
}

#[test]
fn budgets_are_8_kib() {
    for (name, b) in [
        ("HeavyKeeper", size_of::<Hk>()),
        ("CMS-CU + heap", size_of::<Cu>()),
        ("Space-Saving", size_of::<Ss>()),
    ] {
        println!("{name}: {b} bytes");
        assert!(b <= BUDGET, "{name}: {b} bytes");
        // Not wasting the budget either: within one heap slot or one bucket row of it.
        assert!(b + 64 >= BUDGET, "{name}: {b} bytes");
    }
}

fn hk_f1(rows: &[Row], weight: &str) -> Score {
    rows.iter()
        .find(|r| r.algo == "HeavyKeeper" && r.weight == weight)
        .unwrap()
        .s
}

/// The full table. 10⁷-packet streams dominate the runtime (≈ 1 min on 2 cores).
#[test]
fn topk_accuracy_table() {
    let mut out = String::from(
        "| stream | weight | algorithm | state (B) | precision | recall | F1 | ARE |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut floors = Vec::new();
    for (packets, flows) in [(1_000_000usize, 100_000usize), (10_000_000, 1_000_000)] {
        for alpha in [0.8, 1.0, 1.2] {
            let z = Zipf::new(flows, alpha);
            let stream = z.stream(packets, 0xa11ce ^ (alpha * 10.0) as u64);
            let rows = evaluate(&stream);
            let name = format!("Zipf {alpha}, {packets} pkts / {flows} flows");
            out.push_str(&table(&name, &rows));
            if packets == 10_000_000 {
                floors.push((alpha, hk_f1(&rows, "packets"), hk_f1(&rows, "bytes")));
            }
        }
        let z = Zipf::new(flows, 1.0);
        let stream = z.stream_with_flood(packets, 0.5, 0xf100d);
        let rows = evaluate(&stream);
        let name = format!("Zipf 1.0 + 50 % flood, {packets} pkts / {flows} flows");
        out.push_str(&table(&name, &rows));
    }
    println!("{out}");
    for (alpha, p, b) in &floors {
        println!(
            "HeavyKeeper 10^7 Zipf {alpha}: F1 packets {:.3} (ARE {:.4}), bytes {:.3} (ARE {:.4}); aim F1 ≥ {} and ARE ≤ 0.005",
            p.f1,
            p.are,
            b.f1,
            b.are,
            if *alpha >= 1.0 { 0.99 } else { 0.95 }
        );
    }
    for (alpha, p, _) in &floors {
        if *alpha == 1.0 {
            assert!(p.f1 >= 0.95, "HeavyKeeper F1 on Zipf 1.0: {p:?}");
        }
    }
}

/// The Zipf 0.8 floor (F1 ≥ 0.90, the threshold) on its own.
#[test]
fn heavy_keeper_floor_zipf_0_8() {
    let z = Zipf::new(1_000_000, 0.8);
    let stream = z.stream(10_000_000, 0xa11ce ^ 8);
    let exact = exact_counts(stream.iter().map(|p| (p.key, 1)));
    let s = run(Hk::new(1), &stream, &exact, false);
    assert!(s.f1 >= 0.90, "HeavyKeeper F1 on Zipf 0.8: {s:?}");
}
