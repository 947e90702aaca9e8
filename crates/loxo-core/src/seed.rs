//! The secret key of the keyed hash.

use core::fmt;
use core::hash::Hasher as _;

use siphasher::sip::SipHasher13;

use crate::hash::KeyHash;

/// Domain-separation string hashed under a seed to form its public fingerprint.
const FINGERPRINT_DOMAIN: &[u8] = b"loxo seed fingerprint v1";

/// The 128-bit key of loxo's keyed hash (SipHash-1-3).
///
/// Every sketch owns a `Seed` and hashes each key with it exactly once. The seed is
/// what decides *where* a key lands, so it decides who can aim at a sketch:
///
/// * **Per-device random seed** (the default to reach for in firmware): draw the 16
///   bytes from the MCU's hardware RNG at boot. An attacker who cannot learn the seed
///   cannot craft keys that collide — without it, a few thousand chosen flow keys can
///   pile onto one Count-Min column (turning every estimate into garbage) or saturate
///   a Bloom filter (turning every lookup into "maybe present"). This is the HashDoS
///   attack on sketches; a keyed PRF such as SipHash is the standard defence.
/// * **Fixed seed**: for reproducible tests, and for sketches that must be **merged**.
///   Merging (union of Bloom filters, register-max of HyperLogLogs, addition of
///   Count-Min tables) is only meaningful when both sides hashed keys identically,
///   so a fleet whose sketches are merged centrally shares one seed, provisioned
///   like any other secret. Sketches refuse to merge across seeds
///   ([`MergeError::SeedMismatch`](crate::MergeError::SeedMismatch)).
///
/// `Debug` prints only the [fingerprint](Seed::fingerprint), never the key.
///
/// Memory: 16 bytes. Hashing cost: SipHash-1-3 over the key (one compression round
/// per 8 bytes, three finalisation rounds).
///
/// ```
/// use loxo_core::Seed;
///
/// let a = Seed::from_bytes([7; 16]);
/// let b = Seed::new(0x0707_0707_0707_0707, 0x0707_0707_0707_0707);
/// assert_eq!(a, b);
/// assert_eq!(a.hash(b"key"), b.hash(b"key"));
/// assert_ne!(a.hash(b"key"), Seed::new(1, 2).hash(b"key"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seed {
    k0: u64,
    k1: u64,
}

impl Seed {
    /// A seed from its two 64-bit halves (SipHash's `k0`, `k1`).
    #[must_use]
    pub const fn new(k0: u64, k1: u64) -> Self {
        Self { k0, k1 }
    }

    /// A seed from 16 bytes, read as SipHash reads its key: two little-endian words.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        let [a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7] = bytes;
        Self {
            k0: u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7]),
            k1: u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]),
        }
    }

    /// The 16 key bytes (inverse of [`Seed::from_bytes`]). Treat them as a secret.
    #[must_use]
    pub const fn to_bytes(self) -> [u8; 16] {
        let a = self.k0.to_le_bytes();
        let b = self.k1.to_le_bytes();
        [
            a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], b[0], b[1], b[2], b[3], b[4], b[5],
            b[6], b[7],
        ]
    }

    /// The two key words `(k0, k1)`, for deriving other secret parameters.
    pub(crate) const fn words(self) -> (u64, u64) {
        (self.k0, self.k1)
    }

    /// Hashes one key: keyed SipHash-1-3 over its bytes.
    #[inline]
    #[must_use]
    pub fn hash<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> KeyHash {
        self.hash_bytes(key.as_ref())
    }

    /// Hashes a byte slice (the non-generic core of [`Seed::hash`]).
    #[inline]
    #[must_use]
    pub fn hash_bytes(&self, bytes: &[u8]) -> KeyHash {
        KeyHash::from_u64(SipHasher13::new_with_keys(self.k0, self.k1).hash(bytes))
    }

    /// A streaming SipHash-1-3 hasher keyed with this seed: the digest of everything
    /// written, as one byte string, equals [`Seed::hash`] of that string. Lets a caller
    /// feed a fixed-layout key in word-sized pieces (`write_u64`, `write_u32`, …,
    /// little-endian), which compiles to straight-line code instead of the slice
    /// path's length loop.
    ///
    /// ```
    /// use core::hash::Hasher;
    /// use loxo_core::Seed;
    /// let seed = Seed::new(1, 2);
    /// let key = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
    /// let mut h = seed.hasher();
    /// h.write_u64(u64::from_le_bytes(key[..8].try_into().unwrap()));
    /// h.write_u32(u32::from_le_bytes(key[8..12].try_into().unwrap()));
    /// h.write_u8(key[12]);
    /// assert_eq!(h.finish(), seed.hash(&key).get());
    /// ```
    #[inline]
    #[must_use]
    pub fn hasher(&self) -> impl core::hash::Hasher + Clone {
        SipHasher13::new_with_keys(self.k0, self.k1)
    }

    /// Hashes a `u64` key; equal to hashing its 8 little-endian bytes.
    #[inline]
    #[must_use]
    pub fn hash_u64(&self, key: u64) -> KeyHash {
        // `write_u64` absorbs the same 8 little-endian bytes as `hash_bytes` would, on
        // siphasher's fixed-size path (no length loop, no tail assembly).
        let mut s = SipHasher13::new_with_keys(self.k0, self.k1);
        s.write_u64(key);
        KeyHash::from_u64(s.finish())
    }

    /// Hashes a `u32` key; equal to hashing its 4 little-endian bytes.
    #[inline]
    #[must_use]
    pub fn hash_u32(&self, key: u32) -> KeyHash {
        let mut s = SipHasher13::new_with_keys(self.k0, self.k1);
        s.write_u32(key);
        KeyHash::from_u64(s.finish())
    }

    /// A public 64-bit fingerprint of the seed: the hash of a fixed constant under it.
    ///
    /// Serialized sketches carry it so a decoder can refuse to merge sketches made with
    /// different seeds. SipHash is a PRF, so the fingerprint reveals nothing usable
    /// about the key itself.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        self.hash_bytes(FINGERPRINT_DOMAIN).get()
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seed(fingerprint = {:#018x})", self.fingerprint())
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Seed {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "Seed(fingerprint = {=u64:#x})", self.fingerprint());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-size paths digest the same bytes as the slice path.
    #[test]
    fn integer_hashes_equal_byte_hashes() {
        let seed = Seed::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        for k in [0u64, 1, 0xff, 1 << 32, u64::MAX, 0x0102_0304_0506_0708] {
            assert_eq!(seed.hash_u64(k), seed.hash_bytes(&k.to_le_bytes()));
            let k = k as u32;
            assert_eq!(seed.hash_u32(k), seed.hash_bytes(&k.to_le_bytes()));
        }
    }

    #[test]
    fn bytes_round_trip() {
        let bytes: [u8; 16] = core::array::from_fn(|i| i as u8 * 17);
        assert_eq!(Seed::from_bytes(bytes).to_bytes(), bytes);
        assert_eq!(
            Seed::from_bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
            Seed::new(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908)
        );
    }

    #[test]
    fn fixed_width_keys_hash_as_their_le_bytes() {
        let s = Seed::new(3, 4);
        assert_eq!(
            s.hash_u64(0xdead_beef),
            s.hash(&0xdead_beef_u64.to_le_bytes())
        );
        assert_eq!(
            s.hash_u32(0xdead_beef),
            s.hash(&0xdead_beef_u32.to_le_bytes())
        );
    }

    /// Literal known answers, computed outside Rust (a Python SipHash-1-3 of the
    /// ASCII string `loxo seed fingerprint v1` under each key): pins the domain
    /// string, the hash and the key order, and shows seeds differing in one bit of
    /// `k1` get unrelated fingerprints.
    #[test]
    fn fingerprint_known_answers() {
        assert_eq!(Seed::new(1, 2).fingerprint(), 0xe177_16be_b79e_cf86);
        assert_eq!(Seed::new(1, 3).fingerprint(), 0x3e72_8990_7034_647b);
        assert_eq!(Seed::new(0, 0).fingerprint(), 0x45c2_2a8d_0676_a800);
    }
}
