//! `loxo inspect` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo inspect`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo inspect` is not implemented yet")
}
