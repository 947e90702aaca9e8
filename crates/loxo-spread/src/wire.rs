//! [`Spreaders`] in the loxo wire format: kind `spread` (15, since version 2), params
//! `[S, W, C, L]`, no flags; the payload is the pool, the cell occupancy bitmap and
//! the occupied cells (layout in [`SpreadView`] and `docs/format.md`).
//!
//! The bytes are a function of the sketch's state alone (cells in index order), so
//! equal sketches encode equally and a frame re-encodes byte for byte.

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, Seed, WireKey};

use crate::pool;
use crate::view::SpreadView;
use crate::Spreaders;

impl<K: Copy + Eq, const S: usize, const W: usize, const C: usize> Spreaders<K, S, W, C> {
    /// The frame's parameters for `L`-byte keys: `[S, W, C, L]`.
    const fn params<const L: usize>() -> [u32; 4] {
        [S as u32, W as u32, C as u32, L as u32]
    }

    const fn payload_len<const L: usize>(occupied: usize) -> usize {
        S * W + C.div_ceil(8) + occupied * (8 + L)
    }

    /// Length of the frame [`encode_into`](Self::encode_into) writes now:
    /// `36 + S·W + ⌈C/8⌉ + occupied·(8 + L) + 4` bytes.
    #[must_use]
    pub fn encoded_len<const L: usize>(&self) -> usize
    where
        K: WireKey<L>,
    {
        wire::frame_len(Self::payload_len::<L>(self.occupied()))
    }

    /// The longest frame of this type (every cell occupied), for sizing a buffer.
    #[must_use]
    pub const fn max_encoded_len<const L: usize>() -> usize {
        wire::frame_len(Self::payload_len::<L>(C))
    }

    /// Serializes the sketch into `buf`; returns the bytes written.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_spread::Spreaders;
    /// type S = Spreaders<[u8; 16], 16, 8, 64>;
    /// let seed = Seed::new(3, 4);
    /// let mut s = S::new(seed);
    /// for e in 0..1000u32 {
    ///     s.insert(&[1; 16], &e.to_le_bytes());
    /// }
    /// let mut buf = vec![0u8; S::max_encoded_len::<16>()];
    /// let n = s.encode_into(&mut buf)?;
    /// assert_eq!(n, s.encoded_len());
    /// assert!(S::decode(&buf[..n], seed)? == s);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into<const L: usize>(&self, buf: &mut [u8]) -> Result<usize, EncodeError>
    where
        K: WireKey<L>,
    {
        let header = Header::new(
            SketchKind::Spread,
            self.seed().fingerprint(),
            Self::params::<L>(),
            Self::payload_len::<L>(self.occupied()) as u32,
        );
        let mut enc = Encoder::new(buf, &header)?;
        enc.put(self.pool_ref().bytes);
        let mut byte = 0u8;
        let mut occupied = self.cells().map(|(c, _)| c).peekable();
        for c in 0..C {
            if occupied.next_if_eq(&c).is_some() {
                byte |= 1 << (c % 8);
            }
            if c % 8 == 7 || c + 1 == C {
                enc.put_u8(byte);
                byte = 0;
            }
        }
        for (_, r) in self.cells() {
            enc.put_u32(r.tag);
            enc.put_u32(r.priority);
            enc.put(&r.key.to_wire());
        }
        Ok(enc.finish())
    }

    /// A sketch from a frame of the same parameters and seed.
    ///
    /// # Errors
    /// As [`decode_into`](Self::decode_into).
    pub fn decode<const L: usize>(bytes: &[u8], seed: Seed) -> Result<Self, DecodeError>
    where
        K: WireKey<L>,
    {
        let mut s = Self::new(seed);
        s.decode_into(bytes)?;
        Ok(s)
    }

    /// Replaces the sketch with a frame's (same parameters and seed). On error
    /// `self` is unchanged.
    ///
    /// The stored tags are trusted to belong to their keys (they cannot be checked
    /// without the caller's hash function): a crafted frame with a wrong tag gives
    /// that key another key's registers.
    ///
    /// # Errors
    /// The envelope's errors; [`DecodeError::WrongKind`],
    /// [`DecodeError::ParameterMismatch`] (another geometry or key length),
    /// [`DecodeError::SeedMismatch`]; then [`SpreadView::parse`]'s structural
    /// errors and [`DecodeError::InvalidValue`] for a key `K` rejects.
    pub fn decode_into<const L: usize>(&mut self, bytes: &[u8]) -> Result<(), DecodeError>
    where
        K: WireKey<L>,
    {
        let view = self.checked_view::<L>(bytes)?;
        self.pool_bytes_mut().copy_from_slice(view.pool_bytes());
        self.clear_cells();
        for (c, r) in view.cells() {
            if let Some(key) = wire_key::<K, L>(r.key) {
                self.set_cell(c, r.tag, r.priority, key);
            }
        }
        Ok(())
    }

    /// Merges a frame (same parameters and seed) into the sketch without decoding
    /// it into a second one first: a collector combines its devices' frames in the
    /// memory of one sketch. On error `self` is unchanged.
    ///
    /// ```
    /// use loxo_core::{DecodeError, Seed};
    /// use loxo_spread::Spreaders;
    /// type S = Spreaders<u32, 16, 4, 16>;
    /// let mut device = S::new(Seed::new(1, 2));
    /// device.insert(&5, b"element");
    /// let mut buf = [0u8; 256];
    /// let n = device.encode_into(&mut buf)?;
    /// let mut fleet = S::new(Seed::new(1, 2));
    /// fleet.merge_encoded(&buf[..n])?;
    /// assert!(fleet == device);
    /// let mut other = S::new(Seed::new(7, 7));
    /// assert!(matches!(other.merge_encoded(&buf[..n]), Err(DecodeError::SeedMismatch { .. })));
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`decode_into`](Self::decode_into).
    pub fn merge_encoded<const L: usize>(&mut self, bytes: &[u8]) -> Result<(), DecodeError>
    where
        K: WireKey<L>,
    {
        let view = self.checked_view::<L>(bytes)?;
        for (x, &y) in self.pool_bytes_mut().iter_mut().zip(view.pool_bytes()) {
            *x = pool::max_nibbles(*x, y);
        }
        for (c, r) in view.cells() {
            if let Some(key) = wire_key::<K, L>(r.key) {
                self.offer_cell(c, r.tag, r.priority, &key);
            }
        }
        Ok(())
    }

    /// Validates a frame for this type and seed, keys included, before anything is
    /// written.
    fn checked_view<'a, const L: usize>(
        &self,
        bytes: &'a [u8],
    ) -> Result<SpreadView<'a>, DecodeError>
    where
        K: WireKey<L>,
    {
        let frame = Frame::parse(bytes)?;
        frame
            .header()
            .expect(SketchKind::Spread, Self::params::<L>())?;
        let expected = self.seed().fingerprint();
        let found = frame.header().seed_fingerprint;
        if found != expected {
            return Err(DecodeError::SeedMismatch { expected, found });
        }
        let view = SpreadView::from_frame(&frame)?;
        if view.cells().any(|(_, r)| wire_key::<K, L>(r.key).is_none()) {
            return Err(DecodeError::InvalidValue);
        }
        Ok(view)
    }
}

/// The key of `L` wire bytes, if `K` accepts them.
fn wire_key<K: WireKey<L>, const L: usize>(bytes: &[u8]) -> Option<K> {
    <&[u8; L]>::try_from(bytes).ok().and_then(K::from_wire)
}
