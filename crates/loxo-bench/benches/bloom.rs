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
//! The static filters `BinaryFuse8` / `BinaryFuse16` are compared at *equal rate*
//! (`p = 2^−8` and `2^−16`) with `Bloom` sized for that rate, with `xorf`'s
//! `BinaryFuse8`/`16` (the same layout, the keys SipHash-ed the same way before its
//! lookup) and with `Cuckoo` (`u8`: ≈ 3 %, `u16`: ≈ 0.012 % at 95 % load — the nearest
//! rates it has): lookups (hits, misses, misses pre-hashed) at `n = 10^6`, and
//! construction of 10^6 keys from their digests.
//!
//! Run: `cargo bench -p loxo-bench --bench bloom -- --warm-up-time 1 --measurement-time 3`
//! (`… fuse` for the static filters only). After criterion's report, ratio tables are
//! printed.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::Criterion;
use loxo_bench::timing::{bench, median_ns};
use loxo_bloom::{
    bloom_bits, bloom_k, bloom_words, cuckoo_buckets, BinaryFuse16, BinaryFuse8, BlockedBloom,
    Bloom, Cuckoo, RegisterBloom,
};
use loxo_core::{KeyHash, Seed};
use xorf::Filter as _;

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
/// `2^−8` and `2^−16`, the binary fuse filters' rates.
const P8: f64 = 1.0 / 256.0;
const P16: f64 = 1.0 / 65536.0;
type Bloom8 = Bloom<{ bloom_words(N, P8) }, { bloom_k(N, P8) }>;
type Bloom16 = Bloom<{ bloom_words(N, P16) }, { bloom_k(N, P16) }>;
type Cuckoo8 = Cuckoo<{ cuckoo_buckets(N) }, u8>;
type Cuckoo16 = Cuckoo<{ cuckoo_buckets(N) }, u16>;

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

/// The static filters at equal rate (see the module docs).
#[allow(clippy::too_many_lines)] // one flat list of measurements
fn static_filters(c: &mut Criterion) {
    let members: Vec<KeyHash> = (0..N).map(|k| SEED.hash(&k.to_le_bytes())).collect();
    let raw: Vec<u64> = members.iter().map(|h| h.get()).collect();
    let absent: Vec<[u8; 8]> = (ABSENT..ABSENT + N).map(u64::to_le_bytes).collect();
    let absent_hashes: Vec<KeyHash> = absent.iter().map(|k| SEED.hash(k)).collect();
    let present: Vec<[u8; 8]> = (0..N).map(u64::to_le_bytes).collect();

    let b8 = BinaryFuse8::build(&members).unwrap();
    let f8 = BinaryFuse8::from_parts(SEED, b8.layout, &b8.fingerprints).unwrap();
    let b16 = BinaryFuse16::build(&members).unwrap();
    let f16 = BinaryFuse16::from_parts(SEED, b16.layout, &b16.fingerprints).unwrap();
    let x8 = xorf::BinaryFuse8::try_from(&raw).unwrap();
    let x16 = xorf::BinaryFuse16::try_from(&raw).unwrap();
    let mut bl8 = Box::new(Bloom8::new(SEED));
    let mut bl16 = Box::new(Bloom16::new(SEED));
    let mut ck8 = Box::new(Cuckoo8::new(SEED));
    let mut ck16 = Box::new(Cuckoo16::new(SEED));
    for &h in &members {
        bl8.insert_hash(h);
        bl16.insert_hash(h);
        ck8.insert_hash(h).unwrap();
        ck16.insert_hash(h).unwrap();
    }
    println!(
        "static filters at 10^6 keys, bits/key: BinaryFuse8 {:.2}, Bloom 2^-8 {:.2}, Cuckoo u8 {:.2}; BinaryFuse16 {:.2}, Bloom 2^-16 {:.2}, Cuckoo u16 {:.2}",
        f8.bits_per_key(),
        8.0 * bl8.memory_bytes() as f64 / N as f64,
        8.0 * (ck8.capacity() as f64) / N as f64,
        f16.bits_per_key(),
        8.0 * bl16.memory_bytes() as f64 / N as f64,
        16.0 * (ck16.capacity() as f64) / N as f64,
    );

    for (g, keys) in [("fuse8_hit_1M", &present), ("fuse8_miss_1M", &absent)] {
        bench(c, g, "loxo fuse", N, || {
            black_box(keys.iter().filter(|k| f8.contains(*k)).count());
        });
        bench(c, g, "xorf", N, || {
            black_box(
                keys.iter()
                    .filter(|k| x8.contains(&SEED.hash(*k).get()))
                    .count(),
            );
        });
        bench(c, g, "loxo bloom", N, || {
            black_box(keys.iter().filter(|k| bl8.contains(*k)).count());
        });
        bench(c, g, "loxo cuckoo", N, || {
            black_box(keys.iter().filter(|k| ck8.contains(*k)).count());
        });
    }
    let g = "fuse8_miss_1M_prehashed";
    bench(c, g, "loxo fuse", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| f8.contains_hash(h))
                .count(),
        );
    });
    bench(c, g, "xorf", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|h| x8.contains(&h.get()))
                .count(),
        );
    });
    bench(c, g, "loxo bloom", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| bl8.contains_hash(h))
                .count(),
        );
    });
    bench(c, g, "loxo cuckoo", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| ck8.contains_hash(h))
                .count(),
        );
    });
    let g = "fuse16_miss_1M";
    bench(c, g, "loxo fuse", N, || {
        black_box(absent.iter().filter(|k| f16.contains(*k)).count());
    });
    bench(c, g, "xorf", N, || {
        black_box(
            absent
                .iter()
                .filter(|k| x16.contains(&SEED.hash(*k).get()))
                .count(),
        );
    });
    bench(c, g, "loxo bloom", N, || {
        black_box(absent.iter().filter(|k| bl16.contains(*k)).count());
    });
    bench(c, g, "loxo cuckoo", N, || {
        black_box(absent.iter().filter(|k| ck16.contains(*k)).count());
    });
    let g = "fuse16_miss_1M_prehashed";
    bench(c, g, "loxo fuse", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| f16.contains_hash(h))
                .count(),
        );
    });
    bench(c, g, "xorf", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|h| x16.contains(&h.get()))
                .count(),
        );
    });
    bench(c, g, "loxo bloom", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| bl16.contains_hash(h))
                .count(),
        );
    });
    bench(c, g, "loxo cuckoo", N, || {
        black_box(
            absent_hashes
                .iter()
                .filter(|&&h| ck16.contains_hash(h))
                .count(),
        );
    });

    // Construction of 10^6 keys from their digests: loxo's build (sort, deduplicate,
    // xorf, copy, look every key up) and xorf alone; Bloom and cuckoo inserts.
    let g = "fuse8_build_1M";
    bench(c, g, "loxo fuse", N, || {
        black_box(BinaryFuse8::build(&members).unwrap());
    });
    bench(c, g, "xorf", N, || {
        black_box(xorf::BinaryFuse8::try_from(&raw).unwrap());
    });
    bench(c, g, "loxo bloom", N, || {
        let mut f = Box::new(Bloom8::new(SEED));
        for &h in &members {
            f.insert_hash(h);
        }
        black_box(&f);
    });
    bench(c, g, "loxo cuckoo", N, || {
        let mut f = Box::new(Cuckoo8::new(SEED));
        for &h in &members {
            f.insert_hash(h).unwrap();
        }
        black_box(&f);
    });
    let g = "fuse16_build_1M";
    bench(c, g, "loxo fuse", N, || {
        black_box(BinaryFuse16::build(&members).unwrap());
    });
    bench(c, g, "xorf", N, || {
        black_box(xorf::BinaryFuse16::try_from(&raw).unwrap());
    });
    bench(c, g, "loxo bloom", N, || {
        let mut f = Box::new(Bloom16::new(SEED));
        for &h in &members {
            f.insert_hash(h);
        }
        black_box(&f);
    });
    bench(c, g, "loxo cuckoo", N, || {
        let mut f = Box::new(Cuckoo16::new(SEED));
        for &h in &members {
            f.insert_hash(h).unwrap();
        }
        black_box(&f);
    });
}

fn print_static_ratios() {
    println!("\nstatic filters, median ns per key (this run):");
    println!("| benchmark | loxo BinaryFuse | xorf BinaryFuse | loxo Bloom (same p) | loxo Cuckoo | fuse ÷ Bloom | fuse ÷ xorf |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for group in [
        "fuse8_hit_1M",
        "fuse8_miss_1M",
        "fuse8_miss_1M_prehashed",
        "fuse16_miss_1M",
        "fuse16_miss_1M_prehashed",
        "fuse8_build_1M",
        "fuse16_build_1M",
    ] {
        let get = |name: &str| median_ns(&format!("{group}/{name}"));
        let cell = |x: Option<f64>| x.map_or("—".to_owned(), |x| format!("{x:.2}"));
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "—".to_owned(),
        };
        let (f, x, b, k) = (
            get("loxo fuse"),
            get("xorf"),
            get("loxo bloom"),
            get("loxo cuckoo"),
        );
        println!(
            "| {group} | {} | {} | {} | {} | {} | {} |",
            cell(f),
            cell(x),
            cell(b),
            cell(k),
            ratio(f, b),
            ratio(f, x)
        );
    }
}

fn print_ratios() {
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
        let get = |name: &str| median_ns(&format!("{group}/{name}"));
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
            let only_static = std::env::args().any(|a| a.contains("fuse"));
            if !only_static {
                at_one_million(&mut c);
                at_ten_million(&mut c);
            }
            static_filters(&mut c);
            c.final_summary();
            if !only_static {
                print_ratios();
            }
            print_static_ratios();
        })
        .unwrap()
        .join()
        .unwrap();
}
