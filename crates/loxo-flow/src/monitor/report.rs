//! The end-of-epoch [`Report`]: its elephants with their [`Bounds`], in the report's
//! order.

use crate::{ByteWeight, FlowKey, ParseError, Theta};

use super::config::ONE_PERCENT;
#[cfg(doc)]
use super::{Config, EpochPolicy, FlowMonitor, FLOWS_P, NEW_FLOW_CAPACITY, SOURCES_P};
use super::{ShareOf, DEFAULT_CANDIDATES};

/// Room for the largest blocklisted flows in a [`Report`] ([`Report::blocklisted`]).
pub const MAX_BLOCKLISTED: usize = 8;

/// Bounds on one figure of an elephant: the true value `v` satisfies
/// `lower ≤ v ≤ upper`. `upper` always holds; `lower` always holds when
/// `lower_certain`, else with probability ≥ 1 − e⁻³ ≈ 95 % (a Count-Min bound).
///
/// `saturated`: the other measure's Count-Min cells (`u32`) hit their maximum (more
/// than 4 294 967 295 bytes in the flow's cells within one epoch): there is then no
/// upper bound (`upper = u64::MAX`) and no lower bound (`lower = 0`), and the report
/// says so instead of printing a wrong figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Bounds {
    /// Lower bound.
    pub lower: u64,
    /// Upper bound (always holds).
    pub upper: u64,
    /// Whether `lower` holds always (true) or only with probability ≥ 95 % (false).
    pub lower_certain: bool,
    /// The sketch behind these bounds saturated: nothing is known.
    pub saturated: bool,
}

impl Bounds {
    /// True when the bounds pin the value exactly (`lower == upper`, both certain).
    pub const fn is_exact(&self) -> bool {
        self.lower_certain && self.lower == self.upper
    }

    /// True when `v` lies within the bounds.
    pub const fn contains(&self, v: u64) -> bool {
        self.lower <= v && v <= self.upper
    }
}

/// One reported elephant (or candidate): a flow whose upper bound reaches θ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Elephant {
    /// The flow.
    pub key: FlowKey,
    /// This epoch's bytes.
    pub bytes: Bounds,
    /// This epoch's packets.
    pub packets: Bounds,
    /// `true`: its share is ≥ θ for certain (the ranking measure's certain lower bound
    /// reaches θ). `false`: *possible* — its upper bound reaches θ, its lower bound
    /// does not.
    pub certain: bool,
}

impl Elephant {
    /// The bounds of the measure shares are taken in.
    pub const fn ranked(&self, share_of: ShareOf) -> &Bounds {
        match share_of {
            ShareOf::Bytes => &self.bytes,
            ShareOf::Packets => &self.packets,
        }
    }
}

/// End-of-epoch report of a [`FlowMonitor<N>`]; filled in place by
/// [`FlowMonitor::end_epoch`].
///
/// It has a row for each of the monitor's `N` candidates ([`DEFAULT_CANDIDATES`] =
/// 256 by default), so every candidate whose upper bound reaches θ is listed: with
/// `θ ≥ θ_min = 1/N`, the only θ a monitor accepts, that is every flow holding θ of
/// the epoch (see [`FlowMonitor`]'s recall argument). Tying the two through one `N`
/// is what keeps the report from dropping an elephant.
///
/// Memory: `992 + 96·N` bytes — a 96-byte [`Elephant`] row per candidate, the
/// totals and [`MAX_BLOCKLISTED`] rows — 25 568 for `N` = 256, 13 280 for 128 (pinned
/// by a test on a 64-bit host).
///
/// ```
/// use loxo_flow::{Config, FlowMonitor, Report, Theta};
/// // θ = 1 % needs 100 candidates or more: 128 of them, and a report of 128 rows.
/// let mut m = FlowMonitor::<128>::with_candidates(Config::with_seed(loxo_core::Seed::new(1, 2)));
/// let mut r = Report::<128>::with_candidates();
/// m.end_epoch(&mut r);
/// assert_eq!(r.elephants.capacity(), 128);
/// assert_eq!(FlowMonitor::<128>::THETA_MIN, Theta::new(1, 128).unwrap());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Report<const N: usize = DEFAULT_CANDIDATES> {
    /// Epoch number, from 0.
    pub epoch: u32,
    /// Frames seen (all kinds).
    pub frames: u64,
    /// IP packets.
    pub packets: u64,
    /// Bytes of the IP packets, in the unit of [`byte_weight`](Self::byte_weight)
    /// (wire lengths by default: the crate's key rules).
    pub bytes: u64,
    /// Non-first fragments among `packets`.
    pub fragments: u64,
    /// Frames that are not IP.
    pub not_ip: u64,
    /// Malformed frames per reason, indexed by [`ParseError::index`].
    pub errors: [u64; ParseError::COUNT],
    /// Estimated distinct flows (HLL, P = [`FLOWS_P`] = 14: relative standard error
    /// 1.04/√16384 ≈ 0.81 %). Every IP frame is inserted; it does not saturate.
    pub distinct_flows: u64,
    /// Estimated distinct source addresses (HLL, P = [`SOURCES_P`] = 10: 3.3 %).
    /// A source is inserted on each first frame of a flow as the new-flow filter sees
    /// it, and on every frame once that filter is past its design load
    /// ([`NEW_FLOW_CAPACITY`]): so a source is missed only if all its flows were
    /// filter false positives below the design load (≤ about 1 % each), and never
    /// collapses under a flood.
    pub distinct_sources: u64,
    /// New flows: flows of this epoch absent from the previous epoch — an
    /// **unbiased estimate** at every load, with standard deviation
    /// [`new_flows_sigma`](Self::new_flows_sigma). Two register-blocked Bloom filters (this
    /// epoch's, the last one's) miss a new flow with a probability their fills give;
    /// each counted flow weighs the inverse of its chance to be counted
    /// (Horvitz–Thompson), past a few times the design load the filter samples
    /// flows by hash (1 in 2^[`new_flows_sampling`](Self::new_flows_sampling)) so the
    /// figure stays an estimate instead of collapsing, and the count is corrected
    /// by regression on the distinct-flow sketch ([`distinct_flows`](Self::distinct_flows)):
    /// the sampled flows' own estimate of the epoch's flow count, against the
    /// sketch's, tells how far the sample is off (the `monitor::new_flows` module
    /// docs, in the source: the estimator, its error formula, measured σ). Below the design load it is the filters' count
    /// within their rate; in a flood it is about the distinct flows less the few
    /// the last epoch had.
    pub new_flows: u64,
    /// Standard deviation of [`new_flows`](Self::new_flows), in flows:
    /// `√(V_N − C²/(V_A + σ_F²))` — the Horvitz–Thompson variance estimate `V_N = Σ
    /// w(w − 1)` over the counted flows, less what the regression on the
    /// distinct-flow sketch removes (`V_A`, `C`: the sampled flows' variance and
    /// covariance estimates, `σ_F` the sketch's error, 1.04/√16384 of it). 0 when
    /// every new flow was certainly counted. `new_flows ± 4·sigma` holds the true
    /// count but for about 6 epochs in 100 000. As a share of the count, measured:
    /// ≤ 0.35 % up to 2× the design load; ≤ 0.9 % to 4×, from a fresh monitor at
    /// any load and in steady floods of any size (within 5 % at 4σ); 2.7–4.6 % in
    /// the second epoch of an overload that began from quiet traffic (to 9.6 %
    /// where few flows are new), 2–3.5 % in steady overloaded epochs where only
    /// 17–30 % are new (`new_flows` module docs: the table and why).
    pub new_flows_sigma: f32,
    /// Sampling level of the estimate: flows were checked 1 in 2^level (0: all).
    pub new_flows_sampling: u8,
    /// False-positive rate of the two filters together at epoch end, `1 − (1 −
    /// p_this)(1 − p_last)`: the chance that a new flow arriving now would be missed
    /// (the estimate already corrects for it).
    pub new_flows_fpr: f32,
    /// True when this or the previous epoch put more than [`NEW_FLOW_CAPACITY`] flows
    /// into its filter (or sampled): the figure is then a wider estimate — see
    /// [`new_flows_sigma`](Self::new_flows_sigma) — and distinct sources are counted
    /// from every frame.
    pub new_flows_overloaded: bool,
    /// The threshold the elephants were selected with.
    pub theta: Theta,
    /// The measure θ is a share of.
    pub share_of: ShareOf,
    /// The unit of `bytes` and of every elephant's bytes.
    pub byte_weight: ByteWeight,
    /// Every candidate whose upper bound reaches θ (and [`Config::min_volume`]):
    /// certain ones first, then possible ones, each group by the ranking measure's
    /// upper bound, descending. Room for all `N` candidates, so none is ever left out.
    pub elephants: heapless::Vec<Elephant, N>,
    /// True when every flow whose share is ≥ θ is among the candidates, hence listed:
    /// recall 1, certified for this epoch (every untracked flow weighs less than the
    /// threshold). Always true with [`EpochPolicy::Reset`] (θ ≥ 1/N is the only θ a
    /// monitor accepts); with [`EpochPolicy::Halve`], true when the smallest tracked
    /// count was below the threshold.
    pub elephants_complete: bool,
    /// Addresses in the monitor's blocklist ([`FlowMonitor::set_blocklist`]); 0 when
    /// it has none (then every `blocklisted*` figure is 0 / empty).
    pub blocklist_len: u32,
    /// Flows of this epoch with a blocklisted source or destination, each counted on
    /// its first frame of the epoch as the new-flow filter sees it. Off by the two
    /// filters' errors only: a flow whose first frame the new-flow filter took for
    /// known (≤ about 1 % of flows below [`NEW_FLOW_CAPACITY`]) is missed, and a flow
    /// whose addresses are both outside the blocklist is counted with probability ≤
    /// 2·2^−bits (the blocklist's false positives). Past the new-flow filter's design
    /// load the misses grow without bound: [`blocklisted_saturated`](Self::blocklisted_saturated)
    /// says so, and the figure is then only a lower bound (up to those false positives);
    /// [`blocklisted_estimate`](Self::blocklisted_estimate) is the estimate there.
    pub blocklisted_flows: u64,
    /// True when this epoch put more than [`NEW_FLOW_CAPACITY`] flows into the
    /// new-flow filter, or sampled its flows (past the design load, or from its
    /// first frame after an epoch that was a flood): `blocklisted_flows` is then a
    /// lower bound, not a count.
    pub blocklisted_saturated: bool,
    /// The flows of this epoch with a blocklisted endpoint, **estimated** — also past
    /// the new-flow filter's design load, where [`blocklisted_flows`](Self::blocklisted_flows)
    /// is only a lower bound: each flow found counts for the inverse of the
    /// probability that its first frame was checked at all, `w = 2^s/(1 − p_A)` (the
    /// new-flow filter samples 1 flow in `2^s` past its design load, and takes a new
    /// flow for known with its false-positive rate `p_A` at that frame). A
    /// Horvitz–Thompson sum: unbiased for the flows the blocklist matches, plus its
    /// false positives (each flow outside it counts with probability ≤ 2·2^−bits,
    /// also weighed by `w`). Within the design load `w` ≈ 1 and this is the count
    /// corrected for the filter's few misses. 0 without a blocklist.
    pub blocklisted_estimate: u64,
    /// Standard deviation of [`blocklisted_estimate`](Self::blocklisted_estimate), in
    /// flows: `√(Σ w(w − 1))` over the flows found, plus one more flow at the epoch's
    /// last weight (so that an epoch that found none under sampling does not claim
    /// `σ = 0`). `blocklisted_estimate ± 4·sigma` holds the true figure (up to the
    /// blocklist's false positives) — asserted over seeded floods in
    /// `tests/tests/monitor_blocklist.rs`.
    pub blocklisted_sigma: f32,
    /// The largest candidate flows with a blocklisted endpoint, with their bounds: the
    /// certain elephants among them first, then by the ranking measure's upper bound
    /// (descending), as [`elephants`](Self::elephants). Every flow heavier than the candidates'
    /// smallest count is a candidate (see [`FlowMonitor`]), so no blocklisted flow
    /// above that is left out except for room ([`MAX_BLOCKLISTED`]).
    pub blocklisted: heapless::Vec<Elephant, MAX_BLOCKLISTED>,
}

impl<const N: usize> Default for Report<N> {
    fn default() -> Self {
        Self::with_candidates()
    }
}

impl Report {
    /// An empty report for a monitor of [`DEFAULT_CANDIDATES`] (`const`, for a
    /// `static`).
    #[must_use]
    pub const fn new() -> Self {
        Self::with_candidates()
    }
}

impl<const N: usize> Report<N> {
    /// An empty report for a monitor of `N` candidates,
    /// [`FlowMonitor::<N>::with_candidates`] (`const`, for a `static`).
    #[must_use]
    pub const fn with_candidates() -> Self {
        Self {
            epoch: 0,
            frames: 0,
            packets: 0,
            bytes: 0,
            fragments: 0,
            not_ip: 0,
            errors: [0; ParseError::COUNT],
            distinct_flows: 0,
            distinct_sources: 0,
            new_flows: 0,
            new_flows_sigma: 0.0,
            new_flows_sampling: 0,
            new_flows_fpr: 0.0,
            new_flows_overloaded: false,
            theta: ONE_PERCENT,
            share_of: ShareOf::Bytes,
            byte_weight: ByteWeight::Wire,
            elephants: heapless::Vec::new(),
            elephants_complete: true,
            blocklist_len: 0,
            blocklisted_flows: 0,
            blocklisted_saturated: false,
            blocklisted_estimate: 0,
            blocklisted_sigma: 0.0,
            blocklisted: heapless::Vec::new(),
        }
    }

    /// The epoch's total of the ranking measure (bytes or packets).
    pub const fn ranked_total(&self) -> u64 {
        match self.share_of {
            ShareOf::Bytes => self.bytes,
            ShareOf::Packets => self.packets,
        }
    }
}

/// Order of the report: certain before possible, then by the ranking upper bound
/// (descending), then by key.
fn rank(a: &Elephant, b: &Elephant, share_of: ShareOf) -> core::cmp::Ordering {
    b.certain
        .cmp(&a.certain)
        .then(b.ranked(share_of).upper.cmp(&a.ranked(share_of).upper))
        .then(a.key.cmp(&b.key))
}

/// Inserts `e` in order; when full, drops the last entry if `e` ranks before it.
/// Returns false when one elephant (`e` or the dropped one) did not fit.
pub(super) fn place<const M: usize>(
    v: &mut heapless::Vec<Elephant, M>,
    e: Elephant,
    share_of: ShareOf,
) -> bool {
    let at = v.partition_point(|x| rank(x, &e, share_of).is_lt());
    if at >= M {
        return false;
    }
    let dropped = if v.is_full() {
        v.pop().is_some()
    } else {
        false
    };
    let _ = v.insert(at, e);
    !dropped
}
