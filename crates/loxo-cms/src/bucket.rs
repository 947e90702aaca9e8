//! The parts the decaying top-k summaries share: the decay draws' generator
//! ([`HeavyKeeper`](crate::HeavyKeeper), [`HeavyGuardian`](crate::HeavyGuardian),
//! [`TieredTopK`](crate::TieredTopK)) and the buckets of keyed cells with their
//! report (the last two).

use loxo_core::{mix64, KeyHash};

use crate::entry::Entry;

/// The xorshift64 generator of the decay draws, started from `mix64` of a seed (never
/// from 0, xorshift's fixed point). Its state is on the wire of `HeavyKeeper`.
pub(crate) const fn rng_start(seed: u64) -> u64 {
    let s = mix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    if s == 0 {
        0x2545_f491_4f6c_dd1d
    } else {
        s
    }
}

/// The next draw of the generator in `state`, uniform in `u32`.
#[inline(always)]
pub(crate) fn next_u32(state: &mut u64) -> u32 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    (x >> 32) as u32
}

/// One bucket: `L` cells of (key, count); count 0 = a free cell (its key is stale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bucket<K, const L: usize> {
    pub(crate) keys: [K; L],
    pub(crate) counts: [u32; L],
}

impl<K: Copy + Eq, const L: usize> Bucket<K, L> {
    /// A bucket of free cells, `filler` as their placeholder key.
    pub(crate) const fn empty(filler: K) -> Self {
        Self {
            keys: [filler; L],
            counts: [0; L],
        }
    }

    /// The count of the cell `key` holds, if any.
    #[inline]
    pub(crate) fn count_of(&self, key: &K) -> Option<u32> {
        self.keys
            .iter()
            .zip(&self.counts)
            .find(|(k, &n)| n > 0 && *k == key)
            .map(|(_, &n)| n)
    }

    /// Puts `key` with `count` into cell `c` (nothing if there is no such cell).
    #[inline(always)]
    pub(crate) fn put(&mut self, c: usize, key: K, count: u32) {
        if let (Some(k), Some(n)) = (self.keys.get_mut(c), self.counts.get_mut(c)) {
            (*k, *n) = (key, count);
        }
    }

    /// The count of `key` in the first of its `probes` buckets
    /// (`hash.index(i, buckets.len())`, `i < probes`) that holds it.
    pub(crate) fn estimate(buckets: &[Self], probes: u32, key: &K, hash: KeyHash) -> Option<u64> {
        (0..probes).find_map(|i| {
            let b = buckets.get(hash.index(i, buckets.len() as u32) as usize)?;
            b.count_of(key).map(u64::from)
        })
    }

    /// Every held (key, count) cell of `buckets`, in memory order.
    pub(crate) fn held(buckets: &[Self]) -> impl Iterator<Item = (K, u32)> + '_ {
        buckets.iter().flat_map(|b| {
            b.keys
                .iter()
                .zip(&b.counts)
                .filter(|(_, &c)| c > 0)
                .map(|(&k, &c)| (k, c))
        })
    }

    /// Frees every cell of `buckets`.
    pub(crate) fn clear_all(buckets: &mut [Self]) {
        for b in buckets {
            b.counts = [0; L];
        }
    }

    /// Halves every count of `buckets` (a cell halved to 0 is free).
    pub(crate) fn halve_all(buckets: &mut [Self]) {
        for b in buckets {
            for n in &mut b.counts {
                *n >>= 1;
            }
        }
    }
}

/// The `M` heaviest of `cells` into `out`, heaviest first (ties in `cells`' order),
/// each with `lower = Some(count)` if `lower_bounds`, else `None`, and no upper bound.
pub(crate) fn report_heaviest<K: Copy, const M: usize>(
    cells: impl Iterator<Item = (K, u32)>,
    lower_bounds: bool,
    out: &mut heapless::Vec<Entry<K>, M>,
) {
    out.clear();
    if M == 0 {
        return;
    }
    for (key, c) in cells {
        let count = u64::from(c);
        let at = out.partition_point(|x| x.count >= count);
        if at >= M {
            continue;
        }
        if out.is_full() {
            out.pop();
        }
        let _ = out.insert(
            at,
            Entry {
                key,
                count,
                lower: lower_bounds.then_some(count),
                upper: None,
            },
        );
    }
}

/// The digests and streams of the bucketed summaries' tests.
#[cfg(test)]
pub(crate) mod test_stream {
    extern crate std;
    use std::vec::Vec;

    use loxo_core::{mix64, KeyHash};

    /// The digest the tests give key `k`.
    pub(crate) fn h(k: u64) -> KeyHash {
        KeyHash::from_u64(mix64(k ^ 0xabc))
    }

    /// A skewed stream of `n` (key, weight) updates, weights 1..=1500, in which every
    /// `one_off`-th update (the first included) is a one-off key (a flood).
    pub(crate) fn skewed(n: usize, one_off: usize) -> Vec<(u64, u64)> {
        let mut x = 99u64;
        (0..n)
            .map(|i| {
                x = mix64(x.wrapping_add(1));
                let key = if i % one_off == 0 {
                    1 << 40 | i as u64 // one-off
                } else {
                    (x >> 40).trailing_zeros() as u64 * 1000 + (x & 7)
                };
                (key, 1 + (x >> 8) % 1500)
            })
            .collect()
    }
}
