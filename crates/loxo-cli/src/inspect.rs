//! `loxo inspect FILE`: print any serialized loxo sketch.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::sketch;

/// Options of `loxo inspect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo inspect sketches/epoch-0.loxo
  loxo inspect collected/epoch-3/fleet.flows.loxo")]
pub(crate) struct Args {
    /// A file holding one serialized loxo sketch (loxo wire format).
    file: PathBuf,
}

/// Runs `loxo inspect`: kind, parameters, seed fingerprint, estimate, fill, memory.
/// Corrupt input is a one-line error and exit status 1.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let bytes = sketch::read(&a.file)?;
    let text = sketch::describe(&bytes).with_context(|| format!("{}", a.file.display()))?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
