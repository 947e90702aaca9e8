//! Feeds 100 000 synthetic IPv4 UDP frames (1 000 flows) to the default `FlowMonitor`;
//! used with `valgrind --tool=callgrind --toggle-collect='*FlowMonitor*feed*'` to count
//! instructions per packet.
#![allow(clippy::unwrap_used)]

use loxo_flow::{FlowMonitor, Report};

/// The fixed seed of this example (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn main() {
    const N: u32 = 100_000;
    let mut m = FlowMonitor::new(loxo_flow::Config::with_seed(TEST_SEED));
    let mut frame = [0u8; 128];
    frame[12..16].copy_from_slice(&[0x08, 0x00, 0x45, 0]);
    frame[16..18].copy_from_slice(&114u16.to_be_bytes());
    frame[22..24].copy_from_slice(&[64, 17]);
    for i in 0..N {
        let flow = (i.wrapping_mul(2_654_435_761) >> 8) % 1000;
        frame[26..30].copy_from_slice(&flow.to_be_bytes());
        frame[34..36].copy_from_slice(&(flow as u16).to_be_bytes());
        m.feed(&frame);
    }
    let mut r = Report::default();
    m.end_epoch(&mut r);
    println!("packets {} elephants {}", r.packets, r.elephants.len());
}
