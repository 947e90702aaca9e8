//! [`SipKey`]: a seed's SipHash-1-3 initial state, computed once, for hashing
//! fixed-layout keys given as 64-bit words.

use crate::{KeyHash, Seed};

/// SipHash's initialisation constants ("somepseudorandomlygeneratedbytes").
const INIT: [u64; 4] = [
    0x736f_6d65_7073_6575,
    0x646f_7261_6e64_6f6d,
    0x6c79_6765_6e65_7261,
    0x7465_6462_7974_6573,
];

/// A [`Seed`]'s SipHash-1-3 initial state (`v0..v3`), computed once: the hash of a
/// fixed-layout key given as 64-bit words, equal to [`Seed::hash`] of the same
/// bytes.
///
/// # Why not `siphasher` here
///
/// Every other digest in loxo is `siphasher`'s. That crate rebuilds the state from
/// the two key words on every hash (`new_with_keys`) and has no constructor from a
/// saved state: on a Cortex-M4 that is 25–36 of a flow hash's ~260 instructions
/// (constant loads and XORs), paid once per frame for the flow key and again for
/// each address digest. The flow monitor keeps a `SipKey` instead; with it (and the
/// monitor counting a tracked flow's frame without the new-flow filter) the
/// firmware demo with a blocklist went from 1 079 to 944 instructions per frame
/// (`cargo xtask demo --icount --blocklist`). The rounds are SipHash's own and
/// the digests are `siphasher`'s bit for bit (tested on every length 0..=64
/// against it).
///
/// Memory: 32 bytes. `const`, so a monitor in a `static` can hold one.
///
/// ```
/// use loxo_core::{Seed, SipKey};
/// let seed = Seed::new(1, 2);
/// let key = SipKey::new(seed);
/// let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
/// let block = u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]);
/// let tail = u64::from(u32::from_le_bytes([9, 10, 11, 0]));
/// assert_eq!(key.hash_words([block], tail, 3), seed.hash(&bytes));
/// assert_eq!(key.hash_words([], 0x0403_0201, 4), seed.hash(&[1u8, 2, 3, 4]));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SipKey {
    v: [u64; 4],
}

impl core::fmt::Debug for SipKey {
    /// Prints nothing of the state (it is the seed's key material).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SipKey(..)")
    }
}

/// One SipRound.
#[inline(always)]
pub(crate) const fn round(v: &mut [u64; 4]) {
    let [v0, v1, v2, v3] = v;
    *v0 = v0.wrapping_add(*v1);
    *v1 = v1.rotate_left(13) ^ *v0;
    *v0 = v0.rotate_left(32);
    *v2 = v2.wrapping_add(*v3);
    *v3 = v3.rotate_left(16) ^ *v2;
    *v0 = v0.wrapping_add(*v3);
    *v3 = v3.rotate_left(21) ^ *v0;
    *v2 = v2.wrapping_add(*v1);
    *v1 = v1.rotate_left(17) ^ *v2;
    *v2 = v2.rotate_left(32);
}

impl SipKey {
    /// The initial state of `seed`'s SipHash-1-3.
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let (k0, k1) = seed.words();
        Self {
            v: [k0 ^ INIT[0], k1 ^ INIT[1], k0 ^ INIT[2], k1 ^ INIT[3]],
        }
    }

    /// The digest of the `8·N + tail_len` bytes `blocks` (each little-endian) then the
    /// low `tail_len` bytes of `tail` (little-endian; its other bytes are ignored):
    /// [`Seed::hash`] of those bytes. `tail_len` above 7 is taken as 7.
    ///
    /// Cost: `N + 4` SipRounds, the state loaded from `self`; a constant `N` and
    /// `tail_len` compile to straight-line code.
    #[inline(always)]
    #[must_use]
    pub fn hash_words<const N: usize>(&self, blocks: [u64; N], tail: u64, tail_len: u8) -> KeyHash {
        let tail_len = tail_len.min(7);
        let mut v = self.v;
        for m in blocks {
            v[3] ^= m;
            round(&mut v);
            v[0] ^= m;
        }
        let len = (N as u64).wrapping_mul(8).wrapping_add(u64::from(tail_len));
        let tail = tail & ((1u64 << (8 * u32::from(tail_len))) - 1);
        let b = (len << 56) | tail;
        v[3] ^= b;
        round(&mut v);
        v[0] ^= b;
        v[2] ^= 0xff;
        round(&mut v);
        round(&mut v);
        round(&mut v);
        KeyHash::from_u64(v[0] ^ v[1] ^ v[2] ^ v[3])
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn le(bytes: &[u8]) -> u64 {
        let mut b = [0u8; 8];
        b[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(b)
    }

    /// `hash_words` of `bytes` split into `N` blocks and a tail.
    fn words<const N: usize>(k: &SipKey, bytes: &[u8]) -> KeyHash {
        let mut blocks = [0u64; N];
        for (i, b) in blocks.iter_mut().enumerate() {
            *b = le(&bytes[8 * i..8 * i + 8]);
        }
        let rest = &bytes[8 * N..];
        // Garbage above the tail must not matter.
        let tail = le(rest) | u64::MAX << (8 * rest.len());
        k.hash_words(blocks, tail, rest.len() as u8)
    }

    #[test]
    fn equals_siphasher_on_every_length() {
        for (k0, k1) in [
            (0, 0),
            (1, 2),
            (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210),
        ] {
            let seed = Seed::new(k0, k1);
            let key = SipKey::new(seed);
            let bytes: std::vec::Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
            for len in 0..=64usize {
                let b = &bytes[..len];
                let got = match len / 8 {
                    0 => words::<0>(&key, b),
                    1 => words::<1>(&key, b),
                    2 => words::<2>(&key, b),
                    3 => words::<3>(&key, b),
                    4 => words::<4>(&key, b),
                    5 => words::<5>(&key, b),
                    6 => words::<6>(&key, b),
                    7 => words::<7>(&key, b),
                    _ => words::<8>(&key, b),
                };
                assert_eq!(got, seed.hash(b), "seed {k0:x}/{k1:x}, {len} bytes");
            }
        }
    }

    #[test]
    fn reference_vector() {
        // SipHash-1-3 of the empty string under the key 00 01 … 0f (the reference
        // implementation's key), as `siphasher` computes it.
        let seed = Seed::from_bytes(core::array::from_fn(|i| i as u8));
        assert_eq!(SipKey::new(seed).hash_words([], 0, 0), seed.hash(&[0u8; 0]));
        assert_eq!(std::format!("{:?}", SipKey::new(seed)), "SipKey(..)");
    }
}
