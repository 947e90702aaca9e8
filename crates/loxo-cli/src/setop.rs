//! `loxo setop {union|intersect|anotb} A B [C…]`: set operations on Theta sketch
//! files, left to right, printing the estimate with its bounds at 1–3 standard
//! deviations (text or `--json`); `-o` writes the result as a `theta` frame.
//! Operands may also be Apache DataSketches compact theta images, read under one
//! DataSketches seed (`--ds-seed`; see `loxo_cli::theta_ds` for the seed rules).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use loxo_cli::theta::{self, SetOp};
use loxo_cli::theta_ds;
use serde_json::json;

/// Options of `loxo setop`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo setop intersect site-a.loxo site-b.loxo        sources both sites saw
  loxo setop anotb today.loxo yesterday.loxo --json    flows new since yesterday
  loxo setop union -o fleet.loxo a.loxo b.loxo c.loxo
  loxo setop union a.theta.bin b.theta.bin              DataSketches images (seed 9001)
  loxo setop intersect --ds-seed 1234567 a.loxo b.bin   b.bin: `loxo export` of a sketch of a.loxo's seed

The error of an intersection or a difference is relative to the union of the
inputs: a small overlap of large sets has wide bounds.")]
pub(crate) struct Args {
    /// The operation, applied left to right: union (A ∪ B ∪ …), intersect
    /// (A ∩ B ∩ …) or anotb (A \ B \ C …).
    #[arg(value_enum)]
    op: SetOp,
    /// Theta sketch files (`loxo build-theta`, devices, `loxo merge`), all of one
    /// seed fingerprint; any K (the result has the largest). Also Apache
    /// DataSketches compact theta images, read under `--ds-seed`.
    #[arg(required = true, num_args = 2.., value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Write the result here (a `theta` frame).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The DataSketches update seed of the compact theta images among the FILEs
    /// (their seed hash must be its): DataSketches' default 9001 for images it built
    /// from raw keys (these never combine with keyed loxo sketches), or, for images
    /// `loxo export` wrote, the loxo sketch's fingerprint (decimal, or hex after 0x;
    /// they then combine with that seed's `theta` frames).
    #[arg(long, value_name = "S", default_value_t = loxo_interop::theta::DEFAULT_UPDATE_SEED, value_parser = theta_ds::parse_ds_seed)]
    ds_seed: u64,
    /// Combine in a sketch of at least this K (a power of two 32 ..= 65536): for
    /// DataSketches images, which do not say their K and are read into the smallest
    /// K that holds their values, this keeps a union from trimming to fewer values
    /// than the sketches they came from would (pass their K).
    #[arg(short, long, value_name = "K", value_parser = slots)]
    k: Option<u32>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `loxo setop`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let inputs = a
        .files
        .iter()
        .map(|p| Ok((p.display().to_string(), theta_ds::read(p)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let inputs = theta_ds::prepare(&inputs, a.ds_seed)?;
    let each = inputs
        .iter()
        .map(|(name, bytes)| theta::summarize(bytes).with_context(|| name.clone()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let r = theta::combine_in(a.op, &inputs, a.k.unwrap_or(0))?;
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

/// `--k`: a power of two in 32 ..= `theta::MAX_K`.
fn slots(s: &str) -> Result<u32, String> {
    let k: u32 = s.parse().map_err(|e| format!("{s}: {e}"))?;
    if k.is_power_of_two() && (32..=theta::MAX_K).contains(&k) {
        Ok(k)
    } else {
        Err(format!("{k}: a power of two in 32 ..= {}", theta::MAX_K))
    }
}
