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
//! # Who is merged: keys, sequence numbers, the fleet's fingerprint
//!
//! Every datagram carries its device id, its epoch, a per-device sequence number and
//! a MAC under the device's export key ([`loxo_control::datagram`]). With `--keys
//! FILE` (device id → key, and the fleet's seed fingerprint: the format is in
//! [`Keys`]) the collector merges only what passes, in this order, and counts what
//! does not by reason, never merging it: a device the file does not list ("unknown
//! device"), a MAC that does not verify under that device's key ("bad MAC"), a
//! sequence number the device already used or older than its window of
//! [`WINDOW`] ("replayed or old sequence number"). A skipped sequence number is a
//! datagram lost in transit, reported per device at the end.
//!
//! Merging also requires equal hash seeds. The collector does not know the seed: it
//! reads frames with seed-less decoders and merges only frames whose seed fingerprint
//! is the fleet's — **configured** (`--fleet-seed-fingerprint`, or the keys file's
//! `fleet-seed-fingerprint` line), never learned from the traffic, so a sender of
//! another seed cannot lock the honest devices out. A frame of another fingerprint is
//! written to its device file, reported and counted ("seed mismatch"), never merged.
//!
//! Without `--keys` the collector refuses to start, unless told `--insecure-no-auth`:
//! then it checks no MAC and no sequence number, takes any device id, and (without
//! `--fleet-seed-fingerprint`) takes the first fingerprint it decodes as the fleet's —
//! anyone who can send it a datagram can add flows to the fleet's figures or, first,
//! have the honest devices' frames refused. Only for a network where every sender is
//! trusted. `--allow-from PREFIXES` refuses datagrams of other source addresses before
//! they are read (counted, "sender not allowed"): no authentication (a source address
//! can be spoofed) but a cheap first filter. IPFIX, the firmware's other export, has no
//! integrity of its own over UDP (RFC 7011 §11 leaves it to DTLS): restrict its
//! exporters by address and keep it on a network you trust.
//!
//! # Memory: what is held, and its bounds
//!
//! A flows frame is merged into its epoch's fleet HLL **as soon as it is decoded**
//! (and, with `--out`, written then): the collector keeps one HLL per open epoch, not
//! one per device — the decoded per-device `Hll<18>` (192 KiB of registers) and the
//! frame as received (another 192 KiB) were what a device-epoch cost before: 426 633
//! bytes measured, with its top-k frame and decoded summary. A top-k frame is kept as
//! received (≤ 14 900 bytes, the compact form: its decoded `SpaceSaving` is larger)
//! and decoded again, one at a time, into the fleet merge when the epoch is
//! finalized. So the state is at most
//!
//! * [`DEVICE_EPOCH_BYTES`] (15 236 bytes on a 64-bit host) per (device, open epoch),
//! * one fleet HLL per open epoch (`0.75 · 2^P + 296` bytes: 12 584 at `P = 14`,
//!   196 904 at `P = 18`) plus [`EPOCH_BYTES`],
//! * [`DEVICE_BYTES`] per device, `max_partial · 196 660` bytes of frames in
//!   reassembly, and the messages and finalized epochs not yet taken
//!   ([`FINALIZED_DEVICE_BYTES`] per device: the fleet list; finalizing also takes,
//!   for a moment, one merge cell per flow the devices list),
//!
//! which [`Collector::memory_bytes`] accounts as it goes (`tests/collect_memory.rs`
//! checks it against the heap the collector really holds, and the figures above). Every
//! [`Limits`] field is a hard limit (`--max-devices`, `--max-open-epochs`,
//! `--max-memory`): what would pass it is refused and counted, never buffered — except
//! that a newer epoch makes room by finalizing the oldest open ones (their missing
//! frames counted, naming the limit), so the collector keeps up with its devices.
//!
//! # Losses: counted, never silent
//!
//! Chunks must arrive in order (the firmware sends them so; UDP on one link rarely
//! reorders): a chunk missing from a frame shows as a gap in the offsets. A chunk out
//! of order, a duplicate chunk, a total that changes, or a total above the largest
//! frame of its stream ([`max_frame`]: 196 660 bytes for an HLL of precision 18, 14 900
//! for the top-k; never more than [`MAX_SKETCH`](crate::chunks::MAX_SKETCH), 16 MiB)
//! drops that frame with a counted error; later chunks of a dropped frame are
//! discarded silently. A frame still missing or incomplete when its epoch is finalized
//! is counted, and so are the frames of epochs a device skipped when no device's
//! datagram opened them (a whole epoch lost); [`Collector::losses`] sums these per
//! device. With keys, each datagram's sequence number also tells a datagram lost in
//! transit ([`Collector::datagram_losses`]), even one a reordering would hide.
//! Datagrams that never reach the collector's reading are counted too: the socket asks
//! for an 8 MiB receive buffer (`--recv-buffer`; Linux grants up to
//! `net.core.rmem_max`), a thread drains it into a queue of [`RECV_QUEUE`] datagrams
//! while the main thread decodes and writes, and the kernel's count of datagrams it
//! dropped on the socket (`/proc/net/udp`, Linux) is read every second and at the end.
//!
//! An epoch is **closed** when every device seen (since that epoch) has delivered or
//! lost both its frames of it (and at least [`Limits::min_devices`] devices did); it is **finalized** (printed, written, exported,
//! freed) once it is closed and every such device has sent something of a later
//! epoch, when more than [`Limits::max_open_epochs`] epochs are open (the oldest
//! goes), or when the collector stops. A datagram of a finalized epoch is a counted
//! error ("late"). Malformed datagrams, corrupt frames (the frame's CRC-32) and seed
//! or precision mismatches are counted too; nothing a sender does panics the
//! collector.
//!
//! # The command
//!
//! `loxo collect --listen 127.0.0.1:4740 --keys FILE [--allow-from PREFIXES] [--out DIR]
//! [--redis HOST:PORT] [--epochs N] [--devices N] [--timeout SECS]` prints, per epoch, the devices seen, the fleet distinct-flow
//! estimate and the fleet top flows; with `--out` it writes
//! `DIR/epoch-<n>/device-<d>.flows.loxo`, `…/device-<d>.topk.loxo` (the frames as
//! received, on arrival) and `DIR/epoch-<n>/fleet.flows.loxo` (the merged HLL under the
//! fleet's fingerprint, when the epoch is finalized; all readable by `loxo inspect`),
//! at most `--out-max-bytes` (1 GiB) of them at once: the oldest finalized epochs'
//! files are removed to make room ([`OutDir`]); with `--redis` it `PFMERGE`s each
//! epoch's fleet HLL into the key `loxo:flows:epoch:<n>` (through a temporary key
//! `loxo:flows:epoch:<n>:incoming`, so an existing key, e.g. another collector's,
//! is merged into rather than overwritten); with `--redis-cluster NODES` it shares the
//! fleet with other collectors in a Redis Cluster ([`cluster`]: every frame stored on
//! arrival, flows `PFMERGE`d; [`cluster_relay`]: a frame's chunks may reach different
//! collectors; [`cluster_read`]: `loxo fleet` prints each epoch as one collector
//! would). It stops after `--epochs N` closed epochs
//! or after `--timeout` seconds without a datagram, and exits non-zero if any error
//! was counted; the summary line counts the errors by reason, the lines after it the
//! frames and the datagrams lost in transit per device. "Every device seen" is all a collector can know of the fleet: a
//! device whose first datagram arrives after the others closed the last epoch is not
//! waited for (and one after the epoch was finalized is late), so give `--devices N`
//! when the fleet's size is known.
//!
//! The files follow the data: `socket.rs` (the socket, its receive thread and drop
//! counts), `allow.rs` (`--allow-from`), `auth.rs` (the keys and replay windows),
//! `reassembly.rs` (the [`Collector`] state machine), `limits.rs` (its
//! bounds, costs and error kinds), `fleet.rs` (an epoch's fleet figures), `output.rs`
//! (the text printed, the files written), `out_dir.rs` (the capped `--out`),
//! `redis.rs` (the export), `cluster.rs`, `cluster_relay.rs` and `cluster_read.rs` (the
//! Redis Cluster) and this one (the command's loop).
//!
//! ```
//! use loxo_cli::collect::{Collector, ErrorKind, Keys, Limits, Sender};
//! use loxo_control::datagram::{ExportKey, Stream};
//! use loxo_core::Seed;
//! use loxo_hll::Hll;
//!
//! let seed = Seed::new(1, 2);
//! let key = |d: u32| ExportKey::from_bytes([d as u8; 16]);
//! let keys = Keys::new(seed.fingerprint()).with(1, key(1)).with(2, key(2));
//! let mut c = Collector::new(Limits::default(), keys);
//! for device in [1, 2] {
//!     let mut sender = Sender::new(device, key(device), 0);
//!     let mut hll = Hll::<14>::new(seed);
//!     for i in 0..1000u32 {
//!         hll.insert(&(i + device * 500).to_le_bytes());
//!     }
//!     let mut frame = vec![0u8; hll.encoded_len()];
//!     let n = hll.encode_into(&mut frame)?;
//!     for d in sender.datagrams(Stream::Flows, 0, &frame[..n]) {
//!         c.push(&d);
//!     }
//! }
//! // A replayed datagram is refused.
//! let again = Sender::new(1, key(1), 0).datagrams(Stream::Flows, 0, &[0; 40]);
//! c.push(&again[0]);
//! c.finish(); // no top-k frames were sent: counted as incomplete
//! let epoch = c.take_finalized().remove(0);
//! let fleet = epoch.flows.unwrap().estimate();
//! // Keys 500..2000: within 4σ, σ = 1.04/√16384 ≈ 0.81 %.
//! assert!((fleet - 1500.0).abs() < 1500.0 * 4.0 * 0.0081, "{fleet}");
//! assert_eq!(c.error_count(), 3);
//! assert_eq!(c.error_counts()[&ErrorKind::Replay], 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod allow;
mod auth;
pub mod cluster;
pub mod cluster_read;
pub mod cluster_relay;
mod fleet;
mod limits;
mod out_dir;
mod output;
mod reassembly;
mod redis;
mod socket;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use loxo_cms::SpaceSaving;
use loxo_control::datagram::{ExportKey, SketchDatagram, Stream, DATAGRAM_MAX};
use loxo_core::wire::frame_len;
use loxo_flow::FlowKey;

use crate::resp::Client;
use output::Output;

pub use allow::AllowFrom;
pub use auth::{parse_fingerprint, Keys, KEY_BYTES, MAX_KEYS, WINDOW};
pub use cluster::ClusterSink;
pub use cluster_read::{ClusterEpoch, FleetArgs};
pub use fleet::{combine_top, decode_topk, DeviceFrame, DeviceTop, EpochSummary, FleetEntry};
pub use limits::{
    ErrorKind, Limits, COLLECTOR_BYTES, DEVICE_BYTES, DEVICE_EPOCH_BYTES, EPOCH_BYTES,
    FINALIZED_DEVICE_BYTES, MESSAGE_BYTES,
};
pub use out_dir::{OutDir, DEFAULT_OUT_MAX_BYTES};
pub use output::describe;
pub use reassembly::{Collector, ReceivedFrame};
pub use redis::redis_hyll;
pub use socket::{DEFAULT_RECV_BUFFER, RECV_QUEUE};

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

/// A device's side of the export, for tests and tools: it numbers its datagrams as
/// the sample firmware does (`boot << 32 | n`, `n` from 0) and signs each under its
/// key.
#[derive(Clone, Debug)]
pub struct Sender {
    device: u32,
    key: ExportKey,
    next: u64,
}

impl Sender {
    /// Device `device` with `key`, at boot number `boot`.
    #[must_use]
    pub const fn new(device: u32, key: ExportKey, boot: u32) -> Self {
        Self {
            device,
            key,
            next: (boot as u64) << 32,
        }
    }

    /// The sequence number of the next datagram.
    #[must_use]
    pub const fn next_seq(&self) -> u64 {
        self.next
    }

    /// Skips `n` sequence numbers (datagrams "lost").
    pub const fn skip(&mut self, n: u64) {
        self.next = self.next.saturating_add(n);
    }

    /// `d` (of any device: a test's forgery) numbered as this sender's next datagram
    /// and signed under its key; `None` when `d` cannot be emitted (a chunk past
    /// its total).
    pub fn sign(&mut self, d: &SketchDatagram<'_>) -> Option<Vec<u8>> {
        let mut buf = [0u8; DATAGRAM_MAX];
        let d = SketchDatagram {
            seq: self.next,
            ..*d
        };
        let n = d.emit(&self.key, &mut buf).ok()?;
        self.next += 1;
        buf.get(..n).map(<[u8]>::to_vec)
    }

    /// The datagrams for `frame` of `(stream, epoch)`, each a whole UDP payload:
    /// [`SketchDatagram::chunks`], numbered and signed (every chunk fits in
    /// [`DATAGRAM_MAX`] bytes, so none is left out).
    pub fn datagrams(&mut self, stream: Stream, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
        SketchDatagram::chunks(stream, self.device, epoch, frame)
            .filter_map(|d| self.sign(&d))
            .collect()
    }
}

/// Options of `loxo collect`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Keys file (--keys): one `DEVICE KEY` line per device (id, 32 hex digits:
the firmware's LOXO_EXPORT_KEY) and a `fleet-seed-fingerprint HEX` line; # comments.

Examples:
  loxo collect --listen 0.0.0.0:4740 --keys fleet.keys --out collected --devices 2
  loxo collect --listen 127.0.0.1:4740 --keys fleet.keys --allow-from 10.0.2.0/24 \\
      --redis 127.0.0.1:6379 --epochs 3 --timeout 30
  loxo collect --listen 0.0.0.0:4740 --keys fleet.keys --redis-cluster 127.0.0.1:7000"
)]
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
    /// Share the fleet with other collectors in this Redis Cluster (`host:port` of
    /// any of its nodes, comma-separated): every frame decoded is stored there, flows
    /// `PFMERGE`d into `loxo:{fleet:<n>}:flows`; `loxo fleet` reads the fleet back.
    /// Needs `--seed-fingerprint`; `--devices` does not apply (a device's frames may
    /// go to another collector).
    #[arg(long, value_name = "HOST:PORT,...", value_delimiter = ',')]
    pub redis_cluster: Vec<String>,
    /// Seconds an epoch's keys live in the Redis Cluster after its last frame came.
    #[arg(long, value_name = "SECS", default_value_t = cluster::DEFAULT_TTL)]
    pub redis_ttl: u64,
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
    /// The devices' export keys and the fleet's seed fingerprint (`DEVICE KEY` and
    /// `fleet-seed-fingerprint HEX` lines): only their authenticated, fresh datagrams
    /// are merged.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "insecure_no_auth"
    )]
    pub keys: Option<PathBuf>,
    /// The fleet's seed fingerprint (16 hex digits, as `loxo inspect` prints it);
    /// overrides the keys file's. Without keys and without it, the first one received
    /// (insecure).
    #[arg(long, value_name = "HEX", alias = "seed-fingerprint", value_parser = parse_fingerprint)]
    pub fleet_seed_fingerprint: Option<u64>,
    /// Take datagrams without authentication: no MAC or sequence number checked, any
    /// device id merged, and without --fleet-seed-fingerprint the first sender's
    /// fingerprint is the fleet's. Anyone who can reach the port can falsify the
    /// fleet's figures: only on a network where every sender is trusted.
    #[arg(long, conflicts_with = "keys")]
    pub insecure_no_auth: bool,
    /// Take datagrams only from these source addresses (comma-separated `ADDR` or
    /// `ADDR/LEN`, IPv4 or IPv6); others are counted and dropped unread. Not
    /// authentication (addresses can be spoofed): a first filter.
    #[arg(long, value_name = "PREFIXES", value_parser = AllowFrom::parse)]
    pub allow_from: Option<AllowFrom>,
    /// Devices tracked at most; datagrams of more are refused and counted.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = at_least_one)]
    pub max_devices: usize,
    /// Epochs open at most; one more finalizes the oldest (its missing frames are
    /// counted).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = at_least_one)]
    pub max_open_epochs: usize,
    /// Bytes of state at most (frames in reassembly, fleet HLLs, kept top-k frames;
    /// suffixes K, M, G: binary); what would pass it is refused and counted.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = byte_size)]
    pub max_memory: u64,
    /// Bytes of files `--out` holds at once (suffixes K, M, G); the oldest finalized
    /// epochs' files are removed to make room, and a file that still does not fit is
    /// not written (counted).
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = byte_size)]
    pub out_max_bytes: u64,
    /// Receive buffer asked of the kernel (`SO_RCVBUF`; suffixes K, M, G). Linux
    /// grants at most `net.core.rmem_max`; the size granted is printed.
    #[arg(long, value_name = "BYTES", default_value = "8M", value_parser = byte_size)]
    pub recv_buffer: u64,
}

/// A count of at least 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// A size in bytes: digits, then optionally `K`, `M` or `G` (×1024, ×1024², ×1024³;
/// `KiB`, `MiB`, `GiB` alike).
///
/// # Errors
/// Anything else, or a size past `u64`.
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "KiB" | "k" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        _ => {
            return Err(format!(
                "{s:?}: a number of bytes, with K, M or G (binary) if you like"
            ))
        }
    };
    n.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{s:?}: a number of bytes, with K, M or G (binary) if you like"))
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
    let limits = Limits {
        min_devices: a.devices,
        max_devices: a.max_devices,
        max_open_epochs: a.max_open_epochs,
        max_bytes: usize::try_from(a.max_memory).unwrap_or(usize::MAX),
        ..Limits::default()
    };
    let (mut c, auth_note, mut sink) = collector(a, limits)?;
    let timeout = match a.timeout {
        Some(t) if !(t > 0.0 && t.is_finite()) => {
            bail!("--timeout must be a positive number of seconds")
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let asked = usize::try_from(a.recv_buffer).unwrap_or(usize::MAX);
    let (socket, granted) = socket::bind(&a.listen, asked)?;
    let mut redis = a.redis.as_deref().map(Client::connect).transpose()?;
    eprintln!("loxo collect: listening on {}", socket.local_addr()?);
    eprintln!("loxo collect: {auth_note}");
    // Linux reports twice the size asked (its bookkeeping share included).
    let short = if granted < asked {
        " (less than asked: the kernel's limit, e.g. net.core.rmem_max)"
    } else {
        ""
    };
    eprintln!("loxo collect: receive buffer {granted} bytes, {asked} asked{short}");
    let mut rx = socket::Datagrams::start(socket, a.allow_from.clone())?;
    let mut out = Output {
        dir: a.out.as_deref().map(|d| OutDir::new(d, a.out_max_bytes)),
        redis: redis.as_mut(),
        cluster: sink.as_mut(),
        top: a.top,
    };
    let eof = a.stop_on_eof.then(stdin_eof);
    // The loop wakes up every 100 ms to look at stdin, the idle timeout (counted from
    // the first datagram on: a collector started before its devices waits for them)
    // and, every second, the datagrams dropped unread.
    let poll = Duration::from_millis(100);
    let (mut first, mut last, mut drops_read) = (true, Instant::now(), Instant::now());
    loop {
        if let Some(d) = rx.next(poll)? {
            first = false;
            last = Instant::now();
            match out.cluster.as_deref_mut() {
                Some(sink) => sink.push(&mut c, &d),
                None => c.push(&d),
            }
        } else {
            if eof
                .as_ref()
                .is_some_and(|done| done.load(Ordering::Acquire))
            {
                eprintln!("loxo collect: end of input and 100 ms without a datagram, stopping");
                break;
            }
            if !first && timeout.is_some_and(|t| last.elapsed() >= t) {
                eprintln!(
                    "loxo collect: no datagram for {} s, stopping",
                    a.timeout.unwrap_or_default()
                );
                break;
            }
        }
        if drops_read.elapsed() >= Duration::from_secs(1) {
            drops_read = Instant::now();
            rx.count_drops(&mut c, granted);
        }
        out.flush(&mut c);
        if a.epochs.is_some_and(|n| c.closed_epochs() >= n) {
            break;
        }
    }
    rx.stop();
    rx.count_drops(&mut c, granted);
    c.finish();
    out.flush(&mut c);
    if let Some(s) = &sink {
        let (stored, merged) = s.counts();
        let r = s.relay_counts();
        println!(
            "redis cluster: {stored} frames stored, {merged} flows frames PFMERGEd; {} chunks relayed, {} frames completed here",
            r.relayed, r.completed
        );
    }
    summary(&c)
}

/// The collector `a` asks for: authenticated with `--keys` (or not, with
/// `--insecure-no-auth`), sharing a Redis Cluster with `--redis-cluster`; with the
/// line that says how it authenticates, and the cluster's connection.
fn collector(a: &Args, limits: Limits) -> anyhow::Result<(Collector, String, Option<ClusterSink>)> {
    let auth_note;
    let fingerprint;
    let mut c = match (&a.keys, a.insecure_no_auth) {
        (Some(path), false) => {
            let keys = Keys::load(path, a.fleet_seed_fingerprint)?;
            auth_note = format!(
                "{} device keys, fleet seed fingerprint {:016x}",
                keys.len(),
                keys.fingerprint()
            );
            fingerprint = Some(keys.fingerprint());
            Collector::new(limits, keys)
        }
        (None, true) => {
            auth_note =
                "--insecure-no-auth: datagrams are not authenticated, any sender's are merged"
                    .to_owned();
            fingerprint = a.fleet_seed_fingerprint;
            let c = Collector::insecure(limits);
            match a.fleet_seed_fingerprint {
                Some(fp) => c.with_fingerprint(fp),
                None => c,
            }
        }
        _ => bail!(
            "give --keys FILE (or, on a network where every sender is trusted, --insecure-no-auth)"
        ),
    };
    let shared = !a.redis_cluster.is_empty();
    if a.out.is_some() || shared {
        c = c.with_frame_output();
    }
    let mut sink = None;
    if shared {
        let Some(fp) = fingerprint else {
            bail!("--redis-cluster needs the fleet's seed fingerprint (--keys, or --fleet-seed-fingerprint): the collectors of a fleet must agree on it before any datagram comes")
        };
        c = c.shared();
        sink = Some(ClusterSink::connect(&a.redis_cluster, fp, a.redis_ttl)?);
    }
    Ok((c, auth_note, sink))
}

/// Prints the datagram and error counts, and the frames lost per device; success when
/// no error was counted.
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
    if !c.losses().is_empty() {
        let per: Vec<String> = c
            .losses()
            .iter()
            .map(|(d, n)| format!("device {d}: {n}"))
            .collect();
        println!("frames lost in transit: {}", per.join(", "));
    }
    let gaps = c.datagram_losses();
    if !gaps.is_empty() {
        let per: Vec<String> = gaps
            .iter()
            .map(|(d, n)| format!("device {d}: {n}"))
            .collect();
        println!(
            "datagrams lost in transit (sequence gaps): {}",
            per.join(", ")
        );
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
