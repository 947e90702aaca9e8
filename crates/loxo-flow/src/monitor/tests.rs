//! Tests of the monitor: its sizes, epochs, bounds and reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]
extern crate std;
use super::*;

#[test]
fn new_flow_filter_design_load() {
    let p = NewFlowFilter::theoretical_fpr(u64::from(NEW_FLOW_CAPACITY));
    std::println!("new-flow filter at its design load: FPR {p:.5}");
    assert!((0.009..0.012).contains(&p), "{p}");
}

#[test]
fn default_fits_64_kib() {
    let m = FlowMonitor::default();
    assert!(m.memory_bytes() <= 64 * 1024, "{}", m.memory_bytes());
    assert_eq!(m.memory_bytes(), 64_960, "pin the documented size");
    assert_eq!(
        core::mem::size_of::<Report>(),
        7_120,
        "pin the documented report size"
    );
    std::println!(
        "FlowMonitor default: {} bytes, Report: {} bytes",
        m.memory_bytes(),
        core::mem::size_of::<Report>()
    );
}

/// Frame `i`: IPv4 UDP from one of five sources, 60–660 bytes; or a runt, or ARP.
fn frame(i: u8) -> std::vec::Vec<u8> {
    let mut f = std::vec![0u8; 60 + usize::from(i % 7) * 100];
    match i % 11 {
        3 => f.truncate(13),
        8 => f[12..14].copy_from_slice(&[0x08, 0x06]),
        _ => {
            let ip_len = (f.len() - 14) as u16;
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[16..18].copy_from_slice(&ip_len.to_be_bytes());
            f[23] = 17;
            f[26..30].copy_from_slice(&[10, 0, 0, i % 5]);
            f[30..34].copy_from_slice(&[10, 0, 1, 1]);
        }
    }
    f
}

/// `feed_burst` stops after the frame that fills the epoch and counts what `feed`
/// counts: the same reports, epoch by epoch, including the last partial one.
/// Passes under Miri in ~2 minutes (not in `.ci/run`: loxo-core's test covers the
/// prefetch).
#[test]
fn feed_burst_counts_what_feed_counts() {
    let frames: std::vec::Vec<_> = (0..40).map(frame).collect();
    let config = Config {
        epoch_packets: 7,
        ..Config::default()
    };
    let (mut one, mut burst) = (
        std::boxed::Box::new(FlowMonitor::<8>::with_candidates(config)),
        std::boxed::Box::new(FlowMonitor::<8>::with_candidates(config)),
    );
    let (mut a, mut b) = (Report::default(), Report::default());
    let mut expected = std::vec::Vec::new();
    for f in &frames {
        if one.feed(f) {
            one.end_epoch(&mut a);
            expected.push(a.clone());
        }
    }
    one.end_epoch(&mut a);
    expected.push(a);
    let mut got = std::vec::Vec::new();
    // Bursts of 3 frames and one of the rest: epochs end inside and at the end
    // of a burst.
    let (mut rest, mut size) = (&frames[..], 3);
    while !rest.is_empty() {
        let n = size.min(rest.len());
        let fed = burst.feed_burst(&rest[..n]);
        assert!(fed.frames == n || fed.epoch_full, "{fed:?}");
        rest = &rest[fed.frames..];
        if fed.epoch_full {
            burst.end_epoch(&mut b);
            got.push(b.clone());
        }
        if got.len() == 2 {
            size = usize::MAX;
        }
    }
    burst.end_epoch(&mut b);
    got.push(b);
    assert_eq!(got.len(), 40 / 7 + 1);
    assert_eq!(got, expected);
    assert!(
        expected[0].errors.iter().any(|&e| e > 0),
        "a runt was counted"
    );
    assert_eq!(
        burst.feed_burst::<&[u8]>(&[]),
        Fed {
            frames: 0,
            epoch_full: false
        }
    );
}
