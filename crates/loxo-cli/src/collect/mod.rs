//! `loxo collect --listen ADDR`: the collector of the devices' per-epoch sketches.
//!
//! Each device sends, at the end of each epoch, its distinct-flow sketch (`Hll<14>`,
//! stream `flows`) and its top-k candidates (`SpaceSaving<FlowKey, 256>`, keys as
//! [`FlowKey`]'s 38 wire bytes, stream `topk`) as loxo wire frames cut into UDP
//! datagrams ([`loxo_control::datagram`]). The collector puts every
//! `(device, stream, epoch)` frame back together, decodes it, and merges each epoch
//! across the devices:
//!
//! * **fleet distinct flows**: the register-wise maximum of the devices' HLLs — exactly
//!   the sketch one device would hold had it seen every device's traffic, so the
//!   estimate keeps the single-sketch error, relative standard error `1.04/√m`
//!   (0.81 % at `P = 14`);
//! * **fleet top flows**: the devices' candidate lists combined by
//!   [`loxo_cms::SpaceSavingMerge`] ([`combine_top`]), with bounds that hold
//!   deterministically. For a key on the lists of devices `L` (out of the merged
//!   devices `A`), with device `i`'s entry `(countᵢ, errorᵢ)` and smallest monitored
//!   count `mᵢ` (0 when its summary is not full): `count = Σ_{i∈L} countᵢ`, `lower =
//!   Σ_{i∈L} (countᵢ − errorᵢ)`, `upper = count + Σ_{i∈A∖L} mᵢ` (a key absent from a
//!   full summary weighs at most its minimum there, Metwally et al., Lemma 3). A flow
//!   on no list weighs at most `Σ mᵢ` fleet-wide, printed as the "unlisted" bound. The
//!   ranking by `count` is an estimate (a flow spread thinly over many devices can
//!   rank lower than its weight); the bounds always contain the truth.
//!
//! Merging requires equal hash seeds. The collector does not know the seed: it reads
//! frames with seed-less decoders and merges only frames whose seed fingerprint is the
//! fleet's — the first fingerprint it decodes (or `--seed-fingerprint`). A frame of
//! another fingerprint is written to its device file, reported and counted as an
//! error, never merged.
//!
//! # Bounds on memory and what counts as an error
//!
//! Chunks must arrive in order (the firmware sends them so; UDP on one link rarely
//! reorders). A chunk out of order, a duplicate chunk, a total that changes, or a total
//! above the largest frame of its stream ([`max_frame`]: 196 660 bytes for an HLL of
//! precision 18, 14 900 for the top-k; never more than
//! [`MAX_SKETCH`](crate::chunks::MAX_SKETCH), 16 MiB) drops that frame with a counted
//! error; later chunks of a dropped frame are discarded silently. At most
//! [`Limits::max_partial`] frames are incomplete at once, at most
//! [`Limits::max_devices`] devices are tracked and at most [`Limits::max_open_epochs`]
//! epochs are open: so memory stays below `max_partial · 196 660` bytes of partial
//! frames plus about 60 KiB per (device, open epoch).
//!
//! An epoch is **closed** when every device seen (since that epoch) has delivered or
//! lost both its frames of it (and at least [`Limits::min_devices`] devices did); it is **finalized** (printed, written, exported,
//! freed) once it is closed and every such device has sent something of a later
//! epoch, when more than [`Limits::max_open_epochs`] epochs are open (the oldest
//! goes), or when the collector stops. A datagram of a finalized epoch is a counted
//! error ("late"). Malformed datagrams, corrupt frames (the frame's CRC-32), frames
//! still incomplete at the end and seed or precision mismatches are counted too;
//! nothing a sender does panics the collector.
//!
//! # The command
//!
//! `loxo collect --listen 127.0.0.1:4740 [--out DIR] [--redis HOST:PORT] [--epochs N]
//! [--devices N] [--timeout SECS]` prints, per epoch, the devices seen, the fleet distinct-flow
//! estimate and the fleet top flows; with `--out` it writes
//! `DIR/epoch-<n>/device-<d>.flows.loxo`, `…/device-<d>.topk.loxo` (the frames as
//! received) and `DIR/epoch-<n>/fleet.flows.loxo` (the merged HLL under the fleet's
//! fingerprint; all readable by `loxo inspect`); with `--redis` it `PFMERGE`s each
//! epoch's fleet HLL into the key `loxo:flows:epoch:<n>` (through a temporary key
//! `loxo:flows:epoch:<n>:incoming`, so an existing key, e.g. another collector's,
//! is merged into rather than overwritten). It stops after `--epochs N` closed epochs
//! or after `--timeout` seconds without a datagram, and exits non-zero if any error
//! was counted. "Every device seen" is all a collector can know of the fleet: a
//! device whose first datagram arrives after the others closed the last epoch is not
//! waited for (and one after the epoch was finalized is late), so give `--devices N`
//! when the fleet's size is known.
//!
//! The files follow the data: `reassembly.rs` (the [`Collector`] state machine),
//! `fleet.rs` (an epoch's fleet figures), `output.rs` (the text printed, the files
//! written), `redis.rs` (the export) and this one (the command's loop).
//!
//! ```
//! use loxo_cli::collect::{datagrams, Collector, Limits};
//! use loxo_control::datagram::Stream;
//! use loxo_core::Seed;
//! use loxo_hll::Hll;
//!
//! let seed = Seed::new(1, 2);
//! let mut c = Collector::new(Limits::default());
//! for device in [1, 2] {
//!     let mut hll = Hll::<14>::new(seed);
//!     for i in 0..1000u32 {
//!         hll.insert(&(i + device * 500).to_le_bytes());
//!     }
//!     let mut frame = vec![0u8; hll.encoded_len()];
//!     let n = hll.encode_into(&mut frame)?;
//!     for d in datagrams(Stream::Flows, device, 0, &frame[..n]) {
//!         c.push(&d);
//!     }
//! }
//! c.finish(); // no top-k frames were sent: counted as incomplete
//! let epoch = c.take_finalized().remove(0);
//! let fleet = epoch.flows.unwrap().estimate();
//! // Keys 500..2000: within 4σ, σ = 1.04/√16384 ≈ 0.81 %.
//! assert!((fleet - 1500.0).abs() < 1500.0 * 4.0 * 0.0081, "{fleet}");
//! assert_eq!(c.error_count(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod fleet;
mod output;
mod reassembly;
mod redis;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::io;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use loxo_cms::SpaceSaving;
use loxo_control::datagram::{SketchDatagram, Stream, DATAGRAM_MAX};
use loxo_core::wire::frame_len;
use loxo_flow::FlowKey;

use crate::resp::Client;
use output::Output;

pub use fleet::{combine_top, decode_topk, DeviceFrame, DeviceTop, EpochSummary, FleetEntry};
pub use output::{describe, write_epoch};
pub use reassembly::{Collector, ErrorKind, Limits};
pub use redis::redis_hyll;

/// Most candidates a device's top-k summary may have: the monitor's default. A
/// device whose monitor has fewer (a power of two from 16: the sample firmware's 128)
/// ships a smaller summary, merged alike ([`DeviceTop`]).
pub const TOP_N: usize = loxo_flow::DEFAULT_CANDIDATES;
/// Wire bytes of a [`FlowKey`] in a top-k frame.
pub const KEY_WIRE_LEN: usize = 38;
/// The largest top-k summary a device ships: a default monitor's candidates.
pub type TopSummary = SpaceSaving<FlowKey, TOP_N>;

/// Largest frame a stream can carry: a dense `Hll<18>` with its martingale
/// (`36 + 8 + 0.75·2^18 + 4` bytes) for `flows`, a full `SpaceSaving<FlowKey, 256>`
/// (`36 + 8 + 4 + 256·(38 + 20) + 4`) for `topk`. A datagram announcing more is
/// refused before anything is buffered.
#[must_use]
pub const fn max_frame(stream: Stream) -> usize {
    match stream {
        Stream::Flows => frame_len(8 + 3 * (1 << 18) / 4),
        Stream::TopK => frame_len(8 + 4 + TOP_N * (KEY_WIRE_LEN + 20)),
    }
}

/// The datagrams a device sends for `frame` of `(stream, device, epoch)`, each a
/// whole UDP payload: [`SketchDatagram::chunks`], emitted (every chunk fits in
/// [`DATAGRAM_MAX`] bytes, so none is left out).
#[must_use]
pub fn datagrams(stream: Stream, device: u32, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
    let mut buf = [0u8; DATAGRAM_MAX];
    SketchDatagram::chunks(stream, device, epoch, frame)
        .filter_map(|d| {
            let n = d.emit(&mut buf).ok()?;
            Some(buf[..n].to_vec())
        })
        .collect()
}

/// Options of `loxo collect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo collect --listen 0.0.0.0:4740 --out collected --devices 2
  loxo collect --listen 127.0.0.1:4740 --redis 127.0.0.1:6379 --epochs 3 --timeout 30")]
pub struct Args {
    /// UDP address to receive sketch datagrams on (port 0: any free port; the address
    /// is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Write `DIR/epoch-<n>/device-<d>.{flows,topk}.loxo` and `fleet.flows.loxo`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// `PFMERGE` each epoch's fleet HLL into `loxo:flows:epoch:<n>` on this Redis.
    #[arg(long, value_name = "HOST:PORT")]
    pub redis: Option<String>,
    /// Stop after this many closed epochs (every device seen delivered or lost both
    /// its frames).
    #[arg(long, value_name = "N")]
    pub epochs: Option<u64>,
    /// An epoch closes only once this many devices sent it (else a device whose
    /// first datagram comes after the others' last would be late).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub devices: usize,
    /// Stop after this many seconds without a datagram, counted from the first one
    /// (default: wait for ever).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Also stop once standard input reaches its end and no datagram came for 100 ms
    /// (a supervisor that knows its devices are done closes the pipe instead of
    /// waiting out `--timeout`).
    #[arg(long)]
    pub stop_on_eof: bool,
    /// Fleet top flows printed per epoch.
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub top: usize,
    /// The fleet's seed fingerprint (16 hex digits, as `loxo inspect` prints it);
    /// default: the first one received.
    #[arg(long, value_name = "HEX")]
    pub seed_fingerprint: Option<String>,
}

/// A flag set once standard input reaches its end (read by a thread of its own).
fn stdin_eof() -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    std::thread::spawn(move || {
        let _ = io::copy(&mut io::stdin().lock(), &mut io::sink());
        flag.store(true, Ordering::Release);
    });
    done
}

/// Runs `loxo collect`.
///
/// # Errors
/// A socket that cannot be bound or read, a Redis server that cannot be reached at
/// start, bad options. Errors of the senders are counted, not returned.
pub fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let mut c = Collector::new(Limits {
        min_devices: a.devices,
        ..Limits::default()
    });
    if let Some(hex) = &a.seed_fingerprint {
        let fp = u64::from_str_radix(hex.trim_start_matches("0x"), 16)
            .with_context(|| format!("--seed-fingerprint {hex}: not a hexadecimal u64"))?;
        c = c.with_fingerprint(fp);
    }
    let timeout = match a.timeout {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            bail!("--timeout must be a positive number of seconds")
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let socket =
        UdpSocket::bind(&a.listen).with_context(|| format!("cannot listen on UDP {}", a.listen))?;
    // The idle timeout runs from the first datagram on: a collector started before
    // its devices waits for them.
    let mut first = true;
    let mut redis = a.redis.as_deref().map(Client::connect).transpose()?;
    eprintln!("loxo collect: listening on {}", socket.local_addr()?);
    let mut buf = vec![0u8; 1 << 16];
    let mut out = Output {
        dir: a.out.as_deref(),
        redis: redis.as_mut(),
        top: a.top,
    };
    // With --stop-on-eof the socket wakes up every 100 ms to look at stdin; the idle
    // timeout is then counted here.
    let eof = a.stop_on_eof.then(stdin_eof);
    let poll = Duration::from_millis(100);
    if eof.is_some() {
        socket.set_read_timeout(Some(poll))?;
    }
    let mut last = Instant::now();
    loop {
        match socket.recv_from(&mut buf) {
            Ok((n, _)) => {
                if first {
                    first = false;
                    if eof.is_none() {
                        socket.set_read_timeout(timeout)?;
                    }
                }
                last = Instant::now();
                c.push(&buf[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if let Some(done) = &eof {
                    if done.load(Ordering::Acquire) {
                        eprintln!(
                            "loxo collect: end of input and 100 ms without a datagram, stopping"
                        );
                        break;
                    }
                    if first || timeout.is_none_or(|t| last.elapsed() < t) {
                        continue;
                    }
                }
                eprintln!(
                    "loxo collect: no datagram for {} s, stopping",
                    a.timeout.unwrap_or_default()
                );
                break;
            }
            // An ICMP error of an earlier send, or a signal: not the senders' fault.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e).context("cannot receive"),
        }
        out.flush(&mut c);
        if a.epochs.is_some_and(|n| c.closed_epochs() >= n) {
            break;
        }
    }
    c.finish();
    out.flush(&mut c);
    summary(&c)
}

/// Prints the datagram and error counts; success when no error was counted.
fn summary(c: &Collector) -> anyhow::Result<ExitCode> {
    let (datagrams, discarded) = c.datagrams();
    let errors = c.error_count();
    let mut line = format!(
        "{datagrams} datagrams ({discarded} chunks of dropped frames discarded), {errors} errors"
    );
    if errors > 0 {
        let kinds: Vec<String> = c
            .error_counts()
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        write!(line, ": {}", kinds.join(", "))?;
    }
    println!("{line}");
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
