//! `loxo top` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo top`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo top`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo top` is not implemented yet")
}
