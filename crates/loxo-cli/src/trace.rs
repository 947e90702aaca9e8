//! Seeded synthetic traffic: Ethernet frames over a Zipf or Pareto flow population, with a
//! mix of IPv4/IPv6/VLAN/QinQ, TCP/UDP/ICMP, non-first fragments, an optional scan/flood
//! share of unique-key packets and an optional share of malformed frames.
//!
//! Randomness is a counter-based `SplitMix64` (`loxo_core::mix64`), so a trace is a pure
//! function of its [`TraceConfig`].

use loxo_core::mix64;
use loxo_flow::{parse_frame, Parsed};

/// Flow popularity law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Popularity {
    /// Flow of rank i (1-based) is picked with probability ∝ i^-α.
    Zipf(f64),
    /// Flow weights are Pareto(shape) samples (heavy-tailed flow sizes).
    Pareto(f64),
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceConfig {
    /// Frames in the trace.
    pub packets: u64,
    /// Flows in the population.
    pub flows: u32,
    /// Flow popularity.
    pub popularity: Popularity,
    /// Share of packets (0..=1) that are scan/flood packets with a fresh unique key.
    pub flood: f64,
    /// Share of frames (0..=1) that are malformed.
    pub malformed: f64,
    /// RNG seed.
    pub seed: u64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            packets: 100_000,
            flows: 10_000,
            popularity: Popularity::Zipf(1.0),
            flood: 0.0,
            malformed: 0.0,
            seed: 1,
        }
    }
}

/// Counts of what was generated (malformed frames are verified with `parse_frame`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Frames written.
    pub frames: u64,
    /// Frames that `parse_frame` rejects.
    pub malformed: u64,
    /// Frames that are not IP (ARP).
    pub not_ip: u64,
    /// Flood/scan frames (unique keys).
    pub flood: u64,
    /// Bytes written (sum of frame lengths).
    pub bytes: u64,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Per-flow fixed attributes, derived from the flow id.
#[derive(Clone, Copy)]
struct FlowSpec {
    v6: bool,
    tags: u8, // 0 none, 1 802.1Q, 2 QinQ
    proto: u8,
    src: [u8; 16],
    dst: [u8; 16],
    sport: u16,
    dport: u16,
}

fn flow_spec(seed: u64, id: u64) -> FlowSpec {
    let a = mix64(seed ^ mix64(id.wrapping_add(1)));
    let b = mix64(a);
    let c = mix64(b);
    let v6 = a.is_multiple_of(5); // 20 % IPv6
    let tags = match (a >> 8) % 100 {
        0..=9 => 1,
        10..=12 => 2,
        _ => 0,
    };
    let proto = match (a >> 16) % 100 {
        0..=69 => 6,
        70..=94 => 17,
        _ => {
            if v6 {
                58
            } else {
                1
            }
        }
    };
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src[..8].copy_from_slice(&b.to_be_bytes());
    src[8..].copy_from_slice(&c.to_be_bytes());
    dst[..8].copy_from_slice(&mix64(c).to_be_bytes());
    dst[8..].copy_from_slice(&mix64(c ^ 1).to_be_bytes());
    if !v6 {
        src[0] = 10;
    }
    let (sport, dport) = if proto == 1 || proto == 58 {
        (8, 0)
    } else {
        (
            (a >> 24) as u16 | 1024,
            [80, 443, 53, 8080, 22][((a >> 40) % 5) as usize],
        )
    };
    FlowSpec {
        v6,
        tags,
        proto,
        src,
        dst,
        sport,
        dport,
    }
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

/// Builds one frame of the flow at the given size; `fragment` makes a non-first fragment.
fn build(spec: &FlowSpec, size: usize, fragment: bool, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1]);
    match spec.tags {
        1 => out.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]),
        2 => out.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x0a]),
        _ => {}
    }
    let l4len = match spec.proto {
        6 => 20,
        _ => 8,
    };
    let l3 = out.len() + 2;
    if spec.v6 {
        out.extend_from_slice(&[0x86, 0xdd]);
        let frag_len = if fragment { 8 } else { 0 };
        let size = size.max(l3 + 40 + frag_len + l4len);
        let plen = (size - l3 - 40) as u16;
        out.extend_from_slice(&[0x60, 0, 0, 0]);
        out.extend_from_slice(&plen.to_be_bytes());
        out.push(if fragment { 44 } else { spec.proto });
        out.push(64);
        out.extend_from_slice(&spec.src);
        out.extend_from_slice(&spec.dst);
        if fragment {
            out.extend_from_slice(&[spec.proto, 0, 0x05, 0xa8, 0, 0, 0, 1]);
        }
        push_l4(spec, out);
        out.resize(size, 0);
    } else {
        out.extend_from_slice(&[0x08, 0x00]);
        let size = size.max(l3 + 20 + l4len);
        let total = (size - l3) as u16;
        out.extend_from_slice(&[0x45, 0]);
        out.extend_from_slice(&total.to_be_bytes());
        out.extend_from_slice(&[0, 1]);
        out.extend_from_slice(if fragment {
            &[0x00, 0xb9]
        } else {
            &[0x40, 0x00]
        });
        out.extend_from_slice(&[64, spec.proto, 0, 0]);
        out.extend_from_slice(&spec.src[..4]);
        out.extend_from_slice(&spec.dst[..4]);
        if !fragment {
            push_l4(spec, out);
        }
        out.resize(size, 0);
    }
}

fn push_l4(spec: &FlowSpec, out: &mut Vec<u8>) {
    match spec.proto {
        1 | 58 => out.extend_from_slice(&[spec.sport as u8, spec.dport as u8, 0, 0, 0, 0, 0, 0]),
        p => {
            out.extend_from_slice(&spec.sport.to_be_bytes());
            out.extend_from_slice(&spec.dport.to_be_bytes());
            if p == 6 {
                out.extend_from_slice(&[
                    0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
                ]);
            } else {
                out.extend_from_slice(&[0, 0, 0, 0]);
            }
        }
    }
}

/// Damages a well-formed IP frame in one of several ways (truncation, bad IHL, version
/// mismatch, oversize length field); the caller verifies the result with `parse_frame`.
fn damage(r: &mut Rng, frame: &mut Vec<u8>) {
    let l3 = frame
        .windows(2)
        .position(|w| w == [0x08, 0x00] || w == [0x86, 0xdd])
        .map_or(14, |p| p + 2);
    match r.next() % 4 {
        0 => frame.truncate((r.next() % (l3 as u64 + 30)) as usize),
        1 => {
            if let Some(b) = frame.get_mut(l3) {
                *b = (*b & 0xf0) | 0x02;
                if *b >> 4 == 6 {
                    *b = 0x42;
                }
            }
        }
        2 => {
            if let Some(b) = frame.get_mut(l3) {
                *b ^= 0x20; // 4 <-> 6 version swap
            }
        }
        _ => {
            let at = if frame.get(l3).is_some_and(|b| b >> 4 == 6) {
                l3 + 4
            } else {
                l3 + 2
            };
            if let Some(s) = frame.get_mut(at..at + 2) {
                s.copy_from_slice(&[0xff, 0xf0]);
            }
        }
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
    let cdf = cdf(cfg);
    let mut r = Rng(cfg.seed);
    let mut st = TraceStats::default();
    let mut buf = Vec::with_capacity(1600);
    for n in 0..cfg.packets {
        let size = frame_size(&mut r);
        let u = r.unit();
        let is_flood = u < cfg.flood;
        if r.next().is_multiple_of(1000) {
            // ARP: not IP.
            buf.clear();
            buf.extend_from_slice(&[0xff; 6]);
            buf.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x06]);
            buf.resize(60, 0);
        } else if is_flood {
            // Scan/flood: a unique key (flow id outside the population), minimum-size TCP.
            let spec = flow_spec(cfg.seed ^ 0xf100d, u64::from(cfg.flows) + n);
            st.flood += 1;
            build(&spec, 64, false, &mut buf);
        } else {
            let x = r.unit();
            let id = cdf
                .partition_point(|&c| c < x)
                .min(cdf.len().saturating_sub(1)) as u64;
            let spec = flow_spec(cfg.seed, id);
            let fragment = spec.proto == 17 && r.next().is_multiple_of(10);
            build(&spec, size, fragment, &mut buf);
        }
        if cfg.malformed > 0.0 && r.unit() < cfg.malformed {
            damage(&mut r, &mut buf);
        }
        match parse_frame(&buf) {
            Err(_) => st.malformed += 1,
            Ok(Parsed::NotIp) => st.not_ip += 1,
            Ok(Parsed::Flow(_)) => {}
        }
        st.frames += 1;
        st.bytes += buf.len() as u64;
        sink(&buf)?;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn reproducible_and_counts_malformed() {
        let cfg = TraceConfig {
            packets: 20_000,
            flows: 500,
            malformed: 0.05,
            flood: 0.1,
            ..TraceConfig::default()
        };
        let mut a = Vec::new();
        let sa = generate(&cfg, |f| {
            a.push(f.to_vec());
            Ok::<_, ()>(())
        })
        .unwrap();
        let mut b = Vec::new();
        let sb = generate(&cfg, |f| {
            b.push(f.to_vec());
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        // Binomial(20000, 0.05): mean 1000, sd ≈ 31; some damages may still parse
        // (truncation into padding), so accept [0.6·mean, mean + 5 sd].
        assert!(sa.malformed > 600 && sa.malformed < 1155, "{sa:?}");
        let flood_mean = 2000.0;
        assert!(
            (sa.flood as f64 - flood_mean).abs() < 5.0 * (20_000.0f64 * 0.1 * 0.9).sqrt(),
            "{sa:?}"
        );
        assert!(a.iter().all(|f| f.len() <= 1514));
    }
}
