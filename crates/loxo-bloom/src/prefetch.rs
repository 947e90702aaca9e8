//! The batched lookups ([`Bloom::contains_batch`](crate::Bloom::contains_batch),
//! [`BlockedBloom::contains_batch`](crate::BlockedBloom::contains_batch),
//! [`RegisterBloom::contains_batch`](crate::RegisterBloom::contains_batch)): each key
//! is hashed and what its lookup reads is prefetched ([`loxo_core::prefetch`]) before
//! any is tested, so the cache misses of a batch overlap.

use loxo_core::{KeyHash, Seed};

pub(crate) use loxo_core::prefetch;

/// The batched lookup every filter offers: hash each key and `prefetch` what its
/// lookup will read, then `test` them all.
#[inline(always)]
pub(crate) fn batch<Q: AsRef<[u8]>, const N: usize>(
    seed: &Seed,
    keys: &[Q; N],
    prefetch: impl Fn(KeyHash),
    test: impl Fn(KeyHash) -> bool,
) -> [bool; N] {
    let mut hashes = [KeyHash::from_u64(0); N];
    for (h, key) in hashes.iter_mut().zip(keys) {
        *h = seed.hash(key);
        prefetch(*h);
    }
    hashes.map(test)
}

/// [`batch`] for keys hashed by the caller.
#[inline(always)]
pub(crate) fn batch_hashed<const N: usize>(
    hashes: &[KeyHash; N],
    prefetch: impl Fn(KeyHash),
    test: impl Fn(KeyHash) -> bool,
) -> [bool; N] {
    for &h in hashes {
        prefetch(h);
    }
    hashes.map(test)
}

#[cfg(test)]
mod tests {
    use loxo_core::Seed;

    use crate::{BlockedBloom, Bloom, RegisterBloom};

    /// Half the keys inserted, all looked up in batches of 8 (and one of 0 and 1):
    /// the batched answers are the per-key answers. Small enough for Miri.
    #[test]
    fn batch_lookups_match_contains() {
        let seed = Seed::new(0xba7c, 0x4);
        let mut classic = Bloom::<64, 5>::new(seed);
        let mut blocked = BlockedBloom::<4, 6>::new(seed);
        let mut register = RegisterBloom::<32, 5>::new(seed);
        let keys: [[u8; 4]; 64] = core::array::from_fn(|i| (i as u32 * 7919).to_le_bytes());
        for k in keys.iter().step_by(2) {
            classic.insert(k);
            blocked.insert(k);
            register.insert(k);
        }
        let (batches, rest) = keys.as_chunks::<8>();
        assert!(rest.is_empty());
        for batch in batches {
            let hashes = batch.map(|k| seed.hash(&k));
            let (c, b) = (classic.contains_batch(batch), blocked.contains_batch(batch));
            assert_eq!(c, classic.contains_hash_batch(&hashes));
            assert_eq!(b, blocked.contains_hash_batch(&hashes));
            let r = register.contains_batch(batch);
            assert_eq!(r, register.contains_hash_batch(&hashes));
            for (i, k) in batch.iter().enumerate() {
                assert_eq!(c[i], classic.contains(k));
                assert_eq!(b[i], blocked.contains(k));
                assert_eq!(r[i], register.contains(k));
            }
            assert!(r.iter().step_by(2).all(|&x| x), "no false negatives");
            assert!(c.iter().step_by(2).all(|&x| x), "no false negatives");
            assert!(b.iter().step_by(2).all(|&x| x), "no false negatives");
        }
        let none: [[u8; 4]; 0] = [];
        assert_eq!(classic.contains_batch(&none), [false; 0]);
        assert_eq!(blocked.contains_batch(&[keys[0]]), [true]);
    }
}
