//! `loxo gen` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo gen`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo gen`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo gen` is not implemented yet")
}
