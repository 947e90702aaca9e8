//! Frequencies and heavy hitters in fixed memory: "how often did I see this key?"
//! and "which keys are the heaviest?", `#![no_std]`, no allocation, storage inline.
//!
//! | type | answers | error | memory |
//! |---|---|---|---|
//! | [`Cms<W, D, C>`](Cms) | frequency of any key (upper bound) | `+ε·N`, ε = e/W, w.p. 1 − e^−D | `D·W·size_of::<C>()` + 32 B |
//! | [`CmsCu<W, D, C>`](CmsCu) | same, conservative update | ≤ the plain sketch's | same |
//! | [`CmsPair<W, D>`](CmsPair) | two measures of each key (bytes and packets), conservative update, rows shared | each `+ε·N_measure` w.p. 1 − e^−D | `8·D·W` + 16·(D + 1) B |
//! | [`CountSketch<W, D>`](CountSketch) | frequency, unbiased, turnstile | `±√(3/W)·‖f‖₂` | `8·D·W` + 24 B |
//! | [`SpaceSaving<K, N>`](SpaceSaving) | top-k, deterministic bounds | `count − error ≤ f ≤ count` | `N·(size_of::<Slot>() + 14) + 8` |
//! | [`HeavyKeeper<W, D, N, K>`](HeavyKeeper) | top-k, count-with-exponential-decay | none (empirically tiny) | `8·D·W` + heap |
//! | [`CmsTopK<W, D, N, K>`](CmsTopK) | top-k from a CMS-CU + min-heap | `+ε·N` | CMS + heap |
//! | [`HeavyGuardian<W, D, L, K>`](HeavyGuardian) | top-k, weakest-cell decay, full keys | `count ≤ f` (lower bound only) | `W·L·(size_of::<K>() + 4)` + 16 |
//! | [`TieredTopK<H, C, S, K>`](TieredTopK) | top-k, full-key heavy cells behind a cold fingerprint tier behind first-arrival records | none (measured at 8 KiB, top 100: ARE ≤ 0.67 % on the 7 design classes at 10⁷ packets; on 240 held-out streams drawn from wide ranges, F1 ≥ 0.95 on 68 %, median ARE 1.19 %) | `H·(4·size_of::<K>() + 16) + 6·C + S` + 20 |
//!
//! The top-k summaries implement one trait, [`TopK`], so a flow monitor can
//! swap them. Every structure takes a pre-computed [`KeyHash`](loxo_core::KeyHash):
//! hash a key once with [`Seed::hash`](loxo_core::Seed::hash) and feed the same
//! digest to every sketch (`add` / `add_hash`, `estimate` / `estimate_hash`).
//! Sizing helpers for the Count-Min parameters are in [`sizing`].
//! Space-Saving summaries of disjoint streams (one per device) combine, with
//! deterministic bounds, in a [`SpaceSavingMerge`] over caller-provided cells.
//!
//! ```
//! use loxo_cms::{Cms, HeavyKeeper, TopK};
//! use loxo_core::Seed;
//!
//! let seed = Seed::new(1, 2);
//! let mut cms = Cms::<1024, 4>::new(seed);
//! let mut hk = HeavyKeeper::<256, 2, 16, u32>::new(7);
//! for (flow, bytes) in [(1u32, 1500u64), (2, 64), (1, 1500)] {
//!     let h = seed.hash(&flow.to_le_bytes()); // one hash per packet
//!     cms.add_hash(h, bytes);
//!     hk.update(&flow, h, bytes);
//! }
//! assert!(cms.estimate(&1u32.to_le_bytes()) >= 3000);
//! assert_eq!(hk.estimate(&1, seed.hash(&1u32.to_le_bytes())), Some(3000));
//! ```
//!
//! Out-of-range const parameters fail to compile (a failed `const` assertion,
//! E0080), and a conservative sketch has no `merge` at all (E0599: conservative
//! update is not linear, so adding two sketches would not give the sketch of the union):
//!
//! ```compile_fail,E0080
//! let _ = loxo_cms::Cms::<0, 4>::new(loxo_core::Seed::new(1, 2)); // W = 0
//! ```
//!
//! ```compile_fail,E0080
//! let _ = loxo_cms::CountSketch::<64, 33>::new(loxo_core::Seed::new(1, 2)); // D = 33
//! ```
//!
//! ```compile_fail,E0599
//! let seed = loxo_core::Seed::new(1, 2);
//! let mut a = loxo_cms::CmsCu::<64, 4>::new(seed);
//! let _ = a.merge(&loxo_cms::CmsCu::<64, 4>::new(seed));
//! ```
#![no_std]
#![forbid(unsafe_code)]

mod bucket;
mod cms;
mod cms_pair;
mod count_sketch;
mod entry;
mod heap;
mod heavy_guardian;
mod heavy_keeper;
mod merge;
pub mod sizing;
mod space_saving;
mod tiered;
mod topk;
mod wire;

pub use cms::{Cms, CmsCu, Conservative, Counter, Plain, UpdateRule};
pub use cms_pair::CmsPair;
pub use count_sketch::CountSketch;
pub use entry::Entry;
pub use heap::{Slot, MAX_COUNT};
pub use heavy_guardian::HeavyGuardian;
pub use heavy_keeper::{HeavyKeeper, DECAY_BASE, DECAY_BASE_PERCENT};
/// The key encoding of the top-k summaries' frames (defined in `loxo-core`, shared
/// with the spread sketch).
pub use loxo_core::WireKey;
pub use merge::{MergeFull, MergedEntry, SpaceSavingMerge};
pub use space_saving::SpaceSaving;
pub use tiered::{TieredTopK, COLD_EPOCH_SHIFT};
pub use topk::{CmsTopK, TopK};
