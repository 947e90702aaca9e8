//! Done-when check of issue 6: on `loxo gen` traces of 10^6 packets (Zipf 1.0 and 0.8,
//! with and without a 50 % flood, 1 % malformed), the default monitor (≤ 64 KiB) with
//! θ = 1 % of bytes, next to exact figures from the generator's own truth (the key
//! each frame was built for and its length — not `parse_frame`):
//! * recall 1.0: every flow at θ is listed, `elephants_complete`, none left out
//!   (guaranteed for θ > 1/256);
//! * precision 1.0 and ARE 0 — the figures the READMEs print for these traces
//!   (`crates/loxo-flow/README.md`: "P = R = F1 = 1", "ARE 0"). They are not
//!   guarantees but deterministic measurements (fixed seeds): every listed flow is a
//!   true elephant, and every elephant's upper bound is its exact byte count (it was
//!   tracked from its first frame and never evicted, so its Space-Saving error is 0);
//!   a change that makes them false must change the READMEs. Guaranteed and checked
//!   as well: no listed flow below θ/2, "certain" ones at θ, bounds that contain the
//!   truth;
//! * distinct flows within 4σ of the exact count (σ derived at that n);
//! * totals and per-reason malformed counts equal to the truth's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::exact::Exact;
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_flow::{Config, FlowMonitor, Report, Theta, FLOWS_P};
use loxo_tests::hll_theory::check_estimate;

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
    let mut m = Box::new(FlowMonitor::new(Config {
        theta,
        ..Config::default()
    }));
    assert!(m.memory_bytes() <= 64 * 1024, "{}", m.memory_bytes());
    let mut exact = Exact::default();
    generate_with_truth(&cfg, |f, t| {
        m.feed(f);
        exact.feed_truth(t);
        Ok::<_, ()>(())
    })
    .unwrap();
    let mut r = Report::default();
    m.end_epoch(&mut r);
    let name = format!("zipf {alpha} flood {flood}");

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
    assert!(r.elephants_complete && r.elephants_left_out == 0, "{name}");
    for (k, c) in &truth {
        assert!(
            r.elephants.iter().any(|e| e.key == *k),
            "{name}: elephant {k} ({} of {} bytes) not listed",
            c.bytes,
            exact.total.bytes
        );
    }
    // Precision: listed flows are true elephants or near ones.
    let total = exact.total.bytes;
    let mut hits = 0;
    let mut min_share = 1.0f64;
    for e in &r.elephants {
        let c = exact.flows.get(&e.key).copied().unwrap_or_default();
        assert!(e.bytes.contains(c.bytes), "{name}: {e:?} vs {c:?}");
        let at_theta = theta.reached(c.bytes, total);
        assert!(!e.certain || at_theta, "{name}: certain {e:?} vs {c:?}");
        hits += usize::from(at_theta);
        min_share = min_share.min(c.bytes as f64 / total as f64);
    }
    let precision = hits as f64 / r.elephants.len() as f64;
    // ARE of the upper bounds over the true elephants.
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
    assert!(
        min_share >= 0.005,
        "{name}: a listed flow has share {min_share}"
    );
    assert_eq!(hits, r.elephants.len(), "{name}: precision {precision}");
    assert_eq!(are, 0.0, "{name}: ARE");

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
