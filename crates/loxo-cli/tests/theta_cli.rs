//! `loxo build-theta`, `loxo setop`, `loxo merge` and `loxo inspect` on Theta sketch
//! files through the binary: the printed estimates' bounds hold the exact set sizes
//! (exact figures while θ = 1), text and JSON agree, seeds and kinds are checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn loxo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(args)
        .output()
        .expect("run loxo")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-theta-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SEED: &str = "00112233445566778899aabbccddeeff";

/// A Theta sketch file of the addresses 10.0.0.0 + `range`, built by the tool.
fn build(d: &Path, name: &str, range: std::ops::Range<u32>, k: &str) -> PathBuf {
    let keys = d.join(format!("{name}.txt"));
    let lines: Vec<String> = range
        .map(|i| Ipv4Addr::from(0x0a00_0000 + i).to_string())
        .collect();
    std::fs::write(&keys, lines.join("\n")).unwrap();
    let out = d.join(format!("{name}.loxo"));
    let o = loxo(&[
        "build-theta",
        "-o",
        s(&out),
        "--seed",
        SEED,
        "-k",
        k,
        s(&keys),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

fn setop_json(op: &str, files: &[&Path]) -> serde_json::Value {
    let mut args = vec!["setop", op, "--json"];
    args.extend(files.iter().map(|p| s(p)));
    let o = loxo(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The result's `(estimate, [(lower, upper); 3])`.
fn figures(v: &serde_json::Value) -> (f64, Vec<(f64, f64)>) {
    let r = &v["result"];
    let b = r["bounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["lower"].as_f64().unwrap(), b["upper"].as_f64().unwrap()))
        .collect();
    (r["estimate"].as_f64().unwrap(), b)
}

#[test]
fn estimation_mode_bounds_hold_the_exact_sizes() {
    let d = dir("estimation");
    // |A| = 30 000, |B| = 30 000, |A ∪ B| = 50 000, |A ∩ B| = 10 000, |B \ A| = 20 000;
    // A at K = 2048, B at K = 1024 (the result has the larger K).
    let a = build(&d, "a", 0..30_000, "2048");
    let b = build(&d, "b", 20_000..50_000, "1024");
    for (op, files, truth) in [
        ("union", [&a, &b], 50_000.0),
        ("intersect", [&a, &b], 10_000.0),
        ("anotb", [&b, &a], 20_000.0),
    ] {
        let v = setop_json(op, &[files[0], files[1]]);
        assert_eq!(v["op"], op);
        assert_eq!(v["result"]["k"], 2048);
        assert_eq!(v["result"]["estimation_mode"], true);
        let (est, bounds) = figures(&v);
        // The bounds widen with σ and hold the estimate; the fixed seed's 3σ bounds
        // (99.7 %) hold the truth.
        for w in bounds.windows(2) {
            assert!(w[1].0 <= w[0].0 && w[0].1 <= w[1].1, "{op}: {bounds:?}");
        }
        assert!(bounds[0].0 <= est && est <= bounds[0].1, "{op}");
        assert!(
            bounds[2].0 <= truth && truth <= bounds[2].1,
            "{op}: {truth} not in {bounds:?}"
        );
        // The text output prints the same estimate and bounds.
        let o = loxo(&["setop", op, s(files[0]), s(files[1])]);
        assert!(o.status.success());
        let t = text(&o.stdout);
        assert!(t.contains(&format!("estimate:         {est:.1}")), "{t}");
        assert!(
            t.contains(&format!(
                "bounds 3σ:        {:.1} ..= {:.1}",
                bounds[2].0, bounds[2].1
            )),
            "{t}"
        );
    }
    // Each input's own figures are in the JSON too.
    let v = setop_json("union", &[&a, &b]);
    let inputs = v["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 2);
    for (i, truth) in inputs.iter().zip([30_000.0, 30_000.0]) {
        let b3 = &i["bounds"][2];
        assert!(b3["lower"].as_f64().unwrap() <= truth && truth <= b3["upper"].as_f64().unwrap());
    }
}

#[test]
fn exact_mode_is_exact() {
    let d = dir("exact");
    let a = build(&d, "a", 0..100, "1024");
    let b = build(&d, "b", 50..150, "1024");
    let c = build(&d, "c", 90..95, "1024");
    for (op, files, truth) in [
        ("union", vec![&a, &b, &c], 150.0),
        ("intersect", vec![&a, &b], 50.0),
        ("intersect", vec![&a, &b, &c], 5.0),
        ("anotb", vec![&a, &b], 50.0),
        ("anotb", vec![&b, &a, &c], 50.0),
        ("anotb", vec![&a, &c], 95.0),
    ] {
        let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
        let v = setop_json(op, &paths);
        let (est, bounds) = figures(&v);
        assert_eq!(est, truth, "{op}");
        assert!(
            bounds.iter().all(|&b| b == (truth, truth)),
            "{op}: {bounds:?}"
        );
        assert_eq!(v["result"]["estimation_mode"], false);
    }
}

#[test]
fn merge_writes_the_union_and_inspect_reads_it() {
    let d = dir("merge");
    let a = build(&d, "a", 0..20_000, "1024");
    let b = build(&d, "b", 10_000..40_000, "1024");
    let out = d.join("u.loxo");
    let o = loxo(&["merge", "-o", s(&out), s(&a), s(&b)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("merged 2 theta sketches (K = 1024)"));
    let o = loxo(&["inspect", s(&out)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    for line in [
        "kind:             theta (14)",
        "params:           [1024, 63, 0, 0]",
        "(estimation mode)",
        "bounds 2σ:",
        "memory:           8224 bytes",
    ] {
        assert!(t.contains(line), "{line}: {t}");
    }
    // The merged file is the union setop computes, and its bounds hold 40 000.
    let v = setop_json("union", &[&a, &b]);
    let (est, bounds) = figures(&v);
    assert!(t.contains(&format!("estimate:         {est:.1}")), "{t}");
    assert!(bounds[2].0 <= 40_000.0 && 40_000.0 <= bounds[2].1);
    // `setop -o` writes the same bytes as `merge`.
    let again = d.join("again.loxo");
    let o = loxo(&["setop", "union", "-o", s(&again), s(&a), s(&b)]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());
}

#[test]
fn seeds_kinds_and_k_are_checked() {
    let d = dir("refusals");
    let a = build(&d, "a", 0..100, "64");
    let keys = d.join("other.txt");
    std::fs::write(&keys, "10.0.0.1\n").unwrap();
    let other = d.join("other.loxo");
    let o = loxo(&["build-theta", "-o", s(&other), s(&keys)]);
    assert!(o.status.success());
    assert!(d.join("other.loxo.key").exists());
    for args in [
        vec!["setop", "union", s(&a), s(&other)],
        vec!["merge", "-o", s(&d.join("m.loxo")), s(&a), s(&other)],
    ] {
        let o = loxo(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(
            text(&o.stderr).contains("seed mismatch"),
            "{}",
            text(&o.stderr)
        );
    }
    let hll = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/hll_p10_dense.bin");
    let o = loxo(&["setop", "intersect", s(&a), s(&hll)]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("a hll sketch, not a theta sketch"),
        "{}",
        text(&o.stderr)
    );
    let o = loxo(&["build-theta", "-o", s(&other), "-k", "48", s(&keys)]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("a power of two in 32 ..= 65536"),
        "{}",
        text(&o.stderr)
    );
    // One file is not a set operation.
    assert!(!loxo(&["setop", "union", s(&a)]).status.success());
}

#[test]
fn inspect_reads_the_golden_files() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    for (file, says) in [
        ("theta_exact.bin", "estimate:         100.0"),
        ("theta_empty.bin", "retained:         0 (empty)"),
        ("theta_estimation.bin", "(estimation mode)"),
        ("theta_intersection.bin", "(estimation mode)"),
    ] {
        let o = loxo(&["inspect", s(&golden.join(file))]);
        assert!(o.status.success(), "{file}: {}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains(says),
            "{file}: {}",
            text(&o.stdout)
        );
    }
}
