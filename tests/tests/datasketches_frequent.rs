//! Fleet heavy hitters in Apache DataSketches: two devices' top-k summaries
//! (`FlowMonitor::top()`, `SpaceSaving<FlowKey, 256>`, over one generated trace split
//! between them, so most flows are seen by both), shipped as loxo wire frames,
//! converted by `loxo_cli::frequent::datasketches_image` (what `loxo export
//! --datasketches` runs) and read by the real DataSketches (the `datasketches` PyPI
//! package, `tests/python/ds_frequent.py`), which merges them.
//!
//! Python is `$LOXO_PYTHON` (CI points it at a virtualenv with `datasketches`), else
//! `python3`; without a Python that can `import datasketches` the test **fails**,
//! unless `LOXO_SKIP_COLLECTORS=1` or `LOXO_SKIP_DATASKETCHES=1` (then it prints a `SKIPPED` line and returns).
//!
//! What is checked, for every queried flow (both devices' monitored flows, the 50
//! heaviest and 200 other true flows, a flow nobody saw):
//! * per device, DataSketches' estimate, lower and upper bound **equal** what loxo
//!   says the image holds (`image_weight` of loxo's `Entry` and the summary's
//!   `min_count` as offset; `FrequentItemsView` of the same bytes agrees), and for a
//!   flow above the minimum the estimate and upper bound equal loxo's `count`, the
//!   lower bound is at most loxo's `count − error`; the bounds contain the device's
//!   exact bytes;
//! * merged in DataSketches, the bounds contain the exact bytes of the whole trace
//!   (generator truth); with a map large enough not to purge, the merge's weights and
//!   offset are the sums of the devices';
//! * `get_frequent_items(NO_FALSE_NEGATIVES, t)` for `t` = max(the merge's maximum
//!   error, 0.5 % of the bytes) lists every flow heavier than `t`, and
//!   `NO_FALSE_POSITIVES` only flows heavier than `t`;
//! * loxo's `FrequentItemsView` reads DataSketches' own serialization of the merge
//!   with the same answers as DataSketches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;

use loxo_tests::datasketches::python;

use loxo_cli::exact::Exact;
use loxo_cli::frequent::datasketches_image;
use loxo_cli::trace::{generate_with_truth, Popularity, TraceConfig};
use loxo_cms::TopK;
use loxo_core::Seed;
use loxo_flow::{Config, FlowMonitor};
use loxo_interop::frequent::{image_weight, FrequentItemsView};

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/ds_frequent.py");

fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("loxo-dsfi-{}-{name}", std::process::id()))
}

/// `(estimate, lower, upper)` as DataSketches reports them.
type Answer = (u64, u64, u64);

#[derive(Default)]
struct Python {
    /// `(label, item) → answer`.
    answers: HashMap<(String, String), Answer>,
    /// `label → (num_active_items, total_weight)`.
    meta: HashMap<String, (u64, u64)>,
    no_false_negatives: Vec<(String, Answer)>,
    no_false_positives: Vec<(String, Answer)>,
    merged_image: Vec<u8>,
}

fn run_python(
    py: &str,
    name: &str,
    images: &[&[u8]],
    queries: &[String],
    threshold: u64,
) -> Python {
    let qpath = temp_file(&format!("{name}-queries.txt"));
    std::fs::write(&qpath, queries.join("\n")).unwrap();
    let merged = temp_file(&format!("{name}-merged.bin"));
    let paths: Vec<PathBuf> = images
        .iter()
        .enumerate()
        .map(|(i, img)| {
            let p = temp_file(&format!("{name}-{i}.bin"));
            std::fs::write(&p, img).unwrap();
            p
        })
        .collect();
    let out = Command::new(py)
        .arg(SCRIPT)
        .arg(&qpath)
        .arg(threshold.to_string())
        .arg(&merged)
        .args(&paths)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ds_frequent.py failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = Python {
        merged_image: std::fs::read(&merged).unwrap(),
        ..Python::default()
    };
    for p in paths.iter().chain([&qpath, &merged]) {
        let _ = std::fs::remove_file(p);
    }
    let n = |s: &str| s.parse::<u64>().unwrap();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[..] {
            ["meta", label, active, total, _] => {
                r.meta.insert(label.into(), (n(active), n(total)));
            }
            ["q", label, item, e, l, u] => {
                r.answers
                    .insert((label.into(), item.into()), (n(e), n(l), n(u)));
            }
            ["nfn", item, e, l, u] => r.no_false_negatives.push((item.into(), (n(e), n(l), n(u)))),
            ["nfp", item, e, l, u] => r.no_false_positives.push((item.into(), (n(e), n(l), n(u)))),
            _ => panic!("unexpected line {line:?}"),
        }
    }
    r
}

struct Device {
    monitor: Box<FlowMonitor>,
    exact: Exact,
    seed: Seed,
}

/// Two devices, each with its own secret seed: one trace split between them (frame `i`
/// to device `i mod 3 == 0`: a third and two thirds), or with `disjoint` a trace each
/// (the second at another generator seed: other flows); the exact counts per device
/// and for both.
fn devices(cfg: &TraceConfig, disjoint: bool) -> ([Device; 2], Exact) {
    let mut d = [1u64, 2].map(|i| {
        let seed = Seed::new(0x5eed_0000 + i, 0xde71_ce00 ^ i);
        Device {
            monitor: Box::new(FlowMonitor::new(Config {
                seed,
                ..Config::with_seed(TEST_SEED)
            })),
            exact: Exact::default(),
            seed,
        }
    });
    let mut all = Exact::default();
    let traces = if disjoint {
        vec![
            (*cfg, Some(0)),
            (
                TraceConfig {
                    seed: cfg.seed + 1000,
                    ..*cfg
                },
                Some(1),
            ),
        ]
    } else {
        vec![(*cfg, None)]
    };
    for (cfg, device) in traces {
        generate_with_truth(&cfg, |f, t| {
            let i = device.unwrap_or(usize::from(t.index % 3 != 0));
            d[i].monitor.feed(f);
            d[i].exact.feed_truth(t);
            all.feed_truth(t);
            Ok::<_, ()>(())
        })
        .unwrap();
    }
    (d, all)
}

/// The device's summary as the firmware ships it (loxo wire frame), then as the
/// DataSketches image `loxo export --datasketches` writes.
fn export(d: &Device, lg: Option<u8>) -> Vec<u8> {
    let top = d.monitor.top();
    let mut frame = vec![0u8; top.encoded_len::<38>()];
    let n = top.encode_into::<38>(&d.seed, &mut frame).unwrap();
    frame.truncate(n);
    datasketches_image(&frame, lg).unwrap().bytes
}

fn exact_bytes(e: &Exact, text: &str, by_text: &HashMap<String, loxo_flow::FlowKey>) -> u64 {
    by_text
        .get(text)
        .and_then(|k| e.flows.get(k))
        .map_or(0, |c| c.bytes)
}

#[allow(clippy::too_many_lines)] // one scenario, checked end to end
fn check(name: &str, cfg: &TraceConfig, disjoint: bool, lg: Option<u8>, py: &str) {
    let (d, all) = devices(cfg, disjoint);
    let images: Vec<Vec<u8>> = d.iter().map(|d| export(d, lg)).collect();
    let by_text: HashMap<String, loxo_flow::FlowKey> =
        all.flows.keys().map(|k| (k.to_string(), *k)).collect();

    // Queries: every monitored flow, the heaviest 50, 200 others, one nobody saw.
    let mut heavy: Vec<_> = all.flows.iter().map(|(k, c)| (c.bytes, *k)).collect();
    heavy.sort_unstable_by(|a, b| b.cmp(a));
    let mut queries: BTreeSet<String> = BTreeSet::new();
    for dev in &d {
        queries.extend(dev.monitor.top().entries().map(|e| e.key.to_string()));
    }
    queries.extend(heavy.iter().take(50).map(|(_, k)| k.to_string()));
    let step = (heavy.len() / 200).max(1);
    queries.extend(heavy.iter().step_by(step).map(|(_, k)| k.to_string()));
    queries.insert("10.255.255.255:1 -> 10.255.255.254:2 proto 17".into());
    let queries: Vec<String> = queries.into_iter().collect();

    let total: u64 = d.iter().map(|d| d.monitor.top().total()).sum();
    assert_eq!(total, all.total.bytes, "{name}");
    let views: Vec<FrequentItemsView<'_>> = images
        .iter()
        .map(|i| FrequentItemsView::new_checked(i).unwrap())
        .collect();
    let offsets: Vec<u64> = views.iter().map(FrequentItemsView::maximum_error).collect();
    // A first pass for the threshold: the merge's maximum error is only known after
    // DataSketches merged (a purge adds to it); 0.5 % of the bytes is far above it.
    let threshold = total / 200;
    let r = run_python(
        py,
        name,
        &images.iter().map(Vec::as_slice).collect::<Vec<_>>(),
        &queries,
        threshold,
    );

    // Each device: DataSketches says exactly what loxo says its image holds.
    let (mut above_min, mut at_min) = (0, 0);
    for (i, dev) in d.iter().enumerate() {
        let top = dev.monitor.top();
        let label = i.to_string();
        let o = offsets[i];
        assert_eq!(o, top.min_count(), "{name}: device {i} offset");
        assert_eq!(
            r.meta[&label],
            (views[i].num_items() as u64, top.total()),
            "{name}: device {i}"
        );
        let entries: HashMap<String, loxo_cms::Entry<loxo_flow::FlowKey>> =
            top.entries().map(|e| (e.key.to_string(), e)).collect();
        for q in &queries {
            let got = r.answers[&(label.clone(), q.clone())];
            let want = match entries.get(q) {
                Some(e) => {
                    let w = image_weight(e.lower.unwrap(), e.upper.unwrap(), o);
                    let w = w.expect("a summary entry has a positive lower bound");
                    if e.count > o {
                        above_min += 1;
                        assert_eq!((got.0, got.2), (e.count, e.count), "{name}: {q}");
                        assert!(got.1 <= e.lower.unwrap(), "{name}: {q}");
                    } else {
                        at_min += 1;
                    }
                    (w + o, w, w + o)
                }
                None => (0, 0, o),
            };
            assert_eq!(got, want, "{name}: device {i}, {q}");
            let v = &views[i];
            assert_eq!(
                got,
                (v.estimate(q), v.lower_bound(q), v.upper_bound(q)),
                "{name}: {q}"
            );
            let f = exact_bytes(&dev.exact, q, &by_text);
            assert!(
                got.1 <= f && f <= got.2,
                "{name}: device {i}, {q}: {f} outside {got:?}"
            );
        }
    }

    // The merge: bounds contain the whole trace's exact bytes.
    let merged = FrequentItemsView::new_checked(&r.merged_image).unwrap();
    let om = merged.maximum_error();
    assert_eq!(r.meta["M"].1, total, "{name}");
    assert_eq!(r.meta["M"].0, merged.num_items() as u64, "{name}");
    let purged = om != offsets.iter().sum::<u64>();
    let mut flows_in_both = 0;
    for q in &queries {
        let got = r.answers[&("M".to_string(), q.clone())];
        let f = exact_bytes(&all, q, &by_text);
        assert!(
            got.1 <= f && f <= got.2,
            "{name}: merged {q}: {f} outside {got:?}"
        );
        assert_eq!(
            got,
            (
                merged.estimate(q),
                merged.lower_bound(q),
                merged.upper_bound(q)
            ),
            "{name}: loxo's view of DataSketches' merge, {q}"
        );
        let per: Vec<Answer> = (0..2)
            .map(|i| r.answers[&(i.to_string(), q.clone())])
            .collect();
        flows_in_both += usize::from(per.iter().all(|a| a.1 > 0));
        if !purged {
            let lb = per[0].1 + per[1].1;
            assert_eq!((got.1, got.2), (lb, lb + om), "{name}: merged {q}");
        }
    }
    if lg == Some(10) {
        assert!(!purged, "{name}: a 2^10 map holds both devices' 512 items");
    }
    if disjoint && lg.is_none() {
        assert!(purged, "{name}: 512 items overflow a 2^9 map");
    }

    // Heavy flows of the fleet: none missing above max(threshold, maximum error).
    assert!(
        threshold >= om,
        "{name}: threshold {threshold} below the merge's error {om}"
    );
    let listed: BTreeSet<&str> = r
        .no_false_negatives
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    let truly_heavy: Vec<_> = heavy.iter().take_while(|(b, _)| *b > threshold).collect();
    assert!(!truly_heavy.is_empty(), "{name}");
    for (b, k) in &truly_heavy {
        assert!(
            listed.contains(k.to_string().as_str()),
            "{name}: {k} ({b} bytes) not listed"
        );
    }
    for (k, a) in &r.no_false_positives {
        let f = exact_bytes(&all, k, &by_text);
        assert!(
            f > threshold && a.1 > threshold,
            "{name}: {k} listed with {f} bytes"
        );
    }
    println!(
        "{name}: {} bytes; device offsets {offsets:?}, items {:?}; merge: {} items, \
         maximum error {om}{}; {} flows queried ({flows_in_both} stored by both devices, \
         {above_min} device entries above the minimum, {at_min} at it); {} flows above \
         {threshold} bytes, DataSketches lists {} (no false negatives) / {} (no false \
         positives)",
        total,
        views
            .iter()
            .map(FrequentItemsView::num_items)
            .collect::<Vec<_>>(),
        merged.num_items(),
        if purged { " (purged)" } else { "" },
        queries.len(),
        truly_heavy.len(),
        r.no_false_negatives.len(),
        r.no_false_positives.len(),
    );
}

#[test]
fn datasketches_merges_two_devices_top_k_with_bounds_that_hold() {
    let Some(py) = python() else { return };
    // Full summaries: 20 000 flows and 30 % one-packet floods over 256 candidates, so
    // both evict and carry an offset (the minimum count).
    let busy = TraceConfig {
        packets: 300_000,
        flows: 20_000,
        popularity: Popularity::Zipf(1.0),
        flood: 0.3,
        malformed: 0.01,
        extensions: 0.2,
        seed: 17,
        ..TraceConfig::default()
    };
    check("busy, smallest map", &busy, false, None, &py);
    check("busy, lg 10", &busy, false, Some(10), &py);
    // Disjoint flows at the smallest map (2^9: 384 items): the union of 512 items
    // overflows it and DataSketches purges (the offset grows, bounds must still hold).
    check("disjoint, smallest map", &busy, true, None, &py);
    // A Pareto trace at another seed.
    let pareto = TraceConfig {
        packets: 200_000,
        flows: 5_000,
        popularity: Popularity::Pareto(1.2),
        flood: 0.1,
        seed: 99,
        ..TraceConfig::default()
    };
    check("pareto", &pareto, false, Some(10), &py);
    // Few flows: neither summary fills, offsets are 0 and every bound is exact.
    let quiet = TraceConfig {
        packets: 20_000,
        flows: 150,
        seed: 5,
        ..TraceConfig::default()
    };
    check("quiet", &quiet, false, None, &py);
}
