//! The generator's loop: a counter-based RNG, the popularity law, frame sizes, and
//! [`generate_with_truth`] tying flows, frames, damage and the oracle together.

use loxo_core::mix64;

use super::damage::damage;
use super::flows::flow_spec;
use super::frames::{build, build_not_ip, Shape};
use super::{Damage, Expected, FrameTruth, Popularity, TraceConfig, TraceStats, TrafficClass};

/// The minimum Ethernet frame as captured (64 bytes on the wire, less the FCS):
/// [`TrafficClass::MinSize`]'s size.
const MIN_FRAME: usize = 60;

pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    pub(super) fn unit(&mut self) -> f64 {
        unit(self.next())
    }
}

pub(super) fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Realistic captured frame size: ~45 % minimum-size, ~15 % mid (576), ~35 % full (1514),
/// the rest uniform in 64..=1514.
fn frame_size(r: &mut Rng) -> usize {
    match r.next() % 100 {
        0..=44 => 64,
        45..=59 => 576,
        60..=94 => 1514,
        _ => 64 + (r.next() % 1451) as usize,
    }
}

/// Cumulative distribution over flows for the popularity law.
fn cdf(cfg: &TraceConfig) -> Vec<f64> {
    let mut r = Rng(cfg.seed ^ 0x5eed);
    let mut acc = 0.0;
    let mut v: Vec<f64> = (1..=u64::from(cfg.flows.max(1)))
        .map(|i| {
            acc += match cfg.popularity {
                Popularity::Zipf(a) => (i as f64).powf(-a),
                Popularity::Pareto(shape) => (1.0 - r.unit()).powf(-1.0 / shape),
            };
            acc
        })
        .collect();
    for x in &mut v {
        *x /= acc;
    }
    v
}

/// Generates the trace, calling `sink(frame)` for each frame in order.
///
/// # Errors
/// The first error returned by `sink`.
pub fn generate<E>(
    cfg: &TraceConfig,
    mut sink: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<TraceStats, E> {
    generate_with_truth(cfg, |f, _| sink(f))
}

/// Generates the trace, calling `sink(frame, truth)` for each frame in order.
///
/// # Errors
/// The first error returned by `sink`.
pub fn generate_with_truth<E>(
    cfg: &TraceConfig,
    mut sink: impl FnMut(&[u8], &FrameTruth) -> Result<(), E>,
) -> Result<TraceStats, E> {
    let cdf = cdf(cfg);
    let extended = cfg.extensions > 0.0;
    let class = cfg.class;
    let min_size = class == TrafficClass::MinSize;
    let mut r = Rng(cfg.seed);
    let mut st = TraceStats::default();
    let mut buf = Vec::with_capacity(1600);
    for n in 0..cfg.packets {
        // Drawn for every class: the classic trace's draws stay in step.
        let drawn = frame_size(&mut r);
        let size = if min_size { MIN_FRAME } else { drawn };
        let u = r.unit();
        let is_flood = u < cfg.flood;
        let mut shape = Shape {
            size,
            fragment: false,
            padded: min_size,
            long_chain: false,
        };
        let built = if r.next().is_multiple_of(1000) {
            let variant = if extended { r.next() % 4 } else { 0 };
            (build_not_ip(variant, &mut buf), None)
        } else if is_flood {
            // Scan/flood: a unique key (a flood class's, else a flow id outside the
            // population), minimum size.
            let spec = class
                .flood_spec(cfg.seed, &cfg.attack, n)
                .unwrap_or_else(|| {
                    let id = u64::from(cfg.flows) + n;
                    flow_spec(cfg.seed ^ 0xf100d, id, cfg.extensions, class)
                });
            st.flood += 1;
            shape.size = if min_size { MIN_FRAME } else { 64 };
            shape.padded = extended || min_size;
            let (l, k) = build(&spec, shape, &mut buf);
            (l, Some((spec, k)))
        } else {
            let x = r.unit();
            let id = cdf
                .partition_point(|&c| c < x)
                .min(cdf.len().saturating_sub(1)) as u64;
            let spec = flow_spec(cfg.seed, id, cfg.extensions, class);
            shape.fragment =
                class == TrafficClass::Fragments || spec.proto == 17 && r.next().is_multiple_of(10);
            shape.padded = min_size || extended && size == 64;
            let (l, k) = build(&spec, shape, &mut buf);
            (l, Some((spec, k)))
        };
        let (mut layout, flow) = built;
        let mut damage_done = Damage::None;
        if cfg.malformed > 0.0 && r.unit() < cfg.malformed {
            let kinds = if extended { 6 } else { 4 };
            damage_done = damage(&mut r, kinds, &mut layout, &mut buf);
            if let (Damage::LongChain, Some((spec, _))) = (damage_done, &flow) {
                shape.long_chain = true;
                layout = build(spec, shape, &mut buf).0;
            }
        }
        let expected = layout.expected();
        match expected {
            Expected::Malformed(_) => st.malformed += 1,
            Expected::NotIp => st.not_ip += 1,
            Expected::Flow => {}
        }
        st.damaged += u64::from(damage_done != Damage::None);
        let truth = FrameTruth {
            index: n,
            len: u32::try_from(buf.len()).unwrap_or(u32::MAX),
            ip_len: layout.ip_len(),
            key: flow.map(|(_, k)| k),
            fragment: shape.fragment,
            flood: is_flood && flow.is_some(),
            damage: damage_done,
            expected,
        };
        debug_assert_eq!(layout.len, buf.len(), "layout out of step with the bytes");
        st.frames += 1;
        st.bytes += buf.len() as u64;
        sink(&buf, &truth)?;
    }
    Ok(st)
}
