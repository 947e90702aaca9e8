//! Count-Min and Count-Sketch: upper-bound properties on unsaturated counters (and
//! saturation against that oracle), each Count-Min row against an ideal row on a
//! Zipf(1.1) stream, conservative ≤ plain, merge and deletion linearity.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cms::{Cms, CmsCu, CountSketch};
use loxo_core::{RowHashes, Seed};
use loxo_tests::topk::exact_counts;
use loxo_tests::zipf::{SplitMix, Zipf};
use proptest::prelude::*;

const SEED: Seed = Seed::new(0xc0_ffee, 0x5eed);

fn zipf_stream() -> (Vec<u64>, HashMap<u64, u64>) {
    let z = Zipf::new(100_000, 1.1);
    let keys: Vec<u64> = z.stream(1_000_000, 11).iter().map(|p| p.key).collect();
    let exact = exact_counts(keys.iter().map(|&k| (k, 1)));
    (keys, exact)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(128, 5) })]

    /// Never an underestimate, plain and conservative, under heavy collisions:
    /// ~37 keys in W = 7 columns, so nearly every key shares a cell in every row and
    /// nearly every estimate is a strict overestimate (asserted: at least half).
    /// `u32` counters cannot saturate here (≤ 300 updates below 300), so
    /// `estimate ≥ truth` is tested on real sums, never on a saturated `u64::MAX`.
    ///
    /// Saturation is checked apart, against that oracle: a plain `u8` sketch keeps
    /// `min(cell, 255)` in every cell, so its estimate is exactly the `u32` sketch's
    /// below 255 and `u64::MAX` ("at least 255") from 255 on.
    #[test]
    fn never_underestimates(updates in prop::collection::vec((0u64..40, 1u64..300), 100..300)) {
        let mut plain = Cms::<7, 3, u32>::new(SEED);
        let mut cu = CmsCu::<7, 3, u32>::new(SEED);
        let mut wide = CmsCu::<64, 4, u32>::new(SEED);
        let mut narrow = Cms::<7, 3, u8>::new(SEED);
        let mut exact: HashMap<u64, u64> = HashMap::new();
        for &(k, w) in &updates {
            let h = SEED.hash_u64(k);
            plain.add_hash(h, w);
            cu.add_hash(h, w);
            wide.add_hash(h, w);
            narrow.add_hash(h, w);
            *exact.entry(k).or_default() += w;
        }
        let mut over = 0;
        for (&k, &f) in &exact {
            let h = SEED.hash_u64(k);
            let (p, c) = (plain.estimate_hash(h), cu.estimate_hash(h));
            prop_assert!(p < u64::from(u32::MAX), "saturated: the property would be void");
            prop_assert!(p >= f, "plain {} < {}", p, f);
            prop_assert!(c >= f, "conservative {} < {}", c, f);
            prop_assert!(wide.estimate_hash(h) >= f);
            // Conservative counters are pointwise ≤ plain ones (Estan & Varghese).
            prop_assert!(c <= p);
            over += usize::from(p > f);
            let n8 = narrow.estimate_hash(h);
            prop_assert_eq!(n8, if p < 255 { p } else { u64::MAX }, "u8 sketch vs u32 at {}", p);
        }
        prop_assert!(2 * over >= exact.len(), "only {} of {} keys overestimated", over, exact.len());
    }

    /// Plain sketches are linear: sketch(A) + sketch(B) == sketch(A ++ B).
    #[test]
    fn merge_of_halves_is_the_whole(a in prop::collection::vec((any::<u64>(), 0u64..1000), 0..200),
                                    b in prop::collection::vec((any::<u64>(), 0u64..1000), 0..200)) {
        let mut sa = Cms::<61, 4, u32>::new(SEED);
        let mut sb = Cms::<61, 4, u32>::new(SEED);
        let mut whole = Cms::<61, 4, u32>::new(SEED);
        for &(k, w) in &a { sa.add(&k.to_le_bytes(), w); whole.add(&k.to_le_bytes(), w); }
        for &(k, w) in &b { sb.add(&k.to_le_bytes(), w); whole.add(&k.to_le_bytes(), w); }
        sa.merge(&sb).unwrap();
        prop_assert_eq!(sa, whole);
    }

    /// Count-Sketch deletions restore the sketch exactly (turnstile linearity).
    #[test]
    fn count_sketch_deletions_restore(a in prop::collection::vec((0u64..500, -1000i64..1000), 0..200),
                                      b in prop::collection::vec((0u64..500, -1000i64..1000), 0..200)) {
        let mut only_a = CountSketch::<128, 5>::new(SEED);
        let mut cs = CountSketch::<128, 5>::new(SEED);
        for &(k, w) in &a { only_a.add_hash(SEED.hash_u64(k), w); cs.add_hash(SEED.hash_u64(k), w); }
        for &(k, w) in &b { cs.add_hash(SEED.hash_u64(k), w); }
        for &(k, w) in &b { cs.add_hash(SEED.hash_u64(k), -w); }
        prop_assert_eq!(&cs, &only_a);
        for k in 0..500u64 {
            prop_assert_eq!(cs.estimate_hash(SEED.hash_u64(k)), only_a.estimate_hash(SEED.hash_u64(k)));
        }
    }
}

/// Each row of `Cms<272, 5>` on a Zipf(1.1) stream of 10⁶ updates, against an
/// ideal row, and conservative update against plain on the same stream.
///
/// Row `i`'s error for key `x` is `cell_i(x) − f(x)`, the weight of the other keys
/// in its column. The Count-Min theorem's model is a uniformly random column per
/// key, independent across keys; under it the number `X` of keys whose row error
/// exceeds `ε·N` (`ε = e/W`) has a distribution fixed by the stream alone, which
/// [`ideal_row_exceedances`] samples with an independent generator. Each real row's
/// `X_i` must lie within 4σ of that mean (both sides: a row hash that gathers
/// heavy keys in few columns raises it). Markov's `P(error > ε·N) ≤ 1/e` per key is
/// the theorem's own, far looser, bound: the ideal mean is checked against it, and
/// each row's `X_i` against `n/e` plus a 4σ binomial band. (Markov on each row and
/// independence of the rows give the `δ = e^−D` of the whole sketch; the rows'
/// independence is tested in `cms_rows.rs`.)
#[test]
fn each_row_errs_as_an_ideal_row_on_zipf_1_1() {
    const W: usize = 272;
    let (keys, exact) = zipf_stream();
    let mut plain = Cms::<W, 5>::new(SEED);
    let mut cu = CmsCu::<W, 5>::new(SEED);
    for &k in &keys {
        let h = SEED.hash_u64(k);
        plain.add_hash(h, 1);
        cu.add_hash(h, 1);
    }
    assert_eq!(plain.total(), 1_000_000);
    let bound = plain.error_bound();
    assert!((bound - 1_000_000.0 * std::f64::consts::E / 272.0).abs() < 1e-6);
    // Sorted: the simulation must not depend on the hash map's iteration order.
    let mut freqs: Vec<u64> = exact.values().copied().collect();
    freqs.sort_unstable();
    let n = freqs.len() as f64;
    let (mu, sd) = ideal_row_exceedances(&freqs, W, bound, 400);
    let markov = n / std::f64::consts::E;
    let binomial =
        4.0 * (n * (1.0 / std::f64::consts::E) * (1.0 - 1.0 / std::f64::consts::E)).sqrt();
    println!(
        "Zipf 1.1, 10^6 updates, {} keys, ε·N = {bound:.0}: ideal row exceeds for {mu:.1} ± {sd:.1} keys (Markov: ≤ {markov:.0})",
        freqs.len()
    );
    assert!(mu <= markov);
    let hashes = RowHashes::<5>::new(SEED);
    for (i, (row, f)) in plain.rows().iter().zip(hashes.iter()).enumerate() {
        let x = exact
            .iter()
            .filter(|&(&k, &fk)| {
                let cell = row[f.index(SEED.hash_u64(k), W as u32) as usize];
                (u64::from(cell) - fk) as f64 > bound
            })
            .count() as f64;
        println!("row {i}: {x} keys exceed ε·N");
        assert!(
            (x - mu).abs() <= 4.0 * sd,
            "row {i}: {x} keys exceed, ideal {mu:.1} ± 4 × {sd:.1}"
        );
        assert!(
            x <= markov + binomial,
            "row {i}: {x} keys exceed, Markov {markov:.0}"
        );
    }

    // Conservative update never raises a cell beyond what the key needs: pointwise
    // ≤ plain (so its mean error is too), and never below the truth.
    let (mut err_plain, mut err_cu) = (0u64, 0u64);
    for (&k, &f) in &exact {
        let h = SEED.hash_u64(k);
        let (p, c) = (plain.estimate_hash(h), cu.estimate_hash(h));
        assert!(p >= f && c >= f && c <= p);
        err_plain += p - f;
        err_cu += c - f;
    }
    println!(
        "mean error plain {:.1}, conservative {:.1}",
        err_plain as f64 / n,
        err_cu as f64 / n
    );
}

/// Mean and standard deviation, over `replicas` draws, of the number of keys whose
/// error in one ideal Count-Min row of width `w` exceeds `bound`: each key gets a
/// uniform column from a SplitMix64 stream independent of loxo's hashing, a
/// column's load is the sum of its keys' weights, a key's error the load of its
/// column less its own weight.
fn ideal_row_exceedances(freqs: &[u64], w: usize, bound: f64, replicas: u64) -> (f64, f64) {
    let mut rng = SplitMix::new(0x1dea_10c0);
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    let mut column = vec![0usize; freqs.len()];
    for _ in 0..replicas {
        let mut load = vec![0u64; w];
        for (c, &f) in column.iter_mut().zip(freqs) {
            *c = rng.below(w as u64) as usize;
            load[*c] += f;
        }
        let x = column
            .iter()
            .zip(freqs)
            .filter(|&(&c, &f)| (load[c] - f) as f64 > bound)
            .count() as f64;
        sum += x;
        sum_sq += x * x;
    }
    let mean = sum / replicas as f64;
    (
        mean,
        (sum_sq / replicas as f64 - mean * mean).max(0.0).sqrt(),
    )
}

/// Count-Sketch is unbiased; Count-Min is not.
///
/// For a key `x`, each row's error is `Σ_{y≠x, h(y)=h(x)} s(x)s(y)f(y)`, mean 0.
/// Averaged over all `n` keys, the terms are the pairs `{x, y}` sharing a cell,
/// each `s(x)s(y)(f(x) + f(y))` with independent random sign: variance
/// `≈ (1/n²)·Σ_y f(y)²·(n/W) = ‖f‖₂²/(n·W)` (each `y` shares its cell with about
/// `n/W` keys). So σ_mean ≈ ‖f‖₂/√(n·W) (the median of D rows does not widen it);
/// assert |mean| ≤ 5σ. Count-Min's mean error is one-sided, ≈ (N − f)/W per row
/// before the minimum, and lands far outside that band.
#[test]
fn count_sketch_is_unbiased() {
    let (keys, exact) = zipf_stream();
    let mut cs = CountSketch::<1024, 5>::new(SEED);
    let mut cms = Cms::<1024, 5>::new(SEED);
    for &k in &keys {
        let h = SEED.hash_u64(k);
        cs.add_hash(h, 1);
        cms.add_hash(h, 1);
    }
    let l2 = exact
        .values()
        .map(|&f| (f as f64) * (f as f64))
        .sum::<f64>()
        .sqrt();
    let (mut sum_cs, mut sum_cms) = (0.0, 0.0);
    for (&k, &f) in &exact {
        let h = SEED.hash_u64(k);
        sum_cs += cs.estimate_hash(h) as f64 - f as f64;
        sum_cms += cms.estimate_hash(h) as f64 - f as f64;
    }
    let n = exact.len() as f64;
    let (mean_cs, mean_cms) = (sum_cs / n, sum_cms / n);
    let band = 5.0 * l2 / (n * 1024.0).sqrt();
    println!("‖f‖₂ = {l2:.0}: Count-Sketch mean signed error {mean_cs:.2} (band ±{band:.1}), Count-Min {mean_cms:.1}");
    assert!(mean_cs.abs() <= band, "{mean_cs}");
    assert!(mean_cms > band);
}
