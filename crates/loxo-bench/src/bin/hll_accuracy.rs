//! Accuracy chart of `loxo_hll::Hll<10>`: relative error (mean ± one standard
//! deviation over seeded trials) against the cardinality `n`, for `estimate`
//! (Ertl), `estimate_classic` (harmonic mean + linear counting) and the martingale
//! estimate.
//!
//! Run: `cargo run --release -p loxo-bench --bin hll_accuracy [trials]`
//! (default 1000 trials). Writes `docs/img/hll_accuracy.svg` and prints the table.
//!
//! Trials feed `insert_hash` with seeded SplitMix64 digests
//! ([`loxo_tests::DistinctKeys`]), exactly as the `hll_accuracy` integration test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use loxo_bench::chart::{
    legend_upper_left, log_checkpoints, log_n_chart, on_two_threads, svg_path, trials_arg,
};
use loxo_core::{KeyHash, Seed};
use loxo_hll::Hll;
use loxo_tests::DistinctKeys;
use plotters::prelude::*;

const P: u8 = 10;
const M: f64 = (1u32 << P) as f64;
const NAMES: [&str; 3] = ["estimate (Ertl)", "estimate_classic", "estimate_martingale"];

/// Per checkpoint and estimator: (Σ e, Σ e²) of the relative error e.
type Sums = Vec<[(f64, f64); 3]>;

fn run(trials: u64, first: u64, ns: &[u64]) -> Sums {
    let mut sums = vec![[(0.0, 0.0); 3]; ns.len()];
    let mut hll = Hll::<P>::new(Seed::new(1, 2));
    for t in (first..trials).step_by(2) {
        hll.clear();
        let mut keys = DistinctKeys::new(loxo_core::mix64(0xc4a7_0000 ^ (t + 1)));
        let mut n = 0;
        for (c, &target) in ns.iter().enumerate() {
            for k in keys.by_ref().take((target - n) as usize) {
                hll.insert_hash(KeyHash::from_u64(k));
            }
            n = target;
            let est = [
                hll.estimate(),
                hll.estimate_classic(),
                hll.estimate_martingale().expect("inserts only"),
            ];
            for (s, e) in sums[c].iter_mut().zip(est) {
                let r = (e - n as f64) / n as f64;
                s.0 += r;
                s.1 += r * r;
            }
        }
    }
    sums
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trials = trials_arg(1000)?;
    let ns = log_checkpoints(12, &[(2.5 * M) as u64]);
    let (a, b) = on_two_threads(|first| run(trials, first, &ns));
    // (mean, standard deviation) per checkpoint and estimator.
    let stats: Vec<[(f64, f64); 3]> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| {
            std::array::from_fn(|k| {
                let t = trials as f64;
                let mean = (x[k].0 + y[k].0) / t;
                let var = (x[k].1 + y[k].1) / t - mean * mean;
                (mean, var.max(0.0).sqrt())
            })
        })
        .collect();

    println!("P = {P}, m = {M}, {trials} trials; relative error mean ± sd (%)");
    println!("| n | {} | {} | {} |", NAMES[0], NAMES[1], NAMES[2]);
    println!("|---:|---:|---:|---:|");
    for (n, s) in ns.iter().zip(&stats) {
        let f = |(m, sd): (f64, f64)| format!("{:+.2} ± {:.2}", 100.0 * m, 100.0 * sd);
        println!("| {n} | {} | {} | {} |", f(s[0]), f(s[1]), f(s[2]));
    }

    let out = svg_path("hll_accuracy.svg")?;
    draw(&out, &ns, &stats, trials)?;
    println!("wrote {}", out.display());
    Ok(())
}

fn draw(
    out: &Path,
    ns: &[u64],
    stats: &[[(f64, f64); 3]],
    trials: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(out, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let theory = 100.0 * 1.04 / M.sqrt();
    let mut chart = log_n_chart(
        &root,
        format!("loxo Hll<{P}> (m = {M}): relative error, mean ± 1 sd over {trials} seeds"),
        -8.0f64..8.0,
        "relative error (%)",
    )?;

    let colors = [
        RGBColor(0, 90, 200),
        RGBColor(220, 60, 30),
        RGBColor(20, 150, 60),
    ];
    for (k, name) in NAMES.iter().enumerate() {
        let c = colors[k];
        let pts = |sign: f64| -> Vec<(f64, f64)> {
            ns.iter()
                .zip(stats)
                .map(|(&n, s)| (n as f64, 100.0 * (s[k].0 + sign * s[k].1)))
                .collect()
        };
        chart
            .draw_series(LineSeries::new(pts(0.0), c.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        for sign in [-1.0, 1.0] {
            chart.draw_series(DashedLineSeries::new(pts(sign), 4, 3, c.stroke_width(1)))?;
        }
    }
    let grey = BLACK.mix(0.4);
    chart
        .draw_series(LineSeries::new(
            [(1.0, theory), (1.0e6, theory)],
            grey.stroke_width(1),
        ))?
        .label("±1.04/√m (theory); vertical line: n = 2.5·m")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1)));
    chart.draw_series(LineSeries::new(
        [(1.0, -theory), (1.0e6, -theory)],
        grey.stroke_width(1),
    ))?;
    chart.draw_series(LineSeries::new(
        [(2.5 * M, -8.0), (2.5 * M, 8.0)],
        BLACK.mix(0.2).stroke_width(1),
    ))?;
    legend_upper_left(&mut chart)?;
    root.present()?;
    Ok(())
}
