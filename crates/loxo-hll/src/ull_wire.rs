//! [`Ull<P>`] in the loxo wire format: kind `ull` (12), params `[P, 8, 0, 0]`, a
//! dense (`2^P` register bytes), sparse (4-byte entries `index << 8 | byte`) or
//! list payload. The frame itself is written and validated once for every
//! register sketch (`wire`); this module says what an `Ull` holds and how it
//! loads a validated payload.
//!
//! A sketch in sparse mode writes the list; otherwise the encoder picks whichever
//! register payload is shorter (sparse when fewer than `m / 4 − 1` registers are
//! non-zero).

use loxo_core::wire::SketchKind;
use loxo_core::{DecodeError, EncodeError};

use crate::entry::EntryTable;
use crate::precision::{Precision, SupportedPrecision};
use crate::wire::{self, Body, ListEntries, Payload, RegisterFrame};
use crate::Ull;

impl<const P: u8> RegisterFrame for Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    const KIND: SketchKind = SketchKind::Ull;
    const PARAMS: [u32; 4] = [P as u32, 8, 0, 0];
    const M: usize = 1 << P;
    const DENSE_LEN: usize = 1 << P;
    const VALUE_BITS: u32 = 8;
    const SPARSE_ENTRY: usize = 4;
    const LIST_CAPACITY: u32 = <Self as EntryTable>::LIST_CAPACITY;

    fn is_valid_register(r: u8) -> bool {
        Self::is_valid_register(r)
    }

    fn dense_values(bytes: &[u8]) -> impl Iterator<Item = u8> + Clone + '_ {
        bytes.iter().copied()
    }

    /// The registers the list sets: each changed once at least.
    fn list_floor(list: ListEntries<'_>) -> usize {
        // Entries ascend, so their registers do: count the distinct ones.
        let (mut registers, mut last) = (0usize, usize::MAX);
        for e in list.iter() {
            let (r, _) = Self::entry_register(e);
            if r != last {
                registers += 1;
                last = r;
            }
        }
        registers
    }

    fn martingale(&self) -> Option<f64> {
        self.estimate_martingale()
    }

    fn list_count(&self) -> Option<u32> {
        self.list_mode.then_some(self.list_len)
    }

    fn list_sorted(&self) -> impl Iterator<Item = u32> + '_ {
        self.list_entries_sorted()
    }

    fn non_zero(&self) -> usize {
        self.registers().iter().filter(|&&r| r != 0).count()
    }

    fn dense_bytes(&self) -> &[u8] {
        self.registers()
    }

    fn load(&mut self, payload: Payload<'_>) -> Result<(), DecodeError> {
        match payload.body {
            Body::List(list) => self.load_list(list.iter()),
            Body::Dense(dense) => self.set_registers(dense)?,
            Body::Sparse(sparse) => self.load_registers(sparse.expand(Self::M)),
        }
        if let Some(v) = payload.martingale.filter(|_| self.hip_tracked) {
            self.hip_estimate = v;
            self.hip_valid = true;
        }
        Ok(())
    }
}

impl<const P: u8> Ull<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Whether `r` is a register byte a precision-`P` sketch can hold: 0, `4P − 4`,
    /// `4P`, `4P + 2` or `4P + 4 ..= 255` (update value `U ≥ 1`, no flag for an
    /// update value below 1).
    #[must_use]
    pub const fn is_valid_register(r: u8) -> bool {
        r == 0 || r == 4 * P - 4 || r == 4 * P || r == 4 * P + 2 || r >= 4 * P + 4
    }

    /// Length in bytes of the frame [`encode_into`](Self::encode_into) writes now (at
    /// most `36 + 8 + 2^P + 4` bytes, 16 432 at `P = 14`). Cost O(m).
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
    /// use loxo_hll::Ull;
    ///
    /// let seed = Seed::new(7, 8);
    /// let mut ull = Ull::<12>::new(seed);
    /// for i in 0..100u32 {
    ///     ull.insert(&i.to_le_bytes());
    /// }
    /// let mut buf = [0u8; 4200];
    /// let n = ull.encode_into(&mut buf)?;
    /// assert_eq!(n, ull.encoded_len());
    /// assert!(n < 500); // sparse: at most 100 registers, 4 bytes each
    ///
    /// let mut back = Ull::<12>::new(seed);
    /// back.decode_into(&buf[..n])?;
    /// assert_eq!(back, ull);
    /// assert_eq!(back.estimate_martingale(), ull.estimate_martingale());
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

    /// Replaces this sketch with the one serialized in `bytes`, which must be an
    /// `ull` frame of the same precision hashed with the same seed.
    ///
    /// Validates everything before writing: on error `self` is unchanged.
    ///
    /// # Errors
    ///
    /// The envelope's errors (see [`Frame::parse`](loxo_core::wire::Frame::parse)); [`DecodeError::WrongKind`];
    /// [`DecodeError::ParameterMismatch`] for another precision;
    /// [`DecodeError::SeedMismatch`] for another seed;
    /// [`DecodeError::InvalidValue`] for unknown flags, a register byte no sketch of
    /// this precision can hold, unordered or out-of-range sparse entries, a negative
    /// or non-finite martingale estimate or one below the number of non-zero
    /// registers (each register change adds at least 1 to it);
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] for a payload
    /// length that does not match.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        wire::decode(self, bytes, Some(self.seed.fingerprint())).map(drop)
    }

    /// Like [`decode_into`](Self::decode_into) but without the seed check; returns
    /// the frame's seed fingerprint. For collectors that merge devices' sketches
    /// without knowing their seed: merge only equal fingerprints, and never insert
    /// keys into a sketch decoded this way.
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into), except `SeedMismatch`.
    pub fn decode_into_any_seed(&mut self, bytes: &[u8]) -> Result<u64, DecodeError> {
        wire::decode(self, bytes, None)
    }

    /// Replaces all registers with `bytes` (e.g. hash4j's `UltraLogLog.getState()`
    /// of the same precision, computed from the same 64-bit hashes), keeping the
    /// seed. Validates everything before writing: on error the sketch is unchanged.
    /// On success the martingale estimate becomes `None`. Cost O(m).
    ///
    /// # Errors
    ///
    /// [`DecodeError::ParameterMismatch`] unless `bytes` has exactly `m` bytes;
    /// [`DecodeError::InvalidValue`] for a byte no register of this precision can
    /// hold ([`is_valid_register`](Self::is_valid_register)).
    pub fn set_registers(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        if bytes.len() != Self::M {
            return Err(DecodeError::ParameterMismatch {
                expected: Self::M as u32,
                found: bytes.len() as u32,
            });
        }
        if !bytes.iter().all(|&r| Self::is_valid_register(r)) {
            return Err(DecodeError::InvalidValue);
        }
        self.load_registers(bytes.iter().copied());
        Ok(())
    }

    /// Replaces the sketch with validated list entries: kept as a list by a sketch
    /// built [`new_sparse`](Self::new_sparse), applied to registers otherwise (the
    /// registers a dense sketch fed the same keys holds).
    fn load_list(&mut self, entries: impl Iterator<Item = u32>) {
        self.clear();
        self.hip_valid = false;
        for e in entries {
            self.insert_entry(e);
        }
        self.hip_valid = false;
    }

    /// Writes `m` validated register bytes and recomputes the sums and counters.
    fn load_registers(&mut self, regs: impl Iterator<Item = u8>) {
        self.clear();
        self.list_mode = false;
        for (slot, r) in self.registers.as_mut().iter_mut().zip(regs) {
            *slot = r;
        }
        self.recount();
        self.hip_valid = false;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    extern crate std;

    use super::*;
    use crate::wire::{FLAG_LIST, FLAG_SPARSE};
    use loxo_core::wire::{Encoder, Header};
    use loxo_core::Seed;

    const SEED: Seed = Seed::new(3, 4);

    #[test]
    fn valid_registers_are_the_reachable_ones() {
        // Every byte a sketch reaches by inserts, and nothing else.
        let mut reached = [false; 256];
        reached[0] = true;
        for a in 1..=61u32 {
            for flags in 0..4u32 {
                let mut u = Ull::<4>::new(SEED);
                let mut put = |v: u32| {
                    let h = if v == 61 { 0 } else { 1 << (60 - v) };
                    u.insert_hash(loxo_core::KeyHash::from_u64(h));
                };
                if flags & 1 != 0 && a > 2 {
                    put(a - 2);
                }
                if flags & 2 != 0 && a > 1 {
                    put(a - 1);
                }
                put(a);
                reached[usize::from(u.register(0))] = true;
            }
        }
        for r in 0..=255u8 {
            assert_eq!(
                Ull::<4>::is_valid_register(r),
                reached[usize::from(r)],
                "{r}"
            );
        }
    }

    /// Sparse-mode sketches write the list: a sparse-mode target keeps it, a dense
    /// one converts it (to the registers a dense sketch fed the same keys holds).
    #[test]
    fn list_frames_round_trip_and_bad_lists_are_refused() {
        for n in [0u32, 1, 30, 191] {
            let (mut u, mut dense) = (Ull::<10>::new_sparse(SEED), Ull::<10>::new(SEED));
            for k in 0..n {
                u.insert(&k.to_le_bytes());
                dense.insert(&k.to_le_bytes());
            }
            assert!(u.is_sparse());
            let mut buf = [0u8; 1200];
            let len = u.encode_into(&mut buf).unwrap();
            assert_eq!(len, u.encoded_len());
            assert_eq!(len, 36 + 8 + 4 + 4 * n as usize + 4);
            let mut back = Ull::<10>::new_sparse(SEED);
            back.decode_into(&buf[..len]).unwrap();
            assert!(back.is_sparse());
            assert_eq!(back, u);
            assert_eq!(back.estimate().to_bits(), u.estimate().to_bits());
            assert_eq!(back.estimate_martingale(), u.estimate_martingale());
            let mut again = [0u8; 1200];
            assert_eq!(back.encode_into(&mut again).unwrap(), len);
            assert_eq!(again[..len], buf[..len]);
            let mut d = Ull::<10>::new(SEED);
            d.decode_into(&buf[..len]).unwrap();
            assert!(!d.is_sparse());
            assert_eq!(d.registers(), dense.registers());
            assert_eq!(d.estimate_martingale(), u.estimate_martingale());
        }
        // Corrupt lists, framed afresh: each refused, the target unchanged.
        let frame = |flags: u8, entries: &[u32]| {
            let mut h = Header::new(
                SketchKind::Ull,
                SEED.fingerprint(),
                <Ull<10> as RegisterFrame>::PARAMS,
                (4 + 4 * entries.len()) as u32,
            );
            h.flags = flags;
            let mut buf = [0u8; 1024];
            let mut enc = Encoder::new(&mut buf, &h).unwrap();
            enc.put_u32(entries.len() as u32);
            for &e in entries {
                enc.put_u32(e);
            }
            let n = enc.finish();
            (buf, n)
        };
        let good = [1u32 << 6 | 3, 2 << 6 | 1, 1 << 30 | 0x28]; // rank 40 last
        let (buf, n) = frame(FLAG_LIST, &good);
        let mut t = Ull::<10>::new_sparse(SEED);
        t.decode_into(&buf[..n]).unwrap();
        assert_eq!(t.list_len, 3);
        let cap = <Ull<10> as EntryTable>::LIST_CAPACITY;
        let too_many: std::vec::Vec<u32> = (1..=cap + 1).map(|i| i << 6 | 1).collect();
        for (i, (flags, entries)) in [
            (FLAG_LIST, &[2 << 6 | 1, 1 << 6 | 3][..]), // unordered
            (FLAG_LIST, &[1 << 6 | 3, 1 << 6 | 3]),     // repeated
            (FLAG_LIST, &[5 << 6]),                     // rank 0
            (FLAG_LIST, &[5 << 6 | 0x29]),              // rank above 40
            (FLAG_LIST, &[1 << 31 | 1]),                // 26 index bits
            (FLAG_LIST | FLAG_SPARSE, &good),           // two payload kinds
            (FLAG_LIST | 8, &good),                     // unknown flag
            (FLAG_LIST, &too_many),                     // longer than the list can be
        ]
        .into_iter()
        .enumerate()
        {
            let (bytes, len) = frame(flags, entries);
            let mut t = Ull::<10>::new_sparse(SEED);
            t.insert(b"keep");
            let before = t.clone();
            assert_eq!(
                t.decode_into(&bytes[..len]),
                Err(DecodeError::InvalidValue),
                "case {i}"
            );
            assert_eq!(t, before);
            assert!(t.is_sparse());
        }
    }

    #[test]
    fn round_trips_sparse_and_dense_and_refuses_bad_bytes() {
        for n in [0u32, 1, 30, 200, 5000] {
            let mut u = Ull::<8>::new(SEED);
            for k in 0..n {
                u.insert(&k.to_le_bytes());
            }
            let mut buf = [0u8; 400];
            let len = u.encode_into(&mut buf).unwrap();
            let mut back = Ull::<8>::new(SEED);
            back.decode_into(&buf[..len]).unwrap();
            assert_eq!(back, u);
            assert_eq!(back.estimate().to_bits(), u.estimate().to_bits());
            assert_eq!(back.estimate_martingale(), u.estimate_martingale());
        }
        let mut u = Ull::<4>::new(SEED);
        u.insert(b"keep");
        let before = u.clone();
        assert_eq!(
            u.set_registers(&[0; 15]),
            Err(DecodeError::ParameterMismatch {
                expected: 16,
                found: 15
            })
        );
        let mut bad = [0u8; 16];
        bad[3] = 13; // 4P − 3: not a register byte at P = 4
        assert_eq!(u.set_registers(&bad), Err(DecodeError::InvalidValue));
        assert_eq!(u, before);
        assert!(u.estimate_martingale().is_some());
    }
}
