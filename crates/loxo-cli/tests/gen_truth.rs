//! `loxo gen` writes, beside its pcap, the generator's truth of every frame
//! (`OUT.truth.csv`): the same records the in-process generator gives the tests, one
//! row per pcap record, each row's length the record's, and `parse_frame` over the
//! frames read back from the pcap agrees with every row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufReader;
use std::process::Command;

use loxo_cli::trace::{
    generate_with_truth, read_truth, truth_path, Expected, FrameTruth, Popularity, TraceConfig,
    TrafficClass,
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

/// Runs `loxo gen -o NAME.pcap ARGS` and checks its pcap and truth against `cfg`'s
/// in-process trace.
fn gen_and_check(name: &str, args: &[&str], cfg: &TraceConfig) {
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
    let _ = std::fs::remove_dir_all(&dir);
}
