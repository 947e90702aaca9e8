//! The static filter [`BinaryFuse<F>`], generic over its fingerprint width, and its
//! two widths [`BinaryFuse8`] (≈ 9 bits per key, 0.39 %) and [`BinaryFuse16`]
//! (≈ 18 bits per key, 0.0015 %).

use core::fmt;

use loxo_core::{DecodeError, EncodeError, KeyHash, Seed};

use crate::fuse::{self, FuseLayout};
use crate::Fingerprint;

/// A 3-wise binary fuse filter with 8-bit fingerprints: false-positive rate
/// `2^−8 ≈ 0.39 %` at about 9 bits per key (a Bloom filter needs 11.5 at that rate);
/// `slots` bytes of fingerprints, up to 12 bytes per key for `n ≤ 1`. See
/// [`BinaryFuse`].
pub type BinaryFuse8<'a> = BinaryFuse<'a, u8>;

/// A 3-wise binary fuse filter with 16-bit fingerprints: false-positive rate
/// `2^−16 ≈ 0.0015 %` at about 18 bits per key (a Bloom filter needs 23.1 at that
/// rate); `2·slots` bytes of fingerprints, up to 24 bytes per key for `n ≤ 1`. See
/// [`BinaryFuse`].
pub type BinaryFuse16<'a> = BinaryFuse<'a, u16>;

/// A 3-wise binary fuse filter with `f`-bit fingerprints of type `F` (`u8`: `f = 8`,
/// [`BinaryFuse8`]; `u16`: `f = 16`, [`BinaryFuse16`]) (Graf & Lemire 2022): static
/// membership — built once on a host from a set of keys, then only queried — with
/// no false negatives and a false-positive rate of `2^−f` (0.39 % / 0.0015 %) at
/// about `1.13·f` bits per key (9 / 18), 1.13 × the `log₂(1/p) = f` bits of the
/// information-theoretic bound (a Bloom filter needs 1.44 × that: 11.5 / 23.1 bits
/// per key).
///
/// The filter is a **view**: it borrows its fingerprints, so they can stay in flash
/// (`include_bytes!` of a frame written by `loxo build-filter`, parsed once with
/// [`from_bytes`](Self::from_bytes)) or in any buffer; nothing is copied or
/// allocated, and the type is `no_std`. It hashes keys with the same keyed SipHash-1-3
/// [`Seed`] as every loxo sketch, so one [`KeyHash`] of an address can be looked up
/// here and fed to other sketches ([`contains_hash`](Self::contains_hash)).
///
/// **Memory**: `slots·f/8` bytes of fingerprints wherever they are (`slots ≈ 1.13·n`
/// for `n` keys at 10^6 keys; small sets take more per key, up to `12·f/8` bytes for
/// `n ≤ 1`), plus the view itself (48 bytes on a Cortex-M4, 56 on a 64-bit host).
/// **Cost** per lookup: one SipHash-1-3 of the key, one
/// `fmix64`, two 32×32→64 multiplies and three `f`-bit loads — one in each of three
/// consecutive segments, so three cache misses at most on a large filter and no
/// branches but the bounds checks. **Error**: a key not in the set is reported
/// present with probability `2^−f` (the XOR of three fingerprints that do not
/// depend on it matching its own, uniform, fingerprint); keys of the set always are.
/// **Construction**: host only, `build` with the feature `alloc`; the
/// filter cannot be changed after it.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use loxo_bloom::{BinaryFuse16, BinaryFuse8};
/// use loxo_core::Seed;
///
/// // On the host: hash the set with the devices' seed, build, encode.
/// let seed = Seed::new(1, 2);
/// let blocked: Vec<_> = (0..1000u32).map(|i| seed.hash(&i.to_be_bytes())).collect();
/// let built = BinaryFuse8::build(&blocked)?;
/// let filter = BinaryFuse8::from_parts(seed, built.layout, &built.fingerprints)?;
/// assert!(filter.contains(&7u32.to_be_bytes()));
/// assert!(filter.bits_per_key() < 12.0);
/// let mut frame = vec![0u8; filter.encoded_len()];
/// filter.encode_into(&mut frame)?;
///
/// // On the device: a view of the frame, wherever it is stored (e.g. flash).
/// let on_device = BinaryFuse8::from_bytes(&frame, seed)?;
/// assert_eq!(on_device, filter);
///
/// // The 16-bit filter: the same calls, twice the bytes, 2^−16.
/// let built = BinaryFuse16::build(&blocked)?;
/// let filter = BinaryFuse16::from_parts(seed, built.layout, &built.fingerprints)?;
/// assert!(filter.contains(&7u32.to_be_bytes()));
/// assert!(filter.bits_per_key() < 24.0);
/// # }
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BinaryFuse<'a, F: Fingerprint> {
    seed: Seed,
    layout: FuseLayout,
    /// The fingerprints, `F::BYTES` little-endian bytes each (any alignment).
    fingerprints: &'a [u8],
    width: core::marker::PhantomData<F>,
}

impl<'a, F: Fingerprint> BinaryFuse<'a, F> {
    /// Fingerprint bits.
    pub const BITS: u32 = F::BITS;

    /// A filter over `fingerprints` (`f/8` bytes per slot, little-endian, so any
    /// alignment will do) with `layout`, hashing keys with `seed`. `const`, so a
    /// filter generated at build time can be a `static`.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] if `fingerprints`
    /// is not exactly `f/8 ·`[`FuseLayout::slots`] bytes long.
    pub const fn from_parts(
        seed: Seed,
        layout: FuseLayout,
        fingerprints: &'a [u8],
    ) -> Result<Self, DecodeError> {
        if fingerprints.len() < F::BYTES * layout.slots() {
            return Err(DecodeError::Truncated);
        }
        if fingerprints.len() > F::BYTES * layout.slots() {
            return Err(DecodeError::TrailingBytes);
        }
        Ok(Self {
            seed,
            layout,
            fingerprints,
            width: core::marker::PhantomData,
        })
    }

    /// A view of a `binary-fuse` frame with `f`-bit fingerprints (`docs/format.md`)
    /// built under `seed`: checks the whole frame once (CRC, kind, width, seed
    /// fingerprint, geometry, length) and borrows its fingerprints.
    ///
    /// # Errors
    /// Any [`DecodeError`]: [`ParameterMismatch`](DecodeError::ParameterMismatch) for a
    /// frame of the other width, [`SeedMismatch`](DecodeError::SeedMismatch) for
    /// another seed, [`InvalidValue`](DecodeError::InvalidValue) for a geometry that is
    /// not a filter.
    pub fn from_bytes(bytes: &'a [u8], seed: Seed) -> Result<Self, DecodeError> {
        let (layout, fingerprints) = fuse::decode(bytes, &seed, Self::BITS)?;
        Self::from_parts(seed, layout, fingerprints)
    }

    /// Builds the fingerprints of a filter over the keys whose digests are `hashes`
    /// (`seed.hash(key)` for each key, under the seed the filter will be viewed
    /// with; repeated digests count once) —
    /// on the host, with the `xorf` crate's construction (see
    /// [`FuseBuild`](crate::FuseBuild)); view the result with
    /// [`from_parts`](Self::from_parts). Time: 0.12 s for 10^6 keys on a 2-core CI
    /// machine (`xorf`'s construction 0.075 s, then the deduplicating sort and the
    /// check of every key); memory about 30 bytes per key while it runs.
    ///
    /// # Errors
    /// [`BuildError`](crate::BuildError): too many keys, no peeling seed within
    /// [`MAX_FUSE_ATTEMPTS`](crate::MAX_FUSE_ATTEMPTS), or a self-check failure.
    #[cfg(feature = "alloc")]
    pub fn build(hashes: &[KeyHash]) -> Result<fuse::FuseBuild, fuse::BuildError> {
        fuse::build::<F>(hashes)
    }

    /// The seed keys are hashed with.
    #[must_use]
    pub const fn seed(&self) -> Seed {
        self.seed
    }

    /// The layout (construction seed, segments, key count).
    #[must_use]
    pub const fn layout(&self) -> FuseLayout {
        self.layout
    }

    /// The fingerprints, `f/8` bytes per slot (little-endian).
    #[must_use]
    pub const fn fingerprints(&self) -> &'a [u8] {
        self.fingerprints
    }

    /// Distinct keys the filter was built from.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.layout.keys() as usize
    }

    /// True if built from no key (every lookup is then a `2^−f` false positive at most).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.layout.keys() == 0
    }

    /// Bytes of fingerprints (flash or RAM, wherever they are): `f/8` per slot.
    #[must_use]
    pub const fn memory_bytes(&self) -> usize {
        self.fingerprints.len()
    }

    /// Fingerprint bits per key, `f·slots / keys` (infinite when empty).
    #[must_use]
    pub fn bits_per_key(&self) -> f64 {
        f64::from(Self::BITS) * self.layout.slots() as f64 / f64::from(self.layout.keys())
    }

    /// The false-positive rate, `2^−f`.
    #[must_use]
    pub const fn fpr(&self) -> f64 {
        1.0 / (1u64 << Self::BITS) as f64
    }

    /// True if the key may be in the set (false positives at `2^−f`); false means it
    /// certainly is not.
    #[inline]
    #[must_use]
    pub fn contains<Q: AsRef<[u8]> + ?Sized>(&self, key: &Q) -> bool {
        self.contains_hash(self.seed.hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed by the caller with this filter's
    /// [`seed`](Self::seed).
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let (x, [a, b, c]) = self.layout.probe(h);
        // In bounds by the layout's invariant and `from_parts`' length check; `load`
        // keeps that a proof obligation of this module, not a panic path.
        let at = |i: usize| F::load(self.fingerprints, i);
        (F::from_u64(fuse::fingerprint(x)) ^ at(a) ^ at(b) ^ at(c)) == F::default()
    }

    /// Length of the encoded frame.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        self.layout.encoded_len(Self::BITS)
    }

    /// Serializes the filter: kind `binary-fuse` (13), params
    /// `[f, 3, segment_length, segment_count_length]`, payload construction seed,
    /// key count, fingerprints (`docs/format.md`).
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        fuse::encode(&self.seed, &self.layout, Self::BITS, self.fingerprints, buf)
    }

    /// The alias's name, for `Debug` and `defmt`.
    const NAME: &'static str = if F::BITS == 8 {
        "BinaryFuse8"
    } else {
        "BinaryFuse16"
    };
}

impl<F: Fingerprint> fmt::Debug for BinaryFuse<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(Self::NAME)
            .field("layout", &self.layout)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "defmt")]
impl<F: Fingerprint> defmt::Format for BinaryFuse<'_, F> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "{=str} {{ keys: {=u32}, slots: {=usize} }}",
            Self::NAME,
            self.layout.keys(),
            self.layout.slots()
        );
    }
}
