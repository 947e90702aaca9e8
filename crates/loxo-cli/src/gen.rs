//! `loxo gen`: write a synthetic, seeded pcap.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use loxo_cli::trace::{generate, Popularity, TraceConfig};
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// Options of `loxo gen`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output pcap file.
    #[arg(short, long)]
    output: PathBuf,
    /// Number of frames.
    #[arg(short = 'n', long, default_value_t = 1_000_000)]
    packets: u64,
    /// Number of flows in the population.
    #[arg(short, long, default_value_t = 100_000)]
    flows: u32,
    /// Zipf exponent α of flow popularity (rank i has probability ∝ i^-α).
    #[arg(long, default_value_t = 1.0, conflicts_with = "pareto")]
    zipf: f64,
    /// Use heavy-tailed Pareto(shape) flow sizes instead of Zipf.
    #[arg(long)]
    pareto: Option<f64>,
    /// Share (0..=1) of scan/flood packets, each with a fresh unique key.
    #[arg(long, default_value_t = 0.0)]
    flood: f64,
    /// Share (0..=1) of malformed frames; the exact number is printed.
    #[arg(long, default_value_t = 0.0)]
    malformed: f64,
    /// RNG seed; the same options and seed give the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs `loxo gen`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    for (name, v) in [("--flood", a.flood), ("--malformed", a.malformed)] {
        anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be in 0..=1, got {v}");
    }
    anyhow::ensure!(a.flows > 0, "--flows must be positive");
    let popularity = match a.pareto {
        Some(s) if s > 0.0 => Popularity::Pareto(s),
        Some(s) => anyhow::bail!("--pareto shape must be positive, got {s}"),
        None => Popularity::Zipf(a.zipf),
    };
    let cfg = TraceConfig {
        packets: a.packets,
        flows: a.flows,
        popularity,
        flood: a.flood,
        malformed: a.malformed,
        seed: a.seed,
    };
    let file =
        File::create(&a.output).with_context(|| format!("cannot create {}", a.output.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(file)).context("cannot write the pcap header")?;
    let mut i = 0u64;
    let st = generate(&cfg, |frame| {
        i += 1;
        let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        w.write_packet(&PcapPacket::new(Duration::from_micros(i), len, frame))
            .map(|_| ())
    })
    .with_context(|| format!("cannot write {}", a.output.display()))?;
    println!(
        "wrote {} frames ({} bytes) to {}: malformed {}, not IP {}, flood {}",
        st.frames,
        st.bytes,
        a.output.display(),
        st.malformed,
        st.not_ip,
        st.flood
    );
    Ok(ExitCode::SUCCESS)
}
