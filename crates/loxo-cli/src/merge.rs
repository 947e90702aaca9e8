//! `loxo merge -o OUT FILE...`: merge HLL or ULL sketches from many devices or epochs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::sketch;

/// Options of `loxo merge`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo merge -o fleet.loxo a/epoch-0.loxo b/epoch-0.loxo
  loxo inspect fleet.loxo")]
pub(crate) struct Args {
    /// Where to write the merged sketch (loxo wire format).
    #[arg(short, long)]
    output: PathBuf,
    /// Sketches to merge: `hll` or `ull` frames of one kind, equal precision and
    /// seed fingerprint.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Runs `loxo merge`: the union of every input; prints the estimate.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let (merged, fp) = sketch::merge_files(&a.files)?;
    let bytes = merged.encode(fp);
    std::fs::write(&a.output, &bytes)
        .with_context(|| format!("{}: cannot write", a.output.display()))?;
    println!(
        "merged {} sketches (P = {}): estimate {:.1} ± {:.2} % → {} ({} bytes)",
        a.files.len(),
        merged.precision(),
        merged.estimate(),
        100.0 * merged.relative_standard_error(),
        a.output.display(),
        bytes.len()
    );
    Ok(ExitCode::SUCCESS)
}
