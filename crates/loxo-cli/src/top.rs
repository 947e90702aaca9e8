//! `loxo top`: elephants of a capture, estimated by `FlowMonitor`, next to exact figures.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use loxo_cli::eval::{EpochResult, Evaluator};
use loxo_flow::{Config, ParseError, ShareOf};
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use serde_json::json;

/// Options of `loxo top`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Capture to read (pcap or pcapng, detected from the magic number).
    file: PathBuf,
    /// Elephant threshold θ as a share of the epoch (inclusive), e.g. 0.01 for 1 %.
    #[arg(long, default_value_t = 0.01)]
    theta: f32,
    /// Measure shares in packets instead of bytes.
    #[arg(long)]
    packets: bool,
    /// Close an epoch every N frames (0: the whole capture is one epoch).
    #[arg(long, default_value_t = 0)]
    epoch: u32,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
}

/// Runs `loxo top`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        a.theta > 0.0 && a.theta <= 1.0,
        "--theta must be in (0, 1], got {}",
        a.theta
    );
    let config = Config {
        theta: a.theta,
        share_of: if a.packets {
            ShareOf::Packets
        } else {
            ShareOf::Bytes
        },
        epoch_packets: a.epoch,
        ..Config::default()
    };
    let name = a.file.display();
    let file = File::open(&a.file).with_context(|| format!("cannot open {name}"))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let bar = if a.quiet || a.json || size < 16 << 20 {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(size);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    };
    let mut input = BufReader::new(bar.wrap_read(file));
    let mut magic = [0u8; 4];
    input
        .read_exact(&mut magic)
        .with_context(|| format!("{name}: too short to be a capture"))?;
    let input = std::io::Cursor::new(magic).chain(input);
    let mut ev = Evaluator::new(config);
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let mut r =
            PcapNgReader::new(input).with_context(|| format!("{name}: not a valid pcapng file"))?;
        while let Some(block) = r.next_block() {
            match block.with_context(|| format!("{name}: corrupt pcapng block"))? {
                Block::EnhancedPacket(p) => ev.feed(&p.data),
                Block::SimplePacket(p) => ev.feed(&p.data),
                _ => {}
            }
        }
    } else {
        let mut r =
            PcapReader::new(input).with_context(|| format!("{name}: not a pcap or pcapng file"))?;
        while let Some(p) = r.next_packet() {
            ev.feed(
                &p.with_context(|| format!("{name}: corrupt pcap record"))?
                    .data,
            );
        }
    }
    bar.finish_and_clear();
    let memory = ev.memory_bytes();
    let results = ev.finish();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&results, a, memory))?
        );
    } else {
        print_text(&results, a, memory);
    }
    Ok(ExitCode::SUCCESS)
}

fn errors_json(e: &[u64; ParseError::COUNT]) -> serde_json::Value {
    ParseError::ALL
        .iter()
        .map(|r| (r.name().to_string(), json!(e[r.index()])))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn to_json(results: &[EpochResult], a: &Args, memory: usize) -> serde_json::Value {
    let epochs: Vec<_> = results
        .iter()
        .map(|r| {
            json!({
                "epoch": r.epoch,
                "frames": r.report.frames,
                "packets": r.report.packets,
                "bytes": r.report.bytes,
                "fragments": r.report.fragments,
                "not_ip": r.report.not_ip,
                "errors": errors_json(&r.report.errors),
                "distinct_flows": {"estimate": r.report.distinct_flows, "exact": r.exact_flows},
                "distinct_sources_estimate": r.report.distinct_sources,
                "new_flows": {"estimate": r.report.new_flows, "filter_fpr": r.report.new_flows_fpr},
                "elephants": r.rows.iter().map(|w| json!({
                    "key": w.key.to_string(),
                    "est_bytes": w.est_bytes, "bytes_error": w.bytes_error, "est_packets": w.est_packets,
                    "exact_bytes": w.exact.bytes, "exact_packets": w.exact.packets, "true_share": w.true_share,
                })).collect::<Vec<_>>(),
                "exact_elephants": r.exact_elephants.iter().map(|(k, c)| json!({
                    "key": k.to_string(), "bytes": c.bytes, "packets": c.packets,
                })).collect::<Vec<_>>(),
                "precision": r.precision, "recall": r.recall, "f1": r.f1, "are": r.are,
                "min_reported_true_share": r.min_reported_share,
            })
        })
        .collect();
    json!({
        "file": a.file.display().to_string(),
        "theta": a.theta,
        "share_of": if a.packets { "packets" } else { "bytes" },
        "monitor_memory_bytes": memory,
        "epochs": epochs,
    })
}

fn print_text(results: &[EpochResult], a: &Args, memory: usize) {
    println!(
        "{}: theta {} of {}, monitor {memory} bytes",
        a.file.display(),
        a.theta,
        if a.packets { "packets" } else { "bytes" }
    );
    for r in results {
        let malformed: u64 = r.report.errors.iter().sum();
        println!(
            "\nepoch {}: {} frames, {} packets, {} bytes, {} fragments, not IP {}, malformed {}; distinct flows ~{} (exact {}), sources ~{}, new flows {} (filter FPR {:.2} %)",
            r.epoch,
            r.report.frames,
            r.report.packets,
            r.report.bytes,
            r.report.fragments,
            r.report.not_ip,
            malformed,
            r.report.distinct_flows,
            r.exact_flows,
            r.report.distinct_sources,
            r.report.new_flows,
            100.0 * r.report.new_flows_fpr
        );
        for e in ParseError::ALL {
            let n = r.report.errors[e.index()];
            if n > 0 {
                println!("  malformed {}: {n}", e.name());
            }
        }
        println!(
            "  {:<56} {:>12} {:>8} {:>12} {:>9} {:>9} {:>7}",
            "flow", "est bytes", "±err", "exact bytes", "est pkts", "exact pk", "share%"
        );
        for w in &r.rows {
            println!(
                "  {:<56} {:>12} {:>8} {:>12} {:>9} {:>9} {:>7.3}",
                w.key.to_string(),
                w.est_bytes,
                w.bytes_error,
                w.exact.bytes,
                w.est_packets,
                w.exact.packets,
                100.0 * w.true_share
            );
        }
        println!(
            "  exact elephants {}, reported {}: precision {:.3} recall {:.3} F1 {:.3} ARE {:.4}",
            r.exact_elephants.len(),
            r.rows.len(),
            r.precision,
            r.recall,
            r.f1,
            r.are
        );
    }
}
