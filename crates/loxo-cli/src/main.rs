//! `loxo` — the host tool of the loxo sketch toolkit.
//!
//! Each subcommand lives in its own module with its own `Args` and `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod build_filter;
mod build_theta;
mod export;
mod gen;
mod inspect;
mod ipfix;
mod merge;
#[cfg(target_os = "linux")]
mod probe;
mod replay;
mod setop;
#[cfg(target_os = "linux")]
mod sketch_out;
mod top;

/// Allocation-free sketches for firmware: generate traffic, find elephant flows,
/// drive the firmware, inspect and merge the sketches it produces.
#[derive(Debug, Parser)]
#[command(name = "loxo", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a synthetic, seeded pcap of Ethernet frames.
    Gen(gen::Args),
    /// Find the elephant flows of a capture, next to the exact figures.
    Top(top::Args),
    /// Live flow probe on a Linux interface (AF_PACKET ring): epochs to stdout,
    /// IPFIX and `loxo collect`.
    #[cfg(target_os = "linux")]
    Probe(probe::Args),
    /// Replay a capture to the firmware over QEMU's UDP-socket NIC.
    Replay(replay::Args),
    /// Print a serialized loxo sketch.
    Inspect(inspect::Args),
    /// Merge serialized loxo sketches (HLL, ULL, Theta).
    Merge(merge::Args),
    /// Set operations on Theta sketch files: union, intersection, A-not-B, with bounds.
    Setop(setop::Args),
    /// Export a serialized sketch to another engine (Redis, Apache DataSketches).
    Export(export::Args),
    /// Receive the devices' per-epoch sketches over UDP and merge them fleet-wide.
    Collect(loxo_cli::collect::Args),
    /// Print the fleet's figures stored in a Redis Cluster by several `loxo collect --redis-cluster`.
    Fleet(loxo_cli::collect::FleetArgs),
    /// Build a binary fuse filter (static blocklist) from addresses and prefixes.
    BuildFilter(build_filter::Args),
    /// Build a Theta sketch (distinct keys, for set operations) from addresses and prefixes.
    BuildTheta(build_theta::Args),
}

/// A `clap` value parser for a count: a negative number is taken as a value and
/// refused as such (without it clap takes `-5` for an option and suggests `-- -5`,
/// which only moves the error).
pub(crate) fn non_negative<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let n: i128 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    let n = u64::try_from(n).map_err(|_| "must be ≥ 0".to_owned())?;
    T::try_from(n).map_err(|_| format!("{n} is too large"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Gen(a) => gen::run(a),
        Command::Top(a) => top::run(a),
        #[cfg(target_os = "linux")]
        Command::Probe(a) => probe::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Export(a) => export::run(a),
        Command::Collect(a) => loxo_cli::collect::run(a),
        Command::Fleet(a) => loxo_cli::collect::cluster_read::run(a),
        Command::BuildFilter(a) => build_filter::run(a),
        Command::Setop(a) => setop::run(a),
        Command::BuildTheta(a) => build_theta::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loxo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
