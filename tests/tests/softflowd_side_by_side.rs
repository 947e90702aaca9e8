//! loxo beside softflowd under a flood (issue 27 item 5): one generated capture of
//! 200 000 frames, 90 % of them one-packet flood flows (`loxo gen -n 200000 -f 10000
//! --zipf 1.0 --flood 0.9 --seed 7`, regenerated in-process with the generator's
//! truth), exported as IPFIX by
//! * softflowd (`softflowd -d -c none -r FILE -v 10 -P tcp -m M`, the flow probe of Linux and
//!   OpenWrt users) at its default 8 192-flow table and at two larger ones, and
//! * loxo as `loxo top FILE --ipfix HOST:PORT --epoch 16384 --seed …` exports it
//!   (θ = 1 % of each 16 384-frame epoch's IP bytes, the firmware's epoch): the
//!   monitor and exact counter of `loxo_cli::eval::Evaluator`, then
//!   `loxo_ipfix::Exporter` with 1472-byte messages over UDP, in-process because the
//!   tests crate cannot run the `loxo` binary.
//!
//! Both exports are collected on loopback — softflowd's over TCP (`-P tcp`: the same
//! messages as over UDP, which drops a good part of its burst of thousands of
//! datagrams at the receiver), loxo's over UDP — and decoded by `loxo_ipfix::Decoder`
//! (which reads any exporter's templates); softflowd's own tally (records, messages)
//! must match what was collected. Asserted for loxo: every true elephant of every
//! epoch (share ≥ θ of the epoch's IP bytes, from the generator's truth) is exported
//! with byte and packet bounds that contain its exact figures, and the export is far
//! smaller than softflowd's (≤ 1/10 of its records, messages and bytes at every table
//! size). Printed with `--nocapture`: the volume table and the ten largest flows of
//! the capture — truth, softflowd's sum and record count per table size, loxo's
//! bounds summed over the epochs that list them.
//!
//! A missing softflowd fails the test unless `LOXO_SKIP_COLLECTORS=1`
//! (`loxo_tests::collectors`; `.ci/run` installs it; Debian puts it in /usr/sbin).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Read};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loxo_cli::eval::Evaluator;
use loxo_cli::exact::{Counts, Exact};
use loxo_cli::trace::{generate_with_truth, FrameTruth, Popularity, TraceConfig};
use loxo_flow::{ByteWeight, Config, FlowKey, ShareOf, Theta};
use loxo_ipfix::{Decoder, ElephantInfo, Item, Times};
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

const FRAMES: u64 = 200_000;
/// The firmware's `EPOCH_FRAMES`.
const EPOCH: usize = 16_384;
/// θ = 1 %, `loxo top`'s default and the firmware's.
const THETA: Theta = match Theta::new(1, 100) {
    Some(t) => t,
    None => panic!(),
};
/// softflowd's table sizes: its default, then large enough to force out fewer and
/// then no flows.
const TABLES: [u32; 3] = [8_192, 65_536, 262_144];
/// Elephants shown in the table.
const SHOWN: usize = 10;

/// The capture as `loxo gen` writes it (frame `i` at `i + 1` µs: softflowd never
/// finishes a file whose first frame is at time 0), and each frame's truth.
fn capture(path: &Path) -> (Vec<Vec<u8>>, Vec<FrameTruth>) {
    let cfg = TraceConfig {
        packets: FRAMES,
        flows: 10_000,
        popularity: Popularity::Zipf(1.0),
        flood: 0.9,
        malformed: 0.0,
        seed: 7,
        ..TraceConfig::default()
    };
    let mut w = PcapWriter::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    let (mut frames, mut truth) = (Vec::new(), Vec::new());
    generate_with_truth(&cfg, |f, t| {
        let at = Duration::from_micros(t.index + 1);
        w.write_packet(&PcapPacket::new(at, f.len() as u32, f))?;
        frames.push(f.to_vec());
        truth.push(*t);
        Ok::<(), pcap_file::PcapError>(())
    })
    .unwrap();
    drop(w);
    (frames, truth)
}

/// Exact figures of `truth`'s frames, bytes weighed as IP bytes (`octetDeltaCount`'s
/// unit).
fn ip_truth(truth: &[FrameTruth]) -> Exact {
    let mut e = Exact::with_weight(ByteWeight::Ip);
    for t in truth {
        e.feed_truth(t);
    }
    e
}

/// What one exporter sent, as decoded.
#[derive(Debug, Default)]
struct Export {
    messages: u64,
    bytes: u64,
    /// Flow records, with loxo's elements when present.
    flows: Vec<(FlowKey, u64, u64, Option<ElephantInfo>)>,
    /// Records of other templates (loxo's epoch records, softflowd's options records).
    other: u64,
}

impl Export {
    fn read(messages: &[Vec<u8>]) -> Self {
        let mut d = Decoder::<16, 64>::new();
        let mut x = Self::default();
        for m in messages {
            x.messages += 1;
            x.bytes += m.len() as u64;
            for item in d.read(m).unwrap() {
                match item.unwrap() {
                    Item::Flow(f) => x.flows.push((f.key, f.octets, f.packets, f.elephant)),
                    Item::Epoch(_) | Item::Participant(_) | Item::Record { .. } => x.other += 1,
                    Item::Template { learned, .. } => assert!(learned, "template not learned"),
                    Item::Skipped { set_id, .. } => panic!("data set {set_id} skipped"),
                }
            }
        }
        x
    }

    /// Records and summed counters per flow key.
    fn per_key(&self) -> HashMap<FlowKey, (u64, Counts)> {
        let mut m: HashMap<FlowKey, (u64, Counts)> = HashMap::new();
        for &(k, bytes, packets, _) in &self.flows {
            let e = m.entry(k).or_default();
            e.0 += 1;
            e.1.bytes += bytes;
            e.1.packets += packets;
        }
        m
    }
}

/// softflowd's path: on PATH, else where Debian puts it.
fn softflowd_bin() -> Option<PathBuf> {
    let runs = |p: &Path| {
        Command::new(p)
            .arg("-h")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    [
        "softflowd",
        "/usr/sbin/softflowd",
        "/usr/local/sbin/softflowd",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| runs(p))
}

/// The number after `label` in softflowd's final statistics.
fn stat(text: &str, label: &str) -> u64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in\n{text}"));
    text[at + label.len()..]
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in\n{text}"))
}

/// Runs softflowd over `file` with a `table`-flow table, exporting IPFIX over TCP to a
/// local listener; returns the messages and its final statistics.
fn softflowd(bin: &Path, file: &Path, table: u32) -> (Vec<Vec<u8>>, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_mins(1))).unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        all
    });
    let mut child = Command::new(bin)
        .args(["-d", "-v", "10", "-P", "tcp", "-m", &table.to_string()])
        .arg("-r")
        .arg(file)
        .args(["-n", &format!("127.0.0.1:{port}")])
        // No control socket: with one, softflowd 1.1.0 reading a file tests the
        // `revents` of a poll it never made (uninitialised) and may block in accept().
        .args(["-c", "none"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_mins(1) {
            let _ = child.kill();
            panic!("softflowd -m {table} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "softflowd -m {table}:\n{text}");
    let stream = reader.join().unwrap();
    // IPFIX over a stream: messages back to back, each with its length at bytes 2..4.
    let mut messages = Vec::new();
    let mut rest = &stream[..];
    while !rest.is_empty() {
        assert!(rest.len() >= 16, "a cut message header");
        assert_eq!(u16::from_be_bytes([rest[0], rest[1]]), 10, "not IPFIX");
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        assert!((16..=rest.len()).contains(&len), "bad message length {len}");
        messages.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
    (messages, text.into_owned())
}

/// `loxo top FILE --ipfix 127.0.0.1:PORT --epoch 16384`: the monitor over every frame,
/// then each epoch's report through the IPFIX exporter to a UDP socket; returns the
/// datagrams received and the epoch numbers in order.
fn loxo(frames: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<u32>) {
    let mut eval = Evaluator::try_new(Config {
        seed: loxo_core::Seed::new(0x5eed_0f10_0d5e_ed00, 0x0123_4567_89ab_cdef),
        theta: THETA,
        min_volume: 0,
        share_of: ShareOf::Bytes,
        epoch_packets: EPOCH as u32,
        byte_weight: ByteWeight::Ip,
        ..Config::with_seed(TEST_SEED)
    })
    .expect("θ = 1 % is above θ_min");
    for f in frames {
        eval.feed(f);
    }
    let results = eval.finish();
    let collector = UdpSocket::bind("127.0.0.1:0").unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(collector.local_addr().unwrap()).unwrap();
    let config = loxo_ipfix::Config {
        max_message_len: 1472,
        ..loxo_ipfix::Config::DEFAULT
    };
    let mut exporter = loxo_ipfix::Exporter::new(config).unwrap();
    let mut buf = [0u8; 1472];
    let mut sent = 0;
    let t0 = 1_700_000_000_000;
    for (i, r) in results.iter().enumerate() {
        let times = Times {
            export_time: 1_700_000_100,
            start_ms: t0 + i as u64 * 100,
            end_ms: t0 + (i as u64 + 1) * 100,
        };
        let mut msgs = exporter.messages(&r.report, times).unwrap();
        while let Some(len) = msgs.next_into(&mut buf).unwrap() {
            socket.send(&buf[..len]).unwrap();
            sent += 1;
        }
    }
    collector
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut got = Vec::new();
    let mut rx = vec![0u8; 65_536];
    while got.len() < sent {
        let n = collector
            .recv(&mut rx)
            .expect("a datagram lost on loopback");
        got.push(rx[..n].to_vec());
    }
    (got, results.iter().map(|r| r.report.epoch).collect())
}

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

#[test]
fn loxo_exports_every_elephant_in_a_fraction_of_softflowds_records() {
    let Some(bin) = softflowd_bin() else {
        loxo_tests::collectors::missing(
            "softflowd",
            "not found on PATH nor in /usr/sbin",
            "Debian: apt-get install softflowd",
            None,
        );
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("softflowd-side-by-side");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("flood.pcap");
    let (frames, truth) = capture(&file);
    let whole = ip_truth(&truth);
    let flood = truth.iter().filter(|t| t.flood).count();
    println!(
        "capture: {} frames ({flood} flood frames, one flow each), {} IP packets, {} IP bytes, {} flows",
        truth.len(),
        whole.total.packets,
        whole.total.bytes,
        whole.flows.len()
    );

    // softflowd at each table size.
    let mut soft = Vec::new();
    for table in TABLES {
        let (messages, text) = softflowd(&bin, &file, table);
        let x = Export::read(&messages);
        // Its own tally equals what was collected.
        assert_eq!(x.messages, stat(&text, "records) in "), "{text}");
        assert_eq!(
            x.flows.len() as u64,
            stat(&text, "Flows exported: "),
            "{text}"
        );
        let processed = stat(&text, "Packets processed: ");
        let counted: u64 = x.flows.iter().map(|f| f.2).sum();
        assert_eq!(
            counted, processed,
            "the records' packets vs softflowd's tally"
        );
        let forced = text
            .split("Flows expired: ")
            .nth(1)
            .and_then(|s| s.split('(').nth(1))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap();
        soft.push((
            table,
            x,
            forced,
            processed,
            stat(&text, "Ignored packets: "),
        ));
    }

    // loxo.
    let (messages, epochs) = loxo(&frames);
    let lx = Export::read(&messages);
    let chunks: Vec<Exact> = truth.chunks(EPOCH).map(ip_truth).collect();
    assert_eq!(epochs.len(), chunks.len());
    let epoch_index: HashMap<u32, usize> =
        epochs.iter().enumerate().map(|(i, &e)| (e, i)).collect();
    // Per epoch: the exported elephants, by key.
    let mut listed: BTreeMap<usize, HashMap<FlowKey, ElephantInfo>> = BTreeMap::new();
    for &(k, _, _, info) in &lx.flows {
        let info = info.expect("loxo's records carry its bounds");
        let i = epoch_index[&info.epoch];
        assert!(
            listed.entry(i).or_default().insert(k, info).is_none(),
            "epoch {i}: {k} exported twice"
        );
    }
    let mut true_elephants = 0;
    for (i, ex) in chunks.iter().enumerate() {
        let got = listed.get(&i).cloned().unwrap_or_default();
        for (k, c) in ex.heavy(THETA, true) {
            true_elephants += 1;
            let e = got.get(&k).unwrap_or_else(|| {
                panic!(
                    "epoch {i}: elephant {k} ({} of {} IP bytes) not exported",
                    c.bytes, ex.total.bytes
                )
            });
            assert!(
                e.bytes.lower <= c.bytes && c.bytes <= e.bytes.upper,
                "epoch {i}: {k}: bytes {:?} vs {}",
                e.bytes,
                c.bytes
            );
            assert!(
                e.packets.lower <= c.packets && c.packets <= e.packets.upper,
                "epoch {i}: {k}: packets {:?} vs {}",
                e.packets,
                c.packets
            );
        }
        // Every exported figure bounds its flow's truth, elephant or not.
        for (k, e) in &got {
            let c = ex.flows.get(k).copied().unwrap_or_default();
            assert!(
                c.bytes <= e.bytes.upper && c.packets <= e.packets.upper,
                "epoch {i}: {k}"
            );
        }
    }
    assert!(
        true_elephants >= chunks.len(),
        "the capture has elephants to find"
    );

    // Volume.
    println!();
    println!(
        "{}",
        row(&[
            "exporter".into(),
            "flow records".into(),
            "IPFIX messages".into(),
            "bytes exported".into(),
            "flows forced out".into()
        ])
    );
    println!("|---|---:|---:|---:|---:|");
    for (table, x, forced, processed, ignored) in &soft {
        println!(
            "{}",
            row(&[
                format!("softflowd -m {table} ({processed} packets processed, {ignored} ignored)"),
                format!("{} (+ {} options records)", x.flows.len(), x.other),
                x.messages.to_string(),
                x.bytes.to_string(),
                forced.to_string(),
            ])
        );
        // loxo's export is a small fraction of softflowd's, at any table size.
        assert!(lx.flows.len() * 10 <= x.flows.len(), "records");
        assert!(lx.messages * 10 <= x.messages, "messages");
        assert!(lx.bytes * 10 <= x.bytes, "bytes");
    }
    println!(
        "{}",
        row(&[
            format!("loxo, θ = 1 %, {} epochs of {EPOCH} frames", chunks.len()),
            format!("{} (+ {} epoch records)", lx.flows.len(), lx.other),
            lx.messages.to_string(),
            lx.bytes.to_string(),
            "–".into(),
        ])
    );
    println!("true elephants over the epochs: {true_elephants}, all exported within their bounds");

    for (m, (table, ..)) in soft.iter().enumerate() {
        let sums = soft[m].1.per_key();
        let absent = whole.flows.keys().filter(|k| !sums.contains_key(k)).count();
        let off = whole
            .flows
            .iter()
            .filter(|(k, c)| sums.get(k).is_some_and(|s| s.1 != **c))
            .count();
        let extra = sums.keys().filter(|k| !whole.flows.contains_key(k)).count();
        println!(
            "softflowd -m {table}: of the {} flows, {absent} absent from its export, {off} with another total; {extra} exported keys not in the truth",
            whole.flows.len()
        );
    }

    // The capture's largest flows.
    let mut top: Vec<(FlowKey, Counts)> = whole.flows.iter().map(|(k, c)| (*k, *c)).collect();
    top.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    top.truncate(SHOWN);
    let per_key: Vec<_> = soft.iter().map(|(_, x, ..)| x.per_key()).collect();
    println!();
    let mut head = vec!["flow".to_string(), "truth: IP bytes (packets)".into()];
    head.extend(
        TABLES
            .iter()
            .map(|t| format!("softflowd -m {t}: bytes in records")),
    );
    head.push("loxo: Σ bounds over the epochs listing it (truth there), epochs".into());
    println!("{}", row(&head));
    println!("|---|---:|{}---:|", "---:|".repeat(TABLES.len()));
    for (k, c) in &top {
        let mut cells = vec![k.to_string(), format!("{} ({})", c.bytes, c.packets)];
        for m in &per_key {
            let (n, s) = m.get(k).copied().unwrap_or_default();
            cells.push(format!("{} in {n}", s.bytes));
        }
        let (mut lo, mut hi, mut there, mut n, mut of) = (0, 0, 0, 0, 0);
        for (i, ex) in chunks.iter().enumerate() {
            let Some(t) = ex.flows.get(k) else { continue };
            of += 1;
            if let Some(e) = listed.get(&i).and_then(|l| l.get(k)) {
                n += 1;
                lo += e.bytes.lower;
                hi += e.bytes.upper;
                there += t.bytes;
            }
        }
        cells.push(format!("[{lo}, {hi}] ({there}), {n} of {of}"));
        println!("{}", row(&cells));
    }
}
