//! The device on an IP network: smoltcp over the LAN9118, a static IPv4 address set
//! at build time, ARP, and one UDP socket that carries each epoch's export — IPFIX
//! messages (RFC 7011) to the collector's port 4739 and the epoch's sketches as
//! `loxo_control::datagram` chunks to `loxo collect`'s port.
//!
//! The NIC stays promiscuous and the main loop keeps receiving: the monitor sees
//! every frame, and a frame addressed to the device (its MAC or broadcast, ARP or
//! IPv4) is then also handed to smoltcp ([`Net::ingest`]). Nothing here runs inside the
//! monitor's measured per-frame cost; exports are queued at epoch end and drained by
//! [`Net::pump`] between frames, a datagram at a time, so the UDP socket needs only a
//! few KiB of buffer however large the sketches are.
//!
//! Each sketch datagram carries a sequence number and a SipHash-2-4 MAC under the
//! device's export key (`LOXO_EXPORT_KEY`, provisioned at build time like the control
//! key). The numbers are `boot << 32 | n`: `n` counts this boot's datagrams from 0,
//! `boot` is the boot counter the control nonce uses (`nonce.rs`: a flash page on a
//! product, a semihosting file under QEMU), so they grow across every reboot, two
//! within one second included. Without a counter the boot's time in seconds stands
//! in (boots at least a second apart; a repeat is refused by the collector as a
//! replay and counted, never merged).

use loxo_control::datagram::{SketchDatagram, Stream, DATAGRAM_CHUNK, DATAGRAM_MAX};
use loxo_lan9118::{Lan9118, Mmio, FRAME_BUF_LEN};
use smoltcp::iface::{Config as IfaceConfig, Interface, SocketHandle, SocketSet, SocketStorage};
use smoltcp::phy::{self, DeviceCapabilities, Medium};
use smoltcp::socket::udp;
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, IpEndpoint, Ipv4Address};

use crate::board::Ticks;
use crate::provisioning::{COLLECTOR_IP, DEVICE_IP, DEVICE_PREFIX, EXPORT_KEY, GATEWAY_IP};

/// IPFIX's registered port (RFC 7011 §10.3.4).
pub(crate) const IPFIX_PORT: u16 = 4739;
/// `loxo collect`'s port for sketch datagrams.
pub(crate) const SKETCH_PORT: u16 = 4740;
/// The device's UDP source port.
const LOCAL_PORT: u16 = 4739;
/// UDP transmit buffer: a few datagrams in flight (the pump refills it).
const TX_PAYLOAD: usize = 6 * 1024;
const TX_PACKETS: usize = 8;

/// The largest encoding of the distinct-flow `Hll<14>`: dense, 6-bit registers, room
/// for the martingale's 8 bytes (12 336 B).
const FLOWS_SKETCH_MAX: usize = loxo_core::wire::frame_len(8 + 3 * (1 << loxo_flow::FLOWS_P) / 4);
/// The largest encoding of the top-k candidates, `SpaceSaving<FlowKey, CANDIDATES>`:
/// the stream total, a count, then per candidate its 38-byte key, count, error and
/// hash tag (7 476 B for 128 candidates).
const TOPK_SKETCH_MAX: usize =
    loxo_core::wire::frame_len(8 + 4 + crate::CANDIDATES * (38 + 8 + 8 + 4));
/// The bytes an epoch exports as sketches: its distinct-flow sketch and its top-k
/// candidates, back to back (19 812 B for 128 candidates).
pub(crate) const SKETCHES_LEN: usize = FLOWS_SKETCH_MAX + TOPK_SKETCH_MAX;

/// The LAN9118 as smoltcp's `phy::Device`: at most one received frame (the one the
/// main loop just read) and transmission straight into the NIC's TX FIFO.
struct Phy<'a> {
    nic: &'a mut Lan9118<Mmio>,
    rx: Option<&'a [u8]>,
}

struct Rx<'a>(&'a [u8]);
struct Tx<'a>(&'a mut Lan9118<Mmio>);

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(self.0)
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = [0u8; FRAME_BUF_LEN];
        let n = len.min(FRAME_BUF_LEN);
        let r = f(&mut buf[..n]);
        crate::transmit(self.0, &buf[..n]);
        r
    }
}

impl phy::Device for Phy<'_> {
    type RxToken<'b>
        = Rx<'b>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'b>
    where
        Self: 'b;

    fn receive(&mut self, _: Instant) -> Option<(Rx<'_>, Tx<'_>)> {
        let frame = self.rx.take()?;
        Some((Rx(frame), Tx(self.nic)))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
        Some(Tx(self.nic))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut c = DeviceCapabilities::default();
        c.medium = Medium::Ethernet;
        // Ethernet payload 1 500 + 14-byte header; the LAN9118 adds the FCS.
        c.max_transmission_unit = 1514;
        c.max_burst_size = Some(1);
        c
    }
}

/// Milliseconds since boot from SysTick (24 bits at 25 MHz: wraps every 0.67 s, so
/// it is read at least that often — every loop iteration reads it).
struct Clock {
    last: u32,
    ticks: u64,
}

impl Clock {
    fn now(&mut self, t: &Ticks) -> Instant {
        let now = t.now();
        self.ticks += u64::from(Ticks::elapsed(self.last, now));
        self.last = now;
        Instant::from_millis((self.ticks / 25_000).cast_signed())
    }
}

/// What an epoch queued for export and how far the pump got.
#[derive(Default)]
struct Queue {
    epoch: u32,
    /// Lengths of the two sketch frames in the sketch buffer.
    flows: usize,
    topk: usize,
    /// Datagrams of the two streams sent so far.
    sent: usize,
    /// Messages and datagrams handed to the socket (totals, for the final log).
    messages: u32,
    datagrams: u32,
    /// Datagrams dropped because the socket refused them (not expected).
    dropped: u32,
}

impl Queue {
    fn datagrams_of(len: usize) -> usize {
        len.div_ceil(DATAGRAM_CHUNK).max(1)
    }

    fn total(&self) -> usize {
        if self.flows == 0 && self.topk == 0 {
            0
        } else {
            Self::datagrams_of(self.flows) + Self::datagrams_of(self.topk)
        }
    }

    fn pending(&self) -> bool {
        self.sent < self.total()
    }
}

/// The IP side of the device.
pub(crate) struct Net {
    iface: Interface,
    sockets: SocketSet<'static>,
    udp: SocketHandle,
    clock: Clock,
    queue: Queue,
    domain: u32,
    /// The next sketch datagram's sequence number (`boot << 32 | n`).
    seq: u64,
    sketches: &'static mut [u8; SKETCHES_LEN],
}

/// Whether `frame` is for the device's IP stack: ARP or IPv4 unicast to its MAC, or
/// a broadcast ARP request for its address. Everything else — broadcast ARP for
/// other hosts, other EtherTypes, other stations' frames — is traffic to monitor.
pub(crate) fn for_us(frame: &[u8], mac: &[u8; 6]) -> bool {
    let (Some(dst), Some(ty)) = (frame.get(..6), frame.get(12..14)) else {
        return false;
    };
    let arp = ty == [0x08, 0x06];
    if dst == mac {
        return arp || ty == [0x08, 0x00];
    }
    // ARP target protocol address: bytes 24..28 of the ARP packet.
    arp && dst == [0xff; 6] && frame.get(38..42) == Some(&DEVICE_IP[..])
}

impl Net {
    /// Brings the interface up on `nic` with the provisioned address.
    pub(crate) fn new(
        nic: &mut Lan9118<Mmio>,
        mac: [u8; 6],
        ticks: &Ticks,
        random: u64,
        domain: u32,
        boot: u32,
        storage: &'static mut NetStorage,
    ) -> Self {
        let mut clock = Clock {
            last: ticks.now(),
            ticks: 0,
        };
        let mut config = IfaceConfig::new(HardwareAddress::Ethernet(EthernetAddress(mac)));
        config.random_seed = random;
        let mut phy = Phy { nic, rx: None };
        let now = clock.now(ticks);
        let mut iface = Interface::new(config, &mut phy, now);
        let [a, b, c, d] = DEVICE_IP;
        iface.update_ip_addrs(|addrs| {
            let _ = addrs.push(IpCidr::new(IpAddress::v4(a, b, c, d), DEVICE_PREFIX));
        });
        let [a, b, c, d] = GATEWAY_IP;
        let _ = iface
            .routes_mut()
            .add_default_ipv4_route(Ipv4Address::new(a, b, c, d));
        let NetStorage {
            sockets,
            rx_meta,
            rx_payload,
            tx_meta,
            buffers:
                NetBuffers {
                    tx_payload,
                    sketches,
                },
        } = storage;
        let socket = udp::Socket::new(
            udp::PacketBuffer::new(&mut rx_meta[..], &mut rx_payload[..]),
            udp::PacketBuffer::new(&mut tx_meta[..], &mut tx_payload[..]),
        );
        let mut set = SocketSet::new(&mut sockets[..]);
        let udp = set.add(socket);
        let _ = set.get_mut::<udp::Socket>(udp).bind(LOCAL_PORT);
        Self {
            iface,
            sockets: set,
            udp,
            clock,
            queue: Queue::default(),
            domain,
            seq: u64::from(boot) << 32,
            sketches,
        }
    }

    fn collector(port: u16) -> IpEndpoint {
        let [a, b, c, d] = COLLECTOR_IP;
        IpEndpoint::new(IpAddress::Ipv4(Ipv4Address::new(a, b, c, d)), port)
    }

    /// Milliseconds since boot.
    pub(crate) fn now_ms(&mut self, ticks: &Ticks) -> u64 {
        self.clock.now(ticks).total_millis() as u64
    }

    /// Hands a received frame addressed to the device to smoltcp (ARP replies,
    /// answers to the device's address), then sends what is due.
    pub(crate) fn ingest(&mut self, nic: &mut Lan9118<Mmio>, ticks: &Ticks, frame: &[u8]) {
        let now = self.clock.now(ticks);
        let mut phy = Phy {
            nic,
            rx: Some(frame),
        };
        self.iface.poll(now, &mut phy, &mut self.sockets);
        // The socket is send-only: drop anything sent to it.
        let s = self.sockets.get_mut::<udp::Socket>(self.udp);
        while s.recv().is_ok() {}
        // Datagrams already in the socket went out with the poll above (an ARP reply
        // releases them); new ones are started by the export's slices (`pump_one`).
    }

    /// Whether an export is still being sent (queued datagrams, or bytes in the socket).
    pub(crate) fn busy(&self) -> bool {
        self.queue.pending() || self.sockets.get::<udp::Socket>(self.udp).send_queue() > 0
    }

    /// Queues one UDP datagram of an epoch's IPFIX export (the caller encodes the
    /// messages at epoch end, each into `msg`).
    pub(crate) fn send_ipfix(
        &mut self,
        nic: &mut Lan9118<Mmio>,
        ticks: &Ticks,
        msg: &[u8],
    ) -> bool {
        let to = Self::collector(IPFIX_PORT);
        for _ in 0..64 {
            let s = self.sockets.get_mut::<udp::Socket>(self.udp);
            if s.send_slice(msg, to).is_ok() {
                self.queue.messages += 1;
                self.poll(nic, ticks);
                return true;
            }
            // Full: let the interface drain it (or resolve the collector's MAC).
            self.poll(nic, ticks);
        }
        self.queue.dropped += 1;
        false
    }

    /// The sketch buffer, to encode an epoch's sketches into before
    /// [`queue_sketches`](Self::queue_sketches).
    pub(crate) fn sketches_mut(&mut self) -> &mut [u8; SKETCHES_LEN] {
        self.sketches
    }

    /// Starts sending an epoch's two sketch frames, `flows` and `topk` bytes long at
    /// the start of the sketch buffer. An export still in progress is abandoned.
    pub(crate) fn queue_sketches(&mut self, epoch: u32, flows: usize, topk: usize) {
        if self.queue.pending() {
            defmt::warn!(
                "export of epoch {=u32} not finished when epoch {=u32} closed",
                self.queue.epoch,
                epoch
            );
        }
        self.queue.epoch = epoch;
        self.queue.flows = flows;
        self.queue.topk = topk;
        self.queue.sent = 0;
    }

    /// Sends the next sketch datagrams while the socket has room; polls the interface.
    pub(crate) fn pump(&mut self, nic: &mut Lan9118<Mmio>, ticks: &Ticks) {
        self.pump_at_most(nic, ticks, usize::MAX);
    }

    /// Sends the next sketch datagram if the socket has room; polls the interface: a
    /// bounded slice of the epoch-end export (`epoch_end`).
    pub(crate) fn pump_one(&mut self, nic: &mut Lan9118<Mmio>, ticks: &Ticks) {
        self.pump_at_most(nic, ticks, 1);
    }

    fn pump_at_most(&mut self, nic: &mut Lan9118<Mmio>, ticks: &Ticks, most: usize) {
        let mut buf = [0u8; DATAGRAM_MAX];
        let mut sent = 0;
        while self.queue.pending() && sent < most {
            let queue = &self.queue;
            let flows_n = Queue::datagrams_of(queue.flows);
            let (stream, frame, index) = if queue.sent < flows_n {
                (Stream::Flows, self.sketches.get(..queue.flows), queue.sent)
            } else {
                (
                    Stream::TopK,
                    self.sketches.get(queue.flows..queue.flows + queue.topk),
                    queue.sent - flows_n,
                )
            };
            let Some(d) = frame.and_then(|f| {
                SketchDatagram::chunks(stream, self.domain, queue.epoch, f).nth(index)
            }) else {
                self.queue.sent = usize::MAX >> 1;
                break;
            };
            let d = SketchDatagram { seq: self.seq, ..d };
            let Ok(n) = d.emit(&EXPORT_KEY, &mut buf) else {
                break;
            };
            let socket = self.sockets.get_mut::<udp::Socket>(self.udp);
            if socket.payload_send_capacity() - socket.send_queue() < n || !socket.can_send() {
                break;
            }
            if socket
                .send_slice(&buf[..n], Self::collector(SKETCH_PORT))
                .is_err()
            {
                break;
            }
            self.seq += 1;
            self.queue.sent += 1;
            self.queue.datagrams += 1;
            sent += 1;
        }
        self.poll(nic, ticks);
    }

    /// Runs the interface: timers, ARP, queued datagrams.
    pub(crate) fn poll(&mut self, nic: &mut Lan9118<Mmio>, ticks: &Ticks) {
        let now = self.clock.now(ticks);
        let mut phy = Phy { nic, rx: None };
        self.iface.poll(now, &mut phy, &mut self.sockets);
    }

    /// IPFIX messages, sketch datagrams, and datagrams dropped.
    pub(crate) fn counts(&self) -> (u32, u32, u32) {
        (
            self.queue.messages,
            self.queue.datagrams,
            self.queue.dropped,
        )
    }
}

/// The statics smoltcp's socket and the export live in. The large buffers are all
/// zeros, so they sit in `.bss` (no flash image); the socket slots are not.
pub(crate) struct NetStorage {
    sockets: [SocketStorage<'static>; 1],
    rx_meta: [udp::PacketMetadata; 1],
    rx_payload: [u8; 64],
    tx_meta: [udp::PacketMetadata; TX_PACKETS],
    buffers: &'static mut NetBuffers,
}

/// The zero-initialised buffers of [`NetStorage`].
pub(crate) struct NetBuffers {
    tx_payload: [u8; TX_PAYLOAD],
    sketches: [u8; SKETCHES_LEN],
}

impl NetBuffers {
    /// Zeroed buffers (`const`, for the `static` they live in: never on the stack).
    #[allow(clippy::large_stack_arrays)]
    pub(crate) const fn new() -> Self {
        Self {
            tx_payload: [0; TX_PAYLOAD],
            sketches: [0; SKETCHES_LEN],
        }
    }
}

impl NetStorage {
    /// Empty socket slots over `buffers`.
    pub(crate) const fn new(buffers: &'static mut NetBuffers) -> Self {
        Self {
            sockets: [SocketStorage::EMPTY; 1],
            rx_meta: [udp::PacketMetadata::EMPTY; 1],
            rx_payload: [0; 64],
            tx_meta: [udp::PacketMetadata::EMPTY; TX_PACKETS],
            buffers,
        }
    }
}
