//! End-to-end: the sample firmware in QEMU `mps2-an386`, fed a 100 000-frame trace
//! through its LAN9118 by `loxo replay`, must
//! * count every frame sent (nothing lost to the RX FIFO), with no NIC error or
//!   overrun, inside the RAM budget;
//! * report, per epoch of 16 384 frames, every flow at θ = 1 % of the epoch's IP bytes
//!   (the firmware's `ByteWeight::Ip`, IPFIX's unit; recall 1.0), with byte bounds that contain the exact figure, "certain" only when
//!   the truth is at θ, and no elephant whose true share is below θ/2;
//! * count per epoch exactly the frames, IP packets, bytes, non-first fragments,
//!   non-IP frames and malformed frames the generator made, and the distinct flows
//!   and sources within 4σ of the exact counts (σ derived at each count), new flows
//!   never above the truth and, below the filters' design load, not flagged and not
//!   under the truth by more than the register-Bloom theory's rate (+4σ).
//!
//! The exact figures are the generator's truth, not a parse: the trace is `loxo gen
//! --packets 100000 --flows 10000 --zipf 1.0 --malformed 0.01 --seed 7` (what `cargo
//! xtask demo` generates; Zipf flows over IPv4, IPv6, VLAN and QinQ with fragments and
//! ICMP), and the test regenerates it in-process with
//! `loxo_cli::trace::generate_with_truth`, which gives each frame's key as the
//! generator built it, its length, IP length and expected outcome (the same rows `loxo gen`
//! writes to `demo-7.truth.csv`), so a parser bug in the firmware cannot hide behind
//! the same parser on the host. Runs `cargo xtask demo` with the `xtask` and
//! `loxo` binaries the outer `cargo test --workspace` built (`loxo_tests::demo`; no
//! cargo run, so no build lock to wait on); every child process has a deadline. Needs `qemu-system-arm` and the `thumbv7em-none-eabihf`
//! target (xtask installs them when it can).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use loxo_cli::trace::Expected;
use loxo_flow::{
    FlowKey, Theta, FLOWS_P, NEW_FLOW_CAPACITY, NEW_FLOW_K, NEW_FLOW_WORDS, SOURCES_P,
};
use loxo_tests::bloom_theory::register_fpr;
use loxo_tests::demo::{demo_truth, exact_epochs, fields, flow_key};
use loxo_tests::hll_theory::check_estimate;

const FRAMES: u64 = 100_000;
/// The firmware's `EPOCH_FRAMES`.
const EPOCH: usize = 16_384;
/// θ = 1 %, the firmware's.
const THETA: Theta = match Theta::new(1, 100) {
    Some(t) => t,
    None => panic!(),
};

/// One `elephant:` line of the firmware log.
#[derive(Debug)]
struct Reported {
    certain: bool,
    bytes_lower: u64,
    bytes_upper: u64,
    packets_upper: u64,
    key: FlowKey,
}

#[test]
fn firmware_monitors_a_100k_trace_against_the_generator_truth() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-e2e");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = loxo_tests::demo::xtask_demo()
        .arg("--summary")
        .args([
            "--icount",
            "--timeout",
            "900",
            "--frames",
            &FRAMES.to_string(),
            // The largest batches: each fills the LAN9118's RX data FIFO (10 560
            // bytes) but for the 64 its closing SYNC needs, before the firmware's ACK
            // lets the next one go.
            "--batch-bytes",
            "10496",
        ])
        // A fixed test provisioning: the instruction count depends (a little) on
        // the seed, and the cost assertion below must be deterministic. Devices get
        // random ones (`firmware/build.rs`, `out/device.seed`).
        .env("LOXO_DEVICE_SEED", loxo_tests::demo::TEST_DEVICE_SEED)
        .env("LOXO_CONTROL_KEY", loxo_tests::demo::TEST_CONTROL_KEY)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });

    // Meanwhile: the same trace's truth, in-process, and the exact figures per epoch.
    // QEMU's LAN9118 carries 14..=2048-byte frames: `loxo replay` skips the others
    // (the generator's sub-14-byte runts), so the firmware never sees them.
    let truth = demo_truth(FRAMES, 7);
    let sent = truth.len() as u64;
    assert!(FRAMES - sent < 200, "only runts are skipped: {sent}");
    let injected = truth
        .iter()
        .filter(|t| matches!(t.expected, Expected::Malformed(_)))
        .count() as u64;
    assert!(injected > 500, "{injected} malformed frames");
    // The firmware weighs frames by their IP bytes (IPFIX's unit), so does the truth.
    let exact = exact_epochs(&truth, EPOCH);
    let fragments: Vec<u64> = truth
        .chunks(EPOCH)
        .map(|c| {
            c.iter()
                .filter(|t| t.expected == Expected::Flow && t.fragment)
                .count() as u64
        })
        .collect();

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

    let report = loxo_tests::demo::report_numbers(&out);
    let get = |k: &str| {
        *report
            .get(k)
            .unwrap_or_else(|| panic!("{k} missing from report"))
    };
    assert_eq!(
        get("final.sent"),
        sent,
        "replay sent every deliverable frame"
    );
    assert_eq!(get("final.frames"), sent, "firmware counted every frame");
    assert_eq!(get("final.monitor_frames"), sent);
    assert_eq!(get("final.malformed"), injected, "parse errors == injected");
    assert_eq!(get("nic.rx_errors"), 0);
    assert_eq!(get("nic.overruns"), 0);
    // RAM budget of an STM32F4-class MCU: statics + painted-stack peak.
    assert!(get("ram.total") <= 128 * 1024, "ram {}", get("ram.total"));
    // Cost goal, counted deterministically under `-icount shift=7`: parse + full
    // monitor ≤ 1 000 instructions per frame on average.
    let mean = get("cost.insns_per_frame_mean");
    println!("cost: {mean} instructions per frame (mean)");
    assert!(mean <= 1_000, "{mean} instructions per frame");
    // The distribution the device keeps (exact instruction counts in buckets of 10
    // instructions): percentiles ordered, the mean inside them, every percentile a
    // bucket's last value (…9) or the maximum. The tail's budget (p99.9 ≤ 1 129, line rate of 64-byte frames
    // at 168 MHz) is the flood issue's target, printed here, not yet asserted.
    let (p50, p99, p999, max) = (
        get("cost.insns_per_frame_p50"),
        get("cost.insns_per_frame_p99"),
        get("cost.insns_per_frame_p999"),
        get("cost.insns_per_frame_max"),
    );
    println!("cost: p50 {p50}, p99 {p99}, p99.9 {p999}, max {max} instructions per frame");
    assert!(
        p50 <= p99 && p99 <= p999 && p999 <= max,
        "{p50} {p99} {p999} {max}"
    );
    assert!(p50 > 0 && mean <= max, "{p50} {mean} {max}");
    assert!([p50, p99, p999].iter().all(|&v| v % 10 == 9 || v == max));
    let (end_mean, end_max) = (
        get("cost.epoch_end_insns_mean"),
        get("cost.epoch_end_insns_max"),
    );
    println!("epoch end: {end_mean} instructions (mean), {end_max} (max)");
    assert!(end_mean > 0 && end_mean <= end_max, "{end_mean} {end_max}");
    // Line rate (issue 27): the firmware's arrival model (frames back to back at
    // 100 Mbit/s, 1 129 instructions apart for 64-byte frames, served in order with
    // the work the firmware measured) must never need more than the 165 minimum-size
    // frames the RX data FIFO holds, epoch ends included: the longest stretch without
    // a read (the atomic close or one export slice) stays under 164 × 1 129.
    let (lag, backlog, fifo) = (
        get("linerate.lag_max_insns"),
        get("linerate.backlog_max"),
        get("linerate.fifo_frames"),
    );
    let window = get("epoch_end.window_insns_max");
    println!(
        "line rate: lag max {lag} instructions, backlog max {backlog} of {fifo} frames; longest epoch-end window {window}"
    );
    assert_eq!(fifo, 10_560 / 64, "the RX data FIFO in 64-byte frames");
    assert_eq!(backlog, lag / 1_129 + 1);
    // Issue 27: on this trace the backlog peaks at 114 of 165 (the longest window is
    // the flows-encode slice, 128 k, with its CRC in a slice of its own); it was 176
    // with the epoch end's atomic close at 188 k and 167 with the encode and CRC in
    // one 188 k slice.
    assert!(
        backlog <= fifo,
        "line-rate backlog {backlog} > the FIFO's {fifo} frames"
    );
    assert!(
        window < (fifo - 1) * 1_129,
        "an epoch-end window of {window} instructions outlasts the FIFO"
    );
    assert_eq!(
        get("linerate.frames"),
        sent + get("final.control") + get("final.control_rejected") + get("final.own"),
        "every frame is data, an accepted or a refused control frame (counted apart), or the device's own"
    );

    // Per epoch: frame and malformed counts, then the elephants.
    let mut epochs: BTreeMap<u64, BTreeMap<&str, &str>> = BTreeMap::new();
    let mut elephants: HashMap<u64, Vec<Reported>> = HashMap::new();
    let mut in_order: Vec<(u64, FlowKey, u64, u64, u64)> = Vec::new();
    for line in out.lines().filter(|l| !l.starts_with("report.")) {
        if let Some(f) = fields(line, "epoch: ") {
            epochs.insert(f["n"].parse().unwrap(), f);
        } else if let Some(f) = fields(line, "elephant: ") {
            in_order.push((
                f["epoch"].parse().unwrap(),
                flow_key(line),
                f["bytes_lower"].parse().unwrap(),
                f["bytes_upper"].parse().unwrap(),
                f["packets_upper"].parse().unwrap(),
            ));
            elephants
                .entry(f["epoch"].parse().unwrap())
                .or_default()
                .push(Reported {
                    certain: f["status"] == "certain",
                    bytes_lower: f["bytes_lower"].parse().unwrap(),
                    bytes_upper: f["bytes_upper"].parse().unwrap(),
                    packets_upper: f["packets_upper"].parse().unwrap(),
                    key: flow_key(line),
                });
        }
    }
    assert_eq!(epochs.len(), exact.len(), "one report per epoch");
    for (n, e) in &epochs {
        assert_eq!(e["elephants_complete"], "true");
        // A row per candidate (128 on the firmware): every listed elephant is logged.
        let listed: usize = e["elephants"].parse().unwrap();
        assert!(listed <= 128, "epoch {n}: {listed} rows");
        assert_eq!(
            listed,
            elephants.get(n).map_or(0, Vec::len),
            "epoch {n}: one line per listed elephant"
        );
    }
    let mut total_elephants = 0;
    let mut previous: HashSet<FlowKey> = HashSet::new();
    for (i, ex) in exact.iter().enumerate() {
        let e = &epochs[&(i as u64)];
        let malformed: u64 = ex.errors.iter().sum();
        let num = |k: &str| -> u64 { e[k].parse().unwrap() };
        assert_eq!(num("frames"), EPOCH.min(truth.len() - i * EPOCH) as u64);
        assert_eq!(num("malformed"), malformed, "epoch {i}");
        assert_eq!(num("packets"), ex.total.packets, "epoch {i}");
        assert_eq!(num("bytes"), ex.total.bytes, "epoch {i}");
        assert_eq!(num("not_ip"), ex.not_ip, "epoch {i}");
        assert_eq!(num("fragments"), fragments[i], "epoch {i}");
        // Distinct flows (Hll<14>, ~3 900 flows in a full epoch: t = n/m ≈ 0.24,
        // σ = 0.57 %) and sources (Hll<10>, ~3 800: t ≈ 3.7, σ = 2.8 %), σ derived at
        // each count by the delta method (`loxo_tests::hll_theory`); 4σ around the
        // bias at that count.
        for (what, p, n) in [
            ("distinct_flows", FLOWS_P, ex.flows.len() as u64),
            ("distinct_sources", SOURCES_P, ex.sources() as u64),
        ] {
            let dev = check_estimate(num(what) as f64, n, p, 4.0)
                .unwrap_or_else(|msg| panic!("epoch {i}: {what}: {msg}"));
            println!("epoch {i}: {what} {} of {n} ({dev:+.2}σ)", num(what));
        }
        // New flows: flows of this epoch absent from the previous one, a
        // Horvitz–Thompson estimate (each new flow counted with probability 1 − p,
        // weighed 1/(1 − p)). Below the filters' design load (`NEW_FLOW_CAPACITY`, both
        // epochs) the report must not be flagged and the error is within 4σ, σ² =
        // n·p/(1 − p) with p = 1 − (1 − fpr(|current|))(1 − fpr(|previous|)) from the
        // register-Bloom theory at the true flow counts (`loxo_tests::bloom_theory`, not
        // the firmware's own figures). Past the design load the report must say so,
        // and the error is within 4 of the σ it states (`new_flows_sigma`).
        let current: HashSet<FlowKey> = ex.flows.keys().copied().collect();
        let truly_new = current.difference(&previous).count() as f64;
        let new_flows = num("new_flows") as f64;
        let stated_sigma: f64 = e["new_flows_sigma"].parse().unwrap();
        let cap = NEW_FLOW_CAPACITY as usize;
        let overloaded = e["new_flows_overloaded"] == "true";
        if current.len() <= cap && previous.len() <= cap {
            let fpr = |n: usize| register_fpr(NEW_FLOW_WORDS as u64, NEW_FLOW_K, n as u64);
            let p = 1.0 - (1.0 - fpr(current.len())) * (1.0 - fpr(previous.len()));
            let sigma = (truly_new * p / (1.0 - p)).sqrt();
            assert!(
                !overloaded,
                "epoch {i}: {} flows flagged overloaded",
                current.len()
            );
            assert!(
                (new_flows - truly_new).abs() <= 4.0 * sigma + 1.0,
                "epoch {i}: new flows {new_flows} of {truly_new}, beyond 4σ = {:.1} (theory FPR {p:.5})",
                4.0 * sigma
            );
        } else {
            if current.len() * 10 >= cap * 11 {
                assert!(
                    overloaded,
                    "epoch {i}: {} flows, not flagged",
                    current.len()
                );
            }
            assert!(
                (new_flows - truly_new).abs() <= 4.0 * stated_sigma + 1.0,
                "epoch {i}: new flows {new_flows} of {truly_new}, beyond 4 stated σ = {stated_sigma:.1}"
            );
        }
        println!("epoch {i}: new flows {new_flows} ± {stated_sigma:.1} of {truly_new}");
        previous = current;
        let reported = elephants.remove(&(i as u64)).unwrap_or_default();
        let truth = ex.heavy(THETA, true);
        for (k, c) in &truth {
            assert!(
                reported.iter().any(|r| r.key == *k),
                "epoch {i}: elephant {k} ({} bytes of {}) not reported",
                c.bytes,
                ex.total.bytes
            );
        }
        for r in &reported {
            let (k, c) = ex
                .flows
                .iter()
                .find(|(k, _)| **k == r.key)
                .expect("reported key is a real flow");
            let share = c.bytes as f64 / ex.total.bytes as f64;
            assert!(
                share >= THETA.to_f64() / 2.0,
                "epoch {i}: {k} at share {share} < θ/2"
            );
            // Certain bounds contain the truth; "certain" means at θ for sure.
            assert!(
                r.bytes_lower <= c.bytes && c.bytes <= r.bytes_upper,
                "epoch {i}: {k}: {r:?} vs {}",
                c.bytes
            );
            assert!(r.packets_upper >= c.packets, "epoch {i}: {k}: {r:?}");
            if r.certain {
                assert!(
                    THETA.reached(c.bytes, ex.total.bytes),
                    "epoch {i}: {k}: {r:?}"
                );
            }
        }
        println!(
            "epoch {i}: {} exact elephants, {} reported",
            truth.len(),
            reported.len()
        );
        total_elephants += truth.len();
    }
    assert!(
        total_elephants >= exact.len(),
        "the trace has elephants to find"
    );

    // The IPFIX export as the collector saw it: nfdump's listing of what nfcapd
    // received holds every reported elephant, in report order, with the addresses,
    // ports, protocol, IP bytes and packets of the firmware's report (the upper
    // bounds, which are the exact figures whenever the bounds are exact).
    // The sketch datagrams as `loxo collect` saw them: one device, and per epoch the
    // fleet's distinct-flow estimate is the firmware's own (the same HLL, merged alone).
    let mut logged = Vec::new();
    let mut fleet = Vec::new();
    for line in out.lines() {
        if let Some(f) = fields(line, "sketch: ") {
            logged.push(f["estimate"].parse::<u64>().unwrap());
        } else if let Some(rest) = line.trim().strip_prefix("fleet distinct flows: ") {
            fleet.push(
                rest.split_whitespace()
                    .next()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap(),
            );
        }
    }
    assert_eq!(logged.len(), exact.len(), "one sketch per epoch");
    assert_eq!(fleet, logged, "loxo collect's fleet estimates");

    let listing = nfdump_listing(&out);
    assert_eq!(
        listing.len(),
        in_order.len(),
        "one flow record per reported elephant"
    );
    for ((key, bytes, packets), (epoch, k, lower, upper, packets_upper)) in
        listing.iter().zip(&in_order)
    {
        assert_eq!(
            (key, *bytes, *packets),
            (k, *upper, *packets_upper),
            "epoch {epoch}"
        );
        if lower == upper {
            let c = exact[*epoch as usize].flows[k];
            assert_eq!(*bytes, c.bytes, "epoch {epoch}: {k}: exact IP bytes");
        }
    }
}

/// The flow records of the demo's nfdump listing (`fmt:%ts %td %pr %sap -> %dap %pkt
/// %byt`, full IPv6 addresses): key, bytes, packets.
fn nfdump_listing(out: &str) -> Vec<(FlowKey, u64, u64)> {
    let start = out
        .find("--- nfdump:")
        .expect("the demo prints nfdump's listing");
    let endpoint = |s: &str| -> SocketAddr {
        // nfdump writes `a.b.c.d:port` and `v6:addr.port`.
        let (addr, port) = if s.matches(':').count() > 1 {
            s.rsplit_once('.').unwrap()
        } else {
            s.rsplit_once(':').unwrap()
        };
        SocketAddr::new(addr.parse().unwrap(), port.parse().unwrap())
    };
    out[start..]
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with('('))
        // A DDoS participant's record (templates 259–264: addresses and a distinct
        // count, no packets or bytes) is listed by nfdump as a flow of nothing: not
        // an elephant.
        .filter(|l| !l.trim_end().ends_with(" 0 0"))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(t.len(), 9, "{l}");
            let proto: u8 = match t[3] {
                "TCP" => 6,
                "UDP" => 17,
                "ICMP" => 1,
                "ICMP6" => 58,
                p => p.parse().unwrap(),
            };
            let (s, d) = (endpoint(t[4]), endpoint(t[6]));
            let key = match (s.ip(), d.ip()) {
                (IpAddr::V4(a), IpAddr::V4(b)) => {
                    FlowKey::v4(a.octets(), b.octets(), s.port(), d.port(), proto)
                }
                (IpAddr::V6(a), IpAddr::V6(b)) => {
                    FlowKey::v6(a.octets(), b.octets(), s.port(), d.port(), proto)
                }
                _ => panic!("{l}"),
            };
            (key, t[8].parse().unwrap(), t[7].parse().unwrap())
        })
        .collect()
}
