//! Independent per-row hash functions for multi-row sketches (Count-Min, Count-Sketch).

use core::fmt;

use crate::hash::{reduce, KeyHash};
use crate::seed::Seed;

/// Domain constant separating the row parameters from every other use of a seed.
const ROW_DOMAIN: u64 = 0x6c6f_786f_2072_6f77; // "loxo row"
/// SplitMix64's increment (2^64/φ).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijective mixer.
const fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One row's hash function: `v(h) = a·h + b mod 2^64` with `a` odd, index
/// `⌊(v >> 32)·n / 2^32⌋` ([`reduce`]).
///
/// Multiply-add-shift (Dietzfelbinger 1996): for any two **distinct** digests
/// `x ≠ y` and `(a, b)` drawn at random, the two values differ by `a·(x − y)`, which is
/// spread evenly over the odd multiples of `2^t` (`2^t` the largest power of two
/// dividing `x − y`), while `b` places `v(x)` uniformly. So `x` and `y` share one of
/// `n` buckets with probability `1/n + O(2^t/2^64)` — the `1/n` a Count-Min analysis
/// needs, for every pair of distinct digests (the correction is below `2^−32` unless
/// the digests agree on their low 32 bits, itself a `2^−32` event for keyed digests).
///
/// Memory: 16 bytes. Cost: one 64×64→64 multiply and one add (on a Cortex-M4: one
/// `UMULL`, two `MLA`, an `ADDS`/`ADC` pair), then the 32×32 multiply of [`reduce`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RowHash {
    mul: u64,
    add: u64,
}

impl RowHash {
    /// The row's full 64-bit value `a·h + b` of a digest.
    ///
    /// Its high 32 bits choose the bucket ([`index`](Self::index)); bit 31, which the
    /// bucket does not use, is free for a ±1 sign (Count-Sketch).
    #[inline(always)]
    #[must_use]
    pub const fn value(self, h: KeyHash) -> u64 {
        self.mul.wrapping_mul(h.get()).wrapping_add(self.add)
    }

    /// The digest's bucket in `[0, n)`.
    #[inline(always)]
    #[must_use]
    pub const fn index(self, h: KeyHash, n: u32) -> u32 {
        reduce(self.value(h), n)
    }
}

/// `D` independent [`RowHash`] functions derived from a [`Seed`]: the row indices of
/// a `D`-row sketch.
///
/// # Why not double hashing
///
/// A Bloom filter's `k` probes only need to be `k` distinct-enough positions in one
/// array: Kirsch and Mitzenmacher (2006) prove that `h1 + i·h2` gives the false-positive
/// rate of `k` independent hashes, and the measured rates match
/// ([`KeyHash::probes`]). A Count-Min or Count-Sketch guarantee instead *multiplies*
/// the rows' failure probabilities (`δ = e^−D` is `(1/e)^D`), which needs the rows'
/// collisions to be independent. With double hashing they are not: two keys whose
/// probe values `g_0`, `g_1` nearly coincide have nearly coinciding `g_i = g_0 +
/// i·(g_1 − g_0)` for every small `i`, so a pair colliding in rows 0 and 1 keeps
/// colliding (37 % in row 2 at `W = 2719`, instead of `1/W`), and the δ tail was
/// measured 29× above `e^−D`. Here each row has its own random `(a_i, b_i)`, so given
/// any collisions in other rows, row `i` still collides with probability `≈ 1/W`.
///
/// # Parameters
///
/// `(a_i, b_i)` are drawn from a SplitMix64 stream started from the 128-bit seed, so
/// they are as secret as the seed, equal for equal seeds (sketches stay mergeable) and
/// unrelated for different seeds. `Debug` does not print them.
///
/// Memory: `16·D` bytes. Cost per row: see [`RowHash`].
///
/// ```
/// use loxo_core::{RowHashes, Seed};
///
/// let seed = Seed::new(1, 2);
/// let rows = RowHashes::<4>::new(seed);
/// let h = seed.hash(b"flow");
/// let cols: Vec<u32> = rows.iter().map(|r| r.index(h, 272)).collect();
/// assert!(cols.iter().all(|&c| c < 272));
/// assert_eq!(rows, RowHashes::<4>::new(seed)); // a function of the seed
/// assert_ne!(rows, RowHashes::<4>::new(Seed::new(1, 3)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RowHashes<const D: usize> {
    rows: [RowHash; D],
}

impl<const D: usize> RowHashes<D> {
    /// The `D` row functions of `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let (k0, k1) = seed.words();
        // Both seed words enter the stream's start; SplitMix64 then yields one
        // well-mixed word per step.
        let mut state = splitmix(k0 ^ ROW_DOMAIN) ^ k1;
        let mut rows = [RowHash { mul: 1, add: 0 }; D];
        let mut i = 0;
        while i < D {
            state = state.wrapping_add(GAMMA);
            let mul = splitmix(state) | 1;
            state = state.wrapping_add(GAMMA);
            let add = splitmix(state);
            rows[i] = RowHash { mul, add };
            i += 1;
        }
        Self { rows }
    }

    /// The row functions, row 0 first.
    #[inline(always)]
    pub fn iter(&self) -> core::slice::Iter<'_, RowHash> {
        self.rows.iter()
    }

    /// Row `i`'s function, if `i < D`.
    #[inline(always)]
    #[must_use]
    pub const fn get(&self, i: usize) -> Option<RowHash> {
        if i < D {
            Some(self.rows[i])
        } else {
            None
        }
    }
}

impl<'a, const D: usize> IntoIterator for &'a RowHashes<D> {
    type Item = &'a RowHash;
    type IntoIter = core::slice::Iter<'a, RowHash>;

    fn into_iter(self) -> Self::IntoIter {
        self.rows.iter()
    }
}

impl fmt::Debug for RowHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RowHash(..)")
    }
}

impl<const D: usize> fmt::Debug for RowHashes<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RowHashes({D} rows)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipliers_are_odd_and_rows_differ() {
        let r = RowHashes::<32>::new(Seed::new(0, 0));
        for (i, a) in r.iter().enumerate() {
            assert_eq!(a.mul & 1, 1);
            for b in r.iter().skip(i + 1) {
                assert!(a.mul != b.mul && a.add != b.add);
            }
        }
        assert!(r.get(31).is_some() && r.get(32).is_none());
    }

    #[test]
    fn debug_hides_parameters() {
        let r = RowHashes::<2>::new(Seed::new(5, 6));
        let mut s = heapless_string();
        core::fmt::write(&mut s, format_args!("{r:?}")).ok();
        assert_eq!(s.as_str(), "RowHashes(2 rows)");
    }

    /// A tiny fixed-capacity `fmt::Write` sink (the crate has no `alloc`).
    struct Buf {
        bytes: [u8; 64],
        len: usize,
    }
    impl Buf {
        fn as_str(&self) -> &str {
            core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
        }
    }
    impl fmt::Write for Buf {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            let dst = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
            dst.copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }
    fn heapless_string() -> Buf {
        Buf {
            bytes: [0; 64],
            len: 0,
        }
    }
}
