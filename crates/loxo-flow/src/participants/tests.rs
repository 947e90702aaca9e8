//! Tests of the participants: their sizes, roles, bounds and the feeding rules.

#![allow(clippy::unwrap_used, clippy::expect_used)]
extern crate std;

use std::boxed::Box;
use std::vec::Vec;

use super::*;
use crate::ParticipantsReport;
use loxo_spread::Estimate;

type Small = Participants<64, 8, 64, 8, 64>;

/// The tests' fixed seed (the value the removed public default had: results unchanged).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fn v4(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

fn config(share: (u64, u64)) -> ParticipantsConfig {
    ParticipantsConfig {
        share: Theta::new(share.0, share.1).unwrap_or(ONE_PERCENT),
        ..ParticipantsConfig::host(TEST_SEED)
    }
}

/// A stream with one horizontal scanner (2 000 destinations), one vertical scan
/// (1 500 ports of one IPv6 target), one victim (3 000 sources) and background
/// traffic (1 000 sources, 2 destinations each), every flow twice.
fn stream() -> Vec<FlowKey> {
    let mut k = Vec::new();
    for i in 0..2000 {
        k.push(FlowKey::v4(
            [198, 51, 100, 1],
            v4(0x0a00_0000 + i),
            40000,
            22,
            6,
        ));
    }
    let (scanner, target) = ([0x20; 16], [0x30; 16]);
    for p in 1..=1500u16 {
        k.push(FlowKey::v6(scanner, target, 50000, p, 6));
    }
    for i in 0..3000 {
        k.push(FlowKey::v4(
            v4(0x6400_0000 + i),
            [192, 0, 2, 10],
            1234,
            53,
            17,
        ));
    }
    for i in 0..1000 {
        for d in 0..2 {
            k.push(FlowKey::v4(
                v4(0xac10_0000 + i),
                v4(0xc0a8_0000 + d * 7 + i % 50),
                5000,
                443,
                6,
            ));
        }
    }
    let again = k.clone();
    k.extend(again);
    k
}

#[test]
fn memory_is_pinned() {
    assert_eq!(HostParticipants::MEMORY_BYTES, 2 * 32_560 + 35_416 + 64);
    assert_eq!(DeviceParticipants::MEMORY_BYTES, 2 * 5_264 + 5_088 + 64);
    assert_eq!(
        core::mem::size_of::<ParticipantsReport>(),
        112 + 144 * DEFAULT_PARTICIPANTS
    );
}

#[test]
fn finds_each_role_with_bounds() {
    let mut p = Box::new(Small::new(config((5, 100))));
    for k in stream() {
        p.observe(&k);
    }
    let mut r = ParticipantsReport::<8>::new();
    p.end_epoch(&mut r);
    assert_eq!(r.epoch, 0);
    assert_eq!(p.epoch(), 1);
    // 2 000 + 1 500 + 3 000 + 2 000 distinct (source, destination) pairs; the
    // vertical scan is one of them.
    let pairs = 2000.0 + 1.0 + 3000.0 + 2000.0;
    assert!(
        (r.pairs.value - pairs).abs() < 4.0 * r.pairs.sigma,
        "{:?}",
        r.pairs
    );
    let find = |role| r.scanners.iter().chain(&r.victims).find(|x| x.role == role);
    let h = find(Role::HorizontalScan).unwrap();
    assert_eq!(h.address, IpAddr::from([198, 51, 100, 1]));
    assert!(h.contains(2000.0), "{h}");
    let v = find(Role::VerticalScan).unwrap();
    assert_eq!(
        (v.address, v.target),
        (IpAddr::from([0x20; 16]), Some(IpAddr::from([0x30; 16])))
    );
    assert!(v.contains(1500.0), "{v}");
    let x = find(Role::Victim).unwrap();
    assert_eq!(x.address, IpAddr::from([192, 0, 2, 10]));
    assert!(x.contains(3000.0), "{x}");
    assert!(r.complete());
    assert_eq!(r.victims.len(), 1, "{:?}", r.victims);
    assert_eq!(r.scanners.len(), 2, "{:?}", r.scanners);
    // The next epoch starts empty.
    p.end_epoch(&mut r);
    assert_eq!((r.epoch, r.scanners.len(), r.victims.len()), (1, 0, 0));
    assert_eq!(r.pairs.value, 0.0);
}

#[test]
fn a_threshold_in_the_noise_is_flagged() {
    let mut r = ParticipantsReport::<8>::new();
    // 7 000 pairs in the device's 4 096 registers per sketch: 5 % (350) spans
    // about 8 standard errors.
    let mut p = Box::new(DeviceParticipants::new(config((5, 100))));
    for k in stream() {
        p.observe(&k);
    }
    p.end_epoch(&mut r);
    assert!(!r.noisy(), "{r:?}");
    assert!(r.threshold > 6.0 * r.threshold_sigma, "{r:?}");
    // The same pairs in 512 registers, at 1 % (70): a few standard errors.
    let mut p = Box::new(Small::new(config((1, 100))));
    for k in stream() {
        p.observe(&k);
    }
    p.end_epoch(&mut r);
    assert!(r.noisy(), "{r:?}");
    assert!(r.threshold < 2.0 * r.threshold_sigma, "{r:?}");
}

#[test]
fn repeats_and_order_change_nothing() {
    let keys = stream();
    let mut all = Box::new(Small::new(config((1, 100))));
    let mut once = Box::new(Small::new(config((1, 100))));
    for k in &keys {
        all.observe(k);
    }
    // Each distinct flow once, in reverse order: the same sketches, so a caller may
    // feed only first frames.
    let half = keys.len() / 2;
    for k in keys.iter().take(half).rev() {
        once.observe(k);
    }
    assert!(*all == *once);
}

#[test]
fn digests_given_equal_digests_computed() {
    let mut a = Box::new(Small::new(config((1, 100))));
    let mut b = Box::new(Small::new(config((1, 100))));
    for k in stream() {
        a.observe(&k);
        let (s, d) = (
            b.address_digest(k.src_bytes()),
            b.address_digest(k.dst_bytes()),
        );
        b.observe_digests(&k, s, d);
    }
    assert!(*a == *b);
    assert_eq!(a.address_digest(&[1, 2, 3]), 0);
}

#[test]
fn the_monitors_source_digest_is_the_participants() {
    // What `FlowMonitor` finishes for its distinct-source sketch: the first output
    // word of the HalfSipHash state after the source's words.
    let p = Box::new(Small::new(config((1, 100))));
    let key = loxo_core::HalfSipKey::new(TEST_SEED);
    for k in stream().iter().step_by(97) {
        let (_, src) = k.hash_and_source(&key);
        assert_eq!(src.finish_lo(), p.address_digest(k.src_bytes()));
    }
}

#[test]
fn a_full_list_says_how_many_were_left_out() {
    let mut p = Box::new(Small::new(config((1, 100))));
    // Six victims of 1 000 sources each, 2 rows in the report.
    for v in 0..6u32 {
        for s in 0..1000u32 {
            p.observe(&FlowKey::v4(v4(s), v4(0xc000_0200 + v), 1, 80, 6));
        }
    }
    let mut r = ParticipantsReport::<2>::new();
    p.end_epoch(&mut r);
    assert_eq!(r.victims.len(), 2);
    assert_eq!(r.victims_left_out, 4);
    assert!(!r.complete());
    assert!(r.victims[0].spread.value >= r.victims[1].spread.value);
}

#[test]
fn min_spread_keeps_a_quiet_epoch_empty() {
    let keys = [
        FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, 6),
        FlowKey::v4([10, 0, 0, 3], [10, 0, 0, 2], 1, 2, 6),
    ];
    let mut r = ParticipantsReport::<4>::new();
    let mut p = Box::new(Small::new(config((1, 100))));
    for k in &keys {
        p.observe(k);
    }
    p.end_epoch(&mut r);
    // Two pairs: the destination holds all of them, far above 1 %.
    assert_eq!(r.victims.len(), 1);
    let mut p = Box::new(Small::new(ParticipantsConfig {
        min_spread: 10,
        ..config((1, 100))
    }));
    for k in &keys {
        p.observe(k);
    }
    p.end_epoch(&mut r);
    assert_eq!(r.threshold, 10.0);
    assert!(r.victims.is_empty() && r.scanners.is_empty());
}

#[test]
fn display_names_the_role_and_bounds() {
    let p = Participant {
        role: Role::VerticalScan,
        address: IpAddr::from([198, 51, 100, 2]),
        target: Some(IpAddr::from([203, 0, 113, 10])),
        spread: Estimate {
            value: 4096.0,
            sigma: 120.0,
        },
        lower: 3616.0,
        upper: 4576.0,
        sampled: 3,
        saturated: false,
    };
    assert_eq!(
        std::format!("{p}"),
        "vertical 198.51.100.2 -> 203.0.113.10: ~4096 ± 120 ports [3616, 4576]"
    );
}

/// A sampled epoch's report: in `REPORT_PHASES` steps, offers paused meanwhile, the
/// sketches empty afterwards; the next epoch keeps the level a steady stream planned
/// (no rise), and its victim's bounds hold its spread.
#[test]
fn sampled_report_in_steps_and_a_steady_level() {
    let c = config((5, 100));
    let mut p = Box::new(SampledParticipants::<64, 8, 64, 8, 16>::new(c, 4));
    let offer = |p: &mut SampledParticipants<64, 8, 64, 8, 16>, epoch: u32| {
        for i in 0..16_384u32 {
            // A flood onto one victim from distinct sources, new ones every epoch.
            let key = FlowKey::v4(v4(epoch << 20 | i), [192, 0, 2, 10], 1234, 53, 17);
            let src = p.participants().address_digest(key.src_bytes());
            p.offer(&key, src, i + 1);
        }
    };
    let mut r = ParticipantsReport::<4>::new();
    offer(&mut p, 0);
    p.close(16_384);
    assert!(p.reporting());
    // Offers while the report runs change nothing.
    let before = p.participants().clone();
    offer(&mut p, 9);
    assert!(*p.participants() == before);
    let mut steps = 1;
    while !p.report_step(&mut r) {
        steps += 1;
    }
    assert_eq!(steps, usize::from(REPORT_PHASES));
    assert!(!p.reporting() && p.participants().fan_in().is_empty());
    assert!(r.sampling_rose && r.sampling > 0);
    let planned = p.level();
    offer(&mut p, 1);
    p.end_epoch(&mut r, 16_384);
    assert_eq!((r.sampling, r.sampling_rose), (planned, false));
    let v = &r.victims[0];
    assert_eq!(v.address, core::net::IpAddr::from([192, 0, 2, 10]));
    assert!(v.contains(16_384.0), "{v}");
}

/// A sampled offer's sketch work put off to quiet frames changes nothing a report
/// says: fed the same offers, participants that do each waiting offer's work on the
/// next frame, on every seventh, or never (four wait, then each offer does its own;
/// the close does the waiting ones) hold the same sketches and report the same.
#[test]
fn waiting_offers_change_no_report() {
    type P = SampledParticipants<64, 8, 64, 8, 16>;
    let c = config((2, 100));
    let offer = |p: &mut P, i: u32| {
        let key = match i % 3 {
            // A scanner (IPv4), a flood onto an IPv6 victim, ordinary flows.
            0 => FlowKey::v4([198, 51, 100, 7], v4(0x0a00_0000 | i), 40_000, 22, 6),
            1 => FlowKey::v6(
                [
                    0x20,
                    0x01,
                    0x0d,
                    0xb8,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    (i >> 8) as u8,
                    i as u8,
                ],
                [
                    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
                ],
                1234,
                443,
                6,
            ),
            _ => FlowKey::v4(
                v4(i.wrapping_mul(2_654_435_761)),
                [192, 0, 2, 80],
                5_000,
                (i % 97) as u16,
                17,
            ),
        };
        let src = p.participants().address_digest(key.src_bytes());
        p.offer(&key, src, i + 1);
    };
    let mut runs = Vec::new();
    for every in [1u32, 7, 0] {
        let mut p = Box::new(P::new(c, 3));
        let (mut reports, mut sketches) = (Vec::new(), Vec::new());
        let mut most_waiting = 0;
        for epoch in 0..2u32 {
            for i in 0..16_384u32 {
                offer(&mut p, epoch << 16 | i);
                most_waiting = most_waiting.max(p.waiting());
                if every != 0 && i % every == 0 {
                    p.idle();
                }
            }
            if every == 0 {
                assert_eq!(p.waiting(), 4);
            }
            p.flush();
            assert_eq!(p.waiting(), 0);
            sketches.push(p.participants().clone());
            let mut r = ParticipantsReport::<8>::new();
            p.end_epoch(&mut r, 16_384);
            reports.push(std::format!("{r:?}"));
        }
        assert!((1..=4).contains(&most_waiting), "{most_waiting}");
        if every == 0 {
            assert_eq!(most_waiting, 4);
        }
        runs.push((sketches, reports));
    }
    assert!(runs[0] == runs[1] && runs[0] == runs[2]);
    assert!(runs[0].1[1].contains("198.51.100.7"), "{}", runs[0].1[1]);
}
