//! [`Blocklist`]: a static filter of addresses (a binary fuse filter in flash) that a
//! [`FlowMonitor`](crate::FlowMonitor) checks each flow's endpoints against.

use loxo_bloom::{BinaryFuse16, BinaryFuse8};
use loxo_core::{DecodeError, KeyHash, Seed};

use crate::FlowKey;

/// A blocklist of IPv4/IPv6 addresses: a view of a `binary-fuse` frame written by
/// `loxo build-filter` (8- or 16-bit fingerprints), typically `include_bytes!`-ed into
/// flash. Keys are addresses in network order — 4 bytes for IPv4, 16 for IPv6, as
/// [`FlowKey::src_bytes`] / [`FlowKey::dst_bytes`] give them — hashed with the
/// filter's [`Seed`].
///
/// **Errors**: no false negatives — an address of the set is always found; an
/// address outside it is reported with probability `2^−8 ≈ 0.39 %` (8-bit) or
/// `2^−16 ≈ 0.0015 %` (16-bit) ([`fpr`](Self::fpr)), so a flow (two addresses) with
/// at most twice that. **Memory**: the fingerprints stay where they are (≈ 1.13 bytes
/// per address at 8 bits); the view is 48 bytes on a Cortex-M4. **Cost**: one
/// SipHash-1-3 of the address (4 or 16 bytes) and three byte loads; a monitor with a
/// blocklist counts distinct sources from the same SipHash digest, so a flow costs
/// one more SipHash (the destination's) and two lookups on its first frame.
///
/// ```
/// use loxo_bloom::BinaryFuse8;
/// use loxo_core::Seed;
/// use loxo_flow::{Blocklist, FlowKey};
///
/// // On a host (`loxo build-filter` does this from a keys file): the addresses'
/// // digests under the device's seed → a `binary-fuse` frame.
/// let seed = Seed::new(1, 2);
/// let blocked = [[203, 0, 113, 7], [198, 51, 100, 1]];
/// let hashes: Vec<_> = blocked.iter().map(|a| seed.hash(a)).collect();
/// let built = BinaryFuse8::build(&hashes)?;
/// let filter = BinaryFuse8::from_parts(seed, built.layout, &built.fingerprints)?;
/// let mut frame = vec![0u8; filter.encoded_len()];
/// filter.encode_into(&mut frame)?;
///
/// // On the device: a view of the frame where it is stored (flash:
/// // `static BLOCKLIST: &[u8] = include_bytes!("blocklist.loxo");`).
/// let b = Blocklist::from_bytes(&frame, seed)?;
/// assert_eq!((b.len(), b.bits()), (2, 8));
/// assert!(b.matches(&FlowKey::v4([10, 0, 0, 1], [203, 0, 113, 7], 4242, 443, 6)));
/// assert!(b.contains(&[198, 51, 100, 1]));
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Blocklist<'a> {
    /// 8-bit fingerprints (`2^−8` false positives per address).
    Fuse8(BinaryFuse8<'a>),
    /// 16-bit fingerprints (`2^−16`).
    Fuse16(BinaryFuse16<'a>),
}

impl<'a> Blocklist<'a> {
    /// A view of a `binary-fuse` frame of either width, built under `seed` (every
    /// check of [`BinaryFuse8::from_bytes`]: CRC, kind, seed fingerprint, geometry).
    ///
    /// # Errors
    /// The frame's [`DecodeError`]; [`DecodeError::SeedMismatch`] when it was built
    /// under another seed.
    pub fn from_bytes(bytes: &'a [u8], seed: Seed) -> Result<Self, DecodeError> {
        match BinaryFuse8::from_bytes(bytes, seed) {
            Ok(f) => Ok(Self::Fuse8(f)),
            Err(DecodeError::ParameterMismatch { .. }) => {
                BinaryFuse16::from_bytes(bytes, seed).map(Self::Fuse16)
            }
            Err(e) => Err(e),
        }
    }

    /// The seed addresses are hashed with.
    pub const fn seed(&self) -> Seed {
        match self {
            Self::Fuse8(f) => f.seed(),
            Self::Fuse16(f) => f.seed(),
        }
    }

    /// Addresses in the set.
    pub const fn len(&self) -> usize {
        match self {
            Self::Fuse8(f) => f.len(),
            Self::Fuse16(f) => f.len(),
        }
    }

    /// True for a filter of no address.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fingerprint bits (8 or 16).
    pub const fn bits(&self) -> u32 {
        match self {
            Self::Fuse8(_) => BinaryFuse8::BITS,
            Self::Fuse16(_) => BinaryFuse16::BITS,
        }
    }

    /// False-positive rate per address outside the set: `2^−bits`.
    pub const fn fpr(&self) -> f64 {
        match self {
            Self::Fuse8(f) => f.fpr(),
            Self::Fuse16(f) => f.fpr(),
        }
    }

    /// True if the address whose digest under [`seed`](Self::seed) is `h` may be in
    /// the set; false means certainly not.
    #[inline]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        match self {
            Self::Fuse8(f) => f.contains_hash(h),
            Self::Fuse16(f) => f.contains_hash(h),
        }
    }

    /// True if an address (4 or 16 bytes, network order) may be in the set.
    pub fn contains(&self, address: &[u8]) -> bool {
        self.contains_hash(self.seed().hash(address))
    }

    /// True if the flow's source or destination may be in the set.
    pub fn matches(&self, key: &FlowKey) -> bool {
        let sip = loxo_core::SipKey::new(self.seed());
        self.contains_hash(key.src_sip_hash(&sip)) || self.contains_hash(key.dst_sip_hash(&sip))
    }
}
