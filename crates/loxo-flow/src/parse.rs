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

/// Why [`parse_frame_captured`] gives no [`Parsed`] outcome for a frame a capture cut
/// to its snap length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum CapturedError {
    /// The frame breaks a key rule, and the captured bytes show it: the [`ParseError`]
    /// [`parse_frame`] gives the whole frame.
    Malformed(ParseError),
    /// The headers are well-formed as far as they were captured, but one the key needs
    /// lies past the captured bytes: the capture's snap length cut it. Neither a flow
    /// nor a malformed frame — the parser does not guess the missing bytes.
    Snapped {
        /// Bytes from the start of the frame the key needs (at least; a header past the
        /// cut may need more).
        needed: usize,
        /// Bytes the capture holds.
        captured: usize,
    },
}

impl From<ParseError> for CapturedError {
    fn from(e: ParseError) -> Self {
        Self::Malformed(e)
    }
}

impl fmt::Display for CapturedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(e) => e.fmt(f),
            Self::Snapped { needed, captured } => write!(
                f,
                "header cut by the snap length: the key needs {needed} bytes, {captured} captured"
            ),
        }
    }
}

impl core::error::Error for CapturedError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Malformed(e) => Some(e),
            Self::Snapped { .. } => None,
        }
    }
}

/// A parsed IP frame: its key and its byte weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Flow {
    /// The canonical 5-tuple.
    pub key: FlowKey,
    /// Byte weight, per the [`ByteWeight`] parsed with: the frame's length on the wire
    /// (no FCS), saturated to `u32` — the slice's length for [`parse_frame`],
    /// `wire_len` for [`parse_frame_captured`] — or, for [`ByteWeight::Ip`], the IP
    /// packet's length (IPv4's total length, IPv6's 40 + payload length: header +
    /// payload, without link header or Ethernet padding).
    pub len: u32,
    /// `true` for a non-first fragment (offset > 0), keyed with ports 0.
    pub fragment: bool,
}

/// What a byte of traffic is: the unit of [`Flow::len`], of `Report::bytes` and of
/// every elephant's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ByteWeight {
    /// A frame weighs its length on the wire without FCS: link header, VLAN tags and
    /// Ethernet padding included — what the link carried.
    #[default]
    Wire,
    /// A frame weighs its IP packet's length, header + payload: the unit of IPFIX's
    /// `octetDeltaCount` (RFC 7012) and of NetFlow collectors, so exported figures add
    /// up with other exporters'.
    Ip,
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

/// The bytes the parser reads. A span has a *declared* length — what the length checks
/// of the key rules compare with — and the bytes at hand: for a whole frame (`&[u8]`)
/// they are the same; for a frame cut by a capture's snap length ([`Cut`]) the bytes at
/// hand may stop short of the declared length. One generic parser serves both, so the
/// key rules are written once; the `&[u8]` instance is the code `parse_frame` always
/// was (every method is the slice operation it replaces).
trait Span<'a>: Copy {
    /// What a failed check returns.
    type Error;
    /// The declared length.
    fn len(self) -> usize;
    /// The declared sub-span `from..to`, or `err` when it does not fit.
    fn sub(self, from: usize, to: usize, err: ParseError) -> Result<Self, Self::Error>;
    /// The span from `from` on, empty past the end.
    fn tail(self, from: usize) -> Self;
    /// The `N` bytes at `at`: `err` when they lie past the declared length, and for a
    /// [`Cut`] span [`CapturedError::Snapped`] when they lie past the captured bytes.
    fn read<const N: usize>(self, at: usize, err: ParseError) -> Result<&'a [u8; N], Self::Error>;
    /// The big-endian `u16` at `at`, read as [`read`](Self::read) reads.
    fn be16(self, at: usize, err: ParseError) -> Result<u16, Self::Error> {
        let &[x, y] = self.read::<2>(at, err)?;
        Ok(u16::from_be_bytes([x, y]))
    }
    /// `err` as this span's error.
    fn malformed(err: ParseError) -> Self::Error;
}

impl<'a> Span<'a> for &'a [u8] {
    type Error = ParseError;
    #[inline(always)]
    fn len(self) -> usize {
        <[u8]>::len(self)
    }
    #[inline(always)]
    fn sub(self, from: usize, to: usize, err: ParseError) -> Result<Self, ParseError> {
        self.get(from..to).ok_or(err)
    }
    #[inline(always)]
    fn tail(self, from: usize) -> Self {
        self.get(from..).unwrap_or(&[])
    }
    #[inline(always)]
    fn read<const N: usize>(self, at: usize, err: ParseError) -> Result<&'a [u8; N], ParseError> {
        self.get(at..at + N)
            .and_then(|b| b.try_into().ok())
            .ok_or(err)
    }
    #[inline(always)]
    fn be16(self, at: usize, err: ParseError) -> Result<u16, ParseError> {
        slice_be16(self, at).ok_or(err)
    }
    #[inline(always)]
    fn malformed(err: ParseError) -> ParseError {
        err
    }
}

/// A frame cut by a capture's snap length: `bytes` (at most `len` of them) are what
/// was captured of the declared `len`; `base` is the span's offset in the frame and
/// `captured` the frame's captured length (for [`CapturedError::Snapped`]).
#[derive(Clone, Copy)]
struct Cut<'a> {
    bytes: &'a [u8],
    len: usize,
    base: usize,
    captured: usize,
}

impl<'a> Span<'a> for Cut<'a> {
    type Error = CapturedError;
    fn len(self) -> usize {
        self.len
    }
    fn sub(self, from: usize, to: usize, err: ParseError) -> Result<Self, CapturedError> {
        if from > to || to > self.len {
            return Err(CapturedError::Malformed(err));
        }
        let have = self.bytes.len();
        Ok(Cut {
            bytes: self.bytes.get(from.min(have)..to.min(have)).unwrap_or(&[]),
            len: to - from,
            base: self.base + from,
            captured: self.captured,
        })
    }
    fn tail(self, from: usize) -> Self {
        let from = from.min(self.len);
        Cut {
            bytes: self.bytes.get(from..).unwrap_or(&[]),
            len: self.len - from,
            base: self.base + from,
            captured: self.captured,
        }
    }
    fn read<const N: usize>(
        self,
        at: usize,
        err: ParseError,
    ) -> Result<&'a [u8; N], CapturedError> {
        let end = at.saturating_add(N);
        if end > self.len {
            return Err(CapturedError::Malformed(err));
        }
        self.bytes
            .get(at..end)
            .and_then(|b| b.try_into().ok())
            .ok_or(CapturedError::Snapped {
                needed: self.base.saturating_add(end),
                captured: self.captured,
            })
    }
    fn malformed(err: ParseError) -> CapturedError {
        CapturedError::Malformed(err)
    }
}

/// `parse_frame`'s EtherType reader, as it always was.
#[inline]
fn slice_be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

/// The link layer of the key rules, then the IP layer: the body of [`parse_frame`]
/// (`$frame: &[u8]`) and of [`parse_frame_captured`] (`$frame: Cut`). A macro rather
/// than a generic function: the same code through a generic `fn` (even
/// `#[inline(always)]`) cost `parse_frame` 3 more Cortex-M4 instructions per IPv4 frame
/// (LLVM lays out the tag checks differently), and the firmware's per-frame budget has
/// no room for them; the IP layer below is generic at no cost.
macro_rules! ethernet {
    ($frame:ident, $span:ty, $ip:expr) => {{
        let len = u32::try_from(Span::len($frame)).unwrap_or(u32::MAX);
        let mut ethertype = Span::be16($frame, 12, ParseError::Runt)?;
        let mut off = ETH_HDR;
        if Span::len($frame) < ETH_HDR {
            return Err(<$span as Span>::malformed(ParseError::Runt));
        }
        if ethertype == ETHERTYPE_QINQ {
            // S-tag (4 bytes: TCI + inner EtherType); QinQ is accepted only with a C-tag
            // inside.
            ethertype = Span::be16($frame, off + 2, ParseError::Runt)?;
            off += 4;
            if ethertype != ETHERTYPE_VLAN {
                return Ok(Parsed::NotIp);
            }
        }
        if ethertype == ETHERTYPE_VLAN {
            ethertype = Span::be16($frame, off + 2, ParseError::Runt)?;
            off += 4;
        }
        let l3 = Span::tail($frame, off);
        // Each branch builds its result in place: merged, the two key constructions
        // became an unaligned `memcpy` of zeros on Cortex-M.
        match ethertype {
            ETHERTYPE_IPV4 => ipv4(l3, len, $ip),
            ETHERTYPE_IPV6 => ipv6(l3, len, $ip),
            _ => Ok(Parsed::NotIp),
        }
    }};
}

/// Parses one Ethernet frame (without FCS) into its flow key, following the key rules of
/// the crate docs. Cost: O(header bytes), at most 8 extension headers; no allocation.
/// The frame's byte weight ([`Flow::len`]) is `frame.len()`: the same as
/// [`parse_frame_captured`]`(frame, frame.len())`.
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
    ethernet!(frame, &[u8], false)
}

/// [`parse_frame`] with the byte weight `weight`: [`ByteWeight::Wire`] is
/// [`parse_frame`]; with [`ByteWeight::Ip`], [`Flow::len`] is the IP packet's length.
/// (The weight is chosen here, where the IP length is at hand: chosen later, from a
/// second length field, it cost the firmware 14 instructions per frame.)
///
/// # Errors
/// As [`parse_frame`].
pub fn parse_frame_weighted(frame: &[u8], weight: ByteWeight) -> Result<Parsed, ParseError> {
    ethernet!(frame, &[u8], weight == ByteWeight::Ip)
}

/// Parses a frame of which a capture holds only the first bytes: `captured` is what the
/// capture's snap length kept (a pcap record's data), `wire_len` the frame's length on
/// the wire (the record's original length, without FCS). Follows the key rules of the
/// crate docs with the snap-length rule: headers are read from `captured` only, the IP
/// total / payload length and every other length check compare with `wire_len`, and
/// the flow weighs `wire_len` bytes. A `wire_len` below `captured.len()` is taken as
/// `captured.len()` (a frame is never shorter than what was captured of it), so
/// `parse_frame_captured(f, f.len())` is [`parse_frame`]`(f)`.
///
/// Cost: [`parse_frame`]'s when nothing was cut; otherwise the same walk with one more
/// comparison per header read. No allocation.
///
/// # Errors
/// [`CapturedError::Malformed`] with the [`ParseError`] [`parse_frame`] gives the whole
/// frame when the rule it breaks shows within the captured bytes;
/// [`CapturedError::Snapped`] when the headers are well-formed as far as they were
/// captured but one the key needs lies past them (nothing is guessed).
///
/// ```
/// use loxo_flow::{parse_frame_captured, CapturedError, FlowKey, Parsed};
/// // A 1 000-byte IPv4/UDP frame captured with a 64-byte snap length.
/// let mut frame = [0u8; 1000];
/// frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
/// frame[14] = 0x45;
/// frame[16..18].copy_from_slice(&986u16.to_be_bytes()); // IP total length
/// frame[23] = 17; // UDP
/// frame[34..38].copy_from_slice(&[0, 53, 0x14, 0xe9]); // ports 53 → 5353
/// let Ok(Parsed::Flow(f)) = parse_frame_captured(&frame[..64], 1000) else { panic!() };
/// assert_eq!((f.len, f.key), (1000, FlowKey::v4([0; 4], [0; 4], 53, 5353, 17)));
/// // Cut inside the IP header: its own outcome, not a malformed frame.
/// assert_eq!(
///     parse_frame_captured(&frame[..30], 1000),
///     Err(CapturedError::Snapped { needed: 34, captured: 30 })
/// );
/// ```
pub fn parse_frame_captured(captured: &[u8], wire_len: usize) -> Result<Parsed, CapturedError> {
    parse_frame_captured_weighted(captured, wire_len, ByteWeight::Wire)
}

/// [`parse_frame_captured`] with the byte weight `weight` (see
/// [`parse_frame_weighted`]).
///
/// # Errors
/// As [`parse_frame_captured`].
pub fn parse_frame_captured_weighted(
    captured: &[u8],
    wire_len: usize,
    weight: ByteWeight,
) -> Result<Parsed, CapturedError> {
    if wire_len <= captured.len() {
        return parse_frame_weighted(captured, weight).map_err(CapturedError::Malformed);
    }
    let frame = Cut {
        bytes: captured,
        len: wire_len,
        base: 0,
        captured: captured.len(),
    };
    ethernet!(frame, Cut<'_>, weight == ByteWeight::Ip)
}

/// Always inlined: `parse_frame` and `parse_frame_weighted` both instantiate it, and
/// as a call (LLVM's choice once it had two callers) it cost 14 Cortex-M4
/// instructions per IPv4 frame.
#[inline(always)]
fn ipv4<'a, S: Span<'a>>(l3: S, len: u32, ip: bool) -> Result<Parsed, S::Error> {
    let hdr: &[u8; 20] = l3.read::<20>(0, ParseError::Ipv4Truncated)?;
    if hdr[0] >> 4 != 4 {
        return Err(S::malformed(ParseError::VersionMismatch));
    }
    let ihl = usize::from(hdr[0] & 0x0f) * 4;
    if ihl < 20 {
        return Err(S::malformed(ParseError::Ipv4BadIhl));
    }
    if ihl > l3.len() {
        return Err(S::malformed(ParseError::Ipv4Truncated));
    }
    let total = usize::from(u16::from_be_bytes([hdr[2], hdr[3]]));
    if total < ihl {
        return Err(S::malformed(ParseError::Ipv4Truncated));
    }
    // Ethernet padding after `total` is ignored: the payload is what the IP header declares.
    let payload = l3.sub(ihl, total, ParseError::Ipv4TotalLength)?;
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
        len: if ip { total as u32 } else { len },
        fragment,
    }))
}

/// Out of line: the IPv6 walk would otherwise bloat the IPv4 fast path.
#[inline(never)]
fn ipv6<'a, S: Span<'a>>(l3: S, len: u32, ip: bool) -> Result<Parsed, S::Error> {
    let hdr: &[u8; 40] = l3.read::<40>(0, ParseError::Ipv6Truncated)?;
    if hdr[0] >> 4 != 6 {
        return Err(S::malformed(ParseError::VersionMismatch));
    }
    let plen = usize::from(u16::from_be_bytes([hdr[4], hdr[5]]));
    let mut payload = l3.sub(40, 40 + plen, ParseError::Ipv6PayloadLength)?;
    let len = if ip { 40 + plen as u32 } else { len };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src.copy_from_slice(&hdr[8..24]);
    dst.copy_from_slice(&hdr[24..40]);
    let mut nh = hdr[6];
    let mut walked = 0usize;
    loop {
        let ext_len = match nh {
            0 | 43 | 60 => {
                let &[n] = payload.read::<1>(1, ParseError::Ipv6ExtensionTruncated)?;
                (usize::from(n) + 1) * 8
            }
            44 => 8,
            50 | 51 => return Ok(v6_flow(src, dst, (0, 0, nh), len, false)),
            _ => break,
        };
        walked += 1;
        if walked > MAX_IPV6_EXTENSIONS {
            return Err(S::malformed(ParseError::Ipv6TooManyExtensions));
        }
        let ext = payload.sub(0, ext_len, ParseError::Ipv6ExtensionTruncated)?;
        let &[next] = ext.read::<1>(0, ParseError::Ipv6ExtensionTruncated)?;
        if nh == 44 {
            let offset = ext.be16(2, ParseError::Ipv6ExtensionTruncated)? >> 3;
            if offset > 0 {
                return Ok(v6_flow(src, dst, (0, 0, next), len, true));
            }
        }
        nh = next;
        payload = payload.tail(ext_len);
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

/// Ports by protocol: TCP/UDP/SCTP ports, ICMP/ICMPv6 type/code, others 0. The whole
/// transport header must fit in the declared payload; only its first 4 bytes are read.
#[inline]
fn ports<'a, S: Span<'a>>(proto: u8, l4: S) -> Result<(u16, u16), S::Error> {
    let need = match proto {
        6 => 20,
        17 | 1 | 58 => 8,
        132 => 12,
        _ => return Ok((0, 0)),
    };
    if l4.len() < need {
        return Err(S::malformed(ParseError::TransportTruncated));
    }
    match (proto, l4.read::<4>(0, ParseError::TransportTruncated)) {
        (1 | 58, Ok(&[t, c, _, _])) => Ok((u16::from(t), u16::from(c))),
        (_, Ok(&[a, b, c, d])) => Ok((u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]))),
        (_, Err(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    //! The snap-length rule: `parse_frame_captured` against `parse_frame` of the whole
    //! frame (the frame-level key rules are tested in `tests/parse.rs`).
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    extern crate std;
    use std::string::ToString;
    use std::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    const S4: [u8; 4] = [10, 0, 0, 1];
    const D4: [u8; 4] = [192, 168, 1, 2];

    /// Ethernet header with `tags` (each followed by a TCI) and `ethertype`.
    fn eth(tags: &[u16], ethertype: u16) -> Vec<u8> {
        let mut f = std::vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        for &t in tags {
            f.extend_from_slice(&t.to_be_bytes());
            f.extend_from_slice(&[0, 5]);
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f
    }

    /// IPv4 header (`opts` bytes of options) declaring `total` bytes, protocol `proto`,
    /// followed by `payload`.
    fn v4(proto: u8, opts: usize, total: usize, payload: &[u8]) -> Vec<u8> {
        let ihl = 20 + opts;
        let mut h = std::vec![0u8; ihl];
        h[0] = 0x40 | (ihl / 4) as u8;
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        h[9] = proto;
        h[12..16].copy_from_slice(&S4);
        h[16..20].copy_from_slice(&D4);
        h.extend_from_slice(payload);
        h
    }

    /// IPv6 header declaring `plen` payload bytes, first next header `nh`, then `payload`.
    fn v6(nh: u8, plen: usize, payload: &[u8]) -> Vec<u8> {
        let mut h = std::vec![0u8; 40];
        h[0] = 0x60;
        h[4..6].copy_from_slice(&(plen as u16).to_be_bytes());
        h[6] = nh;
        h[8] = 0x20;
        h[24] = 0x20;
        h.extend_from_slice(payload);
        h
    }

    fn udp(sp: u16, dp: u16) -> Vec<u8> {
        let mut v = std::vec![0u8; 8];
        v[..2].copy_from_slice(&sp.to_be_bytes());
        v[2..4].copy_from_slice(&dp.to_be_bytes());
        v
    }

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    /// `frame` grown to `len` bytes with zeros (the payload a snap length cuts off).
    fn padded(mut frame: Vec<u8>, len: usize) -> Vec<u8> {
        frame.resize(len, 0);
        frame
    }

    fn snapped(needed: usize, captured: usize) -> Result<Parsed, CapturedError> {
        Err(CapturedError::Snapped { needed, captured })
    }

    #[test]
    fn whole_frames_are_parse_frame() {
        let frames = [
            cat(&[&eth(&[], 0x0800), &v4(17, 0, 28, &udp(1, 2))]),
            cat(&[&eth(&[0x8100], 0x86dd), &v6(17, 8, &udp(3, 4))]),
            cat(&[&eth(&[], 0x0800), &v4(17, 0, 29, &udp(1, 2))]),
            std::vec![0u8; 10],
            eth(&[], 0x0806),
        ];
        for f in &frames {
            let whole = parse_frame(f).map_err(CapturedError::Malformed);
            assert_eq!(parse_frame_captured(f, f.len()), whole, "{f:?}");
            // A wire length below the captured bytes is the captured length.
            assert_eq!(parse_frame_captured(f, 0), whole, "{f:?}");
        }
    }

    #[test]
    fn the_wire_length_weighs_and_bounds_the_ip_lengths() {
        // A 1 000-byte IPv4/UDP frame, 64 bytes captured: weighed 1 000 bytes.
        let f = padded(
            cat(&[&eth(&[], 0x0800), &v4(17, 0, 986, &udp(53, 5353))]),
            1000,
        );
        let want = Parsed::Flow(Flow {
            key: FlowKey::v4(S4, D4, 53, 5353, 17),
            len: 1000,
            fragment: false,
        });
        assert_eq!(parse_frame(&f), Ok(want));
        // Weighed in IP bytes: the total length.
        assert!(matches!(
            parse_frame_captured_weighted(&f[..64], 1000, ByteWeight::Ip),
            Ok(Parsed::Flow(Flow { len: 986, .. }))
        ));
        let want = Ok(want);
        for snap in [38, 42, 64, 96, 128, 999] {
            assert_eq!(parse_frame_captured(&f[..snap], 1000), want, "snap {snap}");
        }
        // The IP total length is checked against the wire length, not the capture.
        assert_eq!(
            parse_frame_captured(&f[..64], 999),
            Err(CapturedError::Malformed(ParseError::Ipv4TotalLength))
        );
        // IPv6: the payload length against the wire length.
        let f6 = padded(cat(&[&eth(&[], 0x86dd), &v6(17, 946, &udp(7, 8))]), 1000);
        assert!(matches!(
            parse_frame_captured(&f6[..64], 1000),
            Ok(Parsed::Flow(Flow { len: 1000, .. }))
        ));
        assert!(matches!(
            parse_frame_captured_weighted(&f6[..64], 1000, ByteWeight::Ip),
            Ok(Parsed::Flow(Flow { len: 986, .. }))
        ));
        assert_eq!(
            parse_frame_captured(&f6[..64], 999),
            Err(CapturedError::Malformed(ParseError::Ipv6PayloadLength))
        );
        // The transport header must fit in the declared payload (20 bytes for TCP)
        // though only its ports are read.
        let tcp = padded(cat(&[&eth(&[], 0x0800), &v4(6, 0, 40, &udp(1, 2))]), 54);
        assert!(matches!(
            parse_frame_captured(&tcp[..38], 54),
            Ok(Parsed::Flow(Flow { len: 54, .. }))
        ));
        // The IP length is what the header declares, padding not included.
        assert!(matches!(
            parse_frame_weighted(&tcp, ByteWeight::Ip),
            Ok(Parsed::Flow(Flow { len: 40, .. }))
        ));
        let short = padded(cat(&[&eth(&[], 0x0800), &v4(6, 0, 39, &udp(1, 2))]), 54);
        assert_eq!(
            parse_frame_captured(&short[..38], 54),
            Err(CapturedError::Malformed(ParseError::TransportTruncated))
        );
    }

    #[test]
    fn a_header_past_the_snap_length_is_snapped_not_malformed() {
        let f = padded(
            cat(&[&eth(&[], 0x0800), &v4(17, 0, 986, &udp(53, 5353))]),
            1000,
        );
        assert_eq!(parse_frame_captured(&f[..0], 1000), snapped(14, 0));
        assert_eq!(parse_frame_captured(&f[..13], 1000), snapped(14, 13));
        assert_eq!(parse_frame_captured(&f[..33], 1000), snapped(34, 33));
        assert_eq!(parse_frame_captured(&f[..37], 1000), snapped(38, 37));
        // Shorter on the wire than the header: malformed, whatever was captured.
        assert_eq!(
            parse_frame_captured(&f[..5], 10),
            Err(CapturedError::Malformed(ParseError::Runt))
        );
        assert_eq!(
            parse_frame_captured(&f[..30], 33),
            Err(CapturedError::Malformed(ParseError::Ipv4Truncated))
        );
        // A cut VLAN tag, a cut IPv4 option area, QinQ + IPv6 + TCP at a 64-byte snap
        // length (the ports end at byte 66).
        let vlan = padded(
            cat(&[&eth(&[0x8100], 0x0800), &v4(17, 0, 28, &udp(1, 2))]),
            60,
        );
        assert_eq!(parse_frame_captured(&vlan[..16], 60), snapped(18, 16));
        let opts = padded(cat(&[&eth(&[], 0x0800), &v4(17, 40, 68, &udp(1, 2))]), 90);
        assert_eq!(parse_frame_captured(&opts[..64], 90), snapped(78, 64));
        let qinq = padded(
            cat(&[&eth(&[0x88a8, 0x8100], 0x86dd), &v6(6, 20, &udp(80, 443))]),
            1000,
        );
        assert_eq!(parse_frame_captured(&qinq[..64], 1000), snapped(66, 64));
        assert!(matches!(
            parse_frame_captured(&qinq[..66], 1000),
            Ok(Parsed::Flow(Flow { len: 1000, .. }))
        ));
        // An IPv6 extension chain cut inside: the next header is unknown.
        let ext = [60u8, 0, 0, 0, 0, 0, 0, 0];
        let chain = cat(&[&ext, &ext, &[17, 0, 0, 0, 0, 0, 0, 0], &udp(5, 6)]);
        let f6 = padded(cat(&[&eth(&[], 0x86dd), &v6(60, 32, &chain)]), 200);
        assert_eq!(parse_frame_captured(&f6[..64], 200), snapped(72, 64));
        assert!(matches!(
            parse_frame_captured(&f6[..82], 200),
            Ok(Parsed::Flow(Flow { len: 200, .. }))
        ));
        // A non-first fragment needs no ports: not snapped where its ports would be.
        let frag = [17u8, 0, 0x03, 0x20, 0, 0, 0, 1];
        let f6 = padded(cat(&[&eth(&[], 0x86dd), &v6(44, 100, &frag)]), 154);
        assert!(matches!(
            parse_frame_captured(&f6[..62], 154),
            Ok(Parsed::Flow(Flow {
                fragment: true,
                len: 154,
                ..
            }))
        ));
        assert_eq!(
            CapturedError::Snapped {
                needed: 66,
                captured: 64
            }
            .to_string(),
            "header cut by the snap length: the key needs 66 bytes, 64 captured"
        );
    }

    /// A frame with a plausible link layer and IP header over random bytes: `tags` 0..3
    /// (none, 802.1Q, QinQ), IPv4 or IPv6, length fields near the frame's length.
    fn frame(tags: u8, v6: bool, slack: i16, nh: u8, mut bytes: Vec<u8>) -> Vec<u8> {
        let tag_list: &[u16] = match tags {
            0 => &[],
            1 => &[0x8100],
            _ => &[0x88a8, 0x8100],
        };
        let mut f = eth(tag_list, if v6 { 0x86dd } else { 0x0800 });
        let l3 = f.len();
        f.append(&mut bytes);
        let l3_len = f.len().saturating_sub(l3) as i32;
        let set = |f: &mut Vec<u8>, at: usize, v: u16| {
            if let Some(b) = f.get_mut(at..at + 2) {
                b.copy_from_slice(&v.to_be_bytes());
            }
        };
        if v6 {
            if let Some(b) = f.get_mut(l3) {
                *b = 0x60;
            }
            let plen = (l3_len - 40 + i32::from(slack)).clamp(0, 65535) as u16;
            set(&mut f, l3 + 4, plen);
            if let Some(b) = f.get_mut(l3 + 6) {
                *b = nh;
            }
        } else {
            if let Some(b) = f.get_mut(l3) {
                *b = 0x45 + (nh % 3);
            }
            let total = (l3_len + i32::from(slack)).clamp(0, 65535) as u16;
            set(&mut f, l3 + 2, total);
            if let Some(b) = f.get_mut(l3 + 9) {
                *b = [6, 17, 1, 132, 47][usize::from(nh % 5)];
            }
        }
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 8192,
            rng_seed: proptest::test_runner::RngSeed::Fixed(std::env::var("LOXO_PROPTEST_SEED").map_or(18, |s| s.trim().parse().expect("LOXO_PROPTEST_SEED: a decimal u64"))),
            ..ProptestConfig::default()
        })]
        /// Cut anywhere, a frame parses to what the whole frame parses to, or to
        /// `Snapped` with a need past the cut; never to another outcome or weight.
        #[test]
        fn a_cut_frame_is_the_whole_frame_or_snapped(
            tags in 0u8..3,
            v6 in any::<bool>(),
            slack in -8i16..4,
            nh in prop::sample::select(std::vec![0u8, 6, 17, 43, 44, 50, 58, 60, 59]),
            bytes in prop::collection::vec(any::<u8>(), 0..160),
            cut in 0.0f64..=1.0,
        ) {
            let f = frame(tags, v6, slack, nh, bytes);
            let c = ((f.len() as f64) * cut) as usize;
            let whole = parse_frame(&f).map_err(CapturedError::Malformed);
            match parse_frame_captured(&f[..c], f.len()) {
                Err(CapturedError::Snapped { needed, captured }) => {
                    prop_assert_eq!(captured, c);
                    prop_assert!(needed > c && needed <= f.len(), "{} {}", needed, c);
                    // Captured up to the need, the frame is no longer cut there.
                    let again = parse_frame_captured(&f[..needed], f.len());
                    let same_need = matches!(again, Err(CapturedError::Snapped { needed: n, .. }) if n == needed);
                    prop_assert!(!same_need);
                }
                other => prop_assert_eq!(other, whole),
            }
        }
    }
}
