//! The loxo wire format for [`Cms`] (kinds `cms` 6 and `cms-conservative` 7) and
//! [`CountSketch`] (kind `count-sketch` 8); see `docs/format.md`.
//!
//! * `Cms`: params `[W, D, counter bits, 0]`, payload `total` (`u64`) then the `D·W`
//!   counters row by row, little-endian in the counter's width. A plain sketch is
//!   kind 6 and a conservative one kind 7, so a conservative sketch can never be
//!   decoded as a plain one and then merged by addition.
//! * `CountSketch`: params `[W, D, 64, 0]`, payload the `D·W` `i64` counters.
//!
//! * `SpaceSaving` (9) and `HeavyKeeper` (10): see their `encode_into`.
//!
//! Flags must be 0. A Count-Min row whose unsaturated cells add up to more than the
//! total is rejected (no update, halving or merge produces one); Count-Sketch counters
//! accept any value (signed updates reach every state).

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, Seed};

use crate::cms::{Counter, UpdateRule};
use crate::heap::KeyHeap;
use crate::{Cms, CountSketch, HeavyKeeper, SpaceSaving, WireKey};

impl<const W: usize, const D: usize, C: Counter, U: UpdateRule> Cms<W, D, C, U> {
    const KIND: SketchKind = if U::CONSERVATIVE {
        SketchKind::CmsConservative
    } else {
        SketchKind::Cms
    };
    const PARAMS: [u32; 4] = [W as u32, D as u32, 8 * C::BYTES as u32, 0];
    const PAYLOAD: usize = 8 + W * D * C::BYTES;

    /// Length of the frame [`encode_into`](Self::encode_into) writes:
    /// `36 + 8 + W·D·size_of::<C>() + 4` bytes.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(Self::PAYLOAD)
    }

    /// Serializes the sketch (kind `cms` or `cms-conservative`, see `docs/format.md`).
    ///
    /// ```
    /// use loxo_cms::{Cms, CmsCu};
    /// use loxo_core::{DecodeError, Seed};
    ///
    /// let seed = Seed::new(1, 2);
    /// let mut cms = Cms::<64, 4>::new(seed);
    /// cms.add(b"flow", 1500);
    /// let mut buf = [0u8; 2048];
    /// let n = cms.encode_into(&mut buf)?;
    /// let mut back = Cms::<64, 4>::new(seed);
    /// back.decode_into(&buf[..n])?;
    /// assert_eq!(back, cms);
    /// // A plain sketch never decodes as a conservative one, nor the reverse.
    /// let mut cu = CmsCu::<64, 4>::new(seed);
    /// assert!(matches!(cu.decode_into(&buf[..n]), Err(DecodeError::WrongKind { .. })));
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let (kind, params, total) = (Self::KIND, Self::PARAMS, Some(self.total));
        encode_rows(
            kind,
            &self.seed,
            params,
            total,
            &self.rows,
            C::BYTES,
            C::to_u64,
            buf,
        )
    }

    /// Replaces the sketch with a serialized one of the same geometry, counter width,
    /// update rule and seed. On error `self` is unchanged.
    ///
    /// # Errors
    /// The envelope's errors; [`DecodeError::WrongKind`] (other sketch or update
    /// rule), [`DecodeError::ParameterMismatch`], [`DecodeError::SeedMismatch`],
    /// [`DecodeError::InvalidValue`] for non-zero flags or a row whose unsaturated
    /// cells add up to more than the total (each update adds at most its weight to
    /// one cell per row, halving floors cells and total alike, merging adds both:
    /// no reachable sketch has such a row; a saturated cell is "at least `MAX`" and
    /// is left out of the sum).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let frame = Frame::parse(bytes)?;
        let p = frame.checked_payload(Self::KIND, Self::PARAMS, &self.seed, Some(Self::PAYLOAD))?;
        let (total, cells) = p.split_at(8);
        let total = u64::from_le_bytes(total.try_into().map_err(|_| DecodeError::Truncated)?);
        if total != u64::MAX {
            for src in cells.chunks_exact(W * C::BYTES) {
                let sum: u128 = src
                    .chunks_exact(C::BYTES)
                    .map(C::from_le)
                    .filter(|&c| c != C::MAX)
                    .map(|c| u128::from(c.to_u64()))
                    .sum();
                if sum > u128::from(total) {
                    return Err(DecodeError::InvalidValue);
                }
            }
        }
        self.total = total;
        decode_rows(&mut self.rows, cells, C::BYTES, C::from_le);
        Ok(())
    }
}

/// Writes a frame whose payload is `total` (if any, `u64`) then `rows` row by row,
/// each cell the low `width` bytes of `to_u64(cell)`, little-endian.
#[allow(clippy::too_many_arguments)] // the frame's fields, then the cells' encoding
fn encode_rows<T: Copy, const W: usize>(
    kind: SketchKind,
    seed: &Seed,
    params: [u32; 4],
    total: Option<u64>,
    rows: &[[T; W]],
    width: usize,
    to_u64: impl Fn(T) -> u64,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let payload = 8 * usize::from(total.is_some()) + rows.len() * W * width;
    let header = Header::new(kind, seed.fingerprint(), params, payload as u32);
    let mut enc = Encoder::new(buf, &header)?;
    if let Some(total) = total {
        enc.put_u64(total);
    }
    for row in rows {
        for &c in row {
            enc.put(&to_u64(c).to_le_bytes()[..width]);
        }
    }
    Ok(enc.finish())
}

/// Reads `rows` from `cells` as [`encode_rows`] wrote them (`width` bytes a cell,
/// `from_le` of each); `cells` is the checked payload after the total.
fn decode_rows<T, const W: usize>(
    rows: &mut [[T; W]],
    cells: &[u8],
    width: usize,
    from_le: impl Fn(&[u8]) -> T,
) {
    for (row, src) in rows.iter_mut().zip(cells.chunks_exact(W * width)) {
        for (c, b) in row.iter_mut().zip(src.chunks_exact(width)) {
            *c = from_le(b);
        }
    }
}

impl<const W: usize, const D: usize> CountSketch<W, D> {
    const PARAMS: [u32; 4] = [W as u32, D as u32, 64, 0];
    const PAYLOAD: usize = 8 * W * D;

    /// Length of the encoded frame: `36 + 8·W·D + 4` bytes.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(Self::PAYLOAD)
    }

    /// Serializes the sketch (kind `count-sketch`, see `docs/format.md`).
    ///
    /// ```
    /// use loxo_cms::CountSketch;
    /// use loxo_core::Seed;
    ///
    /// let mut cs = CountSketch::<32, 3>::new(Seed::new(1, 2));
    /// cs.add(b"k", -7);
    /// let mut buf = vec![0u8; cs.encoded_len()];
    /// cs.encode_into(&mut buf)?;
    /// let mut back = CountSketch::<32, 3>::new(Seed::new(1, 2));
    /// back.decode_into(&buf)?;
    /// assert_eq!(back.estimate(b"k"), -7);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let (kind, params) = (SketchKind::CountSketch, Self::PARAMS);
        // Two's complement: an `i64`'s little-endian bytes are those of its `u64` bits.
        encode_rows(
            kind,
            &self.seed,
            params,
            None,
            &self.rows,
            8,
            |c| c as u64,
            buf,
        )
    }

    /// Replaces the sketch with a serialized one (same `W`, `D`, seed); on error
    /// `self` is unchanged.
    ///
    /// # Errors
    /// As [`Cms::decode_into`].
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let frame = Frame::parse(bytes)?;
        let p = frame.checked_payload(
            SketchKind::CountSketch,
            Self::PARAMS,
            &self.seed,
            Some(Self::PAYLOAD),
        )?;
        decode_rows(&mut self.rows, p, 8, |b| {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            i64::from_le_bytes(w)
        });
        Ok(())
    }
}

impl<K: Copy + Eq, const N: usize> SpaceSaving<K, N> {
    /// Length of the frame [`encode_into`](Self::encode_into) writes for `L`-byte keys:
    /// `36 + 8 + 4 + len·(L + 20) + 4`.
    #[must_use]
    pub fn encoded_len<const L: usize>(&self) -> usize
    where
        K: WireKey<L>,
    {
        wire::frame_len(8 + self.heap.encoded_len::<L>())
    }

    /// Serializes the summary (kind `space-saving`, params `[N, L]`): the stream
    /// total, then the monitored entries in heap order with their hash tags. The
    /// summary does not hash keys itself, so the caller passes the `seed` its keys
    /// were hashed with; the frame records its fingerprint.
    ///
    /// ```
    /// use loxo_cms::{SpaceSaving, TopK};
    /// use loxo_core::Seed;
    ///
    /// let seed = Seed::new(1, 2);
    /// let mut ss = SpaceSaving::<u32, 8>::new();
    /// for k in [1u32, 1, 2, 3, 1] {
    ///     ss.update(&k, seed.hash(&k.to_le_bytes()), 100);
    /// }
    /// let mut buf = vec![0u8; ss.encoded_len()];
    /// ss.encode_into(&seed, &mut buf)?;
    /// let mut back = SpaceSaving::<u32, 8>::new();
    /// back.decode_into(&seed, &buf)?;
    /// assert_eq!(back.estimate(&1, seed.hash(&1u32.to_le_bytes())), Some(300));
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into<const L: usize>(
        &self,
        seed: &Seed,
        buf: &mut [u8],
    ) -> Result<usize, EncodeError>
    where
        K: WireKey<L>,
    {
        let payload = 8 + self.heap.encoded_len::<L>();
        let header = Header::new(
            SketchKind::SpaceSaving,
            seed.fingerprint(),
            [N as u32, L as u32, 0, 0],
            payload as u32,
        );
        let mut enc = Encoder::new(buf, &header)?;
        enc.put_u64(self.total);
        self.heap.encode::<L>(&mut enc);
        Ok(enc.finish())
    }

    /// Replaces the summary with a serialized one (same `N`, key encoding and seed).
    /// On error `self` is unchanged.
    ///
    /// The stored hash tags are trusted to belong to their keys (they cannot be
    /// checked without re-hashing, which is the caller's business): a crafted frame
    /// with a wrong tag makes that key's next update start a new entry.
    ///
    /// # Errors
    /// The envelope's errors; `WrongKind`, `ParameterMismatch`, `SeedMismatch`;
    /// `InvalidValue` for more than `N` entries, an invalid key, `error > count`, a
    /// count above [`MAX_COUNT`](crate::MAX_COUNT) (a saturated count is written as
    /// `MAX_COUNT`), a broken heap order, a key listed twice, or counts that add up to more than the
    /// total (each update adds its weight to one count, so a real summary's counts
    /// add up to its total, or less after `halve`: this keeps "minimum count ≤
    /// total / N" true of every decoded summary).
    pub fn decode_into<const L: usize>(
        &mut self,
        seed: &Seed,
        bytes: &[u8],
    ) -> Result<(), DecodeError>
    where
        K: WireKey<L>,
    {
        let frame = Frame::parse(bytes)?;
        let p = frame.checked_payload(
            SketchKind::SpaceSaving,
            [N as u32, L as u32, 0, 0],
            seed,
            None,
        )?;
        let (total, heap) = p.split_at_checked(8).ok_or(DecodeError::Truncated)?;
        let total = u64::from_le_bytes(total.try_into().map_err(|_| DecodeError::Truncated)?);
        KeyHeap::<K, N>::validate::<L>(heap)?;
        let mut fresh = KeyHeap::<K, N>::new();
        fresh.decode_validated::<L>(heap);
        let sum = fresh.entries().fold(0u64, |a, e| a.saturating_add(e.count));
        if sum > total {
            return Err(DecodeError::InvalidValue);
        }
        self.heap = fresh;
        self.total = total;
        Ok(())
    }
}

fn fresh_max<K: Copy + Eq, const N: usize>(h: &KeyHeap<K, N>) -> u64 {
    h.entries().map(|e| e.count).max().unwrap_or(0)
}

impl<const W: usize, const D: usize, const N: usize, K: Copy + Eq, const B: u32>
    HeavyKeeper<W, D, N, K, B>
{
    const BUCKETS: usize = 8 * W * D;

    /// Length of the frame [`encode_into`](Self::encode_into) writes for `L`-byte keys:
    /// `36 + 16 + 8·W·D + 4 + len·(L + 20) + 4`.
    #[must_use]
    pub fn encoded_len<const L: usize>(&self) -> usize
    where
        K: WireKey<L>,
    {
        wire::frame_len(16 + Self::BUCKETS + self.heap.encoded_len::<L>())
    }

    /// Serializes the summary (kind `heavy-keeper`, params `[W, D, N, L | B << 16]`,
    /// `B` the decay base in hundredths): total,
    /// decay RNG state, the `D·W` buckets (fingerprint `u32`, count `u32`), then the
    /// heap as for [`SpaceSaving::encode_into`]. `seed` is the seed the caller hashes
    /// keys with (bucket fingerprints and tags come from those hashes).
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into<const L: usize>(
        &self,
        seed: &Seed,
        buf: &mut [u8],
    ) -> Result<usize, EncodeError>
    where
        K: WireKey<L>,
    {
        let payload = 16 + Self::BUCKETS + self.heap.encoded_len::<L>();
        let header = Header::new(
            SketchKind::HeavyKeeper,
            seed.fingerprint(),
            [W as u32, D as u32, N as u32, L as u32 | B << 16],
            payload as u32,
        );
        let mut enc = Encoder::new(buf, &header)?;
        enc.put_u64(self.total);
        enc.put_u64(self.rng);
        for row in &self.rows {
            for b in row {
                enc.put_u32(b.fp);
                enc.put_u32(b.count);
            }
        }
        self.heap.encode::<L>(&mut enc);
        Ok(enc.finish())
    }

    /// Replaces the summary with a serialized one (same geometry, key encoding and
    /// seed). On error `self` is unchanged. Tags are trusted as for
    /// [`SpaceSaving::decode_into`].
    ///
    /// ```
    /// use loxo_cms::{HeavyKeeper, TopK};
    /// use loxo_core::Seed;
    ///
    /// let seed = Seed::new(1, 2);
    /// let mut hk = HeavyKeeper::<64, 2, 8, u64>::new(9);
    /// for k in 0..500u64 {
    ///     hk.update(&(k % 5), seed.hash(&(k % 5).to_le_bytes()), 1);
    /// }
    /// let mut buf = vec![0u8; hk.encoded_len()];
    /// hk.encode_into(&seed, &mut buf)?;
    /// let mut back = HeavyKeeper::<64, 2, 8, u64>::new(0);
    /// back.decode_into(&seed, &buf)?;
    /// let mut again = vec![0u8; buf.len()];
    /// back.encode_into(&seed, &mut again)?;
    /// assert_eq!(again, buf);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`SpaceSaving::decode_into`] except that the heap counts (per-key estimates)
    /// are bounded by the total one by one, plus `InvalidValue` for a zero RNG state,
    /// an empty bucket (count 0) with a non-zero fingerprint, or a bucket count above
    /// the total (a bucket only ever gains weights that the total gained too).
    pub fn decode_into<const L: usize>(
        &mut self,
        seed: &Seed,
        bytes: &[u8],
    ) -> Result<(), DecodeError>
    where
        K: WireKey<L>,
    {
        let frame = Frame::parse(bytes)?;
        let p = frame.checked_payload(
            SketchKind::HeavyKeeper,
            [W as u32, D as u32, N as u32, L as u32 | B << 16],
            seed,
            None,
        )?;
        let (head, rest) = p.split_at_checked(16).ok_or(DecodeError::Truncated)?;
        let (buckets, heap) = rest
            .split_at_checked(Self::BUCKETS)
            .ok_or(DecodeError::Truncated)?;
        let word = |b: &[u8], o: usize| -> u64 {
            b.get(o..o + 8)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        let (total, rng) = (word(head, 0), word(head, 8));
        let half = |b: &[u8], o: usize| -> u32 {
            b.get(o..o + 4)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u32::from_le_bytes)
        };
        if rng == 0 {
            return Err(DecodeError::InvalidValue);
        }
        if buckets
            .chunks_exact(8)
            .any(|b| (half(b, 4) == 0 && half(b, 0) != 0) || u64::from(half(b, 4)) > total)
        {
            return Err(DecodeError::InvalidValue);
        }
        KeyHeap::<K, N>::validate::<L>(heap)?;
        let mut fresh = KeyHeap::<K, N>::new();
        fresh.decode_validated::<L>(heap);
        if fresh_max(&fresh) > total {
            return Err(DecodeError::InvalidValue);
        }
        for (row, src) in self.rows.iter_mut().zip(buckets.chunks_exact(8 * W)) {
            for (b, s) in row.iter_mut().zip(src.chunks_exact(8)) {
                b.fp = half(s, 0);
                b.count = half(s, 4);
            }
        }
        self.heap = fresh;
        self.total = total;
        self.rng = rng;
        Ok(())
    }
}
