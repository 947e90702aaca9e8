//! Table of hand-built frames → expected key or error, and a no-panic property.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_flow::{parse_frame, Flow, FlowKey, ParseError, Parsed};
use proptest::prelude::*;

const S4: [u8; 4] = [10, 0, 0, 1];
const D4: [u8; 4] = [192, 168, 1, 2];
const S6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const D6: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn eth(tags: &[u16], ethertype: u16) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
    for &t in tags {
        f.extend_from_slice(&t.to_be_bytes());
        f.extend_from_slice(&[0, 5]); // TCI
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f
}

fn l4(proto: u8, sp: u16, dp: u16) -> Vec<u8> {
    let n = match proto {
        6 => 20,
        17 | 1 | 58 => 8,
        132 => 12,
        _ => 4,
    };
    let mut v = vec![0u8; n];
    if proto == 1 || proto == 58 {
        v[0] = sp as u8;
        v[1] = dp as u8;
    } else {
        v[..2].copy_from_slice(&sp.to_be_bytes());
        v[2..4].copy_from_slice(&dp.to_be_bytes());
    }
    v
}

fn v4(proto: u8, frag_off: u16, opts: usize, payload: &[u8]) -> Vec<u8> {
    let ihl = 20 + opts;
    let mut h = vec![0u8; ihl];
    h[0] = 0x40 | (ihl / 4) as u8;
    h[2..4].copy_from_slice(&((ihl + payload.len()) as u16).to_be_bytes());
    h[6..8].copy_from_slice(&frag_off.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&S4);
    h[16..20].copy_from_slice(&D4);
    h.extend_from_slice(payload);
    h
}

/// `exts`: (header type, body) — the body excludes next-header/len bytes for 0/43/60.
fn v6(first_nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 40];
    h[0] = 0x60;
    h[4..6].copy_from_slice(&(payload.len() as u16).to_be_bytes());
    h[6] = first_nh;
    h[7] = 64;
    h[8..24].copy_from_slice(&S6);
    h[24..40].copy_from_slice(&D6);
    h.extend_from_slice(payload);
    h
}

/// An extension header of 8 bytes (len field 0) with next header `nh`.
fn ext(nh: u8) -> Vec<u8> {
    vec![nh, 0, 0, 0, 0, 0, 0, 0]
}

fn frag6(nh: u8, offset: u16) -> Vec<u8> {
    let mut v = vec![nh, 0, 0, 0, 0, 0, 0, 1];
    v[2..4].copy_from_slice(&(offset << 3).to_be_bytes());
    v
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn flow(frame: &[u8]) -> Flow {
    match parse_frame(frame) {
        Ok(Parsed::Flow(f)) => f,
        other => panic!("expected a flow, got {other:?}"),
    }
}

#[test]
fn ipv4_variants() {
    let tcp = cat(&[&eth(&[], 0x0800), &v4(6, 0, 0, &l4(6, 1234, 80))]);
    let f = flow(&tcp);
    assert_eq!(f.key, FlowKey::v4(S4, D4, 1234, 80, 6));
    assert_eq!(f.len as usize, tcp.len());
    assert!(!f.fragment);
    let udp = cat(&[&eth(&[], 0x0800), &v4(17, 0, 8, &l4(17, 53, 5353))]);
    assert_eq!(flow(&udp).key, FlowKey::v4(S4, D4, 53, 5353, 17));
    let sctp = cat(&[&eth(&[], 0x0800), &v4(132, 0, 0, &l4(132, 9, 10))]);
    assert_eq!(flow(&sctp).key, FlowKey::v4(S4, D4, 9, 10, 132));
    let icmp = cat(&[&eth(&[], 0x0800), &v4(1, 0, 0, &l4(1, 8, 3))]);
    assert_eq!(flow(&icmp).key, FlowKey::v4(S4, D4, 8, 3, 1));
    let gre = cat(&[&eth(&[], 0x0800), &v4(47, 0, 0, &[1, 2])]);
    assert_eq!(flow(&gre).key, FlowKey::v4(S4, D4, 0, 0, 47));
    // Ethernet padding after the IP total length is ignored, and counted in the weight.
    let mut padded = cat(&[&eth(&[], 0x0800), &v4(17, 0, 0, &l4(17, 1, 2))]);
    padded.extend_from_slice(&[0; 18]);
    let f = flow(&padded);
    assert_eq!(f.key, FlowKey::v4(S4, D4, 1, 2, 17));
    assert_eq!(f.len as usize, padded.len());
}

#[test]
fn ipv4_fragments() {
    // First fragment (MF set, offset 0) carries ports.
    let first = cat(&[&eth(&[], 0x0800), &v4(6, 0x2000, 0, &l4(6, 1, 2))]);
    assert_eq!(flow(&first).key, FlowKey::v4(S4, D4, 1, 2, 6));
    // Non-first: ports 0, even with a too-short payload for TCP.
    let later = cat(&[&eth(&[], 0x0800), &v4(6, 185, 0, &[0; 4])]);
    let f = flow(&later);
    assert_eq!(f.key, FlowKey::v4(S4, D4, 0, 0, 6));
    assert!(f.fragment);
}

#[test]
fn vlan_and_qinq() {
    let body = v4(17, 0, 0, &l4(17, 7, 8));
    let want = FlowKey::v4(S4, D4, 7, 8, 17);
    assert_eq!(flow(&cat(&[&eth(&[0x8100], 0x0800), &body])).key, want);
    assert_eq!(
        flow(&cat(&[&eth(&[0x88a8, 0x8100], 0x0800), &body])).key,
        want
    );
    // Lone S-tag and 802.1Q-in-802.1Q are not accepted link layers: not IP.
    assert_eq!(
        parse_frame(&cat(&[&eth(&[0x88a8], 0x0800), &body])),
        Ok(Parsed::NotIp)
    );
    assert_eq!(
        parse_frame(&cat(&[&eth(&[0x8100, 0x8100], 0x0800), &body])),
        Ok(Parsed::NotIp)
    );
    // Cut tags are runts.
    let mut cut = eth(&[], 0x8100);
    cut.extend_from_slice(&[0, 5]);
    assert_eq!(parse_frame(&cut), Err(ParseError::Runt));
    let mut cut2 = eth(&[0x88a8], 0x8100);
    cut2.extend_from_slice(&[0, 5, 0x08]);
    assert_eq!(parse_frame(&cut2), Err(ParseError::Runt));
}

#[test]
fn not_ip() {
    let mut arp = eth(&[], 0x0806);
    arp.extend_from_slice(&[0; 28]);
    assert_eq!(parse_frame(&arp), Ok(Parsed::NotIp));
    let lldp = cat(&[&eth(&[0x8100], 0x88cc), &[0; 30]]);
    assert_eq!(parse_frame(&lldp), Ok(Parsed::NotIp));
}

#[test]
fn ipv6_variants() {
    let tcp = cat(&[&eth(&[], 0x86dd), &v6(6, &l4(6, 443, 5555))]);
    assert_eq!(flow(&tcp).key, FlowKey::v6(S6, D6, 443, 5555, 6));
    let icmp = cat(&[&eth(&[0x8100], 0x86dd), &v6(58, &l4(58, 128, 0))]);
    assert_eq!(flow(&icmp).key, FlowKey::v6(S6, D6, 128, 0, 58));
    // Extension chain hop-by-hop → routing → destination options → fragment(first) → UDP.
    let chain = cat(&[
        &ext(43),
        &ext(60),
        &ext(44),
        &frag6(17, 0),
        &l4(17, 1000, 2000),
    ]);
    let f = flow(&cat(&[&eth(&[], 0x86dd), &v6(0, &chain)]));
    assert_eq!(f.key, FlowKey::v6(S6, D6, 1000, 2000, 17));
    assert!(!f.fragment);
    // A longer extension (len field 1 → 16 bytes).
    let mut long = ext(17);
    long[1] = 1;
    long.extend_from_slice(&[0; 8]);
    let f = flow(&cat(&[
        &eth(&[], 0x86dd),
        &v6(60, &cat(&[&long, &l4(17, 3, 4)])),
    ]));
    assert_eq!(f.key, FlowKey::v6(S6, D6, 3, 4, 17));
    // Non-first fragment: ports 0, proto = fragment's next header.
    let f = flow(&cat(&[
        &eth(&[], 0x86dd),
        &v6(44, &cat(&[&frag6(6, 100), &[0; 4]])),
    ]));
    assert_eq!(f.key, FlowKey::v6(S6, D6, 0, 0, 6));
    assert!(f.fragment);
    // AH / ESP end the walk with ports 0.
    let f = flow(&cat(&[
        &eth(&[], 0x86dd),
        &v6(0, &cat(&[&ext(51), &[0; 12]])),
    ]));
    assert_eq!(f.key, FlowKey::v6(S6, D6, 0, 0, 51));
    let f = flow(&cat(&[&eth(&[], 0x86dd), &v6(50, &[0; 16])]));
    assert_eq!(f.key, FlowKey::v6(S6, D6, 0, 0, 50));
    // Exactly 8 extension headers are fine.
    let mut eight = Vec::new();
    for _ in 0..7 {
        eight.extend(ext(60));
    }
    eight.extend(ext(17));
    eight.extend(l4(17, 5, 6));
    assert_eq!(
        flow(&cat(&[&eth(&[], 0x86dd), &v6(60, &eight)])).key,
        FlowKey::v6(S6, D6, 5, 6, 17)
    );
}

fn err(frame: &[u8]) -> ParseError {
    parse_frame(frame).expect_err("expected malformed")
}

#[test]
fn malformed_table() {
    let e4 = eth(&[], 0x0800);
    let e6 = eth(&[], 0x86dd);
    let good4 = v4(6, 0, 0, &l4(6, 1, 2));
    assert_eq!(err(&[]), ParseError::Runt);
    assert_eq!(err(&[0; 13]), ParseError::Runt);
    assert_eq!(err(&cat(&[&e4, &good4[..19]])), ParseError::Ipv4Truncated);
    let mut bad = good4.clone();
    bad[0] = 0x44;
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::Ipv4BadIhl);
    let mut bad = good4.clone();
    bad[0] = 0x4f; // 60-byte header, 40 bytes present
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::Ipv4Truncated);
    let mut bad = good4.clone();
    bad[2..4].copy_from_slice(&0u16.to_be_bytes());
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::Ipv4Truncated);
    let mut bad = good4.clone();
    bad[2..4].copy_from_slice(&19u16.to_be_bytes());
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::Ipv4Truncated);
    let mut bad = good4.clone();
    bad[2..4].copy_from_slice(&41u16.to_be_bytes());
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::Ipv4TotalLength);
    let mut bad = good4.clone();
    bad[0] = 0x65;
    assert_eq!(err(&cat(&[&e4, &bad])), ParseError::VersionMismatch);
    // Transport must fit in the declared length: padding does not count.
    let mut short = v4(6, 0, 0, &[0; 19]);
    short.extend_from_slice(&[0; 10]);
    assert_eq!(err(&cat(&[&e4, &short])), ParseError::TransportTruncated);
    assert_eq!(
        err(&cat(&[&e4, &v4(17, 0, 0, &[0; 7])])),
        ParseError::TransportTruncated
    );
    assert_eq!(
        err(&cat(&[&e4, &v4(132, 0, 0, &[0; 11])])),
        ParseError::TransportTruncated
    );
    assert_eq!(
        err(&cat(&[&e4, &v4(1, 0, 0, &[0; 7])])),
        ParseError::TransportTruncated
    );

    let good6 = v6(17, &l4(17, 1, 2));
    assert_eq!(err(&cat(&[&e6, &good6[..39]])), ParseError::Ipv6Truncated);
    let mut bad = good6.clone();
    bad[0] = 0x45;
    assert_eq!(err(&cat(&[&e6, &bad])), ParseError::VersionMismatch);
    let mut bad = good6.clone();
    bad[4..6].copy_from_slice(&9u16.to_be_bytes());
    assert_eq!(err(&cat(&[&e6, &bad])), ParseError::Ipv6PayloadLength);
    assert_eq!(
        err(&cat(&[&e6, &v6(0, &[17])])),
        ParseError::Ipv6ExtensionTruncated
    );
    assert_eq!(
        err(&cat(&[&e6, &v6(0, &[17, 0, 0, 0])])),
        ParseError::Ipv6ExtensionTruncated
    );
    assert_eq!(
        err(&cat(&[&e6, &v6(44, &[17, 0, 0])])),
        ParseError::Ipv6ExtensionTruncated
    );
    let mut nine = Vec::new();
    for _ in 0..8 {
        nine.extend(ext(60));
    }
    nine.extend(ext(17));
    nine.extend(l4(17, 5, 6));
    assert_eq!(
        err(&cat(&[&e6, &v6(60, &nine)])),
        ParseError::Ipv6TooManyExtensions
    );
    assert_eq!(
        err(&cat(&[&e6, &v6(58, &[0; 7])])),
        ParseError::TransportTruncated
    );
    assert_eq!(
        err(&cat(&[&e6, &v6(6, &[0; 19])])),
        ParseError::TransportTruncated
    );
}

#[test]
fn error_index_is_dense() {
    for (i, e) in ParseError::ALL.iter().enumerate() {
        assert_eq!(e.index(), i);
        assert!(!e.to_string().ends_with('.'));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, rng_seed: proptest::test_runner::RngSeed::Fixed(std::env::var("LOXO_PROPTEST_SEED").map_or(6, |s| s.trim().parse().expect("LOXO_PROPTEST_SEED: a decimal u64"))), ..ProptestConfig::default() })]
    /// Random bytes never panic; an IP flow's weight is the slice length.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(Parsed::Flow(f)) = parse_frame(&bytes) {
            prop_assert_eq!(f.len as usize, bytes.len());
        }
    }

    /// Random bytes behind a valid Ethernet/IP prefix (more paths reached) never panic.
    #[test]
    fn random_ip_payload_never_panic(
        tags in 0usize..3,
        v6hdr in any::<bool>(),
        tail in proptest::collection::vec(any::<u8>(), 0..160),
    ) {
        let tagset: &[u16] = match tags { 0 => &[], 1 => &[0x8100], _ => &[0x88a8, 0x8100] };
        let mut f = eth(tagset, if v6hdr { 0x86dd } else { 0x0800 });
        let mut t = tail;
        if let Some(b) = t.first_mut() {
            *b = if v6hdr { 0x60 } else { 0x40 | (*b & 0x0f) };
        }
        f.extend(t);
        let _ = parse_frame(&f);
    }
}
