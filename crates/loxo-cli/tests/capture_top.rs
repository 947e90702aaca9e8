//! `loxo top` on real-world captures (issue 18 item 6, issue 15 item 5): snapped pcaps
//! (`tcpdump -s 64 / 96 / 128 / 65535`), pcapng files with several sections,
//! interfaces and link types (Ethernet, raw IP, Linux cooked SLL / SLL2, BSD
//! loopback), a link type loxo does not read, a truncated file and bad records. Every
//! capture is compared with an Ethernet pcap of the same frames: the figures of every
//! epoch must be the same; a capture that stops early must give the results of the
//! records before the stop, a warning naming the record, and a non-zero exit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod capture_util;

use std::io::Write;

use capture_util::{
    dir, epochs, ethernet_pcap, frames, headers_cut, snapped, spread, stderr, top, whole,
    write_pcap, write_pcapng, Rec, Section,
};
use pcap_file::{DataLink, Endianness, TsResolution};

/// Whether the key rules need a byte of the (Ethernet) record's headers past its
/// captured bytes: the test's own oracle (`capture_util::headers_cut`), not
/// `loxo_flow::parse_frame_captured`, which `loxo top` runs.
fn is_snapped((data, orig): &Rec) -> bool {
    headers_cut(data, *orig as usize)
}

#[test]
fn top_reads_pcaps_at_any_snap_length() {
    let d = dir("capture-top-snap");
    let frames = frames(20_000, 0.3, 5);
    let forms = [
        (Endianness::Little, TsResolution::MicroSecond),
        (Endianness::Big, TsResolution::NanoSecond),
    ];
    for (i, snap) in [64usize, 96, 128, 65_535].into_iter().enumerate() {
        let records = snapped(&frames, snap);
        let cut = records
            .iter()
            .filter(|(d, o)| d.len() < *o as usize)
            .count();
        let lost = records.iter().filter(|r| is_snapped(r)).count() as u64;
        let file = d.join(format!("snap-{snap}.pcap"));
        let (endianness, ts) = forms[i % 2];
        write_pcap(
            &file,
            DataLink::ETHERNET,
            snap as u32,
            endianness,
            ts,
            &records,
        );
        // The reference: the whole frames the snap length left readable.
        let reference = d.join(format!("reference-{snap}.pcap"));
        let kept: Vec<Rec> = whole(&frames)
            .into_iter()
            .zip(&records)
            .filter(|(_, r)| !is_snapped(r))
            .map(|(w, _)| w)
            .collect();
        ethernet_pcap(&reference, 65_535, &kept);
        let (out, json) = top(&file, &["--epoch", "5000"]);
        assert!(out.status.success(), "snap {snap}: {}", stderr(&out));
        let json = json.expect("json");
        let (ref_out, ref_json) = top(&reference, &["--epoch", "5000"]);
        assert!(ref_out.status.success());
        assert_eq!(epochs(&json), epochs(&ref_json.unwrap()), "snap {snap}");
        let c = &json["capture"];
        assert_eq!(c["format"], "pcap");
        assert_eq!(c["records"], frames.len() as u64);
        assert_eq!(c["complete"], true);
        assert_eq!(c["snapped"], lost, "snap {snap}");
        let per_epoch: u64 = json["epochs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["snapped"].as_u64().unwrap())
            .sum();
        assert_eq!(per_epoch, lost);
        println!(
            "snap {snap}: {cut} of {} frames cut, {lost} with headers cut",
            frames.len()
        );
        if snap < 65_535 {
            assert!(cut > frames.len() / 2, "snap {snap}");
        }
        if snap == 64 {
            assert!(lost > 0);
            assert!(c["snap_length_needed"].as_u64().unwrap() > 64);
            let text =
                capture_util::loxo(&["top", file.to_str().unwrap(), "--seed", capture_util::SEED]);
            let text = String::from_utf8_lossy(&text.stdout);
            assert!(text.contains("cut by the snap length"), "{text}");
            assert!(text.contains("need a snap length of at least"), "{text}");
        }
    }
}

#[test]
fn top_reads_pcapng_with_several_interfaces_and_link_types() {
    let d = dir("capture-top-pcapng");
    let frames = frames(24_000, 0.3, 6);
    let layout: [&[(DataLink, u32)]; 2] = [
        &[
            (DataLink::ETHERNET, 0),
            (DataLink::RAW, 96),
            (DataLink::LINUX_SLL, 128),
            (DataLink::LINUX_SLL2, 0),
            (DataLink::NULL, 64),
        ],
        &[
            (DataLink::ETHERNET, 64),
            (DataLink::LINUX_SLL, 0),
            (DataLink::IPV4, 0),
            (DataLink::IPV6, 80),
        ],
    ];
    let (sections, reference) = spread(&frames, &layout);
    for (s, l) in sections.iter().zip(&layout) {
        for i in 0..l.len() {
            let n = s.packets.iter().filter(|(x, _)| *x as usize == i).count();
            assert!(n > 500, "interface {i} of {l:?} has {n} packets");
        }
    }
    let file = d.join("mixed.pcapng");
    write_pcapng(&file, &sections, Endianness::Little);
    let ref_file = d.join("mixed-reference.pcap");
    ethernet_pcap(&ref_file, 65_535, &reference);
    for extra in [&["--epoch", "7000"][..], &["--packets"][..]] {
        let (out, json) = top(&file, extra);
        assert!(out.status.success(), "{}", stderr(&out));
        let json = json.unwrap();
        let (_, ref_json) = top(&ref_file, extra);
        assert_eq!(epochs(&json), epochs(&ref_json.unwrap()), "{extra:?}");
        assert_eq!(json["capture"]["format"], "pcapng");
        assert_eq!(json["capture"]["records"], frames.len() as u64);
        let lost = reference.iter().filter(|r| is_snapped(r)).count() as u64;
        assert!(lost > 0);
        assert_eq!(json["capture"]["snapped"], lost, "{extra:?}");
    }

    // Whole frames on every interface: by packets, every figure but the bytes is the
    // original Ethernet trace's (the link layers differ in length, not in content).
    let layout_whole: Vec<Vec<(DataLink, u32)>> = layout
        .iter()
        .map(|l| l.iter().map(|&(k, _)| (k, 0)).collect())
        .collect();
    let layout_whole: Vec<&[(DataLink, u32)]> = layout_whole.iter().map(Vec::as_slice).collect();
    let (sections, _) = spread(&frames, &layout_whole);
    let file = d.join("mixed-whole.pcapng");
    write_pcapng(&file, &sections, Endianness::Big);
    let original = d.join("original.pcap");
    ethernet_pcap(&original, 65_535, &whole(&frames));
    let (out, json) = top(&file, &["--packets"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, orig_json) = top(&original, &["--packets"]);
    let (a, b) = (
        &json.unwrap()["epochs"][0],
        &orig_json.unwrap()["epochs"][0],
    );
    for k in [
        "frames",
        "packets",
        "fragments",
        "not_ip",
        "errors",
        "distinct_flows",
        "distinct_sources",
        "new_flows",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    let keys = |e: &serde_json::Value| -> Vec<(String, u64)> {
        e["exact_elephants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["key"].as_str().unwrap().to_owned(),
                    x["packets"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert!(!keys(a).is_empty());
    assert_eq!(keys(a), keys(b));
}

/// Runs `top` on `file`, which stops at record `at` (1-based); the results must be
/// those of the `at - 1` records before it (`before`), with a warning naming the
/// record (`says`) and a non-zero exit.
fn stops_at(file: &std::path::Path, before: &[Rec], at: u64, says: &str) {
    let d = file.parent().unwrap();
    let reference = d.join(format!(
        "{}-before.pcap",
        file.file_stem().unwrap().to_str().unwrap()
    ));
    ethernet_pcap(&reference, 65_535, before);
    let (out, json) = top(file, &["--epoch", "700"]);
    assert!(
        !out.status.success(),
        "{}: must exit non-zero",
        file.display()
    );
    let err = stderr(&out);
    assert!(err.contains("warning"), "{err}");
    assert!(err.contains(&format!("record {at}")), "{err}");
    assert!(err.contains(says), "{err}");
    let json = json.expect("results are printed");
    assert_eq!(json["capture"]["complete"], false);
    assert_eq!(json["capture"]["records"], at - 1);
    let (_, ref_json) = top(&reference, &["--epoch", "700"]);
    let e = epochs(&json);
    assert_eq!(e, epochs(&ref_json.unwrap()), "{}", file.display());
    if at > 1 {
        assert!(!e.as_array().unwrap().is_empty());
    }
}

#[test]
fn a_truncated_capture_gives_the_results_of_its_complete_records() {
    let d = dir("capture-top-truncated");
    let frames = frames(3_000, 0.0, 8);
    let records = snapped(&frames, 128);
    let file = d.join("full.pcap");
    ethernet_pcap(&file, 128, &records);
    let bytes = std::fs::read(&file).unwrap();
    let end_of = |n: usize| {
        24 + records[..n]
            .iter()
            .map(|(d, _)| 16 + d.len())
            .sum::<usize>()
    };
    // Cut inside record 2001's data, and inside its header.
    for (name, cut) in [
        ("data", end_of(2000) + 16 + 5),
        ("header", end_of(2000) + 9),
    ] {
        let t = d.join(format!("cut-{name}.pcap"));
        std::fs::write(&t, &bytes[..cut]).unwrap();
        stops_at(&t, &records[..2000], 2001, "truncated");
    }
    // pcapng: the last block cut.
    let s = Section {
        interfaces: vec![(DataLink::ETHERNET, 128)],
        packets: records.iter().cloned().map(|r| (0, r)).collect(),
    };
    let ng = d.join("full.pcapng");
    write_pcapng(&ng, &[s], Endianness::Little);
    let bytes = std::fs::read(&ng).unwrap();
    let t = d.join("cut.pcapng");
    std::fs::write(&t, &bytes[..bytes.len() - 7]).unwrap();
    stops_at(&t, &records[..2999], 3000, "truncated");
}

/// A classic little-endian pcap header (snap length 65 535, `linktype`).
fn pcap_header(linktype: u32) -> Vec<u8> {
    let mut h = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    h.extend_from_slice(&65_535u32.to_le_bytes());
    h.extend_from_slice(&linktype.to_le_bytes());
    h
}

fn pcap_record(out: &mut Vec<u8>, data: &[u8], incl: u32, orig: u32) {
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&incl.to_le_bytes());
    out.extend_from_slice(&orig.to_le_bytes());
    out.extend_from_slice(data);
}

#[test]
fn a_bad_record_gives_the_results_before_it() {
    let d = dir("capture-top-bad");
    let frames = frames(1_000, 0.0, 9);
    let records = whole(&frames);
    // Captured length above the original length; an original length no frame has.
    for (name, orig, says) in [
        ("incl-above-orig", 10, "exceeds its original length"),
        ("huge-orig", 1 << 30, "the largest frame loxo reads"),
    ] {
        let mut b = pcap_header(1);
        for (data, o) in &records[..500] {
            pcap_record(&mut b, data, data.len() as u32, *o);
        }
        let bad = &records[500].0;
        pcap_record(&mut b, bad, bad.len() as u32, orig);
        for (data, o) in &records[501..] {
            pcap_record(&mut b, data, data.len() as u32, *o);
        }
        let file = d.join(format!("{name}.pcap"));
        std::fs::File::create(&file).unwrap().write_all(&b).unwrap();
        stops_at(&file, &records[..500], 501, says);
    }
    // pcapng: a packet on an interface the section never declared.
    let file = d.join("undeclared.pcapng");
    let mut packets: Vec<(u32, Rec)> = records[..300].iter().cloned().map(|r| (0, r)).collect();
    packets.push((1, records[300].clone()));
    let s = Section {
        interfaces: vec![(DataLink::ETHERNET, 0)],
        packets,
    };
    // pcap-file's writer refuses the undeclared interface: declare it in a writer-only
    // copy of the section, then drop its block from the file.
    let mut s2 = Section {
        interfaces: vec![(DataLink::ETHERNET, 0), (DataLink::ETHERNET, 0)],
        packets: s.packets.clone(),
    };
    write_pcapng(&file, std::slice::from_mut(&mut s2), Endianness::Little);
    let bytes = std::fs::read(&file).unwrap();
    // Section header (28 bytes) then two 20-byte interface blocks: drop the second.
    assert_eq!(&bytes[28..32], &1u32.to_le_bytes());
    assert_eq!(&bytes[48..52], &1u32.to_le_bytes());
    let cut = [&bytes[..48], &bytes[68..]].concat();
    std::fs::write(&file, cut).unwrap();
    stops_at(&file, &records[..300], 301, "interface 1");
}

#[test]
fn an_unsupported_link_type_is_refused_never_misread() {
    let d = dir("capture-top-link");
    let frames = frames(1_500, 0.0, 10);
    let records = whole(&frames);
    // pcapng: 1 000 Ethernet packets, then one on an 802.11 interface.
    let mut packets: Vec<(u32, Rec)> = records[..1000].iter().cloned().map(|r| (0, r)).collect();
    packets.push((1, records[1000].clone()));
    packets.extend(records[1001..].iter().cloned().map(|r| (0, r)));
    let s = Section {
        interfaces: vec![(DataLink::ETHERNET, 0), (DataLink::IEEE802_11, 0)],
        packets,
    };
    let file = d.join("wifi.pcapng");
    write_pcapng(&file, &[s], Endianness::Little);
    stops_at(&file, &records[..1000], 1001, "IEEE802_11 (105)");
    // A classic pcap of that link type: refused at its first record, nothing counted.
    let file = d.join("wifi.pcap");
    write_pcap(
        &file,
        DataLink::IEEE802_11,
        65_535,
        Endianness::Little,
        TsResolution::MicroSecond,
        &records,
    );
    stops_at(&file, &[], 1, "which loxo does not read");
}

#[test]
fn not_a_capture_is_a_clear_error() {
    let d = dir("capture-top-garbage");
    for (name, bytes) in [
        ("empty", &b""[..]),
        ("short", &b"\xd4\xc3"[..]),
        ("text", &b"this is not a capture at all, not even close"[..]),
    ] {
        let file = d.join(name);
        std::fs::write(&file, bytes).unwrap();
        let (out, _) = top(&file, &[]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("not a pcap or pcapng file"), "{name}: {err}");
    }
}
