//! Puts `memory.x` on the linker search path and relinks when it changes. The
//! `costs` feature (a measurement build holding a second set of sketches and
//! frames) gets the board's full 4 MiB of data SSRAM and 4 MiB of code SSRAM instead
//! of the 128 KiB / 256 KiB budget.
//!
//! Provisioning, outside the source tree: the device's hash seed
//! (`LOXO_DEVICE_SEED`), the control-channel key (`LOXO_CONTROL_KEY`) and the key
//! its sketch datagrams are authenticated under (`LOXO_EXPORT_KEY`, which `loxo
//! collect --keys` lists for this device), 32 hex digits each, are read from the environment at build time (`cargo xtask demo`
//! keeps them in `out/`); when unset, each is drawn from the build host's
//! `/dev/urandom`, so no two builds share them and none is in the repository.
//!
//! The network (`LOXO_DEVICE_IP`, `LOXO_DEVICE_PREFIX`, `LOXO_COLLECTOR_IP`,
//! `LOXO_GATEWAY_IP`, `LOXO_OBSERVATION_DOMAIN`) is set at build time too, with
//! defaults that match `loxo replay`'s demo network.
//!
//! A blocklist (`LOXO_BLOCKLIST`: the path of a `binary-fuse` frame written by
//! `loxo build-filter --seed` with the device seed) is placed in flash; `cargo xtask
//! demo` generates one.
use std::{env, fs, io::Read, path::PathBuf};

/// 16 bytes from `var` (32 hex digits), or random ones; and where they came from.
fn provisioned(var: &str) -> ([u8; 16], &'static str) {
    println!("cargo:rerun-if-env-changed={var}");
    if let Ok(hex) = env::var(var) {
        let hex = hex.trim();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .filter_map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
            })
            .collect();
        match <[u8; 16]>::try_from(bytes) {
            Ok(b) if hex.len() == 32 => return (b, "provisioned"),
            _ => panic!("{var} must be 32 hex digits"),
        }
    }
    let mut b = [0u8; 16];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .unwrap_or_else(|e| panic!("{var} unset and no /dev/urandom: {e}"));
    (b, "random at build time")
}

/// An IPv4 address from `var` (dotted quad), or `default`.
fn ipv4(var: &str, default: [u8; 4]) -> [u8; 4] {
    println!("cargo:rerun-if-env-changed={var}");
    match env::var(var) {
        Ok(s) => s
            .trim()
            .parse::<std::net::Ipv4Addr>()
            .unwrap_or_else(|e| panic!("{var}={s}: {e}"))
            .octets(),
        Err(_) => default,
    }
}

/// A number from `var`, or `default`.
fn number(var: &str, default: u32) -> u32 {
    println!("cargo:rerun-if-env-changed={var}");
    match env::var(var) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{var}={s}: {e}")),
        Err(_) => default,
    }
}

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let memory = include_str!("link/memory.x");
    let memory = if env::var_os("CARGO_FEATURE_COSTS").is_some() {
        memory
            .replace("LENGTH = 128K", "LENGTH = 4096K")
            .replace("LENGTH = 256K", "LENGTH = 4096K")
    } else {
        memory.to_owned()
    };
    let _ = fs::write(out.join("memory.x"), memory);
    let (seed, seed_src) = provisioned("LOXO_DEVICE_SEED");
    let (key, key_src) = provisioned("LOXO_CONTROL_KEY");
    let (export, export_src) = provisioned("LOXO_EXPORT_KEY");
    let _ = fs::write(
        out.join("provisioning.rs"),
        format!(
            "/// The device's hash seed ({seed_src}).\n\
             pub(crate) const DEVICE_SEED: loxo_core::Seed = loxo_core::Seed::from_bytes({seed:?});\n\
             /// Where [`DEVICE_SEED`] came from.\n\
             pub(crate) const DEVICE_SEED_SOURCE: &str = \"{seed_src}\";\n\
             /// The control channel's authentication key ({key_src}).\n\
             pub(crate) const CONTROL_KEY: loxo_core::Seed = loxo_core::Seed::from_bytes({key:?});\n\
             /// The sketch datagrams' authentication key ({export_src}).\n\
             pub(crate) const EXPORT_KEY: loxo_control::datagram::ExportKey = loxo_control::datagram::ExportKey::from_bytes({export:?});\n"
        ),
    );
    // The network, set at build time (defaults: QEMU's user-network plan, which
    // `loxo replay` plays: the device 10.0.2.15/24, the collector and gateway 10.0.2.2).
    let ip = ipv4("LOXO_DEVICE_IP", [10, 0, 2, 15]);
    let prefix = number("LOXO_DEVICE_PREFIX", 24);
    assert!(prefix <= 32, "LOXO_DEVICE_PREFIX must be 0..=32");
    let collector = ipv4("LOXO_COLLECTOR_IP", [10, 0, 2, 2]);
    let gateway = ipv4("LOXO_GATEWAY_IP", [10, 0, 2, 2]);
    let domain = number("LOXO_OBSERVATION_DOMAIN", 1);
    let _ = fs::write(
        out.join("network.rs"),
        format!(
            "/// The device's IPv4 address (`LOXO_DEVICE_IP`).\n\
             pub(crate) const DEVICE_IP: [u8; 4] = {ip:?};\n\
             /// Its prefix length (`LOXO_DEVICE_PREFIX`).\n\
             pub(crate) const DEVICE_PREFIX: u8 = {prefix};\n\
             /// Where IPFIX and sketches go (`LOXO_COLLECTOR_IP`).\n\
             pub(crate) const COLLECTOR_IP: [u8; 4] = {collector:?};\n\
             /// The default route (`LOXO_GATEWAY_IP`).\n\
             pub(crate) const GATEWAY_IP: [u8; 4] = {gateway:?};\n\
             /// The IPFIX observation domain and sketch device id (`LOXO_OBSERVATION_DOMAIN`).\n\
             pub(crate) const OBSERVATION_DOMAIN: u32 = {domain};\n"
        ),
    );
    // The blocklist to flash: a `binary-fuse` frame (`loxo build-filter --seed` with
    // the device seed) named by `LOXO_BLOCKLIST`; none (an empty file) when unset.
    println!("cargo:rerun-if-env-changed=LOXO_BLOCKLIST");
    let blocklist = match env::var_os("LOXO_BLOCKLIST") {
        Some(path) => {
            println!("cargo:rerun-if-changed={}", PathBuf::from(&path).display());
            fs::read(&path).unwrap_or_else(|e| {
                panic!("LOXO_BLOCKLIST={}: {e}", PathBuf::from(&path).display())
            })
        }
        None => Vec::new(),
    };
    let _ = fs::write(out.join("blocklist.loxo"), blocklist);
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=link/memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}
