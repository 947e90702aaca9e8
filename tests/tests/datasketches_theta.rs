//! `loxo_interop::theta` against the real Apache DataSketches (the `datasketches`
//! PyPI package), driven through `tests/python/ds_theta.py`.
//!
//! Python is `$LOXO_PYTHON` (CI points it at a virtualenv with `datasketches`),
//! else `python3`. Without a Python that can `import datasketches` the tests
//! **fail**, unless `LOXO_SKIP_COLLECTORS=1` (or `LOXO_SKIP_DATASKETCHES=1`) is set
//! (then they print a `SKIPPED` line and return).
//!
//! What is checked, exactly (floats bit for bit, via Python's `repr`):
//! * DataSketches reads loxo's images (with `seed = fingerprint`) with loxo's
//!   estimate, and its `theta_union`, `theta_intersection` and `theta_a_not_b` of
//!   two loxo images give loxo's `merge` / `intersect` / `subtract`: the same
//!   retained count, θ and estimate, and result images **byte for byte** equal to
//!   loxo's images of its results; exact and estimation mode, several `K`, disjoint
//!   and nested sets;
//! * loxo reads the images DataSketches wrote (`update_theta_sketch` of lg_k 10 and
//!   12; empty, one key, exact, estimation; ordered and unordered; serial version 3
//!   and the compressed 4) with DataSketches' `get_estimate()`, and loxo's set
//!   operations on them equal DataSketches' on the same images;
//! * DataSketches refuses a loxo image under another seed, and loxo refuses
//!   DataSketches' images under a keyed loxo seed.
//!
//! The 2σ bounds are equal bit for bit at every retained count (loxo-theta ports
//! DataSketches' binomial bounds, closed forms, tables and exact sums alike).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use loxo_core::Seed;
use loxo_interop::theta::{
    datasketches_theta_seed, decode, encode_into, encoded_len, CompactThetaImage,
    DEFAULT_UPDATE_SEED,
};
use loxo_tests::datasketches::python;
use loxo_theta::ThetaSketch;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/ds_theta.py");

/// Unions are computed in a sketch this large (DataSketches' side: `lg_k = 20`), so
/// neither side trims the union of two sketches of at most `K = 8192`.
const BIG: usize = 32_768;

/// Runs the script; returns its `name value` output lines as a map.
fn run(py: &str, args: &[&str]) -> HashMap<String, String> {
    let out = Command::new(py).arg(SCRIPT).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ds_theta.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("loxo-ds-theta-{}-{name}", std::process::id()))
}

fn encode<const K: usize>(s: &ThetaSketch<K>) -> Vec<u8> {
    let mut buf = vec![0u8; encoded_len(s)];
    let n = encode_into(s, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn write_image<const K: usize>(s: &ThetaSketch<K>, name: &str) -> PathBuf {
    let path = temp_file(name);
    std::fs::write(&path, encode(s)).unwrap();
    path
}

fn keyed<const K: usize>(seed: Seed, keys: Range<u32>) -> ThetaSketch<K> {
    let mut s = ThetaSketch::new(seed);
    for k in keys {
        s.insert(&k.to_le_bytes());
    }
    s
}

/// Asserts DataSketches' figures `name_*` in `r` equal the sketch's.
fn assert_figures<const K: usize>(r: &HashMap<String, String>, name: &str, s: &ThetaSketch<K>) {
    let get = |f: &str| r[&format!("{name}_{f}")].clone();
    let ctx = format!("{name}: {s:?}");
    assert_eq!(
        get("estimate").parse::<f64>().unwrap(),
        s.estimate(),
        "{ctx}"
    );
    assert_eq!(get("retained"), s.retained().to_string(), "{ctx}");
    assert_eq!(get("theta64"), s.theta_long().to_string(), "{ctx}");
    // DataSketches calls a result with no values and θ = 1 empty (so does the image).
    let empty = s.is_empty() || (s.retained() == 0 && !s.is_estimation_mode());
    assert_eq!(get("empty"), u8::from(empty).to_string(), "{ctx}");
    let (lo, hi): (f64, f64) = (
        get("lower2").parse().unwrap(),
        get("upper2").parse().unwrap(),
    );
    assert_eq!((s.lower_bound(2), s.upper_bound(2)), (lo, hi), "{ctx}");
}

/// DataSketches' union, intersection and A-not-B of the images at `a_path` and
/// `b_path` (read with `update_seed`) against loxo's of the sketches `a` and `b`
/// (the same sets): equal figures and equal result images.
fn check_setops<const K: usize>(
    py: &str,
    update_seed: u64,
    (a_path, a): (&Path, &ThetaSketch<K>),
    (b_path, b): (&Path, &ThetaSketch<K>),
    tag: &str,
) {
    let out = temp_file(&format!("{tag}-out"));
    let r = run(
        py,
        &[
            "setops",
            &update_seed.to_string(),
            a_path.to_str().unwrap(),
            b_path.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    assert_figures(&r, "a", a);
    assert_figures(&r, "b", b);
    let mut union = Box::new(ThetaSketch::<BIG>::new(a.seed()));
    union.merge(a).unwrap();
    union.merge(b).unwrap();
    let mut inter = a.clone();
    inter.intersect(b).unwrap();
    let mut anotb = a.clone();
    anotb.subtract(b).unwrap();
    let results = [
        ("union", encode(&*union)),
        ("inter", encode(&inter)),
        ("anotb", encode(&anotb)),
    ];
    assert_figures(&r, "union", &*union);
    assert_figures(&r, "inter", &inter);
    assert_figures(&r, "anotb", &anotb);
    for (name, mine) in results {
        let path = PathBuf::from(format!("{}.{name}", out.display()));
        let theirs = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(theirs, mine, "{tag}: {name} image");
    }
}

fn check_loxo_setops<const K: usize>(py: &str, a_keys: Range<u32>, b_keys: Range<u32>) {
    let seed = Seed::new(0x5eed_0000 + K as u64, 0xfeed);
    let (a, b) = (
        keyed::<K>(seed, a_keys.clone()),
        keyed::<K>(seed, b_keys.clone()),
    );
    let tag = format!("loxo-{K}-{}-{}", a_keys.end, b_keys.end);
    let (pa, pb) = (
        write_image(&a, &format!("{tag}-a")),
        write_image(&b, &format!("{tag}-b")),
    );
    check_setops(py, seed.fingerprint(), (&pa, &a), (&pb, &b), &tag);
    let _ = std::fs::remove_file(pa);
    let _ = std::fs::remove_file(pb);
}

#[test]
fn datasketches_set_operations_on_loxo_images_give_loxos_results() {
    let Some(py) = python() else { return };
    // exact mode: overlapping, disjoint (empty intersection), nested (empty A-not-B)
    check_loxo_setops::<1024>(&py, 0..300, 200..450);
    check_loxo_setops::<1024>(&py, 0..300, 300..400);
    check_loxo_setops::<1024>(&py, 100..200, 0..300);
    // one sampled, one exact; both sampled at different θ; several K
    check_loxo_setops::<64>(&py, 0..5000, 4990..5010);
    check_loxo_setops::<64>(&py, 0..5000, 2500..9000);
    check_loxo_setops::<1024>(&py, 0..60_000, 40_000..100_000);
    check_loxo_setops::<8192>(&py, 0..200_000, 150_000..170_000);
    // disjoint sampled sets: an intersection with θ < 1 and no values
    check_loxo_setops::<256>(&py, 0..10_000, 20_000..30_000);
    // an empty side
    check_loxo_setops::<256>(&py, 0..0, 0..10_000);
    check_loxo_setops::<256>(&py, 0..10_000, 0..0);
}

/// Builds a DataSketches image; returns its path and DataSketches' figures.
fn build(
    py: &str,
    lg_k: u8,
    keys: &str,
    ordered: bool,
    compress: bool,
) -> (PathBuf, HashMap<String, String>) {
    let path = temp_file(&format!("ds-{lg_k}-{keys}-{ordered}-{compress}"));
    let r = run(
        py,
        &[
            "build",
            &lg_k.to_string(),
            keys,
            path.to_str().unwrap(),
            if ordered { "1" } else { "0" },
            if compress { "1" } else { "0" },
        ],
    );
    (path, r)
}

#[test]
fn loxo_reads_datasketches_images_with_their_estimate() {
    let Some(py) = python() else { return };
    let ds = datasketches_theta_seed(DEFAULT_UPDATE_SEED);
    for lg_k in [10, 12] {
        for keys in ["0:0", "7:8", "0:500", "0:50000"] {
            for ordered in [true, false] {
                for compress in [false, true] {
                    let (path, r) = build(&py, lg_k, keys, ordered, compress);
                    let bytes = std::fs::read(&path).unwrap();
                    let _ = std::fs::remove_file(&path);
                    let ctx =
                        format!("lg_k {lg_k}, keys {keys}, ordered {ordered}, compress {compress}");
                    let view = CompactThetaImage::parse(&bytes).unwrap();
                    // DataSketches compresses ordered images with values, except one
                    // value at θ = 1.
                    let v4 = compress && ordered && view.retained() > 0 && keys != "7:8";
                    assert_eq!(view.serial_version(), if v4 { 4 } else { 3 }, "{ctx}");
                    assert_eq!(
                        view.estimate(),
                        r["image_estimate"].parse::<f64>().unwrap(),
                        "{ctx}"
                    );
                    // Decoded into a sketch larger than DataSketches' table (2^(lg_k+1)
                    // slots, up to 15/16 full), so nothing is down-sampled.
                    let s: ThetaSketch<16_384> = decode(&bytes, ds).unwrap();
                    assert_figures(&r, "image", &s);
                    if ordered && !compress {
                        assert_eq!(encode(&s), bytes, "{ctx}: re-encoded");
                    }
                }
            }
        }
    }
}

#[test]
fn loxo_set_operations_on_datasketches_images_match_datasketches() {
    let Some(py) = python() else { return };
    let ds = datasketches_theta_seed(DEFAULT_UPDATE_SEED);
    for (lg_k, a_keys, b_keys, compress) in [
        (10, "0:300", "200:450", false),
        (10, "0:30000", "20000:60000", true),
        (12, "0:30000", "20000:60000", false),
        (12, "0:100000", "0:2000", true),
    ] {
        // A ordered (v4 when compressed), B unordered (always v3)
        let (pa, _) = build(&py, lg_k, a_keys, true, compress);
        let (pb, _) = build(&py, lg_k, b_keys, false, false);
        let a: ThetaSketch<8192> = decode(&std::fs::read(&pa).unwrap(), ds).unwrap();
        let b: ThetaSketch<8192> = decode(&std::fs::read(&pb).unwrap(), ds).unwrap();
        let tag = format!("ds-{lg_k}-{a_keys}-{b_keys}");
        check_setops(&py, DEFAULT_UPDATE_SEED, (&pa, &a), (&pb, &b), &tag);
        let _ = std::fs::remove_file(pa);
        let _ = std::fs::remove_file(pb);
    }
}

#[test]
fn seeds_are_checked_on_both_sides() {
    let Some(py) = python() else { return };
    let seed = Seed::new(42, 43);
    let path = write_image(&keyed::<256>(seed, 0..100), "seedcheck");
    let p = path.to_str().unwrap();
    assert_eq!(
        run(&py, &["seedcheck", &seed.fingerprint().to_string(), p])["ok"],
        "1"
    );
    assert_eq!(run(&py, &["seedcheck", "9001", p])["ok"], "0");
    let other = Seed::new(42, 44).fingerprint().to_string();
    assert_eq!(run(&py, &["seedcheck", &other, p])["ok"], "0");
    let _ = std::fs::remove_file(&path);
    let (path, _) = build(&py, 10, "0:100", true, false);
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(matches!(
        decode::<256>(&bytes, seed),
        Err(loxo_core::DecodeError::SeedMismatch { .. })
    ));
}
