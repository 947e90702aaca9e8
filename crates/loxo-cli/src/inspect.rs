//! `loxo inspect FILE`: print any serialized loxo sketch, or an Apache DataSketches
//! compact theta image.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::{sketch, theta_ds};

/// Options of `loxo inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo inspect sketches/epoch-0.loxo
  loxo inspect collected/epoch-3/fleet.flows.loxo
  loxo inspect sketch.theta.bin                 a DataSketches compact theta image
  loxo inspect --ds-seed 1234567 export.bin     one `loxo export` wrote (seed = fingerprint)")]
pub(crate) struct Args {
    /// A file holding one serialized loxo sketch (loxo wire format), or an Apache
    /// DataSketches compact theta image (serial version 1–4).
    file: PathBuf,
    /// The DataSketches update seed a compact theta image's seed hash is checked
    /// against: DataSketches' default 9001, or for an image `loxo export` wrote the
    /// loxo sketch's fingerprint (decimal, or hex after 0x).
    #[arg(long, value_name = "S", default_value_t = loxo_interop::theta::DEFAULT_UPDATE_SEED, value_parser = theta_ds::parse_ds_seed)]
    ds_seed: u64,
}

/// Runs `loxo inspect`: kind, parameters, seed fingerprint, estimate, fill, memory.
/// Corrupt input is a one-line error and exit status 1.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let bytes = theta_ds::read(&a.file)?;
    let text = if theta_ds::is_image(&bytes) {
        theta_ds::describe(&bytes, a.ds_seed)
    } else {
        sketch::describe(&bytes)
    }
    .with_context(|| format!("{}", a.file.display()))?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
