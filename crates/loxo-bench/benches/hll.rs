//! `Hll<14>` (and `Ull<14>`, UltraLogLog) against `hyperloglogplus`,
//! `cardinality-estimator` and `hyperloglockless`: ns per insert over 10^7 distinct
//! keys, ns per estimate (at 10^6 keys, and at 1024 keys where the small-range
//! corrections run).
//!
//! Hasher cost is accounted for in two ways:
//! * **keyed** (`insert_*/keyed/…`): every sketch hashes the same `u64` keys with
//!   SipHash-1-3 (loxo's `Seed::hash_u64`, the digest of the key's 8 little-endian
//!   bytes; the peers' `Hasher`/`BuildHasher` parameter set to
//!   `siphasher::sip::SipHasher13`, which is also `hyperloglockless`'s default, fed
//!   through `Hash for u64`, i.e. the same `write_u64`);
//! * **pre-hashed** (`insert_*/prehashed/…`): every sketch is fed the same
//!   precomputed 64-bit digests (`insert_hash`; `hyperloglogplus` has no such method
//!   and gets an identity hasher over the digest instead).
//!
//! Run: `cargo bench -p loxo-bench --bench hll -- --warm-up-time 1 --measurement-time 3`.
//! After criterion's own report, a ratio table (loxo ÷ fastest peer) is printed.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hash::{BuildHasherDefault, Hasher};
use std::hint::black_box;
use std::time::Instant;

use cardinality_estimator::CardinalityEstimator;
use criterion::Criterion;
use hyperloglogplus::{HyperLogLog as _, HyperLogLogPlus};
use loxo_bench::timing::{bench, median_ns, record};
use loxo_core::{KeyHash, Seed};
use loxo_hll::{Hll, Ull};
use siphasher::sip::SipHasher13;

/// Distinct keys inserted per measured iteration.
const N: u64 = 10_000_000;
const P: u8 = 14;
const SEED: Seed = Seed::new(0, 0);

/// Passes a `u64` digest through unchanged (for `hyperloglogplus`, which has no
/// `insert_hash`).
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 digests are hashed")
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

type Sip = BuildHasherDefault<SipHasher13>;
type Ce<H> = CardinalityEstimator<u64, H, 14, 6>;

fn inserts(c: &mut Criterion) {
    // Keyed: the same keys 0..N, hashed by every sketch with SipHash-1-3.
    let g = "insert_10M/keyed";
    bench(c, g, "loxo", N, || {
        let mut h = Box::new(Hll::<P>::new(SEED));
        for k in 0..N {
            h.insert_hash(SEED.hash_u64(k));
        }
        black_box(&h);
    });
    bench(c, g, "loxo ull", N, || {
        let mut h = Box::new(Ull::<P>::new(SEED));
        for k in 0..N {
            h.insert_hash(SEED.hash_u64(k));
        }
        black_box(&h);
    });
    bench(c, g, "hyperloglockless", N, || {
        let mut h = hyperloglockless::HyperLogLog::seeded(P, 0);
        for k in 0..N {
            h.insert(&k);
        }
        black_box(&h);
    });
    bench(c, g, "cardinality-estimator", N, || {
        let mut h = Ce::<SipHasher13>::new();
        for k in 0..N {
            h.insert(&k);
        }
        black_box(&h);
    });
    bench(c, g, "hyperloglogplus", N, || {
        let mut h: HyperLogLogPlus<u64, Sip> = HyperLogLogPlus::new(P, Sip::default()).unwrap();
        for k in 0..N {
            h.insert(&k);
        }
        black_box(&h);
    });

    // Pre-hashed: the same precomputed digests fed to every sketch.
    let digests: Vec<u64> = (0..N).map(|k| SEED.hash_u64(k).get()).collect();
    let d = &digests;
    let g = "insert_10M/prehashed";
    bench(c, g, "loxo", N, || {
        let mut h = Box::new(Hll::<P>::new(SEED));
        for &x in d {
            h.insert_hash(KeyHash::from_u64(x));
        }
        black_box(&h);
    });
    bench(c, g, "loxo ull", N, || {
        let mut h = Box::new(Ull::<P>::new(SEED));
        for &x in d {
            h.insert_hash(KeyHash::from_u64(x));
        }
        black_box(&h);
    });
    bench(c, g, "hyperloglockless", N, || {
        let mut h = hyperloglockless::HyperLogLog::seeded(P, 0);
        for &x in d {
            h.insert_hash(x);
        }
        black_box(&h);
    });
    bench(c, g, "cardinality-estimator", N, || {
        let mut h = Ce::<Identity>::new();
        for &x in d {
            h.insert_hash(x);
        }
        black_box(&h);
    });
    bench(c, g, "hyperloglogplus", N, || {
        let mut h: HyperLogLogPlus<u64, BuildHasherDefault<Identity>> =
            HyperLogLogPlus::new(P, BuildHasherDefault::default()).unwrap();
        for x in d {
            h.insert(x);
        }
        black_box(&h);
    });
}

/// Benchmarks one estimate call as ns/estimate.
fn bench_estimate(c: &mut Criterion, name: &str, mut est: impl FnMut() -> f64) {
    let mut g = c.benchmark_group("estimate");
    let id = format!("estimate/{name}");
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(est());
            }
            let t = start.elapsed();
            record(&id, t, iters);
            t
        });
    });
    g.finish();
}

fn estimates(c: &mut Criterion) {
    const FILL: u64 = 1_000_000;
    let digests: Vec<u64> = (0..FILL).map(|k| SEED.hash_u64(k).get()).collect();

    let mut l14 = Box::new(Hll::<14>::new(SEED));
    let mut l10 = Box::new(Hll::<10>::new(SEED));
    let mut l18 = Box::new(Hll::<18>::new(SEED));
    let mut u14 = Box::new(Ull::<14>::new(SEED));
    // Small range (n = m/16): the estimators' corrections for empty registers run.
    let mut l14_small = Box::new(Hll::<14>::new(SEED));
    let mut u14_small = Box::new(Ull::<14>::new(SEED));
    for &x in &digests[..1024] {
        l14_small.insert_hash(KeyHash::from_u64(x));
        u14_small.insert_hash(KeyHash::from_u64(x));
    }
    let mut hl = hyperloglockless::HyperLogLog::seeded(P, 0);
    let mut ce = Ce::<Identity>::new();
    let mut hp: HyperLogLogPlus<u64, BuildHasherDefault<Identity>> =
        HyperLogLogPlus::new(P, BuildHasherDefault::default()).unwrap();
    for &x in &digests {
        let h = KeyHash::from_u64(x);
        l14.insert_hash(h);
        l10.insert_hash(h);
        l18.insert_hash(h);
        u14.insert_hash(h);
        hl.insert_hash(x);
        ce.insert_hash(x);
        hp.insert(&x);
    }
    let l14 = black_box(l14);
    bench_estimate(c, "loxo", || l14.estimate());
    bench_estimate(c, "loxo P=10", || l10.estimate());
    bench_estimate(c, "loxo P=18", || l18.estimate());
    bench_estimate(c, "loxo classic", || l14.estimate_classic());
    bench_estimate(c, "loxo martingale", || {
        l14.estimate_martingale().unwrap_or(0.0)
    });
    bench_estimate(c, "loxo n=1024", || l14_small.estimate());
    bench_estimate(c, "loxo ull", || u14.estimate());
    bench_estimate(c, "loxo ull n=1024", || u14_small.estimate());
    bench_estimate(c, "loxo ull ML", || u14.estimate_ml());
    bench_estimate(c, "loxo ull martingale", || {
        u14.estimate_martingale().unwrap_or(0.0)
    });
    bench_estimate(c, "hyperloglockless", || hl.raw_count());
    bench_estimate(c, "cardinality-estimator", || ce.estimate() as f64);
    bench_estimate(c, "hyperloglogplus", || hp.count());
}

fn print_ratios() {
    let peers = [
        "hyperloglockless",
        "cardinality-estimator",
        "hyperloglogplus",
    ];
    println!("\nmedian ns per operation (this run), loxo ÷ fastest peer:");
    println!("| benchmark | loxo | hyperloglockless | cardinality-estimator | hyperloglogplus | loxo ÷ fastest |");
    println!("|---|---:|---:|---:|---:|---:|");
    for group in ["insert_10M/keyed", "insert_10M/prehashed", "estimate"] {
        let get = |name: &str| median_ns(&format!("{group}/{name}"));
        let Some(loxo) = get("loxo") else { continue };
        let peer: Vec<Option<f64>> = peers.iter().map(|p| get(p)).collect();
        let fastest = peer.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let cell = |x: Option<f64>| x.map_or("—".to_owned(), |x| format!("{x:.2}"));
        println!(
            "| {group} | {loxo:.2} | {} | {} | {} | {:.2}× |",
            cell(peer[0]),
            cell(peer[1]),
            cell(peer[2]),
            loxo / fastest
        );
    }
    for extra in [
        "estimate/loxo P=10",
        "estimate/loxo P=18",
        "estimate/loxo classic",
        "estimate/loxo martingale",
        "estimate/loxo n=1024",
        "estimate/loxo ull",
        "estimate/loxo ull n=1024",
        "estimate/loxo ull ML",
        "estimate/loxo ull martingale",
        "insert_10M/keyed/loxo ull",
        "insert_10M/prehashed/loxo ull",
    ] {
        if let Some(v) = median_ns(extra) {
            println!("{extra}: {v:.2} ns");
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    inserts(&mut c);
    estimates(&mut c);
    c.final_summary();
    print_ratios();
}
