//! `loxo gen` refuses every non-finite or out-of-range option value with a message
//! naming the option (issue 18 item 7: `--zipf NaN` was accepted), before it creates
//! any file, and still takes the edges of every range.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn gen(dir: &std::path::Path, name: &str, args: &[&str]) -> (bool, String, bool) {
    let out = dir.join(format!("{name}.pcap"));
    let o = Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["gen", "-o", out.to_str().unwrap(), "-n", "100"])
        .args(args)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        out.exists(),
    )
}

#[test]
fn non_finite_and_out_of_range_values_are_refused() {
    let dir = std::env::temp_dir().join(format!("loxo-capture-gen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bad: [(&str, &[&str]); 16] = [
        ("--zipf", &["--zipf", "NaN"]),
        ("--zipf", &["--zipf", "inf"]),
        ("--zipf", &["--zipf=-inf"]),
        ("--zipf", &["--zipf=-0.5"]),
        ("--pareto", &["--pareto", "NaN"]),
        ("--pareto", &["--pareto", "inf"]),
        ("--pareto", &["--pareto", "0"]),
        ("--pareto", &["--pareto", "0.01"]),
        ("--flood", &["--flood", "NaN"]),
        ("--flood", &["--flood", "1.5"]),
        ("--malformed", &["--malformed", "inf"]),
        ("--malformed", &["--malformed=-0.1"]),
        ("--extensions", &["--extensions", "NaN"]),
        ("--flows", &["--flows", "0"]),
        ("--flows", &["--flows", "4294967295"]),
        ("--flows", &["--flows", "16777217"]),
    ];
    for (i, (option, args)) in bad.iter().enumerate() {
        let (ok, err, written) = gen(&dir, &format!("bad{i}"), args);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(option), "{args:?}: {err}");
        // loxo's own check, not a parse error of the value.
        assert!(err.contains("must be"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!written, "{args:?} left a file");
    }
    let good: [&[&str]; 6] = [
        &["--zipf", "0"],
        &["--zipf", "3.5"],
        &["--pareto", "0.1"],
        &["--flood", "1", "--malformed", "0"],
        &["--extensions", "1"],
        &["--flows", "1"],
    ];
    for (i, args) in good.iter().enumerate() {
        let (ok, err, written) = gen(&dir, &format!("good{i}"), args);
        assert!(ok && written, "{args:?}: {err}");
    }
}
