//! The loxo wire format of the register sketches, written once for [`Hll<P>`]
//! (kind `hll`, 5), [`HllSparse<P>`] (also kind `hll`) and [`Ull<P>`] (kind `ull`,
//! 12): the frame layout, the encoder, and a validated view of a payload
//! ([`Payload::parse`]) that each sketch then loads ([`RegisterFrame::load`]).
//!
//! Layout (documented in `docs/format.md`, pinned by golden files):
//!
//! * params: `[P, bits per register, 0, 0]` (6 for `hll`, 8 for `ull`);
//! * flags: bit 0 = sparse payload, bit 1 = a martingale estimate follows, bit 2 =
//!   list payload (a sketch in list mode: [`HllSparse`], [`Ull::new_sparse`]);
//! * payload: the martingale estimate as an `f64` if flag bit 1, then either
//!   * **dense**: the register bytes in the in-memory layout (`hll`: the
//!     `0.75 · 2^P` packed bytes, register `i` at bit `6·i` of a little-endian bit
//!     stream; `ull`: the `2^P` register bytes), or
//!   * **sparse**: a `u32` count `n`, then `n` little-endian entries
//!     `index << bits | register` with strictly increasing `index` and a non-zero
//!     register (`hll`: 3 bytes, `ull`: 4 bytes), or
//!   * **list**: a `u32` count `n` (at most the sketch's list capacity), then `n`
//!     little-endian `u32` entries `index25 << 6 | rank25`, strictly increasing
//!     (see `entry`).
//!
//! A sketch in list mode writes the list; otherwise the encoder picks whichever
//! register payload is shorter (sparse when fewer than about `m / 4` registers are
//! non-zero). Any decoder reads all three: a list into registers becomes the
//! registers of the same keys.

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError};

use crate::entry::{is_valid_entry, le_u32};
use crate::registers;

/// Flag bit: the payload holds sparse entries instead of the register bytes.
pub(crate) const FLAG_SPARSE: u8 = 1;
/// Flag bit: the payload starts with the martingale estimate.
pub(crate) const FLAG_MARTINGALE: u8 = 2;
/// Flag bit: the payload is a list of entries (a sketch in list mode).
pub(crate) const FLAG_LIST: u8 = 4;
/// Bytes per list entry (`index25 << 6 | rank25`, a `u32`).
const LIST_ENTRY: usize = 4;

/// What a register sketch tells the shared frame code: its geometry, what it
/// holds now (to encode), and how it loads a validated payload (to decode).
pub(crate) trait RegisterFrame {
    /// The frame's kind.
    const KIND: SketchKind;
    /// The frame's parameters, `[P, bits per register, 0, 0]`.
    const PARAMS: [u32; 4];
    /// Number of registers, `m`.
    const M: usize;
    /// Bytes of the dense payload.
    const DENSE_LEN: usize;
    /// Bits of the register value in a sparse entry (`index << bits | value`).
    const VALUE_BITS: u32;
    /// Bytes per sparse entry (the low bytes of the little-endian `u32`).
    const SPARSE_ENTRY: usize;
    /// Most entries a list frame may hold.
    const LIST_CAPACITY: u32;

    /// Whether `r` is a register value a sketch of this kind and precision holds.
    fn is_valid_register(r: u8) -> bool;
    /// The register values of a dense payload of [`DENSE_LEN`](Self::DENSE_LEN)
    /// bytes, in index order.
    fn dense_values(bytes: &[u8]) -> impl Iterator<Item = u8> + Clone + '_;
    /// The least martingale value the keys of a validated list can have produced
    /// (each change of the sketch's state adds at least 1 to it).
    fn list_floor(list: ListEntries<'_>) -> usize;

    /// The martingale estimate to write, if any.
    fn martingale(&self) -> Option<f64>;
    /// The number of entries, in list mode.
    fn list_count(&self) -> Option<u32>;
    /// The list's entries in increasing order (list mode).
    fn list_sorted(&self) -> impl Iterator<Item = u32> + '_;
    /// Registers that are not 0 (not in list mode).
    fn non_zero(&self) -> usize;
    /// The dense payload: the register bytes (not in list mode).
    fn dense_bytes(&self) -> &[u8];

    /// Replaces the sketch with a validated payload.
    ///
    /// # Errors
    ///
    /// Whatever the sketch's own loader refuses; `self` is then unchanged.
    fn load(&mut self, payload: Payload<'_>) -> Result<(), DecodeError>;
}

/// The header of the frame `s` encodes to now.
fn header<S: RegisterFrame>(s: &S, fingerprint: u64, dense: bool) -> Header {
    let (mut flags, mut payload) = if let Some(n) = s.list_count() {
        (FLAG_LIST, 4 + LIST_ENTRY * n as usize)
    } else {
        let sparse_len = 4 + S::SPARSE_ENTRY * s.non_zero();
        if sparse_len < S::DENSE_LEN && !dense {
            (FLAG_SPARSE, sparse_len)
        } else {
            (0, S::DENSE_LEN)
        }
    };
    if s.martingale().is_some() {
        flags |= FLAG_MARTINGALE;
        payload += 8;
    }
    let mut h = Header::new(S::KIND, fingerprint, S::PARAMS, payload as u32);
    h.flags = flags;
    h
}

/// Length in bytes of the frame [`encode`] writes for `s` now.
pub(crate) fn encoded_len<S: RegisterFrame>(s: &S) -> usize {
    wire::frame_len(header(s, 0, false).payload_len as usize)
}

/// Writes `s` as a frame under `fingerprint`; returns the bytes written.
///
/// # Errors
///
/// [`EncodeError::BufferTooSmall`] if `buf` is shorter than [`encoded_len`];
/// nothing is written then.
pub(crate) fn encode<S: RegisterFrame>(
    s: &S,
    buf: &mut [u8],
    fingerprint: u64,
) -> Result<usize, EncodeError> {
    encode_sealed(s, buf, fingerprint, true)
}

/// [`encode`], the CRC written only if `sealed` (else the trailer is zeroed, for
/// [`loxo_core::wire::seal`] to complete).
pub(crate) fn encode_sealed<S: RegisterFrame>(
    s: &S,
    buf: &mut [u8],
    fingerprint: u64,
    sealed: bool,
) -> Result<usize, EncodeError> {
    encode_as(s, buf, fingerprint, sealed, false)
}

/// [`encode_sealed`], with the dense payload whatever its length if `dense` (a
/// sketch in list mode still writes its list).
pub(crate) fn encode_as<S: RegisterFrame>(
    s: &S,
    buf: &mut [u8],
    fingerprint: u64,
    sealed: bool,
    dense: bool,
) -> Result<usize, EncodeError> {
    let header = header(s, fingerprint, dense);
    let mut enc = Encoder::new(buf, &header)?;
    if let Some(v) = s.martingale() {
        enc.put(&v.to_le_bytes());
    }
    if header.flags & FLAG_LIST != 0 {
        enc.put_u32(s.list_count().unwrap_or(0));
        for e in s.list_sorted() {
            enc.put_u32(e);
        }
    } else if header.flags & FLAG_SPARSE != 0 {
        let n = s.non_zero();
        enc.put_u32(n as u32);
        enc.put_with(n * S::SPARSE_ENTRY, |dst| {
            write_sparse::<S>(s.dense_bytes(), dst);
        });
    } else {
        enc.put(s.dense_bytes());
    }
    Ok(if sealed {
        enc.finish()
    } else {
        enc.finish_unsealed()
    })
}

/// Writes the sparse entries of the registers in the dense payload `bytes` (the
/// non-zero ones in index order, `index << VALUE_BITS | value`, the entry's low
/// `SPARSE_ENTRY` bytes, little-endian) into `dst`, which holds exactly
/// [`RegisterFrame::non_zero`] entries; bytes no entry reaches are zeroed (never,
/// for a sketch whose count is right).
///
/// Written for the epoch end of a small MCU: 6-bit registers are read a 3-byte group
/// (four registers) at a time and an all-zero group is skipped whole, entries go
/// straight into the frame. On a Cortex-M4 the sparse `Hll<14>` of ~4 000 flows
/// encodes in about a third of the instructions of a register-by-register walk with
/// a bounds-checked write per entry; the bytes are the same (golden files, round
/// trips).
fn write_sparse<S: RegisterFrame>(bytes: &[u8], dst: &mut [u8]) {
    let mut out = dst.chunks_exact_mut(S::SPARSE_ENTRY);
    let mut emit = |i: usize, r: u32| {
        if let Some(c) = out.next() {
            let e = (i as u32) << S::VALUE_BITS | r;
            if let Some(le) = e.to_le_bytes().get(..c.len()) {
                c.copy_from_slice(le);
            }
        }
    };
    if S::VALUE_BITS == registers::BITS {
        // `registers`' layout: register 4g + j is bits 6j .. 6j + 6 of the 24-bit
        // little-endian word of bytes 3g .. 3g + 3.
        for (g, b) in bytes.chunks_exact(3).enumerate() {
            let w = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
            if w == 0 {
                continue;
            }
            for j in 0..4 {
                let r = (w >> (registers::BITS * j)) & ((1 << registers::BITS) - 1);
                if r != 0 {
                    emit(4 * g + j as usize, r);
                }
            }
        }
    } else {
        for (i, r) in S::dense_values(bytes).enumerate() {
            if r != 0 {
                emit(i, u32::from(r));
            }
        }
    }
    for c in out {
        c.fill(0);
    }
}

/// Replaces `s` with the sketch serialized in `bytes`, a frame of its kind and
/// parameters; with `seed_fingerprint`, only one made under that seed. Validates
/// everything before writing: on error `s` is unchanged. Returns the frame's
/// seed fingerprint.
///
/// # Errors
///
/// The envelope's errors (see [`Frame::parse`]); [`DecodeError::WrongKind`];
/// [`DecodeError::ParameterMismatch`]; [`DecodeError::SeedMismatch`]; those of
/// [`Payload::parse`] and of the sketch's loader.
pub(crate) fn decode<S: RegisterFrame>(
    s: &mut S,
    bytes: &[u8],
    seed_fingerprint: Option<u64>,
) -> Result<u64, DecodeError> {
    let frame = Frame::parse(bytes)?;
    frame.header().expect(S::KIND, S::PARAMS)?;
    let fingerprint = frame.header().seed_fingerprint;
    if let Some(expected) = seed_fingerprint.filter(|&f| f != fingerprint) {
        return Err(DecodeError::SeedMismatch {
            expected,
            found: fingerprint,
        });
    }
    s.load(Payload::parse::<S>(&frame)?)?;
    Ok(fingerprint)
}

/// A register-sketch payload, validated: whatever a loader reads from it is a
/// state some sketch of that kind and precision could be in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Payload<'a> {
    /// The martingale estimate: finite, non-negative and at least the least value
    /// the registers (or the list) imply.
    pub(crate) martingale: Option<f64>,
    /// The registers or the list.
    pub(crate) body: Body<'a>,
}

/// The payload after the martingale value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Body<'a> {
    /// The register bytes, every value valid.
    Dense(&'a [u8]),
    /// Sparse entries: strictly increasing indices below `m`, non-zero valid values.
    Sparse(SparseEntries<'a>),
    /// List entries: strictly increasing entries a digest can produce, at most the
    /// list capacity.
    List(ListEntries<'a>),
}

impl<'a> Payload<'a> {
    /// Validates the payload of `frame` (whose header matches `S`'s kind and
    /// parameters).
    ///
    /// # Errors
    ///
    /// [`DecodeError::InvalidValue`] for unknown flags or the sparse and list bits
    /// together, a negative or non-finite martingale estimate or one below the
    /// least value the registers imply (each register change adds at least 1 to
    /// it), a register value a sketch of this precision cannot hold, unordered or
    /// out-of-range sparse entries, a list longer than the capacity or with
    /// entries not strictly increasing or no digest produces;
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] for a payload
    /// length that does not match.
    pub(crate) fn parse<S: RegisterFrame>(frame: &Frame<'a>) -> Result<Self, DecodeError> {
        let flags = frame.header().flags;
        if flags & !(FLAG_SPARSE | FLAG_MARTINGALE | FLAG_LIST) != 0
            || flags & (FLAG_SPARSE | FLAG_LIST) == FLAG_SPARSE | FLAG_LIST
        {
            return Err(DecodeError::InvalidValue);
        }
        let mut r = frame.reader();
        let martingale = if flags & FLAG_MARTINGALE == 0 {
            None
        } else {
            let v = f64::from_le_bytes(r.array::<8>()?);
            if !v.is_finite() || v < 0.0 {
                return Err(DecodeError::InvalidValue);
            }
            Some(v)
        };
        // Every register change adds at least 1 to the martingale (a change has
        // probability at most 1), so a real one is at least the number of changes
        // the registers imply; checked before anything is written.
        let below = |floor: usize| martingale.is_some_and(|v| v < floor as f64);
        let body = if flags & FLAG_LIST != 0 {
            let n = r.u32()?;
            if n > S::LIST_CAPACITY {
                return Err(DecodeError::InvalidValue);
            }
            let list = ListEntries(r.take(n as usize * LIST_ENTRY)?);
            r.finish()?;
            let mut prev = 0u32;
            for e in list.iter() {
                if e <= prev || !is_valid_entry(e) {
                    return Err(DecodeError::InvalidValue);
                }
                prev = e;
            }
            if below(S::list_floor(list)) {
                return Err(DecodeError::InvalidValue);
            }
            Body::List(list)
        } else if flags & FLAG_SPARSE == 0 {
            let dense = r.take(S::DENSE_LEN)?;
            r.finish()?;
            let mut non_zero = 0;
            for v in S::dense_values(dense) {
                non_zero += usize::from(v != 0);
            }
            if below(non_zero) || !S::dense_values(dense).all(S::is_valid_register) {
                return Err(DecodeError::InvalidValue);
            }
            Body::Dense(dense)
        } else {
            let n = r.u32()? as usize;
            if n > S::M {
                return Err(DecodeError::InvalidValue);
            }
            let sparse = SparseEntries {
                bytes: r.take(n.saturating_mul(S::SPARSE_ENTRY))?,
                entry: S::SPARSE_ENTRY,
                value_bits: S::VALUE_BITS,
            };
            r.finish()?;
            let mut next = 0u32;
            for (index, value) in sparse.iter() {
                if index < next || index as usize >= S::M {
                    return Err(DecodeError::InvalidValue);
                }
                if value == 0 || !S::is_valid_register(value) {
                    return Err(DecodeError::InvalidValue);
                }
                next = index + 1;
            }
            if below(n) {
                return Err(DecodeError::InvalidValue);
            }
            Body::Sparse(sparse)
        };
        Ok(Self { martingale, body })
    }
}

/// The validated entries of a list payload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListEntries<'a>(&'a [u8]);

impl ListEntries<'_> {
    /// Number of entries.
    pub(crate) fn len(&self) -> u32 {
        (self.0.len() / LIST_ENTRY) as u32
    }

    /// The entries, in increasing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.chunks_exact(LIST_ENTRY).map(le_u32)
    }
}

/// The validated entries of a sparse payload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SparseEntries<'a> {
    bytes: &'a [u8],
    entry: usize,
    value_bits: u32,
}

impl<'a> SparseEntries<'a> {
    fn iter(&self) -> impl Iterator<Item = (u32, u8)> + 'a {
        let (bits, mask) = (self.value_bits, (1u32 << self.value_bits) - 1);
        self.bytes
            .chunks_exact(self.entry)
            .map(move |e| (le_u32(e) >> bits, (le_u32(e) & mask) as u8))
    }

    /// The `m` register values the entries stand for (0 between them).
    pub(crate) fn expand(self, m: usize) -> SparseExpand<'a> {
        SparseExpand {
            entries: self,
            next: 0,
            m: m as u32,
        }
    }
}

/// Expands validated sparse entries into `m` register values.
#[derive(Clone)]
pub(crate) struct SparseExpand<'a> {
    entries: SparseEntries<'a>,
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
        match self.entries.iter().next() {
            Some((index, value)) if index == i => {
                let rest = self.entries.bytes.get(self.entries.entry..);
                self.entries.bytes = rest.unwrap_or(&[]);
                Some(value)
            }
            _ => Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::{vec, vec::Vec};

    use loxo_core::wire::{Frame, HEADER_LEN};
    use loxo_core::Seed;

    use super::{FLAG_MARTINGALE, FLAG_SPARSE};
    use crate::test_util::digests;
    use crate::{Hll, Ull};

    /// The sparse payload of `frame`: its entries after the count (and the martingale).
    fn entries(frame: &[u8], entry: usize) -> Vec<u32> {
        let f = Frame::parse(frame).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(f.header().flags & FLAG_SPARSE, 0, "a sparse frame");
        let skip = if f.header().flags & FLAG_MARTINGALE == 0 {
            0
        } else {
            8
        };
        let p = &f.payload()[skip..];
        let n = u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize;
        assert_eq!(p.len(), 4 + n * entry);
        p[4..]
            .chunks_exact(entry)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..entry].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect()
    }

    /// The group-at-a-time writer lists exactly the non-zero registers, in index
    /// order, as the register-by-register definition does: `Hll<14>` and `Hll<10>`
    /// (6-bit groups) and `Ull<12>` (bytes), from one key up to the sparse limit.
    #[test]
    fn sparse_entries_are_the_non_zero_registers_in_order() {
        for (stream, n) in [(1, 1), (2, 7), (3, 300), (4, 2_000), (5, 3_600)] {
            let mut h = Hll::<14>::new(Seed::new(1, 2));
            let mut small = Hll::<10>::new(Seed::new(3, 4));
            let mut u = Ull::<12>::new(Seed::new(5, 6));
            for d in digests(stream).take(n) {
                h.insert_hash(d);
                small.insert_hash(d);
                u.insert_hash(d);
            }
            let mut buf = vec![0u8; 64 * 1024];
            let len = h.encode_into(&mut buf).unwrap_or_else(|e| panic!("{e}"));
            let want: Vec<u32> = h
                .registers()
                .enumerate()
                .filter(|&(_, r)| r != 0)
                .map(|(i, r)| (i as u32) << 6 | u32::from(r))
                .collect();
            assert_eq!(entries(&buf[..len], 3), want, "hll14, {n} keys");
            if n <= 200 {
                let len = small
                    .encode_into(&mut buf)
                    .unwrap_or_else(|e| panic!("{e}"));
                let want: Vec<u32> = small
                    .registers()
                    .enumerate()
                    .filter(|&(_, r)| r != 0)
                    .map(|(i, r)| (i as u32) << 6 | u32::from(r))
                    .collect();
                assert_eq!(entries(&buf[..len], 3), want, "hll10, {n} keys");
            }
            if n <= 900 {
                let len = u.encode_into(&mut buf).unwrap_or_else(|e| panic!("{e}"));
                let want: Vec<u32> = u
                    .registers()
                    .iter()
                    .enumerate()
                    .filter(|&(_, &r)| r != 0)
                    .map(|(i, &r)| (i as u32) << 8 | u32::from(r))
                    .collect();
                assert_eq!(entries(&buf[..len], 4), want, "ull12, {n} keys");
            }
            assert!(len > HEADER_LEN);
        }
    }
}
