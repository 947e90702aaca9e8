//! The cuckoo filter [`Cuckoo<B, F>`] (Fan, Andersen, Kaminsky, Mitzenmacher 2014).

use core::fmt;

use loxo_core::wire::{self, Encoder, Frame, Header, SketchKind};
use loxo_core::{mix64, DecodeError, EncodeError, KeyHash, Seed};

use crate::Fingerprint;

/// Fingerprints per bucket.
pub const SLOTS: usize = 4;
/// Evictions tried before an insert gives up and parks the homeless fingerprint in
/// the victim slot (the reference implementation's bound).
pub const MAX_KICKS: u32 = 500;

/// The filter is full: the insert was refused and nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Full;

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cuckoo filter is full")
    }
}

impl core::error::Error for Full {}

/// A cuckoo filter: membership with removal, `B` buckets of 4 fingerprints of type
/// `F` (`u8` or `u16`), partial-key cuckoo hashing (bucket `i2 = i1 ⊕ hash(fp)`), at
/// most [`MAX_KICKS`] evictions per insert.
///
/// * `B` — buckets, a power of two ≥ 2 (the XOR trick needs it); otherwise a compile
///   error. [`cuckoo_buckets`](crate::cuckoo_buckets) sizes it for 95 % load.
///
/// ```compile_fail,E0080
/// let _ = loxo_bloom::Cuckoo::<1000, u8>::new(loxo_core::Seed::new(1, 2));
/// ```
///
/// **Full**: when an insert's eviction chain exceeds [`MAX_KICKS`], the last homeless
/// fingerprint is kept in a one-entry *victim* slot (the reference implementation's
/// design), so no key that was inserted is ever lost; from then on inserts return
/// [`Full`] without changing anything, until a removal makes room: every successful
/// [`remove`](Self::remove) while full re-places the victim with a full eviction chain
/// (as the reference implementation does after a delete), so free slots anywhere in
/// the table take it in. With 4-slot buckets the first chain fails at about 96–97 %
/// load; below the 95 % that [`cuckoo_buckets`](crate::cuckoo_buckets) sizes for,
/// inserts succeed, also after removals from a full filter (test
/// `tests/tests/bloom_cuckoo_removals.rs`).
///
/// **Duplicates**: every insert stores a copy of the fingerprint (that is what makes
/// [`remove`](Self::remove) exact), so one key inserted more than 8 times fills its
/// two buckets; for set semantics test [`contains`](Self::contains) first.
///
/// **Memory**: `B·4·size_of::<F>()` bytes of buckets + about 32 bytes (seed, victim,
/// count, RNG). At 95 % load that is `8/0.95 ≈ 8.4` (u8) or `16.8` (u16) bits per key.
/// **Error**: a lookup compares against 8 slots: false-positive rate
/// `≈ 1 − (1 − 1/(2^f − 1))^{8α}` ≈ `8α/2^f` at load `α` (3.1 % for 8-bit, 0.012 %
/// for 16-bit fingerprints at full load). A classic Bloom filter needs
/// `−log₂ p / ln 2` bits per key: 18.8 at 0.012 %, so the 16-bit cuckoo filter wins
/// below about 3 % (measured numbers in the crate README).
/// **Cost**: one SipHash, two bucket reads for `contains`; inserts near full load
/// evict (amortised O(1) below 95 %); a removal while full runs one eviction chain
/// (at most [`MAX_KICKS`] swaps).
///
/// ```
/// use loxo_bloom::{cuckoo_buckets, Cuckoo};
/// use loxo_core::Seed;
///
/// let mut f = Cuckoo::<{ cuckoo_buckets(1_000) }, u16>::new(Seed::new(1, 2));
/// f.insert(b"flow-1")?;
/// assert!(f.contains(b"flow-1"));
/// assert!(f.remove(b"flow-1"));
/// assert!(!f.contains(b"flow-1"));
/// # Ok::<(), loxo_bloom::Full>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Cuckoo<const B: usize, F: Fingerprint = u8> {
    buckets: [[F; SLOTS]; B],
    victim: Option<(u32, F)>,
    len: u32,
    rng: u64,
    seed: Seed,
}

impl<const B: usize, F: Fingerprint> Cuckoo<B, F> {
    const CHECK: () = {
        assert!(B >= 2, "Cuckoo<B, F>: at least 2 buckets");
        assert!(
            B.is_power_of_two(),
            "Cuckoo<B, F>: B must be a power of two"
        );
        assert!(B <= 1 << 30, "Cuckoo<B, F>: at most 2^30 buckets");
    };

    /// An empty filter whose keys are hashed with `seed`.
    #[must_use]
    pub fn new(seed: Seed) -> Self {
        let () = Self::CHECK;
        Self {
            buckets: [[F::default(); SLOTS]; B],
            victim: None,
            len: 0,
            rng: seed.fingerprint() | 1,
            seed,
        }
    }

    seed_and_memory!("");

    /// Fingerprints stored (inserts minus removals).
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True if nothing is stored.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots in the table, `4·B`.
    #[must_use]
    pub const fn capacity(&self) -> usize {
        SLOTS * B
    }

    /// Share of occupied slots.
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        f64::from(self.len) / (SLOTS * B) as f64
    }

    /// True if the victim slot is occupied: further inserts fail until a removal lets
    /// the victim move into the table.
    #[must_use]
    pub const fn is_full(&self) -> bool {
        self.victim.is_some()
    }

    /// The false-positive rate at the current load: `1 − (1 − 1/(2^f − 1))^{8α}`.
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        let per_slot = 1.0 / (libm::exp2(f64::from(F::BITS)) - 1.0);
        1.0 - libm::pow(1.0 - per_slot, 2.0 * SLOTS as f64 * self.load_factor())
    }

    #[inline(always)]
    fn alt(i: usize, fp: F) -> usize {
        (i ^ mix64(fp.to_u64()) as usize) & (B - 1)
    }

    #[inline(always)]
    fn locate(h: KeyHash) -> (usize, usize, F) {
        let d = h.get();
        let fp = F::from_digest(d);
        let i1 = d as usize & (B - 1);
        (i1, Self::alt(i1, fp), fp)
    }

    fn put(&mut self, i: usize, fp: F) -> bool {
        if let Some(bucket) = self.buckets.get_mut(i) {
            if let Some(slot) = bucket.iter_mut().find(|s| **s == F::default()) {
                *slot = fp;
                return true;
            }
        }
        false
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// Inserts a key.
    ///
    /// # Errors
    /// [`Full`] if the victim slot is already taken; nothing changes then.
    pub fn insert<Q: AsRef<[u8]> + ?Sized>(&mut self, key: &Q) -> Result<(), Full> {
        self.insert_hash(self.seed.hash(key))
    }

    /// [`insert`](Self::insert) for a key hashed by the caller.
    ///
    /// # Errors
    /// [`Full`].
    pub fn insert_hash(&mut self, h: KeyHash) -> Result<(), Full> {
        if self.victim.is_some() {
            return Err(Full);
        }
        let (i1, _, fp) = Self::locate(h);
        // Every fingerprint, the new one included, is stored or in the victim slot.
        self.victim = self.place(i1, fp);
        self.len += 1;
        Ok(())
    }

    /// Stores `fp`, whose buckets are `i1` and `alt(i1, fp)`: in a free slot of either,
    /// else by an eviction chain of at most [`MAX_KICKS`] (each step swaps `fp` with a
    /// random slot of its bucket and moves the evicted fingerprint to its other bucket).
    /// Returns the fingerprint left homeless, with a bucket it belongs to, if the chain
    /// ends without a free slot; both of its buckets are then full.
    fn place(&mut self, i1: usize, fp: F) -> Option<(u32, F)> {
        let i2 = Self::alt(i1, fp);
        if self.put(i1, fp) || self.put(i2, fp) {
            return None;
        }
        let mut i = if self.next_rand() & 1 == 0 { i1 } else { i2 };
        let mut fp = fp;
        for _ in 0..MAX_KICKS {
            let slot = (self.next_rand() % SLOTS as u64) as usize;
            if let Some(s) = self.buckets.get_mut(i).and_then(|b| b.get_mut(slot)) {
                core::mem::swap(s, &mut fp);
            }
            i = Self::alt(i, fp);
            if self.put(i, fp) {
                return None;
            }
        }
        Some((i as u32, fp))
    }

    /// True if the key may be present; false means certainly not.
    #[must_use]
    pub fn contains<Q: AsRef<[u8]> + ?Sized>(&self, key: &Q) -> bool {
        self.contains_hash(self.seed.hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed by the caller.
    #[must_use]
    pub fn contains_hash(&self, h: KeyHash) -> bool {
        let (i1, i2, fp) = Self::locate(h);
        let in_bucket = |i: usize| self.buckets.get(i).is_some_and(|b| b.contains(&fp));
        let in_victim = self
            .victim
            .is_some_and(|(vi, vf)| vf == fp && (vi as usize == i1 || vi as usize == i2));
        in_bucket(i1) || in_bucket(i2) || in_victim
    }

    /// Removes one copy of an inserted key; returns whether a matching fingerprint
    /// was found. Only remove keys you inserted: removing a false positive deletes
    /// another key's fingerprint. If the filter was [full](Self::is_full), the freed
    /// slot is offered to the victim through a full eviction chain.
    pub fn remove<Q: AsRef<[u8]> + ?Sized>(&mut self, key: &Q) -> bool {
        self.remove_hash(self.seed.hash(key))
    }

    /// [`remove`](Self::remove) for a key hashed by the caller.
    pub fn remove_hash(&mut self, h: KeyHash) -> bool {
        let (i1, i2, fp) = Self::locate(h);
        let mut removed = false;
        for i in [i1, i2] {
            if let Some(slot) = self
                .buckets
                .get_mut(i)
                .and_then(|b| b.iter_mut().find(|s| **s == fp))
            {
                *slot = F::default();
                removed = true;
                break;
            }
        }
        if !removed {
            if let Some((vi, vf)) = self.victim {
                if vf == fp && (vi as usize == i1 || vi as usize == i2) {
                    self.victim = None;
                    self.len -= 1;
                    return true;
                }
            }
            return false;
        }
        self.len -= 1;
        // Room was made somewhere: re-place the victim with a full eviction chain, as the
        // reference implementation does after a delete. Trying only its own two buckets
        // (both full when it was parked) would keep the filter Full while free slots pile
        // up elsewhere. If the chain fails again, the fingerprint it ends with is parked.
        if let Some((vi, vf)) = self.victim.take() {
            self.victim = self.place(vi as usize, vf);
        }
        true
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.buckets = [[F::default(); SLOTS]; B];
        self.victim = None;
        self.len = 0;
    }

    const PARAMS: [u32; 4] = [B as u32, F::BITS, SLOTS as u32, 0];
    const PAYLOAD: usize = B * SLOTS * F::BYTES + 8 + 1 + 4 + F::BYTES;

    /// Length of the encoded frame.
    #[must_use]
    pub const fn encoded_len(&self) -> usize {
        wire::frame_len(Self::PAYLOAD)
    }

    /// Serializes the filter: kind `cuckoo`, params `[B, f, 4]`; payload the
    /// `4·B` fingerprints (little-endian, bucket by bucket), the eviction RNG state
    /// (`u64`), then the victim: flag `u8` (0/1), bucket `u32`, fingerprint.
    ///
    /// # Errors
    /// [`EncodeError::BufferTooSmall`].
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let header = Header::new(
            SketchKind::Cuckoo,
            self.seed.fingerprint(),
            Self::PARAMS,
            Self::PAYLOAD as u32,
        );
        let mut enc = Encoder::new(buf, &header)?;
        let put_fp = |enc: &mut Encoder<'_>, fp: F| {
            enc.put(&fp.to_u64().to_le_bytes()[..F::BYTES]);
        };
        for b in &self.buckets {
            for &fp in b {
                put_fp(&mut enc, fp);
            }
        }
        enc.put_u64(self.rng);
        let (flag, vi, vf) = match self.victim {
            Some((i, f)) => (1, i, f),
            None => (0, 0, F::default()),
        };
        enc.put_u8(flag);
        enc.put_u32(vi);
        put_fp(&mut enc, vf);
        Ok(enc.finish())
    }

    /// Replaces the filter with a serialized one; on error `self` is unchanged.
    ///
    /// # Errors
    /// As [`Bloom::decode_into`](crate::Bloom::decode_into), plus
    /// [`DecodeError::InvalidValue`] for a zero RNG state or an inconsistent victim
    /// (flag not 0/1, bucket out of range, zero fingerprint, or a victim whose two
    /// buckets still have room).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let frame = Frame::parse(bytes)?;
        let payload = frame.checked_payload(
            SketchKind::Cuckoo,
            Self::PARAMS,
            &self.seed,
            Some(Self::PAYLOAD),
        )?;
        let read_fp = |b: &[u8]| {
            let mut w = [0u8; 8];
            if let Some(dst) = w.get_mut(..b.len()) {
                dst.copy_from_slice(b);
            }
            F::from_u64(u64::from_le_bytes(w))
        };
        let (table, tail) = payload.split_at(B * SLOTS * F::BYTES);
        let (rng, tail) = tail.split_at(8);
        let rng = crate::le_u64(rng);
        let flag = tail.first().copied().unwrap_or(0);
        let vi = tail
            .get(1..5)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let vf = read_fp(tail.get(5..).unwrap_or(&[]));
        if rng == 0 {
            return Err(DecodeError::InvalidValue);
        }
        // Validate from the payload first (no table-sized temporary on the stack),
        // then write.
        let bucket_bytes = SLOTS * F::BYTES;
        let full = |i: usize| {
            table
                .get(i * bucket_bytes..(i + 1) * bucket_bytes)
                .is_some_and(|b| b.chunks_exact(F::BYTES).all(|s| read_fp(s) != F::default()))
        };
        let victim = match flag {
            0 if vi == 0 && vf == F::default() => None,
            1 if (vi as usize) < B
                && vf != F::default()
                && full(vi as usize)
                && full(Self::alt(vi as usize, vf)) =>
            {
                Some((vi, vf))
            }
            _ => return Err(DecodeError::InvalidValue),
        };
        let mut len = u32::from(victim.is_some());
        for (b, src) in self
            .buckets
            .iter_mut()
            .zip(table.chunks_exact(bucket_bytes))
        {
            for (slot, s) in b.iter_mut().zip(src.chunks_exact(F::BYTES)) {
                *slot = read_fp(s);
                len += u32::from(*slot != F::default());
            }
        }
        self.victim = victim;
        self.len = len;
        self.rng = rng;
        Ok(())
    }
}

impl<const B: usize, F: Fingerprint> fmt::Debug for Cuckoo<B, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cuckoo")
            .field("buckets", &B)
            .field("fingerprint_bits", &F::BITS)
            .field("len", &self.len)
            .field("victim", &self.victim.is_some())
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}
