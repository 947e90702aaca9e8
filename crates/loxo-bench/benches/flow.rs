//! `FlowMonitor` throughput: parse + one hash + top-k by bytes and packets + two HLL
//! inserts per frame, in packets per second, over Zipf(1.0) frames (10⁵ flows, IPv4
//! TCP/UDP and IPv6 UDP, 64–1500 B) with and without a 50 % flood; `parse_frame` alone
//! for comparison; `monitor_burst` feeds the same frames through `feed_burst`, which
//! starts each frame's first read two frames ahead.
//!
//! Run: `cargo bench -p loxo-bench --bench flow -- --warm-up-time 1 --measurement-time 3`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use loxo_flow::{parse_frame, FlowMonitor, Report};

use loxo_bench::flow_frames::{frames, FRAMES};

/// The fixed seed of this example (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("flow");
    g.throughput(Throughput::Elements(FRAMES as u64));
    for (name, flood) in [("zipf1", 0.0), ("zipf1_flood50", 0.5)] {
        let fs = frames(flood);
        g.bench_function(format!("parse/{name}"), |b| {
            b.iter(|| {
                for f in &fs {
                    black_box(parse_frame(black_box(f)).ok());
                }
            });
        });
        let mut m = Box::new(FlowMonitor::new(loxo_flow::Config::with_seed(TEST_SEED)));
        let mut r = Box::new(Report::default());
        g.bench_function(format!("monitor/{name}"), |b| {
            b.iter(|| {
                for f in &fs {
                    m.feed(black_box(f));
                }
                m.end_epoch(&mut r);
                black_box(r.elephants.len());
            });
        });
        g.bench_function(format!("monitor_burst/{name}"), |b| {
            b.iter(|| {
                black_box(m.feed_burst(black_box(&fs[..])));
                m.end_epoch(&mut r);
                black_box(r.elephants.len());
            });
        });
    }
    g.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
