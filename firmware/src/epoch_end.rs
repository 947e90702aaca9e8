//! The epoch end, spread over the frames that follow it.
//!
//! Closing an epoch used to take about 1.07 M instructions in one go (report, the
//! sketches' encodings, SKETCH frames, IPFIX), during which the firmware read no
//! frame: at line rate ~950 frames would arrive meanwhile, and the LAN9118's RX FIFO
//! holds 165 (`linerate`). Now only what must see the closed epoch's state before the
//! next frame changes it runs at once ([`Closing::close`], the *atomic* part): write
//! the distinct-flow `Hll<14>` into the sketch buffer as a dense frame (its register
//! bytes as they are, without the CRC: a 12 KiB copy), copy the top-k `SpaceSaving`
//! into a snapshot and close the monitor (`end_epoch`: report, clear). The rest are
//! *slices*, each a bounded piece of work run between two frames
//! ([`Closing::slice`]) when the arrival model says the FIFO is nearly empty: log the
//! report, the flows frame's CRC, encode the candidates from their snapshot, ship
//! one SKETCH frame, send the IPFIX messages, queue the sketch datagrams (sent one
//! per slice by `Net::pump_one`).
//!
//! The candidates' snapshot is what keeps the closed epoch intact while the next
//! epoch's frames are fed: 8 976 bytes of `.bss` (64-bit host size; `ram:` in the log
//! has the device's total). The flows sketch used to have a snapshot too (12 584
//! bytes), encoded sparse in a slice of 128 k instructions: its dense frame at the
//! close is about as long at the ~4 000 flows of a demo epoch (3 bytes per set
//! register against 0.75 per register) and shorter past ~4 100. The report is not
//! touched until the next close, and an export
//! still in progress then (never at 16 384 frames per epoch: it takes a few thousand)
//! is finished first, in one go.

use loxo_cms::SpaceSaving;
use loxo_flow::FlowKey;
use loxo_lan9118::{Lan9118, Mmio};

use crate::board::{Led, Ticks};
use crate::net::Net;
use crate::{EpochReport, Link, Monitor, Parts, PartsReport, Totals, CANDIDATES, SEED};

/// The closed epoch's top-k candidates, copied out of the monitor at the close. (Its
/// distinct-flow sketch needs no copy: the close writes it into the sketch buffer as
/// a dense frame, `Hll::encode_dense_unsealed_into` — the register bytes as they are.)
static mut SNAP_TOP: SpaceSaving<FlowKey, CANDIDATES> = SpaceSaving::new();

/// The closed epoch's participants (filled at the close, logged and exported in
/// slices).
static mut PARTS_REPORT: PartsReport = PartsReport::new();

/// Most datagram pumps at a close waiting for the last epoch's sketch datagrams.
const CLOSE_PUMPS: u32 = 4_096;

/// What the NIC side of a slice needs.
pub(crate) struct Io<'a> {
    pub(crate) nic: &'a mut Lan9118<Mmio>,
    pub(crate) net: &'a mut Net,
    pub(crate) link: &'a Link,
    pub(crate) ticks: &'a Ticks,
}

/// The export's state across epochs: the IPFIX exporter and the observation clock.
pub(crate) struct Export {
    pub(crate) ipfix: loxo_ipfix::Exporter,
    /// Milliseconds since 1970 at boot.
    pub(crate) boot_ms: u64,
    /// Start of the running epoch's observation.
    pub(crate) start_ms: u64,
}

/// The export's steps after the atomic close, in order. Each is one slice, except
/// `Ship` (one SKETCH frame per slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Nothing pending.
    Idle,
    /// Log the report (`epoch:`, `elephant:`, `blocklisted:`, `malformed:` lines).
    Log,
    /// Log the participants (`participants:`, `participant:` lines).
    LogParticipants,
    /// Write the CRC of the distinct-flow frame the close wrote (apart from the
    /// close, which must stay short).
    SealFlows,
    /// Send the next 1 KiB SKETCH frame of the distinct-flow sketch.
    Ship,
    /// Encode the top-k snapshot after it.
    EncodeTopK,
    /// Log the `sketch:` line (the snapshot's estimate).
    LogSketch,
    /// Build and send the IPFIX messages, log the `export:` line.
    Ipfix,
    /// Build and send the participants' IPFIX messages.
    IpfixParticipants,
    /// Hand the two sketch frames to the datagram queue.
    Queue,
}

impl Step {
    const ALL: [Self; 10] = [
        Self::Idle,
        Self::Log,
        Self::LogParticipants,
        Self::SealFlows,
        Self::Ship,
        Self::EncodeTopK,
        Self::LogSketch,
        Self::Ipfix,
        Self::IpfixParticipants,
        Self::Queue,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Idle => "pump",
            Self::Log => "log",
            Self::LogParticipants => "log_participants",
            Self::SealFlows => "seal_flows",
            Self::Ship => "ship_sketch_frame",
            Self::EncodeTopK => "encode_topk",
            Self::LogSketch => "log_sketch",
            Self::Ipfix => "ipfix",
            Self::IpfixParticipants => "ipfix_participants",
            Self::Queue => "queue",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Instructions the epoch end took: the atomic part and the slices (per step; the `Idle`
/// entry counts the datagram pumps), per epoch and over the run.
#[derive(Debug, Default)]
struct Costs {
    atomic_max: u32,
    /// The longest participants report step.
    parts_step_max: u32,
    step_max: [u32; Step::ALL.len()],
    step_count: [u32; Step::ALL.len()],
    /// This epoch's export so far (atomic part, slices, its datagram pumps).
    epoch_insns: u64,
    /// Frames read between a close and the end of its export: most over the run.
    spread_max: u64,
}

/// The epoch end in progress.
pub(crate) struct Closing {
    step: Step,
    epoch: u32,
    times: loxo_ipfix::Times,
    /// Lengths of the encoded sketches in the sketch buffer, and the SKETCH offset.
    flows: usize,
    topk: usize,
    shipped: usize,
    /// Frame count (`Totals::frames`) at the close.
    closed_at: u64,
    /// Whether the close lit the LED (read back from its register).
    led_lit: bool,
    /// The closed epoch's distinct-flow estimate, rounded (the `sketch:` line).
    flows_estimate: u64,
    /// Instructions the participants' report took at the close.
    parts_insns: u32,
    snap_top: &'static mut SpaceSaving<FlowKey, CANDIDATES>,
    parts: &'static mut PartsReport,
    costs: Costs,
    /// Whether the last close's export may have work left (its participants'
    /// report, its steps, datagrams queued): set by the close, cleared by the first
    /// slice that finds none. While it is clear `main` asks nothing else of a frame
    /// (not the line-rate model, not the slice's clock read and the datagram queue's
    /// test, which every frame paid when the device kept up).
    draining: bool,
}

impl Closing {
    /// Takes the snapshots' statics: call once.
    pub(crate) fn take() -> Self {
        // SAFETY: `take` runs once (from `main`), so these are the only references.
        let snap_top = unsafe { &mut *core::ptr::addr_of_mut!(SNAP_TOP) };
        // SAFETY: as for SNAP_TOP.
        let parts = unsafe { &mut *core::ptr::addr_of_mut!(PARTS_REPORT) };
        Self {
            step: Step::Idle,
            draining: false,
            epoch: 0,
            times: loxo_ipfix::Times {
                export_time: 0,
                start_ms: 0,
                end_ms: 0,
            },
            flows: 0,
            topk: 0,
            shipped: 0,
            closed_at: 0,
            led_lit: false,
            flows_estimate: 0,
            parts_insns: 0,
            snap_top,
            parts,
            costs: Costs::default(),
        }
    }

    /// The atomic part, at the frame that ended the epoch: snapshots, the monitor's
    /// `end_epoch` (report and clear), totals and LED, the observation times. An
    /// export still in progress is finished first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn close(
        &mut self,
        monitor: &mut Monitor,
        parts: &mut Parts,
        report: &mut EpochReport,
        export: &mut Export,
        io: &mut Io<'_>,
        totals: &mut Totals,
        led: &mut Led,
    ) {
        self.report_participants_now(parts);
        if self.step != Step::Idle {
            defmt::warn!(
                "export of epoch {=u32} not finished when the next epoch closed: finishing it now",
                self.epoch
            );
            self.finish(report, export, io, totals);
        }
        // The sketch buffer is about to take this epoch's frames: the last epoch's
        // sketch datagrams still queued (its export could not be spread: frames came
        // faster than the slices' budget, e.g. a flood at line rate) are sent first,
        // never dropped. Bounded: without a collector's ARP answer they would wait
        // forever (the warning says so, and `loxo collect` counts the loss).
        let mut pumps = 0;
        while io.net.busy() && pumps < CLOSE_PUMPS {
            io.net.pump(io.nic, io.ticks);
            pumps += 1;
        }
        if io.net.busy() {
            defmt::warn!(
                "sketch datagrams of epoch {=u32} not sent before the next close",
                self.epoch
            );
        }
        let t0 = io.ticks.now();
        // The distinct-flow sketch goes straight into the sketch buffer as a dense
        // frame (a 12 KiB copy; its CRC is a slice of its own), the candidates into
        // their snapshot (encoded in a later slice).
        let flows = monitor.flows();
        self.flows = flows
            .encode_dense_unsealed_into(io.net.sketches_mut())
            .unwrap_or(0);
        self.flows_estimate = (flows.estimate() + 0.5) as u64;
        self.shipped = 0;
        snapshot(self.snap_top, monitor.top());
        io.nic.update_drop_counter();
        self.epoch = totals.epochs;
        crate::end_epoch(monitor, report, totals, led);
        // The participants' report runs in slices, before the export's
        // (`participants_step`): the sketches stay as they are until it is done.
        parts.close(report.frames);
        self.parts_insns = 0;
        self.led_lit = led.is_lit();
        let end_ms = export.boot_ms + io.net.now_ms(io.ticks);
        self.times = loxo_ipfix::Times {
            export_time: (end_ms / 1000) as u32,
            start_ms: export.start_ms,
            end_ms,
        };
        export.start_ms = end_ms;
        self.closed_at = u64::from(totals.frames);
        self.step = Step::Log;
        self.draining = true;
        let dt = io.ticks.insns_since(t0);
        self.costs.atomic_max = self.costs.atomic_max.max(dt);
        self.costs.epoch_insns = u64::from(dt);
    }

    /// One step of the closed epoch's participants report, if one is in progress
    /// (run by `main` as a slice, before the export's: five steps of at most 45 324
    /// instructions on the demo trace, 105 747 on the attack classes of the class
    /// test's capture; the next epoch's offers are not counted until the last
    /// is done — the frames of a few slices' wait). Returns whether there was one.
    pub(crate) fn participants_step(&mut self, parts: &mut Parts, ticks: &Ticks) -> bool {
        if !parts.reporting() {
            return false;
        }
        let t0 = ticks.now();
        if parts.report_step(self.parts) {
            self.parts.epoch = self.epoch;
        }
        let dt = ticks.insns_since(t0);
        self.parts_insns += dt;
        self.costs.parts_step_max = self.costs.parts_step_max.max(dt);
        self.costs.epoch_insns += u64::from(dt);
        true
    }

    /// Completes a participants report in progress now (at END, or a close that
    /// comes before it is done).
    pub(crate) fn report_participants_now(&mut self, parts: &mut Parts) {
        while parts.reporting() {
            if parts.report_step(self.parts) {
                self.parts.epoch = self.epoch;
            }
        }
    }

    /// Whether the last close's export may have work left (see the field): until a
    /// slice finds none, `main` offers every frame's spare time to it.
    pub(crate) fn draining(&self) -> bool {
        self.draining
    }

    /// Whether the export (its steps, the participants' report — `participants` —,
    /// or its datagrams in `net`) is still pending half an epoch after the close
    /// (`frames`: the run's frame count): the slices then run whatever the line-rate
    /// model says, so that it is out before the next close must overwrite the sketch
    /// buffer. Asked only while [`draining`](Self::draining).
    pub(crate) fn overdue(&self, frames: u64, net: &Net, participants: bool) -> bool {
        // The frame count first: the datagram queue is asked only past half an epoch.
        frames.saturating_sub(self.closed_at) > u64::from(crate::EPOCH_FRAMES / 2)
            && (self.step != Step::Idle || participants || net.busy())
    }

    /// Runs one slice of the pending export: the next step, or one sketch datagram
    /// once the steps are done. Returns whether there was anything to do.
    pub(crate) fn slice(
        &mut self,
        report: &EpochReport,
        export: &mut Export,
        io: &mut Io<'_>,
        totals: &mut Totals,
    ) -> bool {
        let step = self.step;
        if step == Step::Idle && !io.net.busy() {
            self.draining = false;
            return false;
        }
        let t0 = io.ticks.now();
        if step == Step::Idle {
            io.net.pump_one(io.nic, io.ticks);
        } else {
            self.run(step, report, export, io);
        }
        let dt = io.ticks.insns_since(t0);
        let c = &mut self.costs;
        if let (Some(m), Some(n)) = (
            c.step_max.get_mut(step.index()),
            c.step_count.get_mut(step.index()),
        ) {
            *m = (*m).max(dt);
            *n += 1;
        }
        c.epoch_insns += u64::from(dt);
        if self.step == Step::Idle && !io.net.busy() {
            // This epoch's export is out: its total, and the frames it spread over.
            self.draining = false;
            totals.epoch_end_insns_sum += c.epoch_insns;
            totals.epoch_end_insns_max = totals
                .epoch_end_insns_max
                .max(c.epoch_insns.min(u64::from(u32::MAX)) as u32);
            c.epoch_insns = 0;
            c.spread_max = c
                .spread_max
                .max(u64::from(totals.frames).saturating_sub(self.closed_at));
        }
        true
    }

    /// Runs every remaining step now (before the next close, or after END).
    pub(crate) fn finish(
        &mut self,
        report: &EpochReport,
        export: &mut Export,
        io: &mut Io<'_>,
        totals: &mut Totals,
    ) {
        while self.step != Step::Idle {
            self.slice(report, export, io, totals);
        }
    }

    /// One step; advances to the next.
    fn run(&mut self, step: Step, report: &EpochReport, export: &mut Export, io: &mut Io<'_>) {
        let epoch = self.epoch;
        self.step = match step {
            Step::Idle => Step::Idle,
            Step::Log => {
                crate::log_epoch(report, self.led_lit);
                Step::LogParticipants
            }
            Step::LogParticipants => {
                crate::log_participants(self.parts, self.parts_insns);
                if self.flows == 0 {
                    Step::EncodeTopK
                } else {
                    Step::SealFlows
                }
            }
            Step::SealFlows => {
                if let Some(frame) = io.net.sketches_mut().get_mut(..self.flows) {
                    if loxo_core::wire::seal(frame).is_err() {
                        self.flows = 0;
                    }
                }
                if self.flows == 0 {
                    Step::EncodeTopK
                } else {
                    Step::Ship
                }
            }
            Step::Ship => {
                let frame = io.net.sketches_mut().get(..self.flows).unwrap_or(&[]);
                self.shipped = ship_chunk(io.nic, io.link, frame, epoch, self.shipped);
                if self.shipped < self.flows {
                    Step::Ship
                } else {
                    Step::EncodeTopK
                }
            }
            Step::EncodeTopK => {
                let snap = &*self.snap_top;
                self.topk = io
                    .net
                    .sketches_mut()
                    .get_mut(self.flows..)
                    .and_then(|b| snap.encode_into::<38>(&SEED, b).ok())
                    .unwrap_or(0);
                if self.flows == 0 || self.topk == 0 {
                    defmt::warn!("sketches of epoch {=u32} do not fit their buffer", epoch);
                }
                Step::LogSketch
            }
            Step::LogSketch => {
                defmt::info!(
                    "sketch: epoch={=u32} bytes={=usize} estimate={=u64} topk_bytes={=usize}",
                    epoch,
                    self.flows,
                    self.flows_estimate,
                    self.topk
                );
                Step::Ipfix
            }
            Step::Ipfix => {
                send_ipfix(export, report, self.times, epoch, io);
                Step::IpfixParticipants
            }
            Step::IpfixParticipants => {
                send_participants(export, self.parts, self.times, epoch, io);
                Step::Queue
            }
            Step::Queue => {
                io.net.queue_sketches(epoch, self.flows, self.topk);
                Step::Idle
            }
        };
    }

    /// Logs what the epoch ends cost (instructions, exact under `-icount shift=7`).
    pub(crate) fn log_costs(&self) {
        let c = &self.costs;
        let slice_max = c.step_max.iter().copied().max().unwrap_or(0);
        defmt::info!(
            "epoch_end: atomic_insns_max={=u32} slice_insns_max={=u32} participants_step_insns_max={=u32} window_insns_max={=u32} spread_frames_max={=u64}",
            c.atomic_max,
            slice_max,
            c.parts_step_max,
            c.atomic_max.max(slice_max).max(c.parts_step_max),
            c.spread_max
        );
        for s in Step::ALL {
            let i = s.index();
            let (Some(&m), Some(&n)) = (c.step_max.get(i), c.step_count.get(i)) else {
                continue;
            };
            if n > 0 {
                defmt::info!(
                    "epoch_end_step: step={=str} slices={=u32} insns_max={=u32}",
                    s.name(),
                    n,
                    m
                );
            }
        }
    }
}

/// Copies `src` into `dst` in place: `dst.clone_from(src)` builds the clone on the
/// stack first (12.6 KiB for the `Hll<14>`, more than the stack has left under the
/// 128 KiB budget), this copies word by word into the static.
fn snapshot<T: Clone>(dst: &mut T, src: &T) {
    // SAFETY: `dst` and `src` are valid, aligned and distinct (`&mut` and `&`). The
    // two types copied here, `Hll<14>` and `SpaceSaving<FlowKey, N>`, are plain data:
    // arrays, integers, floats, a seed and a `heapless::Vec` of `Copy` slots (inline
    // storage, no pointer into itself, no element with drop glue), so the bitwise
    // copy is a valid value equal to `src.clone()`, and overwriting `dst` without
    // dropping it leaks nothing.
    unsafe { core::ptr::copy_nonoverlapping(src, dst, 1) };
}

/// Sends the SKETCH frame of `frame` (the closing epoch's distinct-flow sketch,
/// `Hll<14>`, loxo wire format) at `offset` to `loxo replay`, for fleet-wide merging
/// (`loxo merge`, `loxo export`) without an IP network; returns the next offset.
fn ship_chunk(
    nic: &mut Lan9118<Mmio>,
    link: &Link,
    frame: &[u8],
    epoch: u32,
    offset: usize,
) -> usize {
    let n = frame.len();
    let end = (offset + loxo_control::SKETCH_CHUNK).min(n);
    let Some(chunk) = frame.get(offset..end) else {
        return n;
    };
    let (f, len) = loxo_control::build_sketch(
        crate::MAC,
        epoch,
        offset as u32,
        n as u32,
        chunk,
        &crate::provisioning::CONTROL_KEY,
        link.session(),
    );
    crate::transmit(nic, f.get(..len).unwrap_or(&[]));
    end
}

/// Sends the IPFIX messages `next` writes, one UDP datagram each, until it has no
/// more or fails (`what` names it in the warning); the messages and bytes sent.
fn send_messages<E: defmt::Format>(
    what: &str,
    mut next: impl FnMut(&mut [u8]) -> Result<Option<usize>, E>,
    io: &mut Io<'_>,
) -> (u32, usize) {
    let mut msg = [0u8; 1472];
    let (mut messages, mut bytes) = (0u32, 0usize);
    loop {
        match next(&mut msg) {
            Ok(Some(n)) => {
                if let Some(b) = msg.get(..n) {
                    io.net.send_ipfix(io.nic, io.ticks, b);
                    messages += 1;
                    bytes += n;
                }
            }
            Ok(None) => break,
            Err(e) => {
                defmt::warn!("{=str}: {}", what, e);
                break;
            }
        }
    }
    (messages, bytes)
}

/// Sends the closed epoch's participants as IPFIX messages (templates 259–264; one
/// UDP datagram each).
fn send_participants(
    export: &mut Export,
    parts: &PartsReport,
    times: loxo_ipfix::Times,
    epoch: u32,
    io: &mut Io<'_>,
) {
    let (messages, _) = match export.ipfix.participant_messages(parts, times) {
        Ok(mut m) => send_messages("ipfix participants", |buf| m.next_into(buf), io),
        Err(e) => {
            defmt::warn!("ipfix participants: {}", e);
            (0, 0)
        }
    };
    let records = parts.scanners.len() + parts.victims.len();
    defmt::info!(
        "export_participants: epoch={=u32} ipfix_messages={=u32} records={=usize} sequence={=u32}",
        epoch,
        messages,
        records,
        export.ipfix.sequence_number()
    );
}

/// Sends the report's elephants as IPFIX messages (one UDP datagram each).
fn send_ipfix(
    export: &mut Export,
    report: &EpochReport,
    times: loxo_ipfix::Times,
    epoch: u32,
    io: &mut Io<'_>,
) {
    let (messages, bytes) = match export.ipfix.messages(report, times) {
        Ok(mut m) => send_messages("ipfix", |buf| m.next_into(buf), io),
        Err(e) => {
            defmt::warn!("ipfix: {}", e);
            (0, 0)
        }
    };
    defmt::info!(
        "export: epoch={=u32} ipfix_messages={=u32} ipfix_bytes={=usize} sequence={=u32}",
        epoch,
        messages,
        bytes,
        export.ipfix.sequence_number()
    );
}
