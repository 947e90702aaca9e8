//! The participants truth: spreads counted over hand-made frames, epochs split as the
//! monitor's, the file's rows and their round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;
use std::path::Path;

use loxo_flow::{FlowKey, ParseError};

use super::*;

fn v4(last: u8) -> [u8; 4] {
    [192, 0, 2, last]
}

fn ip(last: u8) -> IpAddr {
    IpAddr::from(v4(last))
}

/// A frame of the flow `src → dst:dport`, or malformed.
fn frame(index: u64, src: u8, dst: u8, dport: u16, expected: Expected) -> FrameTruth {
    FrameTruth {
        index,
        len: 64,
        ip_len: 50,
        key: Some(FlowKey::v4(v4(src), v4(dst), 1234, dport, 6)),
        fragment: false,
        flood: false,
        damage: Damage::None,
        expected,
    }
}

#[test]
fn spreads_count_distinct_elements_not_packets() {
    let f = |i, s, d, p| frame(i, s, d, p, Expected::Flow);
    let truth = [
        // 1 → 2 on three ports, one of them twice; 1 → 3 once; 4 → 2 once.
        f(0, 1, 2, 80),
        f(1, 1, 2, 80),
        f(2, 1, 2, 81),
        f(3, 1, 2, 82),
        f(4, 1, 3, 80),
        f(5, 4, 2, 80),
        // Not a flow: counted in the epoch's frames, not in its spreads.
        frame(6, 9, 9, 9, Expected::Malformed(ParseError::Runt)),
        FrameTruth {
            key: None,
            expected: Expected::NotIp,
            ..f(7, 0, 0, 0)
        },
    ];
    let e = epoch_spreads(&truth, 0);
    assert_eq!(e.len(), 1);
    let e = &e[0];
    assert_eq!(e.frames(), 8);
    assert_eq!(e.spread(&SpreadKey::Source(ip(1))), 2);
    assert_eq!(e.spread(&SpreadKey::Destination(ip(2))), 2);
    assert_eq!(e.spread(&SpreadKey::Pair(ip(1), ip(2))), 3);
    assert_eq!(e.spread(&SpreadKey::Source(ip(9))), 0);
    assert_eq!(e.pairs(Role::FanOut), 3);
    assert_eq!(e.pairs(Role::FanIn), 3);
    assert_eq!(e.pairs(Role::DstPorts), 5);
    assert_eq!(
        e.spreads(Role::FanIn),
        [
            (SpreadKey::Destination(ip(2)), 2),
            (SpreadKey::Destination(ip(3)), 1)
        ]
    );
    // An IPv4 address and its IPv4-mapped IPv6 form are different keys.
    let mapped = FlowKey::v6(
        std::net::Ipv4Addr::from(v4(1)).to_ipv6_mapped().octets(),
        [0; 16],
        1,
        2,
        17,
    );
    let t = FrameTruth {
        key: Some(mapped),
        ..f(0, 0, 0, 0)
    };
    let e = &epoch_spreads([&truth[0], &t], 0)[0];
    assert_eq!(e.spread(&SpreadKey::Source(ip(1))), 1);
    assert_eq!(e.spreads(Role::FanOut).len(), 2);
}

/// Epochs of `n` frames in pcap order, every frame counted: the monitor's split.
#[test]
fn epochs_are_runs_of_frames_in_pcap_order() {
    let truth: Vec<FrameTruth> = (0..10u8)
        .map(|i| {
            let e = if i % 3 == 0 {
                Expected::Malformed(ParseError::Ipv4Truncated)
            } else {
                Expected::Flow
            };
            frame(u64::from(i), 1, 10 + i, 80, e)
        })
        .collect();
    let e = epoch_spreads(&truth, 4);
    let frames: Vec<u64> = e.iter().map(EpochSpreads::frames).collect();
    assert_eq!(frames, [4, 4, 2]);
    let epochs: Vec<u64> = e.iter().map(EpochSpreads::epoch).collect();
    assert_eq!(epochs, [0, 1, 2]);
    // Frames 0..4: 1, 2 are flows (0 and 3 malformed); 4..8: 4, 5, 7; 8..10: 8.
    let fan_out: Vec<u64> = e
        .iter()
        .map(|e| e.spread(&SpreadKey::Source(ip(1))))
        .collect();
    assert_eq!(fan_out, [2, 3, 1]);
    assert_eq!(
        epoch_spreads(&truth[..8], 4).len(),
        2,
        "no empty last epoch"
    );
}

#[test]
fn rows_list_keys_from_the_minimum_and_every_designed_participant() {
    let f = |i, s, d, p| frame(i, s, d, p, Expected::Flow);
    let truth = [
        f(0, 1, 2, 80),
        f(1, 1, 3, 80),
        f(2, 1, 4, 80),
        f(3, 5, 2, 80),
    ];
    let e = &epoch_spreads(&truth, 0)[0];
    let designed = [
        SpreadKey::Source(ip(1)),
        SpreadKey::Destination(ip(7)),
        SpreadKey::Pair(ip(5), ip(2)),
    ];
    let rows = participant_rows(e, &designed, 2);
    let listed: Vec<(SpreadKey, u64, bool)> =
        rows.iter().map(|r| (r.key, r.spread, r.designed)).collect();
    assert_eq!(
        listed,
        [
            (SpreadKey::Source(ip(1)), 3, true),
            (SpreadKey::Destination(ip(2)), 2, false),
            // Designed, not seen.
            (SpreadKey::Destination(ip(7)), 0, true),
            // Designed, below the minimum.
            (SpreadKey::Pair(ip(5), ip(2)), 1, true),
        ]
    );
    assert!(rows.iter().all(|r| r.epoch == 0));
    assert_eq!(
        rows.iter().map(|r| r.pairs).collect::<Vec<_>>(),
        [4, 4, 4, 4]
    );
    // Minimum 1: every key.
    assert_eq!(participant_rows(e, &[], 1).len(), 2 + 3 + 4);
}

#[test]
fn participants_file_round_trips() {
    let cfg = TraceConfig {
        packets: 6_000,
        flows: 500,
        flood: 0.3,
        malformed: 0.05,
        seed: 5,
        class: TrafficClass::DdosMulti,
        attack: Attack {
            victims: Some(3),
            ..Attack::default()
        },
        ..TraceConfig::default()
    };
    let mut truth = Vec::new();
    generate_with_truth(&cfg, |_, t| {
        truth.push(*t);
        Ok::<_, ()>(())
    })
    .unwrap();
    let designed = designed(&cfg);
    let mut file = Vec::new();
    write_participants_header(&mut file).unwrap();
    let mut rows = Vec::new();
    for e in epoch_spreads(&truth, 2_500) {
        assert_eq!(
            write_participants(&mut file, &e, &designed, 1).unwrap(),
            participant_rows(&e, &designed, 1).len() as u64
        );
        rows.extend(participant_rows(&e, &designed, 1));
    }
    let text = String::from_utf8(file.clone()).unwrap();
    assert!(text.contains("\n0,fan_in,,2001:db8::10,"), "{text:.300}");
    assert_eq!(read_participants(std::io::Cursor::new(file)).unwrap(), rows);
    assert_eq!(rows.iter().map(|r| r.epoch).max(), Some(2));
    assert_eq!(rows.iter().filter(|r| r.designed).count(), 3 * 3);
    for bad in [
        "0,fan_out,,192.0.2.1,1,1,0",
        "0,fan_in,,192.0.2.1,1,1,2",
        "0,ports,192.0.2.1,192.0.2.2,1,1,0",
        "0,dst_ports,192.0.2.1,192.0.2,1,1,0",
        "0,fan_in,,192.0.2.1,1,1",
    ] {
        assert!(bad.parse::<ParticipantRow>().is_err(), "{bad}");
    }
    assert!(read_participants(std::io::Cursor::new(b"epoch,role\n")).is_err());
    assert_eq!(
        participants_path(Path::new("out/ddos.pcap")),
        Path::new("out/ddos.participants.csv")
    );
}

/// The classes before the participants design their victim too; the others, and any
/// class without attack frames, design none.
#[test]
fn designed_participants_of_every_class() {
    let victim = |cfg: TraceConfig| designed(&cfg);
    for class in TrafficClass::ALL {
        let cfg = TraceConfig {
            flood: class.default_flood(),
            class,
            ..TraceConfig::default()
        };
        let n = designed(&cfg).len();
        assert_eq!(n, class.participants(&cfg.attack) as usize, "{class}");
        assert_eq!(n > 0, class.is_flood(), "{class}");
        assert!(victim(TraceConfig { flood: 0.0, ..cfg }).is_empty());
    }
    let flood = TraceConfig {
        flood: 0.9,
        class: TrafficClass::SynFlood,
        ..TraceConfig::default()
    };
    assert_eq!(victim(flood), [SpreadKey::Destination(ip(10))]);
}
