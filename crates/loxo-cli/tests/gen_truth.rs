//! `loxo gen` writes, beside its pcap, the generator's truth of every frame
//! (`OUT.truth.csv`): the same records the in-process generator gives the tests, one
//! row per pcap record, each row's length the record's, and `parse_frame` over the
//! frames read back from the pcap agrees with every row. The participants file
//! (`OUT.participants.csv`) holds that truth's spreads per epoch, the designed
//! participants marked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufReader;
use std::process::Command;

use loxo_cli::trace::{
    designed, epoch_spreads, generate_with_truth, participant_rows, participants_path,
    read_participants, read_truth, truth_path, Attack, Expected, FrameTruth, Popularity,
    TraceConfig, TrafficClass,
};
use loxo_flow::parse_frame;
use pcap_file::pcap::PcapReader;

#[test]
fn gen_writes_the_truth_beside_the_pcap() {
    let cfg = TraceConfig {
        packets: 20_000,
        flows: 700,
        popularity: Popularity::Zipf(0.9),
        flood: 0.1,
        malformed: 0.2,
        seed: 9,
        extensions: 0.4,
        class: TrafficClass::Mix,
        attack: Attack::default(),
    };
    gen_and_check(
        "t",
        &[
            "-n",
            "20000",
            "--flows",
            "700",
            "--zipf",
            "0.9",
            "--flood",
            "0.1",
            "--malformed",
            "0.2",
            "--extensions",
            "0.4",
            "--seed",
            "9",
        ],
        &cfg,
    );
}

/// A traffic class through the binary: `--flood` defaults to the class's 90 %, and
/// the truth file is still the generator's records, `parse_frame` agreeing with them.
#[test]
fn gen_writes_the_truth_of_every_class() {
    for class in TrafficClass::ALL {
        let cfg = TraceConfig {
            packets: 10_000,
            flows: 300,
            malformed: 0.05,
            seed: 4,
            flood: class.default_flood(),
            class,
            ..TraceConfig::default()
        };
        gen_and_check(
            class.name(),
            &[
                "-n",
                "10000",
                "--flows",
                "300",
                "--zipf",
                "1",
                "--malformed",
                "0.05",
                "--seed",
                "4",
                "--class",
                class.name(),
            ],
            &cfg,
        );
    }
}

/// A scan class with its participants' options: the participants file lists the
/// keys from `--participants-min` per `--epoch`, `--scanners` of them designed.
#[test]
fn gen_writes_the_participants_of_its_options() {
    let cfg = TraceConfig {
        packets: 10_000,
        flows: 300,
        malformed: 0.05,
        seed: 4,
        flood: 0.3,
        class: TrafficClass::ScanHidden,
        attack: Attack {
            scanners: Some(6),
            spread: Some(200),
            ..Attack::default()
        },
        ..TraceConfig::default()
    };
    let args = [
        "-n",
        "10000",
        "--flows",
        "300",
        "--malformed",
        "0.05",
        "--seed",
        "4",
        "--flood",
        "0.3",
        "--class",
        "scan-hidden",
        "--scanners",
        "6",
        "--spread",
        "200",
    ];
    let opts = ["--epoch", "3000", "--participants-min", "1"];
    let args: Vec<&str> = args.iter().chain(&opts).copied().collect();
    let dir = gen_and_check_epochs("p", &args, &cfg, 3_000, 1);
    let rows = read_participants(BufReader::new(
        File::open(dir.join("p.participants.csv")).unwrap(),
    ))
    .unwrap();
    assert_eq!(
        rows.iter().filter(|r| r.designed).count(),
        6 * 4,
        "4 epochs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Participant options a class has no use for, and out-of-range ones, are refused.
#[test]
fn gen_refuses_participant_options_out_of_place() {
    for (args, says) in [
        (
            &["--class", "mix", "--scanners", "3"][..],
            "--scanners does not apply",
        ),
        (
            &["--class", "hscan", "--victims", "3"],
            "--victims does not apply",
        ),
        (
            &["--class", "flood-v4", "--spread", "3"],
            "--spread does not apply",
        ),
        (
            &["--class", "ddos-v4", "--victims", "0"],
            "--victims must be in 1..=",
        ),
        (
            &["--class", "vscan", "--scanners", "65537"],
            "--scanners must be in 1..=",
        ),
        (
            &["--class", "vscan", "--spread", "0"],
            "--spread must be at least 1",
        ),
        (&["--epoch", "0"], "--epoch must be at least 1"),
        (
            &["--participants-min", "0"],
            "--participants-min must be at least 1",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_loxo"))
            .args(["gen", "-n", "10", "-o", "/nonexistent/never.pcap"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Runs `loxo gen -o NAME.pcap ARGS` and checks its pcap and truth against `cfg`'s
/// in-process trace, and its participants file at the default epoch and minimum.
fn gen_and_check(name: &str, args: &[&str], cfg: &TraceConfig) {
    let dir = gen_and_check_epochs(name, args, cfg, 16_384, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`gen_and_check`] with the participants file's `epoch` and `min` as `ARGS` set
/// them; returns the directory of the files.
fn gen_and_check_epochs(
    name: &str,
    args: &[&str],
    cfg: &TraceConfig,
    epoch: u64,
    min: u64,
) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("loxo-gen-truth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join(format!("{name}.pcap"));
    let out = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["gen", "-o", pcap.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);

    let mut expect: Vec<FrameTruth> = Vec::new();
    let st = generate_with_truth(cfg, |_, t| {
        expect.push(*t);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert!(
        stdout.contains(&format!(
            "malformed {}, not IP {}, flood {}, damaged {}",
            st.malformed, st.not_ip, st.flood, st.damaged
        )),
        "{stdout}"
    );

    let path = truth_path(&pcap);
    assert_eq!(path, dir.join(format!("{name}.truth.csv")));
    let truth = read_truth(BufReader::new(File::open(&path).unwrap())).unwrap();
    assert_eq!(truth, expect, "the file holds the generator's records");

    let mut r = PcapReader::new(File::open(&pcap).unwrap()).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let t = &truth[n];
        assert_eq!(t.index, n as u64);
        assert_eq!(p.data.len(), t.len as usize, "{t:?}");
        assert_eq!(p.orig_len, t.len, "{t:?}");
        assert_eq!(parse_frame(&p.data), t.expected_parse(), "{t:?}");
        n += 1;
    }
    assert_eq!(n, truth.len());
    // The trace is not trivial: flows, non-IP frames and malformed ones.
    for want in [Expected::Flow, Expected::NotIp] {
        assert!(truth.iter().any(|t| t.expected == want), "{want:?}");
    }
    assert!(truth
        .iter()
        .any(|t| matches!(t.expected, Expected::Malformed(_))));

    // The participants: the truth's spreads per epoch, the class's designed
    // participants marked (and listed, seen or not).
    let path = participants_path(&pcap);
    assert_eq!(path, dir.join(format!("{name}.participants.csv")));
    let rows = read_participants(BufReader::new(File::open(&path).unwrap())).unwrap();
    let designed = designed(cfg);
    let expect: Vec<_> = epoch_spreads(&truth, epoch)
        .iter()
        .flat_map(|e| participant_rows(e, &designed, min))
        .collect();
    assert_eq!(rows, expect);
    assert!(
        stdout.contains(&format!("{} participant rows", rows.len())),
        "{stdout}"
    );
    dir
}
