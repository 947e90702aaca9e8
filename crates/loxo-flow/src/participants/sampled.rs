//! [`SampledParticipants`]: a [`Participants`] fed by a monitor's first frames under
//! a per-frame cost budget — pairs sampled by a keyed draw, the level raised when
//! the epoch's sampled pairs outrun the budget, the estimates scaled back.

use loxo_core::mix64;

use super::{Participants, ParticipantsConfig, ParticipantsReport, REPORT_PHASES};
use crate::FlowKey;

/// The firmware's layout: ≈ 10.5 KiB ([`SampledParticipants::MEMORY_BYTES`] pins
/// it): fan-out and fan-in `Spreaders<IpAddr, 128, 8, 128>` (4 240 bytes each: 128
/// registers per key in a pool of 2 048, 128 cells), the vertical sketch
/// `Spreaders<Endpoints, 128, 8, 16>` (1 712 bytes: a pool as large, 16 cells —
/// a vertical scan is one (source, destination) with many ports, a large share of
/// the triples when it matters). Sized for the 1 000–2 000
/// sampled pairs a budget of one pair in 16 frames leaves in a 16 384-frame epoch:
/// what fits the firmware's RAM beside its monitor (`firmware/README.md`), with its
/// accuracy measured in `tests/participants_sampled.rs`.
pub type FirmwareParticipants = SampledParticipants<128, 8, 128, 8, 16>;

/// A [`Participants`] fed with a flow monitor's first frames of each flow
/// ([`FlowMonitor::feed_observing`](crate::FlowMonitor::feed_observing)), at a
/// bounded cost per frame.
///
/// # Sampling
///
/// A full [`observe`](Participants::observe) costs ≈ 270 Cortex-M4 instructions
/// (the destination's digest, the pair digest, three sketch updates): on a flood
/// of one-packet flows, where every frame is a flow's first, that doubles the
/// per-frame cost of a firmware. So each first frame draws a keyed 32-bit value
/// from the source's digest (which the monitor already has) and the destination,
/// `x = src ⊕ fold(dst)` (`fold` a polynomial in the address's words with odd
/// multipliers derived from the seed — multiplicative hashing: its high bits are
/// those compared), and a second from it and the destination port, `y = x ⊕
/// port·m` (about 12 instructions for both, IPv4); at **level** `s` the pair
/// (fan-out, fan-in) is counted when the first is below `2^(32−s)`, the triple
/// (vertical) when `y` is. Each distinct pair (triple) is thus kept or
/// dropped as a whole, with probability `2^−s`, whatever its frames: the sketches
/// hold a uniform `2^−s` sample of the distinct pairs, and the report scales every
/// figure by `2^s` and adds the sampling's binomial variance to its standard error
/// ([`ParticipantsReport::sampling`]).
///
/// The level follows a budget of sampled offers per frame, `2^−rate_shift`: an epoch
/// starts at the level its predecessor's offers call for (the lowest `s` at which
/// they would have used at most half the budget), and rises by one whenever the epoch's
/// sampled offers exceed `frames·2^−rate_shift +` [`SLACK`](Self::SLACK). A rise leaves the pairs
/// sampled before it at the lower level: that epoch's figures are biased upwards
/// (flagged: [`ParticipantsReport::sampling_rose`]); a steady stream keeps its level
/// and is unbiased. The cost per first frame is the draw (≈ 15 instructions) plus
/// `≈ 2·2^−s` of a full observe — with `rate_shift` = 4, at most about 17 + 15
/// instructions per frame on a flood of one-packet flows (measured in the firmware:
/// `firmware/README.md`).
///
/// The draws are keyed (the source's digest and the multipliers come from the
/// seed): without it no one can choose addresses that are never sampled.
///
/// # Memory
///
/// [`Participants`]' and 216 bytes: the level's state and four waiting offers of
/// 48 bytes ([`MEMORY_BYTES`](Self::MEMORY_BYTES)).
///
/// ```
/// use loxo_core::Seed;
/// use loxo_flow::{FlowKey, ParticipantsConfig, ParticipantsReport, SampledParticipants, Theta};
///
/// let seed = Seed::new(0x5eed, 0x1234); // a device's secret in practice
/// let config = ParticipantsConfig {
///     share: Theta::new(5, 100).unwrap(),
///     ..ParticipantsConfig::host(seed)
/// };
/// let mut p = Box::new(SampledParticipants::<128, 8, 128, 4, 32>::new(config, 4));
/// let mut r = ParticipantsReport::<8>::new();
/// for epoch in 0..2 {
///     // 16 384 first frames: a scanner's 12 000 probes among 4 384 ordinary flows.
///     for i in 0..16_384u32 {
///         let key = if i % 4 == 3 {
///             FlowKey::v4([10, 1, (i >> 8) as u8, i as u8], [192, 0, 2, 80], 50_000, 443, 6)
///         } else {
///             let [a, b, c, d] = (0x0a00_0000 + i).to_be_bytes();
///             FlowKey::v4([198, 51, 100, 1], [a, b, c, d], 40_000, 22, 6)
///         };
///         let src = p.participants().address_digest(key.src_bytes());
///         p.offer(&key, src, i + 1);
///     }
///     p.end_epoch(&mut r, 16_384);
/// }
/// // The second epoch starts at the level the first one ended at: unbiased.
/// assert!(r.sampling >= 3 && !r.sampling_rose);
/// let s = &r.scanners[0];
/// assert_eq!(s.address.to_string(), "198.51.100.1");
/// assert!(s.lower <= 12_288.0 && 12_288.0 <= s.upper);
/// ```
#[derive(Clone, PartialEq)]
pub struct SampledParticipants<
    const S: usize,
    const W: usize,
    const C: usize,
    const VW: usize,
    const VC: usize,
> {
    inner: Participants<S, W, C, VW, VC>,
    /// `fold`'s two odd multipliers (from the seed).
    mul: [u32; 2],
    /// A draw at most this is sampled: `u32::MAX >> level`.
    limit: u32,
    level: u8,
    /// The level the epoch started at.
    start_level: u8,
    /// `log2` of frames per sampled offer the budget allows.
    rate_shift: u8,
    /// This epoch's offers sampled (pair or triple).
    sampled: u32,
    /// The closed epoch's report in progress: its next phase and the epoch's
    /// frames (offers are ignored meanwhile).
    closing: Option<(u8, u64)>,
    /// Sampled offers whose sketch work waits for a quiet frame
    /// ([`idle`](Self::idle)): `waiting[..queued]`.
    waiting: [Waiting; WAITING],
    queued: u8,
}

/// A sampled offer whose sketch work waits ([`SampledParticipants::idle`]): the flow,
/// its source's digest and what was sampled (bit 0 the pair, bit 1 the triple).
#[derive(Clone, Copy, PartialEq)]
struct Waiting {
    key: FlowKey,
    src: u32,
    parts: u8,
}

/// Sampled offers that may wait at once: an offer that finds them all waiting does
/// its own work at once. At the level's budget (one sampled offer in 16 frames) one
/// is rarely waiting when the next comes.
const WAITING: usize = 4;

/// Cells a candidate must hold to be estimated at the epoch's end
/// ([`Spreaders::report_screened`](loxo_spread::Spreaders::report_screened)): a
/// report of every candidate took the firmware 1.7–1.9 M instructions under a flood
/// (a hundred singleton keys per sketch), longer than its receive FIFO can wait.
/// With 128 cells a key at 2 % of the pairs holds 2.6 cells on average and is
/// skipped with probability 27 %, one at 4 % with 3.7 %, at 6 % 0.5 %.
const MIN_CELLS: u32 = 2;

impl<const S: usize, const W: usize, const C: usize, const VW: usize, const VC: usize>
    SampledParticipants<S, W, C, VW, VC>
{
    /// Sampled offers allowed before the first rise, whatever the frame count: an
    /// epoch's first frames are not a rate yet.
    pub const SLACK: u32 = 64;

    /// The structure's size in bytes: `size_of::<Self>()`.
    pub const MEMORY_BYTES: usize = core::mem::size_of::<Self>();

    /// Empty sketches at level 0, a budget of one sampled offer per
    /// `2^rate_shift` frames (at most 31).
    #[must_use]
    pub const fn new(config: ParticipantsConfig, rate_shift: u8) -> Self {
        let b = config.seed.to_bytes();
        let k = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            ^ u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        let m = mix64(k ^ 0x7361_6d70_6c65_7221);
        Self {
            inner: Participants::<S, W, C, VW, VC>::new(config),
            mul: [(m as u32) | 1, ((m >> 32) as u32) | 1],
            limit: u32::MAX,
            level: 0,
            start_level: 0,
            rate_shift: if rate_shift > 31 { 31 } else { rate_shift },
            sampled: 0,
            closing: None,
            waiting: [Waiting {
                key: FlowKey::v4([0; 4], [0; 4], 0, 0, 0),
                src: 0,
                parts: 0,
            }; WAITING],
            queued: 0,
        }
    }

    /// The same sketches starting at sampling level `level` (at most 31) instead of
    /// 0: for a device that must keep its per-frame budget from its first frame on,
    /// whatever its traffic. At level `rate_shift + 1` even a flood of one-packet
    /// flows — every frame a first frame, each sampled with probability about
    /// `2·2^−level` — samples about one offer per `2^rate_shift` frames, the budget,
    /// so the level need not rise in the first epoch (it rises if the draws run
    /// [`SLACK`](Self::SLACK) offers ahead: over a 16 384-frame flood, about 2.5
    /// binomial σ). The price: the first epoch's
    /// figures come from fewer pairs (a wider σ, still unbiased); the epochs after
    /// it plan their level from the offers as before.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::{FirmwareParticipants, ParticipantsConfig};
    ///
    /// let config = ParticipantsConfig::device(Seed::new(1, 2));
    /// let p = Box::new(FirmwareParticipants::new(config, 4).starting_at(5));
    /// assert_eq!(p.level(), 5);
    /// ```
    #[must_use]
    pub const fn starting_at(mut self, level: u8) -> Self {
        let level = if level > 31 { 31 } else { level };
        self.level = level;
        self.start_level = level;
        self.limit = u32::MAX >> level;
        self
    }

    /// The sketches — without the sampled offers still waiting
    /// ([`waiting`](Self::waiting); [`flush`](Self::flush) does them).
    #[must_use]
    pub const fn participants(&self) -> &Participants<S, W, C, VW, VC> {
        &self.inner
    }

    /// The running epoch's sampling level.
    #[must_use]
    pub const fn level(&self) -> u8 {
        self.level
    }

    /// Offers a flow's first frame of the epoch: `src` is the source's digest
    /// ([`Participants::address_digest`]), `frames` the epoch's frames so far (the
    /// arguments [`FlowMonitor::feed_observing`](crate::FlowMonitor::feed_observing)
    /// passes, the count saturated to 32 bits). Repeats of a flow change nothing but the cost.
    ///
    /// Inlined: the draws and their comparison (a dozen instructions for IPv4);
    /// the sampled offers' work is out of line. A sampled offer's **sketch work** (the
    /// destination's digest, the pair digest, three sketch updates: about 250
    /// Cortex-M4 instructions) waits for a quiet frame — the caller's
    /// [`idle`](Self::idle) — up to four at once; an offer that finds four waiting
    /// does its own at once. The level's bookkeeping is not put off. Nothing a report
    /// says depends on when the work is done: the sketches keep register maxima and
    /// cells decided by each pair's hash, whatever the order, and
    /// [`flush`](Self::flush), [`close`](Self::close) and
    /// [`end_epoch`](Self::end_epoch) do every waiting offer first.
    #[inline(always)]
    pub fn offer(&mut self, key: &FlowKey, src: u32, frames: u32) {
        let (x, y) = self.draws(key, src);
        if x > self.limit && y > self.limit {
            return;
        }
        self.offered(key, src, frames, x, y);
    }

    /// The pair's and the triple's draws.
    #[inline(always)]
    fn draws(&self, key: &FlowKey, src: u32) -> (u32, u32) {
        let x = src ^ fold(key.dst_bytes(), self.mul);
        (x, x ^ u32::from(key.dst_port()).wrapping_mul(self.mul[1]))
    }

    /// The sampled part of [`offer`](Self::offer), out of line (a few per cent of
    /// the offers at a steady level), given the draws `offer` made (computed again,
    /// they cost an IPv6 offer about 20 instructions).
    #[inline(never)]
    fn offered(&mut self, key: &FlowKey, src: u32, frames: u32, x: u32, y: u32) {
        if self.closing.is_some() {
            return;
        }
        self.sampled = self.sampled.saturating_add(1);
        // In 32 bits: `frames >> rate_shift` plus the slack fits.
        let budget = (frames >> self.rate_shift).saturating_add(Self::SLACK);
        if self.sampled > budget && self.level < 31 {
            self.level += 1;
            self.limit = u32::MAX >> self.level;
        }
        let parts = u8::from(x <= self.limit) | u8::from(y <= self.limit) << 1;
        if parts == 0 {
            return;
        }
        match self.waiting.get_mut(usize::from(self.queued)) {
            Some(w) => {
                w.key = *key;
                w.src = src;
                w.parts = parts;
                self.queued += 1;
            }
            None => self.observe(key, src, parts),
        }
    }

    /// A sampled offer's sketch work.
    #[inline(always)]
    fn observe(&mut self, key: &FlowKey, src: u32, parts: u8) {
        let dst = self.inner.address_digest(key.dst_bytes());
        self.inner
            .observe_parts(key, src, dst, parts & 1 != 0, parts & 2 != 0);
    }

    /// A quiet frame — one that took none of a monitor's costly steps (no filing, no
    /// admission, no deferred heap sift:
    /// [`FlowMonitor::feed_observing_idle`](crate::FlowMonitor::feed_observing_idle)
    /// calls it there) — does the sketch work of one waiting sampled offer: so that a
    /// sampled offer's work never adds to a filing's on one frame (the costliest
    /// frames of ordinary traffic on a Cortex-M4, whose offers all come on filed
    /// frames: issue 27). Inlined: a load and a branch when nothing waits.
    #[inline(always)]
    pub fn idle(&mut self) {
        if self.queued != 0 {
            self.work_one();
        }
    }

    /// Sampled offers whose sketch work is waiting (at most four).
    #[must_use]
    pub const fn waiting(&self) -> usize {
        self.queued as usize
    }

    /// Does the sketch work of every waiting sampled offer.
    pub fn flush(&mut self) {
        while self.queued != 0 {
            self.work_one();
        }
    }

    /// The sketch work of the last waiting offer.
    #[inline(never)]
    fn work_one(&mut self) {
        let Some(n) = self.queued.checked_sub(1) else {
            return;
        };
        self.queued = n;
        if let Some(&Waiting { key, src, parts }) = self.waiting.get(usize::from(n)) {
            self.observe(&key, src, parts);
        }
    }

    /// Closes the epoch of `frames` frames: fills `out` with its scanners and victims
    /// at full scale, empties the sketches and plans the next epoch's level from this
    /// one's sampled offers ([`close`](Self::close), then
    /// [`report_step`](Self::report_step) until it is done).
    pub fn end_epoch<const R: usize>(&mut self, out: &mut ParticipantsReport<R>, frames: u64) {
        self.close(frames);
        while !self.report_step(out) {}
    }

    /// Closes the epoch of `frames` frames without reporting it yet: the offers that
    /// follow are ignored until [`report_step`](Self::report_step) has filled the
    /// report and emptied the sketches. A device that cannot spend the whole report's
    /// time between two frames (a few hundred thousand instructions on a Cortex-M4
    /// under a flood) runs one step per frame after the close: the next epoch then
    /// misses the offers of its first few frames (one per step, five steps).
    pub fn close(&mut self, frames: u64) {
        self.flush();
        self.closing = Some((0, frames));
        // No draw is at most 0 but 0 itself: `offer` leaves at once.
        self.limit = 0;
    }

    /// Whether a closed epoch's report is in progress.
    #[must_use]
    pub const fn reporting(&self) -> bool {
        self.closing.is_some()
    }

    /// Runs the next part of the closed epoch's report into `out` (the same `out`
    /// every step); returns `true` when the report is complete — the sketches are
    /// then empty and take offers again — or when no epoch was closed.
    pub fn report_step<const R: usize>(&mut self, out: &mut ParticipantsReport<R>) -> bool {
        let Some((phase, frames)) = self.closing else {
            return true;
        };
        self.inner.report_phase(out, self.level, MIN_CELLS, phase);
        if phase + 1 < REPORT_PHASES {
            self.closing = Some((phase + 1, frames));
            return false;
        }
        out.sampling = self.level;
        out.sampling_rose = self.level > self.start_level;
        self.inner.end_epoch_cleared();
        // The epoch's offers, estimated from those sampled: about `2·offers·2^−s`
        // are sampled at level `s` (pair or triple). Planned for half the budget: the
        // level's binomial spread and a little growth then stay below it, and a
        // steady stream keeps its level.
        let offers2 = u64::from(self.sampled) << self.level;
        let budget = (frames >> self.rate_shift).saturating_add(u64::from(Self::SLACK));
        let mut s = 0u8;
        while s < 31 && (2 * offers2) >> s > budget {
            s += 1;
        }
        self.level = s;
        self.start_level = s;
        self.limit = u32::MAX >> s;
        self.sampled = 0;
        self.closing = None;
        true
    }
}

/// The destination's words folded into one: a polynomial with the seed's odd
/// multipliers (an IPv4 address: one multiply).
#[inline(always)]
fn fold(d: &[u8], m: [u32; 2]) -> u32 {
    let word = |i: usize| {
        d.get(i..i + 4)
            .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    if d.len() == 16 {
        let x = (word(0).wrapping_mul(m[0]) ^ word(4)).wrapping_mul(m[1]);
        (x ^ word(8)).wrapping_mul(m[0]) ^ word(12).wrapping_mul(m[1])
    } else {
        word(0).wrapping_mul(m[0])
    }
}

impl<const S: usize, const W: usize, const C: usize, const VW: usize, const VC: usize>
    core::fmt::Debug for SampledParticipants<S, W, C, VW, VC>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SampledParticipants")
            .field("inner", &self.inner)
            .field("level", &self.level)
            .field("start_level", &self.start_level)
            .field("rate_shift", &self.rate_shift)
            .field("closing", &self.closing)
            .field("sampled", &self.sampled)
            .field("waiting", &self.queued)
            .finish_non_exhaustive()
    }
}
