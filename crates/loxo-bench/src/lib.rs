//! Benchmarks (`benches/`) and accuracy-chart tools (`src/bin/`) of the loxo
//! sketches; host only, never published.

pub mod timing {
    //! What the criterion benches share: a benchmark group of one pass over a fixed
    //! number of elements, and the ns per element of every measured batch, recorded
    //! for the ratio tables each bench prints after criterion's report.

    use std::collections::BTreeMap;
    use std::sync::{Mutex, PoisonError};
    use std::time::{Duration, Instant};

    use criterion::{Criterion, Throughput};

    /// ns per element of every measured batch, by `group/name`.
    static NS: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

    /// Records a batch of `elements` that took `elapsed` under `id`.
    pub fn record(id: &str, elapsed: Duration, elements: u64) {
        let ns = elapsed.as_secs_f64() * 1e9 / elements as f64;
        NS.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id.to_owned())
            .or_default()
            .push(ns);
    }

    /// Benchmarks `run` (one pass over `elements` elements) as ns per element, in
    /// group `group`, 10 samples, recorded under `group/name`.
    pub fn bench(c: &mut Criterion, group: &str, name: &str, elements: u64, mut run: impl FnMut()) {
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(elements));
        g.sample_size(10);
        let id = format!("{group}/{name}");
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    run();
                }
                let t = start.elapsed();
                record(&id, t, iters * elements);
                t
            });
        });
        g.finish();
    }

    /// The median of the ns per element recorded under `id`, if any.
    #[must_use]
    pub fn median_ns(id: &str) -> Option<f64> {
        let ns = NS.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = ns.get(id)?.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    }
}

pub mod chart {
    //! What the accuracy-chart tools (`src/bin/`) share: their command line, the
    //! cardinality grid, the two-thread split of the trials, the output path and the
    //! log-scale chart of the cardinality charts.

    use std::error::Error;
    use std::ops::Range;
    use std::path::PathBuf;

    use plotters::coord::types::RangedCoordf64;
    use plotters::coord::Shift;
    use plotters::prelude::*;

    /// The trials of a run: the first command-line argument, else `default`.
    ///
    /// # Errors
    /// If the argument is not a number.
    pub fn trials_arg(default: u64) -> Result<u64, std::num::ParseIntError> {
        std::env::args().nth(1).map_or(Ok(default), |a| a.parse())
    }

    /// Cardinalities 1 … 10^6 on a log grid, `per_decade` points per decade, with
    /// `extra` added; sorted, deduplicated.
    #[must_use]
    pub fn log_checkpoints(per_decade: u32, extra: &[u64]) -> Vec<u64> {
        let mut v: Vec<u64> = (0..=6 * per_decade)
            .map(|i| 10f64.powf(f64::from(i) / f64::from(per_decade)).round() as u64)
            .chain(extra.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// `run(0)` and `run(1)` (the even and the odd trials) on two threads.
    ///
    /// # Panics
    /// If `run` panics.
    pub fn on_two_threads<T: Send>(run: impl Fn(u64) -> T + Sync) -> (T, T) {
        std::thread::scope(|s| {
            let h = s.spawn(|| run(1));
            (
                run(0),
                h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        })
    }

    /// `docs/img/<name>` of the repository, its folder created.
    ///
    /// # Errors
    /// If the folder cannot be created.
    pub fn svg_path(name: &str) -> std::io::Result<PathBuf> {
        let out = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/img")
            .join(name);
        std::fs::create_dir_all(out.parent().unwrap_or(&out))?;
        Ok(out)
    }

    /// A chart of the cardinality charts: `n` from 1 to 10^6 on a log scale, `y`
    /// (`y_desc`) linear, under `caption`.
    pub type LogN<'a, 'b> =
        ChartContext<'a, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, RangedCoordf64>>;

    /// Draws the frame of a [`LogN`] chart on `root`.
    ///
    /// # Errors
    /// Plotters' drawing errors.
    pub fn log_n_chart<'a, 'b>(
        root: &'a DrawingArea<SVGBackend<'b>, Shift>,
        caption: String,
        y: Range<f64>,
        y_desc: &str,
    ) -> Result<LogN<'a, 'b>, Box<dyn Error>> {
        let mut chart = ChartBuilder::on(root)
            .caption(caption, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((1f64..1.0e6).log_scale(), y)?;
        chart
            .configure_mesh()
            .x_desc("distinct keys n (log scale)")
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        Ok(chart)
    }

    /// Draws `chart`'s legend in its upper left corner.
    ///
    /// # Errors
    /// Plotters' drawing errors.
    pub fn legend_upper_left<'a, 'b: 'a>(chart: &mut LogN<'a, 'b>) -> Result<(), Box<dyn Error>> {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

pub mod flow_frames {
    //! The `FlowMonitor` benchmark's frames, shared by `benches/flow.rs` and the
    //! `flow_cost` instruction counter (`valgrind --tool=callgrind`).

    use loxo_tests::zipf::Zipf;

    /// Frames kept in memory (the stream cycles over them): 2^15 frames ≈ 25 MB.
    pub const FRAMES: usize = 1 << 15;

    fn frame(key: u64, bytes: u64) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        let v6 = key.is_multiple_of(5);
        let proto = if key.is_multiple_of(3) { 17u8 } else { 6 };
        let l4 = if proto == 6 { 20 } else { 8 };
        let k = key.to_be_bytes();
        if v6 {
            f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
            let size = (bytes as usize).max(14 + 40 + l4);
            f.extend_from_slice(&((size - 54) as u16).to_be_bytes());
            f.extend_from_slice(&[proto, 64]);
            f.extend_from_slice(&k);
            f.extend_from_slice(&k);
            f.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            f.extend_from_slice(&k[..4]);
            f.resize(size, 0);
        } else {
            f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
            let size = (bytes as usize).max(14 + 20 + l4);
            f.extend_from_slice(&((size - 14) as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
            f.extend_from_slice(&k[..4]);
            f.extend_from_slice(&[10, 0, 0, 1]);
            f.extend_from_slice(&k[4..8]);
            f.resize(size, 0);
        }
        f
    }

    /// `FRAMES` frames: Zipf(1.0) over 10^5 flows with a `flood` share of unique keys.
    pub fn frames(flood: f64) -> Vec<Vec<u8>> {
        let z = Zipf::new(100_000, 1.0);
        z.stream_with_flood(FRAMES, flood, 6)
            .iter()
            .map(|p| frame(p.key, p.bytes))
            .collect()
    }
}
