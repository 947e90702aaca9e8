//! Count-Min and Count-Sketch: upper-bound properties, the (ε, δ) guarantee on a
//! Zipf(1.1) stream, conservative ≤ plain, merge and deletion linearity.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cms::{Cms, CmsCu, CountSketch};
use loxo_core::Seed;
use loxo_tests::topk::exact_counts;
use loxo_tests::zipf::Zipf;
use proptest::prelude::*;

const SEED: Seed = Seed::new(0xc0_ffee, 0x5eed);

fn zipf_stream() -> (Vec<u64>, HashMap<u64, u64>) {
    let z = Zipf::new(100_000, 1.1);
    let keys: Vec<u64> = z.stream(1_000_000, 11).iter().map(|p| p.key).collect();
    let exact = exact_counts(keys.iter().map(|&k| (k, 1)));
    (keys, exact)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, rng_seed: proptest::test_runner::RngSeed::Fixed(5), failure_persistence: None, ..ProptestConfig::default() })]

    /// Never an underestimate, plain and conservative, even with tiny saturating
    /// u8 counters and heavy collisions (W = 7).
    #[test]
    fn never_underestimates(updates in prop::collection::vec((0u64..40, 1u64..300), 1..300)) {
        let mut plain = Cms::<7, 3, u8>::new(SEED);
        let mut cu = CmsCu::<7, 3, u8>::new(SEED);
        let mut wide = CmsCu::<64, 4, u32>::new(SEED);
        let mut exact: HashMap<u64, u64> = HashMap::new();
        for &(k, w) in &updates {
            let h = SEED.hash_u64(k);
            plain.add_hash(h, w);
            cu.add_hash(h, w);
            wide.add_hash(h, w);
            *exact.entry(k).or_default() += w;
        }
        for (&k, &f) in &exact {
            let h = SEED.hash_u64(k);
            prop_assert!(plain.estimate_hash(h) >= f);
            prop_assert!(cu.estimate_hash(h) >= f);
            prop_assert!(wide.estimate_hash(h) >= f);
            // Conservative counters are pointwise ≤ plain ones (Estan & Varghese).
            prop_assert!(cu.estimate_hash(h) <= plain.estimate_hash(h));
        }
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

/// The (ε, δ) guarantee on a Zipf(1.1) stream of 10⁶ updates, and conservative
/// update's accuracy against plain on the same stream.
///
/// `W = 272, D = 5`: ε = e/272 ≈ 1 %, δ = e⁻⁵ ≈ 0.674 %. By Markov each row
/// overestimates by more than ε·N with probability ≤ 1/e, and the D rows use
/// independent probes, so a key's error exceeds ε·N with probability ≤ e^−D = δ:
/// the expected share of such keys is ≤ δ. (Markov is loose: the real share is far
/// below; asserting ≤ δ is the theorem, not a tuned number.)
#[test]
fn epsilon_delta_guarantee_on_zipf_1_1() {
    let (keys, exact) = zipf_stream();
    let mut plain = Cms::<272, 5>::new(SEED);
    let mut cu = CmsCu::<272, 5>::new(SEED);
    for &k in &keys {
        let h = SEED.hash_u64(k);
        plain.add_hash(h, 1);
        cu.add_hash(h, 1);
    }
    assert_eq!(plain.total(), 1_000_000);
    let bound = plain.error_bound();
    assert!((bound - 1_000_000.0 * std::f64::consts::E / 272.0).abs() < 1e-6);
    let (mut bad, mut err_plain, mut err_cu) = (0usize, 0u64, 0u64);
    for (&k, &f) in &exact {
        let h = SEED.hash_u64(k);
        let (p, c) = (plain.estimate_hash(h), cu.estimate_hash(h));
        assert!(p >= f && c >= f && c <= p);
        if (p - f) as f64 > bound {
            bad += 1;
        }
        err_plain += p - f;
        err_cu += c - f;
    }
    let share = bad as f64 / exact.len() as f64;
    let (mp, mc) = (
        err_plain as f64 / exact.len() as f64,
        err_cu as f64 / exact.len() as f64,
    );
    println!(
        "Zipf 1.1, 10^6 updates, {} keys: ε·N = {bound:.0}, share over = {share:.5} (δ = {:.5}); mean error plain {mp:.1}, conservative {mc:.1}",
        exact.len(),
        plain.delta()
    );
    assert!(share <= plain.delta(), "share {share}");
    assert!(mc <= mp, "conservative {mc} > plain {mp}");
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
