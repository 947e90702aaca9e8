//! The per-frame cost distribution the firmware keeps and prints at the end.
//!
//! The monitor's budget is stated per frame at the tail, not only on average: at
//! 100 Mbit/s of minimum-size frames (148 810 frames/s) a 168 MHz Cortex-M4 has
//! 1 129 cycles per frame, and a frame that takes longer eats into the next one's
//! time while the LAN9118's RX FIFO fills. So the firmware counts every frame's
//! cost in a linear histogram of [`BUCKET_INSNS`]-instruction buckets and reports
//! the 50th, 99th and 99.9th percentiles and the maximum, in instructions.
//!
//! **Exact instruction counts.** A frame's cost is its SysTick ticks (25 MHz: 40 ns
//! of virtual time each) under `qemu -icount shift=7` ([`ICOUNT_SHIFT`]), where an
//! instruction is 2⁷ = 128 ns: 3.2 ticks. An interval of `c` instructions reads as
//! `⌊3.2·c⌋` or `⌈3.2·c⌉` ticks, so [`insns`] — ticks × 40/128, rounded — is `c`
//! exactly; and ten instructions are 32 ticks exactly, so bucket `⌊ticks/32⌋` is
//! `⌊c/10⌋` exactly (`c = 10·b` reads as exactly `32·b` ticks, `c = 10·b − 1` as
//! `32·b − 4` or `32·b − 3`): the per-frame path records a shift, no conversion. A
//! bucket edge lies between 1 129 and 1 130, so a reported p99.9 of at most 1 129
//! means exactly that the tail is within the line-rate budget. (Under `shift=0`,
//! before, a tick was 40 instructions and a frame's cost was known to within 40
//! either way: a frame of 1 125 instructions read as 1 120 or 1 160, depending on
//! where in a tick it began.)
//!
//! The firmware keeps one histogram per epoch (logged and folded into the run's at
//! each epoch close, then cleared): a traffic class fed as whole epochs gets its own
//! figures, and the per-frame path records into one histogram only.
//!
//! Memory: `4 · BUCKETS` bytes of counters (1 KiB) plus 16 bytes. Bucket `b` counts
//! the frames of `10·b` to `10·b + 9` instructions up to `BUCKETS − 2`; the last
//! bucket counts every frame of `10·(BUCKETS − 1)` instructions or more, whose exact
//! cost only the maximum keeps. A percentile is reported as its bucket's last value
//! (an upper bound, within 9 of the exact one) or the maximum if lower; one that
//! falls in the last bucket, as the maximum. The mean is the ticks' sum converted:
//! within a third of an instruction of the exact mean.
//!
//! The module has no dependency, so host tests include it by path
//! (`tests/tests/firmware_cost_hist.rs`).

/// The `-icount shift` the counts assume: one instruction is 2^`ICOUNT_SHIFT` ns
/// of virtual time (`cargo xtask demo --icount` passes the same shift).
pub(crate) const ICOUNT_SHIFT: u32 = 7;

/// Virtual nanoseconds per SysTick tick (mps2-an386's 25 MHz core clock).
const NS_PER_TICK: u64 = 40;

/// The instructions run in an interval of `ticks` SysTick ticks: `ticks·40/128`,
/// rounded to the nearest — exact (see the module docs).
#[inline(always)]
pub(crate) const fn insns(ticks: u64) -> u64 {
    (ticks * NS_PER_TICK + (1 << (ICOUNT_SHIFT - 1))) >> ICOUNT_SHIFT
}

/// Counters: 256 buckets of [`BUCKET_INSNS`] = 2 560 instructions, 1.25× the worst
/// frame the demo has shown (2 040, with a blocklist); frames beyond count in the
/// last bucket, their cost in the maximum and the sum.
pub(crate) const BUCKETS: usize = 256;

/// Instructions per bucket: 1 130 (one past the line-rate budget, 1 129) is a
/// bucket's first value.
pub(crate) const BUCKET_INSNS: u32 = 10;

/// SysTick ticks per bucket: exactly [`BUCKET_INSNS`] instructions.
const BUCKET_TICKS: u32 = {
    let t = BUCKET_INSNS as u64 * (1 << ICOUNT_SHIFT);
    assert!(
        t.is_multiple_of(NS_PER_TICK) && (t / NS_PER_TICK).is_power_of_two(),
        "a bucket must be a power-of-two number of whole ticks"
    );
    (t / NS_PER_TICK) as u32
};

/// Per-frame SysTick ticks: a histogram, their sum and their maximum, reported in
/// instructions. Counters saturate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CostHistogram {
    counts: [u32; BUCKETS],
    frames: u64,
    sum: u64,
    max: u32,
}

impl Default for CostHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl CostHistogram {
    /// An empty histogram.
    #[must_use]
    pub(crate) const fn new() -> Self {
        Self {
            counts: [0; BUCKETS],
            frames: 0,
            sum: 0,
            max: 0,
        }
    }

    /// Counts one frame that took `ticks` SysTick ticks.
    #[inline]
    pub(crate) fn record(&mut self, ticks: u32) {
        let i = ((ticks / BUCKET_TICKS) as usize).min(BUCKETS - 1);
        if let Some(c) = self.counts.get_mut(i) {
            *c = c.saturating_add(1);
        }
        self.frames = self.frames.saturating_add(1);
        self.sum = self.sum.saturating_add(u64::from(ticks));
        self.max = self.max.max(ticks);
    }

    /// Adds `other`'s frames (counters saturate).
    pub(crate) fn merge(&mut self, other: &Self) {
        for (c, &o) in self.counts.iter_mut().zip(other.counts.iter()) {
            *c = c.saturating_add(o);
        }
        self.frames = self.frames.saturating_add(other.frames);
        self.sum = self.sum.saturating_add(other.sum);
        self.max = self.max.max(other.max);
    }

    /// Forgets every frame, in place (no 1 KiB temporary on the stack).
    pub(crate) fn clear(&mut self) {
        self.counts.fill(0);
        self.frames = 0;
        self.sum = 0;
        self.max = 0;
    }

    /// Frames counted.
    #[must_use]
    pub(crate) const fn frames(&self) -> u64 {
        self.frames
    }

    /// The mean instructions per frame, rounded down (0 with no frames).
    #[must_use]
    pub(crate) const fn mean(&self) -> u64 {
        match insns(self.sum).checked_div(self.frames) {
            Some(m) => m,
            None => 0,
        }
    }

    /// The largest frame's instructions.
    #[must_use]
    pub(crate) const fn max(&self) -> u32 {
        insns(self.max as u64) as u32
    }

    /// Frames of `insns` instructions or more, exactly when `insns` is a multiple of
    /// [`BUCKET_INSNS`] up to the last bucket's first value (else an upper bound:
    /// the frames of the bucket holding `insns`, or of the last bucket, count too).
    #[must_use]
    pub(crate) fn frames_from(&self, insns: u32) -> u64 {
        let first = ((insns / BUCKET_INSNS) as usize).min(BUCKETS - 1);
        self.counts.iter().skip(first).map(|&c| u64::from(c)).sum()
    }

    /// An upper bound on the nearest-rank percentile (the smallest count `c` such
    /// that at least `per_mille`/1000 of the frames took `c` instructions or fewer):
    /// the last value of its bucket, or the maximum when that is lower or the rank
    /// falls in the overflow bucket; 0 with no frames.
    #[must_use]
    pub(crate) fn percentile(&self, per_mille: u32) -> u32 {
        let per_mille = u64::from(per_mille.min(1000));
        // Nearest rank: ⌈q·n⌉, at least 1.
        let rank = (per_mille * self.frames).div_ceil(1000).max(1);
        let mut seen = 0u64;
        for (t, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return if t == BUCKETS - 1 {
                    self.max()
                } else {
                    (t as u32 * BUCKET_INSNS + BUCKET_INSNS - 1).min(self.max())
                };
            }
        }
        self.max()
    }
}
