//! Frame parsing: Ethernet II (+ 802.1Q / QinQ) → IPv4 / IPv6 (+ extension walk) → ports.
//!
//! Hand-written over `&[u8]` with `get(..)` everywhere (no indexing that could panic).
//! `smoltcp::wire` and `etherparse` were considered: neither encodes this crate's key rules
//! exactly (smoltcp has no QinQ and no bounded IPv6 extension walk with a fragment-offset rule;
//! etherparse's slicing accepts/rejects on its own reasons — e.g. it treats IPv4 total length 0
//! as TSO and walks more extension types — so the malformed-reason contract would leak a
//! dependency's policy). The rules are short enough that one bounds-checked function is the
//! exact and auditable answer; the table tests pin every rule.

use core::fmt;

use crate::FlowKey;

const ETH_HDR: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
/// Maximum number of IPv6 extension headers walked; one more is [`ParseError::Ipv6TooManyExtensions`].
pub const MAX_IPV6_EXTENSIONS: usize = 8;

/// Why a frame is malformed. Each has its own counter in the monitor's statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ParseError {
    /// Shorter than the 14-byte Ethernet header, or a VLAN tag cut off.
    Runt,
    /// IPv4 header cut off (fewer than 20 or IHL·4 bytes), or total length 0 or below the header length.
    Ipv4Truncated,
    /// IPv4 IHL below 5.
    Ipv4BadIhl,
    /// IPv4 total length larger than the bytes present.
    Ipv4TotalLength,
    /// IPv6 fixed header (40 bytes) cut off.
    Ipv6Truncated,
    /// IPv6 payload length larger than the bytes present.
    Ipv6PayloadLength,
    /// An IPv6 extension header cut off inside the declared payload.
    Ipv6ExtensionTruncated,
    /// More than [`MAX_IPV6_EXTENSIONS`] IPv6 extension headers.
    Ipv6TooManyExtensions,
    /// The IP version field disagrees with the EtherType.
    VersionMismatch,
    /// TCP (20), UDP (8), SCTP (12) or ICMP/ICMPv6 (8) header does not fit in the IP payload.
    TransportTruncated,
}

impl ParseError {
    /// Number of variants (size of a per-reason counter array).
    pub const COUNT: usize = 10;
    /// All variants, in [`ParseError::index`] order.
    pub const ALL: [Self; Self::COUNT] = [
        Self::Runt,
        Self::Ipv4Truncated,
        Self::Ipv4BadIhl,
        Self::Ipv4TotalLength,
        Self::Ipv6Truncated,
        Self::Ipv6PayloadLength,
        Self::Ipv6ExtensionTruncated,
        Self::Ipv6TooManyExtensions,
        Self::VersionMismatch,
        Self::TransportTruncated,
    ];

    /// Dense index in `0..COUNT`, for counter arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Short stable name (`snake_case`), for logs and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Runt => "runt",
            Self::Ipv4Truncated => "ipv4_truncated",
            Self::Ipv4BadIhl => "ipv4_bad_ihl",
            Self::Ipv4TotalLength => "ipv4_total_length",
            Self::Ipv6Truncated => "ipv6_truncated",
            Self::Ipv6PayloadLength => "ipv6_payload_length",
            Self::Ipv6ExtensionTruncated => "ipv6_extension_truncated",
            Self::Ipv6TooManyExtensions => "ipv6_too_many_extensions",
            Self::VersionMismatch => "version_mismatch",
            Self::TransportTruncated => "transport_truncated",
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Runt => "runt frame or cut vlan tag",
            Self::Ipv4Truncated => "ipv4 header truncated",
            Self::Ipv4BadIhl => "ipv4 ihl below 5",
            Self::Ipv4TotalLength => "ipv4 total length exceeds the frame",
            Self::Ipv6Truncated => "ipv6 header truncated",
            Self::Ipv6PayloadLength => "ipv6 payload length exceeds the frame",
            Self::Ipv6ExtensionTruncated => "ipv6 extension header truncated",
            Self::Ipv6TooManyExtensions => "more than 8 ipv6 extension headers",
            Self::VersionMismatch => "ip version does not match the ethertype",
            Self::TransportTruncated => "transport header truncated",
        })
    }
}

impl core::error::Error for ParseError {}

/// A parsed IP frame: its key and its byte weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Flow {
    /// The canonical 5-tuple.
    pub key: FlowKey,
    /// Byte weight: the captured frame length (no FCS), saturated to `u32`.
    pub len: u32,
    /// `true` for a non-first fragment (offset > 0), keyed with ports 0.
    pub fragment: bool,
}

/// What a well-formed frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Parsed {
    /// An IPv4/IPv6 packet.
    Flow(Flow),
    /// A valid link layer carrying something other than IPv4/IPv6 (ARP, LLDP, …), or an
    /// unaccepted tag stack: neither a flow nor malformed.
    NotIp,
}

#[inline]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

/// Parses one Ethernet frame (without FCS) into its flow key, following the key rules of
/// the crate docs. Cost: O(header bytes), at most 8 extension headers; no allocation.
///
/// # Errors
/// A [`ParseError`] naming the first rule the frame breaks.
///
/// ```
/// use loxo_flow::{parse_frame, Parsed, ParseError};
/// assert_eq!(parse_frame(&[0u8; 10]), Err(ParseError::Runt));
/// let mut arp = [0u8; 42];
/// arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
/// assert_eq!(parse_frame(&arp), Ok(Parsed::NotIp));
/// ```
pub fn parse_frame(frame: &[u8]) -> Result<Parsed, ParseError> {
    let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
    let mut ethertype = be16(frame, 12).ok_or(ParseError::Runt)?;
    let mut off = ETH_HDR;
    if frame.len() < ETH_HDR {
        return Err(ParseError::Runt);
    }
    if ethertype == ETHERTYPE_QINQ {
        // S-tag (4 bytes: TCI + inner EtherType); QinQ is accepted only with a C-tag inside.
        ethertype = be16(frame, off + 2).ok_or(ParseError::Runt)?;
        off += 4;
        if ethertype != ETHERTYPE_VLAN {
            return Ok(Parsed::NotIp);
        }
    }
    if ethertype == ETHERTYPE_VLAN {
        ethertype = be16(frame, off + 2).ok_or(ParseError::Runt)?;
        off += 4;
    }
    let l3 = frame.get(off..).unwrap_or(&[]);
    // Each branch builds its result in place: merged, the two key constructions
    // became an unaligned `memcpy` of zeros on Cortex-M.
    match ethertype {
        ETHERTYPE_IPV4 => ipv4(l3, len),
        ETHERTYPE_IPV6 => ipv6(l3, len),
        _ => Ok(Parsed::NotIp),
    }
}

#[inline]
fn ipv4(l3: &[u8], len: u32) -> Result<Parsed, ParseError> {
    let hdr: &[u8; 20] = l3
        .get(..20)
        .and_then(|h| h.try_into().ok())
        .ok_or(ParseError::Ipv4Truncated)?;
    if hdr[0] >> 4 != 4 {
        return Err(ParseError::VersionMismatch);
    }
    let ihl = usize::from(hdr[0] & 0x0f) * 4;
    if ihl < 20 {
        return Err(ParseError::Ipv4BadIhl);
    }
    if ihl > l3.len() {
        return Err(ParseError::Ipv4Truncated);
    }
    let total = usize::from(u16::from_be_bytes([hdr[2], hdr[3]]));
    if total < ihl {
        return Err(ParseError::Ipv4Truncated);
    }
    // Ethernet padding after `total` is ignored: the payload is what the IP header declares.
    let payload = l3.get(ihl..total).ok_or(ParseError::Ipv4TotalLength)?;
    let frag_offset = u16::from_be_bytes([hdr[6], hdr[7]]) & 0x1fff;
    let proto = hdr[9];
    let src = [hdr[12], hdr[13], hdr[14], hdr[15]];
    let dst = [hdr[16], hdr[17], hdr[18], hdr[19]];
    let fragment = frag_offset > 0;
    let (sp, dp) = if fragment {
        (0, 0)
    } else {
        ports(proto, payload)?
    };
    Ok(Parsed::Flow(Flow {
        key: FlowKey::v4(src, dst, sp, dp, proto),
        len,
        fragment,
    }))
}

/// Out of line: the IPv6 walk would otherwise bloat the IPv4 fast path.
#[inline(never)]
fn ipv6(l3: &[u8], len: u32) -> Result<Parsed, ParseError> {
    let hdr: &[u8; 40] = l3
        .get(..40)
        .and_then(|h| h.try_into().ok())
        .ok_or(ParseError::Ipv6Truncated)?;
    if hdr[0] >> 4 != 6 {
        return Err(ParseError::VersionMismatch);
    }
    let plen = usize::from(u16::from_be_bytes([hdr[4], hdr[5]]));
    let mut payload = l3.get(40..40 + plen).ok_or(ParseError::Ipv6PayloadLength)?;
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&hdr[8..24]);
    dst.copy_from_slice(&hdr[24..40]);
    let mut nh = hdr[6];
    let mut walked = 0usize;
    loop {
        let ext_len = match nh {
            0 | 43 | 60 => {
                let n = payload.get(1).ok_or(ParseError::Ipv6ExtensionTruncated)?;
                (usize::from(*n) + 1) * 8
            }
            44 => 8,
            50 | 51 => return Ok(v6_flow(src, dst, (0, 0, nh), len, false)),
            _ => break,
        };
        walked += 1;
        if walked > MAX_IPV6_EXTENSIONS {
            return Err(ParseError::Ipv6TooManyExtensions);
        }
        let ext = payload
            .get(..ext_len)
            .ok_or(ParseError::Ipv6ExtensionTruncated)?;
        let next = *ext.first().ok_or(ParseError::Ipv6ExtensionTruncated)?;
        if nh == 44 {
            let offset = be16(ext, 2).ok_or(ParseError::Ipv6ExtensionTruncated)? >> 3;
            if offset > 0 {
                return Ok(v6_flow(src, dst, (0, 0, next), len, true));
            }
        }
        nh = next;
        payload = payload.get(ext_len..).unwrap_or(&[]);
    }
    let (sp, dp) = ports(nh, payload)?;
    Ok(v6_flow(src, dst, (sp, dp, nh), len, false))
}

fn v6_flow(
    src: [u8; 16],
    dst: [u8; 16],
    (sp, dp, proto): (u16, u16, u8),
    len: u32,
    fragment: bool,
) -> Parsed {
    Parsed::Flow(Flow {
        key: FlowKey::v6(src, dst, sp, dp, proto),
        len,
        fragment,
    })
}

/// Ports by protocol: TCP/UDP/SCTP ports, ICMP/ICMPv6 type/code, others 0.
#[inline]
fn ports(proto: u8, l4: &[u8]) -> Result<(u16, u16), ParseError> {
    let need = match proto {
        6 => 20,
        17 | 1 | 58 => 8,
        132 => 12,
        _ => return Ok((0, 0)),
    };
    if l4.len() < need {
        return Err(ParseError::TransportTruncated);
    }
    match (proto, l4.get(..4)) {
        (1 | 58, Some(&[t, c, _, _])) => Ok((u16::from(t), u16::from(c))),
        (_, Some(&[a, b, c, d])) => Ok((u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]))),
        _ => Err(ParseError::TransportTruncated),
    }
}
