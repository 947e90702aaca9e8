//! `loxo export` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo export`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo export` is not implemented yet")
}
