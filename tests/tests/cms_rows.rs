//! Count-Min and Count-Sketch rows collide independently, and the (ε, δ) guarantee
//! holds at the crate's own sizing on streams built to stress it.
//!
//! Why these streams: for an absent key, Markov's inequality bounds the chance that
//! one row's cell exceeds ε·N = e·N/W by `E[cell]/(εN) ≤ (N/W)/(eN/W) = 1/e`; δ = e^−D
//! then needs the rows to fail *independently*. A stream of `m < W/e` equal heavy keys
//! of weight `w > εN` is the near-worst case for one row (a cell exceeds as soon as one
//! heavy key shares it: `1 − (1 − 1/W)^m ≈ 0.31`), so the D-row tail sits close to
//! `0.31^D`, within reach of δ; if rows are correlated it blows through δ.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cms::{sizing, Cms, CmsCu, CountSketch, Counter, UpdateRule};
use loxo_core::{KeyHash, Seed};
use loxo_tests::zipf::{SplitMix, Zipf};

const SEED: Seed = Seed::new(0x726f_7773, 0x1dea_0f0e);

/// `n` digests of keys never inserted (uniform 64-bit values from a fixed stream).
fn absent(n: usize, seed: u64) -> impl Iterator<Item = KeyHash> {
    let mut rng = SplitMix::new(seed);
    (0..n).map(move |_| KeyHash::from_u64(rng.next_u64()))
}

/// The column a single key occupies in each row of a `Cms<W, D, u8>`: insert it alone
/// into an empty sketch and read which cell of each row became 1 (black box: only
/// the public `add_hash` and `rows`).
fn columns<const W: usize, const D: usize>(s: &mut Cms<W, D, u8>, h: KeyHash) -> [u16; D] {
    s.clear();
    s.add_hash(h, 1);
    let mut out = [0u16; D];
    for (o, row) in out.iter_mut().zip(s.rows()) {
        *o = row.iter().position(|&c| c == 1).unwrap() as u16;
    }
    out
}

/// Given that two keys collide in rows 0 and 1, each further row collides with
/// probability 1/W, independently. On ≥ 10^5 such pairs, each row's co-collision count
/// is Binomial(P, 1/W) and is checked within 4σ; pairs colliding in two further rows
/// (rows 2 and 3) are Binomial(P, 1/W²), checked likewise; and a chi-square over the
/// D − 2 rows' counts (df = D − 2) must stay below its 99.99 % quantile.
fn rows_are_independent<const W: usize, const D: usize>(keys: u64) {
    let mut s = Box::new(Cms::<W, D, u8>::new(SEED));
    let cols: Vec<[u16; D]> = (0..keys)
        .map(|k| columns(&mut s, SEED.hash_u64(k)))
        .collect();
    let mut by_first_two: HashMap<(u16, u16), Vec<usize>> = HashMap::new();
    for (i, c) in cols.iter().enumerate() {
        by_first_two.entry((c[0], c[1])).or_default().push(i);
    }
    let mut pairs = 0u64;
    let mut per_row = [0u64; D];
    let mut rows_2_and_3 = 0u64;
    for group in by_first_two.values() {
        for (a, &i) in group.iter().enumerate() {
            for &j in &group[a + 1..] {
                pairs += 1;
                for r in 2..D {
                    per_row[r] += u64::from(cols[i][r] == cols[j][r]);
                }
                rows_2_and_3 += u64::from(cols[i][2] == cols[j][2] && cols[i][3] == cols[j][3]);
            }
        }
    }
    assert!(pairs >= 100_000, "only {pairs} pairs collide in rows 0-1");
    let p = 1.0 / W as f64;
    let mean = pairs as f64 * p;
    let sd = (mean * (1.0 - p)).sqrt();
    let mut chi2 = 0.0;
    for (r, &c) in per_row.iter().enumerate().skip(2) {
        let share = c as f64 / pairs as f64;
        println!("W={W} D={D}: {pairs} pairs collide in rows 0-1; row {r} co-collides {c} ({share:.5}, independent {p:.5})");
        assert!(
            (c as f64 - mean).abs() <= 4.0 * sd,
            "row {r}: {c} co-collisions of {pairs} pairs, expected {mean:.0} ± {sd:.1}"
        );
        chi2 += (c as f64 - mean).powi(2) / (mean * (1.0 - p));
    }
    // 99.99 % quantiles of chi-square: df 4 → 23.5, df 6 → 27.9.
    let limit = match D - 2 {
        4 => 23.5,
        6 => 27.9,
        _ => unreachable!("add the quantile for df = {}", D - 2),
    };
    assert!(chi2 <= limit, "chi-square {chi2:.1} over df {}", D - 2);
    let mean2 = pairs as f64 * p * p;
    let sd2 = mean2.sqrt();
    println!("rows 2 and 3 both: {rows_2_and_3} (independent {mean2:.1})");
    assert!(
        (rows_2_and_3 as f64 - mean2).abs() <= 4.0 * sd2 + 1.0,
        "{rows_2_and_3} pairs also collide in rows 2 and 3, expected {mean2:.1} ± {sd2:.1}"
    );
}

#[test]
fn rows_collide_independently_power_of_two_width() {
    // 30 000 keys: ≈ 30 000²/2 / 64² = 1.1·10^5 pairs collide in rows 0-1.
    rows_are_independent::<64, 8>(30_000);
}

#[test]
fn rows_collide_independently_odd_width() {
    // W = 61 (no power of two): ≈ 28 000²/2 / 61² = 1.05·10^5 pairs.
    rows_are_independent::<61, 6>(28_000);
}

/// Share of `queries` absent keys whose estimate exceeds `ε·N`, and its bound
/// `δ + 3σ` (σ = √(δ(1 − δ)/queries), the binomial sampling error of a rate δ).
fn tail<const W: usize, const D: usize, C: Counter, U: UpdateRule>(
    s: &Cms<W, D, C, U>,
    queries: usize,
) -> (f64, f64) {
    let bound = s.error_bound();
    let over = absent(queries, 0x00ab_5e47)
        .filter(|&h| s.estimate_hash(h) as f64 > bound)
        .count();
    let delta = s.delta();
    let limit = delta + 3.0 * (delta * (1.0 - delta) / queries as f64).sqrt();
    (over as f64 / queries as f64, limit)
}

/// `m` keys of equal weight `w`, with `m < W/e` so that each weighs more than ε·N.
fn flat<const W: usize, const D: usize, U: UpdateRule>(s: &mut Cms<W, D, u32, U>, w: u64) {
    let m = (W as f64 / std::f64::consts::E).floor() as u64;
    for k in 0..m {
        s.add_hash(SEED.hash_u64(k), w);
    }
    assert!(
        w as f64 > s.error_bound(),
        "every heavy key must exceed ε·N"
    );
}

fn zipf<const W: usize, const D: usize, U: UpdateRule>(s: &mut Cms<W, D, u32, U>) {
    let z = Zipf::new(100_000, 1.0);
    for p in z.stream(1_000_000, 0x21bf) {
        s.add_hash(SEED.hash_u64(p.key), p.bytes);
    }
}

macro_rules! delta_at_sizing {
    ($name:ident, $eps:expr, $delta:expr, $queries:expr) => {
        #[test]
        fn $name() {
            const W: usize = sizing::width_for_epsilon($eps);
            const D: usize = sizing::depth_for_delta($delta);
            let mut plain = Box::new(Cms::<W, D>::new(SEED));
            flat(&mut plain, 1000);
            let (share, limit) = tail(&*plain, $queries);
            println!("Cms<{W}, {D}> flat: {share:.3e} of absent keys over ε·N (δ = {:.1e}, limit {limit:.2e})", plain.delta());
            assert!(share <= limit, "flat stream: {share:.3e} > {limit:.3e}");
            let mut cu = Box::new(CmsCu::<W, D>::new(SEED));
            flat(&mut cu, 1000);
            let (share, limit) = tail(&*cu, $queries);
            assert!(share <= limit, "flat stream, conservative: {share:.3e} > {limit:.3e}");
            let mut z = Box::new(Cms::<W, D>::new(SEED));
            zipf(&mut z);
            let (share, limit) = tail(&*z, $queries);
            println!("Cms<{W}, {D}> Zipf 1.0: {share:.3e} over ε·N");
            assert!(share <= limit, "Zipf stream: {share:.3e} > {limit:.3e}");
        }
    };
}

// The two sizings, 10^7 absent keys each.
delta_at_sizing!(delta_holds_at_eps_1pc_delta_1e6, 0.01, 1e-6, 10_000_000);
delta_at_sizing!(delta_holds_at_eps_01pc_delta_1e3, 0.001, 1e-3, 10_000_000);
// The flow monitor's sketch itself (`loxo_flow::FlowSketch` = `CmsPair<848, 3>`, whose
// rows are 21-bit slices of the digest, documented "95 %"): each measure's tail on the
// flat stream, 2·10^6 absent keys.
#[test]
fn delta_holds_for_the_monitor_sketch_shape() {
    const W: usize = loxo_flow::SKETCH_W;
    const _: () = assert!(W == 848 && loxo_flow::SKETCH_D == 3);
    let mut s = Box::new(loxo_flow::FlowSketch::new(SEED));
    let m = (W as f64 / std::f64::consts::E).floor() as u64;
    let (wa, wb) = (1000u64, 3u64);
    for k in 0..m {
        s.add_hash(SEED.hash_u64(k), wa, wb);
    }
    let queries = 2_000_000usize;
    let delta = s.delta();
    let limit = delta + 3.0 * (delta * (1.0 - delta) / queries as f64).sqrt();
    let (bound_a, bound_b) = (s.error_bound(m * wa), s.error_bound(m * wb));
    assert!(
        wa as f64 > bound_a && wb as f64 > bound_b,
        "one key must exceed ε·N"
    );
    let (mut over_a, mut over_b) = (0usize, 0usize);
    for h in absent(queries, 0x00ab_5e47) {
        let (a, b) = s.estimate_hash(h);
        over_a += usize::from(a as f64 > bound_a);
        over_b += usize::from(b as f64 > bound_b);
    }
    for (name, over) in [("bytes", over_a), ("packets", over_b)] {
        let share = over as f64 / queries as f64;
        println!("FlowSketch {name} flat: {share:.4} over ε·N (δ = e^-3 = 0.0498)");
        assert!(share <= limit, "{name}: {share} > {limit}");
    }
}

/// With independent rows, the D-row exceedance of an absent key is the product of
/// the rows' exceedance rates; the rates are read off the sketch (the fraction of a
/// row's cells above ε·N: an absent key's column is uniform). Checked within 4σ at
/// D = 5, where the product (≈ 0.3^5 ≈ 2.5·10^-3) is measurable with 4·10^6 queries.
#[test]
fn depth_multiplies_row_failure_rates() {
    let mut s = Box::new(Cms::<272, 5>::new(SEED));
    flat(&mut s, 1000);
    let bound = s.error_bound();
    let product: f64 = s
        .rows()
        .iter()
        .map(|row| row.iter().filter(|&&c| f64::from(c) > bound).count() as f64 / 272.0)
        .product();
    let q = 4_000_000usize;
    let over = absent(q, 0x5eed_0005)
        .filter(|&h| s.estimate_hash(h) as f64 > bound)
        .count();
    let expect = product * q as f64;
    let sd = (expect * (1.0 - product)).sqrt();
    println!("Cms<272, 5> flat: {over} of {q} over ε·N; product of row rates predicts {expect:.0} ± {sd:.0}");
    assert!(
        (over as f64 - expect).abs() <= 4.0 * sd,
        "{over} exceedances, independent rows predict {expect:.0} ± {sd:.0}"
    );
}

/// Count-Sketch: the number of rows in which an absent key's |row estimate| exceeds
/// ε·‖f‖₂ follows the Poisson-binomial law of the rows' measured rates (independent
/// rows), checked by chi-square; and the median fails no more often than that law's
/// tail `P[#rows over ≥ ⌈D/2⌉]`, which is itself below the Chebyshev bound
/// `P[Bin(D, 1/3) ≥ ⌈D/2⌉]` the docs derive δ from.
#[test]
fn count_sketch_rows_fail_independently_and_the_median_holds() {
    const W: usize = 256;
    const D: usize = 7;
    let mut cs = Box::new(CountSketch::<W, D>::new(SEED));
    // m = 3W keys of equal weight: about 3 keys per cell, ‖f‖₂ = w·√m.
    let m = 3 * W as u64;
    let w = 100i64;
    for k in 0..m {
        cs.add_hash(SEED.hash_u64(k), w);
    }
    let thr = cs.epsilon() * (w as f64) * (m as f64).sqrt();
    let rates: Vec<f64> = cs
        .rows()
        .iter()
        .map(|row| {
            row.iter()
                .filter(|&&c| c.unsigned_abs() as f64 > thr)
                .count() as f64
                / W as f64
        })
        .collect();
    // Poisson-binomial distribution of the number of failing rows.
    let mut law = vec![1.0f64];
    for &p in &rates {
        let mut next = vec![0.0; law.len() + 1];
        for (j, &q) in law.iter().enumerate() {
            next[j] += q * (1.0 - p);
            next[j + 1] += q * p;
        }
        law = next;
    }
    let q = 2_000_000usize;
    let mut hist = [0u64; D + 1];
    let mut median_off = 0u64;
    let rows = cs.rows();
    let row_hashes = loxo_core::RowHashes::<D>::new(SEED);
    for h in absent(q, 0x00c5_0007) {
        let failing = rows
            .iter()
            .zip(row_hashes.iter())
            .filter(|(row, r)| row[r.index(h, W as u32) as usize].unsigned_abs() as f64 > thr)
            .count();
        hist[failing] += 1;
        median_off += u64::from(cs.estimate_hash(h).unsigned_abs() as f64 > thr);
    }
    // Chi-square over the bins with expectation ≥ 5 (the rest pooled), df = bins − 1.
    let (mut chi2, mut bins, mut pool_o, mut pool_e) = (0.0, 0usize, 0.0, 0.0);
    for (o, p) in hist.iter().zip(&law) {
        let e = p * q as f64;
        if e >= 5.0 {
            chi2 += (*o as f64 - e).powi(2) / e;
            bins += 1;
        } else {
            pool_o += *o as f64;
            pool_e += e;
        }
    }
    if pool_e > 0.0 {
        chi2 += (pool_o - pool_e).powi(2) / pool_e.max(1.0);
        bins += 1;
    }
    println!("CountSketch<{W}, {D}>: rows' rates {rates:.3?}; failing-row histogram {hist:?}; law {:?}; chi2 {chi2:.1} over {} df", law.iter().map(|p| (p * q as f64).round()).collect::<Vec<_>>(), bins - 1);
    // 99.99 % chi-square quantile for df ≤ 7 is at most 29.9.
    assert!(
        chi2 <= 29.9,
        "rows do not fail independently: chi2 {chi2:.1}"
    );
    let tail: f64 = law[D.div_ceil(2)..].iter().sum();
    let limit = tail * q as f64 + 3.0 * (tail * q as f64).sqrt() + 3.0;
    println!(
        "median off in {median_off} of {q} (independent-row tail {:.0})",
        tail * q as f64
    );
    assert!(
        median_off as f64 <= limit,
        "median off {median_off} > {limit:.0}"
    );
    // And the documented Chebyshev tail is indeed above it.
    let cheb: f64 = (D.div_ceil(2)..=D)
        .map(|j| binom(D, j) * (1.0f64 / 3.0).powi(j as i32) * (2.0f64 / 3.0).powi((D - j) as i32))
        .sum();
    assert!(tail <= cheb);
}

fn binom(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}
