//! [`WireKey`]: the fixed-size byte encoding of stored keys on the wire.

/// A key type that a sketch stores and serializes to exactly `L` bytes: the keys of
/// the top-k summaries (`loxo_cms::SpaceSaving`, `HeavyKeeper`) and the candidate
/// keys of the spread sketch (`loxo_spread::Spreaders`).
///
/// Implemented for `u32` and `u64` (little-endian) and `[u8; L]`; other crates
/// implement it for their keys (`loxo_flow::FlowKey`). `from_wire` returns `None` for
/// bytes that are not a valid key, which decoders report as
/// [`DecodeError::InvalidValue`](crate::DecodeError::InvalidValue).
///
/// ```
/// use loxo_core::WireKey;
/// assert_eq!(0x0102_0304u32.to_wire(), [4, 3, 2, 1]);
/// assert_eq!(<[u8; 2]>::from_wire(&[7, 8]), Some([7, 8]));
/// ```
pub trait WireKey<const L: usize>: Sized {
    /// The key's wire bytes.
    fn to_wire(&self) -> [u8; L];
    /// The key of some wire bytes, if valid.
    fn from_wire(bytes: &[u8; L]) -> Option<Self>;
}

impl WireKey<4> for u32 {
    fn to_wire(&self) -> [u8; 4] {
        self.to_le_bytes()
    }
    fn from_wire(bytes: &[u8; 4]) -> Option<Self> {
        Some(Self::from_le_bytes(*bytes))
    }
}

impl WireKey<8> for u64 {
    fn to_wire(&self) -> [u8; 8] {
        self.to_le_bytes()
    }
    fn from_wire(bytes: &[u8; 8]) -> Option<Self> {
        Some(Self::from_le_bytes(*bytes))
    }
}

impl<const L: usize> WireKey<L> for [u8; L] {
    fn to_wire(&self) -> [u8; L] {
        *self
    }
    fn from_wire(bytes: &[u8; L]) -> Option<Self> {
        Some(*bytes)
    }
}
