//! `loxo collect` through the binary and real UDP: three devices' `FlowMonitor`s over
//! generated traffic send three epochs of sketches (`loxo_control::datagram`), two
//! with the fleet's seed and one with another; epoch 2 carries a corrupted chunk and a
//! duplicated chunk. Checked: the fleet HLL file equals the merge of the devices'
//! HLLs and its estimate is within 4σ of the exact union of distinct flows, every
//! frame received is written back byte for byte, the fleet top-k bounds contain the
//! exact fleet-wide weights, and the corrupt, duplicate and wrong-seed frames are
//! counted, reported and not merged, with a non-zero exit. Every datagram is signed
//! under its device's export key (`--keys`); the issue-33 attacks (an unknown device
//! with the fleet's fingerprint, a foreign fingerprint first, replays, a sender not
//! allowed) are refused and counted through the binary too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, HashSet};

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use loxo_cli::collect::{combine_top, decode_topk, Sender, KEY_WIRE_LEN};
use loxo_cli::exact::Exact;
use loxo_cli::resp::Client;
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_control::datagram::{ExportKey, SketchDatagram, Stream};
use loxo_core::Seed;
use loxo_flow::{Config, FlowKey, FlowMonitor, Report, FLOWS_P};
use loxo_hll::Hll;
use loxo_interop::redis::RedisHll;
use loxo_tests::hll_theory::check_estimate;
use loxo_tests::redis::RedisServer;

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

const FLEET: Seed = Seed::new(0xf1ee7, 0x5eed);
const ROGUE: Seed = Seed::new(0xbad, 0x5eed);

/// One device's epoch: its two frames and the exact figures behind them.
struct Sent {
    flows: Vec<u8>,
    topk: Vec<u8>,
    hll: Box<Hll<14>>,
    keys: HashSet<FlowKey>,
    bytes: HashMap<FlowKey, u64>,
}

fn device_epoch(seed: Seed, trace_seed: u64, packets: u64) -> Sent {
    let mut m = Box::new(FlowMonitor::new(Config {
        seed,
        ..Config::with_seed(TEST_SEED)
    }));
    let mut exact = Exact::default();
    let cfg = TraceConfig {
        packets,
        flows: 8_000,
        popularity: Popularity::Zipf(1.0),
        seed: trace_seed,
        ..TraceConfig::default()
    };
    generate_with_truth(&cfg, |f, t| {
        m.feed(f);
        exact.feed_truth(t);
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
    let hll = Box::new(m.flows().clone());
    let mut r = Report::default();
    m.end_epoch(&mut r);
    Sent {
        flows,
        topk,
        hll,
        keys: exact.flows.keys().copied().collect(),
        bytes: exact.flows.iter().map(|(k, c)| (*k, c.bytes)).collect(),
    }
}

/// Device `d`'s export key, as 32 hex digits.
fn key_hex(d: u32) -> String {
    format!("{d:08x}{}", "c0ffee00".repeat(3))
}

fn device_key(d: u32) -> ExportKey {
    ExportKey::from_hex(&key_hex(d)).unwrap()
}

/// The devices' senders: sequence numbers go on over the whole test binary (every
/// collector it starts sees each device's numbers increase).
static SENDERS: Mutex<BTreeMap<u32, Sender>> = Mutex::new(BTreeMap::new());

fn with_sender<T>(device: u32, f: impl FnOnce(&mut Sender) -> T) -> T {
    let mut s = SENDERS.lock().unwrap();
    f(s.entry(device)
        .or_insert_with(|| Sender::new(device, device_key(device), 0)))
}

fn datagrams(stream: Stream, device: u32, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
    with_sender(device, |s| s.datagrams(stream, epoch, frame))
}

/// `bytes` edited by `edit`, then renumbered and signed by its device (a fault of
/// the device, not of the network).
fn resign(bytes: &[u8], edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = bytes.to_vec();
    edit(&mut b);
    let d = SketchDatagram::parse(&b).unwrap();
    with_sender(d.device, |s| s.sign(&d)).unwrap()
}

/// A keys file for devices 1..=5 under the fleet's fingerprint.
fn keys_file() -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("loxo-collect-{}-{n}.keys", std::process::id()));
    let mut text = format!(
        "# test fleet\nfleet-seed-fingerprint {:016x}\n",
        FLEET.fingerprint()
    );
    for d in 1..=5 {
        std::fmt::Write::write_fmt(&mut text, format_args!("{d} {}\n", key_hex(d))).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// Starts `loxo collect --listen 127.0.0.1:0 ARGS…`; returns the child, the address it
/// listens on and a thread collecting the rest of its stderr.
fn spawn(args: &[&std::ffi::OsStr]) -> (Child, String, JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["collect", "--listen", "127.0.0.1:0", "--keys"])
        .arg(keys_file())
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

/// Sends datagrams to `addr`, paced: the collector's default socket buffer holds only
/// about a hundred datagrams.
fn send(socket: &UdpSocket, addr: &str, datagrams: &[Vec<u8>]) {
    for d in datagrams {
        socket.send_to(d, addr).unwrap();
        std::thread::sleep(Duration::from_micros(300));
    }
}

fn out_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-collect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Epochs 0 and 1 of devices 1 and 2, as `loxo collect` wrote and printed them.
fn check_fleet_epoch(epoch: usize, one: &Sent, two: &Sent, dir: &Path, stdout: &str) {
    // The fleet HLL is exactly the merge of devices 1 and 2.
    let fleet = std::fs::read(dir.join(format!("epoch-{epoch}/fleet.flows.loxo"))).unwrap();
    let mut got = Hll::<14>::new(FLEET);
    got.decode_into(&fleet).unwrap();
    let mut want = one.hll.clone();
    want.merge(&two.hll).unwrap();
    assert_eq!(got, *want, "epoch {epoch}");
    let union: HashSet<FlowKey> = one.keys.union(&two.keys).copied().collect();
    if epoch == 0 {
        assert_eq!(union.len(), one.keys.len() + two.keys.len(), "disjoint");
    } else {
        assert_eq!(
            union.len(),
            one.keys.len(),
            "device 2's flows are device 1's"
        );
    }
    // 4σ band of the HLL theory at that n (σ ≈ 1.04/√16384 ≈ 0.81 %).
    check_estimate(got.estimate(), union.len() as u64, FLOWS_P, 4.0)
        .unwrap_or_else(|m| panic!("epoch {epoch}: fleet distinct flows: {m}"));
    assert!(
        stdout.contains(&format!("fleet distinct flows: {:.0} ", got.estimate())),
        "{stdout}"
    );

    // The fleet top-k: the bounds contain the exact fleet-wide bytes.
    let (_, a) = decode_topk(&one.topk).unwrap();
    let (_, b) = decode_topk(&two.topk).unwrap();
    let (top, _, _) = combine_top(&[&*a, &*b]);
    for f in &top {
        let exact = one.bytes.get(&f.key).copied().unwrap_or(0)
            + two.bytes.get(&f.key).copied().unwrap_or(0);
        assert!(f.lower <= exact && exact <= f.upper, "{f:?}: exact {exact}");
    }
    assert_eq!(top[0].devices, if epoch == 0 { 1 } else { 2 });
    assert!(
        stdout.contains(&format!("  1. {}  count {}", top[0].key, top[0].count)),
        "{stdout}"
    );
}

#[test]
fn collect_merges_two_devices_and_counts_every_fault() {
    // Devices 1 and 2 share the fleet's seed, device 3 does not.
    let devices = [(1u32, FLEET), (2, FLEET), (3, ROGUE)];
    // Epoch 0: each device its own flow population (trace seeds differ). Epoch 1: the
    // devices see the same population (device 2's trace is the first two thirds of
    // device 1's), so the heavy flows are on both lists and the HLLs overlap. Epoch 2
    // carries the faults.
    let trace = |epoch: u64, device: u32| match (epoch, device) {
        (1, 1 | 2) => (100, if device == 1 { 30_000 } else { 20_000 }),
        _ => (100 * epoch + u64::from(device), 30_000),
    };
    let sent: Vec<Vec<Sent>> = (0..3u64)
        .map(|epoch| {
            devices
                .iter()
                .map(|&(d, seed)| {
                    let (ts, packets) = trace(epoch, d);
                    device_epoch(seed, ts, packets)
                })
                .collect()
        })
        .collect();

    let dir = out_dir();
    let (child, addr, rest) = spawn(&[
        "--allow-from".as_ref(),
        "127.0.0.0/8,::1".as_ref(),
        "--epochs".as_ref(),
        "3".as_ref(),
        "--timeout".as_ref(),
        "20".as_ref(),
        "--top".as_ref(),
        "5".as_ref(),
        "--out".as_ref(),
        dir.as_os_str(),
    ]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (epoch, devs) in sent.iter().enumerate() {
        for (&(device, _), s) in devices.iter().zip(devs) {
            let epoch = epoch as u32;
            let mut flows = datagrams(Stream::Flows, device, epoch, &s.flows);
            let mut topk = datagrams(Stream::TopK, device, epoch, &s.topk);
            if epoch == 2 && device == 2 {
                // A flipped bit in a chunk (on the device: its MAC is good): the
                // frame's CRC-32 catches it.
                flows[3] = resign(&flows[3], |d| d[40] ^= 0x10);
            }
            if epoch == 2 && device == 1 {
                // A chunk sent twice (the device numbering it again).
                let dup = resign(&topk[2], |_| {});
                topk.insert(3, dup);
            }
            send(&socket, &addr, &flows);
            send(&socket, &addr, &topk);
        }
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = rest.join().unwrap();
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!out.status.success(), "errors were counted: {ctx}");

    // Every fault counted and reported: 6 wrong-seed frames, 1 corrupt frame, 1
    // duplicate chunk; nothing else.
    assert!(
        stdout.contains(
            "8 errors: 1 out-of-order or duplicate chunk, 1 undecodable frame, 6 seed mismatch"
        ),
        "{ctx}"
    );
    assert_eq!(stderr.matches(": seed fingerprint").count(), 6, "{ctx}");
    assert!(
        stderr.contains("device 2 epoch 2 flows: checksum mismatch"),
        "{ctx}"
    );
    assert!(
        stderr.contains("device 1 epoch 2 topk: chunk at offset"),
        "{ctx}"
    );
    assert!(stdout.contains("epoch 0: 3 device(s): 1, 2, 3"), "{ctx}");
    assert!(stdout.contains("device 3 flows: seed fingerprint"), "{ctx}");

    // Every frame that arrived whole is written back byte for byte.
    for (epoch, devs) in sent.iter().enumerate() {
        for (&(device, _), s) in devices.iter().zip(devs) {
            let base = dir.join(format!("epoch-{epoch}"));
            let read = |stream: &str| {
                std::fs::read(base.join(format!("device-{device}.{stream}.loxo"))).ok()
            };
            let flows_lost = epoch == 2 && device == 2;
            let topk_lost = epoch == 2 && device == 1;
            assert_eq!(read("flows"), (!flows_lost).then(|| s.flows.clone()));
            assert_eq!(read("topk"), (!topk_lost).then(|| s.topk.clone()));
        }
    }

    for (epoch, devs) in sent.iter().enumerate().take(2) {
        check_fleet_epoch(epoch, &devs[0], &devs[1], &dir, &stdout);
    }

    // Epoch 2: device 2's flows were corrupt, so the fleet HLL is device 1's alone,
    // and device 1's top-k was dropped, so the fleet top-k is device 2's.
    let fleet = std::fs::read(dir.join("epoch-2/fleet.flows.loxo")).unwrap();
    let mut got = Hll::<14>::new(FLEET);
    got.decode_into(&fleet).unwrap();
    assert_eq!(got, *sent[2][0].hll);
    assert!(stdout.contains("fleet top flows (devices 2;"), "{ctx}");
    // `loxo inspect` reads what the collector wrote.
    for f in ["epoch-0/fleet.flows.loxo", "epoch-0/device-1.topk.loxo"] {
        let o = Command::new(env!("CARGO_BIN_EXE_loxo"))
            .arg("inspect")
            .arg(dir.join(f))
            .output()
            .unwrap();
        assert!(o.status.success(), "{f}: {o:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn collect_pfmerges_the_fleet_hll_into_redis() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let sent: Vec<Sent> = [7, 8].map(|ts| device_epoch(FLEET, ts, 10_000)).into();
    let mut merged = sent[0].hll.clone();
    merged.merge(&sent[1].hll).unwrap();
    let want = RedisHll::from_hll(&merged).count();
    // Twice: PFMERGE of the same sketch into the key leaves its count unchanged.
    for _ in 0..2 {
        let redis = server.addr();
        let (child, addr, rest) = spawn(&[
            "--epochs".as_ref(),
            "1".as_ref(),
            "--devices".as_ref(),
            "2".as_ref(),
            "--timeout".as_ref(),
            "20".as_ref(),
            "--redis".as_ref(),
            redis.as_ref(),
        ]);
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        for (device, s) in (1..).zip(&sent) {
            send(
                &socket,
                &addr,
                &datagrams(Stream::Flows, device, 0, &s.flows),
            );
            send(&socket, &addr, &datagrams(Stream::TopK, device, 0, &s.topk));
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let ctx = format!("stdout:\n{stdout}\nstderr:\n{}", rest.join().unwrap());
        assert!(out.status.success(), "{ctx}");
        assert!(stdout.contains(", 0 errors"), "{ctx}");
        assert!(
            stdout.contains(&format!(
                "redis: PFMERGE loxo:flows:epoch:0: PFCOUNT {want}"
            )),
            "{ctx}"
        );
    }
    let mut c = Client::connect(&server.addr()).unwrap();
    assert_eq!(
        c.integer(&[b"PFCOUNT", b"loxo:flows:epoch:0"]).unwrap(),
        i64::try_from(want).unwrap()
    );
    assert_eq!(
        c.integer(&[b"EXISTS", b"loxo:flows:epoch:0:incoming"])
            .unwrap(),
        0
    );
}

/// The number before `what` in `text` (`"240 datagrams"` → 240), 0 if absent.
fn count_before(text: &str, what: &str) -> u64 {
    text.find(what)
        .and_then(|i| {
            text[..i]
                .trim_end()
                .rsplit([' ', '\n', ',', ':', '('])
                .next()
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An unpaced burst (issue 33: 64 of 228 datagrams arrived, the rest lost silently):
/// 5 devices × 3 epochs × 19 datagrams = 285 sent back to back. Every datagram is
/// accounted for: those the collector read plus those it counts as dropped unread
/// (the kernel's count for its socket, `/proc/net/udp`) are all that was sent; when
/// the receive buffer granted holds the whole burst, none is dropped and every epoch
/// merges all five devices. Twice: with the default buffer, and with the smallest
/// (drops likely, each counted). ≈ 1 s.
#[test]
fn collect_counts_every_datagram_of_an_unpaced_burst() {
    let sent: Vec<Vec<Sent>> = (0..3u64)
        .map(|e| {
            (0..5u64)
                .map(|d| device_epoch(FLEET, 10 * e + d, 20_000))
                .collect()
        })
        .collect();
    let mut burst = Vec::new();
    for (epoch, devs) in (0..).zip(&sent) {
        for (device, s) in (1..).zip(devs) {
            burst.extend(datagrams(Stream::Flows, device, epoch, &s.flows));
            burst.extend(datagrams(Stream::TopK, device, epoch, &s.topk));
        }
    }
    assert!(burst.len() >= 228, "{}", burst.len());
    // The default buffer, then the smallest the kernel grants (a few datagrams): the
    // accounting holds either way.
    for recv_buffer in ["8M", "1K"] {
        burst_once(&burst, recv_buffer);
    }
}

fn burst_once(burst: &[Vec<u8>], recv_buffer: &str) {
    let (mut child, addr, rest) = spawn(&[
        "--stop-on-eof".as_ref(),
        "--recv-buffer".as_ref(),
        recv_buffer.as_ref(),
    ]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for d in burst {
        socket.send_to(d, &addr).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = rest.join().unwrap();
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    let received = count_before(&stdout, "datagrams (");
    let dropped = count_before(&stdout, "datagram dropped unread");
    assert_eq!(received + dropped, burst.len() as u64, "{ctx}");
    // A datagram costs the kernel ≈ 2.3 KiB of buffer on loopback; 4 KiB is ample.
    let granted = count_before(&stderr, "bytes, ");
    if granted >= 4096 * burst.len() as u64 {
        assert_eq!(dropped, 0, "{ctx}");
    }
    if dropped == 0 {
        assert!(out.status.success(), "{ctx}");
        assert!(stdout.contains(", 0 errors"), "{ctx}");
        for e in 0..3 {
            assert!(
                stdout.contains(&format!("epoch {e}: 5 device(s): 1, 2, 3, 4, 5")),
                "{ctx}"
            );
        }
    } else {
        // Every loss shows: the run fails, and frames are counted lost.
        assert!(!out.status.success(), "{ctx}");
        assert!(stdout.contains("frames lost in transit: device"), "{ctx}");
    }
    println!(
        "{} sent, {received} read, {dropped} dropped, buffer {granted} B ({recv_buffer} asked)",
        burst.len()
    );
}

/// `--out-max-bytes`: the files written never pass the cap; the oldest finalized
/// epoch's files go to make room, and the newest epochs are on disk. ≈ 0.5 s.
#[test]
fn collect_out_stays_within_its_cap() {
    let sent: Vec<Sent> = (0..4u64)
        .map(|e| device_epoch(FLEET, 50 + e, 10_000))
        .collect();
    let per_epoch = |s: &Sent| (s.flows.len() + s.topk.len() + s.flows.len()) as u64;
    // Room for two epochs (the fleet HLL of one device is its own HLL), not three.
    let cap = per_epoch(&sent[0]) * 5 / 2;
    let dir = out_dir().with_extension("cap");
    let _ = std::fs::remove_dir_all(&dir);
    let (child, addr, rest) = spawn(&[
        "--epochs".as_ref(),
        "4".as_ref(),
        "--timeout".as_ref(),
        "20".as_ref(),
        "--out".as_ref(),
        dir.as_os_str(),
        "--out-max-bytes".as_ref(),
        cap.to_string().as_ref(),
    ]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (epoch, s) in (0..).zip(&sent) {
        send(
            &socket,
            &addr,
            &datagrams(Stream::Flows, 1, epoch, &s.flows),
        );
        send(&socket, &addr, &datagrams(Stream::TopK, 1, epoch, &s.topk));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = rest.join().unwrap();
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(out.status.success(), "{ctx}");
    let mut total = 0;
    let mut epochs = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        epochs.push(entry.file_name().into_string().unwrap());
        for f in std::fs::read_dir(entry.path()).unwrap() {
            total += f.unwrap().metadata().unwrap().len();
        }
    }
    epochs.sort();
    assert!(total <= cap, "{total} > {cap}: {ctx}");
    assert_eq!(epochs, ["epoch-2", "epoch-3"], "{ctx}");
    assert!(stderr.contains("--out-max-bytes: removed epoch-0"), "{ctx}");
    let fleet = std::fs::read(dir.join("epoch-3/fleet.flows.loxo")).unwrap();
    let mut got = Hll::<14>::new(FLEET);
    got.decode_into(&fleet).unwrap();
    assert_eq!(got, *sent[3].hll);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 33's attacks, through the binary and real UDP. Before the honest devices: a
/// listed device with a foreign seed (it used to become the fleet's fingerprint and
/// lock the honest devices out) and an unlisted "device" 666 carrying the fleet's
/// fingerprint, whose flows sketch has every register at its largest (the fleet's
/// distinct flows used to print `inf`) and whose top-k lists a fake flow of 10¹⁵
/// bytes (it used to rank first); after them, every honest datagram of epoch 0
/// replayed. All refused and counted by reason; the honest epochs merge as if
/// nothing happened.
#[test]
fn collect_refuses_unknown_forged_and_replayed_datagrams() {
    let honest: Vec<Sent> = [61, 62].map(|ts| device_epoch(FLEET, ts, 10_000)).into();
    let fake_key = FlowKey::v4([6, 6, 6, 6], [6, 6, 6, 6], 666, 666, 17);
    let mut poisoned = Hll::<14>::new(FLEET);
    for i in 0..1 << 14 {
        poisoned.update_register(i, 64 - 14 + 1);
    }
    let mut flows = vec![0u8; poisoned.encoded_len()];
    let n = poisoned.encode_into(&mut flows).unwrap();
    flows.truncate(n);
    let mut top = Box::new(loxo_cms::SpaceSaving::<FlowKey, 256>::new());
    loxo_cms::TopK::update(
        &mut *top,
        &fake_key,
        fake_key.hash_with(&FLEET),
        1_000_000_000_000_000,
    );
    let mut topk = vec![0u8; top.encoded_len::<KEY_WIRE_LEN>()];
    top.encode_into::<KEY_WIRE_LEN>(&FLEET, &mut topk).unwrap();

    let (mut child, addr, rest) =
        spawn(&["--stop-on-eof".as_ref(), "--top".as_ref(), "3".as_ref()]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let foreign = device_epoch(ROGUE, 63, 2_000);
    send(
        &socket,
        &addr,
        &datagrams(Stream::Flows, 3, 0, &foreign.flows),
    );
    let mut rogue = Sender::new(666, device_key(666), 0);
    let forged: Vec<Vec<u8>> = rogue
        .datagrams(Stream::Flows, 0, &flows)
        .into_iter()
        .chain(rogue.datagrams(Stream::TopK, 0, &topk))
        .collect();
    send(&socket, &addr, &forged);
    let mut recorded = Vec::new();
    for epoch in 0..2 {
        for (device, s) in (1..).zip(&honest) {
            let d: Vec<Vec<u8>> = datagrams(Stream::Flows, device, epoch, &s.flows)
                .into_iter()
                .chain(datagrams(Stream::TopK, device, epoch, &s.topk))
                .collect();
            send(&socket, &addr, &d);
            if epoch == 0 {
                recorded.extend(d);
            }
        }
        if epoch == 0 {
            send(&socket, &addr, &recorded);
        }
    }
    std::thread::sleep(Duration::from_millis(200));
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = rest.join().unwrap();
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!out.status.success(), "{ctx}");
    assert_eq!(
        count_before(&stdout, "unknown device"),
        forged.len() as u64,
        "{ctx}"
    );
    assert_eq!(
        count_before(&stdout, "replayed or old sequence number"),
        recorded.len() as u64,
        "{ctx}"
    );
    assert_eq!(count_before(&stdout, "seed mismatch"), 1, "{ctx}");
    assert_eq!(count_before(&stdout, "datagram dropped unread"), 0, "{ctx}");
    assert!(
        !stdout.contains("6.6.6.6"),
        "the fake flow is not ranked: {ctx}"
    );
    assert!(!stdout.contains("inf"), "{ctx}");
    for epoch in 0..2 {
        let mut fleet = honest[0].hll.clone();
        fleet.merge(&honest[1].hll).unwrap();
        assert!(
            stdout.contains(&format!(
                "fleet distinct flows: {:.0} (relative standard error 0.81 %; devices 1, 2;",
                fleet.estimate()
            )),
            "epoch {epoch}: {ctx}"
        );
    }
    assert!(
        stderr.contains("device 666 epoch 0 flows datagram 0: not a device of the keys file"),
        "{ctx}"
    );
}

/// `--allow-from`: datagrams of other addresses are refused unread and counted; and
/// without `--keys` the collector does not start unless told `--insecure-no-auth`.
#[test]
fn collect_refuses_other_senders_and_needs_keys() {
    let (mut child, addr, rest) = spawn(&[
        "--stop-on-eof".as_ref(),
        "--allow-from".as_ref(),
        "10.0.0.0/8".as_ref(),
    ]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let s = device_epoch(FLEET, 64, 1_000);
    let d = datagrams(Stream::Flows, 1, 0, &s.flows);
    send(&socket, &addr, &d);
    // The refusals are counted when the collector stops (and every second).
    std::thread::sleep(Duration::from_millis(100));
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{}", rest.join().unwrap());
    assert!(!out.status.success(), "{ctx}");
    assert!(stdout.starts_with("0 datagrams"), "{ctx}");
    assert_eq!(
        count_before(&stdout, "sender not allowed"),
        d.len() as u64,
        "{ctx}"
    );

    let o = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["collect", "--listen", "127.0.0.1:0", "--timeout", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--keys"),
        "{o:?}"
    );

    // `--insecure-no-auth`: anything goes, an unlisted device's datagrams included.
    let mut child = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args([
            "collect",
            "--listen",
            "127.0.0.1:0",
            "--insecure-no-auth",
            "--stop-on-eof",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("loxo collect: listening on ")
        .unwrap()
        .to_owned();
    let mut rogue = Sender::new(99, device_key(99), 0);
    send(&socket, &addr, &rogue.datagrams(Stream::Flows, 0, &s.flows));
    send(&socket, &addr, &rogue.datagrams(Stream::TopK, 0, &s.topk));
    std::thread::sleep(Duration::from_millis(100));
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("devices 99;"), "{stdout}");
}
