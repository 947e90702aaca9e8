//! What a first-time user meets: the messages of the commonest mistakes (a directory,
//! a negative count, a missing `-o`, a file that is not a capture) say what is wrong
//! once and what the command wants, and every subcommand's `--help` ends with
//! examples.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

mod capture_util;
use capture_util::{dir, loxo, stderr};

fn top(file: &Path) -> Output {
    loxo(&["top", file.to_str().unwrap()])
}

#[test]
fn a_directory_is_named_as_such_once() {
    let d = dir("first-use-directory");
    let out = top(&d);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("is a directory"), "{err}");
    assert!(
        err.contains("`loxo top` reads one pcap or pcapng capture file"),
        "{err}"
    );
    assert_eq!(
        err.to_lowercase().matches("is a directory").count(),
        1,
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_negative_count_is_a_value_refused_as_negative() {
    let d = dir("first-use-negative");
    let file = d.join("trace.pcap");
    let file = file.to_str().unwrap();
    for opt in ["--epoch", "--min-volume"] {
        let out = loxo(&["top", opt, "-5", file]);
        assert_eq!(out.status.code(), Some(2), "{opt}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("invalid value '-5' for '{opt} <N>'")),
            "{err}"
        );
        assert!(err.contains("must be ≥ 0"), "{err}");
        assert!(!err.contains("-- -5"), "{err}");
        assert_eq!(err.matches("error:").count(), 1, "{err}");
    }
}

#[test]
fn gen_without_out_names_the_missing_option_only() {
    let out = loxo(&["gen", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("the following required arguments were not provided"),
        "{err}"
    );
    assert!(err.contains("--output <OUT.pcap>"), "{err}");
    let usage = err.lines().find(|l| l.starts_with("Usage:")).unwrap();
    assert!(usage.contains("loxo gen -o <OUT.pcap>"), "{usage}");
    // The frame count is optional: shown in brackets, never as required.
    assert!(!usage.contains("--packets <"), "{usage}");
    assert!(usage.contains("[-n PACKETS]"), "{usage}");
}

#[test]
fn a_file_that_is_not_a_capture_is_described_by_its_first_bytes() {
    let d = dir("first-use-not-a-capture");
    let sketch = {
        // A real loxo sketch: `loxo build-filter`'s output.
        let keys = d.join("keys.txt");
        std::fs::write(&keys, "10.0.0.1\n").unwrap();
        let out = d.join("filter.loxo");
        let o = loxo(&[
            "build-filter",
            "--seed",
            "000102030405060708090a0b0c0d0e0f",
            "-o",
            out.to_str().unwrap(),
            keys.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(&out).unwrap()
    };
    for (name, bytes, says) in [
        (
            "truth.csv",
            b"frame,len,ip_len,expected\n0,64,50,flow\n".to_vec(),
            "it is text, starting \"frame,len,ip_len\"",
        ),
        (
            "filter.loxo",
            sketch,
            "it is a loxo sketch (`loxo inspect` prints it)",
        ),
        (
            "noise.bin",
            vec![
                0xfe, 0x5a, 0x1e, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
            ],
            "it starts with the bytes fe 5a 1e 00 01",
        ),
    ] {
        let file = d.join(name);
        std::fs::write(&file, &bytes).unwrap();
        let out = top(&file);
        assert!(!out.status.success(), "{name}");
        let err = stderr(&out);
        assert!(err.contains("not a pcap or pcapng file"), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(
            err.contains("`loxo top` reads pcap and pcapng captures"),
            "{name}: {err}"
        );
        assert!(!err.contains("magic number"), "{name}: {err}");
        assert!(!err.contains("PcapHeader"), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
    }
}

/// `loxo inspect`, `merge` and `export` handed a capture or text name what they were
/// given and what reads it, not the decoder's "bad magic".
#[test]
fn a_file_that_is_not_a_sketch_is_named() {
    let d = dir("first-use-not-a-sketch");
    let pcap = d.join("trace.pcap");
    let o = loxo(&["gen", "-n", "10", "-o", pcap.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = d.join("truth.csv");
    std::fs::write(&csv, b"frame,len,ip_len,expected\n").unwrap();
    let out = d.join("merged.loxo");
    for (file, says) in [
        (
            &pcap,
            "this is a pcap capture; `loxo top` and `loxo replay` read captures",
        ),
        (&csv, "it is text, starting \"frame,len,ip_len"),
    ] {
        let f = file.to_str().unwrap();
        for args in [
            vec!["inspect", f],
            vec!["merge", "-o", out.to_str().unwrap(), f],
            vec!["export", "--hyll", d.join("h.bin").to_str().unwrap(), f],
        ] {
            let o = loxo(&args);
            assert!(!o.status.success(), "{args:?}");
            let err = stderr(&o);
            assert!(err.contains("not a loxo sketch"), "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
            assert!(!err.contains("expected magic"), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        }
    }
}

#[test]
fn every_subcommand_help_ends_with_examples() {
    let out = loxo(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    // The subcommands, as `loxo --help` lists them (all but `help`).
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&c| c != "help")
        .collect();
    assert!(commands.len() >= 8, "{commands:?}");
    for c in commands {
        let out = loxo(&[c, "--help"]);
        assert!(out.status.success(), "{c}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let at = text
            .find("Examples")
            .unwrap_or_else(|| panic!("loxo {c} --help has no examples:\n{text}"));
        let examples = &text[at..];
        // After the options, and every example line a `loxo` command.
        assert!(!examples.contains("Options:"), "{c}");
        assert!(
            examples
                .lines()
                .skip(1)
                .any(|l| l.trim_start().starts_with("loxo ")),
            "{c}: {examples}"
        );
    }
}

/// A θ below the monitor's θ_min (1/256) is refused before the capture is read, with
/// a one-line message naming both thresholds; θ_min itself is accepted, and then every
/// exact elephant of the capture is listed.
#[test]
fn a_theta_below_theta_min_is_refused_with_both_thresholds() {
    let d = dir("first-use-theta-min");
    let file = d.join("trace.pcap");
    capture_util::ethernet_pcap(
        &file,
        65_535,
        &capture_util::whole(&capture_util::frames(3_000, 0.0, 5)),
    );
    let f = file.to_str().unwrap();
    for theta in ["0.001", "0.39%", "1/257"] {
        let out = loxo(&["top", f, "--theta", theta]);
        assert_eq!(out.status.code(), Some(1), "--theta {theta}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("--theta {theta}: theta "))
                && err.contains("is below theta_min 0.00390625 (1/256)")
                && err.contains(
                    "a monitor with 256 candidates lists every elephant only at theta >= 1/256"
                ),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "nothing is read or printed");
    }
    // A missing capture with a bad θ: the θ is what is refused first.
    let out = loxo(&[
        "top",
        d.join("none.pcap").to_str().unwrap(),
        "--theta",
        "0.001",
    ]);
    assert!(stderr(&out).contains("below theta_min"), "{}", stderr(&out));

    let (out, json) = capture_util::top(&file, &["--theta", "1/256"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = json.unwrap();
    assert_eq!(json["theta_min"], "0.00390625");
    for e in capture_util::epochs(&json).as_array().unwrap() {
        assert_eq!(e["elephants_complete"], true);
        assert_eq!(e["recall"], 1.0, "{e}");
    }
}
