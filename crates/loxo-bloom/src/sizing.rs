//! `const fn` sizing: bits, words and probes for a capacity `n` and a target
//! false-positive rate `p`, usable in type aliases.
//!
//! Classic Bloom filter (Bloom 1970; Broder–Mitzenmacher 2004): with `m` bits, `k`
//! probes and `n` keys the false-positive rate is `(1 − e^{−kn/m})^k`, minimised at
//! `k = (m/n)·ln 2`, which needs `m = −n·ln p / ln² 2` bits, i.e.
//! `−log₂ p / ln 2 ≈ 1.44·log₂(1/p)` bits per key:
//!
//! | target `p` | bits per key | optimal `k` |
//! |---:|---:|---:|
//! | 10 % | 4.79 | 3 |
//! | 5 % | 6.24 | 4 |
//! | 1 % | 9.59 | 7 |
//! | 0.1 % | 14.38 | 10 |
//! | 0.01 % | 19.17 | 13 |
//! | 0.001 % | 23.96 | 17 |
//!
//! ```
//! use loxo_bloom::{bloom_k, bloom_words, Bloom};
//!
//! // "1 % at 10 000 keys", computed by the compiler.
//! type Seen = Bloom<{ bloom_words(10_000, 0.01) }, { bloom_k(10_000, 0.01) }>;
//! assert_eq!(bloom_words(10_000, 0.01), 2_996); // 95 872 bits, 11 984 bytes
//! assert_eq!(bloom_k(10_000, 0.01), 7);
//! let f = Seen::new(loxo_core::Seed::new(1, 2));
//! assert_eq!(f.memory_bytes(), 2_996 * 4 + 16);
//! ```

/// `ln 2`.
pub(crate) const LN_2: f64 = core::f64::consts::LN_2;

/// Natural logarithm usable in `const` context (`x > 0`; returns `−∞`-like large
/// negative values for 0 and NaN for negative input is never needed here).
///
/// `x = m · 2^e` with `m ∈ [1, 2)`; `ln m = 2·atanh((m − 1)/(m + 1))` by its series,
/// which converges fast for `t < 1/3` (30 terms: error < 1e-16).
#[must_use]
pub const fn ln(x: f64) -> f64 {
    if x <= 0.0 {
        return -1.0e308;
    }
    let bits = x.to_bits();
    let biased = (bits >> 52) & 0x7ff;
    let mut e = biased as i64 - 1023;
    let mut mant = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if biased == 0 {
        // Subnormal: scale up first.
        let y = x * 4_503_599_627_370_496.0; // 2^52
        let b = y.to_bits();
        e = ((b >> 52) & 0x7ff) as i64 - 1023 - 52;
        mant = f64::from_bits((b & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    }
    let t = (mant - 1.0) / (mant + 1.0);
    let t2 = t * t;
    let mut term = t;
    let mut sum = 0.0;
    let mut i = 0;
    while i < 30 {
        sum += term / (2 * i + 1) as f64;
        term *= t2;
        i += 1;
    }
    e as f64 * LN_2 + 2.0 * sum
}

const fn ceil_u64(x: f64) -> u64 {
    if x <= 0.0 {
        return 0;
    }
    let t = x as u64;
    if (t as f64) < x {
        t + 1
    } else {
        t
    }
}

const fn round_u32(x: f64) -> u32 {
    if x <= 0.0 {
        return 0;
    }
    (x + 0.5) as u32
}

/// Bits of a classic Bloom filter for `n` keys at false-positive rate `p`:
/// `⌈−n·ln p / ln² 2⌉`.
#[must_use]
pub const fn bloom_bits(n: u64, p: f64) -> u64 {
    ceil_u64(-(n as f64) * ln(p) / (LN_2 * LN_2))
}

/// 32-bit words of a [`Bloom`](crate::Bloom) for `n` keys at rate `p`: the `M` of
/// `Bloom<M, K>` (`⌈bloom_bits / 32⌉`, at least 1).
#[must_use]
pub const fn bloom_words(n: u64, p: f64) -> usize {
    let w = bloom_bits(n, p).div_ceil(32);
    if w == 0 {
        1
    } else {
        w as usize
    }
}

/// Optimal probes for `m` bits and `n` keys: `round((m/n)·ln 2)`, at least 1.
#[must_use]
pub const fn optimal_k(m_bits: u64, n: u64) -> u32 {
    if n == 0 {
        return 1;
    }
    let k = round_u32(m_bits as f64 / n as f64 * LN_2);
    if k == 0 {
        1
    } else {
        k
    }
}

/// Optimal probes of the filter [`bloom_words`]`(n, p)` sizes: the `K` of
/// `Bloom<M, K>`.
#[must_use]
pub const fn bloom_k(n: u64, p: f64) -> u32 {
    optimal_k(bloom_words(n, p) as u64 * 32, n)
}

/// The classic filter's theoretical false-positive rate `(1 − e^{−kn/m})^k`.
#[must_use]
pub fn bloom_fpr(m_bits: u64, k: u32, n: u64) -> f64 {
    let fill = 1.0 - libm::exp(-(f64::from(k)) * n as f64 / m_bits as f64);
    libm::pow(fill, f64::from(k))
}

/// 512-bit blocks of a [`BlockedBloom`](crate::BlockedBloom) with the bits the
/// classic filter would need for `n` keys at rate `p` (the blocked filter's real
/// rate is somewhat higher; see its docs for measured numbers).
#[must_use]
pub const fn blocked_blocks(n: u64, p: f64) -> usize {
    let b = bloom_bits(n, p).div_ceil(512);
    if b == 0 {
        1
    } else {
        b as usize
    }
}

/// 64-bit words of a [`RegisterBloom`](crate::RegisterBloom) with the bits the
/// classic filter would need for `n` keys at rate `p` (the register-blocked filter's
/// real rate is about twice `p` at 1 %; see its docs).
#[must_use]
pub const fn register_words(n: u64, p: f64) -> usize {
    let w = bloom_bits(n, p).div_ceil(64);
    if w == 0 {
        1
    } else {
        w as usize
    }
}

/// Buckets of a [`Cuckoo`](crate::Cuckoo) filter for `n` keys: the next power of two
/// of `⌈n / (4 · 0.95)⌉` (4 slots per bucket, 95 % load).
#[must_use]
pub const fn cuckoo_buckets(n: u64) -> usize {
    let b = ceil_u64(n as f64 / (4.0 * 0.95));
    let b = if b < 2 { 2 } else { b };
    b.next_power_of_two() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_libm() {
        for x in [
            1e-300, 1e-9, 0.001, 0.01, 0.1, 0.5, 1.0, 1.5, 2.0, 10.0, 1e12,
        ] {
            let (a, b) = (ln(x), libm::log(x));
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
    }

    #[test]
    fn table_of_bits_per_key() {
        // The doc table: bits/key = −ln p / ln² 2, k = bits/key · ln 2.
        for (p, bpk, k) in [
            (0.1, 4.79, 3),
            (0.05, 6.24, 4),
            (0.01, 9.59, 7),
            (0.001, 14.38, 10),
            (0.0001, 19.17, 13),
            (0.00001, 23.96, 17),
        ] {
            let bits = bloom_bits(1_000_000, p) as f64 / 1e6;
            assert!((bits - bpk).abs() < 0.01, "{p}: {bits}");
            assert_eq!(optimal_k(bloom_bits(1_000_000, p), 1_000_000), k);
        }
    }

    #[test]
    fn cuckoo_sizing() {
        assert_eq!(cuckoo_buckets(1), 2);
        assert_eq!(cuckoo_buckets(1_000), 512); // 264 → 512
        assert_eq!(cuckoo_buckets(3_891), 1024);
    }
}
