//! Seeded synthetic traffic with its own ground truth: Ethernet frames over a Zipf or
//! Pareto flow population, with a mix of IPv4/IPv6/VLAN/QinQ, TCP/UDP/ICMP, non-first
//! fragments, an optional scan/flood share of unique-key packets, an optional share of
//! malformed frames and (opt-in) IPv4 options, IPv6 extension-header chains, AH/ESP,
//! Ethernet padding and more non-IP link layers.
//!
//! Every frame comes with a [`FrameTruth`]: the key the generator built it for
//! (`FlowKey::v4`/`v6` from the flow's fields, never from parsing the frame), its byte
//! weight, the damage done to it, and what a parser that follows `loxo_flow`'s key
//! rules must make of it — a flow, not IP, or one named [`ParseError`]. That expected
//! outcome is worked out from the generator's own record of the headers it wrote (a
//! `Layout`: link, IP version field, header lengths, length fields, extension
//! chain) by the rules in the `loxo_flow` crate docs: a second implementation of them
//! over fields, not bytes. `parse_frame` is not called here, so a test that compares
//! a monitor (or the firmware, or `parse_frame` itself) with the truth does not have
//! the parser under test on both sides.
//!
//! Randomness is a counter-based `SplitMix64` (`loxo_core::mix64`), so a trace is a pure
//! function of its [`TraceConfig`]. With `extensions = 0` (the default) the frames are
//! byte-for-byte those of the generator before it kept a truth.

use std::fmt;
use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use loxo_core::mix64;
use loxo_flow::{ByteWeight, Flow, FlowKey, ParseError, Parsed, MAX_IPV6_EXTENSIONS};

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
    /// Share of packets (0..=1) that are scan/flood packets with a fresh unique key.
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
    /// [`MAX_IPV6_EXTENSIONS`]). 0 keeps the classic trace.
    pub extensions: f64,
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
        }
    }
}

/// Counts of what was generated, from the generator's truth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Frames written.
    pub frames: u64,
    /// Frames whose expected outcome is a [`ParseError`].
    pub malformed: u64,
    /// Frames that are not IP (expected [`Parsed::NotIp`]).
    pub not_ip: u64,
    /// Flood/scan frames (unique keys).
    pub flood: u64,
    /// Frames the generator damaged (most become malformed; a damaged non-IP frame
    /// stays non-IP unless cut below 14 bytes, a cut into Ethernet padding or a length
    /// field cut on a non-first fragment leaves a flow).
    pub damaged: u64,
    /// Bytes written (sum of frame lengths).
    pub bytes: u64,
}

/// What the generator did to a frame after building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Damage {
    /// Left as built.
    None,
    /// Cut to a shorter length.
    Truncated,
    /// IPv4 IHL set to 2 (IPv6: the version field set to 4).
    BadIhl,
    /// IP version field swapped 4 ↔ 6.
    VersionSwap,
    /// IP length field set to 65 520.
    LengthField,
    /// IP length field cut to end inside the IP options/extension chain or the
    /// transport header (only with `extensions > 0`).
    LengthCut,
    /// An IPv6 chain of `MAX_IPV6_EXTENSIONS + 1` headers (only with
    /// `extensions > 0`; an IPv4 frame gets a [`Damage::LengthCut`] instead).
    LongChain,
}

impl Damage {
    /// Every damage, in the order of their names in the truth file.
    pub const ALL: [Self; 7] = [
        Self::None,
        Self::Truncated,
        Self::BadIhl,
        Self::VersionSwap,
        Self::LengthField,
        Self::LengthCut,
        Self::LongChain,
    ];

    /// Stable name used in the truth file.
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Truncated => "truncated",
            Self::BadIhl => "bad_ihl",
            Self::VersionSwap => "version_swap",
            Self::LengthField => "length_field",
            Self::LengthCut => "length_cut",
            Self::LongChain => "long_chain",
        }
    }
}

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

/// Header of the truth file written by `loxo gen` beside its pcap.
pub const TRUTH_HEADER: &str =
    "frame,len,ip_len,expected,error,damage,fragment,flood,src,dst,src_port,dst_port,protocol";

impl fmt::Display for FrameTruth {
    /// One CSV row of the truth file ([`TRUTH_HEADER`]): addresses in their usual text
    /// form, `error` the [`ParseError::name`] of a malformed frame, key columns empty
    /// for a non-IP frame.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (expected, error) = match self.expected {
            Expected::Flow => ("flow", ""),
            Expected::NotIp => ("not_ip", ""),
            Expected::Malformed(e) => ("malformed", e.name()),
        };
        write!(
            f,
            "{},{},{},{expected},{error},{},{},{},",
            self.index,
            self.len,
            self.ip_len,
            self.damage.name(),
            u8::from(self.fragment),
            u8::from(self.flood)
        )?;
        match self.key {
            Some(k) if k.is_v6() => {
                let a = |b: &[u8]| <[u8; 16]>::try_from(b).map(Ipv6Addr::from).ok();
                let (s, d) = (a(k.src_bytes()), a(k.dst_bytes()));
                let (Some(s), Some(d)) = (s, d) else {
                    return Err(fmt::Error);
                };
                write!(f, "{s},{d},")?;
            }
            Some(k) => {
                let a = |b: &[u8]| <[u8; 4]>::try_from(b).map(Ipv4Addr::from).ok();
                let (s, d) = (a(k.src_bytes()), a(k.dst_bytes()));
                let (Some(s), Some(d)) = (s, d) else {
                    return Err(fmt::Error);
                };
                write!(f, "{s},{d},")?;
            }
            None => return f.write_str(",,,,"),
        }
        let k = self.key.unwrap_or_default();
        write!(f, "{},{},{}", k.src_port(), k.dst_port(), k.protocol())
    }
}

/// Why a truth-file row was not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthParseError(String);

impl fmt::Display for TruthParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TruthParseError {}

impl std::str::FromStr for FrameTruth {
    type Err = TruthParseError;

    /// Reads one CSV row written by [`FrameTruth`]'s `Display`.
    fn from_str(row: &str) -> Result<Self, Self::Err> {
        let bad = |what: &str| TruthParseError(format!("{what} in truth row {row:?}"));
        let c: Vec<&str> = row.trim_end().split(',').collect();
        let [index, len, ip_len, expected, error, damage, fragment, flood, src, dst, sp, dp, proto] =
            c.as_slice()
        else {
            return Err(bad("not 13 columns"));
        };
        let flag = |s: &str| match s {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(bad("a flag not 0/1")),
        };
        let expected = match (*expected, *error) {
            ("flow", "") => Expected::Flow,
            ("not_ip", "") => Expected::NotIp,
            ("malformed", e) => Expected::Malformed(
                ParseError::ALL
                    .into_iter()
                    .find(|x| x.name() == e)
                    .ok_or_else(|| bad("an unknown parse error"))?,
            ),
            _ => return Err(bad("an unknown expected outcome")),
        };
        let key = if src.is_empty() {
            None
        } else {
            let sp = sp.parse().map_err(|_| bad("a bad source port"))?;
            let dp = dp.parse().map_err(|_| bad("a bad destination port"))?;
            let proto = proto.parse().map_err(|_| bad("a bad protocol"))?;
            let v4 = (src.parse::<Ipv4Addr>(), dst.parse::<Ipv4Addr>());
            Some(if let (Ok(s), Ok(d)) = v4 {
                FlowKey::v4(s.octets(), d.octets(), sp, dp, proto)
            } else {
                let s: Ipv6Addr = src.parse().map_err(|_| bad("a bad source"))?;
                let d: Ipv6Addr = dst.parse().map_err(|_| bad("a bad destination"))?;
                FlowKey::v6(s.octets(), d.octets(), sp, dp, proto)
            })
        };
        Ok(Self {
            index: index.parse().map_err(|_| bad("a bad frame index"))?,
            len: len.parse().map_err(|_| bad("a bad length"))?,
            ip_len: ip_len.parse().map_err(|_| bad("a bad IP length"))?,
            key,
            fragment: flag(fragment)?,
            flood: flag(flood)?,
            damage: Damage::ALL
                .into_iter()
                .find(|d| d.name() == *damage)
                .ok_or_else(|| bad("an unknown damage"))?,
            expected,
        })
    }
}

/// Where `loxo gen` writes the truth of the pcap at `pcap`: the same path with the
/// extension replaced by `truth.csv` (`trace.pcap` → `trace.truth.csv`).
pub fn truth_path(pcap: &Path) -> PathBuf {
    pcap.with_extension("truth.csv")
}

/// Writes the truth file's header row.
///
/// # Errors
/// The writer's.
pub fn write_truth_header(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "{TRUTH_HEADER}")
}

/// Reads a truth file written by `loxo gen`.
///
/// # Errors
/// An I/O error, a missing header or a row that does not parse (with its line).
pub fn read_truth(r: impl BufRead) -> anyhow::Result<Vec<FrameTruth>> {
    let mut lines = r.lines();
    let header = lines.next().transpose()?.unwrap_or_default();
    anyhow::ensure!(
        header.trim_end() == TRUTH_HEADER,
        "not a loxo truth file (header {header:?})"
    );
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line?;
        let t: FrameTruth = line
            .parse()
            .map_err(|e| anyhow::anyhow!("line {}: {e}", i + 2))?;
        out.push(t);
    }
    Ok(out)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    fn unit(&mut self) -> f64 {
        unit(self.next())
    }
}

fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// IPv6 extension header types walked by the key rules.
const HOP_BY_HOP: u8 = 0;
const ROUTING: u8 = 43;
const FRAGMENT: u8 = 44;
const ESP: u8 = 50;
const AH: u8 = 51;
const DEST_OPTS: u8 = 60;

/// Where an IPv6 flow's headers end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V6End {
    /// The transport header (the flow's protocol).
    Transport,
    /// An AH header: the walk ends with ports 0, protocol 51.
    Ah,
    /// An ESP header: the walk ends with ports 0, protocol 50.
    Esp,
}

/// Per-flow extensions (`TraceConfig::extensions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Extensions {
    None,
    /// IPv4 options of this many 32-bit words (1..=10).
    V4Options(u8),
    /// An IPv6 chain: up to 3 headers (type, length in bytes), then where it ends.
    V6Chain([(u8, u8); 3], u8, V6End),
}

/// Per-flow fixed attributes, derived from the flow id.
#[derive(Clone, Copy)]
struct FlowSpec {
    v6: bool,
    tags: u8, // 0 none, 1 802.1Q, 2 QinQ
    proto: u8,
    src: [u8; 16],
    dst: [u8; 16],
    sport: u16,
    dport: u16,
    ext: Extensions,
}

fn flow_spec(seed: u64, id: u64, extensions: f64) -> FlowSpec {
    let a = mix64(seed ^ mix64(id.wrapping_add(1)));
    let b = mix64(a);
    let c = mix64(b);
    let v6 = a.is_multiple_of(5); // 20 % IPv6
    let tags = match (a >> 8) % 100 {
        0..=9 => 1,
        10..=12 => 2,
        _ => 0,
    };
    let proto = match (a >> 16) % 100 {
        0..=69 => 6,
        70..=94 => 17,
        _ => {
            if v6 {
                58
            } else {
                1
            }
        }
    };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src[..8].copy_from_slice(&b.to_be_bytes());
    src[8..].copy_from_slice(&c.to_be_bytes());
    dst[..8].copy_from_slice(&mix64(c).to_be_bytes());
    dst[8..].copy_from_slice(&mix64(c ^ 1).to_be_bytes());
    if !v6 {
        src[0] = 10;
    }
    let (sport, dport) = if proto == 1 || proto == 58 {
        (8, 0)
    } else {
        (
            (a >> 24) as u16 | 1024,
            [80, 443, 53, 8080, 22][((a >> 40) % 5) as usize],
        )
    };
    // Extensions from their own hash of the flow: no RNG draw, so the classic trace
    // is unchanged.
    let e = mix64(a ^ 0xe47e_4510_45e3);
    let ext = if extensions > 0.0 && unit(e) < extensions {
        if v6 {
            // 1..=3 headers: hop-by-hop only first, at most one fragment header.
            let n = 1 + (e % 3) as usize;
            let mut chain = [(0u8, 0u8); 3];
            let mut frag = false;
            for (i, h) in chain.iter_mut().enumerate().take(n) {
                let r = e >> (8 + 8 * i);
                let ty = match r % 4 {
                    0 if i == 0 => HOP_BY_HOP,
                    1 if !frag => FRAGMENT,
                    2 => ROUTING,
                    _ => DEST_OPTS,
                };
                frag |= ty == FRAGMENT;
                let len = if ty == FRAGMENT {
                    8
                } else {
                    8 * (1 + ((r >> 2) % 3) as u8)
                };
                *h = (ty, len);
            }
            let end = match (e >> 40) % 8 {
                0 => V6End::Ah,
                1 => V6End::Esp,
                _ => V6End::Transport,
            };
            Extensions::V6Chain(chain, n as u8, end)
        } else {
            Extensions::V4Options(1 + (e % 10) as u8)
        }
    } else {
        Extensions::None
    };
    FlowSpec {
        v6,
        tags,
        proto,
        src,
        dst,
        sport,
        dport,
        ext,
    }
}

impl FlowSpec {
    /// The key of this flow's frames, from its fields: ports 0 on a non-first
    /// fragment, behind AH/ESP; ICMP's type/code as ports.
    fn key(&self, fragment: bool, frag_next: u8) -> FlowKey {
        let end = match self.ext {
            Extensions::V6Chain(_, _, end) => end,
            _ => V6End::Transport,
        };
        let (sp, dp, proto) = match (fragment, end) {
            (true, _) => (0, 0, frag_next),
            (false, V6End::Ah) => (0, 0, AH),
            (false, V6End::Esp) => (0, 0, ESP),
            (false, V6End::Transport) => (self.sport, self.dport, self.proto),
        };
        if self.v6 {
            FlowKey::v6(self.src, self.dst, sp, dp, proto)
        } else {
            let s = [self.src[0], self.src[1], self.src[2], self.src[3]];
            let d = [self.dst[0], self.dst[1], self.dst[2], self.dst[3]];
            FlowKey::v4(s, d, sp, dp, proto)
        }
    }

    /// Bytes of the transport header the key rules require (TCP 20, UDP/ICMP 8).
    fn transport_len(&self) -> usize {
        match self.proto {
            6 => 20,
            _ => 8,
        }
    }
}

/// The link layer as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
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
    const fn header_len(self) -> usize {
        match self {
            Self::Untagged => 14,
            Self::Vlan | Self::LoneSTag => 18,
            Self::QinQ => 22,
        }
    }
}

/// One IPv6 extension header as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ExtHeader {
    ty: u8,
    len: usize,
    /// A fragment header with a non-zero offset: the walk ends after it.
    last_fragment: bool,
}

/// The network layer as written: the fields the key rules look at.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Net {
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
struct Layout {
    len: usize,
    link: Link,
    net: Net,
}

impl Layout {
    /// The IP packet's length its header declares (IPv4 total length, IPv6 40 +
    /// payload length), 0 without an IP header.
    fn ip_len(&self) -> u32 {
        let n = match &self.net {
            Net::Other => 0,
            Net::V4 { total, .. } => *total,
            Net::V6 { payload, .. } => 40 + *payload,
        };
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Offset of the length field of the IP header, if it has one.
    fn length_field(&self) -> Option<usize> {
        let l3 = self.link.header_len();
        match self.net {
            Net::V4 { .. } => Some(l3 + 2),
            Net::V6 { .. } => Some(l3 + 4),
            Net::Other => None,
        }
    }

    /// What the key rules (`loxo_flow` crate docs, `ParseError` variants) make of the
    /// frame described by this layout.
    fn expected(&self) -> Expected {
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
                    if h.ty != FRAGMENT && *payload < at + 2 {
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

/// Realistic captured frame size: ~45 % minimum-size, ~15 % mid (576), ~35 % full (1514),
/// the rest uniform in 64..=1514.
fn frame_size(r: &mut Rng) -> usize {
    match r.next() % 100 {
        0..=44 => 64,
        45..=59 => 576,
        60..=94 => 1514,
        _ => 64 + (r.next() % 1451) as usize,
    }
}

/// How to build a frame of a flow.
#[derive(Clone, Copy)]
struct Shape {
    size: usize,
    /// A non-first fragment.
    fragment: bool,
    /// IP length = the headers only, the rest Ethernet padding.
    padded: bool,
    /// An IPv6 chain of `MAX_IPV6_EXTENSIONS + 1` destination-options headers.
    long_chain: bool,
}

/// Builds one frame of the flow into `out`; returns its layout and the key it
/// carries.
fn build(spec: &FlowSpec, shape: Shape, out: &mut Vec<u8>) -> (Layout, FlowKey) {
    out.clear();
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1]);
    let link = match spec.tags {
        1 => {
            out.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
            Link::Vlan
        }
        2 => {
            out.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x0a]);
            Link::QinQ
        }
        _ => Link::Untagged,
    };
    let l4len = spec.transport_len();
    let l3 = out.len() + 2;
    if spec.v6 {
        build_v6(spec, shape, l3, link, out)
    } else {
        out.extend_from_slice(&[0x08, 0x00]);
        let opts = match spec.ext {
            Extensions::V4Options(w) => 4 * usize::from(w),
            _ => 0,
        };
        let ihl = 20 + opts;
        // A non-first fragment carries no transport header, but as many payload bytes
        // (all sizes here are ≥ 64 ≥ 22 + 20 + 20: the classic frames are unchanged).
        let size = shape.size.max(l3 + ihl + l4len);
        let total = if shape.padded { ihl + l4len } else { size - l3 };
        out.push(0x40 | (ihl / 4) as u8);
        out.push(0);
        out.extend_from_slice(&(total as u16).to_be_bytes());
        out.extend_from_slice(&[0, 1]);
        out.extend_from_slice(if shape.fragment {
            &[0x00, 0xb9]
        } else {
            &[0x40, 0x00]
        });
        out.extend_from_slice(&[64, spec.proto, 0, 0]);
        out.extend_from_slice(&spec.src[..4]);
        out.extend_from_slice(&spec.dst[..4]);
        if opts > 0 {
            // Router alert, then no-operations.
            out.extend_from_slice(&[0x94, 0x04, 0, 0]);
            out.resize(out.len() + opts - 4, 0x01);
        }
        if !shape.fragment {
            push_l4(spec, out);
        }
        out.resize(size, 0);
        let layout = Layout {
            len: size,
            link,
            net: Net::V4 {
                version: 4,
                ihl,
                total,
                fragment: shape.fragment,
                transport: l4len,
            },
        };
        (layout, spec.key(shape.fragment, spec.proto))
    }
}

fn build_v6(
    spec: &FlowSpec,
    shape: Shape,
    l3: usize,
    link: Link,
    out: &mut Vec<u8>,
) -> (Layout, FlowKey) {
    let l4len = spec.transport_len();
    // The headers to write, in order: (type, length, non-first fragment).
    let mut chain: Vec<ExtHeader> = Vec::new();
    let mut end = V6End::Transport;
    if shape.long_chain {
        chain = vec![
            ExtHeader {
                ty: DEST_OPTS,
                len: 8,
                last_fragment: false,
            };
            MAX_IPV6_EXTENSIONS + 1
        ];
    } else if let Extensions::V6Chain(hs, n, e) = spec.ext {
        end = e;
        for &(ty, len) in &hs[..usize::from(n)] {
            if shape.fragment && ty == FRAGMENT {
                // A non-first fragment keeps the unfragmentable part (the headers
                // before the fragment header) and ends at its own fragment header.
                break;
            }
            chain.push(ExtHeader {
                ty,
                len: usize::from(len),
                last_fragment: false,
            });
        }
    }
    // The fragment header of a non-first fragment names the transport (or AH/ESP)
    // as its next header: the key's protocol.
    let end_proto = match end {
        V6End::Transport => spec.proto,
        V6End::Ah => AH,
        V6End::Esp => ESP,
    };
    if shape.fragment {
        chain.push(ExtHeader {
            ty: FRAGMENT,
            len: 8,
            last_fragment: true,
        });
    }
    let chain_len: usize = chain.iter().map(|h| h.len).sum();
    let stops_at_ah_esp = end != V6End::Transport && !shape.fragment;
    let ah_esp_len = match end {
        V6End::Ah => 12,
        V6End::Esp => 8,
        V6End::Transport => 0,
    };
    let headers = chain_len + ah_esp_len + l4len;
    out.extend_from_slice(&[0x86, 0xdd]);
    let size = shape.size.max(l3 + 40 + headers);
    let plen = if shape.padded {
        headers
    } else {
        size - l3 - 40
    };
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&(plen as u16).to_be_bytes());
    let first = chain.first().map_or(end_proto, |h| h.ty);
    out.push(first);
    out.push(64);
    out.extend_from_slice(&spec.src);
    out.extend_from_slice(&spec.dst);
    for (i, h) in chain.iter().enumerate() {
        let next = chain.get(i + 1).map_or(end_proto, |n| n.ty);
        match h.ty {
            FRAGMENT if h.last_fragment => {
                out.extend_from_slice(&[next, 0, 0x05, 0xa8, 0, 0, 0, 1]);
            }
            FRAGMENT => out.extend_from_slice(&[next, 0, 0x00, 0x01, 0, 0, 0, 7]),
            ROUTING => {
                // Type 4 (segment routing), no segments left.
                out.extend_from_slice(&[next, (h.len / 8 - 1) as u8, 4, 0]);
                out.resize(out.len() + h.len - 4, 0);
            }
            _ => {
                // Hop-by-hop / destination options: Pad1 options.
                out.extend_from_slice(&[next, (h.len / 8 - 1) as u8]);
                out.resize(out.len() + h.len - 2, 0);
            }
        }
    }
    if !shape.fragment {
        match end {
            V6End::Ah => out.extend_from_slice(&[spec.proto, 1, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 1]),
            V6End::Esp => out.extend_from_slice(&[0, 0, 0x10, 0, 0, 0, 0, 1]),
            V6End::Transport => {}
        }
    }
    push_l4(spec, out);
    out.resize(size, 0);
    let key = spec.key(shape.fragment, end_proto);
    let layout = Layout {
        len: size,
        link,
        net: Net::V6 {
            version: 6,
            payload: plen,
            chain,
            stops_at_ah_esp,
            transport: l4len,
        },
    };
    (layout, key)
}

fn push_l4(spec: &FlowSpec, out: &mut Vec<u8>) {
    match spec.proto {
        1 | 58 => out.extend_from_slice(&[spec.sport as u8, spec.dport as u8, 0, 0, 0, 0, 0, 0]),
        p => {
            out.extend_from_slice(&spec.sport.to_be_bytes());
            out.extend_from_slice(&spec.dport.to_be_bytes());
            if p == 6 {
                out.extend_from_slice(&[
                    0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
                ]);
            } else {
                out.extend_from_slice(&[0, 0, 0, 0]);
            }
        }
    }
}

/// A non-IP frame: ARP, or (`variant` 1..=3, with extensions) LLDP, ARP over
/// 802.1Q, IPv4 behind a lone 802.1ad S-tag.
fn build_not_ip(variant: u64, out: &mut Vec<u8>) -> Layout {
    out.clear();
    out.extend_from_slice(&[0xff; 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    let link = match variant {
        1 => {
            out.extend_from_slice(&[0x88, 0xcc]);
            Link::Untagged
        }
        2 => {
            out.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a, 0x08, 0x06]);
            Link::Vlan
        }
        3 => {
            // An S-tag whose inner EtherType is IPv4, then a valid IPv4 header: not
            // an accepted tag stack, so not IP whatever follows.
            out.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x08, 0x00]);
            out.extend_from_slice(&[0x45, 0, 0, 28, 0, 1, 0x40, 0, 64, 17, 0, 0]);
            out.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0, 53, 0, 8, 0, 0]);
            Link::LoneSTag
        }
        _ => {
            out.extend_from_slice(&[0x08, 0x06]);
            Link::Untagged
        }
    };
    out.resize(60, 0);
    Layout {
        len: 60,
        link,
        net: Net::Other,
    }
}

/// Damages a built frame as the generator chose (`kinds` = 4 classic damages, 6 with
/// extensions), keeping its layout in step with the bytes. The RNG draws of the
/// classic damages are those of the generator before it kept a truth.
fn damage(r: &mut Rng, kinds: u64, layout: &mut Layout, frame: &mut Vec<u8>) -> Damage {
    // Offset of the network header: for a non-IP frame, where an untagged one's
    // would be (the classic generator searched for an IP EtherType and fell back
    // to 14).
    let l3 = match layout.net {
        Net::Other => 14,
        _ => layout.link.header_len(),
    };
    let v6 = matches!(layout.net, Net::V6 { .. });
    match r.next() % kinds {
        0 => {
            let len = (r.next() % (l3 as u64 + 30)) as usize;
            frame.truncate(len);
            layout.len = layout.len.min(len);
            Damage::Truncated
        }
        1 => {
            if let Some(b) = frame.get_mut(l3) {
                *b = (*b & 0xf0) | 0x02;
                if *b >> 4 == 6 {
                    *b = 0x42;
                }
                set_version_ihl(layout, *b);
            }
            Damage::BadIhl
        }
        2 => {
            if let Some(b) = frame.get_mut(l3) {
                *b ^= 0x20; // 4 <-> 6 version swap
                set_version_ihl(layout, *b);
            }
            Damage::VersionSwap
        }
        3 => {
            let at = if v6 { l3 + 4 } else { l3 + 2 };
            if let Some(s) = frame.get_mut(at..at + 2) {
                s.copy_from_slice(&[0xff, 0xf0]);
                set_length(layout, 0xfff0);
            }
            Damage::LengthField
        }
        _ => {
            // 4: a length field cut inside the headers; 5 (IPv4: as 4) a long chain,
            // rebuilt by the caller.
            if v6 && r.next() % 2 == 1 {
                return Damage::LongChain;
            }
            let headers = match &layout.net {
                Net::V4 { ihl, transport, .. } => ihl + transport,
                Net::V6 {
                    chain,
                    stops_at_ah_esp,
                    transport,
                    ..
                } => {
                    chain.iter().map(|h| h.len).sum::<usize>()
                        + if *stops_at_ah_esp { 0 } else { *transport }
                }
                Net::Other => 0,
            };
            let cut = (r.next() % (headers as u64).max(1)) as usize;
            if let Some(at) = layout.length_field() {
                if let Some(s) = frame.get_mut(at..at + 2) {
                    s.copy_from_slice(&(cut as u16).to_be_bytes());
                    set_length(layout, cut);
                }
            }
            Damage::LengthCut
        }
    }
}

/// Records a rewritten version/IHL byte in the layout.
fn set_version_ihl(layout: &mut Layout, b: u8) {
    match &mut layout.net {
        Net::V4 { version, ihl, .. } => {
            *version = b >> 4;
            *ihl = usize::from(b & 0x0f) * 4;
        }
        Net::V6 { version, .. } => *version = b >> 4,
        Net::Other => {}
    }
}

/// Records a rewritten IP length field in the layout.
fn set_length(layout: &mut Layout, v: usize) {
    match &mut layout.net {
        Net::V4 { total, .. } => *total = v,
        Net::V6 { payload, .. } => *payload = v,
        Net::Other => {}
    }
}

/// Cumulative distribution over flows for the popularity law.
fn cdf(cfg: &TraceConfig) -> Vec<f64> {
    let mut r = Rng(cfg.seed ^ 0x5eed);
    let mut acc = 0.0;
    let mut v: Vec<f64> = (1..=u64::from(cfg.flows.max(1)))
        .map(|i| {
            acc += match cfg.popularity {
                Popularity::Zipf(a) => (i as f64).powf(-a),
                Popularity::Pareto(shape) => (1.0 - r.unit()).powf(-1.0 / shape),
            };
            acc
        })
        .collect();
    for x in &mut v {
        *x /= acc;
    }
    v
}

/// Generates the trace, calling `sink(frame)` for each frame in order.
///
/// # Errors
/// The first error returned by `sink`.
pub fn generate<E>(
    cfg: &TraceConfig,
    mut sink: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<TraceStats, E> {
    generate_with_truth(cfg, |f, _| sink(f))
}

/// Generates the trace, calling `sink(frame, truth)` for each frame in order.
///
/// # Errors
/// The first error returned by `sink`.
pub fn generate_with_truth<E>(
    cfg: &TraceConfig,
    mut sink: impl FnMut(&[u8], &FrameTruth) -> Result<(), E>,
) -> Result<TraceStats, E> {
    let cdf = cdf(cfg);
    let extended = cfg.extensions > 0.0;
    let mut r = Rng(cfg.seed);
    let mut st = TraceStats::default();
    let mut buf = Vec::with_capacity(1600);
    for n in 0..cfg.packets {
        let size = frame_size(&mut r);
        let u = r.unit();
        let is_flood = u < cfg.flood;
        let mut shape = Shape {
            size,
            fragment: false,
            padded: false,
            long_chain: false,
        };
        let built = if r.next().is_multiple_of(1000) {
            let variant = if extended { r.next() % 4 } else { 0 };
            (build_not_ip(variant, &mut buf), None)
        } else if is_flood {
            // Scan/flood: a unique key (flow id outside the population), minimum size.
            let spec = flow_spec(cfg.seed ^ 0xf100d, u64::from(cfg.flows) + n, cfg.extensions);
            st.flood += 1;
            shape.size = 64;
            shape.padded = extended;
            let (l, k) = build(&spec, shape, &mut buf);
            (l, Some((spec, k)))
        } else {
            let x = r.unit();
            let id = cdf
                .partition_point(|&c| c < x)
                .min(cdf.len().saturating_sub(1)) as u64;
            let spec = flow_spec(cfg.seed, id, cfg.extensions);
            shape.fragment = spec.proto == 17 && r.next().is_multiple_of(10);
            shape.padded = extended && size == 64;
            let (l, k) = build(&spec, shape, &mut buf);
            (l, Some((spec, k)))
        };
        let (mut layout, flow) = built;
        let mut damage_done = Damage::None;
        if cfg.malformed > 0.0 && r.unit() < cfg.malformed {
            let kinds = if extended { 6 } else { 4 };
            damage_done = damage(&mut r, kinds, &mut layout, &mut buf);
            if let (Damage::LongChain, Some((spec, _))) = (damage_done, &flow) {
                shape.long_chain = true;
                layout = build(spec, shape, &mut buf).0;
            }
        }
        let expected = layout.expected();
        match expected {
            Expected::Malformed(_) => st.malformed += 1,
            Expected::NotIp => st.not_ip += 1,
            Expected::Flow => {}
        }
        st.damaged += u64::from(damage_done != Damage::None);
        let truth = FrameTruth {
            index: n,
            len: u32::try_from(buf.len()).unwrap_or(u32::MAX),
            ip_len: layout.ip_len(),
            key: flow.map(|(_, k)| k),
            fragment: shape.fragment,
            flood: is_flood && flow.is_some(),
            damage: damage_done,
            expected,
        };
        debug_assert_eq!(layout.len, buf.len(), "layout out of step with the bytes");
        st.frames += 1;
        st.bytes += buf.len() as u64;
        sink(&buf, &truth)?;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn collect(cfg: &TraceConfig) -> (Vec<Vec<u8>>, Vec<FrameTruth>, TraceStats) {
        let (mut frames, mut truth) = (Vec::new(), Vec::new());
        let st = generate_with_truth(cfg, |f, t| {
            frames.push(f.to_vec());
            truth.push(*t);
            Ok::<_, ()>(())
        })
        .unwrap();
        (frames, truth, st)
    }

    #[test]
    fn reproducible_and_counts_from_the_truth() {
        let cfg = TraceConfig {
            packets: 20_000,
            flows: 500,
            malformed: 0.05,
            flood: 0.1,
            ..TraceConfig::default()
        };
        let (a, ta, sa) = collect(&cfg);
        let (b, tb, sb) = collect(&cfg);
        assert_eq!((a.clone(), ta.clone(), sa), (b, tb, sb));
        // The counts are the truth's.
        let count = |p: fn(&FrameTruth) -> bool| ta.iter().filter(|t| p(t)).count() as u64;
        assert_eq!(
            sa.malformed,
            count(|t| matches!(t.expected, Expected::Malformed(_)))
        );
        assert_eq!(sa.not_ip, count(|t| t.expected == Expected::NotIp));
        assert_eq!(sa.damaged, count(|t| t.damage != Damage::None));
        assert_eq!(sa.flood, count(|t| t.flood));
        assert_eq!(sa.bytes, ta.iter().map(|t| u64::from(t.len)).sum::<u64>());
        assert!(a.iter().zip(&ta).all(|(f, t)| f.len() == t.len as usize));
        // Damaged ~ Binomial(20 000, 0.05): mean 1000, σ = √(20 000·0.05·0.95) ≈ 30.8;
        // 4σ. Flood ~ Binomial(20 000, 0.1): 2000 ± 4·42.4.
        let sd = (20_000.0f64 * 0.05 * 0.95).sqrt();
        assert!((sa.damaged as f64 - 1000.0).abs() < 4.0 * sd, "{sa:?}");
        let sd = (20_000.0f64 * 0.1 * 0.9).sqrt();
        assert!((sa.flood as f64 - 2000.0).abs() < 4.0 * sd, "{sa:?}");
        // Every damaged IP frame of the classic trace is malformed (the cuts land
        // before the end of the IP length, the fields rewritten are checked ones);
        // a damaged non-IP frame is malformed only if cut below 14 bytes.
        for t in &ta {
            match (t.damage, t.key, t.expected) {
                (Damage::None, Some(_), e) => assert_eq!(e, Expected::Flow, "{t:?}"),
                (Damage::None, None, e) => assert_eq!(e, Expected::NotIp, "{t:?}"),
                (_, Some(_), e) => assert!(matches!(e, Expected::Malformed(_)), "{t:?}"),
                (_, None, e) => assert!(
                    e == Expected::NotIp || e == Expected::Malformed(ParseError::Runt),
                    "{t:?}"
                ),
            }
        }
        assert!(a.iter().all(|f| f.len() <= 1514));
    }

    #[test]
    fn truth_rows_round_trip() {
        let cfg = TraceConfig {
            packets: 5_000,
            flows: 300,
            malformed: 0.3,
            flood: 0.2,
            extensions: 0.5,
            ..TraceConfig::default()
        };
        let (_, truth, _) = collect(&cfg);
        let mut file = Vec::new();
        write_truth_header(&mut file).unwrap();
        for t in &truth {
            writeln!(file, "{t}").unwrap();
        }
        let back = read_truth(std::io::Cursor::new(file)).unwrap();
        assert_eq!(back, truth);
        assert!(read_truth(std::io::Cursor::new(b"frame,len\n0,1\n")).is_err());
        assert_eq!(
            truth_path(Path::new("out/demo-7.pcap")),
            Path::new("out/demo-7.truth.csv")
        );
    }
}
