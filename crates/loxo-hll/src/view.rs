//! [`RegisterSketch`]: an [`Hll<P>`] or an [`Ull<P>`] seen without its precision in
//! the type, and [`with_precision`], which runs code written once for every `P`
//! at a precision known only at run time.
//!
//! As heapless's `VecView` erases a `Vec`'s capacity, `&dyn RegisterSketch` (or a
//! `Box<dyn RegisterSketch>` on a host) erases `P`: a collector that reads frames of
//! any precision, merges them and prints their estimates is written once, not once
//! per precision. The per-key paths stay on the concrete types, where `P` is a
//! constant.
//!
//! ```
//! use loxo_core::Seed;
//! use loxo_hll::{Hll, RegisterSketch, Ull};
//!
//! let seed = Seed::new(1, 2);
//! let (mut hll, mut ull) = (Hll::<10>::new(seed), Ull::<12>::new(seed));
//! for k in 0..1000u32 {
//!     hll.insert(&k.to_le_bytes());
//!     ull.insert(&k.to_le_bytes());
//! }
//! let sketches: [&dyn RegisterSketch; 2] = [&hll, &ull];
//! for s in sketches {
//!     let e = s.estimate();
//!     assert!((e - 1000.0).abs() < 4.0 * s.relative_standard_error() * 1000.0);
//! }
//! assert_eq!(sketches.map(|s| s.precision()), [10, 12]);
//! assert_eq!(sketches.map(|s| s.estimate_ml().is_some()), [false, true]);
//! ```

use core::any::Any;
use core::fmt;

use loxo_core::wire::SketchKind;
use loxo_core::{DecodeError, EncodeError, MergeError};

use crate::precision::{Precision, SupportedPrecision};
use crate::wire::{self, RegisterFrame};
use crate::{Hll, Ull};

/// A register sketch ([`Hll<P>`] or [`Ull<P>`]) of any precision, for code that
/// does not care about `P`: estimates, merge, encode and decode through
/// `&dyn RegisterSketch`. Implemented by every `Hll<P>` and `Ull<P>`; sealed.
///
/// Each method is the concrete type's method of the same name (see there for
/// costs and errors), except [`merge`](Self::merge), which checks at run time
/// that both sides are the same type.
pub trait RegisterSketch: fmt::Debug + Any + sealed::Sealed {
    /// The frame kind: [`SketchKind::Hll`] or [`SketchKind::Ull`].
    fn kind(&self) -> SketchKind;
    /// The precision `P` (`m = 2^P` registers).
    fn precision(&self) -> u8;
    /// Number of registers, `m = 2^P`.
    fn registers_len(&self) -> usize;
    /// Registers that are not 0 (0 for a list-mode [`Ull`]).
    fn non_zero_registers(&self) -> usize;
    /// The estimated number of distinct keys (`Hll::estimate`, `Ull::estimate`).
    fn estimate(&self) -> f64;
    /// The martingale estimate, `None` after any merge.
    fn estimate_martingale(&self) -> Option<f64>;
    /// The maximum-likelihood estimate of an [`Ull`] ([`Ull::estimate_ml`]);
    /// `None` for an [`Hll`], which has none.
    fn estimate_ml(&self) -> Option<f64>;
    /// The relative standard error of [`estimate`](Self::estimate).
    fn relative_standard_error(&self) -> f64;
    /// Bytes the sketch occupies on a device, `size_of` the concrete type.
    fn memory_bytes(&self) -> usize;
    /// Length of the frame [`encode_into_with_fingerprint`](Self::encode_into_with_fingerprint)
    /// writes now.
    fn encoded_len(&self) -> usize;
    /// Serializes the sketch under `fingerprint`; returns the bytes written.
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len).
    fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError>;
    /// Replaces the sketch with the frame in `bytes` (its kind and precision),
    /// whatever its seed; returns the frame's seed fingerprint.
    ///
    /// # Errors
    ///
    /// As the concrete type's `decode_into_any_seed`; on error `self` is unchanged.
    fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError>;
    /// Merges `other` into `self` (the concrete type's `merge`).
    ///
    /// # Errors
    ///
    /// [`MergeError::GeometryMismatch`] unless `other` is the same type (kind and
    /// precision); [`MergeError::SeedMismatch`] for another seed. `self` is then
    /// unchanged.
    fn merge(&mut self, other: &dyn RegisterSketch) -> Result<(), MergeError>;
    /// Whether `other` is the same type and equal (seed and registers).
    fn equals(&self, other: &dyn RegisterSketch) -> bool;
    /// The concrete sketch, to downcast (e.g. to the `Hll<14>` Redis stores).
    fn as_any(&self) -> &dyn Any;
}

mod sealed {
    /// Only this crate's sketches implement [`RegisterSketch`](super::RegisterSketch).
    pub trait Sealed {}
}

/// What a concrete sketch supplies to [`RegisterSketch`]'s one implementation:
/// its own estimators and same-type merge (the rest comes from its frame).
pub(crate) trait Sketch: sealed::Sealed {
    fn estimate(&self) -> f64;
    fn estimate_ml(&self) -> Option<f64>;
    fn relative_standard_error(&self) -> f64;
    fn merge_same(&mut self, other: &Self) -> Result<(), MergeError>;
}

impl<const P: u8> sealed::Sealed for Hll<P> where Precision<P>: SupportedPrecision {}
impl<const P: u8> sealed::Sealed for Ull<P> where Precision<P>: SupportedPrecision {}

impl<const P: u8> Sketch for Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn estimate(&self) -> f64 {
        self.estimate()
    }
    fn estimate_ml(&self) -> Option<f64> {
        None
    }
    fn relative_standard_error(&self) -> f64 {
        self.relative_standard_error()
    }
    fn merge_same(&mut self, other: &Self) -> Result<(), MergeError> {
        self.merge(other)
    }
}

impl<const P: u8> Sketch for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    fn merge_same(&mut self, other: &Self) -> Result<(), MergeError> {
        self.merge(other)
    }
    fn estimate_ml(&self) -> Option<f64> {
        Some(self.estimate_ml())
    }
    fn estimate(&self) -> f64 {
        self.estimate()
    }
    fn relative_standard_error(&self) -> f64 {
        self.relative_standard_error()
    }
}

impl<S> RegisterSketch for S
where
    S: Sketch + RegisterFrame + PartialEq + fmt::Debug + Any,
{
    fn kind(&self) -> SketchKind {
        S::KIND
    }

    fn precision(&self) -> u8 {
        S::PARAMS[0] as u8
    }

    fn registers_len(&self) -> usize {
        S::M
    }

    fn non_zero_registers(&self) -> usize {
        self.non_zero()
    }

    fn estimate(&self) -> f64 {
        Sketch::estimate(self)
    }

    fn estimate_martingale(&self) -> Option<f64> {
        self.martingale()
    }

    fn estimate_ml(&self) -> Option<f64> {
        Sketch::estimate_ml(self)
    }

    fn relative_standard_error(&self) -> f64 {
        Sketch::relative_standard_error(self)
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of::<S>()
    }

    fn encoded_len(&self) -> usize {
        wire::encoded_len(self)
    }

    fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError> {
        wire::encode(self, buf, fingerprint)
    }

    fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        wire::decode(self, bytes, None)
    }

    fn merge(&mut self, other: &dyn RegisterSketch) -> Result<(), MergeError> {
        match other.as_any().downcast_ref::<S>() {
            Some(other) => self.merge_same(other),
            None => Err(MergeError::GeometryMismatch),
        }
    }

    fn equals(&self, other: &dyn RegisterSketch) -> bool {
        other.as_any().downcast_ref::<S>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl PartialEq for dyn RegisterSketch {
    fn eq(&self, other: &Self) -> bool {
        self.equals(other)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use loxo_core::Seed;

    const SEED: Seed = Seed::new(5, 6);

    /// Through `&dyn`, every method is the concrete one; merge checks the type.
    #[test]
    fn the_view_is_the_sketch() {
        let (mut h, mut u) = (Hll::<8>::new(SEED), Ull::<8>::new_sparse(SEED));
        for k in 0..40u32 {
            h.insert(&k.to_le_bytes());
            u.insert(&k.to_le_bytes());
        }
        let (hv, uv): (&dyn RegisterSketch, &dyn RegisterSketch) = (&h, &u);
        assert_eq!((hv.kind(), uv.kind()), (SketchKind::Hll, SketchKind::Ull));
        assert_eq!((hv.precision(), hv.registers_len()), (8, 256));
        assert_eq!(hv.estimate().to_bits(), h.estimate().to_bits());
        assert_eq!(uv.estimate_ml(), Some(u.estimate_ml()));
        assert_eq!(hv.estimate_martingale(), h.estimate_martingale());
        assert_eq!(
            hv.non_zero_registers(),
            h.registers().filter(|&r| r != 0).count()
        );
        assert_eq!(uv.non_zero_registers(), 0); // a list has no registers yet
        assert_eq!(uv.memory_bytes(), core::mem::size_of::<Ull<8>>());
        assert_eq!(hv.as_any().downcast_ref::<Hll<8>>(), Some(&h));

        let mut buf = [0u8; 512];
        let n = uv.encode_into_with_fingerprint(&mut buf, 7).unwrap();
        assert_eq!(n, u.encoded_len());
        let mut back = Ull::<8>::new(SEED);
        assert_eq!(
            RegisterSketch::decode_into_any_seed(&mut back, &buf[..n]),
            Ok(7)
        );
        assert!(uv == &back as &dyn RegisterSketch);
        assert!(hv != uv);

        let mut other = Hll::<8>::new(SEED);
        let ov: &mut dyn RegisterSketch = &mut other;
        assert_eq!(ov.merge(uv), Err(MergeError::GeometryMismatch));
        assert_eq!(
            ov.merge(&Hll::<9>::new(SEED)),
            Err(MergeError::GeometryMismatch)
        );
        ov.merge(hv).unwrap();
        assert!(ov.equals(hv));
        assert_eq!(ov.estimate_martingale(), None);
    }
}
