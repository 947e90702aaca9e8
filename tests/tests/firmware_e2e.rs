//! End-to-end: the sample firmware in QEMU `mps2-an386`, fed a 100 000-frame
//! trace through its LAN9118 by `loxo replay`, must count every frame sent
//! (nothing lost to the RX FIFO), see no NIC error or overrun, and stay inside
//! the RAM budget.
//!
//! The trace is written here (classic pcap, seeded): Zipf-distributed flows
//! over IPv4, IPv6 and 802.1Q-tagged IPv4, plus malformed frames (a
//! truncated IPv4 header) that are still ≥ 14 bytes, the smallest frame
//! QEMU's LAN9118 model accepts. Runs `cargo xtask demo --pcap` in a separate
//! target directory (no lock contention with the outer `cargo test`); every
//! child process has a deadline, so the test fails instead of hanging.
//!
//! Needs `qemu-system-arm` and the `thumbv7em-none-eabihf` target (xtask
//! installs them when it can).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FRAMES: usize = 100_000;
const FLOWS: usize = 2_000;
/// One frame in `MALFORMED_EVERY` is a truncated IPv4 packet.
const MALFORMED_EVERY: usize = 97;

/// SplitMix64: a tiny seeded generator, enough for a reproducible trace.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One frame of `flow`, `len` bytes on the wire (UDP over IPv4, IPv6 or
/// 802.1Q-tagged IPv4, with exact IP and UDP length fields), or a malformed
/// one: an IPv4 header cut after 6 bytes ("IPv4 header truncated").
fn frame(flow: usize, len: usize, malformed: bool) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0, 0x20];
    let kind = flow % 3;
    if kind == 2 {
        f.extend_from_slice(&[0x81, 0x00, 0x00, (flow % 250) as u8 + 1]);
    }
    if malformed {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 40, 0, 0]);
        return f;
    }
    let ip_header = if kind == 1 { 40 } else { 20 };
    let udp_len = len.saturating_sub(f.len() + 2 + ip_header).max(8);
    let flow_bytes = (flow as u32).to_be_bytes();
    if kind == 1 {
        f.extend_from_slice(&[0x86, 0xDD, 0x60, 0, 0, 0]);
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[17, 64]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&flow_bytes);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        f.extend_from_slice(&((20 + udp_len) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, flow_bytes[1], flow_bytes[2], flow_bytes[3]]);
        f.extend_from_slice(&[10, 255, 0, 1]);
    }
    f.extend_from_slice(&((1024 + flow % 60_000) as u16).to_be_bytes());
    f.extend_from_slice(&[0x01, 0xBB]);
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    let end = f.len() + udp_len - 8;
    f.resize(end, 0xAB);
    f
}

/// Writes the trace; returns (frames, malformed frames).
fn write_trace(path: &Path) -> (usize, usize) {
    // Zipf(s = 1.1) over FLOWS ranks by inverse CDF on the cumulative weights.
    let weights: Vec<f64> = (1..=FLOWS).map(|r| (r as f64).powf(-1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::with_capacity(FLOWS);
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    let mut rng = Rng(0x1234_5678_9ABC_DEF0);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(&0xA1B2_C3D4u32.to_le_bytes()).unwrap();
    out.write_all(&[2, 0, 4, 0]).unwrap();
    out.write_all(&[0; 8]).unwrap();
    out.write_all(&65_535u32.to_le_bytes()).unwrap();
    out.write_all(&1u32.to_le_bytes()).unwrap();
    let mut malformed = 0;
    for i in 0..FRAMES {
        let u = rng.unit();
        let flow = cdf.partition_point(|&c| c < u).min(FLOWS - 1);
        let bad = i % MALFORMED_EVERY == 0;
        malformed += usize::from(bad);
        let len = [60, 64, 128, 576, 1514][(rng.next() % 5) as usize];
        let f = frame(flow, len, bad);
        assert!(f.len() >= 14 && f.len() <= 1518);
        out.write_all(&(i as u32 / 1000).to_le_bytes()).unwrap();
        out.write_all(&((i as u32 % 1000) * 1000).to_le_bytes())
            .unwrap();
        out.write_all(&(f.len() as u32).to_le_bytes()).unwrap();
        out.write_all(&(f.len() as u32).to_le_bytes()).unwrap();
        out.write_all(&f).unwrap();
    }
    out.flush().unwrap();
    (FRAMES, malformed)
}

#[test]
fn firmware_counts_every_frame_of_a_100k_trace() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-e2e");
    std::fs::create_dir_all(&tmp).unwrap();
    let pcap = tmp.join("trace.pcap");
    let (frames, malformed) = write_trace(&pcap);
    assert!(malformed > 1000);

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut child = Command::new(cargo)
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "xtask",
            "--",
            "demo",
            "--summary",
        ])
        .args(["--icount", "--timeout", "900", "--pcap"])
        .arg(&pcap)
        .current_dir(root)
        .env("CARGO_TARGET_DIR", tmp.join("target"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    // xtask has its own 900 s deadline; this one covers the builds too.
    let deadline = Instant::now() + Duration::from_mins(25);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("cargo xtask demo did not finish within 25 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = reader.join().unwrap();
    println!("{out}");
    assert!(status.success(), "cargo xtask demo failed: {status}");

    let report: BTreeMap<&str, u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("report."))
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect();
    let get = |k: &str| {
        *report
            .get(k)
            .unwrap_or_else(|| panic!("{k} missing from report"))
    };
    assert_eq!(get("final.sent"), frames as u64, "replay sent every frame");
    assert_eq!(
        get("final.frames"),
        frames as u64,
        "firmware counted every frame"
    );
    assert_eq!(get("final.monitor_frames"), frames as u64);
    assert_eq!(get("nic.rx_errors"), 0);
    assert_eq!(get("nic.overruns"), 0);
    // RAM budget of an STM32F4-class MCU: statics + painted-stack peak.
    assert!(get("ram.total") <= 128 * 1024, "ram {}", get("ram.total"));
}
