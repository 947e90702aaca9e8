//! Apache DataSketches HLL compatibility: [`DataSketchesHll<P>`] and the
//! DataSketches HLL serialization (compact and updatable images).
//!
//! # DataSketches' key hashing and coupon derivation (`HllUtil::coupon`)
//!
//! * `(h0, h1) = MurmurHash3_x64_128(key bytes, seed 9001)`;
//! * **slot** = the low `lgK` bits of `h0`;
//! * **value** = `min(nlz(h1), 62) + 1`, `1 ..= 63`.
//!
//! The bytes are what DataSketches hashes: `update(str)` hashes the UTF-8 bytes (an
//! empty string is ignored), `update(int)` in Python / `update(int64_t)` in C++
//! hashes the 8 little-endian bytes of the `i64` ([`DataSketchesHll::insert_i64`]).
//!
//! # The HLL-mode image (`preInts = 10`, 40-byte preamble, little-endian)
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 1 | preamble ints: 10 (LIST mode 2, SET mode 3) |
//! | 1 | 1 | serialization version: 1 |
//! | 2 | 1 | family id: 7 (HLL) |
//! | 3 | 1 | lgK |
//! | 4 | 1 | lgArr: log2 of the HLL_4 aux table ints (0 if none) |
//! | 5 | 1 | flags: 4 empty, 8 compact, 16 out-of-order (estimate from the registers, not HIP), 32 full size |
//! | 6 | 1 | curMin (HLL_4: every register ≥ curMin; HLL_6/HLL_8: 0) |
//! | 7 | 1 | mode: `curMode \| tgtType << 2`; curMode LIST 0, SET 1, HLL 2; tgtType HLL_4 0, HLL_6 1, HLL_8 2 |
//! | 8 | 8 | HIP accumulator (`f64`) |
//! | 16 | 8 | kxq0 = `Σ 2^−v` over registers `v < 32` (`f64`) |
//! | 24 | 8 | kxq1 = `Σ 2^−v` over registers `v ≥ 32` (`f64`) |
//! | 32 | 4 | numAtCurMin (`u32`) |
//! | 36 | 4 | auxCount (`u32`, HLL_4 only) |
//! | 40 | … | registers: HLL_8 `k` bytes; HLL_6 `3k/4 + 1` bytes, a little-endian 6-bit stream; HLL_4 `k/2` bytes of nibbles `v − curMin` (even slot low nibble), 15 = look up the aux table |
//! | … | `4·auxCount` | HLL_4 aux: `u32` pairs `value << 26 \| slot` (updatable images: a `4 << lgArr`-byte hash table, 0 = empty) |
//!
//! LIST/SET images (few keys) hold the coupons `value << 26 | slot` as `u32`s
//! instead: LIST count in byte 6, coupons from byte 8; SET count at bytes 8..12,
//! coupons from byte 12. [`DataSketchesHll`] decodes all of these and always
//! encodes HLL mode.

use core::fmt;

use loxo_core::{DecodeError, EncodeError, Seed};
use loxo_hll::{Hll, Precision, SupportedPrecision};

/// MurmurHash3 seed DataSketches hashes keys with (`DEFAULT_UPDATE_SEED`).
pub const DATASKETCHES_HASH_SEED: u32 = 9001;
/// Bytes of the HLL-mode preamble.
pub const PREAMBLE_LEN: usize = 40;
/// The tag stored as the seed of the wrapped [`Hll`] (DataSketches hashing takes
/// no key; the tag only keeps these registers from being merged with a
/// SipHash-keyed loxo sketch).
pub const DATASKETCHES_TAG_SEED: Seed = Seed::new(0x4441_5441_534b_4554, 0x4348_4553_0000_2329);

const SER_VER: u8 = 1;
const FAMILY_HLL: u8 = 7;
const FLAG_EMPTY: u8 = 4;
const FLAG_COMPACT: u8 = 8;
const FLAG_OUT_OF_ORDER: u8 = 16;
const MODE_LIST: u8 = 0;
const MODE_SET: u8 = 1;
const MODE_HLL: u8 = 2;
const AUX_TOKEN: u8 = 15;
const KEY_BITS: u32 = 26;
/// DataSketches' `LG_AUX_ARR_INTS[lgK]`: minimum HLL_4 aux table size.
const LG_AUX_ARR_INTS: [u8; 22] = [
    0, 2, 2, 2, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13,
];

/// DataSketches' key hash: MurmurHash3_x64_128 with seed 9001, `(h0, h1)`.
///
/// Unkeyed, like every interop hash: crafted keys can collide on purpose.
#[must_use]
pub fn datasketches_hash(key: &[u8]) -> (u64, u64) {
    mur3::murmurhash3_x64_128(key, DATASKETCHES_HASH_SEED)
}

/// DataSketches' coupon for a hash: `(slot, value)` with slot = low `lg_k` bits
/// of `h0` (`lg_k ≤ 26`) and value = `min(nlz(h1), 62) + 1`.
#[must_use]
pub const fn datasketches_slot_value(h0: u64, h1: u64, lg_k: u8) -> (usize, u8) {
    let slot = (h0 & ((1u64 << lg_k) - 1)) as usize;
    let lz = h1.leading_zeros();
    let value = if lz > 62 { 62 } else { lz } as u8 + 1;
    (slot, value)
}

/// Which register packing an encoded image uses (DataSketches `target_hll_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum TargetType {
    /// 4-bit nibbles relative to the minimum register, outliers in an aux table:
    /// `k/2` bytes + 4 per outlier. DataSketches' default.
    Hll4,
    /// 6-bit registers: `3k/4 + 1` bytes.
    Hll6,
    /// One byte per register: `k` bytes.
    #[default]
    Hll8,
}

impl TargetType {
    const fn code(self) -> u8 {
        match self {
            Self::Hll4 => 0,
            Self::Hll6 => 1,
            Self::Hll8 => 2,
        }
    }

    const fn array_len(self, lg_k: u8) -> usize {
        let k = 1usize << lg_k;
        match self {
            Self::Hll4 => k / 2,
            Self::Hll6 => k * 3 / 4 + 1,
            Self::Hll8 => k,
        }
    }
}

/// A HyperLogLog whose registers are the ones an Apache DataSketches `hll_sketch`
/// with `lgK = P` holds for the same keys: "how many distinct keys?", exchanged
/// with DataSketches (Java, C++, Python; Druid, Spark, Pinot…) as its serialized
/// image.
///
/// Wraps an [`Hll<P>`] fed with DataSketches' hashing ([`datasketches_hash`],
/// [`datasketches_slot_value`]). DataSketches values go up to 63, loxo's to
/// `65 − P`; a higher value (probability `2^−(64−P)` per key) is capped.
///
/// * [`encode_into`](Self::encode_into): a compact HLL-mode image as HLL_4, HLL_6
///   or HLL_8, which `hll_sketch.deserialize` reads. While the sketch has only
///   seen inserts, the image carries loxo's martingale (HIP) estimate as the HIP
///   accumulator (DataSketches' `get_estimate` returns it, as for its own
///   sketches); otherwise the out-of-order flag is set and DataSketches uses its
///   composite estimator over the registers.
/// * [`decode`](Self::decode) / [`decode_into`](Self::decode_into): any image of
///   `lgK = P` (LIST, SET or HLL mode; HLL_4/6/8; compact or updatable).
///
/// **Security**: the hash is unkeyed (seed 9001 is public), so this sketch gives
/// up the per-device seed that protects loxo's own sketches from crafted
/// collisions (HashDoS). That is the price of compatibility.
///
/// # Memory and cost
///
/// `size_of::<Hll<P>>()` = `0.75 · 2^P + 296` bytes. Insert: one MurmurHash3_x64_128,
/// a leading-zero count, a 3-byte register read. Encode/decode: O(2^P) (plus the
/// HLL_4 aux entries, at most one per register).
///
/// # Error
///
/// [`estimate`](Self::estimate) (Ertl): relative standard error `1.04 / √(2^P)`;
/// DataSketches' HIP estimate `0.83 / √(2^P)`.
///
/// # Example
///
/// ```
/// use loxo_interop::datasketches::{DataSketchesHll, TargetType};
///
/// let mut hll = DataSketchesHll::<12>::new();
/// for i in 0..5000i64 {
///     hll.insert_i64(i); // as Python's sketch.update(i)
/// }
/// let mut buf = [0u8; 40 + 4096];
/// let n = hll.encode_into(TargetType::Hll8, &mut buf)?; // hll_sketch.deserialize(buf[..n])
/// let back = DataSketchesHll::<12>::decode(&buf[..n])?;
/// assert!(back.as_hll().registers().eq(hll.as_hll().registers()));
/// assert!((hll.estimate() - 5000.0).abs() < 4.0 * 0.0163 * 5000.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DataSketchesHll<const P: u8>
where
    Precision<P>: SupportedPrecision,
{
    hll: Hll<P>,
}

impl<const P: u8> DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    /// Number of registers, `k = 2^P`.
    pub const K: usize = 1 << P;

    /// An empty sketch (`lgK = P`).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            hll: Hll::new(DATASKETCHES_TAG_SEED),
        }
    }

    /// Adds a key given as the bytes DataSketches hashes (a string's UTF-8 bytes).
    /// Like DataSketches, an empty key is ignored. Returns whether a register changed.
    #[inline]
    pub fn insert(&mut self, key: &[u8]) -> bool {
        if key.is_empty() {
            return false;
        }
        let (h0, h1) = datasketches_hash(key);
        let (slot, value) = datasketches_slot_value(h0, h1, P);
        self.hll.update_register(slot, value)
    }

    /// Adds an integer as DataSketches' `update(int64_t)` (Python `update(int)`)
    /// does: its 8 little-endian bytes.
    #[inline]
    pub fn insert_i64(&mut self, key: i64) -> bool {
        self.insert(&key.to_le_bytes())
    }

    /// The estimated number of distinct keys (loxo's Ertl estimator over the
    /// registers; see [`Hll::estimate`]).
    #[must_use]
    pub fn estimate(&self) -> f64 {
        self.hll.estimate()
    }

    /// The wrapped sketch (its registers follow DataSketches' derivation).
    #[must_use]
    pub const fn as_hll(&self) -> &Hll<P> {
        &self.hll
    }

    /// Union (register-wise maximum) with `other`. O(2^P).
    pub fn merge(&mut self, other: &Self) {
        // Both carry DATASKETCHES_TAG_SEED, so the seed check passes.
        let merged = self.hll.merge(&other.hll);
        debug_assert!(merged.is_ok());
    }

    /// Bytes [`encode_into`](Self::encode_into) writes for `target`: 40 + `k` (HLL_8),
    /// 40 + `3k/4 + 1` (HLL_6), 40 + `k/2` + 4 per register more than 14 above the
    /// minimum (HLL_4).
    #[must_use]
    pub fn encoded_len(&self, target: TargetType) -> usize {
        let aux = match target {
            TargetType::Hll4 => self.hll4_layout().2 * 4,
            _ => 0,
        };
        PREAMBLE_LEN + target.array_len(P) + aux
    }

    /// `(curMin, numAtCurMin, auxCount)` of the HLL_4 encoding.
    fn hll4_layout(&self) -> (u8, u32, usize) {
        let hist = self.hll.histogram();
        let cur_min = hist.iter().position(|&c| c != 0).unwrap_or(0);
        let at_min = hist.get(cur_min).copied().unwrap_or(0);
        let aux = hist.iter().skip(cur_min + 15).map(|&c| c as usize).sum();
        (cur_min as u8, at_min, aux)
    }

    /// Writes a compact HLL-mode image (see the module docs) to the front of `buf`
    /// and returns its length, [`encoded_len`](Self::encoded_len).
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter (nothing is written).
    pub fn encode_into(&self, target: TargetType, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = self.encoded_len(target);
        let Some(out) = buf.get_mut(..needed) else {
            return Err(EncodeError::BufferTooSmall { needed });
        };
        out.fill(0);
        let (cur_min, at_min, aux_count) = match target {
            TargetType::Hll4 => self.hll4_layout(),
            _ => (0, self.hll.histogram()[0], 0),
        };
        // kxq exactly as DataSketches rebuilds it (HllArray::check_rebuild_kxq_cur_min),
        // so a DataSketches union of this image and of its own equal registers agree
        // to the last bit.
        let mut kxq0 = Self::K as f64;
        let mut kxq1 = 0.0;
        for v in self.hll.registers().filter(|&v| v > 0) {
            let d = inv_pow2(v) - 1.0;
            if v < 32 {
                kxq0 += d;
            } else {
                kxq1 += d;
            }
        }
        // No empty flag even when empty: DataSketches reads an HLL-mode image
        // with every register 0 as an empty sketch.
        let (hip, flags) = match self.hll.estimate_martingale() {
            Some(hip) => (hip, FLAG_COMPACT),
            None => (0.0, FLAG_COMPACT | FLAG_OUT_OF_ORDER),
        };
        let lg_arr = if aux_count == 0 {
            0
        } else {
            lg_aux_arr_ints(aux_count, P)
        };
        let (pre, rest) = out.split_at_mut(PREAMBLE_LEN);
        pre[..8].copy_from_slice(&[
            10,
            SER_VER,
            FAMILY_HLL,
            P,
            lg_arr,
            flags,
            cur_min,
            MODE_HLL | target.code() << 2,
        ]);
        pre[8..16].copy_from_slice(&hip.to_le_bytes());
        pre[16..24].copy_from_slice(&kxq0.to_le_bytes());
        pre[24..32].copy_from_slice(&kxq1.to_le_bytes());
        pre[32..36].copy_from_slice(&at_min.to_le_bytes());
        pre[36..40].copy_from_slice(&(aux_count as u32).to_le_bytes());
        let (arr, aux) = rest.split_at_mut(target.array_len(P));
        let mut aux_at = 0;
        for (i, v) in self.hll.registers().enumerate() {
            match target {
                TargetType::Hll8 => {
                    if let Some(b) = arr.get_mut(i) {
                        *b = v;
                    }
                }
                TargetType::Hll6 => {
                    let bit = i * 6;
                    let w = u16::from(v) << (bit & 7);
                    if let Some(b) = arr.get_mut(bit >> 3) {
                        *b |= w as u8;
                    }
                    if let Some(b) = arr.get_mut((bit >> 3) + 1) {
                        *b |= (w >> 8) as u8;
                    }
                }
                TargetType::Hll4 => {
                    let mut nibble = v - cur_min;
                    if nibble >= AUX_TOKEN {
                        nibble = AUX_TOKEN;
                        let pair = u32::from(v) << KEY_BITS | i as u32;
                        if let Some(slot) = aux.get_mut(aux_at..aux_at + 4) {
                            slot.copy_from_slice(&pair.to_le_bytes());
                        }
                        aux_at += 4;
                    }
                    if let Some(b) = arr.get_mut(i >> 1) {
                        *b |= nibble << ((i & 1) * 4);
                    }
                }
            }
        }
        Ok(needed)
    }

    /// Decodes a DataSketches HLL image of `lgK = P` (any mode and type).
    ///
    /// The result holds the whole sketch (`0.75 · 2^P + 296` bytes); on a small
    /// stack prefer [`decode_into`](Self::decode_into).
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut s = Self::new();
        s.decode_into(bytes)?;
        Ok(s)
    }

    /// Replaces this sketch's registers with those of a DataSketches HLL image.
    /// All-or-nothing: on error `self` is unchanged.
    ///
    /// DataSketches' HIP accumulator is not imported: after decoding an HLL-mode
    /// image the martingale estimate is `None`; after a LIST/SET image (exact
    /// coupons) it counts the coupons as inserts.
    ///
    /// # Errors
    ///
    /// * [`DecodeError::Truncated`]: shorter than its preamble, array or coupons;
    /// * [`DecodeError::UnsupportedVersion`]: serialization version other than 1;
    /// * [`DecodeError::WrongKind`]: family other than HLL (7), unknown mode or type,
    ///   or a preamble size that does not match the mode;
    /// * [`DecodeError::ParameterMismatch`]: `lgK ≠ P`;
    /// * [`DecodeError::InvalidValue`]: a register or coupon value above 63 or a
    ///   coupon value of 0; HLL_4 aux entries that do not match the aux tokens one
    ///   for one (an entry for a slot without a token, a value below curMin + 15, or
    ///   a count other than the number of tokens). A duplicated entry that hides a
    ///   missing one is not detected: that slot then reads as curMin + 15.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let pre = bytes.first_chunk::<8>().ok_or(DecodeError::Truncated)?;
        let [pre_ints, ser_ver, family, lg_k, lg_arr, flags, byte6, mode_byte] = *pre;
        if family != FAMILY_HLL {
            return Err(DecodeError::WrongKind {
                expected: FAMILY_HLL,
                found: family,
            });
        }
        if ser_ver != SER_VER {
            return Err(DecodeError::UnsupportedVersion(u16::from(ser_ver)));
        }
        if lg_k != P {
            return Err(DecodeError::ParameterMismatch {
                expected: u32::from(P),
                found: u32::from(lg_k),
            });
        }
        let mode = mode_byte & 3;
        let compact = flags & FLAG_COMPACT != 0;
        let expected_pre = match mode {
            MODE_LIST => 2,
            MODE_SET => 3,
            MODE_HLL => 10,
            _ => {
                return Err(DecodeError::WrongKind {
                    expected: MODE_HLL,
                    found: mode,
                })
            }
        };
        if pre_ints != expected_pre {
            return Err(DecodeError::WrongKind {
                expected: expected_pre,
                found: pre_ints,
            });
        }
        if flags & FLAG_EMPTY != 0 && mode != MODE_HLL {
            self.hll.clear();
            return Ok(());
        }
        match mode {
            MODE_LIST | MODE_SET => {
                let (count, start) = if mode == MODE_LIST {
                    (usize::from(byte6), 8)
                } else {
                    let c = bytes.get(8..12).ok_or(DecodeError::Truncated)?;
                    (u32_at(c, 0) as usize, 12)
                };
                let ints = if compact {
                    count
                } else {
                    1usize.checked_shl(u32::from(lg_arr)).unwrap_or(usize::MAX)
                };
                let coupons = bytes
                    .get(start..)
                    .and_then(|b| b.get(..ints.checked_mul(4)?))
                    .ok_or(DecodeError::Truncated)?;
                let each = || coupons.chunks_exact(4).map(|c| u32_at(c, 0));
                // A coupon keeps the hash's low 26 bits, so a list converts to
                // any lgK ≤ 26: the slot is its low lgK bits.
                if each().any(|c| c != 0 && (c >> KEY_BITS == 0 || c >> KEY_BITS > 63)) {
                    return Err(DecodeError::InvalidValue);
                }
                self.hll.clear();
                for c in each().filter(|&c| c != 0) {
                    let slot = c as usize & (Self::K - 1);
                    self.hll.update_register(slot, (c >> KEY_BITS) as u8);
                }
                Ok(())
            }
            _ => self.decode_hll_mode(bytes, mode_byte >> 2, byte6, compact, lg_arr),
        }
    }

    fn decode_hll_mode(
        &mut self,
        bytes: &[u8],
        tgt: u8,
        cur_min: u8,
        compact: bool,
        lg_arr: u8,
    ) -> Result<(), DecodeError> {
        let target = match tgt {
            0 => TargetType::Hll4,
            1 => TargetType::Hll6,
            2 => TargetType::Hll8,
            _ => {
                return Err(DecodeError::WrongKind {
                    expected: 2,
                    found: tgt,
                })
            }
        };
        let pre = bytes.get(..PREAMBLE_LEN).ok_or(DecodeError::Truncated)?;
        let aux_count = u32_at(pre, 36) as usize;
        let arr_len = target.array_len(P);
        let arr = bytes
            .get(PREAMBLE_LEN..PREAMBLE_LEN + arr_len)
            .ok_or(DecodeError::Truncated)?;
        let max = Hll::<P>::MAX_RANK;
        match target {
            TargetType::Hll8 => {
                if arr.iter().any(|&v| v > 63) {
                    return Err(DecodeError::InvalidValue);
                }
                self.hll.set_registers(arr.iter().map(|&v| v.min(max)))
            }
            TargetType::Hll6 => self
                .hll
                .set_registers((0..Self::K).map(|i| six_bit(arr, i).min(max))),
            TargetType::Hll4 => {
                let aux_ints = if aux_count == 0 {
                    0
                } else if compact {
                    aux_count
                } else {
                    1usize.checked_shl(u32::from(lg_arr)).unwrap_or(usize::MAX)
                };
                let aux = bytes
                    .get(PREAMBLE_LEN + arr_len..)
                    .and_then(|b| b.get(..aux_ints.checked_mul(4)?))
                    .ok_or(DecodeError::Truncated)?;
                let nibble = |i: usize| {
                    let b = arr.get(i >> 1).copied().unwrap_or(0);
                    (b >> ((i & 1) * 4)) & 0x0f
                };
                let entries = || {
                    aux.chunks_exact(4)
                        .map(|c| u32_at(c, 0))
                        .filter(|&c| c != 0)
                        .map(|c| ((c & ((1 << KEY_BITS) - 1)) as usize, c >> KEY_BITS))
                };
                // Validate everything first (O(k + aux)): nibble values, and aux entries
                // that each point at a token slot with a value DataSketches could hold
                // there (≥ curMin + 15, ≤ 63), as many entries as tokens.
                let mut tokens = 0usize;
                for i in 0..Self::K {
                    let n = nibble(i);
                    if n == AUX_TOKEN {
                        tokens += 1;
                    } else if u32::from(cur_min) + u32::from(n) > 63 {
                        return Err(DecodeError::InvalidValue);
                    }
                }
                let floor = u32::from(cur_min) + u32::from(AUX_TOKEN);
                let mut found = 0usize;
                for (slot, v) in entries() {
                    if slot >= Self::K || nibble(slot) != AUX_TOKEN || v < floor || v > 63 {
                        return Err(DecodeError::InvalidValue);
                    }
                    found += 1;
                }
                if found != tokens {
                    return Err(DecodeError::InvalidValue);
                }
                // Token slots first get the floor curMin + 15, then their aux value
                // (a register max, so no per-slot search of the aux table).
                let floor = floor.min(63) as u8;
                self.hll.set_registers((0..Self::K).map(|i| {
                    let n = nibble(i);
                    let v = if n == AUX_TOKEN { floor } else { cur_min + n };
                    v.min(max)
                }))?;
                for (slot, v) in entries() {
                    self.hll.update_register(slot, v as u8);
                }
                Ok(())
            }
        }
    }
}

impl<const P: u8> Default for DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const P: u8> Clone for DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn clone(&self) -> Self {
        Self {
            hll: self.hll.clone(),
        }
    }
}

impl<const P: u8> PartialEq for DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn eq(&self, other: &Self) -> bool {
        self.hll == other.hll
    }
}

/// Prints lgK and the estimate, not the registers.
impl<const P: u8> fmt::Debug for DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataSketchesHll")
            .field("lg_k", &P)
            .field("estimate", &self.estimate())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "defmt")]
impl<const P: u8> defmt::Format for DataSketchesHll<P>
where
    Precision<P>: SupportedPrecision,
{
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "DataSketchesHll {{ lg_k: {=u8}, estimate: {=f64} }}",
            P,
            self.estimate()
        );
    }
}

/// `2^−v`, exactly.
fn inv_pow2(v: u8) -> f64 {
    f64::from_bits(u64::from(1023 - u16::from(v)) << 52)
}

/// DataSketches' `computeLgArrInts(HLL, count, lgK)`: log2 of the aux table size.
fn lg_aux_arr_ints(count: usize, lg_k: u8) -> u8 {
    let mut pow2 = count.next_power_of_two();
    if 4 * count > 3 * pow2 {
        pow2 <<= 1;
    }
    let min = LG_AUX_ARR_INTS.get(usize::from(lg_k)).copied().unwrap_or(0);
    min.max(pow2.trailing_zeros() as u8)
}

/// Little-endian `u32` at `offset` (0 if out of range; callers check lengths).
fn u32_at(b: &[u8], offset: usize) -> u32 {
    b.get(offset..)
        .and_then(<[u8]>::first_chunk::<4>)
        .map_or(0, |c| u32::from_le_bytes(*c))
}

/// 6-bit value `i` of a little-endian bit stream.
fn six_bit(arr: &[u8], i: usize) -> u8 {
    let bit = i * 6;
    let b0 = u16::from(arr.get(bit >> 3).copied().unwrap_or(0));
    let b1 = u16::from(arr.get((bit >> 3) + 1).copied().unwrap_or(0));
    (((b0 | b1 << 8) >> (bit & 7)) & 0x3f) as u8
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    extern crate std;
    use std::vec;

    use super::*;

    #[test]
    fn murmur3_known_answers() {
        // MurmurHash3_x64_128 reference vectors (SMHasher), seed 0.
        assert_eq!(mur3::murmurhash3_x64_128(b"", 0), (0, 0));
        assert_eq!(
            mur3::murmurhash3_x64_128(b"hello", 0),
            (0xcbd8a7b341bd9b02, 0x5b1e906a48ae1d19)
        );
    }

    #[test]
    fn coupon_derivation() {
        assert_eq!(datasketches_slot_value(0xffff, 1 << 63, 4), (15, 1));
        assert_eq!(datasketches_slot_value(0x10, 1, 4), (0, 63)); // nlz 63 capped at 62
        assert_eq!(datasketches_slot_value(0x10, 0, 4), (0, 63));
        assert_eq!(datasketches_slot_value(0x1234, 1 << 40, 12), (0x234, 24));
    }

    fn filled<const P: u8>(n: i64) -> DataSketchesHll<P>
    where
        Precision<P>: SupportedPrecision,
    {
        let mut s = DataSketchesHll::<P>::new();
        for i in 0..n {
            s.insert_i64(i);
        }
        s
    }

    #[test]
    fn every_target_round_trips() {
        for n in [0, 10, 3000, 100_000] {
            let s = filled::<10>(n);
            for t in [TargetType::Hll4, TargetType::Hll6, TargetType::Hll8] {
                let len = s.encoded_len(t);
                let mut buf = vec![0u8; len + 1];
                assert_eq!(
                    s.encode_into(t, &mut buf[..len - 1]),
                    Err(EncodeError::BufferTooSmall { needed: len })
                );
                assert_eq!(s.encode_into(t, &mut buf).unwrap(), len);
                assert_eq!(buf[7], 2 | t.code() << 2);
                let back = DataSketchesHll::<10>::decode(&buf[..len]).unwrap();
                assert!(
                    back.as_hll().registers().eq(s.as_hll().registers()),
                    "{n} {t:?}"
                );
            }
        }
    }

    #[test]
    fn hll4_aux_holds_outliers() {
        let mut s = DataSketchesHll::<4>::new();
        s.hll.update_register(0, 20); // min 0: 20 ≥ 15 goes to the aux table
        s.hll.update_register(3, 14);
        assert_eq!(s.encoded_len(TargetType::Hll4), 40 + 8 + 4);
        let mut buf = [0u8; 52];
        s.encode_into(TargetType::Hll4, &mut buf).unwrap();
        assert_eq!(buf[40], 0x0f);
        assert_eq!(buf[41], 0xe0);
        assert_eq!(u32_at(&buf, 48), 20 << 26);
        let back = DataSketchesHll::<4>::decode(&buf).unwrap();
        assert_eq!(back.as_hll().register(0), 20);
        // an aux token without an entry is rejected, the target untouched
        let mut bad = buf;
        bad[36] = 0;
        let mut t = filled::<4>(3);
        let before = t.clone();
        assert_eq!(t.decode_into(&bad[..48]), Err(DecodeError::InvalidValue));
        // an aux entry for a slot whose nibble is no token
        let mut bad = buf;
        bad[48] = 3;
        assert_eq!(t.decode_into(&bad), Err(DecodeError::InvalidValue));
        // an aux value below curMin + 15
        let mut bad = buf;
        bad[51] = 14 << 2;
        assert_eq!(t.decode_into(&bad), Err(DecodeError::InvalidValue));
        assert_eq!(t, before);
    }

    #[test]
    fn decode_rejects_bad_preambles() {
        let s = filled::<8>(1000);
        let mut buf = vec![0u8; s.encoded_len(TargetType::Hll8)];
        s.encode_into(TargetType::Hll8, &mut buf).unwrap();
        let mut t = DataSketchesHll::<8>::new();
        let check = |mutate: fn(&mut [u8]), err| {
            let mut b = buf.clone();
            mutate(&mut b);
            assert_eq!(DataSketchesHll::<8>::decode(&b), Err(err));
        };
        check(
            |b| b[2] = 3,
            DecodeError::WrongKind {
                expected: 7,
                found: 3,
            },
        );
        check(|b| b[1] = 2, DecodeError::UnsupportedVersion(2));
        check(
            |b| b[3] = 9,
            DecodeError::ParameterMismatch {
                expected: 8,
                found: 9,
            },
        );
        check(
            |b| b[0] = 3,
            DecodeError::WrongKind {
                expected: 10,
                found: 3,
            },
        );
        check(
            |b| b[7] = 3,
            DecodeError::WrongKind {
                expected: 2,
                found: 3,
            },
        );
        check(|b| b[40] = 64, DecodeError::InvalidValue);
        assert_eq!(
            DataSketchesHll::<9>::decode(&buf),
            Err(DecodeError::ParameterMismatch {
                expected: 9,
                found: 8
            })
        );
        assert_eq!(
            t.decode_into(&buf[..buf.len() - 1]),
            Err(DecodeError::Truncated)
        );
        assert_eq!(t.decode_into(&buf[..5]), Err(DecodeError::Truncated));
        assert!(t.as_hll().is_empty());
    }

    #[test]
    fn kxq_and_flags() {
        let s = filled::<6>(30);
        let mut buf = [0u8; 40 + 64];
        s.encode_into(TargetType::Hll8, &mut buf).unwrap();
        let kxq0 = f64::from_le_bytes(buf[16..24].try_into().unwrap());
        let direct: f64 = s.as_hll().registers().map(inv_pow2).sum();
        assert!((kxq0 - direct).abs() < 1e-12);
        assert_eq!(buf[5], FLAG_COMPACT);
        let hip = f64::from_le_bytes(buf[8..16].try_into().unwrap());
        assert_eq!(Some(hip), s.as_hll().estimate_martingale());
        let mut m = s.clone();
        m.merge(&filled::<6>(5));
        m.encode_into(TargetType::Hll8, &mut buf).unwrap();
        assert_eq!(buf[5], FLAG_COMPACT | FLAG_OUT_OF_ORDER);
    }
}
