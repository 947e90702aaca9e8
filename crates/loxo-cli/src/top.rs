//! `loxo top`: elephants of a capture, estimated by `FlowMonitor`, next to exact figures.
//!
//! The capture is read by `loxo_cli::capture` (pcap or pcapng, any snap length, link
//! types turned into Ethernet). The evaluator (monitor and exact counter) takes whole
//! frames, so a frame the snap length cut is given to it at its wire length, zeros past
//! the captured bytes (`capture::padded`: the outcome and weight
//! `loxo_flow::parse_frame_captured` gives it); a frame whose headers were cut is not
//! given to it at all but counted apart, per epoch ("cut by the snap length", `snapped`
//! in JSON), so it is in no epoch's `frames` and does not advance `--epoch`. A bad or
//! truncated record ends the reading: the results of the records before it are
//! printed, then a warning, and the exit code is 1.
//!
//! Beside the monitor, a `loxo_flow::HostParticipants` names each epoch's DDoS
//! participants: **scanners** (sources with many distinct destinations, and
//! (source, destination) pairs with many distinct destination ports) and
//! **victims** (destinations with many distinct sources), above `--participants`
//! (a share of the epoch's distinct pairs), each with its estimate, σ, `[lower,
//! upper]` (4σ) and saturation flag next to its exact spread (the exact counter's
//! flows), in the text's "scanners" and "victims" sections and JSON's `scanners` and
//! `victims` keys. The participants take the key the exact counter parsed: a frame
//! is parsed twice in all, once by the monitor (whose API takes frames) and once by
//! the exact counter.
//!
//! With `--ipfix HOST:PORT` every epoch's report also goes to an IPFIX collector over
//! UDP (`crate::ipfix`, the firmware's encoder): the monitor then weighs packets by
//! their IP length (`ByteWeight::Ip`, the unit of `octetDeltaCount`), and so does the
//! exact counter, so the exported figures compare with the exact ones. An epoch's
//! observation interval is the wall-clock time loxo spent reading it (a capture's own
//! timestamps are not read).

use std::io::BufReader;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use loxo_cli::capture::{self, CaptureError, CaptureReader, Format};
use loxo_cli::eval::{EpochResult, Evaluator};
use loxo_cli::participants::{ParticipantRow, ParticipantsResult};
use loxo_flow::{
    Bounds, ByteWeight, CapturedError, Config, FlowMonitor, ParseError, ParticipantsConfig, Role,
    ShareOf, Theta,
};
use serde_json::json;

/// Options of `loxo top`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo top trace.pcap                       elephants holding ≥ 1 % of the bytes
  loxo top trace.pcap --theta 0.5% --epoch 100000
  loxo top trace.pcap --packets --json > top.json
  loxo top trace.pcap --blocklist blocklist.loxo
  loxo top ddos.pcap --epoch 65536 --participants 2%   scanners and victims at 2 % of the pairs
  loxo top trace.pcap --ipfix 127.0.0.1:2055  (and to an IPFIX collector, e.g. nfcapd)")]
#[allow(clippy::struct_excessive_bools)] // command-line switches
pub(crate) struct Args {
    /// Capture to read (pcap or pcapng, detected from the magic number; any snap
    /// length; Ethernet, raw IP, Linux cooked or BSD loopback link types).
    file: PathBuf,
    /// Elephant threshold θ as a share of the epoch (inclusive, exact): a decimal
    /// (0.01), a percentage (1%) or a fraction (1/100). At least 1/256 (0.390625 %),
    /// the monitor's θ_min: at any θ from there every elephant is listed.
    #[arg(long, default_value = "0.01")]
    theta: String,
    /// Measure shares in packets instead of bytes.
    #[arg(long)]
    packets: bool,
    /// Minimum volume of an elephant in its epoch, in the ranking measure (bytes, or
    /// packets with --packets): a flow must hold θ of the epoch and at least this much
    /// (0: θ alone). Keeps a few frames from being elephants when an epoch has almost
    /// no IP traffic.
    #[arg(long, default_value_t = 0, value_name = "N", allow_negative_numbers = true,
          value_parser = crate::non_negative::<u64>)]
    min_volume: u64,
    /// Close an epoch every N frames (0: the whole capture is one epoch).
    #[arg(long, default_value_t = 0, value_name = "N", allow_negative_numbers = true,
          value_parser = crate::non_negative::<u32>)]
    epoch: u32,
    /// DDoS participants' threshold, as a share of the epoch's distinct (source,
    /// destination) pairs for scanners (distinct destinations) and victims (distinct
    /// sources) and of its distinct (source, destination, port) triples for
    /// vertical scans (distinct ports); written as --theta. At 1 % a participant
    /// is found with recall ≥ 0.99 and precision ≥ 0.95 in epochs of 15 000 pairs
    /// or more; an epoch whose threshold is within the sketch's noise is flagged
    /// NOISY (keys without spread may be listed).
    #[arg(long, default_value = "0.01", value_name = "SHARE")]
    participants: String,
    /// Smallest spread a participant must have, whatever the share (0: the share
    /// alone).
    #[arg(long, default_value_t = 0, value_name = "N", allow_negative_numbers = true,
          value_parser = crate::non_negative::<u32>)]
    participants_min: u32,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
    /// Hide the progress bar.
    #[arg(long)]
    quiet: bool,
    /// The hash seed: 32 hex digits or a file holding them. Default: a random seed
    /// per run, so nobody can aim crafted flows at the run's sketches; give a seed
    /// to reproduce a run or to merge its sketches with others.
    #[arg(long, value_name = "HEX|FILE")]
    seed: Option<String>,
    /// Weigh packets by their IP length (header + payload) instead of the frame's
    /// length on the wire (implied by --ipfix).
    #[arg(long)]
    ip_bytes: bool,
    /// Export each epoch's elephants (and totals) as IPFIX over UDP to this collector
    /// (nfcapd, pmacct, GoFlow2, …); bytes are then IP bytes.
    #[arg(long, value_name = "HOST:PORT")]
    ipfix: Option<String>,
    /// Export each epoch's scanners and victims too, in IPFIX templates of their
    /// own (IANA's distinctCountOf… elements; see docs/ipfix.md). Off by default:
    /// nfdump reads every record with an address as a flow and lists each
    /// participant as a flow without packets or bytes.
    #[arg(long, requires = "ipfix")]
    ipfix_participants: bool,
    /// The IPFIX observation domain ID.
    #[arg(long, value_name = "ID", default_value_t = 1, requires = "ipfix")]
    ipfix_domain: u32,
    /// A blocklist (`loxo build-filter`'s output): count each epoch's flows whose
    /// source or destination it holds and list the largest. It must be built under
    /// the run's seed: `--seed`, or by default the key file beside it (FILE.key,
    /// which `loxo build-filter` writes when it draws the seed).
    #[arg(long, value_name = "FILE")]
    blocklist: Option<PathBuf>,
}

impl Args {
    /// The monitor's byte weight.
    fn byte_weight(&self) -> ByteWeight {
        if self.ip_bytes || self.ipfix.is_some() {
            ByteWeight::Ip
        } else {
            ByteWeight::Wire
        }
    }
}

/// The evaluator `loxo top` runs: the monitor under `--theta` and the other
/// options, the participants under `--participants`, both hashing with `seed`.
fn evaluator(a: &Args, seed: loxo_core::Seed) -> anyhow::Result<Evaluator> {
    let theta = Theta::parse(&a.theta).map_err(|e| anyhow::anyhow!("--theta {}: {e}", a.theta))?;
    let config = Config {
        theta,
        min_volume: a.min_volume,
        share_of: if a.packets {
            ShareOf::Packets
        } else {
            ShareOf::Bytes
        },
        epoch_packets: a.epoch,
        byte_weight: a.byte_weight(),
        ..Config::with_seed(seed)
    };
    let share = Theta::parse(&a.participants)
        .map_err(|e| anyhow::anyhow!("--participants {}: {e}", a.participants))?;
    // The monitor refuses a θ below its θ_min before the capture is opened.
    let mut ev =
        Evaluator::try_new(config).map_err(|e| anyhow::anyhow!("--theta {}: {e}", a.theta))?;
    ev.track_participants(ParticipantsConfig {
        seed,
        share,
        min_spread: a.participants_min,
    });
    Ok(ev)
}

/// Runs `loxo top`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let seed = seed(a)?;
    let mut ev = evaluator(a, seed)?;
    let name = a.file.display();
    let file = capture::open_file(&a.file, "loxo top")?;
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
    let mut reader = CaptureReader::new(BufReader::new(bar.wrap_read(file)))
        .map_err(|e| capture::header_error(&a.file, "loxo top", e))?;
    let format = reader.format();
    if let Some(path) = &a.blocklist {
        set_blocklist(&mut ev, path, seed)?;
    }
    let mut snapped = Snapped::default();
    let mut whole = Vec::new();
    let mut spans = crate::ipfix::Spans::new();
    let Ok(stopped) = reader.for_each_frame(|record, frame| {
        // The evaluator (monitor and exact counter) takes whole frames; a frame the
        // snap length cut is given at its wire length with zeros past the captured
        // bytes, which `parse_frame` then never reads (`capture::padded`) — unless its
        // headers were cut, which is reported, never guessed.
        if !frame.is_whole() {
            if let Err(CapturedError::Snapped { needed, .. }) =
                loxo_flow::parse_frame_captured(frame.captured, frame.wire_len)
            {
                snapped.note(ev.results.len(), record.snap_for(needed));
                return Ok::<_, std::convert::Infallible>(());
            }
        }
        ev.feed(capture::padded(frame, &mut whole));
        spans.note(ev.results.len());
        Ok(())
    });
    let spans = spans.finish();
    let records = reader.records();
    bar.finish_and_clear();
    let memory = ev.memory_bytes();
    let participants_memory = ev.participants_memory_bytes();
    let results = ev.finish();
    let exported = (a.ipfix.as_ref())
        .map(|target| {
            crate::ipfix::export(
                target,
                a.ipfix_domain,
                &results,
                &spans,
                a.ipfix_participants,
            )
        })
        .transpose()?;
    let fingerprint = format!("{:#018x}", seed.fingerprint());
    let read = Read {
        participants_memory,
        format,
        records,
        snapped: &snapped,
        stopped: stopped.as_ref(),
        exported: exported.as_ref(),
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&results, a, memory, &fingerprint, &read))?
        );
    } else {
        print_text(&results, a, memory, &fingerprint, &read);
    }
    Ok(match stopped {
        None => ExitCode::SUCCESS,
        Some(e) => {
            eprintln!(
                "loxo top: warning: {name}: {e}; the results above are of the {records} records before it"
            );
            ExitCode::FAILURE
        }
    })
}

/// The run's seed: `--seed`, else the key file beside `--blocklist`, else random.
fn seed(a: &Args) -> anyhow::Result<loxo_core::Seed> {
    Ok(match (&a.seed, &a.blocklist) {
        (Some(s), _) => loxo_cli::key::read_key(s)?,
        (None, Some(b)) => {
            let mut k = b.as_os_str().to_owned();
            k.push(".key");
            let k = PathBuf::from(k);
            loxo_cli::key::read_key(&k.display().to_string())
                .with_context(|| format!("--blocklist {} without --seed: its seed", b.display()))?
        }
        (None, None) => loxo_cli::key::random_seed(),
    })
}

/// Reads the blocklist frame at `path` and gives it to the evaluator's monitor.
fn set_blocklist(
    ev: &mut Evaluator,
    path: &std::path::Path,
    seed: loxo_core::Seed,
) -> anyhow::Result<()> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the blocklist {}", path.display()))?;
    // The monitor holds a `'static` view, as a firmware holds one in flash.
    let bytes: &'static [u8] = Vec::leak(bytes);
    let b = loxo_flow::Blocklist::from_bytes(bytes, seed)
        .map_err(|e| anyhow::anyhow!("--blocklist {}: {e}", path.display()))?;
    ev.set_blocklist(b)
        .map_err(|e| anyhow::anyhow!("--blocklist {}: {e}", path.display()))
}

/// One line per parse error reason that occurred.
fn print_malformed(errors: &[u64; ParseError::COUNT]) {
    for e in ParseError::ALL {
        let n = errors[e.index()];
        if n > 0 {
            println!("  malformed {}: {n}", e.name());
        }
    }
}

/// The epoch's blocklist lines (none without a blocklist).
fn print_blocklisted(r: &EpochResult) {
    if r.report.blocklist_len == 0 {
        return;
    }
    let saturated = if r.report.blocklisted_saturated {
        " (the count is a lower bound past the new-flow filter's design load; the estimate is not)"
    } else {
        ""
    };
    println!(
        "  blocklisted flows {} ± {:.0} (counted {}; exact flows the blocklist matches {}){saturated}",
        r.report.blocklisted_estimate,
        r.report.blocklisted_sigma,
        r.report.blocklisted_flows,
        r.exact_blocklisted
    );
    for e in &r.report.blocklisted {
        println!(
            "    {:<56} {:>8} bytes {:>26} packets {:>22}",
            e.key.to_string(),
            if e.certain { "elephant" } else { "" },
            bounds_text(&e.bytes),
            bounds_text(&e.packets)
        );
    }
}

/// Frames whose headers the snap length cut, per epoch: not counted anywhere else.
#[derive(Debug, Default)]
struct Snapped {
    /// Per epoch (by number).
    per_epoch: Vec<u64>,
    /// The largest snap length one of them needed.
    needed: usize,
}

impl Snapped {
    fn note(&mut self, epoch: usize, needed: usize) {
        if self.per_epoch.len() <= epoch {
            self.per_epoch.resize(epoch + 1, 0);
        }
        if let Some(n) = self.per_epoch.get_mut(epoch) {
            *n += 1;
        }
        self.needed = self.needed.max(needed);
    }

    fn in_epoch(&self, epoch: u32) -> u64 {
        self.per_epoch.get(epoch as usize).copied().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        self.per_epoch.iter().sum()
    }
}

/// How the capture was read.
struct Read<'a> {
    /// The participants' memory in bytes.
    participants_memory: usize,
    format: Format,
    records: u64,
    snapped: &'a Snapped,
    stopped: Option<&'a CaptureError>,
    /// What `--ipfix` sent.
    exported: Option<&'a crate::ipfix::Sent>,
}

pub(crate) fn errors_json(e: &[u64; ParseError::COUNT]) -> serde_json::Value {
    ParseError::ALL
        .iter()
        .map(|r| (r.name().to_string(), json!(e[r.index()])))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

pub(crate) fn bounds_json(b: &Bounds) -> serde_json::Value {
    if b.saturated {
        json!({"saturated": true})
    } else {
        json!({"lower": b.lower, "upper": b.upper, "lower_certain": b.lower_certain, "saturated": false})
    }
}

/// `θ_min` of the monitor `loxo top` runs, as text.
fn theta_min() -> String {
    FlowMonitor::<{ loxo_flow::DEFAULT_CANDIDATES }>::THETA_MIN.to_string()
}

fn to_json(
    results: &[EpochResult],
    a: &Args,
    memory: usize,
    fingerprint: &str,
    read: &Read<'_>,
) -> serde_json::Value {
    let epochs: Vec<_> = results
        .iter()
        .map(|r| {
            json!({
                "epoch": r.epoch,
                "frames": r.report.frames,
                "snapped": read.snapped.in_epoch(r.epoch),
                "packets": r.report.packets,
                "bytes": r.report.bytes,
                "fragments": r.report.fragments,
                "not_ip": r.report.not_ip,
                "errors": errors_json(&r.report.errors),
                "distinct_flows": {"estimate": r.report.distinct_flows, "exact": r.exact_flows},
                "distinct_sources": {"estimate": r.report.distinct_sources, "exact": r.exact_sources},
                "new_flows": {
                    "estimate": r.report.new_flows,
                    "exact": r.exact_new_flows,
                    "sigma": r.report.new_flows_sigma,
                    "sampling_level": r.report.new_flows_sampling,
                    "filter_fpr": r.report.new_flows_fpr,
                    "overloaded": r.report.new_flows_overloaded,
                },
                "elephants": r.rows.iter().map(|w| json!({
                    "key": w.key.to_string(),
                    "status": if w.certain { "certain" } else { "possible" },
                    "bytes": bounds_json(&w.bytes),
                    "packets": bounds_json(&w.packets),
                    "exact_bytes": w.exact.bytes, "exact_packets": w.exact.packets, "true_share": w.true_share,
                })).collect::<Vec<_>>(),
                "elephants_complete": r.report.elephants_complete,
                "exact_elephants": r.exact_elephants.iter().map(|(k, c)| json!({
                    "key": k.to_string(), "bytes": c.bytes, "packets": c.packets,
                })).collect::<Vec<_>>(),
                "precision": r.precision, "recall": r.recall, "f1": r.f1, "are": r.are,
                "min_reported_true_share": r.min_reported_share,
                "scanners": r.participants.as_ref().map(|p| rows_json(&p.scanners)),
                "scanners_left_out": r.participants.as_ref().map(|p| p.report.scanners_left_out),
                "victims": r.participants.as_ref().map(|p| rows_json(&p.victims)),
                "victims_left_out": r.participants.as_ref().map(|p| p.report.victims_left_out),
                "participants": r.participants.as_ref().map(participants_json),
                "blocklisted": (r.report.blocklist_len > 0).then(|| json!({
                    "flows": r.report.blocklisted_flows,
                    "saturated": r.report.blocklisted_saturated,
                    "estimate": r.report.blocklisted_estimate,
                    "sigma": r.report.blocklisted_sigma,
                    "exact_flows_matched": r.exact_blocklisted,
                    "largest": r.report.blocklisted.iter().map(|e| json!({
                        "key": e.key.to_string(),
                        "elephant": e.certain,
                        "bytes": bounds_json(&e.bytes),
                        "packets": bounds_json(&e.packets),
                    })).collect::<Vec<_>>(),
                })),
            })
        })
        .collect();
    json!({
        "file": a.file.display().to_string(),
        "theta": a.theta,
        "theta_min": theta_min(),
        "seed_fingerprint": fingerprint,
        "seed": if a.seed.is_some() { "given" } else { "random per run" },
        "share_of": if a.packets { "packets" } else { "bytes" },
        "min_volume": a.min_volume,
        "byte_weight": match a.byte_weight() {
            ByteWeight::Ip => "ip",
            ByteWeight::Wire => "wire",
        },
        "monitor_memory_bytes": memory,
        "participants_share": a.participants,
        "participants_min": a.participants_min,
        "participants_memory_bytes": read.participants_memory,
        "capture": {
            "format": read.format.to_string(),
            "records": read.records,
            "snapped": read.snapped.total(),
            "snap_length_needed": read.snapped.needed,
            "complete": read.stopped.is_none(),
            "error": read.stopped.map(ToString::to_string),
        },
        "epochs": epochs,
        "ipfix": read.exported.map(|s| json!({
            "target": s.target.to_string(),
            "observation_domain_id": s.domain,
            "messages": s.messages,
            "flow_records": s.flows,
            "epoch_records": s.epochs,
            "participant_records": s.participants,
            "bytes": s.bytes,
        })),
    })
}

/// A participant row: its role and addresses, the estimate, σ, the 4σ bounds, the
/// flags and the exact spread.
fn row_json(r: &ParticipantRow) -> serde_json::Value {
    let p = &r.participant;
    let mut v = json!({
        "estimate": p.spread.value.round(),
        "sigma": p.spread.sigma,
        "lower": p.lower.floor(),
        "upper": p.upper.ceil(),
        "saturated": p.saturated,
        "sampled": p.sampled,
        "counts": p.role.counts(),
        "exact": r.exact,
    });
    let address = p.address.to_string();
    match p.role {
        Role::Victim => v["destination"] = json!(address),
        Role::HorizontalScan | Role::VerticalScan => {
            v["kind"] = json!(p.role.name());
            v["source"] = json!(address);
            if let Some(t) = p.target {
                v["destination"] = json!(t.to_string());
            }
        }
    }
    v
}

fn rows_json(rows: &[ParticipantRow]) -> Vec<serde_json::Value> {
    rows.iter().map(row_json).collect()
}

fn participants_json(p: &ParticipantsResult) -> serde_json::Value {
    let r = &p.report;
    json!({
        "share": r.share.to_string(),
        "threshold": r.threshold,
        "port_threshold": r.port_threshold,
        "threshold_sigma": r.threshold_sigma,
        "port_threshold_sigma": r.port_threshold_sigma,
        "noisy": r.noisy(),
        "pairs": {"estimate": r.pairs.value.round(), "sigma": r.pairs.sigma, "exact": p.exact_pairs},
        "triples": {"estimate": r.triples.value.round(), "sigma": r.triples.sigma, "exact": p.exact_triples},
        "complete": r.complete(),
        "exact_above_threshold": p.exact_above.len(),
        "precision": p.precision,
        "recall": p.recall,
    })
}

/// `[lower, upper]`, `= v` when exact; a `~` marks a lower bound that holds with
/// probability ≥ 95 % only.
pub(crate) fn bounds_text(b: &Bounds) -> String {
    if b.saturated {
        "SATURATED".to_string()
    } else if b.is_exact() {
        format!("= {}", b.upper)
    } else {
        let p = if b.lower_certain { "" } else { "~" };
        format!("[{p}{}, {}]", b.lower, b.upper)
    }
}

/// The epoch's "scanners" and "victims" sections.
fn print_participants(p: &ParticipantsResult) {
    let r = &p.report;
    let row = |x: &ParticipantRow| {
        let q = &x.participant;
        let who = match q.target {
            Some(t) => format!("{} -> {t}", q.address),
            None => q.address.to_string(),
        };
        let saturated = if q.saturated { " SATURATED" } else { "" };
        let estimate = format!("~{:.0} ± {:.0}", q.spread.value, q.spread.sigma);
        let bounds = format!("[{:.0}, {:.0}]", q.lower, q.upper);
        println!(
            "    {:<10} {who:<48} {estimate:>16} {bounds:>18} {:<12} exact {}{saturated}",
            q.role.name(),
            q.role.counts(),
            x.exact
        );
    };
    let left = |n: u32| {
        if n > 0 {
            println!("    ... and {n} more above the threshold (the list is full)");
        }
    };
    println!(
        "  scanners (threshold {} of ~{:.0} distinct pairs = {:.0} destinations, of ~{:.0} (source, destination, port) = {:.0} ports; exact pairs {}, triples {}):",
        r.share, r.pairs.value, r.threshold, r.triples.value, r.port_threshold, p.exact_pairs, p.exact_triples
    );
    if r.noisy() {
        println!(
            "    NOISY: a threshold is within {} standard errors of the sketch's noise (± {:.0} at {:.0}, ± {:.0} at {:.0}): keys without spread may be listed; take a longer --epoch or a larger --participants",
            loxo_flow::NOISE_Z, r.threshold_sigma, r.threshold, r.port_threshold_sigma, r.port_threshold
        );
    }
    p.scanners.iter().for_each(row);
    left(r.scanners_left_out);
    println!("  victims (threshold {:.0} sources):", r.threshold);
    p.victims.iter().for_each(row);
    left(r.victims_left_out);
    println!(
        "  exact participants {}, reported {}: precision {:.3} recall {:.3}",
        p.exact_above.len(),
        p.scanners.len() + p.victims.len(),
        p.precision,
        p.recall
    );
}

fn print_text(
    results: &[EpochResult],
    a: &Args,
    memory: usize,
    fingerprint: &str,
    read: &Read<'_>,
) {
    let unit = if a.packets { "packets" } else { "bytes" };
    let floor = if a.min_volume > 0 {
        format!(" and at least {} {unit}", a.min_volume)
    } else {
        String::new()
    };
    println!(
        "{} ({}, {} records): theta {} of {unit}{floor} (recall 1 guaranteed for theta >= {}), {}, monitor {memory} bytes, participants {} bytes (threshold {} of the distinct pairs), seed fingerprint {fingerprint} ({})",
        a.file.display(),
        read.format,
        read.records,
        a.theta,
        theta_min(),
        match a.byte_weight() {
            ByteWeight::Ip => "bytes are IP bytes (header + payload)",
            ByteWeight::Wire => "bytes are frame lengths on the wire",
        },
        read.participants_memory,
        a.participants,
        if a.seed.is_some() { "given" } else { "random per run" },
    );
    for r in results {
        let malformed: u64 = r.report.errors.iter().sum();
        let overloaded = if r.report.new_flows_overloaded {
            format!(
                ", past the filters' design load: sampled 1 in {}",
                1u64 << r.report.new_flows_sampling.min(63)
            )
        } else {
            String::new()
        };
        println!(
            "\nepoch {}: {} frames, {} packets, {} bytes, {} fragments, not IP {}, malformed {}; distinct flows ~{} (exact {}), sources ~{} (exact {}), new flows ~{} ± {:.0} (1σ; exact {}{overloaded})",
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
            r.exact_sources,
            r.report.new_flows,
            r.report.new_flows_sigma,
            r.exact_new_flows,
        );
        let cut = read.snapped.in_epoch(r.epoch);
        if cut > 0 {
            println!("  cut by the snap length (headers incomplete, not counted): {cut}");
        }
        print_malformed(&r.report.errors);
        println!(
            "  {:<56} {:>8} {:>26} {:>12} {:>22} {:>9} {:>7}",
            "flow", "status", "bytes", "exact bytes", "packets", "exact pk", "share%"
        );
        for w in &r.rows {
            println!(
                "  {:<56} {:>8} {:>26} {:>12} {:>22} {:>9} {:>7.3}",
                w.key.to_string(),
                if w.certain { "certain" } else { "possible" },
                bounds_text(&w.bytes),
                w.exact.bytes,
                bounds_text(&w.packets),
                w.exact.packets,
                100.0 * w.true_share
            );
        }
        if !r.report.elephants_complete {
            println!(
                "  WARNING: this epoch's recall is not certified: flows at theta may be missing"
            );
        }
        print_blocklisted(r);
        if let Some(p) = &r.participants {
            print_participants(p);
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
    let cut = read.snapped.total();
    if cut > 0 {
        println!(
            "\n{cut} frames had headers the snap length cut and are not counted above; they need a snap length of at least {} bytes",
            read.snapped.needed
        );
    }
    if let Some(s) = read.exported {
        println!("\n{s}");
    }
}
