//! The collector's state machine: datagrams → reassembled frames → decoded sketches →
//! epochs closed and finalized (see the [module doc](super) for the rules).

use std::collections::BTreeMap;
use std::fmt;

use loxo_control::datagram::{SketchDatagram, Stream};

use super::fleet::{combine_top, decode_topk, DeviceFrame, DeviceTop, EpochSummary};
use super::max_frame;
use crate::sketch::AnyHll;

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
#[derive(Debug)]
enum Sketch {
    Flows(AnyHll),
    TopK(Box<dyn DeviceTop>),
}

/// The state of one `(device, stream)` frame of an epoch.
#[derive(Debug)]
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

/// Reassembles, decodes and merges sketch datagrams; no I/O (see the module doc).
#[derive(Debug)]
pub struct Collector {
    limits: Limits,
    fingerprint: Option<u64>,
    epochs: BTreeMap<u32, BTreeMap<(u32, Stream), Slot>>,
    devices: BTreeMap<u32, Seen>,
    pub(super) partial: usize,
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
        let mut tops: Vec<(u32, Box<dyn DeviceTop>)> = Vec::new();
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
        let summaries: Vec<&dyn DeviceTop> = tops.iter().map(|(_, t)| &**t).collect();
        (summary.top, summary.top_total, summary.unlisted_upper) = combine_top(&summaries);
        self.done.push(summary);
    }
}
