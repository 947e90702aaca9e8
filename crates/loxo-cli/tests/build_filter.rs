//! `loxo build-filter` through the binary: the golden files are what it writes for
//! their keys file, a random seed is saved where `--seed` reads it, refusals exit 1
//! with the line and the reason, `loxo inspect` describes the result.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loxo_bloom::{BinaryFuse16, BinaryFuse8};

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
    let d = std::env::temp_dir().join(format!("loxo-build-filter-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The keys of `tests/tests/golden_fuse.rs`, as a keys file.
const GOLDEN_KEYS: &str =
    "# the golden set\n10.0.0.0/26\n10.0.1.7   # one host\n\n2001:db8::1\n10.0.0.3\n";
const GOLDEN_SEED: &str = "6e65646c6f6700006d6f6f6c62000000";

#[test]
fn writes_the_golden_files() {
    let d = dir("golden");
    let keys = d.join("keys.txt");
    std::fs::write(&keys, GOLDEN_KEYS).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    for (bits, file) in [("8", "binary_fuse8.bin"), ("16", "binary_fuse16.bin")] {
        let out = d.join(format!("f{bits}.loxo"));
        let o = loxo(&[
            "build-filter",
            s(&keys),
            "-o",
            s(&out),
            "--fingerprint",
            bits,
            "--seed",
            GOLDEN_SEED,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let stdout = text(&o.stdout);
        // 64 + 1 + 1 + 1 entries, one repeated (10.0.0.3 is in the /26).
        assert!(
            stdout.contains("over 66 keys (67 lines' entries, 1 repeated)"),
            "{stdout}"
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(golden.join(file)).unwrap(),
            "{file}"
        );
        assert!(!d.join(format!("f{bits}.loxo.key")).exists());
        let o = loxo(&["inspect", s(&out)]);
        let stdout = text(&o.stdout);
        assert!(
            stdout.contains("kind:             binary-fuse (13)"),
            "{stdout}"
        );
        assert!(stdout.contains("66 distinct"), "{stdout}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn random_seed_is_saved_for_the_devices() {
    let d = dir("random");
    let keys = d.join("keys.txt");
    std::fs::write(&keys, "198.51.100.0/24\n2001:db8::/120\n").unwrap();
    let out = d.join("block.loxo");
    for bits in ["8", "16"] {
        let o = loxo(&[
            "build-filter",
            s(&keys),
            "-o",
            s(&out),
            "--fingerprint",
            bits,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains("block.loxo.key"));
        let seed = loxo_cli::key::read_key(s(&d.join("block.loxo.key"))).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        let v4 = (0..=255u8).map(|i| vec![198, 51, 100, i]);
        let v6 = (0..=255u8).map(|i| {
            let mut a = [0u8; 16];
            a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            a[15] = i;
            a.to_vec()
        });
        let present: Vec<Vec<u8>> = v4.chain(v6).collect();
        if bits == "8" {
            let f = BinaryFuse8::from_bytes(&bytes, seed).unwrap();
            assert_eq!(f.len(), 512);
            assert!(present.iter().all(|k| f.contains(k)));
        } else {
            let f = BinaryFuse16::from_bytes(&bytes, seed).unwrap();
            assert!(present.iter().all(|k| f.contains(k)));
            // Another device's seed does not read it.
            assert!(BinaryFuse16::from_bytes(&bytes, loxo_core::Seed::new(1, 2)).is_err());
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn refusals_exit_1_with_line_and_reason() {
    let d = dir("refuse");
    let keys = d.join("keys.txt");
    let out = d.join("f.loxo");
    for (content, want) in [
        (
            "192.0.2.1\n10.0.0.0/8\n",
            "line 2: \"10.0.0.0/8\": covers 2^24 addresses",
        ),
        ("10.0.0.7/24\n", "network address is 10.0.0.0"),
        ("not-an-address\n", "line 1"),
    ] {
        std::fs::write(&keys, content).unwrap();
        let o = loxo(&[
            "build-filter",
            s(&keys),
            "-o",
            s(&out),
            "--seed",
            GOLDEN_SEED,
        ]);
        assert_eq!(o.status.code(), Some(1), "{content}");
        assert!(text(&o.stderr).contains(want), "{}", text(&o.stderr));
        assert!(!out.exists());
    }
    let o = loxo(&[
        "build-filter",
        s(&keys),
        "-o",
        s(&out),
        "--fingerprint",
        "12",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 33: 512 lines of /16 prefixes (6.9 KB) took 3.05 GB of RAM and wrote a
/// 37.7 MB filter, and a huge line was echoed whole into stderr. Now the file is
/// refused at the line that passes `--max-keys` (before expanding it: no output, no
/// key file), the error quotes a short excerpt of a bad line, and a file at the cap
/// gives a filter of the size announced. ≈ 0.3 s.
#[test]
fn expansion_and_messages_are_bounded() {
    let d = dir("bounded");
    let keys = d.join("keys.txt");
    let out = d.join("f.loxo");
    let slash16s: String = (0..512).fold(String::new(), |mut t, i| {
        let _ = writeln!(t, "{}.{}.0.0/16", 10 + i / 256, i % 256);
        t
    });
    std::fs::write(&keys, &slash16s).unwrap();
    let o = loxo(&["build-filter", s(&keys), "-o", s(&out)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "line 17: \"10.16.0.0/16\": 65536 more addresses would pass --max-keys 1048576"
        ),
        "{err}"
    );
    assert!(!out.exists() && !d.join("f.loxo.key").exists());

    // A 1 MB line: the message quotes 80 characters of it.
    std::fs::write(&keys, format!("192.0.2.1\n{}\n", "x".repeat(1 << 20))).unwrap();
    let o = loxo(&["build-filter", s(&keys), "-o", s(&out)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("line 2: longer than 4096 bytes, starting \"xxxx"),
        "{err}"
    );
    assert!(err.len() < 300, "{} bytes of stderr", err.len());

    // One /16 at --max-keys 65536: built; a second is refused.
    for (lines, ok) in [(1, true), (2, false)] {
        std::fs::write(&keys, &slash16s[..12 * lines]).unwrap();
        let o = loxo(&[
            "build-filter",
            s(&keys),
            "-o",
            s(&out),
            "--seed",
            GOLDEN_SEED,
            "--max-keys",
            "65536",
        ]);
        assert_eq!(o.status.success(), ok, "{}", text(&o.stderr));
    }
    // The construction's slots per key at n = 2^16, 0.875 + 0.25 · ln 10⁶ / ln n =
    // 1.186 (a byte each at 8 bits), and the frame's envelope.
    let size = std::fs::metadata(&out).unwrap().len() as f64;
    let per_key = 0.875 + 0.25 * 1e6f64.ln() / 65_536f64.ln();
    assert!(size <= 65_536.0 * per_key + 128.0, "{size}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `loxo top --blocklist`: the filter `build-filter` wrote (its seed read from the key
/// file beside it) gives every epoch a count of the flows it matches — within the
/// filters' errors of the exact count from the keys file — and the largest of them;
/// a filter under another seed is refused.
#[test]
fn top_counts_the_blocklisted_flows() {
    let d = dir("top");
    let pcap = d.join("t.pcap");
    let o = loxo(&[
        "gen",
        "-o",
        s(&pcap),
        "--packets",
        "30000",
        "--flows",
        "3000",
        "--seed",
        "5",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Every 10th source of the truth, and never-seen addresses.
    let truth = std::fs::read_to_string(d.join("t.truth.csv")).unwrap();
    let mut keys = vec!["198.18.0.0/24".to_owned()];
    let mut set = std::collections::HashSet::new();
    for (i, row) in truth.lines().skip(1).enumerate() {
        let f: Vec<&str> = row.split(',').collect();
        if f[3] == "flow" && i % 10 == 0 && set.insert(f[8].to_owned()) {
            keys.push(f[8].to_owned());
        }
    }
    std::fs::write(d.join("keys.txt"), keys.join("\n")).unwrap();
    let filter = d.join("bl.loxo");
    let o = loxo(&["build-filter", s(&d.join("keys.txt")), "-o", s(&filter)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = loxo(&[
        "top",
        s(&pcap),
        "--epoch",
        "8000",
        "--json",
        "--blocklist",
        s(&filter),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let epochs = v["epochs"].as_array().unwrap();
    assert_eq!(epochs.len(), 4);
    let mut listed = 0;
    for e in epochs {
        let b = &e["blocklisted"];
        let (got, matched) = (
            b["flows"].as_u64().unwrap(),
            b["exact_flows_matched"].as_u64().unwrap(),
        );
        // The monitor misses a matched flow only when its new-flow filter took the
        // flow's first frame for known (rate ≤ filter_fpr); it never counts more.
        let q = e["new_flows"]["filter_fpr"].as_f64().unwrap();
        let miss = matched as f64 * q + 4.0 * (matched as f64 * q).sqrt() + 1.0;
        assert!(
            got <= matched && got as f64 >= matched as f64 - miss,
            "{got} of {matched}"
        );
        assert!(matched > 50, "{matched}");
        assert_eq!(b["saturated"], false);
        // The estimate weighs each flow found by the inverse of its chance to be
        // checked: within 4σ of the matched flows (no false positive here, as above).
        let (est, sigma) = (
            b["estimate"].as_u64().unwrap() as f64,
            b["sigma"].as_f64().unwrap(),
        );
        assert!(
            est >= got as f64 && (est - matched as f64).abs() <= 4.0 * sigma + 1.0,
            "{est} ± {sigma} of {matched}"
        );
        listed += b["largest"].as_array().unwrap().len();
    }
    assert!(listed > 0);
    // Text output names the figure.
    let o = loxo(&[
        "top",
        s(&pcap),
        "--epoch",
        "8000",
        "--blocklist",
        s(&filter),
    ]);
    assert!(
        text(&o.stdout).contains("blocklisted flows "),
        "{}",
        text(&o.stdout)
    );
    // Another seed: refused with the reason.
    let o = loxo(&[
        "top",
        s(&pcap),
        "--blocklist",
        s(&filter),
        "--seed",
        GOLDEN_SEED,
    ]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("seed"), "{}", text(&o.stderr));
}
