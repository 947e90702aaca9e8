//! Sketch datagrams to `loxo collect` from a host probe: each epoch's distinct-flow
//! HLL and top-k candidates, encoded as loxo wire frames and cut into
//! `loxo_control::datagram` chunks, numbered and signed under the device's export
//! key — what the firmware sends (`loxo probe --collect --export-key`).

use std::net::{ToSocketAddrs, UdpSocket};

use anyhow::Context;
use loxo_cli::collect::Sender;
use loxo_control::datagram::{ExportKey, SketchDatagram, Stream};
use loxo_flow::FlowMonitor;

/// An export key: 32 hex digits, or a file holding them.
pub(crate) fn read_export_key(arg: &str) -> anyhow::Result<ExportKey> {
    let text = match std::fs::read_to_string(arg) {
        Ok(t) => t,
        Err(_) => arg.to_owned(),
    };
    ExportKey::from_hex(text.trim())
        .context("--export-key: not 32 hex digits, nor a file holding them")
}

/// A sender of one device's sketch datagrams.
#[derive(Debug)]
pub(crate) struct SketchSender {
    socket: UdpSocket,
    device: u32,
    /// Numbers and signs the datagrams (`boot << 32 | n`, the boot being this
    /// run's start in Unix seconds, as the firmware numbers its own).
    sender: Sender,
    flows: Vec<u8>,
    topk: Vec<u8>,
    /// Datagrams sent so far.
    pub(crate) datagrams: u64,
}

impl SketchSender {
    /// A sender to `target` (HOST:PORT) as device `device`, signing with `key`.
    pub(crate) fn open(target: &str, device: u32, key: ExportKey) -> anyhow::Result<Self> {
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
        let boot = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as u32);
        Ok(Self {
            socket,
            device,
            sender: Sender::new(device, key, boot),
            flows: Vec::new(),
            topk: Vec::new(),
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
                let bytes = self
                    .sender
                    .sign(&d)
                    .context("sketch datagram: cannot be emitted")?;
                self.socket.send(&bytes).context("--collect: cannot send")?;
                self.datagrams += 1;
            }
        }
        Ok(())
    }
}
