//! The firmware's per-frame cost on every traffic class the generator makes (issue 27
//! items 1 and 5): in one QEMU run (`cargo xtask demo --icount`, `-icount shift=7`,
//! so the counts are deterministic and exact) over a capture made of one whole firmware epoch
//! (`EPOCH_FRAMES` = 16 384 frames) of each class in turn, the firmware's
//! `epoch_cost:` line of each epoch — the distribution of that class's frames alone,
//! from a SysTick histogram kept on the device — must show
//! * a mean ≤ 800 instructions per frame, and
//! * a 99.9th percentile ≤ 1 129 instructions per frame: the line rate of 64-byte
//!   frames (100 Mbit/s: 148 810 frames/s) on a 168 MHz Cortex-M4, one cycle per
//!   instruction at best.
//!
//! Classes (`loxo gen --class`, `loxo_cli::trace::TrafficClass`): 90 % floods of
//! one-packet flows from random IPv4 sources, the same over IPv6, a SYN flood (random
//! source ports), minimum-size frames, IPv6 with extension headers, VLAN/QinQ,
//! non-first fragments, horizontal and vertical scans (50 %), distributed floods from
//! spoofed IPv4 / IPv6 sources onto one victim and onto four (90 %), scanners hidden
//! in the mix (4 %), and last the demo's own mix (Zipf(1) over 10 000 flows, 1 %
//! malformed: the frames `cargo xtask demo` replays). Every class but the attack
//! frames' share is the demo's population (Zipf(1), 10 000 flows, seed 7: the capture
//! every per-frame change was judged on). The same classes drawn under a held-out
//! seed (1 000 007, looked at by no design choice) run too, with the mean budget
//! asserted and the tail only printed: a figure that holds on seed 7 alone is that
//! capture's, not the design's.
//!
//! The same run checks the firmware's DDoS participants (issue 28): each hscan,
//! vscan, ddos-v4, ddos-v6 and ddos-multi epoch's `participant:` lines name every
//! participant the generator designed for it.
//!
//! The test also checks that each epoch is the class it was fed (the `epoch:` line's
//! frames and IP packets are that class's, from the generator's truth) and that the
//! run-wide `cost:` line is the epochs' figures folded together. It prints the table
//! (class, mean, p50, p99, p99.9, max) before asserting; the mean budget is asserted in
//! CI with each class's p99.9 held to a regression pin (the tail as measured, not the
//! budget), the tail budget by the ignored test until it holds. Runs `cargo xtask demo`
//! (the `xtask` and `loxo` binaries of this test run, `loxo_tests::demo`) with the test
//! provisioning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, Instant};

use loxo_cli::trace::{
    designed, generate_with_truth, Expected, Popularity, SpreadKey, TraceConfig, TrafficClass,
};
use loxo_tests::demo::fields;
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// The firmware's `EPOCH_FRAMES`.
const EPOCH: u64 = 16_384;
/// The generator seed of the captures the per-frame path was measured and tuned on
/// (every change of issue 27 was judged on its classes' figures).
const TUNED_SEED: u64 = 7;
/// A seed no design choice looked at: the same classes drawn anew, to check that the
/// figures claimed on [`TUNED_SEED`] are not that capture's.
const HELD_OUT_SEED: u64 = 1_000_007;
/// Issue 27's mean budget, instructions per frame, on every class.
const MEAN_BUDGET: u64 = 800;
/// Issue 27's tail budget: 168 MHz / 148 810 frames/s = 1 129 cycles per frame (the
/// device counts each frame's instructions exactly and reports a percentile as the
/// last value of its 10-instruction bucket: 1 129 passes, 1 139 does not).
const P999_BUDGET: u64 = 1_129;

/// **Regression pins** of the tail, not issue 27's budget: each class's p99.9 as
/// measured with exact instruction counts (`-icount shift=7`; `firmware/README.md`)
/// plus 40 instructions of slack for code-layout shifts. They keep the tail from
/// growing back unnoticed while the budget ([`P999_BUDGET`]) is not met; lower them
/// as the tail falls. A class that meets the budget is held to it, without slack.
/// (With SysTick ticks of 40 instructions, before, the same code read flood-v6,
/// scan-hidden and the demo mix as 1 120 — the mix's tail was 1 139 exactly — and
/// fragments, vscan, ddos-v6 and ddos-multi as 1 160.)
const P999_PINS: [(&str, u64); 14] = [
    ("flood-v4", 1_199 + 40),
    ("flood-v6", P999_BUDGET),
    ("syn-flood", P999_BUDGET),
    ("min-size", P999_BUDGET),
    ("ipv6-ext", 1_229 + 40),
    ("vlan-qinq", 1_219 + 40),
    ("fragments", 1_159 + 40),
    ("hscan", 1_299 + 40),
    ("vscan", 1_149 + 40),
    ("ddos-v4", P999_BUDGET),
    ("ddos-v6", 1_179 + 40),
    ("ddos-multi", 1_169 + 40),
    ("scan-hidden", P999_BUDGET),
    ("mix", P999_BUDGET),
];

/// One class's figures from its `epoch_cost:` line.
#[derive(Debug)]
struct Cost {
    /// Frames timed.
    frames: u64,
    mean: u64,
    p50: u64,
    p99: u64,
    p999: u64,
    max: u64,
    /// Frames over the line-rate period (1 129 instructions), exactly.
    over: u64,
}

/// Every class measured, its epoch identified and the run's figures consistent, and
/// issue 27's mean budget (≤ 800 instructions per frame) held on every class; the
/// table printed with each class's standing against the tail budget. Runs in CI.
#[test]
fn per_frame_cost_of_every_traffic_class_is_measured_and_its_mean_within_budget() {
    measure_classes(TUNED_SEED, Tail::Pinned);
}

/// The same run on [`HELD_OUT_SEED`]'s capture: every check but the tail's pins (they
/// are [`TUNED_SEED`]'s figures), the mean budget asserted; the table says which
/// classes meet the tail budget there. Runs in CI.
#[test]
fn per_frame_cost_on_a_held_out_capture_is_within_the_mean_budget() {
    measure_classes(HELD_OUT_SEED, Tail::Printed);
}

/// Issue 27's tail budget (p99.9 ≤ 1 129) on every class too. Not met yet
/// (Space-Saving evictions, ≈ 4 % of a flood's frames, cost ≈ +500 on a first frame of
/// ≈ 750: the closing note and `firmware/README.md` give the measured table), so not
/// part of the default run: `cargo test -p loxo-tests --test firmware_cost_classes --
/// --ignored` checks it.
#[test]
#[ignore = "issue 27 open: six classes of 14 (flood-v6, syn-flood, min-size, ddos-v4, scan-hidden, mix) have p99.9 ≤ 1 129"]
fn per_frame_cost_of_every_traffic_class_is_within_budget() {
    measure_classes(TUNED_SEED, Tail::Budget);
}

/// What [`measure_classes`] asserts of each class's p99.9.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Its regression pin ([`P999_PINS`], [`TUNED_SEED`]'s capture only).
    Pinned,
    /// Issue 27's budget ([`P999_BUDGET`]).
    Budget,
    /// Nothing: printed with its standing against the budget.
    Printed,
}

/// **Regression pins** of the mean with every attack frame and no ordinary one (the
/// classes at `--flood 1`, each after the demo's mix): measured + 5. Issue 27's budget
/// is ≤ 800 on every class of ≥ 90 % floods; at 100 % the IPv6 DDoS is over it.
const FULL_MEAN_PINS: [(&str, u64); 8] = [
    ("flood-v4", 757 + 5),
    ("flood-v6", 755 + 5),
    ("syn-flood", 702 + 5),
    ("ddos-v4", 703 + 5),
    ("ddos-v6", 819 + 5),
    ("ddos-multi", 782 + 5),
    ("hscan", 698 + 5),
    ("vscan", 779 + 5),
];

/// Issue 27 at its extreme, "≥ 90 % floods" taken to 100 %: between two epochs of the
/// demo's mix, one epoch of each flood, scan and DDoS class with every frame an
/// attack frame (`loxo gen --flood 1`: a one-packet flow, a scan probe, a spoofed
/// source), minimum-size frames for the IPv4 classes. Asserted in CI: the line rate
/// (the arrival model's FIFO never over its 165 frames — before the overdue export
/// was paced by the FIFO's room, the IPv4 flood after the mix needed 310), every
/// designed participant named, and each mean held to its regression pin; printed:
/// the means against issue 27's 800 (the IPv6 DDoS, 824, is over).
#[test]
fn full_floods_keep_line_rate() {
    measure_full_floods(false);
}

/// Issue 27's budgets (mean ≤ 800, p99.9 ≤ 1 129) at 100 % floods. Not met.
#[test]
#[ignore = "issue 27 open: at 100 % attack frames the IPv6 DDoS's mean is 824 and most tails are over 1 129"]
fn full_floods_within_budget() {
    measure_full_floods(true);
}

/// The 100 % run and its checks; with `enforce`, issue 27's budgets too.
fn measure_full_floods(enforce: bool) {
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-full-floods");
    std::fs::create_dir_all(&tmp).unwrap();
    let pcap = tmp.join("full.pcap");
    let mut classes = vec![TrafficClass::Mix];
    classes.extend(FULL_MEAN_PINS.iter().map(|&(name, _)| {
        TrafficClass::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .unwrap()
    }));
    // The mix last as well (its malformed frames' runts shorten the last epoch, which
    // END closes: no empty epoch after it).
    classes.push(TrafficClass::Mix);
    let full = |c: TrafficClass| if c == TrafficClass::Mix { 0.0 } else { 1.0 };
    let (expected, designed) = write_capture(&pcap, &classes, full, TUNED_SEED);
    let run = run_demo(&pcap, &expected);
    let (stdout, get) = (run.stdout.as_str(), |k: &str| run.get(k));
    println!("100 % floods | mean |   p99.9 |   max | over 1 129 (instructions per frame; frames)");
    let mut over = Vec::new();
    for (class, c) in class_costs(stdout, &classes, &expected) {
        println!(
            "{:<12} | {:>4} | {:>7} | {:>5} | {:>5}",
            class.name(),
            c.mean,
            c.p999,
            c.max,
            c.over
        );
        let Some(&(_, pin)) = FULL_MEAN_PINS
            .iter()
            .find(|(name, _)| *name == class.name())
        else {
            continue;
        };
        assert!(
            c.mean <= pin,
            "{class} at 100 %: mean {} over its regression pin {pin}",
            c.mean
        );
        if c.mean > MEAN_BUDGET || c.p999 > P999_BUDGET {
            over.push(format!("{class}: mean {}, p99.9 {}", c.mean, c.p999));
        }
    }
    check_participants(stdout, &classes, &designed);
    check_line_rate(&get, stdout, &classes);
    if enforce {
        assert!(
            over.is_empty(),
            "over budget at 100 %:\n{}",
            over.join("\n")
        );
    } else if !over.is_empty() {
        println!(
            "over budget at 100 % (issue 27, open):\n{}",
            over.join("\n")
        );
    }
}

/// The run and its checks, the mean budget among them; with `enforce_tail`, the
/// p99.9 budget too.
fn measure_classes(seed: u64, tail: Tail) {
    let started = Instant::now();
    let tmp = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-cost-classes");
    std::fs::create_dir_all(&tmp).unwrap();
    // One file per seed: the tests of this file may run at once.
    let pcap = tmp.join(if seed == TUNED_SEED {
        "classes.pcap".to_owned()
    } else {
        format!("classes-{seed}.pcap")
    });

    // The capture: one epoch per class, the demo's mix last.
    let mut classes: Vec<TrafficClass> = TrafficClass::ALL
        .into_iter()
        .filter(|&c| c != TrafficClass::Mix)
        .collect();
    classes.push(TrafficClass::Mix);
    let (expected, designed) = write_capture(&pcap, &classes, TrafficClass::default_flood, seed);
    let generated = started.elapsed();

    let run = run_demo(&pcap, &expected);
    let (stdout, stderr, get) = (run.stdout.as_str(), run.stderr.as_str(), |k: &str| {
        run.get(k)
    });
    let sent = run.get("final.sent");
    assert!(get("ram.total") <= 128 * 1024, "ram {}", get("ram.total"));

    println!(
        "class       |  mean |   p50 |   p99 | p99.9 |   max | over 1 129 (instructions per frame; frames)"
    );
    let costs = class_costs(stdout, &classes, &expected);
    let mut over = Vec::new();
    for &(class, ref c) in &costs {
        if let Some(line) = check_class_cost(class, c, tail) {
            over.push(line);
        }
    }
    // The run-wide `cost:` line is the epochs folded together: the largest maximum,
    // and the frame-weighted mean (each figure rounded down, hence the 1-instruction
    // slack).
    let max = costs.iter().map(|(_, c)| c.max).max().unwrap();
    assert_eq!(get("cost.insns_per_frame_max"), max);
    let weighted: u64 = costs.iter().map(|(_, c)| c.frames * c.mean).sum();
    let mean = get("cost.insns_per_frame_mean");
    assert!(
        (weighted / sent..=weighted / sent + 1).contains(&mean),
        "run mean {mean}, epochs' {}",
        weighted / sent
    );
    check_participants(stdout, &classes, &designed);
    check_line_rate(&get, stdout, &classes);
    let mut demo = stderr.lines().filter(|l| l.starts_with("xtask: replay"));
    println!(
        "trace generated in {:.1}s; {}; whole test {:.1}s; ram {} B",
        generated.as_secs_f64(),
        demo.next_back().unwrap_or("(no xtask summary)"),
        started.elapsed().as_secs_f64(),
        get("ram.total")
    );
    if tail == Tail::Budget {
        assert!(over.is_empty(), "over budget:\n{}", over.join("\n"));
    } else if !over.is_empty() {
        println!(
            "over budget (issue 27, open; seed {seed}):\n{}",
            over.join("\n")
        );
    }
}

/// Each class's `epoch_cost:` figures, in capture order, every epoch checked to be
/// the class it was fed (the `epoch:` line's frames and IP packets, `expected`) with
/// every frame timed, its percentiles in order and its count of frames over 1 129 in
/// agreement with its p99.9.
fn class_costs(
    stdout: &str,
    classes: &[TrafficClass],
    expected: &[(u64, u64)],
) -> Vec<(TrafficClass, Cost)> {
    let (epochs, mut costs) = epoch_lines(stdout);
    assert_eq!(epochs.len(), classes.len(), "one epoch per class");
    assert_eq!(costs.len(), classes.len(), "one epoch_cost line per epoch");
    classes
        .iter()
        .zip(expected)
        .enumerate()
        .map(|(n, (&class, want))| {
            let n = n as u64;
            assert_eq!(epochs[&n], *want, "epoch {n} is the {class} epoch");
            let c = costs.remove(&n).unwrap();
            assert_eq!(c.frames, want.0, "{class}: every frame timed");
            let frames = c.frames;
            assert!(
                c.p50 <= c.p99 && c.p99 <= c.p999 && c.p999 <= c.max && c.mean <= c.max,
                "{class}: {c:?}"
            );
            // The nearest-rank p99.9 is within the budget exactly when no more than
            // `frames − ⌈0.999·frames⌉` frames are over it (16 of 16 384).
            let allowed = frames - (999 * frames).div_ceil(1000);
            assert_eq!(
                c.p999 <= P999_BUDGET,
                c.over <= allowed,
                "{class}: p99.9 {} with {} frames over {P999_BUDGET} ({allowed} allowed)",
                c.p999,
                c.over
            );
            (class, c)
        })
        .collect()
}

/// Prints one class's row and checks it: the mean budget, and with [`Tail::Pinned`]
/// the p99.9 regression pin; returns the class's line if its p99.9 is over issue 27's
/// tail budget.
fn check_class_cost(class: TrafficClass, c: &Cost, tail: Tail) -> Option<String> {
    println!(
        "{:<11} | {:>5} | {:>5} | {:>5} | {:>5} | {:>5} | {:>5}",
        class.name(),
        c.mean,
        c.p50,
        c.p99,
        c.p999,
        c.max,
        c.over
    );
    assert!(
        c.mean <= MEAN_BUDGET,
        "{class}: mean {} instructions per frame, over issue 27's {MEAN_BUDGET}",
        c.mean
    );
    let pin = P999_PINS
        .iter()
        .find(|(name, _)| *name == class.name())
        .map(|&(_, p)| p);
    let pin = pin.unwrap_or_else(|| panic!("{class}: no p99.9 regression pin"));
    assert!(
        tail != Tail::Pinned || c.p999 <= pin,
        "{class}: p99.9 {} instructions per frame, over its regression pin {pin}",
        c.p999
    );
    (c.p999 > P999_BUDGET).then(|| {
        format!(
            "{class}: mean {} (budget {MEAN_BUDGET}), p99.9 {} (budget {P999_BUDGET})",
            c.mean, c.p999
        )
    })
}

/// A finished demo run: its output and its `report.` figures.
struct Run {
    stdout: String,
    stderr: String,
    report: BTreeMap<String, u64>,
}

impl Run {
    /// A `report.` figure (panics, with the log, if the run did not print it).
    fn get(&self, key: &str) -> u64 {
        *self
            .report
            .get(key)
            .unwrap_or_else(|| panic!("{key} missing:\n{}", self.stdout))
    }
}

/// `cargo xtask demo --icount` of `pcap` (the test provisioning,
/// `loxo_tests::demo::run`), asserted successful with every frame `expected` (per epoch:
/// frames, IP packets) sent and counted, none lost, no NIC overrun.
fn run_demo(pcap: &Path, expected: &[(u64, u64)]) -> Run {
    let pcap_arg = pcap.to_string_lossy().into_owned();
    let out = loxo_tests::demo::run(&["--icount", "--timeout", "900", "--pcap", &pcap_arg], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}\n{stderr}",
        out.status
    );
    let report = loxo_tests::demo::report_numbers(&stdout)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let run = Run {
        stdout,
        stderr,
        report,
    };
    let sent: u64 = expected.iter().map(|e| e.0).sum();
    assert_eq!(run.get("final.sent"), sent);
    assert_eq!(run.get("final.frames"), sent);
    assert_eq!(run.get("final.lost"), 0);
    assert_eq!(run.get("nic.overruns"), 0);
    run
}

/// Writes one firmware epoch of each class in turn to `pcap`; returns, per class, the
/// frames the firmware gets and the IP packets among them. The demo's sub-14-byte
/// runts, which `loxo replay` cannot send, are left out: they shorten only the last
/// epoch (the mix, last).
fn write_capture(
    pcap: &Path,
    classes: &[TrafficClass],
    flood: impl Fn(TrafficClass) -> f64,
    seed: u64,
) -> (Vec<(u64, u64)>, Vec<Vec<SpreadKey>>) {
    let mut w = PcapWriter::new(BufWriter::new(File::create(pcap).unwrap())).unwrap();
    let mut expected = Vec::new();
    let mut participants = Vec::new();
    let mut i = 0u64;
    for (k, &class) in classes.iter().enumerate() {
        // The demo's 1 % malformed frames only in a last epoch: its runts are left
        // out, which shortens it (an epoch before it would end inside the next).
        let last = k + 1 == classes.len();
        let cfg = TraceConfig {
            packets: EPOCH,
            flows: 10_000,
            popularity: Popularity::Zipf(1.0),
            flood: flood(class),
            malformed: if class == TrafficClass::Mix && last {
                0.01
            } else {
                0.0
            },
            seed,
            class,
            ..TraceConfig::default()
        };
        let (mut frames, mut packets) = (0, 0);
        generate_with_truth(&cfg, |f, t| {
            if !(14..=2048).contains(&f.len()) {
                return Ok(());
            }
            i += 1;
            frames += 1;
            packets += u64::from(t.expected == Expected::Flow);
            let len = f.len() as u32;
            w.write_packet(&PcapPacket::new(Duration::from_micros(i), len, f))
                .map(|_| ())
        })
        .unwrap();
        assert!(last || frames == EPOCH, "{class}");
        expected.push((frames, packets));
        participants.push(designed(&cfg));
    }
    (expected, participants)
}

/// Issue 28: the DDoS participants each attack epoch was built with are named in its
/// `participant:` lines (scanners by their source, vertical scans by source and
/// target, victims by their address) — the firmware's sampled sketches at 2 % of the
/// epoch's distinct pairs. Not the hidden scanners (about 1 % each).
fn check_participants(stdout: &str, classes: &[TrafficClass], designed: &[Vec<SpreadKey>]) {
    let named = participant_lines(stdout);
    for (n, (&class, want)) in classes.iter().zip(designed).enumerate() {
        let got = named.get(&(n as u64)).map_or(&[][..], Vec::as_slice);
        println!(
            "{:<11} participants named: {:?}",
            class.name(),
            got.iter()
                .map(|(r, k)| format!("{r} {k:?}"))
                .collect::<Vec<_>>()
        );
        if matches!(
            class,
            TrafficClass::HScan
                | TrafficClass::VScan
                | TrafficClass::DdosV4
                | TrafficClass::DdosV6
                | TrafficClass::DdosMulti
        ) {
            assert!(!want.is_empty(), "{class}: designed participants");
            for k in want {
                assert!(
                    got.iter().any(|(_, g)| g == k),
                    "{class}: {k:?} not named by the firmware: {got:?}"
                );
            }
        }
    }
}

/// Per epoch number: the participants the `participant:` lines name (role, address,
/// a vertical scan's target).
fn participant_lines(stdout: &str) -> BTreeMap<u64, Vec<(String, SpreadKey)>> {
    let mut out: BTreeMap<u64, Vec<(String, SpreadKey)>> = BTreeMap::new();
    for line in stdout.lines().filter(|l| !l.starts_with("report.")) {
        let Some(f) = fields(line, "participant: ") else {
            continue;
        };
        // `... saturated=false victim 192.0.2.10: ~...` or `vertical a -> b: ~...`.
        let text = &line[line.find(" saturated=").unwrap() + 1..];
        let t: Vec<&str> = text.split_whitespace().collect();
        let addr = |s: &str| -> std::net::IpAddr {
            s.trim_end_matches(':')
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .unwrap()
        };
        let role = f["role"].to_owned();
        let key = match role.as_str() {
            "victim" => SpreadKey::Destination(addr(t[2])),
            "vertical" => SpreadKey::Pair(addr(t[2]), addr(t[4])),
            _ => SpreadKey::Source(addr(t[2])),
        };
        out.entry(f["epoch"].parse().unwrap())
            .or_default()
            .push((role, key));
    }
    out
}

/// Line rate on every class (issue 27): the firmware's arrival model — every frame of
/// the capture back to back at 100 Mbit/s, minimum-size ones 1 129 instructions apart,
/// served in order with the work the device measured (epoch ends and the harness's
/// SYNC/ACK exchanges included) — never needs more than the 165 minimum-size frames
/// the LAN9118's RX data FIFO holds, over the run and while each class's epoch comes.
/// Before its arithmetic lost a 64-bit division per frame the model itself cost ~90
/// instructions a frame and the run's backlog was 2 787 frames.
fn check_line_rate(get: &dyn Fn(&str) -> u64, stdout: &str, classes: &[TrafficClass]) {
    let (lag, backlog, fifo) = (
        get("linerate.lag_max_insns"),
        get("linerate.backlog_max"),
        get("linerate.fifo_frames"),
    );
    println!(
        "line rate: lag max {lag} instructions (frame {}), backlog max {backlog} of {fifo} frames, export spread over at most {} frames",
        get("linerate.lag_max_at"),
        get("epoch_end.spread_frames_max")
    );
    assert_eq!(backlog, lag / 1_129 + 1);
    assert!(
        backlog <= fifo,
        "line-rate backlog {backlog} > the FIFO's {fifo} frames"
    );
    // Per class: the backlog while its epoch's frames came (the lag a close causes
    // falls on the next epoch's first frames); the run's is the largest of them.
    let backlogs = epoch_backlogs(stdout);
    assert_eq!(
        backlogs.len(),
        classes.len(),
        "one epoch_linerate line per epoch"
    );
    let per_class: Vec<String> = classes
        .iter()
        .zip(backlogs.values())
        .map(|(c, (b, _))| format!("{c} {b}"))
        .collect();
    println!(
        "line-rate backlog per class (of {fifo}): {}",
        per_class.join(", ")
    );
    for (n, &(b, l)) in &backlogs {
        assert_eq!(b, l / 1_129 + 1, "epoch {n}");
        assert!(b <= fifo, "epoch {n}: line-rate backlog {b} > {fifo}");
    }
    assert_eq!(backlogs.values().map(|&(b, _)| b).max(), Some(backlog));
}

/// Each epoch's line-rate backlog (`epoch_linerate:` lines): the most minimum-size
/// frames the RX FIFO would have held while its frames came, and the lag behind it.
fn epoch_backlogs(stdout: &str) -> BTreeMap<u64, (u64, u64)> {
    stdout
        .lines()
        .filter(|l| !l.starts_with("report."))
        .filter_map(|l| fields(l, "epoch_linerate: "))
        .map(|f| {
            let num = |k: &str| -> u64 { f[k].parse().unwrap() };
            (num("n"), (num("backlog_max"), num("lag_max_insns")))
        })
        .collect()
}

/// Per epoch number: the `epoch:` line's frames and IP packets, and the `epoch_cost:`
/// line's frames and figures.
type EpochLines = (BTreeMap<u64, (u64, u64)>, BTreeMap<u64, Cost>);

/// [`EpochLines`] from the demo's output.
fn epoch_lines(stdout: &str) -> EpochLines {
    let mut epochs = BTreeMap::new();
    let mut costs = BTreeMap::new();
    for line in stdout.lines().filter(|l| !l.starts_with("report.")) {
        let num = |f: &BTreeMap<&str, &str>, k: &str| -> u64 { f[k].parse().unwrap() };
        if let Some(f) = fields(line, "epoch: ") {
            epochs.insert(num(&f, "n"), (num(&f, "frames"), num(&f, "packets")));
        } else if let Some(f) = fields(line, "epoch_cost: ") {
            let c = Cost {
                frames: num(&f, "frames"),
                mean: num(&f, "insns_per_frame_mean"),
                p50: num(&f, "insns_per_frame_p50"),
                p99: num(&f, "insns_per_frame_p99"),
                p999: num(&f, "insns_per_frame_p999"),
                max: num(&f, "insns_per_frame_max"),
                over: num(&f, "frames_over_period"),
            };
            costs.insert(num(&f, "n"), c);
        }
    }
    (epochs, costs)
}
