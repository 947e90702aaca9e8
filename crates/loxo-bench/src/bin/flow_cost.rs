//! Instructions per packet of `FlowMonitor::feed` on the flow benchmark's frames:
//! `valgrind --tool=callgrind target/release/flow_cost` (each pass is one epoch of
//! 2^15 frames; the total over 4 passes, divided by 4·2^15, is the figure).
#![allow(missing_docs)]

use std::hint::black_box;

use loxo_bench::flow_frames::{frames, FRAMES};
use loxo_flow::{FlowMonitor, Report};

fn main() {
    let flood: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.0);
    let fs = frames(flood);
    let mut m = Box::new(FlowMonitor::default());
    let mut r = Box::new(Report::default());
    for _ in 0..4 {
        for f in &fs {
            m.feed(black_box(f));
        }
        m.end_epoch(&mut r);
    }
    println!(
        "{} frames per pass, flood {flood}: last epoch {} elephants",
        FRAMES,
        r.elephants.len()
    );
}
