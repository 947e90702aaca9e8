//! Measured size and false-positive rate of the binary fuse filters at 10^6 keys,
//! seeded. Print the figures with
//! `cargo test --release -p loxo-tests --test fuse_accuracy -- --nocapture --test-threads 1`.
//!
//! **Bands.** A key not in the set is reported present iff its `f`-bit fingerprint
//! equals the XOR of its three slots. The fingerprint is the low bits of
//! `x ⊕ (x >> 32)` of the mixed digest `x`, and the slots come from `x`'s high bits
//! (through a multiply) and two masked fields; for a fixed filter, over absent keys
//! with uniform digests, the fingerprint is uniform and independent of the slots'
//! XOR, so *every* filter has rate exactly `p = 2^−f` — there is no filter-to-filter
//! spread as in a Bloom filter, only the binomial noise of the queries:
//! `σ = √(p(1 − p)/q)` relative to `p` is `√((1 − p)/(q·p))`.
//!
//! * 8-bit, `q = 10^6` keyed queries: `q·p = 3906`, relative σ 1.6 %: a 4σ band is
//!   ±6.4 %, inside the issue's ±10 %.
//! * 16-bit, `q = 10^6` keyed queries: `q·p = 15.3`, relative σ 26 %: ±10 % is not
//!   measurable with 10^6 queries (4σ = ±100 %); this run is checked against its own
//!   4σ band. The ±10 % check uses `q = 2·10^8` pre-hashed absent digests
//!   (`contains_hash` of uniform 64-bit values, which is what SipHash outputs are
//!   to this filter): `q·p = 3052`, relative σ 1.8 %, 4σ = ±7.2 %.
//!
//! Sizes are deterministic (the layout depends on the key count alone, and the
//! construction's seed sequence is fixed): at 10^6 keys `xorf`'s formulas give segment
//! length 8192 and 138 segments, 1 130 496 slots: 9.04 / 18.09 bits per key, 1.130 ×
//! `log₂(1/p)`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::{BinaryFuse16, BinaryFuse8};
use loxo_core::{KeyHash, Seed};
use loxo_tests::DistinctKeys;

const N: usize = 1_000_000;
const QUERIES: u64 = 1_000_000;
const HASHED_QUERIES: u64 = 200_000_000;
/// Absent keys start here (members are `DistinctKeys::new(1)`, 64-bit values whose
/// odds of landing in `ABSENT..ABSENT + QUERIES` are 10^12 / 2^64).
const ABSENT: u64 = 1 << 40;
const Z: f64 = 4.0;
const SEED: Seed = Seed::new(0x6675_7365, 0x6163_6375_7261_6379);

fn members() -> (Vec<u64>, Vec<KeyHash>) {
    let keys: Vec<u64> = DistinctKeys::new(1).take(N).collect();
    let hashes = keys.iter().map(|&k| SEED.hash_u64(k)).collect();
    (keys, hashes)
}

/// Checks `count` positives out of `q` against `p` within `Z` σ (and, when asked,
/// within ±10 %); returns the measured rate.
fn check_rate(what: &str, count: u64, q: u64, p: f64, within_10_percent: bool) -> f64 {
    let rate = count as f64 / q as f64;
    let sigma = (p * (1.0 - p) / q as f64).sqrt();
    println!(
        "{what}: {count} of {q} = {:.5} % (2^-f = {:.5} %, ratio {:.4}, band ±{:.2} %)",
        100.0 * rate,
        100.0 * p,
        rate / p,
        100.0 * Z * sigma / p
    );
    assert!(
        (rate - p).abs() <= Z * sigma,
        "{what}: {rate} vs {p} ± {Z}σ"
    );
    if within_10_percent {
        assert!(
            (rate / p - 1.0).abs() <= 0.10,
            "{what}: {rate} vs {p} ± 10 %"
        );
    }
    rate
}

fn uniform_digests(seed: u64, n: u64) -> impl Iterator<Item = KeyHash> {
    DistinctKeys::new(seed)
        .take(n as usize)
        .map(KeyHash::from_u64)
}

#[test]
fn binary_fuse8_at_a_million_keys() {
    let (keys, hashes) = members();
    let t = std::time::Instant::now();
    let built = BinaryFuse8::build(&hashes).unwrap();
    let build_time = t.elapsed();
    let f = BinaryFuse8::from_parts(SEED, built.layout, &built.fingerprints).unwrap();
    assert_eq!((f.len(), built.duplicates), (N, 0));
    let bpk = f.bits_per_key();
    println!(
        "BinaryFuse8: {} slots (segment {} × {}), {bpk:.3} bits/key = {:.4} × log2(1/p); built in {build_time:.2?}",
        f.layout().slots(),
        f.layout().segment_length(),
        f.layout().slots() / f.layout().segment_length() as usize,
        bpk / 8.0
    );
    assert!(bpk <= 9.1, "{bpk} bits per key");
    assert!(keys.iter().all(|&k| f.contains(&k.to_le_bytes())));
    let fp = (ABSENT..ABSENT + QUERIES)
        .filter(|k| f.contains(&k.to_le_bytes()))
        .count() as u64;
    check_rate(
        "BinaryFuse8, 10^6 keyed queries",
        fp,
        QUERIES,
        1.0 / 256.0,
        true,
    );
}

#[test]
fn binary_fuse16_at_a_million_keys() {
    let (keys, hashes) = members();
    let t = std::time::Instant::now();
    let built = BinaryFuse16::build(&hashes).unwrap();
    let build_time = t.elapsed();
    let f = BinaryFuse16::from_parts(SEED, built.layout, &built.fingerprints).unwrap();
    assert_eq!(f.len(), N);
    let bpk = f.bits_per_key();
    println!(
        "BinaryFuse16: {} slots, {bpk:.3} bits/key = {:.4} × log2(1/p); built in {build_time:.2?}",
        f.layout().slots(),
        bpk / 16.0
    );
    assert!(bpk <= 18.1, "{bpk} bits per key");
    assert!(keys.iter().all(|&k| f.contains(&k.to_le_bytes())));
    let p = 1.0 / 65536.0;
    let fp = (ABSENT..ABSENT + QUERIES)
        .filter(|k| f.contains(&k.to_le_bytes()))
        .count() as u64;
    check_rate("BinaryFuse16, 10^6 keyed queries", fp, QUERIES, p, false);
    // Member digests are SipHash outputs, the absent ones a SplitMix64 stream: they
    // meet with probability 2·10^14 / 2^64 ≈ 10^−5.
    let fp = uniform_digests(0x00ab_5e17, HASHED_QUERIES)
        .filter(|&h| f.contains_hash(h))
        .count() as u64;
    check_rate(
        "BinaryFuse16, 2·10^8 pre-hashed queries",
        fp,
        HASHED_QUERIES,
        p,
        true,
    );
}

/// The rate does not depend on the set's size: small filters (which have more slots
/// per key, many of them zero) answer `2^−8` too.
#[test]
fn binary_fuse8_small_sets() {
    for n in [10usize, 100, 1000, 10_000] {
        let hashes: Vec<KeyHash> = DistinctKeys::new(n as u64)
            .take(n)
            .map(|k| SEED.hash_u64(k))
            .collect();
        let built = BinaryFuse8::build(&hashes).unwrap();
        let f = BinaryFuse8::from_parts(SEED, built.layout, &built.fingerprints).unwrap();
        assert!(hashes.iter().all(|&h| f.contains_hash(h)));
        let fp = uniform_digests(0x5eed ^ n as u64, QUERIES)
            .filter(|&h| f.contains_hash(h))
            .count() as u64;
        check_rate(
            &format!("BinaryFuse8, n = {n} ({:.2} bits/key)", f.bits_per_key()),
            fp,
            QUERIES,
            1.0 / 256.0,
            true,
        );
    }
}
