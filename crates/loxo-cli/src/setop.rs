//! `loxo setop {union|intersect|anotb} A B [C…]`: set operations on Theta sketch
//! files, left to right, printing the estimate with its bounds at 1–3 standard
//! deviations (text or `--json`); `-o` writes the result as a `theta` frame.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::sketch;
use loxo_cli::theta::{self, SetOp};
use serde_json::json;

/// Options of `loxo setop`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo setop intersect site-a.loxo site-b.loxo        sources both sites saw
  loxo setop anotb today.loxo yesterday.loxo --json    flows new since yesterday
  loxo setop union -o fleet.loxo a.loxo b.loxo c.loxo

The error of an intersection or a difference is relative to the union of the
inputs: a small overlap of large sets has wide bounds.")]
pub(crate) struct Args {
    /// The operation, applied left to right: union (A ∪ B ∪ …), intersect
    /// (A ∩ B ∩ …) or anotb (A \ B \ C …).
    #[arg(value_enum)]
    op: SetOp,
    /// Theta sketch files (`loxo build-theta`, devices, `loxo merge`), all of one
    /// seed fingerprint; any K (the result has the largest).
    #[arg(required = true, num_args = 2.., value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Write the result here (a `theta` frame).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `loxo setop`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let inputs = a
        .files
        .iter()
        .map(|p| Ok((p.display().to_string(), sketch::read(p)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let each = inputs
        .iter()
        .map(|(name, bytes)| theta::summarize(bytes).with_context(|| name.clone()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let r = theta::combine(a.op, &inputs)?;
    if let Some(out) = &a.output {
        std::fs::write(out, &r.frame)
            .with_context(|| format!("{}: cannot write", out.display()))?;
    }
    if a.json {
        let doc = json!({
            "op": a.op.name(),
            "inputs": inputs.iter().zip(&each).map(|((name, _), s)| {
                let mut v = s.to_json();
                v["file"] = json!(name);
                v
            }).collect::<Vec<_>>(),
            "result": r.to_json(),
            "output": a.output.as_ref().map(|p| p.display().to_string()),
        });
        println!("{doc:#}");
        return Ok(ExitCode::SUCCESS);
    }
    for ((name, _), s) in inputs.iter().zip(&each) {
        println!(
            "{name}: K = {}, θ = {:.6}, {} retained, estimate {:.1}",
            s.k, s.theta, s.retained, s.estimate
        );
    }
    println!(
        "{} of {} sketches (K = {}, θ = {:.6}, {} retained{}):",
        a.op.name(),
        inputs.len(),
        r.k,
        r.theta,
        r.retained,
        if r.is_estimation_mode() {
            ", estimation mode"
        } else {
            ", exact"
        }
    );
    let mut text = String::new();
    r.write_estimate(&mut text)?;
    print!("{text}");
    if let Some(out) = &a.output {
        println!("→ {} ({} bytes)", out.display(), r.frame.len());
    }
    Ok(ExitCode::SUCCESS)
}
