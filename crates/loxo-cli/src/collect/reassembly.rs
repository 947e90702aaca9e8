//! The collector's state machine: datagrams → reassembled frames → decoded sketches,
//! flows merged on arrival, top-k frames kept → epochs closed and finalized (see the
//! [module doc](super) for the rules, [`limits`](super::limits) for the bounds).

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use loxo_control::datagram::{SketchDatagram, Stream};

use super::auth::Keys;
use super::fleet::{combine_frames, decode_topk, DeviceFrame, EpochSummary};
use super::limits::{
    ErrorKind, Limits, COLLECTOR_BYTES, DEVICE_BYTES, EPOCH_BYTES, MESSAGE_MAX, SLOT_BYTES,
};
use super::max_frame;
use crate::sketch::AnyHll;

/// The state of one `(device, stream)` frame of an epoch.
#[derive(Debug)]
pub(super) enum Slot {
    Partial {
        total: usize,
        buf: Vec<u8>,
    },
    /// Dropped, refused or undecodable (counted when it happened): later chunks are
    /// discarded.
    Failed,
    Done(Delivered),
}

/// A frame received whole and decoded.
#[derive(Debug)]
pub(super) struct Delivered {
    fingerprint: u64,
    merged: bool,
    len: usize,
    /// A merged top-k frame as received, and the flows it lists: decoded again when
    /// the epoch is finalized (the encoded form is the compact one).
    topk: Option<(Box<[u8]>, usize)>,
}

impl Slot {
    const fn is_final(&self) -> bool {
        !matches!(self, Self::Partial { .. })
    }

    /// Heap bytes the slot holds.
    #[cfg(test)]
    fn heap(&self) -> usize {
        match self {
            Self::Partial { buf, .. } => buf.capacity(),
            Self::Done(Delivered {
                topk: Some((b, _)), ..
            }) => b.len(),
            _ => 0,
        }
    }
}

/// An open epoch: its frames and its fleet HLL so far.
#[derive(Debug, Default)]
pub(super) struct Epoch {
    slots: BTreeMap<(u32, Stream), Slot>,
    /// The merge of the fleet's flows frames received so far.
    flows: Option<AnyHll>,
    /// Bytes accounted to the epoch ([`Collector::memory_bytes`]).
    held: usize,
}

/// What the collector knows of a device.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seen {
    /// The first and last epoch it sent something of.
    first: u32,
    last: u32,
}

/// A decoded frame as received, for `--out` ([`Collector::with_frame_output`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedFrame {
    /// The epoch.
    pub epoch: u32,
    /// The device.
    pub device: u32,
    /// Which sketch.
    pub stream: Stream,
    /// The loxo wire frame.
    pub bytes: Vec<u8>,
}

/// What a chunk gives: the frame's bytes once complete, or an error to count.
type ChunkResult = Result<Option<Vec<u8>>, (ErrorKind, String)>;

/// Why an epoch is finalized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Closed,
    Limit,
    Memory,
    Finish,
}

/// Reassembles, decodes and merges sketch datagrams; no I/O (see the module doc).
#[derive(Debug)]
pub struct Collector {
    limits: Limits,
    /// The devices' keys and replay windows; `None`: unauthenticated
    /// ([`insecure`](Self::insecure)).
    keys: Option<Keys>,
    fingerprint: Option<u64>,
    epochs: BTreeMap<u32, Epoch>,
    devices: BTreeMap<u32, Seen>,
    /// Frames lost in transit per device: dropped for a gap in the chunks, incomplete
    /// or missing at the epoch's end, or of a skipped epoch.
    losses: BTreeMap<u32, u64>,
    pub(super) partial: usize,
    /// Every epoch up to this one is finalized.
    finalized_to: Option<u32>,
    /// Finalized epochs that were closed (not forced out by the open-epoch limit).
    closed_finalized: u64,
    done: Vec<EpochSummary>,
    /// Decoded frames for `--out`, when asked for.
    frames_out: Option<Vec<ReceivedFrame>>,
    counts: BTreeMap<ErrorKind, u64>,
    messages: Vec<String>,
    datagrams: u64,
    discarded: u64,
    /// Bytes held outside the open epochs: devices, finalized epochs not yet taken,
    /// frames for output, messages.
    held: usize,
    /// One of several collectors of the fleet ([`shared`](Self::shared)).
    shared: bool,
}

impl Collector {
    /// An empty collector of the devices in `keys`: it merges only datagrams whose MAC
    /// verifies under their device's key, of a sequence number not seen before, and
    /// frames of the fleet's seed fingerprint (the one in `keys`).
    #[must_use]
    pub fn new(limits: Limits, keys: Keys) -> Self {
        let fingerprint = Some(keys.fingerprint());
        Self {
            keys: Some(keys),
            fingerprint,
            ..Self::insecure(limits)
        }
    }

    /// An empty collector that **trusts every sender** (`--insecure-no-auth`): no MAC
    /// is checked, any device id is taken, a datagram can be replayed, and the fleet's
    /// fingerprint is the first one decoded unless fixed by
    /// [`with_fingerprint`](Self::with_fingerprint). Only for a network where every
    /// sender is trusted.
    #[must_use]
    pub fn insecure(limits: Limits) -> Self {
        Self {
            limits,
            keys: None,
            fingerprint: None,
            epochs: BTreeMap::new(),
            devices: BTreeMap::new(),
            losses: BTreeMap::new(),
            partial: 0,
            finalized_to: None,
            closed_finalized: 0,
            done: Vec::new(),
            frames_out: None,
            counts: BTreeMap::new(),
            messages: Vec::new(),
            datagrams: 0,
            discarded: 0,
            held: COLLECTOR_BYTES,
            shared: false,
        }
    }

    /// One of several collectors sharing the fleet (`--redis-cluster`): a device's
    /// frames may go to any of them, so a frame this one never received is not an
    /// error here (the fleet's reader checks that some collector stored it), nor is an
    /// epoch of which no datagram came here. A frame of which some chunks came, but
    /// not all, is still counted as incomplete. An epoch closes once every frame begun
    /// here is complete or dropped.
    #[must_use]
    pub const fn shared(mut self) -> Self {
        self.shared = true;
        self
    }

    /// Fixes the fleet's seed fingerprint instead of taking the first one decoded
    /// ([`insecure`](Self::insecure)), or replaces the keys' one.
    #[must_use]
    pub const fn with_fingerprint(mut self, fingerprint: u64) -> Self {
        self.fingerprint = Some(fingerprint);
        self
    }

    /// Hands every decoded frame, as received, to [`take_frames`](Self::take_frames)
    /// (for `--out`). They count in [`memory_bytes`](Self::memory_bytes) until taken:
    /// take them after each [`push`](Self::push).
    #[must_use]
    pub fn with_frame_output(mut self) -> Self {
        self.frames_out = Some(Vec::new());
        self
    }

    /// The fleet's seed fingerprint, once known.
    #[must_use]
    pub const fn fingerprint(&self) -> Option<u64> {
        self.fingerprint
    }

    /// Bytes of state the collector holds: reassembly buffers, the open epochs' fleet
    /// HLLs and kept top-k frames, an allowance for each map entry (devices, epochs,
    /// frame slots) and root node ([`COLLECTOR_BYTES`](super::COLLECTOR_BYTES)),
    /// finalized epochs and frames for output not yet taken, and the kept messages.
    /// Never more than [`Limits::max_bytes`]; see [`Limits::worst_case_bytes`] for the
    /// figure in terms of the other limits.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.held + self.epochs.values().map(|e| e.held).sum::<usize>()
    }

    /// Whether `n` more bytes stay within [`Limits::max_bytes`].
    fn room(&self, n: usize) -> bool {
        self.memory_bytes().saturating_add(n) <= self.limits.max_bytes
    }

    /// Whether `n` more bytes fit, after finalizing the open epochs older than
    /// `epoch` as long as they do not: under the memory limit, newer epochs win.
    fn make_room(&mut self, epoch: u32, n: usize) -> bool {
        while !self.room(n) {
            match self.epochs.first_key_value() {
                Some((&oldest, _)) if oldest < epoch => self.finalize_oldest(Why::Memory),
                _ => return false,
            }
        }
        true
    }

    fn memory_full(&self, what: &str, n: usize) -> String {
        memory_full(what, n, self.limits.max_bytes, self.memory_bytes())
    }

    /// Takes one datagram (a whole UDP payload).
    pub fn push(&mut self, bytes: &[u8]) {
        self.datagrams += 1;
        let Some(d) = self.admit(bytes) else {
            return;
        };
        let what = format!("device {} epoch {} {}", d.device, d.epoch, d.stream.name());
        if self.finalized_to.is_some_and(|e| d.epoch <= e) {
            return self.fail(
                ErrorKind::Late,
                format!("{what}: datagram after the epoch was finalized"),
            );
        }
        let new_device = !self.devices.contains_key(&d.device);
        if new_device && self.devices.len() >= self.limits.max_devices {
            let max = self.limits.max_devices;
            return self.fail(
                ErrorKind::Capacity,
                format!("{what}: already {max} devices (--max-devices), no more are tracked"),
            );
        }
        let device = usize::from(new_device) * DEVICE_BYTES;
        if let Err(msg) = self.open_epoch(d.epoch, &what, device) {
            return self.fail(ErrorKind::Capacity, msg);
        }
        self.see(d.device, d.epoch);
        if let Some(completed) = self.add_chunk(&d, &what) {
            self.complete(&d, &what, completed);
        }
        self.advance();
    }

    /// The datagram in `bytes` if it is well formed and, with keys, from a listed
    /// device, its MAC good and its sequence number new; else counts why not.
    fn admit<'a>(&mut self, bytes: &'a [u8]) -> Option<SketchDatagram<'a>> {
        let d = match SketchDatagram::parse(bytes) {
            Ok(d) => d,
            Err(e) => {
                let n = self.datagrams;
                self.fail(
                    ErrorKind::Datagram,
                    format!("datagram {n} ({} bytes): {e}", bytes.len()),
                );
                return None;
            }
        };
        let Some(keys) = &mut self.keys else {
            return Some(d);
        };
        match keys.admit(bytes, &d) {
            Ok(()) => Some(d),
            Err((kind, msg)) => {
                self.fail(kind, msg);
                None
            }
        }
    }

    /// Records that `device` sent something of `epoch`.
    fn see(&mut self, device: u32, epoch: u32) {
        if !self.devices.contains_key(&device) {
            self.held += DEVICE_BYTES;
        }
        let seen = self.devices.entry(device).or_insert(Seen {
            first: epoch,
            last: epoch,
        });
        seen.first = seen.first.min(epoch);
        seen.last = seen.last.max(epoch);
    }

    /// Opens `epoch` if needed, with room for `extra` more bytes (a new device):
    /// finalizes the oldest open epochs, if older, at the open-epoch limit and while
    /// the memory limit leaves no room — so a newer epoch always opens.
    fn open_epoch(&mut self, epoch: u32, what: &str, extra: usize) -> Result<(), String> {
        let exists = self.epochs.contains_key(&epoch);
        if !exists && self.epochs.len() >= self.limits.max_open_epochs.max(1) {
            match self.epochs.first_key_value() {
                Some((&oldest, _)) if oldest < epoch => self.finalize_oldest(Why::Limit),
                _ => {
                    return Err(format!(
                        "{what}: older than every open epoch while {} are open (--max-open-epochs)",
                        self.limits.max_open_epochs
                    ))
                }
            }
        }
        let need = extra + if exists { 0 } else { EPOCH_BYTES };
        if !self.make_room(epoch, need) {
            return Err(self.memory_full(what, need));
        }
        if !exists {
            self.epochs.insert(
                epoch,
                Epoch {
                    held: EPOCH_BYTES,
                    ..Epoch::default()
                },
            );
        }
        Ok(())
    }

    /// Adds a chunk to its frame; returns the frame's bytes when it completes.
    fn add_chunk(&mut self, d: &SketchDatagram<'_>, what: &str) -> Option<Vec<u8>> {
        let key = (d.device, d.stream);
        let known = self.epochs.get(&d.epoch)?.slots.contains_key(&key);
        let (result, lost) = if known {
            self.next_chunk(d, what)
        } else {
            self.first_chunk(d, what)
        };
        match result {
            Ok(bytes) => bytes,
            Err((kind, msg)) => {
                if lost {
                    self.lose(d.device, 1);
                }
                self.fail(kind, msg);
                None
            }
        }
    }

    /// The first chunk seen of a frame: opens its slot (a reassembly buffer, or the
    /// frame itself when it is one chunk), or refuses it; whether a refusal means a
    /// chunk was lost.
    fn first_chunk(&mut self, d: &SketchDatagram<'_>, what: &str) -> (ChunkResult, bool) {
        let (offset, total) = (d.offset as usize, d.total as usize);
        let max = max_frame(d.stream);
        let buffer = if d.data.len() == total { 0 } else { total };
        if offset == 0 && total <= max {
            self.make_room(d.epoch, SLOT_BYTES + buffer);
        }
        let (held, max_bytes) = (self.memory_bytes(), self.limits.max_bytes);
        let room = |n: usize| held.saturating_add(n) <= max_bytes;
        let error = if total > max {
            Some((
                ErrorKind::TooLarge,
                format!("{what}: frame of {total} bytes announced, at most {max}"),
            ))
        } else if !room(SLOT_BYTES) {
            let m = memory_full(what, SLOT_BYTES, max_bytes, held);
            Some((ErrorKind::Capacity, m))
        } else if offset != 0 {
            let m = format!("{what}: first chunk seen at offset {offset}, not 0");
            Some((ErrorKind::Sequence, m))
        } else if !room(SLOT_BYTES + buffer) {
            let m = memory_full(what, SLOT_BYTES + buffer, max_bytes, held);
            Some((ErrorKind::Capacity, m))
        } else if buffer > 0 && self.partial >= self.limits.max_partial {
            let m = format!(
                "{what}: already {} frames incomplete, no more are buffered",
                self.limits.max_partial
            );
            Some((ErrorKind::Capacity, m))
        } else {
            None
        };
        let Some(epoch) = self.epochs.get_mut(&d.epoch) else {
            return (Ok(None), false);
        };
        let key = (d.device, d.stream);
        if let Some(e) = error {
            // Its later chunks are discarded, unless even the slot passes the memory
            // limit: then each is refused in turn.
            if room(SLOT_BYTES) {
                epoch.held += SLOT_BYTES;
                epoch.slots.insert(key, Slot::Failed);
            }
            let lost = e.0 == ErrorKind::Sequence;
            return (Err(e), lost);
        }
        epoch.held += SLOT_BYTES;
        if buffer == 0 {
            // A one-chunk frame needs no reassembly buffer.
            epoch.slots.insert(key, Slot::Failed);
            return (Ok(Some(d.data.to_vec())), false);
        }
        let mut buf = Vec::with_capacity(total);
        buf.extend_from_slice(d.data);
        epoch.held += buf.capacity();
        epoch.slots.insert(key, Slot::Partial { total, buf });
        self.partial += 1;
        (Ok(None), false)
    }

    /// A further chunk of a frame whose slot is open; whether a refusal means a chunk
    /// was lost (a gap in the offsets).
    fn next_chunk(&mut self, d: &SketchDatagram<'_>, what: &str) -> (ChunkResult, bool) {
        let (offset, total) = (d.offset as usize, d.total as usize);
        let Some(epoch) = self.epochs.get_mut(&d.epoch) else {
            return (Ok(None), false);
        };
        let Entry::Occupied(mut o) = epoch.slots.entry((d.device, d.stream)) else {
            return (Ok(None), false);
        };
        let (have, want) = match o.get_mut() {
            Slot::Failed => {
                self.discarded += 1;
                return (Ok(None), false);
            }
            Slot::Done { .. } => {
                let m = format!("{what}: chunk at offset {offset} of a frame already received");
                return (Err((ErrorKind::Duplicate, m)), false);
            }
            Slot::Partial { total: want, buf } => {
                if offset == buf.len() && total == *want {
                    buf.extend_from_slice(d.data);
                    if buf.len() < *want {
                        return (Ok(None), false);
                    }
                }
                (buf.len(), *want)
            }
        };
        // Complete, or dropped: the buffer goes either way.
        let Slot::Partial { buf, .. } = o.insert(Slot::Failed) else {
            return (Ok(None), false);
        };
        epoch.held -= buf.capacity();
        self.partial -= 1;
        if have == want && offset + d.data.len() == want && total == want {
            return (Ok(Some(buf)), false);
        }
        let m = format!(
            "{what}: chunk at offset {offset} (total {total}), expected offset {have} (total {want}): frame dropped"
        );
        (
            Err((ErrorKind::Sequence, m)),
            offset > have && total == want,
        )
    }

    /// Decodes a reassembled frame into its slot (left `Failed` on error): a flows
    /// frame of the fleet is merged into its epoch's HLL, a top-k frame kept.
    fn complete(&mut self, d: &SketchDatagram<'_>, what: &str, bytes: Vec<u8>) {
        let decoded = match d.stream {
            Stream::Flows => AnyHll::decode(&bytes)
                .map(|(h, fp)| (fp, Some(h), 0))
                .map_err(|e| format!("{e:#}")),
            Stream::TopK => decode_topk(&bytes).map(|(fp, s)| (fp, None, s.len())),
        };
        let (fingerprint, hll, listed) = match decoded {
            Ok(x) => x,
            Err(e) => return self.fail(ErrorKind::Frame, format!("{what}: {e}")),
        };
        let mut merged = match self.fingerprint {
            None => {
                self.fingerprint = Some(fingerprint);
                true
            }
            Some(f) if f != fingerprint => {
                self.fail(
                    ErrorKind::Seed,
                    format!("{what}: seed fingerprint {fingerprint:016x}, the fleet's is {f:016x}: not merged"),
                );
                false
            }
            Some(_) => true,
        };
        let len = bytes.len();
        let mut keep = false;
        if merged {
            let result = match hll {
                Some(h) => self.merge_flows(d.epoch, h),
                None if self.make_room(d.epoch, len) => {
                    keep = true;
                    Ok(())
                }
                None => Err((ErrorKind::Capacity, self.memory_full("top-k frame", len))),
            };
            if let Err((kind, msg)) = result {
                merged = false;
                self.fail(kind, format!("{what}: {msg}: not merged"));
            }
        }
        // The frame for output, unless the kept top-k frame leaves no room for it.
        let out = self.frames_out.is_some() && {
            let n = if keep { 2 * len } else { len };
            let room = self.make_room(d.epoch, n);
            if !room {
                let m = self.memory_full(what, n);
                self.fail(ErrorKind::Output, format!("{m}: not written"));
            }
            room
        };
        let (topk, out) = match (keep, out) {
            (true, true) => (Some(bytes.clone().into_boxed_slice()), Some(bytes)),
            (true, false) => (Some(bytes.into_boxed_slice()), None),
            (false, true) => (None, Some(bytes)),
            (false, false) => (None, None),
        };
        if let (Some(bytes), Some(frames)) = (out, &mut self.frames_out) {
            self.held += bytes.len();
            frames.push(ReceivedFrame {
                epoch: d.epoch,
                device: d.device,
                stream: d.stream,
                bytes,
            });
        }
        let Some(epoch) = self.epochs.get_mut(&d.epoch) else {
            return;
        };
        if let Some(slot) = epoch.slots.get_mut(&(d.device, d.stream)) {
            epoch.held += topk.as_ref().map_or(0, |b| b.len());
            *slot = Slot::Done(Delivered {
                fingerprint,
                merged,
                len,
                topk: topk.map(|b| (b, listed)),
            });
        }
    }

    /// Merges a fleet flows sketch into its epoch's HLL.
    fn merge_flows(&mut self, epoch: u32, h: AnyHll) -> Result<(), (ErrorKind, String)> {
        let n = h.memory_bytes();
        let room =
            self.epochs.get(&epoch).is_some_and(|e| e.flows.is_some()) || self.make_room(epoch, n);
        let full = self.memory_full("fleet HLL", n);
        let Some(e) = self.epochs.get_mut(&epoch) else {
            return Ok(());
        };
        match &mut e.flows {
            Some(acc) => acc
                .merge(&h)
                .map_err(|err| (ErrorKind::Geometry, format!("{err:#}"))),
            None if room => {
                e.held += n;
                e.flows = Some(h);
                Ok(())
            }
            None => Err((ErrorKind::Capacity, full)),
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
        let Some(e) = self.epochs.get(&epoch) else {
            return false;
        };
        if self.shared {
            return e.slots.values().all(Slot::is_final);
        }
        if self.expected(epoch).count() < self.limits.min_devices {
            return false;
        }
        self.expected(epoch).all(|(d, _)| {
            [Stream::Flows, Stream::TopK]
                .iter()
                .all(|&s| e.slots.get(&(d, s)).is_some_and(Slot::is_final))
        })
    }

    /// Finalizes the oldest epochs while they are closed and every device moved on.
    fn advance(&mut self) {
        while let Some((&oldest, _)) = self.epochs.first_key_value() {
            let moved_on = self.expected(oldest).all(|(_, s)| s.last > oldest);
            if !(moved_on && self.is_closed(oldest)) {
                break;
            }
            self.finalize_oldest(Why::Closed);
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
            self.finalize_oldest(Why::Finish);
        }
    }

    /// The epochs finalized since the last call, oldest first.
    pub fn take_finalized(&mut self) -> Vec<EpochSummary> {
        let done = std::mem::take(&mut self.done);
        self.held -= done.iter().map(summary_bytes).sum::<usize>();
        done
    }

    /// The frames decoded since the last call, when asked for
    /// ([`with_frame_output`](Self::with_frame_output)).
    pub fn take_frames(&mut self) -> Vec<ReceivedFrame> {
        let frames = self
            .frames_out
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        self.held -= frames.iter().map(|f| f.bytes.len()).sum::<usize>();
        frames
    }

    /// The error messages since the last call, oldest first.
    pub fn take_messages(&mut self) -> Vec<String> {
        self.held -= self.messages.iter().map(String::capacity).sum::<usize>();
        std::mem::take(&mut self.messages)
    }

    /// Records an error of the caller's (a file it could not write…).
    pub fn fail(&mut self, kind: ErrorKind, msg: String) {
        self.fail_n(kind, 1, msg);
    }

    /// Records `n` errors of one kind under one message (datagrams the socket
    /// dropped…).
    pub fn fail_n(&mut self, kind: ErrorKind, n: u64, mut msg: String) {
        let c = self.counts.entry(kind).or_default();
        *c = c.saturating_add(n);
        if self.messages.len() < self.limits.max_messages && self.room(MESSAGE_MAX) {
            if msg.len() > MESSAGE_MAX {
                let mut cut = MESSAGE_MAX - 3;
                while !msg.is_char_boundary(cut) {
                    cut -= 1;
                }
                msg.truncate(cut);
                msg.push('…');
            }
            msg.shrink_to_fit();
            self.held += msg.capacity();
            self.messages.push(msg);
        }
    }

    /// Counts `n` frames of `device` lost in transit.
    fn lose(&mut self, device: u32, n: u64) {
        if self.devices.contains_key(&device) {
            let c = self.losses.entry(device).or_default();
            *c = c.saturating_add(n);
        }
    }

    /// Frames lost in transit, by device: a gap in a frame's chunks, a frame
    /// incomplete or missing when its epoch was finalized, the frames of an epoch a
    /// device skipped. Devices that lost none are not listed.
    #[must_use]
    pub const fn losses(&self) -> &BTreeMap<u32, u64> {
        &self.losses
    }

    /// Datagrams lost in transit per device, from the gaps in their sequence numbers
    /// (with keys; devices that lost none are not listed).
    #[must_use]
    pub fn datagram_losses(&self) -> BTreeMap<u32, u64> {
        if self.shared {
            // Another collector of the cluster may have taken the numbers skipped
            // here: only the frames each stored (`loxo fleet`) tell what was lost.
            return BTreeMap::new();
        }
        self.keys.as_ref().map(Keys::losses).unwrap_or_default()
    }

    /// Whether datagrams are authenticated ([`new`](Self::new)).
    #[must_use]
    pub const fn authenticated(&self) -> bool {
        self.keys.is_some()
    }

    /// Errors counted, by kind.
    #[must_use]
    pub const fn error_counts(&self) -> &BTreeMap<ErrorKind, u64> {
        &self.counts
    }

    /// Errors counted in all.
    #[must_use]
    pub fn error_count(&self) -> u64 {
        self.counts.values().fold(0, |a, &b| a.saturating_add(b))
    }

    /// Datagrams taken, and chunks of dropped frames discarded without an error.
    #[must_use]
    pub const fn datagrams(&self) -> (u64, u64) {
        (self.datagrams, self.discarded)
    }

    fn finalize_oldest(&mut self, why: Why) {
        let closed = self
            .epochs
            .first_key_value()
            .is_some_and(|(&e, _)| self.is_closed(e));
        let Some((epoch, e)) = self.epochs.pop_first() else {
            return;
        };
        if let Some(before) = self.finalized_to {
            self.count_lost_epochs(before, epoch);
        }
        self.finalized_to = Some(epoch);
        self.closed_finalized += u64::from(closed);
        let note = match why {
            Why::Limit => format!(
                " (epoch finalized early: {} epochs open, --max-open-epochs)",
                self.limits.max_open_epochs
            ),
            Why::Memory => format!(
                " (epoch finalized early: the memory limit of {} bytes was reached, --max-memory)",
                self.limits.max_bytes
            ),
            Why::Closed | Why::Finish => String::new(),
        };
        let expected: Vec<u32> = self.expected(epoch).map(|(d, _)| d).collect();
        for d in expected {
            for s in [Stream::Flows, Stream::TopK] {
                let msg = match e.slots.get(&(d, s)) {
                    None if self.shared => continue,
                    None => "not received".to_owned(),
                    Some(Slot::Partial { total, buf }) => {
                        format!("incomplete ({} of {total} bytes)", buf.len())
                    }
                    Some(_) => continue,
                };
                self.lose(d, 1);
                self.fail(
                    ErrorKind::Incomplete,
                    format!("device {d} epoch {epoch} {}: {msg}{note}", s.name()),
                );
            }
        }
        let mut summary = EpochSummary {
            epoch,
            frames: Vec::new(),
            fingerprint: self.fingerprint,
            flows: e.flows,
            flows_devices: Vec::new(),
            top: Vec::new(),
            top_devices: Vec::new(),
            top_total: 0,
            unlisted_upper: 0,
        };
        let mut listed = 0;
        for (&(device, stream), slot) in &e.slots {
            let Slot::Done(f) = slot else {
                if matches!(slot, Slot::Partial { .. }) {
                    self.partial -= 1;
                }
                continue;
            };
            if f.merged {
                match stream {
                    Stream::Flows => summary.flows_devices.push(device),
                    Stream::TopK => summary.top_devices.push(device),
                }
            }
            listed += f.topk.as_ref().map_or(0, |t| t.1);
            summary.frames.push(DeviceFrame {
                device,
                stream,
                len: f.len,
                fingerprint: f.fingerprint,
                merged: f.merged,
            });
        }
        let tops = e.slots.values().filter_map(|s| match s {
            Slot::Done(Delivered {
                topk: Some((b, _)), ..
            }) => Some(&**b),
            _ => None,
        });
        (summary.top, summary.top_total, summary.unlisted_upper) = combine_frames(tops, listed);
        self.held += summary_bytes(&summary);
        self.done.push(summary);
    }

    /// Counts the frames of the epochs strictly between two epochs finalized one after
    /// the other: none of their datagrams arrived from any device (epochs finalize in
    /// order, and a datagram of an epoch older than a finalized one is late), so each
    /// device seen at or before one of them lost its two frames of it.
    fn count_lost_epochs(&mut self, before: u32, epoch: u32) {
        if self.shared {
            return;
        }
        let (Some(from), Some(to)) = (before.checked_add(1), epoch.checked_sub(1)) else {
            return;
        };
        if from > to {
            return;
        }
        let lost: Vec<(u32, u64)> = self
            .expected(to)
            .map(|(d, s)| (d, 2 * (u64::from(to - from.max(s.first)) + 1)))
            .collect();
        let frames = lost.iter().fold(0u64, |a, &(_, n)| a.saturating_add(n));
        for &(d, n) in &lost {
            self.lose(d, n);
        }
        if frames > 0 {
            self.fail_n(
                ErrorKind::Lost,
                frames,
                format!(
                    "epochs {from}..={to}: no datagram of them arrived from any device: {frames} frames of {} devices lost",
                    lost.len()
                ),
            );
        }
    }

    /// The bytes held, counted afresh from the structures (tests check it against
    /// [`memory_bytes`](Self::memory_bytes)).
    #[cfg(test)]
    pub(super) fn recount(&self) -> usize {
        let epochs: usize = self
            .epochs
            .values()
            .map(|e| {
                EPOCH_BYTES
                    + e.flows.as_ref().map_or(0, |h| h.memory_bytes())
                    + e.slots
                        .values()
                        .map(|s| SLOT_BYTES + s.heap())
                        .sum::<usize>()
            })
            .sum();
        let frames: usize = self
            .frames_out
            .iter()
            .flatten()
            .map(|f| f.bytes.len())
            .sum();
        COLLECTOR_BYTES
            + epochs
            + self.devices.len() * DEVICE_BYTES
            + self.done.iter().map(summary_bytes).sum::<usize>()
            + frames
            + self.messages.iter().map(String::capacity).sum::<usize>()
    }
}

/// The message of a refusal for the memory limit.
fn memory_full(what: &str, n: usize, max: usize, held: usize) -> String {
    format!("{what}: {n} more bytes would pass the memory limit of {max} bytes (holding {held}, --max-memory)")
}

/// Bytes a finalized epoch's summary holds until taken.
fn summary_bytes(s: &EpochSummary) -> usize {
    s.flows.as_ref().map_or(0, |h| h.memory_bytes())
        + s.frames.capacity() * size_of::<DeviceFrame>()
        + s.top.capacity() * size_of::<super::FleetEntry>()
        + (s.flows_devices.capacity() + s.top_devices.capacity()) * size_of::<u32>()
}
