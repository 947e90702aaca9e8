//! Puts `memory.x` on the linker search path and relinks when it changes. The
//! `costs` feature (a measurement build holding a second set of sketches and
//! frames) gets the board's full 4 MiB of data SSRAM instead of the 128 KiB budget.
use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let memory = include_str!("link/memory.x");
    let memory = if env::var_os("CARGO_FEATURE_COSTS").is_some() {
        memory.replace("LENGTH = 128K", "LENGTH = 4096K")
    } else {
        memory.to_owned()
    };
    let _ = fs::write(out.join("memory.x"), memory);
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=link/memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}
