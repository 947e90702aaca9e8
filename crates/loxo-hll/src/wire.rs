//! The loxo wire format for [`Hll<P>`]: kind `hll` (5), dense or sparse payload.
//!
//! Layout (documented in `docs/format.md`, pinned by golden files):
//!
//! * params: `[P, 6 (bits per register), 0, 0]`;
//! * flags: bit 0 = sparse payload, bit 1 = a martingale estimate follows, bit 2 =
//!   list payload (an [`HllSparse`](crate::HllSparse) in list mode);
//! * payload: the martingale estimate as an `f64` if flag bit 1, then either
//!   * **dense**: the `0.75 · 2^P` packed register bytes, in the in-memory layout
//!     (register `i` at bit `6·i` of a little-endian bit stream), or
//!   * **sparse**: a `u32` count `n`, then `n` little-endian 3-byte entries
//!     `index << 6 | rank` with strictly increasing `index` and `rank ≥ 1`, or
//!   * **list**: a `u32` count `n ≤` [`HllSparse::LIST_CAPACITY`](crate::HllSparse::LIST_CAPACITY),
//!     then `n` little-endian `u32` entries `index25 << 6 | rank25`, strictly
//!     increasing (the entries of `Ull`'s sparse mode, see `ull_sparse`).
//!
//! An `Hll` picks whichever register payload is shorter (sparse when fewer than
//! `m / 4 − 1` registers are non-zero); it reads a list as the registers of the
//! same keys.

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError};

use crate::hll_sparse::list_estimate;
use crate::precision::{Precision, SupportedPrecision};
use crate::registers;
use crate::ull_sparse::is_valid_entry;
use crate::{Hll, HllSparse};

/// Flag bit: the payload holds sparse entries instead of packed registers.
const FLAG_SPARSE: u8 = 1;
/// Flag bit: the payload starts with the martingale estimate.
pub(crate) const FLAG_MARTINGALE: u8 = 2;
/// Flag bit: the payload is the list of an [`HllSparse`] in list mode.
pub(crate) const FLAG_LIST: u8 = 4;
/// Bytes per list entry (`index25 << 6 | rank25`, a `u32`).
pub(crate) const LIST_ENTRY: usize = 4;

/// A validated list payload: the martingale value, if any, and the entries' bytes.
pub(crate) type ListPayload<'a> = (Option<f64>, &'a [u8]);
/// Bytes per sparse entry (`index << 6 | rank`, 24 bits).
const SPARSE_ENTRY: usize = 3;

impl<const P: u8> Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    pub(crate) const PARAMS: [u32; 4] = [P as u32, registers::BITS, 0, 0];

    fn non_zero(&self) -> usize {
        Self::M - self.hist[0] as usize
    }

    fn sparse_payload_len(&self) -> usize {
        4 + SPARSE_ENTRY * self.non_zero()
    }

    fn header(&self, fingerprint: u64) -> Header {
        let sparse = self.sparse_payload_len() < Self::REGISTER_BYTES;
        let mut payload = if sparse {
            self.sparse_payload_len()
        } else {
            Self::REGISTER_BYTES
        };
        let mut flags = 0;
        if sparse {
            flags |= FLAG_SPARSE;
        }
        if self.hip_valid {
            flags |= FLAG_MARTINGALE;
            payload += 8;
        }
        let mut h = Header::new(SketchKind::Hll, fingerprint, Self::PARAMS, payload as u32);
        h.flags = flags;
        h
    }

    /// Length in bytes of the frame [`encode_into`](Self::encode_into) writes now
    /// (it depends on how many registers are non-zero: at most
    /// `36 + 8 + 0.75 · 2^P + 4` bytes, 12 336 at `P = 14`).
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        wire::frame_len(self.header(0).payload_len as usize)
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
        self.encode_into_with_fingerprint(buf, self.seed.fingerprint())
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
        let header = self.header(fingerprint);
        let mut enc = Encoder::new(buf, &header)?;
        if header.flags & FLAG_MARTINGALE != 0 {
            enc.put(&self.hip_estimate.to_le_bytes());
        }
        if header.flags & FLAG_SPARSE != 0 {
            enc.put_u32(self.non_zero() as u32);
            for (i, r) in self.registers().enumerate() {
                if r != 0 {
                    let e = (i as u32) << registers::BITS | u32::from(r);
                    enc.put(&e.to_le_bytes()[..SPARSE_ENTRY]);
                }
            }
        } else {
            enc.put(self.registers.as_ref());
        }
        Ok(enc.finish())
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
    /// The envelope's errors (see [`Frame::parse`]); [`DecodeError::WrongKind`];
    /// [`DecodeError::ParameterMismatch`] for another precision;
    /// [`DecodeError::SeedMismatch`] for another seed;
    /// [`DecodeError::InvalidValue`] for unknown flags, a register above
    /// `64 − P + 1`, unordered or out-of-range sparse entries, a negative or
    /// non-finite martingale estimate or one below the number of non-zero registers
    /// (each register change adds at least 1 to it), a list longer than
    /// [`HllSparse::LIST_CAPACITY`] or with entries not strictly increasing or no
    /// digest produces, or a payload length that does not match.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let frame = Frame::parse(bytes)?;
        frame.header().expect(SketchKind::Hll, Self::PARAMS)?;
        if frame.header().seed_fingerprint != self.seed.fingerprint() {
            return Err(DecodeError::SeedMismatch {
                expected: self.seed.fingerprint(),
                found: frame.header().seed_fingerprint,
            });
        }
        self.decode_frame(&frame)
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
        let frame = Frame::parse(bytes)?;
        frame.header().expect(SketchKind::Hll, Self::PARAMS)?;
        self.decode_frame(&frame)?;
        Ok(frame.header().seed_fingerprint)
    }

    /// The list payload of `frame`, validated, if it has one (flag bit 2): the
    /// martingale value and the entries' bytes. Shared by `Hll` (which applies the
    /// entries to its registers) and [`HllSparse`] (which keeps them).
    pub(crate) fn list_payload<'a>(
        frame: &Frame<'a>,
    ) -> Result<Option<ListPayload<'a>>, DecodeError> {
        let flags = frame.header().flags;
        if flags & FLAG_LIST == 0 {
            return Ok(None);
        }
        if flags & !(FLAG_LIST | FLAG_MARTINGALE) != 0 {
            return Err(DecodeError::InvalidValue);
        }
        let mut r = frame.reader();
        let hip = if flags & FLAG_MARTINGALE == 0 {
            None
        } else {
            let v = f64::from_le_bytes(r.array::<8>()?);
            if !v.is_finite() || v < 0.0 {
                return Err(DecodeError::InvalidValue);
            }
            Some(v)
        };
        let n = r.u32()?;
        if n > HllSparse::<P>::LIST_CAPACITY {
            return Err(DecodeError::InvalidValue);
        }
        let entries = r.take(n as usize * LIST_ENTRY)?;
        r.finish()?;
        // Strictly increasing (so distinct) entries a digest can produce; the
        // martingale counts at least one key per entry.
        let mut prev = 0u32;
        for e in entries.chunks_exact(LIST_ENTRY).map(le_u32) {
            if e <= prev || !is_valid_entry(e) {
                return Err(DecodeError::InvalidValue);
            }
            prev = e;
        }
        if hip.is_some_and(|v| v < f64::from(n)) {
            return Err(DecodeError::InvalidValue);
        }
        Ok(Some((hip, entries)))
    }

    pub(crate) fn decode_frame(&mut self, frame: &Frame<'_>) -> Result<(), DecodeError> {
        if let Some((hip, entries)) = Self::list_payload(frame)? {
            // The registers the listed keys build (each entry determines its key's
            // register update at this precision), then the martingale as below.
            self.registers.as_mut().fill(0);
            for e in entries.chunks_exact(LIST_ENTRY).map(le_u32) {
                let (i, rank) = HllSparse::<P>::entry_register(e);
                if rank > registers::get(self.registers.as_ref(), i) {
                    registers::set(self.registers.as_mut(), i, rank);
                }
            }
            self.recount();
            // A list's martingale is its estimate, determined by the count (as
            // `HllSparse` reads it); the frame's value only says there is one.
            self.hip_valid = hip.is_some() && self.hip_tracked;
            if self.hip_valid {
                self.hip_estimate = list_estimate(entries.len() as u32 / LIST_ENTRY as u32);
            }
            return Ok(());
        }
        let flags = frame.header().flags;
        if flags & !(FLAG_SPARSE | FLAG_MARTINGALE) != 0 {
            return Err(DecodeError::InvalidValue);
        }
        let mut r = frame.reader();
        let hip = if flags & FLAG_MARTINGALE == 0 {
            None
        } else {
            let v = f64::from_le_bytes(r.array::<8>()?);
            if !v.is_finite() || v < 0.0 {
                return Err(DecodeError::InvalidValue);
            }
            Some(v)
        };
        // Every register change adds at least 1 to the martingale (a change has
        // probability at most 1), so a real one is at least the number of non-zero
        // registers; checked before anything is written.
        let below = |non_zero: usize| hip.is_some_and(|v| v < non_zero as f64);
        if flags & FLAG_SPARSE == 0 {
            let dense = r.take(Self::REGISTER_BYTES)?;
            r.finish()?;
            if below(registers::Registers::new(dense).filter(|&x| x != 0).count()) {
                return Err(DecodeError::InvalidValue);
            }
            // `set_registers` validates every value before it writes anything.
            self.set_registers(registers::Registers::new(dense))?;
        } else {
            let n = r.u32()? as usize;
            if n > Self::M {
                return Err(DecodeError::InvalidValue);
            }
            let entries = r.take(n.saturating_mul(SPARSE_ENTRY))?;
            r.finish()?;
            // Validate: strictly increasing indices below m, ranks in 1..=MAX_RANK.
            let mut next = 0u32;
            for e in entries.chunks_exact(SPARSE_ENTRY) {
                let (index, rank) = sparse_entry(e);
                if index < next || index as usize >= Self::M {
                    return Err(DecodeError::InvalidValue);
                }
                if rank == 0 || rank > Self::MAX_RANK {
                    return Err(DecodeError::InvalidValue);
                }
                next = index + 1;
            }
            if below(n) {
                return Err(DecodeError::InvalidValue);
            }
            self.set_registers(SparseExpand {
                entries,
                next: 0,
                m: Self::M as u32,
            })?;
        }
        if let Some(v) = hip.filter(|_| self.hip_tracked) {
            self.hip_estimate = v;
            self.hip_sum = self
                .registers()
                .map(Self::hip_term)
                .fold(0u64, u64::wrapping_add);
            self.hip_valid = true;
        }
        Ok(())
    }
}

pub(crate) fn le_u32(e: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    if let Some(dst) = w.get_mut(..e.len()) {
        dst.copy_from_slice(e);
    }
    u32::from_le_bytes(w)
}

fn sparse_entry(e: &[u8]) -> (u32, u8) {
    let mut w = [0u8; 4];
    if let Some(dst) = w.get_mut(..e.len()) {
        dst.copy_from_slice(e);
    }
    let v = u32::from_le_bytes(w);
    (v >> registers::BITS, (v & 63) as u8)
}

/// Expands validated sparse entries into `m` register values.
#[derive(Clone)]
struct SparseExpand<'a> {
    entries: &'a [u8],
    next: u32,
    m: u32,
}

impl Iterator for SparseExpand<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        if self.next >= self.m {
            return None;
        }
        let i = self.next;
        self.next += 1;
        match self.entries.get(..SPARSE_ENTRY).map(sparse_entry) {
            Some((index, rank)) if index == i => {
                self.entries = self.entries.get(SPARSE_ENTRY..).unwrap_or(&[]);
                Some(rank)
            }
            _ => Some(0),
        }
    }
}
