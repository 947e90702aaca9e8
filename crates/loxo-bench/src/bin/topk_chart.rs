//! F1 and ARE of the top-100 report vs memory budget for HeavyKeeper, Space-Saving and
//! CMS + heap, on a Zipf(1.0) stream of 10⁶ packets over 10⁵ flows (seed 6), weights =
//! packets. Writes `docs/img/topk_memory.svg` and prints the table.
//!
//! Run: `cargo run --release -p loxo-bench --bin topk_chart`.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::boxed_local,
    clippy::too_many_lines
)]

use loxo_cms::{CmsTopK, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use loxo_tests::topk::{exact_counts, feed, score, Score};
use loxo_tests::zipf::Zipf;
use plotters::prelude::*;

const K: usize = 100;
const SEED: Seed = Seed::new(6, 6);

fn run<T: TopK<u64>>(
    mut t: Box<T>,
    stream: &[(u64, u64)],
    exact: &std::collections::HashMap<u64, u64>,
) -> (usize, Score) {
    feed(&mut *t, SEED, stream.iter().copied());
    (std::mem::size_of::<T>(), score(&*t, exact, K))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let z = Zipf::new(100_000, 1.0);
    let stream: Vec<(u64, u64)> = z.stream(1_000_000, 6).iter().map(|p| (p.key, 1)).collect();
    let exact = exact_counts(stream.iter().copied());
    let hk = vec![
        run(
            Box::new(HeavyKeeper::<128, 2, 100, u64>::new(1)),
            &stream,
            &exact,
        ),
        run(
            Box::new(HeavyKeeper::<256, 2, 100, u64>::new(1)),
            &stream,
            &exact,
        ),
        run(
            Box::new(HeavyKeeper::<512, 2, 100, u64>::new(1)),
            &stream,
            &exact,
        ),
        run(
            Box::new(HeavyKeeper::<1024, 2, 100, u64>::new(1)),
            &stream,
            &exact,
        ),
        run(
            Box::new(HeavyKeeper::<2048, 2, 100, u64>::new(1)),
            &stream,
            &exact,
        ),
    ];
    let ss = vec![
        run(Box::new(SpaceSaving::<u64, 100>::new()), &stream, &exact),
        run(Box::new(SpaceSaving::<u64, 200>::new()), &stream, &exact),
        run(Box::new(SpaceSaving::<u64, 400>::new()), &stream, &exact),
        run(Box::new(SpaceSaving::<u64, 800>::new()), &stream, &exact),
        run(Box::new(SpaceSaving::<u64, 1600>::new()), &stream, &exact),
    ];
    let cms = vec![
        run(
            Box::new(CmsTopK::<128, 4, 100, u64>::new(SEED)),
            &stream,
            &exact,
        ),
        run(
            Box::new(CmsTopK::<256, 4, 100, u64>::new(SEED)),
            &stream,
            &exact,
        ),
        run(
            Box::new(CmsTopK::<512, 4, 100, u64>::new(SEED)),
            &stream,
            &exact,
        ),
        run(
            Box::new(CmsTopK::<1024, 4, 100, u64>::new(SEED)),
            &stream,
            &exact,
        ),
        run(
            Box::new(CmsTopK::<2048, 4, 100, u64>::new(SEED)),
            &stream,
            &exact,
        ),
    ];
    let series = [
        ("HeavyKeeper (D=2)", &hk, RGBColor(0, 90, 200)),
        ("Space-Saving", &ss, RGBColor(200, 60, 0)),
        ("CMS(D=4)+heap", &cms, RGBColor(0, 150, 60)),
    ];
    println!(
        "{:<20} {:>8} {:>7} {:>8}",
        "algorithm", "bytes", "F1", "ARE"
    );
    for (name, pts, _) in &series {
        for (b, s) in *pts {
            println!("{name:<20} {b:>8} {:>7.3} {:>8.4}", s.f1, s.are);
        }
    }
    let out = loxo_bench::chart::svg_path("topk_memory.svg")?;
    let root = SVGBackend::new(&out, (1000, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let (l, r) = root.split_horizontally(500);
    for (area, title, f1) in [
        (l, "F1 of top-100", true),
        (r, "ARE of top-100 (log)", false),
    ] {
        let mut b = ChartBuilder::on(&area);
        b.caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55);
        let x = (1000f64..200_000f64).log_scale();
        if f1 {
            let mut c = b.build_cartesian_2d(x, 0f64..1.05)?;
            c.configure_mesh()
                .x_desc("memory (bytes, log)")
                .y_desc("F1")
                .draw()?;
            for (name, pts, col) in &series {
                c.draw_series(LineSeries::new(
                    pts.iter().map(|(b, s)| (*b as f64, s.f1)),
                    col,
                ))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
            }
            c.configure_series_labels()
                .background_style(WHITE)
                .border_style(BLACK)
                .draw()?;
        } else {
            let mut c = b.build_cartesian_2d(x, (1e-4f64..10.0).log_scale())?;
            c.configure_mesh()
                .x_desc("memory (bytes, log)")
                .y_desc("ARE")
                .draw()?;
            for (_, pts, col) in &series {
                c.draw_series(LineSeries::new(
                    pts.iter().map(|(b, s)| (*b as f64, s.are.max(1e-4))),
                    col,
                ))?;
            }
        }
    }
    root.present()?;
    println!("wrote {}", out.display());
    Ok(())
}
