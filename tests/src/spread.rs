//! Streams with known spreads for `loxo_spread`, the exact answer, the equal-bytes
//! baseline and the scoring shared by `tests/spread_accuracy.rs`.
//!
//! A stream is an epoch of (key, element) packets with 16-byte keys (an IPv6 address,
//! the monitor's key): a few **super-spreaders** with spreads drawn log-uniformly in
//! `[lo, hi]` of the epoch's distinct pairs, 60 **medium** keys log-uniform in
//! `[0.02 %, lo]`, **small** keys (1 + a geometric number of elements, mean 4, at
//! most 40) up to the target count, and one **heavy-traffic** key: 4 elements sent
//! `N/4` times in all — the heaviest key by packets, which must never be reported.
//! Every pair is sent 1 + Geometric(½) times (at most 8) and the packets shuffled.

use std::collections::HashMap;

use loxo_core::{mix64, KeyHash, Seed};

/// The key type of the streams: an IPv6-sized address.
pub type Key = [u8; 16];

/// SplitMix64: the streams' random numbers.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started at `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0) ^ (self.0 >> 29)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Log-uniform in `[lo, hi]`.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }
}

/// What a stream is made of.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    /// Target number of distinct pairs.
    pub pairs: u64,
    /// Number of super-spreaders.
    pub spreaders: usize,
    /// Their spreads, as fractions of `pairs`: log-uniform in `[lo, hi]`.
    pub lo: f64,
    /// See `lo`.
    pub hi: f64,
}

/// One epoch: its keys with their digests and true spreads, and the packets.
#[derive(Debug)]
pub struct Stream {
    /// The distinct keys.
    pub keys: Vec<Key>,
    /// Their digests under the stream's seed.
    pub key_hashes: Vec<KeyHash>,
    /// Their true spreads.
    pub spread: Vec<u64>,
    /// The heavy-traffic key's index.
    pub heavy: usize,
    /// The distinct pairs: key index and the element's digest.
    pub pairs: Vec<(u32, KeyHash)>,
    /// The packets, as indices into `pairs`.
    pub packets: Vec<u32>,
}

impl Stream {
    /// The stream of `mix` from `rng`, digests under `seed` (SipHash-1-3 of the key's
    /// bytes and of the element's 8 bytes).
    #[must_use]
    pub fn new(mix: Mix, seed: Seed, rng: &mut Rng) -> Self {
        let mut s = Self {
            keys: Vec::new(),
            key_hashes: Vec::new(),
            spread: Vec::new(),
            heavy: 0,
            pairs: Vec::new(),
            packets: Vec::new(),
        };
        let n = mix.pairs as f64;
        let mut planted = 0;
        for _ in 0..mix.spreaders {
            let spread = (rng.log_uniform(mix.lo, mix.hi) * n) as u64;
            planted += spread;
            s.add_key(spread, seed, rng);
        }
        for _ in 0..60 {
            let spread = (rng.log_uniform(0.0002, mix.lo) * n) as u64;
            planted += spread;
            s.add_key(spread.max(1), seed, rng);
        }
        let mut left = mix.pairs.saturating_sub(planted);
        while left > 0 {
            let mut spread = 1;
            while spread < 40 && rng.unit() < 0.75 {
                spread += 1;
            }
            let spread = spread.min(left);
            left -= spread;
            s.add_key(spread, seed, rng);
        }
        s.heavy = s.keys.len();
        s.add_key(4, seed, rng);
        let heavy_pairs = s.pairs.len() - 4;
        for (i, _) in s.pairs.iter().enumerate() {
            let mut repeats = 1;
            while repeats < 8 && rng.unit() < 0.5 {
                repeats += 1;
            }
            s.packets.extend(std::iter::repeat_n(i as u32, repeats));
        }
        for i in 0..mix.pairs / 4 {
            s.packets.push((heavy_pairs + (i % 4) as usize) as u32);
        }
        for i in (1..s.packets.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            s.packets.swap(i, j);
        }
        s
    }

    fn add_key(&mut self, spread: u64, seed: Seed, rng: &mut Rng) {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        key[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
        let index = self.keys.len() as u32;
        self.keys.push(key);
        self.key_hashes.push(seed.hash(&key));
        self.spread.push(spread);
        for _ in 0..spread {
            let element = rng.next_u64();
            self.pairs.push((index, seed.hash(&element.to_le_bytes())));
        }
    }

    /// The number of distinct pairs.
    #[must_use]
    pub fn distinct_pairs(&self) -> u64 {
        self.pairs.len() as u64
    }

    /// The key indices by key.
    #[must_use]
    pub fn index(&self) -> HashMap<Key, usize> {
        self.keys.iter().enumerate().map(|(i, k)| (*k, i)).collect()
    }

    /// The bytes an exact counter needs: every distinct pair's key and 8-byte
    /// element digest in a hash set (no overhead counted).
    #[must_use]
    pub fn exact_bytes(&self) -> usize {
        self.pairs.len() * (16 + 8)
    }
}

/// A report to score: `(key index, estimate, σ)` of each reported key.
pub type Reported = Vec<(usize, f64, f64)>;

/// Scores of reports at one threshold, accumulated over trials.
#[derive(Clone, Debug, Default)]
pub struct Score {
    /// Keys at or above the threshold that were reported.
    pub hits: u64,
    /// Keys at or above the threshold that were not.
    pub misses: u64,
    /// Keys below the threshold that were reported.
    pub false_alarms: u64,
    /// Sum of relative errors of keys at ≥ 2× the threshold (a missed one counts 1).
    pub rel_sum: f64,
    /// Their number.
    pub rel_n: u64,
    /// The largest such relative error.
    pub rel_max: f64,
    /// Times the heavy-traffic key was reported.
    pub heavy_reported: u64,
}

impl Score {
    /// Adds one trial's report at `threshold`.
    pub fn add(&mut self, stream: &Stream, threshold: f64, reported: &Reported) {
        let by_key: HashMap<usize, f64> = reported.iter().map(|&(k, e, _)| (k, e)).collect();
        for (k, &s) in stream.spread.iter().enumerate() {
            let s = s as f64;
            let got = by_key.get(&k);
            if s >= threshold {
                if got.is_some() {
                    self.hits += 1;
                } else {
                    self.misses += 1;
                }
            } else if got.is_some() {
                self.false_alarms += 1;
            }
            if s >= 2.0 * threshold {
                let rel = got.map_or(1.0, |e| (e - s).abs() / s);
                self.rel_sum += rel;
                self.rel_n += 1;
                self.rel_max = self.rel_max.max(rel);
            }
        }
        if by_key.contains_key(&stream.heavy) {
            self.heavy_reported += 1;
        }
    }

    /// Fraction of the keys above the threshold that were reported.
    #[must_use]
    pub fn recall(&self) -> f64 {
        self.hits as f64 / (self.hits + self.misses).max(1) as f64
    }

    /// Fraction of the reported keys that are above the threshold.
    #[must_use]
    pub fn precision(&self) -> f64 {
        self.hits as f64 / (self.hits + self.false_alarms).max(1) as f64
    }

    /// Mean relative error of the keys at ≥ 2× the threshold.
    #[must_use]
    pub fn mean_rel(&self) -> f64 {
        self.rel_sum / self.rel_n.max(1) as f64
    }
}

/// The simplest alternative at equal bytes: a Space-Saving table of keys, each with
/// a small HyperLogLog of `m` four-bit registers. A key not in the table replaces the
/// one with the smallest estimate and inherits its registers (Space-Saving's "count
/// = minimum + 1": an overestimate, never an underestimate of what it saw since).
/// Bytes per entry: 16 (key) + `m/2` (registers) + 4 (cached estimate) + 4 (index).
#[derive(Debug)]
pub struct SsHll {
    m: usize,
    capacity: usize,
    keys: Vec<Key>,
    registers: Vec<u8>,
    estimates: Vec<f64>,
    index: HashMap<Key, usize>,
}

impl SsHll {
    /// A table of as many entries of `m` registers as fit in `bytes`.
    #[must_use]
    pub fn with_bytes(bytes: usize, m: usize) -> Self {
        Self {
            m,
            capacity: bytes / Self::entry_bytes(m),
            keys: Vec::new(),
            registers: Vec::new(),
            estimates: Vec::new(),
            index: HashMap::new(),
        }
    }

    const fn entry_bytes(m: usize) -> usize {
        16 + m / 2 + 8
    }

    /// The bytes the table takes.
    #[must_use]
    pub const fn bytes(&self) -> usize {
        self.capacity * Self::entry_bytes(self.m)
    }

    /// Counts the pair with digest `pair` for `key`.
    pub fn insert(&mut self, key: &Key, pair: u64) {
        let slot = if let Some(&s) = self.index.get(key) {
            s
        } else if self.keys.len() < self.capacity {
            self.keys.push(*key);
            self.registers.resize(self.keys.len() * self.m, 0);
            self.estimates.push(0.0);
            self.index.insert(*key, self.keys.len() - 1);
            self.keys.len() - 1
        } else {
            let s = (0..self.keys.len())
                .min_by(|&a, &b| self.estimates[a].total_cmp(&self.estimates[b]))
                .unwrap_or(0);
            self.index.remove(&self.keys[s]);
            self.keys[s] = *key;
            self.index.insert(*key, s);
            s
        };
        let j = (pair as usize) & (self.m - 1);
        let rank = ((pair >> 32) as u32 | (1 << 14)).trailing_zeros() as u8 + 1;
        let r = &mut self.registers[slot * self.m + j];
        if rank > *r {
            *r = rank;
            self.estimates[slot] = hll_estimate(&self.registers[slot * self.m..][..self.m]);
        }
    }

    /// The entries whose estimate reaches `threshold`, as key and estimate.
    pub fn report(&self, threshold: f64) -> impl Iterator<Item = (&Key, f64)> + '_ {
        self.keys
            .iter()
            .zip(&self.estimates)
            .filter(move |(_, &e)| e >= threshold)
            .map(|(k, &e)| (k, e))
    }
}

/// Ertl's improved raw estimate (2017) of 4-bit registers holding `1 +` trailing
/// zeros of 14 hash bits (values 0 ..= 15).
#[must_use]
pub fn hll_estimate(registers: &[u8]) -> f64 {
    const Q: usize = 14;
    let m = registers.len() as f64;
    let mut hist = [0u32; Q + 2];
    for &r in registers {
        hist[usize::from(r).min(Q + 1)] += 1;
    }
    let sigma = |mut x: f64| {
        if x >= 1.0 {
            return f64::INFINITY;
        }
        let (mut y, mut z) = (1.0, x);
        loop {
            x *= x;
            let old = z;
            z += x * y;
            y += y;
            if z == old {
                return z;
            }
        }
    };
    let tau = |mut x: f64| {
        if x <= 0.0 || x >= 1.0 {
            return 0.0;
        }
        let (mut y, mut z) = (1.0, 1.0 - x);
        loop {
            x = x.sqrt();
            let old = z;
            y *= 0.5;
            z -= (1.0 - x) * (1.0 - x) * y;
            if z == old {
                return z / 3.0;
            }
        }
    };
    let mut z = m * tau(1.0 - f64::from(hist[Q + 1]) / m);
    for k in (1..=Q).rev() {
        z = 0.5 * (z + f64::from(hist[k]));
    }
    z += m * sigma(f64::from(hist[0]) / m);
    0.5 / std::f64::consts::LN_2 * m * m / z
}
