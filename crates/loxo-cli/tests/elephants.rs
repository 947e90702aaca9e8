//! Done-when check of issue 6: on `loxo gen` traces of 10^6 packets (Zipf 1.0 and 0.8,
//! with and without a 50 % flood, 1 % malformed), the default monitor (≤ 64 KiB) with
//! θ = 1 % of bytes, next to exact figures from the generator's own truth (the key
//! each frame was built for and its length — not `parse_frame`). Every trace is fed
//! to the monitor under four hash seeds (its default and three others), and for each
//! the properties the design **guarantees** are asserted:
//! * recall 1.0: every flow at θ is listed, `elephants_complete`, none left out
//!   (guaranteed for θ > 1/N = 1/256);
//! * every listed flow's true share is at least θ − 1/N: it is listed because its
//!   Space-Saving upper bound reaches θ·T, and that bound exceeds the truth by at most
//!   the smallest counter, ≤ T/N (N = 256 candidates); so "precision" is 1 for the
//!   set of flows at θ − 1/N, not for the flows at θ;
//! * each elephant's upper bound exceeds its truth by at most T/N, a relative error
//!   ≤ 1/(N·θ) ≈ 0.39 (so the ARE of the upper bounds is ≤ 0.39);
//! * bounds that contain the truth, "certain" ones at θ;
//! * distinct flows within 4σ of the exact count (σ derived at that n);
//! * totals and per-reason malformed counts equal to the truth's.
//!
//! Precision 1 (no listed flow below θ) and ARE 0 (every elephant tracked from its
//! first frame and never evicted) are *measurements*, not guarantees: the test prints
//! them for every seed, and asserts them for the default seed only, where the README
//! prints them (a change that makes them false there must change the README).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::exact::Exact;
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_core::Seed;
use loxo_flow::{Config, FlowMonitor, Report, Theta, DEFAULT_CANDIDATES, FLOWS_P};
use loxo_tests::hll_theory::check_estimate;

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

/// The monitor's hash seeds: its default first (the README's figures), then three
/// others chosen by nobody.
const SEEDS: [Option<(u64, u64)>; 4] = [
    None,
    Some((1, 2)),
    Some((0x5eed_0003, 0x7e57_0003)),
    Some((u64::MAX, 0x0123_4567_89ab_cdef)),
];

fn check(alpha: f64, flood: f64) {
    let cfg = TraceConfig {
        packets: 1_000_000,
        flows: 100_000,
        popularity: Popularity::Zipf(alpha),
        flood,
        malformed: 0.01,
        seed: 6,
        ..TraceConfig::default()
    };
    let theta = Theta::new(1, 100).unwrap();
    let mut monitors: Vec<Box<FlowMonitor>> = SEEDS
        .iter()
        .map(|s| {
            let seed = s.map_or(Config::with_seed(TEST_SEED).seed, |(a, b)| Seed::new(a, b));
            Box::new(FlowMonitor::new(Config {
                theta,
                seed,
                ..Config::with_seed(TEST_SEED)
            }))
        })
        .collect();
    assert!(
        monitors[0].memory_bytes() <= 64 * 1024,
        "{}",
        monitors[0].memory_bytes()
    );
    let mut exact = Exact::default();
    generate_with_truth(&cfg, |f, t| {
        for m in &mut monitors {
            m.feed(f);
        }
        exact.feed_truth(t);
        Ok::<_, ()>(())
    })
    .unwrap();
    for (i, m) in monitors.iter_mut().enumerate() {
        let mut r = Report::default();
        m.end_epoch(&mut r);
        let name = format!("zipf {alpha} flood {flood} seed {i}");
        check_report(&name, &r, &exact, theta, i == 0);
    }
}

fn check_report(name: &str, r: &Report, exact: &Exact, theta: Theta, pinned: bool) {
    // Totals.
    assert_eq!(r.frames, 1_000_000, "{name}");
    assert_eq!(
        (r.packets, r.bytes),
        (exact.total.packets, exact.total.bytes)
    );
    assert_eq!((r.not_ip, r.errors), (exact.not_ip, exact.errors), "{name}");

    // Recall: every exact elephant listed.
    let truth = exact.heavy(theta, true);
    assert!(
        !truth.is_empty(),
        "{name}: the exact set must be non-trivial"
    );
    assert!(r.elephants_complete, "{name}");
    for (k, c) in &truth {
        assert!(
            r.elephants.iter().any(|e| e.key == *k),
            "{name}: elephant {k} ({} of {} bytes) not listed",
            c.bytes,
            exact.total.bytes
        );
    }
    // Listed flows: bounds contain the truth, "certain" only at θ, and the share is at
    // least θ − 1/N (Space-Saving's error is at most T/N).
    let total = exact.total.bytes;
    let slack = total.div_ceil(DEFAULT_CANDIDATES as u64);
    let mut hits = 0;
    let mut min_share = 1.0f64;
    for e in &r.elephants {
        let c = exact.flows.get(&e.key).copied().unwrap_or_default();
        assert!(e.bytes.contains(c.bytes), "{name}: {e:?} vs {c:?}");
        let at_theta = theta.reached(c.bytes, total);
        assert!(!e.certain || at_theta, "{name}: certain {e:?} vs {c:?}");
        assert!(
            e.bytes.upper - c.bytes <= slack,
            "{name}: upper bound {} over the truth {} by more than T/N = {slack}",
            e.bytes.upper,
            c.bytes
        );
        hits += usize::from(at_theta);
        min_share = min_share.min(c.bytes as f64 / total as f64);
    }
    let floor = theta.to_f64() - 1.0 / DEFAULT_CANDIDATES as f64;
    assert!(
        min_share >= floor,
        "{name}: a listed flow has share {min_share} < θ − 1/N = {floor}"
    );
    let precision = hits as f64 / r.elephants.len() as f64;
    // ARE of the upper bounds over the true elephants (each ≤ 1/(N·θ) by the bound
    // above).
    let are = truth
        .iter()
        .map(|(k, c)| {
            let e = r.elephants.iter().find(|e| e.key == *k).unwrap();
            (e.bytes.upper - c.bytes) as f64 / c.bytes as f64
        })
        .sum::<f64>()
        / truth.len() as f64;
    println!(
        "{name}: exact elephants {}, listed {} ({} certain), precision {precision:.3}, ARE {are:.5}, min share {min_share:.4}, distinct flows {} of {}",
        truth.len(),
        r.elephants.len(),
        r.elephants.iter().filter(|e| e.certain).count(),
        r.distinct_flows,
        exact.flows.len()
    );
    if pinned {
        // The README's measured figures, on the default seed.
        assert_eq!(hits, r.elephants.len(), "{name}: precision {precision}");
        assert_eq!(are, 0.0, "{name}: ARE");
    }

    // Distinct flows: Hll<14> over every IP frame's key (n ≥ 10⁵ ≫ m = 16 384 here,
    // σ(n) ≈ 0.78 % → 1.04/√m), 4σ band around the bias at that n.
    check_estimate(
        r.distinct_flows as f64,
        exact.flows.len() as u64,
        FLOWS_P,
        4.0,
    )
    .unwrap_or_else(|msg| panic!("{name}: distinct flows: {msg}"));
}

#[test]
fn zipf_1_0() {
    check(1.0, 0.0);
}

#[test]
fn zipf_0_8() {
    check(0.8, 0.0);
}

#[test]
fn zipf_1_0_flood() {
    check(1.0, 0.5);
}

#[test]
fn zipf_0_8_flood() {
    check(0.8, 0.5);
}
