//! Running `cargo xtask demo` (the firmware in QEMU fed by `loxo replay`) from a test,
//! in the target directory the end-to-end test builds, with fixed test provisioning.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The device seed tests provision (devices get random ones).
pub const TEST_DEVICE_SEED: &str = "0123456789abcdef0f1e2d3c4b5a6978";
/// The control key tests provision.
pub const TEST_CONTROL_KEY: &str = "00112233445566778899aabbccddeeff";

/// Runs `cargo xtask demo --summary ARGS` with `env` on top of the test provisioning,
/// reusing `firmware_e2e`'s release builds (`CARGO_TARGET_TMPDIR/firmware-e2e/target`).
///
/// # Panics
/// If cargo cannot be started.
#[must_use]
pub fn run(target_tmpdir: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| Path::new("."));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args([
        "run",
        "--release",
        "-q",
        "-p",
        "xtask",
        "--",
        "demo",
        "--summary",
    ])
    .args(args)
    .current_dir(root)
    .env(
        "CARGO_TARGET_DIR",
        PathBuf::from(target_tmpdir).join("firmware-e2e/target"),
    )
    .env("LOXO_DEVICE_SEED", TEST_DEVICE_SEED)
    .env("LOXO_CONTROL_KEY", TEST_CONTROL_KEY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run cargo xtask demo: {e}"))
}
