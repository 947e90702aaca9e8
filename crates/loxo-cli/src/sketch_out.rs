//! Sketch datagrams to `loxo collect` from a host probe: each epoch's distinct-flow
//! HLL and top-k candidates, encoded as loxo wire frames and cut into
//! `loxo_control::datagram` chunks — what the firmware sends (`loxo probe --collect`).

use std::net::{ToSocketAddrs, UdpSocket};

use anyhow::Context;
use loxo_control::datagram::{SketchDatagram, Stream, DATAGRAM_MAX};
use loxo_flow::FlowMonitor;

/// A sender of one device's sketch datagrams.
#[derive(Debug)]
pub(crate) struct SketchSender {
    socket: UdpSocket,
    device: u32,
    flows: Vec<u8>,
    topk: Vec<u8>,
    buf: Vec<u8>,
    /// Datagrams sent so far.
    pub(crate) datagrams: u64,
}

impl SketchSender {
    /// A sender to `target` (HOST:PORT) as device `device`.
    pub(crate) fn open(target: &str, device: u32) -> anyhow::Result<Self> {
        let addr = target
            .to_socket_addrs()
            .with_context(|| format!("--collect {target}: not HOST:PORT"))?
            .next()
            .with_context(|| format!("--collect {target}: no address"))?;
        let local = if addr.is_ipv6() {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        let socket = UdpSocket::bind(local).context("cannot open a UDP socket")?;
        socket
            .connect(addr)
            .with_context(|| format!("--collect {addr}"))?;
        Ok(Self {
            socket,
            device,
            flows: Vec::new(),
            topk: Vec::new(),
            buf: vec![0; DATAGRAM_MAX],
            datagrams: 0,
        })
    }

    /// Encodes the monitor's sketches of the running epoch (call before
    /// `end_epoch`, which resets them).
    pub(crate) fn encode<const N: usize>(
        &mut self,
        m: &FlowMonitor<N>,
        seed: &loxo_core::Seed,
    ) -> anyhow::Result<()> {
        let flows = m.flows();
        self.flows.resize(flows.encoded_len(), 0);
        let n = flows
            .encode_into(&mut self.flows)
            .map_err(|e| anyhow::anyhow!("flows sketch: {e}"))?;
        self.flows.truncate(n);
        let top = m.top();
        self.topk.resize(top.encoded_len::<38>(), 0);
        let n = top
            .encode_into::<38>(seed, &mut self.topk)
            .map_err(|e| anyhow::anyhow!("top-k sketch: {e}"))?;
        self.topk.truncate(n);
        Ok(())
    }

    /// Sends the encoded sketches as epoch `epoch`'s.
    pub(crate) fn send(&mut self, epoch: u32) -> anyhow::Result<()> {
        for (stream, frame) in [(Stream::Flows, &self.flows), (Stream::TopK, &self.topk)] {
            for d in SketchDatagram::chunks(stream, self.device, epoch, frame) {
                let n = d
                    .emit(&mut self.buf)
                    .map_err(|e| anyhow::anyhow!("sketch datagram: {e}"))?;
                self.socket
                    .send(self.buf.get(..n).unwrap_or(&[]))
                    .context("--collect: cannot send")?;
                self.datagrams += 1;
            }
        }
        Ok(())
    }
}
