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

/// `ln 2` in two parts (Cody–Waite, fdlibm's constants): `k·LN2_HI` is exact for
/// `|k| < 2^11`, so `x − k·ln 2` keeps its precision.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// `e^x` usable in `const` context: `x = k·ln 2 + r` with `|r| ≤ ln 2 / 2`, `e^r` by its
/// Taylor series (17 terms: error < 10^−16), scaled by `2^k` through the exponent bits.
/// 0 below −745 (the smallest subnormal), `+∞` above 709.
#[must_use]
const fn exp(x: f64) -> f64 {
    if x < -745.0 {
        return 0.0;
    }
    if x > 709.0 {
        return f64::INFINITY;
    }
    let kf = x / LN_2;
    let k = if kf < 0.0 { kf - 0.5 } else { kf + 0.5 } as i64;
    let r = (x - k as f64 * LN2_HI) - k as f64 * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut i = 1;
    while i <= 17 {
        term *= r / i as f64;
        sum += term;
        i += 1;
    }
    // 2^k in two steps when k is below the normal range.
    if k < -1000 {
        sum * f64::from_bits(((k + 1000 + 1023) as u64) << 52) * f64::from_bits((1023 - 1000) << 52)
    } else {
        sum * f64::from_bits(((k + 1023) as u64) << 52)
    }
}

/// `C(n, k)` as `f64` (small arguments).
const fn binom(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    let mut r = 1.0;
    let mut i = 0;
    while i < k {
        r = r * (n - i) as f64 / (i + 1) as f64;
        i += 1;
    }
    r
}

/// A rate as a function of the mean load `λ` (keys per block or word) in the
/// closed form `Σ_i coef_i · e^{−λ·rate_i}` (inclusion–exclusion with Poisson loads),
/// `i ≤ 16`.
#[derive(Clone, Copy)]
pub(crate) struct Mixture {
    pub(crate) coef: [f64; 17],
    pub(crate) rate: [f64; 17],
    pub(crate) terms: usize,
}

impl Mixture {
    /// A mixture of `terms` terms, all zero.
    const fn of_terms(terms: usize) -> Self {
        Self {
            coef: [0.0; 17],
            rate: [0.0; 17],
            terms,
        }
    }

    pub(crate) const fn at(&self, lambda: f64) -> f64 {
        let mut total = 0.0;
        let mut i = 0;
        while i < self.terms {
            total += self.coef[i] * exp(-lambda * self.rate[i]);
            i += 1;
        }
        total
    }

    /// The largest load `λ` whose rate is at most `p` (the rate grows with the load):
    /// doubling to bracket it, then 40 bisection steps (relative precision 10^−9 and
    /// better).
    const fn max_load(&self, p: f64) -> f64 {
        let mut hi = 1.0;
        while self.at(hi) <= p && hi < 1e12 {
            hi *= 2.0;
        }
        let mut lo = 0.0;
        let mut i = 0;
        while i < 40 {
            let mid = 0.5 * (lo + hi);
            if self.at(mid) <= p {
                lo = mid;
            } else {
                hi = mid;
            }
            i += 1;
        }
        lo
    }
}

/// The split-block rate with **uniformly random** `k`-subsets of the 16 words (one
/// uniform bit each) at Poisson(`λ`) keys per block: a key misses `i` given probes of
/// a query with probability `g_i = Σ_t Hyp(t; 16, k, i)·(31/32)^t`, so the rate is
/// `Σ_i (−1)^i C(k, i) e^{−λ(1 − g_i)}`. The layout's word patterns are arithmetic
/// progressions, not uniform subsets; its exact rate
/// ([`BlockedBloom::theoretical_fpr`](crate::BlockedBloom::theoretical_fpr)) is at most
/// [`BLOCKED_HEADROOM`] times this at the `k` the sizing picks (unit test).
pub(crate) const fn blocked_mixture(k: u32) -> Mixture {
    let mut m = Mixture::of_terms(k as usize + 1);
    let mut i = 0;
    while i <= k {
        let mut g = 0.0;
        let mut t = 0;
        let mut c = 1.0; // (31/32)^t
        while t <= i {
            g += binom(i, t) * binom(16 - i, k - t) / binom(16, k) * c;
            c *= 31.0 / 32.0;
            t += 1;
        }
        let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
        m.coef[i as usize] = sign * binom(k, i);
        m.rate[i as usize] = 1.0 - g;
        i += 1;
    }
    m
}

/// How much the blocked layout's exact rate may exceed [`blocked_mixture`]'s at the
/// probe count the sizing picks: 2.4 % at most over 2–40 bits per key (the word
/// patterns are arithmetic progressions, slightly correlated; unit test
/// `blocked_sizing_headroom_covers_the_exact_rate`). Sizing aims at `p / 1.025`.
pub(crate) const BLOCKED_HEADROOM: f64 = 1.025;

/// The filters whose sizing searches `K` for the largest load per unit (block or
/// word) at a rate: the sizing of each is the same search over its [`Mixture`].
#[derive(Clone, Copy)]
enum OneUnit {
    /// [`BlockedBloom`](crate::BlockedBloom): 512-bit blocks, `K ≤ 16`, aiming at
    /// `p / BLOCKED_HEADROOM`.
    Blocked,
    /// [`RegisterBloom`](crate::RegisterBloom): 64-bit words, `K ≤ 10`.
    Register,
}

impl OneUnit {
    /// The `(units, K)` pair of `n` keys at rate `p`: the `K` with the largest load
    /// per unit at the target rate, and the units that load needs.
    const fn sizing(self, n: u64, p: f64) -> (usize, u32) {
        if !(p > 0.0 && p < 1.0) {
            match self {
                Self::Blocked => panic!("blocked_blocks / blocked_k: the rate p must be in (0, 1)"),
                Self::Register => {
                    panic!("register_words / register_k: the rate p must be in (0, 1)")
                }
            }
        }
        if n == 0 {
            return (1, 1);
        }
        let (target, max_k) = match self {
            Self::Blocked => (p / BLOCKED_HEADROOM, 16),
            Self::Register => (p, 10),
        };
        let (mut best, mut best_k) = (0.0, 1);
        let mut k = 1;
        while k <= max_k {
            let mixture = match self {
                Self::Blocked => blocked_mixture(k),
                Self::Register => register_mixture(k),
            };
            let load = mixture.max_load(target);
            if load > best {
                best = load;
                best_k = k;
            } else {
                break; // the best load is unimodal in k: past the optimum
            }
            k += 1;
        }
        let units = ceil_u64(n as f64 / best);
        if units > u32::MAX as u64 {
            match self {
                Self::Blocked => panic!("blocked_blocks: more than 2^32 − 1 blocks needed"),
                Self::Register => panic!("register_words: more than 2^32 − 1 words needed"),
            }
        }
        (if units == 0 { 1 } else { units as usize }, best_k)
    }
}

/// 512-bit blocks of a [`BlockedBloom`](crate::BlockedBloom) for `n` keys at
/// false-positive rate `p`, with [`blocked_k`]`(n, p)` probes: the smallest count whose
/// rate is at most `p` (it uses the closed form for uniformly chosen words with 2.5 %
/// headroom for the layout's word patterns; the exact theory then stays below `p`).
/// `p` outside `(0, 1)` does not compile:
///
/// ```compile_fail,E0080
/// type Nope = loxo_bloom::BlockedBloom<{ loxo_bloom::blocked_blocks(1_000, 0.0) }, 7>;
/// let _ = Nope::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// Bits per key at `n = 10^6` (measured rates in the crate README):
///
/// | `p` | 1 % | 0.5 % | 0.1 % | 0.05 % | 0.01 % |
/// |---|---:|---:|---:|---:|---:|
/// | blocked (`K`) | 9.97 (6) | 11.59 (7) | 15.62 (9) | 17.48 (10) | 22.18 (12) |
/// | classic (`K`) | 9.59 (7) | 11.03 (8) | 14.38 (10) | 15.82 (11) | 19.17 (13) |
///
/// ```
/// use loxo_bloom::{blocked_blocks, blocked_k, BlockedBloom};
/// assert_eq!(blocked_k(1_000_000, 0.01), 6);
/// type Seen = BlockedBloom<{ blocked_blocks(1_000_000, 0.01) }, { blocked_k(1_000_000, 0.01) }>;
/// assert!(Seen::theoretical_fpr(1_000_000) <= 0.01);
/// ```
///
/// # Panics
/// If `p` is not in `(0, 1)` or more than `2^32 − 1` blocks would be needed — at
/// compile time when evaluated in a type or a `const`, as intended.
#[must_use]
pub const fn blocked_blocks(n: u64, p: f64) -> usize {
    OneUnit::Blocked.sizing(n, p).0
}

/// Probes of the [`BlockedBloom`](crate::BlockedBloom) that [`blocked_blocks`]`(n, p)`
/// sizes: the `K` that needs the fewest blocks for rate `p`.
///
/// # Panics
/// As [`blocked_blocks`].
#[must_use]
pub const fn blocked_k(n: u64, p: f64) -> u32 {
    OneUnit::Blocked.sizing(n, p).1
}

/// The register-blocked rate at Poisson(`λ`) keys per word in closed form: a key's `k`
/// positions hit `q` distinct bits of the 64 with probability `P(q)` (occupancy), and
/// `i` given bits all stay clear of one key with probability `m_i = (1 − i/64)^k`, so
/// the rate is `Σ_i (−1)^i A_i e^{−λ(1 − m_i)}` with `A_i = Σ_q P(q)·C(q, i)`.
pub(crate) const fn register_mixture(k: u32) -> Mixture {
    // Occupancy: after each draw, q distinct stays q with probability q/64 or grows
    // from q − 1 with probability (64 − q + 1)/64.
    let mut occ = [0.0f64; 17];
    occ[0] = 1.0;
    let mut d = 0;
    while d < k {
        let mut q = k as usize;
        while q > 0 {
            occ[q] = occ[q] * q as f64 / 64.0 + occ[q - 1] * (64 - (q - 1)) as f64 / 64.0;
            q -= 1;
        }
        occ[0] = 0.0;
        d += 1;
    }
    let mut m = Mixture::of_terms(k as usize + 1);
    let mut i = 0;
    while i <= k {
        let mut a = 0.0;
        let mut q = i;
        while q <= k {
            a += occ[q as usize] * binom(q, i);
            q += 1;
        }
        let mut miss = 1.0;
        let mut t = 0;
        while t < k {
            miss *= 1.0 - i as f64 / 64.0;
            t += 1;
        }
        m.coef[i as usize] = if i % 2 == 0 { a } else { -a };
        m.rate[i as usize] = 1.0 - miss;
        i += 1;
    }
    m
}

/// 64-bit words of a [`RegisterBloom`](crate::RegisterBloom) for `n` keys at
/// false-positive rate `p`, with [`register_k`]`(n, p)` bits per key: the smallest
/// count whose exact rate is at most `p`. One word per key costs bits: a word holds a
/// Poisson number of keys and a key's positions may coincide, so the layout needs
/// 1.3× the classic filter's bits at 1 % and 1.8× at 0.05 % — prefer
/// [`BlockedBloom`](crate::BlockedBloom) below about 0.5 %. `p` outside `(0, 1)` does
/// not compile. Bits per key at `n = 10^6`:
///
/// ```compile_fail,E0080
/// type Nope = loxo_bloom::RegisterBloom<{ loxo_bloom::register_words(1_000, 1.5) }, 5>;
/// let _ = Nope::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// | `p` | 1 % | 0.5 % | 0.1 % | 0.05 % | 0.01 % |
/// |---|---:|---:|---:|---:|---:|
/// | register (`K`) | 12.14 (5) | 15.01 (6) | 24.00 (7) | 29.14 (8) | 45.48 (9) |
/// | classic (`K`) | 9.59 (7) | 11.03 (8) | 14.38 (10) | 15.82 (11) | 19.17 (13) |
///
/// ```
/// use loxo_bloom::{register_k, register_words, RegisterBloom};
/// assert_eq!(register_k(1_000_000, 0.01), 5);
/// type Seen = RegisterBloom<{ register_words(1_000_000, 0.01) }, { register_k(1_000_000, 0.01) }>;
/// assert!(Seen::theoretical_fpr(1_000_000) <= 0.01);
/// ```
///
/// # Panics
/// If `p` is not in `(0, 1)` or more than `2^32 − 1` words would be needed — at
/// compile time when evaluated in a type or a `const`, as intended.
#[must_use]
pub const fn register_words(n: u64, p: f64) -> usize {
    OneUnit::Register.sizing(n, p).0
}

/// Bits per key of the [`RegisterBloom`](crate::RegisterBloom) that
/// [`register_words`]`(n, p)` sizes: the `K` (`1..=10`) that needs the fewest words.
///
/// # Panics
/// As [`register_words`].
#[must_use]
pub const fn register_k(n: u64, p: f64) -> u32 {
    OneUnit::Register.sizing(n, p).1
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
    fn exp_matches_libm() {
        for x in [
            -800.0, -745.0, -700.0, -30.5, -1.0, -1e-9, 0.0, 1e-9, 0.3, 1.0, 5.5, 300.0,
        ] {
            let (a, b) = (exp(x), libm::exp(x));
            assert!((a - b).abs() <= 1e-14 * b, "{x}: {a} vs {b}");
        }
    }

    /// The exact rate of the blocked layout (word patterns that are arithmetic
    /// progressions) stays within `BLOCKED_HEADROOM` of the closed form the sizing
    /// uses, at the `k` the sizing would pick, from 2 to 40 bits per key (Poisson
    /// loads: 2^20 blocks).
    #[test]
    fn blocked_sizing_headroom_covers_the_exact_rate() {
        const BLOCKS: u64 = 1 << 20;
        let mut worst: f64 = 0.0;
        let mut bits_per_key = 2.0;
        while bits_per_key <= 40.0 {
            let lambda = 512.0 / bits_per_key;
            let (k, closed) = (1..=16)
                .map(|k| (k, blocked_mixture(k).at(lambda)))
                .fold((0, 2.0), |a, b| if b.1 < a.1 { b } else { a });
            let exact = crate::blocked::exact_fpr(k, BLOCKS, (lambda * BLOCKS as f64) as u64);
            worst = worst.max(exact / closed);
            assert!(
                exact <= BLOCKED_HEADROOM * closed,
                "{bits_per_key} bits/key, k = {k}: exact {exact} vs closed form {closed}"
            );
            bits_per_key += 0.5;
        }
        assert!(worst > 1.01, "the headroom is needed: worst ratio {worst}");
    }

    const RATES: [f64; 9] = [0.2, 0.05, 0.01, 0.005, 0.001, 0.0005, 1e-4, 1e-5, 1e-6];

    #[test]
    fn blocked_sizing_delivers_p_with_the_fewest_blocks() {
        for n in [1, 1_000, 1_000_000, 100_000_000] {
            for p in RATES {
                let (b, k) = (blocked_blocks(n, p), blocked_k(n, p));
                let exact = crate::blocked::exact_fpr(k, b as u64, n);
                assert!(exact <= p, "n {n} p {p}: {b} blocks, k {k}: {exact}");
                // One block fewer misses the sizing's target at every k (checked where a
                // block is more than 10^−6 of the total: the closed form's alternating
                // sum is good to about 10^−12 absolute, i.e. 10^−6 of p = 10^−6).
                if b > 1 && n <= 1_000_000 {
                    let lambda = n as f64 / (b - 1) as f64;
                    for k in 1..=16 {
                        assert!(
                            blocked_mixture(k).at(lambda) > p / BLOCKED_HEADROOM,
                            "n {n} p {p}: {b} blocks (k {}), but {} at k {k}",
                            blocked_k(n, p),
                            b - 1
                        );
                    }
                }
            }
        }
        assert_eq!((blocked_blocks(0, 0.01), blocked_k(0, 0.01)), (1, 1));
    }

    #[test]
    fn register_sizing_delivers_p_with_the_fewest_words() {
        for n in [1, 1_000, 1_000_000, 100_000_000] {
            for p in RATES {
                let (w, k) = (register_words(n, p), register_k(n, p));
                let exact = crate::register::exact_fpr(k, w as u64, n);
                assert!(exact <= p, "n {n} p {p}: {w} words, k {k}: {exact}");
                if w > 1 && n <= 1_000_000 {
                    let lambda = n as f64 / (w - 1) as f64;
                    for k in 1..=10 {
                        assert!(
                            register_mixture(k).at(lambda) > p,
                            "n {n} p {p}: {w} words (k {}), but {} at k {k}",
                            register_k(n, p),
                            w - 1
                        );
                    }
                }
            }
        }
        assert_eq!((register_words(0, 0.01), register_k(0, 0.01)), (1, 1));
    }

    /// Pinned sizes (the doc tables): a change to the sizing shows here.
    #[test]
    fn sizing_known_answers() {
        let n = 1_000_000;
        let blocked: [(f64, usize, u32); 5] = [
            (0.01, 19_468, 6),
            (0.005, 22_635, 7),
            (0.001, 30_504, 9),
            (0.0005, 34_147, 10),
            (0.0001, 43_327, 12),
        ];
        for (p, b, k) in blocked {
            assert_eq!((blocked_blocks(n, p), blocked_k(n, p)), (b, k), "{p}");
        }
        let register: [(f64, usize, u32); 5] = [
            (0.01, 189_668, 5),
            (0.005, 234_572, 6),
            (0.001, 374_966, 7),
            (0.0005, 455_318, 8),
            (0.0001, 710_626, 9),
        ];
        for (p, w, k) in register {
            assert_eq!((register_words(n, p), register_k(n, p)), (w, k), "{p}");
        }
    }

    #[test]
    fn cuckoo_sizing() {
        assert_eq!(cuckoo_buckets(1), 2);
        assert_eq!(cuckoo_buckets(1_000), 512); // 264 → 512
        assert_eq!(cuckoo_buckets(3_891), 1024);
    }
}
