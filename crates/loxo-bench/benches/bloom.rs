//! `Bloom` and `BlockedBloom` against `fastbloom` and `bloomfilter`: ns per insert and
//! per `contains` (hit and miss) at `n = 10^6`, `p = 1 %`, every filter hashing the
//! same `u64` keys with SipHash-1-3 (loxo's keyed `Seed`; `fastbloom`'s default hasher
//! and `bloomfilter`'s built-in hashers are SipHash-1-3 too, `bloomfilter` computes
//! two of them per key). Then classic vs blocked on misses at `n = 10^7`: one
//! `contains` per key, and `contains_batch` over 32 keys (prefetching), each keyed and
//! pre-hashed.
//!
//! `RegisterBloom` (one 64-bit word per key, `K = 5`) runs beside them.
//!
//! All loxo filters get the classic 1 % filter's bits (`bloom_bits(n, 0.01)`), so the
//! layouts are compared at equal memory: the blocked filter with `K = 7` (1.18 % at
//! that size), the register-blocked one with `K = 5` (2.0 %). `blocked_blocks` and
//! `register_words` would size them for 1 % with 4 % and 27 % more bits.
//!
//! Run: `cargo bench -p loxo-bench --bench bloom -- --warm-up-time 1 --measurement-time 3`.
//! After criterion's report, a ratio table is printed.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use loxo_bloom::{bloom_bits, bloom_k, bloom_words, BlockedBloom, Bloom, RegisterBloom};
use loxo_core::{KeyHash, Seed};

const N: u64 = 1_000_000;
const BIG: u64 = 10_000_000;
const P: f64 = 0.01;
const SEED: Seed = Seed::new(0x5eed, 0xb100);
/// Absent keys start here.
const ABSENT: u64 = 1 << 40;
/// Keys per `contains_batch` call (RocksDB's `MultiGet` batch size).
const BATCH: usize = 32;

/// 512-bit blocks holding the classic filter's bits for `n` keys at `P`.
const fn blocks(n: u64) -> usize {
    bloom_bits(n, P).div_ceil(512) as usize
}
/// 64-bit words holding the classic filter's bits for `n` keys at `P`.
const fn words(n: u64) -> usize {
    bloom_bits(n, P).div_ceil(64) as usize
}

type Classic = Bloom<{ bloom_words(N, P) }, { bloom_k(N, P) }>;
type Blocked = BlockedBloom<{ blocks(N) }, { bloom_k(N, P) }>;
/// The register-blocked filter with the same bits and its best `K` at that load (5).
type Register = RegisterBloom<{ words(N) }, 5>;
type RegisterBig = RegisterBloom<{ words(BIG) }, 5>;
type ClassicBig = Bloom<{ bloom_words(BIG, P) }, { bloom_k(BIG, P) }>;
type BlockedBig = BlockedBloom<{ blocks(BIG) }, { bloom_k(BIG, P) }>;

static NS: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn record(name: &str, elapsed: Duration, elements: u64) {
    let ns = elapsed.as_secs_f64() * 1e9 / elements as f64;
    NS.lock()
        .unwrap()
        .entry(name.to_owned())
        .or_default()
        .push(ns);
}

/// Benchmarks `run` (one pass over `n` keys) as ns per key.
fn bench(c: &mut Criterion, group: &str, name: &str, n: u64, mut run: impl FnMut()) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    let id = format!("{group}/{name}");
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                run();
            }
            let t = start.elapsed();
            record(&id, t, iters * n);
            t
        });
    });
    g.finish();
}

fn fast() -> fastbloom::BloomFilter {
    fastbloom::BloomFilter::with_false_pos(P)
        .seed(&0x5eed)
        .expected_items(N as usize)
}

fn peer_bf() -> bloomfilter::Bloom<u64> {
    bloomfilter::Bloom::new_for_fp_rate_with_seed(N as usize, P, &[7; 32]).unwrap()
}

fn at_one_million(c: &mut Criterion) {
    let g = "insert_1M";
    bench(c, g, "loxo", N, || {
        let mut f = Box::new(Classic::new(SEED));
        (0..N).for_each(|k| f.insert(&k.to_le_bytes()));
        black_box(&f);
    });
    bench(c, g, "loxo blocked", N, || {
        let mut f = Box::new(Blocked::new(SEED));
        (0..N).for_each(|k| f.insert(&k.to_le_bytes()));
        black_box(&f);
    });
    bench(c, g, "loxo register", N, || {
        let mut f = Box::new(Register::new(SEED));
        (0..N).for_each(|k| f.insert(&k.to_le_bytes()));
        black_box(&f);
    });
    bench(c, g, "fastbloom", N, || {
        let mut f = fast();
        (0..N).for_each(|k| {
            f.insert(&k);
        });
        black_box(&f);
    });
    bench(c, g, "bloomfilter", N, || {
        let mut f = peer_bf();
        (0..N).for_each(|k| f.set(&k));
        black_box(&f);
    });

    let mut l = Box::new(Classic::new(SEED));
    let mut lb = Box::new(Blocked::new(SEED));
    let mut lr = Box::new(Register::new(SEED));
    let mut fb = fast();
    let mut bf = peer_bf();
    for k in 0..N {
        l.insert(&k.to_le_bytes());
        lb.insert(&k.to_le_bytes());
        lr.insert(&k.to_le_bytes());
        fb.insert(&k);
        bf.set(&k);
    }
    for (g, range) in [
        ("contains_hit_1M", 0..N),
        ("contains_miss_1M", ABSENT..ABSENT + N),
    ] {
        let r = range.clone();
        bench(c, g, "loxo", N, || {
            black_box(r.clone().filter(|k| l.contains(&k.to_le_bytes())).count());
        });
        let r = range.clone();
        bench(c, g, "loxo blocked", N, || {
            black_box(r.clone().filter(|k| lb.contains(&k.to_le_bytes())).count());
        });
        let r = range.clone();
        bench(c, g, "loxo register", N, || {
            black_box(r.clone().filter(|k| lr.contains(&k.to_le_bytes())).count());
        });
        let r = range.clone();
        bench(c, g, "fastbloom", N, || {
            black_box(r.clone().filter(|k| fb.contains(k)).count());
        });
        let r = range;
        bench(c, g, "bloomfilter", N, || {
            black_box(r.clone().filter(|k| bf.check(k)).count());
        });
    }
}

/// The lookups compared at 10^7 keys, over one type per layout.
trait Lookup {
    fn one(&self, key: [u8; 8]) -> bool;
    fn one_hash(&self, h: KeyHash) -> bool;
    fn batch(&self, keys: &[[u8; 8]; BATCH]) -> [bool; BATCH];
    fn batch_hash(&self, hashes: &[KeyHash; BATCH]) -> [bool; BATCH];
}

macro_rules! lookup {
    ($($t:ty),*) => {$(
        impl Lookup for $t {
            fn one(&self, key: [u8; 8]) -> bool {
                self.contains(&key)
            }
            fn one_hash(&self, h: KeyHash) -> bool {
                self.contains_hash(h)
            }
            fn batch(&self, keys: &[[u8; 8]; BATCH]) -> [bool; BATCH] {
                self.contains_batch(keys)
            }
            fn batch_hash(&self, hashes: &[KeyHash; BATCH]) -> [bool; BATCH] {
                self.contains_hash_batch(hashes)
            }
        }
    )*};
}
lookup!(ClassicBig, BlockedBig, RegisterBig);

fn at_ten_million(c: &mut Criterion) {
    let mut l = Box::new(ClassicBig::new(SEED));
    let mut lb = Box::new(BlockedBig::new(SEED));
    let mut lr = Box::new(RegisterBig::new(SEED));
    for k in 0..BIG {
        l.insert(&k.to_le_bytes());
        lb.insert(&k.to_le_bytes());
        lr.insert(&k.to_le_bytes());
    }
    let keys: Vec<[u8; 8]> = (ABSENT..ABSENT + N).map(u64::to_le_bytes).collect();
    // The filters' own cost: the same misses, hashed beforehand.
    let hashes: Vec<KeyHash> = keys.iter().map(|k| SEED.hash(k)).collect();
    misses(c, "loxo", &*l, &keys, &hashes);
    misses(c, "loxo blocked", &*lb, &keys, &hashes);
    misses(c, "loxo register", &*lr, &keys, &hashes);
}

/// One filter's misses at 10^7 keys: per key and in batches, keyed and pre-hashed.
fn misses(c: &mut Criterion, name: &str, f: &impl Lookup, keys: &[[u8; 8]], hashes: &[KeyHash]) {
    let (key_batches, _) = keys.as_chunks::<BATCH>();
    let (hash_batches, _) = hashes.as_chunks::<BATCH>();
    let count = |found: &[bool]| found.iter().filter(|&&x| x).count();
    bench(c, "contains_miss_10M", name, N, || {
        black_box(keys.iter().filter(|&&k| f.one(k)).count());
    });
    bench(c, "contains_miss_10M_batch", name, N, || {
        black_box(
            key_batches
                .iter()
                .map(|b| count(&f.batch(b)))
                .sum::<usize>(),
        );
    });
    bench(c, "contains_miss_10M_prehashed", name, N, || {
        black_box(hashes.iter().filter(|&&h| f.one_hash(h)).count());
    });
    bench(c, "contains_miss_10M_prehashed_batch", name, N, || {
        black_box(
            hash_batches
                .iter()
                .map(|b| count(&f.batch_hash(b)))
                .sum::<usize>(),
        );
    });
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn print_ratios() {
    let ns = NS.lock().unwrap();
    println!("\nmedian ns per key (this run):");
    println!("| benchmark | loxo Bloom | loxo BlockedBloom | loxo RegisterBloom | fastbloom | bloomfilter | Bloom ÷ fastbloom | Bloom ÷ BlockedBloom | Bloom ÷ RegisterBloom |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for group in [
        "insert_1M",
        "contains_hit_1M",
        "contains_miss_1M",
        "contains_miss_10M",
        "contains_miss_10M_batch",
        "contains_miss_10M_prehashed",
        "contains_miss_10M_prehashed_batch",
    ] {
        let get = |name: &str| ns.get(&format!("{group}/{name}")).map(|v| median(v));
        let cell = |x: Option<f64>| x.map_or("—".to_owned(), |x| format!("{x:.2}"));
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "—".to_owned(),
        };
        let (l, lb, lr, fb, bf) = (
            get("loxo"),
            get("loxo blocked"),
            get("loxo register"),
            get("fastbloom"),
            get("bloomfilter"),
        );
        println!(
            "| {group} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(l),
            cell(lb),
            cell(lr),
            cell(fb),
            cell(bf),
            ratio(l, fb),
            ratio(l, lb),
            ratio(l, lr)
        );
    }
}

fn main() {
    // The 10^7-key filters are built by value: run on a thread with a large stack.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(|| {
            let mut c = Criterion::default().configure_from_args();
            at_one_million(&mut c);
            at_ten_million(&mut c);
            c.final_summary();
            print_ratios();
        })
        .unwrap()
        .join()
        .unwrap();
}
