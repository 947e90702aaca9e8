//! Theta sketch files (`theta` frames): decode one of any `K`, combine several by
//! union, intersection or A-not-B, and describe the result with its bounds — what
//! `loxo inspect`, `loxo merge` and `loxo setop` print.
//!
//! As for HLL files, a collector does not know the devices' seed: frames are decoded
//! with `ThetaSketch::decode_into_any_seed` into sketches of one placeholder seed,
//! combined only when their seed fingerprints are equal, and the result is written
//! under that fingerprint. Frames of different `K` combine in a sketch of the
//! largest `K` among them, which holds each input exactly (a frame decodes into a
//! larger `K` unchanged); the set operations then work as `ThetaSketch` defines them.

use std::fmt::Write as _;

use anyhow::{bail, Context};
use loxo_core::wire::{Frame, SketchKind};
use loxo_core::Seed;
use loxo_theta::ThetaSketch;
use serde_json::{json, Value};

/// Placeholder seed of sketches decoded without their seed (never inserted into).
pub(crate) const COLLECTOR_SEED: Seed = Seed::new(0, 0);

/// The largest `K` this tool reads: `ThetaSketch<65536>` is 512 KiB (the format
/// allows up to 2^26).
pub const MAX_K: u32 = 1 << 16;

/// A set operation on Theta sketches, applied left to right: `A op B op C …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SetOp {
    /// A ∪ B ∪ …
    Union,
    /// A ∩ B ∩ …
    Intersect,
    /// A \ B \ C … (keys of A in none of the others; DataSketches' A-not-B).
    Anotb,
}

impl SetOp {
    /// Its name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Union => "union",
            Self::Intersect => "intersect",
            Self::Anotb => "anotb",
        }
    }
}

/// What a Theta sketch (one frame, or a combination of frames) says.
#[derive(Clone, Debug, PartialEq)]
pub struct ThetaSummary {
    /// Slots `K` (nominal entries `K/2`).
    pub k: u32,
    /// The seed fingerprint of the frames.
    pub fingerprint: u64,
    /// θ as a fraction in (0, 1].
    pub theta: f64,
    /// Values retained.
    pub retained: usize,
    /// No key was ever offered.
    pub empty: bool,
    /// The estimated number of distinct keys.
    pub estimate: f64,
    /// `(lower, upper)` bounds at 1, 2 and 3 standard deviations.
    pub bounds: [(f64, f64); 3],
    /// Bytes of RAM the sketch occupies on a device.
    pub memory: usize,
    /// The sketch as a `theta` frame (under `fingerprint`).
    pub frame: Vec<u8>,
}

impl ThetaSummary {
    pub(crate) fn of<const K: usize>(s: &ThetaSketch<K>, fingerprint: u64) -> anyhow::Result<Self> {
        let mut frame = vec![0u8; s.encoded_len()];
        let n = s.encode_into_with_fingerprint(&mut frame, fingerprint)?;
        frame.truncate(n);
        Ok(Self {
            k: K as u32,
            fingerprint,
            theta: s.theta(),
            retained: s.retained(),
            empty: s.is_empty(),
            estimate: s.estimate(),
            bounds: [1, 2, 3].map(|sd| (s.lower_bound(sd), s.upper_bound(sd))),
            memory: s.memory_bytes(),
            frame,
        })
    }

    /// θ < 1: the figures are estimates.
    #[must_use]
    pub fn is_estimation_mode(&self) -> bool {
        self.theta < 1.0
    }

    /// The `loxo inspect` lines after the envelope's.
    ///
    /// # Errors
    /// Only a formatting error.
    pub fn write_text(&self, out: &mut String) -> std::fmt::Result {
        writeln!(
            out,
            "geometry:         K = {} slots, nominal entries {} (RSE 1/√(k−1) = {:.2} %)",
            self.k,
            self.k / 2,
            100.0 / f64::from(self.k / 2 - 1).sqrt()
        )?;
        writeln!(
            out,
            "theta:            {:.6}{}",
            self.theta,
            if self.is_estimation_mode() {
                " (estimation mode)"
            } else {
                " (exact mode: every key kept)"
            }
        )?;
        writeln!(
            out,
            "retained:         {}{}",
            self.retained,
            if self.empty { " (empty)" } else { "" }
        )?;
        self.write_estimate(out)?;
        writeln!(out, "memory:           {} bytes on a device", self.memory)
    }

    /// The estimate and bound lines.
    ///
    /// # Errors
    /// Only a formatting error.
    pub fn write_estimate(&self, out: &mut String) -> std::fmt::Result {
        writeln!(out, "estimate:         {:.1}", self.estimate)?;
        for (sd, (lo, hi)) in self.bounds.iter().enumerate() {
            writeln!(
                out,
                "bounds {}σ:        {lo:.1} ..= {hi:.1} ({} % two-sided)",
                sd + 1,
                ["68.3", "95.4", "99.7"].get(sd).unwrap_or(&"")
            )?;
        }
        Ok(())
    }

    /// The figures as JSON (no frame bytes).
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "k": self.k,
            "seed_fingerprint": format!("{:016x}", self.fingerprint),
            "theta": self.theta,
            "retained": self.retained,
            "empty": self.empty,
            "estimation_mode": self.is_estimation_mode(),
            "estimate": self.estimate,
            "bounds": self.bounds.iter().enumerate().map(|(i, (lo, hi))| json!({
                "std_devs": i + 1, "lower": lo, "upper": hi
            })).collect::<Vec<_>>(),
            "memory_bytes": self.memory,
        })
    }
}

/// The `K` of a `theta` frame, if this tool reads it.
pub(crate) fn frame_k(bytes: &[u8]) -> anyhow::Result<(u32, u64)> {
    let frame = Frame::parse(bytes)?;
    let h = frame.header();
    if h.kind != SketchKind::Theta {
        bail!("a {} sketch, not a theta sketch", h.kind.name());
    }
    let k = h.params[0];
    if !k.is_power_of_two() || !(32..=MAX_K).contains(&k) {
        bail!("unsupported theta K {k} (this tool reads powers of two 32 ..= {MAX_K})");
    }
    Ok((k, h.seed_fingerprint))
}

/// Runs `$f::<K>($args)` for the run-time `K` (a power of two 32 ..= `MAX_K`).
macro_rules! with_k {
    ($k:expr, $f:ident($($arg:expr),*)) => {
        match $k {
            32 => $f::<32>($($arg),*),
            64 => $f::<64>($($arg),*),
            128 => $f::<128>($($arg),*),
            256 => $f::<256>($($arg),*),
            512 => $f::<512>($($arg),*),
            1024 => $f::<1024>($($arg),*),
            2048 => $f::<2048>($($arg),*),
            4096 => $f::<4096>($($arg),*),
            8192 => $f::<8192>($($arg),*),
            16384 => $f::<16384>($($arg),*),
            32768 => $f::<32768>($($arg),*),
            65536 => $f::<65536>($($arg),*),
            k => bail!("unsupported theta K {k}"),
        }
    };
}
pub(crate) use with_k;

/// Combines named `theta` frames with `op`, left to right, in a sketch of the
/// largest `K` among them.
///
/// # Errors
/// No input; a corrupt frame, another kind or an unsupported `K` (with the input's
/// name); frames of different seed fingerprints.
pub fn combine(op: SetOp, inputs: &[(String, Vec<u8>)]) -> anyhow::Result<ThetaSummary> {
    combine_in(op, inputs, 0)
}

/// [`combine`] in a sketch of at least `K = min_k` (a power of two ≤ [`MAX_K`]; 0:
/// the inputs' largest).
///
/// # Errors
/// As [`combine`]; a `min_k` this tool does not support.
pub fn combine_in(
    op: SetOp,
    inputs: &[(String, Vec<u8>)],
    min_k: u32,
) -> anyhow::Result<ThetaSummary> {
    let mut k = min_k;
    let mut fp = None;
    for (name, bytes) in inputs {
        let (ki, f) = frame_k(bytes).with_context(|| name.clone())?;
        k = k.max(ki);
        match fp {
            None => fp = Some(f),
            Some(first) if first != f => bail!(
                "{name}: seed mismatch: fingerprint {f:016x}, the first input has {first:016x} (sketches of different seeds cannot be combined)"
            ),
            Some(_) => {}
        }
    }
    let fp = fp.context("no input files")?;
    with_k!(k, fold(op, inputs, fp))
}

/// [`combine`] at `K`.
fn fold<const K: usize>(
    op: SetOp,
    inputs: &[(String, Vec<u8>)],
    fp: u64,
) -> anyhow::Result<ThetaSummary> {
    // Boxed: up to 512 KiB each.
    let mut acc = Box::new(ThetaSketch::<K>::new(COLLECTOR_SEED));
    let mut next = Box::new(ThetaSketch::<K>::new(COLLECTOR_SEED));
    for (i, (name, bytes)) in inputs.iter().enumerate() {
        let target = if i == 0 { &mut acc } else { &mut next };
        target
            .decode_into_any_seed(bytes)
            .with_context(|| name.clone())?;
        if i > 0 {
            match op {
                SetOp::Union => acc.merge(&next)?,
                SetOp::Intersect => acc.intersect(&next)?,
                SetOp::Anotb => acc.subtract(&next)?,
            }
        }
    }
    ThetaSummary::of(&acc, fp)
}

/// One `theta` frame's summary, at its own `K` (what `loxo inspect` prints).
///
/// # Errors
/// As [`combine`].
pub fn summarize(bytes: &[u8]) -> anyhow::Result<ThetaSummary> {
    combine(SetOp::Union, &[(String::from("input"), bytes.to_vec())])
}

/// A new `theta` frame of `K = k` over `keys` hashed under `seed` (what
/// `loxo build-theta` writes).
///
/// # Errors
/// `k` not a power of two in 32 ..= [`MAX_K`].
pub fn build(k: u32, seed: Seed, keys: &[Vec<u8>]) -> anyhow::Result<ThetaSummary> {
    fn build_k<const K: usize>(seed: Seed, keys: &[Vec<u8>]) -> anyhow::Result<ThetaSummary> {
        let mut s = Box::new(ThetaSketch::<K>::new(seed));
        for key in keys {
            s.insert(key);
        }
        ThetaSummary::of(&s, seed.fingerprint())
    }
    with_k!(k, build_k(seed, keys))
}
