//! Redis HyperLogLog compatibility: [`RedisHll`] and the `HYLL` string format.
//!
//! # Redis's key hashing and register derivation (Redis `hyperloglog.c`, `hllPatLen`)
//!
//! * `h = MurmurHash64A(element, seed = 0xadc83b19)`, 8-byte blocks read
//!   little-endian (Redis reads them little-endian on every host);
//! * **index** = the low 14 bits, `h & 16383`;
//! * **rank** = trailing zeros of `(h >> 14) | 1 << 50`, plus one: `1 ..= 51`.
//!
//! # The `HYLL` string (what `GET key` returns and `SET key` accepts)
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 4 | magic `"HYLL"` |
//! | 4 | 1 | encoding: 0 dense, 1 sparse |
//! | 5 | 3 | unused, zero |
//! | 8 | 8 | cached cardinality, little-endian; bit 7 of byte 15 set = cache invalid |
//! | 16 | … | registers |
//!
//! **Dense** registers: 16 384 six-bit values, a little-endian bit stream (register
//! `i` at bit `6·i`), 12 288 bytes; the whole string is 12 304 bytes.
//!
//! **Sparse** registers: a run-length code that must cover exactly 16 384 registers:
//! `00xxxxxx` ZERO (`x + 1` zero registers, 1..=64), `01xxxxxx yyyyyyyy` XZERO
//! (`(x << 8 | y) + 1` zero registers, 1..=16 384), `1vvvvvxx` VAL (`x + 1`
//! registers, 1..=4, of value `v + 1`, 1..=32).

use core::fmt;

use loxo_core::{DecodeError, EncodeError, Seed};
use loxo_hll::Hll;

/// Precision of every Redis HyperLogLog: `2^14 = 16 384` registers.
pub const REDIS_P: u8 = 14;
/// Number of Redis registers.
const M: usize = 1 << REDIS_P;
/// MurmurHash64A seed Redis hashes elements with (`hyperloglog.c`).
pub const REDIS_HASH_SEED: u64 = 0xadc8_3b19;
/// Bytes of the `HYLL` header (magic, encoding, unused, cached cardinality).
pub const HEADER_LEN: usize = 16;
/// Bytes of a dense `HYLL` string: 16-byte header + 16 384 × 6 bits.
pub const DENSE_LEN: usize = HEADER_LEN + M * 6 / 8;
/// Largest register value Redis produces: `64 − 14 + 1`.
pub const MAX_RANK: u8 = 51;

const MAGIC: &[u8; 4] = b"HYLL";
const ENCODING_DENSE: u8 = 0;
const ENCODING_SPARSE: u8 = 1;

/// The tag stored as the seed of the wrapped [`Hll`]: Redis hashing takes no key,
/// so this only keeps Redis-derived registers from being merged into a
/// SipHash-keyed loxo sketch (their registers would mean different keys).
pub const REDIS_TAG_SEED: Seed = Seed::new(0x4859_4c4c_5245_4449, 0x5348_4c4c_0000_000e);

/// Redis's element hash: MurmurHash64A with seed `0xadc83b19`.
///
/// Unkeyed: anyone can craft elements that collide in a register, the price of
/// matching Redis bit for bit (loxo's own [`Hll`] uses a per-device SipHash key).
#[must_use]
pub fn redis_hash(element: &[u8]) -> u64 {
    murmur2::murmur64a(element, REDIS_HASH_SEED)
}

/// Redis's register derivation from [`redis_hash`]: `(index, rank)` with index in
/// `0..16384` and rank in `1..=51`.
#[must_use]
pub const fn redis_index_rank(hash: u64) -> (usize, u8) {
    let index = (hash & (M as u64 - 1)) as usize;
    // The sentinel bit 50 caps the count at 50 trailing zeros.
    let rank = ((hash >> REDIS_P) | 1 << (64 - REDIS_P)).trailing_zeros() as u8 + 1;
    (index, rank)
}

/// A HyperLogLog that is register-for-register the one Redis builds with
/// `PFADD`: "how many distinct elements?", exchanged with Redis as the `HYLL`
/// string (`GET` / `SET`).
///
/// Wraps an [`Hll<14>`] fed with Redis's hashing ([`redis_hash`],
/// [`redis_index_rank`]) instead of loxo's keyed SipHash, so:
/// * [`encode_dense_into`](Self::encode_dense_into) writes a dense `HYLL` string:
///   `SET key <bytes>` then `PFCOUNT key` returns [`count`](Self::count), which is
///   [`estimate`](Self::estimate) rounded half away from zero (Redis computes the
///   same Ertl estimator and applies `llroundl`);
/// * [`decode`](Self::decode) reads what `GET key` returns, dense or sparse;
/// * [`merge`](Self::merge) is `PFMERGE`.
///
/// **Security**: Redis hashing is unkeyed, so this sketch gives up the per-device
/// seed that protects loxo's own sketches from crafted-collision (HashDoS)
/// inflation or deflation. That is the price of compatibility: use it for data you
/// ship to Redis, keep [`Hll`] with a secret [`Seed`] elsewhere.
///
/// # Memory and cost
///
/// `size_of::<RedisHll>()` = `size_of::<Hll<14>>()` = 12 584 bytes (12 288 bytes of
/// registers + 296). Insert: one MurmurHash64A over the element, a trailing-zero
/// count, a 3-byte register read. Estimate: O(1) (histogram). Encode/decode: O(16 384).
///
/// # Error
///
/// Relative standard error `1.04 / √16384 = 0.81 %` (Redis documents 0.81 %).
///
/// # Example
///
/// ```
/// use loxo_interop::redis::{RedisHll, DENSE_LEN};
///
/// let mut hll = RedisHll::new();
/// for i in 0..1000u32 {
///     hll.insert(format!("user:{i}").as_bytes());
/// }
/// let mut buf = [0u8; DENSE_LEN];
/// let n = hll.encode_dense_into(&mut buf)?; // SET key <buf[..n]> in Redis
/// let back = RedisHll::decode(&buf[..n])?;
/// assert_eq!(back.count(), hll.count()); // == PFCOUNT key
/// assert!((hll.estimate() - 1000.0).abs() < 4.0 * 0.0081 * 1000.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RedisHll {
    hll: Hll<REDIS_P>,
}

impl RedisHll {
    /// An empty sketch (no key: Redis hashing is unkeyed).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            hll: Hll::new(REDIS_TAG_SEED),
        }
    }

    /// Adds an element as Redis's `PFADD` would. Returns whether a register changed
    /// (Redis's `PFADD` reply 1).
    #[inline]
    pub fn insert(&mut self, element: &[u8]) -> bool {
        let (index, rank) = redis_index_rank(redis_hash(element));
        self.hll.update_register(index, rank)
    }

    /// The estimated number of distinct elements: Ertl's improved estimator, the
    /// one Redis's `PFCOUNT` computes (since Redis 5).
    #[must_use]
    pub fn estimate(&self) -> f64 {
        self.hll.estimate()
    }

    /// What `PFCOUNT` returns for this sketch: [`estimate`](Self::estimate) rounded
    /// half away from zero (Redis's `llroundl`).
    #[must_use]
    pub fn count(&self) -> u64 {
        libm::round(self.estimate()) as u64
    }

    /// Register `index` (`0..16384`, 0 beyond).
    #[must_use]
    pub fn register(&self, index: usize) -> u8 {
        self.hll.register(index)
    }

    /// The wrapped sketch (its registers follow Redis's derivation, see the type docs).
    #[must_use]
    pub const fn as_hll(&self) -> &Hll<REDIS_P> {
        &self.hll
    }

    /// True if no element was inserted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.hll.is_empty()
    }

    /// Imports the registers of a loxo [`Hll<14>`] (for example a device's per-epoch
    /// distinct-flow sketch, decoded with `Hll::decode_into_any_seed`), so that it can
    /// be written to Redis with [`encode_dense_into`](Self::encode_dense_into) and
    /// counted there with `PFCOUNT`, or `PFMERGE`d with other exports.
    ///
    /// Both use 16 384 six-bit registers with ranks `1 ..= 51`, so the conversion is
    /// exact and `PFCOUNT` of the export equals [`count`](Self::count) here. The
    /// registers keep the meaning of loxo's keyed hash: merge such an export only with
    /// exports of sketches made under the same seed, never with elements `PFADD`ed in
    /// Redis (those are hashed with MurmurHash64A and would be counted twice).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_hll::Hll;
    /// use loxo_interop::redis::RedisHll;
    ///
    /// let mut flows = Hll::<14>::new(Seed::new(1, 2));
    /// (0..500u32).for_each(|i| { flows.insert(&i.to_le_bytes()); });
    /// let redis = RedisHll::from_hll(&flows);
    /// assert_eq!(redis.estimate().to_bits(), flows.estimate().to_bits());
    /// ```
    #[must_use]
    pub fn from_hll(hll: &Hll<REDIS_P>) -> Self {
        let mut out = Self::new();
        // Every Hll<14> register is ≤ 64 − 14 + 1 = 51 = MAX_RANK: cannot fail.
        let imported = out.hll.set_registers(hll.registers());
        debug_assert!(imported.is_ok());
        out
    }

    /// `PFMERGE`: register-wise maximum with `other`. O(16 384).
    pub fn merge(&mut self, other: &Self) {
        // Both wrap an Hll tagged with REDIS_TAG_SEED, so the seed check passes.
        let merged = self.hll.merge(&other.hll);
        debug_assert!(merged.is_ok());
    }

    /// Writes the dense `HYLL` string ([`DENSE_LEN`] = 12 304 bytes) to the front of
    /// `buf` and returns its length. The cached cardinality is marked invalid, so
    /// Redis recomputes it on the first `PFCOUNT`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] if `buf` is shorter than [`DENSE_LEN`]
    /// (nothing is written).
    pub fn encode_dense_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let Some(out) = buf.get_mut(..DENSE_LEN) else {
            return Err(EncodeError::BufferTooSmall { needed: DENSE_LEN });
        };
        out.fill(0);
        let (header, regs) = out.split_at_mut(HEADER_LEN);
        header[..4].copy_from_slice(MAGIC);
        header[4] = ENCODING_DENSE;
        header[15] = 0x80; // HLL_VALID_CACHE bit clear = cache invalid
        for (i, r) in self.hll.registers().enumerate() {
            let bit = i * 6;
            let byte = bit >> 3;
            let shift = bit & 7;
            let v = u16::from(r) << shift;
            if let Some(b) = regs.get_mut(byte) {
                *b |= v as u8;
            }
            if let Some(b) = regs.get_mut(byte + 1) {
                *b |= (v >> 8) as u8;
            }
        }
        Ok(DENSE_LEN)
    }

    /// Decodes a `HYLL` string (dense or sparse) as `GET key` returns it.
    ///
    /// The result is 12 584 bytes; on a small stack prefer
    /// [`decode_into`](Self::decode_into) on a `static`.
    ///
    /// # Errors
    ///
    /// As [`decode_into`](Self::decode_into).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut hll = Self::new();
        hll.decode_into(bytes)?;
        Ok(hll)
    }

    /// Replaces this sketch's registers with those of a `HYLL` string (dense or
    /// sparse). All-or-nothing: on error `self` is unchanged. O(16 384).
    ///
    /// # Errors
    ///
    /// * [`DecodeError::Truncated`]: shorter than the header, a dense payload
    ///   shorter than 12 288 bytes, or a sparse XZERO opcode cut in half;
    /// * [`DecodeError::TrailingBytes`]: a dense payload longer than 12 288 bytes;
    /// * [`DecodeError::BadMagic`]: not starting with `"HYLL"`;
    /// * [`DecodeError::WrongKind`]: an encoding byte other than dense (0) or sparse (1)
    ///   (Redis's internal "raw" encoding 255 never leaves the server);
    /// * [`DecodeError::InvalidValue`]: a dense register above 51, or sparse
    ///   opcodes that do not cover exactly 16 384 registers.
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let header = bytes.get(..HEADER_LEN).ok_or(DecodeError::Truncated)?;
        if header.get(..4) != Some(MAGIC.as_slice()) {
            return Err(DecodeError::bad_magic(header));
        }
        let payload = bytes.get(HEADER_LEN..).unwrap_or(&[]);
        match header.get(4).copied() {
            Some(ENCODING_DENSE) => {
                match payload.len().cmp(&(DENSE_LEN - HEADER_LEN)) {
                    core::cmp::Ordering::Less => return Err(DecodeError::Truncated),
                    core::cmp::Ordering::Greater => return Err(DecodeError::TrailingBytes),
                    core::cmp::Ordering::Equal => {}
                }
                self.hll
                    .set_registers((0..M).map(|i| dense_register(payload, i)))
            }
            Some(ENCODING_SPARSE) => {
                validate_sparse(payload)?;
                self.hll.set_registers(SparseRegisters::new(payload))
            }
            other => Err(DecodeError::WrongKind {
                expected: ENCODING_DENSE,
                found: other.unwrap_or(0),
            }),
        }
    }
}

impl Default for RedisHll {
    fn default() -> Self {
        Self::new()
    }
}

/// Prints the estimate, not the 12 KiB of registers.
impl fmt::Debug for RedisHll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisHll")
            .field("estimate", &self.estimate())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for RedisHll {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "RedisHll {{ estimate: {=f64} }}", self.estimate());
    }
}

/// Dense register `i`: 6 bits at bit `6·i` of a little-endian bit stream.
fn dense_register(regs: &[u8], i: usize) -> u8 {
    let bit = i * 6;
    let byte = bit >> 3;
    let b0 = u16::from(regs.get(byte).copied().unwrap_or(0));
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 | b1 << 8) >> (bit & 7)) & 0x3f) as u8
}

/// One sparse opcode: `(run length, register value, opcode bytes)`, or `None` if an
/// XZERO is cut short.
fn sparse_op(bytes: &[u8]) -> Option<(usize, u8, usize)> {
    let &b = bytes.first()?;
    Some(match b >> 6 {
        0 => (usize::from(b & 0x3f) + 1, 0, 1),
        1 => {
            let &lo = bytes.get(1)?;
            ((usize::from(b & 0x3f) << 8 | usize::from(lo)) + 1, 0, 2)
        }
        _ => (usize::from(b & 0x03) + 1, ((b >> 2) & 0x1f) + 1, 1),
    })
}

/// Checks that the sparse opcodes cover exactly `m` registers (Redis's own check).
fn validate_sparse(mut bytes: &[u8]) -> Result<(), DecodeError> {
    let mut covered = 0usize;
    while !bytes.is_empty() {
        let (run, _, len) = sparse_op(bytes).ok_or(DecodeError::Truncated)?;
        covered += run;
        if covered > M {
            return Err(DecodeError::InvalidValue);
        }
        bytes = bytes.get(len..).unwrap_or(&[]);
    }
    if covered == M {
        Ok(())
    } else {
        Err(DecodeError::InvalidValue)
    }
}

/// The registers of a sparse payload, expanded lazily (no 16 KiB buffer).
#[derive(Clone)]
struct SparseRegisters<'a> {
    bytes: &'a [u8],
    run: usize,
    value: u8,
}

impl<'a> SparseRegisters<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            run: 0,
            value: 0,
        }
    }
}

impl Iterator for SparseRegisters<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        while self.run == 0 {
            let (run, value, len) = sparse_op(self.bytes)?;
            self.bytes = self.bytes.get(len..).unwrap_or(&[]);
            self.run = run;
            self.value = value;
        }
        self.run -= 1;
        Some(self.value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    extern crate std;
    use std::vec;

    use super::*;

    /// `GET h` after `DEL h; PFADD h <element>` on redis-server 7.0.15 (hex).
    const REDIS_SINGLE: [(&str, &str); 6] = [
        ("foo", "48594c4c0100000000000000000000805cb390634a"),
        ("bar", "48594c4c01000000000000000000008067168058e7"),
        ("hello", "48594c4c01000000000000000000008063ff805bfe"),
        ("", "48594c4c01000000000000000000008057318468cc"),
        ("a", "48594c4c01000000000000000000008071a6844e57"),
        ("loxo", "48594c4c010000000000000000000080585e8c679f"),
    ];

    fn unhex(s: &str) -> std::vec::Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn known_answers_from_a_real_redis() {
        // "foo": XZERO 7348, VAL(5)×1, XZERO 9035 → register 7348 = 5.
        let foo = RedisHll::decode(&unhex(REDIS_SINGLE[0].1)).unwrap();
        assert_eq!(foo.register(7348), 5);
        assert_eq!(foo.as_hll().histogram()[0], 16383);
        assert_eq!(redis_index_rank(redis_hash(b"foo")), (7348, 5));
        for (element, hex) in REDIS_SINGLE {
            let from_redis = RedisHll::decode(&unhex(hex)).unwrap();
            let mut ours = RedisHll::new();
            assert!(ours.insert(element.as_bytes()));
            assert!(ours
                .as_hll()
                .registers()
                .eq(from_redis.as_hll().registers()));
            assert_eq!(ours.count(), 1, "{element}");
        }
    }

    #[test]
    fn rank_is_trailing_zeros_after_the_index_plus_one() {
        assert_eq!(redis_index_rank(0), (0, 51));
        assert_eq!(redis_index_rank(16383), (16383, 51));
        assert_eq!(redis_index_rank(1 << 14 | 5), (5, 1));
        assert_eq!(redis_index_rank(1 << 20), (0, 7));
        assert_eq!(redis_index_rank(1 << 63), (0, 50));
    }

    #[test]
    fn dense_round_trip_and_header() {
        let mut a = RedisHll::new();
        for i in 0..20_000u32 {
            a.insert(&i.to_le_bytes());
        }
        let mut buf = vec![0u8; DENSE_LEN + 3];
        assert_eq!(
            a.encode_dense_into(&mut buf[..DENSE_LEN - 1]),
            Err(EncodeError::BufferTooSmall { needed: DENSE_LEN })
        );
        assert_eq!(a.encode_dense_into(&mut buf).unwrap(), DENSE_LEN);
        assert_eq!(&buf[..8], b"HYLL\0\0\0\0");
        assert_eq!(&buf[8..16], &[0, 0, 0, 0, 0, 0, 0, 0x80]);
        let b = RedisHll::decode(&buf[..DENSE_LEN]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.count(), b.count());
        assert_eq!(
            RedisHll::decode(&buf[..=DENSE_LEN]),
            Err(DecodeError::TrailingBytes)
        );
        assert_eq!(
            RedisHll::decode(&buf[..DENSE_LEN - 1]),
            Err(DecodeError::Truncated)
        );
    }

    #[test]
    fn decode_rejects_bad_input_and_leaves_the_target_alone() {
        let mut target = RedisHll::new();
        target.insert(b"keep");
        let before = target.clone();
        let mut dense = vec![0u8; DENSE_LEN];
        RedisHll::new().encode_dense_into(&mut dense).unwrap();
        dense[HEADER_LEN] = 52; // register 0 = 52 > 51
        assert_eq!(target.decode_into(&dense), Err(DecodeError::InvalidValue));
        assert_eq!(target.decode_into(b"HYL"), Err(DecodeError::Truncated));
        assert_eq!(
            target.decode_into(b"HYLX\0\0\0\0\0\0\0\0\0\0\0\0"),
            Err(DecodeError::BadMagic { found: *b"HYLX" })
        );
        assert_eq!(
            target.decode_into(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0"),
            Err(DecodeError::WrongKind {
                expected: 0,
                found: 2
            })
        );
        let mut sparse = unhex(REDIS_SINGLE[0].1);
        sparse.pop(); // XZERO cut in half
        assert_eq!(target.decode_into(&sparse), Err(DecodeError::Truncated));
        sparse.pop(); // a whole XZERO missing: 7349 registers covered
        assert_eq!(target.decode_into(&sparse), Err(DecodeError::InvalidValue));
        let mut over = unhex(REDIS_SINGLE[0].1);
        over.push(0x00); // one more ZERO: 16 385 registers
        assert_eq!(target.decode_into(&over), Err(DecodeError::InvalidValue));
        assert_eq!(target, before);
    }

    #[test]
    fn sparse_opcodes_expand() {
        // ZERO×2, VAL(32)×4, XZERO 16378 → registers 2..6 = 32.
        let mut s = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
        let xz = 16378 - 1;
        s.extend_from_slice(&[0x01, 0x80 | 31 << 2 | 3, 0x40 | (xz >> 8) as u8, xz as u8]);
        let h = RedisHll::decode(&s).unwrap();
        assert_eq!(h.register(1), 0);
        assert!((2..=5).all(|i| h.register(i) == 32));
        assert_eq!(h.register(6), 0);
        assert_eq!(h.as_hll().histogram()[32], 4);
    }
}
