//! `FlowMonitor`: per-epoch elephants, distinct counts and parse statistics.

use loxo_bloom::BlockedBloom;
use loxo_cms::{CmsCu, Entry, HeavyKeeper, TopK};
use loxo_core::Seed;
use loxo_hll::Hll;

use crate::{parse_frame, FlowKey, ParseError, Parsed};

/// Maximum elephants in a [`Report`]: with θ ≥ 1/32 all fit; for smaller θ the 32 largest.
pub const MAX_ELEPHANTS: usize = 32;

/// The default top-k summary: `HeavyKeeper<1024, 2, 32, FlowKey>`, 16 KiB of buckets + heap.
pub type DefaultTopK = HeavyKeeper<1024, 2, MAX_ELEPHANTS, FlowKey>;

/// Width of the [`SecondarySketch`].
pub const SECONDARY_W: usize = 1024;

/// Depth of the [`SecondarySketch`].
pub const SECONDARY_D: usize = 3;

/// The sketch of the measure elephants are *not* ranked by (packets when θ is a share
/// of bytes, bytes otherwise): a conservative-update Count-Min sketch, 1024 × 3 `u32`
/// cells (12 KiB). Queried only for the reported elephants, it gives their second
/// figure with an over-count of at most `ε·N` (ε = e/1024 ≈ 0.27 % of the epoch's
/// total) with probability `1 − e⁻³ ≈ 95 %`, and never an under-count. A second top-k
/// summary would cost twice the per-frame work for the same figures.
pub type SecondarySketch = CmsCu<SECONDARY_W, SECONDARY_D>;

/// Precision of the distinct-flow sketch: `P = 14`, 12 KiB, relative standard error
/// 1.04/√16384 ≈ 0.81 % — Redis's geometry, so a device's per-epoch flow sketch can be
/// shipped to a collector and exported as a Redis HyperLogLog (see `loxo export`).
pub const FLOWS_P: u8 = 14;

/// Precision of the distinct-source sketch: `P = 10`, 768 bytes, relative standard
/// error 1.04/√1024 ≈ 3.3 %.
pub const SOURCES_P: u8 = 10;

/// 512-bit blocks of each new-flow filter: 96 blocks = 6 KiB = 49 152 bits, about
/// 5 000 flows per epoch at a 1 % false-positive rate (9.6 bits per flow).
pub const NEW_FLOW_BLOCKS: usize = 96;

/// Probes of the new-flow filters (optimal for 9.6 bits per flow).
pub const NEW_FLOW_K: u32 = 7;

/// The new-flow filter: a cache-line blocked Bloom filter (one cache line per frame).
pub type NewFlowFilter = BlockedBloom<NEW_FLOW_BLOCKS, NEW_FLOW_K>;

/// What an elephant's share is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ShareOf {
    /// Share of the epoch's bytes.
    #[default]
    Bytes,
    /// Share of the epoch's packets.
    Packets,
}

/// What happens to the top-k state at epoch end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EpochPolicy {
    /// Start the next epoch empty.
    #[default]
    Reset,
    /// Halve the top-k counters (aging); distinct counters are always reset.
    Halve,
}

/// Monitor configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    /// Hash seed (one keyed hash per frame, shared by every structure).
    pub seed: Seed,
    /// Elephant threshold θ: share ≥ θ (inclusive).
    pub theta: f32,
    /// Share measured in bytes or packets.
    pub share_of: ShareOf,
    /// Close an epoch after this many frames (all frames, malformed included); 0 = only
    /// on the caller's [`FlowMonitor::end_epoch`] (timer tick).
    pub epoch_packets: u32,
    /// Top-k policy at epoch end.
    pub policy: EpochPolicy,
}

impl Config {
    /// The default configuration as a constant (for `static` monitors): a fixed demo
    /// seed, θ = 1 % of bytes, epochs closed by the caller, [`EpochPolicy::Reset`].
    pub const DEFAULT: Self = Self {
        seed: Seed::new(0x6c6f_786f, 0x666c_6f77),
        theta: 0.01,
        share_of: ShareOf::Bytes,
        epoch_packets: 0,
        policy: EpochPolicy::Reset,
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One reported elephant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Elephant {
    /// The flow.
    pub key: FlowKey,
    /// Estimated bytes this epoch.
    pub bytes: u64,
    /// Bound on `bytes − true bytes` reported by the top-k summary.
    pub bytes_error: u64,
    /// Estimated packets this epoch.
    pub packets: u64,
    /// Bound on `packets − true packets`. When elephants are ranked by bytes the
    /// packets come from the [`SecondarySketch`] and the bound (`⌈ε·N⌉`) holds with
    /// probability ≈ 95 %; the same applies to `bytes_error` when ranked by packets.
    pub packets_error: u64,
}

impl Report {
    /// An empty report (`const`, for a `static`).
    #[must_use]
    pub const fn new() -> Self {
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
            new_flows_fpr: 0.0,
            elephants: heapless::Vec::new(),
        }
    }
}

/// End-of-epoch report; filled in place by [`FlowMonitor::end_epoch`] (about 2.4 KiB).
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Report {
    /// Epoch number, from 0.
    pub epoch: u32,
    /// Frames seen (all kinds).
    pub frames: u64,
    /// IP packets.
    pub packets: u64,
    /// IP bytes (captured lengths).
    pub bytes: u64,
    /// Non-first fragments among `packets`.
    pub fragments: u64,
    /// Frames that are not IP.
    pub not_ip: u64,
    /// Malformed frames per reason, indexed by [`ParseError::index`].
    pub errors: [u64; ParseError::COUNT],
    /// Estimated distinct flows (HLL, P = [`FLOWS_P`] = 14: relative standard error
    /// 1.04/√16384 ≈ 0.81 %).
    pub distinct_flows: u32,
    /// Estimated distinct source addresses (HLL, P = [`SOURCES_P`] = 10: 3.3 %).
    /// A source is inserted on the first frame of each of its flows (the frame the
    /// new-flow filter reports as not yet seen this epoch), so one whose every flow
    /// is a filter false positive is missed: an under-count of at most about
    /// `new_flows_fpr`, well inside the sketch's own error at design load.
    pub distinct_sources: u32,
    /// New flows: flows of this epoch not seen in this or the previous epoch
    /// (`Bloom::insert_checked` on a filter per epoch). Never over-counted; a filter
    /// false positive makes a new flow look known, so it under-counts by about
    /// `new_flows_fpr`.
    pub new_flows: u64,
    /// Estimated false-positive rate of the new-flow filters at epoch end (from their
    /// fill): the share of new flows that may have been missed. Above a few percent
    /// the epoch had more flows than the filters were sized for.
    pub new_flows_fpr: f32,
    /// Elephants, sorted by estimated bytes, descending.
    pub elephants: heapless::Vec<Elephant, MAX_ELEPHANTS>,
}

/// Elephant-flow monitor: parse → one `Seed::hash` → top-k by the ranking measure
/// (bytes or packets, [`Config::share_of`]) plus a Count-Min sketch of the other one,
/// HLL of flows and of sources, new-flow filters, per-reason error counters.
///
/// Memory: `size_of::<T>() + 12 KiB (SecondarySketch) + 0.75·(2^14 + 2^10) + 2·296 +
/// 2·64·96` bytes; the default (`T = DefaultTopK`) is reported by
/// [`FlowMonitor::memory_bytes`] and is ≤ 64 KiB (checked by a test). Cost per frame:
/// one parse, one SipHash-1-3 of the 13/37-byte key, one top-k update, one 3-row
/// Count-Min update, one HLL insert, one blocked-Bloom `insert_checked`; on a flow's
/// first frame of the epoch also a Bloom `contains` (new flows) and the source's
/// SipHash + HLL insert.
///
/// Error: the top-k summary's `Entry::error` bound is carried to each [`Elephant`] for
/// the ranking measure, the Count-Min bound for the other; distinct counts have HLL's
/// 1.04/√m relative standard error.
///
/// ```
/// use loxo_flow::{FlowMonitor, Report};
/// let mut m = FlowMonitor::default();
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
/// ```
#[derive(Clone, Debug)]
pub struct FlowMonitor<T = DefaultTopK> {
    config: Config,
    /// Top-k by the ranking measure.
    top: T,
    /// Count-Min sketch of the other measure.
    other: SecondarySketch,
    flows: Hll<FLOWS_P>,
    sources: Hll<SOURCES_P>,
    /// Flows seen this epoch.
    seen: NewFlowFilter,
    /// Flows seen in the previous epoch.
    seen_before: NewFlowFilter,
    new_flows: u64,
    epoch: u32,
    frames: u64,
    packets: u64,
    bytes: u64,
    fragments: u64,
    not_ip: u64,
    errors: [u64; ParseError::COUNT],
}

impl Default for FlowMonitor<DefaultTopK> {
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl FlowMonitor<DefaultTopK> {
    /// A monitor with the default top-k summary. `const`, so a firmware can place it
    /// in a `static` without building 56 KiB on its stack first.
    #[must_use]
    pub const fn new(config: Config) -> Self {
        // HeavyKeeper's decay RNG seed, derived from the seed (it steers only the
        // decay coin flips, so a mix is enough; `Seed::hash` is not `const`).
        let b = config.seed.to_bytes();
        let k0 = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let k1 = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        let r = loxo_core::mix64(loxo_core::mix64(k0 ^ 0x6465_6361_7920_726e) ^ k1);
        Self::with_summary(config, DefaultTopK::new(r | 1))
    }
}

impl<T: TopK<FlowKey>> FlowMonitor<T> {
    /// A monitor over a caller-built, empty top-k summary (of the ranking measure).
    pub const fn with_summary(config: Config, top: T) -> Self {
        Self {
            config,
            top,
            other: SecondarySketch::new(config.seed),
            // Read through `estimate` and merged fleet-wide, never through the
            // martingale: not tracking it spares a software f64 division per register
            // change on a Cortex-M4F.
            flows: Hll::new(config.seed).without_martingale(),
            sources: Hll::new(config.seed).without_martingale(),
            seen: NewFlowFilter::new(config.seed),
            seen_before: NewFlowFilter::new(config.seed),
            new_flows: 0,
            epoch: 0,
            frames: 0,
            packets: 0,
            bytes: 0,
            fragments: 0,
            not_ip: 0,
            errors: [0; ParseError::COUNT],
        }
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

    /// Feeds one frame. Returns `true` when the configured packet count closes the epoch:
    /// the caller then calls [`FlowMonitor::end_epoch`].
    pub fn feed(&mut self, frame: &[u8]) -> bool {
        self.frames = self.frames.saturating_add(1);
        match parse_frame(frame) {
            Ok(Parsed::Flow(f)) => {
                let h = f.key.hash_with(&self.config.seed);
                let (ranked, other) = match self.config.share_of {
                    ShareOf::Bytes => (u64::from(f.len), 1),
                    ShareOf::Packets => (1, u64::from(f.len)),
                };
                self.top.update(&f.key, h, ranked);
                self.other.add_hash(h, other);
                self.flows.insert_hash(h);
                let known = self.seen.insert_checked_hash(h);
                if !known {
                    if !self.seen_before.contains_hash(h) {
                        self.new_flows = self.new_flows.saturating_add(1);
                    }
                    // A flow already in this epoch's filter had its source counted on
                    // its first frame: the source's own SipHash runs once per flow.
                    self.sources
                        .insert_hash(f.key.src_hash_with(&self.config.seed));
                }
                self.packets = self.packets.saturating_add(1);
                self.bytes = self.bytes.saturating_add(u64::from(f.len));
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
        self.config.epoch_packets != 0 && self.frames >= u64::from(self.config.epoch_packets)
    }

    /// Closes the epoch: writes the report into `out` (no allocation) and starts the next
    /// epoch per the [`EpochPolicy`].
    ///
    /// An elephant is a tracked flow whose estimated share `(count + error) / total` is
    /// ≥ θ, so a summary that never under-estimates by more than its error misses none.
    pub fn end_epoch(&mut self, out: &mut Report) {
        out.epoch = self.epoch;
        out.frames = self.frames;
        out.packets = self.packets;
        out.bytes = self.bytes;
        out.fragments = self.fragments;
        out.not_ip = self.not_ip;
        out.errors = self.errors;
        out.distinct_flows = self.flows.estimate() as u32;
        out.distinct_sources = self.sources.estimate() as u32;
        out.new_flows = self.new_flows;
        // A new flow is missed if either filter reports it: 1 − (1 − p₁)(1 − p₂).
        let (p1, p2) = (self.seen.estimated_fpr(), self.seen_before.estimated_fpr());
        out.new_flows_fpr = (1.0 - (1.0 - p1) * (1.0 - p2)) as f32;
        out.elephants.clear();
        let total = match self.config.share_of {
            ShareOf::Bytes => self.bytes,
            ShareOf::Packets => self.packets,
        };
        let threshold = f64::from(self.config.theta) * total as f64;
        // The Count-Min bound ⌈ε·N⌉ of the other measure.
        let bound = self.other.error_bound();
        let other_error = (bound as u64).saturating_add(u64::from((bound as u64 as f64) < bound));
        let mut top = heapless::Vec::<Entry<FlowKey>, MAX_ELEPHANTS>::new();
        self.top.report(&mut top);
        for e in &top {
            if (e.count.saturating_add(e.error)) as f64 >= threshold && e.count > 0 {
                let h = e.key.hash_with(&self.config.seed);
                let o = self.other.estimate_hash(h);
                let (bytes, bytes_error, packets, packets_error) = match self.config.share_of {
                    ShareOf::Bytes => (e.count, e.error, o, other_error),
                    ShareOf::Packets => (o, other_error, e.count, e.error),
                };
                let _ = out.elephants.push(Elephant {
                    key: e.key,
                    bytes,
                    bytes_error,
                    packets,
                    packets_error,
                });
            }
        }
        out.elephants
            .sort_unstable_by(|a, b| b.bytes.cmp(&a.bytes).then(a.key.cmp(&b.key)));
        match self.config.policy {
            EpochPolicy::Reset => {
                self.top.clear();
                self.other.clear();
            }
            EpochPolicy::Halve => {
                self.top.halve();
                self.other.halve();
            }
        }
        self.flows.clear();
        self.sources.clear();
        core::mem::swap(&mut self.seen, &mut self.seen_before);
        self.seen.clear();
        self.new_flows = 0;
        self.epoch = self.epoch.wrapping_add(1);
        self.frames = 0;
        self.packets = 0;
        self.bytes = 0;
        self.fragments = 0;
        self.not_ip = 0;
        self.errors = [0; ParseError::COUNT];
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    extern crate std;
    use super::*;

    #[test]
    fn default_fits_64_kib() {
        let m = FlowMonitor::default();
        assert!(m.memory_bytes() <= 64 * 1024, "{}", m.memory_bytes());
        std::println!(
            "FlowMonitor default: {} bytes, Report: {} bytes",
            m.memory_bytes(),
            core::mem::size_of::<Report>()
        );
    }
}
