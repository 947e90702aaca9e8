//! Every elephant listed at θ = θ_min = 1/N, the smallest θ a `FlowMonitor<N>`
//! accepts, for the host's default `N` = 256 and the firmware's `N` = 128, in shares of
//! bytes and of packets — asserted against the generators' truth, never the monitor's
//! parser:
//!
//! * a 90 % flood of one-packet flows with spoofed sources (`loxo gen --flood 0.9`'s
//!   generator, `loxo_cli::trace`), 50 000-frame epochs;
//! * a near-θ capture from the same generator: a uniform population sized so that each
//!   flow holds about 1/N of an epoch, plus 10 % flood — more than 64 flows at or
//!   above θ_min in an epoch, around as many just below;
//! * flows at *exactly* `T/N` (`loxo_tests::traffic::at_one_nth`: 3N/4 of them, N/8
//!   one unit below, one-frame mice for the rest, shuffled): the boundary of the recall
//!   argument (an untracked flow weighs strictly less than `T/N`).
//!
//! Per epoch: every true elephant is listed with ranking bounds that contain its
//! truth, the report certifies completeness, and it never holds more than `N` rows. A
//! θ below θ_min is refused, naming both.
//!
//! Before `Report<N>` the report held 64 rows: the near-θ and exact-`T/N` captures
//! have more than 64 elephants in an epoch, and the rest were only counted
//! (`elephants_left_out`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cli::trace::{generate_with_truth, FrameTruth, Popularity, TraceConfig};
use loxo_flow::{Config, ConfigError, FlowKey, FlowMonitor, Report, ShareOf, Theta};
use loxo_tests::traffic;

/// The fixed seed of this test (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

/// The firmware's candidates (`firmware/src/main.rs`, `CANDIDATES`).
const FIRMWARE_N: usize = 128;
/// Frames per epoch of the generated captures.
const EPOCH: u32 = 50_000;

/// Exact bytes and packets of one flow.
#[derive(Clone, Copy, Default, Debug)]
struct Counts {
    bytes: u64,
    packets: u64,
}

/// One epoch's truth: per flow, and the totals of IP packets.
#[derive(Default, Debug)]
struct Truth {
    flows: HashMap<FlowKey, Counts>,
    total: Counts,
}

impl Truth {
    fn add(&mut self, key: FlowKey, len: u64) {
        let c = self.flows.entry(key).or_default();
        c.bytes += len;
        c.packets += 1;
        self.total.bytes += len;
        self.total.packets += 1;
    }

    /// Flows whose share is ≥ θ, exactly (integers).
    fn elephants(&self, theta: Theta, share_of: ShareOf) -> Vec<(FlowKey, u64)> {
        let m = |c: &Counts| match share_of {
            ShareOf::Bytes => c.bytes,
            ShareOf::Packets => c.packets,
        };
        let t = m(&self.total);
        self.flows
            .iter()
            .filter(|(_, c)| theta.reached(m(c), t))
            .map(|(k, c)| (*k, m(c)))
            .collect()
    }
}

fn config<const N: usize>(share_of: ShareOf, epoch_packets: u32) -> Config {
    Config {
        theta: FlowMonitor::<N>::THETA_MIN,
        share_of,
        epoch_packets,
        ..Config::with_seed(TEST_SEED)
    }
}

/// Checks one epoch's report against its truth at θ = 1/N; returns the number of true
/// elephants.
fn check<const N: usize>(name: &str, r: &Report<N>, truth: &Truth) -> usize {
    let share_of = r.share_of;
    assert_eq!(r.theta, FlowMonitor::<N>::THETA_MIN);
    assert_eq!(
        (r.packets, r.bytes),
        (truth.total.packets, truth.total.bytes),
        "{name}: totals"
    );
    assert!(r.elephants.len() <= N);
    assert!(r.elephants_complete, "{name}: not certified complete");
    let elephants = truth.elephants(r.theta, share_of);
    for (key, f) in &elephants {
        let listed = r.elephants.iter().find(|e| e.key == *key);
        let Some(e) = listed else {
            panic!(
                "{name}: elephant {key} ({f} of {}) not listed ({} rows)",
                r.ranked_total(),
                r.elephants.len()
            );
        };
        let b = e.ranked(share_of);
        assert!(
            b.lower_certain && b.contains(*f),
            "{name}: {key}: {b:?} vs {f}"
        );
    }
    // Every listed flow's upper bound reaches θ; a certain one is an elephant.
    for e in &r.elephants {
        assert!(r.theta.reached(e.ranked(share_of).upper, r.ranked_total()));
        if e.certain {
            assert!(elephants.iter().any(|(k, _)| *k == e.key), "{name}: {e:?}");
        }
    }
    elephants.len()
}

/// Runs a generated capture through a `FlowMonitor<N>` at θ = 1/N, epochs of
/// [`EPOCH`] frames, and checks each epoch; returns the elephants per epoch.
fn generated<const N: usize>(name: &str, cfg: &TraceConfig, share_of: ShareOf) -> Vec<usize> {
    let mut m =
        Box::new(FlowMonitor::<N>::try_with_candidates(config::<N>(share_of, EPOCH)).unwrap());
    let mut r = Box::new(Report::<N>::with_candidates());
    let mut truth = Truth::default();
    let mut found = Vec::new();
    let name = format!("{name}, N = {N}, {share_of:?}");
    let mut close = |m: &mut FlowMonitor<N>, truth: &mut Truth| {
        m.end_epoch(&mut r);
        let n = check(&format!("{name}, epoch {}", r.epoch), &r, truth);
        println!(
            "{name}, epoch {}: {} frames, {n} elephants at θ = 1/{N}, {} listed",
            r.epoch,
            r.frames,
            r.elephants.len()
        );
        found.push(n);
        *truth = Truth::default();
    };
    generate_with_truth(cfg, |f, t: &FrameTruth| {
        if let Some(key) = t.flow() {
            truth.add(key, u64::from(t.len));
        }
        if m.feed(f) {
            close(&mut m, &mut truth);
        }
        Ok::<_, ()>(())
    })
    .unwrap();
    if truth.total.packets > 0 {
        close(&mut m, &mut truth);
    }
    found
}

fn both(mut f: impl FnMut(ShareOf) -> Vec<usize>) {
    for share_of in [ShareOf::Bytes, ShareOf::Packets] {
        f(share_of);
    }
}

/// A 90 % flood of one-packet, minimum-size flows with random sources over a
/// Zipf(1.0) population: the candidates turn over all the time, and every flow at
/// 1/N is still listed.
#[test]
fn a_90_percent_flood_at_theta_min() {
    fn run<const N: usize>() {
        both(|share_of| {
            let cfg = TraceConfig {
                packets: 2 * u64::from(EPOCH),
                flows: 5_000,
                popularity: Popularity::Zipf(1.0),
                flood: 0.9,
                seed: 27,
                ..TraceConfig::default()
            };
            let found = generated::<N>("90 % flood", &cfg, share_of);
            // The capture's true elephants per epoch (the generator's, as the READMEs
            // print them): a few, hidden in the flood.
            let truth: &[usize] = match (N, share_of) {
                (256, ShareOf::Bytes) => &[13, 15],
                (256, ShareOf::Packets) => &[2, 3],
                (_, ShareOf::Bytes) => &[7, 6],
                (_, ShareOf::Packets) => &[1, 1],
            };
            assert_eq!(found, truth, "the flood's elephants per epoch");
            found
        });
    }
    run::<256>();
    run::<FIRMWARE_N>();
}

/// A capture whose flows sit around 1/N of each epoch: `flows` flows of uniform
/// popularity carry 90 % of the frames, so each holds about 0.9/flows of the
/// packets (and more of the bytes: the flood's frames are 64 bytes, the population's
/// average about 685), spread by the frame count's and sizes' chance. `flows` is
/// chosen per measure so that each flow's expected share is within a few per cent of
/// 1/N: many flows at or just above θ_min, many just below.
#[test]
fn a_near_theta_capture_at_theta_min() {
    fn run<const N: usize>() {
        both(|share_of| {
            // Expected share of one flow: packets 0.9/flows; bytes about
            // 0.9·685/(0.9·685 + 0.1·64)/flows = 0.99/flows.
            let flows = match share_of {
                ShareOf::Packets => N * 9 / 10,
                ShareOf::Bytes => N * 99 / 100,
            } as u32;
            let cfg = TraceConfig {
                packets: 2 * u64::from(EPOCH),
                flows,
                popularity: Popularity::Zipf(0.0),
                flood: 0.1,
                seed: 1_000 + N as u64,
                ..TraceConfig::default()
            };
            let found = generated::<N>("near θ", &cfg, share_of);
            // The construction: a crowd at θ_min, more than the former 64-row report
            // held (for N = 128 by packets, more than a quarter of N).
            let most = *found.iter().max().unwrap();
            let want = if N >= 256 { 64 } else { N / 4 };
            assert!(most > want, "a crowd at θ_min: {found:?}");
            // The capture's true elephants per epoch, as the READMEs print them.
            let truth: &[usize] = match (N, share_of) {
                (256, ShareOf::Bytes) => &[103, 110],
                (256, ShareOf::Packets) => &[88, 84],
                (_, ShareOf::Bytes) => &[58, 54],
                (_, ShareOf::Packets) => &[51, 50],
            };
            assert_eq!(found, truth, "the capture's elephants per epoch");
            found
        });
    }
    run::<256>();
    run::<FIRMWARE_N>();
}

/// Flows at exactly `T/N` — the boundary of the recall argument — among flows one
/// unit below and one-frame mice: every one of the `3N/4` is listed, none of those
/// below is called certain.
#[test]
fn flows_at_exactly_one_nth_are_all_listed() {
    fn run<const N: usize>() {
        for (share_of, seed) in [(ShareOf::Bytes, 1), (ShareOf::Packets, 2)] {
            let by_bytes = share_of == ShareOf::Bytes;
            let (e, at, below) = traffic::at_one_nth(N as u64, 40, by_bytes, seed);
            let mut m =
                Box::new(FlowMonitor::<N>::try_with_candidates(config::<N>(share_of, 0)).unwrap());
            let mut truth = Truth::default();
            for &(flow, len) in &e.frames {
                m.feed(&flow.frame(usize::from(len)));
                truth.add(flow.key(), u64::from(len));
            }
            let mut r = Box::new(Report::<N>::with_candidates());
            m.end_epoch(&mut r);
            let name = format!("exactly 1/{N} of {share_of:?}");
            let n = check(&name, &r, &truth);
            assert_eq!(
                n,
                at.len(),
                "{name}: the elephants are exactly the flows at T/N"
            );
            assert!(n > 64, "more than the former 64 rows");
            for f in &at {
                assert!(
                    r.elephants.iter().any(|e| e.key == f.key()),
                    "{name}: {f:?}"
                );
            }
            for f in &below {
                let el = r.elephants.iter().find(|e| e.key == f.key());
                assert!(
                    el.is_none_or(|e| !e.certain),
                    "{name}: {f:?} one below, certain"
                );
            }
            println!(
                "{name}: {} frames, {n} flows at T/N all listed, {} rows",
                e.frames.len(),
                r.elephants.len()
            );
        }
    }
    run::<256>();
    run::<FIRMWARE_N>();
}

/// A θ below θ_min is refused by the fallible constructors, naming θ and θ_min; the
/// const constructors fail at compile time (doc tests of `FlowMonitor::new` and
/// `with_candidates`).
#[test]
fn theta_below_theta_min_is_refused() {
    fn run<const N: usize>() {
        let theta_min = FlowMonitor::<N>::THETA_MIN;
        assert_eq!(theta_min, Theta::new(1, N as u64).unwrap());
        // The largest θ below 1/N with a denominator of 10⁶, and 1/N itself.
        let below = Theta::new(
            1_000_000 / N as u64 - u64::from(1_000_000 % N as u64 == 0),
            1_000_000,
        )
        .unwrap();
        let e = FlowMonitor::<N>::try_with_candidates(Config {
            theta: below,
            ..Config::with_seed(TEST_SEED)
        })
        .unwrap_err();
        assert_eq!(
            e,
            ConfigError::ThetaBelowMin {
                theta: below,
                theta_min
            }
        );
        let text = e.to_string();
        assert!(
            text.contains(&format!(
                "theta {below} is below theta_min {theta_min} (1/{N})"
            )),
            "{text}"
        );
        assert!(FlowMonitor::<N>::try_with_candidates(Config {
            theta: theta_min,
            ..Config::with_seed(TEST_SEED)
        })
        .is_ok());
    }
    run::<256>();
    run::<FIRMWARE_N>();
    assert!(FlowMonitor::try_new(Config {
        theta: Theta::parse("0.001").unwrap(),
        ..Config::with_seed(TEST_SEED)
    })
    .is_err());
}
