//! `loxo merge` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo merge`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo merge`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo merge` is not implemented yet")
}
