//! False-positive theory of blocked and register-blocked Bloom filters, computed here
//! for the tests that check a filter's *use* (the flow monitor's new-flow count)
//! rather than taken from the library (`BlockedBloom::theoretical_fpr`,
//! `RegisterBloom::theoretical_fpr`) or from a report's own estimate.

/// The false-positive rate of a blocked Bloom filter of `blocks` blocks of
/// `block_bits` bits, `k` probes per key in one block, after `n` distinct keys
/// (Putze, Sanders, Singler 2007): a block holds `c ~ Binomial(n, 1/blocks)` keys, and
/// a query in it is a false positive with probability `(1 − (1 − 1/block_bits)^{k·c})^k`
/// (each probe an independent uniform bit). Loxo's layout spreads a key's probes over
/// distinct words, which this model treats as independent bits: it is within a few
/// per cent of the layout's exact rate at the loads the tests use (≈ 1 % at the
/// flow monitor's design load), far inside their bands.
#[must_use]
pub fn blocked_fpr(blocks: u64, block_bits: u64, k: u32, n: u64) -> f64 {
    let q = 1.0 / blocks as f64;
    let miss = 1.0 - 1.0 / block_bits as f64;
    let in_block = |c: u64| (1.0 - miss.powf(f64::from(k) * c as f64)).powi(k as i32);
    if blocks <= 1 {
        // One block holds every key: the recurrence below would divide by 1 − q = 0.
        return in_block(n);
    }
    // Binomial pmf by recurrence from c = 0; terms past c = mean + 40σ are < 1e-300.
    let mean = n as f64 * q;
    let last = n.min((mean + 40.0 * mean.sqrt() + 40.0) as u64);
    let mut pmf = (1.0 - q).powf(n as f64);
    let mut rate = 0.0;
    for c in 0..=last {
        rate += pmf * in_block(c);
        pmf *= (n - c) as f64 / (c + 1) as f64 * q / (1.0 - q);
    }
    rate
}

/// Expected number of false "already seen" answers when `n` distinct keys are
/// inserted in turn into an empty blocked Bloom filter with `insert_checked` (the
/// `j`-th key meets the filter after `j` keys): `Σ_{j<n} blocked_fpr(j)`.
#[must_use]
pub fn expected_checked_false_positives(blocks: u64, block_bits: u64, k: u32, n: u64) -> f64 {
    (0..n).map(|j| blocked_fpr(blocks, block_bits, k, j)).sum()
}

/// The false-positive rate of a register-blocked Bloom filter of `words` 64-bit
/// words, `k` bits per key in one word, after `n` distinct keys: a word holds
/// `c ~ Binomial(n, 1/words)` keys, i.e. `k·c` independent uniform positions; a
/// query's `k` independent uniform positions hit `q` distinct ones with the
/// occupancy probability `P(q)`, and `q` given positions are all set with probability
/// `Σ_i (−1)^i C(q, i) (1 − i/64)^{k·c}` (inclusion–exclusion over those left clear).
/// Positions of the flow monitor's filters (loxo-bloom's `RegisterBloom`) are cut
/// from one multiply; this model treats them as independent, which loxo-bloom's
/// `estimated_rate_is_the_observed_rate` checks.
#[must_use]
pub fn register_fpr(words: u64, k: u32, n: u64) -> f64 {
    // Occupancy: P(q distinct of k uniform draws among 64).
    let k = k as usize;
    let mut occupancy = vec![0.0f64; k + 1];
    occupancy[0] = 1.0;
    for _ in 0..k {
        let mut next = vec![0.0f64; k + 1];
        for q in 0..=k {
            next[q] = occupancy[q] * q as f64 / 64.0
                + if q > 0 {
                    occupancy[q - 1] * (65 - q) as f64 / 64.0
                } else {
                    0.0
                };
        }
        occupancy = next;
    }
    let in_word = |c: u64| -> f64 {
        let draws = (k as u64 * c) as f64;
        let mut rate = 0.0;
        for (q, pq) in occupancy.iter().enumerate() {
            let mut binom = 1.0;
            let mut all_set = 0.0;
            for i in 0..=q {
                if i > 0 {
                    binom = binom * (q + 1 - i) as f64 / i as f64;
                }
                let t = binom * (1.0 - i as f64 / 64.0).powf(draws);
                all_set += if i % 2 == 0 { t } else { -t };
            }
            rate += pq * all_set;
        }
        rate
    };
    let q = 1.0 / words.max(1) as f64;
    if words <= 1 {
        return in_word(n);
    }
    let mean = n as f64 * q;
    let last = n.min((mean + 40.0 * mean.sqrt() + 40.0) as u64);
    let mut pmf = (1.0 - q).powf(n as f64);
    let mut rate = 0.0;
    for c in 0..=last {
        rate += pmf * in_word(c);
        pmf *= (n - c) as f64 / (c + 1) as f64 * q / (1.0 - q);
    }
    rate
}

/// Expected number of false "already seen" answers when `n` distinct keys are
/// inserted in turn into an empty register-blocked Bloom filter:
/// `Σ_{j<n} register_fpr(j)`.
#[must_use]
pub fn expected_register_false_positives(words: u64, k: u32, n: u64) -> f64 {
    (0..n).map(|j| register_fpr(words, k, j)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_is_the_classic_formula() {
        // One block: c = n always, the classic (1 − (1 − 1/m)^{kn})^k.
        let m: f64 = 4096.0;
        let want = (1.0 - (1.0 - 1.0 / m).powf(7.0 * 400.0)).powi(7);
        let got = blocked_fpr(1, 4096, 7, 400);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        assert!(blocked_fpr(96, 512, 7, 0).abs() < 1e-300);
    }

    #[test]
    fn register_theory_at_the_monitors_design_load() {
        // 768 words, k = 5, 4 000 keys: the monitor's docs quote 0.96 % from the
        // library's closed form; this is the direct sum.
        let p = register_fpr(768, 5, 4_000);
        assert!((0.0095..0.0097).contains(&p), "{p}");
        // One word, one key: the query's k draws all land on the key's ≤ k bits.
        let one = register_fpr(1, 1, 1);
        assert!((one - 1.0 / 64.0).abs() < 1e-12, "{one}");
        assert_eq!(register_fpr(768, 5, 0), 0.0);
    }

    #[test]
    fn blocked_filter_of_96_blocks() {
        // 96 blocks of 512 bits, k = 7, 5 000 keys: the monitor's old filters (1.06 %)
        // from the exact layout theory.
        let p = blocked_fpr(96, 512, 7, 5_000);
        assert!((0.009..0.012).contains(&p), "{p}");
    }
}
