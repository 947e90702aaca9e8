//! `loxo probe -i IFACE` (Linux): a live flow probe. Frames come from the interface
//! through `loxo_afpacket` (an `AF_PACKET` socket with a memory-mapped `TPACKET_V3`
//! ring: no copy and no system call per frame), go to the same `FlowMonitor` as `loxo
//! top`'s, and every epoch — by time (`--interval`, default 60 s, like exporters'
//! active timeout) or by frames (`--frames`) — is printed (text, or one JSON object a
//! line with `--json`), exported as IPFIX (`--ipfix`, `crate::ipfix::Sender`, the
//! firmware's encoder) and as sketch datagrams to `loxo collect` (`--collect`, the
//! distinct-flow HLL and the top-k candidates, as the firmware sends them).
//!
//! Nothing is lost silently: the kernel's counters (`PACKET_STATISTICS`: frames
//! received and dropped because the ring was full) are read at each epoch's close and
//! reported beside the monitor's figures, and exported after each epoch's IPFIX
//! records as a loss options record (`loxo_ipfix::LossRecord`: IANA's
//! `ignoredPacketTotalCount`, RFC 7011 §4.2, and the epoch's own count; sent every
//! epoch, 0 included, so a collector can tell "nothing lost" from "not known").
//! SIGINT or SIGTERM ends the capture: the frames already in the ring are read and
//! the last epoch is closed, printed and exported.
//!
//! Memory is fixed whatever the traffic: the ring (`--ring-mib`), the monitor
//! (`FlowMonitor::memory_bytes`) and one report. Needs `CAP_NET_RAW` only.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use loxo_flow::{ByteWeight, Config, FlowMonitor, Report, ShareOf, Theta, DEFAULT_CANDIDATES};
use serde_json::json;

use crate::top::{bounds_json, bounds_text, errors_json};

/// Options of `loxo probe`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo probe -i eth0                                   an epoch a minute on stdout
  loxo probe -i eth0 --interval 10 --ipfix 192.0.2.9:4739 --collect 192.0.2.9:4740 --export-key probe.key --seed fleet.seed
  loxo probe -i eth0 --frames 16384 --json            epochs of 16 384 frames, JSON lines
Needs CAP_NET_RAW: run as root, or once: setcap cap_net_raw+ep $(command -v loxo)")]
#[allow(clippy::struct_excessive_bools)] // command-line switches
pub(crate) struct Args {
    /// The network interface to capture on.
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    interface: String,
    /// Close an epoch every SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = crate::non_negative::<u32>)]
    interval: u32,
    /// Close an epoch every N frames instead (the interval is then not used).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::non_negative::<u32>)]
    frames: Option<u32>,
    /// Elephant threshold θ as a share of the epoch: 0.01, 1% or 1/100 (≥ 1/256).
    #[arg(long, default_value = "0.01")]
    theta: String,
    /// Measure shares in packets instead of bytes.
    #[arg(long)]
    packets: bool,
    /// Weigh packets by their IP length instead of the frame's length (implied by
    /// --ipfix).
    #[arg(long)]
    ip_bytes: bool,
    /// The hash seed: 32 hex digits or a file holding them (default: random per run).
    /// Give one to merge the sketches sent to `loxo collect` with other devices'.
    #[arg(long, value_name = "HEX|FILE")]
    seed: Option<String>,
    /// Export each epoch as IPFIX over UDP to this collector (nfcapd, pmacct, …).
    #[arg(long, value_name = "HOST:PORT")]
    ipfix: Option<String>,
    /// Send each epoch's sketches (distinct flows, top-k candidates) to `loxo collect`
    /// listening here.
    #[arg(long, value_name = "HOST:PORT")]
    collect: Option<String>,
    /// The key this probe signs its sketch datagrams with (`--collect`): 32 hex
    /// digits or a file holding them, the one `loxo collect --keys` lists for this
    /// device (`--domain`).
    #[arg(long, value_name = "HEX|FILE", requires = "collect")]
    export_key: Option<String>,
    /// The IPFIX observation domain ID, also the device ID of the sketch datagrams.
    #[arg(long, value_name = "ID", default_value_t = 1)]
    domain: u32,
    /// Ring size in MiB (1 MiB blocks): frames arriving while the probe is busy wait
    /// there; when it is full the kernel drops them (and counts them).
    #[arg(long, value_name = "MIB", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    ring_mib: u32,
    /// Leave the interface's promiscuous mode alone.
    #[arg(long)]
    no_promisc: bool,
    /// One JSON object per epoch and line, instead of text.
    #[arg(long)]
    json: bool,
    /// Time the frame loop and the monitor's share of it (two clock reads per frame,
    /// ~40 ns) and print them at the end: the throughput bench's figures.
    #[arg(long)]
    timing: bool,
}

/// The monitor's candidates (as `loxo top`'s).
type Monitor = FlowMonitor<DEFAULT_CANDIDATES>;

/// Counters of the whole run.
#[derive(Debug, Default)]
struct Totals {
    frames: u64,
    kernel_packets: u64,
    kernel_drops: u64,
}

/// The monitor and everything an epoch's close feeds.
struct Probe {
    monitor: Box<Monitor>,
    report: Box<Report>,
    seed: loxo_core::Seed,
    ipfix: Option<crate::ipfix::Sender>,
    sketches: Option<crate::sketch_out::SketchSender>,
    json: bool,
    domain: u32,
    start_ms: u64,
    totals: Totals,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probe")
            .field("totals", &self.totals)
            .finish_non_exhaustive()
    }
}

impl Probe {
    /// Closes the epoch: sketches encoded (before the monitor resets them), report,
    /// kernel counters `k`, then printed and exported.
    fn close(&mut self, k: loxo_afpacket::Statistics) -> anyhow::Result<()> {
        if let Some(s) = &mut self.sketches {
            s.encode(&self.monitor, &self.seed)?;
        }
        self.monitor.end_epoch(&mut self.report);
        let end_ms = crate::ipfix::now_ms();
        let (start_ms, r) = (self.start_ms, &*self.report);
        self.start_ms = end_ms;
        self.totals.frames += r.frames;
        self.totals.kernel_packets += k.packets;
        self.totals.kernel_drops += k.drops;
        if let Some(x) = &mut self.ipfix {
            let times = loxo_ipfix::Times {
                export_time: crate::ipfix::export_time_now(),
                start_ms,
                end_ms,
            };
            x.send_epoch(r, None, times)?;
            let loss = loxo_ipfix::LossRecord {
                observation_domain_id: self.domain,
                start_ms,
                end_ms,
                epoch: r.epoch,
                ignored_total: self.totals.kernel_drops,
                ignored: k.drops,
            };
            x.send_loss(&loss, times.export_time)?;
        }
        if let Some(s) = &mut self.sketches {
            s.send(r.epoch)?;
        }
        if self.json {
            println!("{}", epoch_json(r, start_ms, end_ms, &k, &self.totals));
        } else {
            print_epoch(r, start_ms, end_ms, &k, &self.totals);
        }
        Ok(())
    }
}

fn config(a: &Args, seed: loxo_core::Seed) -> anyhow::Result<Config> {
    let theta = Theta::parse(&a.theta).map_err(|e| anyhow::anyhow!("--theta {}: {e}", a.theta))?;
    let config = Config {
        theta,
        share_of: if a.packets {
            ShareOf::Packets
        } else {
            ShareOf::Bytes
        },
        epoch_packets: a.frames.unwrap_or(0),
        byte_weight: if a.ip_bytes || a.ipfix.is_some() {
            ByteWeight::Ip
        } else {
            ByteWeight::Wire
        },
        ..Config::with_seed(seed)
    };
    Monitor::check(&config).map_err(|e| anyhow::anyhow!("--theta {}: {e}", a.theta))?;
    Ok(config)
}

/// Runs `loxo probe`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let seed = match &a.seed {
        Some(s) => loxo_cli::key::read_key(s)?,
        None => loxo_cli::key::random_seed(),
    };
    let config = config(a, seed)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("signal handler")?;
    }
    let ring_config = loxo_afpacket::RingConfig {
        block_nr: a.ring_mib,
        promiscuous: !a.no_promisc,
        ..loxo_afpacket::RingConfig::DEFAULT
    };
    let mut ring = loxo_afpacket::Ring::open(&a.interface, &ring_config)
        .map_err(|e| anyhow::anyhow!("-i {}: {e}", a.interface))?;
    let mut probe = Probe {
        monitor: Box::new(Monitor::new(config)),
        report: Box::default(),
        seed,
        ipfix: (a.ipfix.as_deref())
            .map(|t| crate::ipfix::Sender::open(t, a.domain, false, true))
            .transpose()?,
        sketches: (a.collect.as_deref())
            .map(|t| {
                let key = a.export_key.as_deref().context(
                    "--collect needs --export-key (the key `loxo collect --keys` lists for this device)",
                )?;
                crate::sketch_out::SketchSender::open(t, a.domain, crate::sketch_out::read_export_key(key)?)
            })
            .transpose()?,
        json: a.json,
        domain: a.domain,
        start_ms: crate::ipfix::now_ms(),
        totals: Totals::default(),
    };
    eprintln!(
        "loxo probe: capturing on {} (ring {} MiB, monitor {} bytes, seed fingerprint {:#018x}); epochs of {}",
        a.interface,
        a.ring_mib,
        probe.monitor.memory_bytes(),
        seed.fingerprint(),
        a.frames.map_or_else(|| format!("{} s", a.interval), |n| format!("{n} frames")),
    );
    let (in_loop, in_monitor, started) = capture(a, &mut ring, &mut probe, &stop)?;
    probe.close(ring.statistics()?)?;
    let t = &probe.totals;
    if a.timing {
        let secs = |d: Duration| d.as_secs_f64();
        eprintln!(
            "loxo probe: busy {:.3} s in the frame loop ({:.0} frames/s while busy), of which {:.3} s in the monitor ({:.0} %); {:.3} s running in all",
            secs(in_loop),
            t.frames as f64 / secs(in_loop).max(1e-9),
            secs(in_monitor),
            100.0 * secs(in_monitor) / secs(in_loop).max(1e-9),
            secs(started.elapsed()),
        );
    }
    eprintln!(
        "loxo probe: stopped; {} frames to the monitor, kernel {} received, {} dropped{}",
        t.frames,
        t.kernel_packets,
        t.kernel_drops,
        probe
            .ipfix
            .as_ref()
            .map_or_else(String::new, |x| format!("; {}", x.sent)),
    );
    Ok(ExitCode::SUCCESS)
}

/// The capture loop, until a signal: frames to the monitor, epochs closed by frames
/// (the monitor says so) or by time. Returns, with `--timing`, the time in the frame
/// loop and in the monitor's `feed_captured`, and when the loop started.
fn capture(
    a: &Args,
    ring: &mut loxo_afpacket::Ring,
    probe: &mut Probe,
    stop: &AtomicBool,
) -> anyhow::Result<(Duration, Duration, Instant)> {
    let interval = Duration::from_secs(u64::from(a.interval.max(1)));
    let mut epoch_start = Instant::now();
    // The epoch's start on the frames' clock (their receive times), for its pace.
    let mut epoch_wall = wall_ns(SystemTime::now());
    let timed = a.frames.is_none();
    let mut scratch = Vec::with_capacity(1 << 16);
    // After a signal: read what the ring holds (a block the kernel has not retired
    // yet is handed over within its 10 ms timeout), then close.
    let mut draining = false;
    let (mut in_loop, mut in_monitor) = (Duration::ZERO, Duration::ZERO);
    let started = Instant::now();
    loop {
        if !draining && stop.load(Ordering::Relaxed) {
            draining = true;
        }
        let wait = if draining {
            Duration::from_millis(25)
        } else {
            interval
                .saturating_sub(epoch_start.elapsed())
                .min(Duration::from_millis(200))
        };
        match ring.next_block(wait)? {
            Some(block) if a.timing => {
                let t0 = Instant::now();
                for f in block.frames() {
                    if timed {
                        pace(&mut probe.monitor, f.time, epoch_wall, interval);
                    }
                    let (bytes, wire) = f.with_vlan(&mut scratch);
                    let t = Instant::now();
                    let closed = probe.monitor.feed_captured(bytes, wire as usize);
                    in_monitor += t.elapsed();
                    if closed {
                        probe.close(block.statistics()?)?;
                    }
                }
                in_loop += t0.elapsed();
            }
            Some(block) => {
                for f in block.frames() {
                    if timed {
                        pace(&mut probe.monitor, f.time, epoch_wall, interval);
                    }
                    let (bytes, wire) = f.with_vlan(&mut scratch);
                    if probe.monitor.feed_captured(bytes, wire as usize) {
                        probe.close(block.statistics()?)?;
                    }
                }
            }
            None if draining => break,
            None => {}
        }
        if a.frames.is_none() && epoch_start.elapsed() >= interval {
            probe.close(ring.statistics()?)?;
            epoch_start = Instant::now();
            epoch_wall = wall_ns(SystemTime::now());
        }
    }
    Ok((in_loop, in_monitor, started))
}

/// Nanoseconds since 1970 (0 before it).
fn wall_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Every 256 frames of an epoch closed by time, tells the monitor the frames the
/// epoch will hold at its pace so far (`FlowMonitor::set_epoch_pace`): its frames ×
/// the interval ÷ the time from the epoch's start to this frame's receive time
/// (`time`: seconds and nanoseconds since 1970). A flood plans its new-flow filter
/// from it, as from a configured length.
fn pace(m: &mut Monitor, time: (u32, u32), epoch_wall: u64, interval: Duration) {
    let frames = m.frames() + 1;
    if frames % 256 != 0 {
        return;
    }
    if let Some(p) = pace_of(frames, time, epoch_wall, interval) {
        m.set_epoch_pace(p);
    }
}

/// The frames an epoch will hold at its pace: `frames` so far, the last received at
/// `time` (seconds and nanoseconds since 1970), the epoch begun at `epoch_wall`
/// (nanoseconds since 1970); `None` before any time has passed (a clock step back).
fn pace_of(frames: u64, time: (u32, u32), epoch_wall: u64, interval: Duration) -> Option<u32> {
    let at = u64::from(time.0) * 1_000_000_000 + u64::from(time.1);
    let elapsed = at.checked_sub(epoch_wall).filter(|&e| e > 0)?;
    let pace = u128::from(frames) * interval.as_nanos() / u128::from(elapsed);
    Some(u32::try_from(pace).unwrap_or(u32::MAX))
}

/// The epoch's line(s) of text.
fn print_epoch(r: &Report, start_ms: u64, end_ms: u64, k: &loxo_afpacket::Statistics, t: &Totals) {
    let malformed: u64 = r.errors.iter().sum();
    println!(
        "epoch {} ({:.1} s): {} frames, {} packets, {} bytes, not IP {}, malformed {}; distinct flows ~{}, sources ~{}, new flows ~{}; kernel: {} received, {} dropped ({} dropped in all)",
        r.epoch,
        end_ms.saturating_sub(start_ms) as f64 / 1000.0,
        r.frames,
        r.packets,
        r.bytes,
        r.not_ip,
        malformed,
        r.distinct_flows,
        r.distinct_sources,
        r.new_flows,
        k.packets,
        k.drops,
        t.kernel_drops,
    );
    for e in &r.elephants {
        println!(
            "  {:<56} {:>8} bytes {:>26} packets {:>22}",
            e.key.to_string(),
            if e.certain { "elephant" } else { "possible" },
            bounds_text(&e.bytes),
            bounds_text(&e.packets)
        );
    }
}

/// The epoch as one JSON object.
fn epoch_json(
    r: &Report,
    start_ms: u64,
    end_ms: u64,
    k: &loxo_afpacket::Statistics,
    t: &Totals,
) -> serde_json::Value {
    json!({
        "epoch": r.epoch,
        "start_ms": start_ms,
        "end_ms": end_ms,
        "frames": r.frames,
        "packets": r.packets,
        "bytes": r.bytes,
        "byte_weight": if r.byte_weight == ByteWeight::Ip { "ip" } else { "wire" },
        "fragments": r.fragments,
        "not_ip": r.not_ip,
        "malformed": errors_json(&r.errors),
        "distinct_flows": r.distinct_flows,
        "distinct_sources": r.distinct_sources,
        "new_flows": r.new_flows,
        "elephants_complete": r.elephants_complete,
        "theta": r.theta.to_string(),
        "kernel": {
            "received": k.packets,
            "dropped": k.drops,
            "freezes": k.freezes,
            "dropped_total": t.kernel_drops,
        },
        "elephants": r.elephants.iter().map(|e| json!({
            "key": e.key.to_string(),
            "certain": e.certain,
            "bytes": bounds_json(&e.bytes),
            "packets": bounds_json(&e.packets),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod pace_tests {
    use super::pace_of;
    use std::time::Duration;

    #[test]
    fn the_pace_projects_the_frames_so_far_over_the_interval() {
        let start = 1_700_000_000 * 1_000_000_000;
        let minute = Duration::from_mins(1);
        // 25 600 frames in the first 0.5 s of a 60 s epoch: 3 072 000 at this pace.
        let half = (1_700_000_000, 500_000_000);
        assert_eq!(pace_of(25_600, half, start, minute), Some(3_072_000));
        // No time elapsed, or a clock that stepped back: no pace.
        assert_eq!(pace_of(256, (1_700_000_000, 0), start, minute), None);
        assert_eq!(pace_of(256, (1_699_999_999, 0), start, minute), None);
        // Beyond u32: saturated.
        assert_eq!(
            pace_of(1 << 40, (1_700_000_000, 1), start, minute),
            Some(u32::MAX)
        );
    }
}
