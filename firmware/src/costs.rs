//! `costs` feature: instructions per call of each per-frame component, measured
//! under `qemu -icount shift=7` (exact instruction counts: `board::insns`) on
//! synthetic IPv4/UDP frames (no NIC needed). Each timed interval stays below
//! SysTick's wrap (5 242 880 instructions at this shift): a round of `FRAMES` calls
//! is timed on its own.
//!
//! `LOXO_QEMU_ARGS="-icount shift=7" cargo run --release --features costs | cargo run -p xtask -- decode ELF`
//! (or `cargo xtask costs`) prints one `costs:` line per component.

use core::hint::black_box;

use loxo_bloom::{BinaryFuse16, BinaryFuse8, BlockedBloom, RegisterBloom};
use loxo_cms::{HeavyGuardian, HeavyKeeper, SpaceSaving, TieredTopK, TopK};
use loxo_core::{KeyHash, Seed};
use loxo_flow::{parse_frame, FlowKey, Parsed};
use loxo_hll::{Hll, Ull};
use loxo_theta::ThetaSketch;

use crate::board::Ticks;

const FRAMES: usize = 1024;
/// The golden binary fuse filters, as a blocklist in flash.
static FUSE8: &[u8] = include_bytes!("../../tests/golden/binary_fuse8.bin");
static FUSE16: &[u8] = include_bytes!("../../tests/golden/binary_fuse16.bin");
const ROUNDS: u32 = 4;
const LEN: usize = 60;

static mut FRAME_SET: [[u8; LEN]; FRAMES] = [[0; LEN]; FRAMES];
static mut KEYS: [FlowKey; FRAMES] = [FlowKey::v4([0; 4], [0; 4], 0, 0, 0); FRAMES];
static mut HASHES: [u64; FRAMES] = [0; FRAMES];
/// The monitor's candidates before Space-Saving replaced HeavyKeeper (for comparison).
static mut TOPK: HeavyKeeper<1024, 2, 32, FlowKey> = HeavyKeeper::new(1);
/// The firmware's candidates alone (the labels below name their number).
static mut SS: SpaceSaving<FlowKey, { crate::CANDIDATES }> = SpaceSaving::new();
const _: () = assert!(crate::CANDIDATES == 128, "the labels say space-saving<128>");
/// The 8 KiB top-k summaries of `tests/topk_classes` (u64 keys): HeavyKeeper as
/// evaluated, HeavyGuardian with two bucket choices, and the two-tier summary.
static mut HK8K: HeavyKeeper<272, 2, 100, u64, 160> = HeavyKeeper::new(1);
static mut HG8K: HeavyGuardian<170, 2, 4, u64> = HeavyGuardian::with_filler(1, 0);
static mut TT8K: TieredTopK<64, 400, 2700, u64> = TieredTopK::with_filler(1, 0);
static mut FLOWS: Hll<14> = Hll::new(Seed::new(1, 2)).without_martingale();
static mut SOURCES: Hll<10> = Hll::new(Seed::new(1, 2));
static mut BLOOM: BlockedBloom<96, 7> = BlockedBloom::new(Seed::new(1, 2));
/// The monitor's new-flow filter's geometry (`loxo_flow::NewFlowFilter`).
static mut REGISTER: RegisterBloom<768, 5> = RegisterBloom::new(Seed::new(1, 2));
static mut CMS: loxo_flow::FlowSketch = loxo_flow::FlowSketch::new(Seed::new(1, 2));
static mut MON: crate::Monitor = crate::Monitor::with_candidates(crate::CONFIG);
/// Snapshot targets, as the firmware's epoch end copies them.
static mut SNAP_TOP: SpaceSaving<FlowKey, { crate::CANDIDATES }> = SpaceSaving::new();
/// The Theta sketch beside HLL/ULL at about 4 KiB (`Hll<12>` 3 KiB, `Ull<12>` 4 KiB,
/// `ThetaSketch<512>` 4 KiB) and larger.
static mut HLL12: Hll<12> = Hll::new(Seed::new(1, 2));
static mut ULL12: Ull<12> = Ull::new(Seed::new(1, 2));
static mut THETA512: ThetaSketch<512> = ThetaSketch::new(Seed::new(1, 2));
static mut THETA4K: ThetaSketch<4096> = ThetaSketch::new(Seed::new(1, 2));
static mut THETA8K: ThetaSketch<8192> = ThetaSketch::new(Seed::new(1, 2));
/// Distinct digests for the Theta inserts (the frames' 1 024 repeat every round: a
/// repeated key costs a Theta sketch a probe, not an insert).
const DISTINCT: usize = 8192;
static mut DIGESTS: [u64; DISTINCT] = [0; DISTINCT];

fn frame(i: usize) -> [u8; LEN] {
    // About Zipf(1) over 4096 flows: a uniform exponent e in 0..12, then a uniform flow
    // among the 2^e numbered [2^e, 2^(e+1)), so flow x has weight ∝ 1/x.
    let r = (i as u32).wrapping_mul(0x9e37_79b9).rotate_left(7) ^ 0x5bd1_e995;
    let e = r % 12;
    let flow = (1u32 << e) + (r >> 8) % (1u32 << e) - 1;
    let [_, _, hi, lo] = flow.to_be_bytes();
    let mut f = [0u8; LEN];
    f[12] = 0x08;
    f[14] = 0x45;
    f[17] = 46; // total length
    f[22] = 64; // ttl
    f[23] = 17; // UDP
    f[26..30].copy_from_slice(&[10, 0, hi, lo]);
    f[30..34].copy_from_slice(&[192, 168, lo, hi ^ 0x5a]);
    f[34..36].copy_from_slice(&(1000 + u16::from(lo)).to_be_bytes());
    f[36..38].copy_from_slice(&53u16.to_be_bytes());
    f[38..40].copy_from_slice(&26u16.to_be_bytes());
    f
}

/// Times `ROUNDS` passes of `f` over the items `items()` yields (`FRAMES` of them)
/// and logs the instructions per call.
fn measure<I: Iterator>(
    ticks: &Ticks,
    name: &str,
    items: impl Fn() -> I,
    mut f: impl FnMut(I::Item),
) {
    let mut total = 0;
    for _ in 0..ROUNDS {
        let t0 = ticks.now();
        for x in items() {
            f(x);
        }
        total += ticks.insns_since(t0);
    }
    defmt::info!(
        "costs: {=str} insns_per_call={=u32}",
        name,
        total / (FRAMES as u32 * ROUNDS)
    );
}

/// Times one call of `f` and logs its instructions.
fn once(ticks: &Ticks, name: &str, f: impl FnOnce()) {
    let t0 = ticks.now();
    f();
    let dt = ticks.insns_since(t0);
    defmt::info!("costs: {=str} insns_once={=u32}", name, dt);
}

/// Times `f` over `items` once and logs the instructions per item (`count` of them).
fn per_item<I: Iterator>(
    ticks: &Ticks,
    name: &str,
    count: u32,
    items: I,
    mut f: impl FnMut(I::Item),
) {
    let t0 = ticks.now();
    for x in items {
        f(x);
    }
    let dt = ticks.insns_since(t0);
    defmt::info!("costs: {=str} insns_per_call={=u32}", name, dt / count);
}

/// The digests `d` as keys, each through `black_box`.
fn hashes(d: &[u64]) -> impl Iterator<Item = KeyHash> + '_ {
    d.iter().map(|&x| KeyHash::from_u64(black_box(x)))
}

/// Theta sketch inserts of distinct keys (exact mode; estimation mode with its
/// amortized rebuilds) and one rebuild.
fn theta(ticks: &Ticks) {
    // SAFETY: called once from `run`; nothing else touches these statics.
    let (digests, t512, t4k, t8k) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(DIGESTS),
            &mut *core::ptr::addr_of_mut!(THETA512),
            &mut *core::ptr::addr_of_mut!(THETA4K),
            &mut *core::ptr::addr_of_mut!(THETA8K),
        )
    };
    for (i, d) in digests.iter_mut().enumerate() {
        *d = loxo_core::mix64(0x7e7a_0000 + i as u64);
    }
    let digests: &[u64] = digests;
    let (first, second) = digests.split_at(DISTINCT / 2);
    let half = (DISTINCT / 2) as u32;
    // 4 096 new keys below the rebuild point (7 680): every key is stored.
    per_item(
        ticks,
        "theta<8192> insert_hash (exact, new keys)",
        half,
        hashes(first),
        |h| {
            black_box(t8k.insert_hash(h));
        },
    );
    // Keys 4 096 ..= 8 191 of a stream: most are rejected at θ, the rest stored, with
    // the rebuilds they cause (k = 256: about one).
    for h in hashes(first) {
        t512.insert_hash(h);
    }
    per_item(
        ticks,
        "theta<512> insert_hash (estimation, n 4k..8k)",
        half,
        hashes(second),
        |h| {
            black_box(t512.insert_hash(h));
        },
    );
    // One rebuild of K = 4 096: the insert that fills the table to 3 840.
    let mut rest = hashes(digests);
    for h in rest.by_ref() {
        t4k.insert_hash(h);
        if t4k.retained() + 1 == ThetaSketch::<4096>::REBUILD_AT {
            break;
        }
    }
    if let Some(h) = rest.next() {
        once(
            ticks,
            "theta<4096> rebuild (insert at 3 840 -> 2 048)",
            || {
                black_box(t4k.insert_hash(h));
            },
        );
    }
    per_item(
        ticks,
        "theta<4096> insert_hash (estimation, n 3.8k..8k)",
        (DISTINCT - 3840) as u32,
        rest,
        |h| {
            black_box(t4k.insert_hash(h));
        },
    );
}

/// Runs every measurement, logs one line per component and exits QEMU (returns `()`
/// so `main` type-checks after the call without unreachable-code noise).
#[allow(clippy::too_many_lines)] // a flat list of measurements
pub(crate) fn run(ticks: &Ticks, seed: Seed) {
    // SAFETY: called once from `main` before anything else touches these statics.
    let (frames, keys, hashes, topk, flows, sources, bloom, mon, cms, ss) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(FRAME_SET),
            &mut *core::ptr::addr_of_mut!(KEYS),
            &mut *core::ptr::addr_of_mut!(HASHES),
            &mut *core::ptr::addr_of_mut!(TOPK),
            &mut *core::ptr::addr_of_mut!(FLOWS),
            &mut *core::ptr::addr_of_mut!(SOURCES),
            &mut *core::ptr::addr_of_mut!(BLOOM),
            &mut *core::ptr::addr_of_mut!(MON),
            &mut *core::ptr::addr_of_mut!(CMS),
            &mut *core::ptr::addr_of_mut!(SS),
        )
    };
    for (i, f) in frames.iter_mut().enumerate() {
        *f = frame(i);
        if let Ok(Parsed::Flow(fl)) = parse_frame(f) {
            keys[i] = fl.key;
            hashes[i] = seed.hash(&fl.key).get();
        }
    }
    let (frames, keys, hashes): (&[_], &[_], &[u64]) = (frames, keys, hashes);
    let kh = || hashes.iter().map(|h| KeyHash::from_u64(black_box(*h)));
    measure(
        ticks,
        "empty loop",
        || frames.iter(),
        |f| {
            black_box(f);
        },
    );
    measure(
        ticks,
        "parse_frame",
        || frames.iter(),
        |f| {
            let _ = black_box(parse_frame(black_box(f)));
        },
    );
    measure(
        ticks,
        "siphash key",
        || keys.iter(),
        |k| {
            black_box(seed.hash(black_box(k)));
        },
    );
    let hkey = black_box(loxo_core::HalfSipKey::new(seed));
    measure(
        ticks,
        "FlowKey::hash_with_key (halfsiphash-1-3)",
        || keys.iter(),
        |k| {
            black_box(black_box(k).hash_with_key(&hkey));
        },
    );
    measure(
        ticks,
        "FlowKey::src_hash_with_key (halfsiphash-1-3)",
        || keys.iter(),
        |k| {
            black_box(black_box(k).src_hash_with_key(&hkey));
        },
    );
    measure(
        ticks,
        "siphash src",
        || keys.iter(),
        |k| {
            black_box(seed.hash(black_box(k).src_bytes()));
        },
    );
    measure(
        ticks,
        "heavykeeper update",
        || keys.iter().zip(kh()),
        |(k, h)| {
            topk.update(black_box(k), h, 60);
        },
    );
    // SAFETY: as above: called once, nothing else touches these statics.
    let (keeper8k, guardian8k, tiered8k) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(HK8K),
            &mut *core::ptr::addr_of_mut!(HG8K),
            &mut *core::ptr::addr_of_mut!(TT8K),
        )
    };
    measure(
        ticks,
        "heavykeeper<272,2,100,u64,b1.6> update (8 KiB)",
        kh,
        |h| {
            keeper8k.update(&h.get(), h, 60);
        },
    );
    measure(
        ticks,
        "heavyguardian<170,2,4,u64> update (8 KiB)",
        kh,
        |h| {
            guardian8k.update(&h.get(), h, 60);
        },
    );
    measure(
        ticks,
        "tieredtopk<64,400,2700,u64> update (8 KiB)",
        kh,
        |h| {
            tiered8k.update(&h.get(), h, 60);
        },
    );
    measure(
        ticks,
        "heavykeeper estimate (heap find)",
        || keys.iter().zip(kh()),
        |(k, h)| {
            black_box(topk.estimate(black_box(k), h));
        },
    );
    measure(ticks, "heavykeeper sketch_estimate (rows)", kh, |h| {
        black_box(topk.sketch_estimate(h));
    });
    let fifth = keys.get(5).copied().unwrap_or_default();
    measure(
        ticks,
        "flowkey eq",
        || keys.iter(),
        |k| {
            black_box(black_box(k) == black_box(&fifth));
        },
    );
    measure(ticks, "keyhash h2", kh, |h| {
        black_box(h.h2());
    });
    measure(
        ticks,
        "space-saving<128> update",
        || keys.iter().zip(kh()),
        |(k, h)| {
            ss.update(black_box(k), h, 60);
        },
    );
    // Hit path: the 64 keys are monitored after the pass above (128 slots, fed 4096).
    let first = || keys.iter().zip(kh()).take(64).cycle().take(FRAMES);
    for (k, h) in first() {
        ss.update(k, h, 1_000_000);
    }
    measure(ticks, "space-saving<128> update (hit)", first, |(k, h)| {
        ss.update(black_box(k), h, 60);
    });
    // Miss path: fresh keys (a flood), heap full.
    measure(
        ticks,
        "space-saving<128> update (miss)",
        || {
            kh().enumerate().map(|(i, h)| {
                let [a, b] = (i as u16).to_be_bytes();
                let k = FlowKey::v4([172, 16, a, b], [1, 2, 3, 4], 7, 8, 99);
                (k, KeyHash::from_u64(h.get() ^ 0xf00d_0000_0000_0000))
            })
        },
        |(k, h)| {
            ss.update(black_box(&k), h, 60);
        },
    );
    let fresh = || {
        kh().enumerate().map(|(i, h)| {
            let [a, b] = (i as u16).to_be_bytes();
            let k = FlowKey::v4([172, 17, a, b], [1, 2, 3, 4], 7, 8, 99);
            (k, KeyHash::from_u64(h.get() ^ 0xbeef_0000_0000_0000))
        })
    };
    measure(
        ticks,
        "space-saving<128> update (miss, gated out)",
        fresh,
        |(k, h)| {
            ss.update_bounded(black_box(&k), h, 60, 0);
        },
    );
    measure(
        ticks,
        "space-saving<128> update (miss, shallow sift)",
        fresh,
        |(k, h)| {
            ss.update_bounded(black_box(&k), h, 1, 1);
        },
    );
    measure(ticks, "flow sketch (cms pair 848x3) add_hash", kh, |h| {
        cms.add_hash(h, 60, 1);
    });
    measure(ticks, "hll14 insert_hash (no martingale)", kh, |h| {
        black_box(flows.insert_hash(h));
    });
    measure(ticks, "hll10 insert_hash (martingale)", kh, |h| {
        black_box(sources.insert_hash(h));
    });
    // SAFETY: as above: called once, nothing else touches these statics.
    let (hll12, ull12) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(HLL12),
            &mut *core::ptr::addr_of_mut!(ULL12),
        )
    };
    measure(ticks, "hll12 insert_hash (martingale)", kh, |h| {
        black_box(hll12.insert_hash(h));
    });
    measure(ticks, "ull12 insert_hash", kh, |h| {
        black_box(ull12.insert_hash(h));
    });
    theta(ticks);
    measure(ticks, "bloom insert_checked", kh, |h| {
        black_box(bloom.insert_checked_hash(h));
    });
    measure(ticks, "bloom contains", kh, |h| {
        black_box(bloom.contains_hash(h));
    });
    // SAFETY: as above: called once, nothing else touches this static.
    let register = unsafe { &mut *core::ptr::addr_of_mut!(REGISTER) };
    measure(ticks, "register bloom<768,5> insert_checked", kh, |h| {
        black_box(register.insert_checked_hash(h));
    });
    measure(ticks, "register bloom<768,5> contains", kh, |h| {
        black_box(register.contains_hash(h));
    });
    // A blocklist in flash: the golden binary fuse filters ([`FUSE8`], [`FUSE16`]),
    // viewed in place. The Cortex-M4 has no data cache, so the count does not depend
    // on the filter's size.
    let golden = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);
    if let (Ok(f8), Ok(f16)) = (
        BinaryFuse8::from_bytes(FUSE8, golden),
        BinaryFuse16::from_bytes(FUSE16, golden),
    ) {
        measure(ticks, "binary fuse8 contains_hash", kh, |h| {
            black_box(f8.contains_hash(h));
        });
        measure(ticks, "binary fuse16 contains_hash", kh, |h| {
            black_box(f16.contains_hash(h));
        });
        measure(
            ticks,
            "binary fuse8 contains src, dst (two siphash)",
            || keys.iter(),
            |k| {
                let k = black_box(k);
                black_box(f8.contains(k.src_bytes()) | f8.contains(k.dst_bytes()));
            },
        );
    }
    measure(
        ticks,
        "monitor feed",
        || frames.iter(),
        |f| {
            black_box(mon.feed(black_box(f)));
        },
    );
    // The epoch end's parts, each timed once on the monitor the 4 096 frames above
    // left (where the firmware's 1.4 M instructions per epoch end go).
    // SAFETY: as above, only this function touches these statics; the frames are
    // not read again, so their 61 KiB serve as the encode buffer, and the firmware's
    // report is not used before `run` exits QEMU.
    let (report, buf) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(crate::REPORT),
            (*core::ptr::addr_of_mut!(FRAME_SET)).as_flattened_mut(),
        )
    };
    once(ticks, "epoch end: flows hll14 estimate", || {
        black_box(mon.flows().estimate());
    });
    once(ticks, "epoch end: new-flow filter estimated_fpr", || {
        black_box(bloom.estimated_fpr());
    });
    once(ticks, "epoch end: flows hll14 encode", || {
        black_box(mon.flows().encode_into(buf).ok());
    });
    once(ticks, "epoch end: candidates encode", || {
        black_box(mon.top().encode_into::<38>(&seed, buf).ok());
    });
    once(
        ticks,
        "epoch end: flows hll14 dense frame (the close's copy)",
        || {
            black_box(mon.flows().encode_dense_unsealed_into(buf).ok());
        },
    );
    once(ticks, "epoch end: candidates clone (snapshot)", || {
        // SAFETY: only this function touches the snapshot static in a costs build.
        let snap = unsafe { &mut *core::ptr::addr_of_mut!(SNAP_TOP) };
        snap.clone_from(mon.top());
        black_box(snap);
    });
    once(ticks, "epoch end: hll14 clear", || {
        flows.clear();
        black_box(&flows);
    });
    once(ticks, "epoch end: new-flow filter clear", || {
        bloom.clear();
        black_box(&bloom);
    });
    once(
        ticks,
        "epoch end: flow sketch (cms pair 848x3) clear",
        || {
            cms.clear();
            black_box(&cms);
        },
    );
    once(
        ticks,
        "epoch end: monitor end_epoch (report + clear)",
        || {
            mon.end_epoch(report);
            black_box(&report);
        },
    );
    flood(ticks, mon);
    crate::exit(0);
}

/// The worst traffic class: a flood of one-packet flows (64-byte IPv4/UDP frames,
/// every source address and port fresh), through the firmware's monitor and
/// configuration, in a fresh epoch after one of the skewed stream.
fn flood(ticks: &Ticks, mon: &mut crate::Monitor) {
    // SAFETY: called once from `run` after every other use of the frames (the epoch
    // end's encodes used them as a buffer); nothing else touches them.
    let frames = unsafe { &mut *core::ptr::addr_of_mut!(FRAME_SET) };
    let mut total = 0;
    for round in 0..ROUNDS {
        for (i, f) in frames.iter_mut().enumerate() {
            *f = frame(i);
            let n = (round as usize * FRAMES + i) as u32;
            let x = n.wrapping_mul(0x9e37_79b9);
            f[26..30].copy_from_slice(&[100, (n >> 16) as u8, (n >> 8) as u8, n as u8]);
            f[34..36].copy_from_slice(&(x as u16).to_be_bytes());
        }
        let t0 = ticks.now();
        for f in frames.iter() {
            black_box(mon.feed_configured(black_box(f), &crate::CONFIG));
        }
        total += ticks.insns_since(t0);
    }
    defmt::info!(
        "costs: {=str} insns_per_call={=u32}",
        "monitor feed (flood: fresh IPv4 one-packet flows)",
        total / (FRAMES as u32 * ROUNDS)
    );
}
