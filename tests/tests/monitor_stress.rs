//! The flow monitor on traffic built to break it: one-packet floods (50 % and 90 %
//! of frames, spoofed sources), heavy-tailed lognormal flow sizes, a hot set that
//! changes mid-epoch, flows at exactly θ and one unit below, 10⁶-frame epochs, 10×
//! the new-flow filter's design load; shares of bytes and of packets; θ from
//! θ_min = 1/256 to 10 % (a θ below θ_min is refused). The truth comes from the
//! generator (`loxo_tests::traffic`), not from the monitor's parser.
//!
//! Asserted for every epoch:
//! * recall 1: every flow at θ is listed and `elephants_complete` is true;
//! * every certain bound contains the exact figure; "certain" elephants are at θ;
//!   every listed flow's upper bound reaches θ;
//! * the Count-Min lower bound of the other measure holds for ≥ 95 % of elephants
//!   (its stated probability; checked over all epochs, minus 3σ of the binomial);
//! * distinct flows within 3 relative standard errors (1.04/√16384), distinct sources
//!   within 3 (1.04/√1024) — floods included;
//! * new flows (a fresh monitor: every flow is new): an unbiased estimate. At or
//!   below the filters' design load (`NEW_FLOW_CAPACITY` flows) not flagged, and
//!   within 4σ of the truth with σ from the register-blocked Bloom theory
//!   (`loxo_tests::bloom_theory`, computed from the filter's geometry and the true
//!   flow count — not the report's own figures); past 1.1× the design load flagged
//!   overloaded and within 4 of its stated σ (`new_flows_sigma`).
//!
//! New flows on held-out seeds: `new_flows_below_and_above_the_filters_capacity` (one
//! fresh epoch, 300 to 100 000 flows) and `new_flows_in_steady_epochs_at_the_readme_epoch_sizes`
//! (epoch after epoch of 16 384, 50 000, 500 000 and 10⁶ frames, Zipf traffic and
//! 90 % floods, the truth being the flows absent from the previous epoch) assert, in
//! every epoch, the error within 4 stated σ, that σ within the bound the docs state
//! (chosen on tuning seeds only, see [`HELD_OUT`]) and, where 4 such σ are at most
//! 5 %, the error within 5 %; and over all epochs that σ is honest (mean z² within
//! χ² bounds).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};

use loxo_core::Seed;
use loxo_flow::{
    Config, FlowKey, FlowMonitor, Report, ShareOf, Theta, NEW_FLOW_CAPACITY, NEW_FLOW_K,
    NEW_FLOW_WORDS,
};
use loxo_tests::bloom_theory::expected_register_false_positives;
use loxo_tests::traffic::{self, Counts, Epoch, Flow};

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn theta(s: &str) -> Theta {
    Theta::parse(s).unwrap()
}

/// Runs one epoch through a fresh monitor.
fn run(e: &Epoch, theta: Theta, by_bytes: bool) -> Report {
    run_seeded(e, theta, by_bytes, Config::with_seed(TEST_SEED).seed)
}

/// [`run`] with the monitor's hash seed.
fn run_seeded(e: &Epoch, theta: Theta, by_bytes: bool, seed: Seed) -> Report {
    let mut m = Box::new(FlowMonitor::new(Config {
        seed,
        theta,
        share_of: if by_bytes {
            ShareOf::Bytes
        } else {
            ShareOf::Packets
        },
        ..Config::with_seed(TEST_SEED)
    }));
    for &(flow, len) in &e.frames {
        m.feed(&flow.frame(usize::from(len)));
    }
    let mut r = Report::default();
    m.end_epoch(&mut r);
    r
}

/// Tallies of the probabilistic bound across epochs.
#[derive(Default)]
struct Tally {
    elephants: u64,
    other_lower_held: u64,
}

#[allow(clippy::too_many_lines)]
fn check(name: &str, e: &Epoch, theta: Theta, by_bytes: bool, tally: &mut Tally) -> Report {
    let r = run(e, theta, by_bytes);
    let total = e.total();
    assert_eq!(
        (r.frames, r.packets, r.bytes),
        (total.packets, total.packets, total.bytes),
        "{name}: totals"
    );
    let counts: HashMap<FlowKey, Counts> =
        e.counts().into_iter().map(|(f, c)| (f.key(), c)).collect();
    let t = if by_bytes { total.bytes } else { total.packets };
    let share_of = r.share_of;

    // Every listed flow: certain bounds contain the truth, the upper bound reaches θ,
    // "certain" only at θ.
    for el in &r.elephants {
        let c = counts.get(&el.key).copied().unwrap_or_default();
        let (ranked, other, tr, to) = if by_bytes {
            (el.bytes, el.packets, c.bytes, c.packets)
        } else {
            (el.packets, el.bytes, c.packets, c.bytes)
        };
        assert!(ranked.lower_certain, "{name}: {el:?}");
        assert!(
            ranked.contains(tr),
            "{name}: {} ranked bounds {ranked:?} miss the truth {tr}",
            el.key
        );
        assert!(
            other.upper >= to,
            "{name}: {}: other upper {} < {to}",
            el.key,
            other.upper
        );
        assert!(
            theta.reached(ranked.upper, t),
            "{name}: {} listed below θ",
            el.key
        );
        if el.certain {
            assert!(
                theta.reached(tr, t),
                "{name}: {} certain at {tr} of {t}",
                el.key
            );
        }
        assert_eq!(el.ranked(share_of), &ranked);
    }

    // Recall.
    let truth = e.elephants(theta, by_bytes);
    let listed = truth
        .iter()
        .filter(|(f, _)| r.elephants.iter().any(|el| el.key == f.key()))
        .count();
    assert!(r.elephants_complete, "{name}: θ ≥ θ_min but not complete");
    assert_eq!(listed, truth.len(), "{name}: an elephant is missing");
    // The probabilistic lower bound of the other measure, over true elephants.
    for (f, c) in &truth {
        if let Some(el) = r.elephants.iter().find(|el| el.key == f.key()) {
            let (other, to) = if by_bytes {
                (el.packets, c.packets)
            } else {
                (el.bytes, c.bytes)
            };
            tally.elephants += 1;
            tally.other_lower_held += u64::from(other.lower <= to);
        }
    }

    // Distinct flows and sources within 3 relative standard errors.
    let flows = counts.len() as f64;
    let rel = (r.distinct_flows as f64 - flows).abs() / flows;
    assert!(
        rel <= 3.0 * 1.04 / 128.0,
        "{name}: distinct flows {} vs {flows}",
        r.distinct_flows
    );
    let sources = e.sources() as f64;
    let rel = (r.distinct_sources as f64 - sources).abs() / sources;
    assert!(
        rel <= 3.0 * 1.04 / 32.0,
        "{name}: distinct sources {} vs {sources}",
        r.distinct_sources
    );

    // New flows (a fresh monitor: every flow of the epoch is new).
    check_new_flows(name, &r, counts.len() as u64, false);
    println!(
        "{name}: θ {theta} of {}: {} elephants ({} listed, {} certain), flows {}/{flows}, sources {}/{sources}, new {}{}",
        if by_bytes { "bytes" } else { "packets" },
        truth.len(),
        listed,
        r.elephants.iter().filter(|e| e.certain).count(),
        r.distinct_flows,
        r.distinct_sources,
        r.new_flows,
        if r.new_flows_overloaded { " (overloaded)" } else { "" }
    );
    r
}

/// First seed of the held-out trials of the new-flow tests. The σ bounds they assert
/// ([`fresh_sigma_bound`], [`CLASSES`]) were chosen on the tuning seeds 1 000–1 009 and
/// 2 000–2 009 alone (`LOXO_TUNE=1000 cargo test -p loxo-tests --test monitor_stress
/// new_flows -- --nocapture` runs ten trials from that base and prints every epoch
/// instead of asserting the bounds: the largest σ/new seen there, plus 10–20 %);
/// the seeds from 9 000 000 were never looked at while choosing.
const HELD_OUT: u64 = 9_000_000;

/// The tuning base given in `LOXO_TUNE`, if any.
fn tuning() -> Option<u64> {
    std::env::var("LOXO_TUNE").ok().and_then(|s| s.parse().ok())
}

/// The trial seeds of a new-flow test: `n` held-out seeds from [`HELD_OUT`] (offset
/// by `at`, so tests draw apart), or ten tuning seeds.
fn trial_seeds(at: u64, n: u64) -> Vec<u64> {
    match tuning() {
        Some(base) => (base..base + 10).collect(),
        None => (HELD_OUT + at..HELD_OUT + at + n).collect(),
    }
}

/// The σ of one epoch's new-flow figure from a fresh monitor (every flow new, the last
/// epoch's filter empty), as a share of the count, that the docs state for `flows`
/// flows: 0.4 % up to 5× the design load where the filter does not sample, 0.95 %
/// where it samples (`sampled`: past 5×, or past the design load in a flood — most
/// frames first frames, as these uniform populations' early frames are —; the figure
/// is then about the flows HLL's, 1.04/√16384 ≈ 0.81 %). Tuning seeds, populations
/// of 4 500 to 100 000 flows and the first epochs of [`CLASSES`], up to 229×: at
/// most 0.34 % and 0.81 %, plus 15–20 %. (Before the regression on the flows HLL:
/// 0.45 %, then 2 % to 12.5×, 2.75 % to 25×, 3.75 %.)
fn fresh_sigma_bound(flows: u64, sampled: bool) -> f64 {
    let load = flows as f64 / f64::from(NEW_FLOW_CAPACITY);
    if load <= 5.0 && !sampled {
        0.004
    } else {
        0.0095
    }
}

/// The error formula: the monitor's figure starts from a Horvitz–Thompson sum, each
/// counted new flow weighing `w = 2^s/((1 − p_A)(1 − p_B))` (`s` the sampling level,
/// `p_A` this epoch's filter's false-positive rate when the flow arrived, `p_B` the
/// last epoch's final rate), corrected by regression on the flows HLL: `N̂ + b·(F̂ −
/// Â)`, `Â` the same HT total over every sampled flow (new or not), `F̂` the HLL's
/// distinct flows, `b = Cov(N̂, Â)/(Var Â + Var F̂)`; it reports `σ² = Var N̂ − Cov²/(Var
/// Â + Var F̂)` with the variances estimated from the sampled flows' weights and
/// `Var F̂ = (1.04/128·F̂)²` (`new_flows_sigma`; `loxo_flow`'s `new_flows` module docs).
/// The per-epoch check: the error within 4 of that σ (+1 for rounding). Returns the
/// error in σ.
fn within_four_stated_sigma(name: &str, r: &Report, truth: u64) -> f64 {
    let err = r.new_flows as f64 - truth as f64;
    let sigma = f64::from(r.new_flows_sigma);
    assert!(
        err.abs() <= 4.0 * sigma + 1.0,
        "{name}: {} for {truth} new flows, beyond 4 stated σ = {sigma:.1}",
        r.new_flows
    );
    err / sigma.max(1.0)
}

/// New flows of a fresh monitor's epoch of `flows` distinct flows (all new; the
/// previous epoch's filter is empty). Below the design load the figure is a
/// Horvitz–Thompson estimate (the regression's share is negligible there): each
/// new flow is counted unless the epoch's filter already "knew" it when it arrived
/// (an `insert` false positive, rate `fpr(j)` for the j-th flow), and weighed by the
/// inverse of its chance to be counted. At or below the design load the report must
/// not be flagged, and the error must be within 4σ of 0 with `σ² = E + (0.15·E)²`,
/// `E = Σ_{j<n} fpr(j)` from the register-Bloom theory (`loxo_tests::bloom_theory`;
/// the second term covers the fill's spread and the model's few-per-cent error,
/// generously) — plus 1 for rounding. Past 1.1× the design load the flag must be set,
/// the error within 4 of the report's own σ ([`within_four_stated_sigma`]), that σ
/// no wider than [`fresh_sigma_bound`] (unless `tune`), and — where 4 such σ are at
/// most 5 %: at every load tried, up to 25× — the error within 5 % of the truth.
/// Returns (error, σ) below the load.
fn check_new_flows(name: &str, r: &Report, flows: u64, tune: bool) -> Option<(f64, f64)> {
    let err = r.new_flows as f64 - flows as f64;
    if flows <= u64::from(NEW_FLOW_CAPACITY) {
        assert!(
            !r.new_flows_overloaded,
            "{name}: {flows} flows (design load {NEW_FLOW_CAPACITY}) flagged overloaded"
        );
        let expected = expected_register_false_positives(NEW_FLOW_WORDS as u64, NEW_FLOW_K, flows);
        let sd = (expected + (0.15 * expected).powi(2)).sqrt();
        assert!(
            err.abs() <= 4.0 * sd + 1.0,
            "{name}: {} for {flows} new flows, beyond 4σ = {:.1} (theory misses {expected:.1})",
            r.new_flows,
            4.0 * sd
        );
        Some((err, sd))
    } else {
        if flows * 10 >= u64::from(NEW_FLOW_CAPACITY) * 11 {
            assert!(
                r.new_flows_overloaded,
                "{name}: {flows} flows, past the design load {NEW_FLOW_CAPACITY}, not flagged"
            );
        }
        within_four_stated_sigma(name, r, flows);
        let sigma = f64::from(r.new_flows_sigma);
        let bound = fresh_sigma_bound(flows, r.new_flows_sampling > 0);
        assert!(
            tune || sigma <= bound * flows as f64,
            "{name}: σ {sigma:.1} wider than {:.2} % of {flows}",
            100.0 * bound
        );
        if 4.0 * bound <= 0.05 {
            assert!(
                err.abs() <= 0.05 * flows as f64,
                "{name}: {} for {flows} new flows, beyond 5 % (σ {sigma:.1})",
                r.new_flows
            );
        }
        None
    }
}

/// New-flow counts of one fresh epoch on both sides of the filters' design load (4 000
/// flows): from 300 to 3 900 flows the figure is within the theory's band and not
/// flagged; from 4 500 to 100 000 (25×) it is flagged and checked by
/// [`check_new_flows`]. Held-out seeds (traffic and monitor seed), one per population.
#[test]
fn new_flows_below_and_above_the_filters_capacity() {
    let tune = tuning().is_some();
    for seed in trial_seeds(0, 1) {
        let mut below = 0;
        for (i, flows) in [
            300usize, 1_500, 3_000, 3_500, 3_900, 4_500, 8_000, 20_000, 50_000, 100_000,
        ]
        .into_iter()
        .enumerate()
        {
            // Uniform popularity, 30 frames per flow (5 past 20 000): every flow
            // appears (the truth is the flows that did).
            let per = if flows > 20_000 { 5 } else { 30 };
            let s = seed + 100 * i as u64;
            let e = traffic::zipf(per * flows, flows, 0.0, 0.0, s);
            let truth = e.counts().len() as u64;
            let r = run_seeded(&e, theta("1%"), true, Seed::new(s, !s));
            let name = format!("{flows} flows, seed {s}");
            if let Some((err, sd)) = check_new_flows(&name, &r, truth, tune) {
                below += 1;
                println!(
                    "{name}: {truth} flows, {} new ± {:.1} stated, error {err:+.0} (theory σ {sd:.1})",
                    r.new_flows, r.new_flows_sigma
                );
            } else {
                println!(
                    "{name}: {truth} flows, {} new ± {:.1} = {:.2} % (overloaded, sampling level {}), error {:+.2} %",
                    r.new_flows,
                    r.new_flows_sigma,
                    100.0 * f64::from(r.new_flows_sigma) / truth as f64,
                    r.new_flows_sampling,
                    100.0 * (r.new_flows as f64 / truth as f64 - 1.0)
                );
            }
        }
        assert_eq!(below, 5, "five populations at or below the design load");
    }
}

/// A steady traffic class at one epoch size: `epochs` consecutive epochs of `frames`
/// frames from one generator run, through one monitor.
struct Class {
    name: &'static str,
    frames: usize,
    /// Zipf population, exponent and flood share (`traffic::zipf`).
    flows: usize,
    alpha: f64,
    flood: f64,
    /// Held-out sequences and epochs in each.
    seeds: u64,
    epochs: usize,
    /// The stated σ as a share of the new flows: in the first epoch (a fresh monitor,
    /// every flow new), in the second (its last epoch the first one, whose filter
    /// sampled from level 0 unplanned) and in the following ones (the last epoch as
    /// loaded as this one, the level planned). Chosen on the tuning seeds (their
    /// largest, in the comment, plus 10–20 %).
    fresh: f64,
    second: f64,
    steady: f64,
    /// Epochs closed by time: no configured length (`Config::epoch_packets` 0, as
    /// `loxo probe --interval` runs), the caller ends each epoch after `frames`.
    timed: bool,
}

/// The classes at the epoch sizes the READMEs name: 16 384 frames (the firmware's
/// epoch), 50 000 (the `monitor_theta_min` captures), 500 000 (`loxo top --epoch
/// 500000`) and 10⁶ (`monitor_stress`); ordinary Zipf(1.0) traffic over 10⁵ flows, a
/// 90 % flood of one-packet flows with spoofed sources, and 50 000 uniform flows
/// (≈ 12× the filters' design flows, as the 50 000-frame flood).
const CLASSES: [Class; 12] = [
    // Tuning (fresh, second, steady): ≤ 0.79 %, 1.02 %, 1.04 % (3.9× the design
    // load; a flood: level 4 from the design load on, `FLOOD_LEVEL`). Level 0, the
    // HT count, before: 0.28 %, 0.68 %, 0.68 %.
    Class {
        name: "16 384, 90 % flood",
        frames: 16_384,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 3,
        epochs: 6,
        fresh: 0.0092,
        second: 0.012,
        steady: 0.012,
        timed: false,
    },
    // 0.13 %, 0.35 %, 0.35 % (1.6×; 71 % of the flows new).
    Class {
        name: "16 384, Zipf 1.0",
        frames: 16_384,
        flows: 100_000,
        alpha: 1.0,
        flood: 0.0,
        seeds: 3,
        epochs: 6,
        fresh: 0.0015,
        second: 0.004,
        steady: 0.004,
        timed: false,
    },
    // 0.27 %, 0.84 %, 0.83 % (3.7×; 63 % new).
    Class {
        name: "50 000, Zipf 1.0",
        frames: 50_000,
        flows: 100_000,
        alpha: 1.0,
        flood: 0.0,
        seeds: 3,
        epochs: 4,
        fresh: 0.0031,
        second: 0.0097,
        steady: 0.0097,
        timed: false,
    },
    // 0.74 %, 0.89 %, 0.89 % (11.9×; a flood: level 4 from the design load, then
    // the triggers' and the plan's; 98 % new). Before the flood's level: 0.74 %,
    // 2.81 %, 0.86 % (the first epoch's filter ended at p 0.66–0.86).
    Class {
        name: "50 000, 90 % flood",
        frames: 50_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 3,
        epochs: 4,
        fresh: 0.0086,
        second: 0.0104,
        steady: 0.0104,
        timed: false,
    },
    // 0.74 %, 0.95 %, 0.95 % (12.2×; 95 % new: first frames are most frames, a
    // flood by the filter's rule). Before the flood's level: 0.74 %, 2.86 %, 0.89 %.
    Class {
        name: "50 000, 10× uniform",
        frames: 50_000,
        flows: 1_000_000,
        alpha: 0.0,
        flood: 0.0,
        seeds: 2,
        epochs: 4,
        fresh: 0.0086,
        second: 0.011,
        steady: 0.011,
        timed: false,
    },
    // 0.68 %, 0.90 %, 0.90 % (115×; the flood plans from its pace — the epoch's
    // length is configured — level 6; then 6 planned). Before the flood's level:
    // 0.80 %, 3.99 %; with `FLOOD_LEVEL` alone 0.66 %, 2.35 %.
    Class {
        name: "500 000, 90 % flood",
        frames: 500_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 1,
        epochs: 3,
        fresh: 0.0093,
        second: 0.0105,
        steady: 0.0105,
        timed: false,
    },
    // 0.76 %, 5.43 %, 2.10 % (15.5×; levels 4, 4, 3; 30 % new).
    Class {
        name: "500 000, Zipf 1.0",
        frames: 500_000,
        flows: 100_000,
        alpha: 1.0,
        flood: 0.0,
        seeds: 1,
        epochs: 3,
        fresh: 0.0089,
        second: 0.063,
        steady: 0.0245,
        timed: false,
    },
    // 0.68 %, 0.90 %, 0.89 % (229×; level 7 from its pace, then 7 planned). Before
    // the flood's level: 0.81 %, 4.62 %; with `FLOOD_LEVEL` alone 0.75 %, 2.99 %.
    Class {
        name: "10^6, 90 % flood",
        frames: 1_000_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 1,
        epochs: 3,
        fresh: 0.0094,
        second: 0.0105,
        steady: 0.0104,
        timed: false,
    },
    // 0.77 %, 9.62 %, 3.47 % (20×; levels 5, 5, 4; 17 % new).
    Class {
        name: "10^6, Zipf 1.0",
        frames: 1_000_000,
        flows: 100_000,
        alpha: 1.0,
        flood: 0.0,
        seeds: 1,
        epochs: 3,
        fresh: 0.009,
        second: 0.112,
        steady: 0.04,
        timed: false,
    },
    // The floods again, their epochs closed by time, the pace given as `loxo probe`
    // gives it. Tuning: 0.74 %, 0.89 %, 0.89 % (11.9×; level 4 from the design load).
    Class {
        name: "50 000, 90 % flood, closed by time",
        frames: 50_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 2,
        epochs: 3,
        fresh: 0.0086,
        second: 0.0104,
        steady: 0.0104,
        timed: true,
    },
    Class {
        // 0.68 %, 0.89 %, 0.89 % (115×; level 6 from the pace). Without it 0.66 %,
        // 2.35 %, 0.89 %; with lower level-rise triggers instead (0.2 + 0.01·s)
        // 0.85 %, 3.52 %.
        name: "500 000, 90 % flood, closed by time",
        frames: 500_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 1,
        epochs: 3,
        fresh: 0.0093,
        second: 0.0105,
        steady: 0.0105,
        timed: true,
    },
    Class {
        // 0.68 %, 0.89 %, 0.89 % (229×; level 7). Without the pace 0.75 %, 2.99 %.
        name: "10^6, 90 % flood, closed by time",
        frames: 1_000_000,
        flows: 20_000,
        alpha: 0.9,
        flood: 0.9,
        seeds: 1,
        epochs: 3,
        fresh: 0.0094,
        second: 0.0105,
        steady: 0.0104,
        timed: true,
    },
];

/// An epoch closed by time: its frames, and each one's arrival time from its start.
type Timed<'a> = (&'a [(Flow, u16)], Vec<f64>);

/// Epochs closed by time, as a probe closes them: the frames arrive as a Poisson
/// process of rate 1 (exponential gaps drawn from `seed`), and epoch `i` holds those
/// that arrive in `[i·interval, (i + 1)·interval)` — about `interval` frames, a
/// different number in each — with each frame's arrival time from its epoch's start.
/// The last epoch, cut short by the trace's end, is dropped: `epochs` at most.
fn by_time(frames: &[(Flow, u16)], interval: usize, epochs: usize, seed: u64) -> Vec<Timed<'_>> {
    let mut rng = loxo_tests::zipf::SplitMix::new(seed ^ 0x7131_e5ed);
    let (mut out, mut start, mut t, mut times) = (Vec::new(), 0, 0.0, Vec::new());
    let interval = interval as f64;
    for j in 0..frames.len() {
        t -= (1.0 - rng.next_f64()).ln();
        while t >= interval * (out.len() + 1) as f64 {
            out.push((&frames[start..j], core::mem::take(&mut times)));
            start = j;
        }
        times.push(t - interval * out.len() as f64);
    }
    out.truncate(epochs);
    out
}

/// New flows in steady traffic, epoch after epoch, on held-out seeds: the truth is
/// the flows of the epoch absent from the previous one (the generator's). In every
/// epoch the error is within 4 of the reported σ ([`within_four_stated_sigma`]) and
/// that σ within the class's stated bound for its phase (fresh, second, steady);
/// over all epochs the mean of z² = (error/σ)² is within χ² bounds (σ is honest, not
/// merely wide). The "≤ 5 % in every epoch" is asserted where the stated σ
/// makes it a 4σ claim (4·σ ≤ 5 %): every epoch of the firmware's 16 384-frame
/// epochs (90 % flood included), of 50 000-frame Zipf epochs (≤ 4× the design load)
/// and of every flood and 12×-uniform epoch, second ones included (a flood files from
/// level 4 past the design load and, its epoch's length being configured here as
/// `loxo top --epoch` and the firmware configure it, from the level its pace
/// projects: its first filter ends far below its trigger, so the second epoch's σ is
/// ≤ 0.95 %, from 2.8–4.6 %). Not in the Zipf epochs of 500 000 and 10⁶ frames where
/// 30 % and 17 % of the flows are new (σ 2.1 % and 3.5 % steady, 5–9 % in the second:
/// few sampled flows tell the share of new ones; projecting ordinary traffic's pace
/// made it worse); the test prints those epochs' errors. The floods also run with
/// epochs closed by time, as `loxo probe --interval` closes them ([`by_time`]: a
/// random number of frames each), the pace given every 256 frames as the probe gives
/// it (`FlowMonitor::set_epoch_pace`): without it their second epochs' σ was 2.3–3 % at
/// 115–229×. Costs about 5 s in release (17·10⁶ frames).
#[test]
fn new_flows_in_steady_epochs_at_the_readme_epoch_sizes() {
    let tune = tuning().is_some();
    let (mut z2, mut n) = (0.0, 0usize);
    for (k, c) in CLASSES.iter().enumerate() {
        // Per phase (fresh, second, steady): the largest σ and error seen.
        let mut worst = [(0.0f64, 0.0f64); 3];
        let bounds = [c.fresh, c.second, c.steady];
        for seed in trial_seeds(1_000 * (k as u64 + 1), c.seeds) {
            // Epochs closed by time hold a random number of frames: one epoch more of
            // frames, so that `epochs` of them close.
            let len = c.frames * (c.epochs + usize::from(c.timed));
            let e = traffic::zipf(len, c.flows, c.alpha, c.flood, seed);
            let mut m = Box::new(FlowMonitor::new(Config {
                seed: Seed::new(seed, !seed),
                epoch_packets: if c.timed { 0 } else { c.frames as u32 },
                ..Config::with_seed(TEST_SEED)
            }));
            let mut previous: HashSet<Flow> = HashSet::new();
            let epochs = if c.timed {
                by_time(&e.frames, c.frames, c.epochs, seed)
            } else {
                e.frames.chunks(c.frames).map(|f| (f, Vec::new())).collect()
            };
            for (i, (epoch, times)) in epochs.into_iter().enumerate() {
                for (j, &(flow, len)) in epoch.iter().enumerate() {
                    // A probe's pace: frames so far × the interval ÷ the time elapsed,
                    // every 256 frames (`loxo probe --interval`).
                    if let Some(&t) = times.get(j).filter(|_| j % 256 == 255) {
                        m.set_epoch_pace(((j + 1) as f64 * c.frames as f64 / t) as u32);
                    }
                    m.feed(&flow.frame(usize::from(len)));
                }
                let mut r = Report::default();
                m.end_epoch(&mut r);
                let current: HashSet<Flow> = epoch.iter().map(|&(f, _)| f).collect();
                let truth = current.difference(&previous).count() as u64;
                let name = format!("{}, seed {seed}, epoch {i}", c.name);
                let z = within_four_stated_sigma(&name, &r, truth);
                z2 += z * z;
                n += 1;
                let (rel, err) = (
                    f64::from(r.new_flows_sigma) / truth as f64,
                    r.new_flows as f64 / truth as f64 - 1.0,
                );
                let phase = i.min(2);
                let bound = bounds[phase];
                println!(
                    "{name}: {} flows ({:.1}× the design load), {truth} new, {} ± {:.2} % (level {}), error {:+.2} % ({z:+.2}σ)",
                    current.len(),
                    current.len() as f64 / f64::from(NEW_FLOW_CAPACITY),
                    r.new_flows,
                    100.0 * rel,
                    r.new_flows_sampling,
                    100.0 * err
                );
                assert!(
                    tune || rel <= bound,
                    "{name}: σ {:.2} % wider than the stated {:.2} %",
                    100.0 * rel,
                    100.0 * bound
                );
                // The 5 %, where the stated σ makes it a 4σ claim.
                if !tune && 4.0 * bound <= 0.05 {
                    assert!(
                        err.abs() <= 0.05,
                        "{name}: {} for {truth} new flows, beyond 5 %",
                        r.new_flows
                    );
                }
                worst[phase] = (worst[phase].0.max(rel), worst[phase].1.max(err.abs()));
                previous = current;
            }
        }
        for (phase, name) in ["fresh", "second", "steady"].iter().enumerate() {
            println!(
                "{}, {name}: largest σ {:.2} %, largest error {:.2} %{}",
                c.name,
                100.0 * worst[phase].0,
                100.0 * worst[phase].1,
                if 4.0 * bounds[phase] <= 0.05 {
                    ""
                } else {
                    " (4σ > 5 %: the issue's 5 % is not claimed here)"
                }
            );
        }
    }
    // Σ z² of n standard normal errors is χ²(n): n ≈ 75 lies within [0.5, 1.6]·n with
    // probability > 0.999 (σ estimated, so a little wider than χ²).
    let z2 = z2 / n as f64;
    println!("{n} epochs: mean z² = {z2:.2}");
    assert!(tune || (0.5..=1.6).contains(&z2), "mean z² = {z2}");
}

#[test]
fn floods_heavy_tails_and_hot_set_changes() {
    let mut tally = Tally::default();
    // A 10⁶-frame epoch of Zipf 1.0 over 10⁵ flows.
    let big = traffic::zipf(1_000_000, 100_000, 1.0, 0.0, 1);
    check("zipf 1.0, 10^6 frames", &big, theta("1%"), true, &mut tally);
    check(
        "zipf 1.0, 10^6 frames",
        &big,
        theta("0.5%"),
        false,
        &mut tally,
    );
    drop(big);
    // One-packet floods with spoofed sources.
    for (share, seed) in [(0.5, 2), (0.9, 3)] {
        let e = traffic::zipf(200_000, 20_000, 0.9, share, seed);
        let r = check(&format!("{share} flood"), &e, theta("1%"), true, &mut tally);
        assert!(
            r.new_flows_overloaded,
            "a flood of 10^5 new flows is past the filters' design load"
        );
        check(
            &format!("{share} flood"),
            &e,
            theta("2%"),
            false,
            &mut tally,
        );
    }
    // Heavy-tailed flow sizes.
    let e = traffic::lognormal(30_000, 4);
    check("lognormal", &e, theta("0.5%"), true, &mut tally);
    check("lognormal", &e, theta("2%"), false, &mut tally);
    // The hot set changes completely halfway.
    let e = traffic::hot_set_change(300_000, 20_000, 5);
    check("hot set change", &e, theta("1%"), true, &mut tally);
    check("hot set change", &e, theta("10%"), false, &mut tally);
    // 25× the new-flow filter's design load (4 000 flows): ≈ 10⁵ flows in 2·10⁵ frames.
    let e = traffic::zipf(200_000, 1_000_000, 0.6, 0.0, 6);
    let r = check("10x filter load", &e, theta("0.5%"), true, &mut tally);
    assert!(r.new_flows_overloaded);
    // θ at θ_min (1/256), the smallest a monitor accepts; 0.1 % is refused.
    let e = traffic::zipf(300_000, 30_000, 0.8, 0.0, 7);
    check("theta 1/256", &e, theta("1/256"), true, &mut tally);
    check("theta 1/256", &e, theta("1/256"), false, &mut tally);
    assert!(FlowMonitor::try_new(Config {
        theta: theta("0.1%"),
        ..Config::with_seed(TEST_SEED)
    })
    .is_err());

    // The other measure's lower bound: stated to hold with probability ≥ 1 − e⁻³.
    let n = tally.elephants as f64;
    let rate = tally.other_lower_held as f64 / n;
    let p = 1.0 - (-3.0f64).exp();
    println!("other-measure lower bound held for {rate:.4} of {n} elephants (stated ≥ {p:.4})");
    assert!(rate >= p - 3.0 * (p * (1.0 - p) / n).sqrt(), "{rate} < {p}");
}

#[test]
fn flows_exactly_at_theta_and_one_below() {
    let mut tally = Tally::default();
    for (t, by_bytes, seed) in [
        ("0.5%", true, 11),
        ("1%", true, 12),
        ("1%", false, 13),
        ("10%", true, 14),
        ("10%", false, 15),
        ("1/256", true, 16),
        ("1/256", false, 17),
    ] {
        let th = theta(t);
        let (e, on, below) = traffic::at_threshold(th, by_bytes, 100_000, seed);
        let r = check(&format!("at θ = {t}"), &e, th, by_bytes, &mut tally);
        let listed = |f: &traffic::Flow| r.elephants.iter().find(|el| el.key == f.key());
        // Exactly at θ: an elephant (recall, inclusive). One below: never certain.
        assert!(listed(&on).is_some(), "θ = {t}: the flow at θ is missing");
        assert!(
            listed(&below).is_none_or(|el| !el.certain),
            "θ = {t}: the flow one below θ is called certain"
        );
        assert!(!e.elephants(th, by_bytes).iter().any(|(f, _)| *f == below));
    }
}

/// An epoch long enough for one flow's bytes to pass the other measure's `u32`
/// Count-Min cells (shares of packets, 2.9·10⁶ frames of 1 500 bytes = 4.35·10⁹ bytes):
/// the bytes figure says "saturated" instead of a wrong number, the ranking measure
/// stays exact.
#[test]
fn a_saturated_sketch_is_flagged_not_printed() {
    let big = traffic::Flow::regular(7, 1);
    let small = traffic::Flow::regular(8, 1);
    let (fb, fs) = (big.frame(1500), small.frame(64));
    let mut m = Box::new(FlowMonitor::new(Config {
        share_of: ShareOf::Packets,
        ..Config::with_seed(TEST_SEED)
    }));
    let n = 2_900_000u64;
    for i in 0..n {
        m.feed(if i % 100 == 99 { &fs } else { &fb });
    }
    let mut r = Report::default();
    m.end_epoch(&mut r);
    let e = r.elephants.iter().find(|e| e.key == big.key()).unwrap();
    assert_eq!(e.packets.upper, n - n / 100);
    assert!(e.packets.is_exact());
    assert!(e.bytes.saturated, "{e:?}");
    assert_eq!((e.bytes.lower, e.bytes.upper), (0, u64::MAX));
    let s = r.elephants.iter().find(|e| e.key == small.key()).unwrap();
    assert!(
        !s.bytes.saturated && s.bytes.contains(64 * (n / 100)),
        "{s:?}"
    );
}
