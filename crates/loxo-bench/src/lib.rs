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
