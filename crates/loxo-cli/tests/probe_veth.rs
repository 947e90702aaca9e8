//! `loxo probe` on a live interface, no hardware (issue 32 item 2): the test makes two
//! network namespaces joined by a veth pair, replays a generated capture (`loxo gen`)
//! into one end with tcpreplay and runs `loxo probe --frames 8192 --json` on the other.
//!
//! * Paced (20 000 frames/s): every epoch equals the generator's truth — frames,
//!   packets, IP bytes, non-IP and malformed frames exactly; every flow holding θ = 1 %
//!   of the epoch's bytes is listed, and every listed flow's byte and packet bounds
//!   contain its exact count — and the kernel dropped nothing; `loxo collect`
//!   receives each epoch's sketch datagrams (`--collect`) and its fleet distinct-flow
//!   estimate is the probe's own.
//! * Full speed (tcpreplay --topspeed, a 1 MiB ring): nothing is lost silently — the
//!   frames the monitor saw plus the drops the kernel counted equal the frames sent,
//!   and the IPFIX export's loss records (`loxo_ipfix::LossRecord`, read back by
//!   loxo's decoder from a receiver in the namespace) carry the same drops.
//!
//! The probe runs with CAP_NET_RAW as its only capability; without it, it must say
//! what it needs.
//!
//! Needs root (namespaces, veth) — CI runs as root; otherwise the test prints why it
//! skips and returns. A missing `ip` or `tcpreplay` fails it unless
//! `LOXO_SKIP_COLLECTORS=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod capture_util;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use capture_util::{dir, stderr, SEED};

/// The probe's export key (device 1's in the collector's keys file).
const EXPORT_KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
use loxo_cli::trace::{read_truth, truth_path, Expected, FrameTruth};

const EPOCH: usize = 8192;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Two namespaces and the veth pair between them; deleted on drop.
struct Veth {
    tx_ns: String,
    rx_ns: String,
}

impl Veth {
    fn new() -> Self {
        let id = std::process::id();
        let v = Self {
            tx_ns: format!("loxo-tx-{id}"),
            rx_ns: format!("loxo-rx-{id}"),
        };
        for ns in [&v.tx_ns, &v.rx_ns] {
            run(Command::new("ip").args(["netns", "add", ns]));
            // No IPv6 on the new links: no router solicitation or MLD report joins the
            // replayed frames.
            run(Command::new("ip").args([
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.default.disable_ipv6=1",
                "net.ipv6.conf.all.disable_ipv6=1",
            ]));
        }
        run(Command::new("ip").args([
            "link", "add", "lxtx", "netns", &v.tx_ns, "type", "veth", "peer", "name", "lxrx",
            "netns", &v.rx_ns,
        ]));
        run(Command::new("ip").args(["-n", &v.rx_ns, "link", "set", "lo", "up"]));
        // MTU 9000: the capture's QinQ frames are 1 522 bytes.
        for (ns, dev) in [(&v.tx_ns, "lxtx"), (&v.rx_ns, "lxrx")] {
            run(Command::new("ip").args(["-n", ns, "link", "set", dev, "mtu", "9000", "up"]));
        }
        v
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        for ns in [&self.tx_ns, &self.rx_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

/// A running probe, killed if the test fails before stopping it.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `loxo probe` on the receiving end, with CAP_NET_RAW as its only capability
/// (`setpriv`: every other one out of the bounding set); returns once it is
/// capturing.
fn probe(v: &Veth, d: &Path, name: &str, extra: &[&str]) -> (Running, std::path::PathBuf) {
    let out = d.join(format!("{name}.jsonl"));
    let err = d.join(format!("{name}.err"));
    let child = Running(Some(
        Command::new("ip")
            .args(["netns", "exec", &v.rx_ns])
            .args(["setpriv", "--bounding-set=-all,+net_raw", "--inh-caps=-all"])
            .args([env!("CARGO_BIN_EXE_loxo"), "probe"])
            .args(["-i", "lxrx", "--frames", &EPOCH.to_string(), "--json"])
            .args(["--ip-bytes", "--theta", "1%", "--seed", SEED])
            .args(extra)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap(),
    ));
    let start = Instant::now();
    while !std::fs::read_to_string(&err)
        .unwrap_or_default()
        .contains("capturing on")
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "loxo probe did not start: {}",
            std::fs::read_to_string(&err).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, out)
}

/// Replays `pcap` into the sending end; returns the frames tcpreplay sent.
fn replay(v: &Veth, pcap: &Path, speed: &[&str]) -> u64 {
    let text = run(Command::new("ip")
        .args(["netns", "exec", &v.tx_ns, "tcpreplay", "-i", "lxtx"])
        .args(speed)
        .arg(pcap));
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Successful packets:"))
        .unwrap_or_else(|| panic!("tcpreplay said: {text}"));
    line.rsplit(':').next().unwrap().trim().parse().unwrap()
}

/// Stops the probe with SIGTERM (it flushes its last epoch) and reads its epochs.
fn stop(mut running: Running, out: &Path) -> Vec<serde_json::Value> {
    let mut child = running.0.take().unwrap();
    // Let the last frames reach the ring (its blocks retire after 10 ms).
    std::thread::sleep(Duration::from_millis(300));
    // `ip netns exec` and `setpriv` exec the command: the child's PID is the probe's.
    run(Command::new("kill").args(["-TERM", &child.id().to_string()]));
    let status = child.wait().unwrap();
    assert!(status.success(), "loxo probe: {status}");
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A UDP receiver on 127.0.0.1:`port` in the receiving namespace, writing each
/// datagram to `file` behind its 4-byte length (Python: the test's own socket would
/// be in the wrong namespace).
fn receiver(v: &Veth, port: u16, file: &Path) -> Child {
    let script = format!(
        "import socket,struct\n\
         s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n\
         s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,8<<20)\n\
         s.bind(('127.0.0.1',{port}))\n\
         f=open('{}','wb',buffering=0)\n\
         print('ready',flush=True)\n\
         while True:\n\
         \x20d=s.recv(65536)\n\
         \x20f.write(struct.pack('>I',len(d))+d)\n",
        file.display()
    );
    let mut child = Command::new("ip")
        .args(["netns", "exec", &v.rx_ns, "python3", "-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    child
}

/// The loss records among the datagrams in `file`.
fn loss_records(file: &Path) -> Vec<loxo_ipfix::LossRecord> {
    let bytes = std::fs::read(file).unwrap();
    let mut d = loxo_ipfix::Decoder::<16, 32>::new();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= bytes.len() {
        let n = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let msg = &bytes[at + 4..at + 4 + n];
        at += 4 + n;
        for item in d.read(msg).unwrap() {
            if let loxo_ipfix::Item::Record {
                template_id: loxo_ipfix::ie::LOSS_TEMPLATE_ID,
                bytes,
            } = item.unwrap()
            {
                out.push(
                    loxo_ipfix::LossRecord::parse(&loxo_ipfix::ie::LOSS, bytes)
                        .unwrap()
                        .unwrap(),
                );
            }
        }
    }
    out
}

/// `loxo collect` (stopping by itself after 5 epochs) merged each epoch's sketch
/// datagrams of the one probe: its fleet distinct flows are the probe's own estimate
/// (the same HLL merged alone), rounded where the report truncates.
fn check_collected(mut collect: Running, file: &Path, epochs: &[serde_json::Value]) {
    let mut c = collect.0.take().unwrap();
    let start = Instant::now();
    while c.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "loxo collect did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let fleet: Vec<u64> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fleet distinct flows: "))
        .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(fleet.len(), epochs.len(), "one fleet estimate per epoch");
    for (f, e) in fleet.iter().zip(epochs) {
        let own = e["distinct_flows"].as_u64().unwrap();
        assert!(*f == own || *f == own + 1, "fleet {f}, probe {own}");
    }
}

/// The truth of one epoch: frames, packets, IP bytes, not IP, malformed, and per
/// flow (IP bytes, packets).
#[derive(Debug, Default)]
struct EpochTruth {
    frames: u64,
    packets: u64,
    bytes: u64,
    not_ip: u64,
    malformed: u64,
    flows: HashMap<String, (u64, u64)>,
}

fn epoch_truth(frames: &[FrameTruth]) -> EpochTruth {
    let mut t = EpochTruth::default();
    for f in frames {
        t.frames += 1;
        match (f.expected, f.flow()) {
            (Expected::Flow, Some(k)) => {
                t.packets += 1;
                t.bytes += u64::from(f.ip_len);
                let e = t.flows.entry(k.to_string()).or_default();
                e.0 += u64::from(f.ip_len);
                e.1 += 1;
            }
            (Expected::Malformed(_), _) => t.malformed += 1,
            _ => t.not_ip += 1,
        }
    }
    t
}

fn bounds(v: &serde_json::Value) -> (u64, u64) {
    (v["lower"].as_u64().unwrap(), v["upper"].as_u64().unwrap())
}

fn malformed(e: &serde_json::Value) -> u64 {
    e["malformed"]
        .as_object()
        .map_or(0, |m| m.values().map(|v| v.as_u64().unwrap_or(0)).sum())
}

/// Checks every epoch of the paced run against the truth; returns how many
/// elephants (flows of ≥ 1 % of their epoch's bytes) it found listed.
fn check_epochs(epochs: &[serde_json::Value], truth: &[FrameTruth]) -> usize {
    let mut listed = 0;
    for (e, frames) in epochs.iter().zip(truth.chunks(EPOCH)) {
        let t = epoch_truth(frames);
        let n = e["epoch"].as_u64().unwrap();
        assert_eq!(e["kernel"]["dropped"], 0, "epoch {n}: {e}");
        let got = [
            e["frames"].as_u64().unwrap(),
            e["packets"].as_u64().unwrap(),
            e["bytes"].as_u64().unwrap(),
            e["not_ip"].as_u64().unwrap(),
            malformed(e),
        ];
        assert_eq!(
            got,
            [t.frames, t.packets, t.bytes, t.not_ip, t.malformed],
            "epoch {n}"
        );
        let reported: HashMap<String, &serde_json::Value> = e["elephants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["key"].as_str().unwrap().to_owned(), x))
            .collect();
        // Every listed flow: bounds around its exact bytes and packets.
        for (k, x) in &reported {
            let (bytes, packets) = t.flows.get(k).copied().unwrap_or_default();
            let (bl, bu) = bounds(&x["bytes"]);
            let (pl, pu) = bounds(&x["packets"]);
            assert!(
                bl <= bytes && bytes <= bu,
                "epoch {n} {k}: bytes {bytes} not in [{bl}, {bu}]"
            );
            assert!(
                pl <= packets && packets <= pu,
                "epoch {n} {k}: packets {packets} not in [{pl}, {pu}]"
            );
        }
        // Every flow of ≥ 1 % of the epoch's bytes: listed (recall 1 at θ).
        for (k, (bytes, _)) in &t.flows {
            if *bytes * 100 >= t.bytes {
                assert!(
                    reported.contains_key(k),
                    "epoch {n}: elephant {k} ({bytes} of {} bytes) missing",
                    t.bytes
                );
                listed += 1;
            }
        }
    }
    listed
}

/// Root, `ip` and `tcpreplay`: whether the test can run (it prints why not), and
/// the probe's error without CAP_NET_RAW.
fn preconditions() -> bool {
    let uid = run(Command::new("id").arg("-u"));
    if uid.trim() != "0" {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: probe_veth needs root (network namespaces and a veth pair); uid {}",
            uid.trim()
        );
        return false;
    }
    // Without CAP_NET_RAW: a clear error, exit code 1.
    let out = Command::new("setpriv")
        .args([
            "--bounding-set=-net_raw",
            env!("CARGO_BIN_EXE_loxo"),
            "probe",
            "-i",
            "lo",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("needs CAP_NET_RAW"),
        "{}",
        stderr(&out)
    );
    for (bin, arg) in [("ip", "-V"), ("tcpreplay", "-V")] {
        if let Err(e) = Command::new(bin)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            loxo_tests::collectors::missing(
                bin,
                &e.to_string(),
                "Debian: apt-get install iproute2 tcpreplay",
                None,
            );
            return false;
        }
    }
    true
}

#[test]
fn probe_on_a_veth_matches_the_generators_truth() {
    if !preconditions() {
        return;
    }
    let d = dir("probe-veth");
    let pcap = d.join("trace.pcap");
    let out = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args([
            "gen",
            "-o",
            pcap.to_str().unwrap(),
            "-n",
            "40000",
            "-f",
            "500",
        ])
        .args(["--seed", "11"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let truth = read_truth(std::io::BufReader::new(
        std::fs::File::open(truth_path(&pcap)).unwrap(),
    ))
    .unwrap();
    assert_eq!(truth.len(), 40_000);
    let veth = Veth::new();

    // Paced: every epoch against the truth, no drop; the sketches to `loxo collect`.
    let collected = d.join("collect.out");
    let collect = collector(&veth, &d, &collected);
    let (child, out) = probe(
        &veth,
        &d,
        "paced",
        &["--collect", "127.0.0.1:4740", "--export-key", EXPORT_KEY],
    );
    let sent = replay(&veth, &pcap, &["--pps", "20000"]);
    assert_eq!(sent, 40_000);
    let epochs = stop(child, &out);
    check_collected(collect, &collected, &epochs);
    assert_eq!(epochs.len(), truth.len().div_ceil(EPOCH), "{epochs:?}");
    let listed = check_epochs(&epochs, &truth);
    println!(
        "paced: {} epochs, {listed} elephants at θ = 1 %, all within bounds, 0 drops",
        epochs.len()
    );
    assert!(listed >= 5 * epochs.len(), "{listed} elephants");

    // Full speed into a 1 MiB ring: frames seen + frames dropped = frames sent, and
    // the IPFIX loss records say so too.
    let ipfix = d.join("ipfix.bin");
    let rx = Running(Some(receiver(&veth, 4739, &ipfix)));
    let (child, out) = probe(
        &veth,
        &d,
        "topspeed",
        &["--ring-mib", "1", "--ipfix", "127.0.0.1:4739"],
    );
    let sent = replay(&veth, &pcap, &["--topspeed", "--loop", "3"]);
    let epochs = stop(child, &out);
    std::thread::sleep(Duration::from_millis(200));
    drop(rx); // killed

    let losses = loss_records(&ipfix);
    let seen: u64 = epochs.iter().map(|e| e["frames"].as_u64().unwrap()).sum();
    let dropped: u64 = epochs
        .iter()
        .map(|e| e["kernel"]["dropped"].as_u64().unwrap())
        .sum();
    let received: u64 = epochs
        .iter()
        .map(|e| e["kernel"]["received"].as_u64().unwrap())
        .sum();
    println!("full speed: {sent} sent, {received} received by the socket, {seen} to the monitor, {dropped} dropped by the kernel (counted and reported)");
    assert_eq!(received, sent);
    assert_eq!(seen + dropped, sent, "frames lost silently");
    assert_eq!(losses.len(), epochs.len(), "one loss record per epoch");
    for (l, e) in losses.iter().zip(&epochs) {
        assert_eq!(u64::from(l.epoch), e["epoch"].as_u64().unwrap());
        assert_eq!(l.ignored, e["kernel"]["dropped"].as_u64().unwrap());
        assert_eq!(
            l.ignored_total,
            e["kernel"]["dropped_total"].as_u64().unwrap()
        );
    }
    assert_eq!(losses.last().map(|l| l.ignored_total), Some(dropped));
    let _ = std::fs::remove_dir_all(&d);
}

/// `loxo collect` in the receiving namespace, with a keys file naming the probe's
/// export key (device 1: its IPFIX domain) and the fleet's seed fingerprint; its
/// stdout to `collected`.
fn collector(veth: &Veth, d: &std::path::Path, collected: &std::path::Path) -> Running {
    // The probe signs its sketch datagrams as device 1 (its IPFIX domain); the
    // collector's keys file lists that key and the fleet's seed fingerprint.
    let keys = d.join("fleet.keys");
    let fingerprint = loxo_cli::key::read_key(SEED).unwrap().fingerprint();
    std::fs::write(
        &keys,
        format!("fleet-seed-fingerprint {fingerprint:016x}\n1 {EXPORT_KEY}\n"),
    )
    .unwrap();
    Running(Some(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &veth.rx_ns,
                env!("CARGO_BIN_EXE_loxo"),
                "collect",
            ])
            .args([
                "--listen",
                "127.0.0.1:4740",
                "--epochs",
                "5",
                "--timeout",
                "20",
                "--keys",
                keys.to_str().unwrap(),
            ])
            .stdout(std::fs::File::create(collected).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ))
}
