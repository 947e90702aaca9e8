//! What the word-array filters ([`Bloom`](crate::Bloom),
//! [`BlockedBloom`](crate::BlockedBloom), [`RegisterBloom`](crate::RegisterBloom),
//! [`CountingBloom`](crate::CountingBloom)) share besides their keyed methods: the
//! frame (a payload of little-endian words, `docs/format.md`) and the merges (word by
//! word, under equal seeds).

use loxo_core::wire::{Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, MergeError, Seed};

/// A word of a filter's array: `u32` or `u64`, little-endian on the wire.
pub(crate) trait Word: Copy {
    /// Bytes on the wire.
    const BYTES: usize;
    /// Appends the word to a frame.
    fn put(self, enc: &mut Encoder<'_>);
    /// The word of `BYTES` little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
}

impl Word for u32 {
    const BYTES: usize = 4;
    fn put(self, enc: &mut Encoder<'_>) {
        enc.put_u32(self);
    }
    fn from_le(b: &[u8]) -> Self {
        crate::le_u64(b) as u32
    }
}

impl Word for u64 {
    const BYTES: usize = 8;
    fn put(self, enc: &mut Encoder<'_>) {
        enc.put_u64(self);
    }
    fn from_le(b: &[u8]) -> Self {
        crate::le_u64(b)
    }
}

/// Writes a frame whose payload is the `count` words `words`, little-endian.
pub(crate) fn encode<'w, W: Word + 'w>(
    kind: SketchKind,
    seed: &Seed,
    params: [u32; 4],
    words: impl IntoIterator<Item = &'w W>,
    count: usize,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let header = Header::new(kind, seed.fingerprint(), params, (count * W::BYTES) as u32);
    let mut enc = Encoder::new(buf, &header)?;
    for w in words {
        w.put(&mut enc);
    }
    Ok(enc.finish())
}

/// Reads a frame written by [`encode`] into the `count` words `words` (all checks
/// first: on error `words` are unchanged).
pub(crate) fn decode<'w, W: Word + 'w>(
    bytes: &[u8],
    kind: SketchKind,
    seed: &Seed,
    params: [u32; 4],
    words: impl IntoIterator<Item = &'w mut W>,
    count: usize,
) -> Result<(), DecodeError> {
    let frame = Frame::parse(bytes)?;
    let payload = frame.checked_payload(kind, params, seed, Some(count * W::BYTES))?;
    for (dst, src) in words.into_iter().zip(payload.chunks_exact(W::BYTES)) {
        *dst = W::from_le(src);
    }
    Ok(())
}

/// Merges `other` into `words`, `op` word by word, if the two filters' seeds are
/// equal (`self` is unchanged otherwise).
///
/// # Errors
/// [`MergeError::SeedMismatch`] if `seeds` differ.
pub(crate) fn merge<'w, W: Copy + 'w>(
    seeds: [&Seed; 2],
    words: impl IntoIterator<Item = &'w mut W>,
    other: impl IntoIterator<Item = &'w W>,
    op: impl Fn(W, W) -> W,
) -> Result<(), MergeError> {
    if seeds[0] != seeds[1] {
        return Err(MergeError::SeedMismatch);
    }
    for (x, &y) in words.into_iter().zip(other) {
        *x = op(*x, y);
    }
    Ok(())
}
