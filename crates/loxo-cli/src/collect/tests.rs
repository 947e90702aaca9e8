//! The collector on datagrams built in memory.
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;
use std::collections::BTreeMap;

use loxo_cms::TopK;
use loxo_control::datagram::{ExportKey, SketchDatagram, Stream};
use loxo_core::Seed;
use loxo_flow::FlowKey;
use loxo_hll::Hll;

use super::{
    combine_top, describe, Collector, ErrorKind, Keys, Limits, ReceivedFrame, Sender, TopSummary,
    DEVICE_EPOCH_BYTES, KEY_WIRE_LEN,
};

const SEED: Seed = Seed::new(1, 2);

/// Device `d`'s export key.
fn device_key(d: u32) -> ExportKey {
    let mut b = [0x5a; 16];
    b[..4].copy_from_slice(&d.to_le_bytes());
    ExportKey::from_bytes(b)
}

/// The keys of devices 0..16 and the fleet's fingerprint.
fn keys() -> Keys {
    (0..16).fold(Keys::new(SEED.fingerprint()), |k, d| {
        k.with(d, device_key(d))
    })
}

/// A collector of devices 0..16.
fn collector(limits: Limits) -> Collector {
    Collector::new(limits, keys())
}

thread_local! {
    /// Each device's sender: its sequence numbers go on across a test's frames.
    static SENDERS: RefCell<BTreeMap<u32, Sender>> = const { RefCell::new(BTreeMap::new()) };
}

fn with_sender<T>(device: u32, f: impl FnOnce(&mut Sender) -> T) -> T {
    SENDERS.with(|s| {
        f(s.borrow_mut()
            .entry(device)
            .or_insert_with(|| Sender::new(device, device_key(device), 0)))
    })
}

/// The datagrams device `device` sends for `frame`, numbered after its last ones.
fn datagrams(stream: Stream, device: u32, epoch: u32, frame: &[u8]) -> Vec<Vec<u8>> {
    with_sender(device, |s| s.datagrams(stream, epoch, frame))
}

/// `bytes` edited by `edit`, then renumbered and signed by its device: what a device
/// with a fault would send.
fn resign(bytes: &[u8], edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = bytes.to_vec();
    edit(&mut b);
    let d = SketchDatagram::parse(&b).unwrap();
    with_sender(d.device, |s| s.sign(&d)).unwrap()
}

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

/// Sends a frame's datagrams; after each, the bytes accounted are those held.
fn send(c: &mut Collector, stream: Stream, device: u32, epoch: u32, frame: &[u8]) {
    for d in datagrams(stream, device, epoch, frame) {
        c.push(&d);
        assert_eq!(c.memory_bytes(), c.recount());
    }
}

#[test]
fn two_devices_merge_per_epoch() {
    let mut c = collector(Limits::default());
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
    assert_eq!(c.memory_bytes(), c.recount());
    let e = c.take_finalized().remove(0);
    // Everything taken but the devices.
    assert_eq!(
        c.memory_bytes(),
        super::COLLECTOR_BYTES + 2 * super::DEVICE_BYTES
    );
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
    let mut c = collector(Limits::default());
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
    let mut c = collector(Limits::default());
    // The same datagram twice: a replay, refused before reassembly.
    c.push(&d[0]);
    c.push(&d[1]);
    c.push(&d[1]);
    assert_eq!(c.error_counts().get(&ErrorKind::Replay), Some(&1));
    // A duplicate chunk (sent again, under a new sequence number): the frame is
    // dropped, its later chunks discarded.
    c.push(&resign(&d[1], |_| {}));
    for x in &d[2..] {
        c.push(x);
    }
    assert_eq!(c.error_counts().get(&ErrorKind::Sequence), Some(&1));
    assert_eq!(c.datagrams().1, d.len() as u64 - 2);
    // Corrupt chunk (device-side, so its MAC is good): the frame's CRC catches it.
    for (i, x) in d.iter().enumerate() {
        // device 1 epoch 0 flows is settled: use epoch 1
        c.push(&resign(x, |y| {
            y[15] = 1;
            if i == 2 {
                y[40] ^= 1;
            }
        }));
    }
    assert_eq!(c.error_counts().get(&ErrorKind::Frame), Some(&1));
    // Garbage, a huge total, a chunk starting mid-frame, a frame sent twice.
    c.push(b"nonsense");
    c.push(&resign(&d[0], |y| {
        y[24..28].copy_from_slice(&u32::MAX.to_be_bytes());
        y[14] = 9;
    }));
    c.push(&resign(&d[1], |y| y[15] = 2));
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
    let mut c = collector(Limits::default());
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
        let mut c = collector(Limits {
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
        max_bytes: usize::MAX,
    };
    let mut c = collector(limits);
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
    assert_eq!(c.memory_bytes(), c.recount());
}

/// The frames of epochs skipped are counted once: as lost when no device's datagram
/// opened the epoch (a whole epoch lost), as incomplete when it is open.
#[test]
fn skipped_epochs_are_counted_once() {
    let (f, t) = (hll(0, 100, SEED), topk(&[(1, 5)], SEED));
    let both = |c: &mut Collector, device, epoch| {
        send(c, Stream::Flows, device, epoch, &f);
        send(c, Stream::TopK, device, epoch, &t);
    };
    // Devices 1 and 2 send epochs 0 and 1, device 1 then epoch 4. Device 2 sends
    // (case 0) nothing more: epochs 2 and 3 are lost for both, epoch 4 is incomplete
    // for device 2; (case 1) epochs 2, 3 and 4, before device 1's epoch 4; (case 2)
    // the same after it: device 1's epochs 2 and 3 are incomplete.
    // (lost, incomplete, device 1's losses, device 2's)
    for (case, want) in [(0, (8, 2, 4, 6)), (1, (0, 4, 4, 0)), (2, (0, 4, 4, 0))] {
        let mut c = collector(Limits::default());
        for e in 0..2 {
            both(&mut c, 1, e);
            both(&mut c, 2, e);
        }
        let device_two = |c: &mut Collector| {
            for e in 2..5 {
                both(c, 2, e);
            }
        };
        if case == 1 {
            device_two(&mut c);
        }
        both(&mut c, 1, 4);
        if case == 2 {
            device_two(&mut c);
        }
        c.finish();
        let counts = c.error_counts();
        let n = |k| counts.get(&k).copied().unwrap_or(0);
        let l = |d| c.losses().get(&d).copied().unwrap_or(0);
        assert_eq!(
            (n(ErrorKind::Lost), n(ErrorKind::Incomplete), l(1), l(2)),
            want,
            "case {case}"
        );
        let m = c.take_messages();
        assert!(
            case != 0
                || m.iter().any(|m| m
                    .contains("epochs 2..=3: no datagram of them arrived from any device: 8 frames of 2 devices lost")),
            "{m:?}"
        );
    }
}

/// A missing chunk in the middle of a frame (a datagram lost) is counted against its
/// device.
#[test]
fn a_lost_chunk_is_counted_against_its_device() {
    let mut c = collector(Limits::default());
    let d = datagrams(Stream::Flows, 7, 0, &hll(0, 5000, SEED));
    for (i, x) in d.iter().enumerate() {
        if i != 2 {
            c.push(x);
        }
    }
    send(&mut c, Stream::TopK, 7, 0, &topk(&[(1, 5)], SEED));
    c.finish();
    assert_eq!(c.error_counts().get(&ErrorKind::Sequence), Some(&1));
    assert_eq!(c.losses().get(&7), Some(&1));
}

/// With a memory limit the state never passes it: a newer epoch finalizes the oldest
/// open one to make room (so the collector keeps up with its devices), what still
/// does not fit is refused, and both are counted and named.
#[test]
fn memory_limit_refuses_and_names_itself() {
    let max_bytes = 40_000;
    let mut c = collector(Limits {
        max_bytes,
        ..Limits::default()
    });
    let (f, t) = (hll(0, 5000, SEED), topk(&[(1, 5), (2, 7)], SEED));
    // Each epoch's fleet HLL takes 12 584 bytes, a frame in reassembly 12 336: two
    // epochs and a frame fit, not three epochs. Device 0 runs ahead, device 1 lags an
    // epoch behind after epoch 0.
    let mut messages = Vec::new();
    let mut schedule = vec![(0, 0), (1, 0)];
    for e in 1..8u32 {
        schedule.push((0, e));
        if e >= 2 {
            schedule.push((1, e - 1));
        }
    }
    for (device, epoch) in schedule {
        for x in datagrams(Stream::Flows, device, epoch, &f)
            .iter()
            .chain(&datagrams(Stream::TopK, device, epoch, &t))
        {
            c.push(x);
            assert!(c.memory_bytes() <= max_bytes, "{}", c.memory_bytes());
            assert_eq!(c.memory_bytes(), c.recount());
        }
        drop(c.take_finalized());
        messages.extend(c.take_messages());
    }
    c.finish();
    let last = c.take_finalized().pop().unwrap();
    assert_eq!(
        (last.epoch, last.flows_devices),
        (7, vec![0]),
        "{messages:?}"
    );
    let counts = c.error_counts();
    assert!(counts.get(&ErrorKind::Incomplete).is_some(), "{counts:?}");
    assert!(counts.get(&ErrorKind::Late).is_some(), "{counts:?}");
    assert!(counts.get(&ErrorKind::Capacity).is_some(), "{counts:?}");
    // Device 1's lagging epochs are finalized early for device 0's newer ones (its
    // datagrams of them then late); a frame that does not fit even so is refused.
    for want in [
        "device 1 epoch 1 flows: not received (epoch finalized early: the memory limit of 40000 bytes was reached",
        "would pass the memory limit of 40000 bytes",
    ] {
        assert!(messages.iter().any(|m| m.contains(want)), "{messages:?}");
    }
    // Room for a device and an epoch, not for a frame's slot: every datagram is
    // refused, none is held.
    let max_bytes = super::COLLECTOR_BYTES + super::DEVICE_BYTES + super::EPOCH_BYTES + 10;
    let mut c = collector(Limits {
        max_bytes,
        max_messages: 0,
        ..Limits::default()
    });
    let d = datagrams(Stream::Flows, 1, 0, &f);
    for x in &d {
        c.push(x);
        assert!(c.memory_bytes() <= max_bytes);
    }
    assert_eq!(
        c.error_counts().get(&ErrorKind::Capacity),
        Some(&(d.len() as u64))
    );
}

/// Frames for `--out` come out as received, and are accounted until taken.
#[test]
fn frames_for_output_are_the_frames_received() {
    let mut c = collector(Limits::default()).with_frame_output();
    let (f, t) = (hll(0, 3000, SEED), topk(&[(1, 5)], SEED));
    send(&mut c, Stream::Flows, 3, 9, &f);
    send(&mut c, Stream::TopK, 3, 9, &t);
    assert!(c.memory_bytes() >= f.len() + 2 * t.len());
    let got = c.take_frames();
    let want = [(Stream::Flows, &f), (Stream::TopK, &t)].map(|(stream, b)| ReceivedFrame {
        epoch: 9,
        device: 3,
        stream,
        bytes: b.clone(),
    });
    assert_eq!(got, want);
    assert_eq!(c.memory_bytes(), c.recount());
    // A device-epoch holds its top-k frame and its slots, within the documented figure.
    let held = c.memory_bytes() - super::COLLECTOR_BYTES - super::EPOCH_BYTES - super::DEVICE_BYTES;
    let fleet_hll = Hll::<14>::new(SEED).memory_bytes();
    assert!(held - fleet_hll <= DEVICE_EPOCH_BYTES, "{held}");
}

/// The first flows frame of an epoch sets its precision; another precision is counted
/// and not merged.
#[test]
fn another_precision_is_not_merged() {
    let mut c = collector(Limits::default());
    let mut h12 = Hll::<12>::new(SEED);
    h12.insert(b"x");
    let mut b = vec![0u8; h12.encoded_len()];
    let n = h12.encode_into(&mut b).unwrap();
    send(&mut c, Stream::Flows, 1, 0, &hll(0, 100, SEED));
    send(&mut c, Stream::Flows, 2, 0, &b[..n]);
    c.finish();
    assert_eq!(c.error_counts().get(&ErrorKind::Geometry), Some(&1));
    let e = c.take_finalized().remove(0);
    assert_eq!(e.flows_devices, vec![1]);
    assert_eq!(e.flows.unwrap().precision(), 14);
}

/// At the default limits, the state at its worst fits the default memory limit: the
/// byte limit only binds when the others are raised.
#[test]
fn default_limits_fit_the_default_memory_limit() {
    let l = Limits::default();
    println!("worst case {} bytes", l.worst_case_bytes());
    assert!(l.worst_case_bytes() <= l.max_bytes);
}

/// An attacker's flows frame: every register at its largest rank, the estimate
/// infinite (or nearly), under the fleet's fingerprint (public by design).
fn poisoned_hll() -> Vec<u8> {
    let mut h = Hll::<14>::new(SEED);
    for i in 0..1 << 14 {
        h.update_register(i, 64 - 14 + 1);
    }
    let mut buf = vec![0u8; h.encoded_len()];
    let n = h.encode_into(&mut buf).unwrap();
    buf.truncate(n);
    buf
}

/// Honest devices 1 and 2 send epoch 0 (disjoint flows, 3 000 each), then `attack`
/// sends its datagrams, then both send epoch 1; returns epoch 0's summary.
fn honest_fleet_under(
    c: &mut Collector,
    attack: impl FnOnce(&mut Collector),
) -> super::EpochSummary {
    for device in [1, 2] {
        send(
            c,
            Stream::Flows,
            device,
            0,
            &hll(device * 10_000, 3000, SEED),
        );
        send(c, Stream::TopK, device, 0, &topk(&[(device, 500)], SEED));
    }
    attack(c);
    for device in [1, 2] {
        send(c, Stream::Flows, device, 1, &hll(0, 10, SEED));
        send(c, Stream::TopK, device, 1, &topk(&[(1, 1)], SEED));
    }
    c.finish();
    c.take_finalized().remove(0)
}

/// Issue 33: a datagram from a device no key lists, carrying the fleet's
/// fingerprint, was merged — the fleet's distinct flows became infinite and a fake
/// 10¹⁵-byte flow ranked first, with no error. Now it is refused and counted, and so
/// is one claiming an honest device's id without its key. (The same attack on the
/// unauthenticated collector, today's behaviour before keys, still succeeds: the
/// check below that it does keeps this test honest.)
#[test]
fn an_unknown_device_with_the_fleet_fingerprint_is_not_merged() {
    let fake = 1_000_000_000_000_000;
    let attack = |c: &mut Collector| {
        let mut rogue = Sender::new(666, device_key(666), 0);
        let mut spoof = Sender::new(1, device_key(666), 7);
        for s in [&mut rogue, &mut spoof] {
            for x in s
                .datagrams(Stream::Flows, 0, &poisoned_hll())
                .into_iter()
                .chain(s.datagrams(Stream::TopK, 0, &topk(&[(99, fake)], SEED)))
            {
                c.push(&x);
            }
        }
    };
    let mut c = collector(Limits::default());
    let e = honest_fleet_under(&mut c, attack);
    let est = e.flows.as_ref().unwrap().estimate();
    // 6 000 distinct keys; 4σ, σ = 1.04/√16384.
    assert!(
        est.is_finite() && (est - 6000.0).abs() < 6000.0 * 4.0 * 1.04 / 128.0,
        "{est}"
    );
    assert_eq!(e.flows_devices, vec![1, 2]);
    assert!(e.top.iter().all(|f| f.key != key(99)), "{:?}", e.top);
    assert_eq!(e.top_total, 1000);
    let n = |k| c.error_counts().get(&k).copied().unwrap_or(0);
    // 9 flows datagrams and 1 top-k one per sender.
    assert_eq!(
        (n(ErrorKind::UnknownDevice), n(ErrorKind::BadMac)),
        (10, 10)
    );
    assert_eq!(c.error_count(), 20, "{:?}", c.take_messages());
    let m = c.take_messages();
    assert!(
        m.iter()
            .any(|m| m
                .contains("device 666 epoch 0 flows datagram 0: not a device of the keys file")),
        "{m:?}"
    );

    // Without authentication the attack works: what `--insecure-no-auth` risks.
    let mut c = Collector::insecure(Limits::default());
    let e = honest_fleet_under(&mut c, attack);
    assert!(e.flows.unwrap().estimate() > 1e9);
    assert_eq!(e.top[0].key, key(99));
}

/// Issue 33: one datagram of a foreign fingerprint sent before the honest devices made
/// the collector take it as the fleet's and refuse all the honest frames. The fleet's
/// fingerprint is now configured: the honest frames are merged, the foreign one
/// counted as a seed mismatch — whether its sender is a listed device or not.
#[test]
fn a_foreign_fingerprint_first_does_not_lock_the_fleet_out() {
    let mut c = collector(Limits::default());
    let other = Seed::new(0xbad, 0);
    // Device 3 (listed) first, with another seed; device 666 (unlisted) too.
    send(&mut c, Stream::Flows, 3, 0, &hll(0, 100, other));
    send(&mut c, Stream::TopK, 3, 0, &topk(&[(5, 5)], other));
    for x in Sender::new(666, device_key(666), 0).datagrams(Stream::Flows, 0, &hll(0, 100, other)) {
        c.push(&x);
    }
    let e = honest_fleet_under(&mut c, |_| {});
    assert_eq!(e.fingerprint, Some(SEED.fingerprint()));
    assert_eq!(
        (e.flows_devices.clone(), e.top_devices.clone()),
        (vec![1, 2], vec![1, 2])
    );
    let n = |k| c.error_counts().get(&k).copied().unwrap_or(0);
    assert_eq!((n(ErrorKind::Seed), n(ErrorKind::UnknownDevice)), (2, 1));
    // Device 3 sent nothing of epoch 1: its two frames are missing.
    assert_eq!(c.error_count(), 3 + 2, "{:?}", c.take_messages());

    // The unauthenticated collector without a configured fingerprint: first wins.
    let mut c = Collector::insecure(Limits::default());
    send(&mut c, Stream::Flows, 3, 0, &hll(0, 100, other));
    let e = honest_fleet_under(&mut c, |_| {});
    assert_eq!(e.flows_devices, vec![3], "the honest devices refused");
}

/// Issue 33: a replay of an honest device's earlier datagrams (byte for byte, MAC
/// good) is refused and counted; so is one older than the window. A gap in a device's
/// sequence numbers is counted as datagrams lost.
#[test]
fn replayed_datagrams_are_refused_and_gaps_counted() {
    let mut c = collector(Limits::default());
    let f = hll(0, 3000, SEED);
    let mut recorded = Vec::new();
    for device in [1, 2] {
        for x in datagrams(Stream::Flows, device, 0, &f)
            .into_iter()
            .chain(datagrams(Stream::TopK, device, 0, &topk(&[(1, 5)], SEED)))
        {
            c.push(&x);
            recorded.push(x);
        }
    }
    // Every datagram of epoch 0 replayed, byte for byte, before and after epoch 1.
    for x in &recorded {
        c.push(x);
    }
    for device in [1, 2] {
        send(&mut c, Stream::Flows, device, 1, &hll(0, 10, SEED));
        send(&mut c, Stream::TopK, device, 1, &topk(&[(1, 1)], SEED));
    }
    for x in &recorded {
        c.push(x);
    }
    c.finish();
    let e = c.take_finalized().remove(0);
    assert_eq!(e.flows_devices, vec![1, 2]);
    assert_eq!(e.top_total, 10);
    let n = |c: &Collector, k| c.error_counts().get(&k).copied().unwrap_or(0);
    assert_eq!(n(&c, ErrorKind::Replay), 2 * recorded.len() as u64);
    assert_eq!(
        c.error_count(),
        2 * recorded.len() as u64,
        "{:?}",
        c.take_messages()
    );
    assert!(c.datagram_losses().is_empty(), "{:?}", c.datagram_losses());

    // A device losing datagrams: 5 numbers skipped, then one datagram older than
    // the window replayed.
    let mut c = collector(Limits::default());
    let mut s = Sender::new(4, device_key(4), 2);
    let d = s.datagrams(Stream::Flows, 0, &f);
    s.skip(5);
    for x in &d {
        c.push(x);
    }
    for x in s.datagrams(Stream::Flows, 1, &f) {
        c.push(&x);
    }
    assert_eq!(c.datagram_losses().get(&4), Some(&5));
    for _ in 0..super::WINDOW {
        s.datagrams(Stream::Flows, 2, &[]);
    }
    for x in s.datagrams(Stream::Flows, 2, &f) {
        c.push(&x);
    }
    c.push(&d[0]);
    assert_eq!(n(&c, ErrorKind::Replay), 1);
    assert!(c
        .take_messages()
        .iter()
        .any(|m| m.contains("older than the device's last 64")));
    assert_eq!(c.datagram_losses().get(&4), Some(&(5 + super::WINDOW)));
}
