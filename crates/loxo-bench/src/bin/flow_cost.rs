//! Instructions per packet of `FlowMonitor::feed` on the flow benchmark's frames:
//! `valgrind --tool=callgrind target/release/flow_cost FLOOD PASSES` for PASSES = 1
//! and 5 (each pass is one epoch of 2^15 frames); the difference of the two totals
//! divided by 4·2^15 is the figure, without the trace generation. With `BURST` set in
//! the environment each pass is one `feed_burst` call (for `perf record`).
#![allow(missing_docs)]

use std::hint::black_box;

use loxo_bench::flow_frames::{frames, FRAMES};
use loxo_flow::{FlowMonitor, Report};

/// The fixed seed of this example (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn main() {
    let flood: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.0);
    let passes: u32 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let fs = frames(flood);
    let mut m = Box::new(FlowMonitor::new(loxo_flow::Config::with_seed(TEST_SEED)));
    let mut r = Box::new(Report::default());
    for _ in 0..passes {
        if std::env::var_os("BURST").is_some() {
            m.feed_burst(black_box(&fs[..]));
        } else {
            for f in &fs {
                m.feed(black_box(f));
            }
        }
        m.end_epoch(&mut r);
    }
    println!(
        "{} frames per pass, flood {flood}: last epoch {} elephants",
        FRAMES,
        r.elephants.len()
    );
}
