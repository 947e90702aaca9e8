//! `FlowMonitor` throughput: parse + one hash + top-k by bytes and packets + two HLL
//! inserts per frame, in packets per second, over Zipf(1.0) frames (10⁵ flows, IPv4
//! TCP/UDP and IPv6 UDP, 64–1500 B) with and without a 50 % flood; `parse_frame` alone
//! for comparison.
//!
//! Run: `cargo bench -p loxo-bench --bench flow -- --warm-up-time 1 --measurement-time 3`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use loxo_flow::{parse_frame, FlowMonitor, Report};
use loxo_tests::zipf::Zipf;

/// Frames kept in memory (the stream cycles over them): 2^15 frames ≈ 25 MB.
const FRAMES: usize = 1 << 15;

fn frame(key: u64, bytes: u64) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    let v6 = key.is_multiple_of(5);
    let proto = if key.is_multiple_of(3) { 17u8 } else { 6 };
    let l4 = if proto == 6 { 20 } else { 8 };
    let k = key.to_be_bytes();
    if v6 {
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
        let size = (bytes as usize).max(14 + 40 + l4);
        f.extend_from_slice(&((size - 54) as u16).to_be_bytes());
        f.extend_from_slice(&[proto, 64]);
        f.extend_from_slice(&k);
        f.extend_from_slice(&k);
        f.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&k[..4]);
        f.resize(size, 0);
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        let size = (bytes as usize).max(14 + 20 + l4);
        f.extend_from_slice(&((size - 14) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
        f.extend_from_slice(&k[..4]);
        f.extend_from_slice(&[10, 0, 0, 1]);
        f.extend_from_slice(&k[4..8]);
        f.resize(size, 0);
    }
    f
}

fn frames(flood: f64) -> Vec<Vec<u8>> {
    let z = Zipf::new(100_000, 1.0);
    z.stream_with_flood(FRAMES, flood, 6)
        .iter()
        .map(|p| frame(p.key, p.bytes))
        .collect()
}

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
        let mut m = Box::new(FlowMonitor::default());
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
    }
    g.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
