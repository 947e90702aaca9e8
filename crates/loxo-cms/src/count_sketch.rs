//! The Count-Sketch [`CountSketch<W, D>`]: signed counters, unbiased estimates.

use loxo_core::{KeyHash, MergeError, Seed};

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
/// Each row's error has mean 0 and variance `≤ ‖f‖₂² / W`. By Chebyshev a row is
/// within `ε·‖f‖₂`, `ε = √(3/W)`, with probability ≥ 2/3; the median is off only if
/// half the rows are, which by Hoeffding has probability `≤ δ = e^−D/18`. The error
/// scales with ‖f‖₂, not ‖f‖₁ as in Count-Min: much smaller on skewed streams, but
/// two-sided. Counters saturate at `i64::MIN/MAX` (never reached by realistic
/// weights; saturation would break exact deletion).
///
/// # Memory
///
/// `8·D·W` bytes of counters plus the 16-byte seed: `CountSketch<1024, 5>` is
/// 40 976 bytes.
///
/// # Cost
///
/// [`add`](Self::add): one SipHash-1-3 (or none with [`add_hash`](Self::add_hash)),
/// then `D` probes (add + multiply). [`estimate`](Self::estimate): the same plus an
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

    /// Sign of row `i`: bit `i + 1` of the second hash (bit 0 is forced odd).
    #[inline(always)]
    fn sign(h2: u64, i: usize) -> i64 {
        (((h2 >> (i + 1)) & 1) as i64) * 2 - 1
    }

    /// Adds weight `w` (negative to delete) to `key`.
    #[inline]
    pub fn add<K: AsRef<[u8]> + ?Sized>(&mut self, key: &K, w: i64) {
        self.add_hash(self.seed.hash(key), w);
    }

    /// [`add`](Self::add) from a pre-computed digest.
    #[inline]
    pub fn add_hash(&mut self, h: KeyHash, w: i64) {
        let h2 = h.h2();
        for (i, row) in self.rows.iter_mut().enumerate() {
            if let Some(c) = row.get_mut(h.index(i as u32, W as u32) as usize) {
                *c = c.saturating_add(Self::sign(h2, i).saturating_mul(w));
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
        let h2 = h.h2();
        let mut v = [0i64; D];
        for (i, (row, slot)) in self.rows.iter().zip(v.iter_mut()).enumerate() {
            if let Some(&c) = row.get(h.index(i as u32, W as u32) as usize) {
                *slot = Self::sign(h2, i).saturating_mul(c);
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
