//! A seeded synthetic trace for the firmware demo and its end-to-end test:
//! Zipf(1.1) over 2 000 flows, UDP over IPv4, IPv6 and 802.1Q-tagged IPv4
//! with exact IP and UDP length fields, frame sizes from 60 to 1514 bytes,
//! and one malformed frame (an IPv4 header cut after 6 bytes) in every 97.
//! Every frame is ≥ 14 bytes, the smallest QEMU's LAN9118 model accepts.
//!
//! Shared by `cargo xtask demo` (when `loxo gen` is unavailable) and
//! `tests/tests/firmware_e2e.rs` (included there with `#[path]`), so the
//! test and the demo replay the same kind of traffic. Writes classic pcap
//! by hand: 24-byte global header, 16-byte record headers, little-endian.

use std::io::Write;
use std::path::Path;

const FLOWS: usize = 2_000;
/// One frame in `MALFORMED_EVERY` is a truncated IPv4 packet.
const MALFORMED_EVERY: usize = 97;

/// SplitMix64: a tiny seeded generator, enough for a reproducible trace.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One frame of `flow`, `len` bytes on the wire (UDP over IPv4, IPv6 or
/// 802.1Q-tagged IPv4, with exact IP and UDP length fields), or a malformed
/// one: an IPv4 header cut after 6 bytes ("IPv4 header truncated").
fn frame(flow: usize, len: usize, malformed: bool) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0, 0x20];
    let kind = flow % 3;
    if kind == 2 {
        f.extend_from_slice(&[0x81, 0x00, 0x00, (flow % 250) as u8 + 1]);
    }
    if malformed {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 40, 0, 0]);
        return f;
    }
    let ip_header = if kind == 1 { 40 } else { 20 };
    let udp_len = len.saturating_sub(f.len() + 2 + ip_header).max(8);
    let flow_bytes = (flow as u32).to_be_bytes();
    if kind == 1 {
        f.extend_from_slice(&[0x86, 0xDD, 0x60, 0, 0, 0]);
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[17, 64]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0]);
        f.extend_from_slice(&flow_bytes);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    } else {
        f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        f.extend_from_slice(&((20 + udp_len) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
        f.extend_from_slice(&[10, flow_bytes[1], flow_bytes[2], flow_bytes[3]]);
        f.extend_from_slice(&[10, 255, 0, 1]);
    }
    f.extend_from_slice(&((1024 + flow % 60_000) as u16).to_be_bytes());
    f.extend_from_slice(&[0x01, 0xBB]);
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    let end = f.len() + udp_len - 8;
    f.resize(end, 0xAB);
    f
}

/// Writes `frames` frames to `path`; returns (frames, malformed frames).
///
/// # Errors
///
/// Any I/O error of creating or writing the file.
pub(crate) fn write_trace(path: &Path, frames: usize) -> std::io::Result<(usize, usize)> {
    // Zipf(s = 1.1) over FLOWS ranks by inverse CDF on the cumulative weights.
    let weights: Vec<f64> = (1..=FLOWS).map(|r| (r as f64).powf(-1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cdf = Vec::with_capacity(FLOWS);
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cdf.push(acc);
    }
    let mut rng = Rng(0x1234_5678_9ABC_DEF0);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    out.write_all(&0xA1B2_C3D4u32.to_le_bytes())?;
    out.write_all(&[2, 0, 4, 0])?;
    out.write_all(&[0; 8])?;
    out.write_all(&65_535u32.to_le_bytes())?;
    out.write_all(&1u32.to_le_bytes())?;
    let mut malformed = 0;
    for i in 0..frames {
        let u = rng.unit();
        let flow = cdf.partition_point(|&c| c < u).min(FLOWS - 1);
        let bad = i % MALFORMED_EVERY == 0;
        malformed += usize::from(bad);
        let len = [60, 64, 128, 576, 1514][(rng.next() % 5) as usize];
        let f = frame(flow, len, bad);
        debug_assert!(f.len() >= 14 && f.len() <= 1518);
        out.write_all(&(i as u32 / 1000).to_le_bytes())?;
        out.write_all(&((i as u32 % 1000) * 1000).to_le_bytes())?;
        out.write_all(&(f.len() as u32).to_le_bytes())?;
        out.write_all(&(f.len() as u32).to_le_bytes())?;
        out.write_all(&f)?;
    }
    out.flush()?;
    Ok((frames, malformed))
}
