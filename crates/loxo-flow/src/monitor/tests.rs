//! Tests of the monitor: its sizes, epochs, bounds and reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]
extern crate std;
use super::*;

/// The tests' fixed seed (the value the removed public default had: results unchanged).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

#[test]
fn new_flow_filter_design_load() {
    let p = NewFlowFilter::theoretical_fpr(u64::from(NEW_FLOW_CAPACITY));
    std::println!("new-flow filter at its design load: FPR {p:.5}");
    assert!((0.009..0.01).contains(&p), "{p}");
}

#[test]
fn default_fits_64_kib() {
    let m = FlowMonitor::new(Config::with_seed(TEST_SEED));
    assert!(m.memory_bytes() <= 64 * 1024, "{}", m.memory_bytes());
    assert_eq!(m.memory_bytes(), 65_232, "pin the documented size");
    assert_eq!(
        core::mem::size_of::<FlowMonitor<128>>(),
        56_016,
        "the firmware's"
    );
    // The report: 992 bytes (totals and the 8 blocklisted rows) and a 96-byte row per
    // candidate (the documented formula).
    assert_eq!(core::mem::size_of::<Elephant>(), 96);
    assert_eq!(core::mem::size_of::<Report>(), 992 + 96 * 256);
    assert_eq!(core::mem::size_of::<Report<128>>(), 992 + 96 * 128);
    assert_eq!(
        core::mem::size_of::<Report>(),
        25_568,
        "pin the documented size"
    );
    assert_eq!(core::mem::size_of::<Report<128>>(), 13_280);
    std::println!(
        "FlowMonitor default: {} bytes, Report: {} bytes; FlowMonitor<128>: {}, Report<128>: {}",
        m.memory_bytes(),
        core::mem::size_of::<Report>(),
        core::mem::size_of::<FlowMonitor<128>>(),
        core::mem::size_of::<Report<128>>()
    );
}

fn theta(num: u64, den: u64) -> Theta {
    Theta::new(num, den).unwrap()
}

/// θ ≥ 1/N is accepted, exactly at the boundary too; anything below is refused with
/// both thresholds named, by every fallible constructor.
#[test]
fn theta_below_theta_min_is_refused() {
    let with = |t| Config {
        theta: t,
        ..Config::with_seed(TEST_SEED)
    };
    for ok in [theta(1, 256), theta(2, 512), theta(1, 100), theta(1, 1)] {
        assert_eq!(FlowMonitor::<256>::check(&with(ok)), Ok(()), "{ok}");
        assert!(FlowMonitor::try_new(with(ok)).is_ok(), "{ok}");
    }
    for bad in [
        theta(1, 257),
        theta(99, 25_600),
        theta(1, 1000),
        theta(1, u64::MAX),
    ] {
        let e = ConfigError::ThetaBelowMin {
            theta: bad,
            theta_min: theta(1, 256),
        };
        assert_eq!(FlowMonitor::<256>::check(&with(bad)), Err(e), "{bad}");
        assert_eq!(FlowMonitor::try_new(with(bad)).err(), Some(e), "{bad}");
    }
    // 1 % needs 100 candidates: 128 take it, 64 do not.
    assert!(FlowMonitor::<128>::try_with_candidates(Config::with_seed(TEST_SEED)).is_ok());
    assert_eq!(
        FlowMonitor::<64>::try_with_candidates(Config::with_seed(TEST_SEED)).err(),
        Some(ConfigError::ThetaBelowMin {
            theta: theta(1, 100),
            theta_min: theta(1, 64)
        })
    );
    let msg = std::format!(
        "{}",
        FlowMonitor::<64>::check(&Config::with_seed(TEST_SEED)).unwrap_err()
    );
    assert_eq!(
        msg,
        "theta 0.01 is below theta_min 0.015625 (1/64): a monitor with 64 candidates \
         lists every elephant only at theta >= 1/64"
    );
}

#[test]
#[should_panic(expected = "THETA_MIN")]
fn new_panics_below_theta_min() {
    let _ = FlowMonitor::new(Config {
        theta: theta(1, 1000),
        ..Config::with_seed(TEST_SEED)
    });
}

/// An IPv4/UDP frame of flow `id` (a distinct source), `len` bytes on the wire.
fn flow_frame(id: u32, len: usize) -> std::vec::Vec<u8> {
    let mut f = std::vec![0u8; len];
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[23] = 17;
    f[26..30].copy_from_slice(&(0x0a00_0000 | id).to_be_bytes());
    f[30..34].copy_from_slice(&[10, 0, 1, 1]);
    f
}

/// The boundary of the recall argument: `N` flows of exactly `T/N` each fill all `N`
/// candidates with the same count `m = T/N = ⌈θ·T⌉` at θ = 1/N. Each is an elephant
/// (inclusive); all `N` are listed, none dropped, and the epoch is certified complete
/// (the smallest count alone, `m < threshold`, would not certify it). Then `N` flows
/// at `T/N` plus one-frame mice below it, fed round-robin so the mice keep being
/// gated or evicted: every flow at `T/N` is still listed.
#[test]
fn every_flow_at_exactly_one_nth_is_listed() {
    const N: usize = 16;
    let config = Config {
        theta: FlowMonitor::<N>::THETA_MIN,
        share_of: ShareOf::Packets,
        ..Config::with_seed(TEST_SEED)
    };
    let mut m = std::boxed::Box::new(FlowMonitor::<N>::with_candidates(config));
    let mut r = Report::<N>::with_candidates();
    for _ in 0..5 {
        for id in 0..N as u32 {
            m.feed(&flow_frame(id, 60));
        }
    }
    m.end_epoch(&mut r);
    assert_eq!(r.packets, 5 * N as u64);
    assert_eq!(r.elephants.len(), N, "{r:?}");
    assert!(r
        .elephants
        .iter()
        .all(|e| e.certain && e.packets.is_exact()));
    assert!(r.elephants_complete);

    // 12 flows of 10 frames and 40 one-frame mice: T = 160 = 16·10, so the 12 flows
    // hold exactly 1/16 each.
    let mut sent = 0u32;
    for round in 0..10u32 {
        for id in 0..12u32 {
            m.feed(&flow_frame(id, 60));
        }
        for k in 0..4u32 {
            m.feed(&flow_frame(1000 + round * 4 + k, 60));
            sent += 1;
        }
    }
    assert_eq!(sent, 40);
    m.end_epoch(&mut r);
    assert_eq!(r.packets, 160);
    for id in 0..12u32 {
        let key = crate::parse_frame(&flow_frame(id, 60)).map(|p| match p {
            Parsed::Flow(f) => f.key,
            Parsed::NotIp => unreachable!(),
        });
        let key = key.unwrap();
        let e = r.elephants.iter().find(|e| e.key == key);
        assert!(
            e.is_some_and(|e| e.packets.contains(10)),
            "flow {id}: {r:?}"
        );
    }
    assert!(r.elephants_complete);
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
        theta: FlowMonitor::<8>::THETA_MIN,
        ..Config::with_seed(TEST_SEED)
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
