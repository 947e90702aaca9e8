//! Shared by the IPFIX interop tests: the outside collectors (nfdump's `nfcapd` /
//! `nfdump`, pmacct's `nfacctd`, Wireshark's `tshark`) started, stopped and read back
//! as one listing, so that every test compares the same shape.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::net::{IpAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A flow's key as a collector lists it: (source, destination, source port,
/// destination port, protocol); ICMP/ICMPv6 keys hold (type, code) as loxo's do.
pub type Key = (IpAddr, IpAddr, u16, u16, u8);

/// One flow as a collector lists it: key → (packets, bytes) of each record.
pub type Listing = BTreeMap<Key, Vec<(u64, u64)>>;

/// Whether `bin` runs; when it does not, fail — or, under `LOXO_SKIP_COLLECTORS=1`,
/// print a `SKIPPED` line and return false.
pub fn available(bin: &str, arg: &str) -> bool {
    match Command::new(bin)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => true,
        Err(e) => {
            loxo_tests::collectors::missing(
                bin,
                &e.to_string(),
                "Debian: apt-get install nfdump tshark pmacct",
                None,
            );
            false
        }
    }
}

/// A UDP port free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something holds UDP `port` on 127.0.0.1.
fn wait_bound(port: u16, what: &str) {
    let start = Instant::now();
    while UdpSocket::bind(("127.0.0.1", port)).is_ok() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what} did not bind"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// nfcapd listening on 127.0.0.1:`port`, writing into `d`.
pub fn nfcapd(port: u16, d: &Path) -> Child {
    // nfdump 1.7 names the directory option -w (older releases: -l).
    let help = Command::new("nfcapd").arg("-h").output().unwrap();
    let text = String::from_utf8_lossy(&help.stdout) + String::from_utf8_lossy(&help.stderr);
    let flag = if text.contains("-w flowdir") || text.contains("-w <") {
        "-w"
    } else {
        "-l"
    };
    let child = Command::new("nfcapd")
        .args([
            "-b",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "3600",
            flag,
        ])
        .arg(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_bound(port, "nfcapd");
    child
}

/// Stops nfcapd with SIGTERM (it writes its file on the way out).
pub fn stop(child: Child) {
    stop_with(child, "-TERM");
}

/// Stops nfacctd with SIGINT (it ignores SIGTERM; SIGINT makes it print its cache
/// and end its plugins).
pub fn stop_nfacctd(child: Child) {
    stop_with(child, "-INT");
}

fn stop_with(mut child: Child, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "collector did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `nfdump -r` of every file nfcapd wrote into `d`, one line per flow; and the
/// files' statistics (`nfdump -I`).
pub fn nfdump(d: &Path) -> (Listing, String) {
    let mut l = Listing::new();
    let mut stats = String::new();
    let mut files = 0;
    for f in std::fs::read_dir(d).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("nfcapd.") {
            continue;
        }
        files += 1;
        let out = Command::new("nfdump")
            .arg("-r")
            .arg(&f)
            .args(["-q", "-N", "-6", "-o", "fmt:%sa|%da|%sp|%dp|%pr|%pkt|%byt"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out.stderr));
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let c: Vec<&str> = line.split('|').map(str::trim).collect();
            if c.len() != 7 {
                continue;
            }
            // ICMP: nfdump reads icmpTypeCodeIPv4/IPv6 and prints "type.code" as the
            // destination port (source port 0); loxo's key holds (type, code).
            let (sp, dp) = match c[3].split_once('.') {
                Some((t, code)) => (t.parse().unwrap(), code.parse().unwrap()),
                None => (c[2].parse().unwrap(), c[3].parse().unwrap()),
            };
            let k = (
                c[0].parse().unwrap(),
                c[1].parse().unwrap(),
                sp,
                dp,
                c[4].parse().unwrap(),
            );
            l.entry(k)
                .or_default()
                .push((c[5].parse().unwrap(), c[6].parse().unwrap()));
        }
        let info = Command::new("nfdump")
            .arg("-I")
            .arg("-r")
            .arg(&f)
            .output()
            .unwrap();
        stats.push_str(&String::from_utf8_lossy(&info.stdout));
    }
    assert!(files > 0, "nfcapd wrote no file into {}", d.display());
    for v in l.values_mut() {
        v.sort_unstable();
    }
    (l, stats)
}

fn stderr(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// pmacct's nfacctd listening on 127.0.0.1:`port`, aggregating by 5-tuple and
/// printing CSV into `d/nfacctd.csv` every second (appended) and on SIGTERM.
pub fn nfacctd(port: u16, d: &Path) -> Child {
    let conf = d.join("nfacctd.conf");
    let out = d.join("nfacctd.csv");
    std::fs::write(
        &conf,
        format!(
            "daemonize: false\n\
             nfacctd_ip: 127.0.0.1\n\
             nfacctd_port: {port}\n\
             plugins: print\n\
             aggregate: src_host, dst_host, src_port, dst_port, proto\n\
             print_output: csv\n\
             print_output_file: {}\n\
             print_output_file_append: true\n\
             print_refresh_time: 1\n\
             print_num_protos: true\n",
            out.display()
        ),
    )
    .unwrap();
    let child = Command::new("nfacctd")
        .arg("-f")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_bound(port, "nfacctd");
    child
}

/// nfacctd's CSV in `d` (after [`stop_nfacctd`]): one entry per key with the packets
/// and bytes summed over its print-outs (the print plugin aggregates by key within
/// each refresh interval, so a key's records may be summed already). pmacct 1.7 does
/// not read `icmpTypeCodeIPv4/IPv6`: its ICMP keys have ports 0.
pub fn nfacctd_listing(d: &Path) -> BTreeMap<Key, (u64, u64)> {
    let text = std::fs::read_to_string(d.join("nfacctd.csv")).unwrap_or_default();
    let mut l = BTreeMap::new();
    let mut cols: Vec<String> = Vec::new();
    for line in text.lines() {
        let c: Vec<&str> = line.split(',').map(str::trim).collect();
        if c.first() == Some(&"SRC_IP") {
            cols = c.iter().map(ToString::to_string).collect();
            continue;
        }
        let get = |name: &str| {
            let i = cols.iter().position(|c| c == name).unwrap();
            c[i]
        };
        if cols.is_empty() || c.len() != cols.len() {
            continue;
        }
        let k: Key = (
            get("SRC_IP").parse().unwrap(),
            get("DST_IP").parse().unwrap(),
            get("SRC_PORT").parse().unwrap(),
            get("DST_PORT").parse().unwrap(),
            get("PROTOCOL").parse().unwrap(),
        );
        let e: &mut (u64, u64) = l.entry(k).or_default();
        e.0 += get("PACKETS").parse::<u64>().unwrap();
        e.1 += get("BYTES").parse::<u64>().unwrap();
    }
    l
}

/// Parses `tshark -V`'s cflow records ("Flow N" blocks).
pub fn tshark_flows(text: &str) -> Listing {
    let mut l = Listing::new();
    let mut cur: BTreeMap<&str, String> = BTreeMap::new();
    let mut flush = |cur: &mut BTreeMap<&str, String>| {
        if let (Some(sa), Some(da)) = (cur.get("SrcAddr"), cur.get("DstAddr")) {
            let n = |k: &str| cur.get(k).map_or(0, |v| v.parse::<u64>().unwrap());
            let proto = cur["Protocol"]
                .rsplit_once('(')
                .map(|(_, p)| p.trim_end_matches(')').parse::<u8>().unwrap())
                .unwrap();
            let (mut sp, mut dp) = (n("SrcPort") as u16, n("DstPort") as u16);
            // ICMP: no ports on the wire, type and code in icmpTypeCodeIPv4, which
            // tshark prints as one hex number ("ICMP Type: 0x0800"), or in
            // icmpTypeCodeIPv6, printed as two ("IPv6 ICMP Type: 128", "IPv6 ICMP
            // Code: 0"); loxo's key holds (type, code).
            let tc = match (cur.get("ICMP Type"), cur.get("IPv6 ICMP Type")) {
                (Some(tc), _) => Some(match tc.strip_prefix("0x") {
                    Some(hex) => u16::from_str_radix(hex, 16).unwrap(),
                    None => tc.parse().unwrap(),
                }),
                (None, Some(t)) => {
                    Some(t.parse::<u16>().unwrap() << 8 | n("IPv6 ICMP Code") as u16)
                }
                (None, None) => None,
            };
            if let Some(tc) = tc {
                if matches!(proto, 1 | 58) && (sp, dp) == (0, 0) {
                    (sp, dp) = (tc >> 8, tc & 0xff);
                }
            }
            l.entry((sa.parse().unwrap(), da.parse().unwrap(), sp, dp, proto))
                .or_default()
                .push((n("Packets"), n("Octets")));
        }
        cur.clear();
    };
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Flow ") || t.starts_with("Set ") || t.starts_with("Frame ") {
            flush(&mut cur);
            continue;
        }
        if let Some((k, v)) = t.split_once(": ") {
            if matches!(
                k,
                "SrcAddr"
                    | "DstAddr"
                    | "SrcPort"
                    | "DstPort"
                    | "Protocol"
                    | "Octets"
                    | "Packets"
                    | "ICMP Type"
                    | "IPv6 ICMP Type"
                    | "IPv6 ICMP Code"
            ) {
                cur.insert(k, v.to_string());
            }
        }
    }
    flush(&mut cur);
    for v in l.values_mut() {
        v.sort_unstable();
    }
    l
}

/// `tshark -V` over `pcap` (UDP datagrams to `port`, decoded as IPFIX), after
/// checking that nothing is malformed or flagged by an expert (Wireshark's IPFIX
/// sequence analysis included).
pub fn tshark_verbose(pcap: &Path, port: u16) -> String {
    let decode = format!("udp.port=={port},cflow");
    let flagged = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-d", &decode, "-Y", "_ws.malformed || _ws.expert"])
        .output()
        .unwrap();
    assert!(flagged.status.success(), "{}", stderr(&flagged.stderr));
    let flagged = String::from_utf8_lossy(&flagged.stdout);
    assert!(flagged.trim().is_empty(), "tshark flags:\n{flagged}");
    let verbose = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-d", &decode, "-V"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&verbose.stdout).into_owned();
    assert!(!text.contains("Malformed"), "{text}");
    text
}
