//! The collector on datagrams built in memory.
#![allow(clippy::unwrap_used)]

use loxo_cms::TopK;
use loxo_control::datagram::Stream;
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_hll::Hll;

use super::{
    combine_top, datagrams, describe, Collector, ErrorKind, Limits, TopSummary, KEY_WIRE_LEN,
};

const SEED: Seed = Seed::new(1, 2);

fn key(i: u32) -> FlowKey {
    FlowKey::v4([10, 0, 0, 1], i.to_be_bytes(), 1000, 80, 6)
}

fn hll(from: u32, n: u32, seed: Seed) -> Vec<u8> {
    let mut h = Hll::<14>::new(seed);
    for i in from..from + n {
        h.insert(&i.to_le_bytes());
    }
    let mut buf = vec![0u8; h.encoded_len()];
    let n = h.encode_into(&mut buf).unwrap();
    buf.truncate(n);
    buf
}

fn topk(weights: &[(u32, u64)], seed: Seed) -> Vec<u8> {
    topk_of::<{ super::TOP_N }>(weights, seed)
}

/// The top-k frame of a device whose monitor has `N` candidates.
fn topk_of<const N: usize>(weights: &[(u32, u64)], seed: Seed) -> Vec<u8> {
    let mut s = Box::new(loxo_cms::SpaceSaving::<FlowKey, N>::new());
    for &(k, w) in weights {
        let k = key(k);
        s.update(&k, k.hash_with(&seed), w);
    }
    let mut buf = vec![0u8; s.encoded_len::<KEY_WIRE_LEN>()];
    s.encode_into::<KEY_WIRE_LEN>(&seed, &mut buf).unwrap();
    buf
}

fn send(c: &mut Collector, stream: Stream, device: u32, epoch: u32, frame: &[u8]) {
    for d in datagrams(stream, device, epoch, frame) {
        c.push(&d);
    }
}

#[test]
fn two_devices_merge_per_epoch() {
    let mut c = Collector::new(Limits::default());
    // (device, its flows from, its top-k list)
    let lists = [
        (1, 0, &[(1, 500), (2, 100)][..]),
        (2, 2000, &[(1, 50), (3, 70)]),
    ];
    for epoch in 0..2 {
        for (device, from, top) in lists {
            send(&mut c, Stream::Flows, device, epoch, &hll(from, 3000, SEED));
            send(&mut c, Stream::TopK, device, epoch, &topk(top, SEED));
        }
    }
    assert_eq!(c.closed_epochs(), 2);
    // Epoch 0 is finalized as soon as both devices moved on.
    let first = c.take_finalized();
    assert_eq!(first.len(), 1);
    c.finish();
    assert_eq!(c.error_count(), 0, "{:?}", c.take_messages());
    let e = c.take_finalized().remove(0);
    assert_eq!((e.epoch, e.devices()), (1, vec![1, 2]));
    let est = e.flows.as_ref().unwrap().estimate();
    // 5000 distinct keys; σ = 1.04/√16384 ≈ 0.81 %, 4σ ≈ 3.3 %.
    assert!((est - 5000.0).abs() < 5000.0 * 4.0 * 1.04 / 128.0, "{est}");
    let mut want = Hll::<14>::new(SEED);
    for i in 0..5000u32 {
        want.insert(&i.to_le_bytes());
    }
    let mut back = Hll::<14>::new(SEED);
    back.decode_into(&e.encode_flows().unwrap()).unwrap();
    assert_eq!(back, want);
    // Nothing is full: counts are exact and the bounds tight.
    assert_eq!(e.top_total, 720);
    assert_eq!(e.unlisted_upper, 0);
    let t: Vec<_> = e
        .top
        .iter()
        .map(|f| (f.key, f.count, f.lower, f.upper, f.devices))
        .collect();
    assert_eq!(
        t,
        vec![
            (key(1), 550, 550, 550, 2),
            (key(2), 100, 100, 100, 1),
            (key(3), 70, 70, 70, 1)
        ]
    );
    assert!(describe(&e, 10).contains("10.0.0.1:1000 -> 0.0.0.1:80 proto 6"));
}

/// A device whose monitor has 128 candidates (the sample firmware's) and one with the
/// default 256 merge side by side, each summary full and with its own minimum; a
/// summary of more candidates than the collector takes (512) is refused, not merged.
#[test]
fn summaries_of_128_and_256_candidates_merge() {
    let mut c = Collector::new(Limits::default());
    // 1 000 flows of weight 1..=7 per device: both summaries are full.
    let weights: Vec<(u32, u64)> = (0..1000u32).map(|i| (i, 1 + u64::from(i % 7))).collect();
    for device in 1..=3 {
        send(&mut c, Stream::Flows, device, 0, &hll(0, 100, SEED));
    }
    send(&mut c, Stream::TopK, 1, 0, &topk_of::<128>(&weights, SEED));
    send(&mut c, Stream::TopK, 2, 0, &topk_of::<256>(&weights, SEED));
    // Ten flows: a frame small enough to be decoded, and refused for its `N`.
    send(
        &mut c,
        Stream::TopK,
        3,
        0,
        &topk_of::<512>(&weights[..10], SEED),
    );
    c.finish();
    let messages = c.take_messages();
    assert_eq!(c.error_count(), 1, "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("a summary of 512 candidates (supported: powers of two 16..=256)")),
        "{messages:?}"
    );
    let e = c.take_finalized().remove(0);
    assert_eq!(e.top_devices, vec![1, 2]);
    let total: u64 = weights.iter().map(|w| w.1).sum();
    assert_eq!(e.top_total, 2 * total);
    let (mut a, mut b) = (
        Box::new(loxo_cms::SpaceSaving::<FlowKey, 128>::new()),
        Box::new(TopSummary::new()),
    );
    for &(k, w) in &weights {
        let k = key(k);
        a.update(&k, k.hash_with(&SEED), w);
        b.update(&k, k.hash_with(&SEED), w);
    }
    assert!(a.min_count() > 0 && b.min_count() > 0, "both full");
    assert_eq!(e.unlisted_upper, a.min_count() + b.min_count());
    for f in &e.top {
        let i = u32::from_be_bytes(f.key.dst_bytes().try_into().unwrap());
        let truth = 2 * (1 + u64::from(i % 7));
        assert!(f.lower <= truth && truth <= f.upper, "{f:?}");
    }
}

#[test]
fn full_summaries_widen_upper_bounds_by_the_absent_minimum() {
    let seed = SEED;
    let mut a = Box::new(TopSummary::new());
    let mut b = Box::new(TopSummary::new());
    for i in 0..1000u32 {
        let k = key(i);
        a.update(&k, k.hash_with(&seed), 1 + u64::from(i % 7));
        let k = key(i + 500);
        b.update(&k, k.hash_with(&seed), 1 + u64::from(i % 5));
    }
    let (top, total, unlisted) = combine_top(&[&*a, &*b]);
    assert_eq!(unlisted, a.min_count() + b.min_count());
    assert_eq!(total, a.total() + b.total());
    for f in &top {
        assert!(f.lower <= f.count && f.count <= f.upper);
        // Exact weights of the generated streams.
        let i = u32::from_be_bytes(f.key.dst_bytes().try_into().unwrap());
        let wa = if i < 1000 { 1 + u64::from(i % 7) } else { 0 };
        let wb = if (500..1500).contains(&i) {
            1 + u64::from((i - 500) % 5)
        } else {
            0
        };
        assert!(f.lower <= wa + wb && wa + wb <= f.upper, "{f:?}");
    }
}

#[test]
fn bad_chunks_drop_their_frame_and_are_counted() {
    let frame = hll(0, 5000, SEED);
    let d = datagrams(Stream::Flows, 1, 0, &frame);
    assert!(d.len() > 3);
    let mut c = Collector::new(Limits::default());
    // Duplicate chunk: the frame is dropped, its later chunks discarded.
    c.push(&d[0]);
    c.push(&d[1]);
    c.push(&d[1]);
    for x in &d[2..] {
        c.push(x);
    }
    assert_eq!(c.error_counts().get(&ErrorKind::Sequence), Some(&1));
    assert_eq!(c.datagrams().1, d.len() as u64 - 2);
    // Corrupt chunk: the CRC catches it.
    let mut bad = d.clone();
    let last = bad[2].len() - 1;
    bad[2][last] ^= 1;
    for x in &bad {
        // device 1 epoch 0 flows is settled: use epoch 1
        let mut y = x.clone();
        y[15] = 1;
        c.push(&y);
    }
    assert_eq!(c.error_counts().get(&ErrorKind::Frame), Some(&1));
    // Garbage, a huge total, a chunk starting mid-frame, a frame sent twice.
    c.push(b"nonsense");
    let mut huge = d[0].clone();
    huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
    huge[14] = 9;
    c.push(&huge);
    let mut mid = d[1].clone();
    mid[15] = 2;
    c.push(&mid);
    let t = topk(&[(1, 5)], SEED);
    send(&mut c, Stream::TopK, 1, 3, &t);
    send(&mut c, Stream::TopK, 1, 3, &t);
    let counts = c.error_counts().clone();
    assert_eq!(counts.get(&ErrorKind::Datagram), Some(&1));
    assert_eq!(counts.get(&ErrorKind::TooLarge), Some(&1));
    assert_eq!(counts.get(&ErrorKind::Sequence), Some(&2));
    assert_eq!(counts.get(&ErrorKind::Duplicate), Some(&1));
    assert!(c.take_messages().len() >= 6);
}

#[test]
fn wrong_seed_is_reported_not_merged() {
    let mut c = Collector::new(Limits::default());
    send(&mut c, Stream::Flows, 1, 0, &hll(0, 100, SEED));
    send(&mut c, Stream::TopK, 1, 0, &topk(&[(1, 5)], SEED));
    let other = Seed::new(3, 4);
    send(&mut c, Stream::Flows, 2, 0, &hll(0, 100, other));
    send(&mut c, Stream::TopK, 2, 0, &topk(&[(1, 5)], other));
    c.finish();
    assert_eq!(c.error_counts().get(&ErrorKind::Seed), Some(&2));
    let e = c.take_finalized().remove(0);
    assert_eq!(
        (e.flows_devices.clone(), e.top_devices.clone()),
        (vec![1], vec![1])
    );
    assert_eq!(e.frames.iter().filter(|f| !f.merged).count(), 2);
    assert_eq!(e.top[0].count, 5);
    assert!(describe(&e, 3).contains("not merged"));
}

#[test]
fn min_devices_keeps_an_epoch_open_for_a_late_device() {
    for (min, closed) in [(0, 1), (2, 0)] {
        let mut c = Collector::new(Limits {
            min_devices: min,
            ..Limits::default()
        });
        send(&mut c, Stream::Flows, 1, 0, &hll(0, 100, SEED));
        send(&mut c, Stream::TopK, 1, 0, &topk(&[(1, 5)], SEED));
        assert_eq!(c.closed_epochs(), closed, "min_devices {min}");
        send(&mut c, Stream::Flows, 2, 0, &hll(0, 100, SEED));
        send(&mut c, Stream::TopK, 2, 0, &topk(&[(1, 5)], SEED));
        assert_eq!(c.closed_epochs(), 1);
    }
}

#[test]
fn limits_bound_memory() {
    let limits = Limits {
        max_partial: 2,
        max_devices: 2,
        max_open_epochs: 2,
        max_messages: 4,
        min_devices: 0,
    };
    let mut c = Collector::new(limits);
    let frame = hll(0, 5000, SEED);
    for device in 0..4 {
        c.push(&datagrams(Stream::Flows, device, 0, &frame)[0]);
    }
    // Devices 2 and 3 are past max_devices.
    assert_eq!(c.error_counts().get(&ErrorKind::Capacity), Some(&2));
    // A one-chunk frame needs no buffer; a third partial frame is refused.
    c.push(&datagrams(Stream::TopK, 0, 0, &topk(&[(1, 1)], SEED))[0]);
    c.push(&datagrams(Stream::Flows, 0, 1, &frame)[0]);
    assert_eq!(c.error_counts().get(&ErrorKind::Capacity), Some(&3));
    // Opening a third epoch finalizes epoch 0 (its partial frames count as
    // incomplete, device 1's missing top-k too).
    c.push(&datagrams(Stream::Flows, 0, 2, &frame)[0]);
    assert_eq!(c.take_finalized().len(), 1);
    assert_eq!(c.closed_epochs(), 0, "forced out, not closed");
    assert_eq!(c.error_counts().get(&ErrorKind::Incomplete), Some(&3));
    assert_eq!(c.partial, 1);
    c.push(&datagrams(Stream::Flows, 0, 0, &frame)[0]);
    assert_eq!(c.error_counts().get(&ErrorKind::Late), Some(&1));
    assert_eq!(c.take_messages().len(), 4);
    c.finish();
    assert_eq!(c.partial, 0);
}
