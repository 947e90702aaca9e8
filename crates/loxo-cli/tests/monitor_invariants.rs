//! `FlowMonitor` invariants on generated traces, next to the exact counter: totals
//! equal the sums over the frames fed, every reported elephant's estimated share is at
//! least θ minus its error bound, epochs close on the configured packet count or on
//! the caller's tick, and the Reset / Halve policies do what they say.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::exact::Exact;
use loxo_cli::trace::{generate, Popularity, TraceConfig};
use loxo_flow::{Config, EpochPolicy, FlowMonitor, Report, ShareOf};
use proptest::prelude::*;

fn frames(cfg: &TraceConfig) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    generate(cfg, |f| {
        out.push(f.to_vec());
        Ok::<(), ()>(())
    })
    .unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn totals_and_elephant_shares(
        seed in any::<u64>(),
        packets in 1u64..6_000,
        flows in 1u32..3_000,
        alpha in 0.6f64..1.4,
        flood in 0.0f64..0.6,
        malformed in 0.0f64..0.1,
        theta in 0.005f32..0.2,
        by_packets in any::<bool>(),
    ) {
        let cfg = TraceConfig {
            packets, flows, popularity: Popularity::Zipf(alpha), flood, malformed, seed,
        };
        let share_of = if by_packets { ShareOf::Packets } else { ShareOf::Bytes };
        let mut m = FlowMonitor::new(Config { theta, share_of, ..Config::default() });
        let mut exact = Exact::default();
        for f in frames(&cfg) {
            prop_assert!(!m.feed(&f), "epoch_packets = 0: only the caller closes epochs");
            exact.feed(&f);
        }
        let mut r = Report::default();
        m.end_epoch(&mut r);
        prop_assert_eq!(r.frames, packets);
        prop_assert_eq!(r.packets, exact.total.packets);
        prop_assert_eq!(r.bytes, exact.total.bytes);
        prop_assert_eq!(r.not_ip, exact.not_ip);
        prop_assert_eq!(r.errors, exact.errors);
        prop_assert_eq!(r.frames, r.packets + r.not_ip + r.errors.iter().sum::<u64>());

        let total = if by_packets { r.packets } else { r.bytes } as f64;
        for e in &r.elephants {
            let (est, err) = if by_packets { (e.packets, e.packets_error) } else { (e.bytes, e.bytes_error) };
            // Issue's invariant: estimated share ≥ θ − error bound (both as shares).
            prop_assert!(
                est as f64 / total >= f64::from(theta) - err as f64 / total - 1e-9,
                "{e:?} below θ = {theta} with total {total}"
            );
        }
        // The other measure comes from a Count-Min sketch: never an under-count.
        for e in &r.elephants {
            if let Some(c) = exact.flows.get(&e.key) {
                let (other, truth) = if by_packets { (e.bytes, c.bytes) } else { (e.packets, c.packets) };
                prop_assert!(other >= truth, "{e:?} under-counts the other measure: {truth}");
            }
        }
        // Sorted by estimated bytes, descending.
        prop_assert!(r.elephants.windows(2).all(|w| w[0].bytes >= w[1].bytes));
        // Every true elephant is reported (recall 1.0 while the heap has room).
        let truth = exact.heavy(f64::from(theta), !by_packets);
        if truth.len() <= loxo_flow::MAX_ELEPHANTS {
            for (k, _) in &truth {
                prop_assert!(r.elephants.iter().any(|e| e.key == *k), "missed {k:?}");
            }
        }
    }
}

#[test]
fn packet_count_epochs_close_and_restart() {
    let cfg = TraceConfig {
        packets: 10_000,
        malformed: 0.02,
        seed: 42,
        ..TraceConfig::default()
    };
    let mut m = FlowMonitor::new(Config {
        epoch_packets: 3_000,
        ..Config::default()
    });
    let mut reports = Vec::new();
    let mut exact = Exact::default();
    for f in frames(&cfg) {
        exact.feed(&f);
        if m.feed(&f) {
            let mut r = Report::default();
            m.end_epoch(&mut r);
            let mut e = Exact::default();
            std::mem::swap(&mut e, &mut exact);
            reports.push((r, e));
        }
    }
    assert_eq!(
        reports.len(),
        3,
        "10 000 frames = 3 full epochs of 3 000 + a partial one"
    );
    for (i, (r, e)) in reports.iter().enumerate() {
        assert_eq!(r.epoch, i as u32);
        assert_eq!(r.frames, 3_000);
        assert_eq!((r.packets, r.bytes), (e.total.packets, e.total.bytes));
        assert_eq!(r.errors, e.errors);
        // Distinct flows of the epoch within 4 standard errors of the exact count.
        let n = e.flows.len() as f64;
        let rel = (f64::from(r.distinct_flows) - n).abs() / n;
        assert!(
            rel < 4.0 * 1.04 / 128.0,
            "epoch {i}: {} vs {n}",
            r.distinct_flows
        );
        // Distinct sources (counted on each flow's first frame) within 4 standard
        // errors of P = 10.
        let sources: std::collections::HashSet<&[u8]> =
            e.flows.keys().map(loxo_flow::FlowKey::src_bytes).collect();
        let n = sources.len() as f64;
        let rel = (f64::from(r.distinct_sources) - n).abs() / n;
        assert!(
            rel < 4.0 * 1.04 / 32.0,
            "epoch {i}: sources {} vs {n}",
            r.distinct_sources
        );
    }
    // The partial last epoch, closed by the caller (a timer tick).
    let mut r = Report::default();
    m.end_epoch(&mut r);
    assert_eq!((r.epoch, r.frames), (3, 1_000));
    assert_eq!(r.packets, exact.total.packets);
}

/// Epoch 0: one heavy flow and background; epoch 1: background only (other flows).
/// Reset forgets the heavy flow; Halve carries half its counts into epoch 1.
#[test]
fn reset_forgets_and_halve_ages() {
    let heavy = TraceConfig {
        packets: 20_000,
        flows: 50,
        popularity: Popularity::Zipf(1.2),
        seed: 7,
        ..TraceConfig::default()
    };
    let light = TraceConfig {
        packets: 2_000,
        flows: 2_000,
        popularity: Popularity::Zipf(0.5),
        seed: 8,
        ..TraceConfig::default()
    };
    let (epoch0, epoch1) = (frames(&heavy), frames(&light));
    let mut exact0 = Exact::default();
    for f in &epoch0 {
        exact0.feed(f);
    }
    let (top_key, top) = exact0.heavy(0.01, true)[0];

    for policy in [EpochPolicy::Reset, EpochPolicy::Halve] {
        let mut m = FlowMonitor::new(Config {
            policy,
            ..Config::default()
        });
        let mut r = Report::default();
        for f in &epoch0 {
            m.feed(f);
        }
        m.end_epoch(&mut r);
        let e0 = *r
            .elephants
            .iter()
            .find(|e| e.key == top_key)
            .expect("top flow reported");
        assert!(e0.bytes >= top.bytes && e0.bytes - e0.bytes_error <= top.bytes);

        for f in &epoch1 {
            m.feed(f);
        }
        m.end_epoch(&mut r);
        let carried = r.elephants.iter().find(|e| e.key == top_key);
        match policy {
            EpochPolicy::Reset => assert!(carried.is_none(), "{carried:?}"),
            EpochPolicy::Halve => {
                let c = carried.expect("halved heavy flow still an elephant");
                // Halving floors each counter: estimate/2 rounded down.
                assert_eq!(c.bytes, e0.bytes / 2, "{c:?} vs {e0:?}");
            }
        }
    }
}

/// New flows per epoch: flows not seen in this or the previous epoch. The Bloom
/// filters never over-count (no false negatives); they under-count by their false
/// positives, about `new_flows_fpr` of the new flows.
#[test]
fn new_flows_per_epoch() {
    use std::collections::HashSet;
    // Three epochs of 20 000 frames over a shifting population of 3 000 flows.
    let epochs: Vec<Vec<Vec<u8>>> = (0..3)
        .map(|i| {
            frames(&TraceConfig {
                packets: 20_000,
                flows: 3_000,
                popularity: Popularity::Zipf(0.7),
                // Epoch 2 repeats epoch 1's population (seed): few new flows.
                seed: [11, 12, 12][i],
                flood: 0.05,
                ..TraceConfig::default()
            })
        })
        .collect();
    let mut m = FlowMonitor::new(Config::default());
    let mut r = Report::default();
    let mut previous: HashSet<loxo_flow::FlowKey> = HashSet::new();
    for (i, frames) in epochs.iter().enumerate() {
        let mut exact = Exact::default();
        for f in frames {
            m.feed(f);
            exact.feed(f);
        }
        m.end_epoch(&mut r);
        let current: HashSet<_> = exact.flows.keys().copied().collect();
        let truly_new = current.difference(&previous).count() as u64;
        println!(
            "epoch {i}: {} flows, {truly_new} new; monitor says {} (filter FPR {:.4})",
            current.len(),
            r.new_flows,
            r.new_flows_fpr
        );
        assert!(
            r.new_flows <= truly_new,
            "over-counted: {} > {truly_new}",
            r.new_flows
        );
        // Under-count bounded by the filters' rate (+4 binomial standard deviations).
        let p = f64::from(r.new_flows_fpr);
        let slack = 4.0 * (truly_new as f64 * p).sqrt() + 1.0;
        assert!(
            r.new_flows as f64 >= truly_new as f64 * (1.0 - p) - slack,
            "{} vs {truly_new} at FPR {p}",
            r.new_flows
        );
        assert!(p < 0.02, "filters overfilled: {p}");
        previous = current;
    }
}
