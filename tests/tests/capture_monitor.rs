//! The snap-length rule in `loxo-flow` on generated traces (issue 18 item 6): a frame
//! a capture cut to its snap length parses (`parse_frame_captured`) to what the
//! generator built — its key, its *wire* length as weight, its outcome — or to
//! `Snapped` when a header the key needs lies past the cut, never to anything else;
//! and `FlowMonitor::feed_captured` over a snapped trace reports exactly what
//! `FlowMonitor::feed` reports over the whole frames that were not snapped, with the
//! snapped ones counted as frames only.
//!
//! Snap lengths 64, 96, 128 and 65 535 (tcpdump's usual ones), over the classic demo
//! trace and a trace with IPv4 options, IPv6 extension chains and damaged frames
//! (`--extensions 0.3 --malformed 0.05`): at 64 bytes QinQ + IPv6 frames and long
//! chains are cut, at 65 535 none is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::trace::{generate_with_truth, FrameTruth, TraceConfig};
use loxo_flow::{
    parse_frame_captured, CapturedError, Config, FlowMonitor, Parsed, Report, ShareOf,
};

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

/// Frames with the generator's truth of each.
type Trace = Vec<(Vec<u8>, FrameTruth)>;

/// Frames of a trace with the generator's truth.
fn trace(extensions: f64, malformed: f64, seed: u64) -> Trace {
    let cfg = TraceConfig {
        packets: 30_000,
        flows: 2_000,
        malformed,
        extensions,
        seed,
        ..TraceConfig::default()
    };
    let mut v = Vec::new();
    generate_with_truth(&cfg, |f, t| {
        v.push((f.to_vec(), *t));
        Ok::<(), ()>(())
    })
    .unwrap();
    v
}

fn traces() -> Vec<(&'static str, Trace)> {
    vec![
        ("demo", trace(0.0, 0.01, 7)),
        ("extensions", trace(0.3, 0.05, 11)),
    ]
}

const SNAPS: [usize; 4] = [64, 96, 128, 65_535];

#[test]
fn a_snapped_frame_is_the_generators_frame_or_snapped() {
    for (name, frames) in traces() {
        for snap in SNAPS {
            let mut cut = 0;
            let mut snapped = 0;
            for (f, t) in &frames {
                let c = f.len().min(snap);
                cut += usize::from(c < f.len());
                match parse_frame_captured(&f[..c], f.len()) {
                    Err(CapturedError::Snapped { needed, captured }) => {
                        assert!(captured == snap && needed > snap, "{name} {t:?}");
                        snapped += 1;
                    }
                    got => assert_eq!(
                        got,
                        t.expected_parse().map_err(CapturedError::Malformed),
                        "{name}, snap {snap}: frame {} ({} bytes, damage {:?})",
                        t.index,
                        f.len(),
                        t.damage
                    ),
                }
            }
            println!("{name}, snap length {snap}: {cut} frames cut, {snapped} snapped");
            if snap == 65_535 {
                assert_eq!(cut, 0);
            } else {
                // The traces have frames up to 1 500 bytes: the snap lengths cut many.
                assert!(cut > frames.len() / 2, "{name} {snap}: {cut}");
            }
            if snap == 64 {
                assert!(snapped > 0, "{name}: 64 bytes cut some headers");
            }
        }
    }
}

/// One epoch over `frames` through `feed` / `feed_captured`.
fn report(share_of: ShareOf, frames: impl Iterator<Item = (Vec<u8>, usize)>) -> Report {
    let mut m = Box::new(FlowMonitor::new(Config {
        share_of,
        ..Config::with_seed(TEST_SEED)
    }));
    for (f, wire) in frames {
        if wire == usize::MAX {
            m.feed(&f);
        } else {
            m.feed_captured(&f, wire);
        }
    }
    let mut r = Report::default();
    m.end_epoch(&mut r);
    r
}

#[test]
fn feed_captured_is_feed_of_the_whole_frames() {
    for (name, frames) in traces() {
        for share_of in [ShareOf::Bytes, ShareOf::Packets] {
            // The whole frames: feed and feed_captured(f, f.len()) are one.
            let whole = report(
                share_of,
                frames.iter().map(|(f, _)| (f.clone(), usize::MAX)),
            );
            let same = report(share_of, frames.iter().map(|(f, _)| (f.clone(), f.len())));
            assert_eq!(whole, same, "{name}");
            for snap in SNAPS {
                let is_snapped = |f: &[u8]| {
                    matches!(
                        parse_frame_captured(&f[..f.len().min(snap)], f.len()),
                        Err(CapturedError::Snapped { .. })
                    )
                };
                let snapped = frames.iter().filter(|(f, _)| is_snapped(f)).count() as u64;
                let captured = report(
                    share_of,
                    frames
                        .iter()
                        .map(|(f, _)| (f[..f.len().min(snap)].to_vec(), f.len())),
                );
                let mut kept = report(
                    share_of,
                    frames
                        .iter()
                        .filter(|(f, _)| !is_snapped(f))
                        .map(|(f, _)| (f.clone(), usize::MAX)),
                );
                // Snapped frames count as frames only.
                kept.frames += snapped;
                assert_eq!(captured, kept, "{name}, snap {snap}, {share_of:?}");
                let accounted =
                    captured.packets + captured.not_ip + captured.errors.iter().sum::<u64>();
                assert_eq!(captured.frames - accounted, snapped);
                assert!(!captured.elephants.is_empty());
                // Weighed by wire lengths: the bytes of the whole frames.
                let wire: u64 = frames
                    .iter()
                    .filter(|(f, t)| {
                        !is_snapped(f) && matches!(t.expected_parse(), Ok(Parsed::Flow(_)))
                    })
                    .map(|(f, _)| f.len() as u64)
                    .sum();
                assert_eq!(captured.bytes, wire, "{name}, snap {snap}");
            }
        }
    }
}

#[test]
fn feed_captured_closes_epochs_on_snapped_frames_too() {
    let frames = trace(0.3, 0.05, 11);
    let mut m = Box::new(FlowMonitor::new(Config {
        epoch_packets: 1000,
        ..Config::with_seed(TEST_SEED)
    }));
    let mut closed = 0;
    let mut r = Report::default();
    for (f, _) in &frames {
        if m.feed_captured(&f[..f.len().min(64)], f.len()) {
            m.end_epoch(&mut r);
            assert_eq!(r.frames, 1000);
            closed += 1;
        }
    }
    assert_eq!(closed, frames.len() / 1000);
}
