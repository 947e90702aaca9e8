//! `ByteWeight::Ip`: the monitor weighs each frame by its IP packet's length (the unit
//! of IPFIX's `octetDeltaCount`), checked against the generator's own record of the
//! IP length it wrote (`FrameTruth::ip_len`, not `parse_frame_weighted`), on traces with VLAN
//! tags, QinQ, IPv6 extension chains, IPv4 options and Ethernet padding (`--extensions`),
//! a one-packet flood and malformed frames, at two θ and both share measures:
//! * the epoch's bytes are the sum of the truth's IP lengths, and below the wire
//!   lengths by at least the link headers (14 bytes a frame);
//! * recall 1 in IP bytes: every flow with ≥ θ of the epoch's IP bytes is listed;
//! * every listed flow's certain bounds contain its exact IP bytes (packets when ranked
//!   by packets), and the sketch bounds (95 %) contain them for all but a few.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::exact::Exact;
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_flow::{ByteWeight, Config, FlowMonitor, Report, ShareOf, Theta};

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn run(theta: Theta, share_of: ShareOf, seed: u64) {
    let cfg = TraceConfig {
        packets: 200_000,
        flows: 20_000,
        popularity: Popularity::Zipf(1.0),
        flood: 0.3,
        malformed: 0.01,
        extensions: 0.5,
        seed,
        ..TraceConfig::default()
    };
    let mut m = Box::new(FlowMonitor::new(Config {
        theta,
        share_of,
        byte_weight: ByteWeight::Ip,
        ..Config::with_seed(TEST_SEED)
    }));
    let mut ip = Exact::with_weight(ByteWeight::Ip);
    let mut wire = Exact::default();
    generate_with_truth(&cfg, |f, t| {
        m.feed(f);
        ip.feed_truth(t);
        wire.feed_truth(t);
        Ok::<_, ()>(())
    })
    .unwrap();
    let mut r = Report::default();
    m.end_epoch(&mut r);
    let name = format!("theta {theta} {share_of:?} seed {seed}");
    assert_eq!(r.byte_weight, ByteWeight::Ip, "{name}");
    assert_eq!(
        (r.packets, r.bytes),
        (ip.total.packets, ip.total.bytes),
        "{name}"
    );
    assert!(
        ip.total.bytes + 14 * ip.total.packets <= wire.total.bytes,
        "{name}: IP bytes {} + 14/frame must not exceed wire bytes {}",
        ip.total.bytes,
        wire.total.bytes
    );

    let by_bytes = share_of == ShareOf::Bytes;
    let heavy = ip.heavy(theta, by_bytes);
    assert!(!heavy.is_empty(), "{name}: a non-trivial exact set");
    assert!(r.elephants_complete, "{name}");
    for (k, _) in &heavy {
        assert!(
            r.elephants.iter().any(|e| e.key == *k),
            "{name}: {k} not listed"
        );
    }
    let (mut sketch, mut held) = (0, 0);
    for e in &r.elephants {
        let c = ip.flows.get(&e.key).copied().unwrap_or_default();
        for (b, v) in [(e.bytes, c.bytes), (e.packets, c.packets)] {
            assert!(!b.saturated, "{name}");
            assert!(b.upper >= v, "{name}: {} upper {} < {v}", e.key, b.upper);
            if b.lower_certain {
                assert!(b.lower <= v, "{name}: {} lower {} > {v}", e.key, b.lower);
            } else {
                sketch += 1;
                held += u32::from(b.lower <= v);
            }
        }
    }
    // The 95 % bound: of n sketch bounds, fewer than 5 % + 3σ fail (σ² = n·0.05·0.95).
    let n = f64::from(sketch);
    let allowed = 0.05 * n + 3.0 * (n * 0.05 * 0.95).sqrt();
    assert!(
        f64::from(sketch - held) <= allowed,
        "{name}: {} of {sketch} sketch bounds failed",
        sketch - held
    );
}

#[test]
fn ip_bytes_weigh_the_epoch_and_its_elephants() {
    for (theta, seed) in [("1%", 3), ("1/256", 11)] {
        let theta = Theta::parse(theta).unwrap();
        run(theta, ShareOf::Bytes, seed);
        run(theta, ShareOf::Packets, seed + 1);
    }
}
