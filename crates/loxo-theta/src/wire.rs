//! [`ThetaSketch<K>`] in the loxo wire format: kind `theta` (14, since version 2),
//! params `[K, 63, 0, 0]`, flag bit 0 = empty, payload θ (`u64`), the retained count
//! `n` (`u32`), then the `n` retained values in **ascending** order (`u64` each, all
//! little-endian; `docs/format.md` has the contract).
//!
//! Sorted values make the bytes a function of the set alone (not of the hash table's
//! slot order), and let the decoder reject a duplicate or an unordered value with one
//! comparison per value. The encoder sorts them in the output buffer itself
//! (heapsort over the 8-byte values: O(n log n), no scratch memory).
//!
//! **Another `K`.** A frame of any valid `K₁` decodes into a `ThetaSketch<K₂>`: the
//! values are re-inserted as the sketch's own inserts would be, so a larger `K₂`
//! (or an equal one) holds exactly the frame's sketch, and a smaller `K₂`
//! down-samples it as a rebuild does (θ lowered to its `K₂/2 + 1`-th smallest value):
//! a valid sketch of the same set with the smaller sketch's error. Set operations on
//! sketches of different `K` are defined anyway ([`ThetaSketch::merge`]), so nothing
//! is lost by accepting them.

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, Seed};

use crate::{ThetaSketch, THETA_MAX};

/// Flag bit 0: the sketch is empty (no key was ever offered).
const FLAG_EMPTY: u8 = 1;
/// Bits of a retained value (the second parameter): DataSketches' 63-bit scale.
const VALUE_BITS: u32 = 63;
/// Bytes before the values: θ and the count.
const PREFIX: usize = 12;

/// What a validated frame's header says, before its values are read.
struct Parts<'a> {
    theta: u64,
    empty: bool,
    fingerprint: u64,
    /// The values, `8·n` bytes, checked ascending, non-zero and below θ.
    values: &'a [u8],
}

impl<const K: usize> ThetaSketch<K> {
    /// Bytes of the frame's payload now: `12 + 8·retained`.
    const fn payload_len(&self) -> usize {
        PREFIX + 8 * self.retained()
    }

    /// Length of the frame [`encode_into`](Self::encode_into) writes now:
    /// `36 + 12 + 8·retained + 4` bytes, at most `52 + 8·(15K/16 − 1)`.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(self.payload_len())
    }

    /// Serializes the sketch into `buf` (kind `theta`, see `docs/format.md`) and
    /// returns the number of bytes written. The values are written in ascending
    /// order, sorted in `buf` itself: no allocation, no scratch memory,
    /// O(n log n) for `n` retained values.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_theta::ThetaSketch;
    ///
    /// let seed = Seed::new(7, 8);
    /// let mut s = ThetaSketch::<256>::new(seed);
    /// for i in 0..1000u32 {
    ///     s.insert(&i.to_le_bytes());
    /// }
    /// let mut buf = [0u8; 2048];
    /// let n = s.encode_into(&mut buf)?;
    /// assert_eq!(n, s.encoded_len());
    ///
    /// let back = ThetaSketch::<256>::decode(&buf[..n], seed)?;
    /// assert_eq!(back, s);
    /// // A larger sketch holds the same one; a smaller one down-samples it.
    /// assert_eq!(ThetaSketch::<1024>::decode(&buf[..n], seed)?.estimate(), s.estimate());
    /// assert!(ThetaSketch::<64>::decode(&buf[..n], seed)?.retained() < 64);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_into_with_fingerprint(buf, self.seed().fingerprint())
    }

    /// Like [`encode_into`](Self::encode_into), but writes `fingerprint` as the
    /// frame's seed fingerprint: for collectors that combined frames decoded with
    /// [`decode_into_any_seed`](Self::decode_into_any_seed) and never learnt the
    /// devices' seed.
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] as for [`encode_into`](Self::encode_into).
    pub fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError> {
        let n = self.retained();
        let mut header = Header::new(
            SketchKind::Theta,
            fingerprint,
            Self::PARAMS,
            self.payload_len() as u32,
        );
        if self.is_empty() {
            header.flags = FLAG_EMPTY;
        }
        let mut enc = Encoder::new(buf, &header)?;
        enc.put_u64(self.theta_long());
        enc.put_u32(n as u32);
        enc.put_with(8 * n, |dst| {
            for (chunk, v) in dst.chunks_exact_mut(8).zip(self.values()) {
                chunk.copy_from_slice(&v.to_le_bytes());
            }
            sort_u64_le(dst);
        });
        Ok(enc.finish())
    }

    /// The frame's parameters: `[K, 63, 0, 0]`.
    const PARAMS: [u32; 4] = [K as u32, VALUE_BITS, 0, 0];

    /// Decodes a `theta` frame made under `seed` into a sketch of this `K`.
    ///
    /// A frame of any valid `K₁` is accepted: its values are re-inserted as this
    /// sketch's own inserts would be, so for `K ≥ K₁` the result is exactly the
    /// frame's sketch, and for a smaller `K` a down-sample of it (θ lowered as a
    /// rebuild lowers it): a valid sketch of the same set, with this `K`'s error.
    ///
    /// # Errors
    /// The envelope's errors (see [`Frame::parse`]); [`DecodeError::WrongKind`];
    /// [`DecodeError::ParameterMismatch`] for a `K` that is not a power of two in
    /// `32..=2^26` (`expected` is this type's `K`) or a value width other than 63;
    /// [`DecodeError::SeedMismatch`] for another seed; [`DecodeError::InvalidValue`]
    /// for unknown flags, θ = 0 or above 2^63 − 1, more values than a sketch of the
    /// frame's `K` retains (`15K/16 − 1`), an empty sketch with values, a value that
    /// is 0, not below θ, or not above the one before it (unordered or repeated);
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] when the payload is
    /// not `12 + 8·n` bytes.
    pub fn decode(bytes: &[u8], seed: Seed) -> Result<Self, DecodeError> {
        let parts = Self::parts(bytes, Some(seed.fingerprint()))?;
        Self::from_wire(seed, &parts)
    }

    /// Replaces this sketch with the one in `bytes`, a `theta` frame made under
    /// this sketch's seed; on error `self` is unchanged. It decodes into a new sketch
    /// first ([`decode`](Self::decode)), so it needs a second sketch's worth of stack
    /// (`8·K + 32` bytes) for the time of the call.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        *self = Self::decode(bytes, self.seed())?;
        Ok(())
    }

    /// Like [`decode_into`](Self::decode_into) but without the seed check: loads a
    /// frame made under any seed (keeping this sketch's seed) and returns the
    /// frame's seed fingerprint. For collectors (such as `loxo merge`) combining
    /// sketches of devices whose seed they do not know: combine only frames with
    /// equal fingerprints, decoded into sketches of one placeholder seed, and never
    /// insert keys into them (they would be hashed with the placeholder).
    ///
    /// # Errors
    /// As [`decode`](Self::decode), except `SeedMismatch`.
    pub fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        let parts = Self::parts(bytes, None)?;
        *self = Self::from_wire(self.seed(), &parts)?;
        Ok(parts.fingerprint)
    }

    /// Builds the sketch from validated parts.
    fn from_wire(seed: Seed, p: &Parts<'_>) -> Result<Self, DecodeError> {
        let values = p
            .values
            .chunks_exact(8)
            .filter_map(|c| c.try_into().ok().map(u64::from_le_bytes));
        // `parts` checked every rule `from_parts` checks: `None` cannot happen.
        Self::from_parts(seed, p.theta, p.empty, values).ok_or(DecodeError::InvalidValue)
    }

    /// Validates a frame: envelope, kind, parameters, seed (when `fingerprint` is
    /// given), flags, θ, the count against the frame's `K`, the payload length, and
    /// every value (non-zero, below θ, strictly ascending).
    fn parts(bytes: &[u8], fingerprint: Option<u64>) -> Result<Parts<'_>, DecodeError> {
        let frame = Frame::parse(bytes)?;
        let h = frame.header();
        if h.kind != SketchKind::Theta {
            return Err(DecodeError::WrongKind {
                expected: SketchKind::Theta as u8,
                found: h.kind as u8,
            });
        }
        let [k, bits, c, d] = h.params;
        if !k.is_power_of_two() || !(32..=1 << 26).contains(&k) {
            return Err(DecodeError::ParameterMismatch {
                expected: K as u32,
                found: k,
            });
        }
        DecodeError::check_params([VALUE_BITS, 0, 0], [bits, c, d])?;
        if let Some(expected) = fingerprint {
            if h.seed_fingerprint != expected {
                return Err(DecodeError::SeedMismatch {
                    expected,
                    found: h.seed_fingerprint,
                });
            }
        }
        if h.flags & !FLAG_EMPTY != 0 {
            return Err(DecodeError::InvalidValue);
        }
        let empty = h.flags & FLAG_EMPTY != 0;
        let mut r = frame.reader();
        let theta = r.u64()?;
        let n = r.u32()? as usize;
        // A sketch of K₁ slots rebuilds when it reaches 15K₁/16 values.
        let most = (k as usize / 16 * 15).saturating_sub(1);
        if theta == 0 || theta > THETA_MAX || n > most || (empty && n > 0) {
            return Err(DecodeError::InvalidValue);
        }
        let values = r.take(8 * n)?;
        r.finish()?;
        let mut prev = 0u64;
        for c in values.chunks_exact(8) {
            let v = c.try_into().map_or(0, u64::from_le_bytes);
            if v <= prev || v >= theta {
                return Err(DecodeError::InvalidValue);
            }
            prev = v;
        }
        Ok(Parts {
            theta,
            empty,
            fingerprint: h.seed_fingerprint,
            values,
        })
    }
}

/// The `i`-th little-endian `u64` of `b` (0 past the end; callers stay in bounds).
fn get(b: &[u8], i: usize) -> u64 {
    b.get(8 * i..8 * i + 8)
        .and_then(|c| c.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Swaps the `i`-th and `j`-th 8-byte values of `b`.
fn swap(b: &mut [u8], i: usize, j: usize) {
    let (x, y) = (get(b, i), get(b, j));
    if let Some(c) = b.get_mut(8 * i..8 * i + 8) {
        c.copy_from_slice(&y.to_le_bytes());
    }
    if let Some(c) = b.get_mut(8 * j..8 * j + 8) {
        c.copy_from_slice(&x.to_le_bytes());
    }
}

/// Moves the value at `root` down the max-heap `b[..n]` to its place.
fn sift_down(b: &mut [u8], mut root: usize, n: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= n {
            return;
        }
        if child + 1 < n && get(b, child + 1) > get(b, child) {
            child += 1;
        }
        if get(b, root) >= get(b, child) {
            return;
        }
        swap(b, root, child);
        root = child;
    }
}

/// Sorts the little-endian `u64`s of `b` (a whole number of them) ascending, in
/// place: heapsort, O(n log n), no allocation, no recursion.
fn sort_u64_le(b: &mut [u8]) {
    let n = b.len() / 8;
    for root in (0..n / 2).rev() {
        sift_down(b, root, n);
    }
    for end in (1..n).rev() {
        swap(b, 0, end);
        sift_down(b, 0, end);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn heapsort_sorts() {
        for n in 0..40u64 {
            let vals: Vec<u64> = (0..n).map(|i| loxo_core::mix64(i * 7 + n) >> 1).collect();
            let mut b: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            sort_u64_le(&mut b);
            let mut want = vals.clone();
            want.sort_unstable();
            let got: Vec<u64> = (0..n as usize).map(|i| get(&b, i)).collect();
            assert_eq!(got, want);
        }
    }
}
