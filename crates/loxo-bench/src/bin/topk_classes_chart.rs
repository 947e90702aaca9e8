//! Top-100 F1 at 8 KiB per stream class × weight, one series per summary: the
//! evaluation of `tests/tests/topk_classes.rs` (same streams, seeds 1..=3, 10⁷
//! packets over 10⁶ flows, mean F1 over the seeds) drawn as a chart.
//!
//! Run: `cargo run --release -p loxo-bench --bin topk_classes_chart` (about 3
//! minutes on 2 quiet cores). Writes `docs/img/topk_classes_f1.svg` and prints the table.
//!
//! With `--family`: the held-out range of `tests/tests/topk_family.rs` (issue 30's
//! stream family, seeds 1 000 000..1 000 240, 10⁶ packets each) instead, drawn as
//! the distribution of F1 and ARE over the streams, one line per summary
//! (`docs/img/topk_family.svg`; about 2 minutes).
//! The SVG is drawn with `plotters`' `SVGBackend`, as `cardinality_chart` draws
//! its chart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;

use loxo_cms::{CmsTopK, HeavyGuardian, HeavyKeeper, SpaceSaving, TieredTopK, TopK};
use loxo_core::Seed;
use loxo_tests::streams::{Class, Scale};
use loxo_tests::topk::{exact_counts, feed, score};
use loxo_tests::zipf::Packet;
use plotters::prelude::*;

const K: usize = 100;
const SCALE: Scale = Scale {
    packets: 10_000_000,
    flows: 1_000_000,
};
const SEEDS: [u64; 3] = [1, 2, 3];
/// The harness's hashing seed.
const SEED: Seed = Seed::new(0x70b_c0de, 0x5eed_cafe);
const NAMES: [&str; 6] = [
    "TieredTopK 64×4 + 400 cold + 2700 rec",
    "HeavyGuardian 170×4, d = 2",
    "HeavyGuardian 85×8, d = 1",
    "HeavyKeeper 272×2, b = 1.6",
    "CMS-CU 268×4 + heap",
    "Space-Saving 215",
];

fn f1<T: TopK<u64>>(mut t: T, s: &[Packet], exact: &HashMap<u64, u64>, bytes: bool) -> f64 {
    feed(
        &mut t,
        SEED,
        s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })),
    );
    score(&t, exact, K).f1
}

/// F1 of the six summaries on one stream, in `NAMES` order (two threads).
fn f1_all(s: &[Packet], exact: &HashMap<u64, u64>, bytes: bool) -> [f64; 6] {
    std::thread::scope(|sc| {
        let a = sc.spawn(|| {
            [
                f1(TieredTopK::<64, 400, 2700, u64>::new(1), s, exact, bytes),
                f1(HeavyGuardian::<170, 2, 4, u64>::new(1), s, exact, bytes),
                f1(HeavyGuardian::<85, 1, 8, u64>::new(1), s, exact, bytes),
            ]
        });
        let b = [
            f1(
                HeavyKeeper::<272, 2, 100, u64, 160>::new(1),
                s,
                exact,
                bytes,
            ),
            f1(CmsTopK::<268, 4, 100, u64>::new(SEED), s, exact, bytes),
            f1(SpaceSaving::<u64, 215>::new(), s, exact, bytes),
        ];
        let a = a.join().unwrap();
        [a[0], a[1], a[2], b[0], b[1], b[2]]
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("--family") {
        return family::main();
    }
    // rows: (label, mean F1 per summary)
    let mut rows: Vec<(String, [f64; 6])> = Vec::new();
    for class in Class::ALL {
        let mut sums = [[0.0; 6]; 2];
        for seed in SEEDS {
            let s = class.packets(SCALE, seed);
            for (wi, bytes) in [false, true].into_iter().enumerate() {
                let exact =
                    exact_counts(s.iter().map(|p| (p.key, if bytes { p.bytes } else { 1 })));
                for (sum, x) in sums[wi].iter_mut().zip(f1_all(&s, &exact, bytes)) {
                    *sum += x / SEEDS.len() as f64;
                }
            }
        }
        for (wi, weight) in ["packets", "bytes"].into_iter().enumerate() {
            rows.push((format!("{} / {weight}", class.name()), sums[wi]));
        }
        eprintln!("{}", class.name());
    }
    println!("| class / weight | {} |", NAMES.join(" | "));
    println!("|---|{}", "---:|".repeat(NAMES.len()));
    for (label, f) in &rows {
        let cells: Vec<String> = f.iter().map(|x| format!("{x:.3}")).collect();
        println!("| {label} | {} |", cells.join(" | "));
    }
    let out = loxo_bench::chart::svg_path("topk_classes_f1.svg")?;
    draw(&out, &rows)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// A short axis label: "Zipf 0.9 + 90 % flood / bytes" → "flood 90 % B".
fn short(label: &str) -> String {
    let (class, weight) = label.split_once(" / ").unwrap_or((label, ""));
    let class = match class.strip_prefix("Zipf 0.9 + ") {
        Some(f) => format!("flood {}", f.trim_end_matches(" flood")),
        None => class.replace("hot-set change", "hot set"),
    };
    let w = if weight == "bytes" { "B" } else { "pk" };
    format!("{class} {w}")
}

fn draw(out: &Path, rows: &[(String, [f64; 6])]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(out, (1000, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = rows.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "top-100 F1 at 8 KiB per stream class × weight (mean of 3 seeds, 10⁷ packets)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(90)
        .y_label_area_size(50)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0.0f64..1.05)?;
    let labels: Vec<String> = rows.iter().map(|(l, _)| short(l)).collect();
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(
            ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc("F1 of the reported top 100")
        .draw()?;
    // The target.
    let target = BLACK.mix(0.5).stroke_width(1);
    chart
        .draw_series(DashedLineSeries::new(
            [(-0.5, 0.95), (n as f64 - 0.5, 0.95)],
            5,
            4,
            target,
        ))?
        .label("target F1 = 0.95")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], target));
    let colors = [
        RGBColor(220, 60, 30),
        RGBColor(0, 90, 200),
        RGBColor(120, 170, 240),
        RGBColor(20, 150, 60),
        RGBColor(150, 60, 160),
        RGBColor(240, 160, 40),
    ];
    for (k, name) in NAMES.iter().enumerate() {
        let c = colors[k];
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .enumerate()
            .map(|(i, (_, f))| (i as f64, f[k]))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        // Over the empty band right of centre (F1 0.3–0.6 at the floods).
        .position(SeriesLabelPosition::Coordinate(560, 185))
        .label_font(("sans-serif", 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;
    Ok(())
}

/// The held-out evaluation of `tests/tests/topk_family.rs`, drawn.
mod family {
    use std::collections::HashMap;
    use std::ops::Range;

    use loxo_cms::{HeavyKeeper, TieredTopK, TopK};
    use loxo_tests::family::{draw, on_seeds, Drawn};
    use loxo_tests::topk::{dist, exact_counts, feed, judge, Judged};
    use plotters::prelude::*;

    use super::SEED;

    /// The held-out range and stream length of `tests/tests/topk_family.rs`.
    const HELD_OUT: Range<u64> = 1_000_000..1_000_240;
    const PACKETS: usize = 1_000_000;
    const NAMES: [&str; 4] = [
        "TieredTopK 4 KiB, top 50",
        "TieredTopK 8 KiB, top 100",
        "TieredTopK 16 KiB, top 200",
        "HeavyKeeper 272×2 b = 1.6 (8 KiB), top 100",
    ];

    fn run<T: TopK<u64>>(mut t: T, d: &Drawn, exact: &HashMap<u64, u64>, k: usize) -> Judged {
        feed(&mut t, SEED, d.pairs());
        judge(&t, exact, k)
    }

    pub(super) fn main() -> Result<(), Box<dyn std::error::Error>> {
        let r: Vec<[Judged; 4]> = on_seeds(HELD_OUT, 2, |seed| {
            let d = draw(seed, PACKETS);
            let exact = exact_counts(d.pairs());
            [
                run(TieredTopK::<32, 200, 1340, u64>::new(1), &d, &exact, 50),
                run(TieredTopK::<64, 400, 2700, u64>::new(1), &d, &exact, 100),
                run(TieredTopK::<128, 800, 5420, u64>::new(1), &d, &exact, 200),
                run(
                    HeavyKeeper::<272, 2, 100, u64, 160>::new(1),
                    &d,
                    &exact,
                    100,
                ),
            ]
        });
        let columns: Vec<Vec<Judged>> = (0..4).map(|i| r.iter().map(|j| j[i]).collect()).collect();
        for (name, c) in NAMES.iter().zip(&columns) {
            println!("{name}: {:?}", dist(c));
        }
        let out = loxo_bench::chart::svg_path("topk_family.svg")?;
        draw_family(&out, &columns)?;
        println!("wrote {}", out.display());
        Ok(())
    }

    /// Left: F1 of every stream, sorted (the share of streams at or below a value);
    /// right: ARE likewise, log scale.
    fn draw_family(
        out: &std::path::Path,
        columns: &[Vec<Judged>],
    ) -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(out, (1100, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, right) = root.split_horizontally(550);
        let colors = [
            RGBColor(240, 160, 40),
            RGBColor(220, 60, 30),
            RGBColor(150, 60, 160),
            RGBColor(0, 90, 200),
        ];
        let n = HELD_OUT.end - HELD_OUT.start;
        let mut f1 = ChartBuilder::on(&left)
            .caption(
                format!("F1 over {n} held-out streams (sorted)"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0f64..1.0, 0.0f64..1.02)?;
        f1.configure_mesh()
            .x_desc("share of streams")
            .y_desc("F1 of the reported top k")
            .draw()?;
        let target = BLACK.mix(0.5).stroke_width(1);
        f1.draw_series(DashedLineSeries::new(
            [(0.0, 0.95), (1.0, 0.95)],
            5,
            4,
            target,
        ))?
        .label("target F1 = 0.95 (on 95 % of streams)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], target));
        let mut are = ChartBuilder::on(&right)
            .caption("ARE of the true top k found (sorted)", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0f64..1.0, (1e-5f64..1.0).log_scale())?;
        are.configure_mesh()
            .x_desc("share of streams")
            .y_desc("ARE")
            .y_label_formatter(&|y| format!("{:.3} %", 100.0 * y))
            .draw()?;
        are.draw_series(DashedLineSeries::new(
            [(0.0, 0.01), (1.0, 0.01)],
            5,
            4,
            target,
        ))?;
        for ((name, c), color) in NAMES.iter().zip(columns).zip(colors) {
            let mut v: Vec<f64> = c.iter().map(|j| j.score.f1).collect();
            v.sort_by(f64::total_cmp);
            let m = v.len() as f64;
            let pts = v
                .iter()
                .enumerate()
                .map(|(i, &x)| ((i as f64 + 0.5) / m, x));
            f1.draw_series(LineSeries::new(pts, color.stroke_width(2)))?
                .label(*name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            let mut v: Vec<f64> = c.iter().map(|j| j.score.are.max(1e-5)).collect();
            v.sort_by(f64::total_cmp);
            let pts = v
                .iter()
                .enumerate()
                .map(|(i, &x)| ((i as f64 + 0.5) / m, x));
            are.draw_series(LineSeries::new(pts, color.stroke_width(2)))?;
        }
        f1.configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", 12))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        root.present()?;
        Ok(())
    }
}
