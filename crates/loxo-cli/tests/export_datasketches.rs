//! `loxo export --datasketches OUT FILE` through the binary: the image it writes is
//! the one `loxo_cli::frequent::datasketches_image` makes (which
//! `tests/tests/datasketches_frequent.rs` checks against the real DataSketches), its
//! summary line, and the refusals (a heavy-keeper summary, a map too small, options
//! that do not go together).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loxo_cli::frequent::datasketches_image;
use loxo_cms::{HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_interop::FrequentItemsView;

const SEED: Seed = Seed::new(0xf1ee7, 0xd5);

fn loxo(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(args)
        .output()
        .expect("run loxo")
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-export-ds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn key(i: u32) -> FlowKey {
    let [a, b, c, d] = i.to_be_bytes();
    FlowKey::v4(
        [10, a, b, c],
        [192, 168, 0, d],
        1000 + (i % 7) as u16,
        443,
        6,
    )
}

#[test]
fn export_datasketches_writes_the_frequent_items_image() {
    let d = dir();
    let mut ss = SpaceSaving::<FlowKey, 64>::new();
    let mut hk = HeavyKeeper::<64, 2, 64, FlowKey>::new(1);
    for i in 0..5000u32 {
        // Key 0 every third packet, the rest spread over 400 keys: the summary fills.
        let k = key(if i % 3 == 0 { 0 } else { 1 + i % 400 });
        ss.update(&k, k.hash_with(&SEED), 100);
        hk.update(&k, k.hash_with(&SEED), 100);
    }
    let mut frame = vec![0u8; ss.encoded_len::<38>()];
    ss.encode_into::<38>(&SEED, &mut frame).unwrap();
    let file = d.join("top.loxo");
    std::fs::write(&file, &frame).unwrap();
    let out = d.join("top.ds");

    let o = loxo(&[
        Path::new("export"),
        Path::new("--datasketches"),
        &out,
        &file,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read(&out).unwrap();
    let img = datasketches_image(&frame, None).unwrap();
    assert_eq!(written, img.bytes);
    let view = FrequentItemsView::new_checked(&written).unwrap();
    assert_eq!(view.maximum_error(), ss.min_count());
    assert!(view.maximum_error() > 0);
    assert_eq!(view.estimate(&key(0).to_string()), 166_700); // 1667 packets of 100
    let line = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        line.contains(&format!(
            "frequent_strings_sketch of {} items (64 of 64 candidates monitored), stream weight 500000, maximum error {}",
            view.num_items(),
            ss.min_count()
        )),
        "{line}"
    );

    // A larger map for fleet unions.
    let o = loxo(&[
        Path::new("export"),
        Path::new("--datasketches"),
        &out,
        Path::new("--lg-max-map-size"),
        Path::new("12"),
        &file,
    ]);
    assert!(o.status.success());
    let view_bytes = std::fs::read(&out).unwrap();
    let v = FrequentItemsView::new_checked(&view_bytes).unwrap();
    assert_eq!((v.lg_max_map_size(), v.lg_cur_map_size()), (12, 7));

    // Refusals, each with a non-zero exit and a reason.
    let mut hk_frame = vec![0u8; hk.encoded_len::<38>()];
    hk.encode_into::<38>(&SEED, &mut hk_frame).unwrap();
    let hk_file = d.join("hk.loxo");
    std::fs::write(&hk_file, &hk_frame).unwrap();
    for (args, reason) in [
        (
            vec![
                Path::new("export"),
                Path::new("--datasketches"),
                &out,
                &hk_file,
            ],
            "no deterministic bounds",
        ),
        (
            vec![
                Path::new("export"),
                Path::new("--datasketches"),
                &out,
                Path::new("--lg-max-map-size"),
                Path::new("5"),
                &file,
            ],
            "too small",
        ),
        (
            vec![
                Path::new("export"),
                Path::new("--lg-max-map-size"),
                Path::new("9"),
                &file,
            ],
            "--datasketches",
        ),
    ] {
        let o = loxo(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(reason),
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
