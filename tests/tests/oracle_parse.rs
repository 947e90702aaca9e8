//! `parse_frame` against the generator's own truth: every frame `loxo gen` writes
//! comes with the key the generator built it for (`FlowKey::v4`/`v6` from the flow's
//! fields), its byte weight and the outcome the key rules call for (a flow, not IP, or
//! one named `ParseError`), worked out from the generator's record of the headers it
//! wrote — never from `parse_frame` (`loxo_cli::trace`). This is the parser's
//! independent oracle on generated traffic; the hand-built table of
//! `crates/loxo-flow/tests/parse.rs` is the other.
//!
//! Traces: the classic trace the firmware end-to-end test replays, one with 30 %
//! damaged frames and floods, and traces with IPv4 options, IPv6 extension chains
//! (hop-by-hop, routing, destination options, first fragments, AH, ESP), Ethernet
//! padding, more non-IP link layers and the damages aimed at those headers, and a
//! damaged trace of every traffic class (`loxo gen --class`). Every
//! frame must parse to exactly its truth (key, length, fragment flag, or error
//! variant), and the traces must reach every rule the comparison is meant to guard:
//! each link layer (untagged, 802.1Q, QinQ), each IP version, TCP/UDP/ICMP/ICMPv6,
//! both fragment kinds, each extension header type, AH/ESP, padding, every
//! `ParseError` variant and every damage — so a parser that reads ports at a fixed
//! offset under a VLAN tag, keys an IPv6 chain wrongly or calls a good frame
//! malformed fails here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use loxo_cli::trace::{
    generate_with_truth, Damage, Expected, FrameTruth, Popularity, TraceConfig, TrafficClass,
};
use loxo_flow::{parse_frame, parse_frame_weighted, ByteWeight, FlowKey, ParseError};

/// Frames of each category every traced configuration set must reach.
const MIN_PER_CATEGORY: u64 = 20;

/// What a frame exercises, from its bytes and its truth (for coverage only: the
/// oracle is the truth).
fn categories(frame: &[u8], t: &FrameTruth) -> Vec<String> {
    let mut c = Vec::new();
    let et = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    c.push(
        match (et(12), et(16)) {
            (Some(0x8100), _) => "link 802.1Q",
            (Some(0x88a8), Some(0x8100)) => "link QinQ",
            (Some(0x88a8), _) => "link lone S-tag",
            (Some(0x0800 | 0x86dd), _) => "link untagged",
            _ => "link other",
        }
        .to_string(),
    );
    c.push(format!("damage {}", t.damage.name()));
    match t.expected {
        Expected::Malformed(e) => c.push(format!("error {}", e.name())),
        Expected::NotIp => c.push("not IP".into()),
        Expected::Flow => {
            let k = t.key.unwrap();
            let v = if k.is_v6() { "IPv6" } else { "IPv4" };
            c.push(format!("flow {v} protocol {}", k.protocol()));
            if t.fragment {
                c.push(format!("flow {v} non-first fragment"));
            }
            if t.flood {
                c.push("flow flood".into());
            }
            // Headers the flow's frame carries, read from its bytes.
            let l3 = match et(12) {
                Some(0x8100) => 18,
                Some(0x88a8) => 22,
                _ => 14,
            };
            if k.is_v6() {
                let mut nh = frame[l3 + 6];
                let mut at = l3 + 40;
                let mut n = 0;
                while matches!(nh, 0 | 43 | 44 | 60) && n < 8 {
                    c.push(format!("IPv6 extension {nh}"));
                    let len = if nh == 44 {
                        8
                    } else {
                        (usize::from(frame[at + 1]) + 1) * 8
                    };
                    nh = frame[at];
                    at += len;
                    n += 1;
                }
                if matches!(nh, 50 | 51) {
                    c.push(format!("IPv6 ends in {nh}"));
                }
                let plen = usize::from(u16::from_be_bytes([frame[l3 + 4], frame[l3 + 5]]));
                if l3 + 40 + plen < frame.len() {
                    c.push("Ethernet padding".into());
                }
            } else {
                if frame[l3] & 0x0f > 5 {
                    c.push("IPv4 options".into());
                }
                let total = usize::from(u16::from_be_bytes([frame[l3 + 2], frame[l3 + 3]]));
                if l3 + total < frame.len() {
                    c.push("Ethernet padding".into());
                }
            }
        }
    }
    c
}

/// Runs `parse_frame` over a trace; returns the mismatches (at most 20 described) and
/// adds the trace's categories to `seen`.
fn compare(cfg: &TraceConfig, seen: &mut BTreeMap<String, u64>) -> (u64, Vec<String>) {
    let mut mismatches = 0;
    let mut shown = Vec::new();
    generate_with_truth(cfg, |frame, t| {
        let got = parse_frame(frame);
        let want = t.expected_parse();
        // In IP bytes too: the parser's IP length against the one the generator wrote.
        let ip = (
            parse_frame_weighted(frame, ByteWeight::Ip),
            t.expected_parse_weighted(ByteWeight::Ip),
        );
        if got != want || ip.0 != ip.1 {
            mismatches += 1;
            if shown.len() < 20 {
                shown.push(format!(
                    "frame {} ({} bytes, damage {}): parse_frame {got:?}, truth {want:?}\n  bytes {:02x?}",
                    t.index,
                    t.len,
                    t.damage.name(),
                    &frame[..frame.len().min(96)]
                ));
            }
        }
        for c in categories(frame, t) {
            *seen.entry(c).or_default() += 1;
        }
        Ok::<(), ()>(())
    })
    .unwrap();
    (mismatches, shown)
}

fn check(name: &str, cfgs: &[TraceConfig], required: &[String]) {
    let mut seen = BTreeMap::new();
    let mut failures = Vec::new();
    let mut frames = 0;
    for cfg in cfgs {
        let (n, shown) = compare(cfg, &mut seen);
        frames += cfg.packets;
        if n > 0 {
            failures.push(format!(
                "{cfg:?}: {n} frames disagree\n{}",
                shown.join("\n")
            ));
        }
    }
    println!("{name}: {frames} frames");
    for (c, n) in &seen {
        println!("  {c}: {n}");
    }
    assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
    let missing: Vec<_> = required
        .iter()
        .filter(|c| seen.get(*c).copied().unwrap_or(0) < MIN_PER_CATEGORY)
        .map(|c| format!("{c}: {}", seen.get(c).copied().unwrap_or(0)))
        .collect();
    assert!(
        missing.is_empty(),
        "{name}: categories below {MIN_PER_CATEGORY} frames: {missing:?}"
    );
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// The classic trace (what `cargo xtask demo` and the end-to-end tests replay) and a
/// heavily damaged one: the classic damages, keys and link layers.
#[test]
fn classic_traces_parse_to_their_truth() {
    let demo = TraceConfig {
        packets: 100_000,
        flows: 10_000,
        popularity: Popularity::Zipf(1.0),
        malformed: 0.01,
        seed: 7,
        ..TraceConfig::default()
    };
    let damaged = TraceConfig {
        packets: 200_000,
        flows: 2_000,
        popularity: Popularity::Pareto(1.2),
        flood: 0.2,
        malformed: 0.3,
        seed: 3,
        ..TraceConfig::default()
    };
    let mut required = strings(&[
        "link untagged",
        "link 802.1Q",
        "link QinQ",
        "not IP",
        "flow IPv4 protocol 6",
        "flow IPv4 protocol 17",
        "flow IPv4 protocol 1",
        "flow IPv6 protocol 6",
        "flow IPv6 protocol 17",
        "flow IPv6 protocol 58",
        "flow IPv4 non-first fragment",
        "flow IPv6 non-first fragment",
        "IPv6 extension 44",
        "flow flood",
    ]);
    for e in [
        ParseError::Runt,
        ParseError::Ipv4Truncated,
        ParseError::Ipv4BadIhl,
        ParseError::Ipv4TotalLength,
        ParseError::Ipv6Truncated,
        ParseError::Ipv6PayloadLength,
        ParseError::VersionMismatch,
    ] {
        required.push(format!("error {}", e.name()));
    }
    for d in &Damage::ALL[..5] {
        required.push(format!("damage {}", d.name()));
    }
    check("classic", &[demo, damaged], &required);
}

/// Traces with extension headers, padding, more non-IP link layers and the damages
/// aimed at them: every rule of the crate docs and every `ParseError` variant.
#[test]
fn extended_traces_parse_to_their_truth() {
    let cfgs: Vec<TraceConfig> = (0..4)
        .map(|i| TraceConfig {
            packets: 100_000,
            flows: 3_000,
            popularity: Popularity::Zipf(0.9),
            flood: 0.1,
            malformed: 0.3,
            seed: 100 + i,
            extensions: 0.6,
            ..TraceConfig::default()
        })
        .collect();
    let mut required = strings(&[
        "link untagged",
        "link 802.1Q",
        "link QinQ",
        "link lone S-tag",
        "not IP",
        "flow IPv4 protocol 6",
        "flow IPv4 protocol 17",
        "flow IPv4 protocol 1",
        "flow IPv6 protocol 6",
        "flow IPv6 protocol 17",
        "flow IPv6 protocol 58",
        "flow IPv6 protocol 50",
        "flow IPv6 protocol 51",
        "flow IPv4 non-first fragment",
        "flow IPv6 non-first fragment",
        "IPv4 options",
        "IPv6 extension 0",
        "IPv6 extension 43",
        "IPv6 extension 44",
        "IPv6 extension 60",
        "IPv6 ends in 50",
        "IPv6 ends in 51",
        "Ethernet padding",
        "flow flood",
    ]);
    for e in ParseError::ALL {
        required.push(format!("error {}", e.name()));
    }
    for d in Damage::ALL {
        required.push(format!("damage {}", d.name()));
    }
    check("extended", &cfgs, &required);
}

/// The traffic classes (`loxo gen --class`: random-source IPv4/IPv6 floods, a SYN
/// flood, minimum-size frames, IPv6 extension chains, VLAN/QinQ, fragments), damaged:
/// every frame parses to its truth, and each class reaches what it is made of.
#[test]
fn class_traces_parse_to_their_truth() {
    let cfgs: Vec<TraceConfig> = TrafficClass::ALL
        .into_iter()
        .map(|class| TraceConfig {
            packets: 30_000,
            flows: 3_000,
            flood: class.default_flood(),
            malformed: 0.2,
            seed: 200,
            class,
            ..TraceConfig::default()
        })
        .collect();
    let mut required = strings(&[
        "link untagged",
        "link 802.1Q",
        "link QinQ",
        "not IP",
        "flow IPv4 protocol 6",
        "flow IPv4 protocol 17",
        "flow IPv6 protocol 17",
        "flow IPv6 protocol 50",
        "flow IPv6 protocol 51",
        "flow IPv4 non-first fragment",
        "flow IPv6 non-first fragment",
        "IPv6 extension 0",
        "IPv6 extension 43",
        "IPv6 extension 44",
        "IPv6 extension 60",
        "Ethernet padding",
        "flow flood",
    ]);
    for d in &Damage::ALL[..5] {
        required.push(format!("damage {}", d.name()));
    }
    check("classes", &cfgs, &required);
}

/// The comparison is not vacuous: a truth that is wrong in one field, for one kind
/// of frame, is caught on the first trace — a VLAN frame's port, an IPv6 chain's
/// protocol, a good frame's verdict, a byte weight, a malformed frame's reason.
#[test]
fn a_wrong_truth_is_caught() {
    type Lie = fn(&[u8], &mut FrameTruth) -> bool;
    let lies: [(&str, Lie); 5] = [
        ("VLAN frame keyed with its source port + 1", |f, t| {
            match (f.get(12..14), t.expected, t.key) {
                (Some([0x81, 0x00]), Expected::Flow, Some(k)) if !k.is_v6() => {
                    let (s, d) = (k.src_bytes(), k.dst_bytes());
                    t.key = Some(FlowKey::v4(
                        s.try_into().unwrap(),
                        d.try_into().unwrap(),
                        k.src_port().wrapping_add(1),
                        k.dst_port(),
                        k.protocol(),
                    ));
                    true
                }
                _ => false,
            }
        }),
        (
            "IPv6 chain keyed with the first next header",
            |_, t| match (t.expected, t.key) {
                (Expected::Flow, Some(k)) if k.is_v6() && k.protocol() == 51 => {
                    let (s, d) = (k.src_bytes(), k.dst_bytes());
                    t.key = Some(FlowKey::v6(
                        s.try_into().unwrap(),
                        d.try_into().unwrap(),
                        0,
                        0,
                        0,
                    ));
                    true
                }
                _ => false,
            },
        ),
        ("a good frame called malformed", |_, t| {
            if t.expected == Expected::Flow && t.index % 97 == 0 {
                t.expected = Expected::Malformed(ParseError::TransportTruncated);
                true
            } else {
                false
            }
        }),
        ("a byte weight off by one", |_, t| {
            if t.expected == Expected::Flow && t.index % 89 == 0 {
                t.len += 1;
                true
            } else {
                false
            }
        }),
        ("a malformed frame's reason swapped", |_, t| {
            if t.expected == Expected::Malformed(ParseError::Ipv4TotalLength) {
                t.expected = Expected::Malformed(ParseError::Ipv4Truncated);
                true
            } else {
                false
            }
        }),
    ];
    let cfg = TraceConfig {
        packets: 20_000,
        flows: 1_000,
        malformed: 0.2,
        seed: 5,
        extensions: 0.5,
        ..TraceConfig::default()
    };
    for (name, lie) in lies {
        let (mut lied, mut caught) = (0u64, 0u64);
        generate_with_truth(&cfg, |frame, t| {
            let mut t = *t;
            if lie(frame, &mut t) {
                lied += 1;
                caught += u64::from(parse_frame(frame) != t.expected_parse());
            } else {
                assert_eq!(parse_frame(frame), t.expected_parse(), "{t:?}");
            }
            Ok::<(), ()>(())
        })
        .unwrap();
        println!("{name}: {caught} of {lied} caught");
        assert!(
            lied > 10,
            "{name}: the trace has too few such frames ({lied})"
        );
        assert_eq!(caught, lied, "{name}");
    }
}
