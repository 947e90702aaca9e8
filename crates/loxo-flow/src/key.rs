//! `FlowKey`: the canonical, fixed-size byte encoding of a 5-tuple.

use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// Longest canonical encoding: IPv6 source (16) + destination (16) + ports (2 + 2) + protocol (1).
pub const MAX_KEY_LEN: usize = 37;
/// IPv4 canonical encoding length: 4 + 4 + 2 + 2 + 1.
pub const V4_KEY_LEN: usize = 13;

/// A flow's 5-tuple in canonical bytes: `src ‖ dst ‖ src_port (BE) ‖ dst_port (BE) ‖ protocol`,
/// 13 bytes for IPv4 and 37 bytes for IPv6.
///
/// One padded array (`[u8; 37]` plus a length byte, 38 bytes stored in **40**, `Copy`,
/// 4-byte aligned) rather than an enum of `V4([u8; 13])` / `V6([u8; 37])`: the enum also
/// costs 38 bytes (largest variant plus a discriminant), so the array loses nothing per
/// top-k entry (a heap slot rounds to 64 bytes either way) and gives a single
/// `AsRef<[u8]>` slice to hash (`seed.hash(&key)`) without a match. The unused tail is
/// always zero, so equality, ordering (length, then bytes) and `Hash` agree with the
/// canonical bytes. The alignment lets a 32-bit core copy and compare keys a word at a
/// time (Cortex-M's `memcpy`/`bcmp` fall back to byte loops on unaligned data).
///
/// For ICMP/ICMPv6 the ports carry type (source) and code (destination); for non-first
/// fragments and protocols without ports they are 0.
///
/// ```
/// use loxo_flow::FlowKey;
/// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
/// assert_eq!(k.as_ref().len(), 13);
/// assert_eq!(k.src_port(), 1234);
/// assert_eq!(k.to_string(), "10.0.0.1:1234 -> 10.0.0.2:80 proto 6");
/// ```
#[derive(Clone, Copy, Eq)]
#[repr(C, align(4))]
pub struct FlowKey {
    /// At offset 0, so the words compared and hashed are aligned.
    bytes: [u8; MAX_KEY_LEN],
    len: u8,
}

impl Ord for FlowKey {
    /// By length (IPv4 before IPv6), then by canonical bytes.
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.len
            .cmp(&other.len)
            .then_with(|| self.bytes.cmp(&other.bytes))
    }
}

impl PartialOrd for FlowKey {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Default for FlowKey {
    /// The all-zero IPv4 key (`0.0.0.0:0 -> 0.0.0.0:0 proto 0`).
    fn default() -> Self {
        Self {
            len: V4_KEY_LEN as u8,
            bytes: [0; MAX_KEY_LEN],
        }
    }
}

impl FlowKey {
    /// An IPv4 key.
    pub const fn v4(
        src: [u8; 4],
        dst: [u8; 4],
        src_port: u16,
        dst_port: u16,
        protocol: u8,
    ) -> Self {
        Self::of_addresses(src, dst, src_port, dst_port, protocol)
    }

    /// An IPv6 key.
    pub const fn v6(
        src: [u8; 16],
        dst: [u8; 16],
        src_port: u16,
        dst_port: u16,
        protocol: u8,
    ) -> Self {
        Self::of_addresses(src, dst, src_port, dst_port, protocol)
    }

    /// The key of `A`-byte addresses (4 or 16): source, destination, ports
    /// (big-endian), protocol; `2·A + 5` bytes ([`V4_KEY_LEN`], [`MAX_KEY_LEN`]).
    #[inline(always)]
    const fn of_addresses<const A: usize>(
        src: [u8; A],
        dst: [u8; A],
        src_port: u16,
        dst_port: u16,
        protocol: u8,
    ) -> Self {
        let mut bytes = [0u8; MAX_KEY_LEN];
        let mut i = 0;
        while i < A {
            bytes[i] = src[i];
            bytes[A + i] = dst[i];
            i += 1;
        }
        let [sp0, sp1] = src_port.to_be_bytes();
        let [dp0, dp1] = dst_port.to_be_bytes();
        bytes[2 * A] = sp0;
        bytes[2 * A + 1] = sp1;
        bytes[2 * A + 2] = dp0;
        bytes[2 * A + 3] = dp1;
        bytes[2 * A + 4] = protocol;
        Self {
            len: (2 * A + 5) as u8,
            bytes,
        }
    }

    /// `true` for an IPv6 key.
    pub const fn is_v6(&self) -> bool {
        self.len as usize == MAX_KEY_LEN
    }

    const fn addr_len(&self) -> usize {
        if self.is_v6() {
            16
        } else {
            4
        }
    }

    /// The source address bytes (4 or 16), e.g. for counting distinct sources.
    pub fn src_bytes(&self) -> &[u8] {
        let n = self.addr_len();
        self.bytes.get(..n).unwrap_or(&[])
    }

    /// The destination address bytes (4 or 16).
    pub fn dst_bytes(&self) -> &[u8] {
        let n = self.addr_len();
        self.bytes.get(n..2 * n).unwrap_or(&[])
    }

    const fn port_at(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.bytes[i], self.bytes[i + 1]])
    }

    /// Source port (ICMP: type).
    pub const fn src_port(&self) -> u16 {
        self.port_at(2 * self.addr_len())
    }

    /// Destination port (ICMP: code).
    pub const fn dst_port(&self) -> u16 {
        self.port_at(2 * self.addr_len() + 2)
    }

    /// IP protocol number (IPv6: the last next-header of the walk).
    pub const fn protocol(&self) -> u8 {
        self.bytes[2 * self.addr_len() + 4]
    }
}

/// A little-endian word of a 4-byte chunk (an unaligned `LDR` on Cortex-M).
#[inline(always)]
fn word(c: &[u8]) -> u32 {
    match *c {
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

impl FlowKey {
    /// The key's digest under `seed`: HalfSipHash-1-3 (64-bit output) of the canonical
    /// bytes under the seed's [`HalfSipKey`](loxo_core::HalfSipKey), as
    /// [`hash_with_key`](Self::hash_with_key) — the digest every sketch of a
    /// [`FlowMonitor`](crate::FlowMonitor) is indexed by (see `HalfSipKey` for why the
    /// device hashes with HalfSipHash and what that means for the seed's secrecy).
    ///
    /// ```
    /// use loxo_core::{HalfSipKey, Seed};
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(k.hash_with(&seed), HalfSipKey::new(seed).hash_bytes(k.as_ref()));
    /// let k = FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17);
    /// assert_eq!(k.hash_with(&seed), HalfSipKey::new(seed).hash_bytes(k.as_ref()));
    /// ```
    #[inline]
    #[must_use]
    pub fn hash_with(&self, seed: &loxo_core::Seed) -> loxo_core::KeyHash {
        self.hash_with_key(&loxo_core::HalfSipKey::new(*seed))
    }

    /// The key's digest under a seed's precomputed [`HalfSipKey`](loxo_core::HalfSipKey)
    /// (the same value as [`hash_with`](Self::hash_with)): the canonical bytes as
    /// 32-bit words, straight-line code for each of the two lengths (13 bytes: 3
    /// words and a byte; 37: 9 and a byte).
    ///
    /// ```
    /// use loxo_core::{HalfSipKey, Seed};
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(k.hash_with_key(&HalfSipKey::new(seed)), k.hash_with(&seed));
    /// ```
    #[inline]
    #[must_use]
    pub fn hash_with_key(&self, key: &loxo_core::HalfSipKey) -> loxo_core::KeyHash {
        let proto = u32::from(self.protocol());
        if self.is_v6() {
            let w: [u32; 9] = core::array::from_fn(|i| self.le32(4 * i));
            key.hash_words(w, proto, 1)
        } else {
            key.hash_words([self.le32(0), self.le32(4), self.le32(8)], proto, 1)
        }
    }

    /// [`hash_with_key`](Self::hash_with_key), and the digest's state after the
    /// source address (the canonical bytes begin with it): the source's own digest
    /// is finished from there ([`HalfSipPrefix::finish_lo`](loxo_core::HalfSipPrefix::finish_lo):
    /// the low half of [`src_hash_with_key`](Self::src_hash_with_key)) without
    /// hashing the address again — 1 round of 4 for IPv4, 4 of 11 for IPv6.
    ///
    /// ```
    /// use loxo_core::{HalfSipKey, Seed};
    /// use loxo_flow::FlowKey;
    /// let key = HalfSipKey::new(Seed::new(1, 2));
    /// for k in [
    ///     FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6),
    ///     FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17),
    /// ] {
    ///     let (h, src) = k.hash_and_source(&key);
    ///     assert_eq!(h, k.hash_with_key(&key));
    ///     assert_eq!(u64::from(src.finish_lo()), k.src_hash_with_key(&key).get() & 0xffff_ffff);
    /// }
    /// ```
    #[inline]
    #[must_use]
    pub fn hash_and_source(
        &self,
        key: &loxo_core::HalfSipKey,
    ) -> (loxo_core::KeyHash, loxo_core::HalfSipPrefix) {
        let proto = u32::from(self.protocol());
        if self.is_v6() {
            let src = key.prefix([self.le32(0), self.le32(4), self.le32(8), self.le32(12)]);
            let rest: [u32; 5] = core::array::from_fn(|i| self.le32(16 + 4 * i));
            (src.hash_words(rest, proto, 1), src)
        } else {
            let src = key.prefix([self.le32(0)]);
            (src.hash_words([self.le32(4), self.le32(8)], proto, 1), src)
        }
    }

    /// The digest of an address (4 or 16 bytes, network order) under `seed`, as a
    /// [`FlowMonitor`](crate::FlowMonitor) without a blocklist computes it for a
    /// flow's source (its distinct-source sketch): HalfSipHash-1-3 of the bytes under
    /// the seed's [`HalfSipKey`](loxo_core::HalfSipKey).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(FlowKey::address_hash(&seed, &[10, 0, 0, 1]), k.src_hash_with(&seed));
    /// ```
    #[must_use]
    pub fn address_hash(seed: &loxo_core::Seed, address: &[u8]) -> loxo_core::KeyHash {
        loxo_core::HalfSipKey::new(*seed).hash_bytes(address)
    }

    /// The source address's digest under `seed`:
    /// [`address_hash`](Self::address_hash) of [`src_bytes`](Self::src_bytes).
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(k.src_hash_with(&seed), FlowKey::address_hash(&seed, k.src_bytes()));
    /// let k = FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17);
    /// assert_eq!(k.src_hash_with(&seed), FlowKey::address_hash(&seed, k.src_bytes()));
    /// ```
    #[inline]
    #[must_use]
    pub fn src_hash_with(&self, seed: &loxo_core::Seed) -> loxo_core::KeyHash {
        self.src_hash_with_key(&loxo_core::HalfSipKey::new(*seed))
    }

    /// [`src_hash_with`](Self::src_hash_with) under a precomputed
    /// [`HalfSipKey`](loxo_core::HalfSipKey): 4 words for IPv6, 1 for IPv4.
    #[inline(always)]
    #[must_use]
    pub fn src_hash_with_key(&self, key: &loxo_core::HalfSipKey) -> loxo_core::KeyHash {
        if self.is_v6() {
            let w: [u32; 4] = core::array::from_fn(|i| self.le32(4 * i));
            key.hash_words(w, 0, 0)
        } else {
            key.hash_words([self.le32(0)], 0, 0)
        }
    }

    /// The source address's SipHash-1-3 digest under a seed's precomputed
    /// [`SipKey`](loxo_core::SipKey): [`Seed::hash`](loxo_core::Seed::hash) of
    /// [`src_bytes`](Self::src_bytes) (the same value) — what a
    /// [`Blocklist`](crate::Blocklist) (a binary fuse filter built by `loxo
    /// build-filter`) holds.
    ///
    /// ```
    /// use loxo_core::{Seed, SipKey};
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(k.src_sip_hash(&SipKey::new(seed)), seed.hash(k.src_bytes()));
    /// let k = FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17);
    /// assert_eq!(k.src_sip_hash(&SipKey::new(seed)), seed.hash(k.src_bytes()));
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn src_sip_hash(&self, key: &loxo_core::SipKey) -> loxo_core::KeyHash {
        self.address_sip_hash(key, 0)
    }

    /// The destination address's SipHash-1-3 digest:
    /// [`Seed::hash`](loxo_core::Seed::hash) of [`dst_bytes`](Self::dst_bytes), as
    /// [`src_sip_hash`](Self::src_sip_hash).
    ///
    /// ```
    /// use loxo_core::{Seed, SipKey};
    /// use loxo_flow::FlowKey;
    /// let seed = Seed::new(1, 2);
    /// let k = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
    /// assert_eq!(k.dst_sip_hash(&SipKey::new(seed)), seed.hash(k.dst_bytes()));
    /// let k = FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17);
    /// assert_eq!(k.dst_sip_hash(&SipKey::new(seed)), seed.hash(k.dst_bytes()));
    /// ```
    #[inline(always)]
    #[must_use]
    pub fn dst_sip_hash(&self, key: &loxo_core::SipKey) -> loxo_core::KeyHash {
        self.address_sip_hash(key, 1)
    }

    /// SipHash-1-3 of address `which` (0 source, 1 destination): 16 bytes (2 blocks)
    /// for IPv6, 4 (the tail alone) for IPv4.
    #[inline(always)]
    fn address_sip_hash(&self, key: &loxo_core::SipKey, which: usize) -> loxo_core::KeyHash {
        if self.is_v6() {
            let at = 16 * which;
            let lo = |i| u64::from(self.le32(i)) | u64::from(self.le32(i + 4)) << 32;
            key.hash_words([lo(at), lo(at + 8)], 0, 0)
        } else {
            key.hash_words([], u64::from(self.le32(4 * which)), 4)
        }
    }

    /// The little-endian word at byte `i` of the canonical buffer (0 past its end).
    #[inline(always)]
    fn le32(&self, i: usize) -> u32 {
        self.bytes.get(i..i + 4).map_or(0, word)
    }
}

impl PartialEq for FlowKey {
    /// Field-wise equality, computed word by word: the first 16 bytes (all of an
    /// IPv4 key, whose tail is zero) and, for IPv6, the other 21. The compiler's
    /// `bcmp` is a byte loop on Cortex-M; this is a handful of 32-bit compares, which
    /// matters because every top-k lookup compares keys.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.bytes, &other.bytes);
        let mut diff = u32::from(self.len ^ other.len);
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact(4)).take(4) {
            diff |= word(x) ^ word(y);
        }
        if diff != 0 {
            return false;
        }
        if !self.is_v6() {
            return true;
        }
        let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
        let tail = u32::from(ca.remainder() != cb.remainder());
        ca.zip(cb)
            .skip(4)
            .fold(tail, |d, (x, y)| d | (word(x) ^ word(y)))
            == 0
    }
}

impl core::hash::Hash for FlowKey {
    /// Hashes the fields in order, as a derived `Hash` would (consistent with `Eq`).
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.len.hash(state);
        self.bytes.hash(state);
    }
}

impl AsRef<[u8]> for FlowKey {
    /// The canonical encoding (13 or 37 bytes).
    fn as_ref(&self) -> &[u8] {
        self.bytes.get(..self.len as usize).unwrap_or(&self.bytes)
    }
}

fn addr(b: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if let Ok(a) = <[u8; 4]>::try_from(b) {
        write!(f, "{}", Ipv4Addr::from(a))
    } else if let Ok(a) = <[u8; 16]>::try_from(b) {
        write!(f, "[{}]", Ipv6Addr::from(a))
    } else {
        Ok(())
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        addr(self.src_bytes(), f)?;
        write!(f, ":{} -> ", self.src_port())?;
        addr(self.dst_bytes(), f)?;
        write!(f, ":{} proto {}", self.dst_port(), self.protocol())
    }
}

impl fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlowKey({self})")
    }
}

/// A protocol's usual name, for logs.
pub const fn protocol_name(protocol: u8) -> Option<&'static str> {
    match protocol {
        1 => Some("icmp"),
        2 => Some("igmp"),
        6 => Some("tcp"),
        17 => Some("udp"),
        47 => Some("gre"),
        50 => Some("esp"),
        51 => Some("ah"),
        58 => Some("icmpv6"),
        89 => Some("ospf"),
        132 => Some("sctp"),
        _ => None,
    }
}

/// `10.0.0.1:1234 -> 10.0.0.2:80 proto 6 (tcp)`: dotted IPv4, bracketed IPv6 in RFC
/// 5952 text (lower-case hex, no leading zeros, the longest run of two or more zero
/// groups as `::`), ports, the protocol number and its name when it has a common one
/// — the [`Display`](fmt::Display) text plus the name.
#[cfg(feature = "defmt")]
impl defmt::Format for FlowKey {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt_addr(self.src_bytes(), f);
        defmt::write!(f, ":{=u16} -> ", self.src_port());
        defmt_addr(self.dst_bytes(), f);
        defmt::write!(f, ":{=u16} proto {=u8}", self.dst_port(), self.protocol());
        if let Some(name) = protocol_name(self.protocol()) {
            defmt::write!(f, " ({=str})", name);
        }
    }
}

#[cfg(feature = "defmt")]
pub(crate) fn defmt_addr(b: &[u8], f: defmt::Formatter<'_>) {
    if let [a, b, c, d] = *b {
        defmt::write!(f, "{=u8}.{=u8}.{=u8}.{=u8}", a, b, c, d);
        return;
    }
    defmt::write!(f, "[");
    v6_text(b, |p| match p {
        V6Piece::Group(g) => defmt::write!(f, "{=u16:x}", g),
        V6Piece::Colon => defmt::write!(f, ":"),
        V6Piece::Compressed => defmt::write!(f, "::"),
    });
    defmt::write!(f, "]");
}

/// A piece of an IPv6 address's RFC 5952 text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(any(feature = "defmt", test)), allow(dead_code))]
enum V6Piece {
    /// A group, in lower-case hex without leading zeros.
    Group(u16),
    /// The separator between two groups.
    Colon,
    /// The longest run of two or more zero groups (the first such run on a tie).
    Compressed,
}

/// The RFC 5952 text of the 16-byte address `b`, in pieces (no formatter needed, so
/// the defmt log and the tests share it).
#[cfg_attr(not(any(feature = "defmt", test)), allow(dead_code))]
fn v6_text(b: &[u8], mut out: impl FnMut(V6Piece)) {
    let mut g = [0u16; 8];
    for (w, p) in g.iter_mut().zip(b.chunks_exact(2)) {
        *w = u16::from_be_bytes([p[0], p[1]]);
    }
    let (mut start, mut len, mut run) = (8, 0, 0);
    for (i, &w) in g.iter().enumerate() {
        run = if w == 0 { run + 1 } else { 0 };
        if run > len {
            (start, len) = (i + 1 - run, run);
        }
    }
    if len < 2 {
        start = 8;
    }
    let mut i = 0;
    while i < 8 {
        if i == start {
            out(V6Piece::Compressed);
            i += len;
            continue;
        }
        if i > 0 && i != start + len {
            out(V6Piece::Colon);
        }
        out(V6Piece::Group(g[i]));
        i += 1;
    }
}

/// Wire bytes of a key: the length (13 or 37), then the 37-byte canonical buffer
/// (zero beyond the length). Used when a top-k summary of flows is serialized.
impl loxo_cms::WireKey<38> for FlowKey {
    fn to_wire(&self) -> [u8; 38] {
        let mut out = [0u8; 38];
        out[0] = self.len;
        out[1..].copy_from_slice(&self.bytes);
        out
    }

    fn from_wire(bytes: &[u8; 38]) -> Option<Self> {
        let len = usize::from(bytes[0]);
        if len != V4_KEY_LEN && len != MAX_KEY_LEN {
            return None;
        }
        let mut key = [0u8; MAX_KEY_LEN];
        key.copy_from_slice(&bytes[1..]);
        if key[len..].iter().any(|&b| b != 0) {
            return None;
        }
        Some(Self {
            len: bytes[0],
            bytes: key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-wise digests under a [`loxo_core::SipKey`] equal `Seed::hash` of the
    /// key's bytes and of each address, for IPv4 and IPv6 keys varying in every field.
    #[test]
    fn word_digests_equal_byte_digests() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for seed in [
            loxo_core::Seed::new(1, 2),
            loxo_core::Seed::new(u64::MAX, 7),
        ] {
            let key = loxo_core::HalfSipKey::new(seed);
            for _ in 0..2_000 {
                x = loxo_core::mix64(x.wrapping_add(1));
                let b = x.to_le_bytes();
                let (sp, dp) = (x as u16, (x >> 16) as u16);
                let v4 = FlowKey::v4(
                    [b[0], b[1], b[2], b[3]],
                    [b[4], b[5], b[6], b[7]],
                    sp,
                    dp,
                    b[2],
                );
                let v6 = FlowKey::v6(
                    [b[1]; 16],
                    core::array::from_fn(|i| b[i % 8] ^ i as u8),
                    sp,
                    dp,
                    b[5],
                );
                for k in [v4, v6] {
                    assert_eq!(k.hash_with_key(&key), key.hash_bytes(k.as_ref()));
                    let src = FlowKey::address_hash(&seed, k.src_bytes());
                    assert_eq!(k.src_hash_with_key(&key), src);
                    let sip = loxo_core::SipKey::new(seed);
                    assert_eq!(k.src_sip_hash(&sip), seed.hash(k.src_bytes()));
                    assert_eq!(k.dst_sip_hash(&sip), seed.hash(k.dst_bytes()));
                    assert_eq!(k.hash_with(&seed), key.hash_bytes(k.as_ref()));
                }
            }
        }
    }

    /// The word-wise `eq` agrees with byte equality of (len, bytes) for keys that
    /// differ in any single byte, v4 and v6, and across versions.
    #[test]
    fn eq_matches_bytewise_equality() {
        let v4 = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6);
        let v6 = FlowKey::v6([0x20; 16], [0x30; 16], 1234, 80, 17);
        for base in [v4, v6] {
            assert_eq!(base, base);
            for i in 0..base.len as usize {
                for bit in [0x01u8, 0x80] {
                    let mut other = base;
                    other.bytes[i] ^= bit;
                    assert_ne!(base, other, "byte {i}");
                    assert_ne!(other, base, "byte {i}");
                }
            }
        }
        assert_ne!(v4, v6);
        let mut v4_as_v6 = v4;
        v4_as_v6.len = MAX_KEY_LEN as u8;
        assert_ne!(v4, v4_as_v6);
    }

    /// The log's IPv6 text is RFC 5952's, as `std` writes it, for addresses with every
    /// pattern of zero groups (2^8 patterns, other groups small and large).
    #[test]
    fn v6_text_is_rfc5952() {
        extern crate std;
        use core::fmt::Write as _;
        use std::string::String;
        for zeros in 0u32..256 {
            for fill in [1u16, 0xabc, 0xffff] {
                let mut b = [0u8; 16];
                for i in 0..8 {
                    if zeros & (1 << i) == 0 {
                        let v = fill.wrapping_add(i as u16);
                        b[2 * i..2 * i + 2].copy_from_slice(&v.max(1).to_be_bytes());
                    }
                }
                let mut text = String::new();
                v6_text(&b, |p| {
                    let _ = match p {
                        V6Piece::Group(g) => write!(text, "{g:x}"),
                        V6Piece::Colon => write!(text, ":"),
                        V6Piece::Compressed => write!(text, "::"),
                    };
                });
                assert_eq!(text, std::format!("{}", Ipv6Addr::from(b)), "{b:?}");
            }
        }
    }

    #[test]
    fn protocol_names() {
        assert_eq!(protocol_name(6), Some("tcp"));
        assert_eq!(protocol_name(17), Some("udp"));
        assert_eq!(protocol_name(58), Some("icmpv6"));
        assert_eq!(protocol_name(253), None);
    }
}
