//! `FlowMonitor`: per-epoch elephants with bounds, distinct counts and parse statistics.
//! Its configuration is in `config`, the report it fills (and the report's order) in
//! `report`; this module holds the monitor's state and its per-frame and end-of-epoch
//! steps.

use loxo_bloom::RegisterBloom;
use loxo_cms::{CmsPair, SpaceSaving, TopK};
use loxo_core::{HalfSipKey, SipKey};
use loxo_hll::Hll;

use loxo_core::DecodeError;

mod config;
mod new_flows;
mod report;
#[cfg(test)]
mod tests;

pub use config::{Config, ConfigError, EpochPolicy, ShareOf};
pub use report::{Bounds, Elephant, Report, MAX_BLOCKLISTED};

use new_flows::NewFlows;
use report::place;

use crate::{
    parse_frame_captured_weighted, parse_frame_weighted, Blocklist, ByteWeight, CapturedError,
    FlowKey, ParseError, Parsed, Theta,
};

/// Flows the default monitor tracks as elephant candidates, and rows of the default
/// report: `N` of [`FlowMonitor<N>`] and [`Report<N>`]. Every flow holding at least
/// `1/N` of an epoch is tracked, so `θ_min = 1/256 ≈ 0.39 %`.
pub const DEFAULT_CANDIDATES: usize = 256;

/// Width of the flow sketch ([`FlowSketch`]): ε = e/848 ≈ 0.32 % of an epoch's total
/// of each measure.
pub const SKETCH_W: usize = 848;

/// Depth of the [`FlowSketch`]: δ = e⁻³ ≈ 5 % per queried flow and measure.
pub const SKETCH_D: usize = 3;

/// Count-Min sketch of both measures of every flow (bytes and packets), conservative
/// update, rows shared ([`CmsPair`]): 848 × 3 cells of two `u32` (19.9 KiB).
///
/// * The **ranking** measure's estimate (bytes when θ is a share of bytes) is an upper
///   bound on a flow's weight that always holds: it gates admission into the
///   candidates ([`SpaceSaving::update_bounded`]: a flow no heavier than the smallest
///   candidate is not admitted, which keeps every Space-Saving guarantee and spares
///   most mice an eviction) and tightens the candidates' upper bounds.
/// * The **other** measure's estimate (packets when θ is a share of bytes) is an
///   upper bound that always holds; minus `⌈ε·N⌉` (`N` the epoch's total of that
///   measure) it is a lower bound with probability ≥ 1 − e⁻³ ≈ 95 % per flow (rows
///   are independent: `loxo_core::RowHashes`).
///
/// One update per frame raises both measures (one index computation per row, not
/// one per row and measure): on a Cortex-M4 it replaced a 1024 × 2 sketch of the
/// ranking measure and a 1024 × 3 sketch of the other, in about as many bytes.
pub type FlowSketch = CmsPair<SKETCH_W, SKETCH_D>;

/// Precision of the distinct-flow sketch: `P = 14`, 12 KiB, relative standard error
/// 1.04/√16384 ≈ 0.81 % — Redis's geometry, so a device's per-epoch flow sketch can be
/// shipped to a collector and exported as a Redis HyperLogLog (see `loxo export`).
pub const FLOWS_P: u8 = 14;

/// Precision of the distinct-source sketch: `P = 10`, 768 bytes, relative standard
/// error 1.04/√1024 ≈ 3.3 %.
pub const SOURCES_P: u8 = 10;

/// 64-bit words of each new-flow filter: 768 words = 6 KiB = 49 152 bits.
pub const NEW_FLOW_WORDS: usize = 768;

/// Bits per flow of the new-flow filters, all in one word (optimal for a register-
/// blocked filter at 10–12 bits per flow).
pub const NEW_FLOW_K: u32 = 5;

/// Design load of a new-flow filter: 4 000 flows per epoch (12.3 bits per flow; the
/// filter's exact theory gives a false-positive rate of 0.96 % there, pinned by a
/// test). Past it, [`Report::new_flows_overloaded`] is set, distinct sources are
/// counted from every frame instead of first frames, and the new-flow count becomes a
/// wider estimate (its σ in [`Report::new_flows_sigma`]).
pub const NEW_FLOW_CAPACITY: u32 = 4_000;

/// The new-flow filter: a register-blocked Bloom filter (one 64-bit word per flow:
/// one load and a mask compare per frame).
pub type NewFlowFilter = RegisterBloom<NEW_FLOW_WORDS, NEW_FLOW_K>;

/// What [`FlowMonitor::feed_burst`] did with a burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fed {
    /// Frames of the burst fed (all of them unless the epoch filled first).
    pub frames: usize,
    /// The last frame fed closed the epoch: call [`FlowMonitor::end_epoch`] before
    /// feeding the rest.
    pub epoch_full: bool,
}

/// Offset of the EtherType, the first bytes of a frame [`parse_frame`](crate::parse_frame) reads.
const ETHERTYPE_AT: usize = 12;

/// Elephant-flow monitor: parse → one `Seed::hash` → Space-Saving candidates of the
/// ranking measure (bytes or packets, [`Config::share_of`]) plus a Count-Min sketch of
/// each measure, HLL of flows and of sources, new-flow filters, per-reason error
/// counters.
///
/// # Recall 1 at every accepted θ
///
/// The candidates are a Space-Saving summary of `N` flows ([`SpaceSaving`], Metwally
/// et al. 2005) over the ranking measure, reset every epoch, gated by the
/// [`FlowSketch`]'s ranking measure ([`SpaceSaving::update_gated`]). With `T` the epoch's total, `S`
/// the sum of the `N` counts and `m` the smallest count, a flow `x` the summary does
/// not track at epoch end has true weight `f < T/N`:
///
/// * *gated out*: its last frame was skipped because its upper bound was `≤` the
///   minimum then, so `f ≤ m` (minima only grow). A skipped frame adds its weight
///   `w ≥ 1` to `T` and nothing to `S`, and an admitted one adds at most `w` to `S`
///   (`count = min(upper, m + w)`), so `N·m ≤ S ≤ T − 1 < T`;
/// * *evicted*: its count `c ≥ f` was the minimum when a flow took its slot with
///   `count > c` (`upper > c` and `c + w > c`); a slot's count never decreases (an
///   eviction replaces the minimum with more), so at epoch end that slot holds more
///   than `c` and every other at least `m ≥ c`: `N·f ≤ N·c < S ≤ T`.
///
/// So every flow with `f ≥ T/N` is a candidate — at `θ = θ_min = 1/N` exactly too
/// (0.39 % for the default `N` = 256). At epoch end the monitor reports every
/// candidate whose upper bound reaches `⌈θ·T⌉` (the true `f ≥ θ·T` implies it), and
/// the [`Report<N>`] has a row for each of the `N` candidates: nothing is left out.
/// (At most `⌊1/θ⌋ ≤ N` flows can have an upper bound `≥ θ·T` under
/// [`EpochPolicy::Reset`], since the counts sum to at most `T`.) A monitor refuses a θ
/// below `θ_min` ([`try_new`](FlowMonitor::try_new) returns
/// [`ConfigError::ThetaBelowMin`]); [`Config::min_volume`] only raises the threshold.
///
/// With [`EpochPolicy::Halve`] the counts carry the decayed weight of earlier epochs
/// while θ is a share of this epoch's total, so recall is not guaranteed; the report
/// says per epoch whether the certificate "every untracked flow is below the
/// threshold" held ([`Report::elephants_complete`], always true with `Reset`).
///
/// # Bounds
///
/// Ranking measure: `lower = count − error` (Space-Saving, always holds) and `upper =
/// min(count, FlowSketch's ranking estimate)` (both never under-count, so always
/// holds). Other measure: `upper` = the [`FlowSketch`]'s other estimate (always holds), `lower =
/// upper − ⌈ε·N⌉` (holds with probability ≥ 1 − e⁻³). An elephant is *certain* when
/// its ranking lower bound reaches θ, *possible* otherwise. θ is an exact fraction
/// ([`Theta`]): shares are compared in integers, inclusive.
///
/// # Memory and cost
///
/// `N·72 + 8` (candidates and their map of admitted digests) + 19.9 KiB
/// (the flow sketch) + 12 KiB + 768 (HLLs) + 12 KiB (filters) + about 360 bytes; the default
/// is reported by [`FlowMonitor::memory_bytes`]: 65 232 bytes ≤ 64 KiB (pinned by a
/// test), 56 016 at `N` = 128. The [`Report<N>`] it fills is another `96·N + 992`.
/// Per frame: one parse, one HalfSipHash-1-3 of the 13/37-byte key (from a
/// precomputed [`HalfSipKey`]: 32-bit rounds, see its docs for the seed's secrecy),
/// one 3-row update of the flow sketch (both measures), and a bit of the map of digests admitted
/// into the candidates this epoch (with [`EpochPolicy::Reset`]): when it is set, one
/// Space-Saving probe (a candidate's frame stops there); for a frame of a flow that
/// is not a candidate (every frame with `Halve`) also the gate (that update's
/// ranking estimate; the Space-Saving probe only when the flow passes it), a heap sift or an
/// eviction when the order breaks, one HLL insert and one register-blocked Bloom
/// insert (one word: a load and a mask compare); on a flow's first frame of the
/// epoch (every frame once the filter is past its design load or sampling) also a
/// register-Bloom `contains`, the new-flow weight (two popcounts, two table loads
/// and a division) and the source's digest (4 rounds from the flow digest's state) + HLL insert (and with a blocklist the
/// destination's digest and one or two filter lookups). At epoch end
/// one digest per flow whose count reaches θ.
///
/// ```
/// use loxo_core::Seed;
/// use loxo_flow::{Config, FlowMonitor, Report};
/// // The seed is the device's secret (provisioned; this one is the example's).
/// let mut m = FlowMonitor::new(Config::with_seed(Seed::new(0x5eed, 1)));
/// let mut frame = [0u8; 60];
/// frame[12..14].copy_from_slice(&[0x08, 0x00]);
/// frame[14] = 0x45;
/// frame[17] = 46; // total length 46
/// frame[23] = 17; // UDP
/// m.feed(&frame);
/// let mut r = Report::default();
/// m.end_epoch(&mut r);
/// assert_eq!((r.packets, r.bytes), (1, 60));
/// assert_eq!(r.elephants.len(), 1);
/// let e = &r.elephants[0];
/// assert!(e.certain && e.bytes.is_exact() && e.bytes.upper == 60);
/// assert!(r.elephants_complete);
/// ```
#[derive(Clone, Debug)]
pub struct FlowMonitor<const N: usize = DEFAULT_CANDIDATES> {
    config: Config,
    /// Elephant candidates by the ranking measure.
    top: SpaceSaving<FlowKey, N>,
    /// Which candidates were admitted this epoch, as bits `admitted_bit(digest)`
    /// (16·N bits; cleared with the candidates): a flow whose bit is clear was
    /// never a candidate, and its frame skips the candidates' index probe. Only with
    /// [`EpochPolicy::Reset`].
    admitted: [AdmitWord; N],
    /// Count-Min sketch of both measures (`[ranked, other]` cells).
    sketch: FlowSketch,
    /// With [`EpochPolicy::Halve`], the other measure's total the sketch carries
    /// from earlier epochs (halved with it); 0 with `Reset`.
    carried_other: u64,
    flows: Hll<FLOWS_P>,
    sources: Hll<SOURCES_P>,
    /// This epoch's and the last epoch's flows, and the new-flow estimate.
    new: NewFlows,
    /// Addresses whose flows are counted and listed apart (in flash, `'static`).
    blocklist: Option<Blocklist<'static>>,
    /// The seed's HalfSipHash key, derived once (the flow's and the source's digests
    /// start there).
    sip: HalfSipKey,
    /// The seed's SipHash-1-3 state (the blocklist's digests of the endpoints).
    block_sip: SipKey,
    /// This epoch's distinct sources are SipHash digests (a blocklist was set when
    /// it began: one digest of the source serves both) rather than HalfSipHash ones;
    /// fixed for the epoch, so a blocklist set or removed in its middle never counts
    /// a source under two digests.
    sources_sip: bool,
    /// Flows this epoch with a blocklisted endpoint.
    blocklisted_flows: u64,
    /// The same flows' inclusion weights: the estimate past the new-flow filter's
    /// design load ([`Report::blocklisted_estimate`]).
    blocklisted_weights: new_flows::FiledSum,
    epoch: u32,
    frames: u64,
    /// Frames whose headers the capture's snap length cut
    /// ([`feed_captured`](Self::feed_captured)). The epoch's packets are not counted
    /// per frame: they are the frames less these, `not_ip` and the errors.
    snapped: u64,
    bytes: u64,
    fragments: u64,
    not_ip: u64,
    errors: [u64; ParseError::COUNT],
}

impl FlowMonitor {
    /// A monitor with [`DEFAULT_CANDIDATES`] candidates. `const`, so a firmware can
    /// place it in a `static` without building it on its stack first. A θ from user
    /// input goes through [`try_new`](Self::try_new) instead.
    ///
    /// # Panics
    /// When `config.theta` is below [`THETA_MIN`](Self::THETA_MIN) = 1/256. In a
    /// `static` or `const` that is a compile-time error (E0080):
    ///
    /// ```compile_fail,E0080
    /// use loxo_flow::{Config, FlowMonitor, Theta};
    /// static M: FlowMonitor = FlowMonitor::new(Config {
    ///     theta: match Theta::new(1, 1000) { Some(t) => t, None => panic!() },
    ///     ..Config::with_seed(loxo_core::Seed::new(1, 2))
    /// });
    /// ```
    #[must_use]
    pub const fn new(config: Config) -> Self {
        Self::with_candidates(config)
    }

    /// A monitor with [`DEFAULT_CANDIDATES`] candidates, or why `config` is refused.
    ///
    /// ```
    /// use loxo_flow::{Config, ConfigError, FlowMonitor, Theta};
    /// let config = Config::with_seed(loxo_core::Seed::new(1, 2));
    /// let theta = Theta::parse("0.1%").unwrap();
    /// let err = FlowMonitor::try_new(Config { theta, ..config }).unwrap_err();
    /// assert_eq!(err, ConfigError::ThetaBelowMin { theta, theta_min: <FlowMonitor>::THETA_MIN });
    /// assert_eq!(
    ///     err.to_string(),
    ///     "theta 0.001 is below theta_min 0.00390625 (1/256): a monitor with 256 \
    ///      candidates lists every elephant only at theta >= 1/256"
    /// );
    /// assert!(FlowMonitor::try_new(Config { theta: <FlowMonitor>::THETA_MIN, ..config }).is_ok());
    /// ```
    ///
    /// # Errors
    /// [`ConfigError::ThetaBelowMin`] when `config.theta` < 1/256.
    pub const fn try_new(config: Config) -> Result<Self, ConfigError> {
        Self::try_with_candidates(config)
    }
}

impl<const N: usize> FlowMonitor<N> {
    /// The smallest θ the monitor accepts, `1/N`: every flow holding at least `1/N` of
    /// an epoch is tracked (see [`FlowMonitor`]), and the [`Report<N>`] has room for every candidate.
    pub const THETA_MIN: Theta = match Theta::new(1, N as u64) {
        Some(t) => t,
        None => panic!("FlowMonitor<N>: N must be at least 1"),
    };

    /// Whether a monitor of `N` candidates accepts `config`: `θ ≥ 1/N`, compared
    /// exactly (`num·N ≥ den`).
    ///
    /// # Errors
    /// [`ConfigError::ThetaBelowMin`].
    pub const fn check(config: &Config) -> Result<(), ConfigError> {
        let t = config.theta;
        if (t.num() as u128) * (N as u128) < t.den() as u128 {
            Err(ConfigError::ThetaBelowMin {
                theta: t,
                theta_min: Self::THETA_MIN,
            })
        } else {
            Ok(())
        }
    }

    /// A monitor tracking `N` candidates (`θ_min = 1/N`, `70·N` bytes of them), or why
    /// `config` is refused ([`check`](Self::check)).
    ///
    /// # Errors
    /// [`ConfigError::ThetaBelowMin`] when `config.theta` < 1/N.
    pub const fn try_with_candidates(config: Config) -> Result<Self, ConfigError> {
        match Self::check(&config) {
            Ok(()) => Ok(Self::build(config)),
            Err(e) => Err(e),
        }
    }

    /// A monitor tracking `N` candidates (`θ_min = 1/N`, `70·N` bytes of them).
    /// `const`, for a `static`; a θ from user input goes through
    /// [`try_with_candidates`](Self::try_with_candidates).
    ///
    /// # Panics
    /// When `config.theta` is below [`THETA_MIN`](Self::THETA_MIN) = 1/N: in a
    /// `static` or `const`, a compile-time error (E0080).
    ///
    /// ```compile_fail,E0080
    /// use loxo_flow::{Config, FlowMonitor};
    /// // θ = 1 % needs at least 100 candidates.
    /// static M: FlowMonitor<64> =
    ///     FlowMonitor::with_candidates(Config::with_seed(loxo_core::Seed::new(1, 2)));
    /// ```
    #[must_use]
    pub const fn with_candidates(config: Config) -> Self {
        assert!(
            Self::check(&config).is_ok(),
            "FlowMonitor: Config::theta is below THETA_MIN = 1/N (use try_with_candidates for a theta from input)"
        );
        Self::build(config)
    }

    /// The monitor, `config` already checked.
    const fn build(config: Config) -> Self {
        Self {
            config,
            top: SpaceSaving::new(),
            admitted: [0; N],
            sketch: FlowSketch::new(config.seed),
            carried_other: 0,
            // Read through `estimate` and merged fleet-wide, never through the
            // martingale: not tracking it spares a software f64 division per register
            // change on a Cortex-M4F.
            flows: Hll::new(config.seed).without_martingale(),
            sources: Hll::new(config.seed).without_martingale(),
            new: NewFlows::new(config.seed, config.epoch_packets),
            blocklist: None,
            sip: HalfSipKey::new(config.seed),
            block_sip: SipKey::new(config.seed),
            sources_sip: false,
            blocklisted_flows: 0,
            blocklisted_weights: new_flows::FiledSum::ZERO,
            epoch: 0,
            frames: 0,
            snapped: 0,
            bytes: 0,
            fragments: 0,
            not_ip: 0,
            errors: [0; ParseError::COUNT],
        }
    }

    /// Checks each flow's source and destination against `blocklist` from now on
    /// (`None`: no blocklist), on the flow's first frame of each epoch;
    /// [`Report::blocklisted_flows`] counts the flows found,
    /// [`Report::blocklisted_estimate`] estimates them also past the new-flow
    /// filter's design load and [`Report::blocklisted`] lists the largest. The
    /// filter must be keyed with the
    /// monitor's [`Config::seed`] (`loxo build-filter --seed`).
    ///
    /// A blocklist holds SipHash-1-3 digests of addresses, the monitor's other
    /// digests are HalfSipHash-1-3 ([`HalfSipKey`]): from the next epoch (from now,
    /// if no frame was fed yet) the distinct sources are counted from the source's
    /// SipHash, which then also serves the blocklist. Cost on a flow's first frame:
    /// the source's SipHash instead of its HalfSipHash (about 245 Cortex-M4
    /// instructions instead of 86), the destination's SipHash and one or two filter
    /// lookups; at epoch end, the candidates' addresses are looked up to list the
    /// largest blocklisted flows (up to `2·N` digests).
    ///
    /// # Errors
    /// [`DecodeError::SeedMismatch`] when the blocklist was built under another seed
    /// (its digests would never match); the monitor keeps its previous blocklist.
    pub fn set_blocklist(
        &mut self,
        blocklist: Option<Blocklist<'static>>,
    ) -> Result<(), DecodeError> {
        if let Some(b) = &blocklist {
            if b.seed() != self.config.seed {
                return Err(DecodeError::SeedMismatch {
                    expected: self.config.seed.fingerprint(),
                    found: b.seed().fingerprint(),
                });
            }
        }
        if self.frames == 0 {
            self.sources_sip = blocklist.is_some();
        }
        self.blocklist = blocklist;
        Ok(())
    }

    /// The blocklist in use, if any.
    pub const fn blocklist(&self) -> Option<&Blocklist<'static>> {
        self.blocklist.as_ref()
    }

    /// The configuration.
    pub const fn config(&self) -> &Config {
        &self.config
    }

    /// Bytes of RAM the monitor occupies.
    pub const fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// The current epoch's distinct-flow sketch (keyed with [`Config::seed`]); valid until
    /// [`end_epoch`](Self::end_epoch) clears it. A device encodes it with
    /// `Hll::encode_into` before closing the epoch to ship it to a collector, where
    /// sketches of many devices and epochs merge into fleet-wide distinct counts.
    pub const fn flows(&self) -> &Hll<FLOWS_P> {
        &self.flows
    }

    /// The current epoch's top-k candidates (Space-Saving over flow keys, counts in
    /// the ranking measure); valid until [`end_epoch`](Self::end_epoch). A device
    /// encodes it with `SpaceSaving::encode_into::<38>` (the wire kind
    /// `space-saving`, keys as [`FlowKey`]'s 38 wire bytes) to ship it to a
    /// collector, where the summaries of many devices merge into a fleet top-k.
    pub const fn top(&self) -> &SpaceSaving<FlowKey, N> {
        &self.top
    }

    /// Frames fed this epoch so far (every frame, IP or not).
    pub const fn frames(&self) -> u64 {
        self.frames
    }

    /// For epochs closed by time ([`Config::epoch_packets`] = 0): the frames this epoch
    /// will hold at its present pace — its [`frames`](Self::frames) so far × the
    /// interval ÷ the time elapsed, as `loxo probe --interval` gives it every 256
    /// frames. A flood's new-flow filter plans its sampling level from the pace, as
    /// with a configured length, so that the filter ends the epoch sparse and the next
    /// epoch's new-flow count keeps its σ (without it the second epoch of a long flood
    /// that began unplanned has σ 2.3–3.0 % of the new flows, from ≤ 0.95 %: the
    /// `new_flows` module docs). Kept until changed, so the last epoch's pace serves the
    /// next epoch's start; 0 forgets it. Ignored when the length is configured.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::{Config, FlowMonitor};
    /// let mut m = FlowMonitor::new(Config::with_seed(Seed::new(1, 2))); // closed by time
    /// m.set_epoch_pace(3_000_000); // 50 000 frames/s over a 60 s interval
    /// ```
    pub fn set_epoch_pace(&mut self, frames: u32) {
        if self.config.epoch_packets == 0 {
            self.new.set_epoch_frames(frames);
        }
    }

    /// Feeds one frame. Returns `true` when the configured packet count closes the epoch:
    /// the caller then calls [`FlowMonitor::end_epoch`]. The same as
    /// [`feed_captured`](Self::feed_captured)`(frame, frame.len())`.
    pub fn feed(&mut self, frame: &[u8]) -> bool {
        self.feed_as(frame, self.config.byte_weight)
    }

    /// Feeds a burst of frames in order, as [`feed`](Self::feed) would one by one, and
    /// stops after the frame that closes the epoch (the caller then calls
    /// [`end_epoch`](Self::end_epoch) and feeds the rest, `&frames[fed.frames..]`).
    ///
    /// The same counts as `feed`; what it adds is a prefetch
    /// ([`loxo_core::prefetch`]) of the Ethernet header of the frame two places ahead
    /// while this one is counted. On a host whose frames sit in a large receive ring
    /// or a capture (not in the data cache), a frame's first read is a cache miss
    /// that `feed` alone waits for; started early, it overlaps the work on the frames
    /// before it (see the crate README for the measured gain, `cargo bench -p
    /// loxo-bench --bench flow`). On targets without a stable prefetch intrinsic (a
    /// Cortex-M4, which has no data cache anyway) it is `feed` in a loop; the
    /// firmware feeds frame by frame.
    ///
    /// ```
    /// use loxo_flow::{Config, FlowMonitor, Report};
    ///
    /// let mut frame = [0u8; 60];
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]); // IPv4
    /// frame[14] = 0x45;
    /// frame[16..18].copy_from_slice(&46u16.to_be_bytes());
    /// frame[23] = 17; // UDP
    /// let ring = [frame; 5];
    ///
    /// let seed = loxo_core::Seed::new(1, 2);
    /// let mut m = FlowMonitor::new(Config { epoch_packets: 3, ..Config::with_seed(seed) });
    /// let mut report = Report::default();
    /// let mut rest = &ring[..];
    /// let mut epochs = 0;
    /// while !rest.is_empty() {
    ///     let fed = m.feed_burst(rest);
    ///     rest = &rest[fed.frames..];
    ///     if fed.epoch_full {
    ///         m.end_epoch(&mut report);
    ///         epochs += 1;
    ///     }
    /// }
    /// assert_eq!((epochs, report.packets), (1, 3));
    /// m.end_epoch(&mut report);
    /// assert_eq!(report.packets, 2);
    /// ```
    pub fn feed_burst<F: AsRef<[u8]>>(&mut self, frames: &[F]) -> Fed {
        let weight = self.config.byte_weight;
        for (i, frame) in frames.iter().enumerate() {
            if let Some(ahead) = frames.get(i + 2) {
                if let Some(header) = ahead.as_ref().get(ETHERTYPE_AT..) {
                    loxo_core::prefetch(header);
                }
            }
            if self.feed_as(frame.as_ref(), weight) {
                return Fed {
                    frames: i + 1,
                    epoch_full: true,
                };
            }
        }
        Fed {
            frames: frames.len(),
            epoch_full: false,
        }
    }

    /// [`feed`](Self::feed) with the configuration's byte weight given by the caller,
    /// who must pass [`Config::byte_weight`] (checked in debug builds; in release the
    /// frame is weighed by `byte_weight`). A firmware whose configuration is a
    /// constant passes `CONFIG.byte_weight`, and the compiler drops the choice of
    /// length from the per-frame path: read from the monitor, it cost 17 Cortex-M4
    /// instructions per frame.
    #[inline(always)]
    pub fn feed_as(&mut self, frame: &[u8], byte_weight: ByteWeight) -> bool {
        debug_assert_eq!(
            byte_weight, self.config.byte_weight,
            "feed_as: not the configured weight"
        );
        let (share_of, policy, epoch) = (
            self.config.share_of,
            self.config.policy,
            self.config.epoch_packets,
        );
        self.count(
            share_of,
            policy,
            epoch,
            || parse_frame_weighted(frame, byte_weight),
            |_, _, _| {},
            || {},
        )
    }

    /// [`feed`](Self::feed) with the whole configuration given by the caller, who must
    /// pass the monitor's own ([`config`](Self::config); checked in debug builds). A
    /// firmware whose configuration is a `const` passes `&CONFIG`, and the compiler
    /// folds every choice the configuration makes (byte weight, share, epoch policy,
    /// epoch length) out of the per-frame path (20 Cortex-M4 instructions per frame
    /// on the firmware's blocklist demo, against [`feed_as`](Self::feed_as)).
    ///
    /// ```
    /// use loxo_flow::{Config, FlowMonitor, Report};
    ///
    /// const CONFIG: Config =
    ///     Config { epoch_packets: 2, ..Config::with_seed(loxo_core::Seed::new(1, 2)) };
    /// let mut m = FlowMonitor::new(CONFIG);
    /// let mut frame = [0u8; 60];
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]); // IPv4
    /// frame[14] = 0x45;
    /// frame[16..18].copy_from_slice(&46u16.to_be_bytes());
    /// frame[23] = 17; // UDP
    /// assert!(!m.feed_configured(&frame, &CONFIG));
    /// assert!(m.feed_configured(&frame, &CONFIG)); // the epoch's second frame closes it
    /// let mut r = Report::new();
    /// m.end_epoch(&mut r);
    /// assert_eq!(r.packets, 2);
    /// ```
    #[inline(always)]
    pub fn feed_configured(&mut self, frame: &[u8], config: &Config) -> bool {
        debug_assert_eq!(
            config, &self.config,
            "feed_configured: not the configuration"
        );
        self.count(
            config.share_of,
            config.policy,
            config.epoch_packets,
            || parse_frame_weighted(frame, config.byte_weight),
            |_, _, _| {},
            || {},
        )
    }

    /// [`feed_configured`](Self::feed_configured) that also hands `first` each flow's
    /// first frame of the epoch — every frame the monitor counts the source of: the
    /// first frames its new-flow filter calls new, and every frame while the filter is
    /// past its design load or sampling — with the source's 32-bit digest the monitor
    /// finished for its distinct-source sketch (the first output word of the HalfSipHash
    /// state after the source's words: [`Participants::address_digest`](crate::Participants::address_digest)
    /// of the source) and the epoch's frame count so far (this frame included). A
    /// [`SampledParticipants`](crate::SampledParticipants) is fed this way: repeats of
    /// a flow change nothing in it, so the first frames suffice.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::{Config, FlowMonitor, Participants, ParticipantsConfig};
    ///
    /// const SEED: Seed = Seed::new(0x5eed, 0x1234); // a device's secret in practice
    /// const CONFIG: Config = Config::with_seed(SEED);
    /// let mut m = FlowMonitor::new(CONFIG);
    /// let p = Box::new(Participants::<64, 8, 64, 4, 16>::new(ParticipantsConfig::host(SEED)));
    /// let mut frame = [0u8; 60];
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]); // IPv4
    /// frame[14] = 0x45;
    /// frame[16..18].copy_from_slice(&46u16.to_be_bytes());
    /// frame[23] = 17; // UDP
    /// frame[26..30].copy_from_slice(&[10, 0, 0, 1]);
    /// let mut firsts = Vec::new();
    /// for _ in 0..3 {
    ///     m.feed_observing(&frame, &CONFIG, |key, src, frames| firsts.push((*key, src, frames)));
    /// }
    /// assert_eq!(firsts.len(), 1); // the flow's first frame only
    /// assert_eq!(firsts[0].1, p.address_digest(&[10, 0, 0, 1]));
    /// assert_eq!(firsts[0].2, 1);
    /// ```
    #[inline(always)]
    pub fn feed_observing(
        &mut self,
        frame: &[u8],
        config: &Config,
        first: impl FnMut(&FlowKey, u32, u64),
    ) -> bool {
        self.feed_observing_idle(frame, config, first, || {})
    }

    /// [`feed_observing`](Self::feed_observing), and `idle()` called on every **quiet**
    /// frame: with [`EpochPolicy::Reset`] (the firmware's), a frame of a flow that is
    /// one of the candidates, whose count grew and nothing else ran — no new-flow
    /// filing, no admission, no Count-Min gate, no deferred sift of the heap finished
    /// ([`SpaceSaving::sift_waiting`](loxo_cms::SpaceSaving::sift_waiting)) — or a frame
    /// that was neither filed nor admitted into the candidates: the cheapest frames
    /// of the per-frame path. (With the other policies, every frame the new-flow
    /// filter knows: their updates do not say whether they admitted.) A device puts
    /// off work
    /// there that would otherwise fall on its costliest frames:
    /// [`SampledParticipants::idle`](crate::SampledParticipants::idle) does a waiting
    /// sampled offer's sketch work, so that no offer's work adds to a filing's
    /// (issue 27). `idle` is called before `first` (which a quiet frame never calls
    /// within the new-flow filter's design load).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::{Config, FlowMonitor};
    ///
    /// const CONFIG: Config = Config::with_seed(Seed::new(0x5eed, 0x1234));
    /// let mut m = FlowMonitor::new(CONFIG);
    /// let mut frame = [0u8; 60];
    /// frame[12..14].copy_from_slice(&[0x08, 0x00]); // IPv4
    /// frame[14] = 0x45;
    /// frame[16..18].copy_from_slice(&46u16.to_be_bytes());
    /// frame[23] = 17; // UDP
    /// let (mut firsts, mut quiet) = (0, 0);
    /// for _ in 0..3 {
    ///     m.feed_observing_idle(&frame, &CONFIG, |_, _, _| firsts += 1, || quiet += 1);
    /// }
    /// assert_eq!((firsts, quiet), (1, 2)); // filed and admitted (a push), then quiet twice
    /// ```
    #[inline(always)]
    pub fn feed_observing_idle(
        &mut self,
        frame: &[u8],
        config: &Config,
        first: impl FnMut(&FlowKey, u32, u64),
        idle: impl FnMut(),
    ) -> bool {
        debug_assert_eq!(
            config, &self.config,
            "feed_observing_idle: not the configuration"
        );
        self.count(
            config.share_of,
            config.policy,
            config.epoch_packets,
            || parse_frame_weighted(frame, config.byte_weight),
            first,
            idle,
        )
    }

    /// Feeds a frame of which a capture holds only the first bytes (`tcpdump -s N`):
    /// `captured` is the record's data, `wire_len` the frame's original length. Parsed
    /// by [`parse_frame_captured`](crate::parse_frame_captured) (the crate's snap-length rule): the flow weighs
    /// `wire_len` bytes. A frame whose headers the snap length cut
    /// ([`CapturedError::Snapped`]) counts in [`Report::frames`] only, so an epoch's
    /// `frames − packets − not_ip − Σ errors` is the number of such frames (0 with
    /// [`feed`](Self::feed)). Returns what [`feed`](Self::feed) returns.
    pub fn feed_captured(&mut self, captured: &[u8], wire_len: usize) -> bool {
        match parse_frame_captured_weighted(captured, wire_len, self.config.byte_weight) {
            Ok(p) => self.count(
                self.config.share_of,
                self.config.policy,
                self.config.epoch_packets,
                || Ok(p),
                |_, _, _| {},
                || {},
            ),
            Err(CapturedError::Malformed(e)) => self.count(
                self.config.share_of,
                self.config.policy,
                self.config.epoch_packets,
                || Err(e),
                |_, _, _| {},
                || {},
            ),
            Err(CapturedError::Snapped { .. }) => {
                self.frames = self.frames.saturating_add(1);
                self.snapped = self.snapped.saturating_add(1);
                self.epoch_full()
            }
        }
    }

    /// Whether the configured packet count closes the epoch.
    #[inline(always)]
    fn epoch_full(&self) -> bool {
        self.config.epoch_packets != 0 && self.frames >= u64::from(self.config.epoch_packets)
    }

    /// Counts one frame's parse outcome (the body of [`feed`](Self::feed)). The parse
    /// comes in as a closure so that `feed` still matches on `parse_frame(frame)`
    /// directly: given the parsed `Result` by value, the firmware spent 13 more
    /// instructions per frame (it was built in memory, then read back).
    #[inline(always)]
    fn count(
        &mut self,
        share_of: ShareOf,
        policy: EpochPolicy,
        epoch_packets: u32,
        parse: impl FnOnce() -> Result<Parsed, ParseError>,
        mut on_first: impl FnMut(&FlowKey, u32, u64),
        mut on_quiet: impl FnMut(),
    ) -> bool {
        self.frames = self.frames.saturating_add(1);
        match parse() {
            Ok(Parsed::Flow(f)) => {
                // The flow's digest, and the state its source's digest finishes from.
                let (h, src) = f.key.hash_and_source(&self.sip);
                let len = f.len;
                let (ranked, other) = match share_of {
                    ShareOf::Bytes => (u64::from(len), 1),
                    ShareOf::Packets => (1, u64::from(len)),
                };
                // An upper bound on the flow's weight so far gates its admission into
                // the candidates (`SpaceSaving::update_bounded`: a flow no heavier
                // than the smallest candidate skips the eviction, every Space-Saving
                // guarantee holds): the ranked sketch's estimate, or just this frame's
                // weight when the filter has certainly not seen the flow this epoch
                // (a Bloom filter has no false negatives) and nothing carries over
                // from earlier epochs.
                //
                // With `Reset`, a flow that is a candidate was admitted this epoch, on
                // a frame that went through the new-flow filter and the flows sketch:
                // the filter already holds it (it would answer "known" and set no
                // bit) and the sketch already counted it. So a candidate's frame
                // skips both (`update_gated` says which case it was) — the same state
                // as the full path, for about half of a skewed stream's frames.
                let mut known = true;
                let (word, bit) = admitted_bit::<N>(h);
                let maybe_candidate = self.admitted.get(word).is_none_or(|w| w & bit != 0);
                let candidate = if policy == EpochPolicy::Reset && !maybe_candidate {
                    // Never admitted this epoch (the bitmap has no false "no"): not a
                    // candidate, without the summary's index probe — most frames of
                    // a flood of one-packet flows.
                    let upper;
                    (known, upper) = gate(
                        &mut self.new,
                        &mut self.sketch,
                        h,
                        ranked,
                        other,
                        self.frames,
                    );
                    if self.top.update_unmonitored(&f.key, h, ranked, upper) {
                        if let Some(w) = self.admitted.get_mut(word) {
                            *w |= bit;
                        }
                    } else if known && !self.top.sift_waiting() {
                        // Neither filed nor admitted, nor moving a deferred sift on:
                        // a quiet frame.
                        on_quiet();
                    }
                    false
                } else if policy == EpochPolicy::Reset {
                    // A candidate's frame finishes any deferred sift first (up to two
                    // sifts down the heap): then it is no quiet frame.
                    let settling = self.top.sift_waiting();
                    let frames = self.frames;
                    let (new, sketch, k) = (&mut self.new, &mut self.sketch, &mut known);
                    let candidate = self.top.update_gated(&f.key, h, ranked, || {
                        let upper;
                        (*k, upper) = gate(new, sketch, h, ranked, other, frames);
                        upper
                    });
                    if candidate {
                        // The gate did not run: the frame's sketch update is here.
                        self.sketch.add_hash(h, ranked, other);
                        // A quiet frame: work put off from filings' frames.
                        if !settling {
                            on_quiet();
                        }
                    }
                    candidate
                } else {
                    known = self.new.observe(h, self.frames);
                    let upper = self.sketch.add_hash_estimate(h, ranked, other);
                    self.top.update_bounded(&f.key, h, ranked, upper);
                    if known {
                        // Quiet as far as the filter goes (this policy's updates do
                        // not say whether they admitted).
                        on_quiet();
                    }
                    false
                };
                if !candidate {
                    self.flows.insert_hash(h);
                }
                // A flow already in this epoch's filter had its source counted on its
                // first frame (the source's digest runs once per flow) — unless the
                // filter is past its design load or sampling, where "known" is too
                // often a false positive or unsampled: then every frame counts its
                // source.
                if !known || self.new.overloaded() {
                    // The source's 32-bit digest: the distinct-source sketch's, and the
                    // first-frame observer's (unused, and not computed, with a blocklist
                    // and no observer).
                    let sd = src.finish_lo();
                    if self.sources_sip {
                        // A blocklist holds SipHash-1-3 digests of addresses (`loxo
                        // build-filter`): with one, the source's SipHash serves both
                        // the distinct-source sketch and the first frame's lookups.
                        let src = f.key.src_sip_hash(&self.block_sip);
                        self.sources.insert_hash(src);
                        if !known && self.blocklist.is_some() {
                            self.check_blocklist(src, &f.key);
                        }
                    } else {
                        self.sources.insert_hash(source_digest(sd));
                        if !known && self.blocklist.is_some() {
                            // Set during this epoch: its sources keep their digest.
                            let src = f.key.src_sip_hash(&self.block_sip);
                            self.check_blocklist(src, &f.key);
                        }
                    }
                    on_first(&f.key, sd, self.frames);
                }
                self.bytes = self.bytes.saturating_add(u64::from(len));
                if f.fragment {
                    self.fragments = self.fragments.saturating_add(1);
                }
            }
            Ok(Parsed::NotIp) => self.not_ip = self.not_ip.saturating_add(1),
            Err(e) => {
                if let Some(c) = self.errors.get_mut(e.index()) {
                    *c = c.saturating_add(1);
                }
            }
        }
        epoch_packets != 0 && self.frames >= u64::from(epoch_packets)
    }

    /// This epoch's IP packets: every frame fed is one of them, a non-IP frame, a
    /// malformed one or one the snap length cut (each counted apart).
    fn packets(&self) -> u64 {
        let apart = self
            .errors
            .iter()
            .fold(self.not_ip.saturating_add(self.snapped), |a, &e| {
                a.saturating_add(e)
            });
        self.frames.saturating_sub(apart)
    }

    /// The other measure's total in the sketch: this epoch's packets (θ a share of
    /// bytes) or bytes, plus what [`EpochPolicy::Halve`] carries from earlier epochs.
    fn other_total(&self) -> u64 {
        let epoch = match self.config.share_of {
            ShareOf::Bytes => self.packets(),
            ShareOf::Packets => self.bytes,
        };
        epoch.saturating_add(self.carried_other)
    }

    /// The bounds of a tracked flow (its Space-Saving upper bound `count`, `lower`), or
    /// `None` if its upper bound stays below `threshold`.
    fn elephant(&self, key: FlowKey, count: u64, lower: u64, threshold: u64) -> Option<Elephant> {
        let h = key.hash_with_key(&self.sip);
        let (r, o) = self.sketch.estimate_hash(h);
        let upper = count.min(r);
        if upper < threshold {
            return None;
        }
        let ranked = Bounds {
            lower,
            upper,
            lower_certain: true,
            saturated: false,
        };
        let other = if o == u64::MAX {
            // A saturated cell only says "at least u32::MAX": no bound either way.
            Bounds {
                lower: 0,
                upper: u64::MAX,
                lower_certain: true,
                saturated: true,
            }
        } else {
            Bounds {
                lower: o.saturating_sub(ceil(self.sketch.error_bound(self.other_total()))),
                upper: o,
                lower_certain: false,
                saturated: false,
            }
        };
        let (bytes, packets) = match self.config.share_of {
            ShareOf::Bytes => (ranked, other),
            ShareOf::Packets => (other, ranked),
        };
        Some(Elephant {
            key,
            bytes,
            packets,
            certain: lower >= threshold,
        })
    }

    /// A flow's first frame, filed, with a blocklist: its endpoints looked up (`src`:
    /// its source's SipHash) and, if listed, the flow counted and weighed by its
    /// inclusion weight for the estimate. Out of line, its lookups and float work
    /// off the per-frame path (inlined there they took 2.7 KB of flash, and the
    /// path's registers).
    #[inline(never)]
    fn check_blocklist(&mut self, src: loxo_core::KeyHash, key: &FlowKey) {
        if let Some(b) = &self.blocklist {
            if listed(b, &self.block_sip, src, key) {
                self.blocklisted_flows = self.blocklisted_flows.saturating_add(1);
                self.blocklisted_weights.add(self.new.filed_weight());
            }
        }
    }

    /// The blocklist's part of the report: the count, its estimate and saturation,
    /// and the largest candidates with a blocklisted endpoint (`threshold`: θ's, for
    /// their `certain` flag; `flows`: the epoch's distinct flows, as estimated).
    fn report_blocklisted(&self, out: &mut Report<N>, threshold: u64, flows: f64) {
        out.blocklisted.clear();
        out.blocklisted_flows = self.blocklisted_flows;
        out.blocklisted_estimate = 0;
        out.blocklisted_sigma = 0.0;
        out.blocklisted_saturated = false;
        let Some(b) = &self.blocklist else {
            out.blocklist_len = 0;
            return;
        };
        // Read before the new-flow filter closes its epoch: the weight a flow filed
        // now would have.
        let (estimate, sigma) = self
            .blocklisted_weights
            .figures(self.new.weight_now(), flows as f32);
        out.blocklisted_estimate = (estimate.max(0.0) + 0.5) as u64;
        out.blocklisted_sigma = sigma;
        out.blocklist_len = u32::try_from(b.len()).unwrap_or(u32::MAX);
        out.blocklisted_saturated = self.new.overloaded();
        for e in self.top.entries() {
            if !b.matches(&e.key) {
                continue;
            }
            let lower = e.lower.unwrap_or(0);
            // Threshold 1: every candidate that has weight at all.
            let upper = e.upper.unwrap_or(e.count);
            if let Some(mut el) = self.elephant(e.key, upper, lower, 1) {
                el.certain = lower >= threshold;
                let _ = place(&mut out.blocklisted, el, self.config.share_of);
            }
        }
    }

    /// Closes the epoch: writes the report into `out` (no allocation) and starts the next
    /// epoch per the [`EpochPolicy`]. `out` has a row for each of the `N` candidates,
    /// so every candidate whose upper bound reaches the threshold is listed.
    pub fn end_epoch(&mut self, out: &mut Report<N>) {
        out.epoch = self.epoch;
        out.frames = self.frames;
        out.packets = self.packets();
        out.bytes = self.bytes;
        out.fragments = self.fragments;
        out.not_ip = self.not_ip;
        out.errors = self.errors;
        let flows = self.flows.estimate();
        out.distinct_flows = flows as u64;
        out.distinct_sources = self.sources.estimate() as u64;
        // The flows sketch counts every flow: the new-flow count's regression
        // anchor, and the next epoch's planned sampling level (`new_flows` docs).
        let n = self
            .new
            .figures(flows, self.flows.relative_standard_error());
        out.new_flows = n.estimate;
        out.new_flows_sigma = n.sigma;
        out.new_flows_sampling = n.level;
        out.new_flows_fpr = n.rate;
        out.new_flows_overloaded = self.new.overloaded() || self.new.before_overloaded();
        out.theta = self.config.theta;
        out.share_of = self.config.share_of;
        out.byte_weight = self.config.byte_weight;
        let total = out.ranked_total();
        // Smallest weight with share ≥ θ (exact integer ceiling); at least 1 so that
        // an empty epoch reports nothing, and at least the minimum volume.
        let threshold = self
            .config
            .theta
            .threshold(total)
            .max(1)
            .max(self.config.min_volume);
        out.elephants.clear();
        for e in self.top.entries() {
            // Space-Saving's upper bound: the count, or `u64::MAX` once saturated.
            let upper = e.upper.unwrap_or(e.count);
            if upper < threshold {
                continue; // no need to hash the key
            }
            let Some(el) = self.elephant(e.key, upper, e.lower.unwrap_or(0), threshold) else {
                continue;
            };
            // `N` rows for at most `N` candidates: it always fits.
            let fitted = place(&mut out.elephants, el, self.config.share_of);
            debug_assert!(fitted, "a report of N rows holds every candidate");
        }
        // Unmonitored flows weigh at most the smallest tracked count (0 if none was
        // ever evicted) and, within an epoch started empty, less than T/N (see the
        // type's docs): at most ⌈T/N⌉ − 1.
        let mut untracked = self.top.min_count();
        if self.config.policy == EpochPolicy::Reset {
            let below_share = self.top.total().div_ceil(N as u64).saturating_sub(1);
            untracked = untracked.min(below_share);
        }
        out.elephants_complete = untracked < threshold;
        self.report_blocklisted(out, threshold, flows);
        match self.config.policy {
            EpochPolicy::Reset => {
                self.top.clear();
                self.admitted = [0; N];
                self.sketch.clear();
                self.carried_other = 0;
            }
            EpochPolicy::Halve => {
                self.top.halve();
                self.sketch.halve();
                self.carried_other = self.other_total() >> 1;
            }
        }
        self.flows.clear();
        self.sources.clear();
        self.sources_sip = self.blocklist.is_some();
        self.new.end_epoch(flows, self.frames);
        self.blocklisted_flows = 0;
        self.blocklisted_weights = new_flows::FiledSum::ZERO;
        self.epoch = self.epoch.wrapping_add(1);
        self.frames = 0;
        self.snapped = 0;
        self.bytes = 0;
        self.fragments = 0;
        self.not_ip = 0;
        self.errors = [0; ParseError::COUNT];
    }
}

/// The distinct-source sketch's digest of a source: the first 32-bit output word of
/// its HalfSipHash-1-3 digest, finished from the flow digest's state after the
/// address ([`FlowKey::hash_and_source`]), in the high half; the low half all ones
/// caps the sketch's ranks at `32 − SOURCES_P + 1` (a 32-bit HyperLogLog: exact in
/// law far beyond any epoch's 2³² sources).
#[inline(always)]
fn source_digest(src: u32) -> loxo_core::KeyHash {
    loxo_core::KeyHash::from_u64(u64::from(src) << 32 | 0xffff_ffff)
}

/// Whether a flow's endpoints may be on the blocklist (`src`: its source's SipHash).
#[inline(always)]
fn listed(b: &Blocklist<'static>, sip: &SipKey, src: loxo_core::KeyHash, key: &FlowKey) -> bool {
    b.contains_hash(src) || b.contains_hash(key.dst_sip_hash(sip))
}

/// The admission gate of a frame of a flow that is not a candidate: offers it to the
/// new-flow filters (`known`: not its first frame this epoch, or not sampled) and
/// adds it to the flow sketch, whose ranking estimate bounds the flow's weight — or just
/// this frame's weight on its first frame (nothing of it can be counted before).
#[inline(always)]
fn gate(
    new: &mut NewFlows,
    sketch: &mut FlowSketch,
    h: loxo_core::KeyHash,
    w: u64,
    other: u64,
    frames: u64,
) -> (bool, u64) {
    let known = new.observe(h, frames);
    let upper = sketch.add_hash_estimate(h, w, other);
    (known, if known { upper } else { upper.min(w) })
}

/// The word and bit of a flow digest in [`FlowMonitor`]'s bitmap of admitted
/// candidates (`16·N` bits, indexed by the digest's low half: the candidates' index
/// and the new-flow filter's block take the high half). Evicted candidates keep
/// their bits until the epoch ends, so the map fills with the epoch's admissions:
/// at 8·N bits a firmware flood epoch (≈ 700 admissions at `N` = 128) ended with half
/// its bits set and half its frames probing the candidates' index for nothing;
/// 16·N bits took 6–9 instructions off every flood class's mean per frame
/// (`firmware_cost_classes`) for `N` bytes (32·N bits took 6 more, but the host's
/// default `N` = 256 would leave 64 KiB).
#[inline(always)]
fn admitted_bit<const N: usize>(h: loxo_core::KeyHash) -> (usize, AdmitWord) {
    let b = loxo_core::reduce(h.get() << 32, (ADMIT_BITS * N) as u32) as usize;
    (b / ADMIT_BITS, 1 << (b % ADMIT_BITS))
}

/// A word of the map of admitted candidates ([`admitted_bit`]).
type AdmitWord = u16;
/// Bits in an [`AdmitWord`].
const ADMIT_BITS: usize = AdmitWord::BITS as usize;

/// `⌈x⌉` of a non-negative bound, saturating.
fn ceil(x: f64) -> u64 {
    let t = x as u64;
    t.saturating_add(u64::from((t as f64) < x))
}
