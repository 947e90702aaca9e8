//! Stress traffic for the flow monitor, with its own ground truth.
//!
//! Every frame is built here from a [`Flow`] and a length (IPv4/UDP over untagged
//! Ethernet, the captured length = the frame's length), and the truth is kept from
//! the same `(flow, length)` pairs — never from `loxo_flow::parse_frame`, so a parser
//! bug cannot hide on both sides of a comparison.
//!
//! Stream classes (each a pure function of its seed): Zipf flow popularity, heavy-
//! tailed lognormal flow sizes, a hot set that changes completely halfway, one-packet
//! floods with spoofed sources, and hand-built flows at exactly a threshold.

use std::collections::{HashMap, HashSet};

use loxo_flow::{FlowKey, Theta};

use crate::zipf::{SplitMix, Zipf};

/// One IPv4/UDP flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flow {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
}

impl Flow {
    /// Flow number `id` of the regular population; `sources` flows share each source
    /// address (`id / sources`).
    #[must_use]
    pub fn regular(id: u64, per_source: u64) -> Self {
        let s = (id / per_source.max(1)) as u32;
        let [a, b, c, d] = (0x0a00_0000 | (s & 0x00ff_ffff)).to_be_bytes();
        let [e, f, g, h] = (id as u32).to_be_bytes();
        Self {
            src: [a, b, c, d],
            dst: [0xc0 ^ e, 0xa8 ^ f, g, h],
            sport: 1024 + (id % 50_000) as u16,
            dport: 443,
        }
    }

    /// A flood packet's flow: a random spoofed source (a bijective scramble of `n`,
    /// so different seeds give different sources), fixed target.
    #[must_use]
    pub fn flood(n: u64) -> Self {
        let x = loxo_core::mix64(n ^ 0xf100_d5eed);
        let [a, b, c, d] = (0xc000_0000 | (x as u32 & 0x3fff_ffff)).to_be_bytes();
        Self {
            src: [a, b, c, d],
            dst: [203, 0, 113, 7],
            sport: (x >> 32) as u16,
            dport: 80,
        }
    }

    /// The monitor's key for this flow (built with the public constructor).
    #[must_use]
    pub fn key(&self) -> FlowKey {
        FlowKey::v4(self.src, self.dst, self.sport, self.dport, 17)
    }

    /// An Ethernet frame of exactly `len` bytes (42 ≤ `len` ≤ 1514) on this flow.
    #[must_use]
    pub fn frame(&self, len: usize) -> Vec<u8> {
        let len = len.clamp(42, 1514);
        let mut f = vec![0u8; len];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip_len = (len - 14) as u16;
        f[14] = 0x45;
        f[16..18].copy_from_slice(&ip_len.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[26..30].copy_from_slice(&self.src);
        f[30..34].copy_from_slice(&self.dst);
        f[34..36].copy_from_slice(&self.sport.to_be_bytes());
        f[36..38].copy_from_slice(&self.dport.to_be_bytes());
        f[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
        f
    }
}

/// Exact figures of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Bytes (frame lengths).
    pub bytes: u64,
    /// Frames.
    pub packets: u64,
}

/// One epoch of stress traffic: its frames as `(flow, length)` and the exact truth.
#[derive(Clone, Debug, Default)]
pub struct Epoch {
    /// The frames, in order.
    pub frames: Vec<(Flow, u16)>,
}

impl Epoch {
    /// Appends a frame.
    pub fn push(&mut self, flow: Flow, len: u16) {
        self.frames.push((flow, len));
    }

    /// Exact per-flow counts.
    #[must_use]
    pub fn counts(&self) -> HashMap<Flow, Counts> {
        let mut m: HashMap<Flow, Counts> = HashMap::new();
        for &(f, len) in &self.frames {
            let c = m.entry(f).or_default();
            c.bytes += u64::from(len);
            c.packets += 1;
        }
        m
    }

    /// Total bytes and frames.
    #[must_use]
    pub fn total(&self) -> Counts {
        Counts {
            bytes: self.frames.iter().map(|&(_, l)| u64::from(l)).sum(),
            packets: self.frames.len() as u64,
        }
    }

    /// Distinct source addresses.
    #[must_use]
    pub fn sources(&self) -> usize {
        self.frames
            .iter()
            .map(|(f, _)| f.src)
            .collect::<HashSet<_>>()
            .len()
    }

    /// Flows whose share of bytes (or packets) is ≥ θ, exactly.
    #[must_use]
    pub fn elephants(&self, theta: Theta, by_bytes: bool) -> Vec<(Flow, Counts)> {
        let total = self.total();
        let t = if by_bytes { total.bytes } else { total.packets };
        self.counts()
            .into_iter()
            .filter(|(_, c)| theta.reached(if by_bytes { c.bytes } else { c.packets }, t))
            .collect()
    }
}

/// A frame length from a realistic mix: 40 % 64 bytes, 20 % 576, 30 % 1500, 10 %
/// uniform in between.
pub fn mixed_len(rng: &mut SplitMix) -> u16 {
    match rng.below(10) {
        0..=3 => 64,
        4..=5 => 576,
        6 => 64 + rng.below(1437) as u16,
        _ => 1500,
    }
}

/// `frames` frames of a Zipf(α) population of `flows` flows (3 flows per source),
/// with a share `flood` of one-packet 64-byte flows from spoofed sources.
#[must_use]
pub fn zipf(frames: usize, flows: usize, alpha: f64, flood: f64, seed: u64) -> Epoch {
    let z = Zipf::new(flows, alpha);
    let mut rng = SplitMix::new(seed);
    let mut e = Epoch::default();
    let mut n = seed << 32;
    for _ in 0..frames {
        if rng.next_f64() < flood {
            n += 1;
            e.push(Flow::flood(n), 64);
        } else {
            let id = z.sample(&mut rng) as u64;
            e.push(Flow::regular(id, 3), mixed_len(&mut rng));
        }
    }
    e
}

/// Heavy-tailed flow sizes: `flows` flows whose packet counts are lognormal
/// (μ = 1, σ = 2: median e ≈ 3 packets, a tail of flows with thousands), frames of
/// all flows interleaved at random.
#[must_use]
pub fn lognormal(flows: usize, seed: u64) -> Epoch {
    let mut rng = SplitMix::new(seed);
    let mut order: Vec<Flow> = Vec::new();
    for id in 0..flows as u64 {
        // Box–Muller normal deviate.
        let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let packets = (1.0 + 2.0 * z).exp().ceil().clamp(1.0, 200_000.0) as usize;
        order.extend(std::iter::repeat_n(Flow::regular(id, 3), packets));
    }
    // Fisher–Yates shuffle.
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut e = Epoch::default();
    for f in order {
        let len = mixed_len(&mut rng);
        e.push(f, len);
    }
    e
}

/// A hot set that changes completely halfway: the first half is Zipf(1.0) over flows
/// `0..flows`, the second over `flows..2·flows`.
#[must_use]
pub fn hot_set_change(frames: usize, flows: usize, seed: u64) -> Epoch {
    let z = Zipf::new(flows, 1.0);
    let mut rng = SplitMix::new(seed);
    let mut e = Epoch::default();
    for i in 0..frames {
        let base = if i < frames / 2 { 0 } else { flows as u64 };
        let id = base + z.sample(&mut rng) as u64;
        e.push(Flow::regular(id, 3), mixed_len(&mut rng));
    }
    e
}

/// Frames of `flow` adding up to exactly `target` bytes (every frame 60..=1500
/// bytes; `target` ≥ 60).
fn bytes_exactly(flow: Flow, target: u64, out: &mut Vec<(Flow, u16)>) {
    let mut left = target;
    while left > 0 {
        let len = if left >= 1560 {
            1500
        } else if left > 1500 {
            left - 60
        } else {
            left
        };
        out.push((flow, len as u16));
        left -= len;
    }
}

/// Flows at exactly θ and one unit below: two flows hold exactly `θ·T` and
/// `θ·T − 1` of the epoch's total `T` (bytes, or packets), hidden in Zipf(1.0)
/// background traffic of `background` frames and interleaved with it at random; a
/// small filler flow makes `θ·T` an integer.
///
/// Returns the epoch and the two flows (at θ, one below).
///
/// # Panics
/// If the construction misses its total (a bug in this generator).
#[must_use]
pub fn at_threshold(
    theta: Theta,
    by_bytes: bool,
    background: usize,
    seed: u64,
) -> (Epoch, Flow, Flow) {
    let mut e = zipf(background, 50_000, 1.0, 0.0, seed);
    let on = Flow::regular(1 << 40, 1);
    let below = Flow::regular((1 << 40) + 1, 1);
    let filler = Flow::regular((1 << 40) + 2, 1);
    let measure = |e: &Epoch| {
        if by_bytes {
            e.total().bytes
        } else {
            e.total().packets
        }
    };
    let (num, den) = (theta.num(), theta.den());
    let base = measure(&e);
    // T: a multiple of den with room for both flows and a filler of ≥ 60 bytes.
    let need = (base as f64 / (1.0 - 2.0 * theta.to_f64())).ceil() as u64 + 64;
    let t = need.div_ceil(den) * den;
    let (at, one_below) = (t / den * num, t / den * num - 1);
    let mut rng = SplitMix::new(seed ^ 0x7e57);
    let mut extra = Vec::new();
    if by_bytes {
        bytes_exactly(on, at, &mut extra);
        bytes_exactly(below, one_below, &mut extra);
        bytes_exactly(filler, t - base - at - one_below, &mut extra);
    } else {
        for (flow, n) in [
            (on, at),
            (below, one_below),
            (filler, t - base - at - one_below),
        ] {
            for _ in 0..n {
                let len = mixed_len(&mut rng);
                extra.push((flow, len));
            }
        }
    }
    // Interleave: merge the extra frames into the background at random positions.
    let mut frames = Vec::with_capacity(e.frames.len() + extra.len());
    let (mut bg, mut ex) = (
        e.frames.into_iter().peekable(),
        extra.into_iter().peekable(),
    );
    while bg.peek().is_some() || ex.peek().is_some() {
        let (nb, ne) = (bg.len() as u64, ex.len() as u64);
        if rng.below(nb + ne) < ne {
            frames.extend(ex.next());
        } else {
            frames.extend(bg.next());
        }
    }
    e.frames = frames;
    assert_eq!(measure(&e), t, "the total must be exactly {t}");
    (e, on, below)
}

/// One epoch crowded at exactly `1/n` of its total `T` (bytes, or packets): `3n/4`
/// flows hold exactly `T/n` each, `n/8` hold `T/n − 1`, and one-frame mice from
/// spoofed sources make up the rest (`n/8·T/n + n/8`), all frames shuffled. The test
/// of a monitor of `n` candidates at `θ = θ_min = 1/n`: every flow of the first group
/// is an elephant (inclusive), none of the second is, and the mice keep the
/// candidates' minimum moving. Flows at `T/n` hold `unit` packets (or `unit` frames of
/// 1 500 bytes).
///
/// Returns the epoch, the flows at `T/n` and those one below.
///
/// # Panics
/// If `n` is not a multiple of 8 or `unit < 2`, or the construction misses its
/// total (a bug in this generator).
#[must_use]
pub fn at_one_nth(n: u64, unit: u64, by_bytes: bool, seed: u64) -> (Epoch, Vec<Flow>, Vec<Flow>) {
    assert!(n.is_multiple_of(8) && unit >= 2, "n = {n}, unit = {unit}");
    let w = if by_bytes { unit * 1_500 } else { unit };
    let t = n * w;
    let mut rng = SplitMix::new(seed);
    let at: Vec<Flow> = (0..n * 3 / 4)
        .map(|i| Flow::regular((seed << 24) + i, 2))
        .collect();
    let below: Vec<Flow> = (n * 3 / 4..n * 7 / 8)
        .map(|i| Flow::regular((seed << 24) + i, 2))
        .collect();
    let mut frames = Vec::new();
    let mut heavy = |flow: Flow, target: u64, rng: &mut SplitMix| {
        if by_bytes {
            bytes_exactly(flow, target, &mut frames);
        } else {
            for _ in 0..target {
                frames.push((flow, mixed_len(rng)));
            }
        }
    };
    for &f in &at {
        heavy(f, w, &mut rng);
    }
    for &f in &below {
        heavy(f, w - 1, &mut rng);
    }
    // The mice: one frame each, up to the total.
    let mut left = t - at.len() as u64 * w - below.len() as u64 * (w - 1);
    let mut m = seed << 40;
    while left > 0 {
        m += 1;
        let len = if !by_bytes {
            u64::from(mixed_len(&mut rng))
        } else if left <= 1_500 {
            left
        } else {
            // Leave at least 60 bytes for the last mouse.
            u64::from(mixed_len(&mut rng)).min(left - 60)
        };
        frames.push((Flow::flood(m), len as u16));
        left -= if by_bytes { len } else { 1 };
    }
    // Fisher–Yates shuffle.
    for i in (1..frames.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        frames.swap(i, j);
    }
    let e = Epoch { frames };
    let total = e.total();
    assert_eq!(if by_bytes { total.bytes } else { total.packets }, t);
    (e, at, below)
}
