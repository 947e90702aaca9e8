//! Properties of the exporter and decoder: every report, at every message length and
//! refresh setting, comes back whole from the messages (elephants in order with their
//! bounds, the epoch record), no message exceeds its length, sequence numbers count
//! the data records before each message, templates come first and when due; decoding
//! any corruption of a valid message, or random bytes, gives items or an error, never
//! a panic. Also the splitting figures quoted in the docs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_flow::{Bounds, ByteWeight, Elephant, FlowKey, Report, DEFAULT_CANDIDATES};
use loxo_ipfix::{Config, Decoder, EpochRecord, Exporter, Item, MessageHeader, Times};
use proptest::prelude::*;

fn bounds() -> impl Strategy<Value = Bounds> {
    (any::<u64>(), any::<u64>(), any::<bool>(), any::<bool>()).prop_map(
        |(lower, upper, lower_certain, saturated)| Bounds {
            lower,
            upper,
            lower_certain,
            saturated,
        },
    )
}

fn key() -> impl Strategy<Value = FlowKey> {
    let proto = prop_oneof![Just(6u8), Just(17), Just(1), Just(58), any::<u8>()];
    (
        any::<bool>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        any::<u16>(),
        any::<u16>(),
        proto,
        0u8..3,
    )
        .prop_map(|(v6, s, d, sp, dp, p, small)| {
            // ICMP-like keys with type/code ports, and arbitrary ones.
            let (sp, dp) = if small == 0 {
                (sp & 0xff, dp & 0xff)
            } else {
                (sp, dp)
            };
            if v6 {
                FlowKey::v6(s, d, sp, dp, p)
            } else {
                let (s4, d4) = ([s[0], s[1], s[2], s[3]], [d[0], d[1], d[2], d[3]]);
                FlowKey::v4(s4, d4, sp, dp, p)
            }
        })
}

fn elephant() -> impl Strategy<Value = Elephant> {
    (key(), bounds(), bounds(), any::<bool>()).prop_map(|(key, bytes, packets, certain)| Elephant {
        key,
        bytes,
        packets,
        certain,
    })
}

fn report() -> impl Strategy<Value = Report> {
    (
        prop::collection::vec(elephant(), 0..=DEFAULT_CANDIDATES),
        any::<u32>(),
        any::<[u64; 4]>(),
    )
        .prop_map(|(es, epoch, t)| {
            let mut r = Report {
                epoch,
                frames: t[0],
                packets: t[1],
                bytes: t[2],
                distinct_flows: t[3],
                byte_weight: ByteWeight::Ip,
                ..Report::new()
            };
            for e in es {
                r.elephants.push(e).unwrap();
            }
            r
        })
}

/// What came back from one report's messages.
#[derive(Default)]
struct Back {
    elephants: Vec<Elephant>,
    epochs: Vec<EpochRecord>,
    templates: usize,
}

/// Sends `r` through `x`, checks the framing, decodes with `d`.
fn send(x: &mut Exporter, d: &mut Decoder, r: &Report, times: Times, buf_len: usize) -> Back {
    let limit = buf_len.min(usize::from(x.config().max_message_len));
    let mut buf = vec![0u8; buf_len];
    let mut back = Back::default();
    let mut msgs = x.messages(r, times).unwrap();
    let mut seq_expected = None;
    let mut count = 0;
    while let Some(len) = msgs.next_into(&mut buf).unwrap() {
        count += 1;
        // A message holds the templates and the largest record (`min_message_len`), so
        // each carries at least one record: the epoch's and one per elephant at most.
        assert!(count <= r.elephants.len() + 1, "runaway: {count} messages");
        assert!(len <= limit, "{len} > {limit}");
        let h = MessageHeader::new_checked(&buf[..len]).unwrap();
        assert_eq!(usize::from(h.length()), len);
        assert_eq!(h.export_time(), times.export_time);
        let seq = h.sequence_number();
        if let Some(s) = seq_expected {
            assert_eq!(seq, s, "sequence number of message {count}");
        }
        let mut records = 0u32;
        let mut seen_data = false;
        for item in d.read(&buf[..len]).unwrap() {
            match item.unwrap() {
                Item::Template { learned, .. } => {
                    assert!(learned);
                    assert!(!seen_data, "templates come before data");
                    back.templates += 1;
                }
                Item::Flow(f) => {
                    seen_data = true;
                    records += 1;
                    assert_eq!((f.start_ms, f.end_ms), (times.start_ms, times.end_ms));
                    assert_eq!(f.octets, f.elephant.unwrap().bytes.upper);
                    assert_eq!(f.elephant.unwrap().epoch, r.epoch);
                    back.elephants.push(f.to_elephant().unwrap());
                }
                Item::Epoch(e) => {
                    seen_data = true;
                    records += 1;
                    back.epochs.push(e);
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(records > 0 || back.templates > 0, "an empty message");
        seq_expected = Some(seq.wrapping_add(records));
    }
    assert_eq!(msgs.next_into(&mut buf).unwrap(), None, "stays done");
    back
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: proptest::test_runner::RngSeed::Fixed(std::env::var("LOXO_PROPTEST_SEED").map_or(0xf1, |s| s.trim().parse().expect("LOXO_PROPTEST_SEED: a decimal u64"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn reports_round_trip(
        reports in prop::collection::vec(report(), 1..4),
        max_len in 471u16..=9000,
        buf_extra in 0usize..64,
        refresh_messages in 0u32..4,
        refresh_seconds in 0u32..3,
        epoch_records in any::<bool>(),
        loss_records in any::<bool>(),
        domain in any::<u32>(),
    ) {
        let config = Config {
            observation_domain_id: domain,
            max_message_len: max_len,
            template_refresh_messages: refresh_messages,
            template_refresh_seconds: refresh_seconds,
            epoch_records,
            participant_records: false,
            loss_records,
        };
        let min = usize::from(config.min_message_len());
        prop_assume!(usize::from(max_len) >= min);
        let mut x = Exporter::new(config).unwrap();
        let mut d = Decoder::new();
        let mut total = 0u32;
        for (i, r) in reports.iter().enumerate() {
            let times = Times {
                export_time: 1_700_000_000 + i as u32,
                start_ms: 1_700_000_000_000 + i as u64 * 1000,
                end_ms: 1_700_000_001_000 + i as u64 * 1000,
            };
            let before = x.sequence_number();
            let back = send(&mut x, &mut d, r, times, min + buf_extra);
            prop_assert_eq!(&back.elephants[..], &r.elephants[..]);
            if epoch_records {
                prop_assert_eq!(back.epochs.len(), 1);
                prop_assert_eq!(back.epochs[0], EpochRecord::from_report(r, domain, times.start_ms, times.end_ms));
            } else {
                prop_assert!(back.epochs.is_empty());
            }
            if i == 0 {
                prop_assert!(back.templates >= 2, "templates in the first message");
            }
            let n = r.elephants.len() as u32 + u32::from(epoch_records);
            prop_assert_eq!(x.sequence_number(), before.wrapping_add(n));
            total += n;
        }
        prop_assert_eq!(x.sequence_number(), total);
    }

    #[test]
    fn corrupted_messages_never_panic(
        r in report(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut x = Exporter::new(Config::DEFAULT).unwrap();
        let mut msgs = x.messages(&r, Times::default()).unwrap();
        let mut buf = [0u8; 1472];
        let len = msgs.next_into(&mut buf).unwrap().unwrap();
        let mut m = buf[..len].to_vec();
        for (i, v) in &flips {
            let at = i.index(m.len());
            m[at] = *v;
        }
        let m = &m[..cut.index(m.len() + 1)];
        let mut d = Decoder::<4, 8>::new();
        if let Ok(items) = d.read(m) {
            let mut n = 0;
            for item in items {
                n += 1;
                prop_assert!(n < 10_000);
                if item.is_err() {
                    break;
                }
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600), header in any::<bool>()) {
        let mut m = bytes;
        if header && m.len() >= 16 {
            // A valid header so that the sets are reached.
            let n = m.len() as u16;
            m[..4].copy_from_slice(&[0, 10, (n >> 8) as u8, n as u8]);
        }
        let mut d = Decoder::<4, 8>::new();
        if let Ok(items) = d.read(&m) {
            for item in items {
                if item.is_err() {
                    break;
                }
            }
        }
    }
}

fn v4(i: u8) -> Elephant {
    Elephant {
        key: FlowKey::v4([10, 0, 0, i], [10, 0, 1, i], 1000, 80, 6),
        ..Elephant::default()
    }
}

fn v6(i: u8) -> Elephant {
    Elephant {
        key: FlowKey::v6([i; 16], [0x20; 16], 1000, 80, 17),
        ..Elephant::default()
    }
}

fn sizes(r: &Report, config: Config) -> Vec<usize> {
    let mut x = Exporter::new(config).unwrap();
    let mut msgs = x.messages(r, Times::default()).unwrap();
    let mut buf = [0u8; 9000];
    let mut v = Vec::new();
    while let Some(len) = msgs.next_into(&mut buf).unwrap() {
        v.push(len);
    }
    v
}

#[test]
fn splitting_at_1472_bytes() {
    let mut r = Report {
        byte_weight: ByteWeight::Ip,
        ..Report::new()
    };
    for i in 0..64 {
        r.elephants.push(v4(i)).unwrap();
    }
    // First message: header, templates (490), epoch record (125), 10 records;
    // then 17 per message (16 + 4 + 17 · 82 = 1414).
    let s = sizes(&r, Config::DEFAULT);
    println!("64 IPv4 elephants, 1472-byte messages: {s:?}");
    assert_eq!(
        s,
        [
            16 + 490 + 125 + 4 + 10 * 82,
            1414,
            1414,
            1414,
            16 + 4 + 3 * 82
        ]
    );
    r.elephants.clear();
    for i in 0..64 {
        r.elephants.push(v6(i)).unwrap();
    }
    let s = sizes(&r, Config::DEFAULT);
    println!("64 IPv6 elephants, 1472-byte messages: {s:?}");
    // 13 per message: 16 + 4 + 13 · 106 = 1398.
    assert_eq!(s[1], 1398);
    assert_eq!(s.len(), 6);
    // Mixed families: a new set at each change.
    r.elephants.clear();
    for i in 0..8 {
        r.elephants
            .push(if i % 2 == 0 { v4(i) } else { v6(i) })
            .unwrap();
    }
    let s = sizes(
        &r,
        Config {
            epoch_records: false,
            ..Config::DEFAULT
        },
    );
    assert_eq!(s, [16 + 348 + 4 * (4 + 82) + 4 * (4 + 106)]);
}

#[test]
fn template_refresh() {
    let r = Report {
        byte_weight: ByteWeight::Ip,
        ..Report::new()
    };
    let config = Config {
        template_refresh_messages: 3,
        template_refresh_seconds: 100,
        ..Config::DEFAULT
    };
    let mut x = Exporter::new(config).unwrap();
    let mut buf = [0u8; 1472];
    let mut with = Vec::new();
    // One message per report (the epoch record); export times 0, 10, 20, …
    for t in 0..12u32 {
        let times = Times {
            export_time: t * 10,
            ..Times::default()
        };
        let mut m = x.messages(&r, times).unwrap();
        let len = m.next_into(&mut buf).unwrap().unwrap();
        with.push(len > 16 + 125);
    }
    // Every third message by count.
    let want: Vec<bool> = (0..12).map(|i| i % 3 == 0).collect();
    assert_eq!(with, want);
    // By time: every 100 s whatever the count.
    let mut x = Exporter::new(Config {
        template_refresh_messages: 0,
        ..config
    })
    .unwrap();
    let mut with = Vec::new();
    for t in [0u32, 50, 99, 100, 150, 199, 200, 500, 501] {
        let times = Times {
            export_time: t,
            ..Times::default()
        };
        let mut m = x.messages(&r, times).unwrap();
        let len = m.next_into(&mut buf).unwrap().unwrap();
        with.push(len > 16 + 125);
    }
    assert_eq!(
        with,
        [true, false, false, true, false, false, true, true, false]
    );
    // resend_templates forces them.
    x.resend_templates();
    let mut m = x
        .messages(
            &r,
            Times {
                export_time: 502,
                ..Times::default()
            },
        )
        .unwrap();
    assert_eq!(m.next_into(&mut buf).unwrap(), Some(16 + 490 + 125));
}

#[test]
fn sequence_numbers_count_records() {
    // After k reports of 64 elephants the sequence number is 65·k (64 flow records and
    // one epoch record each), and every header carries the count before it.
    let mut r = Report {
        byte_weight: ByteWeight::Ip,
        ..Report::new()
    };
    for i in 0..64 {
        r.elephants.push(v4(i)).unwrap();
    }
    let mut x = Exporter::new(Config::DEFAULT).unwrap();
    let mut buf = [0u8; 1472];
    let mut d = Decoder::<8, 32>::new();
    let mut last = 0u32;
    for _ in 0..10 {
        let mut m = x.messages(&r, Times::default()).unwrap();
        while let Some(len) = m.next_into(&mut buf).unwrap() {
            let h = d.read(&buf[..len]).unwrap().header();
            assert_eq!(h.sequence_number, last);
            last = last.wrapping_add(
                d.read(&buf[..len])
                    .unwrap()
                    .filter(|i| matches!(i, Ok(Item::Flow(_) | Item::Epoch(_))))
                    .count() as u32,
            );
        }
    }
    assert_eq!(x.sequence_number(), 650);
}
