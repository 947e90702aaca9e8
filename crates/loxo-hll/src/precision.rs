//! Compile-time precision checking: which `P` an [`Hll<P>`](crate::Hll) or a
//! [`Ull<P>`](crate::Ull) accepts.
//!
//! Stable Rust cannot size an array by an expression of a const parameter
//! (`[u8; 3 << (P - 2)]` needs `generic_const_exprs`). Instead the marker type
//! [`Precision<P>`] implements [`SupportedPrecision`] for each supported `P`
//! (4..=18), and the trait's associated type *is* the packed register array of
//! exactly `0.75 · 2^P` bytes. A bound `Precision<P>: SupportedPrecision` on
//! [`Hll<P>`](crate::Hll) therefore both sizes the storage and rejects any other
//! precision at compile time, while users still write `Hll<14>`.
//!
//! ```compile_fail,E0277
//! // P = 3 has no `SupportedPrecision` impl: too few registers for the estimator.
//! let _ = loxo_hll::Hll::<3>::new(loxo_core::Seed::new(1, 2));
//! ```
//!
//! ```compile_fail,E0277
//! // P = 19 would need 384 KiB of registers: rejected at compile time.
//! let _ = loxo_hll::Hll::<19>::new(loxo_core::Seed::new(1, 2));
//! ```
//!
//! ```compile_fail,E0277
//! // The same range for UltraLogLog (512 KiB at P = 19).
//! let _ = loxo_hll::Ull::<19>::new(loxo_core::Seed::new(1, 2));
//! ```

/// Zero-sized marker carrying a precision `P` (m = 2^P registers) in the type system.
///
/// Only its [`SupportedPrecision`] impls matter; it is never instantiated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Precision<const P: u8>;

mod sealed {
    pub trait Sealed {}
}

/// Register storage: a byte array a sketch reads, writes, copies, compares and
/// hashes (every `[u8; N]`).
pub trait RegisterStorage:
    AsRef<[u8]> + AsMut<[u8]> + Clone + PartialEq + Eq + core::hash::Hash + core::fmt::Debug
{
}

impl<T> RegisterStorage for T where
    T: AsRef<[u8]> + AsMut<[u8]> + Clone + PartialEq + Eq + core::hash::Hash + core::fmt::Debug
{
}

/// Implemented by [`Precision<P>`] for every supported precision, `P` in 4..=18.
///
/// Sealed: the set of precisions is fixed by this crate, because the register
/// layout and the estimator constants depend on it.
pub trait SupportedPrecision: sealed::Sealed {
    /// The packed register storage: `[u8; 3 · 2^(P−2)]`, four 6-bit registers per
    /// three bytes (see [`crate::Hll`] for the layout).
    type Registers: RegisterStorage;
    /// The all-zero register array (the empty sketch).
    const ZERO: Self::Registers;
    /// The [`Ull`](crate::Ull) register storage: `[u8; 2^P]`, one byte per register.
    type UllRegisters: RegisterStorage;
    /// The all-zero [`Ull`](crate::Ull) register array (the empty sketch).
    const ULL_ZERO: Self::UllRegisters;
}

/// Implemented by [`Precision<P>`] for every supported `Q < P`: an
/// [`Hll<P>`](crate::Hll) can be folded into an [`Hll<Q>`](crate::Hll).
///
/// Folding towards a *higher* precision would have to invent the index bits a
/// coarser sketch has thrown away, so it is rejected at compile time:
///
/// ```compile_fail,E0277
/// use loxo_core::Seed;
/// use loxo_hll::Hll;
///
/// let coarse = Hll::<10>::new(Seed::new(1, 2));
/// let _finer: Hll<12> = coarse.fold(); // 10 -> 12: no `FoldsInto<12>` for `Precision<10>`
/// ```
///
/// ```compile_fail,E0277
/// use loxo_core::Seed;
/// use loxo_hll::Hll;
///
/// let coarse = Hll::<10>::new(Seed::new(1, 2));
/// let mut finer = Hll::<12>::new(Seed::new(1, 2));
/// let _ = finer.merge_from(&coarse); // merging a lower into a higher precision
/// ```
pub trait FoldsInto<const Q: u8>: SupportedPrecision {}

/// Code written once for every supported precision, run by [`with_precision`] at
/// a precision known only at run time (one read from a frame, say).
///
/// ```
/// use loxo_core::Seed;
/// use loxo_hll::{with_precision, ForPrecision, Hll, Precision, SupportedPrecision};
///
/// /// `size_of::<Hll<P>>()`.
/// struct HllSize;
/// impl ForPrecision for HllSize {
///     type Output = usize;
///     fn call<const P: u8>(self) -> usize
///     where
///         Precision<P>: SupportedPrecision,
///     {
///         Hll::<P>::new(Seed::new(1, 2)).memory_bytes()
///     }
/// }
/// assert_eq!(with_precision(14, HllSize), Some(12_584));
/// assert_eq!(with_precision(19, HllSize), None);
/// ```
pub trait ForPrecision {
    /// What the code returns.
    type Output;
    /// Runs the code at precision `P`.
    fn call<const P: u8>(self) -> Self::Output
    where
        Precision<P>: SupportedPrecision;
}

macro_rules! supported {
    ($($p:literal),* $(,)?) => {
        /// Runs `f` at precision `p`: `Some(f.call::<p>())` for a supported `p`
        /// (4..=18), `None` otherwise. The one place a run-time precision becomes
        /// a type parameter; see [`ForPrecision`] and
        /// [`RegisterSketch`](crate::RegisterSketch).
        pub fn with_precision<F: ForPrecision>(p: u8, f: F) -> Option<F::Output> {
            match p {
                $($p => Some(f.call::<$p>()),)*
                _ => None,
            }
        }
        $(supported!(@impl $p);)*
    };
    (@impl $p:literal) => {
        impl sealed::Sealed for Precision<$p> {}
        impl SupportedPrecision for Precision<$p> {
            type Registers = [u8; 3 << ($p - 2)];
            // A constant, materialised wherever the sketch is built (a `static`,
            // a `Box`, a task's stack): its size is the sketch's documented size.
            #[allow(clippy::large_stack_arrays)]
            const ZERO: Self::Registers = [0; 3 << ($p - 2)];
            type UllRegisters = [u8; 1 << $p];
            #[allow(clippy::large_stack_arrays)]
            const ULL_ZERO: Self::UllRegisters = [0; 1 << $p];
        }
    };
}

supported!(4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);

macro_rules! folds_into {
    ($q:literal; $($p:literal),* $(,)?) => {$(
        impl FoldsInto<$q> for Precision<$p> {}
    )*};
}

folds_into!(4; 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(5; 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(6; 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(7; 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(8; 9, 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(9; 10, 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(10; 11, 12, 13, 14, 15, 16, 17, 18);
folds_into!(11; 12, 13, 14, 15, 16, 17, 18);
folds_into!(12; 13, 14, 15, 16, 17, 18);
folds_into!(13; 14, 15, 16, 17, 18);
folds_into!(14; 15, 16, 17, 18);
folds_into!(15; 16, 17, 18);
folds_into!(16; 17, 18);
folds_into!(17; 18);
