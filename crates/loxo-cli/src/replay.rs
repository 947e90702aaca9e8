//! `loxo replay` (not implemented yet; owned by its issue).

use std::process::ExitCode;

/// Options of `loxo replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `loxo replay`.
pub(crate) fn run(_args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`loxo replay` is not implemented yet")
}
