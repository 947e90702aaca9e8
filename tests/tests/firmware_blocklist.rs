//! The firmware's blocklist end to end: `cargo xtask demo --blocklist` writes a
//! blocklist of the trace's addresses (`out/blocklist.txt`), builds it with `loxo
//! build-filter` under the device seed, flashes it, and the firmware in QEMU counts
//! and lists the flows it matches. Checked per epoch against the generator's truth
//! and the same address list:
//! * `blocklisted: flows=` lies within the filters' stated errors of the exact number
//!   of flows with a listed endpoint (≤ exact + the blocklist's false positives, ≤
//!   2·2⁻⁸ per other flow, + 4σ; ≥ exact − the new-flow filters' misses, at most
//!   the register-Bloom theory's rate at the true flow count, − 4σ), and is not
//!   flagged saturated (the demo stays below the filter's design load);
//! * `blocklisted: estimate=` (the count weighed by each flow's inclusion
//!   probability) lies within 4 of its `sigma=` of the exact number, plus the
//!   blocklist's false positives;
//! * every `blocklisted_flow:` line is a flow of that epoch whose exact IP bytes lie
//!   in its bounds, and the heaviest truly blocklisted flow of each full epoch is
//!   listed;
//! * the monitor's budget holds with the blocklist: ≤ 1 000 instructions per frame on
//!   average under `-icount` (`--icount`), as `firmware_e2e` asserts without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;
use std::path::Path;

use loxo_flow::FlowKey;
use loxo_tests::demo::{demo_truth, exact_epochs, fields, flow_key};

const FRAMES: u64 = 40_000;
/// Not `firmware_e2e`'s seed: its own trace file.
const SEED: u64 = 11;
/// The firmware's `EPOCH_FRAMES`.
const EPOCH: usize = 16_384;

/// The addresses of a keys file as `loxo build-filter` reads it (addresses and the
/// one CIDR line xtask writes, expanded), as network-order bytes.
fn addresses(text: &str) -> HashSet<Vec<u8>> {
    let mut set = HashSet::new();
    for line in text.lines() {
        let entry = line.split('#').next().unwrap().trim();
        if entry.is_empty() {
            continue;
        }
        if let Some((net, len)) = entry.split_once('/') {
            let IpAddr::V4(a) = net.parse::<IpAddr>().unwrap() else {
                panic!("xtask writes IPv4 prefixes only: {entry}");
            };
            let len: u32 = len.parse().unwrap();
            let base = u32::from(a);
            for i in 0..1u32 << (32 - len) {
                set.insert((base + i).to_be_bytes().to_vec());
            }
        } else {
            set.insert(match entry.parse::<IpAddr>().unwrap() {
                IpAddr::V4(a) => a.octets().to_vec(),
                IpAddr::V6(a) => a.octets().to_vec(),
            });
        }
    }
    set
}

fn blocked(k: &FlowKey, set: &HashSet<Vec<u8>>) -> bool {
    set.contains(k.src_bytes()) || set.contains(k.dst_bytes())
}

#[test]
fn firmware_counts_and_lists_blocklisted_flows() {
    let out = loxo_tests::demo::run(
        &[
            "--blocklist",
            "--icount",
            "--frames",
            &FRAMES.to_string(),
            "--seed",
            &SEED.to_string(),
            "--timeout",
            "600",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The per-frame budget, with the blocklist checked on each flow's first frame.
    let cost = |key: &str| -> u64 {
        let prefix = format!("report.cost.{key}=");
        let line = stdout.lines().find_map(|l| l.strip_prefix(prefix.as_str()));
        line.unwrap_or_else(|| panic!("no {prefix} line"))
            .trim()
            .parse()
            .unwrap()
    };
    let (mean, max) = (cost("insns_per_frame_mean"), cost("insns_per_frame_max"));
    println!("cost with the blocklist: {mean} instructions per frame (mean), max {max}");
    assert!(
        mean <= 1_000,
        "{mean} instructions per frame with the blocklist"
    );

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let set = addresses(&std::fs::read_to_string(root.join("out/blocklist.txt")).unwrap());
    assert!(set.len() > 1_024, "{} addresses", set.len());

    // The truth of the same trace, per epoch.
    let exact = exact_epochs(&demo_truth(FRAMES, SEED), EPOCH);

    let mut epochs: BTreeMap<usize, BTreeMap<&str, &str>> = BTreeMap::new();
    let mut summary: BTreeMap<usize, BTreeMap<&str, &str>> = BTreeMap::new();
    let mut listed: BTreeMap<usize, Vec<(FlowKey, u64, u64)>> = BTreeMap::new();
    for line in stdout.lines() {
        if let Some(f) = fields(line, "blocklisted_flow: ") {
            listed
                .entry(f["epoch"].parse().unwrap())
                .or_default()
                .push((
                    flow_key(line),
                    f["bytes_lower"].parse().unwrap(),
                    f["bytes_upper"].parse().unwrap(),
                ));
        } else if let Some(f) = fields(line, "blocklisted: ") {
            summary.insert(f["epoch"].parse().unwrap(), f);
        } else if let Some(f) = fields(line, "epoch: ") {
            epochs.insert(f["n"].parse().unwrap(), f);
        }
    }
    assert!(stdout.contains("blocklist: addresses="), "{stdout}");
    assert_eq!(
        summary.len(),
        exact.len(),
        "one blocklisted: line per epoch"
    );
    let mut hits = 0;
    for (i, ex) in exact.iter().enumerate() {
        let s = &summary[&i];
        let got: f64 = s["flows"].parse().unwrap();
        let flows = ex.flows.len() as f64;
        let truly = ex.flows.keys().filter(|k| blocked(k, &set)).count() as f64;
        let p = 2.0 / 256.0;
        let outside = flows - truly;
        let fp = outside * p + 4.0 * (outside * p * (1.0 - p)).sqrt() + 1.0;
        // Misses: the new-flow filter's false-positive rate at the epoch's true flow
        // count (register-Bloom theory, not the firmware's `new_flows_fpr_ppm`).
        let q = loxo_tests::bloom_theory::register_fpr(
            loxo_flow::NEW_FLOW_WORDS as u64,
            loxo_flow::NEW_FLOW_K,
            ex.flows.len() as u64,
        );
        let miss = truly * q + 4.0 * (truly * q * (1.0 - q)).sqrt() + 1.0;
        println!("epoch {i}: blocklisted {got} of exactly {truly} (flows {flows})");
        assert_eq!(s["saturated"], "false", "epoch {i}");
        assert!(
            got <= truly + fp && got >= truly - miss,
            "epoch {i}: {got} vs {truly} (+{fp:.1} / −{miss:.1})"
        );
        // The estimate (the count weighed by each flow's inclusion probability):
        // within 4 of its σ of the exact figure, plus the false positives.
        let est: f64 = s["estimate"].parse().unwrap();
        let sigma: f64 = s["sigma"].parse().unwrap();
        println!("epoch {i}: estimated {est} ± {sigma:.1}");
        assert!(
            est >= got && est <= truly + 4.0 * sigma + fp && est >= truly - 4.0 * sigma - 1.0,
            "epoch {i}: estimate {est} ± {sigma:.1} vs {truly} (+{fp:.1})"
        );
        hits += truly as u64;
        let l = listed.remove(&i).unwrap_or_default();
        for (k, lo, hi) in &l {
            let c = ex
                .flows
                .get(k)
                .unwrap_or_else(|| panic!("epoch {i}: {k} not in the epoch"));
            assert!(
                *lo <= c.bytes && c.bytes <= *hi,
                "epoch {i}: {k} {} not in [{lo}, {hi}]",
                c.bytes
            );
        }
        if ex.total.packets > 10_000 {
            let heaviest = ex
                .flows
                .iter()
                .filter(|(k, _)| blocked(k, &set))
                .max_by_key(|(_, c)| c.bytes)
                .map(|(k, _)| *k)
                .unwrap();
            assert!(
                l.iter().any(|(k, ..)| *k == heaviest),
                "epoch {i}: the heaviest blocklisted flow {heaviest} is not listed"
            );
        }
    }
    assert!(hits > 100, "the demo trace has blocklisted flows: {hits}");
}
