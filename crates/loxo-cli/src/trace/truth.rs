//! The test oracle: what a parser that follows `loxo_flow`'s key rules must make of
//! each generated frame, worked out from the generator's own record of what it wrote.
//!
//! # What it guarantees
//!
//! For every frame, [`FrameTruth::expected`] is the outcome the key rules of the
//! `loxo_flow` crate docs call for — [`Expected::Flow`] with the key the frame was built
//! for, [`Expected::NotIp`], or [`Expected::Malformed`] with the first
//! [`ParseError`] in the rules' order — and [`FrameTruth::expected_parse_weighted`]
//! turns it into the exact `parse_frame_weighted` result, byte weight included.
//!
//! # How, and why it is independent of the parser
//!
//! The builders (`frames.rs`) and the damages (`damage.rs`) record each frame as a
//! `Layout`: its length, link layer, IP version field, header lengths, length fields
//! and IPv6 extension chain, as written — fields, never bytes read back.
//! `Layout::expected` applies the key rules to those fields: a second implementation
//! of the rules over a different representation. The key comes from the flow's fields
//! (`FlowKey::v4`/`v6`), not from the frame. Nothing here calls `parse_frame` (or any
//! other part of `loxo_flow`'s parser): a test that compares a parser, a monitor or
//! the firmware with this truth does not have the code under test on both sides, and
//! a disagreement means one of the two implementations is wrong.
//!
//! Checked by `tests/tests/oracle_parse.rs` (every frame of wide seeded traces:
//! `parse_frame` agrees with the truth) and by the generator's unit tests.

use loxo_flow::{ByteWeight, Flow, FlowKey, ParseError, Parsed, MAX_IPV6_EXTENSIONS};

use super::flows::ExtType;
use super::Damage;

/// What a parser following the key rules must make of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expected {
    /// An IP packet of [`FrameTruth::key`], weighing [`FrameTruth::len`] bytes.
    Flow,
    /// A valid link layer carrying something other than IP.
    NotIp,
    /// Malformed, for this reason.
    Malformed(ParseError),
}

/// The generator's record of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameTruth {
    /// Position in the trace, from 0 (pcap order).
    pub index: u64,
    /// Captured length in bytes: the frame's byte weight.
    pub len: u32,
    /// The IP packet's length as the generator wrote it (IPv4 total length, IPv6 40 +
    /// payload length: `ByteWeight::Ip`'s unit); 0 for a frame without an IP header.
    pub ip_len: u32,
    /// The key of the flow the frame was built for, from its fields (ports 0 for a
    /// non-first fragment and behind AH/ESP; ICMP type/code as ports); `None` for a
    /// non-IP frame. Kept for damaged frames too.
    pub key: Option<FlowKey>,
    /// Built as a non-first fragment.
    pub fragment: bool,
    /// A scan/flood frame (a key outside the flow population).
    pub flood: bool,
    /// What was done to the frame after it was built.
    pub damage: Damage,
    /// What `parse_frame` must return.
    pub expected: Expected,
}

impl FrameTruth {
    /// The `parse_frame` result the truth calls for.
    ///
    /// # Errors
    /// The [`ParseError`] of a frame the generator made malformed.
    pub fn expected_parse(&self) -> Result<Parsed, ParseError> {
        self.expected_parse_weighted(ByteWeight::Wire)
    }

    /// The `parse_frame_weighted(frame, weight)` result the truth calls for.
    ///
    /// # Errors
    /// The [`ParseError`] of a frame the generator made malformed.
    pub fn expected_parse_weighted(&self, weight: ByteWeight) -> Result<Parsed, ParseError> {
        match (self.expected, self.key) {
            (Expected::Flow, Some(key)) => Ok(Parsed::Flow(Flow {
                key,
                len: match weight {
                    ByteWeight::Wire => self.len,
                    ByteWeight::Ip => self.ip_len,
                },
                fragment: self.fragment,
            })),
            (Expected::Malformed(e), _) => Err(e),
            (Expected::NotIp | Expected::Flow, _) => Ok(Parsed::NotIp),
        }
    }

    /// The flow key, if the frame is expected to parse as a flow.
    pub fn flow(&self) -> Option<FlowKey> {
        match self.expected {
            Expected::Flow => self.key,
            _ => None,
        }
    }
}

/// The link layer as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    Untagged,
    /// One 802.1Q tag.
    Vlan,
    /// An 802.1ad S-tag and an 802.1Q C-tag.
    QinQ,
    /// An 802.1ad S-tag straight over IPv4 (no C-tag): not an accepted tag stack.
    LoneSTag,
}

impl Link {
    /// Offset of the network header.
    pub(super) const fn header_len(self) -> usize {
        match self {
            Self::Untagged => 14,
            Self::Vlan | Self::LoneSTag => 18,
            Self::QinQ => 22,
        }
    }
}

/// One IPv6 extension header as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ExtHeader {
    pub(super) ty: ExtType,
    pub(super) len: usize,
    /// A fragment header with a non-zero offset: the walk ends after it.
    pub(super) last_fragment: bool,
}

/// The network layer as written: the fields the key rules look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Net {
    /// An EtherType other than IPv4/IPv6.
    Other,
    V4 {
        /// The version nibble.
        version: u8,
        /// IHL · 4.
        ihl: usize,
        /// The total-length field.
        total: usize,
        /// Fragment offset > 0.
        fragment: bool,
        /// Transport bytes the key rules require (0: none).
        transport: usize,
    },
    V6 {
        version: u8,
        /// The payload-length field.
        payload: usize,
        /// The extension headers in order (AH/ESP not included: the walk stops there).
        chain: Vec<ExtHeader>,
        /// The walk ends at AH/ESP without reading it.
        stops_at_ah_esp: bool,
        /// Transport bytes the key rules require.
        transport: usize,
    },
}

/// The generator's record of a frame it wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) len: usize,
    pub(super) link: Link,
    pub(super) net: Net,
}

impl Layout {
    /// The IP packet's length its header declares (IPv4 total length, IPv6 40 +
    /// payload length), 0 without an IP header.
    pub(super) fn ip_len(&self) -> u32 {
        let n = match &self.net {
            Net::Other => 0,
            Net::V4 { total, .. } => *total,
            Net::V6 { payload, .. } => 40 + *payload,
        };
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Offset of the length field of the IP header, if it has one.
    pub(super) fn length_field(&self) -> Option<usize> {
        let l3 = self.link.header_len();
        match self.net {
            Net::V4 { .. } => Some(l3 + 2),
            Net::V6 { .. } => Some(l3 + 4),
            Net::Other => None,
        }
    }

    /// What the key rules (`loxo_flow` crate docs, `ParseError` variants) make of the
    /// frame described by this layout.
    pub(super) fn expected(&self) -> Expected {
        use ParseError as E;
        let bad = Expected::Malformed;
        // A frame shorter than its link header (EtherType, or a tag's inner EtherType)
        // is a runt.
        let l3 = self.link.header_len();
        if self.len < l3 {
            return bad(E::Runt);
        }
        if self.link == Link::LoneSTag {
            return Expected::NotIp;
        }
        let avail = self.len - l3;
        match &self.net {
            Net::Other => Expected::NotIp,
            &Net::V4 {
                version,
                ihl,
                total,
                fragment,
                transport,
            } => {
                if avail < 20 {
                    bad(E::Ipv4Truncated)
                } else if version != 4 {
                    bad(E::VersionMismatch)
                } else if ihl < 20 {
                    bad(E::Ipv4BadIhl)
                } else if ihl > avail || total < ihl {
                    bad(E::Ipv4Truncated)
                } else if total > avail {
                    bad(E::Ipv4TotalLength)
                } else if !fragment && total - ihl < transport {
                    bad(E::TransportTruncated)
                } else {
                    Expected::Flow
                }
            }
            Net::V6 {
                version,
                payload,
                chain,
                stops_at_ah_esp,
                transport,
            } => {
                if avail < 40 {
                    return bad(E::Ipv6Truncated);
                }
                if *version != 6 {
                    return bad(E::VersionMismatch);
                }
                if *payload > avail - 40 {
                    return bad(E::Ipv6PayloadLength);
                }
                let mut at = 0;
                for (i, h) in chain.iter().enumerate() {
                    // Options-format headers are sized by their second byte, read first.
                    if h.ty != ExtType::Fragment && *payload < at + 2 {
                        return bad(E::Ipv6ExtensionTruncated);
                    }
                    if i >= MAX_IPV6_EXTENSIONS {
                        return bad(E::Ipv6TooManyExtensions);
                    }
                    if *payload < at + h.len {
                        return bad(E::Ipv6ExtensionTruncated);
                    }
                    at += h.len;
                    if h.last_fragment {
                        return Expected::Flow;
                    }
                }
                if !stops_at_ah_esp && *payload - at < *transport {
                    bad(E::TransportTruncated)
                } else {
                    Expected::Flow
                }
            }
        }
    }
}
