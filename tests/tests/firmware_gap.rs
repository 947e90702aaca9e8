//! Frames lost before the firmware are reported, not hidden: replayed in batches far
//! larger than the LAN9118's RX FIFO (≈ 10 KiB), frames are dropped by QEMU's NIC
//! model — which counts no overrun — and the firmware finds the shortfall from the
//! running count that each SYNC carries: `gap:` lines, `lost` in the final line,
//! `lost + frames = sent`, and the verdict is a MISMATCH, not "ok".
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn frames_lost_to_a_full_rx_fifo_are_reported() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "xtask",
            "--",
            "demo",
            "--summary",
        ])
        .args(["--frames", "600", "--seed", "3", "--timeout", "300"])
        .args(["--batch-bytes", "16000"])
        .current_dir(root)
        // The end-to-end test's target directory: its release builds are reused.
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-e2e/target"),
        )
        .env("LOXO_DEVICE_SEED", "0123456789abcdef0f1e2d3c4b5a6978")
        .env("LOXO_CONTROL_KEY", "00112233445566778899aabbccddeeff")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "lost frames must fail the run:\n{stdout}"
    );
    let report: BTreeMap<&str, u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("report.final."))
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
        .collect();
    let (sent, frames, lost) = (report["sent"], report["frames"], report["lost"]);
    println!("sent {sent}, counted {frames}, lost {lost}");
    assert!(
        lost > 0,
        "the oversized batches must overflow the FIFO:\n{stdout}"
    );
    assert_eq!(
        frames + lost,
        sent,
        "every frame is counted or reported lost"
    );
    assert!(stdout.contains("gap: batch="), "{stdout}");
    assert!(stdout.contains("verdict: MISMATCH"), "{stdout}");
}
