//! The truth of every participant: per epoch, every source's distinct destinations
//! (fan-out: horizontal scanners), every destination's distinct sources (fan-in:
//! DDoS victims) and every (source, destination)'s distinct destination ports
//! (vertical scans), counted exactly from the generator's per-frame truth.
//!
//! # Epochs
//!
//! An epoch is `epoch_frames` consecutive frames in pcap order, every frame counted
//! whatever its outcome (not IP, malformed): the monitor's `Config::epoch_packets` and
//! the firmware's `EPOCH_FRAMES` close epochs the same way. Only frames expected to
//! parse as a flow ([`FrameTruth::flow`]) carry a key, so a malformed frame counts
//! towards its epoch's length but adds no element. A caller that feeds a device only
//! some frames (QEMU's LAN9118 drops frames under 14 bytes) filters the truth first.
//!
//! # Spreads
//!
//! A key's spread is the number of distinct elements it is seen with in the epoch: a
//! [`SpreadKey::Source`]'s destinations, a [`SpreadKey::Destination`]'s sources, a
//! [`SpreadKey::Pair`]'s destination ports (the key's port: 0 on a non-first fragment
//! and behind AH/ESP, an ICMP code). Addresses compare as addresses: an IPv4 and an
//! IPv6 address are different keys. [`EpochSpreads::pairs`] is the epoch's number of
//! distinct (key, element) pairs of a role — the total a spread threshold such as
//! "1 % of the epoch's pairs" is taken of: the distinct (source, destination) pairs
//! for fan-out and fan-in alike, the distinct (source, destination, port) for ports.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::IpAddr;

use loxo_flow::FlowKey;

use super::FrameTruth;

/// What a spread counts: the key and its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A source's distinct destinations (horizontal scanners).
    FanOut,
    /// A destination's distinct sources (DDoS victims).
    FanIn,
    /// A (source, destination)'s distinct destination ports (vertical scans).
    DstPorts,
}

impl Role {
    /// Every role, in the participants file's order.
    pub const ALL: [Self; 3] = [Self::FanOut, Self::FanIn, Self::DstPorts];

    /// The role's name in the participants file: `fan_out`, `fan_in`, `dst_ports`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::FanOut => "fan_out",
            Self::FanIn => "fan_in",
            Self::DstPorts => "dst_ports",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A key whose spread the truth counts; its variant is its [`Role`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpreadKey {
    /// A source: its spread is its distinct destinations.
    Source(IpAddr),
    /// A destination: its spread is its distinct sources.
    Destination(IpAddr),
    /// A (source, destination): its spread is its distinct destination ports.
    Pair(IpAddr, IpAddr),
}

impl SpreadKey {
    /// What the key's spread counts.
    pub const fn role(&self) -> Role {
        match self {
            Self::Source(_) => Role::FanOut,
            Self::Destination(_) => Role::FanIn,
            Self::Pair(..) => Role::DstPorts,
        }
    }

    /// The key's source, if it has one.
    pub const fn src(&self) -> Option<IpAddr> {
        match *self {
            Self::Source(a) | Self::Pair(a, _) => Some(a),
            Self::Destination(_) => None,
        }
    }

    /// The key's destination, if it has one.
    pub const fn dst(&self) -> Option<IpAddr> {
        match *self {
            Self::Destination(a) | Self::Pair(_, a) => Some(a),
            Self::Source(_) => None,
        }
    }
}

/// The address in `b`: 4 bytes IPv4, 16 IPv6.
fn address(b: &[u8]) -> Option<IpAddr> {
    if let Ok(a) = <[u8; 4]>::try_from(b) {
        Some(IpAddr::from(a))
    } else {
        <[u8; 16]>::try_from(b).ok().map(IpAddr::from)
    }
}

/// One epoch's exact spreads (the module docs say what is counted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochSpreads {
    epoch: u64,
    frames: u64,
    /// Distinct (source, destination).
    pairs: HashSet<(IpAddr, IpAddr)>,
    /// Distinct (source, destination, destination port).
    triples: HashSet<(IpAddr, IpAddr, u16)>,
    spreads: HashMap<SpreadKey, u64>,
}

impl EpochSpreads {
    /// Epoch `epoch` (from 0), no frame yet.
    pub fn new(epoch: u64) -> Self {
        Self {
            epoch,
            ..Self::default()
        }
    }

    /// The epoch's number, from 0.
    pub const fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Frames added (every outcome).
    pub const fn frames(&self) -> u64 {
        self.frames
    }

    /// Adds a frame: its key's elements if it is expected to parse as a flow.
    pub fn add(&mut self, t: &FrameTruth) {
        self.frames += 1;
        if let Some(k) = t.flow() {
            self.add_flow(&k);
        }
    }

    /// Adds a flow's key (its elements), not counting a frame: exact spreads of
    /// flows known some other way (`loxo top`'s exact counter).
    pub fn add_flow(&mut self, k: &FlowKey) {
        let (Some(s), Some(d)) = (address(k.src_bytes()), address(k.dst_bytes())) else {
            return;
        };
        if self.pairs.insert((s, d)) {
            *self.spreads.entry(SpreadKey::Source(s)).or_default() += 1;
            *self.spreads.entry(SpreadKey::Destination(d)).or_default() += 1;
        }
        if self.triples.insert((s, d, k.dst_port())) {
            *self.spreads.entry(SpreadKey::Pair(s, d)).or_default() += 1;
        }
    }

    /// The key's spread in the epoch (0 if it was not seen).
    pub fn spread(&self, key: &SpreadKey) -> u64 {
        self.spreads.get(key).copied().unwrap_or(0)
    }

    /// The epoch's distinct (key, element) pairs of `role`: distinct (source,
    /// destination) for fan-out and fan-in, (source, destination, port) for ports.
    pub fn pairs(&self, role: Role) -> u64 {
        match role {
            Role::FanOut | Role::FanIn => self.pairs.len() as u64,
            Role::DstPorts => self.triples.len() as u64,
        }
    }

    /// Every key of `role` seen in the epoch with its spread, the largest first (ties
    /// in key order).
    pub fn spreads(&self, role: Role) -> Vec<(SpreadKey, u64)> {
        let mut v: Vec<(SpreadKey, u64)> = self
            .spreads
            .iter()
            .filter(|(k, _)| k.role() == role)
            .map(|(k, &s)| (*k, s))
            .collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// The spreads of each epoch of `epoch_frames` frames of `truth` (in pcap order; the
/// last epoch may be shorter). `epoch_frames` = 0 makes the whole trace one epoch.
pub fn epoch_spreads<'a>(
    truth: impl IntoIterator<Item = &'a FrameTruth>,
    epoch_frames: u64,
) -> Vec<EpochSpreads> {
    let mut out = Vec::new();
    let mut cur = EpochSpreads::new(0);
    for t in truth {
        cur.add(t);
        if cur.frames == epoch_frames {
            let next = EpochSpreads::new(cur.epoch + 1);
            out.push(std::mem::replace(&mut cur, next));
        }
    }
    if cur.frames > 0 {
        out.push(cur);
    }
    out
}
