//! What a [`Collector`](super::Collector) may hold ([`Limits`]), what its state costs
//! in bytes, and what it counts as an error ([`ErrorKind`]).

use std::fmt;

use loxo_control::datagram::Stream;

use super::max_frame;

/// Bounds on what a [`Collector`](super::Collector) holds. Each is a hard limit: what
/// would pass it is refused and counted ([`ErrorKind::Capacity`]), never buffered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Frames being reassembled at once; a new frame past it is refused.
    pub max_partial: usize,
    /// Devices tracked; datagrams of further devices are refused.
    pub max_devices: usize,
    /// Epochs open at once; opening one more finalizes the oldest (its missing frames
    /// are counted as incomplete, naming this limit).
    pub max_open_epochs: usize,
    /// Error messages kept until [`Collector::take_messages`](super::Collector::take_messages)
    /// (errors past it are still counted).
    pub max_messages: usize,
    /// Devices an epoch needs before it can close (0 or 1: any device seen).
    pub min_devices: usize,
    /// Bytes of state ([`Collector::memory_bytes`](super::Collector::memory_bytes)) at
    /// most. A datagram of an epoch newer than the oldest open one finalizes the oldest
    /// while there is no room for it (as the open-epoch limit does); otherwise a
    /// device, an epoch, a frame's buffer or a kept frame that would pass it is
    /// refused.
    pub max_bytes: usize,
}

impl Default for Limits {
    /// 64 frames in reassembly, 1 024 devices, 8 open epochs, 1 024 messages, 256 MiB
    /// (the other limits at their worst take 158 460 916 bytes, ≈ 151 MiB, on a 64-bit
    /// host: [`worst_case_bytes`](Limits::worst_case_bytes)).
    fn default() -> Self {
        Self {
            max_partial: 64,
            max_devices: 1024,
            max_open_epochs: 8,
            max_messages: 1024,
            min_devices: 0,
            max_bytes: 256 << 20,
        }
    }
}

impl Limits {
    /// The most the collector's state can hold under the limits other than
    /// [`max_bytes`](Self::max_bytes), every sketch at its largest (`Hll<18>`, top-k of
    /// 256 candidates): `max_partial · max_frame(flows) + max_open_epochs ·
    /// (EPOCH_BYTES + Hll<18>) + max_devices · (DEVICE_BYTES + max_open_epochs ·
    /// DEVICE_EPOCH_BYTES) + max_messages · MESSAGE_BYTES + COLLECTOR_BYTES`, plus one
    /// finalized epoch waiting to be taken.
    #[must_use]
    pub const fn worst_case_bytes(&self) -> usize {
        let epochs = self.max_open_epochs;
        COLLECTOR_BYTES
            + self.max_partial * max_frame(Stream::Flows)
            + (epochs + 1) * (EPOCH_BYTES + HLL18_BYTES)
            + self.max_devices * (DEVICE_BYTES + epochs * DEVICE_EPOCH_BYTES)
            + self.max_devices * FINALIZED_DEVICE_BYTES
            + self.max_messages * MESSAGE_BYTES
    }
}

/// The allowance for one entry of a B-tree map of `(K, V)`: three entries' bytes. A
/// `BTreeMap` node holds up to 11 entries and every node but the root at least 5
/// (≤ 2.2 entries' bytes per entry, plus the parents' share); the root node is
/// counted apart ([`NODE_BYTES`]).
const fn entry_bytes<K, V>() -> usize {
    3 * size_of::<(K, V)>()
}

/// Bytes of a B-tree node of `(K, V)` entries: 11 entries, the header and the child
/// pointers of an internal node. A map's root node is counted with it, once.
const fn node_bytes<K, V>() -> usize {
    11 * size_of::<(K, V)>() + 112
}

/// The root node of an epoch's slot map.
const NODE_BYTES: usize = node_bytes::<(u32, Stream), super::reassembly::Slot>();

/// Bytes an empty collector holds once it took a datagram: the root nodes of its
/// epoch, device, loss and error-count maps.
pub const COLLECTOR_BYTES: usize = node_bytes::<u32, super::reassembly::Epoch>()
    + node_bytes::<u32, super::reassembly::Seen>()
    + node_bytes::<u32, u64>()
    + node_bytes::<ErrorKind, u64>();

/// Bytes a frame slot costs in its epoch's map (`(device, stream)` → its state).
pub(super) const SLOT_BYTES: usize = entry_bytes::<(u32, Stream), super::reassembly::Slot>();

/// Bytes a tracked device costs: its entries in the device and loss maps.
pub const DEVICE_BYTES: usize =
    entry_bytes::<u32, super::reassembly::Seen>() + entry_bytes::<u32, u64>();

/// Bytes an open epoch costs before any frame: its entry in the epoch map and the
/// root node of its slot map. Its fleet HLL comes on top (`0.75 · 2^P + 296` bytes:
/// 12 584 at `P = 14`, 196 904 at `P = 18`), once per epoch whatever the devices.
pub const EPOCH_BYTES: usize = entry_bytes::<u32, super::reassembly::Epoch>() + NODE_BYTES;

/// Bytes of the fleet HLL of an epoch of precision-18 frames, the largest supported.
const HLL18_BYTES: usize = size_of::<loxo_hll::Hll<18>>();

/// The most a (device, open epoch) costs once both frames arrived: its two slots and
/// its top-k frame as received (≤ [`max_frame`]`(topk)`, 14 900 bytes for 256
/// candidates; 7 476 for the sample firmware's 128). Its flows frame costs nothing
/// past its slot: it is merged into the epoch's fleet HLL on arrival, and written to
/// `--out` then, not kept.
pub const DEVICE_EPOCH_BYTES: usize = 2 * SLOT_BYTES + max_frame(Stream::TopK);

/// Bytes a device's frames cost in a finalized epoch's summary until it is taken:
/// two frame records and its share of the fleet top-k list (one entry per candidate).
pub const FINALIZED_DEVICE_BYTES: usize =
    2 * size_of::<super::DeviceFrame>() + super::TOP_N * size_of::<super::FleetEntry>();

/// The longest error message kept (longer ones are cut), and its allowance.
pub(super) const MESSAGE_MAX: usize = 240;
/// Bytes a kept message costs.
pub const MESSAGE_BYTES: usize = MESSAGE_MAX + size_of::<String>();

/// What went wrong, for the error counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not a sketch datagram, or a malformed one.
    Datagram,
    /// A chunk out of order or duplicated, or a total that changed: the frame is
    /// dropped. Chunks travel in order, so a lost datagram shows as a gap in the
    /// offsets.
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
    /// A frame of an epoch of which no datagram arrived from any device, between two
    /// epochs that did arrive: the whole epoch was lost.
    Lost,
    /// A datagram dropped before it was read: the socket's receive buffer or the
    /// collector's receive queue was full.
    Dropped,
    /// Writing a file or exporting to Redis failed, or `--out` reached its cap.
    Output,
    /// A datagram of a device the keys file does not list: refused.
    UnknownDevice,
    /// A datagram whose MAC does not verify under its device's key: refused.
    BadMac,
    /// A datagram whose sequence number its device already used, or older than its
    /// window: refused.
    Replay,
    /// A datagram from an address `--allow-from` does not list: refused unread.
    Address,
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
            Self::Lost => "frame of a lost epoch",
            Self::Dropped => "datagram dropped unread",
            Self::Output => "output failed",
            Self::UnknownDevice => "unknown device",
            Self::BadMac => "bad MAC",
            Self::Replay => "replayed or old sequence number",
            Self::Address => "sender not allowed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
