//! The fleet figures of an epoch: the frames behind them, the devices' top-k lists
//! combined by [`loxo_cms::SpaceSavingMerge`], and the seed-less top-k decoder.

use loxo_cms::{MergeFull, MergedEntry, SpaceSaving, SpaceSavingMerge, TopK};
use loxo_control::datagram::Stream;
use loxo_core::wire::{Frame, SketchKind};
use loxo_flow::FlowKey;

use super::TOP_N;
use crate::frequent::{with_summary, WithSummary};
use crate::sketch::AnyHll;

/// A device's top-k summary as the collector holds it: Space-Saving over flow keys
/// with the device's number of candidates `N` erased — a device ships its monitor's
/// (`FlowMonitor<N>`: 256 by default, 128 on the sample firmware), and the fleet merge
/// takes summaries of any `N` side by side, each with its own bounds.
pub trait DeviceTop: std::fmt::Debug + Send + Sync {
    /// Its candidates `N`.
    fn capacity(&self) -> usize;
    /// Flows it lists.
    fn len(&self) -> usize;
    /// True when it lists no flow.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Its stream total.
    fn total(&self) -> u64;
    /// Its smallest count once full (a flow it does not list weighs at most this), 0
    /// before.
    fn min_count(&self) -> u64;
    /// Adds it to a fleet merge ([`SpaceSavingMerge::add`]).
    ///
    /// # Errors
    /// [`MergeFull`] when the merge's cells cannot take its entries.
    fn add_to(&self, merge: &mut SpaceSavingMerge<'_, FlowKey>) -> Result<(), MergeFull>;
}

impl<const N: usize> DeviceTop for SpaceSaving<FlowKey, N> {
    fn capacity(&self) -> usize {
        N
    }

    fn len(&self) -> usize {
        TopK::len(self)
    }

    fn total(&self) -> u64 {
        TopK::total(self)
    }

    fn min_count(&self) -> u64 {
        SpaceSaving::min_count(self)
    }

    fn add_to(&self, merge: &mut SpaceSavingMerge<'_, FlowKey>) -> Result<(), MergeFull> {
        merge.add(self)
    }
}

/// One frame a device delivered in an epoch (the frame itself went to `--out` on
/// arrival: [`Collector::take_frames`](super::Collector::take_frames)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceFrame {
    /// The device.
    pub device: u32,
    /// Which sketch.
    pub stream: Stream,
    /// Its length in bytes.
    pub len: usize,
    /// Its seed fingerprint.
    pub fingerprint: u64,
    /// Merged into the fleet figures.
    pub merged: bool,
}

/// One flow of the fleet top-k, with bounds on its fleet-wide weight `f` (in the
/// devices' ranking measure): `lower ≤ f ≤ upper`, always.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetEntry {
    /// The flow.
    pub key: FlowKey,
    /// Sum of the devices' counts (an estimate, `lower ≤ count ≤ upper`).
    pub count: u64,
    /// Sum of the devices' `count − error`.
    pub lower: u64,
    /// `count` plus the minimum count of every merged summary not listing the flow.
    pub upper: u64,
    /// Devices whose list has the flow.
    pub devices: u32,
}

/// An epoch's fleet figures and the frames behind them.
#[derive(Clone, Debug)]
pub struct EpochSummary {
    /// The epoch.
    pub epoch: u32,
    /// Every frame received and decoded, by device then stream.
    pub frames: Vec<DeviceFrame>,
    /// The fleet's seed fingerprint (that of the merged frames).
    pub fingerprint: Option<u64>,
    /// The merged distinct-flow sketch (`None` if no flows frame merged).
    pub flows: Option<AnyHll>,
    /// Devices whose flows frame is in [`flows`](Self::flows).
    pub flows_devices: Vec<u32>,
    /// The fleet top flows, by `count` descending (ties: key order).
    pub top: Vec<FleetEntry>,
    /// Devices whose top-k frame is in [`top`](Self::top).
    pub top_devices: Vec<u32>,
    /// Sum of the merged summaries' stream totals.
    pub top_total: u64,
    /// A flow on no merged list weighs at most this fleet-wide (`Σ mᵢ`).
    pub unlisted_upper: u64,
}

impl EpochSummary {
    /// Devices with at least one decoded frame.
    #[must_use]
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.frames.iter().map(|f| f.device).collect();
        d.dedup();
        d
    }

    /// The merged HLL encoded under the fleet's fingerprint.
    #[must_use]
    pub fn encode_flows(&self) -> Option<Vec<u8>> {
        Some(self.flows.as_ref()?.encode(self.fingerprint?))
    }
}

/// Combines Space-Saving summaries into fleet entries with deterministic bounds (see
/// the module doc); returns the entries by `count` descending, the summed total and
/// the bound on unlisted flows.
#[must_use]
pub fn combine_top(summaries: &[&dyn DeviceTop]) -> (Vec<FleetEntry>, u64, u64) {
    let listed = summaries.iter().map(|s| s.len()).sum();
    combine(listed, |merge| {
        for s in summaries {
            if s.add_to(merge).is_err() {
                unreachable!("Σ len() cells hold every listed key");
            }
        }
    })
}

/// [`combine_top`] of top-k frames that [`decode_topk`] read, listing `listed` flows
/// in all: each is decoded in turn and added, so one decoded summary at a time is in
/// memory. A frame that does not decode (or lists more than `listed` counted) is
/// left out.
pub(super) fn combine_frames<'a>(
    frames: impl Iterator<Item = &'a [u8]>,
    listed: usize,
) -> (Vec<FleetEntry>, u64, u64) {
    combine(listed, |merge| {
        for bytes in frames {
            if let Ok((_, s)) = decode_topk(bytes) {
                let _ = s.add_to(merge);
            }
        }
    })
}

/// A fleet merge of `listed` cells, filled by `add`, as fleet entries by `count`
/// descending, the summed total and the bound on unlisted flows.
fn combine(
    listed: usize,
    add: impl FnOnce(&mut SpaceSavingMerge<'_, FlowKey>),
) -> (Vec<FleetEntry>, u64, u64) {
    let mut cells = vec![MergedEntry::new(FlowKey::v4([0; 4], [0; 4], 0, 0, 0)); listed];
    let mut merge = SpaceSavingMerge::new(&mut cells);
    add(&mut merge);
    let (total, unlisted) = (merge.total(), merge.unlisted_upper());
    let top = merge
        .sort_by_count()
        .iter()
        .map(|e| FleetEntry {
            key: e.key,
            count: e.count,
            lower: e.lower,
            upper: e.upper,
            devices: e.summaries,
        })
        .collect();
    (top, total, unlisted)
}

/// Decodes a top-k frame (`space-saving`, 38-byte flow keys, `N` a power of two from
/// 16 to [`TOP_N`]) made under any seed; returns its seed fingerprint and the summary.
///
/// `SpaceSaving::decode_into` checks the frame's fingerprint against a seed the
/// collector does not have (and `loxo-cms` has no seed-less decoder), so the payload,
/// its CRC-32 verified by [`Frame::parse`], is re-signed under a placeholder seed and
/// decoded by `loxo-cms` itself (`frequent::decode_unseeded`): every other check (parameters,
/// flags, key bytes, `error ≤ count`, heap order, no key twice, counts within the
/// total) is the crate's own. The summary is only read, never updated.
///
/// # Errors
/// A message naming the first check that fails.
pub fn decode_topk(bytes: &[u8]) -> Result<(u64, Box<dyn DeviceTop>), String> {
    let frame = Frame::parse(bytes).map_err(|e| e.to_string())?;
    let h = *frame.header();
    if h.kind != SketchKind::SpaceSaving {
        return Err(format!(
            "a {} frame on the top-k stream, expected space-saving",
            h.kind.name()
        ));
    }
    if h.flags != 0 {
        return Err(format!("space-saving frame with flags {:#04x}", h.flags));
    }
    let s = with_summary(&frame, TOP_N, Erase).map_err(|e| format!("{e:#}"))?;
    Ok((h.seed_fingerprint, s))
}

/// A decoded summary behind [`DeviceTop`].
struct Erase;

impl WithSummary for Erase {
    type Out = Box<dyn DeviceTop>;

    fn with<const N: usize>(
        self,
        s: Box<SpaceSaving<FlowKey, N>>,
    ) -> anyhow::Result<Box<dyn DeviceTop>> {
        Ok(s)
    }
}
