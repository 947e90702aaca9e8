//! `loxo collect` scaled out on a real Redis Cluster: three `redis-server` masters in
//! cluster mode (joined by `redis-cli --cluster create`, no replicas), three
//! `loxo collect --redis-cluster` processes, each given a different node, and three
//! devices (`FlowMonitor`s over generated traffic) plus a fourth with another seed,
//! over epochs 1–3 (whose hash tags `{fleet:1}`, `{fleet:2}`, `{fleet:3}` fall in
//! slots 4412, 8543 and 12670: one per master). A device's datagrams are spread over
//! the collectors: the chunks of a flows frame one by one (chunk `j` of device `d`'s
//! epoch `e` to collector `(d + e + j) mod 3`, so every flows frame is split over
//! the three), a top-k frame whole to collector `(d + e + 1) mod 3`. One flows frame
//! is sent a second time, once the first copy is stored.
//!
//! Checked: `loxo fleet` prints, for each epoch, exactly the text one `loxo collect`
//! prints when it receives every datagram (same fleet distinct flows, same top flows
//! with the same bounds, same frames not merged); the `PFMERGE`d HyperLogLog of each
//! epoch has the registers of the devices' merged HLLs and the `PFCOUNT` of
//! `RedisHll::from_hll` of it; every master holds one epoch's keys; the frame sent
//! twice is counted as a duplicate (by the single collector too) and not merged
//! twice; the wrong-seed frames are counted by whichever collector got them; every
//! chunk went through the cluster and was pushed into exactly one collector's
//! reassembly (the sums of the collectors' datagram counts and of their relayed
//! chunks equal the datagrams sent), and no collector counts anything else as an error
//! (no frame "incomplete" for having gone to another collector); a collector started
//! with another seed fingerprint than the one the cluster holds, or with none, refuses
//! to run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use loxo_cli::collect::cluster::flows_key;
use loxo_cli::collect::{Sender, KEY_WIRE_LEN};
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_control::datagram::{ExportKey, Stream};
use loxo_core::Seed;
use loxo_flow::{Config, FlowMonitor};
use loxo_hll::Hll;
use loxo_interop::redis::RedisHll;
use loxo_tests::redis::RedisCluster;

const FLEET: Seed = Seed::new(0xc1_057e, 0x5eed);
const ROGUE: Seed = Seed::new(0xbad, 0x5eed);
const EPOCHS: [u32; 3] = [1, 2, 3];
/// Devices 1–3 of the fleet, device 4 with another seed.
const DEVICES: [u32; 4] = [1, 2, 3, 4];

/// Device `d`'s export key (the collectors' keys file lists all four: the rogue
/// device is authenticated, its seed is what is wrong).
fn export_key(d: u32) -> ExportKey {
    ExportKey::from_bytes([d as u8; 16])
}

/// The keys file every collector of the test reads.
fn keys_file() -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("collect_cluster.keys");
    let mut text = format!("fleet-seed-fingerprint {:016x}\n", FLEET.fingerprint());
    for d in DEVICES {
        let key = format!("{:02x}", d as u8).repeat(16);
        writeln!(text, "{d} {key}").unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A frame's datagrams, numbered on from the device's last ones and signed, as the
/// device would send them (a frame sent twice is a second, fresh copy: authentic, so
/// it is the cluster that counts it twice).
fn datagrams(stream: Stream, device: u32, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
    static SENDERS: std::sync::Mutex<Vec<Sender>> = std::sync::Mutex::new(Vec::new());
    let mut senders = SENDERS.lock().unwrap();
    while senders.len() < device as usize {
        let d = senders.len() as u32 + 1;
        senders.push(Sender::new(d, export_key(d), 1));
    }
    senders[device as usize - 1].datagrams(stream, epoch, frame)
}

/// A device's epoch: its flows and top-k frames, and its HLL.
struct Sent {
    flows: Vec<u8>,
    topk: Vec<u8>,
    hll: Box<Hll<14>>,
}

fn device_epoch(device: u32, epoch: u32) -> Sent {
    let seed = if device == 4 { ROGUE } else { FLEET };
    let mut m = Box::new(FlowMonitor::new(Config::with_seed(seed)));
    let cfg = TraceConfig {
        packets: 3_000 + 1_000 * u64::from(device),
        flows: 4_000,
        popularity: Popularity::Zipf(1.0),
        // Devices 1 and 3 (and 2 and 4) see the same flows, in different numbers.
        seed: u64::from(100 * epoch + device % 2),
        ..TraceConfig::default()
    };
    generate_with_truth(&cfg, |f, _| {
        m.feed(f);
        Ok::<_, ()>(())
    })
    .unwrap();
    let mut flows = vec![0u8; m.flows().encoded_len()];
    let n = m.flows().encode_into(&mut flows).unwrap();
    flows.truncate(n);
    let mut topk = vec![0u8; m.top().encoded_len::<KEY_WIRE_LEN>()];
    let n = m
        .top()
        .encode_into::<KEY_WIRE_LEN>(&seed, &mut topk)
        .unwrap();
    topk.truncate(n);
    Sent {
        flows,
        topk,
        hll: Box::new(m.flows().clone()),
    }
}

/// `loxo collect --listen 127.0.0.1:0 ARGS…`: the child, its address, its stderr.
fn spawn(args: &[String]) -> (Child, String, JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["collect", "--listen", "127.0.0.1:0", "--timeout", "30"])
        .args(["--keys", &keys_file()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loxo collect");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("loxo collect: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    (child, addr, rest)
}

/// Closes the collector's stdin (it stops 100 ms after its last datagram) and returns
/// its stdout, with its stderr for messages.
fn finish(mut child: Child, rest: JoinHandle<String>) -> (bool, String, String) {
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success(), stdout, rest.join().unwrap())
}

/// Sends paced (a collector's default socket buffer holds about a hundred datagrams).
fn send(socket: &UdpSocket, addr: &str, datagrams: &[Vec<u8>]) {
    for d in datagrams {
        socket.send_to(d, addr).unwrap();
        std::thread::sleep(Duration::from_micros(300));
    }
}

/// Epoch `epoch`'s block of `describe`d text in a collector's stdout (its line
/// `epoch N: …` and the indented lines after it, `  redis:` lines left out).
fn block(stdout: &str, epoch: u32) -> String {
    let head = format!("epoch {epoch}: ");
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with(&head));
    let mut out = String::new();
    if let Some(first) = lines.next() {
        out.push_str(first);
        out.push('\n');
    }
    for l in lines.take_while(|l| l.starts_with("  ")) {
        if !l.starts_with("  redis:") {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The number before `what` in `text` (`"3 seed mismatch"` → 3), 0 if absent.
fn count_before(text: &str, what: &str) -> u64 {
    text.find(what)
        .and_then(|i| text[..i].trim_end().rsplit([' ', '\n', ':', ',']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Every frame to send, in order: `(epoch index, device index, stream, datagrams)`;
/// device 1's epoch-1 flows frame twice.
type Plan = Vec<(usize, usize, Stream, Vec<Vec<u8>>)>;

fn plan(sent: &[Vec<Sent>]) -> Plan {
    let mut p = Vec::new();
    for (e, (epoch, devices)) in EPOCHS.iter().zip(sent).enumerate() {
        for (d, (device, x)) in DEVICES.iter().zip(devices).enumerate() {
            p.push((
                e,
                d,
                Stream::Flows,
                datagrams(Stream::Flows, *device, *epoch, &x.flows),
            ));
            p.push((
                e,
                d,
                Stream::TopK,
                datagrams(Stream::TopK, *device, *epoch, &x.topk),
            ));
            if (e, d) == (0, 0) {
                p.push((
                    e,
                    d,
                    Stream::Flows,
                    datagrams(Stream::Flows, *device, *epoch, &x.flows),
                ));
            }
        }
    }
    p
}

/// One collector that receives every datagram: the reference. Its stdout.
fn one_collector(plan: &Plan) -> String {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (child, addr, rest) = spawn(&["--stop-on-eof".into()]);
    for (_, _, _, dg) in plan {
        send(&socket, &addr, dg);
    }
    let (_, one, err) = finish(child, rest);
    let ctx = format!("one collector:\n{one}\n{err}");
    // 3 epochs × device 4's 2 frames.
    assert_eq!(count_before(&one, "seed mismatch"), 6, "{ctx}");
    assert!(count_before(&one, "frame received twice") >= 1, "{ctx}");
    ctx
}

/// Three collectors sharing the cluster, each told of a different node: frame
/// `(d, e, s)` to collector `(d + e + s) mod 3`, its flows frames split chunk by chunk
/// (chunk `j` to collector `(d + e + j) mod 3`); the duplicate sent once the first
/// copy is stored. Returns the collectors' stdout and stderr.
fn three_collectors(cluster: &RedisCluster, plan: &Plan) -> String {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let collectors: Vec<_> = cluster
        .addrs()
        .into_iter()
        .map(|n| spawn(&["--stop-on-eof".into(), "--redis-cluster".into(), n]))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (e, d, s, dg) in plan {
        let base = DEVICES[*d] as usize + EPOCHS[*e] as usize;
        if !seen.insert((e, d, s)) {
            // The duplicate: once the first copy is in the cluster.
            let key = format!("loxo:{{fleet:{}}}:frames", EPOCHS[*e]);
            let field = format!("{}:{}", DEVICES[*d], s.name());
            let port = cluster.ports()[0];
            for _ in 0..200 {
                if cluster.cli(port, &["HEXISTS", &key, &field]).trim() == "1" {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        for (j, chunk) in dg.iter().enumerate() {
            let c = match s {
                Stream::Flows => (base + j) % 3,
                Stream::TopK => (base + 1) % 3,
            };
            send(&socket, &collectors[c].1, std::slice::from_ref(chunk));
        }
    }
    let texts: Vec<String> = collectors
        .into_iter()
        .enumerate()
        .map(|(i, (child, _, rest))| {
            let (_, out, err) = finish(child, rest);
            format!("collector {i}:\n{out}\n{err}\n")
        })
        .collect();
    texts.concat()
}

#[test]
fn three_collectors_on_a_redis_cluster_answer_as_one() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let sent: Vec<Vec<Sent>> = EPOCHS
        .iter()
        .map(|&e| DEVICES.iter().map(|&d| device_epoch(d, e)).collect())
        .collect();
    let plan = plan(&sent);
    let datagrams_sent: usize = plan.iter().map(|p| p.3.len()).sum();
    let ctx1 = one_collector(&plan);
    let all = three_collectors(&cluster, &plan);
    let sum = |what: &str| -> u64 { all.split("collector ").map(|c| count_before(c, what)).sum() };
    // Every chunk went through the cluster and was pushed once, by the collector that
    // completed its frame; 24 frames and the duplicate completed.
    assert_eq!(sum("datagrams"), datagrams_sent as u64, "{all}");
    assert_eq!(sum("chunks relayed"), datagrams_sent as u64, "{all}");
    assert_eq!(sum("frames completed here"), 25, "{all}");
    assert_eq!(sum("frames stored"), 24, "{all}");
    assert_eq!(sum("seed mismatch"), 6, "{all}");
    // The duplicate: refused by the cluster (1), or by the collector that took both
    // copies, chunk by chunk.
    let dups = sum("frame received twice");
    assert!(dups == 1 || dups == plan[0].3.len() as u64, "{all}");
    // Nothing else is an error: no frame "incomplete" for going elsewhere.
    assert_eq!(sum("errors"), 6 + dups, "{all}");

    // The fleet read back through yet another entry point: the third node.
    let o = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args([
            "fleet",
            "--redis-cluster",
            &cluster.addrs()[2],
            "--devices",
            "4",
        ])
        .output()
        .unwrap();
    let fleet = String::from_utf8_lossy(&o.stdout).into_owned();
    let ctx = format!(
        "loxo fleet:\n{fleet}\n{}\n{ctx1}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{ctx}");
    for (e, &epoch) in EPOCHS.iter().enumerate() {
        let want = block(&ctx1, epoch);
        assert!(want.contains("fleet top flows (devices 1, 2, 3;"), "{ctx}");
        assert!(want.contains("device 4 flows: seed fingerprint"), "{ctx}");
        assert!(want.contains("on 2 device(s)"), "{ctx}");
        assert_eq!(block(&fleet, epoch), want, "epoch {epoch}\n{ctx}");
        let mut merged = sent[e][0].hll.clone();
        merged.merge(&sent[e][1].hll).unwrap();
        merged.merge(&sent[e][2].hll).unwrap();
        let count = RedisHll::from_hll(&merged).count();
        assert!(
            fleet.contains(&format!(
                "  redis: PFCOUNT {} {count} (its registers equal the merged flows frames')",
                flows_key(epoch)
            )),
            "epoch {epoch}\n{ctx}"
        );
    }
    // A collector of another fleet (or a mistyped fingerprint) refuses to start, and
    // so does one without a fingerprint.
    let keys = keys_file();
    let other = ["--keys", &keys, "--seed-fingerprint", "0123456789abcdef"];
    for fp in [&other[..], &["--insecure-no-auth"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_loxo"))
            .args(["collect", "--listen", "127.0.0.1:0", "--redis-cluster"])
            .arg(&cluster.addrs()[1])
            .args(fp)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        let want = if fp.len() == 1 {
            "--redis-cluster needs the fleet's seed fingerprint".to_owned()
        } else {
            format!(
                "holds the fleet of seed fingerprint {:016x}",
                FLEET.fingerprint()
            )
        };
        assert!(err.contains(&want), "{err}");
    }
    // One epoch per master: each node holds keys.
    for port in cluster.ports() {
        let keys = cluster.cli(port, &["DBSIZE"]);
        let n: u64 = keys.trim().parse().unwrap_or(0);
        assert!(n >= 2, "node {port}: DBSIZE {keys:?}");
    }
}

/// Not a check: the datagrams per second one collector takes alone and as a member of
/// a Redis Cluster (every chunk relayed, every frame stored), on this machine:
/// `cargo test -p loxo-cli --test collect_cluster -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, printed"]
fn measure_datagrams_per_second() {
    let Some(cluster) = RedisCluster::start(3) else {
        return;
    };
    let sent: Vec<Sent> = [1, 2, 3].map(|d| device_epoch(d, 1)).into();
    let mut all = Vec::new();
    for epoch in 0..60 {
        for (d, x) in (1..).zip(&sent) {
            all.extend(datagrams(Stream::Flows, d, epoch, &x.flows));
            all.extend(datagrams(Stream::TopK, d, epoch, &x.topk));
        }
    }
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for shared in [false, true] {
        let mut args = vec!["--stop-on-eof".to_owned()];
        if shared {
            args.extend(["--redis-cluster".to_owned(), cluster.addrs()[0].clone()]);
        }
        let (child, addr, rest) = spawn(&args);
        let t0 = std::time::Instant::now();
        for d in &all {
            socket.send_to(d, &addr).unwrap();
        }
        let (_, out, _) = finish(child, rest);
        // Less the 100 ms of quiet --stop-on-eof waits for.
        let secs = t0.elapsed().as_secs_f64() - 0.1;
        let summary = out
            .lines()
            .rev()
            .find(|l| l.contains("datagrams"))
            .unwrap_or("");
        println!(
            "{}: {} datagrams in {secs:.2} s: {:.0} datagrams/s ({summary})",
            if shared { "redis cluster" } else { "alone" },
            all.len(),
            all.len() as f64 / secs
        );
    }
    // What an epoch of 3 devices holds in the cluster.
    let port = cluster.ports()[0];
    let frames = format!("loxo:{{fleet:{}}}:frames", 0);
    let usage = |key: &str| {
        cluster
            .cli(port, &["MEMORY", "USAGE", key])
            .trim()
            .to_owned()
    };
    println!(
        "epoch 0 in Redis: {frames} {} bytes, {} {} bytes (frames of 3 devices: {} bytes)",
        usage(&frames),
        flows_key(0),
        usage(&flows_key(0)),
        sent.iter()
            .map(|x| x.flows.len() + x.topk.len())
            .sum::<usize>()
    );
}
