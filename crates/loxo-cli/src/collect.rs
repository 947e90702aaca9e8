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
//! * **fleet top flows**: `loxo-cms` has no Space-Saving merge, so the collector
//!   combines the devices' candidate lists with bounds that hold deterministically.
//!   For a key on the lists of devices `L` (out of the merged devices `A`), with
//!   device `i`'s entry `(countᵢ, errorᵢ)` and smallest monitored count `mᵢ` (0 when
//!   its summary is not full): `count = Σ_{i∈L} countᵢ`, `lower = Σ_{i∈L} (countᵢ −
//!   errorᵢ)`, `upper = count + Σ_{i∈A∖L} mᵢ` (a key absent from a full summary
//!   weighs at most its minimum there, Metwally et al., Lemma 3). A flow on no list
//!   weighs at most `Σ mᵢ` fleet-wide, printed as the "unlisted" bound. The ranking
//!   by `count` is an estimate (a flow spread thinly over many devices can rank
//!   lower than its weight); the bounds always contain the truth.
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
//! ```
//! use loxo_cli::collect::{Collector, Limits};
//! use loxo_control::datagram::{SketchDatagram, Stream, DATAGRAM_MAX};
//! use loxo_core::Seed;
//! use loxo_hll::Hll;
//!
//! let seed = Seed::new(1, 2);
//! let mut c = Collector::new(Limits::default());
//! let mut buf = [0u8; DATAGRAM_MAX];
//! for device in [1, 2] {
//!     let mut hll = Hll::<14>::new(seed);
//!     for i in 0..1000u32 {
//!         hll.insert(&(i + device * 500).to_le_bytes());
//!     }
//!     let mut frame = vec![0u8; hll.encoded_len()];
//!     let n = hll.encode_into(&mut frame)?;
//!     for d in SketchDatagram::chunks(Stream::Flows, device, 0, &frame[..n]) {
//!         let len = d.emit(&mut buf)?;
//!         c.push(&buf[..len]);
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

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use loxo_cms::{SpaceSaving, TopK};
use loxo_control::datagram::{SketchDatagram, Stream};
use loxo_core::wire::{frame_len, Encoder, Frame, Header, SketchKind};
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_hll::Hll;
use loxo_interop::redis::{RedisHll, DENSE_LEN};

use crate::resp::{Client, Reply};
use crate::sketch::AnyHll;

/// Candidates of a device's top-k summary (the monitor's default).
pub const TOP_N: usize = loxo_flow::DEFAULT_CANDIDATES;
/// Wire bytes of a [`FlowKey`] in a top-k frame.
pub const KEY_WIRE_LEN: usize = 38;
/// A device's top-k summary as the firmware ships it.
pub type TopSummary = SpaceSaving<FlowKey, TOP_N>;

/// Placeholder seed of the top-k summaries decoded without their seed: they are only
/// read, never updated (see [`decode_topk`]).
const COLLECTOR_SEED: Seed = Seed::new(0, 0);

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

/// Bounds on what a [`Collector`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Frames being reassembled at once; a new frame past it is refused.
    pub max_partial: usize,
    /// Devices tracked; datagrams of further devices are refused.
    pub max_devices: usize,
    /// Epochs open at once; opening one more finalizes the oldest.
    pub max_open_epochs: usize,
    /// Error messages kept until [`Collector::take_messages`] (errors past it are
    /// still counted).
    pub max_messages: usize,
    /// Devices an epoch needs before it can close (0 or 1: any device seen).
    pub min_devices: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_partial: 64,
            max_devices: 1024,
            max_open_epochs: 8,
            max_messages: 1024,
            min_devices: 0,
        }
    }
}

/// What went wrong, for the error counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not a sketch datagram, or a malformed one.
    Datagram,
    /// A chunk out of order or duplicated, or a total that changed: the frame is dropped.
    Sequence,
    /// A frame announced larger than its stream's [`max_frame`].
    TooLarge,
    /// A limit of [`Limits`] reached.
    Capacity,
    /// A reassembled frame that does not decode (corrupt, wrong kind or geometry).
    Frame,
    /// A frame whose seed fingerprint is not the fleet's: not merged.
    Seed,
    /// An HLL whose precision differs from the fleet's: not merged.
    Geometry,
    /// A chunk of a frame already received.
    Duplicate,
    /// A datagram of an epoch already finalized.
    Late,
    /// A frame missing or incomplete when its epoch was finalized.
    Incomplete,
    /// Writing a file or exporting to Redis failed.
    Output,
}

impl ErrorKind {
    /// A short lower-case name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Datagram => "malformed datagram",
            Self::Sequence => "out-of-order or duplicate chunk",
            Self::TooLarge => "frame too large",
            Self::Capacity => "limit reached",
            Self::Frame => "undecodable frame",
            Self::Seed => "seed mismatch",
            Self::Geometry => "precision mismatch",
            Self::Duplicate => "frame received twice",
            Self::Late => "late datagram",
            Self::Incomplete => "incomplete frame",
            Self::Output => "output failed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoded sketch.
#[derive(Clone, Debug)]
enum Sketch {
    Flows(AnyHll),
    TopK(Box<TopSummary>),
}

/// The state of one `(device, stream)` frame of an epoch.
#[derive(Clone, Debug)]
enum Slot {
    Partial {
        total: usize,
        buf: Vec<u8>,
    },
    Failed,
    Done {
        bytes: Vec<u8>,
        fingerprint: u64,
        sketch: Sketch,
    },
}

impl Slot {
    const fn is_final(&self) -> bool {
        !matches!(self, Self::Partial { .. })
    }
}

/// The first and last epoch a device sent something of.
#[derive(Clone, Copy, Debug)]
struct Seen {
    first: u32,
    last: u32,
}

/// One frame a device delivered in an epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFrame {
    /// The device.
    pub device: u32,
    /// Which sketch.
    pub stream: Stream,
    /// The loxo wire frame as received.
    pub bytes: Vec<u8>,
    /// Its seed fingerprint.
    pub fingerprint: u64,
    /// Merged into the fleet figures.
    pub merged: bool,
}

/// One flow of the fleet top-k, with bounds on its fleet-wide weight `f` (in the
/// devices' ranking measure): `lower ≤ f ≤ upper`, always.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetEntry {
    /// The flow.
    pub key: FlowKey,
    /// Sum of the devices' counts (an estimate, `lower ≤ count ≤ upper`).
    pub count: u64,
    /// Sum of the devices' `count − error`.
    pub lower: u64,
    /// `count` plus the minimum count of every merged summary not listing the flow.
    pub upper: u64,
    /// Devices whose list has the flow.
    pub devices: u32,
}

/// An epoch's fleet figures and the frames behind them.
#[derive(Clone, Debug)]
pub struct EpochSummary {
    /// The epoch.
    pub epoch: u32,
    /// Every frame received and decoded, by device then stream.
    pub frames: Vec<DeviceFrame>,
    /// The fleet's seed fingerprint (that of the merged frames).
    pub fingerprint: Option<u64>,
    /// The merged distinct-flow sketch (`None` if no flows frame merged).
    pub flows: Option<AnyHll>,
    /// Devices whose flows frame is in [`flows`](Self::flows).
    pub flows_devices: Vec<u32>,
    /// The fleet top flows, by `count` descending (ties: key order).
    pub top: Vec<FleetEntry>,
    /// Devices whose top-k frame is in [`top`](Self::top).
    pub top_devices: Vec<u32>,
    /// Sum of the merged summaries' stream totals.
    pub top_total: u64,
    /// A flow on no merged list weighs at most this fleet-wide (`Σ mᵢ`).
    pub unlisted_upper: u64,
}

impl EpochSummary {
    /// Devices with at least one decoded frame.
    #[must_use]
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.frames.iter().map(|f| f.device).collect();
        d.dedup();
        d
    }

    /// The merged HLL encoded under the fleet's fingerprint.
    #[must_use]
    pub fn encode_flows(&self) -> Option<Vec<u8>> {
        Some(self.flows.as_ref()?.encode(self.fingerprint?))
    }
}

/// Reassembles, decodes and merges sketch datagrams; no I/O (see the module doc).
#[derive(Debug)]
pub struct Collector {
    limits: Limits,
    fingerprint: Option<u64>,
    epochs: BTreeMap<u32, BTreeMap<(u32, Stream), Slot>>,
    devices: BTreeMap<u32, Seen>,
    partial: usize,
    /// Every epoch up to this one is finalized.
    finalized_to: Option<u32>,
    /// Finalized epochs that were closed (not forced out by the open-epoch limit).
    closed_finalized: u64,
    done: Vec<EpochSummary>,
    counts: BTreeMap<ErrorKind, u64>,
    messages: Vec<String>,
    datagrams: u64,
    discarded: u64,
}

impl Collector {
    /// An empty collector.
    #[must_use]
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            fingerprint: None,
            epochs: BTreeMap::new(),
            devices: BTreeMap::new(),
            partial: 0,
            finalized_to: None,
            closed_finalized: 0,
            done: Vec::new(),
            counts: BTreeMap::new(),
            messages: Vec::new(),
            datagrams: 0,
            discarded: 0,
        }
    }

    /// Fixes the fleet's seed fingerprint instead of taking the first one decoded.
    #[must_use]
    pub const fn with_fingerprint(mut self, fingerprint: u64) -> Self {
        self.fingerprint = Some(fingerprint);
        self
    }

    /// The fleet's seed fingerprint, once known.
    #[must_use]
    pub const fn fingerprint(&self) -> Option<u64> {
        self.fingerprint
    }

    /// Takes one datagram (a whole UDP payload).
    pub fn push(&mut self, bytes: &[u8]) {
        self.datagrams += 1;
        let d = match SketchDatagram::parse(bytes) {
            Ok(d) => d,
            Err(e) => {
                let n = self.datagrams;
                return self.fail(
                    ErrorKind::Datagram,
                    format!("datagram {n} ({} bytes): {e}", bytes.len()),
                );
            }
        };
        let what = format!("device {} epoch {} {}", d.device, d.epoch, d.stream.name());
        if self.finalized_to.is_some_and(|e| d.epoch <= e) {
            return self.fail(
                ErrorKind::Late,
                format!("{what}: datagram after the epoch was finalized"),
            );
        }
        if !self.devices.contains_key(&d.device) && self.devices.len() >= self.limits.max_devices {
            let max = self.limits.max_devices;
            return self.fail(
                ErrorKind::Capacity,
                format!("{what}: already {max} devices, no more are tracked"),
            );
        }
        if !self.open_epoch(d.epoch) {
            return self.fail(
                ErrorKind::Capacity,
                format!(
                    "{what}: older than every open epoch while the limit of open epochs is reached"
                ),
            );
        }
        let seen = self.devices.entry(d.device).or_insert(Seen {
            first: d.epoch,
            last: d.epoch,
        });
        seen.first = seen.first.min(d.epoch);
        seen.last = seen.last.max(d.epoch);
        if let Some(completed) = self.add_chunk(&d, &what) {
            self.complete(&d, &what, completed);
        }
        self.advance();
    }

    /// Opens `epoch` if needed (finalizing the oldest open one at the limit); false if
    /// it cannot be opened.
    fn open_epoch(&mut self, epoch: u32) -> bool {
        if self.epochs.contains_key(&epoch) {
            return true;
        }
        if self.epochs.len() >= self.limits.max_open_epochs.max(1) {
            match self.epochs.first_key_value() {
                Some((&oldest, _)) if oldest < epoch => self.finalize_oldest(),
                _ => return false,
            }
        }
        self.epochs.insert(epoch, BTreeMap::new());
        true
    }

    /// Adds a chunk to its frame; returns the frame's bytes when it completes.
    fn add_chunk(&mut self, d: &SketchDatagram<'_>, what: &str) -> Option<Vec<u8>> {
        let (offset, total) = (d.offset as usize, d.total as usize);
        let max = max_frame(d.stream);
        let partial_full = self.partial >= self.limits.max_partial;
        let slots = self.epochs.get_mut(&d.epoch)?;
        let slot = slots.entry((d.device, d.stream));
        let mut error = None;
        match slot {
            std::collections::btree_map::Entry::Vacant(v) => {
                if total > max {
                    error = Some((
                        ErrorKind::TooLarge,
                        format!("{what}: frame of {total} bytes announced, at most {max}"),
                    ));
                } else if offset != 0 {
                    error = Some((
                        ErrorKind::Sequence,
                        format!("{what}: first chunk seen at offset {offset}, not 0"),
                    ));
                } else if d.data.len() == total {
                    // A one-chunk frame needs no reassembly buffer.
                    v.insert(Slot::Failed);
                    return Some(d.data.to_vec());
                } else if partial_full {
                    error = Some((
                        ErrorKind::Capacity,
                        format!(
                            "{what}: already {} frames incomplete, no more are buffered",
                            self.limits.max_partial
                        ),
                    ));
                }
                if error.is_some() {
                    v.insert(Slot::Failed);
                } else {
                    let mut buf = Vec::with_capacity(total);
                    buf.extend_from_slice(d.data);
                    v.insert(Slot::Partial { total, buf });
                    self.partial += 1;
                }
            }
            std::collections::btree_map::Entry::Occupied(mut o) => match o.get_mut() {
                Slot::Failed => self.discarded += 1,
                Slot::Done { .. } => {
                    error = Some((
                        ErrorKind::Duplicate,
                        format!("{what}: chunk at offset {offset} of a frame already received"),
                    ));
                }
                Slot::Partial { total: want, buf } => {
                    if offset != buf.len() || total != *want {
                        error = Some((
                            ErrorKind::Sequence,
                            format!(
                                "{what}: chunk at offset {offset} (total {total}), expected offset {} (total {want}): frame dropped",
                                buf.len()
                            ),
                        ));
                        o.insert(Slot::Failed);
                        self.partial -= 1;
                    } else {
                        buf.extend_from_slice(d.data);
                        if buf.len() == *want {
                            let bytes = std::mem::take(buf);
                            o.insert(Slot::Failed);
                            self.partial -= 1;
                            return Some(bytes);
                        }
                    }
                }
            },
        }
        if let Some((kind, msg)) = error {
            self.fail(kind, msg);
        }
        None
    }

    /// Decodes a reassembled frame into its slot (left `Failed` on error).
    fn complete(&mut self, d: &SketchDatagram<'_>, what: &str, bytes: Vec<u8>) {
        let decoded = match d.stream {
            Stream::Flows => AnyHll::decode(&bytes)
                .map(|(h, fp)| (fp, Sketch::Flows(h)))
                .map_err(|e| format!("{e:#}")),
            Stream::TopK => decode_topk(&bytes).map(|(fp, s)| (fp, Sketch::TopK(s))),
        };
        let (fingerprint, sketch) = match decoded {
            Ok(x) => x,
            Err(e) => return self.fail(ErrorKind::Frame, format!("{what}: {e}")),
        };
        match self.fingerprint {
            None => self.fingerprint = Some(fingerprint),
            Some(f) if f != fingerprint => self.fail(
                ErrorKind::Seed,
                format!("{what}: seed fingerprint {fingerprint:016x}, the fleet's is {f:016x}: not merged"),
            ),
            Some(_) => {}
        }
        if let Some(slot) = self
            .epochs
            .get_mut(&d.epoch)
            .and_then(|s| s.get_mut(&(d.device, d.stream)))
        {
            *slot = Slot::Done {
                bytes,
                fingerprint,
                sketch,
            };
        }
    }

    /// Devices that must deliver `epoch`: those seen at it or before.
    fn expected(&self, epoch: u32) -> impl Iterator<Item = (u32, Seen)> + '_ {
        self.devices
            .iter()
            .filter(move |(_, s)| s.first <= epoch)
            .map(|(&d, &s)| (d, s))
    }

    fn is_closed(&self, epoch: u32) -> bool {
        let Some(slots) = self.epochs.get(&epoch) else {
            return false;
        };
        if self.expected(epoch).count() < self.limits.min_devices {
            return false;
        }
        self.expected(epoch).all(|(d, _)| {
            [Stream::Flows, Stream::TopK]
                .iter()
                .all(|&s| slots.get(&(d, s)).is_some_and(Slot::is_final))
        })
    }

    /// Finalizes the oldest epochs while they are closed and every device moved on.
    fn advance(&mut self) {
        while let Some((&oldest, _)) = self.epochs.first_key_value() {
            let moved_on = self.expected(oldest).all(|(_, s)| s.last > oldest);
            if !(moved_on && self.is_closed(oldest)) {
                break;
            }
            self.finalize_oldest();
        }
    }

    /// Epochs closed so far (finalized or still open; not those the open-epoch limit
    /// forced out before they closed).
    #[must_use]
    pub fn closed_epochs(&self) -> u64 {
        let open = self.epochs.keys().filter(|&&e| self.is_closed(e)).count() as u64;
        self.closed_finalized + open
    }

    /// Finalizes every open epoch (missing and incomplete frames are counted).
    pub fn finish(&mut self) {
        while !self.epochs.is_empty() {
            self.finalize_oldest();
        }
    }

    /// The epochs finalized since the last call, oldest first.
    pub fn take_finalized(&mut self) -> Vec<EpochSummary> {
        std::mem::take(&mut self.done)
    }

    /// The error messages since the last call, oldest first.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }

    /// Records an error of the caller's (a file it could not write…).
    pub fn fail(&mut self, kind: ErrorKind, msg: String) {
        *self.counts.entry(kind).or_default() += 1;
        if self.messages.len() < self.limits.max_messages {
            self.messages.push(msg);
        }
    }

    /// Errors counted, by kind.
    #[must_use]
    pub const fn error_counts(&self) -> &BTreeMap<ErrorKind, u64> {
        &self.counts
    }

    /// Errors counted in all.
    #[must_use]
    pub fn error_count(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Datagrams taken, and chunks of dropped frames discarded without an error.
    #[must_use]
    pub const fn datagrams(&self) -> (u64, u64) {
        (self.datagrams, self.discarded)
    }

    fn finalize_oldest(&mut self) {
        let closed = self
            .epochs
            .first_key_value()
            .is_some_and(|(&e, _)| self.is_closed(e));
        let Some((epoch, slots)) = self.epochs.pop_first() else {
            return;
        };
        self.finalized_to = Some(epoch);
        self.closed_finalized += u64::from(closed);
        let expected: Vec<u32> = self.expected(epoch).map(|(d, _)| d).collect();
        for d in expected {
            for s in [Stream::Flows, Stream::TopK] {
                let msg = match slots.get(&(d, s)) {
                    None => "not received".to_owned(),
                    Some(Slot::Partial { total, buf }) => {
                        format!("incomplete ({} of {total} bytes)", buf.len())
                    }
                    Some(_) => continue,
                };
                self.fail(
                    ErrorKind::Incomplete,
                    format!("device {d} epoch {epoch} {}: {msg}", s.name()),
                );
            }
        }
        let mut summary = EpochSummary {
            epoch,
            frames: Vec::new(),
            fingerprint: self.fingerprint,
            flows: None,
            flows_devices: Vec::new(),
            top: Vec::new(),
            top_devices: Vec::new(),
            top_total: 0,
            unlisted_upper: 0,
        };
        let mut tops: Vec<(u32, Box<TopSummary>)> = Vec::new();
        for ((device, stream), slot) in slots {
            let Slot::Done {
                bytes,
                fingerprint,
                sketch,
            } = slot
            else {
                if matches!(slot, Slot::Partial { .. }) {
                    self.partial -= 1;
                }
                continue;
            };
            let mut merged = Some(fingerprint) == self.fingerprint;
            if merged {
                match sketch {
                    Sketch::Flows(h) => {
                        match &mut summary.flows {
                            None => summary.flows = Some(h),
                            Some(acc) => {
                                if let Err(e) = acc.merge(&h) {
                                    merged = false;
                                    self.fail(
                                    ErrorKind::Geometry,
                                    format!("device {device} epoch {epoch} flows: {e:#}: not merged"),
                                );
                                }
                            }
                        }
                    }
                    Sketch::TopK(t) => tops.push((device, t)),
                }
            }
            if merged {
                match stream {
                    Stream::Flows => summary.flows_devices.push(device),
                    Stream::TopK => summary.top_devices.push(device),
                }
            }
            summary.frames.push(DeviceFrame {
                device,
                stream,
                bytes,
                fingerprint,
                merged,
            });
        }
        let summaries: Vec<&TopSummary> = tops.iter().map(|(_, t)| &**t).collect();
        (summary.top, summary.top_total, summary.unlisted_upper) = combine_top(&summaries);
        self.done.push(summary);
    }
}

/// Combines Space-Saving summaries into fleet entries with deterministic bounds (see
/// the module doc); returns the entries by `count` descending, the summed total and
/// the bound on unlisted flows.
#[must_use]
pub fn combine_top(summaries: &[&TopSummary]) -> (Vec<FleetEntry>, u64, u64) {
    let mins: Vec<u64> = summaries.iter().map(|s| s.min_count()).collect();
    let all_min = mins.iter().fold(0u64, |a, &m| a.saturating_add(m));
    // key → (entry, Σ minimum of the summaries listing it)
    let mut acc: BTreeMap<FlowKey, (FleetEntry, u64)> = BTreeMap::new();
    for (s, &m) in summaries.iter().zip(&mins) {
        for e in s.entries() {
            let (f, listed_min) = acc.entry(e.key).or_insert((
                FleetEntry {
                    key: e.key,
                    count: 0,
                    lower: 0,
                    upper: 0,
                    devices: 0,
                },
                0,
            ));
            f.count = f.count.saturating_add(e.count);
            f.lower = f.lower.saturating_add(e.lower.unwrap_or(0));
            f.upper = f.upper.saturating_add(e.upper.unwrap_or(u64::MAX));
            f.devices += 1;
            *listed_min = listed_min.saturating_add(m);
        }
    }
    let mut out: Vec<FleetEntry> = acc
        .into_values()
        .map(|(mut f, listed_min)| {
            f.upper = f.upper.saturating_add(all_min.saturating_sub(listed_min));
            f
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.key.cmp(&b.key)));
    let total = summaries
        .iter()
        .fold(0u64, |a, s| a.saturating_add(s.total()));
    (out, total, all_min)
}

/// Decodes a top-k frame (`space-saving`, `N = 256`, 38-byte flow keys) made under any
/// seed; returns its seed fingerprint and the summary.
///
/// `SpaceSaving::decode_into` checks the frame's fingerprint against a seed the
/// collector does not have (and `loxo-cms` has no seed-less decoder), so the payload,
/// its CRC-32 verified by [`Frame::parse`], is re-signed under a placeholder seed and
/// decoded by `loxo-cms` itself: every other check (parameters, flags, key bytes,
/// `error ≤ count`, heap order, no key twice, counts within the total) is the crate's
/// own. The summary is only read, never updated (its hash tags are the device's).
///
/// # Errors
/// A message naming the first check that fails.
pub fn decode_topk(bytes: &[u8]) -> Result<(u64, Box<TopSummary>), String> {
    let frame = Frame::parse(bytes).map_err(|e| e.to_string())?;
    let h = *frame.header();
    if h.kind != SketchKind::SpaceSaving {
        return Err(format!(
            "a {} frame on the top-k stream, expected space-saving",
            h.kind.name()
        ));
    }
    if h.flags != 0 {
        return Err(format!("space-saving frame with flags {:#04x}", h.flags));
    }
    let payload = frame.payload();
    let mut buf = vec![0u8; frame_len(payload.len())];
    let header = Header::new(
        SketchKind::SpaceSaving,
        COLLECTOR_SEED.fingerprint(),
        h.params,
        h.payload_len,
    );
    let mut enc = Encoder::new(&mut buf, &header).map_err(|e| e.to_string())?;
    enc.put(payload);
    enc.finish();
    let mut s = Box::new(TopSummary::new());
    s.decode_into::<KEY_WIRE_LEN>(&COLLECTOR_SEED, &buf)
        .map_err(|e| format!("space-saving frame: {e}"))?;
    Ok((h.seed_fingerprint, s))
}

/// The Redis `HYLL` string (dense) of an `Hll<14>`: the registers converted exactly.
///
/// # Errors
/// An encoding error (none for a sketch of precision 14).
pub fn redis_hyll(hll: &Hll<14>) -> anyhow::Result<(RedisHll, Vec<u8>)> {
    let redis = RedisHll::from_hll(hll);
    let mut hyll = vec![0u8; DENSE_LEN];
    let n = redis.encode_dense_into(&mut hyll)?;
    hyll.truncate(n);
    Ok((redis, hyll))
}

/// `PFMERGE`s `hll` into `key` through `key:incoming`; returns `PFCOUNT key`.
fn export_redis(c: &mut Client, key: &str, hll: &Hll<14>) -> anyhow::Result<i64> {
    let (_, hyll) = redis_hyll(hll)?;
    let tmp = format!("{key}:incoming");
    for cmd in [
        &[&b"SET"[..], tmp.as_bytes(), &hyll][..],
        &[b"PFMERGE", key.as_bytes(), tmp.as_bytes()],
    ] {
        match c.checked(cmd)? {
            Reply::Status(s) if s == "OK" => {}
            r => bail!(
                "unexpected reply to {}: {r:?}",
                String::from_utf8_lossy(cmd[0])
            ),
        }
    }
    c.integer(&[b"DEL", tmp.as_bytes()])?;
    c.integer(&[b"PFCOUNT", key.as_bytes()])
}

/// Options of `loxo collect`.
#[derive(Debug, clap::Args)]
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
    /// Fleet top flows printed per epoch.
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub top: usize,
    /// The fleet's seed fingerprint (16 hex digits, as `loxo inspect` prints it);
    /// default: the first one received.
    #[arg(long, value_name = "HEX")]
    pub seed_fingerprint: Option<String>,
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
    loop {
        match socket.recv_from(&mut buf) {
            Ok((n, _)) => {
                if first {
                    first = false;
                    socket.set_read_timeout(timeout)?;
                }
                c.push(&buf[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
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

/// Where finalized epochs go.
struct Output<'a> {
    dir: Option<&'a Path>,
    redis: Option<&'a mut Client>,
    top: usize,
}

impl Output<'_> {
    /// Prints the collector's new errors, then reports, writes and exports its
    /// finalized epochs.
    fn flush(&mut self, c: &mut Collector) {
        for s in c.take_finalized() {
            print!("{}", describe(&s, self.top));
            if let Some(dir) = self.dir {
                if let Err(e) = write_epoch(dir, &s) {
                    c.fail(ErrorKind::Output, format!("epoch {}: {e:#}", s.epoch));
                }
            }
            if let (Some(client), Some(hll)) = (self.redis.as_deref_mut(), &s.flows) {
                let key = format!("loxo:flows:epoch:{}", s.epoch);
                let r = hll
                    .as_p14()
                    .context("Redis HyperLogLogs have precision 14")
                    .and_then(|h| export_redis(client, &key, h));
                match r {
                    Ok(n) => println!("  redis: PFMERGE {key}: PFCOUNT {n}"),
                    Err(e) => c.fail(ErrorKind::Output, format!("{key}: {e:#}")),
                }
            }
        }
        for m in c.take_messages() {
            eprintln!("loxo collect: error: {m}");
        }
    }
}

/// Writes an epoch's frames and its fleet HLL under `dir/epoch-<n>/`.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_epoch(dir: &Path, s: &EpochSummary) -> anyhow::Result<()> {
    let dir = dir.join(format!("epoch-{}", s.epoch));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let write = |name: String, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))
    };
    for f in &s.frames {
        write(
            format!("device-{}.{}.loxo", f.device, f.stream.name()),
            &f.bytes,
        )?;
    }
    if let Some(bytes) = s.encode_flows() {
        write("fleet.flows.loxo".to_owned(), &bytes)?;
    }
    Ok(())
}

/// The text `loxo collect` prints for an epoch.
#[must_use]
pub fn describe(s: &EpochSummary, top: usize) -> String {
    let list = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    let devices = s.devices();
    let _ = writeln!(
        out,
        "epoch {}: {} device(s): {}",
        s.epoch,
        devices.len(),
        list(&devices)
    );
    for f in s.frames.iter().filter(|f| !f.merged) {
        let _ = writeln!(
            out,
            "  device {} {}: seed fingerprint {:016x}, not merged",
            f.device,
            f.stream.name(),
            f.fingerprint
        );
    }
    match &s.flows {
        Some(h) => {
            let _ = writeln!(
                out,
                "  fleet distinct flows: {:.0} (relative standard error {:.2} %; devices {}; seed fingerprint {:016x})",
                h.estimate(),
                100.0 * h.relative_standard_error(),
                list(&s.flows_devices),
                s.fingerprint.unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(out, "  fleet distinct flows: no sketch merged");
        }
    }
    if s.top_devices.is_empty() {
        let _ = writeln!(out, "  fleet top flows: no summary merged");
        return out;
    }
    let _ = writeln!(
        out,
        "  fleet top flows (devices {}; total {}; count = sum of the devices' counts, f within [lower, upper]; any unlisted flow ≤ {}):",
        list(&s.top_devices),
        s.top_total,
        s.unlisted_upper
    );
    for (i, e) in s.top.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "  {:>3}. {}  count {} [{}, {}] on {} device(s)",
            i + 1,
            e.key,
            e.count,
            e.lower,
            e.upper,
            e.devices
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use loxo_control::datagram::DATAGRAM_MAX;

    const SEED: Seed = Seed::new(1, 2);

    fn key(i: u32) -> FlowKey {
        FlowKey::v4([10, 0, 0, 1], i.to_be_bytes(), 1000, 80, 6)
    }

    fn hll(from: u32, n: u32, seed: Seed) -> Vec<u8> {
        let mut h = Hll::<14>::new(seed);
        for i in from..from + n {
            h.insert(&i.to_le_bytes());
        }
        let mut buf = vec![0u8; h.encoded_len()];
        let n = h.encode_into(&mut buf).unwrap();
        buf.truncate(n);
        buf
    }

    fn topk(weights: &[(u32, u64)], seed: Seed) -> Vec<u8> {
        let mut s = Box::new(TopSummary::new());
        for &(k, w) in weights {
            let k = key(k);
            s.update(&k, k.hash_with(&seed), w);
        }
        let mut buf = vec![0u8; s.encoded_len::<KEY_WIRE_LEN>()];
        s.encode_into::<KEY_WIRE_LEN>(&seed, &mut buf).unwrap();
        buf
    }

    fn datagrams(stream: Stream, device: u32, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
        let mut buf = [0u8; DATAGRAM_MAX];
        SketchDatagram::chunks(stream, device, epoch, frame)
            .map(|d| {
                let n = d.emit(&mut buf).unwrap();
                buf[..n].to_vec()
            })
            .collect()
    }

    fn send(c: &mut Collector, stream: Stream, device: u32, epoch: u32, frame: &[u8]) {
        for d in datagrams(stream, device, epoch, frame) {
            c.push(&d);
        }
    }

    #[test]
    fn two_devices_merge_per_epoch() {
        let mut c = Collector::new(Limits::default());
        for epoch in 0..2 {
            send(&mut c, Stream::Flows, 1, epoch, &hll(0, 3000, SEED));
            send(
                &mut c,
                Stream::TopK,
                1,
                epoch,
                &topk(&[(1, 500), (2, 100)], SEED),
            );
            send(&mut c, Stream::Flows, 2, epoch, &hll(2000, 3000, SEED));
            send(
                &mut c,
                Stream::TopK,
                2,
                epoch,
                &topk(&[(1, 50), (3, 70)], SEED),
            );
        }
        assert_eq!(c.closed_epochs(), 2);
        // Epoch 0 is finalized as soon as both devices moved on.
        let first = c.take_finalized();
        assert_eq!(first.len(), 1);
        c.finish();
        assert_eq!(c.error_count(), 0, "{:?}", c.take_messages());
        let e = c.take_finalized().remove(0);
        assert_eq!((e.epoch, e.devices()), (1, vec![1, 2]));
        let est = e.flows.as_ref().unwrap().estimate();
        // 5000 distinct keys; σ = 1.04/√16384 ≈ 0.81 %, 4σ ≈ 3.3 %.
        assert!((est - 5000.0).abs() < 5000.0 * 4.0 * 1.04 / 128.0, "{est}");
        let mut want = Hll::<14>::new(SEED);
        for i in 0..5000u32 {
            want.insert(&i.to_le_bytes());
        }
        let mut back = Hll::<14>::new(SEED);
        back.decode_into(&e.encode_flows().unwrap()).unwrap();
        assert_eq!(back, want);
        // Nothing is full: counts are exact and the bounds tight.
        assert_eq!(e.top_total, 720);
        assert_eq!(e.unlisted_upper, 0);
        let t: Vec<_> = e
            .top
            .iter()
            .map(|f| (f.key, f.count, f.lower, f.upper, f.devices))
            .collect();
        assert_eq!(
            t,
            vec![
                (key(1), 550, 550, 550, 2),
                (key(2), 100, 100, 100, 1),
                (key(3), 70, 70, 70, 1)
            ]
        );
        assert!(describe(&e, 10).contains("10.0.0.1:1000 -> 0.0.0.1:80 proto 6"));
    }

    #[test]
    fn full_summaries_widen_upper_bounds_by_the_absent_minimum() {
        let seed = SEED;
        let mut a = Box::new(TopSummary::new());
        let mut b = Box::new(TopSummary::new());
        for i in 0..1000u32 {
            let k = key(i);
            a.update(&k, k.hash_with(&seed), 1 + u64::from(i % 7));
            let k = key(i + 500);
            b.update(&k, k.hash_with(&seed), 1 + u64::from(i % 5));
        }
        let (top, total, unlisted) = combine_top(&[&a, &b]);
        assert_eq!(unlisted, a.min_count() + b.min_count());
        assert_eq!(total, a.total() + b.total());
        for f in &top {
            assert!(f.lower <= f.count && f.count <= f.upper);
            // Exact weights of the generated streams.
            let i = u32::from_be_bytes(f.key.dst_bytes().try_into().unwrap());
            let wa = if i < 1000 { 1 + u64::from(i % 7) } else { 0 };
            let wb = if (500..1500).contains(&i) {
                1 + u64::from((i - 500) % 5)
            } else {
                0
            };
            assert!(f.lower <= wa + wb && wa + wb <= f.upper, "{f:?}");
        }
    }

    #[test]
    fn bad_chunks_drop_their_frame_and_are_counted() {
        let frame = hll(0, 5000, SEED);
        let d = datagrams(Stream::Flows, 1, 0, &frame);
        assert!(d.len() > 3);
        let mut c = Collector::new(Limits::default());
        // Duplicate chunk: the frame is dropped, its later chunks discarded.
        c.push(&d[0]);
        c.push(&d[1]);
        c.push(&d[1]);
        for x in &d[2..] {
            c.push(x);
        }
        assert_eq!(c.error_counts().get(&ErrorKind::Sequence), Some(&1));
        assert_eq!(c.datagrams().1, d.len() as u64 - 2);
        // Corrupt chunk: the CRC catches it.
        let mut bad = d.clone();
        let last = bad[2].len() - 1;
        bad[2][last] ^= 1;
        for x in &bad {
            // device 1 epoch 0 flows is settled: use epoch 1
            let mut y = x.clone();
            y[15] = 1;
            c.push(&y);
        }
        assert_eq!(c.error_counts().get(&ErrorKind::Frame), Some(&1));
        // Garbage, a huge total, a chunk starting mid-frame, a frame sent twice.
        c.push(b"nonsense");
        let mut huge = d[0].clone();
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        huge[14] = 9;
        c.push(&huge);
        let mut mid = d[1].clone();
        mid[15] = 2;
        c.push(&mid);
        let t = topk(&[(1, 5)], SEED);
        send(&mut c, Stream::TopK, 1, 3, &t);
        send(&mut c, Stream::TopK, 1, 3, &t);
        let counts = c.error_counts().clone();
        assert_eq!(counts.get(&ErrorKind::Datagram), Some(&1));
        assert_eq!(counts.get(&ErrorKind::TooLarge), Some(&1));
        assert_eq!(counts.get(&ErrorKind::Sequence), Some(&2));
        assert_eq!(counts.get(&ErrorKind::Duplicate), Some(&1));
        assert!(c.take_messages().len() >= 6);
    }

    #[test]
    fn wrong_seed_is_reported_not_merged() {
        let mut c = Collector::new(Limits::default());
        send(&mut c, Stream::Flows, 1, 0, &hll(0, 100, SEED));
        send(&mut c, Stream::TopK, 1, 0, &topk(&[(1, 5)], SEED));
        let other = Seed::new(3, 4);
        send(&mut c, Stream::Flows, 2, 0, &hll(0, 100, other));
        send(&mut c, Stream::TopK, 2, 0, &topk(&[(1, 5)], other));
        c.finish();
        assert_eq!(c.error_counts().get(&ErrorKind::Seed), Some(&2));
        let e = c.take_finalized().remove(0);
        assert_eq!(
            (e.flows_devices.clone(), e.top_devices.clone()),
            (vec![1], vec![1])
        );
        assert_eq!(e.frames.iter().filter(|f| !f.merged).count(), 2);
        assert_eq!(e.top[0].count, 5);
        assert!(describe(&e, 3).contains("not merged"));
    }

    #[test]
    fn min_devices_keeps_an_epoch_open_for_a_late_device() {
        for (min, closed) in [(0, 1), (2, 0)] {
            let mut c = Collector::new(Limits {
                min_devices: min,
                ..Limits::default()
            });
            send(&mut c, Stream::Flows, 1, 0, &hll(0, 100, SEED));
            send(&mut c, Stream::TopK, 1, 0, &topk(&[(1, 5)], SEED));
            assert_eq!(c.closed_epochs(), closed, "min_devices {min}");
            send(&mut c, Stream::Flows, 2, 0, &hll(0, 100, SEED));
            send(&mut c, Stream::TopK, 2, 0, &topk(&[(1, 5)], SEED));
            assert_eq!(c.closed_epochs(), 1);
        }
    }

    #[test]
    fn limits_bound_memory() {
        let limits = Limits {
            max_partial: 2,
            max_devices: 2,
            max_open_epochs: 2,
            max_messages: 4,
            min_devices: 0,
        };
        let mut c = Collector::new(limits);
        let frame = hll(0, 5000, SEED);
        for device in 0..4 {
            c.push(&datagrams(Stream::Flows, device, 0, &frame)[0]);
        }
        // Devices 2 and 3 are past max_devices.
        assert_eq!(c.error_counts().get(&ErrorKind::Capacity), Some(&2));
        // A one-chunk frame needs no buffer; a third partial frame is refused.
        c.push(&datagrams(Stream::TopK, 0, 0, &topk(&[(1, 1)], SEED))[0]);
        c.push(&datagrams(Stream::Flows, 0, 1, &frame)[0]);
        assert_eq!(c.error_counts().get(&ErrorKind::Capacity), Some(&3));
        // Opening a third epoch finalizes epoch 0 (its partial frames count as
        // incomplete, device 1's missing top-k too).
        c.push(&datagrams(Stream::Flows, 0, 2, &frame)[0]);
        assert_eq!(c.take_finalized().len(), 1);
        assert_eq!(c.closed_epochs(), 0, "forced out, not closed");
        assert_eq!(c.error_counts().get(&ErrorKind::Incomplete), Some(&3));
        assert_eq!(c.partial, 1);
        c.push(&datagrams(Stream::Flows, 0, 0, &frame)[0]);
        assert_eq!(c.error_counts().get(&ErrorKind::Late), Some(&1));
        assert_eq!(c.take_messages().len(), 4);
        c.finish();
        assert_eq!(c.partial, 0);
    }
}
