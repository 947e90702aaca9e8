//! `loxo build-theta KEYS.txt -o S.loxo`: a Theta sketch of the distinct keys of a
//! keys file, as one `theta` frame, to combine with devices' sketches or others made
//! the same way (`loxo setop`, `loxo merge`).
//!
//! The keys file is `loxo build-filter`'s: one IPv4/IPv6 address or CIDR prefix
//! (≤ 2^16 addresses, expanded) per line, `#` comments; an address is the key of its
//! 4 or 16 bytes in network order, as devices hash it. Repeated keys count once.
//! Without `--seed` a random seed is drawn and written beside the output as
//! `S.loxo.key`: sketches combine only under one seed, so pass it (`--seed
//! S.loxo.key`) to the next sketch.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::theta;

use crate::build_filter::{key_path, parse_keys, write_key};

/// Options of `loxo build-theta`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo build-theta -o monday.loxo monday.txt                 a random seed, in monday.loxo.key
  loxo build-theta -o tuesday.loxo --seed monday.loxo.key tuesday.txt
  loxo setop anotb tuesday.loxo monday.loxo")]
pub(crate) struct Args {
    /// Keys file: one IPv4/IPv6 address or CIDR prefix (≤ 2^16 addresses) per line,
    /// `#` comments.
    keys: PathBuf,
    /// Output file (one loxo frame, kind `theta`).
    #[arg(short, long)]
    output: PathBuf,
    /// Slots K: a power of two, 32 ..= 65536 (nominal entries K/2, relative
    /// standard error 1/√(K/2 − 1); 8·K + 32 bytes on a device).
    #[arg(short, long, default_value_t = 4096, value_parser = slots)]
    k: u32,
    /// Hash seed: 32 hex digits, or a file holding them. Default: a random seed,
    /// written to OUTPUT.key.
    #[arg(long, value_name = "HEX|FILE")]
    seed: Option<String>,
}

/// `--k`: a power of two in 32 ..= `theta::MAX_K`.
fn slots(s: &str) -> Result<u32, String> {
    let k: u32 = crate::non_negative(s)?;
    if k.is_power_of_two() && (32..=theta::MAX_K).contains(&k) {
        Ok(k)
    } else {
        Err(format!("{k}: a power of two in 32 ..= {}", theta::MAX_K))
    }
}

/// Runs `loxo build-theta`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.keys)
        .with_context(|| format!("{}: cannot read", a.keys.display()))?;
    let keys = parse_keys(&text).with_context(|| format!("{}", a.keys.display()))?;
    let (seed, key_file) = if let Some(s) = &a.seed {
        (loxo_cli::key::read_key(s)?, None)
    } else {
        let seed = loxo_cli::key::random_seed();
        let path = key_path(&a.output);
        write_key(&path, seed)?;
        (seed, Some(path))
    };
    let s = theta::build(a.k, seed, &keys)?;
    std::fs::write(&a.output, &s.frame)
        .with_context(|| format!("{}: cannot write", a.output.display()))?;
    println!(
        "{}: theta K = {} over {} keys (repeats count once), θ = {:.6}, {} retained, estimate {:.1} (2σ {:.1} ..= {:.1}), {} bytes",
        a.output.display(),
        s.k,
        keys.len(),
        s.theta,
        s.retained,
        s.estimate,
        s.bounds[1].0,
        s.bounds[1].1,
        s.frame.len()
    );
    if let Some(p) = key_file {
        println!(
            "seed written to {} (pass it as --seed to sketches to combine with this one)",
            p.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
