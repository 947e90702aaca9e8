//! Cardinality accuracy chart at P = 10 (m = 1024): relative RMSE against the
//! cardinality `n` for `Hll` (Ertl's estimate), `HllSparse` (list mode up to 9m/64
//! keys, then the same registers), `Ull` (FGRA, maximum likelihood, martingale) and
//! `Ull::new_sparse` (list mode up to 3m/16 keys), next to each estimator's asymptotic
//! theory (1.04, 0.782, 0.761 and 0.658 over √m).
//!
//! Run: `cargo run --release -p loxo-bench --bin cardinality_chart [trials]` (default
//! 500 trials). Writes `docs/img/cardinality_rmse.svg` and prints the table.
//!
//! Trials feed `insert_hash` with seeded SplitMix64 digests
//! ([`loxo_tests::DistinctKeys`]), as the accuracy tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use loxo_bench::chart::{
    legend_upper_left, log_checkpoints, log_n_chart, on_two_threads, svg_path, trials_arg,
};
use loxo_core::{KeyHash, Seed};
use loxo_hll::{Hll, HllSparse, Ull};
use loxo_tests::DistinctKeys;
use plotters::prelude::*;

const P: u8 = 10;
const M: f64 = (1u32 << P) as f64;
const NAMES: [&str; 6] = [
    "Hll estimate (Ertl)",
    "HllSparse",
    "Ull FGRA",
    "Ull ML",
    "Ull martingale",
    "Ull::new_sparse (FGRA)",
];
const K: usize = NAMES.len();

/// Per checkpoint and estimator: Σ e² of the relative error e.
type Sums = Vec<[f64; K]>;

fn run(trials: u64, first: u64, ns: &[u64]) -> Sums {
    let mut sums = vec![[0.0; K]; ns.len()];
    let seed = Seed::new(1, 2);
    let mut hll = Hll::<P>::new(seed);
    let mut hll_sparse = HllSparse::<P>::new(seed);
    let mut ull = Ull::<P>::new(seed);
    let mut ull_sparse = Ull::<P>::new_sparse(seed);
    for t in (first..trials).step_by(2) {
        hll.clear();
        hll_sparse.clear();
        ull.clear();
        ull_sparse.clear();
        let mut keys = DistinctKeys::new(loxo_core::mix64(0xcafe_0000 ^ (t + 1)));
        let mut n = 0;
        for (c, &target) in ns.iter().enumerate() {
            for k in keys.by_ref().take((target - n) as usize) {
                let h = KeyHash::from_u64(k);
                hll.insert_hash(h);
                hll_sparse.insert_hash(h);
                ull.insert_hash(h);
                ull_sparse.insert_hash(h);
            }
            n = target;
            let est = [
                hll.estimate(),
                hll_sparse.estimate(),
                ull.estimate(),
                ull.estimate_ml(),
                ull.estimate_martingale().expect("inserts only"),
                ull_sparse.estimate(),
            ];
            for (s, e) in sums[c].iter_mut().zip(est) {
                let r = (e - n as f64) / n as f64;
                *s += r * r;
            }
        }
    }
    sums
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trials = trials_arg(500)?;
    let ns = log_checkpoints(8, &[]);
    let (a, b) = on_two_threads(|first| run(trials, first, &ns));
    let rmse: Vec<[f64; K]> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| std::array::from_fn(|k| ((x[k] + y[k]) / trials as f64).sqrt()))
        .collect();

    println!("P = {P}, m = {M}, {trials} trials; relative RMSE (%)");
    println!("| n | {} |", NAMES.join(" | "));
    println!("|---:|{}", "---:|".repeat(K));
    for (n, r) in ns.iter().zip(&rmse) {
        let cells: Vec<String> = r.iter().map(|x| format!("{:.3}", 100.0 * x)).collect();
        println!("| {n} | {} |", cells.join(" | "));
    }
    let out = svg_path("cardinality_rmse.svg")?;
    draw(&out, &ns, &rmse, trials)?;
    println!("wrote {}", out.display());
    Ok(())
}

fn draw(
    out: &Path,
    ns: &[u64],
    rmse: &[[f64; K]],
    trials: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(out, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = log_n_chart(
        &root,
        format!("loxo cardinality sketches at m = {M}: relative RMSE over {trials} seeds"),
        0.0f64..4.0,
        "relative RMSE (%)",
    )?;
    let colors = [
        RGBColor(0, 90, 200),
        RGBColor(120, 170, 240),
        RGBColor(220, 60, 30),
        RGBColor(150, 60, 160),
        RGBColor(20, 150, 60),
        RGBColor(240, 160, 40),
    ];
    for (k, name) in NAMES.iter().enumerate() {
        let c = colors[k];
        let pts: Vec<(f64, f64)> = ns
            .iter()
            .zip(rmse)
            .map(|(&n, r)| (n as f64, 100.0 * r[k]))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    for (coef, label, c) in [
        (1.04, "1.04/√m (Hll theory)", colors[0]),
        (0.782, "0.782/√m (Ull FGRA)", colors[2]),
        (0.658, "0.658/√m (Ull martingale)", colors[4]),
    ] {
        let y = 100.0 * coef / M.sqrt();
        let style = c.mix(0.6).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new([(1.0, y), (1.0e6, y)], 5, 4, style))?
            .label(label)
            .legend(move |(x, yy)| PathElement::new(vec![(x, yy), (x + 20, yy)], style));
    }
    legend_upper_left(&mut chart)?;
    root.present()?;
    Ok(())
}
