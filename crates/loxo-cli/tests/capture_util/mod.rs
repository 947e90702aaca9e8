//! Shared by the `capture_*` tests: generated frames, pcap / pcapng writers for any snap
//! length and link type, Ethernet frames turned into other link types, and `loxo top`.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use loxo_cli::trace::{generate, TraceConfig};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::pcapng::{Block, PcapNgWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

/// A fixed seed for `loxo top`, so two runs are comparable.
pub const SEED: &str = "00112233445566778899aabbccddeeff";

/// A fresh directory for one test.
pub fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("loxo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The frames of a generated trace (IPv4/IPv6, VLAN/QinQ, fragments, malformed and
/// non-IP frames; with `extensions`, IPv4 options and IPv6 chains).
pub fn frames(packets: u64, extensions: f64, seed: u64) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    generate(
        &TraceConfig {
            packets,
            flows: 500,
            malformed: 0.02,
            extensions,
            seed,
            ..TraceConfig::default()
        },
        |f| {
            v.push(f.to_vec());
            Ok::<(), ()>(())
        },
    )
    .unwrap();
    v
}

/// One record: captured bytes and original length.
pub type Rec = (Vec<u8>, u32);

/// Records of `frames` cut to `snap` bytes (the original length kept).
pub fn snapped(frames: &[Vec<u8>], snap: usize) -> Vec<Rec> {
    frames
        .iter()
        .map(|f| (f[..f.len().min(snap)].to_vec(), f.len() as u32))
        .collect()
}

/// Whole records of `frames`.
pub fn whole(frames: &[Vec<u8>]) -> Vec<Rec> {
    snapped(frames, usize::MAX)
}

/// Writes a classic pcap.
pub fn write_pcap(
    path: &Path,
    datalink: DataLink,
    snaplen: u32,
    endianness: Endianness,
    ts_resolution: TsResolution,
    records: &[Rec],
) {
    let header = PcapHeader {
        snaplen,
        datalink,
        endianness,
        ts_resolution,
        ..PcapHeader::default()
    };
    let mut w =
        PcapWriter::with_header(BufWriter::new(File::create(path).unwrap()), header).unwrap();
    for (i, (data, orig)) in records.iter().enumerate() {
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(i as u64),
            *orig,
            data,
        ))
        .unwrap();
    }
}

/// A little-endian microsecond Ethernet pcap of `records` with snap length `snaplen`.
pub fn ethernet_pcap(path: &Path, snaplen: u32, records: &[Rec]) {
    write_pcap(
        path,
        DataLink::ETHERNET,
        snaplen,
        Endianness::Little,
        TsResolution::MicroSecond,
        records,
    );
}

/// A pcapng section: its interfaces (link type, snap length) and packets (interface,
/// record).
pub struct Section {
    pub interfaces: Vec<(DataLink, u32)>,
    pub packets: Vec<(u32, Rec)>,
}

/// Writes a pcapng file of `sections`.
pub fn write_pcapng(path: &Path, sections: &[Section], endianness: Endianness) {
    let shb = SectionHeaderBlock {
        endianness,
        ..SectionHeaderBlock::default()
    };
    let mut w =
        PcapNgWriter::with_section_header(BufWriter::new(File::create(path).unwrap()), shb.clone())
            .unwrap();
    for (n, s) in sections.iter().enumerate() {
        if n > 0 {
            w.write_block(&Block::SectionHeader(shb.clone())).unwrap();
        }
        for &(linktype, snaplen) in &s.interfaces {
            w.write_pcapng_block(InterfaceDescriptionBlock::new(linktype, snaplen))
                .unwrap();
        }
        for (i, (interface, (data, orig))) in s.packets.iter().enumerate() {
            w.write_pcapng_block(EnhancedPacketBlock {
                interface_id: *interface,
                timestamp: Duration::from_micros(i as u64),
                original_len: *orig,
                data: data.as_slice().into(),
                options: vec![],
            })
            .unwrap();
        }
    }
}

/// The Ethernet header length of `f` (tags included), and its EtherType, if it is an
/// untagged / 802.1Q / QinQ IP frame.
pub fn ip_start(f: &[u8]) -> Option<(usize, u16)> {
    let be = |at: usize| f.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let mut off = 12;
    let mut t = be(off)?;
    if t == 0x88a8 {
        off += 4;
        t = be(off)?;
        if t != 0x8100 {
            return None;
        }
    }
    if t == 0x8100 {
        off += 4;
        t = be(off)?;
    }
    matches!(t, 0x0800 | 0x86dd).then_some((off + 2, t))
}

/// The synthetic Ethernet header `loxo_cli::capture` puts in front of a non-Ethernet
/// record's payload.
pub fn synthetic(ethertype: u16) -> Vec<u8> {
    let mut h = vec![
        0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x10, 0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x11,
    ];
    h.extend_from_slice(&ethertype.to_be_bytes());
    h
}

/// A Linux cooked (SLL) record of Ethernet frame `f`: the 16-byte header with the
/// frame's EtherType as protocol, then everything after its MAC addresses and type
/// (a VLAN tag stays in place, as libpcap re-inserts it).
pub fn sll(f: &[u8]) -> Vec<u8> {
    let mut h = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    h.extend_from_slice(&f[12..14]);
    h.extend_from_slice(&f[14..]);
    h
}

/// A Linux cooked v2 (SLL2) record of Ethernet frame `f`.
pub fn sll2(f: &[u8]) -> Vec<u8> {
    let mut h = f[12..14].to_vec();
    h.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    h.extend_from_slice(&f[14..]);
    h
}

/// A BSD loopback (NULL, little-endian host) record of an IP frame `f`.
pub fn null(f: &[u8]) -> Option<Vec<u8>> {
    let (start, t) = ip_start(f)?;
    let family: u32 = if t == 0x0800 { 2 } else { 30 };
    let mut h = family.to_le_bytes().to_vec();
    h.extend_from_slice(&f[start..]);
    Some(h)
}

/// `frame` as a record of `link` (the captured bytes of the whole frame), and the
/// Ethernet frame `loxo_cli::capture` makes of it; `None` when the link type cannot
/// carry it (not IP for raw IP and loopback; shorter than an Ethernet header).
pub fn as_link(link: DataLink, f: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let after_type = |f: &[u8]| f.get(14..).map(<[u8]>::to_vec);
    match link {
        DataLink::ETHERNET => Some((f.to_vec(), f.to_vec())),
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => {
            let (start, t) = ip_start(f)?;
            let want = if link == DataLink::IPV4 {
                0x0800
            } else {
                0x86dd
            };
            if link != DataLink::RAW && t != want {
                return None;
            }
            let ip = f[start..].to_vec();
            // Raw IP has no EtherType: the version nibble says what the packet is, so
            // an IPv6 header behind an IPv4 EtherType (a version mismatch) cannot be
            // carried as what it was.
            let version = if ip.first().is_some_and(|b| b >> 4 == 6) {
                0x86dd
            } else {
                0x0800
            };
            if link == DataLink::RAW && version != t {
                return None;
            }
            Some((ip.clone(), [synthetic(t), ip].concat()))
        }
        DataLink::LINUX_SLL => {
            let rest = after_type(f)?;
            let t = u16::from_be_bytes([f[12], f[13]]);
            Some((sll(f), [synthetic(t), rest].concat()))
        }
        DataLink::LINUX_SLL2 => {
            let rest = after_type(f)?;
            let t = u16::from_be_bytes([f[12], f[13]]);
            Some((sll2(f), [synthetic(t), rest].concat()))
        }
        DataLink::NULL => {
            let rec = null(f)?;
            let (start, t) = ip_start(f)?;
            Some((rec, [synthetic(t), f[start..].to_vec()].concat()))
        }
        _ => None,
    }
}

/// Spreads `frames` over the interfaces of `sections` (round robin, Ethernet for the
/// frames a link type cannot carry), cut to each interface's snap length; returns the
/// sections and the Ethernet records (captured, original length) they stand for.
pub fn spread(frames: &[Vec<u8>], layout: &[&[(DataLink, u32)]]) -> (Vec<Section>, Vec<Rec>) {
    let mut sections: Vec<Section> = layout
        .iter()
        .map(|i| Section {
            interfaces: i.to_vec(),
            packets: vec![],
        })
        .collect();
    let mut reference = Vec::new();
    let per = frames.len().div_ceil(layout.len());
    for (n, f) in frames.iter().enumerate() {
        let s = &mut sections[n / per];
        let mut i = n % s.interfaces.len();
        let (mut link, mut snap) = s.interfaces[i];
        let (rec, eth) = as_link(link, f).unwrap_or_else(|| {
            // Interface 0 of every section is Ethernet.
            i = 0;
            (link, snap) = s.interfaces[0];
            (f.clone(), f.clone())
        });
        let snap = if snap == 0 { usize::MAX } else { snap as usize };
        let cut = rec.len().min(snap);
        s.packets
            .push((i as u32, (rec[..cut].to_vec(), rec.len() as u32)));
        // The Ethernet frame's captured bytes: the record's, its own header replaced.
        let hdr = match link {
            DataLink::ETHERNET => 14,
            DataLink::LINUX_SLL => 16,
            DataLink::LINUX_SLL2 => 20,
            DataLink::NULL => 4,
            _ => 0,
        };
        let eth_cut = if link == DataLink::ETHERNET {
            cut
        } else if cut >= hdr {
            14 + cut - hdr
        } else {
            0
        };
        reference.push((eth[..eth_cut].to_vec(), eth.len() as u32));
    }
    (sections, reference)
}

/// Whether the key rules, applied to a record of `wire_len` bytes of which `captured`
/// were kept, must read a byte past the captured ones before they reach the frame's
/// outcome: the records `loxo top` counts as `snapped` and `loxo replay` does not send.
///
/// The oracle of the snap-length tests, written for them from the key rules in
/// `loxo_flow`'s crate docs (which header bytes decide a frame's outcome, in which
/// order) and sharing no code with `loxo_flow::parse_frame_captured`, the function
/// under test: the link layer (EtherType, QinQ / 802.1Q tags), then the IPv4 header
/// (20 bytes; IHL, total length, fragment offset, protocol) or the IPv6 header (40
/// bytes) and its extension chain (each header's next-header and length bytes, a
/// fragment header's offset), then the first 4 bytes of the transport header when the
/// protocol has ports and its header fits in the declared length. Every length is
/// checked against `wire_len`: a frame that breaks a rule before its headers reach
/// the cut is malformed, not cut.
pub fn headers_cut(captured: &[u8], wire_len: usize) -> bool {
    /// Why a walk stopped early: `Cut` (a byte it needs lies past the capture) or
    /// `Decided` (the outcome is known: not IP, malformed, a fragment, AH/ESP).
    enum Stop {
        Cut,
        Decided,
    }
    use Stop::{Cut, Decided};
    let len = wire_len.max(captured.len());
    // Bytes `at..at + n` of the frame: past the frame is a malformed frame (decided),
    // past the capture a cut.
    let get = |at: usize, n: usize| -> Result<&[u8], Stop> {
        if at + n > len {
            Err(Decided)
        } else {
            captured.get(at..at + n).ok_or(Cut)
        }
    };
    let be16 = |at: usize| get(at, 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    // Ports: TCP needs 20 bytes, UDP / ICMP / ICMPv6 8, SCTP 12 in the declared
    // payload (`rem` bytes from `at`), of which the first 4 are read.
    let ports = |proto: u8, at: usize, rem: usize| -> Result<(), Stop> {
        let need = match proto {
            6 => 20,
            17 | 1 | 58 => 8,
            132 => 12,
            _ => return Err(Decided),
        };
        if rem < need {
            return Err(Decided);
        }
        get(at, 4).map(|_| ())
    };
    let walk = || -> Result<(), Stop> {
        let mut ethertype = be16(12)?;
        let mut l3 = 14;
        if ethertype == 0x88a8 {
            ethertype = be16(16)?;
            l3 = 18;
            if ethertype != 0x8100 {
                return Err(Decided);
            }
        }
        if ethertype == 0x8100 {
            ethertype = be16(l3 + 2)?;
            l3 += 4;
        }
        let avail = len - l3.min(len);
        match ethertype {
            0x0800 => {
                let h = get(l3, 20)?;
                let ihl = usize::from(h[0] & 0x0f) * 4;
                let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
                let fragment = u16::from_be_bytes([h[6], h[7]]) & 0x1fff != 0;
                if h[0] >> 4 != 4 || ihl < 20 || ihl > avail || total < ihl || total > avail {
                    return Err(Decided);
                }
                if fragment {
                    return Ok(());
                }
                ports(h[9], l3 + ihl, total - ihl)
            }
            0x86dd => {
                let h = get(l3, 40)?;
                let plen = usize::from(u16::from_be_bytes([h[4], h[5]]));
                if h[0] >> 4 != 6 || 40 + plen > avail {
                    return Err(Decided);
                }
                let (mut at, mut rem, mut nh) = (l3 + 40, plen, h[6]);
                let mut walked = 0;
                loop {
                    let ext_len = match nh {
                        0 | 43 | 60 => {
                            if rem < 2 {
                                return Err(Decided);
                            }
                            (usize::from(get(at + 1, 1)?[0]) + 1) * 8
                        }
                        44 => 8,
                        50 | 51 => return Ok(()),
                        _ => break,
                    };
                    walked += 1;
                    if walked > loxo_flow::MAX_IPV6_EXTENSIONS || ext_len > rem {
                        return Err(Decided);
                    }
                    let next = get(at, 1)?[0];
                    if nh == 44 && be16(at + 2)? >> 3 != 0 {
                        return Ok(());
                    }
                    nh = next;
                    at += ext_len;
                    rem -= ext_len;
                }
                ports(nh, at, rem)
            }
            _ => Err(Decided),
        }
    };
    wire_len > captured.len() && matches!(walk(), Err(Cut))
}

/// Runs `loxo` with `args`.
pub fn loxo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(args)
        .output()
        .expect("run loxo")
}

/// `loxo top --json` of `file` with a fixed seed (and `extra` options).
pub fn top(file: &Path, extra: &[&str]) -> (Output, Option<serde_json::Value>) {
    let mut args = vec!["top", file.to_str().unwrap(), "--json", "--seed", SEED];
    args.extend_from_slice(extra);
    let out = loxo(&args);
    let json = serde_json::from_slice(&out.stdout).ok();
    (out, json)
}

/// The epochs of a `loxo top --json` document without the snapped-frame counts: the
/// figures two captures of the same frames must share.
pub fn epochs(json: &serde_json::Value) -> serde_json::Value {
    let mut e = json["epochs"].clone();
    if let Some(list) = e.as_array_mut() {
        for x in list {
            if let Some(o) = x.as_object_mut() {
                o.remove("snapped");
            }
        }
    }
    e
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
