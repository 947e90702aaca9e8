//! The participant classes' attack frames: horizontal and vertical scans, distributed
//! floods from spoofed sources onto one or several victims, scanners hidden in the
//! classic mix. Each class designs its participants — the scanners' sources (and a
//! vertical scanner's target), the victims — and [`designed`] names them, so a test can
//! check the truth's spreads (`participants.rs`) against what the class set out to
//! make.
//!
//! An attack frame's fields are a pure function of the seed, its index `n` in the trace
//! and the [`Attack`] parameters (no RNG draw: the generator's loop stays in step with
//! the classic trace). Its participant is drawn by hashing `n`, so each of `P`
//! participants gets about `1/P` of the attack frames; its *element* (a horizontal
//! scanner's destination, a vertical scanner's port, a flood's source) comes from the
//! element index `k = n` — a new element every frame — or `k = n mod S` with
//! `--spread S`, at most `S` distinct elements.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use loxo_core::mix64;

use super::class::{self, distinct32};
use super::flows::{Extensions, FlowSpec};
use super::participants::SpreadKey;
use super::{TraceConfig, TrafficClass};

/// The participants of an attack class (`TraceConfig::attack`; `loxo gen --scanners`,
/// `--victims`, `--spread`). `None` takes the class's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Attack {
    /// Scanners of a scan class ([`TrafficClass::HScan`], [`TrafficClass::VScan`],
    /// [`TrafficClass::ScanHidden`]); default 4, 2 for `VScan`.
    pub scanners: Option<u32>,
    /// Victims of a DDoS class ([`TrafficClass::DdosV4`], [`TrafficClass::DdosV6`],
    /// [`TrafficClass::DdosMulti`]); default 1, 4 for `DdosMulti`.
    pub victims: Option<u32>,
    /// The elements each participant draws from: a horizontal scanner sweeps this many
    /// destinations, a vertical one this many ports (at most 65 535), a flood's
    /// sources are a pool (a botnet) of this many. `None`: a new element every frame
    /// (a vertical scanner's ports repeat after 65 535).
    pub spread: Option<u32>,
}

/// Most participants (`--scanners`, `--victims`) a class takes: their addresses are
/// counted up from a base address.
pub const MAX_PARTICIPANTS: u32 = 1 << 16;

/// The scanners' addresses: IPv4 198.51.100.1 + i (TEST-NET-2, counting on past it
/// for more than 254), IPv6 2001:db8:5ca::1 + i.
const SCANNER_V4: u32 = u32::from_be_bytes([198, 51, 100, 1]);
const SCANNER_V6: u128 = 0x2001_0db8_05ca_0000_0000_0000_0000_0001;
/// A vertical scanner's target: IPv4 203.0.113.10 + i (TEST-NET-3), IPv6
/// 2001:db8:7a::10 + i.
const TARGET_V4: u32 = u32::from_be_bytes([203, 0, 113, 10]);
const TARGET_V6: u128 = 0x2001_0db8_007a_0000_0000_0000_0000_0010;
/// The victims: IPv4 192.0.2.10 + j, IPv6 2001:db8::10 + j (the flood classes'
/// victim is j = 0).
const VICTIM_V4: u32 = u32::from_be_bytes(class::VICTIM_V4);
const VICTIM_V6: u128 = u128::from_be_bytes(class::VICTIM_V6);
/// A horizontal scanner's destination port, by scanner: SSH, telnet, HTTP, HTTPS,
/// SMB, RDP, VNC, HTTP-alt.
const HSCAN_PORTS: [u16; 8] = [22, 23, 80, 443, 445, 3389, 5900, 8080];
/// A flood frame's vector, by the frame's hash: (protocol, destination port).
const DDOS_VECTORS: [(u8, u16); 4] = [(17, 53), (17, 123), (6, 80), (6, 443)];
/// The ports a vertical scan probes, 1..=65535: `1 + (a·k + b) mod 65 535`, a
/// bijection of `k mod 65 535` for `a` prime to 65 535 = 3·5·17·257.
const PORTS: u64 = 65_535;
const PORT_STEP: u64 = 40_493;

/// What a scanner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Many destinations, one port, one packet each.
    Horizontal,
    /// Many ports of one destination.
    Vertical { v6: bool },
}

impl TrafficClass {
    /// Whether the class is a scan class (`--scanners`).
    pub const fn is_scan(self) -> bool {
        matches!(self, Self::HScan | Self::VScan | Self::ScanHidden)
    }

    /// Whether the class is a DDoS class (`--victims`).
    pub const fn is_ddos(self) -> bool {
        matches!(self, Self::DdosV4 | Self::DdosV6 | Self::DdosMulti)
    }

    /// How many participants the class designs under `attack`: its scanners or
    /// victims (at least 1, at most [`MAX_PARTICIPANTS`]), 1 for the flood classes'
    /// victim, 0 for the others.
    pub fn participants(self, attack: &Attack) -> u32 {
        let n = match self {
            Self::HScan | Self::ScanHidden => attack.scanners.unwrap_or(4),
            Self::VScan => attack.scanners.unwrap_or(2),
            Self::DdosV4 | Self::DdosV6 => attack.victims.unwrap_or(1),
            Self::DdosMulti => attack.victims.unwrap_or(4),
            Self::FloodV4 | Self::FloodV6 | Self::SynFlood => 1,
            Self::Mix | Self::MinSize | Self::Ipv6Ext | Self::VlanQinq | Self::Fragments => {
                return 0
            }
        };
        n.clamp(1, MAX_PARTICIPANTS)
    }

    /// What scanner `i` of a scan class does: in `ScanHidden` even scanners are
    /// horizontal, odd ones vertical (IPv4, IPv6 in turn); in `VScan` IPv4 and IPv6
    /// in turn.
    fn scan(self, i: u32) -> Option<Scan> {
        match self {
            Self::HScan => Some(Scan::Horizontal),
            Self::VScan => Some(Scan::Vertical { v6: i % 2 == 1 }),
            Self::ScanHidden if i.is_multiple_of(2) => Some(Scan::Horizontal),
            Self::ScanHidden => Some(Scan::Vertical { v6: i % 4 == 3 }),
            _ => None,
        }
    }

    /// Victim `j` of a DDoS class: IPv6 or not, and its number within its family.
    fn victim(self, j: u32) -> (bool, u32) {
        match self {
            Self::DdosV6 => (true, j),
            Self::DdosMulti => (j % 2 == 1, j / 2),
            _ => (false, j),
        }
    }

    /// The spec of attack frame `n` of a scan or DDoS class (`h`: the frame's hash).
    pub(super) fn attack_spec(
        self,
        attack: &Attack,
        seed: u64,
        n: u64,
        h: u64,
    ) -> Option<FlowSpec> {
        let count = u64::from(self.participants(attack));
        let p = u32::try_from(mix64(h ^ PICK_SALT) % count.max(1)).ok()?;
        let k = attack.spread.map_or(n, |s| n % u64::from(s.max(1)));
        // Ephemeral source ports, 1024..=65535.
        let sport = (h >> 48) as u16 | 1024;
        let spec = |src: IpAddr, dst: IpAddr, proto, sport, dport| {
            let mut s = [0u8; 16];
            let mut d = [0u8; 16];
            match (src, dst) {
                (IpAddr::V4(a), IpAddr::V4(b)) => {
                    s[..4].copy_from_slice(&a.octets());
                    d[..4].copy_from_slice(&b.octets());
                }
                (a, b) => {
                    s = v6_octets(a);
                    d = v6_octets(b);
                }
            }
            FlowSpec {
                v6: src.is_ipv6(),
                tags: 0,
                proto,
                src: s,
                dst: d,
                sport,
                dport,
                ext: Extensions::None,
                syn: proto == 6,
            }
        };
        if self.is_ddos() {
            let (v6, _) = self.victim(p);
            let vector = DDOS_VECTORS[(h >> 40) as usize % DDOS_VECTORS.len()];
            let src = spoofed(seed, k, v6);
            return Some(spec(src, victim(self, p), vector.0, sport, vector.1));
        }
        let src = scanner(self, p)?;
        Some(match self.scan(p)? {
            Scan::Horizontal => {
                // Every k a different address, the whole 32-bit space, in an order of
                // the scanner's own.
                let dst = Ipv4Addr::from(distinct32(seed ^ mix64(u64::from(p) + 1), k));
                let dport = HSCAN_PORTS[p as usize % HSCAN_PORTS.len()];
                spec(src, IpAddr::V4(dst), 6, sport, dport)
            }
            Scan::Vertical { .. } => {
                let offset = mix64(seed ^ u64::from(p)) % PORTS;
                let dport = 1 + (PORT_STEP * (k % PORTS) + offset) % PORTS;
                // One source port per scanner, as a port scanner does.
                let sport = (mix64(seed ^ 0x5ca0 ^ u64::from(p)) >> 48) as u16 | 1024;
                spec(src, target(self, p)?, 6, sport, dport as u16)
            }
        })
    }
}

/// The salt of the hash that picks a frame's participant.
const PICK_SALT: u64 = 0x9a27_1c1f_ad57;

/// The IPv6 octets of `a` (an IPv4 address mapped, which no caller passes).
fn v6_octets(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

/// Scanner `i`'s address.
fn scanner(class: TrafficClass, i: u32) -> Option<IpAddr> {
    Some(match class.scan(i)? {
        Scan::Vertical { v6: true } => {
            IpAddr::V6(Ipv6Addr::from(SCANNER_V6.wrapping_add(u128::from(i))))
        }
        _ => IpAddr::V4(Ipv4Addr::from(SCANNER_V4.wrapping_add(i))),
    })
}

/// Vertical scanner `i`'s target.
fn target(class: TrafficClass, i: u32) -> Option<IpAddr> {
    match class.scan(i)? {
        Scan::Vertical { v6: true } => Some(IpAddr::V6(Ipv6Addr::from(
            TARGET_V6.wrapping_add(u128::from(i)),
        ))),
        Scan::Vertical { v6: false } => Some(IpAddr::V4(Ipv4Addr::from(TARGET_V4.wrapping_add(i)))),
        Scan::Horizontal => None,
    }
}

/// Victim `j`'s address.
fn victim(class: TrafficClass, j: u32) -> IpAddr {
    match class.victim(j) {
        (true, x) => IpAddr::V6(Ipv6Addr::from(VICTIM_V6.wrapping_add(u128::from(x)))),
        (false, x) => IpAddr::V4(Ipv4Addr::from(VICTIM_V4.wrapping_add(x))),
    }
}

/// A flood's spoofed source of element `k`: IPv4, the whole 32-bit space, or IPv6, 96
/// random bits then 32; a different address for every `k` below 2^32.
fn spoofed(seed: u64, k: u64, v6: bool) -> IpAddr {
    let low = distinct32(seed ^ 0x5900_f3d5, k);
    if v6 {
        let hi = mix64(seed ^ 0x5900_f3d6 ^ mix64(k));
        let mid = mix64(hi) as u32;
        IpAddr::V6(Ipv6Addr::from(
            (u128::from(hi) << 64) | (u128::from(mid) << 32) | u128::from(low),
        ))
    } else {
        IpAddr::V4(Ipv4Addr::from(low))
    }
}

/// The participants a trace's class designs (none without attack frames, `flood` =
/// 0): each scanner's source ([`SpreadKey::Source`], horizontal) or its (source,
/// target) ([`SpreadKey::Pair`], vertical), each victim ([`SpreadKey::Destination`];
/// the flood classes' victim too), in participant order.
pub fn designed(cfg: &TraceConfig) -> Vec<SpreadKey> {
    if cfg.flood <= 0.0 {
        return Vec::new();
    }
    let n = cfg.class.participants(&cfg.attack);
    match cfg.class {
        TrafficClass::FloodV4 | TrafficClass::SynFlood => {
            vec![SpreadKey::Destination(IpAddr::V4(Ipv4Addr::from(
                VICTIM_V4,
            )))]
        }
        TrafficClass::FloodV6 => {
            vec![SpreadKey::Destination(IpAddr::V6(Ipv6Addr::from(
                VICTIM_V6,
            )))]
        }
        c if c.is_ddos() => (0..n)
            .map(|j| SpreadKey::Destination(victim(c, j)))
            .collect(),
        c => (0..n)
            .filter_map(|i| {
                let src = scanner(c, i)?;
                Some(match target(c, i) {
                    Some(dst) => SpreadKey::Pair(src, dst),
                    None => SpreadKey::Source(src),
                })
            })
            .collect(),
    }
}
