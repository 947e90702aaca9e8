//! Ethernet/IP frame parsing into flow keys and an elephant-flow monitor composed from loxo
//! sketches, `no_std`, no allocation.
//!
//! Data path: frame → [`parse_frame`] (or [`parse_frame_captured`] for a capture's
//! record) → [`FlowKey`] (canonical 13/37 bytes) → one `Seed::hash` → the family
//! sketches: a [`FlowMonitor`] → [`Report`] (elephants, totals, distinct counts), and
//! beside it, fed the same keys, [`Participants`] → [`ParticipantsReport`] (the
//! DDoS participants: scanners and victims, from spread sketches).
//!
//! # Key rules
//! The exact-count tools (`loxo top`) and the tests follow the same rules:
//! - link layers: untagged, one 802.1Q tag (0x8100), or QinQ (0x88a8 then 0x8100); a cut tag
//!   is a runt; any other EtherType (ARP, LLDP, a lone 0x88a8, …) is [`Parsed::NotIp`];
//! - malformed frames map to one [`ParseError`] each (see its variants);
//! - IPv6 extension headers 0, 43, 44, 60 are walked in any order, at most
//!   [`MAX_IPV6_EXTENSIONS`]; AH (51) and ESP (50) end the walk with ports 0;
//! - fragments with offset > 0 have ports 0 and the transport protocol (IPv6: the fragment
//!   header's next header); first fragments carry ports;
//! - ICMP (1) / ICMPv6 (58): source port = type, destination port = code; other
//!   protocols than TCP/UDP/SCTP/ICMP: ports 0;
//! - the transport header must fit in the length the IP header declares (padding ignored);
//! - a frame's byte weight is its length on the wire (without FCS). [`parse_frame`] takes
//!   a whole frame, whose length that is. A capture cut to a snap length (`tcpdump -s N`)
//!   holds only a frame's first bytes and its original length:
//!   [`parse_frame_captured`]`(captured, wire_len)` reads the headers from the captured
//!   bytes only, checks the IP total / payload length (and every other length) against
//!   `wire_len` and weighs the flow `wire_len` bytes — the outcome [`parse_frame`] gives
//!   the whole frame. A header the key needs that lies past the captured bytes is
//!   [`CapturedError::Snapped`], its own outcome: never a guess, never a malformed frame.
//!   A `wire_len` below the captured length is taken as the captured length.
#![no_std]
#![forbid(unsafe_code)]

mod blocklist;
mod key;
mod parse;
mod participants;
mod theta;

pub use blocklist::Blocklist;
pub use key::{protocol_name, FlowKey, MAX_KEY_LEN, V4_KEY_LEN};
pub use loxo_spread::Estimate;
pub use monitor::{
    Bounds, Config, ConfigError, Elephant, EpochPolicy, Fed, FlowMonitor, FlowSketch,
    NewFlowFilter, Report, ShareOf, DEFAULT_CANDIDATES, FLOWS_P, MAX_BLOCKLISTED,
    NEW_FLOW_CAPACITY, NEW_FLOW_K, NEW_FLOW_WORDS, SKETCH_D, SKETCH_W, SOURCES_P,
};
pub use parse::{
    parse_frame, parse_frame_captured, parse_frame_captured_weighted, parse_frame_weighted,
    ByteWeight, CapturedError, Flow, ParseError, Parsed, MAX_IPV6_EXTENSIONS,
};
pub use participants::{
    DeviceParticipants, Endpoints, FirmwareParticipants, HostParticipants, Participant,
    Participants, ParticipantsConfig, ParticipantsReport, Role, SampledParticipants, BOUNDS_Z,
    DEFAULT_PARTICIPANTS, NOISE_Z, REPORT_Z,
};
pub use theta::{Theta, ThetaError};
mod monitor;
