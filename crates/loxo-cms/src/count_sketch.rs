//! The Count-Sketch [`CountSketch<W, D>`]: signed counters, unbiased estimates.

use loxo_core::{KeyHash, MergeError, RowHash, RowHashes, Seed};

use crate::cms::MAX_DEPTH;

/// A Count-Sketch (Charikar, Chen & Farach-Colton 2002): "how often did I see this
/// key?", unbiased, with deletions (turnstile streams: weights may be negative).
///
/// `D` rows (1..=32) of `W` (1..=2³²−1) signed `i64` counters. Each row adds
/// `s_i(key)·w` to one counter, with a ±1 sign `s_i` from the key's digest; a row's
/// estimate `s_i·counter` is unbiased because the other keys' signs cancel in
/// expectation. [`estimate`](Self::estimate) is the median of the `D` row
/// estimates. Out-of-range parameters fail to compile.
///
/// # Guarantee
///
/// Row `i` puts a key in column `r_i(h)` with sign `s_i(h)` from its own hash function
/// ([`RowHashes`]: multiply-add-shift with per-row parameters drawn from the seed; the
/// column from the row value's high 32 bits, the sign from bit 31), so rows are
/// independent and, within a row, another key shares the column with probability
/// `≈ 1/W` and an independent sign. Each row's error then has mean 0 and variance
/// `≤ ‖f‖₂² / W`. By Chebyshev a row is within `ε·‖f‖₂`, `ε = √(3/W)`, with
/// probability ≥ 2/3; the median is off only if at least `⌈D/2⌉` rows are, so
/// `δ ≤ P[Binomial(D, 1/3) ≥ ⌈D/2⌉]` (0.21 at D = 5, 0.17 at D = 7, 0.15 at D = 14;
/// Hoeffding's `e^−D/18` is a looser closed form). The error scales with ‖f‖₂, not
/// ‖f‖₁ as in Count-Min: much smaller on skewed streams, but two-sided. Counters
/// saturate at `i64::MIN/MAX` (never reached by realistic weights; saturation would
/// break exact deletion). Tested in `tests/tests/cms_rows.rs`: the number of rows
/// failing for an absent key follows the independent-row law (chi-square) and the
/// median's failure rate stays below it.
///
/// # Memory
///
/// `8·D·W` bytes of counters plus the 16-byte seed and `16·D` bytes of row functions:
/// `CountSketch<1024, 5>` is 41 056 bytes.
///
/// # Cost
///
/// [`add`](Self::add): one SipHash-1-3 (or none with [`add_hash`](Self::add_hash)),
/// then `D` probes (a 64-bit multiply-add and a 32-bit multiply each). [`estimate`](Self::estimate): the same plus an
/// insertion sort of `D` values.
///
/// # Example
///
/// ```
/// use loxo_cms::CountSketch;
/// use loxo_core::Seed;
///
/// let mut cs = CountSketch::<1024, 5>::new(Seed::new(1, 2));
/// cs.add(b"flow", 10);
/// cs.add(b"other", 3);
/// assert_eq!(cs.estimate(b"flow"), 10);
/// cs.add(b"flow", -10); // deletion
/// assert_eq!(cs.estimate(b"flow"), 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CountSketch<const W: usize, const D: usize> {
    pub(crate) seed: Seed,
    /// Row `i`'s index and sign function, derived from `seed`.
    hashes: RowHashes<D>,
    pub(crate) rows: [[i64; W]; D],
}

impl<const W: usize, const D: usize> CountSketch<W, D> {
    const CHECK: () = {
        assert!(
            W >= 1 && W <= u32::MAX as usize,
            "CountSketch: W must be in 1..=u32::MAX"
        );
        assert!(D >= 1 && D <= MAX_DEPTH, "CountSketch: D must be in 1..=32");
    };

    /// An empty sketch hashing keys with `seed`.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            seed,
            hashes: RowHashes::new(seed),
            rows: [[0; W]; D],
        }
    }

    /// The seed keys are hashed with.
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// ε = √(3/W), the error bound relative to ‖f‖₂ (see the type's guarantee).
    pub fn epsilon(&self) -> f64 {
        // No `sqrt` in core: Newton's method from a safe starting point.
        let x = 3.0 / W as f64;
        let mut r = if x > 1.0 { x } else { 1.0 };
        for _ in 0..64 {
            r = 0.5 * (r + x / r);
        }
        r
    }

    /// The key's cell in row `f` and its ±1 sign: the bucket from the row value's
    /// high 32 bits, the sign from bit 31, which the bucket does not use.
    #[inline(always)]
    fn cell(f: RowHash, h: KeyHash) -> (usize, i64) {
        let v = f.value(h);
        let j = loxo_core::reduce(v, W as u32) as usize;
        (j, (((v >> 31) & 1) as i64) * 2 - 1)
    }

    /// Adds weight `w` (negative to delete) to `key`.
    #[inline]
    pub fn add<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K, w: i64) {
        self.add_hash(self.seed.hash(key), w);
    }

    /// [`add`](Self::add) from a pre-computed digest.
    #[inline]
    pub fn add_hash(&mut self, h: KeyHash, w: i64) {
        for (row, &f) in self.rows.iter_mut().zip(self.hashes.iter()) {
            let (j, sign) = Self::cell(f, h);
            if let Some(c) = row.get_mut(j) {
                *c = c.saturating_add(sign.saturating_mul(w));
            }
        }
    }

    /// Unbiased estimate of the net weight of `key` (median of the rows).
    #[inline]
    pub fn estimate<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> i64 {
        self.estimate_hash(self.seed.hash(key))
    }

    /// [`estimate`](Self::estimate) from a pre-computed digest.
    pub fn estimate_hash(&self, h: KeyHash) -> i64 {
        let mut v = [0i64; D];
        for ((row, &f), slot) in self.rows.iter().zip(self.hashes.iter()).zip(v.iter_mut()) {
            let (j, sign) = Self::cell(f, h);
            if let Some(&c) = row.get(j) {
                *slot = sign.saturating_mul(c);
            }
        }
        // Insertion sort: D ≤ 32 and usually ≤ 7.
        for i in 1..D {
            let mut j = i;
            while j > 0 && v[j - 1] > v[j] {
                v.swap(j - 1, j);
                j -= 1;
            }
        }
        let mid = D / 2;
        match (v.get(mid), mid.checked_sub(1).and_then(|m| v.get(m))) {
            (Some(&hi), Some(&lo)) if D.is_multiple_of(2) => {
                // Mean of the two middle values without overflow.
                i128::midpoint(hi as i128, lo as i128) as i64
            }
            (Some(&m), _) => m,
            _ => 0,
        }
    }

    /// Adds `other` into `self` cell by cell: the sketch of both streams.
    ///
    /// # Errors
    ///
    /// [`MergeError::SeedMismatch`] if the seeds differ (`self` is unchanged).
    pub fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        if self.seed != other.seed {
            return Err(MergeError::SeedMismatch);
        }
        for (a, b) in self.rows.iter_mut().zip(other.rows.iter()) {
            for (x, &y) in a.iter_mut().zip(b.iter()) {
                *x = x.saturating_add(y);
            }
        }
        Ok(())
    }

    /// Resets every counter to zero; keeps the seed.
    pub fn clear(&mut self) {
        self.rows = [[0; W]; D];
    }

    /// The raw signed counters, row by row (for encoding or inspection).
    pub const fn rows(&self) -> &[[i64; W]; D] {
        &self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_as_documented() {
        assert_eq!(core::mem::size_of::<CountSketch<1024, 5>>(), 41_056);
    }

    #[test]
    fn even_depth_median_and_epsilon() {
        let mut cs = CountSketch::<4096, 4>::new(Seed::new(5, 6));
        cs.add(b"a", 7);
        assert_eq!(cs.estimate(b"a"), 7);
        assert!((cs.epsilon() - (3.0f64 / 4096.0).sqrt()).abs() < 1e-12);
        let mut other = CountSketch::<4096, 4>::new(Seed::new(5, 6));
        other.add(b"a", -7);
        cs.merge(&other).unwrap_or(());
        assert_eq!(cs.estimate(b"a"), 0);
        assert_eq!(
            cs.merge(&CountSketch::new(Seed::new(0, 0))),
            Err(MergeError::SeedMismatch)
        );
    }
}
