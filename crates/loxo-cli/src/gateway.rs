//! The demo network's router: `loxo replay` is the only other station on the QEMU
//! NIC's link, so it also plays the device's gateway. It answers ARP for the gateway
//! address and forwards the device's UDP datagrams to that address, by destination
//! port, to real sockets on the host (`--forward 4739=127.0.0.1:2055` puts the
//! firmware's IPFIX into an `nfcapd` on the host, `4740=…` its sketch datagrams into
//! `loxo collect`).
//!
//! Only what a router of one subnet does for a UDP exporter: ARP requests for the
//! gateway address get a reply, IPv4/UDP to it on a forwarded port is sent on from
//! the host's socket (the payload as is; the IPv4 header checksum and the UDP
//! checksum are verified first), anything else is counted and dropped. IP fragments
//! are dropped (the device's exports fit one MTU by design). Frames are parsed with
//! `smoltcp::wire`, the same wire views the firmware's IP stack uses.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};

use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, IpProtocol, Ipv4Packet, UdpPacket,
};

/// The gateway's MAC (locally administered).
pub const GATEWAY_MAC: [u8; 6] = [0x02, 0x4C, 0x4F, 0x58, 0x4F, 0x10];

/// What the gateway did with the frames it saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GatewayStats {
    /// ARP requests for the gateway address answered.
    pub arp_replies: u64,
    /// UDP datagrams forwarded.
    pub forwarded: u64,
    /// IPv4/UDP frames to the gateway dropped: a port nobody forwards, a bad
    /// checksum, a fragment, a malformed header.
    pub dropped: u64,
    /// Frames that are neither (other EtherTypes, other addresses).
    pub ignored: u64,
}

/// The demo network's router.
#[derive(Debug)]
pub struct Gateway {
    ip: Ipv4Addr,
    routes: BTreeMap<u16, SocketAddr>,
    sock: UdpSocket,
    stats: GatewayStats,
}

/// A `--forward` rule: `PORT=HOST:PORT`.
///
/// # Errors
/// A message naming what is wrong with `s`.
pub fn parse_forward(s: &str) -> Result<(u16, SocketAddr), String> {
    let (port, to) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected PORT=HOST:PORT"))?;
    let port = port
        .parse()
        .map_err(|e| format!("{s:?}: port {port:?}: {e}"))?;
    let to = to
        .parse()
        .map_err(|e| format!("{s:?}: address {to:?}: {e}"))?;
    Ok((port, to))
}

impl Gateway {
    /// A gateway at `ip` forwarding UDP by destination port per `routes`.
    ///
    /// # Errors
    /// When no host UDP socket can be bound.
    pub fn new(
        ip: Ipv4Addr,
        routes: impl IntoIterator<Item = (u16, SocketAddr)>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            ip,
            routes: routes.into_iter().collect(),
            sock: UdpSocket::bind(("0.0.0.0", 0))?,
            stats: GatewayStats::default(),
        })
    }

    /// What it did so far.
    pub fn stats(&self) -> GatewayStats {
        self.stats
    }

    /// Handles one frame the device sent; returns the frame to send back, if any (an
    /// ARP reply).
    pub fn handle(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let Ok(eth) = EthernetFrame::new_checked(frame) else {
            self.stats.ignored += 1;
            return None;
        };
        match eth.ethertype() {
            EthernetProtocol::Arp => self.arp(&eth),
            EthernetProtocol::Ipv4 => {
                if eth.dst_addr() == EthernetAddress(GATEWAY_MAC) {
                    self.udp(eth.payload());
                } else {
                    self.stats.ignored += 1;
                }
                None
            }
            _ => {
                self.stats.ignored += 1;
                None
            }
        }
    }

    fn arp(&mut self, eth: &EthernetFrame<&[u8]>) -> Option<Vec<u8>> {
        let repr = ArpPacket::new_checked(eth.payload())
            .and_then(|p| ArpRepr::parse(&p))
            .ok();
        let Some(ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Request,
            source_hardware_addr,
            source_protocol_addr,
            target_protocol_addr,
            ..
        }) = repr
        else {
            self.stats.ignored += 1;
            return None;
        };
        if target_protocol_addr != self.ip {
            self.stats.ignored += 1;
            return None;
        }
        let reply = ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Reply,
            source_hardware_addr: EthernetAddress(GATEWAY_MAC),
            source_protocol_addr: self.ip,
            target_hardware_addr: source_hardware_addr,
            target_protocol_addr: source_protocol_addr,
        };
        let eth_repr = EthernetRepr {
            src_addr: EthernetAddress(GATEWAY_MAC),
            dst_addr: source_hardware_addr,
            ethertype: EthernetProtocol::Arp,
        };
        // 60 bytes: the Ethernet minimum, zero padding after the 28-byte ARP packet.
        let mut out = vec![0u8; 60];
        let mut f = EthernetFrame::new_unchecked(&mut out[..]);
        eth_repr.emit(&mut f);
        reply.emit(&mut ArpPacket::new_unchecked(f.payload_mut()));
        self.stats.arp_replies += 1;
        Some(out)
    }

    fn udp(&mut self, l3: &[u8]) {
        let Some(payload) = self.udp_payload(l3) else {
            self.stats.dropped += 1;
            return;
        };
        let (port, data) = payload;
        match self.routes.get(&port) {
            Some(to) if self.sock.send_to(data, to).is_ok() => self.stats.forwarded += 1,
            _ => self.stats.dropped += 1,
        }
    }

    /// The destination port and payload of a valid, unfragmented IPv4/UDP packet to
    /// the gateway.
    fn udp_payload<'a>(&self, l3: &'a [u8]) -> Option<(u16, &'a [u8])> {
        let ip = Ipv4Packet::new_checked(l3).ok()?;
        if ip.dst_addr() != self.ip
            || ip.next_header() != IpProtocol::Udp
            || !ip.verify_checksum()
            || ip.more_frags()
            || ip.frag_offset() != 0
        {
            return None;
        }
        let (src, dst) = (ip.src_addr(), ip.dst_addr());
        let header = usize::from(ip.header_len());
        let total = usize::from(ip.total_len());
        let udp = UdpPacket::new_checked(l3.get(header..total)?).ok()?;
        // A zero checksum means "none" in UDP over IPv4.
        if udp.checksum() != 0 && !udp.verify_checksum(&src.into(), &dst.into()) {
            return None;
        }
        let port = udp.dst_port();
        let len = usize::from(udp.len());
        Some((port, l3.get(header + 8..header + len)?))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{IpAddress, Ipv4Repr, UdpRepr};

    const DEVICE_MAC: [u8; 6] = [2, 0x4c, 0x4f, 0x58, 0x4f, 1];
    const DEVICE: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 15);
    const GW: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);

    fn arp_request(target: Ipv4Addr) -> Vec<u8> {
        let mut out = vec![0u8; 42];
        let mut f = EthernetFrame::new_unchecked(&mut out[..]);
        EthernetRepr {
            src_addr: EthernetAddress(DEVICE_MAC),
            dst_addr: EthernetAddress::BROADCAST,
            ethertype: EthernetProtocol::Arp,
        }
        .emit(&mut f);
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Request,
            source_hardware_addr: EthernetAddress(DEVICE_MAC),
            source_protocol_addr: DEVICE,
            target_hardware_addr: EthernetAddress([0; 6]),
            target_protocol_addr: target,
        }
        .emit(&mut ArpPacket::new_unchecked(f.payload_mut()));
        out
    }

    fn udp_frame(dst_port: u16, data: &[u8]) -> Vec<u8> {
        let udp = UdpRepr {
            src_port: 4739,
            dst_port,
        };
        let ip = Ipv4Repr {
            src_addr: DEVICE,
            dst_addr: GW,
            next_header: IpProtocol::Udp,
            payload_len: 8 + data.len(),
            hop_limit: 64,
        };
        let mut out = vec![0u8; 14 + 20 + 8 + data.len()];
        let mut f = EthernetFrame::new_unchecked(&mut out[..]);
        EthernetRepr {
            src_addr: EthernetAddress(DEVICE_MAC),
            dst_addr: EthernetAddress(GATEWAY_MAC),
            ethertype: EthernetProtocol::Ipv4,
        }
        .emit(&mut f);
        let caps = ChecksumCapabilities::default();
        let mut p = Ipv4Packet::new_unchecked(f.payload_mut());
        ip.emit(&mut p, &caps);
        udp.emit(
            &mut UdpPacket::new_unchecked(p.payload_mut()),
            &IpAddress::Ipv4(DEVICE),
            &IpAddress::Ipv4(GW),
            data.len(),
            |b| b.copy_from_slice(data),
            &caps,
        );
        out
    }

    #[test]
    fn answers_arp_for_its_address_only() {
        let mut g = Gateway::new(GW, []).unwrap();
        let reply = g.handle(&arp_request(GW)).unwrap();
        let f = EthernetFrame::new_checked(&reply[..]).unwrap();
        assert_eq!(f.dst_addr(), EthernetAddress(DEVICE_MAC));
        let r = ArpRepr::parse(&ArpPacket::new_checked(f.payload()).unwrap()).unwrap();
        assert_eq!(
            r,
            ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Reply,
                source_hardware_addr: EthernetAddress(GATEWAY_MAC),
                source_protocol_addr: GW,
                target_hardware_addr: EthernetAddress(DEVICE_MAC),
                target_protocol_addr: DEVICE,
            }
        );
        assert_eq!(g.handle(&arp_request(Ipv4Addr::new(10, 0, 2, 3))), None);
        assert_eq!(g.stats().arp_replies, 1);
    }

    #[test]
    fn forwards_udp_by_port_and_drops_the_rest() {
        let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
        sink.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut g = Gateway::new(GW, [(4739, sink.local_addr().unwrap())]).unwrap();
        assert_eq!(g.handle(&udp_frame(4739, b"ipfix message")), None);
        let mut buf = [0u8; 64];
        let n = sink.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ipfix message");
        // Another port, a corrupted UDP checksum, a corrupted IP checksum, cut short.
        g.handle(&udp_frame(9999, b"x"));
        let mut bad = udp_frame(4739, b"abc");
        *bad.last_mut().unwrap() ^= 1;
        g.handle(&bad);
        let mut bad = udp_frame(4739, b"abc");
        bad[14 + 8] ^= 1; // TTL: the header checksum no longer matches
        g.handle(&bad);
        let good = udp_frame(4739, b"abc");
        g.handle(&good[..good.len() - 1]);
        assert_eq!(
            g.stats(),
            GatewayStats {
                arp_replies: 0,
                forwarded: 1,
                dropped: 4,
                ignored: 0
            }
        );
        assert_eq!(parse_forward("4739=127.0.0.1:2055").unwrap().0, 4739);
        assert!(parse_forward("4739").is_err());
        assert!(parse_forward("x=127.0.0.1:1").is_err());
    }
}
