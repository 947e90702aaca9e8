//! `loxo merge -o OUT FILE...`: merge HLL, ULL or Theta sketches from many devices or
//! epochs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::sketch;
use loxo_cli::theta::{self, SetOp};
use loxo_core::wire::{Frame, SketchKind};

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
    /// seed fingerprint; or `theta` frames of one seed fingerprint (any K: the
    /// union has the largest).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Runs `loxo merge`: the union of every input; prints the estimate.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    if let Some(first) = a.files.first() {
        let bytes = sketch::read(first)?;
        if Frame::parse(&bytes).is_ok_and(|f| f.header().kind == SketchKind::Theta) {
            return merge_theta(a);
        }
    }
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

/// `loxo merge` of `theta` frames: their union (`loxo setop union` with an output).
fn merge_theta(a: &Args) -> anyhow::Result<ExitCode> {
    let inputs = a
        .files
        .iter()
        .map(|p| Ok((p.display().to_string(), sketch::read(p)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let u = theta::combine(SetOp::Union, &inputs)?;
    std::fs::write(&a.output, &u.frame)
        .with_context(|| format!("{}: cannot write", a.output.display()))?;
    println!(
        "merged {} theta sketches (K = {}): estimate {:.1}, 2σ bounds {:.1} ..= {:.1} → {} ({} bytes)",
        a.files.len(),
        u.k,
        u.estimate,
        u.bounds[1].0,
        u.bounds[1].1,
        a.output.display(),
        u.frame.len()
    );
    Ok(ExitCode::SUCCESS)
}
