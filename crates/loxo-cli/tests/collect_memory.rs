//! The heap a `Collector` holds, measured: a counting global allocator
//! (`stats_alloc`) sees every byte the collector allocates and frees while 16 devices
//! send 8 epochs of the geometry of issue 33's attack — dense `Hll<18>` flows frames
//! (196 656 bytes) and full top-k frames (256 candidates, 14 900 bytes) — with every
//! epoch kept open (`min_devices` above the fleet). Checked: the heap held is at most
//! what [`Collector::memory_bytes`] accounts, which is at most the documented figure
//! (one fleet HLL per open epoch, `DEVICE_EPOCH_BYTES` per device-epoch), and the
//! heap per device-epoch, past the per-epoch HLLs, is at most `DEVICE_EPOCH_BYTES`.
//! Before the fix a device-epoch held its decoded `Hll<18>` and its frame as received:
//! 426 633 bytes per device-epoch measured this way (16 × 8 and 128 × 8 alike),
//! against 15 112 now.
//!
//! One test in this binary: the allocator's counters are process-wide. Runtime
//! ≈ 0.7 s (128 frames of `Hll<18>` decoded and merged).
#![allow(clippy::unwrap_used)]

use std::alloc::System;

use loxo_cli::collect::{
    Collector, Keys, Limits, Sender, TopSummary, COLLECTOR_BYTES, DEVICE_BYTES, DEVICE_EPOCH_BYTES,
    EPOCH_BYTES, KEY_WIRE_LEN,
};
use loxo_cms::TopK;
use loxo_control::datagram::{ExportKey, Stream};
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_hll::Hll;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// A dense `Hll<18>` frame and a full top-k frame of 256 candidates.
fn frames(seed: Seed) -> (Vec<u8>, Vec<u8>) {
    let mut h = Box::new(Hll::<18>::new(seed));
    // 200 000 keys fill ≈ 53 % of the 2^18 registers: the dense payload.
    for i in 0..200_000u32 {
        h.insert(&i.to_le_bytes());
    }
    let mut flows = vec![0u8; h.encoded_len()];
    let n = h.encode_into(&mut flows).unwrap();
    flows.truncate(n);
    let mut s = Box::new(TopSummary::new());
    for i in 0..1000u32 {
        let k = FlowKey::v4([10, 0, 0, 1], i.to_be_bytes(), 1, 2, 6);
        s.update(&k, k.hash_with(&seed), 1 + u64::from(i % 7));
    }
    let mut topk = vec![0u8; s.encoded_len::<KEY_WIRE_LEN>()];
    s.encode_into::<KEY_WIRE_LEN>(&seed, &mut topk).unwrap();
    (flows, topk)
}

#[test]
fn collector_heap_per_device_epoch_is_the_documented_figure() {
    let (flows, topk) = frames(Seed::new(1, 2));
    assert_eq!((flows.len(), topk.len()), (196_656, 14_900), "dense, full");
    let (devices, epochs) = (16usize, 8usize);
    // The keys (and their replay windows) are allocated once, before: their cost,
    // `KEY_BYTES` per device listed, is fixed by the keys file.
    let key = |d: u32| ExportKey::from_bytes([d as u8; 16]);
    let keys = (0..devices as u32).fold(Keys::new(Seed::new(1, 2).fingerprint()), |k, d| {
        k.with(d, key(d))
    });
    let mut senders: Vec<Sender> = (0..devices as u32)
        .map(|d| Sender::new(d, key(d), 0))
        .collect();
    let region = Region::new(GLOBAL);
    let mut c = Collector::new(
        Limits {
            // No epoch closes: all 8 stay open.
            min_devices: devices + 1,
            ..Limits::default()
        },
        keys,
    );
    for e in 0..epochs as u32 {
        for s in &mut senders {
            for x in s
                .datagrams(Stream::Flows, e, &flows)
                .iter()
                .chain(&s.datagrams(Stream::TopK, e, &topk))
            {
                c.push(x);
            }
        }
    }
    let st = region.change();
    // `stats_alloc` adds a reallocation's growth to the bytes allocated (and its
    // shrinking to those freed).
    let heap = st.bytes_allocated - st.bytes_deallocated;
    let accounted = c.memory_bytes();
    let hll = size_of::<Hll<18>>();
    let documented = COLLECTOR_BYTES
        + epochs * (EPOCH_BYTES + hll)
        + devices * DEVICE_BYTES
        + devices * epochs * DEVICE_EPOCH_BYTES;
    let per_device_epoch = (heap - epochs * hll) / (devices * epochs);
    println!(
        "heap {heap} B, accounted {accounted} B, documented {documented} B; per device-epoch {per_device_epoch} B past the {epochs} fleet HLLs of {hll} B (DEVICE_EPOCH_BYTES {DEVICE_EPOCH_BYTES})"
    );
    assert_eq!(c.error_count(), 0, "{:?}", c.take_messages());
    assert!(heap <= accounted, "heap {heap} > accounted {accounted}");
    assert!(accounted <= documented, "{accounted} > {documented}");
    assert!(per_device_epoch <= DEVICE_EPOCH_BYTES, "{per_device_epoch}");
    // And what the collector holds does go: finalized and taken, only the devices
    // remain.
    c.finish();
    drop(c.take_finalized());
    drop(c.take_messages());
    let st = region.change();
    let heap = st.bytes_allocated - st.bytes_deallocated;
    assert!(heap <= COLLECTOR_BYTES + devices * DEVICE_BYTES, "{heap}");
}
