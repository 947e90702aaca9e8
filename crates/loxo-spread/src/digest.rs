//! What one pair digest decides: a register (its stripe and rank), a cell and a
//! priority, and where a key's register lives in each stripe.
//!
//! A 64-bit pair digest `p` is cut into independent fields (each a uniform draw when
//! `p` is a keyed digest):
//!
//! | bits | field |
//! |---|---|
//! | 0 ..= 13 | rank: `1 +` trailing zeros, capped at 15 (`P(rank ≥ v) = 2^−(v−1)`) |
//! | 14 ..= 13 + log₂ S | stripe `j`: which of the key's `S` virtual registers |
//! | 32 ..= 63 | `(p >> 32)·C = cell·2³² + priority`: the cell, and a priority uniform given the cell |
//!
//! The key's register in stripe `j` is column [`column`]`(tag, j)` of that stripe,
//! `tag` being the high 32 bits of the key's digest.

use loxo_core::{mix64, KeyHash};

/// Bits of the digest the rank is read from: register values 0 ..= 15 fit a nibble.
pub(crate) const RANK_BITS: u32 = 14;
/// The largest register value (rank bits all zero).
pub(crate) const MAX_RANK: u8 = RANK_BITS as u8 + 1;

/// Odd multiplier that makes the pair digest asymmetric in (key, element): the pair
/// `(a, b)` and the pair `(b, a)` get unrelated digests even when keys and elements
/// are hashed by the same function (addresses in both roles).
const PAIR_MUL: u64 = 0xd6e8_feb8_6659_fd93;

/// The pair digest of a key digest and an element digest: `mix64(kh·c ⊕ eh)`.
///
/// Both inputs are keyed digests; `mix64` is a bijection, so distinct pairs get
/// distinct digests unless `kh·c ⊕ eh` collides (probability 2⁻⁶⁴ per two pairs).
#[inline(always)]
pub(crate) const fn pair(key: KeyHash, element: KeyHash) -> u64 {
    mix64(key.get().wrapping_mul(PAIR_MUL) ^ element.get())
}

/// The register value a pair offers: `1 +` trailing zeros of its low 14 bits, 15 when
/// all are zero.
#[inline(always)]
pub(crate) const fn rank(p: u64) -> u8 {
    ((p as u32) | (1 << RANK_BITS)).trailing_zeros() as u8 + 1
}

/// The stripe (virtual register index) of a pair, for `S` a power of two.
#[inline(always)]
pub(crate) const fn stripe(p: u64, s: usize) -> usize {
    ((p >> RANK_BITS) as usize) & (s - 1)
}

/// The cell of a pair among `c` and its priority: `(p >> 32)·c = cell·2³² + priority`.
///
/// One 32×32→64 multiply gives both; given the cell, the priority is uniform over
/// `[0, 2³²)` on a lattice of step `c`.
#[inline(always)]
pub(crate) const fn cell(p: u64, c: usize) -> (usize, u32) {
    let x = (p >> 32) * c as u64;
    ((x >> 32) as usize, x as u32)
}

/// Whether `(cell, priority)` is a pair [`cell`] can produce for `c` cells:
/// `cell·2³² + priority` is a multiple of `c` (a decoder's consistency check).
pub(crate) const fn cell_consistent(cell: usize, priority: u32, c: usize) -> bool {
    cell < c && (((cell as u64) << 32) | priority as u64).is_multiple_of(c as u64)
}

/// The tag of a key digest: its high 32 bits (the cells store it; a key's registers
/// are found from it).
#[inline(always)]
pub(crate) const fn tag(key: KeyHash) -> u32 {
    (key.get() >> 32) as u32
}

/// The column of a key's register in stripe `j` of `width` registers:
/// `reduce(fmix32(tag ⊕ j·φ), width)`, with MurmurHash3's 32-bit finalizer (five
/// single-cycle operations and two multiplies on a Cortex-M4).
///
/// Each key has one register per stripe, so its `S` registers are distinct; two
/// keys share a stripe's register with probability `1/width`, independently per
/// stripe (the finalizer is a bijection, `tag ⊕ j·φ` differs for different tags).
#[inline(always)]
pub(crate) const fn column(tag: u32, j: usize, width: usize) -> usize {
    let mut x = tag ^ (j as u32).wrapping_mul(0x9e37_79b9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^= x >> 16;
    ((x as u64 * width as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_is_geometric_and_capped() {
        assert_eq!(rank(1), 1);
        assert_eq!(rank(2), 2);
        assert_eq!(rank(0), MAX_RANK);
        assert_eq!(rank(1 << 14), MAX_RANK); // bits above the rank field do not count
        assert_eq!(rank(1 << 13), 14);
    }

    #[test]
    fn fields_stay_in_range() {
        for i in 0..10_000u64 {
            let p = mix64(i + 1);
            assert!(stripe(p, 1024) < 1024);
            let (c, pri) = cell(p, 777);
            assert!(c < 777);
            assert!(cell_consistent(c, pri, 777));
            assert!(column(p as u32, 5, 76) < 76);
        }
        assert!(!cell_consistent(3, 1, 4));
        assert!(!cell_consistent(4, 0, 4));
        assert_eq!(cell(u64::MAX, 10).0, 9);
    }

    #[test]
    fn pairs_are_asymmetric() {
        let (a, b) = (KeyHash::from_u64(11), KeyHash::from_u64(22));
        assert_ne!(pair(a, b), pair(b, a));
        assert_ne!(pair(a, a), pair(b, b));
    }
}
