//! The per-frame work between the NIC and the report.
//!
//! **Interim**: `loxo_flow::FlowMonitor` (frame parsing → `FlowKey` → the
//! family sketches → `Report`) has not landed yet. Until it does, this
//! monitor runs the same sketch work on an opaque key — the 16 bytes after
//! the Ethernet destination/source addresses (EtherType, VLAN tag and the
//! start of the IP header; no flow semantics, no parsing) — so the firmware
//! already pays, and measures, one keyed SipHash-1-3, a HeavyKeeper update by
//! bytes and an HLL insert per frame.

use loxo_cms::{Entry, HeavyKeeper, TopK};
use loxo_core::Seed;
use loxo_hll::Hll;

/// Opaque per-frame key (see the module docs).
pub(crate) type Key = [u8; 16];
/// Top-k by bytes: 2 rows × 1024 buckets, 32 candidates.
type Top = HeavyKeeper<1024, 2, 32, Key>;
/// Reported candidates.
pub(crate) const REPORT: usize = 8;
/// Elephant threshold θ as a fraction 1/THETA_INV of all bytes (1 %).
const THETA_INV: u64 = 100;

pub(crate) struct Monitor {
    seed: Seed,
    top: Top,
    distinct: Hll<12>,
    pub(crate) frames: u32,
    pub(crate) bytes: u64,
}

impl Monitor {
    pub(crate) const fn new(seed: Seed) -> Self {
        Self {
            seed,
            top: Top::new(0x4C4F_584F),
            distinct: Hll::new(seed),
            frames: 0,
            bytes: 0,
        }
    }

    /// Feeds one frame (captured bytes, no FCS).
    #[inline(never)]
    pub(crate) fn observe(&mut self, frame: &[u8]) {
        let mut key: Key = [0; 16];
        let window = frame.get(12..).unwrap_or(&[]);
        let n = window.len().min(key.len());
        key[..n].copy_from_slice(&window[..n]);
        let h = self.seed.hash(&key);
        self.top.update(&key, h, frame.len() as u64);
        self.distinct.insert_hash(h);
        self.frames = self.frames.saturating_add(1);
        self.bytes = self.bytes.saturating_add(frame.len() as u64);
    }

    /// The heaviest keys by estimated bytes, largest first.
    pub(crate) fn heaviest(&self) -> heapless::Vec<Entry<Key>, REPORT> {
        let mut out = heapless::Vec::new();
        self.top.report(&mut out);
        out
    }

    /// Whether the heaviest key holds at least θ of all bytes.
    pub(crate) fn elephant_present(&self) -> bool {
        let mut out = heapless::Vec::<Entry<Key>, 1>::new();
        self.top.report(&mut out);
        out.first()
            .is_some_and(|e| e.count.saturating_mul(THETA_INV) >= self.bytes && self.bytes > 0)
    }

    /// Estimated distinct keys.
    pub(crate) fn distinct(&self) -> f64 {
        self.distinct.estimate()
    }

    /// Bytes of RAM the monitor occupies.
    pub(crate) const fn memory_bytes() -> usize {
        core::mem::size_of::<Self>()
    }
}
