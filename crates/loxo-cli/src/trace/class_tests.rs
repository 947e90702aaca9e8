//! Each traffic class makes what it says, its truth still agrees with `parse_frame`,
//! and the classic trace is unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use loxo_flow::{parse_frame, FlowKey};

use super::*;

/// Frames of one epoch of the firmware.
const N: u64 = 16_384;

/// `cfg`'s frames and truth; checks every frame against `parse_frame` (the oracle's
/// records are right for every class) and the counts against the truth.
fn trace(cfg: &TraceConfig) -> (Vec<Vec<u8>>, Vec<FrameTruth>, TraceStats) {
    let (mut frames, mut truth) = (Vec::new(), Vec::new());
    let st = generate_with_truth(cfg, |f, t| {
        assert_eq!(parse_frame(f), t.expected_parse(), "{:?} {t:?}", cfg.class);
        assert_eq!(f.len(), t.len as usize);
        frames.push(f.to_vec());
        truth.push(*t);
        Ok::<_, ()>(())
    })
    .unwrap();
    assert_eq!(st.flood, truth.iter().filter(|t| t.flood).count() as u64);
    (frames, truth, st)
}

fn class_trace(class: TrafficClass) -> (Vec<Vec<u8>>, Vec<FrameTruth>, TraceStats) {
    trace(&TraceConfig {
        packets: N,
        flows: 2_000,
        flood: class.default_flood(),
        seed: 21,
        class,
        ..TraceConfig::default()
    })
}

/// Offset of the network header (the generator's tag stacks).
fn l3(frame: &[u8]) -> usize {
    match frame.get(12..14) {
        Some([0x81, 0x00]) => 18,
        Some([0x88, 0xa8]) => 22,
        _ => 14,
    }
}

/// The flood frames' keys; asserts their share is 90 % within 4σ.
fn flood_keys(truth: &[FrameTruth], st: &TraceStats) -> Vec<FlowKey> {
    // A frame is a flood frame with p = 0.9 · 0.999 (one frame in 1000 is drawn
    // non-IP first): Binomial(N, p), σ = √(N·p·(1 − p)) ≈ 38.
    let p = 0.9 * 0.999;
    let sd = (N as f64 * p * (1.0 - p)).sqrt();
    assert!((st.flood as f64 - N as f64 * p).abs() < 4.0 * sd, "{st:?}");
    truth
        .iter()
        .filter(|t| t.flood)
        .map(|t| t.flow().unwrap())
        .collect()
}

#[test]
fn random_source_floods_are_one_packet_flows_from_distinct_sources() {
    for (class, v6, victim) in [
        (TrafficClass::FloodV4, false, &[192, 0, 2, 10][..]),
        (
            TrafficClass::FloodV6,
            true,
            &[
                0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
            ][..],
        ),
    ] {
        let (frames, truth, st) = class_trace(class);
        let keys = flood_keys(&truth, &st);
        let sources: HashSet<&[u8]> = keys.iter().map(FlowKey::src_bytes).collect();
        assert_eq!(sources.len(), keys.len(), "{class}: a source repeats");
        for k in &keys {
            assert_eq!(k.is_v6(), v6, "{class}");
            assert_eq!(
                (k.dst_bytes(), k.dst_port(), k.protocol()),
                (victim, 53, 17)
            );
            assert!(k.src_port() >= 1024, "{class}");
        }
        // 64-byte frames (UDP over IPv6 needs 14 + 40 + 8 = 62).
        assert!(frames
            .iter()
            .zip(&truth)
            .all(|(f, t)| !t.flood || f.len() == 64));
        // The rest is the classic population: its flows repeat.
        let rest: HashSet<FlowKey> = truth
            .iter()
            .filter(|t| !t.flood)
            .filter_map(FrameTruth::flow)
            .collect();
        assert!(rest.len() < (N as usize - keys.len()) / 2, "{}", rest.len());
    }
}

#[test]
fn syn_flood_is_syns_with_random_ports_from_one_slash_20() {
    let (frames, truth, st) = class_trace(TrafficClass::SynFlood);
    let keys = flood_keys(&truth, &st);
    for k in &keys {
        assert_eq!(k.src_bytes()[..2], [198, 18]);
        assert!(k.src_bytes()[2] < 16, "{k:?}");
        assert_eq!(
            (k.dst_bytes(), k.dst_port(), k.protocol()),
            (&[192, 0, 2, 10][..], 80, 6)
        );
    }
    for (f, _) in frames.iter().zip(&truth).filter(|(_, t)| t.flood) {
        // Untagged IPv4 without options: TCP flags at 14 + 20 + 13, SYN alone.
        assert_eq!(f[47], 0x02);
    }
    // ≈ 14 730 frames over 4 096 sources × 64 512 ports: the number of repeated
    // (source, port) pairs is about Poisson(n²/(2·2.64·10⁸)) ≈ Poisson(0.41), and
    // P(≥ 8) < 10⁻⁸.
    let flows: HashSet<FlowKey> = keys.iter().copied().collect();
    assert!(keys.len() - flows.len() < 8, "{}", keys.len() - flows.len());
    // The sources a pool of m = 4 096 gets from n draws: m·(1 − e^(−n/m)) ≈ 3 984,
    // variance ≈ m·e^(−λ)·(1 − (1 + λ)·e^(−λ)) ≈ 98 (λ = n/m ≈ 3.6): 4σ ≈ 40.
    let sources: HashSet<&[u8]> = keys.iter().map(FlowKey::src_bytes).collect();
    let m = 4096.0f64;
    let lambda = keys.len() as f64 / m;
    let mean = m * (1.0 - (-lambda).exp());
    let sd = (m * (-lambda).exp() * (1.0 - (1.0 + lambda) * (-lambda).exp())).sqrt();
    assert!(
        (sources.len() as f64 - mean).abs() < 4.0 * sd,
        "{} sources, expected {mean:.0} ± {sd:.1}",
        sources.len()
    );
}

#[test]
fn min_size_frames_hold_their_headers_and_padding_only() {
    let (frames, truth, _) = class_trace(TrafficClass::MinSize);
    let mut padded = 0;
    for (f, t) in frames.iter().zip(&truth).filter(|(_, t)| t.key.is_some()) {
        // Padded: the IP length is the headers' (transport included, none after a
        // non-first fragment's header but as many payload bytes); the frame is that or
        // 60 bytes.
        let at = l3(f);
        assert_eq!(f.len(), (at + t.ip_len as usize).max(60), "{t:?}");
        padded += usize::from(f.len() > at + t.ip_len as usize);
    }
    // Most frames (untagged IPv4) are shorter than 60 bytes without the padding.
    assert!(padded > frames.len() / 2, "{padded}");
    assert!(frames.iter().all(|f| f.len() <= 22 + 40 + 20), "no payload");
}

#[test]
fn ipv6_ext_flows_all_carry_a_chain() {
    let (frames, truth, _) = class_trace(TrafficClass::Ipv6Ext);
    let mut ends = HashSet::new();
    for (f, t) in frames.iter().zip(&truth).filter(|(_, t)| t.key.is_some()) {
        assert!(t.key.unwrap().is_v6(), "{t:?}");
        // The first next header is hop-by-hop, routing, fragment or destination
        // options.
        assert!([0, 43, 44, 60].contains(&f[l3(f) + 6]), "{t:?}");
        ends.insert(t.key.unwrap().protocol());
    }
    // Chains end in the transport (TCP, UDP, ICMPv6), AH or ESP.
    assert_eq!(ends, HashSet::from([6, 17, 58, 50, 51]));
}

#[test]
fn vlan_qinq_tags_every_flow_half_and_half() {
    let (frames, truth, _) = class_trace(TrafficClass::VlanQinq);
    let mut flows = HashSet::new();
    for (f, t) in frames.iter().zip(&truth).filter(|(_, t)| t.key.is_some()) {
        let tags = match l3(f) {
            18 => 1,
            22 => 2,
            _ => panic!("untagged: {t:?}"),
        };
        flows.insert((t.key.unwrap(), tags));
    }
    // Each flow is QinQ with probability 1/2: 4σ of Binomial(flows, 1/2).
    let n = flows.len() as f64;
    let qinq = flows.iter().filter(|(_, tags)| *tags == 2).count() as f64;
    assert!(
        (qinq - n / 2.0).abs() < 4.0 * (n / 4.0).sqrt(),
        "{qinq} of {n}"
    );
}

#[test]
fn fragments_are_all_non_first_fragments() {
    let (_, truth, _) = class_trace(TrafficClass::Fragments);
    let ip: Vec<&FrameTruth> = truth.iter().filter(|t| t.key.is_some()).collect();
    assert!(ip.len() > N as usize * 99 / 100);
    for t in ip {
        let k = t.flow().unwrap();
        assert!(t.fragment, "{t:?}");
        assert_eq!((k.src_port(), k.dst_port()), (0, 0), "{t:?}");
    }
}

#[test]
fn every_class_is_reproducible_and_keeps_the_truth_with_damage() {
    for class in TrafficClass::ALL {
        let cfg = TraceConfig {
            packets: 4_000,
            flows: 300,
            flood: class.default_flood(),
            malformed: 0.1,
            extensions: 0.3,
            seed: 8,
            class,
            ..TraceConfig::default()
        };
        let a = trace(&cfg);
        assert_eq!(a, trace(&cfg), "{class}");
        assert!(a.2.malformed > 0, "{class}");
    }
}

/// FNV-1a over the frames and truth rows of a trace.
fn digest(cfg: &TraceConfig) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    generate_with_truth(cfg, |f, t| {
        for &b in f.iter().chain(t.to_string().as_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Ok::<_, ()>(())
    })
    .unwrap();
    h
}

/// The classic trace, byte for byte: the digests of traces made before the classes
/// existed (`loxo gen -n 30000 --malformed 0.05 --flood 0.3 --extensions 0.2 --seed 3`,
/// and `loxo gen -n 30000 -f 500 --seed 7 --malformed 0.01`: the FNV-1a of the pcap
/// records and truth rows the generator before the classes wrote).
#[test]
fn mix_is_the_classic_trace() {
    let dirty = TraceConfig {
        packets: 30_000,
        flows: 100_000,
        flood: 0.3,
        malformed: 0.05,
        extensions: 0.2,
        seed: 3,
        ..TraceConfig::default()
    };
    let demo = TraceConfig {
        packets: 30_000,
        flows: 500,
        malformed: 0.01,
        seed: 7,
        ..TraceConfig::default()
    };
    assert_eq!(dirty.class, TrafficClass::Mix);
    assert_eq!(
        [digest(&dirty), digest(&demo)],
        [454_178_056_272_927_179, 8_043_232_835_269_099_409]
    );
}

/// The classes made before the scan and DDoS classes, byte for byte: for each, the
/// digests of `loxo gen -n 20000 -f 3000 --seed 5 --class C` and of `loxo gen -n
/// 20000 -f 700 --malformed 0.1 --extensions 0.3 --flood 0.2 --seed 11 --class C`,
/// computed from the pcap and truth files the generator before those classes wrote
/// (commit 9c8462c).
#[test]
fn the_earlier_classes_are_unchanged() {
    fn plain(class: TrafficClass) -> TraceConfig {
        TraceConfig {
            packets: 20_000,
            flows: 3_000,
            flood: class.default_flood(),
            seed: 5,
            class,
            ..TraceConfig::default()
        }
    }
    fn dirty(class: TrafficClass) -> TraceConfig {
        TraceConfig {
            flows: 700,
            malformed: 0.1,
            extensions: 0.3,
            flood: 0.2,
            seed: 11,
            ..plain(class)
        }
    }
    let earlier = &TrafficClass::ALL[..8];
    assert!(earlier.iter().all(|c| !c.is_scan() && !c.is_ddos()));
    let digests = |cfg: fn(TrafficClass) -> TraceConfig| -> Vec<u64> {
        earlier.iter().map(|&c| digest(&cfg(c))).collect()
    };
    assert_eq!(
        digests(plain),
        [
            5_847_835_296_610_995_068,
            11_371_134_766_612_094_412,
            6_970_170_489_118_360_154,
            10_554_670_187_943_593_794,
            10_428_194_906_270_425_603,
            14_260_981_680_320_179_697,
            8_828_302_605_920_398_040,
            9_202_494_153_973_497_046,
        ]
    );
    assert_eq!(
        digests(dirty),
        [
            17_980_356_416_739_532_213,
            12_775_561_838_583_410_915,
            6_636_077_821_553_138_909,
            13_978_898_848_999_854_041,
            17_115_358_103_127_523_502,
            14_715_334_430_935_277_959,
            5_063_391_841_678_853_836,
            3_927_154_176_615_268_529,
        ]
    );
}
