//! Spread-sketch inserts: ns per packet over one epoch of `loxo_tests::spread`'s
//! generator (400 000 distinct pairs of IPv6-sized keys — 16 super-spreaders in
//! [0.5 %, 20 %], 60 medium keys, small keys — each pair repeated 1–8 times, plus the
//! heavy-traffic key's packets: 1.3·10⁶ packets), digests precomputed as a monitor
//! has them (the figures are the sketches' own work).
//!
//! * `spreaders32k`: `Spreaders<[u8; 16], 1024, 19, 512>` — the registers' estimate;
//! * `hip32k`: `HipSpreaders<[u8; 16], 4096, 4, 580, 64>` — the same budget counting
//!   its candidates as the stream goes (a raise checks 64 counters' columns);
//! * `device`: `Spreaders<[u8; 16], 128, 16, 128>`, the firmware's per-direction size.
//!
//! Run: `cargo bench -p loxo-bench --bench spread -- --warm-up-time 1 --measurement-time 3`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::Criterion;
use loxo_bench::timing::{bench, median_ns};
use loxo_core::Seed;
use loxo_spread::{HipSpreaders, Spreaders};
use loxo_tests::spread::{Mix, Rng, Stream};

const SEED: Seed = Seed::new(5, 6);

macro_rules! pass {
    ($new:expr, $st:expr) => {{
        let st: &Stream = $st;
        let mut s = Box::new($new);
        for &p in &st.packets {
            let (k, eh) = st.pairs[p as usize];
            let k = k as usize;
            s.insert_hashed(&st.keys[k], st.key_hashes[k], eh);
        }
        black_box(&s);
    }};
}

fn inserts(c: &mut Criterion) {
    let mix = Mix {
        pairs: 400_000,
        spreaders: 16,
        lo: 0.005,
        hi: 0.2,
    };
    let st = Stream::new(mix, SEED, &mut Rng::new(0x5be7_0001));
    let n = st.packets.len() as u64;
    let g = "insert_epoch/prehashed";
    bench(c, g, "spreaders32k", n, || {
        pass!(Spreaders::<[u8; 16], 1024, 19, 512>::new(SEED), &st);
    });
    bench(c, g, "hip32k", n, || {
        pass!(HipSpreaders::<[u8; 16], 4096, 4, 580, 64>::new(SEED), &st);
    });
    bench(c, g, "device", n, || {
        pass!(Spreaders::<[u8; 16], 128, 16, 128>::new(SEED), &st);
    });
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    inserts(&mut c);
    c.final_summary();
    for id in [
        "insert_epoch/prehashed/spreaders32k",
        "insert_epoch/prehashed/hip32k",
        "insert_epoch/prehashed/device",
    ] {
        if let Some(v) = median_ns(id) {
            println!("{id}: {v:.2} ns/packet");
        }
    }
}
