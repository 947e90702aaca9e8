//! The line-rate arrival model: what the LAN9118's RX FIFO would hold if frames came
//! back to back at 100 Mbit/s, computed from the firmware's own work.
//!
//! Frame `i` (every frame the main loop reads, in order) *arrives* when the wire has
//! carried the frames before it: each takes its bytes, the 4-byte FCS (at least 64
//! bytes in all) and 20 bytes of preamble and inter-frame gap, 13.44 cycles per byte
//! at 168 MHz. For minimum-size frames that is frame `i` at `i · 1 129` cycles
//! ([`PERIOD`]: 168 MHz / 148 810 frames/s). The firmware serves frames in order;
//! serving one takes what the main loop measured from reading it to reading the next,
//! idle polls left out. Device time `v` is the virtual clock of that queue: frame `i`
//! starts at `max(v, a_i)`, and `v` grows by its service. Its *lag* `v − a_i` is how
//! long it sat in the FIFO; every frame takes at least `PERIOD` on the wire, so at
//! most `⌊lag / PERIOD⌋ + 1` frames were waiting when it was read — exactly that many
//! for minimum-size frames, which is the case the FIFO must hold ([`FIFO_FRAMES`]).
//! Work that reads no frame (the epoch end's atomic part, each export slice) is part
//! of some frame's service, so it shows up as lag exactly as it would on the wire.
//!
//! Everything is counted in instructions under `qemu -icount shift=7` (SysTick
//! ticks × 40/128, kept in [`UNITS`] of 1/400 instruction so that a tick is a whole
//! number of them: 125), the same unit as the cost histogram; the model takes one instruction
//! for one cycle of a 168 MHz Cortex-M4 (a load or a taken branch is 2–3 cycles on
//! silicon, so a real M4 falls behind sooner than this model: it is a lower bound on
//! the work, not a cycle-accurate simulation). Nothing here depends on when the host
//! sends frames (idle polls are excluded, the work per frame is the firmware's own),
//! so under `-icount` the figures are the same on every run of the same capture.

use crate::board::Ticks;
use crate::cost_hist::ICOUNT_SHIFT;

/// Instructions between two minimum-size frames at line rate: 100 Mbit/s carries
/// 148 810 frames of 64 bytes per second (with preamble and inter-frame gap, 84 byte
/// times each), and a 168 MHz core has 168 000 000 / 148 810 = 1 129 cycles for each.
pub(crate) const PERIOD: u64 = 1_129;
/// Minimum-size frames the LAN9118's RX data FIFO holds in the firmware's
/// configuration: `HW_CFG.TX_FIF_SZ` = 5 (the reset value, which the driver keeps)
/// leaves 10 560 bytes of RX data FIFO and 704 bytes (176 entries) of RX status FIFO;
/// a 64-byte frame takes 16 words of data FIFO (60 bytes and the 4-byte FCS the MAC
/// stores, no padding at RX offset 0), so the data FIFO holds 10 560 / 64 = 165 and
/// is the limit (QEMU's model: `rx_fifo_size` 2 640 words, `rx_status_fifo_size` 176).
pub(crate) const FIFO_FRAMES: u64 = 165;

/// The model's unit of time, per instruction: device time and arrivals are whole
/// units, so that a frame's update is additions and compares only (it ran a 64-bit
/// division by 100 per frame, about 90 instructions of a 1 129 budget: issue 27).
const UNITS: u64 = 400;

/// Wire time of a frame of `len` bytes (FCS not included), in [`UNITS`]:
/// `(max(len + 4, 64) + 20) · 13.44` cycles.
const fn wire_units(len: usize) -> u64 {
    let bytes = if len + 4 > 64 { len + 4 } else { 64 };
    (bytes as u64 + 20) * (1_344 * UNITS / 100)
}

/// [`UNITS`] per SysTick tick: a tick is 40 ns of virtual time, an instruction
/// 2^[`ICOUNT_SHIFT`] ns.
const UNITS_PER_TICK: u64 = {
    let u = UNITS * 40;
    assert!(
        u.is_multiple_of(1 << ICOUNT_SHIFT),
        "a tick must be whole units"
    );
    u >> ICOUNT_SHIFT
};

/// The model's state over a run.
#[derive(Debug, Default)]
pub(crate) struct LineRate {
    /// Frames read so far (the next frame's index).
    frames: u64,
    /// Device time at the last mark, in [`UNITS`].
    v: u64,
    /// Arrival of the next frame, in [`UNITS`].
    next_arrival: u64,
    /// SysTick at the last mark, and whether the time since is service.
    last: u32,
    busy: bool,
    /// Largest lag seen ([`UNITS`]), and the frame it was seen at.
    lag_max: u64,
    lag_max_at: u64,
    /// Largest lag of a frame of the running epoch ([`UNITS`]).
    epoch_lag_max: u64,
}

impl LineRate {
    /// Marks the top of a main-loop iteration at SysTick `now`: the time since the
    /// last mark is service if that iteration read a frame, else idle (not counted).
    /// Called at least once per SysTick wrap (0.67 s): every iteration calls it.
    #[inline(always)]
    pub(crate) fn mark(&mut self, now: u32) {
        if self.busy {
            self.v += u64::from(Ticks::elapsed(self.last, now)) * UNITS_PER_TICK;
        }
        self.last = now;
        self.busy = false;
    }

    /// The iteration marked last read a frame of `len` bytes: it arrived at
    /// `next_arrival`, waited for the firmware if it was behind, and its service runs
    /// until the next mark.
    #[inline(always)]
    pub(crate) fn frame(&mut self, len: usize) {
        let arrival = self.next_arrival;
        if self.v < arrival {
            self.v = arrival;
        } else if self.v - arrival > self.epoch_lag_max {
            // The run's largest lag is at least the epoch's.
            let lag = self.v - arrival;
            self.epoch_lag_max = lag;
            if lag > self.lag_max {
                self.lag_max = lag;
                self.lag_max_at = self.frames;
            }
        }
        self.next_arrival += wire_units(len);
        self.frames += 1;
        self.busy = true;
    }

    /// Whether device time at SysTick `now` (within an iteration that read a frame)
    /// is at most `insns` instructions past the next frame's arrival (always, if that
    /// frame has not arrived).
    #[inline(always)]
    pub(crate) fn lag_within(&self, now: u32, insns: u64) -> bool {
        let v = self.v + u64::from(Ticks::elapsed(self.last, now)) * UNITS_PER_TICK;
        v <= self.next_arrival + insns * UNITS
    }

    /// The running epoch's largest lag (instructions, rounded up) and the most
    /// minimum-size frames it means in the FIFO; starts the next epoch's. The lag a
    /// close causes falls on the frames after it: the next epoch's.
    pub(crate) fn take_epoch(&mut self) -> (u64, u64) {
        let lag = self.epoch_lag_max.div_ceil(UNITS);
        self.epoch_lag_max = 0;
        (lag, lag / PERIOD + 1)
    }

    /// Frames read, the largest lag (instructions, rounded up), the frame it was
    /// reached at, and the most minimum-size frames that lag means in the FIFO.
    pub(crate) fn summary(&self) -> (u64, u64, u64, u64) {
        let lag = self.lag_max.div_ceil(UNITS);
        (self.frames, lag, self.lag_max_at, lag / PERIOD + 1)
    }
}
