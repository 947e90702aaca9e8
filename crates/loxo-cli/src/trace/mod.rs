//! Seeded synthetic traffic with its own ground truth: Ethernet frames over a Zipf or
//! Pareto flow population, with a mix of IPv4/IPv6/VLAN/QinQ, TCP/UDP/ICMP, non-first
//! fragments, an optional scan/flood share of attack packets, an optional share of
//! malformed frames and (opt-in) IPv4 options, IPv6 extension-header chains, AH/ESP,
//! Ethernet padding and more non-IP link layers.
//!
//! Every frame comes with a [`FrameTruth`]: the key the generator built it for
//! (`FlowKey::v4`/`v6` from the flow's fields, never from parsing the frame), its byte
//! weight, the damage done to it, and what a parser that follows `loxo_flow`'s key
//! rules must make of it — a flow, not IP, or one named
//! [`ParseError`](loxo_flow::ParseError). That expected outcome is worked out from the
//! generator's own record of the headers it wrote (a `Layout`: link, IP version field,
//! header lengths, length fields, extension chain) by the rules in the `loxo_flow`
//! crate docs: a second implementation of them over fields, not bytes. `parse_frame`
//! is not called here, so a test that compares a monitor (or the firmware, or
//! `parse_frame` itself) with the truth does not have the parser under test on both
//! sides (the oracle and its guarantee: `truth.rs`).
//!
//! Randomness is a counter-based `SplitMix64` (`loxo_core::mix64`), so a trace is a pure
//! function of its [`TraceConfig`]. With `extensions = 0` (the default) the frames are
//! byte-for-byte those of the generator before it kept a truth.
//!
//! A [`TrafficClass`] (`loxo gen --class`) reshapes the flood frames (random-source
//! IPv4/IPv6 floods, a SYN flood, horizontal and vertical scans, distributed floods
//! onto one or several victims, scanners hidden in the mix) or every frame (minimum
//! size, IPv6 extension chains, VLAN/QinQ tags, fragments); [`TrafficClass::Mix`], the
//! default, is the classic trace, unchanged.
//!
//! The truth of every participant — per epoch, each source's distinct destinations,
//! each destination's distinct sources, each (source, destination)'s distinct ports —
//! is counted from the frames' truth ([`EpochSpreads`], [`epoch_spreads`]); the
//! participants a class set out to make (its scanners, victims) are [`designed`].
//!
//! The files follow a frame's life: `gen.rs` (the loop: pick a flow, a size, maybe a
//! damage), `class.rs` (the traffic classes), `attack.rs` (the scan and DDoS classes'
//! frames and designed participants), `flows.rs` (a flow's fixed fields, from its id),
//! `frames.rs` (the bytes, with the `Layout` record of what was written), `damage.rs`
//! (what is done to a built frame), `truth.rs` (the oracle: a layout's expected
//! outcome, and the [`FrameTruth`] record), `truth_file.rs` (its CSV form, `loxo gen`'s
//! truth file), `participants.rs` (the spreads per epoch) and `participants_file.rs`
//! (their CSV form, `loxo gen`'s participants file).

mod attack;
#[cfg(test)]
mod attack_tests;
mod class;
#[cfg(test)]
mod class_tests;
mod damage;
mod flows;
mod frames;
mod gen;
mod participants;
mod participants_file;
#[cfg(test)]
mod participants_tests;
#[cfg(test)]
mod tests;
mod truth;
mod truth_file;

pub use attack::{designed, Attack, MAX_PARTICIPANTS};
pub use class::{TrafficClass, UnknownClass};
pub use damage::Damage;
pub use gen::{generate, generate_with_truth};
pub use participants::{epoch_spreads, EpochSpreads, Role, SpreadKey};
pub use participants_file::{
    participant_rows, participants_path, read_participants, write_participants,
    write_participants_header, ParticipantRow, PARTICIPANTS_HEADER,
};
pub use truth::{Expected, FrameTruth};
pub use truth_file::{read_truth, truth_path, write_truth_header, TruthParseError, TRUTH_HEADER};

/// Flow popularity law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Popularity {
    /// Flow of rank i (1-based) is picked with probability ∝ i^-α.
    Zipf(f64),
    /// Flow weights are Pareto(shape) samples (heavy-tailed flow sizes).
    Pareto(f64),
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceConfig {
    /// Frames in the trace.
    pub packets: u64,
    /// Flows in the population.
    pub flows: u32,
    /// Flow popularity.
    pub popularity: Popularity,
    /// Share of packets (0..=1) that are scan/flood packets: a flood, scan or DDoS
    /// class's attack frames, else each with a fresh unique key outside the population.
    pub flood: f64,
    /// Share of frames (0..=1) that are malformed.
    pub malformed: f64,
    /// RNG seed.
    pub seed: u64,
    /// Share of flows (0..=1) whose IP header carries extensions: IPv4 options, or an
    /// IPv6 chain of hop-by-hop / routing / destination-options / first-fragment
    /// headers, some ending in AH or ESP. When > 0 the trace also has padded
    /// minimum-size frames (IP length below the frame length), non-IP frames other
    /// than ARP (LLDP, ARP over 802.1Q, a lone 802.1ad S-tag) and two more damages
    /// (an IP length field cut inside the headers, an IPv6 chain past
    /// [`MAX_IPV6_EXTENSIONS`](loxo_flow::MAX_IPV6_EXTENSIONS)). 0 keeps the classic trace.
    pub extensions: f64,
    /// The traffic class: how the flood frames, or all frames, are shaped
    /// ([`TrafficClass::Mix`], the default, keeps the classic trace).
    pub class: TrafficClass,
    /// A scan or DDoS class's participants: how many scanners or victims, how many
    /// elements each (the default: the class's).
    pub attack: Attack,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            packets: 100_000,
            flows: 10_000,
            popularity: Popularity::Zipf(1.0),
            flood: 0.0,
            malformed: 0.0,
            seed: 1,
            extensions: 0.0,
            class: TrafficClass::Mix,
            attack: Attack::default(),
        }
    }
}

/// Counts of what was generated, from the generator's truth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Frames written.
    pub frames: u64,
    /// Frames whose expected outcome is a [`ParseError`](loxo_flow::ParseError).
    pub malformed: u64,
    /// Frames that are not IP (expected [`Parsed::NotIp`](loxo_flow::Parsed::NotIp)).
    pub not_ip: u64,
    /// Flood/scan frames (keys outside the population).
    pub flood: u64,
    /// Frames the generator damaged (most become malformed; a damaged non-IP frame
    /// stays non-IP unless cut below 14 bytes, a cut into Ethernet padding or a length
    /// field cut on a non-first fragment leaves a flow).
    pub damaged: u64,
    /// Bytes written (sum of frame lengths).
    pub bytes: u64,
}
