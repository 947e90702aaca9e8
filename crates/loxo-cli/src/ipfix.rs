//! `loxo top --ipfix HOST:PORT`: each epoch's elephants as IPFIX over UDP, through
//! `loxo_ipfix::Exporter` — the encoder the firmware runs, so host and device feed a
//! collector the same records — and, with `--ipfix-participants`, its scanners and
//! victims in the participant templates (`loxo_ipfix::ie::PARTICIPANTS`), after the
//! epoch's flow messages.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use loxo_cli::eval::EpochResult;
use loxo_ipfix::{Config, Exporter, Times};

/// Largest message `loxo top` sends: the UDP payload of a 1500-byte Ethernet MTU over
/// IPv4 (1500 − 20 − 8); over IPv6, 1452 (1500 − 40 − 8).
fn max_message_len(target: &SocketAddr) -> u16 {
    if target.is_ipv6() {
        1452
    } else {
        1472
    }
}

/// What an export sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    /// Where to.
    pub(crate) target: SocketAddr,
    /// The observation domain.
    pub(crate) domain: u32,
    /// UDP datagrams (IPFIX messages).
    pub(crate) messages: u64,
    /// Flow records (elephants).
    pub(crate) flows: u64,
    /// Epoch options records.
    pub(crate) epochs: u64,
    /// Participant records (scanners and victims).
    pub(crate) participants: u64,
    /// Loss records (`loxo probe`).
    pub(crate) losses: u64,
    /// Bytes of the messages.
    pub(crate) bytes: u64,
}

impl std::fmt::Display for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "IPFIX to {} (observation domain {}): {} messages, {} bytes, {} flow records, {} epoch records, {} participant records",
            self.target, self.domain, self.messages, self.bytes, self.flows, self.epochs, self.participants
        )?;
        if self.losses > 0 {
            write!(f, ", {} loss records", self.losses)?;
        }
        Ok(())
    }
}

/// Each epoch's observation interval: the wall-clock time `loxo top` spent reading it
/// (ms since 1970).
#[derive(Debug)]
pub(crate) struct Spans {
    closed: Vec<(u64, u64)>,
    start: u64,
}

impl Spans {
    /// The first epoch starts now.
    pub(crate) fn new() -> Self {
        Self {
            closed: Vec::new(),
            start: now_ms(),
        }
    }

    /// `epochs` epochs are closed: a newly closed one ends now, the next starts now.
    pub(crate) fn note(&mut self, epochs: usize) {
        if epochs > self.closed.len() {
            let now = now_ms();
            self.closed.push((self.start, now));
            self.start = now;
        }
    }

    /// The intervals, the running epoch's ending now.
    pub(crate) fn finish(mut self) -> Vec<(u64, u64)> {
        self.closed.push((self.start, now_ms()));
        self.closed
    }
}

/// Milliseconds since 1970-01-01 UTC, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An IPFIX exporting process over UDP: one socket, one [`Exporter`] (its sequence
/// numbers and template refresh run across epochs), what it sent so far. `loxo top`
/// sends a whole capture's epochs through one, `loxo probe` each epoch as it closes.
#[derive(Debug)]
pub(crate) struct Sender {
    socket: UdpSocket,
    config: Config,
    exporter: Exporter,
    buf: Vec<u8>,
    /// What was sent so far.
    pub(crate) sent: Sent,
}

impl Sender {
    /// A sender to `target` (HOST:PORT) for observation domain `domain`; with
    /// `participants`, the participant templates are announced, with `loss` the loss
    /// template (`loxo probe`: the kernel's drops).
    pub(crate) fn open(
        target: &str,
        domain: u32,
        participants: bool,
        loss: bool,
    ) -> anyhow::Result<Self> {
        let addr = target
            .to_socket_addrs()
            .with_context(|| format!("--ipfix {target}: not HOST:PORT"))?
            .next()
            .with_context(|| format!("--ipfix {target}: no address"))?;
        let local: SocketAddr = if addr.is_ipv6() {
            "[::]:0".parse()?
        } else {
            "0.0.0.0:0".parse()?
        };
        let socket = UdpSocket::bind(local).context("cannot open a UDP socket")?;
        socket
            .connect(addr)
            .with_context(|| format!("--ipfix {addr}"))?;
        let config = Config {
            observation_domain_id: domain,
            max_message_len: max_message_len(&addr),
            participant_records: participants,
            loss_records: loss,
            ..Config::DEFAULT
        };
        let exporter = Exporter::new(config).map_err(|e| anyhow::anyhow!("ipfix: {e}"))?;
        Ok(Self {
            socket,
            config,
            exporter,
            buf: vec![0u8; usize::from(config.max_message_len)],
            sent: Sent {
                target: addr,
                domain,
                messages: 0,
                flows: 0,
                epochs: 0,
                participants: 0,
                losses: 0,
                bytes: 0,
            },
        })
    }

    /// Sends one epoch: its report, then (with participant records on and `p` given)
    /// its participants.
    pub(crate) fn send_epoch(
        &mut self,
        report: &loxo_flow::Report,
        p: Option<&loxo_flow::ParticipantsReport>,
        times: Times,
    ) -> anyhow::Result<()> {
        let addr = self.sent.target;
        let mut msgs = self
            .exporter
            .messages(report, times)
            .map_err(|e| anyhow::anyhow!("ipfix: epoch {}: {e}", report.epoch))?;
        while let Some(len) = msgs
            .next_into(&mut self.buf)
            .map_err(|e| anyhow::anyhow!("ipfix: {e}"))?
        {
            send(&self.socket, &addr, &self.buf, len, &mut self.sent)?;
        }
        self.sent.flows += report.elephants.len() as u64;
        self.sent.epochs += u64::from(self.config.epoch_records);
        if let (true, Some(p)) = (self.config.participant_records, p) {
            let mut msgs = self
                .exporter
                .participant_messages(p, times)
                .map_err(|e| anyhow::anyhow!("ipfix: epoch {}: {e}", report.epoch))?;
            while let Some(len) = msgs
                .next_into(&mut self.buf)
                .map_err(|e| anyhow::anyhow!("ipfix: {e}"))?
            {
                send(&self.socket, &addr, &self.buf, len, &mut self.sent)?;
            }
            self.sent.participants += (p.scanners.len() + p.victims.len()) as u64;
        }
        Ok(())
    }
}

impl Sender {
    /// Sends an epoch's loss record (after its [`send_epoch`](Self::send_epoch)).
    pub(crate) fn send_loss(
        &mut self,
        record: &loxo_ipfix::LossRecord,
        export_time: u32,
    ) -> anyhow::Result<()> {
        let addr = self.sent.target;
        let len = self
            .exporter
            .loss_message(record, export_time, &mut self.buf)
            .map_err(|e| anyhow::anyhow!("ipfix: {e}"))?;
        send(&self.socket, &addr, &self.buf, len, &mut self.sent)?;
        self.sent.losses += 1;
        Ok(())
    }
}

/// Export time of a message sent now: seconds since 1970.
pub(crate) fn export_time_now() -> u32 {
    (now_ms() / 1000) as u32
}

/// Sends every epoch of `results` to `target`, epoch `i` observed over `spans[i]`
/// (ms since 1970; epochs past the end of `spans` get the last span); with
/// `participants`, each epoch's participants after its flows.
pub(crate) fn export(
    target: &str,
    domain: u32,
    results: &[EpochResult],
    spans: &[(u64, u64)],
    participants: bool,
) -> anyhow::Result<Sent> {
    let mut sender = Sender::open(target, domain, participants, false)?;
    let export_time = export_time_now();
    let last = spans.last().copied().unwrap_or((0, 0));
    for (i, r) in results.iter().enumerate() {
        let (start_ms, end_ms) = spans.get(i).copied().unwrap_or(last);
        let times = Times {
            export_time,
            start_ms,
            end_ms,
        };
        sender.send_epoch(&r.report, r.participants.as_ref().map(|p| &p.report), times)?;
    }
    Ok(sender.sent)
}

/// Sends the message of `len` bytes at the start of `buf`.
fn send(
    socket: &UdpSocket,
    addr: &SocketAddr,
    buf: &[u8],
    len: usize,
    sent: &mut Sent,
) -> anyhow::Result<()> {
    let msg = buf.get(..len).unwrap_or(&[]);
    socket
        .send(msg)
        .with_context(|| format!("--ipfix {addr}: cannot send"))?;
    sent.messages += 1;
    sent.bytes += len as u64;
    Ok(())
}
