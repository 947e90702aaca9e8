//! Properties of the participant export: every `ParticipantsReport`, at every message
//! length, comes back whole from its messages (scanners then victims, each as the
//! record `ParticipantRecord::from_participant` makes of it, in its template of the
//! six), interleaved with flow reports on one exporter whose sequence numbers count
//! every data record; no message exceeds its length. Also the sizes quoted in
//! `docs/ipfix.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;

use loxo_flow::{ByteWeight, Estimate, Participant, ParticipantsReport, Report, Role};
use loxo_ipfix::{
    flags, Config, Decoder, Error, Exporter, Item, MessageHeader, ParticipantRecord, Times,
};
use proptest::prelude::*;

fn address(v6: bool, b: [u8; 16]) -> IpAddr {
    if v6 {
        IpAddr::from(b)
    } else {
        IpAddr::from([b[0], b[1], b[2], b[3]])
    }
}

fn participant(role: Role) -> impl Strategy<Value = Participant> {
    (
        any::<bool>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        0.0f64..1e7,
        0.0f64..1e4,
        any::<bool>(),
        0u32..1000,
    )
        .prop_map(
            move |(v6, a, t, value, sigma, saturated, sampled)| Participant {
                role,
                address: address(v6, a),
                target: (role == Role::VerticalScan).then(|| address(v6, t)),
                spread: Estimate { value, sigma },
                lower: (value - 4.0 * sigma).max(f64::from(sampled)),
                upper: value + 4.0 * sigma,
                sampled,
                saturated,
            },
        )
}

fn report() -> impl Strategy<Value = ParticipantsReport<16>> {
    let scanner = prop_oneof![
        participant(Role::HorizontalScan),
        participant(Role::VerticalScan)
    ];
    (
        prop::collection::vec(scanner, 0..=16),
        prop::collection::vec(participant(Role::Victim), 0..=16),
        any::<u32>(),
        0u32..3,
        0u32..3,
    )
        .prop_map(|(s, v, epoch, sl, vl)| {
            let mut r = ParticipantsReport::<16>::new();
            r.epoch = epoch;
            r.scanners.extend(s);
            r.victims.extend(v);
            r.scanners_left_out = sl;
            r.victims_left_out = vl;
            r
        })
}

/// Sends `r`'s participants through `x`, checks the framing, decodes with `d`;
/// returns the records and the number of messages.
fn send(
    x: &mut Exporter,
    d: &mut Decoder,
    r: &ParticipantsReport<16>,
    times: Times,
    buf_len: usize,
) -> (Vec<ParticipantRecord>, usize) {
    let limit = buf_len.min(usize::from(x.config().max_message_len));
    let mut buf = vec![0u8; buf_len];
    let mut back = Vec::new();
    let mut msgs = x.participant_messages(r, times).unwrap();
    let mut count = 0;
    let mut seq_expected = None;
    while let Some(len) = msgs.next_into(&mut buf).unwrap() {
        count += 1;
        assert!(count <= r.scanners.len() + r.victims.len() + 1, "runaway");
        assert!(len <= limit, "{len} > {limit}");
        let h = MessageHeader::new_checked(&buf[..len]).unwrap();
        assert_eq!(usize::from(h.length()), len);
        let seq = h.sequence_number();
        if let Some(s) = seq_expected {
            assert_eq!(seq, s);
        }
        let mut records = 0u32;
        for item in d.read(&buf[..len]).unwrap() {
            match item.unwrap() {
                Item::Template { learned, .. } => assert!(learned),
                Item::Participant(p) => {
                    records += 1;
                    back.push(p);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        seq_expected = Some(seq.wrapping_add(records));
    }
    assert_eq!(msgs.next_into(&mut buf).unwrap(), None, "stays done");
    (back, count)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(std::env::var("LOXO_PROPTEST_SEED").map_or(0xf2, |s| s.trim().parse().expect("LOXO_PROPTEST_SEED: a decimal u64"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn participant_reports_round_trip(
        reports in prop::collection::vec(report(), 1..4),
        max_len in 847u16..=9000,
        buf_extra in 0usize..64,
        refresh_messages in 0u32..4,
    ) {
        let config = Config {
            max_message_len: max_len,
            template_refresh_messages: refresh_messages,
            participant_records: true,
            ..Config::DEFAULT
        };
        let min = usize::from(config.min_message_len());
        prop_assume!(usize::from(max_len) >= min);
        let mut x = Exporter::new(config).unwrap();
        let mut d = Decoder::new();
        let flows = Report { byte_weight: ByteWeight::Ip, ..Report::new() };
        let mut total = 0u32;
        for (i, r) in reports.iter().enumerate() {
            let times = Times {
                export_time: 1_700_000_000 + i as u32,
                start_ms: 1_700_000_000_000 + i as u64 * 1000,
                end_ms: 1_700_000_001_000 + i as u64 * 1000,
            };
            // The epoch's flow report first (its epoch record: one data record).
            let mut m = x.messages(&flows, times).unwrap();
            let mut buf = vec![0u8; min + buf_extra];
            while let Some(len) = m.next_into(&mut buf).unwrap() {
                for item in d.read(&buf[..len]).unwrap() {
                    prop_assert!(item.is_ok());
                }
            }
            total += 1;
            prop_assert_eq!(x.sequence_number(), total);
            let (back, _) = send(&mut x, &mut d, r, times, min + buf_extra);
            let want: Vec<ParticipantRecord> = r
                .scanners
                .iter()
                .map(|p| (p, r.scanners_left_out > 0))
                .chain(r.victims.iter().map(|p| (p, r.victims_left_out > 0)))
                .map(|(p, full)| {
                    ParticipantRecord::from_participant(p, r.epoch, full, times.start_ms, times.end_ms)
                })
                .collect();
            prop_assert_eq!(&back, &want);
            for (b, p) in back.iter().zip(r.scanners.iter().chain(&r.victims)) {
                prop_assert_eq!((b.role, b.address, b.target), (p.role, p.address, p.target));
                prop_assert_eq!(b.flags & flags::SPREAD_SATURATED != 0, p.saturated);
                prop_assert!(b.lower as f64 <= p.lower && p.upper <= b.upper as f64);
            }
            total += back.len() as u32;
            prop_assert_eq!(x.sequence_number(), total);
        }
    }
}

#[test]
fn participants_need_their_templates() {
    let r = ParticipantsReport::<4>::new();
    let mut x = Exporter::new(Config::DEFAULT).unwrap();
    assert_eq!(
        x.participant_messages(&r, Times::default()).err(),
        Some(Error::NoParticipantTemplates)
    );
    let c = Config {
        participant_records: true,
        ..Config::DEFAULT
    };
    // Four flow templates (348), six participant templates (4 · 60 + 2 · 68 = 376),
    // the epoch options template (142).
    assert_eq!(c.templates_len(), 490 + 376);
    assert_eq!(c.min_message_len(), 631 + 376);
    let mut x = Exporter::new(c).unwrap();
    // No participant: only the templates, in the first message.
    let mut m = x.participant_messages(&r, Times::default()).unwrap();
    let mut buf = [0u8; 1472];
    assert_eq!(m.next_into(&mut buf).unwrap(), Some(16 + 866));
    assert_eq!(m.next_into(&mut buf).unwrap(), None);
    let mut m = x.participant_messages(&r, Times::default()).unwrap();
    assert_eq!(m.next_into(&mut buf).unwrap(), None);
}

#[test]
fn a_full_message_of_participants() {
    // 16 IPv4 victims (53-byte records) and 16 IPv6 vertical scans (85): with the
    // templates (866 bytes) they take three 1472-byte messages.
    let mut r = ParticipantsReport::<16>::new();
    for i in 0..16u8 {
        let p = |role, a: IpAddr, t| Participant {
            role,
            address: a,
            target: t,
            spread: Estimate {
                value: 1000.0,
                sigma: 30.0,
            },
            lower: 880.0,
            upper: 1120.0,
            sampled: 9,
            saturated: false,
        };
        r.victims
            .push(p(Role::Victim, IpAddr::from([192, 0, 2, i]), None))
            .unwrap();
        r.scanners
            .push(p(
                Role::VerticalScan,
                IpAddr::from([i; 16]),
                Some(IpAddr::from([0x20; 16])),
            ))
            .unwrap();
    }
    let c = Config {
        participant_records: true,
        ..Config::DEFAULT
    };
    let mut x = Exporter::new(c).unwrap();
    let mut m = x.participant_messages(&r, Times::default()).unwrap();
    let mut buf = [0u8; 1472];
    let mut sizes = Vec::new();
    while let Some(len) = m.next_into(&mut buf).unwrap() {
        sizes.push(len);
    }
    println!("16 IPv6 vertical scans and 16 IPv4 victims, 1472-byte messages: {sizes:?}");
    // The templates and 6 vertical scans (16 + 866 + 4 + 6 · 85 = 1396; a seventh
    // would need 1481), then the other 10 and 11 victims (16 + 4 + 10 · 85 + 4 + 11 · 53
    // = 1457; a twelfth: 1510), then the last 5.
    assert_eq!(
        sizes,
        [
            16 + 866 + 4 + 6 * 85,
            16 + 4 + 10 * 85 + 4 + 11 * 53,
            16 + 4 + 5 * 53
        ]
    );
}
