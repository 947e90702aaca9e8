//! What the binary fuse filters of both widths ([`BinaryFuse<F>`](crate::BinaryFuse)) share: the layout ([`FuseLayout`]), the probe
//! derivation, the wire frame and (feature `alloc`) the construction.
//!
//! A 3-wise binary fuse filter (Graf & Lemire, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters", ACM JEA 27, 2022) stores one `f`-bit fingerprint per
//! *slot*; a key maps to three slots in three consecutive *segments* and is reported
//! present iff the XOR of those three fingerprints equals the key's own fingerprint.
//! Construction (peeling a 3-hypergraph) chooses the fingerprints so that this holds
//! for every key of the set; any other key matches with probability `2^−f`.
//!
//! **Probe derivation** (part of the wire contract, and bit-for-bit that of the
//! `xorf` crate, which builds the filters — see [`build`]): from the key's keyed
//! digest `d` ([`KeyHash`]) and the filter's public construction seed `s`,
//! `x = mix64(d + s mod 2^64)` (MurmurHash3's `fmix64`, [`loxo_core::mix64`]);
//! `h0 = ⌊x · C / 2^64⌋` with `C` the segment-count length; with `L` the segment
//! length (a power of two) `h1 = (h0 + L) ⊕ ((x >> 18) & (L − 1))` and
//! `h2 = (h0 + 2L) ⊕ (x & (L − 1))`; the fingerprint is the low `f` bits of
//! `x ⊕ (x >> 32)`.

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{mix64, DecodeError, EncodeError, KeyHash, Seed};

/// Slots per key in the hypergraph (3-wise filters only).
pub const FUSE_ARITY: u32 = 3;
/// Largest segment length a layout may have (the reference implementations' cap).
pub const MAX_SEGMENT_LENGTH: u32 = 1 << 18;
/// Payload bytes before the fingerprints: construction seed `u64`, key count `u32`.
const PAYLOAD_HEAD: usize = 12;

/// Everything of a binary fuse filter but its fingerprints: validated geometry.
///
/// A value of this type always describes a filter whose three probes stay inside its
/// [`slots`](Self::slots): `segment_length` is a power of two in
/// `1..=`[`MAX_SEGMENT_LENGTH`], `segment_count_length` a non-zero multiple of it, and
/// `slots = segment_count_length + 2·segment_length` fits a `u32`. That is what makes
/// every lookup panic-free and in bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FuseLayout {
    fuse_seed: u64,
    segment_length: u32,
    segment_count_length: u32,
    keys: u32,
}

impl FuseLayout {
    /// A layout from its parts, checked: the construction seed, the segment length,
    /// the segment-count length and the number of distinct keys it was built from
    /// (at most the slot count).
    ///
    /// # Errors
    /// [`DecodeError::InvalidValue`] if the parts do not describe a filter (see the
    /// type's invariant).
    pub const fn new(
        fuse_seed: u64,
        segment_length: u32,
        segment_count_length: u32,
        keys: u32,
    ) -> Result<Self, DecodeError> {
        if !segment_length.is_power_of_two()
            || segment_length > MAX_SEGMENT_LENGTH
            || segment_count_length == 0
            || segment_count_length & (segment_length - 1) != 0
        {
            return Err(DecodeError::InvalidValue);
        }
        let slots = segment_count_length as u64 + 2 * segment_length as u64;
        if slots > u32::MAX as u64 || keys as u64 > slots {
            return Err(DecodeError::InvalidValue);
        }
        Ok(Self {
            fuse_seed,
            segment_length,
            segment_count_length,
            keys,
        })
    }

    /// The public seed construction picked (the one whose hypergraph peeled).
    #[must_use]
    pub const fn fuse_seed(&self) -> u64 {
        self.fuse_seed
    }

    /// Slots per segment, a power of two.
    #[must_use]
    pub const fn segment_length(&self) -> u32 {
        self.segment_length
    }

    /// Slots in which a key's first probe lands: `segment_count · segment_length`.
    #[must_use]
    pub const fn segment_count_length(&self) -> u32 {
        self.segment_count_length
    }

    /// Distinct keys the filter was built from.
    #[must_use]
    pub const fn keys(&self) -> u32 {
        self.keys
    }

    /// Fingerprints in the filter: `segment_count_length + 2·segment_length`.
    #[must_use]
    pub const fn slots(&self) -> usize {
        self.segment_count_length as usize + 2 * self.segment_length as usize
    }

    /// The key's mixed hash and its three slots (see the module docs). Every slot is
    /// `< slots()` by the type's invariant.
    #[inline(always)]
    pub(crate) const fn probe(&self, h: KeyHash) -> (u64, [usize; 3]) {
        let x = mix64(h.get().wrapping_add(self.fuse_seed));
        let h0 = mul_high(x, self.segment_count_length);
        let mask = self.segment_length - 1;
        let h1 = h0.wrapping_add(self.segment_length) ^ ((x >> 18) as u32 & mask);
        let h2 = h0.wrapping_add(2 * self.segment_length) ^ (x as u32 & mask);
        (x, [h0 as usize, h1 as usize, h2 as usize])
    }

    /// Parameters of the frame: `[f, 3, segment_length, segment_count_length]`.
    const fn params(&self, bits: u32) -> [u32; 4] {
        [
            bits,
            FUSE_ARITY,
            self.segment_length,
            self.segment_count_length,
        ]
    }

    /// Frame length of a filter with this layout and `bits`-bit fingerprints.
    pub(crate) const fn encoded_len(&self, bits: u32) -> usize {
        wire::frame_len(PAYLOAD_HEAD + self.slots() * (bits as usize / 8))
    }
}

/// `⌊x · c / 2^64⌋`. On 32-bit targets in two 32×32→64 multiplies (two `UMULL`s on a
/// Cortex-M4, not a 128-bit multiply): `x·c = hi·c·2^32 + lo·c`, and the floor of the
/// nested quotient is the floor of the whole. On 64-bit targets one 64×64→128
/// multiply (the same value, test `reduction_is_the_high_word`). Below `c`.
#[inline(always)]
const fn mul_high(x: u64, c: u32) -> u32 {
    #[cfg(target_pointer_width = "64")]
    {
        ((x as u128 * c as u128) >> 64) as u32
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        let c = c as u64;
        (((x >> 32) * c + (((x & 0xffff_ffff) * c) >> 32)) >> 32) as u32
    }
}

/// The two-multiply form of [`mul_high`], kept for the test on 64-bit hosts.
#[cfg(test)]
const fn mul_high_32(x: u64, c: u32) -> u32 {
    let c = c as u64;
    (((x >> 32) * c + (((x & 0xffff_ffff) * c) >> 32)) >> 32) as u32
}

/// The fingerprint bits of a mixed hash (before truncation to `f` bits).
#[inline(always)]
pub(crate) const fn fingerprint(x: u64) -> u64 {
    x ^ (x >> 32)
}

/// Writes the frame of a filter: kind `binary-fuse`, params
/// `[f, 3, segment_length, segment_count_length]`, payload construction seed `u64`,
/// key count `u32`, fingerprints (`f/8` bytes each, little-endian).
pub(crate) fn encode(
    seed: &Seed,
    layout: &FuseLayout,
    bits: u32,
    fingerprints: &[u8],
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let payload = PAYLOAD_HEAD + fingerprints.len();
    let header = Header::new(
        SketchKind::BinaryFuse,
        seed.fingerprint(),
        layout.params(bits),
        payload as u32,
    );
    let mut enc = Encoder::new(buf, &header)?;
    enc.put_u64(layout.fuse_seed);
    enc.put_u32(layout.keys);
    enc.put(fingerprints);
    Ok(enc.finish())
}

/// Validates a `binary-fuse` frame of `bits`-bit fingerprints under `seed` and
/// returns its layout and fingerprint bytes (borrowed from `bytes`).
pub(crate) fn decode<'a>(
    bytes: &'a [u8],
    seed: &Seed,
    bits: u32,
) -> Result<(FuseLayout, &'a [u8]), DecodeError> {
    let frame = Frame::parse(bytes)?;
    let h = frame.header();
    if h.kind != SketchKind::BinaryFuse {
        return Err(DecodeError::WrongKind {
            expected: SketchKind::BinaryFuse as u8,
            found: h.kind as u8,
        });
    }
    let [f, arity, segment_length, segment_count_length] = h.params;
    DecodeError::check_params([bits, FUSE_ARITY], [f, arity])?;
    if h.seed_fingerprint != seed.fingerprint() {
        return Err(DecodeError::SeedMismatch {
            expected: seed.fingerprint(),
            found: h.seed_fingerprint,
        });
    }
    if h.flags != 0 {
        return Err(DecodeError::InvalidValue);
    }
    let mut r = frame.reader();
    let fuse_seed = r.u64()?;
    let keys = r.u32()?;
    let layout = FuseLayout::new(fuse_seed, segment_length, segment_count_length, keys)?;
    let fingerprints = r.take(layout.slots() * (bits as usize / 8))?;
    r.finish()?;
    Ok((layout, fingerprints))
}

/// Why a binary fuse filter could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BuildError {
    /// More distinct keys than [`MAX_FUSE_KEYS`].
    TooManyKeys,
    /// No construction seed out of `attempts` gave a hypergraph that peels. With
    /// distinct digests one attempt fails rarely (the size factor is chosen for that:
    /// 1.125 slots per key at 10^6 keys, more for small sets), so this needs a
    /// thousand failures in a row; not seen in the tests (every size from 0 to 600,
    /// up to 10^6 keys). Reported, never hidden.
    Failed {
        /// Seeds tried.
        attempts: u32,
    },
    /// The built filter missed one of its own keys. Every build checks all its keys
    /// before returning, so a construction whose layout disagreed with this crate's
    /// lookup (e.g. an incompatible `xorf` release) is refused here, not shipped.
    Inconsistent,
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::TooManyKeys => write!(f, "more than {MAX_FUSE_KEYS} distinct keys"),
            Self::Failed { attempts } => {
                write!(f, "no construction seed of {attempts} tried peeled")
            }
            Self::Inconsistent => f.write_str("the built filter misses one of its keys"),
        }
    }
}

impl core::error::Error for BuildError {}

/// Most distinct keys a build accepts (the construction counts slots in `u32`).
pub const MAX_FUSE_KEYS: usize = 1 << 30;

/// Construction seeds tried before [`BuildError::Failed`] (`xorf`'s bound).
pub const MAX_FUSE_ATTEMPTS: u32 = 1_000;

#[cfg(feature = "alloc")]
pub(crate) use build::build;
#[cfg(feature = "alloc")]
pub use build::FuseBuild;

#[cfg(feature = "alloc")]
mod build {
    use alloc::vec::Vec;

    use loxo_core::KeyHash;

    use super::{BuildError, FuseLayout, MAX_FUSE_ATTEMPTS, MAX_FUSE_KEYS};
    use crate::{BinaryFuse, Fingerprint};

    /// A filter built on the host: its layout and fingerprints (`f/8` bytes each,
    /// little-endian), ready for [`BinaryFuse8::from_parts`](crate::BinaryFuse8::from_parts)
    /// / [`BinaryFuse16::from_parts`](crate::BinaryFuse16::from_parts) and for
    /// encoding.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct FuseBuild {
        /// The validated layout.
        pub layout: FuseLayout,
        /// The fingerprint bytes.
        pub fingerprints: Vec<u8>,
        /// Input digests that repeated an earlier one (dropped: a set has each once).
        pub duplicates: usize,
    }

    /// Builds the fingerprints of an `F::BITS`-bit (8 or 16) 3-wise binary fuse
    /// filter over the digests `hashes`, with the `xorf` crate's construction.
    ///
    /// Why `xorf` and not a copy: its `BinaryFuse8`/`BinaryFuse16` are a port of the
    /// authors' reference construction (FastFilter/xorfilter, including the
    /// smaller-segment retry of its PR 50), exported as plain data (the fingerprint
    /// array is public, and so are seed and segment sizes); the lookup it implies is
    /// eight lines, which this crate re-implements `no_std` over borrowed bytes. The
    /// price — `xorf` allocates, and its probe derivation is an implementation detail
    /// — is paid on the host only, and the second point is checked: every build looks
    /// up all its keys with this crate's lookup before returning
    /// ([`BuildError::Inconsistent`]), and the golden files pin the bytes.
    pub(crate) fn build<F: Fingerprint>(hashes: &[KeyHash]) -> Result<FuseBuild, BuildError> {
        let mut keys: Vec<u64> = hashes.iter().map(|h| h.get()).collect();
        keys.sort_unstable();
        keys.dedup();
        let duplicates = hashes.len() - keys.len();
        if keys.len() > MAX_FUSE_KEYS {
            return Err(BuildError::TooManyKeys);
        }
        let failed = |_| BuildError::Failed {
            attempts: MAX_FUSE_ATTEMPTS,
        };
        let (d, fingerprints) = if F::BITS == 8 {
            let f = xorf::BinaryFuse8::try_from(&keys[..]).map_err(failed)?;
            (f.descriptor.clone(), f.fingerprints.into_vec())
        } else {
            let f = xorf::BinaryFuse16::try_from(&keys[..]).map_err(failed)?;
            let bytes = f
                .fingerprints
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            (f.descriptor.clone(), bytes)
        };
        let layout = FuseLayout::new(
            d.seed,
            d.segment_length,
            d.segment_count_length,
            keys.len() as u32,
        )
        .map_err(|_| BuildError::Inconsistent)?;
        if fingerprints.len() != layout.slots() * F::BYTES {
            return Err(BuildError::Inconsistent);
        }
        let built = FuseBuild {
            layout,
            fingerprints,
            duplicates,
        };
        let f =
            BinaryFuse::<F>::from_parts(loxo_core::Seed::new(0, 0), layout, &built.fingerprints);
        if f.is_ok_and(|f| keys.iter().all(|&k| f.contains_hash(KeyHash::from_u64(k)))) {
            Ok(built)
        } else {
            Err(BuildError::Inconsistent)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_validated() {
        assert!(FuseLayout::new(0, 4, 4, 0).is_ok());
        assert!(FuseLayout::new(0, 8192, 136 * 8192, 1_000_000).is_ok());
        for (l, c, k) in [
            (0, 4, 0),              // zero segment length
            (3, 6, 0),              // not a power of two
            (1 << 19, 1 << 19, 0),  // above the cap
            (4, 0, 0),              // no segment
            (4, 6, 0),              // not a multiple
            (1 << 18, !0x3ffff, 0), // slots overflow u32
            (4, 4, 13),             // more keys than slots
        ] {
            assert_eq!(
                FuseLayout::new(1, l, c, k),
                Err(DecodeError::InvalidValue),
                "{l} {c} {k}"
            );
        }
    }

    #[test]
    fn view_sizes() {
        let want = if cfg!(target_pointer_width = "64") {
            56
        } else {
            48
        };
        assert_eq!(core::mem::size_of::<crate::BinaryFuse8<'_>>(), want);
        assert_eq!(core::mem::size_of::<crate::BinaryFuse16<'_>>(), want);
    }

    #[test]
    fn probes_stay_in_their_segments() {
        let layout = FuseLayout::new(7, 16, 5 * 16, 0).unwrap_or_else(|_| unreachable!());
        for d in (0..10_000u64).map(|i| mix64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))) {
            let (_, [a, b, c]) = layout.probe(KeyHash::from_u64(d));
            assert!(a < 80 && c < layout.slots());
            assert_eq!(b / 16, a / 16 + 1);
            assert_eq!(c / 16, a / 16 + 2);
        }
    }

    /// The two-multiply reduction equals the 128-bit product's high word.
    #[test]
    fn reduction_is_the_high_word() {
        for c in [1u32, 4, 12, 1_130_496, !3] {
            for x in [
                0u64,
                1,
                u64::MAX,
                0x8000_0000_0000_0000,
                0x1234_5678_9abc_def0,
            ] {
                let want = (u128::from(x) * u128::from(c)) >> 64;
                assert_eq!(u128::from(mul_high(x, c)), want);
                assert_eq!(u128::from(mul_high_32(x, c)), want);
            }
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod build_tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use loxo_core::{mix64, DecodeError, KeyHash, Seed};
    use xorf::Filter as _;

    use crate::{BinaryFuse16, BinaryFuse8, BuildError};

    fn digests(n: u64, salt: u64) -> Vec<KeyHash> {
        (0..n)
            .map(|i| KeyHash::from_u64(mix64(i ^ salt.rotate_left(17)).wrapping_add(salt)))
            .collect()
    }

    /// Every size from 0 to 600 and a few larger ones build, at both widths, and
    /// find all their keys (the build checks it too; this checks the build checked).
    #[test]
    fn every_small_size_builds() -> Result<(), BuildError> {
        let seed = Seed::new(0, 0);
        for n in (0..600).chain([1000, 4095, 4096, 4097, 20_000]) {
            let keys = digests(n, n);
            let b8 = BinaryFuse8::build(&keys)?;
            let b16 = BinaryFuse16::build(&keys)?;
            assert_eq!(b8.layout.keys() as u64, n);
            let f8 = BinaryFuse8::from_parts(seed, b8.layout, &b8.fingerprints);
            let f16 = BinaryFuse16::from_parts(seed, b16.layout, &b16.fingerprints);
            let (Ok(f8), Ok(f16)) = (f8, f16) else {
                panic!("n = {n}: parts refused");
            };
            assert!(keys
                .iter()
                .all(|&h| f8.contains_hash(h) && f16.contains_hash(h)));
        }
        Ok(())
    }

    /// This crate's lookup gives the `xorf` filter's own answer on present and absent
    /// keys: the layouts are the same, not merely compatible on the keys.
    #[test]
    fn lookups_equal_xorf() -> Result<(), BuildError> {
        let keys = digests(30_000, 1);
        let raw: Vec<u64> = {
            let mut v: Vec<u64> = keys.iter().map(|h| h.get()).collect();
            v.sort_unstable();
            v
        };
        let x8 = xorf::BinaryFuse8::try_from(&raw[..]).map_err(|_| BuildError::Inconsistent)?;
        let x16 = xorf::BinaryFuse16::try_from(&raw[..]).map_err(|_| BuildError::Inconsistent)?;
        let b8 = BinaryFuse8::build(&keys)?;
        let b16 = BinaryFuse16::build(&keys)?;
        let seed = Seed::new(0, 0);
        let (Ok(f8), Ok(f16)) = (
            BinaryFuse8::from_parts(seed, b8.layout, &b8.fingerprints),
            BinaryFuse16::from_parts(seed, b16.layout, &b16.fingerprints),
        ) else {
            panic!("parts refused");
        };
        let mut hits = [0u32; 2];
        for q in digests(200_000, 99).into_iter().chain(keys) {
            let a = f8.contains_hash(q);
            assert_eq!(a, x8.contains(&q.get()));
            let b = f16.contains_hash(q);
            assert_eq!(b, x16.contains(&q.get()));
            hits[0] += u32::from(a);
            hits[1] += u32::from(b);
        }
        // 30 000 members plus 2^−8 / 2^−16 of 200 000 absent keys (781 / 3 expected).
        assert!((30_600..31_000).contains(&hits[0]), "{hits:?}");
        assert!((30_000..30_020).contains(&hits[1]), "{hits:?}");
        Ok(())
    }

    #[test]
    fn duplicates_count_once() -> Result<(), BuildError> {
        let mut keys = digests(1000, 5);
        keys.extend_from_slice(&keys.clone()[..300]);
        keys.push(keys[0]);
        let b = BinaryFuse8::build(&keys)?;
        assert_eq!((b.layout.keys(), b.duplicates), (1000, 301));
        Ok(())
    }

    #[test]
    fn frames_round_trip_and_refuse_what_they_are_not() -> Result<(), BuildError> {
        let seed = Seed::new(3, 4);
        let keys: Vec<KeyHash> = (0..500u32).map(|i| seed.hash(&i.to_le_bytes())).collect();
        let b8 = BinaryFuse8::build(&keys)?;
        let b16 = BinaryFuse16::build(&keys)?;
        let (Ok(f8), Ok(f16)) = (
            BinaryFuse8::from_parts(seed, b8.layout, &b8.fingerprints),
            BinaryFuse16::from_parts(seed, b16.layout, &b16.fingerprints),
        ) else {
            panic!("parts refused");
        };
        let mut buf8 = vec![0u8; f8.encoded_len()];
        let mut buf16 = vec![0u8; f16.encoded_len()];
        assert_eq!(f8.encode_into(&mut buf8), Ok(buf8.len()));
        assert_eq!(f16.encode_into(&mut buf16), Ok(buf16.len()));
        assert_eq!(BinaryFuse8::from_bytes(&buf8, seed), Ok(f8));
        assert_eq!(BinaryFuse16::from_bytes(&buf16, seed), Ok(f16));
        assert!((0..500u32).all(|i| f8.contains(&i.to_le_bytes())));
        assert_eq!(
            BinaryFuse8::from_bytes(&buf16, seed).err(),
            Some(DecodeError::ParameterMismatch {
                expected: 8,
                found: 16
            })
        );
        assert_eq!(
            BinaryFuse16::from_bytes(&buf8, seed).err(),
            Some(DecodeError::ParameterMismatch {
                expected: 16,
                found: 8
            })
        );
        assert_eq!(
            BinaryFuse8::from_bytes(&buf8, Seed::new(3, 5)).err(),
            Some(DecodeError::SeedMismatch {
                expected: Seed::new(3, 5).fingerprint(),
                found: seed.fingerprint(),
            })
        );
        assert!(f8.encode_into(&mut buf8[..10]).is_err());
        assert_eq!(
            BinaryFuse8::from_parts(seed, b8.layout, &b8.fingerprints[1..]).err(),
            Some(DecodeError::Truncated)
        );
        Ok(())
    }
}
