//! Apache DataSketches **compact theta images** on the command line: `loxo export
//! --datasketches` writes one of a `theta` frame, `loxo inspect` describes one, and
//! `loxo setop` takes them as operands beside (or instead of) `theta` frames. The
//! images themselves are `loxo_interop::theta`'s.
//!
//! # Seeds
//!
//! A DataSketches image carries no loxo fingerprint, only DataSketches' 16-bit
//! **seed hash** of an update seed `S` ([`compute_seed_hash`]`(S)`). loxo maps its
//! sketches onto it as `loxo_interop::theta` does:
//!
//! * a `theta` frame of a keyed loxo seed (fingerprint `fp`) is exported under
//!   `S = fp`: DataSketches reads it with `seed = fp` (the fingerprint in decimal);
//! * images DataSketches built from raw keys carry the seed hash of their `S`
//!   (DataSketches' default 9001).
//!
//! The tool reads every image under **one** update seed, `--ds-seed S` (default
//! [`DEFAULT_UPDATE_SEED`]), and refuses an image whose seed hash is not `S`'s. In a
//! set operation the images then combine with the `theta` frames of fingerprint `S`
//! (they are loxo exports of that seed), and with no other loxo frame: values
//! DataSketches hashed from raw keys do not mix with keyed loxo values. Without such a
//! frame among the operands, the images are taken as DataSketches-hashed under `S`
//! and the result is written under the public tag fingerprint of
//! `datasketches_theta_seed(S)`, which `loxo export --datasketches --ds-seed S` maps
//! back to `S`.
//!
//! An image does not say the `K` it was built with; it is read into the smallest `K`
//! (a power of two ≥ 32) that holds its values without a rebuild (for an image of a
//! loxo sketch in estimation mode, the sketch's own `K`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};
use loxo_core::wire::{Frame, MAGIC};
use loxo_interop::theta::{
    compute_seed_hash, datasketches_theta_seed, encode_into, encoded_len, CompactThetaImage,
    DEFAULT_UPDATE_SEED, FAMILY_COMPACT,
};
use loxo_theta::ThetaSketch;

use crate::theta::{frame_k, with_k, ThetaSummary, COLLECTOR_SEED, MAX_K};

/// `--ds-seed`: a decimal number, or hexadecimal after `0x`.
///
/// # Errors
/// Not a `u64`.
pub fn parse_ds_seed(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("{s}: {e} (a DataSketches seed: decimal, or hex after 0x)"))
}

/// The bytes look like a DataSketches compact theta image: not loxo's magic, a
/// preamble of 1–3 longs, serial version 1–4, family 3 (compact theta).
#[must_use]
pub fn is_image(bytes: &[u8]) -> bool {
    match bytes.first_chunk::<8>() {
        Some(pre) => {
            pre[..4] != MAGIC
                && (1..=3).contains(&pre[0])
                && (1..=4).contains(&pre[1])
                && pre[2] == FAMILY_COMPACT
        }
        None => false,
    }
}

/// The DataSketches update seed of a `theta` frame of seed fingerprint `fp`: `S`
/// when `fp` is the tag fingerprint of `datasketches_theta_seed(S)` for `S =
/// ds_seed` (a frame the tool wrote of DataSketches images), otherwise `fp` itself.
#[must_use]
pub fn update_seed(fp: u64, ds_seed: u64) -> u64 {
    if fp == datasketches_theta_seed(ds_seed).fingerprint() {
        ds_seed
    } else {
        fp
    }
}

/// Reads a sketch file that may also be a DataSketches compact theta image.
///
/// # Errors
/// As [`crate::sketch::read`] for anything else.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    if is_image(&bytes) {
        Ok(bytes)
    } else {
        crate::sketch::check(path, bytes)
    }
}

/// A `theta` frame as a DataSketches compact theta image.
#[derive(Clone, Debug)]
pub struct Export {
    /// The image (serial version 3, ordered).
    pub bytes: Vec<u8>,
    /// The seed DataSketches must be given (`deserialize(bytes, seed=…)`).
    pub update_seed: u64,
    /// The frame's figures.
    pub summary: ThetaSummary,
}

/// Converts a `theta` frame to a DataSketches compact theta image whose seed hash is
/// that of [`update_seed`]`(fingerprint, ds_seed)`.
///
/// # Errors
/// Not a `theta` frame, an unsupported `K`, a corrupt frame.
pub fn export(frame: &[u8], ds_seed: u64) -> anyhow::Result<Export> {
    let (k, fp) = frame_k(frame)?;
    with_k!(k, export_k(frame, fp, ds_seed))
}

fn export_k<const K: usize>(frame: &[u8], fp: u64, ds_seed: u64) -> anyhow::Result<Export> {
    let mut s = Box::new(ThetaSketch::<K>::new(COLLECTOR_SEED));
    s.decode_into_any_seed(frame)?;
    let mut bytes = vec![0u8; encoded_len(&*s)];
    let n = encode_into(&*s, &mut bytes)?;
    bytes.truncate(n);
    let update_seed = update_seed(fp, ds_seed);
    // encode_into writes the seed hash of the sketch's seed, here the tool's
    // placeholder: the image gets the one of the frame's seed (bytes 6..8 in every
    // serial version 3 image).
    if let Some(h) = bytes.get_mut(6..8) {
        h.copy_from_slice(&compute_seed_hash(update_seed).to_le_bytes());
    }
    Ok(Export {
        bytes,
        update_seed,
        summary: ThetaSummary::of(&s, fp)?,
    })
}

/// The smallest `K` (a power of two ≥ 32) that holds `retained` values without a
/// rebuild.
///
/// # Errors
/// More values than `MAX_K` holds.
pub fn image_k(retained: u32) -> anyhow::Result<u32> {
    let mut k = 32u32;
    while k / 16 * 15 <= retained {
        if k >= MAX_K {
            bail!("{retained} retained values: more than this tool's largest K ({MAX_K}) holds");
        }
        k *= 2;
    }
    Ok(k)
}

/// The figures (and `theta` frame under `fp`) of the sketch of `K` an image decodes
/// into, without a seed check.
fn summary_of<const K: usize>(
    view: &CompactThetaImage<'_>,
    fp: u64,
) -> anyhow::Result<ThetaSummary> {
    let s = Box::new(
        ThetaSketch::<K>::from_parts(
            COLLECTOR_SEED,
            view.theta_long(),
            view.is_empty(),
            view.values(),
        )
        .context("the image repeats a value")?,
    );
    ThetaSummary::of(&s, fp)
}

/// Refuses a non-empty image whose seed hash is not that of `ds_seed`.
fn check_seed(view: &CompactThetaImage<'_>, ds_seed: u64) -> anyhow::Result<()> {
    let want = compute_seed_hash(ds_seed);
    match view.seed_hash() {
        Some(h) if !view.is_empty() && h != want => bail!(
            "DataSketches seed hash {h:04x}, not {want:04x} of --ds-seed {ds_seed}: pass the seed \
             the image was made with (for an image `loxo export` wrote, the loxo sketch's \
             fingerprint in decimal; DataSketches' default is {DEFAULT_UPDATE_SEED})"
        ),
        _ => Ok(()),
    }
}

/// A DataSketches image (read under update seed `ds_seed`, which its seed hash must
/// match) as a `theta` frame of seed fingerprint `fingerprint`, at [`image_k`].
///
/// # Errors
/// A malformed image, a seed hash not `ds_seed`'s, too many values.
pub fn to_frame(image: &[u8], ds_seed: u64, fingerprint: u64) -> anyhow::Result<Vec<u8>> {
    let view = CompactThetaImage::parse(image)?;
    check_seed(&view, ds_seed)?;
    Ok(with_k!(image_k(view.retained())?, summary_of(&view, fingerprint))?.frame)
}

/// Set-operation operands: the DataSketches images among `inputs` become `theta`
/// frames (see the module docs for the seeds), the frames stay as they are.
///
/// # Errors
/// A bad image (with its name), a seed hash not `ds_seed`'s, a loxo frame of another
/// seed than the images'.
pub fn prepare(
    inputs: &[(String, Vec<u8>)],
    ds_seed: u64,
) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let Some((first, _)) = inputs.iter().find(|(_, b)| is_image(b)) else {
        return Ok(inputs.to_vec());
    };
    let tag = datasketches_theta_seed(ds_seed).fingerprint();
    let mut keyed = None;
    for (name, bytes) in inputs.iter().filter(|(_, b)| !is_image(b)) {
        // A frame that does not parse is reported by the set operation.
        let Ok(frame) = Frame::parse(bytes) else {
            continue;
        };
        let fp = frame.header().seed_fingerprint;
        if fp == tag {
            continue;
        }
        if fp != ds_seed {
            bail!(
                "{name}: a loxo sketch of seed fingerprint {fp:016x} cannot combine with the \
                 DataSketches image {first}, read under DataSketches seed {ds_seed}: images \
                 `loxo export` wrote of sketches of this seed need `--ds-seed {fp}`; images \
                 DataSketches built from raw keys never combine with keyed loxo sketches"
            );
        }
        keyed = Some(fp);
    }
    let fingerprint = keyed.unwrap_or(tag);
    inputs
        .iter()
        .map(|(name, bytes)| {
            let bytes = if is_image(bytes) {
                to_frame(bytes, ds_seed, fingerprint).with_context(|| name.clone())?
            } else {
                bytes.clone()
            };
            Ok((name.clone(), bytes))
        })
        .collect()
}

/// What `loxo inspect` prints of a DataSketches compact theta image: its format, seed
/// hash (and whether it is `ds_seed`'s), θ, retained values, estimate and bounds.
///
/// # Errors
/// A malformed image.
pub fn describe(image: &[u8], ds_seed: u64) -> anyhow::Result<String> {
    let view = CompactThetaImage::parse(image)?;
    let k = image_k(view.retained())?;
    let mut out = String::new();
    writeln!(
        out,
        "format:           Apache DataSketches compact theta image, serial version {}{}",
        view.serial_version(),
        if view.is_ordered() { ", ordered" } else { "" }
    )?;
    writeln!(out, "image:            {} bytes", image.len())?;
    let want = compute_seed_hash(ds_seed);
    match view.seed_hash() {
        None => writeln!(out, "seed hash:        none (serial version 1)")?,
        Some(h) if h == want => writeln!(
            out,
            "seed hash:        {h:04x} = that of DataSketches seed {ds_seed} (--ds-seed)"
        )?,
        Some(h) => writeln!(
            out,
            "seed hash:        {h:04x}, not {want:04x} of --ds-seed {ds_seed} (an image of a \
             loxo sketch needs --ds-seed <its fingerprint in decimal>)"
        )?,
    }
    writeln!(
        out,
        "theta:            {:.6}{}",
        view.theta(),
        if view.is_estimation_mode() {
            " (estimation mode)"
        } else {
            " (exact mode: every key kept)"
        }
    )?;
    writeln!(
        out,
        "retained:         {}{}",
        view.retained(),
        if view.is_empty() { " (empty)" } else { "" }
    )?;
    // The figures of the sketch it decodes into (no seed check: only described).
    with_k!(k, summary_of(&view, 0))?.write_estimate(&mut out)?;
    writeln!(
        out,
        "loxo K:           {k} (the smallest that holds its values; set operations use it)"
    )?;
    Ok(out)
}
