//! IPFIX (RFC 7011) export of loxo's elephant-flow reports, `no_std`, no allocation.
//!
//! Data path: `FlowMonitor` → `Report` (with `ByteWeight::Ip`) → [`Exporter`] →
//! IPFIX messages, one at a time into the caller's buffer → UDP → a collector
//! (nfcapd, pmacct, GoFlow2, ntopng, Wireshark's `cflow` dissector).
//!
//! - Every elephant is one data record of the IPv4 ([`ie::FLOW_V4`], 84 bytes) or
//!   IPv6 ([`ie::FLOW_V6`], 108 bytes) template: the 5-tuple, `octetDeltaCount` and
//!   `packetDeltaCount` (the **upper bounds**, which always hold and equal the exact
//!   count whenever the bounds are exact), `flowStartMilliseconds` /
//!   `flowEndMilliseconds` (the epoch's observation interval), and loxo's enterprise
//!   elements ([`LOXO_PEN`]): both bounds of both counts, a flags byte ([`flags`]) and
//!   the epoch number.
//! - Each report may add one options record ([`ie::EPOCH`], 121 bytes) with the
//!   epoch's totals, scoped by the observation domain.
//! - With [`Config::participant_records`], the epoch's DDoS participants
//!   (`loxo_flow::ParticipantsReport`) follow through
//!   [`Exporter::participant_messages`]: one [`ParticipantRecord`] per scanner or
//!   victim in its template of [`ie::PARTICIPANTS`], with IANA's distinct-count
//!   elements (380–383) or loxo's distinct destination ports, bounds, σ and flags.
//! - With [`Config::loss_records`], [`Exporter::loss_message`] sends an epoch's
//!   [`LossRecord`] ([`ie::LOSS`]): the packets the metering process did not observe
//!   (a host probe's kernel drops; RFC 7011 §4.2's `ignoredPacketTotalCount`).
//! - [`Exporter`] keeps the sequence number (data records sent, mod 2³²), re-sends the
//!   templates as RFC 7011 requires over UDP (first message, then every N messages
//!   and/or T seconds) and splits data sets so that no message exceeds the configured
//!   length; 1 472-byte messages hold 17 IPv4 or 13 IPv6 elephant records.
//! - [`Decoder`] reads messages back (loxo's and other exporters'), for tests and host
//!   tools.
//!
//! Wire views follow smoltcp: [`MessageHeader`], [`SetHeader`] and [`TemplateRecord`]
//! check their lengths once in `new_checked`, their accessors are then panic-free;
//! [`MessageRepr`], [`Template`], [`FlowRecord`] and [`EpochRecord`] parse and emit
//! the meaningful fields. The layout, element IDs and semantics are documented in
//! `docs/ipfix.md`.
//!
//! ```
//! use loxo_flow::{Bounds, ByteWeight, Elephant, FlowKey, Report};
//! use loxo_ipfix::{Config, Decoder, Exporter, Item, Times};
//!
//! let mut report = Report { byte_weight: ByteWeight::Ip, ..Report::new() };
//! let exact = |v| Bounds { lower: v, upper: v, lower_certain: true, saturated: false };
//! let key = FlowKey::v4([10, 0, 0, 1], [192, 0, 2, 7], 40000, 443, 6);
//! let _ = report.elephants.push(Elephant { key, bytes: exact(9000), packets: exact(7), certain: true });
//!
//! let mut exporter = Exporter::new(Config { observation_domain_id: 42, ..Config::DEFAULT })?;
//! let mut msgs = exporter.messages(&report, Times { export_time: 1_700_000_000, start_ms: 0, end_ms: 1000 })?;
//! let mut buf = [0u8; 1472];
//! let len = msgs.next_into(&mut buf)?.unwrap_or(0);
//!
//! let mut decoder = Decoder::<8, 32>::new();
//! let flows: Vec<_> = decoder
//!     .read(&buf[..len])?
//!     .filter_map(|i| match i { Ok(Item::Flow(f)) => Some(f), _ => None })
//!     .collect();
//! assert_eq!((flows[0].key, flows[0].octets, flows[0].packets), (key, 9000, 7));
//! # Ok::<(), loxo_ipfix::Error>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]

mod decoder;
mod error;
mod exporter;
pub mod ie;
mod loss;
mod message;
mod participant;
mod record;
mod set;
mod template;
mod wire;

pub use decoder::{Decoder, Item, Message};
pub use error::Error;
pub use exporter::{Config, Exporter, Messages, ParticipantMessages, Times};
pub use ie::LOXO_PEN;
pub use loss::LossRecord;
pub use message::{MessageHeader, MessageRepr, HEADER_LEN, VERSION};
pub use participant::ParticipantRecord;
pub use record::{DataRecords, ElephantInfo, EpochRecord, Fields, FlowRecord};
pub use set::{
    SetHeader, SetKind, Sets, MIN_TEMPLATE_ID, OPTIONS_TEMPLATE_SET_ID, SET_HEADER_LEN,
    TEMPLATE_SET_ID,
};
pub use template::{FieldSpec, FieldSpecs, Template, TemplateRecord, VARIABLE_LENGTH};

/// Bits of loxo's flags elements: `loxoElephantFlags` (flow records) and
/// `loxoEpochFlags` (epoch records).
pub mod flags {
    /// Elephant: its share is ≥ θ for certain (clear: *possible*, only its upper bound
    /// reaches θ).
    pub const CERTAIN: u8 = 0x01;
    /// Elephant: the octet lower bound always holds (clear: with probability ≥ 95 %).
    pub const OCTETS_LOWER_CERTAIN: u8 = 0x02;
    /// Elephant: the packet lower bound always holds.
    pub const PACKETS_LOWER_CERTAIN: u8 = 0x04;
    /// Elephant: the octet sketch saturated — no bound (lower 0, upper 2⁶⁴ − 1).
    pub const OCTETS_SATURATED: u8 = 0x08;
    /// Elephant: the packet sketch saturated — no bound.
    pub const PACKETS_SATURATED: u8 = 0x10;
    /// Epoch: more flows than the new-flow filters' design load (or sampled); new
    /// flows is an unbiased estimate with a wider error.
    pub const NEW_FLOWS_OVERLOADED: u8 = 0x01;
    /// Epoch: recall 1 certified (every flow ≥ θ is listed or counted as left out).
    pub const ELEPHANTS_COMPLETE: u8 = 0x02;
    /// Epoch: θ is a share of packets (clear: of bytes).
    pub const SHARE_OF_PACKETS: u8 = 0x04;
    /// Participant: a quarter or more of its registers saturated — the spread is
    /// "at least" the count.
    pub const SPREAD_SATURATED: u8 = 0x01;
    /// Participant: its list (scanners or victims) was full — more participants of
    /// the epoch qualified than were exported.
    pub const PARTICIPANTS_LEFT_OUT: u8 = 0x02;
}
