//! Known-answer tests: messages written byte by byte from RFC 7011's layouts (§3.1
//! message header, §3.3.2 set header, §3.4.1 template record with §3.2 field
//! specifiers, §3.4.2 options template record, §3.4.3 data records), compared with
//! what the exporter writes — and read back by the decoder.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_flow::{Bounds, ByteWeight, Elephant, FlowKey, Report, ShareOf, Theta};
use loxo_ipfix::{Config, Decoder, Exporter, Item, Times};

/// An IANA field specifier: E = 0, ID, length.
fn iana(id: u16, len: u16) -> Vec<u8> {
    let mut v = id.to_be_bytes().to_vec();
    v.extend(len.to_be_bytes());
    v
}

/// An enterprise field specifier: E = 1, ID, length, PEN 32473 = 0x00007ed9.
fn pen(id: u16, len: u16) -> Vec<u8> {
    let mut v = (0x8000 | id).to_be_bytes().to_vec();
    v.extend(len.to_be_bytes());
    v.extend([0x00, 0x00, 0x7e, 0xd9]);
    v
}

fn report() -> Report {
    let mut r = Report {
        epoch: 3,
        byte_weight: ByteWeight::Ip,
        ..Report::new()
    };
    r.elephants
        .push(Elephant {
            key: FlowKey::v4([192, 0, 2, 1], [198, 51, 100, 2], 49152, 443, 6),
            bytes: Bounds {
                lower: 0x1234,
                upper: 0x1300,
                lower_certain: true,
                saturated: false,
            },
            packets: Bounds {
                lower: 9,
                upper: 12,
                lower_certain: false,
                saturated: false,
            },
            certain: true,
        })
        .unwrap();
    r
}

const TIMES: Times = Times {
    // 2023-11-14T22:13:20Z
    export_time: 0x6553_f100,
    start_ms: 0x0000_018b_cfe5_6800,
    end_ms: 0x0000_018b_cfe5_7bc8,
};

#[test]
fn first_message_byte_by_byte() {
    let config = Config {
        observation_domain_id: 0x0102_0304,
        epoch_records: false,
        ..Config::DEFAULT
    };
    let mut x = Exporter::new(config).unwrap();
    let r = report();
    let mut msgs = x.messages(&r, TIMES).unwrap();
    let mut buf = [0u8; 1472];
    let len = msgs.next_into(&mut buf).unwrap().unwrap();
    assert_eq!(msgs.next_into(&mut buf).unwrap(), None);

    let mut want: Vec<u8> = Vec::new();
    // Message header: version 10, length 450, export time, sequence 0, domain.
    want.extend([0x00, 0x0a, 0x01, 0xc2]);
    want.extend([0x65, 0x53, 0xf1, 0x00]);
    want.extend([0x00, 0x00, 0x00, 0x00]);
    want.extend([0x01, 0x02, 0x03, 0x04]);
    // Template set: ID 2, length 4 + 88 + 88 + 84 + 84 = 348.
    want.extend([0x00, 0x02, 0x01, 0x5c]);
    // Templates 256/257 carry the transport ports, 265/266 the ICMP type/code: no
    // template has both (nfdump 1.7 stores icmpTypeCode* in the destination port).
    for (id, src, dst, addr, icmp) in [
        (256u16, 8, 12, 4, None),
        (257, 27, 28, 16, None),
        (265, 8, 12, 4, Some(32)),
        (266, 27, 28, 16, Some(139)),
    ] {
        // Template record header: ID, 15 or 14 fields.
        want.extend(id.to_be_bytes());
        want.extend([0x00, if icmp.is_some() { 14 } else { 15 }]);
        want.extend(iana(src, addr));
        want.extend(iana(dst, addr));
        match icmp {
            None => {
                want.extend(iana(7, 2)); // sourceTransportPort
                want.extend(iana(11, 2)); // destinationTransportPort
                want.extend(iana(4, 1)); // protocolIdentifier
            }
            Some(icmp) => {
                want.extend(iana(4, 1)); // protocolIdentifier
                want.extend(iana(icmp, 2)); // icmpTypeCodeIPv4 / IPv6
            }
        }
        want.extend(iana(1, 8)); // octetDeltaCount
        want.extend(iana(2, 8)); // packetDeltaCount
        want.extend(iana(152, 8)); // flowStartMilliseconds
        want.extend(iana(153, 8)); // flowEndMilliseconds
        for (e, l) in [(1, 8), (2, 8), (3, 8), (4, 8), (5, 1), (6, 4)] {
            want.extend(pen(e, l));
        }
    }
    // Data set of template 256: length 4 + 82.
    want.extend([0x01, 0x00, 0x00, 0x56]);
    want.extend([192, 0, 2, 1, 198, 51, 100, 2]); // addresses
    want.extend([0xc0, 0x00, 0x01, 0xbb]); // ports 49152, 443
    want.push(0x06); // TCP
    want.extend([0, 0, 0, 0, 0, 0, 0x13, 0x00]); // octetDeltaCount = upper
    want.extend([0, 0, 0, 0, 0, 0, 0, 12]); // packetDeltaCount = upper
    want.extend([0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00]); // start
    want.extend([0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x7b, 0xc8]); // end
    want.extend([0, 0, 0, 0, 0, 0, 0x12, 0x34]); // octet lower
    want.extend([0, 0, 0, 0, 0, 0, 0x13, 0x00]); // octet upper
    want.extend([0, 0, 0, 0, 0, 0, 0, 9]); // packet lower
    want.extend([0, 0, 0, 0, 0, 0, 0, 12]); // packet upper
    want.push(0x03); // certain | octets lower certain
    want.extend([0, 0, 0, 3]); // epoch
    assert_eq!(want.len(), 450);
    assert_eq!(&buf[..len], &want[..]);

    // The decoder reads it back.
    let mut d = Decoder::<8, 32>::new();
    let m = d.read(&want).unwrap();
    assert_eq!(m.header().sequence_number, 0);
    let items: Vec<_> = m.map(Result::unwrap).collect();
    assert_eq!(items.len(), 5);
    assert!(matches!(
        items[0],
        Item::Template {
            id: 256,
            field_count: 15,
            learned: true,
            ..
        }
    ));
    let Item::Flow(f) = items[4] else {
        panic!("{:?}", items[4])
    };
    assert_eq!(f.to_elephant(), Some(r.elephants[0]));
    assert_eq!((f.start_ms, f.end_ms), (TIMES.start_ms, TIMES.end_ms));

    // The next report: no templates, sequence number 1.
    let mut msgs = x.messages(&r, TIMES).unwrap();
    let len = msgs.next_into(&mut buf).unwrap().unwrap();
    assert_eq!(len, 16 + 4 + 82);
    assert_eq!(
        buf[..16],
        [0, 10, 0, 102, 0x65, 0x53, 0xf1, 0, 0, 0, 0, 1, 1, 2, 3, 4]
    );
    assert_eq!(buf[16..len], want[364..]);
}

#[test]
fn epoch_options_record_byte_by_byte() {
    let mut r = report();
    r.elephants.clear();
    r.frames = 1000;
    r.packets = 900;
    r.bytes = 512_000;
    r.fragments = 5;
    r.not_ip = 60;
    r.errors[0] = 30;
    r.errors[1] = 10;
    r.distinct_flows = 77;
    r.distinct_sources = 20;
    r.new_flows = 11;
    r.elephants_complete = true;
    r.share_of = ShareOf::Packets;
    r.theta = Theta::new(1, 128).unwrap();
    let config = Config {
        observation_domain_id: 9,
        ..Config::DEFAULT
    };
    let mut x = Exporter::new(config).unwrap();
    let mut msgs = x.messages(&r, TIMES).unwrap();
    let mut buf = [0u8; 1472];
    let len = msgs.next_into(&mut buf).unwrap().unwrap();
    assert_eq!(len, 16 + 348 + 142 + 4 + 121);
    let mut want: Vec<u8> = Vec::new();
    // Options template set: ID 3, length 142; record: ID 258, 18 fields, 1 scope field.
    want.extend([0x00, 0x03, 0x00, 0x8e, 0x01, 0x02, 0x00, 0x12, 0x00, 0x01]);
    want.extend(iana(149, 4)); // scope: observationDomainId
    want.extend(iana(359, 8)); // monitoringIntervalStartMilliSeconds
    want.extend(iana(360, 8)); // monitoringIntervalEndMilliSeconds
    want.extend(pen(6, 4)); // epoch
    for e in 10..=18 {
        want.extend(pen(e, 8)); // frames … new flows
    }
    want.extend(pen(19, 4)); // elephants left out
    want.extend(pen(20, 1)); // epoch flags
    want.extend(pen(21, 8)); // theta numerator
    want.extend(pen(22, 8)); // theta denominator
    want.extend(pen(23, 4)); // elephants
                             // Data set of template 258: length 4 + 121.
    want.extend([0x01, 0x02, 0x00, 0x7d]);
    want.extend([0, 0, 0, 9]);
    want.extend(TIMES.start_ms.to_be_bytes());
    want.extend(TIMES.end_ms.to_be_bytes());
    want.extend([0, 0, 0, 3]);
    for v in [1000u64, 900, 512_000, 5, 60, 40, 77, 20, 11] {
        want.extend(v.to_be_bytes());
    }
    want.extend([0, 0, 0, 0]); // elephants left out: none, a report has room for all
    want.push(0x06); // complete | share of packets
    want.extend(1u64.to_be_bytes());
    want.extend(128u64.to_be_bytes());
    want.extend([0, 0, 0, 0]);
    assert_eq!(&buf[16 + 348..len], &want[..]);
    let mut d = Decoder::<8, 32>::new();
    let epochs: Vec<_> = d
        .read(&buf[..len])
        .unwrap()
        .filter_map(|i| match i.unwrap() {
            Item::Epoch(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(epochs.len(), 1);
    assert_eq!((epochs[0].malformed, epochs[0].theta_den), (40, 128));
}
