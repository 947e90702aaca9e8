//! The loxo wire format: a versioned, checksummed envelope around every sketch.
//!
//! Every serialized loxo sketch is one **frame** (the full contract, with golden
//! files, is `docs/format.md` at the repository root):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | magic `"LOXO"` |
//! | 4 | 2 | format version, `u16` LE ([`VERSION`]) |
//! | 6 | 1 | sketch kind ([`SketchKind`]) |
//! | 7 | 1 | flags (kind-specific, e.g. a sparse payload) |
//! | 8 | 8 | seed fingerprint, `u64` LE ([`Seed::fingerprint`](crate::Seed::fingerprint)) |
//! | 16 | 16 | four kind-specific parameters, `u32` LE each |
//! | 32 | 4 | payload length `n`, `u32` LE |
//! | 36 | n | payload (kind-specific, little-endian) |
//! | 36 + n | 4 | CRC-32 (ISO-HDLC, as zlib) of bytes `0 .. 36 + n`, `u32` LE |
//!
//! [`Encoder`] writes a frame into a caller's buffer without a temporary copy, and
//! [`Frame::parse`] validates one (magic, version, length, checksum, kind) before a
//! family crate reads its payload with a bounds-checked [`Reader`]. Nothing here
//! allocates or panics on any input.
//!
//! ```
//! use loxo_core::wire::{Encoder, Frame, Header, SketchKind};
//! use loxo_core::Seed;
//!
//! let seed = Seed::new(1, 2);
//! let header = Header::new(SketchKind::Hll, seed.fingerprint(), [14, 0, 0, 0], 3);
//! let mut buf = [0u8; 64];
//! let mut enc = Encoder::new(&mut buf, &header)?;
//! enc.put(&[7, 8, 9]);
//! let len = enc.finish();
//! assert_eq!(len, loxo_core::wire::frame_len(3));
//!
//! let frame = Frame::parse(&buf[..len])?;
//! assert_eq!(frame.header().kind, SketchKind::Hll);
//! assert_eq!(frame.payload(), &[7, 8, 9]);
//! # Ok::<(), Box<dyn core::error::Error>>(())
//! ```

use crc::{Crc, Table, CRC_32_ISO_HDLC};

use crate::{DecodeError, EncodeError};

/// The four bytes every loxo frame starts with.
pub const MAGIC: [u8; 4] = *b"LOXO";
/// The format version this crate writes. It reads every version from 1 up to this
/// one, except for kinds whose payload changed meaning since
/// ([`SketchKind::since_version`]).
pub const VERSION: u16 = 2;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 36;
/// Bytes after the payload (the CRC-32).
pub const TRAILER_LEN: usize = 4;

/// The frames' CRC-32, slice-by-16 (16 KiB of tables in flash): a device checksums a
/// 12 KiB sketch frame at each epoch end, and on a Cortex-M4 the one-table byte loop
/// took about 55 000 instructions of it — the longest stretch without reading a
/// frame (`firmware/README.md`).
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISO_HDLC);

/// Total frame length for a payload of `payload_len` bytes.
#[must_use]
pub const fn frame_len(payload_len: usize) -> usize {
    HEADER_LEN + payload_len + TRAILER_LEN
}

/// Which sketch a frame holds. The numeric values are part of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
#[repr(u8)]
pub enum SketchKind {
    /// Classic Bloom filter.
    Bloom = 1,
    /// Cache-line blocked Bloom filter.
    BlockedBloom = 2,
    /// Counting Bloom filter (4-bit counters).
    CountingBloom = 3,
    /// Cuckoo filter.
    Cuckoo = 4,
    /// HyperLogLog.
    Hll = 5,
    /// Count-Min sketch, plain (linear, mergeable) update.
    Cms = 6,
    /// Count-Min sketch, conservative update.
    CmsConservative = 7,
    /// Count-Sketch.
    CountSketch = 8,
    /// Space-Saving top-k.
    SpaceSaving = 9,
    /// HeavyKeeper top-k.
    HeavyKeeper = 10,
    /// Register-blocked Bloom filter (one 64-bit word per key).
    RegisterBloom = 11,
    /// UltraLogLog (one byte per register).
    Ull = 12,
    /// Binary fuse filter (static, 3-wise, 8- or 16-bit fingerprints).
    BinaryFuse = 13,
    /// Theta sketch (QuickSelect; union, intersection, A-not-B).
    Theta = 14,
    /// Spread sketch: keys with many distinct elements (virtual HyperLogLog
    /// registers and sampled candidate keys).
    Spread = 15,
}

impl SketchKind {
    /// The kind with wire value `v`, if any.
    #[must_use]
    pub const fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            1 => Self::Bloom,
            2 => Self::BlockedBloom,
            3 => Self::CountingBloom,
            4 => Self::Cuckoo,
            5 => Self::Hll,
            6 => Self::Cms,
            7 => Self::CmsConservative,
            8 => Self::CountSketch,
            9 => Self::SpaceSaving,
            10 => Self::HeavyKeeper,
            11 => Self::RegisterBloom,
            12 => Self::Ull,
            13 => Self::BinaryFuse,
            14 => Self::Theta,
            15 => Self::Spread,
            _ => return None,
        })
    }

    /// The oldest format version whose frames of this kind this crate can read: the
    /// version in which the kind's payload last changed meaning.
    ///
    /// Version 2 changed how Count-Min and Count-Sketch derive row indices
    /// (independent per-row functions instead of double hashing) and where the
    /// blocked Bloom filter puts a key's bits; a version-1 frame of those kinds would
    /// decode into wrong cells, so it is refused with
    /// [`DecodeError::UnsupportedVersion`]. UltraLogLog, the binary fuse filter and
    /// the Theta sketch and the spread sketch were introduced in version 2: there are
    /// no version-1 frames of them. Every other kind still reads version 1.
    #[must_use]
    pub const fn since_version(self) -> u16 {
        match self {
            Self::Cms
            | Self::CmsConservative
            | Self::CountSketch
            | Self::BlockedBloom
            | Self::Ull
            | Self::BinaryFuse
            | Self::Theta
            | Self::Spread => 2,
            _ => 1,
        }
    }

    /// Its lower-case name, as tools print it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bloom => "bloom",
            Self::BlockedBloom => "blocked-bloom",
            Self::CountingBloom => "counting-bloom",
            Self::Cuckoo => "cuckoo",
            Self::Hll => "hll",
            Self::Cms => "cms",
            Self::CmsConservative => "cms-conservative",
            Self::CountSketch => "count-sketch",
            Self::SpaceSaving => "space-saving",
            Self::HeavyKeeper => "heavy-keeper",
            Self::RegisterBloom => "register-bloom",
            Self::Ull => "ull",
            Self::BinaryFuse => "binary-fuse",
            Self::Theta => "theta",
            Self::Spread => "spread",
        }
    }
}

/// The fixed 36-byte header of a frame (everything but magic and version).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Header {
    /// The sketch kind.
    pub kind: SketchKind,
    /// Kind-specific flags.
    pub flags: u8,
    /// [`Seed::fingerprint`](crate::Seed::fingerprint) of the sketch's seed.
    pub seed_fingerprint: u64,
    /// Kind-specific parameters (precision, width, depth, counter width…).
    pub params: [u32; 4],
    /// Length of the payload in bytes.
    pub payload_len: u32,
}

impl Header {
    /// A header with no flags.
    #[must_use]
    pub const fn new(
        kind: SketchKind,
        seed_fingerprint: u64,
        params: [u32; 4],
        payload_len: u32,
    ) -> Self {
        Self {
            kind,
            flags: 0,
            seed_fingerprint,
            params,
            payload_len,
        }
    }

    /// Checks that the header describes the sketch a decoder expects.
    ///
    /// # Errors
    /// [`DecodeError::WrongKind`], [`DecodeError::ParameterMismatch`].
    pub fn expect(&self, kind: SketchKind, params: [u32; 4]) -> Result<(), DecodeError> {
        if self.kind != kind {
            return Err(DecodeError::WrongKind {
                expected: kind as u8,
                found: self.kind as u8,
            });
        }
        DecodeError::check_params(params, self.params)
    }

    fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        let mut w = Cursor {
            buf: &mut out,
            pos: 0,
        };
        w.put(&MAGIC);
        w.put(&VERSION.to_le_bytes());
        w.put(&[self.kind as u8, self.flags]);
        w.put(&self.seed_fingerprint.to_le_bytes());
        for p in self.params {
            w.put(&p.to_le_bytes());
        }
        w.put(&self.payload_len.to_le_bytes());
        out
    }
}

/// Writes one frame into a caller's buffer: header, then the payload through
/// [`put`](Encoder::put) calls, then the CRC in [`finish`](Encoder::finish).
#[derive(Debug)]
pub struct Encoder<'a> {
    cursor: Cursor<'a>,
    end: usize,
}

impl<'a> Encoder<'a> {
    /// Starts a frame for `header` in `buf`.
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] if `buf` cannot hold the whole frame; nothing
    /// is written then.
    pub fn new(buf: &'a mut [u8], header: &Header) -> Result<Self, EncodeError> {
        let needed = frame_len(header.payload_len as usize);
        let Some(frame) = buf.get_mut(..needed) else {
            return Err(EncodeError::BufferTooSmall { needed });
        };
        let mut cursor = Cursor { buf: frame, pos: 0 };
        cursor.put(&header.to_bytes());
        Ok(Self {
            cursor,
            end: needed - TRAILER_LEN,
        })
    }

    /// Appends payload bytes. Bytes beyond the declared payload length are dropped
    /// (a bug in the caller, caught by `debug_assert` and by the round-trip tests).
    pub fn put(&mut self, bytes: &[u8]) {
        debug_assert!(self.cursor.pos + bytes.len() <= self.end, "payload overrun");
        let room = self.end.saturating_sub(self.cursor.pos);
        self.cursor.put(bytes.get(..room).unwrap_or(bytes));
    }

    /// Appends `len` payload bytes that `fill` writes in place, in the frame's own
    /// buffer: for payloads a family arranges in the output itself (a Theta
    /// sketch's values, sorted there without scratch memory). `fill` gets fewer
    /// bytes only when the declared payload length is exceeded (a caller bug, as
    /// for [`put`](Self::put)).
    pub fn put_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) {
        debug_assert!(self.cursor.pos + len <= self.end, "payload overrun");
        let n = len.min(self.end.saturating_sub(self.cursor.pos));
        let start = self.cursor.pos;
        if let Some(dst) = self.cursor.buf.get_mut(start..start + n) {
            fill(dst);
            self.cursor.pos = start + n;
        }
    }

    /// Appends a `u8`.
    pub fn put_u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    /// Appends a little-endian `u16`.
    pub fn put_u16(&mut self, v: u16) {
        self.put(&v.to_le_bytes());
    }

    /// Appends a little-endian `u32`.
    pub fn put_u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    /// Appends a little-endian `u64`.
    pub fn put_u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    /// Writes the CRC and returns the frame length.
    ///
    /// A payload shorter than declared is zero-filled (again a caller bug, caught by
    /// `debug_assert`), so the frame is always well-formed.
    pub fn finish(mut self) -> usize {
        let n = self.pad_and_trailer();
        if let Some(frame) = self.cursor.buf.get_mut(..n) {
            let _ = seal(frame);
        }
        n
    }

    /// [`finish`](Self::finish) without the CRC: the trailer is zeroed and the frame
    /// is not valid until [`seal`] writes it. For a device that splits an encode over
    /// two slices of its time (the CRC of a 12 KiB sketch is the second). Returns the
    /// frame length.
    pub fn finish_unsealed(mut self) -> usize {
        self.pad_and_trailer()
    }

    /// Zero-fills a payload shorter than declared (a caller bug, caught by
    /// `debug_assert`) and the trailer; the frame length.
    fn pad_and_trailer(&mut self) -> usize {
        debug_assert_eq!(self.cursor.pos, self.end, "payload shorter than declared");
        while self.cursor.pos < self.end {
            self.cursor.put(&[0]);
        }
        self.cursor.put(&[0; TRAILER_LEN]);
        self.cursor.pos
    }
}

/// Writes the CRC-32 trailer of `frame` (a whole frame: header, payload and the 4
/// trailer bytes), as [`Encoder::finish`] does: what completes a frame written by
/// [`Encoder::finish_unsealed`] or a sketch's `encode_unsealed_into`.
///
/// ```
/// use loxo_core::wire::{seal, HEADER_LEN, TRAILER_LEN};
/// let mut frame = [0u8; HEADER_LEN + 4 + TRAILER_LEN];
/// seal(&mut frame)?;
/// assert_ne!(frame[HEADER_LEN + 4..], [0; 4]);
/// # Ok::<(), loxo_core::EncodeError>(())
/// ```
///
/// # Errors
/// [`EncodeError::BufferTooSmall`] when `frame` is shorter than a trailer.
pub fn seal(frame: &mut [u8]) -> Result<(), EncodeError> {
    let body_len = frame
        .len()
        .checked_sub(TRAILER_LEN)
        .ok_or(EncodeError::BufferTooSmall {
            needed: TRAILER_LEN,
        })?;
    let (body, trailer) = frame.split_at_mut(body_len);
    trailer.copy_from_slice(&CRC32.checksum(body).to_le_bytes());
    Ok(())
}

/// A validated frame: header plus a payload whose checksum matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    header: Header,
    payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Validates `bytes` as exactly one frame.
    ///
    /// Checks, in order: length of the fixed header, magic, version (1 ..= [`VERSION`]),
    /// that the declared payload fits, no trailing bytes, the CRC, a known kind, and
    /// that the version is not older than the kind's [`since_version`](SketchKind::since_version).
    ///
    /// # Errors
    /// [`DecodeError::Truncated`], [`DecodeError::BadMagic`],
    /// [`DecodeError::UnsupportedVersion`], [`DecodeError::TrailingBytes`],
    /// [`DecodeError::BadChecksum`], [`DecodeError::WrongKind`] (unknown kind).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let magic = r.take(4)?;
        if magic != MAGIC {
            return Err(DecodeError::bad_magic(magic));
        }
        let version = r.u16()?;
        if version == 0 || version > VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        let kind = r.u8()?;
        let flags = r.u8()?;
        let seed_fingerprint = r.u64()?;
        let params = [r.u32()?, r.u32()?, r.u32()?, r.u32()?];
        let payload_len = r.u32()?;
        let payload = r.take(payload_len as usize)?;
        let crc = r.u32()?;
        r.finish()?;
        let body = bytes
            .get(..HEADER_LEN + payload.len())
            .ok_or(DecodeError::Truncated)?;
        if CRC32.checksum(body) != crc {
            return Err(DecodeError::BadChecksum);
        }
        let kind = SketchKind::from_u8(kind).ok_or(DecodeError::WrongKind {
            expected: 0,
            found: kind,
        })?;
        if version < kind.since_version() {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        Ok(Self {
            header: Header {
                kind,
                flags,
                seed_fingerprint,
                params,
                payload_len,
            },
            payload,
        })
    }

    /// The header.
    #[must_use]
    pub const fn header(&self) -> &Header {
        &self.header
    }

    /// The payload bytes (checksum already verified).
    #[must_use]
    pub const fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// The checks every flag-less family decoder makes, in the documented order:
    /// kind and parameters ([`Header::expect`]), the seed fingerprint, zero flags,
    /// and a payload of exactly `len` bytes (when `len` is `Some`). Returns the
    /// payload.
    ///
    /// # Errors
    /// [`DecodeError::WrongKind`], [`DecodeError::ParameterMismatch`],
    /// [`DecodeError::SeedMismatch`], [`DecodeError::InvalidValue`] (flags),
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] (length).
    pub fn checked_payload(
        &self,
        kind: SketchKind,
        params: [u32; 4],
        seed: &crate::Seed,
        len: Option<usize>,
    ) -> Result<&'a [u8], DecodeError> {
        self.header.expect(kind, params)?;
        if self.header.seed_fingerprint != seed.fingerprint() {
            return Err(DecodeError::SeedMismatch {
                expected: seed.fingerprint(),
                found: self.header.seed_fingerprint,
            });
        }
        if self.header.flags != 0 {
            return Err(DecodeError::InvalidValue);
        }
        let Some(len) = len else {
            return Ok(self.payload);
        };
        let mut r = self.reader();
        let p = r.take(len)?;
        r.finish()?;
        Ok(p)
    }

    /// A bounds-checked reader over the payload.
    #[must_use]
    pub const fn reader(&self) -> Reader<'a> {
        Reader::new(self.payload)
    }
}

/// A bounds-checked little-endian reader: every read returns
/// [`DecodeError::Truncated`] instead of reading past the end.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    #[must_use]
    pub const fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Bytes not read yet.
    #[must_use]
    pub const fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] if fewer remain.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.bytes.len() {
            return Err(DecodeError::Truncated);
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    /// The next `N` bytes as an array.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] if fewer remain.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a `u8`.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a little-endian `u16`.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.array().map(u16::from_le_bytes)
    }

    /// Reads a little-endian `u32`.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }

    /// Reads a little-endian `u64`.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`].
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_le_bytes)
    }

    /// Succeeds only if every byte was read.
    ///
    /// # Errors
    /// [`DecodeError::TrailingBytes`].
    pub fn finish(self) -> Result<(), DecodeError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes)
        }
    }
}

/// Forward-only writer over a buffer already checked to be long enough.
#[derive(Debug)]
struct Cursor<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if let Some(dst) = self.buf.get_mut(self.pos..end) {
            dst.copy_from_slice(bytes);
            self.pos = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(buf: &mut [u8]) -> usize {
        let mut h = Header::new(SketchKind::Cms, 0x1122_3344_5566_7788, [272, 5, 4, 0], 8);
        h.flags = 0x80;
        let mut enc = Encoder::new(buf, &h).unwrap_or_else(|_| unreachable!());
        enc.put_u32(0xdead_beef);
        enc.put_u16(7);
        enc.put_u8(1);
        enc.put_u8(2);
        enc.finish()
    }

    #[test]
    fn round_trip() {
        let mut buf = [0u8; 64];
        let n = sample(&mut buf);
        assert_eq!(n, 48);
        let f = Frame::parse(&buf[..n]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.header().kind, SketchKind::Cms);
        assert_eq!(f.header().flags, 0x80);
        assert_eq!(f.header().params, [272, 5, 4, 0]);
        let mut r = f.reader();
        assert_eq!(r.u32(), Ok(0xdead_beef));
        assert_eq!(r.u16(), Ok(7));
        assert_eq!(r.take(2), Ok(&[1u8, 2][..]));
        assert_eq!(r.clone().u8(), Err(DecodeError::Truncated));
        assert_eq!(r.finish(), Ok(()));
    }

    #[test]
    fn put_with_writes_in_place() {
        let h = Header::new(SketchKind::Theta, 1, [32, 63, 0, 0], 6);
        let mut buf = [0u8; 64];
        let mut enc = Encoder::new(&mut buf, &h).unwrap_or_else(|_| unreachable!());
        enc.put_u16(0x0201);
        enc.put_with(4, |dst| {
            assert_eq!(dst.len(), 4);
            dst.copy_from_slice(&[3, 4, 5, 6]);
        });
        let n = enc.finish();
        let f = Frame::parse(&buf[..n]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.payload(), &[1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn small_buffer_is_refused() {
        let h = Header::new(SketchKind::Hll, 0, [14, 0, 0, 0], 100);
        let mut buf = [0u8; 139];
        assert_eq!(
            Encoder::new(&mut buf, &h).err(),
            Some(EncodeError::BufferTooSmall { needed: 140 })
        );
    }

    #[test]
    fn every_corruption_is_an_error() {
        let mut buf = [0u8; 64];
        let n = sample(&mut buf);
        let good = buf;
        // Every truncation.
        for len in 0..n {
            assert_eq!(
                Frame::parse(&good[..len]).err(),
                Some(DecodeError::Truncated),
                "{len}"
            );
        }
        // Trailing byte.
        assert_eq!(
            Frame::parse(&good[..=n]).err(),
            Some(DecodeError::TrailingBytes)
        );
        // Magic, version.
        let mut b = good;
        b[0] ^= 1;
        assert_eq!(
            Frame::parse(&b[..n]).err(),
            Some(DecodeError::BadMagic {
                found: [b'L' ^ 1, b'O', b'X', b'O']
            })
        );

        let mut b = good;
        b[4] = 9;
        assert_eq!(
            Frame::parse(&b[..n]).err(),
            Some(DecodeError::UnsupportedVersion(9))
        );
        // Every single-bit flip past the version is caught by the CRC (or length).
        for i in 6..n {
            for bit in 0..8 {
                let mut b = good;
                b[i] ^= 1 << bit;
                assert!(Frame::parse(&b[..n]).is_err(), "byte {i} bit {bit}");
            }
        }
    }

    #[test]
    fn unknown_kind_with_valid_crc_is_wrong_kind() {
        let mut buf = [0u8; 64];
        let n = sample(&mut buf);
        buf[6] = 200;
        let crc = CRC32.checksum(&buf[..n - 4]);
        buf[n - 4..n].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Frame::parse(&buf[..n]).err(),
            Some(DecodeError::WrongKind {
                expected: 0,
                found: 200
            })
        );
    }

    /// Re-signs `buf[..n]` after editing its header.
    fn resign(buf: &mut [u8], n: usize) {
        let crc = CRC32.checksum(&buf[..n - 4]);
        buf[n - 4..n].copy_from_slice(&crc.to_le_bytes());
    }

    #[test]
    fn versions_one_and_two_are_read_where_the_kind_allows() {
        let mut buf = [0u8; 64];
        let n = sample(&mut buf);
        assert_eq!(&buf[4..6], &[2, 0]); // the encoder writes version 2
                                         // Version 1 of a kind whose meaning changed in 2 (Count-Min) is refused...
        buf[4] = 1;
        resign(&mut buf, n);
        assert_eq!(
            Frame::parse(&buf[..n]).err(),
            Some(DecodeError::UnsupportedVersion(1))
        );
        // ... version 1 of an unchanged kind (HyperLogLog) is read.
        buf[6] = SketchKind::Hll as u8;
        resign(&mut buf, n);
        assert_eq!(
            Frame::parse(&buf[..n]).map(|f| f.header().kind),
            Ok(SketchKind::Hll)
        );
        // Versions 0 and 3 are nobody's.
        for v in [0u8, 3] {
            buf[4] = v;
            resign(&mut buf, n);
            assert_eq!(
                Frame::parse(&buf[..n]).err(),
                Some(DecodeError::UnsupportedVersion(u16::from(v)))
            );
        }
        let changed: [SketchKind; 8] = [
            SketchKind::Cms,
            SketchKind::CmsConservative,
            SketchKind::CountSketch,
            SketchKind::BlockedBloom,
            SketchKind::Ull,
            SketchKind::BinaryFuse,
            SketchKind::Theta,
            SketchKind::Spread,
        ];
        for v in 0..=255u8 {
            if let Some(k) = SketchKind::from_u8(v) {
                let since = if changed.contains(&k) { 2 } else { 1 };
                assert_eq!(k.since_version(), since, "{}", k.name());
            }
        }
    }

    #[test]
    fn kinds_round_trip() {
        for v in 0..=255u8 {
            if let Some(k) = SketchKind::from_u8(v) {
                assert_eq!(k as u8, v);
                assert!(!k.name().is_empty());
            }
        }
    }
}
