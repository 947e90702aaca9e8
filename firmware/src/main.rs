//! loxo sample firmware: an elephant-flow monitor on a Cortex-M4F with a
//! LAN9118 Ethernet MAC (QEMU `mps2-an386`), logging with defmt over
//! semihosting and paced by `loxo replay` through a small control protocol.
//!
//! Data path: LAN9118 RX FIFO → frame buffer → `loxo_flow::FlowMonitor`
//! (parse → `FlowKey` → one keyed hash → Space-Saving candidates, Count-Min, HLL,
//! Bloom) → `Report`
//! per epoch (defmt) and the "elephant present" LED; each flow's first frame also
//! feeds `loxo_flow::SampledParticipants` (spread sketches, sampled under a
//! per-frame budget) → `ParticipantsReport` (scanners and victims, defmt and IPFIX).
#![no_std]
#![no_main]

mod board;
mod cost_hist;
#[cfg(feature = "costs")]
mod costs;
mod epoch_end;
mod linerate;
mod net;
mod nonce;
/// The device seed and control key, provisioned at build time (`build.rs`).
mod provisioning {
    include!(concat!(env!("OUT_DIR"), "/provisioning.rs"));
    include!(concat!(env!("OUT_DIR"), "/network.rs"));
}

use cortex_m_rt::{entry, exception, ExceptionFrame};
use cortex_m_semihosting::debug;
use defmt_semihosting as _;
use embedded_hal::digital::OutputPin;
use loxo_flow::{
    ByteWeight, Config, EpochPolicy, FirmwareParticipants, FlowMonitor, ParseError,
    ParticipantsConfig, ParticipantsReport, Report, ShareOf, Theta,
};
use loxo_lan9118::{Lan9118, Mmio, FRAME_BUF_LEN};

use board::{Led, Ticks};
use epoch_end::{Closing, Export, Io};
use linerate::LineRate;
use loxo_control::{Control, Guard, Session};
use net::{Net, NetBuffers, NetStorage};
use provisioning::{CONTROL_KEY, DEVICE_SEED, DEVICE_SEED_SOURCE, OBSERVATION_DOMAIN};

/// Station address of the firmware (locally administered).
const MAC: [u8; 6] = [0x02, 0x4C, 0x4F, 0x58, 0x4F, 0x01];
/// Frames per epoch: a report and the LED follow each epoch.
const EPOCH_FRAMES: u32 = 16_384;
/// Idle polls between two READY announcements before the host shows up.
const READY_EVERY: u32 = 1 << 18;

defmt::timestamp!("{=u32}", 0);

/// What the firmware counts besides the flow monitor.
#[derive(Default)]
struct Totals {
    frames: u32,
    bytes: u64,
    control: u32,
    /// Frames addressed to the device's IP stack (not monitored).
    own: u32,
    /// Frames the monitor saw, summed over closed epochs.
    monitor_frames: u64,
    /// Malformed frames (parse errors), summed over closed epochs.
    malformed: u64,
    /// Epochs closed.
    epochs: u32,
    /// Frames the host sent that never arrived (from SYNC's running count).
    lost: u32,
    /// Instructions spent in the monitor per frame over the running epoch: their
    /// distribution, logged, folded into [`RUN_COST`] and cleared at each epoch close
    /// (`epoch_cost`).
    epoch_cost: cost_hist::CostHistogram,
    /// Instructions spent closing each epoch (report, IPFIX, sketch datagrams): sum,
    /// max.
    epoch_end_insns_sum: u64,
    epoch_end_insns_max: u32,
}

/// The receive buffer and the monitor live in statics, not on the stack, so
/// the stack high-water mark measures call depth only.
static mut BUF: [u8; FRAME_BUF_LEN] = [0; FRAME_BUF_LEN];
/// The device's hash seed: provisioned at build time, outside the source tree
/// (`LOXO_DEVICE_SEED`, else random per build). A product draws it from its TRNG at
/// boot; QEMU's mps2-an386 has no TRNG, so the build host's entropy stands in.
/// Devices whose sketches are merged must share it (provision the same value).
const SEED: loxo_core::Seed = DEVICE_SEED;
/// An elephant also carries at least this many IP bytes in its epoch
/// (`Config::min_volume`). θ is a share of the epoch's *IP* bytes: under garbage
/// traffic, where IP is a fraction of a percent of the frames, a handful of one-frame
/// flows each held several percent of that tiny total and every epoch lit the LED with
/// dozens of "elephants". 3 KiB is more than two IP packets of the Ethernet MTU
/// (2 × 1 500 B), so a flow of one or two packets is never an elephant, and less than
/// θ of the smallest full epoch ([`EPOCH_FRAMES`] minimum 20-byte IP packets:
/// 3 276 B), so it never drops a flow at θ of a full epoch of IP traffic (the demo
/// trace's elephants hold ≥ 100 KB per full epoch, ≥ 10 KB in its last, partial one).
const MIN_VOLUME: u64 = 3 * 1024;
const _: () = assert!(MIN_VOLUME > 2 * 1_500 && MIN_VOLUME < EPOCH_FRAMES as u64 * 20 / 100);
/// Elephant candidates of the monitor, and rows of its report: one `N` for both, so
/// the report lists every flow at θ. `θ_min = 1/128 ≈ 0.78 %` ≤ θ = 1 % (a θ below
/// would not build: `FlowMonitor::with_candidates` fails at compile time in the
/// `static`). 128, not the host's 256: the report's 96-byte rows and the candidates'
/// 70 bytes each fit the 128 KiB RAM budget at 128 (the monitor 56 016 B, the report
/// 13 280 B on a 64-bit host), not at 256 (65 232 + 25 568).
pub(crate) const CANDIDATES: usize = 128;
/// The monitor: [`CANDIDATES`] Space-Saving candidates.
pub(crate) type Monitor = FlowMonitor<CANDIDATES>;
/// Its end-of-epoch report: a row per candidate.
type EpochReport = Report<CANDIDATES>;
/// θ = 1 % of an epoch's IP bytes (IPFIX's `octetDeltaCount` unit: header +
/// payload, no link header or padding) and at least [`MIN_VOLUME`], epochs of
/// [`EPOCH_FRAMES`] frames.
pub(crate) const CONFIG: Config = Config {
    seed: SEED,
    theta: match Theta::new(1, 100) {
        Some(t) => t,
        None => panic!("1/100 is a valid threshold"),
    },
    min_volume: MIN_VOLUME,
    share_of: ShareOf::Bytes,
    byte_weight: ByteWeight::Ip,
    epoch_packets: EPOCH_FRAMES,
    policy: EpochPolicy::Reset,
};
static mut MONITOR: Monitor = Monitor::with_candidates(CONFIG);
/// The DDoS participants' sketches: `loxo_flow::FirmwareParticipants` (≈ 10.5 KiB),
/// fed with each flow's first frame by [`feed`], sampled under a budget of one
/// sampled pair per `2^`[`PARTICIPANTS_RATE_SHIFT`] frames.
pub(crate) type Parts = FirmwareParticipants;
/// Participants are those at 2 % of the epoch's distinct pairs (the device default:
/// the sketch's noise is too large at 1 %), with the monitor's seed.
pub(crate) const PARTICIPANTS: ParticipantsConfig = ParticipantsConfig::device(SEED);
/// The sampling budget's `log2` frames per sampled offer: 16 (`SampledParticipants`;
/// the added cost per frame is measured in `firmware/README.md`).
const PARTICIPANTS_RATE_SHIFT: u8 = 4;
/// A fresh device's first epoch samples at the level a flood of one-packet flows
/// needs (`SampledParticipants::starting_at`): at level 0 a flood's first frames
/// each carried an offer's full sketch work (no quiet frame to leave it to) on top of
/// the candidates' push and the new-flow filing.
const PARTICIPANTS_FIRST_LEVEL: u8 = PARTICIPANTS_RATE_SHIFT + 1;
static mut PARTS: Parts =
    Parts::new(PARTICIPANTS, PARTICIPANTS_RATE_SHIFT).starting_at(PARTICIPANTS_FIRST_LEVEL);
/// Built with `LOXO_NO_PARTICIPANTS` set: no frame is offered to the participants'
/// sketches — the baseline the per-frame cost they add is measured against
/// (`firmware/README.md`).
const NO_PARTICIPANTS: bool = option_env!("LOXO_NO_PARTICIPANTS").is_some();
/// Rows of each list (scanners, victims) of the participants' report.
pub(crate) const PARTICIPANT_ROWS: usize = 8;
/// The closed epoch's participants.
pub(crate) type PartsReport = ParticipantsReport<PARTICIPANT_ROWS>;
/// The blocklist in flash: a `binary-fuse` frame written on the host by `loxo
/// build-filter --seed` with the device seed (`LOXO_BLOCKLIST` at build time; `cargo
/// xtask demo` generates one); empty when none was given.
static BLOCKLIST: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/blocklist.loxo"));
static mut REPORT: EpochReport = EpochReport::with_candidates();
/// smoltcp's socket buffer and the closing epoch's encoded sketches (`.bss`).
static mut NET_BUFFERS: NetBuffers = NetBuffers::new();
/// The per-frame cost distribution over the closed epochs (the `cost:` line). A
/// static, not a field of `main`'s `Totals` beside the running epoch's: as a second
/// 1 KiB histogram in `main`'s stack frame it cost 7 instructions per frame in the
/// timed path (demo trace, 846 → 853); as a static, 2 (848: `main`'s register
/// allocation shifts, the work timed is the same).
static mut RUN_COST: cost_hist::CostHistogram = cost_hist::CostHistogram::new();

#[entry]
#[allow(clippy::too_many_lines)]
fn main() -> ! {
    board::paint_stack();
    #[cfg(feature = "crash-test")]
    crash_test();
    if cfg!(feature = "fault-test") {
        cortex_m::asm::udf();
    }
    let cp = cortex_m::Peripherals::take();
    let Some(cp) = cp else {
        fail("core peripherals taken twice")
    };
    let ticks = Ticks::start(cp.SYST);
    #[cfg(feature = "calibrate")]
    calibrate(&ticks);
    #[cfg(feature = "costs")]
    costs::run(&ticks, SEED);
    let mut led = Led::new(0);
    let _ = led.set_low();

    // SAFETY: 0x4020_0000 is the LAN9118 of mps2-an386 and this is its only owner.
    let mut nic = Lan9118::new(unsafe { Mmio::new(board::LAN9118_BASE) });
    if let Err(e) = nic.init(MAC) {
        defmt::error!("lan9118 init failed: {}", e);
        exit(1);
    }
    let (nonce, boot_count, entropy) = nonce::device_nonce(&CONTROL_KEY);
    defmt::info!(
        "control: protocol={=u8} device_nonce={=u64:#018x} boot_counter={=u64} entropy={=str}",
        loxo_control::VERSION,
        nonce,
        boot_count.unwrap_or(0),
        if entropy { "host-urandom" } else { "none" }
    );
    defmt::info!(
        "seed: fingerprint={=u64:#018x} ({=str}; demo provisioning, a product draws its seed from a TRNG)",
        SEED.fingerprint(),
        DEVICE_SEED_SOURCE
    );
    defmt::info!("lan9118 up, rx enabled; announcing READY");

    // SAFETY: `main` runs once and takes the only reference to BUF.
    let buf: &mut [u8; FRAME_BUF_LEN] = unsafe { &mut *core::ptr::addr_of_mut!(BUF) };
    // SAFETY: as for BUF.
    let monitor: &mut Monitor = unsafe { &mut *core::ptr::addr_of_mut!(MONITOR) };
    // SAFETY: as for BUF.
    let report: &mut EpochReport = unsafe { &mut *core::ptr::addr_of_mut!(REPORT) };
    // SAFETY: as for BUF.
    let buffers: &'static mut NetBuffers = unsafe { &mut *core::ptr::addr_of_mut!(NET_BUFFERS) };
    let Some(storage) = cortex_m::singleton!(: NetStorage = NetStorage::new(buffers)) else {
        fail("network storage taken twice")
    };
    let mut net = Net::new(
        &mut nic,
        MAC,
        &ticks,
        nonce ^ SEED.fingerprint(),
        OBSERVATION_DOMAIN,
        // The sketch datagrams' boot number: the boot counter, else the boot's time
        // in seconds (fits 32 bits until 2106).
        boot_count.map_or(boot_secs() as u32, |c| c as u32),
        storage,
    );
    if !BLOCKLIST.is_empty() {
        // Checked once (CRC, kind, seed fingerprint, geometry), then only read.
        match loxo_flow::Blocklist::from_bytes(BLOCKLIST, SEED)
            .and_then(|b| monitor.set_blocklist(Some(b)).map(|()| b))
        {
            Ok(b) => defmt::info!(
                "blocklist: addresses={=usize} fingerprint_bits={=u32} flash_bytes={=usize}",
                b.len(),
                b.bits(),
                BLOCKLIST.len()
            ),
            Err(e) => {
                defmt::error!("blocklist: {}", e);
                exit(1);
            }
        }
    }
    let ipfix = match loxo_ipfix::Exporter::new(loxo_ipfix::Config {
        observation_domain_id: OBSERVATION_DOMAIN,
        participant_records: true,
        ..loxo_ipfix::Config::DEFAULT
    }) {
        Ok(x) => x,
        Err(e) => {
            defmt::error!("ipfix exporter: {}", e);
            exit(1)
        }
    };
    let boot_ms = boot_secs() * 1000;
    let mut export = Export {
        ipfix,
        boot_ms,
        start_ms: boot_ms,
    };

    let mut link = Link {
        device: nonce,
        host: None,
        guard: Guard::default(),
    };
    let mut totals = Totals::default();
    let mut closing = Closing::take();
    let mut model = LineRate::default();
    let mut idle: u32 = 0;
    let ready = Control::with_nonce(loxo_control::OP_READY, nonce);
    link.send(&mut nic, ready);
    loop {
        model.mark(ticks.now());
        let received = receive(&mut nic, buf);
        let Some(len) = received else {
            // Idle: nothing is sent from here, so the work per frame, and the arrival
            // model, do not depend on when the host's frames come. READY is announced
            // until a session is open (a stray frame does not silence it).
            if link.host.is_none() {
                idle += 1;
                if idle == READY_EVERY {
                    idle = 0;
                    link.send(&mut nic, ready);
                }
            }
            continue;
        };
        model.frame(len);
        let frame = &buf[..len.min(FRAME_BUF_LEN)];
        // A frame of the control EtherType is obeyed only with a valid tag under
        // this session's nonces and a fresh sequence number; anything else (a spoofed
        // END, a frame recorded from another boot or session, a reflected ACK) is
        // counted in `control_rejected` and dropped: not traffic either, so it
        // changes neither the frame count nor the verdict.
        if loxo_control::peek(frame).is_some() {
            match link.accept(frame) {
                Some(c) if c.op == loxo_control::OP_HELLO => {
                    totals.control += 1;
                    defmt::info!("session: host_nonce={=u64:#018x}", c.nonce());
                    link.send(
                        &mut nic,
                        Control::with_nonce(loxo_control::OP_WELCOME, c.nonce()),
                    );
                }
                Some(c) if c.op == loxo_control::OP_SYNC => {
                    totals.control += 1;
                    note_gap(&mut totals, &c);
                    link.send(
                        &mut nic,
                        Control {
                            op: loxo_control::OP_ACK,
                            seq: c.seq,
                            value: totals.frames,
                            extra: 0,
                        },
                    );
                    continue;
                }
                Some(c) if c.op == loxo_control::OP_END => {
                    totals.control += 1;
                    // The last full epoch's export, if still pending (a short last
                    // epoch leaves it no time), goes out first: no traffic follows
                    // END, so `flush` may read the frames its datagrams need (ARP).
                    let mut io = Io {
                        nic: &mut nic,
                        net: &mut net,
                        link: &link,
                        ticks: &ticks,
                    };
                    closing.report_participants_now(parts());
                    closing.finish(report, &mut export, &mut io, &mut totals);
                    flush(&mut nic, &mut net, &ticks, buf);
                    // The last, partial epoch, its export sent before the verdict.
                    log_epoch_line_rate(&mut model, totals.epochs);
                    let mut io = Io {
                        nic: &mut nic,
                        net: &mut net,
                        link: &link,
                        ticks: &ticks,
                    };
                    closing.close(
                        monitor,
                        parts(),
                        report,
                        &mut export,
                        &mut io,
                        &mut totals,
                        &mut led,
                    );
                    closing.report_participants_now(parts());
                    closing.finish(report, &mut export, &mut io, &mut totals);
                    flush(&mut nic, &mut net, &ticks, buf);
                    closing.log_costs();
                    log_line_rate(&model);
                    finish(&mut nic, &link, &totals, monitor, &net, c.value)
                }
                _ => {}
            }
            continue;
        }
        // Frames for the device itself (ARP, answers to its exports) go to its IP
        // stack, not to the monitor: they are the device's own management traffic,
        // not traffic it observes (a capture point excludes its own too).
        if net::for_us(frame, &MAC) {
            totals.own += 1;
            net.ingest(&mut nic, &ticks, frame);
            continue;
        }
        let t0 = ticks.now();
        let epoch_over = feed(monitor, frame);
        let dt = Ticks::elapsed(t0, ticks.now());
        totals.epoch_cost.record(dt);
        totals.frames += 1;
        totals.bytes += len as u64;
        let mut io = Io {
            nic: &mut nic,
            net: &mut net,
            link: &link,
            ticks: &ticks,
        };
        if epoch_over {
            log_epoch_line_rate(&mut model, totals.epochs);
            // What must see the closed epoch before the next frame: snapshots, report.
            closing.close(
                monitor,
                parts(),
                report,
                &mut export,
                &mut io,
                &mut totals,
                &mut led,
            );
        } else if closing.draining()
            && (model.lag_within(ticks.now(), SLICE_LAG)
                || (closing.overdue(u64::from(totals.frames), io.net, parts().reporting())
                    && model.lag_within(ticks.now(), OVERDUE_LAG)))
        {
            // The rest of the export, a slice at a time while the FIFO is nearly empty
            // — or, past half an epoch with the export still pending (frames left the
            // slices little room: a flood at line rate), while the FIFO has room for
            // the longest slice (`OVERDUE_LAG`); one still pending at the next close
            // is finished there, never dropped. The participants' report first (its
            // sketches take no offer until it is done), a step per slice.
            if !closing.participants_step(parts(), &ticks) {
                closing.slice(report, &mut export, &mut io, &mut totals);
            }
        }
    }
}

/// Counts one frame: the monitor's per-frame path in a function of its own, so that
/// its registers are allocated for it alone — inlined into `main`'s loop, its cost
/// moved with whatever else the loop held (the epoch end's slices added 40
/// instructions per frame to an unchanged monitor). A flow's first frame is also
/// offered to the participants' sketches, with the source's digest the monitor
/// computed (a keyed draw decides whether it is sampled; see `SampledParticipants`).
#[inline(never)]
fn feed(monitor: &mut Monitor, frame: &[u8]) -> bool {
    if NO_PARTICIPANTS {
        return monitor.feed_configured(frame, &CONFIG);
    }
    // The closure captures nothing: a reference to the participants held across the
    // monitor's path costs it a register (measured: 4–6 instructions per frame).
    monitor.feed_observing_idle(
        frame,
        &CONFIG,
        |key, src, frames| parts().offer(key, src, frames as u32),
        || parts().idle(),
    )
}

/// The participants' sketches. Every use is a short borrow that ends with its
/// statement (`main`'s loop, `feed`'s first-frame closure): one thread, no interrupt
/// handler touches them, so no two references are ever live at once.
#[inline(always)]
fn parts() -> &'static mut Parts {
    // SAFETY: see above — each caller's borrow ends before the next is taken.
    unsafe { &mut *core::ptr::addr_of_mut!(PARTS) }
}

/// How far behind line rate (arrival model) the firmware may be when a slice of the
/// epoch-end export starts: at most one minimum-size frame waiting, so a slice of `S`
/// instructions leaves at most `2 + S / 1 129` frames in the FIFO (`linerate`).
const SLICE_LAG: u64 = linerate::PERIOD;

/// The longest slice of the epoch-end export measured on any traffic class (the
/// participants' report step, 107 k instructions on 100 % DDoS floods), with margin.
const LONGEST_SLICE: u64 = 110_000;

/// How far behind line rate an *overdue* export's slice may start (past half an
/// epoch, still pending): as far as the RX FIFO allows with the longest slice still to
/// come — `(FIFO_FRAMES − 1)·PERIOD − LONGEST_SLICE`, 75 156 instructions, about 66
/// minimum-size frames waiting. Before, an overdue export ran a slice on every frame
/// whatever the lag, and under a flood of minimum-size frames at line rate (100 %
/// one-packet flows after ordinary traffic: about 100 instructions a frame to spare,
/// against an export of about 0.9 M) its remaining slices piled up: 310 frames in
/// the FIFO. Paced, the export still runs on the frames' spare time and finishes
/// within the epoch; one that cannot is finished by the next close (`Closing::close`).
const OVERDUE_LAG: u64 = (linerate::FIFO_FRAMES - 1) * linerate::PERIOD - LONGEST_SLICE;

/// Logs the arrival model's figures for the epoch `n` whose frames were just read
/// (`epoch_linerate:`): the most frames the RX FIFO would have held at line rate
/// while they came — a class of traffic fed as whole epochs gets its own figure.
fn log_epoch_line_rate(model: &mut LineRate, n: u32) {
    let (lag, backlog) = model.take_epoch();
    defmt::info!(
        "epoch_linerate: n={=u32} lag_max_insns={=u64} backlog_max={=u64}",
        n,
        lag,
        backlog
    );
}

/// Logs the arrival model's result: the most frames the RX FIFO would have held at
/// line rate, against what it holds.
fn log_line_rate(model: &LineRate) {
    let (frames, lag_max, at, backlog_max) = model.summary();
    defmt::info!(
        "linerate: frames={=u64} period_insns={=u64} lag_max_insns={=u64} lag_max_at={=u64} backlog_max={=u64} fifo_frames={=u64}",
        frames,
        linerate::PERIOD,
        lag_max,
        at,
        backlog_max,
        linerate::FIFO_FRAMES
    );
}

/// `calibrate` feature: checks the tick-to-instruction conversion (`board::insns`)
/// under `-icount shift=7`: 4 000 NOPs and the SysTick read are 4 001–4 003
/// instructions, 12 803–12 810 ticks.
#[cfg(feature = "calibrate")]
fn calibrate(ticks: &Ticks) {
    let t0 = ticks.now();
    // SAFETY: 4000 NOPs touch no memory and no register.
    unsafe { core::arch::asm!(".rept 4000", "nop", ".endr", options(nomem, nostack)) };
    let dt = Ticks::elapsed(t0, ticks.now());
    defmt::info!(
        "calibrate: 4000 nops took {=u32} ticks = {=u32} instructions (expect 4 001–4 003)",
        dt,
        board::insns(dt)
    );
}

/// SYNC carries the frames the host sent so far: a shortfall against the frames
/// counted is frames lost before the firmware (QEMU's LAN9118 drops them on a full RX
/// FIFO without counting an overrun), logged as a `gap:` and summed in `lost`.
fn note_gap(totals: &mut Totals, sync: &Control) {
    let lost = sync.value.saturating_sub(totals.frames + totals.lost);
    if lost > 0 {
        totals.lost += lost;
        defmt::warn!(
            "gap: batch={=u32} sent={=u32} counted={=u32} lost={=u32}",
            sync.seq,
            sync.value,
            totals.frames,
            lost
        );
    }
}

/// The next frame's length, if one arrived. A NIC fault is logged: after an
/// `RxFault` the driver has soft-reset and re-initialised the chip and receiving
/// goes on; any other fault (the chip does not come back) ends the run.
fn receive(nic: &mut Lan9118<Mmio>, buf: &mut [u8; FRAME_BUF_LEN]) -> Option<usize> {
    match nic.receive(buf) {
        Ok(r) => r,
        Err(e) => {
            defmt::warn!("lan9118 fault: {}", e);
            if !matches!(e, loxo_lan9118::Error::RxFault { .. }) {
                exit(1);
            }
            None
        }
    }
}

/// Seconds since 1970 at boot, from the host's clock over semihosting (a product
/// reads its RTC or asks NTP).
pub(crate) fn boot_secs() -> u64 {
    // SAFETY: SYS_TIME takes no argument block and writes no memory of ours.
    unsafe { cortex_m_semihosting::syscall!(TIME) as u64 }
}

/// The authenticated control channel of this boot: the device nonce, and the host
/// nonce of the session once a HELLO opened it (one session per boot: the run ends
/// with END).
pub(crate) struct Link {
    device: u64,
    host: Option<u64>,
    guard: Guard,
}

impl Link {
    /// What frames are signed under: the session, or the announcement before one.
    pub(crate) fn session(&self) -> Session {
        Session {
            device: self.device,
            host: self.host.unwrap_or(0),
        }
    }

    /// The host's message in `frame` if it is a HELLO opening (or re-opening: its
    /// WELCOME was lost) this boot's session, or a SYNC or END of that session with a
    /// fresh sequence number; else counts a rejection.
    fn accept(&mut self, frame: &[u8]) -> Option<Control> {
        let hello = loxo_control::peek(frame)
            .filter(|c| c.op == loxo_control::OP_HELLO)
            .map(|c| c.nonce());
        let verified = match (hello, self.host) {
            // A HELLO under this boot's nonce and its own host nonce; once a session is
            // open, only that session's HELLO (a re-send).
            (Some(h), open) if h != 0 && open.is_none_or(|o| o == h) => {
                let s = Session {
                    device: self.device,
                    host: h,
                };
                loxo_control::verify(frame, &CONTROL_KEY, s).ok()
            }
            (None, Some(_)) => loxo_control::verify(frame, &CONTROL_KEY, self.session())
                .ok()
                .filter(|c| matches!(c.op, loxo_control::OP_SYNC | loxo_control::OP_END)),
            _ => None,
        };
        let Some(c) = verified else {
            self.guard.reject();
            return None;
        };
        if c.op == loxo_control::OP_HELLO {
            self.host = Some(c.nonce());
            return Some(c);
        }
        // A stale sequence number is counted by the guard.
        self.guard.accept(&c).then_some(c)
    }

    /// Signs and sends `c`.
    fn send(&self, nic: &mut Lan9118<Mmio>, c: Control) {
        transmit(
            nic,
            &loxo_control::build(MAC, c, &CONTROL_KEY, self.session()),
        );
    }
}

/// After the last epoch: keeps the IP stack running (ARP answers, queued datagrams)
/// until the export is out or 5 s have passed.
fn flush(nic: &mut Lan9118<Mmio>, net: &mut Net, ticks: &Ticks, buf: &mut [u8; FRAME_BUF_LEN]) {
    let deadline = net.now_ms(ticks) + 5_000;
    while net.busy() && net.now_ms(ticks) < deadline {
        if let Some(len) = receive(nic, buf) {
            let frame = &buf[..len.min(FRAME_BUF_LEN)];
            if net::for_us(frame, &MAC) {
                net.ingest(nic, ticks, frame);
                continue;
            }
        }
        net.pump(nic, ticks);
    }
    if net.busy() {
        defmt::warn!("export not finished after 5 s: collector unreachable?");
    }
}

/// Closes the monitor's epoch: fills the report, counts it, drives the LED (the
/// atomic part of the epoch end; [`log_epoch`] logs it later, in a slice).
fn end_epoch(monitor: &mut Monitor, r: &mut EpochReport, t: &mut Totals, led: &mut Led) {
    monitor.end_epoch(r);
    // The closing epoch's per-frame cost, logged now: the next frame is the next
    // epoch's (one log line, a few thousand instructions of the atomic close).
    epoch_cost(&mut t.epoch_cost, r.epoch);
    t.epochs += 1;
    let malformed: u64 = r.errors.iter().sum();
    t.monitor_frames += r.frames;
    t.malformed += malformed;
    let _ = if r.elephants.is_empty() {
        led.set_low()
    } else {
        led.set_high()
    };
}

/// Logs the closed epoch's report and whether the close lit the LED.
fn log_epoch(r: &EpochReport, led_lit: bool) {
    let malformed: u64 = r.errors.iter().sum();
    defmt::info!(
        "epoch: n={=u32} frames={=u64} packets={=u64} bytes={=u64} fragments={=u64} not_ip={=u64} malformed={=u64} distinct_flows={=u64} distinct_sources={=u64} new_flows={=u64} new_flows_sigma={=f32} new_flows_sampling={=u8} new_flows_overloaded={=bool} new_flows_fpr_ppm={=u32} elephants={=usize} elephants_complete={=bool} led={=bool}",
        r.epoch,
        r.frames,
        r.packets,
        r.bytes,
        r.fragments,
        r.not_ip,
        malformed,
        r.distinct_flows,
        r.distinct_sources,
        r.new_flows,
        r.new_flows_sigma,
        r.new_flows_sampling,
        r.new_flows_overloaded,
        (r.new_flows_fpr * 1e6) as u32,
        r.elephants.len(),
        r.elephants_complete,
        led_lit
    );
    for (rank, e) in r.elephants.iter().enumerate() {
        defmt::info!(
            "elephant: epoch={=u32} rank={=usize} status={=str} bytes_lower={=u64} bytes_upper={=u64} packets_lower={=u64} packets_upper={=u64} packets_lower_certain={=bool} packets_saturated={=bool} flow={}",
            r.epoch,
            rank,
            if e.certain { "certain" } else { "possible" },
            e.bytes.lower,
            e.bytes.upper,
            e.packets.lower,
            e.packets.upper,
            e.packets.lower_certain,
            e.packets.saturated,
            e.key
        );
    }
    if r.blocklist_len > 0 {
        defmt::info!(
            "blocklisted: epoch={=u32} flows={=u64} saturated={=bool} estimate={=u64} sigma={=f32} listed={=usize}",
            r.epoch,
            r.blocklisted_flows,
            r.blocklisted_saturated,
            r.blocklisted_estimate,
            r.blocklisted_sigma,
            r.blocklisted.len()
        );
        for (rank, e) in r.blocklisted.iter().enumerate() {
            defmt::info!(
                "blocklisted_flow: epoch={=u32} rank={=usize} elephant={=str} bytes_lower={=u64} bytes_upper={=u64} packets_lower={=u64} packets_upper={=u64} flow={}",
                r.epoch,
                rank,
                if e.certain { "certain" } else { "no" },
                e.bytes.lower,
                e.bytes.upper,
                e.packets.lower,
                e.packets.upper,
                e.key
            );
        }
    }
    for reason in ParseError::ALL {
        let n = r.errors.get(reason.index()).copied().unwrap_or(0);
        if n > 0 {
            defmt::info!(
                "malformed: epoch={=u32} reason={=str} count={=u64}",
                r.epoch,
                reason.name(),
                n
            );
        }
    }
}

/// Logs the closed epoch's participants: a `participants:` line (thresholds, the
/// distinct pairs they are a share of, sampling, noise) and a `participant:` line per
/// scanner and victim, addresses in their usual text.
fn log_participants(r: &PartsReport, insns: u32) {
    defmt::info!(
        "participants: epoch={=u32} report_insns={=u32} pairs={=u64} triples={=u64} threshold={=u64} port_threshold={=u64} sampling={=u8} sampling_rose={=bool} noisy={=bool} scanners={=usize} scanners_left_out={=u32} victims={=usize} victims_left_out={=u32}",
        r.epoch,
        insns,
        r.pairs.value as u64,
        r.triples.value as u64,
        r.threshold as u64,
        r.port_threshold as u64,
        r.sampling,
        r.sampling_rose,
        r.noisy(),
        r.scanners.len(),
        r.scanners_left_out,
        r.victims.len(),
        r.victims_left_out
    );
    for (rank, p) in r.scanners.iter().chain(r.victims.iter()).enumerate() {
        defmt::info!(
            "participant: epoch={=u32} rank={=usize} role={=str} estimate={=u64} sigma={=u64} lower={=u64} upper={=u64} saturated={=bool} {}",
            r.epoch,
            rank,
            p.role.name(),
            p.spread.value as u64,
            p.spread.sigma as u64,
            p.lower as u64,
            p.upper as u64,
            p.saturated,
            p
        );
    }
}

/// Logs the closing epoch's per-frame cost (a traffic class fed as whole epochs gets
/// its own figures), folds it into the run's and starts the next epoch's afresh.
/// Once per epoch: kept out of line, away from the per-frame path's code.
#[inline(never)]
fn epoch_cost(c: &mut cost_hist::CostHistogram, epoch: u32) {
    defmt::info!(
        "epoch_cost: n={=u32} frames={=u64} insns_per_frame_mean={=u64} insns_per_frame_p50={=u32} insns_per_frame_p99={=u32} insns_per_frame_p999={=u32} insns_per_frame_max={=u32} frames_over_period={=u64}",
        epoch,
        c.frames(),
        c.mean(),
        c.percentile(500),
        c.percentile(990),
        c.percentile(999),
        c.max(),
        c.frames_from(linerate::PERIOD as u32 + 1)
    );
    // SAFETY: one thread, no interrupt handler touches RUN_COST, and this reference
    // ends with the statement (`finish` reads it after the last close).
    unsafe { (*core::ptr::addr_of_mut!(RUN_COST)).merge(c) };
    c.clear();
}

/// Logs the final report, tells the host the verdict and exits QEMU with it.
fn finish(
    nic: &mut Lan9118<Mmio>,
    link: &Link,
    t: &Totals,
    monitor: &Monitor,
    net: &Net,
    sent: u32,
) -> ! {
    nic.update_drop_counter();
    let rx = nic.stats();
    let ok = t.frames == sent
        && t.monitor_frames == u64::from(sent)
        && rx.errors == 0
        && rx.overruns == 0;
    defmt::info!(
        "final: frames={=u32} sent={=u32} lost={=u32} bytes={=u64} monitor_frames={=u64} malformed={=u64} control={=u32} control_rejected={=u32} own={=u32}",
        t.frames,
        sent,
        t.lost,
        t.bytes,
        t.monitor_frames,
        t.malformed,
        t.control,
        link.guard.rejected,
        t.own
    );
    defmt::info!(
        "nic: rx_errors={=u32} oversized={=u32} overruns={=u32}",
        rx.errors,
        rx.oversized,
        rx.overruns
    );
    let (messages, datagrams, dropped) = net.counts();
    defmt::info!(
        "export: ipfix_messages={=u32} sketch_datagrams={=u32} dropped={=u32}",
        messages,
        datagrams,
        dropped
    );
    defmt::info!(
        "monitor: memory={=usize} report={=usize} participants={=usize} participants_report={=usize}",
        monitor.memory_bytes(),
        core::mem::size_of::<EpochReport>(),
        Parts::MEMORY_BYTES,
        core::mem::size_of::<PartsReport>()
    );
    // SAFETY: as in `epoch_cost`; the last epoch was closed (and folded in) before.
    let cost: &cost_hist::CostHistogram = unsafe { &*core::ptr::addr_of!(RUN_COST) };
    defmt::info!(
        "cost: insns_per_frame_mean={=u64} insns_per_frame_max={=u32} insns_per_frame_p50={=u32} insns_per_frame_p99={=u32} insns_per_frame_p999={=u32} epoch_end_insns_mean={=u64} epoch_end_insns_max={=u32} (percentiles: buckets of {=u32} insns)",
        cost.mean(),
        cost.max(),
        cost.percentile(500),
        cost.percentile(990),
        cost.percentile(999),
        t.epoch_end_insns_sum / u64::from(t.epochs.max(1)),
        t.epoch_end_insns_max,
        cost_hist::BUCKET_INSNS
    );
    let (static_ram, stack) = board::ram_usage();
    defmt::info!(
        "ram: static={=u32} stack_peak={=u32} total={=u32}",
        static_ram,
        stack,
        static_ram + stack
    );
    link.send(
        nic,
        Control {
            op: loxo_control::OP_DONE,
            seq: 0,
            value: t.frames,
            extra: u32::from(!ok),
        },
    );
    defmt::info!("verdict: {}", if ok { "ok" } else { "MISMATCH" });
    exit(u8::from(!ok));
}

fn transmit(nic: &mut Lan9118<Mmio>, frame: &[u8]) {
    // The TX FIFO drains instantly in QEMU; on silicon a full FIFO is retried.
    for _ in 0..1000 {
        if nic.transmit(frame).is_ok() {
            return;
        }
    }
    defmt::warn!(
        "frame of {=usize} bytes not sent: tx fifo full",
        frame.len()
    );
}

/// Deliberate panic of the `crash-test` feature (returns `()` so the code
/// after its call site still type-checks without unreachable-code noise).
#[cfg(feature = "crash-test")]
fn crash_test() {
    core::panic!("crash-test feature: deliberate panic");
}

fn exit(code: u8) -> ! {
    if code == 0 {
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        debug::exit(debug::EXIT_FAILURE);
    }
    loop {
        cortex_m::asm::bkpt();
    }
}

fn fail(msg: &str) -> ! {
    defmt::error!("fatal: {=str}", msg);
    exit(1)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    if let Some(loc) = info.location() {
        defmt::error!("panic at {=str}:{=u32}", loc.file(), loc.line());
    } else {
        defmt::error!("panic");
    }
    exit(1)
}

#[exception]
unsafe fn HardFault(ef: &ExceptionFrame) -> ! {
    defmt::error!(
        "HardFault at pc={=u32:#010x} lr={=u32:#010x}",
        ef.pc(),
        ef.lr()
    );
    exit(1)
}
