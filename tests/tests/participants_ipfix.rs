//! `loxo top --ipfix --ipfix-participants` read by Wireshark's `cflow` dissector
//! (issue 28 item 3): a capture of three 32 768-frame epochs — `loxo gen`'s vscan
//! (an IPv4 and an IPv6 vertical scan), ddos-multi (two IPv4 and two IPv6 victims)
//! and hscan (four IPv4 horizontal scanners), regenerated in-process — goes through
//! `loxo top` with its IPFIX export to a UDP socket of the test; the
//! datagrams, written to a pcap as Ethernet/IPv4/UDP frames, are decoded by `tshark
//! -V`, and
//! * tshark flags nothing (no malformed packet, no expert info of any severity:
//!   its IPFIX sequence analysis counts the participant records too);
//! * every scanner and victim of `loxo top`'s JSON (`scanners`, `victims`) is in
//!   the export exactly once, in its template (259–264) — a horizontal scanner's
//!   source with `distinctCountOfDestinationIPv4Address` (381), a victim with
//!   `distinctCountOfSourceIPv4Address` (380) or `…IPv6Address` (382), a vertical
//!   scan's source and destination with loxo's `loxoDistinctDestinationPorts` —
//!   and tshark's distinct count is the JSON's estimate, rounded; loxo's own
//!   elements (bounds, σ, flags, epoch), which tshark shows as bytes of enterprise
//!   32473, equal the JSON's bounds and epoch;
//! * the export holds nothing else but the epochs' flow and epoch records.
//!
//! A missing tshark fails the test unless `LOXO_SKIP_COLLECTORS=1`
//! (`loxo_tests::collectors`; `.ci/run` installs it). Runs the `loxo` binary
//! `cargo test --workspace` builds (`loxo_tests::demo::loxo`); about 2 s.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::net::{IpAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use loxo_cli::trace::{generate_with_truth, TraceConfig, TrafficClass};
use pcap_file::pcap::{PcapPacket, PcapWriter};

const EPOCH: u64 = 32_768;
const SEED: &str = "2828282828282828a5a5a5a5a5a5a5a5";

/// Whether tshark runs; when it does not, fail — or, under `LOXO_SKIP_COLLECTORS=1`,
/// print a `SKIPPED` line and return false.
fn tshark_available() -> bool {
    match Command::new("tshark")
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => true,
        Err(e) => {
            loxo_tests::collectors::missing(
                "tshark",
                &e.to_string(),
                "Debian: apt-get install tshark",
                None,
            );
            false
        }
    }
}

/// The three epochs' capture.
fn capture(path: &Path) {
    let mut w = PcapWriter::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    let mut n = 0u64;
    for (i, class) in [
        TrafficClass::VScan,
        TrafficClass::DdosMulti,
        TrafficClass::HScan,
    ]
    .into_iter()
    .enumerate()
    {
        let cfg = TraceConfig {
            packets: EPOCH,
            flood: class.default_flood(),
            class,
            seed: 2828 + i as u64,
            ..TraceConfig::default()
        };
        generate_with_truth(&cfg, |f, _| {
            n += 1;
            let at = Duration::from_micros(n);
            w.write_packet(&PcapPacket::new(at, f.len() as u32, f))
                .map(drop)
        })
        .unwrap();
    }
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One data record as `tshark -V` shows it: its set's template ID and its fields
/// (`SrcAddr`, `Distinct Count Of …`, and loxo's enterprise elements as `pen:N`
/// with their hex bytes).
#[derive(Debug, Default, Clone)]
struct Shown {
    template: u16,
    fields: BTreeMap<String, String>,
}

impl Shown {
    fn get(&self, k: &str) -> &str {
        self.fields.get(k).map_or("", String::as_str)
    }

    /// An enterprise element's value as an unsigned integer (big-endian bytes).
    fn ours(&self, id: u16) -> u64 {
        self.get(&format!("pen:{id}"))
            .split_whitespace()
            .fold(0, |v, b| v << 8 | u64::from_str_radix(b, 16).unwrap())
    }
}

/// The data records of `tshark -V`'s text, by set.
fn shown(text: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    let (mut set, mut cur): (u16, Option<Shown>) = (0, None);
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Frame ") || t.starts_with("Set ") || t.starts_with("Flow ") {
            out.extend(cur.take());
        }
        if let Some(rest) = t.strip_prefix("Set ") {
            set = rest
                .split_once("[id=")
                .and_then(|(_, r)| r.split_once(']'))
                .map_or(0, |(id, _)| id.parse().unwrap());
        } else if t.starts_with("Flow ") && set >= 256 {
            cur = Some(Shown {
                template: set,
                ..Shown::default()
            });
        } else if let Some(c) = cur.as_mut() {
            if let Some(rest) = t.strip_prefix("Enterprise Private entry: ") {
                // "(Example Enterprise …) Type 25: Value (hex bytes): 00 00 …"
                let (_, r) = rest.split_once(") Type ").unwrap();
                let (id, r) = r.split_once(": Value (hex bytes): ").unwrap();
                c.fields.insert(format!("pen:{id}"), r.to_string());
            } else if let Some((k, v)) = t.split_once(": ") {
                c.fields.insert(k.to_string(), v.to_string());
            }
        }
    }
    out.extend(cur);
    out
}

/// A participant as `loxo top`'s JSON lists it: (epoch, template, address,
/// destination, estimate, lower, upper, σ, saturated).
type Row = (u64, u16, String, String, u64, u64, u64, u64, bool);

fn json_rows(json: &serde_json::Value) -> Vec<Row> {
    let mut rows = Vec::new();
    for e in json["epochs"].as_array().unwrap() {
        let epoch = e["epoch"].as_u64().unwrap();
        for (list, victim) in [(&e["scanners"], false), (&e["victims"], true)] {
            for p in list.as_array().unwrap() {
                let text = |k: &str| p[k].as_str().unwrap_or("").to_string();
                let (address, destination) = if victim {
                    (text("destination"), String::new())
                } else {
                    (text("source"), text("destination"))
                };
                let v6 = address.contains(':');
                let template = match (victim, p["kind"].as_str(), v6) {
                    (true, _, false) => 261,
                    (true, _, true) => 262,
                    (false, Some("horizontal"), false) => 259,
                    (false, Some("horizontal"), true) => 260,
                    (false, Some("vertical"), false) => 263,
                    (false, Some("vertical"), true) => 264,
                    other => panic!("{other:?}: {p}"),
                };
                let n = |k: &str| p[k].as_f64().unwrap() as u64;
                rows.push((
                    epoch,
                    template,
                    address,
                    destination,
                    n("estimate"),
                    n("lower"),
                    n("upper"),
                    p["sigma"].as_f64().unwrap().to_bits(),
                    p["saturated"].as_bool().unwrap(),
                ));
            }
        }
    }
    rows.sort();
    rows
}

/// The participant records tshark decoded, as [`Row`]s; the distinct counts are
/// read from IANA's elements by their Wireshark names.
fn tshark_rows(records: &[Shown]) -> Vec<Row> {
    let mut rows: Vec<Row> = records
        .iter()
        .filter(|r| (259..=264).contains(&r.template))
        .map(|r| {
            let count = match r.template {
                259 => r.get("Distinct Count Of Destination Ipv4 Address"),
                260 => r.get("Distinct Count Of Destination Ipv6 Address"),
                261 => r.get("Distinct Count Of Source Ipv4 Address"),
                262 => r.get("Distinct Count Of Source Ipv6 Address"),
                // loxoDistinctDestinationPorts: no IANA element.
                _ => "",
            };
            let count = if count.is_empty() {
                r.ours(24)
            } else {
                count.parse().unwrap()
            };
            let (address, destination) = match r.template {
                261 | 262 => (r.get("DstAddr").to_string(), String::new()),
                263 | 264 => (r.get("SrcAddr").to_string(), r.get("DstAddr").to_string()),
                _ => (r.get("SrcAddr").to_string(), String::new()),
            };
            // Through IpAddr: tshark and Rust may write IPv6 differently.
            let norm = |a: String| {
                if a.is_empty() {
                    a
                } else {
                    a.parse::<IpAddr>().unwrap().to_string()
                }
            };
            (
                r.ours(6),
                r.template,
                norm(address),
                norm(destination),
                count,
                r.ours(25),
                r.ours(26),
                r.ours(27),
                r.ours(28) & 1 != 0,
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn tshark_decodes_the_participants_loxo_top_exports() {
    if !tshark_available() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("participants-ipfix");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("attacks.pcap");
    capture(&file);
    let loxo = loxo_tests::demo::loxo();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let out = Command::new(&loxo)
        .args(["top", file.to_str().unwrap(), "--json", "--seed", SEED])
        .args(["--epoch", &EPOCH.to_string()])
        .args([
            "--ipfix",
            &format!("127.0.0.1:{port}"),
            "--ipfix-participants",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut datagrams = Vec::new();
    let mut buf = vec![0u8; 65_536];
    while let Ok(n) = socket.recv(&mut buf) {
        datagrams.push(buf[..n].to_vec());
    }
    let ipfix = &json["ipfix"];
    assert_eq!(
        datagrams.len() as u64,
        ipfix["messages"].as_u64().unwrap(),
        "datagrams lost on loopback"
    );
    let pcap = dir.join("ipfix.pcap");
    loxo_cli::udp_pcap::write_udp_datagrams(&datagrams, port, &pcap).unwrap();
    let decode = format!("udp.port=={port},cflow");
    // Nothing malformed, no expert info of any severity (Wireshark's IPFIX sequence
    // analysis included: it counts every data record).
    let flagged = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-d", &decode, "-Y", "_ws.malformed || _ws.expert"])
        .output()
        .unwrap();
    assert!(flagged.status.success(), "{}", stderr(&flagged));
    let flagged = String::from_utf8_lossy(&flagged.stdout);
    assert!(flagged.trim().is_empty(), "tshark flags:\n{flagged}");
    let verbose = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-d", &decode, "-V"])
        .output()
        .unwrap();
    assert!(verbose.status.success(), "{}", stderr(&verbose));
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(!text.contains("Malformed"), "{text}");
    let records = shown(&text);

    let want = json_rows(&json);
    let got = tshark_rows(&records);
    println!(
        "loxo top: {} epochs, {} IPFIX messages ({} bytes), {} flow, {} epoch and {} participant records; tshark decoded {} records",
        json["epochs"].as_array().unwrap().len(),
        ipfix["messages"],
        ipfix["bytes"],
        ipfix["flow_records"],
        ipfix["epoch_records"],
        ipfix["participant_records"],
        records.len()
    );
    for r in &got {
        println!("  {r:?}");
    }
    assert_eq!(got, want, "tshark's participants differ from loxo top's");
    // Every role and family the trace has: IPv4 and IPv6 vertical scans and victims,
    // IPv4 horizontal scanners.
    for t in [259, 261, 262, 263, 264] {
        assert!(got.iter().any(|r| r.1 == t), "no record of template {t}");
    }
    assert_eq!(
        got.len() as u64,
        ipfix["participant_records"].as_u64().unwrap()
    );
    // The rest: the flows and the epoch records, nothing else.
    let count = |ids: &[u16]| records.iter().filter(|r| ids.contains(&r.template)).count();
    assert_eq!(
        count(&[256, 257]) as u64,
        ipfix["flow_records"].as_u64().unwrap()
    );
    assert_eq!(
        count(&[258]) as u64,
        ipfix["epoch_records"].as_u64().unwrap()
    );
    assert_eq!(records.len(), count(&[256, 257, 258]) + got.len());
}
