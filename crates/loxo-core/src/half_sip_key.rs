//! [`HalfSipKey`]: a 32-bit-native keyed digest (HalfSipHash-1-3, 64-bit output) for
//! the per-packet path of a Cortex-M4, under a key derived from a [`Seed`].

use crate::{KeyHash, Seed};

/// SipHash's initialisation constants, low halves (HalfSipHash's `v2`, `v3`).
const INIT: [u32; 2] = [0x6c79_6765, 0x7465_6462];

/// What [`HalfSipKey::new`] hashes under the seed to derive the 64-bit HalfSipHash
/// key: "loxo-hsk" as a little-endian word.
const KEY_TAG: u64 = u64::from_le_bytes(*b"loxo-hsk");

/// One HalfSipRound.
#[inline(always)]
const fn round(v: &mut [u32; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(5) ^ v[0];
    v[0] = v[0].rotate_left(16);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(8) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(7) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[2];
    v[2] = v[2].rotate_left(16);
}

/// SipHash-1-3 of the 8 bytes of `m` under `seed`, in a `const fn` (the same value
/// as [`Seed::hash_u64`]`(m)`, tested).
const fn sip13_u64(seed: Seed, m: u64) -> u64 {
    let (k0, k1) = seed.words();
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    v[3] ^= m;
    crate::sip_key::round(&mut v);
    v[0] ^= m;
    let b = 8u64 << 56;
    v[3] ^= b;
    crate::sip_key::round(&mut v);
    v[0] ^= b;
    v[2] ^= 0xff;
    crate::sip_key::round(&mut v);
    crate::sip_key::round(&mut v);
    crate::sip_key::round(&mut v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// Absorbs one message word: `C` rounds.
#[inline(always)]
fn absorb<const C: usize>(v: &mut [u32; 4], m: u32) {
    v[3] ^= m;
    for _ in 0..C {
        round(v);
    }
    v[0] ^= m;
}

/// Absorbs the last word `b` (the tail and the length byte) and runs the first
/// finalization: `C + D` rounds. Returns the first output word; `v` is left where the
/// second output word's finalization starts.
#[inline(always)]
fn first_word<const C: usize, const D: usize>(v: &mut [u32; 4], b: u32) -> u32 {
    absorb::<C>(v, b);
    v[2] ^= 0xee;
    for _ in 0..D {
        round(v);
    }
    v[1] ^ v[3]
}

/// Absorbs the last word `b` and finalizes both output words: `C + 2·D` rounds.
#[inline(always)]
fn finish<const C: usize, const D: usize>(mut v: [u32; 4], b: u32) -> u64 {
    let lo = first_word::<C, D>(&mut v, b);
    v[1] ^= 0xdd;
    for _ in 0..D {
        round(&mut v);
    }
    let hi = v[1] ^ v[3];
    u64::from(lo) | u64::from(hi) << 32
}

/// The last word of a message of `len` bytes whose last `tail_len` (≤ 3) bytes are
/// the low bytes of `tail`.
#[inline(always)]
const fn last_word(len: u32, tail: u32, tail_len: u8) -> u32 {
    let tail_len = if tail_len > 3 { 3 } else { tail_len };
    let len = len.wrapping_add(tail_len as u32);
    (len << 24) | (tail & ((1u32 << (8 * tail_len as u32)) - 1))
}

/// HalfSipHash-`C`-`D` with a 64-bit output from the initial state `v` (`v1` not yet
/// tweaked): `words` (each little-endian), then the low `tail_len` (≤ 3) bytes of
/// `tail`.
#[inline(always)]
fn hash64<const C: usize, const D: usize, const N: usize>(
    mut v: [u32; 4],
    words: [u32; N],
    tail: u32,
    tail_len: u8,
) -> u64 {
    v[1] ^= 0xee;
    for m in words {
        absorb::<C>(&mut v, m);
    }
    let tail_len = tail_len.min(3);
    let len = (N as u32).wrapping_mul(4).wrapping_add(u32::from(tail_len));
    finish::<C, D>(
        v,
        (len << 24) | (tail & ((1u32 << (8 * u32::from(tail_len))) - 1)),
    )
}

/// A keyed digest for the per-packet path: HalfSipHash-1-3 (Aumasson & Bernstein's
/// 32-bit SipHash, the Linux kernel's `hsiphash` on 32-bit machines) with a 64-bit
/// output, under a 64-bit key derived from a [`Seed`] — the flow monitor's flow and
/// address digests.
///
/// # Why HalfSipHash on the device
///
/// SipHash works on 64-bit words; a Cortex-M4 has 32-bit registers, so each of its
/// rounds costs about 45 instructions there and a flow key's digest about 235
/// (`cargo xtask costs`). HalfSipHash's rounds are the same ARX design on 32-bit
/// words — about 12 Cortex-M4 instructions, the rotations folded into the XORs — so a
/// 13-byte IPv4 flow key costs 10 rounds (4 message + 2 × 3 finalization for the two
/// output words) instead of 5 rounds of 64-bit work. A flood of one-packet flows
/// pays two digests per frame (the flow's and its source's), so this is most of the
/// monitor's headroom under a flood.
///
/// # Seed secrecy
///
/// The digests are what an attacker must predict to aim keys at the same sketch cells
/// (colliding flows, a Bloom filter made to answer "seen", HLL registers pushed up);
/// a device never publishes them — only counts and estimates leave it, and flow keys
/// in the clear. The HalfSipHash key is 64 bits: `SipHash-1-3` of a fixed tag under
/// the device's 128-bit [`Seed`] (a PRF output, so the 64-bit key reveals nothing of
/// the seed, which keys every sketch a device ships). Recovering it by search needs
/// digest input/output pairs an attacker does not see, and even then 2⁶³ trials; the
/// kernel makes the same trade for its hash tables (`hsiphash`: "for hashtables,
/// where the attacker cannot see the hash values"). HalfSipHash-1-3 is not a MAC:
/// nothing that leaves the device is authenticated with it.
///
/// Memory: 16 bytes. `const`, so a monitor in a `static` can hold one.
///
/// ```
/// use loxo_core::{HalfSipKey, Seed};
/// let key = HalfSipKey::new(Seed::new(1, 2));
/// let bytes = [1u8, 2, 3, 4, 5, 6, 7];
/// let word = u32::from_le_bytes([1, 2, 3, 4]);
/// let tail = u32::from_le_bytes([5, 6, 7, 0]);
/// assert_eq!(key.hash_words([word], tail, 3), key.hash_bytes(&bytes));
/// assert_ne!(key.hash_bytes(&bytes), HalfSipKey::new(Seed::new(1, 3)).hash_bytes(&bytes));
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HalfSipKey {
    v: [u32; 4],
}

impl core::fmt::Debug for HalfSipKey {
    /// Prints nothing of the state (it is key material).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HalfSipKey(..)")
    }
}

impl HalfSipKey {
    /// The key derived from `seed`: HalfSipHash's 64-bit key = `SipHash-1-3` of a fixed
    /// 8-byte tag under `seed` (low word `k0`, high word `k1`).
    #[must_use]
    pub const fn new(seed: Seed) -> Self {
        let k = sip13_u64(seed, KEY_TAG);
        Self::from_key(k as u32, (k >> 32) as u32)
    }

    /// HalfSipHash's initial state for the 64-bit key `(k0, k1)` — the reference
    /// implementation's key bytes are `k0.to_le_bytes() ‖ k1.to_le_bytes()`.
    #[must_use]
    pub const fn from_key(k0: u32, k1: u32) -> Self {
        Self {
            v: [k0, k1, k0 ^ INIT[0], k1 ^ INIT[1]],
        }
    }

    /// The digest of the `4·N + tail_len` bytes: `words` (each little-endian), then the
    /// low `tail_len` bytes of `tail` (little-endian; its other bytes are ignored;
    /// `tail_len` above 3 is taken as 3). The same value as
    /// [`hash_bytes`](Self::hash_bytes) of those bytes.
    ///
    /// Cost: `N + 7` HalfSipRounds; a constant `N` and `tail_len` compile to
    /// straight-line code.
    #[inline(always)]
    #[must_use]
    pub fn hash_words<const N: usize>(&self, words: [u32; N], tail: u32, tail_len: u8) -> KeyHash {
        KeyHash::from_u64(hash64::<1, 3, N>(self.v, words, tail, tail_len))
    }

    /// The digest of `bytes` (any length; host tools and tests — the device hashes
    /// fixed layouts with [`hash_words`](Self::hash_words)).
    #[must_use]
    pub fn hash_bytes(&self, bytes: &[u8]) -> KeyHash {
        KeyHash::from_u64(hash_bytes::<1, 3>(self.v, bytes))
    }

    /// The digest's state after the whole words `words` of a message: the common
    /// prefix of two digests, computed once ([`HalfSipPrefix`]).
    #[inline(always)]
    #[must_use]
    pub fn prefix<const N: usize>(&self, words: [u32; N]) -> HalfSipPrefix {
        let mut v = self.v;
        v[1] ^= 0xee;
        for m in words {
            absorb::<1>(&mut v, m);
        }
        HalfSipPrefix {
            v,
            len: (N as u32).wrapping_mul(4),
        }
    }
}

/// A [`HalfSipKey`] digest part-way: the state after a message's first whole words.
/// Two messages that begin with the same words — a flow key and its source address —
/// share it, so it is computed once and each digest finished from it: a flow's
/// digest ([`hash_words`](Self::hash_words), the same value as
/// [`HalfSipKey::hash_words`] of the whole message) and its source's
/// ([`finish_lo`](Self::finish_lo), the first half of the source's own digest).
///
/// ```
/// use loxo_core::{HalfSipKey, Seed};
/// let key = HalfSipKey::new(Seed::new(1, 2));
/// let (src, dst) = (0x0a00_0001u32, 0x0a00_0002u32);
/// let p = key.prefix([src]);
/// assert_eq!(p.hash_words([dst], 6, 1), key.hash_words([src, dst], 6, 1));
/// assert_eq!(u64::from(p.finish_lo()), key.hash_words([src], 0, 0).get() & 0xffff_ffff);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HalfSipPrefix {
    v: [u32; 4],
    /// Bytes absorbed.
    len: u32,
}

impl core::fmt::Debug for HalfSipPrefix {
    /// Prints nothing of the state (it is keyed).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HalfSipPrefix(..)")
    }
}

impl HalfSipPrefix {
    /// The 64-bit digest of the prefix followed by `words` and the low `tail_len`
    /// (≤ 3) bytes of `tail`: [`HalfSipKey::hash_words`] of the whole message.
    /// Cost: `M + 7` rounds.
    #[inline(always)]
    #[must_use]
    pub fn hash_words<const M: usize>(self, words: [u32; M], tail: u32, tail_len: u8) -> KeyHash {
        let mut v = self.v;
        for m in words {
            absorb::<1>(&mut v, m);
        }
        let len = self.len.wrapping_add((M as u32).wrapping_mul(4));
        KeyHash::from_u64(finish::<1, 3>(v, last_word(len, tail, tail_len)))
    }

    /// The first 32-bit output word of the prefix's own digest (the message is the
    /// prefix alone): the low half of [`HalfSipKey::hash_words`] of those words,
    /// in 4 rounds instead of 7 — a truncated PRF output, for a sketch that needs
    /// 32 bits (a distinct-count sketch of at most 2³² items).
    #[inline(always)]
    #[must_use]
    pub fn finish_lo(self) -> u32 {
        let mut v = self.v;
        first_word::<1, 3>(&mut v, last_word(self.len, 0, 0))
    }
}

/// HalfSipHash-`C`-`D`-64 of any byte string.
fn hash_bytes<const C: usize, const D: usize>(mut v: [u32; 4], bytes: &[u8]) -> u64 {
    v[1] ^= 0xee;
    let chunks = bytes.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        let m = match *c {
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
            _ => 0,
        };
        absorb::<C>(&mut v, m);
    }
    let mut t = [0u8; 4];
    for (d, s) in t.iter_mut().zip(rest) {
        *d = *s;
    }
    finish::<C, D>(v, ((bytes.len() as u32) << 24) | u32::from_le_bytes(t))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_possible_truncation)]
mod tests {
    extern crate std;

    use super::*;

    /// HalfSipHash-`C`-`D` with a 32-bit output (the reference's `outlen = 4`), for
    /// the published vectors.
    fn hash32<const C: usize, const D: usize>(k0: u32, k1: u32, bytes: &[u8]) -> u32 {
        let mut v = HalfSipKey::from_key(k0, k1).v;
        let chunks = bytes.chunks_exact(4);
        let rest = chunks.remainder();
        for c in chunks {
            let m = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            v[3] ^= m;
            for _ in 0..C {
                round(&mut v);
            }
            v[0] ^= m;
        }
        let mut t = [0u8; 4];
        t[..rest.len()].copy_from_slice(rest);
        let b = ((bytes.len() as u32) << 24) | u32::from_le_bytes(t);
        v[3] ^= b;
        for _ in 0..C {
            round(&mut v);
        }
        v[0] ^= b;
        v[2] ^= 0xff;
        for _ in 0..D {
            round(&mut v);
        }
        v[1] ^ v[3]
    }

    /// The reference key 00 01 … 07 and messages 00 01 … (n − 1).
    const K0: u32 = 0x0302_0100;
    const K1: u32 = 0x0706_0504;

    fn message(n: usize) -> std::vec::Vec<u8> {
        (0..n as u8).collect()
    }

    #[test]
    fn halfsiphash_2_4_reference_vectors() {
        // `vectors_hsip32` and `vectors_hsip64` of the reference implementation
        // (github.com/veorq/SipHash, vectors.h), first entries: message lengths 0…
        let v32: [u32; 8] = [
            0x5b9f_35a9,
            0xb85a_4727,
            0x03a6_62fa,
            0x04e7_fe8a,
            0x8946_6e2a,
            0x69b6_fac5,
            0x23fc_6358,
            0xc563_cf8b,
        ];
        for (n, want) in v32.iter().enumerate() {
            assert_eq!(hash32::<2, 4>(K0, K1, &message(n)), *want, "hsip32 len {n}");
        }
        let v64: [[u8; 8]; 7] = [
            [0x21, 0x8d, 0x1f, 0x59, 0xb9, 0xb8, 0x3c, 0xc8],
            [0xbe, 0x55, 0x24, 0x12, 0xf8, 0x38, 0x73, 0x15],
            [0x06, 0x4f, 0x39, 0xef, 0x7c, 0x50, 0xeb, 0x57],
            [0xce, 0x0f, 0x1a, 0x45, 0xf7, 0x06, 0x06, 0x79],
            [0xd5, 0xe7, 0x8a, 0x17, 0x5b, 0xe5, 0x2e, 0xa1],
            [0xcb, 0x9d, 0x7c, 0x3f, 0x2f, 0x3d, 0xb5, 0x80],
            [0xce, 0x3e, 0x91, 0x35, 0x8a, 0xa2, 0xbc, 0x25],
        ];
        let key = HalfSipKey::from_key(K0, K1);
        for (n, want) in v64.iter().enumerate() {
            let got = hash_bytes::<2, 4>(key.v, &message(n));
            assert_eq!(got.to_le_bytes(), *want, "hsip64 len {n}");
        }
    }

    #[test]
    fn halfsiphash_1_3_kernel_vectors() {
        // The Linux kernel's `hsiphash` on 32-bit machines is HalfSipHash-1-3 with a
        // 32-bit output; lib/siphash_kunit.c pins it on the reference key and
        // messages 00 01 … (n − 1): every fourth of its vectors.
        let v: [(usize, u32); 8] = [
            (0, 0x5814_c896),
            (1, 0xe7e8_64ca),
            (4, 0x7e05_9ea6),
            (8, 0x5779_99b1),
            (12, 0x6b28_096c),
            (13, 0x66dd_9cd6),
            (16, 0x8b31_d501),
            (63, 0x8717_8304),
        ];
        for (n, want) in v {
            assert_eq!(
                hash32::<1, 3>(K0, K1, &message(n)),
                want,
                "hsiphash len {n}"
            );
        }
    }

    /// `hash_words` of `bytes` split into `N` words and a tail.
    fn words<const N: usize>(k: &HalfSipKey, bytes: &[u8]) -> KeyHash {
        let mut w = [0u32; N];
        for (i, x) in w.iter_mut().enumerate() {
            *x = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        }
        let rest = &bytes[4 * N..];
        let mut t = [0xffu8; 4]; // garbage above the tail must not matter
        t[..rest.len()].copy_from_slice(rest);
        k.hash_words(w, u32::from_le_bytes(t), rest.len() as u8)
    }

    #[test]
    fn words_equal_bytes_on_every_length() {
        let key = HalfSipKey::new(Seed::new(0x0123_4567_89ab_cdef, 42));
        let bytes: std::vec::Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for len in 0..=40usize {
            let b = &bytes[..len];
            let got = match len / 4 {
                0 => words::<0>(&key, b),
                1 => words::<1>(&key, b),
                2 => words::<2>(&key, b),
                3 => words::<3>(&key, b),
                4 => words::<4>(&key, b),
                5 => words::<5>(&key, b),
                6 => words::<6>(&key, b),
                7 => words::<7>(&key, b),
                8 => words::<8>(&key, b),
                9 => words::<9>(&key, b),
                _ => words::<10>(&key, b),
            };
            assert_eq!(got, key.hash_bytes(b), "{len} bytes");
        }
    }

    #[test]
    fn the_key_is_a_siphash_of_the_seed() {
        for seed in [Seed::new(0, 0), Seed::new(1, 2), Seed::new(u64::MAX, 7)] {
            let k = seed.hash_u64(KEY_TAG).get();
            assert_eq!(sip13_u64(seed, KEY_TAG), k);
            assert_eq!(
                HalfSipKey::new(seed),
                HalfSipKey::from_key(k as u32, (k >> 32) as u32)
            );
        }
        assert_eq!(
            std::format!("{:?}", HalfSipKey::new(Seed::new(1, 2))),
            "HalfSipKey(..)"
        );
    }
}
