//! Running `cargo xtask demo` (the firmware in QEMU fed by `loxo replay`) from a test,
//! with the `xtask` and `loxo` binaries `cargo test --workspace` builds, and fixed
//! test provisioning.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loxo_cli::exact::Exact;
use loxo_cli::trace::{generate_with_truth, FrameTruth, Popularity, TraceConfig};
use loxo_flow::{ByteWeight, FlowKey};

/// The device seed tests provision (devices get random ones).
pub const TEST_DEVICE_SEED: &str = "0123456789abcdef0f1e2d3c4b5a6978";
/// The control key tests provision.
pub const TEST_CONTROL_KEY: &str = "00112233445566778899aabbccddeeff";
/// The sketch export key tests provision (`LOXO_EXPORT_KEY`; the demo's `loxo
/// collect --keys` lists it for the device).
pub const TEST_EXPORT_KEY: &str = "e4e4e4e4e4e4e4e40123456789abcdef";

/// A binary of this workspace built in the target directory this test runs from
/// (`<target>/<profile>/NAME`): `loxo` (package `loxo-cli`) and `xtask`, which
/// `cargo test --workspace` builds with the tests (each package has integration
/// tests, and cargo builds a package's binaries for them). Built here (`cargo build
/// -p PACKAGE` into the same directory) only when missing, so a test run with
/// `cargo test -p loxo-tests` after editing the host tool should rebuild it first:
/// `cargo build -p loxo-cli -p xtask`.
///
/// # Panics
/// If the test's own path has no profile directory, or the build fails.
#[must_use]
pub fn workspace_bin(name: &str, package: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("current_exe: {e}"));
    // <target>/<profile>/deps/<test>-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} has no profile directory", exe.display()));
    let bin = profile_dir.join(name);
    if !bin.is_file() {
        let target = profile_dir.parent().unwrap_or(profile_dir);
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-q", "-p", package]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .current_dir(root())
            .env("CARGO_TARGET_DIR", target)
            .status();
        assert!(
            status.as_ref().is_ok_and(std::process::ExitStatus::success),
            "cargo build -p {package}: {status:?}"
        );
    }
    bin
}

/// The `loxo` host tool of this test run's target directory ([`workspace_bin`]).
#[must_use]
pub fn loxo() -> PathBuf {
    workspace_bin("loxo", "loxo-cli")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| Path::new("."))
}

/// `cargo xtask demo` without cargo: the `xtask` binary of this test run's target
/// directory, run from the workspace root with `LOXO_HOST_TOOL` set to its [`loxo`]
/// (so the demo builds only the firmware) and no provisioning (add it, or use
/// [`run`]).
#[must_use]
pub fn xtask_demo() -> Command {
    let mut cmd = Command::new(workspace_bin("xtask", "xtask"));
    cmd.arg("demo")
        .current_dir(root())
        .env("LOXO_HOST_TOOL", loxo());
    cmd
}

/// Runs `cargo xtask demo --summary ARGS` ([`xtask_demo`]) with `env` on top of the
/// test provisioning.
///
/// # Panics
/// If the demo cannot be started.
#[must_use]
pub fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = xtask_demo();
    cmd.arg("--summary")
        .args(args)
        .env("LOXO_DEVICE_SEED", TEST_DEVICE_SEED)
        .env("LOXO_CONTROL_KEY", TEST_CONTROL_KEY)
        .env("LOXO_EXPORT_KEY", TEST_EXPORT_KEY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run cargo xtask demo: {e}"))
}

/// The numeric `report.KEY=VALUE` lines of `cargo xtask demo --summary`'s output, by
/// key (`final.sent`, `linerate.backlog_max`, …; a key logged in every epoch keeps its
/// last value).
#[must_use]
pub fn report_numbers(stdout: &str) -> BTreeMap<&str, u64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("report."))
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect()
}

/// `key=value` pairs of a log line after `prefix`.
pub fn fields<'a>(line: &'a str, prefix: &str) -> Option<BTreeMap<&'a str, &'a str>> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    let rest = rest.split(" key=[").next().unwrap_or(rest);
    Some(
        rest.split_whitespace()
            .filter_map(|p| p.split_once('='))
            .collect(),
    )
}

/// The flow of an `elephant:` line, from its text after `flow=`
/// (`10.0.0.1:1234 -> 10.0.0.2:80 proto 6 (tcp)`, IPv6 in brackets).
///
/// # Panics
/// If the line has no such flow.
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub fn flow_key(line: &str) -> FlowKey {
    let text = &line[line.find("flow=").expect("flow=") + 5..];
    let (src, rest) = text.split_once(" -> ").expect("->");
    let (dst, rest) = rest.split_once(" proto ").expect("proto");
    let proto: u8 = rest.split_whitespace().next().unwrap().parse().unwrap();
    let (s, d): (SocketAddr, SocketAddr) = (src.parse().unwrap(), dst.parse().unwrap());
    match (s.ip(), d.ip()) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            FlowKey::v4(a.octets(), b.octets(), s.port(), d.port(), proto)
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            FlowKey::v6(a.octets(), b.octets(), s.port(), d.port(), proto)
        }
        _ => panic!("mixed families in {line}"),
    }
}

/// The truths of the frames `cargo xtask demo --frames N --seed S` replays: its `loxo
/// gen` options (Zipf 1.0 over 10 000 flows, 1 % malformed), minus the frames QEMU's
/// LAN9118 cannot carry (outside 14..=2048 bytes), which `loxo replay` skips.
///
/// # Panics
/// If the generator fails (it does not, writing to memory).
#[must_use]
pub fn demo_truth(frames: u64, seed: u64) -> Vec<FrameTruth> {
    let cfg = TraceConfig {
        packets: frames,
        flows: 10_000,
        popularity: Popularity::Zipf(1.0),
        flood: 0.0,
        malformed: 0.01,
        seed,
        ..TraceConfig::default()
    };
    let mut out = Vec::new();
    let generated = generate_with_truth(&cfg, |_, t| {
        out.push(*t);
        Ok::<(), ()>(())
    });
    assert!(generated.is_ok(), "the generator failed");
    out.retain(|t| (14..=2048).contains(&t.len));
    out
}

/// Exact figures of each `epoch`-frame epoch of `truth`, bytes weighed as IP bytes
/// (the firmware's weight).
#[must_use]
pub fn exact_epochs(truth: &[FrameTruth], epoch: usize) -> Vec<Exact> {
    truth
        .chunks(epoch)
        .map(|c| {
            let mut e = Exact::with_weight(ByteWeight::Ip);
            for t in c {
                e.feed_truth(t);
            }
            e
        })
        .collect()
}
