//! The register pool: `S` stripes of `2W` four-bit registers, two per byte, read
//! through a runtime-sized view so that the typed sketch and a frame's bytes share
//! one implementation.

use crate::digest::{column, MAX_RANK};

/// Register values 0 ..= 15: the length of a register histogram.
pub(crate) const LEVELS: usize = MAX_RANK as usize + 1;

/// A register histogram: `h[v]` registers hold value `v`.
pub(crate) type Histogram = [u32; LEVELS];

/// A pool's bytes: `stripes` stripes of `width` bytes each (stripe-major), register
/// `2b` of a stripe in the low nibble of its byte `b`, register `2b + 1` in the high
/// nibble.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolRef<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) stripes: usize,
    pub(crate) width: usize,
}

impl PoolRef<'_> {
    /// Registers per stripe.
    pub(crate) const fn registers_per_stripe(&self) -> usize {
        2 * self.width
    }

    /// The histogram of every register.
    pub(crate) fn histogram(&self) -> Histogram {
        let mut h = [0u32; LEVELS];
        for &b in self.bytes {
            h[usize::from(b & 0xf)] += 1;
            h[usize::from(b >> 4)] += 1;
        }
        h
    }

    /// Register `col` of stripe `j` (0 outside the pool).
    #[cfg(test)]
    pub(crate) fn get(&self, j: usize, col: usize) -> u8 {
        let byte = self
            .bytes
            .get(j * self.width + col / 2)
            .copied()
            .unwrap_or(0);
        (byte >> (4 * (col & 1))) & 0xf
    }

    /// The histogram of the key's `S` registers (one per stripe), for its tag.
    pub(crate) fn key_histogram(&self, tag: u32) -> Histogram {
        let mut h = [0u32; LEVELS];
        let n = self.registers_per_stripe();
        for (j, stripe) in self.bytes.chunks_exact(self.width).enumerate() {
            let col = column(tag, j, n);
            let byte = stripe.get(col >> 1).copied().unwrap_or(0);
            h[usize::from((byte >> (4 * (col & 1))) & 0xf)] += 1;
        }
        h
    }
}

/// Raises register `col` of a stripe's bytes to `rank` if it is lower.
#[inline(always)]
pub(crate) fn raise(stripe: &mut [u8], col: usize, rank: u8) {
    if let Some(b) = stripe.get_mut(col >> 1) {
        let shift = 4 * (col & 1) as u32;
        let cur = (*b >> shift) & 0xf;
        if rank > cur {
            *b = (*b & !(0xf << shift)) | (rank << shift);
        }
    }
}

/// [`raise`] that returns the register's value before (the HIP counters of
/// [`HipSpreaders`](crate::HipSpreaders) need it; the plain sketch's path keeps
/// [`raise`]).
#[inline(always)]
pub(crate) fn raise_observed(stripe: &mut [u8], col: usize, rank: u8) -> u8 {
    let Some(b) = stripe.get_mut(col >> 1) else {
        return rank;
    };
    let shift = 4 * (col & 1) as u32;
    let cur = (*b >> shift) & 0xf;
    if rank > cur {
        *b = (*b & !(0xf << shift)) | (rank << shift);
    }
    cur
}

/// Register `col` of a stripe's bytes (0 outside it).
#[inline(always)]
pub(crate) fn register(stripe: &[u8], col: usize) -> u8 {
    stripe
        .get(col >> 1)
        .map_or(0, |&b| (b >> (4 * (col & 1))) & 0xf)
}

/// Register-wise maximum of two pool bytes (the merge of two pools).
#[inline]
pub(crate) const fn max_nibbles(a: u8, b: u8) -> u8 {
    let lo = if a & 0xf > b & 0xf { a & 0xf } else { b & 0xf };
    let hi = if a >> 4 > b >> 4 { a >> 4 } else { b >> 4 };
    lo | hi << 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raise_keeps_the_maximum_and_the_other_nibble() {
        let mut s = [0u8; 2];
        raise(&mut s, 1, 5);
        raise(&mut s, 1, 3);
        raise(&mut s, 0, 7);
        raise(&mut s, 3, 15);
        raise(&mut s, 9, 15); // outside: ignored
        assert_eq!(s, [0x57, 0xf0]);
        let p = PoolRef {
            bytes: &s,
            stripes: 1,
            width: 2,
        };
        assert_eq!(
            [p.get(0, 0), p.get(0, 1), p.get(0, 2), p.get(0, 3)],
            [7, 5, 0, 15]
        );
        let h = p.histogram();
        assert_eq!((h[0], h[5], h[7], h[15]), (1, 1, 1, 1));
    }

    #[test]
    fn nibble_max() {
        assert_eq!(max_nibbles(0x1f, 0xf1), 0xff);
        assert_eq!(max_nibbles(0x23, 0x32), 0x33);
    }
}
