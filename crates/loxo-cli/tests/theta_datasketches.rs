//! DataSketches compact theta images through the `loxo` binary: `loxo export
//! --datasketches` of a `theta` frame writes exactly `loxo_interop::theta`'s image
//! of the same sketch (seed hash of the seed's fingerprint), and `loxo inspect` /
//! `loxo setop` on images give the figures they give on the frames; images
//! DataSketches hashes from raw keys combine among themselves and are refused beside
//! keyed loxo sketches. With the `datasketches` PyPI package (`LOXO_PYTHON`; see
//! `loxo_tests::datasketches::python`), the real DataSketches reads the exported
//! images with the printed seed and the tool reads DataSketches' own images.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loxo_core::Seed;
use loxo_interop::theta::{
    compute_seed_hash, datasketches_theta_hash, datasketches_theta_seed, decode, encode_into,
    encoded_len,
};
use loxo_theta::ThetaSketch;
use serde_json::Value;

const SEED: &str = "00112233445566778899aabbccddeeff";
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/python/ds_theta.py"
);

fn loxo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(args)
        .output()
        .expect("run loxo")
}

fn ok(args: &[&str]) -> String {
    let o = loxo(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-theta-ds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn seed() -> Seed {
    loxo_cli::key::read_key(SEED).unwrap()
}

fn addr(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x0a00_0000 + i)
}

/// `loxo build-theta` of the addresses 10.0.0.0 + `range` at `K = k`, and the same
/// sketch built here.
fn build<const K: usize>(d: &Path, name: &str, range: Range<u32>) -> (PathBuf, ThetaSketch<K>) {
    let keys = d.join(format!("{name}.txt"));
    let lines: Vec<String> = range.clone().map(|i| addr(i).to_string()).collect();
    std::fs::write(&keys, lines.join("\n")).unwrap();
    let out = d.join(format!("{name}.loxo"));
    let k = K.to_string();
    ok(&[
        "build-theta",
        "-o",
        s(&out),
        "--seed",
        SEED,
        "-k",
        &k,
        s(&keys),
    ]);
    let mut sk = ThetaSketch::<K>::new(seed());
    for i in range {
        sk.insert(&addr(i).octets());
    }
    (out, sk)
}

/// `loxo export --datasketches` of `frame` to `name.bin`; the file and stdout.
fn export(d: &Path, name: &str, frame: &Path, extra: &[&str]) -> (PathBuf, String) {
    let out = d.join(format!("{name}.bin"));
    let mut args = vec!["export", "--datasketches", s(&out)];
    args.extend(extra);
    args.push(s(frame));
    let stdout = ok(&args);
    (out, stdout)
}

fn image<const K: usize>(sk: &ThetaSketch<K>) -> Vec<u8> {
    let mut buf = vec![0u8; encoded_len(sk)];
    let n = encode_into(sk, &mut buf).unwrap();
    buf.truncate(n);
    buf
}

/// The estimate and bound lines of `loxo inspect`.
fn figures(inspect: &str) -> Vec<String> {
    let lines: Vec<String> = inspect
        .lines()
        .filter(|l| {
            ["theta:", "retained:", "estimate:", "bounds "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 6, "{inspect}");
    lines
}

fn setop_json(op: &str, files: &[&Path], extra: &[&str]) -> Value {
    let mut args = vec!["setop", op, "--json"];
    args.extend(extra);
    args.extend(files.iter().map(|p| s(p)));
    serde_json::from_str(&ok(&args)).unwrap()
}

/// The figures of a `setop --json` result (everything but the file names).
fn result(v: &Value) -> Value {
    let mut r = v["result"].clone();
    r.as_object_mut().unwrap().remove("seed_fingerprint");
    r
}

#[test]
fn export_writes_interops_image_of_the_sketch_under_its_fingerprint() {
    let d = dir("export");
    let fp = seed().fingerprint();
    // Estimation mode, exact mode, one key, no key.
    let (a, sa) = build::<1024>(&d, "a", 0..5000);
    let (b, sb) = build::<1024>(&d, "b", 0..300);
    let (c, sc) = build::<64>(&d, "c", 7..8);
    let (e, se) = build::<64>(&d, "e", 0..0);
    for (name, frame, bytes, estimate) in [
        ("a", &a, image(&sa), sa.estimate()),
        ("b", &b, image(&sb), sb.estimate()),
        ("c", &c, image(&sc), sc.estimate()),
        ("e", &e, image(&se), se.estimate()),
    ] {
        let (out, stdout) = export(&d, name, frame, &[]);
        let written = std::fs::read(&out).unwrap();
        assert_eq!(written, bytes, "{name}");
        assert_eq!(
            written[6..8],
            compute_seed_hash(fp).to_le_bytes(),
            "{name}: seed hash"
        );
        assert!(
            stdout.contains(&format!(
                "compact_theta_sketch.deserialize(bytes, seed={fp})"
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("estimate {estimate:.1}")),
            "{stdout}"
        );
    }
    // Decoded with the seed, the image is the sketch.
    let back: ThetaSketch<1024> = decode(&std::fs::read(d.join("a.bin")).unwrap(), seed()).unwrap();
    assert_eq!(back, sa);
    assert!(sa.is_estimation_mode());
    let back: ThetaSketch<1024> = decode(&std::fs::read(d.join("b.bin")).unwrap(), seed()).unwrap();
    assert_eq!(back, sb);
    // Under another loxo seed the image does not decode.
    let other = Seed::new(1, 2);
    assert!(decode::<1024>(&std::fs::read(d.join("a.bin")).unwrap(), other).is_err());
    // --lg-max-map-size is for frequent items images.
    let o = loxo(&[
        "export",
        "--datasketches",
        s(&d.join("x.bin")),
        "--lg-max-map-size",
        "10",
        s(&a),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("not theta sketches"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn inspect_and_setop_on_exported_images_match_the_frames() {
    let d = dir("setop");
    let fp = seed().fingerprint().to_string();
    let ds_seed = ["--ds-seed", fp.as_str()];
    let (a, _) = build::<1024>(&d, "a", 0..5000);
    let (b, _) = build::<1024>(&d, "b", 2500..9000);
    let (c, _) = build::<4096>(&d, "c", 1000..1500);
    let (ai, _) = export(&d, "a", &a, &[]);
    let (bi, _) = export(&d, "b", &b, &[]);
    let (ci, _) = export(&d, "c", &c, &[]);

    for (frame, img) in [(&a, &ai), (&b, &bi), (&c, &ci)] {
        let on_frame = ok(&["inspect", s(frame)]);
        let on_image = ok(&["inspect", "--ds-seed", &fp, s(img)]);
        assert_eq!(figures(&on_frame), figures(&on_image));
        assert!(on_image.contains("compact theta image, serial version 3, ordered"));
        assert!(on_image.contains(&format!("= that of DataSketches seed {fp}")));
        // Without the seed, inspect still describes it and says the seed hash differs.
        let plain = ok(&["inspect", s(img)]);
        assert_eq!(figures(&plain), figures(&on_frame));
        assert!(plain.contains("not 93cc of --ds-seed 9001"), "{plain}");
    }

    for op in ["union", "intersect", "anotb"] {
        let frames = setop_json(op, &[&a, &b, &c], &[]);
        let images = setop_json(op, &[&ai, &bi, &ci], &ds_seed);
        // c.bin does not say its K = 4096: read into the K that holds its 500
        // values (1024), the images' union trims where the frames' does not.
        let mut at_4096 = vec!["-k", "4096"];
        at_4096.extend(ds_seed);
        let images_4096 = setop_json(op, &[&ai, &bi, &ci], &at_4096);
        assert_eq!(images["inputs"][2]["k"], 1024);
        assert_eq!(result(&frames), result(&images_4096), "{op}");
        let mixed = setop_json(op, &[&a, &bi, &ci], &at_4096);
        assert_eq!(frames["result"], mixed["result"], "{op}");
        if op == "union" {
            assert_ne!(result(&frames), result(&images));
        } else {
            assert_eq!(
                result(&frames)["estimate"],
                result(&images)["estimate"],
                "{op}"
            );
        }
        assert_eq!(
            frames["inputs"][1]["estimate"],
            images["inputs"][1]["estimate"]
        );
    }
    // The result of a set operation on images, written with -o and exported with
    // the same --ds-seed, is the image of the result on the frames.
    let on_images = d.join("u-images.loxo");
    let mut args = vec!["setop", "union", "-o", s(&on_images)];
    args.extend(ds_seed);
    args.extend([s(&ai), s(&bi)]);
    ok(&args);
    let on_frames = d.join("u-frames.loxo");
    ok(&["setop", "union", "-o", s(&on_frames), s(&a), s(&b)]);
    let (x, _) = export(&d, "u-images", &on_images, &ds_seed);
    let (y, _) = export(&d, "u-frames", &on_frames, &[]);
    assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap());
}

#[test]
fn seeds_are_checked() {
    let d = dir("seeds");
    let (a, _) = build::<1024>(&d, "a", 0..5000);
    let (ai, _) = export(&d, "a", &a, &[]);
    // An image of a loxo sketch read under DataSketches' default seed.
    let o = loxo(&["setop", "union", s(&a), s(&ai)]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("cannot combine with the DataSketches image"),
        "{err}"
    );
    assert!(
        err.contains(&format!("--ds-seed {}", seed().fingerprint())),
        "{err}"
    );
    let o = loxo(&["setop", "union", s(&ai), s(&ai)]);
    assert!(text(&o.stderr).contains("seed hash"), "{}", text(&o.stderr));

    // Images DataSketches hashed from raw keys (seed 9001) never combine with a
    // keyed loxo sketch, whatever --ds-seed says...
    let raw = raw_image(&d, "raw", 0..100, 9001);
    for extra in [
        &[][..],
        &["--ds-seed", &seed().fingerprint().to_string()][..],
    ] {
        let mut args = vec!["setop", "union"];
        args.extend(extra);
        args.extend([s(&a), s(&raw)]);
        let o = loxo(&args);
        assert!(!o.status.success(), "{args:?}");
    }
    // ...nor with images of another DataSketches seed.
    let raw2 = raw_image(&d, "raw2", 0..100, 9002);
    let o = loxo(&["setop", "union", s(&raw), s(&raw2)]);
    assert!(!o.status.success());
    // The other tools name the format.
    let o = loxo(&["merge", "-o", s(&d.join("m.loxo")), s(&raw), s(&raw)]);
    assert!(
        text(&o.stderr).contains("Apache DataSketches compact theta image"),
        "{}",
        text(&o.stderr)
    );
}

/// DataSketches' image of its `update_theta_sketch` (lg_k 10) of the integers
/// `range` under `update_seed`, made with `loxo_interop` (which
/// `tests/tests/datasketches_theta.rs` checks byte for byte against DataSketches).
fn raw_sketch(range: Range<u32>, update_seed: u32) -> ThetaSketch<2048> {
    let mut sk = ThetaSketch::<2048>::new(datasketches_theta_seed(u64::from(update_seed)));
    for i in range {
        sk.insert_hash(datasketches_theta_hash(
            &i64::from(i).to_le_bytes(),
            update_seed,
        ));
    }
    sk
}

fn raw_image(d: &Path, name: &str, range: Range<u32>, update_seed: u32) -> PathBuf {
    let p = d.join(format!("{name}.bin"));
    std::fs::write(&p, image(&raw_sketch(range, update_seed))).unwrap();
    p
}

#[test]
fn datasketches_images_combine_among_themselves_and_export_back() {
    let d = dir("raw");
    let (x, y) = (0..6000, 4000..20_000);
    let a = raw_image(&d, "a", x.clone(), 9001);
    let b = raw_image(&d, "b", y.clone(), 9001);
    let (sa, sb) = (raw_sketch(x, 9001), raw_sketch(y, 9001));
    let inspect = ok(&["inspect", s(&a)]);
    assert!(
        inspect.contains("93cc = that of DataSketches seed 9001"),
        "{inspect}"
    );
    assert!(inspect.contains(&format!("estimate:         {:.1}", sa.estimate())));

    let mut union = sa.clone();
    union.merge(&sb).unwrap();
    let mut inter = sa.clone();
    inter.intersect(&sb).unwrap();
    let mut anotb = sa.clone();
    anotb.subtract(&sb).unwrap();
    for (op, want) in [("union", &union), ("intersect", &inter), ("anotb", &anotb)] {
        let r = setop_json(op, &[&a, &b], &[]);
        assert_eq!(
            r["result"]["estimate"].as_f64(),
            Some(want.estimate()),
            "{op}"
        );
        assert_eq!(
            r["result"]["retained"].as_u64(),
            Some(want.retained() as u64)
        );
        // -o writes a frame that exports back to DataSketches' image of the result.
        let out = d.join(format!("{op}.loxo"));
        ok(&["setop", op, "-o", s(&out), s(&a), s(&b)]);
        let (img, stdout) = export(&d, op, &out, &[]);
        assert_eq!(std::fs::read(img).unwrap(), image(want), "{op}");
        assert!(stdout.contains("seed=9001"), "{stdout}");
    }
}

/// Runs `ds_theta.py`; its `name value` lines.
fn python(py: &str, args: &[&str]) -> HashMap<String, String> {
    let out = Command::new(py).arg(SCRIPT).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ds_theta.py {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn f(m: &HashMap<String, String>, k: &str) -> f64 {
    m[k].parse().unwrap()
}

#[test]
fn the_real_datasketches_reads_exports_and_writes_what_setop_reads() {
    let Some(py) = loxo_tests::datasketches::python() else {
        return;
    };
    let d = dir("python");
    let fp = seed().fingerprint().to_string();
    // Estimation-mode frames whose intersection and difference neither side trims.
    let (a, sa) = build::<4096>(&d, "a", 0..20_000);
    let (b, sb) = build::<4096>(&d, "b", 15_000..40_000);
    let (ai, _) = export(&d, "a", &a, &[]);
    let (bi, _) = export(&d, "b", &b, &[]);
    let out = d.join("py");
    let r = python(&py, &["setops", &fp, s(&ai), s(&bi), s(&out)]);
    assert_eq!(f(&r, "a_estimate"), sa.estimate());
    assert_eq!(f(&r, "b_estimate"), sb.estimate());
    for (op, name) in [("intersect", "inter"), ("anotb", "anotb")] {
        let j = setop_json(op, &[&a, &b], &[]);
        assert_eq!(
            j["result"]["estimate"].as_f64(),
            Some(f(&r, &format!("{name}_estimate"))),
            "{op}"
        );
        // DataSketches' result image reads back in the tool with the same figures.
        let back = out.with_extension(name);
        let j2 = setop_json("union", &[&back, &back], &["--ds-seed", &fp]);
        assert_eq!(j2["result"]["estimate"], j["result"]["estimate"], "{op}");
    }
    // The wrong seed is refused by DataSketches.
    let r = python(&py, &["seedcheck", "9001", s(&ai)]);
    assert_eq!(r["ok"], "0");

    // DataSketches' own images (raw keys, seed 9001; serial versions 3 and 4).
    let x = d.join("x.bin");
    let y = d.join("y.bin");
    let rx = python(&py, &["build", "10", "0:6000", s(&x), "1", "0"]);
    let ry = python(&py, &["build", "10", "4000:20000", s(&y), "1", "1"]);
    for (img, r) in [(&x, &rx), (&y, &ry)] {
        let inspect = ok(&["inspect", s(img)]);
        assert!(
            inspect.contains(&format!("estimate:         {:.1}", f(r, "image_estimate"))),
            "{inspect}"
        );
    }
    let rs = python(&py, &["setops", "9001", s(&x), s(&y), s(&d.join("xy"))]);
    for (op, name) in [("intersect", "inter"), ("anotb", "anotb")] {
        let j = setop_json(op, &[&x, &y], &[]);
        assert_eq!(
            j["result"]["estimate"].as_f64(),
            Some(f(&rs, &format!("{name}_estimate"))),
            "{op}"
        );
        assert_eq!(
            j["result"]["retained"]
                .as_u64()
                .map(|n| n.to_string())
                .as_deref(),
            Some(rs[&format!("{name}_retained")].as_str())
        );
    }
}
