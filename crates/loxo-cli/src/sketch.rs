//! Serialized loxo sketches as files: read, describe, merge, re-encode.
//!
//! A collector (this tool) does not know the devices' hash seed. It reads frames
//! with the seed-less decoders (`Hll::decode_into_any_seed`,
//! `Ull::decode_into_any_seed`), merges only frames
//! whose seed fingerprints are equal, and writes the result under that fingerprint.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};
use loxo_core::wire::{Frame, SketchKind};
use loxo_core::{DecodeError, Seed};
use loxo_hll::{
    with_precision, ForPrecision, Hll, Precision, RegisterSketch, SupportedPrecision, Ull,
};

/// Placeholder seed of sketches decoded without their seed: they are only merged,
/// estimated and re-encoded under the frame's own fingerprint, never inserted into.
const COLLECTOR_SEED: Seed = Seed::new(0, 0);

/// A [`RegisterSketch`] this tool can also copy.
trait Sketch: RegisterSketch {
    fn clone_box(&self) -> Box<dyn Sketch>;
}

impl<T: RegisterSketch + Clone> Sketch for T {
    fn clone_box(&self) -> Box<dyn Sketch> {
        Box::new(self.clone())
    }
}

/// Decodes a frame of `kind` into the sketch type of the precision `P` it says.
struct Decode<'a> {
    kind: SketchKind,
    bytes: &'a [u8],
}

impl ForPrecision for Decode<'_> {
    type Output = Result<(Box<dyn Sketch>, u64), DecodeError>;

    fn call<const P: u8>(self) -> Self::Output
    where
        Precision<P>: SupportedPrecision,
    {
        let mut s: Box<dyn Sketch> = if self.kind == SketchKind::Ull {
            Box::new(Ull::<P>::new(COLLECTOR_SEED))
        } else {
            Box::new(Hll::<P>::new(COLLECTOR_SEED))
        };
        let fp = s.decode_into_any_seed(self.bytes)?;
        Ok((s, fp))
    }
}

/// "an hll" / "a ULL": the kind's name with its article.
fn named(kind: SketchKind, upper: bool) -> String {
    let name = if upper {
        kind.name().to_uppercase()
    } else {
        kind.name().to_owned()
    };
    let article = if kind == SketchKind::Hll { "an" } else { "a" };
    format!("{article} {name}")
}

/// A distinct-count sketch, an [`Hll`] or an [`Ull`] of any precision, decoded
/// without its seed: what `loxo merge` reads and writes.
#[derive(Debug)]
pub struct Distinct(Box<dyn Sketch>);

impl Distinct {
    /// Decodes an `hll` or `ull` frame without its seed; returns the sketch and the
    /// frame's seed fingerprint.
    ///
    /// # Errors
    /// Another kind, an unsupported precision, or the decoder's error.
    pub fn decode(bytes: &[u8]) -> anyhow::Result<(Self, u64)> {
        match Frame::parse(bytes)?.header().kind {
            k @ (SketchKind::Hll | SketchKind::Ull) => Self::decode_kind(k, bytes),
            k => bail!(
                "`loxo merge` merges hll and ull sketches, this is a {} sketch",
                k.name()
            ),
        }
    }

    /// Decodes a frame that must be of `kind` (`hll` or `ull`), of any precision.
    fn decode_kind(kind: SketchKind, bytes: &[u8]) -> anyhow::Result<(Self, u64)> {
        let frame = Frame::parse(bytes)?;
        let p = frame.header().params[0];
        match u8::try_from(p)
            .ok()
            .and_then(|q| with_precision(q, Decode { kind, bytes }))
        {
            Some(decoded) => {
                let (s, fp) = decoded?;
                Ok((Self(s), fp))
            }
            None => bail!("unsupported {} precision {p}", kind.name().to_uppercase()),
        }
    }

    /// The kind: `hll` or `ull`.
    #[must_use]
    pub fn kind(&self) -> SketchKind {
        self.0.kind()
    }

    /// The precision `P`.
    #[must_use]
    pub fn precision(&self) -> u8 {
        self.0.precision()
    }

    /// The kind's default estimate (`Hll`: Ertl's, `Ull`: FGRA).
    #[must_use]
    pub fn estimate(&self) -> f64 {
        self.0.estimate()
    }

    /// The maximum-likelihood estimate (`Ull` only).
    #[must_use]
    pub fn estimate_ml(&self) -> Option<f64> {
        self.0.estimate_ml()
    }

    /// Martingale estimate, if the sketch saw only inserts.
    #[must_use]
    pub fn estimate_martingale(&self) -> Option<f64> {
        self.0.estimate_martingale()
    }

    /// The relative standard error of [`estimate`](Self::estimate).
    #[must_use]
    pub fn relative_standard_error(&self) -> f64 {
        self.0.relative_standard_error()
    }

    /// Bytes of RAM the sketch occupies on a device.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }

    /// Non-zero registers and `m`.
    #[must_use]
    pub fn fill(&self) -> (usize, usize) {
        (self.0.non_zero_registers(), self.0.registers_len())
    }

    /// The union with `other` (same kind and precision).
    ///
    /// # Errors
    /// Different kinds or precisions.
    pub fn merge(&mut self, other: &Self) -> anyhow::Result<()> {
        let (a, b) = (self.kind(), other.kind());
        if a != b {
            bail!(
                "cannot merge {} sketch into {} sketches",
                named(b, false),
                a.name()
            );
        }
        if self.precision() != other.precision() {
            bail!(
                "geometry mismatch: cannot merge {} of precision {} into one of precision {}",
                named(a, true),
                other.precision(),
                self.precision()
            );
        }
        self.0.merge(&*other.0)?;
        Ok(())
    }

    /// Encodes under `fingerprint`.
    #[must_use]
    pub fn encode(&self, fingerprint: u64) -> Vec<u8> {
        let mut buf = vec![0u8; self.0.encoded_len()];
        let n = self
            .0
            .encode_into_with_fingerprint(&mut buf, fingerprint)
            .unwrap_or(0);
        buf.truncate(n);
        buf
    }

    /// The `Hll<14>` inside, if this is one (Redis's geometry).
    #[must_use]
    pub fn as_p14(&self) -> Option<&Hll<14>> {
        self.0.as_any().downcast_ref()
    }
}

impl Clone for Distinct {
    fn clone(&self) -> Self {
        Self(self.0.clone_box())
    }
}

impl PartialEq for Distinct {
    fn eq(&self, other: &Self) -> bool {
        self.0.equals(&*other.0)
    }
}

impl Eq for Distinct {}

/// An [`Hll`] of any precision, decoded from a frame: a [`Distinct`] that is known
/// to be of kind `hll`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnyHll(Distinct);

impl AnyHll {
    /// Decodes an `hll` frame of any precision without its seed; returns the
    /// sketch and the frame's seed fingerprint.
    ///
    /// # Errors
    /// Any [`loxo_core::DecodeError`], or an unsupported precision.
    pub fn decode(bytes: &[u8]) -> anyhow::Result<(Self, u64)> {
        let (d, fp) = Distinct::decode_kind(SketchKind::Hll, bytes)?;
        Ok((Self(d), fp))
    }
}

impl std::ops::Deref for AnyHll {
    type Target = Distinct;

    fn deref(&self) -> &Distinct {
        &self.0
    }
}

impl std::ops::DerefMut for AnyHll {
    fn deref_mut(&mut self) -> &mut Distinct {
        &mut self.0
    }
}

/// Reads a whole sketch file.
///
/// A file that does not start with the loxo magic is refused here, naming what it
/// looks like (a pcap or pcapng capture, text, a loxo sketch's neighbour bytes) and
/// what reads it, instead of the decoder's bare "bad magic".
///
/// # Errors
/// I/O errors, with the path; a file that is not a loxo sketch.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    check(path, bytes)
}

/// The bytes [`read`] read from `path`, if they are a loxo sketch.
///
/// # Errors
/// As [`read`], for a file that is not a loxo sketch.
pub fn check(path: &Path, bytes: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    if let Some(what) = not_a_sketch(&bytes) {
        bail!(
            "{}: not a loxo sketch: {what}; `loxo inspect`, `merge` and `export` read loxo sketch files",
            path.display()
        );
    }
    Ok(bytes)
}

/// What a file is when it is not a loxo sketch (it has at least the four bytes of a
/// magic number and they are not loxo's), or `None`.
#[must_use]
pub fn not_a_sketch(bytes: &[u8]) -> Option<String> {
    let magic: [u8; 4] = *bytes.first_chunk()?;
    if magic == loxo_core::wire::MAGIC {
        return None;
    }
    if crate::theta_ds::is_image(bytes) {
        return Some(
            "this is an Apache DataSketches compact theta image (`loxo inspect` and `loxo setop` read them)"
                .into(),
        );
    }
    if &magic == b"HYLL" {
        return Some(
            "this is a Redis HyperLogLog string (`loxo export --hyll` writes them for Redis)"
                .into(),
        );
    }
    // pcap: 0xa1b2c3d4 (µs) or 0xa1b23c4d (ns), in either byte order; pcapng: the
    // section header block type 0x0a0d0d0a.
    let capture = match u32::from_le_bytes(magic) {
        0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 => Some("pcap"),
        0x0a0d_0d0a => Some("pcapng"),
        _ => None,
    };
    Some(match capture {
        Some(format) => {
            format!("this is a {format} capture; `loxo top` and `loxo replay` read captures")
        }
        None => crate::capture::describe_head(bytes.get(..16).unwrap_or(bytes)),
    })
}

/// A human-readable description of any loxo frame: the envelope, then what the
/// kind's payload says (for HLL: estimates and fill; for Theta: θ, the retained
/// values and the estimate with its bounds at 1–3 standard deviations).
///
/// Every figure comes from the frame's bytes with checked arithmetic, and the
/// payload length must be the one the frame's parameters imply
/// ([`expected_payload_len`]), so no frame makes this panic.
///
/// # Errors
/// A clear message for corrupt or truncated bytes, parameters that contradict the
/// payload length, or parameters outside what the kind allows.
pub fn describe(bytes: &[u8]) -> anyhow::Result<String> {
    let frame = Frame::parse(bytes)?;
    let h = frame.header();
    let version = bytes
        .get(4..6)
        .map_or(0, |v| u16::from_le_bytes([v[0], v[1]]));
    let mut out = String::new();
    writeln!(
        out,
        "kind:             {} ({})",
        h.kind.name(),
        h.kind as u8
    )?;
    writeln!(out, "format version:   {version}")?;
    writeln!(out, "flags:            {:#04x}", h.flags)?;
    writeln!(out, "seed fingerprint: {:016x}", h.seed_fingerprint)?;
    writeln!(out, "params:           {:?}", h.params)?;
    writeln!(
        out,
        "frame:            {} bytes (payload {})",
        bytes.len(),
        h.payload_len
    )?;
    if h.kind == SketchKind::Hll || h.kind == SketchKind::Ull {
        let (sketch, _) = Distinct::decode_kind(h.kind, bytes)?;
        let (nz, m) = sketch.fill();
        writeln!(out, "precision:        {} (m = {m})", sketch.precision())?;
        if h.kind == SketchKind::Hll && h.flags & 4 != 0 {
            // A list payload (an `HllSparse` in list mode): a u32 count after the
            // martingale's f64 (flag bit 1); each entry is one distinct key up to
            // 25-bit hash collisions, which `HllSparse` corrects for.
            let skip = if h.flags & 2 != 0 { 8 } else { 0 };
            let n = frame
                .payload()
                .get(skip..skip + 4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map_or(0, u32::from_le_bytes);
            writeln!(
                out,
                "list:             {n} entries (HllSparse's near-exact count; the estimate below is of the registers they convert to)"
            )?;
        }
        writeln!(
            out,
            "estimate:         {:.1} ({}relative standard error {:.2} %)",
            sketch.estimate(),
            if h.kind == SketchKind::Ull {
                "FGRA, "
            } else {
                ""
            },
            100.0 * sketch.relative_standard_error()
        )?;
        if let Some(ml) = sketch.estimate_ml() {
            writeln!(out, "estimate (ML):    {ml:.1}")?;
        }
        match sketch.estimate_martingale() {
            Some(e) => writeln!(out, "martingale:       {e:.1}")?,
            None => writeln!(out, "martingale:       none (merged, or not tracked)")?,
        }
        writeln!(
            out,
            "fill:             {nz}/{m} registers non-zero ({:.1} %)",
            100.0 * nz as f64 / m as f64
        )?;
        writeln!(
            out,
            "memory:           {} bytes on a device",
            sketch.memory_bytes()
        )?;
    } else if h.kind == SketchKind::Theta {
        crate::theta::summarize(bytes)?.write_text(&mut out)?;
    } else if h.kind == SketchKind::Spread {
        describe_spread(&mut out, &loxo_spread::SpreadView::parse(bytes)?)?;
    } else {
        let p = frame.payload();
        match expected_payload_len(h.kind, h.params, p) {
            Ok(want) if want == p.len() as u128 => {}
            Ok(want) => bail!(
                "{} payload of {} bytes, its parameters {:?} say {want}",
                h.kind.name(),
                p.len(),
                h.params
            ),
            Err(why) => bail!("{} parameters {:?}: {why}", h.kind.name(), h.params),
        }
        describe_payload(&mut out, h.kind, h.params, p)?;
    }
    Ok(out)
}

/// A `spread` frame: geometry, distinct pairs, and its ten widest candidate keys.
fn describe_spread(out: &mut String, v: &loxo_spread::SpreadView<'_>) -> std::fmt::Result {
    let [s, w, c, l] = v.params();
    writeln!(out, "geometry:         S = {s} registers per key, {} registers per stripe, C = {c} cells, {l}-byte keys", 2 * w)?;
    writeln!(
        out,
        "memory:           {} bytes on a device ([u8; {l}] keys)",
        v.memory_bytes()
    )?;
    writeln!(out, "cells:            {}/{c} occupied", v.occupied())?;
    let d = v.distinct_pairs();
    writeln!(
        out,
        "distinct pairs:   {:.1} ± {:.1} (1σ)",
        d.value, d.sigma
    )?;
    let mut keys = Vec::new();
    v.report(0.0, 0.0, |k, sp| keys.push((k, sp)));
    keys.sort_by(|a, b| b.1.spread.value.total_cmp(&a.1.spread.value));
    writeln!(
        out,
        "widest keys:      estimate ± σ, [lower, upper] at 4σ, cells held"
    )?;
    for (k, sp) in keys.iter().take(10) {
        let key = match <[u8; 16]>::try_from(*k) {
            Ok(a) => std::net::Ipv6Addr::from(a).to_string(),
            Err(_) => k
                .iter()
                .fold(String::from("0x"), |s, b| s + &format!("{b:02x}")),
        };
        writeln!(
            out,
            "  {key:<39} {:>10.1} ± {:<8.1} [{:.0}, {:.0}]  {} cell(s){}",
            sp.spread.value,
            sp.spread.sigma,
            sp.lower(4.0),
            sp.upper(4.0),
            sp.sampled,
            if sp.saturated { ", saturated" } else { "" }
        )?;
    }
    Ok(())
}

/// The payload length `docs/format.md` gives a non-HLL frame of `kind` with
/// `params` (for the top-k kinds, with the entry count the payload's heap
/// header declares), in a `u128` so that no parameters overflow it.
///
/// # Errors
/// Parameters the kind does not allow (a fingerprint or counter width, a heap
/// with more entries than its capacity, a heap header cut short).
pub fn expected_payload_len(
    kind: SketchKind,
    params: [u32; 4],
    payload: &[u8],
) -> Result<u128, String> {
    let [a, b, c, d] = params.map(u128::from);
    let heap_len = |at: u128, cap: u128, key_len: u128| -> Result<u128, String> {
        let n = usize::try_from(at)
            .ok()
            .and_then(|at| payload.get(at..at.checked_add(4)?))
            .and_then(|s| s.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or("payload too short for its heap header")?;
        if u128::from(n) > cap {
            return Err(format!("{n} heap entries, capacity {cap}"));
        }
        Ok(at + 4 + u128::from(n) * (key_len + 20))
    };
    Ok(match kind {
        SketchKind::Bloom | SketchKind::CountingBloom => 4 * a,
        SketchKind::BlockedBloom => 64 * a,
        SketchKind::RegisterBloom => 8 * a,
        SketchKind::Cuckoo => {
            if b != 8 && b != 16 {
                return Err(format!("{b}-bit fingerprints (8 or 16)"));
            }
            if c != 4 {
                return Err(format!("{c} slots per bucket (4)"));
            }
            4 * a * (b / 8) + 8 + 1 + 4 + b / 8
        }
        SketchKind::Cms | SketchKind::CmsConservative => {
            if ![8, 16, 32, 64].contains(&c) {
                return Err(format!("{c}-bit counters (8, 16, 32 or 64)"));
            }
            8 + a * b * (c / 8)
        }
        SketchKind::CountSketch => {
            if c != 64 {
                return Err(format!("{c}-bit counters (64)"));
            }
            8 * a * b
        }
        SketchKind::BinaryFuse => {
            if a != 8 && a != 16 {
                return Err(format!("{a}-bit fingerprints (8 or 16)"));
            }
            if b != u128::from(loxo_bloom::FUSE_ARITY) {
                return Err(format!("{b}-wise (3)"));
            }
            // The key count is checked with the payload (describe_payload).
            let layout = loxo_bloom::FuseLayout::new(0, params[2], params[3], 0).map_err(|_| {
                format!("segment length {c}, segment-count length {d}: not a filter")
            })?;
            12 + layout.slots() as u128 * (a / 8)
        }
        SketchKind::SpaceSaving => heap_len(8, a, b)?,
        SketchKind::HeavyKeeper => heap_len(16 + 8 * a * b, c, d & 0xffff)?,
        _ => return Err("no payload layout known".into()),
    })
}

/// Reads the payload layouts of `docs/format.md` directly: a collector has no seed and
/// no compile-time geometry, so it summarises the bytes instead of decoding into a type.
/// `p` has the length [`expected_payload_len`] gives, so every offset below is in it;
/// byte counts are computed in `u128` and cannot overflow.
#[allow(clippy::too_many_lines)] // one short arm per sketch kind
fn describe_payload(
    out: &mut String,
    kind: SketchKind,
    params: [u32; 4],
    p: &[u8],
) -> anyhow::Result<()> {
    let [a, b, c, d] = params.map(u128::from);
    let ones = |bytes: &[u8]| bytes.iter().map(|x| u64::from(x.count_ones())).sum::<u64>();
    let u64_at = |o: usize| {
        p.get(o..o.saturating_add(8))
            .and_then(|s| s.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    match kind {
        SketchKind::Bloom | SketchKind::BlockedBloom | SketchKind::RegisterBloom => {
            let (bits, what) = match kind {
                SketchKind::Bloom => (32 * a, format!("{a} words of 32 bits")),
                SketchKind::BlockedBloom => (512 * a, format!("{a} blocks of 512 bits")),
                _ => (64 * a, format!("{a} words of 64 bits, one per key")),
            };
            let set = ones(p);
            writeln!(out, "geometry:         {what} = {bits} bits, k = {b}")?;
            let fill = fill_and_fpr(out, set, bits, "bits set", b)?;
            if u128::from(set) < bits && b > 0 {
                let n = -(bits as f64 / b as f64) * (1.0 - fill).ln();
                writeln!(
                    out,
                    "estimate:         {n:.0} distinct keys (Swamidass–Baldi)"
                )?;
            }
            writeln!(
                out,
                "memory:           {} bytes of bits on a device",
                bits / 8
            )?;
        }
        SketchKind::CountingBloom => {
            let cells = 8 * a;
            let nonzero = p
                .iter()
                .map(|x| u64::from(x & 0x0f != 0) + u64::from(x & 0xf0 != 0))
                .sum::<u64>();
            writeln!(out, "geometry:         {cells} 4-bit counters, k = {b}")?;
            fill_and_fpr(out, nonzero, cells, "counters non-zero", b)?;
            writeln!(
                out,
                "memory:           {} bytes of counters on a device",
                4 * a
            )?;
        }
        SketchKind::Cuckoo => {
            let fp = (b / 8) as usize;
            let slots = 4 * a;
            let used = p
                .get(..usize::try_from(slots)?.saturating_mul(fp))
                .unwrap_or(&[])
                .chunks_exact(fp.max(1))
                .filter(|s| s.iter().any(|&x| x != 0))
                .count();
            writeln!(
                out,
                "geometry:         {a} buckets × 4 slots, {b}-bit fingerprints"
            )?;
            writeln!(
                out,
                "fill:             {used}/{slots} slots ({:.2} % load)",
                100.0 * used as f64 / slots.max(1) as f64
            )?;
            writeln!(
                out,
                "memory:           {} bytes of buckets on a device",
                slots * b / 8
            )?;
        }
        SketchKind::BinaryFuse => {
            let keys = p
                .get(8..12)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u32::from_le_bytes);
            let layout = loxo_bloom::FuseLayout::new(u64_at(0), params[2], params[3], keys)
                .map_err(|_| anyhow::anyhow!("{keys} keys, more than its {} slots", d + 2 * c))?;
            let slots = layout.slots() as u128;
            writeln!(
                out,
                "geometry:         {slots} slots of {a}-bit fingerprints, 3-wise, segments of {c} ({} segments)",
                slots / c.max(1)
            )?;
            writeln!(
                out,
                "keys:             {keys} distinct, {:.2} bits/key ({:.3} × log2(1/p))",
                (slots * a) as f64 / f64::from(keys.max(1)),
                (slots as f64) / f64::from(keys.max(1))
            )?;
            writeln!(
                out,
                "FPR:              2^-{a} = {:.5} % (static: no insert, no removal)",
                100.0 / 2f64.powi(a as i32)
            )?;
            writeln!(
                out,
                "memory:           {} bytes of fingerprints (flash) on a device",
                slots * a / 8
            )?;
        }
        SketchKind::Cms | SketchKind::CmsConservative => {
            writeln!(out, "geometry:         {b} rows × {a} counters of {c} bits")?;
            writeln!(
                out,
                "total:            {} (ε·N bound {:.1})",
                u64_at(0),
                std::f64::consts::E / a.max(1) as f64 * u64_at(0) as f64
            )?;
            writeln!(
                out,
                "memory:           {} bytes of counters on a device",
                a * b * c / 8
            )?;
        }
        SketchKind::CountSketch => {
            writeln!(
                out,
                "geometry:         {b} rows × {a} signed 64-bit counters"
            )?;
            writeln!(
                out,
                "memory:           {} bytes of counters on a device",
                a * b * 8
            )?;
        }
        SketchKind::SpaceSaving | SketchKind::HeavyKeeper => {
            let (heap_at, cap, key_len) = if kind == SketchKind::SpaceSaving {
                (8, a, b)
            } else {
                (16 + 8 * a * b, c, d & 0xffff)
            };
            if kind == SketchKind::HeavyKeeper {
                writeln!(
                    out,
                    "geometry:         {b} rows × {a} buckets, top {c}, {key_len}-byte keys, decay base {:.2}",
                    (d >> 16) as f64 / 100.0
                )?;
            } else {
                writeln!(out, "geometry:         top {a}, {b}-byte keys")?;
            }
            let heap_at = usize::try_from(heap_at)?;
            let key_len = usize::try_from(key_len)?;
            let n = p
                .get(heap_at..heap_at.saturating_add(4))
                .and_then(|s| s.try_into().ok())
                .map_or(0, u32::from_le_bytes);
            writeln!(out, "total:            {}", u64_at(0))?;
            writeln!(out, "entries:          {n}/{cap} monitored keys")?;
            let mut counts: Vec<(u64, u64)> = p
                .get(heap_at.saturating_add(4)..)
                .unwrap_or(&[])
                .chunks_exact(key_len.saturating_add(20))
                .map(|r| {
                    let at = |o: usize| {
                        r.get(o..o.saturating_add(8))
                            .and_then(|s| s.try_into().ok())
                            .map_or(0, u64::from_le_bytes)
                    };
                    (at(key_len), at(key_len.saturating_add(8)))
                })
                .collect();
            counts.sort_unstable_by(|x, y| y.cmp(x));
            // Heap slot: key, count, error, tag, index cell (+ 4 bytes of index).
            let buckets = if kind == SketchKind::HeavyKeeper {
                8 * a * b
            } else {
                0
            };
            writeln!(
                out,
                "memory:           ≈ {} bytes on a device",
                buckets + cap * (key_len as u128 + 28)
            )?;
            for (i, (count, error)) in counts.iter().take(5).enumerate() {
                writeln!(
                    out,
                    "top {}:            count {count} (error ≤ {error})",
                    i + 1
                )?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `fill:` and `estimated FPR:` lines of a Bloom-like filter with `used` of its
/// `cells` set and `k` probes (`fill^k`); returns the fill.
fn fill_and_fpr(
    out: &mut String,
    used: u64,
    cells: u128,
    what: &str,
    k: u128,
) -> anyhow::Result<f64> {
    let fill = used as f64 / cells.max(1) as f64;
    writeln!(
        out,
        "fill:             {used}/{cells} {what} ({:.2} %)",
        100.0 * fill
    )?;
    writeln!(
        out,
        "estimated FPR:    {:.4} %",
        100.0 * fill.powf(k as f64)
    )?;
    Ok(fill)
}

/// Merges `hll` or `ull` frames (one kind, same precision and seed fingerprint) and
/// returns the merged sketch and the common fingerprint.
///
/// # Errors
/// An empty list, a corrupt file, a kind other than `hll` and `ull`, mixed kinds,
/// different precisions or different seed fingerprints (sketches hashed under
/// different seeds cannot merge).
pub fn merge_files(paths: &[impl AsRef<Path>]) -> anyhow::Result<(Distinct, u64)> {
    let mut acc: Option<(Distinct, u64)> = None;
    for path in paths {
        let path = path.as_ref();
        let bytes = read(path)?;
        let (sketch, fp) =
            Distinct::decode(&bytes).with_context(|| format!("{}", path.display()))?;
        match &mut acc {
            None => acc = Some((sketch, fp)),
            Some((a, afp)) => {
                if *afp != fp {
                    bail!(
                        "{}: seed mismatch: fingerprint {fp:016x}, the others have {afp:016x}",
                        path.display()
                    );
                }
                a.merge(&sketch)
                    .with_context(|| format!("{}", path.display()))?;
            }
        }
    }
    acc.context("no input files")
}
