//! A flow's fixed fields ([`FlowSpec`]), derived from its id by hashing: the same
//! flow id always gives the same addresses, ports, tags and extensions.

use loxo_core::mix64;
use loxo_flow::FlowKey;

use super::gen::unit;
use super::TrafficClass;

/// The IPv6 extension headers the generator writes and the key rules walk, as their
/// Next Header numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum ExtType {
    HopByHop = 0,
    Routing = 43,
    Fragment = 44,
    DestOpts = 60,
}

/// The headers that end the key rules' walk (ports 0, their protocol number).
pub(super) const ESP: u8 = 50;
pub(super) const AH: u8 = 51;

/// Where an IPv6 flow's headers end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum V6End {
    /// The transport header (the flow's protocol).
    Transport,
    /// An AH header: the walk ends with ports 0, protocol 51.
    Ah,
    /// An ESP header: the walk ends with ports 0, protocol 50.
    Esp,
}

/// Per-flow extensions (`TraceConfig::extensions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extensions {
    None,
    /// IPv4 options of this many 32-bit words (1..=10).
    V4Options(u8),
    /// An IPv6 chain: up to 3 headers (type, length in bytes), then where it ends.
    V6Chain([(ExtType, u8); 3], u8, V6End),
}

/// Per-flow fixed attributes, derived from the flow id.
#[derive(Clone, Copy)]
pub(super) struct FlowSpec {
    /// IPv6 (20 % of the flows), else IPv4.
    pub(super) v6: bool,
    /// VLAN tags: 0 none, 1 802.1Q, 2 QinQ.
    pub(super) tags: u8,
    /// TCP 6, UDP 17, ICMP 1 / ICMPv6 58.
    pub(super) proto: u8,
    /// Addresses: all 16 bytes for IPv6, the first 4 (`10.x.y.z`) for IPv4.
    pub(super) src: [u8; 16],
    pub(super) dst: [u8; 16],
    /// Ports (ICMP: type 8, code 0).
    pub(super) sport: u16,
    pub(super) dport: u16,
    /// IPv4 options or an IPv6 chain (`TraceConfig::extensions`).
    pub(super) ext: Extensions,
    /// A TCP SYN (flags SYN), not an ACK (`TrafficClass::SynFlood`).
    pub(super) syn: bool,
}

/// The spec of population flow `id`; `class` forces IPv6 with a chain
/// ([`TrafficClass::Ipv6Ext`]) or tags ([`TrafficClass::VlanQinq`]), the other classes
/// leave the classic flows as they are.
pub(super) fn flow_spec(seed: u64, id: u64, extensions: f64, class: TrafficClass) -> FlowSpec {
    let a = mix64(seed ^ mix64(id.wrapping_add(1)));
    let b = mix64(a);
    let c = mix64(b);
    let v6 = class == TrafficClass::Ipv6Ext || a.is_multiple_of(5); // 20 % IPv6
    let tags = match ((a >> 8) % 100, class) {
        (x, TrafficClass::VlanQinq) => 1 + (x % 2) as u8,
        (0..=9, _) => 1,
        (10..=12, _) => 2,
        _ => 0,
    };
    let extensions = if class == TrafficClass::Ipv6Ext {
        1.0
    } else {
        extensions
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
            let mut chain = [(ExtType::HopByHop, 0u8); 3];
            let mut frag = false;
            for (i, h) in chain.iter_mut().enumerate().take(n) {
                let r = e >> (8 + 8 * i);
                let ty = match r % 4 {
                    0 if i == 0 => ExtType::HopByHop,
                    1 if !frag => ExtType::Fragment,
                    2 => ExtType::Routing,
                    _ => ExtType::DestOpts,
                };
                frag |= ty == ExtType::Fragment;
                let len = if ty == ExtType::Fragment {
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
        syn: false,
    }
}

impl FlowSpec {
    /// The key of this flow's frames, from its fields: ports 0 on a non-first
    /// fragment, behind AH/ESP; ICMP's type/code as ports.
    pub(super) fn key(&self, fragment: bool, frag_next: u8) -> FlowKey {
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
    pub(super) fn transport_len(&self) -> usize {
        match self.proto {
            6 => 20,
            _ => 8,
        }
    }
}
