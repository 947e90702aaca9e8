//! 6-bit register packing: four registers in every three bytes.
//!
//! Register `i` lives in the 3-byte group `g = i / 4` (bytes `3g .. 3g + 3`). The
//! group is read as a 24-bit little-endian word `w`, and register `i` is bits
//! `6·(i mod 4) .. 6·(i mod 4) + 6` of `w`. Equivalently: the registers form one
//! little-endian bit stream, register `i` at bit offset `6·i` (the layout Redis
//! uses for its dense HyperLogLog, without Redis's extra trailing byte).
//!
//! Groups keep every access inside three bytes that are known to exist, so a
//! register never straddles the end of the array.

use core::iter::FusedIterator;

/// Bits per register.
pub(crate) const BITS: u32 = 6;
/// Largest value a 6-bit register can hold.
const MASK: u32 = (1 << BITS) - 1;

/// Reads register `i` from packed storage; 0 if `i` is out of range.
#[inline(always)]
pub(crate) fn get(bytes: &[u8], i: usize) -> u8 {
    let g = (i >> 2) * 3;
    match bytes.get(g..g + 3) {
        Some(&[b0, b1, b2]) => {
            let w = u32::from(b0) | u32::from(b1) << 8 | u32::from(b2) << 16;
            ((w >> (BITS * (i as u32 & 3))) & MASK) as u8
        }
        _ => 0,
    }
}

/// Writes register `i` (value masked to 6 bits); no-op if `i` is out of range.
#[inline(always)]
pub(crate) fn set(bytes: &mut [u8], i: usize, value: u8) {
    let g = (i >> 2) * 3;
    if let Some([b0, b1, b2]) = bytes.get_mut(g..g + 3) {
        let shift = BITS * (i as u32 & 3);
        let w = u32::from(*b0) | u32::from(*b1) << 8 | u32::from(*b2) << 16;
        let w = (w & !(MASK << shift)) | ((u32::from(value) & MASK) << shift);
        *b0 = w as u8;
        *b1 = (w >> 8) as u8;
        *b2 = (w >> 16) as u8;
    }
}

/// Iterator over the registers of an [`Hll`](crate::Hll), in index order.
///
/// Created by [`Hll::registers`](crate::Hll::registers). Yields exactly `m = 2^P`
/// values, each in `0 ..= 64 − P + 1`.
#[derive(Clone, Debug)]
pub struct Registers<'a> {
    bytes: &'a [u8],
    next: usize,
    end: usize,
}

impl<'a> Registers<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            next: 0,
            end: bytes.len() / 3 * 4,
        }
    }
}

impl Iterator for Registers<'_> {
    type Item = u8;

    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.next < self.end {
            let r = get(self.bytes, self.next);
            self.next += 1;
            Some(r)
        } else {
            None
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for Registers<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<u8> {
        if self.next < self.end {
            self.end -= 1;
            Some(get(self.bytes, self.end))
        } else {
            None
        }
    }
}

impl ExactSizeIterator for Registers<'_> {}
impl FusedIterator for Registers<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_round_trip_without_touching_neighbours() {
        let mut bytes = [0u8; 12]; // 16 registers
        for i in 0..16 {
            set(&mut bytes, i, (i as u8 * 7 + 3) & 63);
        }
        for i in 0..16 {
            assert_eq!(get(&bytes, i), (i as u8 * 7 + 3) & 63);
        }
        set(&mut bytes, 5, 63);
        set(&mut bytes, 6, 0);
        for i in 0..16 {
            let want = match i {
                5 => 63,
                6 => 0,
                _ => (i as u8 * 7 + 3) & 63,
            };
            assert_eq!(get(&bytes, i), want);
        }
    }

    #[test]
    fn layout_is_a_little_endian_bit_stream() {
        let mut bytes = [0u8; 3];
        set(&mut bytes, 0, 0b11_1111);
        assert_eq!(bytes, [0b0011_1111, 0, 0]);
        set(&mut bytes, 1, 0b10_0001);
        // register 1 = bits 6..12: low two bits in byte 0, high four in byte 1
        assert_eq!(bytes, [0b0111_1111, 0b0000_1000, 0]);
        set(&mut bytes, 3, 0b10_0000);
        assert_eq!(bytes[2], 0b1000_0000);
    }

    #[test]
    fn out_of_range_is_harmless() {
        let mut bytes = [0xffu8; 3];
        assert_eq!(get(&bytes, 4), 0);
        set(&mut bytes, 4, 1);
        set(&mut bytes, usize::MAX, 1);
        assert_eq!(bytes, [0xff; 3]);
    }

    #[test]
    fn iterator_yields_every_register_both_ways() {
        let mut bytes = [0u8; 6];
        for i in 0..8 {
            set(&mut bytes, i, i as u8 + 1);
        }
        let it = Registers::new(&bytes);
        assert_eq!(it.len(), 8);
        assert!(it.clone().eq(1..=8));
        assert!(it.rev().eq((1..=8).rev()));
    }
}
