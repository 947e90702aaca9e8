//! The heavy-hitter stream classes of the 8 KiB top-k evaluation
//! (`tests/tests/topk_classes.rs`): Zipf 0.8 / 1.0 / 1.2, heavy-tailed lognormal flow
//! sizes, a hot set that changes completely halfway, and Zipf traffic drowned in 50 %
//! or 90 % one-off flood keys.
//!
//! Every stream is a `Vec<`[`Packet`]`>`: a `u64` flow key and a packet size in bytes
//! (64..=1500), so one stream is scored twice, weighted by packets (weight 1) and by
//! bytes (weight = size). Each is a pure function of its [`Class`], [`Scale`] and
//! seed; keys of different classes and of the two halves of the hot-set stream are
//! disjoint (different scrambles).
//!
//! Sizes are the realistic mix of [`traffic::mixed_len`](crate::traffic::mixed_len)
//! (40 % 64 B, 20 % 576 B, 30 % 1500 B, 10 % uniform), drawn per packet; flood
//! packets are one-packet keys of 1500 bytes (a volumetric flood with spoofed
//! sources: the worst case for byte-weighted summaries, where each one-off key weighs
//! as much as an elephant's biggest packet).
//!
//! ```
//! use loxo_tests::streams::{Class, Scale};
//!
//! let scale = Scale { packets: 20_000, flows: 2_000 };
//! let s = Class::Flood(0.9).packets(scale, 1);
//! assert_eq!(s.len(), 20_000);
//! assert!(s.iter().all(|p| (64..=1500).contains(&p.bytes)));
//! assert_eq!(s, Class::Flood(0.9).packets(scale, 1)); // seeded
//! ```

use crate::traffic::mixed_len;
use crate::zipf::{Packet, SplitMix, Zipf};

/// Stream length and flow population.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Packets per stream (the lognormal class stops at this many).
    pub packets: usize,
    /// Flow population of the Zipf classes (of each half for the hot set; the
    /// lognormal class draws as many flows as it takes to fill `packets`).
    pub flows: usize,
}

/// One stream class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Class {
    /// Zipf(α) flow popularity over [`Scale::flows`] flows.
    Zipf(f64),
    /// Lognormal flow sizes (packets per flow `⌈e^(μ + σZ)⌉`, μ = 1, σ = 2: median
    /// 3 packets, mean ≈ 21, a tail of flows with 10⁴–10⁵), every packet of every
    /// flow interleaved uniformly at random.
    Lognormal,
    /// Zipf(1.0) over flows `A` for the first half of the packets, then Zipf(1.0)
    /// over a disjoint population `B`: the true top-k of the whole stream is half
    /// stale keys (A's top) and half newcomers (B's top), each with about the same
    /// counts.
    HotSet,
    /// Zipf(0.9) traffic where a share of the packets (0.5 or 0.9) are one-off flood
    /// keys of 1500 bytes.
    Flood(f64),
}

impl Class {
    /// The seven classes of the evaluation.
    pub const ALL: [Class; 7] = [
        Class::Zipf(0.8),
        Class::Zipf(1.0),
        Class::Zipf(1.2),
        Class::Lognormal,
        Class::HotSet,
        Class::Flood(0.5),
        Class::Flood(0.9),
    ];

    /// A short name for tables ("Zipf 0.8", "lognormal", "hot set", "flood 90 %").
    #[must_use]
    pub fn name(self) -> String {
        match self {
            Self::Zipf(a) => format!("Zipf {a:.1}"),
            Self::Lognormal => "lognormal".into(),
            Self::HotSet => "hot-set change".into(),
            Self::Flood(s) => format!("Zipf 0.9 + {:.0} % flood", s * 100.0),
        }
    }

    /// The stream of this class at `scale`, determined by `seed`.
    #[must_use]
    pub fn packets(self, scale: Scale, seed: u64) -> Vec<Packet> {
        // Each class draws from its own sub-seed, so seed s of two classes are
        // unrelated streams.
        let tag = match self {
            Self::Zipf(a) => 0x21bf_0000 ^ (a * 100.0) as u64,
            Self::Lognormal => 0x109_0000,
            Self::HotSet => 0x4075_e700,
            Self::Flood(s) => 0xf100_d000 ^ (s * 100.0) as u64,
        };
        let mut rng = SplitMix::new(loxo_core::mix64(seed ^ (tag << 20)));
        match self {
            Self::Zipf(a) => zipf(&Zipf::new(scale.flows, a), scale.packets, 0, 0.0, &mut rng),
            Self::Lognormal => lognormal(scale.packets, &mut rng),
            Self::HotSet => {
                let z = Zipf::new(scale.flows, 1.0);
                let half = scale.packets / 2;
                let mut v = zipf(&z, half, 1, 0.0, &mut rng);
                v.extend(zipf(&z, scale.packets - half, 2, 0.0, &mut rng));
                v
            }
            Self::Flood(share) => zipf(
                &Zipf::new(scale.flows, 0.9),
                scale.packets,
                3,
                share,
                &mut rng,
            ),
        }
    }
}

/// Key of item `i` of population `pop` (a bijective scramble per population, so
/// populations never share a key).
fn key(pop: u64, i: u64) -> u64 {
    loxo_core::mix64(i ^ (pop << 48) ^ 0x6b79_5f70_6f70_0000)
}

/// `n` packets of a Zipf population `pop`; with probability `flood` a packet is a
/// fresh one-off key of 1500 bytes instead (population 255, never repeated).
fn zipf(z: &Zipf, n: usize, pop: u64, flood: f64, rng: &mut SplitMix) -> Vec<Packet> {
    let mut next_flood = rng.next_u64() >> 16;
    (0..n)
        .map(|_| {
            if flood > 0.0 && rng.next_f64() < flood {
                next_flood += 1;
                Packet {
                    key: key(255, next_flood),
                    bytes: 1500,
                }
            } else {
                let i = z.sample(rng) as u64;
                Packet {
                    key: key(pop, i),
                    bytes: u64::from(mixed_len(rng)),
                }
            }
        })
        .collect()
}

/// Lognormal flow sizes (μ = 1, σ = 2, each flow capped at 2·10⁵ packets) until
/// `n` packets, shuffled.
fn lognormal(n: usize, rng: &mut SplitMix) -> Vec<Packet> {
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    let mut id = 0u64;
    while keys.len() < n {
        // Box–Muller normal deviate.
        let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let size = (1.0 + 2.0 * z).exp().ceil().clamp(1.0, 200_000.0) as usize;
        let k = key(4, id);
        id += 1;
        keys.extend(std::iter::repeat_n(k, size.min(n - keys.len())));
    }
    // Fisher–Yates shuffle.
    for i in (1..keys.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        keys.swap(i, j);
    }
    keys.into_iter()
        .map(|key| Packet {
            key,
            bytes: u64::from(mixed_len(rng)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    const SCALE: Scale = Scale {
        packets: 200_000,
        flows: 20_000,
    };

    #[test]
    fn flood_share_is_one_off_keys() {
        for share in [0.5, 0.9] {
            let s = Class::Flood(share).packets(SCALE, 7);
            let mut seen: HashMap<u64, u32> = HashMap::new();
            for p in &s {
                *seen.entry(p.key).or_default() += 1;
            }
            let ones = s.iter().filter(|p| p.bytes == 1500 && seen[&p.key] == 1);
            // Binomial(2·10⁵, share): sd ≤ 224; a 5σ band (plus the few Zipf
            // 1500-byte packets of one-packet flows, < 1 %).
            let n = ones.count() as f64;
            let want = share * SCALE.packets as f64;
            assert!(
                n >= want - 1_200.0 && n <= want + 0.01 * SCALE.packets as f64,
                "{n}"
            );
        }
    }

    #[test]
    fn hot_set_halves_are_disjoint() {
        let s = Class::HotSet.packets(SCALE, 3);
        let (a, b) = s.split_at(s.len() / 2);
        let a: HashSet<u64> = a.iter().map(|p| p.key).collect();
        assert!(b.iter().all(|p| !a.contains(&p.key)));
    }

    #[test]
    fn lognormal_has_exact_length_and_a_heavy_tail() {
        let s = Class::Lognormal.packets(SCALE, 5);
        assert_eq!(s.len(), SCALE.packets);
        let mut c: HashMap<u64, u64> = HashMap::new();
        for p in &s {
            *c.entry(p.key).or_default() += 1;
        }
        // Mean flow size e^(μ + σ²/2) = e³ ≈ 20 (+ rounding up): ~10⁴ flows, median ≈ 3.
        let flows = c.len() as f64;
        assert!((7_000.0..12_000.0).contains(&flows), "{flows}");
        let max = c.values().max().copied().unwrap_or(0);
        assert!(max > 2_000, "{max}");
    }

    #[test]
    fn seeds_differ_and_repeat() {
        for class in Class::ALL {
            let a = class.packets(SCALE, 1);
            assert_eq!(a.len(), SCALE.packets, "{}", class.name());
            assert_eq!(a, class.packets(SCALE, 1));
            assert_ne!(a, class.packets(SCALE, 2));
        }
    }
}
