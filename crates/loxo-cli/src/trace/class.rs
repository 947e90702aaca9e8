//! Traffic classes ([`TrafficClass`], `loxo gen --class`): what the flood frames or
//! every flow of a trace look like — the traces a per-class cost or accuracy check
//! runs on. A class changes how a frame is built, never the truth's rules: every
//! frame still carries the key the generator built it for and the outcome the oracle
//! works out from its layout.

use std::fmt;
use std::str::FromStr;

use loxo_core::mix64;

use super::attack::Attack;
use super::flows::{Extensions, FlowSpec};

/// The traffic a trace is made of (`TraceConfig::class`).
///
/// [`Mix`](Self::Mix), the default, is the classic trace. The flood, scan and DDoS
/// classes shape the flood frames (`TraceConfig::flood`: `loxo gen` defaults it to
/// [`default_flood`](Self::default_flood), 90 % for a flood or DDoS, 50 % for a scan,
/// 4 % for hidden scanners) and leave the other frames the classic Zipf/Pareto
/// population; the other classes reshape every frame of the population (and the
/// flood frames, if any). The scan and DDoS classes' participants (scanners, victims:
/// `TraceConfig::attack`) are named by [`designed`](super::designed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TrafficClass {
    /// The classic mix: IPv4/IPv6 (80/20), untagged/802.1Q/QinQ (87/10/3),
    /// TCP/UDP/ICMP (70/25/5), 10 % of UDP frames non-first fragments, realistic sizes;
    /// flood frames of any of those shapes.
    #[default]
    Mix,
    /// Flood frames: one-packet UDP flows from random IPv4 sources (all of the
    /// 32-bit space, every flood frame a different source) and random source ports to
    /// one victim, 192.0.2.10 port 53; 64-byte frames.
    FloodV4,
    /// Flood frames: as [`FloodV4`](Self::FloodV4) over IPv6, random 128-bit sources
    /// (each different) to 2001:db8::10 port 53.
    FloodV6,
    /// Flood frames: TCP SYNs with random source ports from 4 096 IPv4 sources (one
    /// /20, 198.18.0.0/20) to one victim, 192.0.2.10 port 80: nearly every frame a new
    /// flow, sources repeating.
    SynFlood,
    /// Every frame as short as its headers allow, at least 60 bytes (the minimum
    /// Ethernet frame without its FCS), the IP length covering only the headers
    /// (the rest is Ethernet padding).
    MinSize,
    /// Every flow IPv6 with an extension-header chain (1–3 of hop-by-hop, routing,
    /// destination options, fragment; one in eight ending in AH, one in eight in ESP).
    Ipv6Ext,
    /// Every flow tagged: half 802.1Q, half QinQ (802.1ad S-tag + 802.1Q C-tag).
    VlanQinq,
    /// Every frame of the population a non-first fragment (ports 0 in its key).
    Fragments,
    /// Horizontal scans: flood frames are TCP SYNs from a few scanners (4 unless
    /// `Attack::scanners`; 198.51.100.1, .2, …), each to a different IPv4 destination
    /// (the whole 32-bit space, one packet each) on the scanner's one port (22, 23,
    /// 80, 443, 445, 3389, 5900, 8080 by scanner); 50 % of the frames by default.
    HScan,
    /// Vertical scans: flood frames are TCP SYNs from a few scanners (2 unless
    /// `Attack::scanners`; IPv4 and IPv6 in turn), each probing the ports 1..=65535 of
    /// its own target in an order of its own, one source port per scanner; 50 % of the
    /// frames by default.
    VScan,
    /// A distributed flood onto one IPv4 victim (192.0.2.10; `Attack::victims` for more:
    /// .11, .12, …): one-packet flows from spoofed sources (the whole 32-bit space,
    /// every frame a different one unless `Attack::spread`), UDP to 53 or 123, TCP SYN
    /// to 80 or 443; 90 % of the frames by default.
    DdosV4,
    /// [`DdosV4`](Self::DdosV4) over IPv6: spoofed 128-bit sources onto 2001:db8::10
    /// (and ::11, … with more victims).
    DdosV6,
    /// [`DdosV4`](Self::DdosV4) onto several victims (4 unless `Attack::victims`),
    /// IPv4 and IPv6 in turn, each flooded from spoofed sources of its family.
    DdosMulti,
    /// Scanners hidden in the classic mix: 4 % of the frames (by default) from 4
    /// scanners (unless `Attack::scanners`), the even ones horizontal as in
    /// [`HScan`](Self::HScan), the odd ones vertical as in [`VScan`](Self::VScan)
    /// (IPv4, IPv6 in turn).
    ScanHidden,
}

/// Share of flood frames `loxo gen` uses for a flood or DDoS class when `--flood` is
/// not given.
const FLOOD_SHARE: f64 = 0.9;
/// The same for a scan class: a few scanners with thousands of elements each in a
/// 16 384-frame epoch.
const SCAN_SHARE: f64 = 0.5;
/// The same for hidden scanners: 1 % of the frames each at the default 4 scanners,
/// about 160 elements per 16 384-frame epoch, a few per cent of its distinct (key,
/// element) pairs.
const HIDDEN_SHARE: f64 = 0.04;

/// The flood victim's IPv4 address (TEST-NET-1).
pub(super) const VICTIM_V4: [u8; 4] = [192, 0, 2, 10];
/// The flood victim's IPv6 address (documentation prefix).
pub(super) const VICTIM_V6: [u8; 16] = [
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
];
/// The SYN flood's sources: 198.18.0.0/20 (the benchmarking range).
const SYN_SOURCES: [u8; 2] = [198, 18];
/// The SYN flood's source pool size (a /20).
const SYN_POOL: u32 = 1 << 12;

impl TrafficClass {
    /// Every class, in the order of their names in `loxo gen --help`.
    pub const ALL: [Self; 14] = [
        Self::Mix,
        Self::FloodV4,
        Self::FloodV6,
        Self::SynFlood,
        Self::MinSize,
        Self::Ipv6Ext,
        Self::VlanQinq,
        Self::Fragments,
        Self::HScan,
        Self::VScan,
        Self::DdosV4,
        Self::DdosV6,
        Self::DdosMulti,
        Self::ScanHidden,
    ];

    /// The class's name (`loxo gen --class NAME`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Mix => "mix",
            Self::FloodV4 => "flood-v4",
            Self::FloodV6 => "flood-v6",
            Self::SynFlood => "syn-flood",
            Self::MinSize => "min-size",
            Self::Ipv6Ext => "ipv6-ext",
            Self::VlanQinq => "vlan-qinq",
            Self::Fragments => "fragments",
            Self::HScan => "hscan",
            Self::VScan => "vscan",
            Self::DdosV4 => "ddos-v4",
            Self::DdosV6 => "ddos-v6",
            Self::DdosMulti => "ddos-multi",
            Self::ScanHidden => "scan-hidden",
        }
    }

    /// Whether the class shapes the flood frames (and only them): a flood, scan or
    /// DDoS class.
    pub const fn is_flood(self) -> bool {
        matches!(self, Self::FloodV4 | Self::FloodV6 | Self::SynFlood)
            || self.is_scan()
            || self.is_ddos()
    }

    /// The flood share `loxo gen` uses when `--flood` is not given: 0.9 for a flood
    /// or DDoS class, 0.5 for a scan class, 0.04 for hidden scanners, else 0.
    pub const fn default_flood(self) -> f64 {
        match self {
            Self::ScanHidden => HIDDEN_SHARE,
            Self::HScan | Self::VScan => SCAN_SHARE,
            c if c.is_flood() => FLOOD_SHARE,
            _ => 0.0,
        }
    }

    /// The spec of flood frame `n` (its index in the trace), for a flood, scan or
    /// DDoS class (`attack`: the scan and DDoS classes' participants).
    pub(super) fn flood_spec(self, seed: u64, attack: &Attack, n: u64) -> Option<FlowSpec> {
        let h = mix64(seed ^ 0x00c1_a55f_100d ^ mix64(n));
        if self.is_scan() || self.is_ddos() {
            return self.attack_spec(attack, seed, n, h);
        }
        let mut src = [0u8; 16];
        let mut dst = [0u8; 16];
        let (v6, proto, dport) = match self {
            Self::FloodV4 => {
                src[..4].copy_from_slice(&distinct32(seed, n).to_be_bytes());
                dst[..4].copy_from_slice(&VICTIM_V4);
                (false, 17, 53)
            }
            Self::FloodV6 => {
                // 96 random bits, then 32 that differ for every frame.
                src[..8].copy_from_slice(&mix64(h).to_be_bytes());
                src[8..12].copy_from_slice(&(h as u32).to_be_bytes());
                src[12..].copy_from_slice(&distinct32(seed, n).to_be_bytes());
                dst = VICTIM_V6;
                (true, 17, 53)
            }
            Self::SynFlood => {
                let host = (mix64(h) as u32 % SYN_POOL) as u16;
                src[..2].copy_from_slice(&SYN_SOURCES);
                src[2..4].copy_from_slice(&host.to_be_bytes());
                dst[..4].copy_from_slice(&VICTIM_V4);
                (false, 6, 80)
            }
            _ => return None,
        };
        Some(FlowSpec {
            v6,
            tags: 0,
            proto,
            src,
            dst,
            // Ephemeral ports, 1024..=65535.
            sport: (h >> 48) as u16 | 1024,
            dport,
            ext: Extensions::None,
            syn: self == Self::SynFlood,
        })
    }
}

/// A 32-bit value that differs for every `n` below 2^32: a bijection of `n`'s low 32
/// bits (xor, odd multiplications and xor-shifts each are one), keyed by `seed`.
pub(super) fn distinct32(seed: u64, n: u64) -> u32 {
    let mut x = (n as u32) ^ (seed as u32);
    x = x.wrapping_mul(0x9e37_79b1);
    x ^= x >> 15;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x.wrapping_add((seed >> 32) as u32)
}

impl fmt::Display for TrafficClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`TrafficClass`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownClass(pub String);

impl fmt::Display for UnknownClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown traffic class {:?}; one of:", self.0)?;
        for c in TrafficClass::ALL {
            write!(f, " {c}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownClass {}

impl FromStr for TrafficClass {
    type Err = UnknownClass;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownClass(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in TrafficClass::ALL {
            assert_eq!(c.name().parse::<TrafficClass>(), Ok(c));
        }
        assert!("flood".parse::<TrafficClass>().is_err());
    }

    #[test]
    fn distinct32_is_injective() {
        let mut seen = std::collections::HashSet::new();
        assert!((0..200_000).all(|n| seen.insert(distinct32(0xfeed_beef_1234, n))));
    }
}
