//! Seeded synthetic traffic: Zipf(α) key streams and a scan/flood stream, with
//! packet sizes, for the heavy-hitter evaluations (`tests/tests/topk*.rs`, the flow
//! monitor's tests, benches).
//!
//! Items are numbered `0..F`; item `i` (rank `i + 1`) has probability
//! `(i + 1)^−α / H_{F,α}`. Sampling uses Walker's alias method: O(F) set-up
//! (F = 10⁶ takes a few tens of ms), O(1) per draw. Every generator is a pure
//! function of its seed.
//!
//! ```
//! use loxo_tests::zipf::{Packet, Zipf};
//!
//! let z = Zipf::new(1000, 1.0);
//! let stream: Vec<Packet> = z.stream(10_000, 42);
//! assert_eq!(stream.len(), 10_000);
//! let zeros = stream.iter().filter(|p| p.key == z.key_of(0)).count();
//! assert!(zeros > 1000); // rank 1 has probability 1/H_1000 ≈ 13 %
//! ```

/// One packet of a synthetic stream: a 64-bit flow key and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Flow key (a scrambled item number, so key order says nothing about rank).
    pub key: u64,
    /// Packet size in bytes, 64..=1500.
    pub bytes: u64,
}

/// SplitMix64: the seeded generator behind every stream here.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator determined by `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        loxo_core::mix64(self.0 ^ (self.0 >> 31)).wrapping_add(self.0)
    }

    /// Uniform in `[0, 1)` with 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[0, n)` (Lemire reduction of the high bits).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// Packet size of flow `key`'s packet: flows have a size mix (many 64-byte,
/// some 576, many 1500), drawn per packet so byte counts differ from packet counts
/// in shape, not just scale.
fn packet_bytes(rng: &mut SplitMix) -> u64 {
    match rng.below(10) {
        0..=3 => 64,
        4..=5 => 576,
        6 => 64 + rng.below(1437),
        _ => 1500,
    }
}

/// A Zipf(α) distribution over `F` items with an alias table.
#[derive(Clone, Debug)]
pub struct Zipf {
    prob: Vec<f64>,
    alias: Vec<u32>,
    scramble: u64,
}

impl Zipf {
    /// Zipf with exponent `alpha` over `items` items (1 ≤ items < 2³²).
    ///
    /// # Panics
    ///
    /// If `items` is 0 or does not fit in `u32`.
    #[must_use]
    pub fn new(items: usize, alpha: f64) -> Self {
        assert!(
            items > 0 && u32::try_from(items).is_ok(),
            "items out of range"
        );
        let w: Vec<f64> = (1..=items).map(|r| (r as f64).powf(-alpha)).collect();
        let sum: f64 = w.iter().sum();
        let n = items as f64;
        let mut prob: Vec<f64> = w.iter().map(|x| x * n / sum).collect();
        let mut alias = vec![0u32; items];
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..items as u32).partition(|&i| prob[i as usize] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s as usize] = l;
            prob[l as usize] -= 1.0 - prob[s as usize];
            if prob[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in small.into_iter().chain(large) {
            prob[i as usize] = 1.0;
        }
        Self {
            prob,
            alias,
            scramble: 0x517c_c1b7_2722_0a95,
        }
    }

    /// Number of items `F`.
    #[must_use]
    pub fn items(&self) -> usize {
        self.prob.len()
    }

    /// The flow key of item `i` (rank `i + 1`): a bijective scramble of `i`.
    #[must_use]
    pub fn key_of(&self, i: usize) -> u64 {
        loxo_core::mix64(i as u64 ^ self.scramble)
    }

    /// Draws one item number.
    pub fn sample(&self, rng: &mut SplitMix) -> usize {
        let i = rng.below(self.prob.len() as u64) as usize;
        if rng.next_f64() < self.prob[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }

    /// `packets` packets: Zipf keys with [`Packet::bytes`] sizes, seeded.
    #[must_use]
    pub fn stream(&self, packets: usize, seed: u64) -> Vec<Packet> {
        let mut rng = SplitMix::new(seed);
        (0..packets)
            .map(|_| {
                let key = self.key_of(self.sample(&mut rng));
                Packet {
                    key,
                    bytes: packet_bytes(&mut rng),
                }
            })
            .collect()
    }

    /// A scan/flood stream: each packet is, with probability `flood_share`, a
    /// never-repeating key (a port scan or SYN flood with spoofed sources, 64
    /// bytes), otherwise a Zipf packet. Flood keys are distinct from every Zipf key
    /// (disjoint scrambles).
    #[must_use]
    pub fn stream_with_flood(&self, packets: usize, flood_share: f64, seed: u64) -> Vec<Packet> {
        let mut rng = SplitMix::new(seed);
        let mut next_flood = 0u64;
        (0..packets)
            .map(|_| {
                if rng.next_f64() < flood_share {
                    next_flood += 1;
                    Packet {
                        key: loxo_core::mix64(
                            (next_flood << 32) ^ 0xf100_d000_0000_0000 ^ u64::from(u32::MAX),
                        ),
                        bytes: 64,
                    }
                } else {
                    let key = self.key_of(self.sample(&mut rng));
                    Packet {
                        key,
                        bytes: packet_bytes(&mut rng),
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_table_matches_zipf_probabilities() {
        // 10^6 draws over 50 items: each frequency within 5σ of its expectation.
        let z = Zipf::new(50, 1.0);
        let mut rng = SplitMix::new(7);
        let mut counts = [0u64; 50];
        let n = 1_000_000u64;
        for _ in 0..n {
            counts[z.sample(&mut rng)] += 1;
        }
        let h: f64 = (1..=50).map(|r| 1.0 / r as f64).sum();
        for (i, &c) in counts.iter().enumerate() {
            let p = 1.0 / ((i + 1) as f64 * h);
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((c as f64 - n as f64 * p).abs() < 5.0 * sd, "item {i}: {c}");
        }
    }

    #[test]
    fn flood_share_and_disjoint_keys() {
        let z = Zipf::new(1000, 1.0);
        let s = z.stream_with_flood(100_000, 0.5, 3);
        let keys: std::collections::HashSet<u64> = (0..1000).map(|i| z.key_of(i)).collect();
        let flood = s.iter().filter(|p| !keys.contains(&p.key)).count();
        // Binomial(10^5, 0.5): sd 158; 5σ band.
        assert!((flood as f64 - 50_000.0).abs() < 800.0, "{flood}");
    }
}
