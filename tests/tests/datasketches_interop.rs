//! `loxo_interop::DataSketchesHll` against the real Apache DataSketches (the
//! `datasketches` PyPI package), driven through `tests/python/ds_hll.py`.
//!
//! Python is `$LOXO_PYTHON` (CI points it at a virtualenv with `datasketches`),
//! else `python3`. Without a Python that can `import datasketches` the tests
//! **fail**, unless `LOXO_SKIP_COLLECTORS=1` (or `LOXO_SKIP_DATASKETCHES=1`) is set
//! (then they print a `SKIPPED` line and return).
//!
//! What is checked, exactly (floats compared bit for bit, via Python's `repr`):
//! * DataSketches deserializes loxo's HLL_4, HLL_6 and HLL_8 images; its estimate
//!   of the image equals the estimate of its own sketch of the same keys inserted in
//!   the same order (both are the HIP estimate: DataSketches' own sketch is built
//!   with `start_full_size` so both start in HLL mode), and equals loxo's
//!   martingale estimate; unions give identical registers and estimates, also
//!   with a third DataSketches sketch of other keys;
//! * a merged loxo sketch (out-of-order flag) reads with DataSketches' composite
//!   estimate, equal to that of DataSketches' own union of the same keys;
//! * loxo decodes DataSketches images of every mode (LIST, SET, HLL), type (HLL_4,
//!   HLL_6, HLL_8) and form (compact, updatable) into the registers loxo builds from
//!   the same keys, string keys and integer keys alike.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;

use loxo_tests::datasketches::python;

use loxo_hll::{Precision, SupportedPrecision};
use loxo_interop::datasketches::{DataSketchesHll, TargetType};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/ds_hll.py");

/// Runs the script; returns its `name value` output lines as a map.
fn run(py: &str, args: &[&str]) -> HashMap<String, String> {
    let out = Command::new(py).arg(SCRIPT).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ds_hll.py {args:?} failed:\n{}",
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
    std::env::temp_dir().join(format!("loxo-ds-{}-{name}", std::process::id()))
}

/// Feeds the keys of a spec (see ds_hll.py) in order, as DataSketches hashes them.
fn feed<const P: u8>(s: &mut DataSketchesHll<P>, spec: &str)
where
    Precision<P>: SupportedPrecision,
{
    let parts: Vec<&str> = spec.split(':').collect();
    match parts[0] {
        "str" => {
            let (start, end): (u64, u64) = (parts[2].parse().unwrap(), parts[3].parse().unwrap());
            for i in start..end {
                s.insert(format!("{}{i}", parts[1]).as_bytes());
            }
        }
        "int" => {
            let (start, end): (i64, i64) = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
            for i in start..end {
                s.insert_i64(i);
            }
        }
        _ => panic!("bad spec {spec}"),
    }
}

fn sketch<const P: u8>(spec: &str) -> DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    let mut s = DataSketchesHll::<P>::new();
    feed(&mut s, spec);
    s
}

fn write_image<const P: u8>(s: &DataSketchesHll<P>, t: TargetType, name: &str) -> PathBuf
where
    Precision<P>: SupportedPrecision,
{
    let mut buf = vec![0u8; s.encoded_len(t)];
    let n = s.encode_into(t, &mut buf).unwrap();
    let path = temp_file(name);
    std::fs::write(&path, &buf[..n]).unwrap();
    path
}

fn check_image_of_inserts<const P: u8>(py: &str, spec: &str, other: &str)
where
    Precision<P>: SupportedPrecision,
{
    let s = sketch::<P>(spec);
    for t in [TargetType::Hll4, TargetType::Hll6, TargetType::Hll8] {
        let path = write_image(&s, t, &format!("ins-{P}-{t:?}"));
        let r = run(
            py,
            &["check", &P.to_string(), path.to_str().unwrap(), spec, other],
        );
        let _ = std::fs::remove_file(&path);
        let ctx = format!("P = {P}, {t:?}, keys {spec}: {r:?}");
        assert_eq!(r["image_lg_k"], P.to_string(), "{ctx}");
        assert_eq!(r["image_estimate"], r["own_estimate"], "{ctx}");
        let hip = s.as_hll().estimate_martingale().unwrap();
        assert_eq!(r["image_estimate"].parse::<f64>().unwrap(), hip, "{ctx}");
        assert_eq!(r["union_registers_equal"], "1", "{ctx}");
        assert_eq!(r["union_image_estimate"], r["union_own_estimate"], "{ctx}");
        assert_eq!(r["cross_registers_equal"], "1", "{ctx}");
        assert_eq!(r["cross_image_estimate"], r["cross_own_estimate"], "{ctx}");
    }
}

#[test]
fn datasketches_reads_loxo_images_with_the_same_estimate() {
    let Some(py) = python() else { return };
    // From far below k (HIP ≈ exact) to well above it.
    check_image_of_inserts::<12>(&py, "str:flow-:0:100", "str:flow-:50:300");
    check_image_of_inserts::<12>(&py, "str:flow-:0:20000", "str:x:0:5000");
    check_image_of_inserts::<10>(&py, "int:0:100000", "int:50000:150000");
    check_image_of_inserts::<14>(&py, "str:k:0:60000", "str:k:30000:90000");
}

#[test]
fn datasketches_reads_a_merged_loxo_image_with_its_composite_estimate() {
    let Some(py) = python() else { return };
    let mut a = sketch::<12>("str:m:0:20000");
    a.merge(&sketch::<12>("str:m:10000:40000"));
    assert_eq!(a.as_hll().estimate_martingale(), None);
    for t in [TargetType::Hll4, TargetType::Hll6, TargetType::Hll8] {
        let path = write_image(&a, t, &format!("merged-{t:?}"));
        // DataSketches' own union: its sketch of the first key set with one of the
        // second.
        let r = run(
            &py,
            &[
                "check",
                "12",
                path.to_str().unwrap(),
                "str:m:0:20000",
                "str:m:10000:40000",
            ],
        );
        let _ = std::fs::remove_file(&path);
        assert_eq!(r["cross_registers_equal"], "1", "{t:?}: {r:?}");
        // Out-of-order image: DataSketches' composite estimate over the registers,
        // bit-identical to the one of its own union of the same keys.
        assert_eq!(r["image_estimate"], r["cross_own_estimate"], "{t:?}: {r:?}");
        assert_eq!(
            r["cross_image_estimate"], r["cross_own_estimate"],
            "{t:?}: {r:?}"
        );
    }
}

#[test]
fn loxo_decodes_datasketches_images_of_every_mode_and_type() {
    let Some(py) = python() else { return };
    let mut modes_seen = BTreeSet::new();
    // 5 keys stay a LIST, 300 a SET, 3000 and more are in HLL mode at lgK = 12.
    for spec in [
        "str:d:0:0",
        "str:d:0:5",
        "str:d:0:300",
        "str:d:0:3000",
        "str:d:0:50000",
        "int:-2000:2000",
    ] {
        let ours = sketch::<12>(spec);
        for ty in ["HLL_4", "HLL_6", "HLL_8"] {
            for form in ["compact", "updatable", "full"] {
                let path = temp_file(&format!("ds-{ty}-{form}"));
                let r = run(
                    &py,
                    &["build", "12", ty, spec, path.to_str().unwrap(), form],
                );
                let bytes = std::fs::read(&path).unwrap();
                let _ = std::fs::remove_file(&path);
                modes_seen.insert(r["mode"].clone());
                let decoded = DataSketchesHll::<12>::decode(&bytes)
                    .unwrap_or_else(|e| panic!("{spec} {ty} {form}: {e}"));
                assert!(
                    decoded.as_hll().registers().eq(ours.as_hll().registers()),
                    "{spec} {ty} {form}: registers differ"
                );
                assert_eq!(decoded.estimate(), ours.estimate());
                // Wrong precision is refused, not misread.
                assert!(DataSketchesHll::<11>::decode(&bytes).is_err());
            }
        }
    }
    let all: BTreeSet<String> = ["0", "1", "2"].iter().map(|s| (*s).to_string()).collect();
    assert_eq!(
        modes_seen, all,
        "LIST (0), SET (1) and HLL (2) images all covered"
    );
}

#[test]
fn empty_sketches_cross_both_ways() {
    let Some(py) = python() else { return };
    let empty = DataSketchesHll::<11>::new();
    for t in [TargetType::Hll4, TargetType::Hll6, TargetType::Hll8] {
        let path = write_image(&empty, t, &format!("empty-{t:?}"));
        let r = run(&py, &["info", "11", path.to_str().unwrap()]);
        let _ = std::fs::remove_file(&path);
        assert_eq!(r["image_lg_k"], "11");
        assert_eq!(r["is_empty"], "1", "{t:?}: {r:?}");
        assert_eq!(r["image_estimate"], "0.0", "{t:?}: {r:?}");
    }
}
