//! `loxo inspect`, `loxo merge` and `loxo export` on real files, through the binary:
//! output, exit codes, and a real `redis-server` for the export.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loxo_cli::resp::Client;
use loxo_core::Seed;
use loxo_hll::Hll;
use loxo_interop::redis::RedisHll;
use loxo_tests::hll_theory::check_estimate;
use loxo_tests::redis::RedisServer;

const SEED: Seed = Seed::new(0xf1ee7, 0x5eed);

fn loxo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(args)
        .output()
        .expect("run loxo")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-sketch-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn sketch(seed: Seed, keys: std::ops::Range<u32>) -> Hll<14> {
    let mut h = Hll::<14>::new(seed);
    for k in keys {
        h.insert(&k.to_le_bytes());
    }
    h
}

fn write(path: &Path, h: &Hll<14>) {
    let mut buf = vec![0u8; h.encoded_len()];
    let n = h.encode_into(&mut buf).unwrap();
    std::fs::write(path, &buf[..n]).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn inspect_prints_an_hll_and_refuses_corrupt_files() {
    let d = dir("inspect");
    let f = d.join("a.loxo");
    let h = sketch(SEED, 0..20_000);
    write(&f, &h);
    let o = loxo(&["inspect", s(&f)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("kind:             hll (5)"), "{out}");
    assert!(out.contains("precision:        14 (m = 16384)"), "{out}");
    assert!(
        out.contains(&format!("estimate:         {:.1}", h.estimate())),
        "{out}"
    );
    assert!(
        out.contains(&format!("seed fingerprint: {:016x}", SEED.fingerprint())),
        "{out}"
    );
    assert!(out.contains("martingale:       "), "{out}");

    // Flip one payload byte: the CRC fails, exit status 1, one clear line.
    let mut bytes = std::fs::read(&f).unwrap();
    bytes[100] ^= 0x10;
    let bad = d.join("bad.loxo");
    std::fs::write(&bad, &bytes).unwrap();
    let o = loxo(&["inspect", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("bad.loxo") && err.contains("checksum"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // Truncated, and not a loxo file at all.
    std::fs::write(&bad, &bytes[..20]).unwrap();
    let o = loxo(&["inspect", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
    std::fs::write(&bad, b"HYLL this is not loxo at all, really not").unwrap();
    let o = loxo(&["inspect", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("not a loxo sketch"), "{err}");
    assert!(err.contains("Redis HyperLogLog string"), "{err}");
}

#[test]
fn merge_equals_the_in_process_merge_and_checks_seeds() {
    let d = dir("merge");
    let (a, b) = (sketch(SEED, 0..30_000), sketch(SEED, 20_000..60_000));
    let (fa, fb, out) = (d.join("a.loxo"), d.join("b.loxo"), d.join("ab.loxo"));
    write(&fa, &a);
    write(&fb, &b);
    let o = loxo(&["merge", "-o", s(&out), s(&fa), s(&fb)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let mut expect = a.clone();
    expect.merge(&b).unwrap();
    let mut got = Hll::<14>::new(SEED);
    got.decode_into(&std::fs::read(&out).unwrap()).unwrap(); // fingerprint kept
    assert_eq!(got, expect);
    assert!(stdout(&o).contains(&format!("estimate {:.1}", expect.estimate())));
    // 60 000 distinct keys in m = 16 384 registers (t = 3.66): σ = 0.71 % by the
    // delta method at that n (`loxo_tests::hll_theory`), not 1.04/√m = 0.81 %;
    // band 4σ around the bias at that n.
    check_estimate(expect.estimate(), 60_000, 14, 4.0).unwrap();

    // Another seed's sketch, another precision: refused.
    let fc = d.join("c.loxo");
    write(&fc, &sketch(Seed::new(1, 2), 0..10));
    let o = loxo(&["merge", "-o", s(&out), s(&fa), s(&fc)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("seed mismatch"), "{}", stderr(&o));
    let mut p10 = Hll::<10>::new(SEED);
    p10.insert(b"x");
    let mut buf = vec![0u8; p10.encoded_len()];
    let n = p10.encode_into(&mut buf).unwrap();
    std::fs::write(&fc, &buf[..n]).unwrap();
    let o = loxo(&["merge", "-o", s(&out), s(&fa), s(&fc)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("geometry mismatch"), "{}", stderr(&o));
}

/// `loxo merge` of `ull` frames equals the in-process merge (fingerprint kept),
/// `inspect` prints its three estimates, and mixing kinds is refused.
#[test]
fn merge_and_inspect_ull() {
    use loxo_hll::Ull;
    let d = dir("merge-ull");
    let ull = |keys: std::ops::Range<u32>| {
        let mut u = Ull::<12>::new(SEED);
        keys.for_each(|k| {
            u.insert(&k.to_le_bytes());
        });
        u
    };
    let enc = |u: &Ull<12>| {
        let mut buf = vec![0u8; u.encoded_len()];
        let n = u.encode_into(&mut buf).unwrap();
        buf.truncate(n);
        buf
    };
    let (a, b) = (ull(0..30_000), ull(20_000..60_000));
    let (fa, fb, out) = (d.join("a.loxo"), d.join("b.loxo"), d.join("ab.loxo"));
    std::fs::write(&fa, enc(&a)).unwrap();
    std::fs::write(&fb, enc(&b)).unwrap();
    let o = loxo(&["merge", "-o", s(&out), s(&fa), s(&fb)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut expect = a.clone();
    expect.merge(&b).unwrap();
    let mut got = Ull::<12>::new(SEED);
    got.decode_into(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(got, expect);
    assert!(stdout(&o).contains(&format!("estimate {:.1}", expect.estimate())));
    let o = loxo(&["inspect", s(&out)]);
    let text = stdout(&o);
    assert!(text.contains("kind:             ull (12)"), "{text}");
    assert!(
        text.contains(&format!("{:.1} (FGRA", expect.estimate())),
        "{text}"
    );
    assert!(
        text.contains(&format!("estimate (ML):    {:.1}", expect.estimate_ml())),
        "{text}"
    );
    assert!(text.contains("martingale:       none"), "{text}");
    // An hll frame among ull frames: refused.
    let fh = d.join("h.loxo");
    write(&fh, &sketch(SEED, 0..10));
    let o = loxo(&["merge", "-o", s(&out), s(&fa), s(&fh)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("cannot merge an hll sketch into ull"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn export_to_a_file_and_to_a_real_redis() {
    let d = dir("export");
    let (a, b) = (sketch(SEED, 0..25_000), sketch(SEED, 10_000..40_000));
    let (fa, fb, hyll) = (d.join("a.loxo"), d.join("b.loxo"), d.join("a.hyll"));
    write(&fa, &a);
    write(&fb, &b);
    let o = loxo(&["export", "--hyll", s(&hyll), s(&fa)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back = RedisHll::decode(&std::fs::read(&hyll).unwrap()).unwrap();
    assert!(back.as_hll().registers().eq(a.registers()));

    let Some(server) = RedisServer::start() else {
        return;
    };
    for (key, f) in [("dev:a", &fa), ("dev:b", &fb)] {
        let o = loxo(&["export", "--redis", &server.addr(), key, s(f)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("PFCOUNT"), "{}", stdout(&o));
    }
    let mut c = Client::connect(&server.addr()).unwrap();
    assert_eq!(
        c.integer(&[b"PFCOUNT", b"dev:a"]).unwrap(),
        RedisHll::from_hll(&a).count() as i64
    );
    c.checked(&[b"PFMERGE", b"fleet", b"dev:a", b"dev:b"])
        .unwrap();
    let mut merged = a.clone();
    merged.merge(&b).unwrap();
    assert_eq!(
        c.integer(&[b"PFCOUNT", b"fleet"]).unwrap(),
        RedisHll::from_hll(&merged).count() as i64
    );

    // Precision other than 14: a clear refusal.
    let mut p12 = Hll::<12>::new(SEED);
    p12.insert(b"k");
    let mut buf = vec![0u8; p12.encoded_len()];
    let n = p12.encode_into(&mut buf).unwrap();
    let f12 = d.join("p12.loxo");
    std::fs::write(&f12, &buf[..n]).unwrap();
    let o = loxo(&["export", "--redis", &server.addr(), "k", s(&f12)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("precision 14"), "{}", stderr(&o));
}

#[test]
fn inspect_reads_every_golden_file() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut seen = 0;
    for entry in std::fs::read_dir(golden).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // `v1/`: old-version frames, see tests/tests/golden_versions.rs
        }
        let o = loxo(&["inspect", s(&path)]);
        assert!(o.status.success(), "{}: {}", path.display(), stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("kind:") && out.contains("memory:"), "{out}");
        seen += 1;
    }
    assert_eq!(seen, 27, "one golden file per kind and variant");
}

/// `inspect` describes each golden file as what it is: the kind the file holds and,
/// for the two top-k summaries (the types of `tests/tests/golden_cms.rs`:
/// `SpaceSaving<u32, 8>` and `HeavyKeeper<16, 2, 4, FlowKey>`, both full), their
/// geometry, key size, entry count, one `top i:` line per entry (up to 5) and a
/// memory estimate within a factor 2 of the type's size.
///
/// (Before `loxo inspect` read HeavyKeeper's fourth parameter as `L | B << 16` it
/// printed "7077926-byte keys", "memory ≈ 28312072 bytes" and no entry, and the
/// test above, which only looks for `kind:` and `memory:`, passed.)
#[test]
fn inspect_describes_each_golden_file() {
    use loxo_cms::{HeavyKeeper, SpaceSaving};
    use loxo_flow::FlowKey;
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&golden).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let kind = if name.starts_with("hll") {
            "hll".to_string()
        } else if name.starts_with("ull") {
            "ull".to_string()
        } else if name.starts_with("binary_fuse") {
            "binary-fuse".to_string()
        } else if name.starts_with("theta") {
            "theta".to_string()
        } else if name.starts_with("spread") {
            "spread".to_string()
        } else {
            name.replace('_', "-")
        };
        let out = stdout(&loxo(&["inspect", s(&path)]));
        let kind_line = out.lines().find(|l| l.starts_with("kind:")).unwrap_or("");
        if kind_line.split_whitespace().nth(1) != Some(kind.as_str()) {
            failures.push(format!("{name}: {kind_line:?}, expected kind {kind}"));
        }
    }
    for (file, geometry, entries, memory) in [
        (
            "space_saving.bin",
            "geometry:         top 8, 4-byte keys",
            8,
            core::mem::size_of::<SpaceSaving<u32, 8>>(),
        ),
        (
            "heavy_keeper.bin",
            "geometry:         2 rows × 16 buckets, top 4, 38-byte keys",
            4,
            core::mem::size_of::<HeavyKeeper<16, 2, 4, FlowKey>>(),
        ),
    ] {
        let out = stdout(&loxo(&["inspect", s(&golden.join(file))]));
        if !out.contains(geometry) {
            failures.push(format!("{file}: no {geometry:?} in\n{out}"));
        }
        if !out.contains(&format!("entries:          {entries}/{entries} ")) {
            failures.push(format!("{file}: not {entries} entries in\n{out}"));
        }
        let tops = out.lines().filter(|l| l.starts_with("top ")).count();
        if tops != entries.min(5) {
            failures.push(format!("{file}: {tops} top lines in\n{out}"));
        }
        let printed: usize = out
            .lines()
            .find_map(|l| l.strip_prefix("memory:           ≈ "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if printed > 2 * memory || 2 * printed < memory {
            failures.push(format!(
                "{file}: memory ≈ {printed}, the type is {memory} bytes"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `inspect` of a `spread` frame (`tests/tests/golden_spread.rs`: a scanner,
/// 2001:db8::1, to 1 000 destinations among 200 sources to two each): its geometry,
/// the exact memory of the type, and the scanner as the widest key with bounds that
/// hold its spread.
#[test]
fn inspect_describes_a_spread_frame() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden");
    let out = stdout(&loxo(&["inspect", s(&golden.join("spread_fan_out.bin"))]));
    assert!(out.contains("geometry:         S = 16 registers per key, 16 registers per stripe, C = 64 cells, 16-byte keys"), "{out}");
    let memory = core::mem::size_of::<loxo_spread::Spreaders<[u8; 16], 16, 8, 64>>();
    assert!(
        out.contains(&format!("memory:           {memory} bytes")),
        "{out}"
    );
    let widest = out
        .lines()
        .skip_while(|l| !l.starts_with("widest keys:"))
        .nth(1)
        .unwrap_or("");
    assert!(widest.trim_start().starts_with("2001:db8::1 "), "{out}");
    let bounds: Vec<f64> = widest
        .split(['[', ']'])
        .nth(1)
        .unwrap_or("")
        .split(", ")
        .filter_map(|x| x.parse().ok())
        .collect();
    assert!(
        bounds.len() == 2 && bounds[0] <= 1000.0 && 1000.0 <= bounds[1],
        "{widest}"
    );
}
