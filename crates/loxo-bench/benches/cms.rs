//! `loxo-cms` update cost against `count-min-sketch`, `streaming_algorithms` and
//! `heavykeeper`, in one run: ns per update over a Zipf(1.0) stream of 10⁶
//! packets over 10⁵ flows (`u64` keys).
//!
//! * `cms_update/keyed`: 2048 × 4 `u32` Count-Min sketches, key hashed inside
//!   (loxo: SipHash-1-3 via `Seed`; `count-min-sketch`: SipHash-1-3-128;
//!   `streaming_algorithms`: XxHash). Both peers only do conservative update.
//! * `cms_update/prehashed`: loxo's `add_hash` from precomputed digests (no peer
//!   has a pre-hashed entry point).
//! * `topk_update`: one top-100 update, hash included: loxo HeavyKeeper
//!   (545 × 1 buckets, an 8 KiB configuration), Space-Saving
//!   and CMS-CU + heap against the `heavykeeper` crate's `TopK` with the same
//!   k, width, depth and decay (1.08) (it hashes with its own fast
//!   `RandomState`); `topk_update/prehashed` repeats loxo's three with precomputed
//!   digests, plus the two 8 KiB summaries of the hard-stream evaluation
//!   (`tests/tests/topk_classes.rs`): `HeavyKeeper<272, 2, 100, u64, 160>`,
//!   `HeavyGuardian<170, 2, 4, u64>` and `TieredTopK<64, 400, 2700, u64>`, with
//!   `TieredTopK<48, 278, 4200, u64>`, the layout before issue 30, beside it (also
//!   keyed in `topk_update`).
//!
//! Run: `cargo bench -p loxo-bench --bench cms -- --warm-up-time 1 --measurement-time 3`.
//! After criterion's report a table of medians and loxo ÷ fastest-peer ratios is
//! printed.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::Criterion;
use loxo_bench::timing::{bench, median_ns};
use loxo_cms::{
    Cms, CmsCu, CmsTopK, CountSketch, HeavyGuardian, HeavyKeeper, SpaceSaving, TieredTopK, TopK,
};
use loxo_core::{KeyHash, Seed};
use loxo_tests::zipf::Zipf;

const PACKETS: usize = 1_000_000;
/// Elements of one benchmarked pass: the stream.
const STREAM: u64 = PACKETS as u64;
const SEED: Seed = Seed::new(0x5eed, 0xcafe);

fn cms(c: &mut Criterion, keys: &[u64]) {
    let g = "cms_update/keyed";
    let mut plain = Box::new(Cms::<2048, 4>::new(SEED));
    bench(c, g, "loxo plain", STREAM, || {
        for &k in keys {
            plain.add(&k.to_le_bytes(), 1);
        }
        black_box(&plain);
    });
    let mut cu = Box::new(CmsCu::<2048, 4>::new(SEED));
    bench(c, g, "loxo conservative", STREAM, || {
        for &k in keys {
            cu.add(&k.to_le_bytes(), 1);
        }
        black_box(&cu);
    });
    // width = next_pow2(2·capacity/tolerance) = 2048, k = ⌊ln(1 − p)/ln ½⌋ = 4.
    let mut peer = count_min_sketch::CountMinSketch32::<u64>::new(1024, 0.94, 1.0).unwrap();
    bench(c, g, "count-min-sketch", STREAM, || {
        for k in keys {
            peer.add(k, 1);
        }
        black_box(&peer);
    });
    // width = next_pow2(2/tolerance) = 2048, k = 4.
    let mut sa = streaming_algorithms::CountMinSketch::<u64, u32>::new(0.94, 2.0 / 2048.0, ());
    bench(c, g, "streaming_algorithms", STREAM, || {
        for k in keys {
            sa.push(k, &1);
        }
        black_box(&sa);
    });

    let digests: Vec<KeyHash> = keys.iter().map(|&k| SEED.hash_u64(k)).collect();
    let g = "cms_update/prehashed";
    bench(c, g, "loxo plain", STREAM, || {
        for &h in &digests {
            plain.add_hash(h, 1);
        }
        black_box(&plain);
    });
    bench(c, g, "loxo conservative", STREAM, || {
        for &h in &digests {
            cu.add_hash(h, 1);
        }
        black_box(&cu);
    });
    let mut cs = Box::new(CountSketch::<2048, 4>::new(SEED));
    bench(c, g, "loxo count-sketch", STREAM, || {
        for &h in &digests {
            cs.add_hash(h, 1);
        }
        black_box(&cs);
    });
    bench(c, "cms_estimate/prehashed", "loxo plain", STREAM, || {
        let mut sum = 0u64;
        for &h in &digests {
            sum = sum.wrapping_add(plain.estimate_hash(h));
        }
        black_box(sum);
    });
}

/// Benchmarks `t`'s updates over `keys`, hashed inside (`topk_update`), and over
/// `pairs`, their precomputed digests (`topk_update/prehashed`); state kept across
/// passes.
fn bench_topk(
    c: &mut Criterion,
    name: &str,
    t: &mut impl TopK<u64>,
    keys: &[u64],
    pairs: &[(u64, KeyHash)],
) {
    bench(c, "topk_update", name, STREAM, || {
        for &k in keys {
            t.update(&k, SEED.hash_u64(k), 1);
        }
        black_box(&*t);
    });
    bench(c, "topk_update/prehashed", name, STREAM, || {
        for (k, h) in pairs {
            t.update(k, *h, 1);
        }
        black_box(&*t);
    });
}

fn topk(c: &mut Criterion, keys: &[u64]) {
    // Precomputed digests: the cost a monitor pays after its one hash per packet.
    let digests: Vec<KeyHash> = keys.iter().map(|&k| SEED.hash_u64(k)).collect();
    let pairs: Vec<(u64, KeyHash)> = keys.iter().copied().zip(digests).collect();
    let mut hk = Box::new(HeavyKeeper::<545, 1, 100, u64>::new(1));
    bench_topk(c, "loxo HeavyKeeper", &mut *hk, keys, &pairs);
    let mut hk2 = Box::new(HeavyKeeper::<272, 2, 100, u64, 160>::new(1));
    bench_topk(c, "loxo HeavyKeeper 272x2 b1.6", &mut *hk2, keys, &pairs);
    let mut hg = Box::new(HeavyGuardian::<170, 2, 4, u64>::new(1));
    bench_topk(c, "loxo HeavyGuardian 170x2x4", &mut *hg, keys, &pairs);
    let mut tt = Box::new(TieredTopK::<64, 400, 2700, u64>::new(1));
    bench_topk(c, "loxo TieredTopK 64x4+400+2700", &mut *tt, keys, &pairs);
    let mut tt0 = Box::new(TieredTopK::<48, 278, 4200, u64>::new(1));
    bench_topk(c, "loxo TieredTopK 48x4+278+4200", &mut *tt0, keys, &pairs);
    let mut ss = Box::new(SpaceSaving::<u64, 215>::new());
    bench_topk(c, "loxo Space-Saving", &mut *ss, keys, &pairs);
    let mut ct = Box::new(CmsTopK::<268, 4, 100, u64>::new(SEED));
    bench_topk(c, "loxo CMS-CU + heap", &mut *ct, keys, &pairs);
    let g = "topk_update";
    let mut peer = heavykeeper::TopK::<u64>::with_seed(100, 570, 1, 1.08, 1);
    bench(c, g, "heavykeeper", STREAM, || {
        for k in keys {
            peer.add(k, 1);
        }
        black_box(&peer);
    });
}

fn print_table() {
    let get = median_ns;
    println!("\nmedian ns per update (this run):");
    println!("| benchmark | ns/update | ÷ fastest peer |");
    println!("|---|---:|---:|");
    let groups: [(&str, &[&str], &[&str]); 5] = [
        (
            "cms_update/keyed",
            &["loxo plain", "loxo conservative"],
            &["count-min-sketch", "streaming_algorithms"],
        ),
        (
            "cms_update/prehashed",
            &["loxo plain", "loxo conservative", "loxo count-sketch"],
            &[],
        ),
        ("cms_estimate/prehashed", &["loxo plain"], &[]),
        (
            "topk_update",
            &[
                "loxo HeavyKeeper",
                "loxo HeavyKeeper 272x2 b1.6",
                "loxo HeavyGuardian 170x2x4",
                "loxo TieredTopK 64x4+400+2700",
                "loxo TieredTopK 48x4+278+4200",
                "loxo Space-Saving",
                "loxo CMS-CU + heap",
            ],
            &["heavykeeper"],
        ),
        (
            "topk_update/prehashed",
            &[
                "loxo HeavyKeeper",
                "loxo HeavyKeeper 272x2 b1.6",
                "loxo HeavyGuardian 170x2x4",
                "loxo TieredTopK 64x4+400+2700",
                "loxo TieredTopK 48x4+278+4200",
                "loxo Space-Saving",
                "loxo CMS-CU + heap",
            ],
            &[],
        ),
    ];
    for (group, ours, peers) in groups {
        let fastest = peers
            .iter()
            .filter_map(|p| get(&format!("{group}/{p}")))
            .fold(f64::INFINITY, f64::min);
        for name in ours.iter().chain(peers.iter()) {
            if let Some(x) = get(&format!("{group}/{name}")) {
                let ratio = if fastest.is_finite() {
                    format!("{:.2}×", x / fastest)
                } else {
                    "—".to_owned()
                };
                println!("| {group} {name} | {x:.2} | {ratio} |");
            }
        }
    }
}

fn main() {
    let z = Zipf::new(100_000, 1.0);
    let keys: Vec<u64> = z.stream(PACKETS, 7).iter().map(|p| p.key).collect();
    let mut c = Criterion::default().configure_from_args();
    cms(&mut c, &keys);
    topk(&mut c, &keys);
    c.final_summary();
    print_table();
}
