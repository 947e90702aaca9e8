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
/// of these errors the destination is untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than the header or the payload it announces.
    Truncated,
    /// Bytes after the end of the encoded sketch.
    TrailingBytes,
    /// The bytes do not start with the expected magic number.
    BadMagic,
    /// A format version this decoder does not know.
    UnsupportedVersion(u16),
    /// The bytes hold another kind of sketch than the one requested.
    WrongKind,
    /// The parameters (precision, width, depth, counter width…) differ from the
    /// target type's.
    ParameterMismatch,
    /// The seed fingerprint differs from the expected seed's.
    SeedMismatch,
    /// The checksum over header and payload does not match.
    BadChecksum,
    /// A value in the payload is out of range (e.g. a register above its maximum).
    InvalidValue,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("input is truncated"),
            Self::TrailingBytes => f.write_str("input has trailing bytes"),
            Self::BadMagic => f.write_str("input does not start with the expected magic"),
            Self::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            Self::WrongKind => f.write_str("input holds another kind of sketch"),
            Self::ParameterMismatch => {
                f.write_str("sketch parameters do not match the target type")
            }
            Self::SeedMismatch => f.write_str("sketch was built with a different seed"),
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
