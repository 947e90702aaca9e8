//! The fingerprint widths [`Fingerprint`] (`u8`, `u16`) of the cuckoo and binary fuse
//! filters.

use core::fmt;
use core::ops::BitXor;

/// A fingerprint width: `u8` (8 bits) or `u16` (16 bits). Sealed.
pub trait Fingerprint:
    Copy + Eq + Default + fmt::Debug + BitXor<Output = Self> + sealed::Sealed
{
    /// Bits per fingerprint.
    const BITS: u32;
    /// Bytes per fingerprint on the wire.
    const BYTES: usize;
    /// The non-zero fingerprint of a digest (0 marks an empty slot).
    fn from_digest(d: u64) -> Self;
    /// As `u64`.
    fn to_u64(self) -> u64;
    /// From the low bits of a `u64` (wire decoding).
    fn from_u64(v: u64) -> Self;
    /// The `i`-th fingerprint of `bytes`, [`BYTES`](Self::BYTES) little-endian bytes
    /// each (any alignment); 0 if `bytes` has no `i`-th one.
    fn load(bytes: &[u8], i: usize) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

impl Fingerprint for u8 {
    const BITS: u32 = 8;
    const BYTES: usize = 1;
    #[inline]
    fn from_digest(d: u64) -> Self {
        ((d >> 32) as u8).max(1)
    }
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(v: u64) -> Self {
        v as u8
    }
    #[inline(always)]
    fn load(bytes: &[u8], i: usize) -> Self {
        bytes.get(i).copied().unwrap_or(0)
    }
}

impl Fingerprint for u16 {
    const BITS: u32 = 16;
    const BYTES: usize = 2;
    #[inline]
    fn from_digest(d: u64) -> Self {
        ((d >> 32) as u16).max(1)
    }
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(v: u64) -> Self {
        v as u16
    }
    #[inline(always)]
    fn load(bytes: &[u8], i: usize) -> Self {
        bytes
            .as_chunks::<2>()
            .0
            .get(i)
            .map_or(0, |p| u16::from_le_bytes(*p))
    }
}
