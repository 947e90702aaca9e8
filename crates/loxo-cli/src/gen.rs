//! `loxo gen`: write a synthetic, seeded pcap and, beside it, the generator's truth.
//!
//! `--class NAME` picks the traffic (`loxo_cli::trace::TrafficClass`: the classic mix,
//! random-source IPv4/IPv6 floods, a SYN flood, minimum-size frames, IPv6 extension
//! chains, VLAN/QinQ, fragments, horizontal and vertical scans, DDoS onto one or
//! several victims, scanners hidden in the mix); `--flood` defaults to the class's
//! share (`TrafficClass::default_flood`), `--scanners`, `--victims` and `--spread`
//! shape a scan or DDoS class's participants (`loxo_cli::trace::Attack`).
//!
//! The truth file (`OUT.truth.csv` for `OUT.pcap`, `loxo_cli::trace::truth_path`)
//! has a header row and one row per frame in pcap order:
//! `frame,len,ip_len,expected,error,damage,fragment,flood,src,dst,src_port,dst_port,protocol`
//! — the frame's index, byte weight and IP length, what a parser following the key
//! rules must make of it (`flow`, `not_ip`, or `malformed` with the `ParseError`
//! name), the damage the generator did (`none`, `truncated`, `bad_ihl`,
//! `version_swap`, `length_field`, `length_cut`, `long_chain`), whether it is a
//! non-first fragment or a flood frame, and the key of the flow it was built for
//! (empty for a non-IP frame). It is the generator's own record (see
//! `loxo_cli::trace`), not a parse of the pcap: tests compare `parse_frame`, the flow
//! monitor and the firmware with it (`loxo_cli::trace::read_truth` reads it back).
//!
//! The participants file (`OUT.participants.csv`,
//! `loxo_cli::trace::participants_path`) is that truth's spreads per epoch of
//! `--epoch` frames (`loxo_cli::trace::EpochSpreads`):
//! `epoch,role,src,dst,spread,pairs,designed`, one row per key whose spread reaches
//! `--participants-min` and per designed participant (`loxo_cli::trace::designed`),
//! `loxo_cli::trace::read_participants` reads it back.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use loxo_cli::trace::{
    designed, generate_with_truth, participants_path, truth_path, write_participants,
    write_participants_header, write_truth_header, Attack, EpochSpreads, Popularity, TraceConfig,
    TrafficClass, MAX_PARTICIPANTS,
};
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// Options of `loxo gen`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "loxo gen -o <OUT.pcap> [-n PACKETS] [OPTIONS]",
    after_help = "Examples:
  loxo gen -o trace.pcap                   1 000 000 frames of 100 000 Zipf(1) flows, and
                                           trace.truth.csv, trace.participants.csv
  loxo gen -o small.pcap -n 10000 -f 500 --seed 7
  loxo gen -o dirty.pcap -n 100000 --malformed 0.01 --flood 0.1 --extensions 0.2
  loxo gen -o flood.pcap -n 16384 --class flood-v4   90 % one-packet flows from random IPv4 sources
  loxo gen -o tags.pcap -n 16384 --class vlan-qinq   every frame 802.1Q or QinQ
  loxo gen -o ddos.pcap -n 32768 --class ddos-multi --victims 6
  loxo gen -o hidden.pcap -n 16384 --class scan-hidden --scanners 2 --flood 0.02

Traffic classes (--class):
  mix         the classic trace (default): IPv4/IPv6 80/20, untagged/802.1Q/QinQ 87/10/3,
              TCP/UDP/ICMP 70/25/5, 10 % of UDP frames non-first fragments
  flood-v4    flood frames (90 % unless --flood) are one-packet UDP flows, each from a
              different random IPv4 source and port, to 192.0.2.10:53; 64-byte frames
  flood-v6    the same over IPv6: random 128-bit sources to [2001:db8::10]:53
  syn-flood   flood frames (90 % unless --flood) are TCP SYNs with random source ports
              from 4 096 sources (198.18.0.0/20) to 192.0.2.10:80
  min-size    every frame as short as its headers allow, at least 60 bytes (64 on the
              wire), the IP length covering the headers only (the rest is padding)
  ipv6-ext    every flow IPv6 with 1-3 extension headers (hop-by-hop, routing,
              destination options, fragment), 1 in 8 ending in AH, 1 in 8 in ESP
  vlan-qinq   every flow tagged: half 802.1Q, half QinQ
  fragments   every frame of the flows a non-first fragment (ports 0 in its key)
  hscan       horizontal scans: flood frames (50 % unless --flood) are TCP SYNs from
              --scanners (4) sources 198.51.100.1, .2, ..., each to a different random
              IPv4 destination (one packet each) on the scanner's port (22, 23, 80, ...)
  vscan       vertical scans: flood frames (50 %) are TCP SYNs from --scanners (2)
              sources, IPv4 and IPv6 in turn, each probing ports 1-65535 of its target
              (203.0.113.10 + i, [2001:db8:7a::10 + i])
  ddos-v4     distributed flood: flood frames (90 %) are one-packet flows from spoofed
              IPv4 sources (every frame a new one) onto --victims (1) victims
              192.0.2.10, .11, ...: UDP to 53 or 123, TCP SYN to 80 or 443
  ddos-v6     the same over IPv6: spoofed 128-bit sources onto [2001:db8::10], ...
  ddos-multi  the same onto --victims (4) victims, IPv4 and IPv6 in turn
  scan-hidden the classic mix with 4 % (unless --flood) from --scanners (4) scanners,
              even ones horizontal (as hscan), odd ones vertical (as vscan)
The truth file is right for every class: each row keeps the key the frame was built for.

Participants (OUT.participants.csv, every class): per epoch of --epoch frames, from the
truth of the frames that parse as flows, every source's distinct destinations (role
fan_out), every destination's distinct sources (fan_in) and every (source, destination)'s
distinct destination ports (dst_ports): columns epoch,role,src,dst,spread,pairs,designed,
a row for each key whose spread is at least --participants-min and for each participant
the class designed (designed = 1: the scanners, a vertical scanner's (source, target),
the victims); pairs is the epoch's distinct (key, element) pairs of the role."
)]
pub(crate) struct Args {
    /// Output pcap file.
    #[arg(short, long, value_name = "OUT.pcap")]
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
    /// Share (0..=1) of attack frames: a flood, scan or DDoS class's, else scan/flood
    /// packets each with a fresh unique key [default: 0.9 with flood-v4, flood-v6,
    /// syn-flood and ddos-*, 0.5 with hscan and vscan, 0.04 with scan-hidden, else 0].
    #[arg(long)]
    flood: Option<f64>,
    /// Share (0..=1) of malformed frames; the exact number is printed.
    #[arg(long, default_value_t = 0.0)]
    malformed: f64,
    /// RNG seed; the same options and seed give the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Share (0..=1) of flows with IPv4 options or an IPv6 extension-header chain
    /// (hop-by-hop, routing, destination options, fragment, AH/ESP); > 0 also adds
    /// padded frames, more non-IP link layers and damages aimed at those headers.
    #[arg(long, default_value_t = 0.0)]
    extensions: f64,
    /// Traffic class: how the flood frames, or all frames, are shaped (see below).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "mix",
        value_parser = PossibleValuesParser::new(TrafficClass::ALL.map(TrafficClass::name))
            .try_map(|s| s.parse::<TrafficClass>())
    )]
    class: TrafficClass,
    /// Scanners of a scan class (hscan, vscan, scan-hidden) [default: 4, vscan 2].
    #[arg(long, value_name = "N")]
    scanners: Option<u32>,
    /// Victims of a DDoS class (ddos-v4, ddos-v6, ddos-multi) [default: 1, ddos-multi 4].
    #[arg(long, value_name = "N")]
    victims: Option<u32>,
    /// Elements each participant of a scan or DDoS class draws from: destinations a
    /// horizontal scanner sweeps, ports a vertical one probes (at most 65535), the
    /// flood's pool of sources [default: a new one every frame].
    #[arg(long, value_name = "N")]
    spread: Option<u32>,
    /// Frames per epoch of the participants file (every frame counts, as in the
    /// monitor's and the firmware's epochs).
    #[arg(long, value_name = "FRAMES", default_value_t = 16_384)]
    epoch: u64,
    /// Smallest spread the participants file lists (designed participants are always
    /// listed; 1 lists every key).
    #[arg(long, value_name = "SPREAD", default_value_t = 2)]
    participants_min: u64,
}

/// Most flows `--flows` takes: the generator holds a cumulative distribution of one
/// `f64` per flow (128 MiB at this bound).
const MAX_FLOWS: u32 = 1 << 24;

/// Smallest `--pareto` shape: a Pareto(shape) sample is at most 2^(53/shape) (the
/// generator's uniforms are multiples of 2^-53), and the sum over up to [`MAX_FLOWS`]
/// of them must stay finite (below 2^1024): shape > 53/1000. Below 0.1 one flow holds
/// nearly everything anyway.
const MIN_PARETO_SHAPE: f64 = 0.1;

/// Checks every option's value: a clear message for each non-finite or out-of-range one
/// (`clap` parses `NaN` and `inf` as numbers).
fn check(a: &Args) -> anyhow::Result<Popularity> {
    for (name, v) in [
        ("--flood", a.flood.unwrap_or(0.0)),
        ("--malformed", a.malformed),
        ("--extensions", a.extensions),
    ] {
        anyhow::ensure!(
            v.is_finite() && (0.0..=1.0).contains(&v),
            "{name} is a share: it must be in 0..=1, got {v}"
        );
    }
    let max = MAX_PARTICIPANTS;
    for (name, v, applies) in [
        ("--scanners", a.scanners, a.class.is_scan()),
        ("--victims", a.victims, a.class.is_ddos()),
    ] {
        if let Some(v) = v {
            anyhow::ensure!(applies, "{name} does not apply to --class {}", a.class);
            anyhow::ensure!(
                (1..=max).contains(&v),
                "{name} must be in 1..={max}, got {v}"
            );
        }
    }
    if let Some(s) = a.spread {
        anyhow::ensure!(
            a.class.is_scan() || a.class.is_ddos(),
            "--spread does not apply to --class {}",
            a.class
        );
        anyhow::ensure!(s >= 1, "--spread must be at least 1, got {s}");
    }
    anyhow::ensure!(a.epoch >= 1, "--epoch must be at least 1 frame");
    anyhow::ensure!(
        a.participants_min >= 1,
        "--participants-min must be at least 1"
    );
    anyhow::ensure!(
        (1..=MAX_FLOWS).contains(&a.flows),
        "--flows must be in 1..={MAX_FLOWS}, got {}",
        a.flows
    );
    if let Some(s) = a.pareto {
        anyhow::ensure!(
            s.is_finite() && s >= MIN_PARETO_SHAPE,
            "--pareto shape must be a finite number of at least {MIN_PARETO_SHAPE}, got {s}"
        );
        return Ok(Popularity::Pareto(s));
    }
    // Rank i is drawn with probability ∝ i^-α: α < 0 would make the last rank the
    // most popular, and a non-finite α has no distribution.
    anyhow::ensure!(
        a.zipf.is_finite() && a.zipf >= 0.0,
        "--zipf exponent must be a finite number of at least 0, got {}",
        a.zipf
    );
    Ok(Popularity::Zipf(a.zipf))
}

/// Runs `loxo gen`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let popularity = check(a)?;
    let cfg = TraceConfig {
        packets: a.packets,
        flows: a.flows,
        popularity,
        flood: a.flood.unwrap_or(a.class.default_flood()),
        malformed: a.malformed,
        seed: a.seed,
        extensions: a.extensions,
        class: a.class,
        attack: Attack {
            scanners: a.scanners,
            victims: a.victims,
            spread: a.spread,
        },
    };
    let file =
        File::create(&a.output).with_context(|| format!("cannot create {}", a.output.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(file)).context("cannot write the pcap header")?;
    let truth = truth_path(&a.output);
    let tname = truth.display();
    let mut t =
        BufWriter::new(File::create(&truth).with_context(|| format!("cannot create {tname}"))?);
    write_truth_header(&mut t).with_context(|| format!("cannot write {tname}"))?;
    let parts = participants_path(&a.output);
    let pname = parts.display();
    let mut p =
        BufWriter::new(File::create(&parts).with_context(|| format!("cannot create {pname}"))?);
    write_participants_header(&mut p).with_context(|| format!("cannot write {pname}"))?;
    let designed = designed(&cfg);
    let mut spreads = EpochSpreads::new(0);
    let mut rows = 0u64;
    let mut i = 0u64;
    let st = generate_with_truth(&cfg, |frame, truth| {
        i += 1;
        let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        w.write_packet(&PcapPacket::new(Duration::from_micros(i), len, frame))
            .with_context(|| format!("cannot write {}", a.output.display()))?;
        writeln!(t, "{truth}").with_context(|| format!("cannot write {tname}"))?;
        spreads.add(truth);
        if spreads.frames() == a.epoch {
            rows += write_participants(&mut p, &spreads, &designed, a.participants_min)
                .with_context(|| format!("cannot write {pname}"))?;
            spreads = EpochSpreads::new(spreads.epoch() + 1);
        }
        Ok::<_, anyhow::Error>(())
    })?;
    if spreads.frames() > 0 {
        rows += write_participants(&mut p, &spreads, &designed, a.participants_min)
            .with_context(|| format!("cannot write {pname}"))?;
    }
    t.flush().with_context(|| format!("cannot write {tname}"))?;
    p.flush().with_context(|| format!("cannot write {pname}"))?;
    w.into_writer()
        .flush()
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    println!(
        "wrote {} frames ({} bytes) to {}: malformed {}, not IP {}, flood {}, damaged {}; truth in {tname}, {rows} participant rows in {pname}",
        st.frames,
        st.bytes,
        a.output.display(),
        st.malformed,
        st.not_ip,
        st.flood,
        st.damaged
    );
    Ok(ExitCode::SUCCESS)
}
