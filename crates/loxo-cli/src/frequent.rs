//! A device's top-k summary as an Apache DataSketches frequent items image:
//! what `loxo export --datasketches OUT FILE` writes, and the tests call.
//!
//! The input is a loxo `space-saving` frame of flow keys (38-byte [`FlowKey`] wire
//! keys: a `FlowMonitor`'s candidates as the firmware ships them) made under any seed.
//! The output is the image of a DataSketches `frequent_strings_sketch` whose items are
//! the flow keys' canonical text (`10.0.0.1:1234 -> 10.0.0.2:80 proto 6`); the mapping
//! of Space-Saving's bounds onto DataSketches' and its proof are in
//! [`loxo_interop::frequent`].

use anyhow::{bail, Context};
use loxo_cms::{SpaceSaving, TopK};
use loxo_core::wire::{frame_len, Encoder, Frame, Header, SketchKind};
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_interop::frequent::{display_text, encode_space_saving, max_encoded_len};

/// Wire bytes of a [`FlowKey`] in a top-k frame.
pub const KEY_WIRE_LEN: u32 = 38;
/// The longest [`FlowKey`] text: two bracketed full IPv6 addresses, ports and
/// protocol (`[…]:65535 -> […]:65535 proto 255`).
pub const FLOW_TEXT_MAX: usize = 2 * (41 + 6) + 4 + 10;

/// Placeholder seed: a summary is only read here, never updated, so the device's seed
/// is not needed (the payload's CRC-32 is checked before it is re-signed with this).
const READ_SEED: Seed = Seed::new(0, 0);

/// What [`datasketches_image`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// The serialized `frequent_strings_sketch`.
    pub bytes: Vec<u8>,
    /// Candidates of the summary (`N`).
    pub capacity: usize,
    /// Monitored keys in the summary.
    pub monitored: usize,
    /// Items in the image (every monitored key whose lower bound is positive).
    pub items: usize,
    /// The stream weight `N` (the summary's total).
    pub total: u64,
    /// The image's offset, DataSketches' maximum error: the summary's minimum count
    /// once it is full, else 0.
    pub offset: u64,
    /// Seed fingerprint of the frame.
    pub seed_fingerprint: u64,
}

/// Decodes a `space-saving` frame of flow keys with `N` candidates under any seed:
/// every check is `loxo-cms`'s own (`SpaceSaving::decode_into`), after the verified
/// payload is re-signed under a placeholder seed. Shared with `loxo collect`
/// ([`decode_topk`](crate::collect::decode_topk)).
pub(crate) fn decode_unseeded<const N: usize>(
    frame: &Frame<'_>,
) -> anyhow::Result<Box<SpaceSaving<FlowKey, N>>> {
    let h = *frame.header();
    let payload = frame.payload();
    let mut buf = vec![0u8; frame_len(payload.len())];
    let header = Header::new(
        SketchKind::SpaceSaving,
        READ_SEED.fingerprint(),
        h.params,
        h.payload_len,
    );
    let mut enc = Encoder::new(&mut buf, &header)?;
    enc.put(payload);
    enc.finish();
    let mut s = Box::new(SpaceSaving::<FlowKey, N>::new());
    s.decode_into::<38>(&READ_SEED, &buf)
        .context("space-saving frame")?;
    Ok(s)
}

/// What to do with a decoded `space-saving` summary of flow keys once its `N` is
/// known ([`with_summary`]).
pub(crate) trait WithSummary {
    /// What it makes of the summary.
    type Out;
    /// Uses the summary of `N` candidates.
    ///
    /// # Errors
    /// Whatever it finds wrong.
    fn with<const N: usize>(self, s: Box<SpaceSaving<FlowKey, N>>) -> anyhow::Result<Self::Out>;
}

/// Decodes a `space-saving` frame of flow keys under any seed ([`decode_unseeded`])
/// whatever its number of candidates `N` — a power of two from 16 to `max` (at most
/// 4096): a monitor's `N`, 256 by default and 128 on the sample firmware — and hands
/// the summary to `w`. The one place a frame's `N` becomes a type.
///
/// # Errors
/// Another key length than a [`FlowKey`]'s, an `N` outside the list, a corrupt
/// frame, or `w`'s error.
pub(crate) fn with_summary<W: WithSummary>(
    frame: &Frame<'_>,
    max: usize,
    w: W,
) -> anyhow::Result<W::Out> {
    let [n, key_len, ..] = frame.header().params;
    if key_len != KEY_WIRE_LEN {
        bail!("{key_len}-byte keys, expected flow keys ({KEY_WIRE_LEN} bytes)");
    }
    let max = max.min(4096);
    let refused =
        || anyhow::anyhow!("a summary of {n} candidates (supported: powers of two 16..={max})");
    if n as usize > max {
        return Err(refused());
    }
    match n {
        16 => w.with(decode_unseeded::<16>(frame)?),
        32 => w.with(decode_unseeded::<32>(frame)?),
        64 => w.with(decode_unseeded::<64>(frame)?),
        128 => w.with(decode_unseeded::<128>(frame)?),
        256 => w.with(decode_unseeded::<256>(frame)?),
        512 => w.with(decode_unseeded::<512>(frame)?),
        1024 => w.with(decode_unseeded::<1024>(frame)?),
        2048 => w.with(decode_unseeded::<2048>(frame)?),
        4096 => w.with(decode_unseeded::<4096>(frame)?),
        _ => Err(refused()),
    }
}

/// The DataSketches image of a summary ([`datasketches_image`]).
struct ImageOf<'a> {
    frame: &'a Frame<'a>,
    lg_max_map_size: Option<u8>,
}

impl WithSummary for ImageOf<'_> {
    type Out = Image;

    fn with<const N: usize>(self, s: Box<SpaceSaving<FlowKey, N>>) -> anyhow::Result<Image> {
        image(self.frame, &s, self.lg_max_map_size)
    }
}

fn image<const N: usize>(
    frame: &Frame<'_>,
    s: &SpaceSaving<FlowKey, N>,
    lg_max_map_size: Option<u8>,
) -> anyhow::Result<Image> {
    let mut bytes = vec![0u8; max_encoded_len(s.len(), FLOW_TEXT_MAX)];
    let n = encode_space_saving(s, lg_max_map_size, display_text, &mut bytes)?;
    bytes.truncate(n);
    let view = loxo_interop::FrequentItemsView::new_checked(&bytes)?;
    Ok(Image {
        items: view.num_items(),
        offset: view.maximum_error(),
        bytes,
        capacity: N,
        monitored: s.len(),
        total: s.total(),
        seed_fingerprint: frame.header().seed_fingerprint,
    })
}

/// The DataSketches `frequent_strings_sketch` image of a loxo `space-saving` frame of
/// flow keys (`N` ∈ {16, 32, …, 4096}; the monitor's default is 256).
///
/// `lg_max_map_size`: the map size the image announces, `None` for the smallest that
/// holds its items.
///
/// # Errors
/// A corrupt frame, another kind (`heavy-keeper` and `cms-topk` summaries have no
/// deterministic bounds, so no DataSketches image would keep DataSketches' promises),
/// other keys than flow keys, an `N` outside the list, or an image error
/// ([`loxo_interop::frequent::FrequentItemsError`]).
pub fn datasketches_image(bytes: &[u8], lg_max_map_size: Option<u8>) -> anyhow::Result<Image> {
    let frame = Frame::parse(bytes)?;
    let h = *frame.header();
    match h.kind {
        SketchKind::SpaceSaving => {}
        SketchKind::HeavyKeeper => bail!(
            "a heavy-keeper summary has no deterministic bounds (its counts can be off by \
             any amount), so its DataSketches image would claim bounds that do not hold; \
             export a space-saving summary"
        ),
        k => bail!("a {} frame, expected space-saving", k.name()),
    }
    if h.flags != 0 {
        bail!("space-saving frame with flags {:#04x}", h.flags);
    }
    with_summary(
        &frame,
        4096,
        ImageOf {
            frame: &frame,
            lg_max_map_size,
        },
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use loxo_interop::FrequentItemsView;

    #[test]
    fn a_flow_summary_becomes_an_image_of_its_texts() {
        let seed = Seed::new(5, 6);
        let mut ss = SpaceSaving::<FlowKey, 16>::new();
        let v4 = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
        let v6 = FlowKey::v6([0xfe; 16], [0xef; 16], 65535, 65535, 255);
        for (k, w) in [(v4, 1500), (v6, 64), (v4, 1500)] {
            ss.update(&k, k.hash_with(&seed), w);
        }
        assert_eq!(v6.to_string().len(), FLOW_TEXT_MAX); // the longest text
        let mut frame = vec![0u8; ss.encoded_len::<38>()];
        ss.encode_into::<38>(&seed, &mut frame).unwrap();
        let img = datasketches_image(&frame, None).unwrap();
        assert_eq!((img.items, img.offset, img.total), (2, 0, 3064));
        assert_eq!(img.seed_fingerprint, seed.fingerprint());
        let view = FrequentItemsView::new_checked(&img.bytes).unwrap();
        assert_eq!(view.estimate("10.0.0.1:1234 -> 10.0.0.2:80 proto 6"), 3000);
        assert_eq!(view.estimate(&v6.to_string()), 64);
        frame[40] ^= 1;
        assert!(datasketches_image(&frame, None).is_err());
    }
}
