//! Reading captures for `loxo top` and `loxo replay`: classic pcap and pcapng, told apart
//! by the magic number, at any snap length, with every record's link type turned into
//! the Ethernet II frame `loxo_flow` parses and the firmware's NIC receives.
//!
//! A record is `(link type, captured bytes, original length)` ([`Record`]). A capture
//! taken with a snap length (`tcpdump -s 64`) holds only the first bytes of a long
//! frame, and its original length is the frame's length on the wire:
//! [`Frame::wire_len`] keeps it, and `loxo_flow::parse_frame_captured` reads the
//! headers from the captured bytes while weighing the frame (and checking its IP length
//! fields) by that wire length — the crate's snap-length rule.
//!
//! **Why not `pcap-file`'s checked records.** `PcapReader::next_packet` refuses every
//! record whose original length exceeds the file's snap length ("orig_len > snap_len"),
//! i.e. every frame a snapped capture cut, which is what a snap length is for. This
//! module reads pcap records with `next_raw_packet` (the 16-byte record header, no
//! checks) and pcapng blocks with `next_block`, and checks them itself: captured length
//! at most the original length, both at most [`MAX_RECORD_LEN`], packets only on a
//! declared interface. `pcap-file` buffers up to 8 MB at a time, so a record claiming
//! more than that reads as a truncated file.
//!
//! **Link types** (per file for pcap, per interface for pcapng; [`Link`]): Ethernet (1)
//! as is; raw IP (101, 228, 229), Linux cooked (SLL 113, SLL2 276) and BSD loopback
//! (NULL 0, LOOP 108) get a 14-byte Ethernet header in place of their own, whose
//! EtherType says what the link layer said (a raw packet's version nibble, the cooked
//! header's protocol, the loopback address family); their wire length becomes the
//! frame's with that header (original length − own header + 14). Any other link type
//! is [`CaptureError::UnsupportedLink`] at its first packet: never read as Ethernet.
//!
//! **Bad records.** A record the format does not allow, or the end of the file inside
//! one, is an error at that record; the records before it were read correctly, so
//! callers report them and then the error (`loxo top` and `loxo replay` warn and exit
//! non-zero).

use std::fmt;
use std::fs::File;
use std::io::{Chain, Cursor, Read};
use std::path::Path;

use anyhow::Context as _;

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::PcapError;

/// Largest captured or original length of a record: libpcap's `MAXIMUM_SNAPLEN`
/// (262 144 bytes). Longer is a bad record.
pub const MAX_RECORD_LEN: u32 = 262_144;

/// The pcapng section header block's type, which is also its magic number.
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// The pcap file header's magic numbers, as stored: micro- and nanosecond
/// timestamps, either byte order.
const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
/// Length of the Ethernet II header the link types are normalised to.
const ETH_HDR: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// A synthetic Ethernet header's addresses (locally administered).
const SYNTHETIC_DST: [u8; 6] = [0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x10];
const SYNTHETIC_SRC: [u8; 6] = [0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x11];

/// A capture's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap (microsecond or nanosecond, either byte order).
    Pcap,
    /// pcapng (any number of sections and interfaces).
    PcapNg,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pcap => "pcap",
            Self::PcapNg => "pcapng",
        })
    }
}

/// A link type this module reads (`LINKTYPE_*` numbers of the tcpdump.org registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Link {
    /// `LINKTYPE_ETHERNET` (1): Ethernet II frames without FCS.
    Ethernet,
    /// `LINKTYPE_RAW` (101): IPv4 or IPv6 packets, told apart by the version nibble.
    RawIp,
    /// `LINKTYPE_IPV4` (228): IPv4 packets.
    Ipv4,
    /// `LINKTYPE_IPV6` (229): IPv6 packets.
    Ipv6,
    /// `LINKTYPE_LINUX_SLL` (113): Linux cooked header v1 (16 bytes, protocol at 14).
    LinuxSll,
    /// `LINKTYPE_LINUX_SLL2` (276): Linux cooked header v2 (20 bytes, protocol at 0).
    LinuxSll2,
    /// `LINKTYPE_NULL` (0): BSD loopback, 4-byte address family in the capturing host's
    /// byte order.
    Null,
    /// `LINKTYPE_LOOP` (108): OpenBSD loopback, 4-byte address family, big-endian.
    Loop,
}

impl Link {
    /// The link type of `LINKTYPE_*` number `n`, if this module reads it.
    pub const fn from_linktype(n: u32) -> Option<Self> {
        Some(match n {
            1 => Self::Ethernet,
            101 => Self::RawIp,
            228 => Self::Ipv4,
            229 => Self::Ipv6,
            113 => Self::LinuxSll,
            276 => Self::LinuxSll2,
            0 => Self::Null,
            108 => Self::Loop,
            _ => return None,
        })
    }

    /// Its `LINKTYPE_*` number.
    pub const fn linktype(self) -> u32 {
        match self {
            Self::Ethernet => 1,
            Self::RawIp => 101,
            Self::Ipv4 => 228,
            Self::Ipv6 => 229,
            Self::LinuxSll => 113,
            Self::LinuxSll2 => 276,
            Self::Null => 0,
            Self::Loop => 108,
        }
    }

    /// Length of the link-layer header a record of this type starts with.
    pub const fn header_len(self) -> usize {
        match self {
            Self::Ethernet => ETH_HDR,
            Self::RawIp | Self::Ipv4 | Self::Ipv6 => 0,
            Self::LinuxSll => 16,
            Self::LinuxSll2 => 20,
            Self::Null | Self::Loop => 4,
        }
    }

    /// A short name (`ethernet`, `raw-ip`, `linux-sll`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ethernet => "ethernet",
            Self::RawIp => "raw-ip",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::LinuxSll => "linux-sll",
            Self::LinuxSll2 => "linux-sll2",
            Self::Null => "bsd-null",
            Self::Loop => "bsd-loop",
        }
    }

    /// The EtherType a record's link-layer header stands for (`bytes`: the record's
    /// captured bytes, at least `header_len` of them); 0 (not IP) when it names no
    /// EtherType.
    fn ethertype(self, bytes: &[u8]) -> u16 {
        let be16 = |at: usize| {
            bytes
                .get(at..at + 2)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
        };
        match self {
            Self::Ethernet => be16(12),
            // An empty packet or a version other than 6 is parsed as IPv4: the parser
            // then says what is wrong with it (truncated, version mismatch).
            Self::RawIp => match bytes.first() {
                Some(b) if b >> 4 == 6 => ETHERTYPE_IPV6,
                _ => ETHERTYPE_IPV4,
            },
            Self::Ipv4 => ETHERTYPE_IPV4,
            Self::Ipv6 => ETHERTYPE_IPV6,
            // The cooked headers' protocol field is the EtherType for Ethernet-like
            // devices (libpcap re-inserts a VLAN tag after it, as on Ethernet); other
            // values (802.2 frames, CAN, netlink) are below 0x0600 and read as not IP.
            Self::LinuxSll => be16(14),
            Self::LinuxSll2 => be16(0),
            Self::Null | Self::Loop => {
                let Some(&[a, b, c, d]) = bytes.get(..4) else {
                    return 0;
                };
                let family = if self == Self::Loop {
                    u32::from_be_bytes([a, b, c, d])
                } else {
                    // Host byte order of the capturing machine: families are small, so
                    // a value above 0xffff was written in the other order.
                    let le = u32::from_le_bytes([a, b, c, d]);
                    if le > 0xffff {
                        le.swap_bytes()
                    } else {
                        le
                    }
                };
                match family {
                    2 => ETHERTYPE_IPV4,
                    // AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD, macOS.
                    10 | 24 | 28 | 30 => ETHERTYPE_IPV6,
                    _ => 0,
                }
            }
        }
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.linktype())
    }
}

/// A name for any `LINKTYPE_*` number, for messages.
fn linktype_name(n: u32) -> String {
    match Link::from_linktype(n) {
        Some(l) => l.to_string(),
        None => format!("{:?} ({n})", pcap_file::DataLink::from(n)),
    }
}

/// Why a capture cannot be read (further).
#[derive(Debug)]
#[non_exhaustive]
pub enum CaptureError {
    /// Reading the file failed.
    Io(std::io::Error),
    /// The file is neither pcap nor pcapng, or its file header is invalid.
    NotACapture(String),
    /// The file ends inside record `record` (a truncated capture).
    Truncated {
        /// 1-based number of the record cut off.
        record: u64,
    },
    /// Record `record` (or a pcapng block just before it) breaks the format.
    BadRecord {
        /// 1-based number of the record.
        record: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// Record `record` is of a link type this module does not read.
    UnsupportedLink {
        /// 1-based number of the record.
        record: u64,
        /// Its `LINKTYPE_*` number.
        linktype: u32,
    },
}

impl CaptureError {
    /// The 1-based number of the record the error is at (`None` for the file header).
    pub const fn record(&self) -> Option<u64> {
        match self {
            Self::Truncated { record }
            | Self::BadRecord { record, .. }
            | Self::UnsupportedLink { record, .. } => Some(*record),
            Self::Io(_) | Self::NotACapture(_) => None,
        }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "cannot read the capture: {e}"),
            Self::NotACapture(why) => write!(f, "not a pcap or pcapng file: {why}"),
            Self::Truncated { record } => {
                write!(
                    f,
                    "the file ends inside record {record} (a truncated capture)"
                )
            }
            Self::BadRecord { record, reason } => write!(f, "record {record} is bad: {reason}"),
            Self::UnsupportedLink { record, linktype } => write!(
                f,
                "record {record} has link type {}, which loxo does not read (it reads ethernet, \
                 raw IP, Linux cooked SLL/SLL2 and BSD loopback captures)",
                linktype_name(*linktype)
            ),
        }
    }
}

/// No `source`: the message of [`CaptureError::Io`] already ends with the I/O error's,
/// and an error chain printed with `{:#}` would say it twice.
impl std::error::Error for CaptureError {}

/// One record of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// 1-based number of the record in the file (packet records only).
    pub index: u64,
    /// Its link type.
    pub link: Link,
    /// The captured bytes (at most `orig_len`).
    pub data: &'a [u8],
    /// The frame's original length on the wire (link-layer header included).
    pub orig_len: u32,
}

/// A record as an Ethernet II frame: what `loxo_flow::parse_frame_captured` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The captured bytes of the frame (at most `wire_len`).
    pub captured: &'a [u8],
    /// The frame's length on the wire.
    pub wire_len: usize,
}

impl Frame<'_> {
    /// Whether the capture holds the whole frame.
    pub const fn is_whole(&self) -> bool {
        self.captured.len() >= self.wire_len
    }
}

impl<'a> Record<'a> {
    /// The record as an Ethernet II frame (see the module docs); `scratch` holds the
    /// frame when the link type is not Ethernet. A record shorter on the wire than its
    /// own link-layer header is an empty frame (a runt); one whose link-layer header was
    /// cut by the snap length has no captured bytes.
    pub fn frame<'s>(&self, scratch: &'s mut Vec<u8>) -> Frame<'s>
    where
        'a: 's,
    {
        let orig = self.orig_len as usize;
        if self.link == Link::Ethernet {
            return Frame {
                captured: self.data,
                wire_len: orig,
            };
        }
        let hdr = self.link.header_len();
        if orig < hdr {
            return Frame {
                captured: &[],
                wire_len: 0,
            };
        }
        let wire_len = orig - hdr + ETH_HDR;
        let Some(payload) = self.data.get(hdr..) else {
            return Frame {
                captured: &[],
                wire_len,
            };
        };
        scratch.clear();
        scratch.extend_from_slice(&SYNTHETIC_DST);
        scratch.extend_from_slice(&SYNTHETIC_SRC);
        scratch.extend_from_slice(&self.link.ethertype(self.data).to_be_bytes());
        scratch.extend_from_slice(payload);
        Frame {
            captured: scratch,
            wire_len,
        }
    }

    /// How many bytes of this record (its own link-layer header included) hold the
    /// first `needed` bytes of its Ethernet frame ([`frame`](Self::frame)): a snap
    /// length that large keeps them.
    pub const fn snap_for(&self, needed: usize) -> usize {
        (needed + self.link.header_len()).saturating_sub(ETH_HDR)
    }
}

/// A pcapng interface: its link type and snap length (0 = none).
#[derive(Clone, Copy, Debug)]
struct Interface {
    linktype: u32,
    snaplen: u32,
}

type Input<R> = Chain<Cursor<Vec<u8>>, R>;

enum Inner<R: Read> {
    Pcap {
        r: PcapReader<Input<R>>,
        linktype: u32,
    },
    PcapNg {
        r: PcapNgReader<Input<R>>,
        interfaces: Vec<Interface>,
    },
}

/// Reads a pcap or pcapng capture record by record ([`next_record`](Self::next_record)).
pub struct CaptureReader<R: Read> {
    inner: Inner<R>,
    /// Records read so far.
    records: u64,
    /// The current record's bytes (pcap-file lends them from its buffer only until the
    /// next read; a copy keeps this reader's borrows simple).
    buf: Vec<u8>,
}

impl<R: Read> fmt::Debug for CaptureReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureReader")
            .field("format", &self.format())
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

/// Opens the capture file `path` for `command` (`"loxo top"`…): a directory is refused
/// with a message saying so, not the bare "Is a directory" a read of it gives.
///
/// # Errors
/// A directory, or a file that cannot be opened, with its path.
pub fn open_file(path: &Path, command: &str) -> anyhow::Result<File> {
    let name = path.display();
    if path.is_dir() {
        anyhow::bail!("{name} is a directory; `{command}` reads one pcap or pcapng capture file");
    }
    File::open(path).with_context(|| format!("cannot open {name}"))
}

/// The error of [`CaptureReader::new`] on the file `path`, for `command`: a file that
/// is not a capture gets a hint at what the command reads.
pub fn header_error(path: &Path, command: &str, e: CaptureError) -> anyhow::Error {
    let name = path.display();
    match e {
        CaptureError::NotACapture(_) => anyhow::anyhow!(
            "{name}: {e}; `{command}` reads pcap and pcapng captures (tcpdump -w or `loxo gen` write one)"
        ),
        e => anyhow::anyhow!("{name}: {e}"),
    }
}

/// What a file that is not a capture looks like, from its first bytes: a loxo sketch,
/// text (quoted), or bytes (in hex).
#[must_use]
pub fn describe_head(head: &[u8]) -> String {
    if head.starts_with(&loxo_core::wire::MAGIC) {
        return "it is a loxo sketch (`loxo inspect` prints it)".into();
    }
    // The head may end inside a multi-byte character: text is what decodes before it.
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if head.len() - e.valid_up_to() < 4 && e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => "",
    };
    let printable = |c: char| !c.is_control() || c.is_ascii_whitespace();
    match text {
        t if !t.is_empty() && t.chars().all(printable) => format!("it is text, starting {t:?}"),
        _ => {
            let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
            format!("it starts with the bytes {}", hex.join(" "))
        }
    }
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header of a pcap or pcapng capture.
    ///
    /// # Errors
    /// [`CaptureError::NotACapture`] (or [`CaptureError::Io`]) when `input` does not
    /// start with a valid pcap or pcapng header.
    pub fn new(mut input: R) -> Result<Self, CaptureError> {
        // Enough of the file to say what it is when it is not a capture.
        let mut head = [0u8; 16];
        let mut got = 0;
        while got < head.len() {
            match input.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CaptureError::Io(e)),
            }
        }
        let head = &head[..got];
        let Some(magic) = head.first_chunk::<4>().copied() else {
            return Err(CaptureError::NotACapture(
                "too short to be a capture".into(),
            ));
        };
        if magic != PCAPNG_MAGIC && !PCAP_MAGICS.contains(&magic) {
            return Err(CaptureError::NotACapture(describe_head(head)));
        }
        let input = Cursor::new(head.to_vec()).chain(input);
        let header_error = |e: PcapError| match e {
            PcapError::IoError(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
                CaptureError::Io(e)
            }
            PcapError::IoError(_) | PcapError::IncompleteBuffer => {
                CaptureError::NotACapture("the file header is cut short".into())
            }
            e => CaptureError::NotACapture(e.to_string()),
        };
        let inner = if magic == PCAPNG_MAGIC {
            Inner::PcapNg {
                r: PcapNgReader::new(input).map_err(header_error)?,
                interfaces: Vec::new(),
            }
        } else {
            let r = PcapReader::new(input).map_err(header_error)?;
            let linktype = u32::from(r.header().datalink);
            Inner::Pcap { r, linktype }
        };
        Ok(Self {
            inner,
            records: 0,
            buf: Vec::new(),
        })
    }

    /// The file format.
    pub const fn format(&self) -> Format {
        match self.inner {
            Inner::Pcap { .. } => Format::Pcap,
            Inner::PcapNg { .. } => Format::PcapNg,
        }
    }

    /// Records read so far (the number of the last one returned).
    pub const fn records(&self) -> u64 {
        self.records
    }

    /// Calls `f` with each record and its frame ([`Record::frame`]) in order, to the
    /// end of the file or the first bad record; returns the error that stopped the
    /// reading (`None`: every record was read), or the first error of `f`, which stops
    /// it too.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn for_each_frame<E>(
        &mut self,
        mut f: impl FnMut(&Record<'_>, Frame<'_>) -> Result<(), E>,
    ) -> Result<Option<CaptureError>, E> {
        let mut scratch = Vec::new();
        loop {
            let record = match self.next_record() {
                None => return Ok(None),
                Some(Err(e)) => return Ok(Some(e)),
                Some(Ok(r)) => r,
            };
            f(&record, record.frame(&mut scratch))?;
        }
    }

    /// The next record, `None` at the end of the file.
    ///
    /// # Errors
    /// [`CaptureError::Truncated`], [`CaptureError::BadRecord`],
    /// [`CaptureError::UnsupportedLink`] or [`CaptureError::Io`] at the record where
    /// reading stops; the caller should not read on.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, CaptureError>> {
        let record = self.records + 1;
        let read = match &mut self.inner {
            Inner::Pcap { r, linktype } => {
                let linktype = *linktype;
                match r.next_raw_packet()? {
                    Ok(p) => checked(record, p.incl_len, p.orig_len).map(|()| {
                        self.buf.clear();
                        self.buf.extend_from_slice(&p.data);
                        (linktype, p.orig_len)
                    }),
                    Err(e) => Err(record_error(record, e)),
                }
            }
            Inner::PcapNg { r, interfaces } => {
                next_ng_packet(r, interfaces, record, &mut self.buf)?
            }
        };
        Some(read.and_then(|(linktype, orig_len)| {
            let link = Link::from_linktype(linktype)
                .ok_or(CaptureError::UnsupportedLink { record, linktype })?;
            self.records = record;
            Ok(Record {
                index: record,
                link,
                data: &self.buf,
                orig_len,
            })
        }))
    }
}

/// Checks a record's lengths.
fn checked(record: u64, captured: u32, orig: u32) -> Result<(), CaptureError> {
    let bad = |reason: String| Err(CaptureError::BadRecord { record, reason });
    if captured > orig {
        return bad(format!(
            "its captured length {captured} exceeds its original length {orig}"
        ));
    }
    if orig > MAX_RECORD_LEN {
        return bad(format!(
            "its original length {orig} exceeds {MAX_RECORD_LEN}, the largest frame loxo reads"
        ));
    }
    Ok(())
}

fn record_error(record: u64, e: PcapError) -> CaptureError {
    match e {
        PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            CaptureError::Truncated { record }
        }
        PcapError::IncompleteBuffer => CaptureError::Truncated { record },
        PcapError::IoError(e) => CaptureError::Io(e),
        e => CaptureError::BadRecord {
            record,
            reason: e.to_string(),
        },
    }
}

/// The next packet block of a pcapng capture, copied into `buf`: its interface's link
/// type and its original length. Section headers reset the interfaces, interface
/// description blocks declare them, other blocks are skipped.
fn next_ng_packet<R: Read>(
    r: &mut PcapNgReader<Input<R>>,
    interfaces: &mut Vec<Interface>,
    record: u64,
    buf: &mut Vec<u8>,
) -> Option<Result<(u32, u32), CaptureError>> {
    loop {
        let block = match r.next_block()? {
            Ok(b) => b,
            Err(e) => return Some(Err(record_error(record, e))),
        };
        // (interface, data, original length, bytes of data that are the packet)
        let (interface, data, orig_len, limit) = match block {
            Block::SectionHeader(_) => {
                interfaces.clear();
                continue;
            }
            Block::InterfaceDescription(i) => {
                interfaces.push(Interface {
                    linktype: u32::from(i.linktype),
                    snaplen: i.snaplen,
                });
                continue;
            }
            Block::EnhancedPacket(p) => (p.interface_id, p.data, p.original_len, usize::MAX),
            Block::Packet(p) => (
                u32::from(p.interface_id),
                p.data,
                p.original_len,
                usize::MAX,
            ),
            Block::SimplePacket(p) => {
                // The block holds min(original length, interface 0's snap length) bytes
                // followed by padding.
                let snap = interfaces.first().map_or(0, |i| i.snaplen);
                let mut n = p.original_len as usize;
                if snap != 0 {
                    n = n.min(snap as usize);
                }
                (0, p.data, p.original_len, n)
            }
            _ => continue,
        };
        let data: &[u8] = &data;
        let data = data.get(..limit).unwrap_or(data);
        let Some(i) = interfaces.get(interface as usize) else {
            return Some(Err(CaptureError::BadRecord {
                record,
                reason: format!(
                    "it is on interface {interface}, but the section declares {}",
                    interfaces.len()
                ),
            }));
        };
        let captured = u32::try_from(data.len()).unwrap_or(u32::MAX);
        return Some(checked(record, captured, orig_len).map(|()| {
            buf.clear();
            buf.extend_from_slice(data);
            (i.linktype, orig_len)
        }));
    }
}

/// A frame of `frame.wire_len` bytes whose first bytes are the captured ones, the rest
/// zeros, in `buf`: for tools that take whole frames (`loxo_flow::parse_frame`, the
/// firmware's NIC). When `loxo_flow::parse_frame_captured(frame.captured,
/// frame.wire_len)` is not `Snapped`, `parse_frame` of this frame gives the same
/// outcome and weight: it reads the same header bytes (none past the captured ones) and
/// compares the same lengths.
pub fn padded<'b>(frame: Frame<'b>, buf: &'b mut Vec<u8>) -> &'b [u8] {
    if frame.is_whole() {
        return frame.captured;
    }
    buf.clear();
    buf.extend_from_slice(frame.captured);
    buf.resize(frame.wire_len, 0);
    buf
}
