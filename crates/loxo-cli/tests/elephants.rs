//! Done-when check of issue 6: on `loxo gen` traces of 10^6 packets (Zipf 1.0 and 0.8, with
//! and without a 50 % flood), the default monitor (≤ 64 KiB) with θ = 1 % finds every
//! elephant (recall 1.0) and reports no flow whose true share is below θ/2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::eval::Evaluator;
use loxo_cli::trace::{generate, Popularity, TraceConfig};
use loxo_flow::{Config, Theta};

fn check(alpha: f64, flood: f64) {
    let cfg = TraceConfig {
        packets: 1_000_000,
        flows: 100_000,
        popularity: Popularity::Zipf(alpha),
        flood,
        malformed: 0.0,
        seed: 6,
    };
    let config = Config {
        theta: Theta::new(1, 100).unwrap(),
        ..Config::default()
    };
    let mut ev = Evaluator::new(config);
    assert!(ev.memory_bytes() <= 64 * 1024);
    generate(&cfg, |f| {
        ev.feed(f);
        Ok::<_, ()>(())
    })
    .unwrap();
    let results = ev.finish();
    assert_eq!(results.len(), 1);
    let r = &results[0];
    println!(
        "zipf {alpha} flood {flood}: exact elephants {}, reported {}, P {:.3} R {:.3} F1 {:.3} ARE {:.4} min share {:.4}",
        r.exact_elephants.len(),
        r.rows.len(),
        r.precision,
        r.recall,
        r.f1,
        r.are,
        r.min_reported_share
    );
    // The exact set must be non-trivial for the check to mean anything.
    assert!(!r.exact_elephants.is_empty());
    assert!((r.recall - 1.0).abs() < f64::EPSILON, "recall {}", r.recall);
    assert!(
        r.min_reported_share >= 0.005,
        "a reported elephant has true share {}",
        r.min_reported_share
    );
    // Totals equal the sum of frames fed.
    assert_eq!(r.report.frames, 1_000_000);
    assert_eq!(
        r.report.packets + r.report.not_ip + r.report.errors.iter().sum::<u64>(),
        1_000_000
    );
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
