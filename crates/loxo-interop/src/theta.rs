//! Apache DataSketches **compact theta** images of a [`ThetaSketch<K>`], both ways:
//! [`encode_into`] writes what DataSketches' `compact_theta_sketch.serialize()`
//! writes (serial version 3, ordered); [`decode`] and the in-place view
//! [`CompactThetaImage`] read serial versions 1, 2, 3 (ordered or not) and 4 (the
//! compressed form of `serialize(compress=True)`).
//!
//! # Hashes and seeds: what a loxo image means to DataSketches
//!
//! A theta image is θ plus the retained 63-bit hash values. loxo's values are its
//! keyed SipHash digests `>> 1`; DataSketches' `update_theta_sketch` keeps
//! `MurmurHash3_x64_128(key, seed).h1 >> 1`. So:
//!
//! * **Set operations work across the boundary**: DataSketches' `theta_union`,
//!   `theta_intersection`, `theta_a_not_b` (and Druid, Spark, Hive…) need only the
//!   values and θ, so they combine loxo images made with the same loxo seed and give
//!   loxo's figures (same values, same θ, same estimate).
//! * **Raw keys do not mix**: a key DataSketches' own `update_theta_sketch`
//!   hashes lands on another value than the same key in a loxo sketch, so a loxo
//!   image must never be unioned with a sketch DataSketches built from raw keys.
//!   DataSketches guards this with a 16-bit **seed hash** in every image, and loxo
//!   maps its seeds onto it:
//!
//! | loxo sketch seeded with | DataSketches seed ([`datasketches_update_seed`]) | image seed hash |
//! |---|---|---|
//! | a keyed [`Seed`] `s` (loxo hashing) | `s.fingerprint()` (public, reveals nothing of the key) | [`compute_seed_hash`]`(s.fingerprint())` |
//! | [`datasketches_theta_seed`]`(S)` (DataSketches' Murmur hashing, seed `S`) | `S` (default [`DEFAULT_UPDATE_SEED`] 9001) | [`compute_seed_hash`]`(S)` |
//!
//! On the DataSketches side a user passes that seed wherever DataSketches takes
//! one: `compact_theta_sketch.deserialize(image, seed=fp)`, `theta_union(lg_k,
//! seed=fp)`, `theta_intersection(seed=fp)`, `theta_a_not_b(seed=fp)` with `fp` the
//! loxo seed's [`fingerprint`](Seed::fingerprint) (Java: `Sketch.wrap(mem, fp)`,
//! `SetOperation.builder().setSeed(fp)`). A mismatched seed fails DataSketches' seed
//! hash check instead of silently mixing hash functions. (Java also refuses seeds
//! whose seed hash is 0: one loxo seed in 65 536; C++/Python accept them.)
//!
//! Images DataSketches built from raw keys decode into a sketch seeded with the
//! **tag** [`datasketches_theta_seed`]`(S)`: a fixed, public `Seed` that only names
//! "DataSketches' MurmurHash3 with seed `S`". Such sketches estimate and combine
//! among themselves (same `S`), and [`datasketches_theta_hash`] inserts raw keys
//! into them as DataSketches would; their seed check refuses to combine them with
//! keyed loxo sketches, whose values come from another hash.
//!
//! # The image (little-endian)
//!
//! | offset | bytes | serial version 3 |
//! |---:|---:|---|
//! | 0 | 1 | preamble longs: 1 (empty, or exact with one value), 2 (exact), 3 (estimation: θ < 1) |
//! | 1 | 1 | serial version: 3 |
//! | 2 | 1 | family: 3 (compact) |
//! | 3 | 2 | unused (0) |
//! | 5 | 1 | flags: 1 big-endian (never), 2 read-only, 4 empty, 8 compact, 16 ordered, 32 single item (Java only) |
//! | 6 | 2 | seed hash |
//! | 8 | 4 | retained count (preamble ≥ 2) — or, with preamble 1 and not empty, the single value at 8..16 |
//! | 12 | 4 | unused (Java writes the sampling probability p = 1.0 as `f32`) |
//! | 16 | 8 | θ (preamble 3) |
//! | 8·pre | 8·count | the values (`u64`), ascending when ordered |
//!
//! Serial version 4 (compressed, always ordered and not empty): byte 0 preamble longs
//! 1 (exact) or 2 (θ at 8..16), byte 3 bits per delta `b`, byte 4 bytes of the count
//! `c`, byte 5 flags, 6..8 seed hash; then the count in `c` little-endian bytes, then
//! the deltas between consecutive values (the first from 0) as one MSB-first bit
//! stream of `b` bits each. Version 1 (Java's first format): preamble 3, count at 8,
//! θ at 16, values from 24, no seed hash; version 2 as version 3 without the
//! single-value form (an image with no values is empty when θ = 1).
//!
//! [`encode_into`] writes the bytes DataSketches' C++ (the Python package) writes for
//! the same state, byte for byte (Java's two extra bits above are ignored by every
//! reader).

use core::fmt;

use loxo_core::{DecodeError, EncodeError, KeyHash, Seed};
use loxo_theta::{ThetaSketch, THETA_MAX};

/// DataSketches' default update seed (`DEFAULT_UPDATE_SEED`, `9001`).
pub const DEFAULT_UPDATE_SEED: u64 = 9001;
/// Family id of a compact theta image.
pub const FAMILY_COMPACT: u8 = 3;

const SER_VER: u8 = 3;
const SER_VER_COMPRESSED: u8 = 4;
const FLAG_BIG_ENDIAN: u8 = 1;
const FLAG_READ_ONLY: u8 = 2;
const FLAG_EMPTY: u8 = 4;
const FLAG_COMPACT: u8 = 8;
const FLAG_ORDERED: u8 = 16;
const FLAG_SINGLE_ITEM: u8 = 32;
/// First half of the tag seeds ("DSTHETA" and a 0): a `Seed` with it names
/// DataSketches' Murmur hashing, its second half being DataSketches' seed.
const TAG_K0: u64 = u64::from_le_bytes(*b"DSTHETA\0");

/// DataSketches' 16-bit seed hash of an update seed (`compute_seed_hash`): the low
/// 16 bits of `MurmurHash3_x64_128(seed as 8 little-endian bytes, 0).h1`.
///
/// ```
/// use loxo_interop::theta::compute_seed_hash;
/// assert_eq!(compute_seed_hash(9001), 0x93cc); // in every default image at bytes 6..8
/// ```
#[must_use]
pub fn compute_seed_hash(update_seed: u64) -> u16 {
    mur3::murmurhash3_x64_128(&update_seed.to_le_bytes(), 0).0 as u16
}

/// The tag [`Seed`] of sketches holding DataSketches' own hash values (MurmurHash3
/// with `update_seed`): what [`decode`] gets for images DataSketches built from raw
/// keys. A public constant, not a secret: it keys nothing, it only keeps those
/// sketches apart from keyed loxo sketches and from other DataSketches seeds.
#[must_use]
pub const fn datasketches_theta_seed(update_seed: u64) -> Seed {
    Seed::new(TAG_K0, update_seed)
}

/// The seed to pass on the DataSketches side for images of sketches seeded with
/// `seed`: the `S` of a tag seed [`datasketches_theta_seed`]`(S)`, otherwise loxo's
/// public [`fingerprint`](Seed::fingerprint) of the seed.
///
/// ```
/// use loxo_core::Seed;
/// use loxo_interop::theta::{datasketches_theta_seed, datasketches_update_seed};
///
/// assert_eq!(datasketches_update_seed(datasketches_theta_seed(9001)), 9001);
/// let seed = Seed::new(7, 11);
/// assert_eq!(datasketches_update_seed(seed), seed.fingerprint());
/// ```
#[must_use]
pub fn datasketches_update_seed(seed: Seed) -> u64 {
    let b = seed.to_bytes();
    match b.split_first_chunk::<8>() {
        Some((k0, k1)) if u64::from_le_bytes(*k0) == TAG_K0 => k1
            .first_chunk::<8>()
            .map_or(0, |k1| u64::from_le_bytes(*k1)),
        _ => seed.fingerprint(),
    }
}

/// DataSketches' theta hash of a key, as a digest for
/// [`ThetaSketch::insert_hash`] on a sketch seeded with
/// [`datasketches_theta_seed`]`(update_seed)`: `MurmurHash3_x64_128(key,
/// update_seed).h1` (the sketch keeps it `>> 1`, as DataSketches does). The bytes
/// are those DataSketches hashes (a string's UTF-8 bytes, an integer's 8
/// little-endian bytes); DataSketches ignores empty strings. Seeds up to `2^32 − 1`
/// (DataSketches' seeds are 64-bit; the Murmur implementation here takes 32).
///
/// Unkeyed, like every interop hash: crafted keys can collide on purpose.
///
/// ```
/// use loxo_interop::theta::{datasketches_theta_hash, datasketches_theta_seed};
/// use loxo_theta::ThetaSketch;
///
/// let mut s = ThetaSketch::<2048>::new(datasketches_theta_seed(9001));
/// for i in 0..100i64 {
///     s.insert_hash(datasketches_theta_hash(&i.to_le_bytes(), 9001)); // Python: update(i)
/// }
/// assert_eq!(s.estimate(), 100.0);
/// ```
#[must_use]
pub fn datasketches_theta_hash(key: &[u8], update_seed: u32) -> KeyHash {
    KeyHash::from_u64(mur3::murmurhash3_x64_128(key, update_seed).0)
}

/// How DataSketches would serialize a sketch's state: `(empty, estimation, single)`.
fn state<const K: usize>(s: &ThetaSketch<K>) -> (bool, bool, bool) {
    let theta = s.theta_long();
    // Java's truth table: no values and θ = 1 is the empty image, whatever led there
    // (an intersection of disjoint exact sets); an empty sketch has θ = 1.
    let empty = s.is_empty() || (s.retained() == 0 && theta == THETA_MAX);
    let estimation = !empty && theta < THETA_MAX;
    let single = !empty && !estimation && s.retained() == 1;
    (empty, estimation, single)
}

/// Bytes [`encode_into`] writes for `sketch`: 8 (empty), 16 (one value, θ = 1),
/// `16 + 8·retained` (exact), `24 + 8·retained` (estimation).
#[must_use]
pub fn encoded_len<const K: usize>(sketch: &ThetaSketch<K>) -> usize {
    match state(sketch) {
        (true, _, _) => 8,
        (_, _, true) => 16,
        (_, true, _) => 24 + 8 * sketch.retained(),
        _ => 16 + 8 * sketch.retained(),
    }
}

/// Writes `sketch` as a DataSketches compact theta image (serial version 3,
/// ordered; see the module docs) to the front of `buf` and returns its length,
/// [`encoded_len`]. The seed hash is [`compute_seed_hash`] of
/// [`datasketches_update_seed`]`(sketch.seed())`. O(n log n) in the retained values
/// (sorted in place in `buf`), no allocation.
///
/// # Errors
///
/// [`EncodeError::BufferTooSmall`] if `buf` is shorter (nothing is written).
///
/// ```
/// use loxo_core::Seed;
/// use loxo_interop::theta::{decode, encode_into, encoded_len};
/// use loxo_theta::ThetaSketch;
///
/// let seed = Seed::new(7, 11);
/// let mut s = ThetaSketch::<512>::new(seed);
/// for i in 0..10_000u32 {
///     s.insert(&i.to_le_bytes());
/// }
/// let mut buf = vec![0u8; encoded_len(&s)];
/// let n = encode_into(&s, &mut buf)?; // Python: compact_theta_sketch.deserialize(buf, seed=seed.fingerprint())
/// let back: ThetaSketch<512> = decode(&buf[..n], seed)?;
/// assert_eq!(back.estimate(), s.estimate());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_into<const K: usize>(
    sketch: &ThetaSketch<K>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let needed = encoded_len(sketch);
    let Some(out) = buf.get_mut(..needed) else {
        return Err(EncodeError::BufferTooSmall { needed });
    };
    out.fill(0);
    let (empty, estimation, single) = state(sketch);
    let pre_longs: u8 = if empty || single {
        1
    } else if estimation {
        3
    } else {
        2
    };
    let mut flags = FLAG_READ_ONLY | FLAG_COMPACT | FLAG_ORDERED;
    if empty {
        flags |= FLAG_EMPTY;
    }
    let seed_hash = compute_seed_hash(datasketches_update_seed(sketch.seed()));
    let (pre, values) = out.split_at_mut(8 * usize::from(pre_longs));
    pre[..3].copy_from_slice(&[pre_longs, SER_VER, FAMILY_COMPACT]);
    pre[5] = flags;
    pre[6..8].copy_from_slice(&seed_hash.to_le_bytes());
    if empty {
        return Ok(needed);
    }
    if pre_longs >= 2 {
        pre[8..12].copy_from_slice(&(sketch.retained() as u32).to_le_bytes());
    }
    if pre_longs == 3 {
        pre[16..24].copy_from_slice(&sketch.theta_long().to_le_bytes());
    }
    let (slots, _) = values.as_chunks_mut::<8>();
    for (slot, v) in slots.iter_mut().zip(sketch.values()) {
        *slot = v.to_le_bytes();
    }
    slots.sort_unstable_by_key(|c| u64::from_le_bytes(*c));
    Ok(needed)
}

/// Decodes a DataSketches compact theta image (serial version 1 to 4) into a
/// sketch seeded with `seed`: a keyed loxo seed for images of loxo sketches, or
/// [`datasketches_theta_seed`]`(S)` for images DataSketches built with update seed
/// `S` (9001 unless chosen). An image with more values than `K` holds is
/// down-sampled as inserts would be (a smaller θ: a valid sketch of the same set).
///
/// # Errors
///
/// As [`CompactThetaImage::parse`] and [`CompactThetaImage::to_sketch`].
pub fn decode<const K: usize>(bytes: &[u8], seed: Seed) -> Result<ThetaSketch<K>, DecodeError> {
    CompactThetaImage::parse(bytes)?.to_sketch(seed)
}

/// A validated DataSketches compact theta image, read in place (no copy): its
/// figures as DataSketches computes them, and its values.
///
/// [`parse`](Self::parse) checks the whole image once (lengths, flags, θ, every
/// value non-zero and below θ, ascending where the image says it is ordered), so
/// nothing after it can fail but the seed check and, for unordered images, the
/// duplicate check of [`to_sketch`](Self::to_sketch).
///
/// ```
/// use loxo_interop::theta::CompactThetaImage;
///
/// // DataSketches' (C++, Python) image of a sketch of the one key 1.
/// let img = [1, 3, 3, 0, 0, 0x1a, 0xcc, 0x93, 0x15, 0xf9, 0x7d, 0xcb, 0xbd, 0x86, 0xa1, 0x05];
/// let view = CompactThetaImage::parse(&img)?;
/// assert_eq!((view.retained(), view.estimate(), view.seed_hash()), (1, 1.0, Some(0x93cc)));
/// # Ok::<(), loxo_core::DecodeError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CompactThetaImage<'a> {
    serial_version: u8,
    empty: bool,
    ordered: bool,
    seed_hash: Option<u16>,
    theta: u64,
    count: u32,
    /// The value bytes: `count` little-endian `u64`s, or (version 4) the bit stream.
    data: &'a [u8],
    /// 64 for versions 1–3; the bits per delta for version 4.
    entry_bits: u8,
}

impl<'a> CompactThetaImage<'a> {
    /// Parses and validates an image (serial version 1, 2, 3 or 4).
    ///
    /// # Errors
    ///
    /// * [`DecodeError::Truncated`]: shorter than its preamble or its values;
    /// * [`DecodeError::TrailingBytes`]: longer than the image it declares;
    /// * [`DecodeError::WrongKind`]: a family other than compact theta (3), e.g. an
    ///   updatable sketch's image (family 2: serialize its `compact()` instead);
    /// * [`DecodeError::UnsupportedVersion`]: a serial version other than 1–4;
    /// * [`DecodeError::InvalidValue`]: preamble longs outside what the version
    ///   allows; the big-endian flag; a version 3/4 image without the compact and
    ///   read-only flags; an empty image with values; a single-item flag without the
    ///   single-value form; θ of 0 or above 2^63 − 1; a version 4 image flagged empty
    ///   or unordered, with 0 (or over 64) bits per delta or over 4 count bytes; a
    ///   value 0 or not below θ; an ordered image whose values do not ascend
    ///   strictly.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let pre = bytes.first_chunk::<8>().ok_or(DecodeError::Truncated)?;
        let [pre_longs, ser_ver, family, b3, b4, flags, s0, s1] = *pre;
        if family != FAMILY_COMPACT {
            return Err(DecodeError::WrongKind {
                expected: FAMILY_COMPACT,
                found: family,
            });
        }
        let seed_hash = u16::from_le_bytes([s0, s1]);
        let image = match ser_ver {
            1 => Self::parse_v1_v2(bytes, 1, pre_longs, None)?,
            2 => Self::parse_v1_v2(bytes, 2, pre_longs, Some(seed_hash))?,
            3 => Self::parse_v3(bytes, pre_longs, flags, seed_hash)?,
            4 => Self::parse_v4(bytes, pre_longs, b3, b4, flags, seed_hash)?,
            v => return Err(DecodeError::UnsupportedVersion(u16::from(v))),
        };
        image.validate_values()
    }

    /// Versions 1 and 2: counts and θ in the preamble, no flags that matter.
    fn parse_v1_v2(
        bytes: &'a [u8],
        ser_ver: u8,
        pre_longs: u8,
        seed_hash: Option<u16>,
    ) -> Result<Self, DecodeError> {
        let (count, theta) = match (ser_ver, pre_longs) {
            (2, 1) => (0, THETA_MAX),
            (2, 2) => (u32_at(bytes, 8)?, THETA_MAX),
            (1 | 2, 3) => (u32_at(bytes, 8)?, u64_at(bytes, 16)?),
            _ => return Err(DecodeError::InvalidValue),
        };
        let empty = count == 0 && theta == THETA_MAX;
        let data = exact_tail(bytes, 8 * usize::from(pre_longs), count as usize, 64)?;
        Ok(Self {
            serial_version: ser_ver,
            empty,
            // Set by validate_values from the values themselves.
            ordered: false,
            seed_hash,
            theta,
            count,
            data,
            entry_bits: 64,
        })
    }

    fn parse_v3(
        bytes: &'a [u8],
        pre_longs: u8,
        flags: u8,
        seed_hash: u16,
    ) -> Result<Self, DecodeError> {
        check_flags(flags)?;
        let empty = flags & FLAG_EMPTY != 0;
        let ordered = flags & FLAG_ORDERED != 0;
        let (count, theta) = match pre_longs {
            1 if empty => (0, THETA_MAX),
            1 => (1, THETA_MAX),
            2 => (u32_at(bytes, 8)?, THETA_MAX),
            3 => (u32_at(bytes, 8)?, u64_at(bytes, 16)?),
            _ => return Err(DecodeError::InvalidValue),
        };
        if (empty && count != 0) || (flags & FLAG_SINGLE_ITEM != 0 && (empty || pre_longs != 1)) {
            return Err(DecodeError::InvalidValue);
        }
        let data = exact_tail(bytes, 8 * usize::from(pre_longs), count as usize, 64)?;
        Ok(Self {
            serial_version: SER_VER,
            empty,
            ordered,
            seed_hash: Some(seed_hash),
            // An empty image's θ is 1 whatever it says (Java's "p < 1, no update").
            theta: if empty { THETA_MAX } else { theta },
            count,
            data,
            entry_bits: 64,
        })
    }

    fn parse_v4(
        bytes: &'a [u8],
        pre_longs: u8,
        entry_bits: u8,
        count_bytes: u8,
        flags: u8,
        seed_hash: u16,
    ) -> Result<Self, DecodeError> {
        check_flags(flags)?;
        if flags & (FLAG_EMPTY | FLAG_SINGLE_ITEM) != 0
            || flags & FLAG_ORDERED == 0
            || !(1..=64).contains(&entry_bits)
            || !(1..=4).contains(&count_bytes)
        {
            return Err(DecodeError::InvalidValue);
        }
        let (theta, at) = match pre_longs {
            1 => (THETA_MAX, 8),
            2 => (u64_at(bytes, 8)?, 16),
            _ => return Err(DecodeError::InvalidValue),
        };
        let count_at = bytes
            .get(at..at + usize::from(count_bytes))
            .ok_or(DecodeError::Truncated)?;
        let count = count_at
            .iter()
            .rev()
            .fold(0u32, |c, &b| c << 8 | u32::from(b));
        let data = exact_tail(
            bytes,
            at + usize::from(count_bytes),
            count as usize,
            entry_bits,
        )?;
        Ok(Self {
            serial_version: SER_VER_COMPRESSED,
            empty: false,
            ordered: true,
            seed_hash: Some(seed_hash),
            theta,
            count,
            data,
            entry_bits,
        })
    }

    /// θ in range; every value non-zero, below θ, and ascending where the image is
    /// ordered. Versions 1 and 2 carry no usable ordered flag: they are ordered
    /// when their values ascend.
    fn validate_values(mut self) -> Result<Self, DecodeError> {
        if self.theta == 0 || self.theta > THETA_MAX {
            return Err(DecodeError::InvalidValue);
        }
        let mut previous = 0u64;
        let mut ascending = true;
        for v in self.values() {
            if v == 0 || v >= self.theta {
                return Err(DecodeError::InvalidValue);
            }
            ascending &= v > previous;
            previous = v;
        }
        if self.serial_version <= 2 {
            self.ordered = ascending;
        } else if self.ordered && !ascending {
            return Err(DecodeError::InvalidValue);
        }
        Ok(self)
    }

    /// The image's serial version (1 to 4).
    pub const fn serial_version(&self) -> u8 {
        self.serial_version
    }

    /// The image is of an empty sketch (no key ever offered).
    pub const fn is_empty(&self) -> bool {
        self.empty
    }

    /// Its values ascend (DataSketches' ordered flag, checked).
    pub const fn is_ordered(&self) -> bool {
        self.ordered
    }

    /// The 16-bit seed hash it carries (`None` for serial version 1, which has none).
    pub const fn seed_hash(&self) -> Option<u16> {
        self.seed_hash
    }

    /// θ on the 63-bit scale ([`THETA_MAX`] = 1.0).
    pub const fn theta_long(&self) -> u64 {
        self.theta
    }

    /// θ as a fraction in `(0, 1]`.
    pub fn theta(&self) -> f64 {
        self.theta as f64 / THETA_MAX as f64
    }

    /// Values retained.
    pub const fn retained(&self) -> u32 {
        self.count
    }

    /// θ < 1 and not empty (DataSketches' `is_estimation_mode`).
    pub const fn is_estimation_mode(&self) -> bool {
        !self.empty && self.theta < THETA_MAX
    }

    /// DataSketches' `get_estimate`: `retained / θ`, bit for bit.
    pub fn estimate(&self) -> f64 {
        f64::from(self.count) / self.theta()
    }

    /// The retained values, in image order.
    pub fn values(&self) -> impl Iterator<Item = u64> + 'a {
        let (data, bits) = (self.data, u32::from(self.entry_bits));
        let mut previous = 0u64;
        (0..self.count as usize).map(move |i| {
            if bits == 64 {
                u64_at(data, 8 * i).unwrap_or(0)
            } else {
                // Deltas from the previous value; a malformed stream wraps, which
                // validate_values rejects as not ascending.
                previous = previous.wrapping_add(read_bits(data, i * bits as usize, bits));
                previous
            }
        })
    }

    /// Checks the image's seed hash against the one of `seed`
    /// ([`compute_seed_hash`]`(`[`datasketches_update_seed`]`(seed))`), as
    /// DataSketches does: not for empty images nor for version 1 (no seed hash).
    ///
    /// # Errors
    ///
    /// [`DecodeError::SeedMismatch`] with the expected and found **16-bit seed
    /// hashes** (not loxo fingerprints).
    pub fn check_seed(&self, seed: Seed) -> Result<(), DecodeError> {
        let expected = compute_seed_hash(datasketches_update_seed(seed));
        match self.seed_hash {
            Some(found) if !self.empty && found != expected => Err(DecodeError::SeedMismatch {
                expected: u64::from(expected),
                found: u64::from(found),
            }),
            _ => Ok(()),
        }
    }

    /// The sketch of this image, seeded with `seed` (see [`decode`]).
    ///
    /// # Errors
    ///
    /// [`DecodeError::SeedMismatch`] as [`check_seed`](Self::check_seed);
    /// [`DecodeError::InvalidValue`] when an unordered image repeats a value.
    pub fn to_sketch<const K: usize>(&self, seed: Seed) -> Result<ThetaSketch<K>, DecodeError> {
        self.check_seed(seed)?;
        ThetaSketch::from_parts(seed, self.theta, self.empty, self.values())
            .ok_or(DecodeError::InvalidValue)
    }
}

impl fmt::Debug for CompactThetaImage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompactThetaImage")
            .field("serial_version", &self.serial_version)
            .field("empty", &self.empty)
            .field("ordered", &self.ordered)
            .field("seed_hash", &self.seed_hash)
            .field("theta", &self.theta())
            .field("retained", &self.count)
            .field("estimate", &self.estimate())
            .finish_non_exhaustive()
    }
}

/// Flags every version 3/4 image has (Java checks them): little-endian, compact,
/// read-only.
fn check_flags(flags: u8) -> Result<(), DecodeError> {
    let needed = FLAG_COMPACT | FLAG_READ_ONLY;
    if flags & FLAG_BIG_ENDIAN != 0 || flags & needed != needed {
        Err(DecodeError::InvalidValue)
    } else {
        Ok(())
    }
}

/// The `count` entries of `bits` bits each from `start` on: exactly the rest of
/// `bytes`.
fn exact_tail(bytes: &[u8], start: usize, count: usize, bits: u8) -> Result<&[u8], DecodeError> {
    let len = count
        .checked_mul(usize::from(bits))
        .map(|b| b.div_ceil(8))
        .ok_or(DecodeError::Truncated)?;
    let tail = bytes.get(start..).ok_or(DecodeError::Truncated)?;
    match tail.len().cmp(&len) {
        core::cmp::Ordering::Less => Err(DecodeError::Truncated),
        core::cmp::Ordering::Greater => Err(DecodeError::TrailingBytes),
        core::cmp::Ordering::Equal => Ok(tail),
    }
}

fn u32_at(b: &[u8], offset: usize) -> Result<u32, DecodeError> {
    b.get(offset..)
        .and_then(<[u8]>::first_chunk::<4>)
        .map(|c| u32::from_le_bytes(*c))
        .ok_or(DecodeError::Truncated)
}

fn u64_at(b: &[u8], offset: usize) -> Result<u64, DecodeError> {
    b.get(offset..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map(|c| u64::from_le_bytes(*c))
        .ok_or(DecodeError::Truncated)
}

/// `bits` (1–64) bits of an MSB-first bit stream from bit `at` (missing bytes read
/// as 0; callers check lengths).
fn read_bits(data: &[u8], at: usize, bits: u32) -> u64 {
    let (mut pos, mut left, mut v) = (at, bits, 0u64);
    while left > 0 {
        let byte = u64::from(data.get(pos / 8).copied().unwrap_or(0));
        let avail = 8 - (pos % 8) as u32;
        let take = avail.min(left);
        let chunk = (byte >> (avail - take)) & ((1 << take) - 1);
        v = v << take | chunk;
        pos += take as usize;
        left -= take;
    }
    v
}

#[cfg(test)]
#[path = "theta_tests.rs"]
mod tests;
