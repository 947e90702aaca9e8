//! The per-frame cost distribution the firmware keeps and prints at the end.
//!
//! The monitor's budget is stated per frame at the tail, not only on average: at
//! 100 Mbit/s of minimum-size frames (148 810 frames/s) a 168 MHz Cortex-M4 has
//! 1 129 cycles per frame, and a frame that takes longer eats into the next one's
//! time while the LAN9118's RX FIFO fills. So the firmware counts every frame's
//! SysTick ticks in a linear histogram at the timer's own resolution and reports
//! the 50th, 99th and 99.9th percentiles and the maximum.
//!
//! The firmware keeps one histogram per epoch (logged and folded into the run's at
//! each epoch close, then cleared): a traffic class fed as whole epochs gets its own
//! figures, and the per-frame path records into one histogram only.
//!
//! Memory: `4 · BUCKETS` bytes of counters (1 KiB) plus 16 bytes. One bucket per
//! tick value up to `BUCKETS − 2`; the last bucket counts every frame at or above
//! `BUCKETS − 1` ticks, whose exact cost only the maximum keeps. A percentile that
//! falls in that last bucket is reported as the maximum (an upper bound).
//!
//! The module has no dependency, so host tests include it by path
//! (`tests/tests/firmware_cost_hist.rs`).

/// Counters: 256 ticks = 10 240 instructions at 40 instructions per tick, about
/// 2.5× the worst frame the demo has shown.
pub(crate) const BUCKETS: usize = 256;

/// Per-frame ticks: a histogram, their sum and their maximum. Counters saturate.
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

    /// Counts one frame that took `ticks`.
    #[inline]
    pub(crate) fn record(&mut self, ticks: u32) {
        let i = (ticks as usize).min(BUCKETS - 1);
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

    /// Sum of all frames' ticks.
    #[must_use]
    pub(crate) const fn sum(&self) -> u64 {
        self.sum
    }

    /// The largest frame's ticks.
    #[must_use]
    pub(crate) const fn max(&self) -> u32 {
        self.max
    }

    /// The smallest tick count `t` such that at least `per_mille`/1000 of the
    /// frames took `t` ticks or fewer (the nearest-rank percentile), or the
    /// maximum when that rank falls in the overflow bucket; 0 with no frames.
    #[must_use]
    pub(crate) fn percentile(&self, per_mille: u32) -> u32 {
        let per_mille = u64::from(per_mille.min(1000));
        // Nearest rank: ⌈q·n⌉, at least 1.
        let rank = (per_mille * self.frames).div_ceil(1000).max(1);
        let mut seen = 0u64;
        for (t, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return if t == BUCKETS - 1 { self.max } else { t as u32 };
            }
        }
        self.max
    }
}
