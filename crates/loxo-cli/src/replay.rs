//! `loxo replay`: send a capture's frames to the firmware's NIC through
//! QEMU's UDP-socket netdev (one datagram = one frame), paced by the
//! firmware's acknowledgements so its RX FIFO never overflows.
//!
//! The capture is read like `loxo top` reads it (`loxo_cli::capture`): pcap or pcapng,
//! any snap length, every link type it reads turned into Ethernet II. A frame the snap
//! length cut is sent at its wire length, zeros past the captured bytes, so the
//! firmware weighs it and checks its IP lengths as `loxo top` does (the crate's
//! snap-length rule) — unless its headers were cut: it is not sent, and counted. A bad
//! or truncated record ends the replay there: the frames before it are sent and closed
//! with END as usual, then a warning and a non-zero exit.
//!
//! Protocol (control frames of EtherType 0x88B5, crate `loxo-control`, version 2):
//! draw a random host nonce; wait for READY (which announces the firmware's device
//! nonce) and answer HELLO(host nonce); wait for WELCOME; then send a batch,
//! SYNC(seq), wait ACK(seq); at the end send END(frames sent) and wait for DONE, whose
//! verdict becomes the exit code. Every control frame, both ways, carries a SipHash
//! tag under the key given with `--control-key` and both nonces: a WELCOME, ACK or
//! DONE recorded in an earlier session or boot does not verify under this run's host
//! nonce, so nobody but the firmware of this boot can make `loxo replay` report "ok".
//! Frames with a bad tag are counted apart and ignored. A capture's own frames of the
//! control EtherType (recorded control traffic, spoofs) are sent like the others but
//! counted apart from the data frames (the firmware refuses them and does not count
//! them as traffic either). Every wait has a timeout: the command never hangs.
//!
//! The device's own IP traffic (ARP, IPFIX, sketch datagrams) meets
//! `loxo_cli::gateway`: replay is its gateway on the demo link, answering ARP and
//! forwarding UDP per `--forward` to host sockets (nfcapd, `loxo collect`).
//!
//! With `--sketch-dir DIR`, the SKETCH frames the firmware sends at each epoch end
//! (its distinct-flow `Hll<14>` in the loxo wire format, in ordered chunks: `seq` =
//! epoch, `value` = offset, `extra` = total length, `u16` chunk length at byte 30,
//! data from byte 32) are reassembled into `DIR/epoch-<n>.loxo`, ready for
//! `loxo inspect`, `loxo merge` and `loxo export`.

use std::cell::RefCell;
use std::io::BufReader;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use loxo_cli::capture::{self, CaptureReader};
use loxo_cli::gateway::Gateway;
use loxo_flow::CapturedError;

use loxo_control::host::{HostEvent, HostSession};
use loxo_control::{Control, ControlError, OP_ACK, OP_DONE, OP_END, OP_SKETCH, OP_SYNC};

/// Source address of the host's control frames (locally administered).
const HOST_MAC: [u8; 6] = [0x02, 0x4C, 0x4F, 0x58, 0x4F, 0x02];
/// The LAN9118 model takes frames of 14..2048 bytes and drops others silently.
const NIC_MIN: usize = 14;
const NIC_MAX: usize = 2047;
/// Bytes a frame occupies in the RX data FIFO beyond its length: up to 3 of
/// word padding and the 4-byte FCS word.
const FIFO_OVERHEAD: usize = 8;

/// Options of `loxo replay`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples (the firmware in QEMU, its NIC a UDP socket netdev; `cargo xtask demo` runs all this):
  loxo replay trace.pcap --control-key control.key --to 127.0.0.1:7001 --from 127.0.0.1:7002
  loxo replay trace.pcap --control-key control.key --to 127.0.0.1:7001 --from 127.0.0.1:7002 \\
      --sketch-dir sketches --forward 4740=127.0.0.1:4740"
)]
pub(crate) struct Args {
    /// The capture to replay (pcap or pcapng, any snap length; Ethernet, raw IP,
    /// Linux cooked or BSD loopback link types, sent as Ethernet frames).
    pub file: PathBuf,
    /// The UDP address QEMU's NIC listens on (its netdev's local address).
    #[arg(long)]
    pub to: SocketAddr,
    /// The UDP address to listen on for the firmware's frames (the netdev's remote address).
    #[arg(long)]
    pub from: SocketAddr,
    /// Largest batch in RX-FIFO bytes between two acknowledgements (the
    /// LAN9118 RX data FIFO holds 10 560 bytes).
    #[arg(long, default_value_t = 8192)]
    pub batch_bytes: usize,
    /// Largest batch in frames (the RX status FIFO holds 176 entries).
    #[arg(long, default_value_t = 128)]
    pub batch_frames: usize,
    /// Seconds to wait for READY.
    #[arg(long, default_value_t = 60)]
    pub ready_timeout: u64,
    /// Seconds to wait for each ACK or for DONE.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
    /// Write the firmware's per-epoch distinct-flow sketches here
    /// (`epoch-<n>.loxo`, loxo wire format).
    #[arg(long, value_name = "DIR")]
    pub sketch_dir: Option<PathBuf>,
    /// The control channel's key: 32 hex digits, or a file holding them (the
    /// firmware's build-time `LOXO_CONTROL_KEY`; `cargo xtask demo` keeps it in
    /// `out/control.key`).
    #[arg(long, value_name = "HEX|FILE")]
    pub control_key: String,
    /// The address replay answers ARP for as the device's gateway (the firmware's
    /// build-time `LOXO_COLLECTOR_IP` / `LOXO_GATEWAY_IP`).
    #[arg(long, default_value = "10.0.2.2", value_name = "IPV4")]
    pub gateway: std::net::Ipv4Addr,
    /// Forward the device's UDP datagrams to the gateway's PORT to a host socket
    /// (repeatable): `4739=127.0.0.1:2055` sends its IPFIX to an nfcapd,
    /// `4740=127.0.0.1:4740` its sketch datagrams to `loxo collect`.
    #[arg(long, value_name = "PORT=HOST:PORT", value_parser = loxo_cli::gateway::parse_forward)]
    pub forward: Vec<(u16, SocketAddr)>,
}

/// Reassembles SKETCH frames into files (`loxo_cli::chunks` does the bookkeeping).
#[derive(Debug, Default)]
struct Sketches {
    dir: Option<PathBuf>,
    chunks: loxo_cli::chunks::SketchChunks,
    written: u32,
}

impl Sketches {
    fn chunk(&mut self, frame: &[u8], c: &Control) {
        let Some(dir) = self.dir.clone() else { return };
        let Some(data) = loxo_control::sketch_chunk(frame) else {
            self.chunks
                .fail(format!("SKETCH frame of epoch {} cut short", c.seq));
            return;
        };
        if let Some(bytes) = self.chunks.push(c.seq, c.value, c.extra, data) {
            let path = dir.join(format!("epoch-{}.loxo", c.seq));
            match std::fs::write(&path, &bytes) {
                Ok(()) => self.written += 1,
                Err(e) => self.chunks.fail(format!("{}: {e}", path.display())),
            }
        }
    }
}

/// The wire: one UDP socket talking to one QEMU NIC.
struct Link {
    sock: UdpSocket,
    to: SocketAddr,
    sketches: RefCell<Sketches>,
    /// The session: the host nonce drawn at start, the device nonces answered, and
    /// once a WELCOME verified under both, which frames are the firmware's.
    session: RefCell<HostSession>,
    /// The version of the last refused control frame of another protocol version.
    other_version: std::cell::Cell<Option<u8>>,
    /// The device's gateway (ARP, UDP forwarding).
    gateway: RefCell<Gateway>,
}

impl Link {
    fn send(&self, frame: &[u8]) -> anyhow::Result<()> {
        self.sock
            .send_to(frame, self.to)
            .with_context(|| format!("sending a frame to {}", self.to))?;
        Ok(())
    }

    fn control(&self, op: u8, seq: u32, value: u32) -> anyhow::Result<()> {
        let c = Control {
            op,
            seq,
            value,
            extra: 0,
        };
        let frame = self.session.borrow().sign(HOST_MAC, c);
        match frame {
            Some(f) => self.send(&f),
            None => bail!("no session open with the firmware"),
        }
    }

    /// Control frames refused so far.
    fn rejected(&self) -> u32 {
        self.session.borrow().rejected()
    }

    /// What the firmware's control frame `frame` means (a refusal is counted).
    fn receive(&self, frame: &[u8]) -> HostEvent {
        let e = self.session.borrow_mut().receive(frame);
        if let HostEvent::Refused(ControlError::Version(v)) = e {
            self.other_version.set(Some(v));
        }
        e
    }

    /// The next frame of the control EtherType within `deadline` (its length in
    /// `buf`); the device's own IP traffic meets the gateway on the way.
    fn next_control(
        &self,
        deadline: Instant,
        buf: &mut [u8; 2048],
    ) -> anyhow::Result<Option<usize>> {
        while Instant::now() < deadline {
            match self.sock.recv_from(buf) {
                Ok((n, _)) => {
                    let frame = &buf[..n];
                    if loxo_control::peek(frame).is_some() {
                        return Ok(Some(n));
                    }
                    // The device's own traffic: ARP, its IPFIX and sketch exports.
                    let reply = self.gateway.borrow_mut().handle(frame);
                    if let Some(reply) = reply {
                        self.send(&reply)?;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(e).context("receiving from the firmware"),
            }
        }
        Ok(None)
    }

    /// Waits up to `timeout` for a control frame of this session that `want` accepts.
    fn wait(
        &self,
        timeout: Duration,
        want: impl Fn(&Control) -> bool,
    ) -> anyhow::Result<Option<Control>> {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 2048];
        while let Some(n) = self.next_control(deadline, &mut buf)? {
            if let HostEvent::Message(c) = self.receive(&buf[..n]) {
                if c.op == OP_SKETCH {
                    self.sketches.borrow_mut().chunk(&buf[..n], &c);
                    continue;
                }
                if want(&c) {
                    return Ok(Some(c));
                }
            }
        }
        Ok(None)
    }

    /// Opens the session: answers every READY with HELLO(host nonce) under the device
    /// nonce it announces (and again every half second, in case a HELLO or WELCOME
    /// was lost), until a WELCOME verifies under one of them and the host nonce
    /// (`loxo_control::host::HostSession`: a READY is only a hint — one recorded from
    /// an earlier boot verifies too — and only a WELCOME opens the session). Returns
    /// false at `timeout`.
    fn handshake(&self, timeout: Duration) -> anyhow::Result<bool> {
        let deadline = Instant::now() + timeout;
        let mut buf = [0u8; 2048];
        while Instant::now() < deadline {
            let resend = Instant::now() + Duration::from_millis(500);
            while let Some(n) = self.next_control(resend.min(deadline), &mut buf)? {
                match self.receive(&buf[..n]) {
                    HostEvent::Announced(device) => {
                        let hello = self.session.borrow().hello(HOST_MAC, device);
                        self.send(&hello)?;
                    }
                    HostEvent::Open(_) => return Ok(true),
                    _ => {}
                }
            }
            let hellos: Vec<[u8; 60]> = {
                let s = self.session.borrow();
                s.announced()
                    .iter()
                    .map(|&d| s.hello(HOST_MAC, d))
                    .collect()
            };
            for h in &hellos {
                self.send(h)?;
            }
        }
        Ok(false)
    }

    /// Ends batch `seq` and waits for its ACK, re-sending the SYNC a few
    /// times in case it was the frame that got lost.
    /// `sent` (frames sent so far) lets the firmware see frames lost before it
    /// (a full RX FIFO drops them silently under QEMU: `overruns` stays 0).
    fn sync(&self, seq: u32, sent: u32, timeout: Duration) -> anyhow::Result<u32> {
        for _ in 0..3 {
            self.control(OP_SYNC, seq, sent)?;
            if let Some(ack) = self.wait(timeout / 3, |c| c.op == OP_ACK && c.seq == seq)? {
                return Ok(ack.value);
            }
        }
        bail!(
            "no ACK for batch {seq} within {}s: is the firmware running?",
            timeout.as_secs()
        )
    }
}

/// What a replay sent.
#[derive(Debug, Default)]
struct Replayed {
    /// Frames sent.
    sent: u32,
    /// Records skipped: outside the NIC's frame sizes.
    skipped: u32,
    /// Records skipped: headers cut by the snap length.
    snapped: u32,
    /// Frames of the control EtherType in the capture: sent, not counted in `sent`.
    control: u32,
    /// The last batch's sequence number.
    seq: u32,
    /// The firmware's frame count in the last ACK.
    acked: u32,
}

/// Sends the capture's frames in acknowledged batches (the last one acknowledged too);
/// returns the capture error that stopped it early, if any.
fn send_capture<R: std::io::Read>(
    capture: &mut CaptureReader<R>,
    link: &Link,
    args: &Args,
    timeout: Duration,
    r: &mut Replayed,
) -> anyhow::Result<Option<capture::CaptureError>> {
    let (mut batch_frames, mut batch_bytes) = (0usize, 0usize);
    let mut whole = Vec::new();
    let stopped = capture.for_each_frame(|_, f| {
        if !(NIC_MIN..=NIC_MAX).contains(&f.wire_len) {
            // The NIC would drop it without a trace; not sending keeps the
            // frame count exact, and the summary says how many.
            r.skipped += 1;
            return Ok(());
        }
        if !f.is_whole()
            && matches!(
                loxo_flow::parse_frame_captured(f.captured, f.wire_len),
                Err(CapturedError::Snapped { .. })
            )
        {
            r.snapped += 1;
            return Ok(());
        }
        let frame = capture::padded(f, &mut whole);
        let is_control = loxo_control::peek(frame).is_some();
        let cost = frame.len() + FIFO_OVERHEAD;
        if batch_frames + 1 > args.batch_frames || batch_bytes + cost > args.batch_bytes {
            r.acked = link.sync(r.seq, r.sent, timeout)?;
            r.seq = r.seq.wrapping_add(1);
            batch_frames = 0;
            batch_bytes = 0;
        }
        link.send(frame)?;
        if is_control {
            r.control += 1;
        } else {
            r.sent += 1;
        }
        batch_frames += 1;
        batch_bytes += cost;
        anyhow::Ok(())
    })?;
    if batch_frames > 0 {
        // A batch of control-EtherType frames alone is acknowledged too: the firmware
        // has consumed them when its ACK comes.
        r.acked = link.sync(r.seq, r.sent, timeout)?;
    }
    Ok(stopped)
}

/// Runs `loxo replay`.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if !args.to.ip().is_loopback() || !args.from.ip().is_loopback() {
        bail!("--to and --from must be loopback addresses (QEMU's netdev is local)");
    }
    if args.batch_frames == 0 || args.batch_frames > 170 || args.batch_bytes < 2048 {
        bail!("--batch-frames must be in 1..=170 and --batch-bytes at least 2048");
    }
    let file = capture::open_file(&args.file, "loxo replay")?;
    let mut capture = CaptureReader::new(BufReader::new(file))
        .map_err(|e| capture::header_error(&args.file, "loxo replay", e))?;
    let sock = UdpSocket::bind(args.from).with_context(|| format!("binding {}", args.from))?;
    sock.set_read_timeout(Some(Duration::from_millis(100)))?;
    if let Some(dir) = &args.sketch_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let link = Link {
        sock,
        to: args.to,
        sketches: RefCell::new(Sketches {
            dir: args.sketch_dir.clone(),
            ..Sketches::default()
        }),
        session: RefCell::new(HostSession::new(
            loxo_cli::key::read_key(&args.control_key)?,
            host_nonce(),
        )),
        other_version: std::cell::Cell::new(None),
        gateway: RefCell::new(
            Gateway::new(args.gateway, args.forward.iter().copied())
                .context("binding the gateway's host socket")?,
        ),
    };
    let timeout = Duration::from_secs(args.timeout.max(1));

    eprintln!(
        "loxo replay: waiting for the firmware's READY on {}",
        args.from
    );
    if !link.handshake(Duration::from_secs(args.ready_timeout))? {
        if let Some(v) = link.other_version.get() {
            bail!(
                "the firmware speaks control protocol version {v}, this loxo version {}: rebuild one of them",
                loxo_control::VERSION
            );
        }
        bail!(
            "no session with the firmware within {}s: no WELCOME verified under this run's nonce ({} control frames refused: is --control-key the firmware's key?)",
            args.ready_timeout,
            link.rejected()
        );
    }

    let mut r = Replayed::default();
    let stopped = send_capture(&mut capture, &link, args, timeout, &mut r)?;
    let Replayed {
        sent,
        skipped,
        snapped,
        control,
        seq,
        acked,
    } = r;
    // END comes after the last SYNC in sequence order (the firmware refuses stale ones).
    link.control(OP_END, seq.wrapping_add(1), sent)?;
    let Some(done) = link.wait(timeout, |c| c.op == OP_DONE)? else {
        bail!("no DONE from the firmware within {}s", timeout.as_secs());
    };
    eprintln!(
        "loxo replay: sent {sent} frames ({skipped} outside the NIC's 14..2048-byte range skipped, \
         {snapped} with headers cut by the snap length not sent, \
         {control} of the control EtherType in the capture sent apart), \
         last ack {acked}, firmware counted {}, verdict {}, {} unauthenticated control frames ignored",
        done.value,
        if done.extra == 0 { "ok" } else { "mismatch" },
        link.rejected()
    );
    let g = link.gateway.borrow().stats();
    if g.arp_replies + g.forwarded + g.dropped > 0 {
        eprintln!(
            "loxo replay: gateway {}: {} ARP replies, {} datagrams forwarded, {} dropped",
            args.gateway, g.arp_replies, g.forwarded, g.dropped
        );
    }
    let sketches = link.sketches.into_inner();
    if let Some(dir) = &args.sketch_dir {
        report_sketches(&sketches, dir)?;
    }
    if let Some(e) = &stopped {
        eprintln!(
            "loxo replay: warning: {}: {e}; replayed the {} records before it",
            args.file.display(),
            capture.records()
        );
    }
    Ok(
        if done.extra == 0 && done.value == sent && stopped.is_none() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// This run's host nonce: 64 bits from the OS's entropy, never 0 (0 marks "no
/// session yet" in READY's tag).
fn host_nonce() -> u64 {
    let b = loxo_cli::key::random_seed().to_bytes();
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w).max(1)
}

fn report_sketches(s: &Sketches, dir: &Path) -> anyhow::Result<()> {
    if let Some(e) = s.chunks.error() {
        bail!("{e}");
    }
    if let Some((epoch, have, total)) = s.chunks.incomplete() {
        bail!("sketch of epoch {epoch} incomplete: {have} of {total} bytes");
    }
    eprintln!(
        "loxo replay: wrote {} epoch sketches to {}",
        s.written,
        dir.display()
    );
    Ok(())
}
