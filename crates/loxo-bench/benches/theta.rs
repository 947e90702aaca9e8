//! `ThetaSketch<K>` inserts beside `Hll<12>` and `Ull<12>`: ns per key over 10^6
//! distinct keys, pre-hashed (the same precomputed digests to every sketch, so the
//! figures are the sketches' own work) and keyed (SipHash-1-3 of the `u64` key
//! included, as `insert` does it).
//!
//! Sizes: `Hll<12>` 3 KiB and `Ull<12>` 4 KiB of registers; `ThetaSketch<512>` is
//! 4 KiB at about the same bytes (RSE 6.3 % against 1.6 % / 1.2 %), `ThetaSketch<4096>`
//! 32 KiB (2.2 %). `exact` feeds 1 000 keys (θ stays 1, no rebuild) to a
//! `ThetaSketch<4096>` each pass; the other passes spend most keys on the rejection at
//! θ (one comparison) and amortize the rebuilds.
//!
//! Run: `cargo bench -p loxo-bench --bench theta -- --warm-up-time 1 --measurement-time 3`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::Criterion;
use loxo_bench::timing::{bench, median_ns};
use loxo_core::{KeyHash, Seed};
use loxo_hll::{Hll, Ull};
use loxo_theta::ThetaSketch;

const N: u64 = 1_000_000;
const EXACT_N: u64 = 1_000;
const SEED: Seed = Seed::new(3, 4);

/// Inserts `digests` into a fresh boxed sketch built by `new`, through `insert`.
macro_rules! pass {
    ($new:expr, $digests:expr) => {{
        let mut s = Box::new($new);
        for &x in $digests {
            s.insert_hash(KeyHash::from_u64(x));
        }
        black_box(&s);
    }};
}

fn inserts(c: &mut Criterion) {
    let digests: Vec<u64> = (0..N).map(|k| SEED.hash_u64(k).get()).collect();
    let d = &digests;
    let g = "insert_1M/prehashed";
    bench(c, g, "hll12", N, || pass!(Hll::<12>::new(SEED), d));
    bench(c, g, "ull12", N, || pass!(Ull::<12>::new(SEED), d));
    bench(c, g, "theta512", N, || {
        pass!(ThetaSketch::<512>::new(SEED), d);
    });
    bench(c, g, "theta4096", N, || {
        pass!(ThetaSketch::<4096>::new(SEED), d);
    });
    let few = &digests[..EXACT_N as usize];
    bench(c, "insert_1k/prehashed", "theta4096 exact", EXACT_N, || {
        pass!(ThetaSketch::<4096>::new(SEED), few);
    });

    let g = "insert_1M/keyed";
    bench(c, g, "hll12", N, || {
        let mut s = Box::new(Hll::<12>::new(SEED));
        for k in 0..N {
            s.insert(&k.to_le_bytes());
        }
        black_box(&s);
    });
    bench(c, g, "theta4096", N, || {
        let mut s = Box::new(ThetaSketch::<4096>::new(SEED));
        for k in 0..N {
            s.insert(&k.to_le_bytes());
        }
        black_box(&s);
    });
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    inserts(&mut c);
    c.final_summary();
    for id in [
        "insert_1M/prehashed/hll12",
        "insert_1M/prehashed/ull12",
        "insert_1M/prehashed/theta512",
        "insert_1M/prehashed/theta4096",
        "insert_1k/prehashed/theta4096 exact",
        "insert_1M/keyed/hll12",
        "insert_1M/keyed/theta4096",
    ] {
        if let Some(v) = median_ns(id) {
            println!("{id}: {v:.2} ns/key");
        }
    }
}
