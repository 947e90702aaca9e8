//! [`Hll<P>`] and [`HllSparse<P>`] in the loxo wire format: kind `hll` (5), params
//! `[P, 6, 0, 0]`, a dense, sparse (3-byte entries `index << 6 | rank`) or list
//! payload. The frame itself is written and validated once for every register
//! sketch (`wire`); this module says what an `Hll` holds and how it loads a
//! validated payload.
//!
//! An `Hll` picks whichever register payload is shorter (sparse when fewer than
//! `m / 4 − 1` registers are non-zero); an [`HllSparse`] in list mode writes its
//! list. Both read all three payloads: an `Hll` reads a list as the registers of
//! the same keys, an `HllSparse` keeps it.

use loxo_core::wire::SketchKind;
use loxo_core::{DecodeError, EncodeError};

use crate::entry::{list_estimate, EntryTable};
use crate::precision::{Precision, SupportedPrecision};
use crate::registers::{self, Registers};
use crate::wire::{self, Body, ListEntries, Payload, RegisterFrame};
use crate::{Hll, HllSparse};

impl<const P: u8> RegisterFrame for Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    const KIND: SketchKind = SketchKind::Hll;
    const PARAMS: [u32; 4] = [P as u32, registers::BITS, 0, 0];
    const M: usize = 1 << P;
    const DENSE_LEN: usize = Self::REGISTER_BYTES;
    const VALUE_BITS: u32 = registers::BITS;
    const SPARSE_ENTRY: usize = 3;
    const LIST_CAPACITY: u32 = HllSparse::<P>::LIST_CAPACITY;

    fn is_valid_register(r: u8) -> bool {
        r <= Self::MAX_RANK
    }

    fn dense_values(bytes: &[u8]) -> impl Iterator<Item = u8> + Clone + '_ {
        Registers::new(bytes)
    }

    /// An `HllSparse` counts at least one key per entry.
    fn list_floor(list: ListEntries<'_>) -> usize {
        list.len() as usize
    }

    fn martingale(&self) -> Option<f64> {
        self.estimate_martingale()
    }

    fn list_count(&self) -> Option<u32> {
        None
    }

    fn list_sorted(&self) -> impl Iterator<Item = u32> + '_ {
        core::iter::empty()
    }

    fn non_zero(&self) -> usize {
        Self::M - self.hist[0] as usize
    }

    fn dense_bytes(&self) -> &[u8] {
        self.registers.as_ref()
    }

    fn load(&mut self, payload: Payload<'_>) -> Result<(), DecodeError> {
        match payload.body {
            Body::List(list) => {
                // The registers the listed keys build (each entry determines its
                // key's register update at this precision).
                self.registers.as_mut().fill(0);
                for e in list.iter() {
                    let (i, rank) = HllSparse::<P>::entry_register(e);
                    if rank > registers::get(self.registers.as_ref(), i) {
                        registers::set(self.registers.as_mut(), i, rank);
                    }
                }
                self.recount();
                // A list's martingale is its estimate, determined by the count (as
                // `HllSparse` reads it); the frame's value only says there is one.
                self.hip_valid = payload.martingale.is_some() && self.hip_tracked;
                if self.hip_valid {
                    self.hip_estimate = list_estimate(list.len());
                }
                return Ok(());
            }
            // `set_registers` validates every value again before it writes.
            Body::Dense(dense) => self.set_registers(Registers::new(dense))?,
            Body::Sparse(sparse) => self.set_registers(sparse.expand(Self::M))?,
        }
        if let Some(v) = payload.martingale.filter(|_| self.hip_tracked) {
            self.hip_estimate = v;
            self.hip_valid = true;
        }
        Ok(())
    }
}

impl<const P: u8> Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Length in bytes of the frame [`encode_into`](Self::encode_into) writes now
    /// (it depends on how many registers are non-zero: at most
    /// `36 + 8 + 0.75 · 2^P + 4` bytes, 12 336 at `P = 14`).
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        wire::encoded_len(self)
    }

    /// Serializes the sketch into `buf` in the loxo wire format (see
    /// `docs/format.md`) and returns the number of bytes written. No allocation;
    /// the sparse payload is chosen when it is shorter than the dense one.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    ///
    /// let seed = Seed::new(7, 8);
    /// let mut hll = Hll::<12>::new(seed);
    /// for i in 0..100u32 {
    ///     hll.insert(&i.to_le_bytes());
    /// }
    /// let mut buf = [0u8; 4096];
    /// let n = hll.encode_into(&mut buf)?;
    /// assert_eq!(n, hll.encoded_len());
    /// assert!(n < 400); // sparse: 100 registers, 3 bytes each
    ///
    /// let mut back = Hll::<12>::new(seed);
    /// back.decode_into(&buf[..n])?;
    /// assert_eq!(back, hll);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        wire::encode(self, buf, self.seed.fingerprint())
    }

    /// [`encode_into`](Self::encode_into) without the frame's CRC (its trailer is
    /// zeroed): the frame is complete once [`loxo_core::wire::seal`] has written it.
    /// For a device that must not go long without reading its NIC: the CRC of a
    /// 12 KiB `Hll<14>` frame is a third of its encode, done in a later slice.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    /// let mut h = Hll::<10>::new(Seed::new(1, 2));
    /// h.insert(b"key");
    /// let (mut a, mut b) = ([0u8; 2048], [0u8; 2048]);
    /// let n = h.encode_unsealed_into(&mut a)?;
    /// loxo_core::wire::seal(&mut a[..n])?;
    /// assert_eq!(h.encode_into(&mut b)?, n);
    /// assert_eq!(a[..n], b[..n]);
    /// # Ok::<(), loxo_core::EncodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] as for [`encode_into`](Self::encode_into).
    pub fn encode_unsealed_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        wire::encode_sealed(self, buf, self.seed.fingerprint(), false)
    }

    /// [`encode_unsealed_into`](Self::encode_unsealed_into) with the **dense** payload
    /// whatever the sketch holds (the register bytes as they are in memory, `0.75·2^P`
    /// bytes): a copy, not an encoding, so a device can write the closing epoch's
    /// sketch straight into its export buffer at the close — no snapshot of the
    /// sketch to keep, no encoding slice later. Any decoder reads it (the sparse form
    /// is only ever a shorter way to write the same registers).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    /// let mut h = Hll::<10>::new(Seed::new(1, 2));
    /// h.insert(b"key");
    /// let mut a = [0u8; 2048];
    /// let n = h.encode_dense_unsealed_into(&mut a)?;
    /// assert!(n > h.encoded_len()); // one register set: sparse would be shorter
    /// loxo_core::wire::seal(&mut a[..n])?;
    /// let mut back = Hll::<10>::new(Seed::new(1, 2));
    /// back.decode_into(&a[..n]).unwrap();
    /// assert_eq!(back.estimate(), h.estimate());
    /// # Ok::<(), loxo_core::EncodeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] when `buf` cannot hold the dense frame.
    pub fn encode_dense_unsealed_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        wire::encode_as(self, buf, self.seed.fingerprint(), false, true)
    }

    /// Like [`encode_into`](Self::encode_into), but writes `fingerprint` as the
    /// frame's seed fingerprint: for collectors that merged frames with
    /// [`decode_into_any_seed`](Self::decode_into_any_seed) and never learnt the
    /// devices' seed.
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] as for [`encode_into`](Self::encode_into).
    pub fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError> {
        wire::encode(self, buf, fingerprint)
    }

    /// Replaces this sketch with the one serialized in `bytes`, which must be an
    /// `hll` frame of the same precision hashed with the same seed. A list frame
    /// (an [`HllSparse`] in list mode, flag bit 2) becomes the registers of the
    /// same keys.
    ///
    /// Validates everything before writing: on error `self` is unchanged.
    ///
    /// # Errors
    ///
    /// The envelope's errors (see [`Frame::parse`](loxo_core::wire::Frame::parse)); [`DecodeError::WrongKind`];
    /// [`DecodeError::ParameterMismatch`] for another precision;
    /// [`DecodeError::SeedMismatch`] for another seed;
    /// [`DecodeError::InvalidValue`] for unknown flags, a register above
    /// `64 − P + 1`, unordered or out-of-range sparse entries, a negative or
    /// non-finite martingale estimate or one below the number of non-zero registers
    /// (each register change adds at least 1 to it), a list longer than
    /// [`HllSparse::LIST_CAPACITY`] or with entries not strictly increasing or no
    /// digest produces, or a payload length that does not match.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        wire::decode(self, bytes, Some(self.seed.fingerprint())).map(drop)
    }

    /// Like [`decode_into`](Self::decode_into) but without the seed check: decodes
    /// the registers of a frame made under any seed and returns that frame's seed
    /// fingerprint. For collectors (such as `loxo merge`) that combine sketches of
    /// devices whose seed they do not know: merge only frames with equal
    /// fingerprints, and never insert keys into a sketch decoded this way (it
    /// would hash them with this sketch's own seed).
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into), except `SeedMismatch`.
    pub fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        wire::decode(self, bytes, None)
    }
}

/// The frame of the dense sketch in dense mode (byte for byte), the list in list
/// mode.
impl<const P: u8> RegisterFrame for HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    const KIND: SketchKind = SketchKind::Hll;
    const PARAMS: [u32; 4] = <Hll<P> as RegisterFrame>::PARAMS;
    const M: usize = 1 << P;
    const DENSE_LEN: usize = <Hll<P> as RegisterFrame>::DENSE_LEN;
    const VALUE_BITS: u32 = <Hll<P> as RegisterFrame>::VALUE_BITS;
    const SPARSE_ENTRY: usize = <Hll<P> as RegisterFrame>::SPARSE_ENTRY;
    const LIST_CAPACITY: u32 = HllSparse::<P>::LIST_CAPACITY;

    fn is_valid_register(r: u8) -> bool {
        <Hll<P> as RegisterFrame>::is_valid_register(r)
    }

    fn dense_values(bytes: &[u8]) -> impl Iterator<Item = u8> + Clone + '_ {
        <Hll<P> as RegisterFrame>::dense_values(bytes)
    }

    fn list_floor(list: ListEntries<'_>) -> usize {
        <Hll<P> as RegisterFrame>::list_floor(list)
    }

    fn martingale(&self) -> Option<f64> {
        self.estimate_martingale()
    }

    fn list_count(&self) -> Option<u32> {
        self.is_sparse().then(|| self.list_len())
    }

    fn list_sorted(&self) -> impl Iterator<Item = u32> + '_ {
        self.list_entries_sorted()
    }

    fn non_zero(&self) -> usize {
        self.inner.non_zero()
    }

    fn dense_bytes(&self) -> &[u8] {
        self.inner.dense_bytes()
    }

    fn load(&mut self, payload: Payload<'_>) -> Result<(), DecodeError> {
        let Body::List(list) = payload.body else {
            // Registers (dense or sparse payload): written only if valid, and then
            // a full histogram without the list mark.
            return self.inner.load(payload);
        };
        self.clear();
        // At most `LIST_CAPACITY` distinct entries: all fit in the list.
        for e in list.iter() {
            self.list_insert(e);
        }
        // The list's martingale is its estimate: the value only says whether
        // there is one.
        self.inner.hip_valid = payload.martingale.is_some() && self.inner.hip_tracked;
        Ok(())
    }
}

impl<const P: u8> HllSparse<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Length in bytes of the frame [`encode_into`](Self::encode_into) writes now:
    /// in list mode `36 + 8 + 4 + 4k + 4` for `k` entries (at most 9 268 at
    /// `P = 14`), in dense mode [`Hll::encoded_len`].
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        wire::encoded_len(self)
    }

    /// Serializes the sketch in the loxo wire format (kind `hll`, see
    /// `docs/format.md`): in list mode flag bit 2 and the list of entries in
    /// increasing order (and the martingale value, the list's estimate, unless a
    /// merge happened); in dense mode exactly [`Hll::encode_into`]'s bytes. An
    /// [`Hll`] decoding a list frame holds the registers of the same keys.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::{Hll, HllSparse};
    ///
    /// let seed = Seed::new(7, 8);
    /// let mut s = HllSparse::<12>::new(seed);
    /// for i in 0..100u32 {
    ///     s.insert(&i.to_le_bytes());
    /// }
    /// let mut buf = [0u8; 4096];
    /// let n = s.encode_into(&mut buf)?;
    /// assert_eq!(n, 36 + 8 + 4 + 4 * 100 + 4);
    /// let mut back = HllSparse::<12>::new(seed);
    /// back.decode_into(&buf[..n])?;
    /// assert!(back.is_sparse() && back == s);
    /// let mut dense = Hll::<12>::new(seed); // reads the list as registers
    /// dense.decode_into(&buf[..n])?;
    /// assert_eq!(s, dense);
    /// # Ok::<(), Box<dyn core::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        wire::encode(self, buf, self.inner.seed.fingerprint())
    }

    /// Like [`encode_into`](Self::encode_into), but writes `fingerprint` as the
    /// frame's seed fingerprint (for collectors that never learnt the seed).
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] as for [`encode_into`](Self::encode_into).
    pub fn encode_into_with_fingerprint(
        &self,
        buf: &mut [u8],
        fingerprint: u64,
    ) -> Result<usize, EncodeError> {
        wire::encode(self, buf, fingerprint)
    }

    /// Replaces this sketch with the one serialized in `bytes`, an `hll` frame of
    /// the same precision and seed: a list frame is kept as a list, any other
    /// leaves the sketch dense.
    ///
    /// Validates everything before writing: on error `self` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`Hll::decode_into`]; for a list frame [`DecodeError::InvalidValue`] also
    /// for more than [`LIST_CAPACITY`](Self::LIST_CAPACITY) entries, entries not
    /// strictly increasing or no digest produces (rank 0 or above 40, bit 31 set),
    /// flag bits 0 and 2 together, and a martingale value below the count.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        wire::decode(self, bytes, Some(self.inner.seed.fingerprint())).map(drop)
    }

    /// Like [`decode_into`](Self::decode_into) but without the seed check; returns
    /// the frame's seed fingerprint (for collectors: merge only equal
    /// fingerprints, never insert keys into a sketch decoded this way).
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into), except `SeedMismatch`.
    pub fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        wire::decode(self, bytes, None)
    }
}
