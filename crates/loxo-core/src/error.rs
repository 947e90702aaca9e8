//! Error types shared by every sketch family.

use core::fmt;

/// Why two sketches could not be merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MergeError {
    /// The sketches hashed keys with different [`Seed`](crate::Seed)s, so the same key
    /// landed in different places: their union would be meaningless.
    SeedMismatch,
    /// The sketches' run-time geometry differs (parameters that the type system does
    /// not already pin, e.g. those read from serialized bytes).
    GeometryMismatch,
    /// This sketch variant cannot be merged (e.g. a conservative-update Count-Min
    /// sketch, which is not linear, or an estimator state that merge would invalidate).
    NotMergeable,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SeedMismatch => "sketches were built with different seeds",
            Self::GeometryMismatch => "sketches have different geometry",
            Self::NotMergeable => "this sketch variant cannot be merged",
        })
    }
}

impl core::error::Error for MergeError {}

/// Why serialized bytes could not be decoded into a sketch.
///
/// Decoding never panics and never leaves a target sketch half-overwritten: on any
/// of these errors the destination is untouched. The identity checks (magic, kind,
/// parameters, seed) say what was expected and what was found, so a tool can name
/// what it was handed (a capture file, another kind of sketch, another precision).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than the header or the payload it announces.
    Truncated,
    /// Bytes after the end of the encoded sketch.
    TrailingBytes,
    /// The bytes do not start with the expected magic number.
    BadMagic {
        /// The first four bytes found (zero-padded when the input is shorter).
        found: [u8; 4],
    },
    /// A format version this decoder does not know.
    UnsupportedVersion(u16),
    /// The bytes hold another kind of sketch than the one requested.
    WrongKind {
        /// The kind the decoder reads: a [`SketchKind`](crate::wire::SketchKind)
        /// value for loxo frames, the format's own family or type id for foreign
        /// formats (Redis, DataSketches).
        expected: u8,
        /// The kind the bytes declare, in the same numbering.
        found: u8,
    },
    /// The parameters (precision, width, depth, counter width…) differ from the
    /// target type's.
    ParameterMismatch {
        /// The first differing parameter as the target type has it.
        expected: u32,
        /// The same parameter as the bytes declare it.
        found: u32,
    },
    /// The seed fingerprint differs from the expected seed's.
    SeedMismatch {
        /// The fingerprint of the decoder's seed.
        expected: u64,
        /// The fingerprint the bytes carry.
        found: u64,
    },
    /// The checksum over header and payload does not match.
    BadChecksum,
    /// A value in the payload is out of range (e.g. a register above its maximum).
    InvalidValue,
}

impl DecodeError {
    /// [`DecodeError::BadMagic`] for input starting with `bytes` (its first four
    /// bytes are kept, zero-padded).
    #[must_use]
    pub fn bad_magic(bytes: &[u8]) -> Self {
        let mut found = [0u8; 4];
        for (f, b) in found.iter_mut().zip(bytes) {
            *f = *b;
        }
        Self::BadMagic { found }
    }

    /// The first differing pair of `expected` and `found` parameters as a
    /// [`DecodeError::ParameterMismatch`], or `Ok` when all are equal.
    ///
    /// # Errors
    /// [`DecodeError::ParameterMismatch`] with the first differing pair.
    pub fn check_params<const N: usize>(expected: [u32; N], found: [u32; N]) -> Result<(), Self> {
        match expected.iter().zip(&found).find(|(e, f)| e != f) {
            Some((&expected, &found)) => Err(Self::ParameterMismatch { expected, found }),
            None => Ok(()),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("input is truncated"),
            Self::TrailingBytes => f.write_str("input has trailing bytes"),
            Self::BadMagic { found } => write!(
                f,
                "input does not start with the expected magic (found {:02x} {:02x} {:02x} {:02x})",
                found[0], found[1], found[2], found[3]
            ),
            Self::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            Self::WrongKind { expected, found } => write!(
                f,
                "input holds another kind of sketch (kind {found}, expected {expected})"
            ),
            Self::ParameterMismatch { expected, found } => write!(
                f,
                "sketch parameters do not match the target type (found {found}, expected {expected})"
            ),
            Self::SeedMismatch { expected, found } => write!(
                f,
                "sketch was built with a different seed (fingerprint {found:#018x}, expected {expected:#018x})"
            ),
            Self::BadChecksum => f.write_str("checksum mismatch"),
            Self::InvalidValue => f.write_str("payload holds an out-of-range value"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a sketch could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is too small; `needed` bytes are required.
    BufferTooSmall {
        /// The encoded length of the sketch.
        needed: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BufferTooSmall { needed } => {
                write!(f, "output buffer too small: {needed} bytes needed")
            }
        }
    }
}

impl core::error::Error for EncodeError {}
