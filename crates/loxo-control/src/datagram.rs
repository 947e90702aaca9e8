//! Sketch datagrams: a device's per-epoch sketches (loxo wire frames) cut into UDP
//! datagrams for a collector (`loxo collect`), each **authenticated** under the
//! device's export key.
//!
//! A loxo wire frame can be larger than one datagram (the monitor's distinct-flow
//! `Hll<14>` is 12 336 bytes), and IP fragmentation would cost a device a reassembly-
//! sized buffer on the way out, so a frame travels in ordered chunks of at most
//! [`DATAGRAM_CHUNK`] bytes, each behind a 32-byte header (big-endian, network order)
//! and followed by an 8-byte MAC:
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | magic `b"LXSD"` |
//! | 4 | 1 | version, [`DATAGRAM_VERSION`] (2) |
//! | 5 | 1 | [`Stream`]: which sketch of the epoch |
//! | 6 | 2 | chunk length `n` |
//! | 8 | 4 | device (the exporter's observation domain id) |
//! | 12 | 4 | epoch |
//! | 16 | 8 | sequence number: strictly increasing per device |
//! | 24 | 4 | total length of the loxo wire frame |
//! | 28 | 4 | offset of this chunk in it |
//! | 32 | n | the chunk |
//! | 32 + n | 8 | MAC: SipHash-2-4 under the device's [`ExportKey`] of bytes `0..32 + n`, little-endian |
//!
//! The collector puts the chunks of `(device, stream, epoch)` back together and
//! decodes the frame, whose own CRC-32 catches corruption.
//!
//! # Authentication and freshness
//!
//! Every datagram is authenticated as a whole — the device id, the epoch and the
//! sequence number included — under a 128-bit key of its own device
//! ([`ExportKey`]), which the collector holds (`loxo collect --keys`). SipHash-2-4
//! is a PRF with a 64-bit output, the designers' recommended MAC: without the key a
//! forger's chance per datagram is 2⁻⁶⁴, and a datagram taken from one device does not
//! verify under another's key. The sequence number makes replays detectable: the
//! collector keeps, per device, the highest number it accepted and a window of the
//! ones just below, and refuses a number seen or older than the window; a gap in the
//! numbers is a datagram lost in transit, counted. Senders number their datagrams
//! `boot << 32 | n`, `n` counting the boot's datagrams from 0 (the collector counts
//! gaps within a boot, and a new boot's numbers before its first datagram received);
//! the sample firmware's `boot` is its boot counter (the one its control nonce uses:
//! a semihosting file under QEMU, a flash page on a product; the boot's time in
//! seconds without one), so the numbers also grow across reboots.
//!
//! **Why a MAC and not an AEAD.** The sketches are not secret — a sketch's registers
//! and counts reveal no more than the aggregate the collector prints, and its hash
//! seed is never on the wire — so what export needs is integrity, origin and
//! freshness, which a MAC over the whole datagram gives. An AEAD (ChaCha20-Poly1305 or
//! AES-GCM from a maintained `no_std` crate) would add encryption nobody asked for, a
//! 16-byte tag, a nonce to manage without reuse, and on the Cortex-M4 (no AES unit, a
//! 32-bit core) several times SipHash's cost per byte plus a new dependency in the
//! firmware; SipHash is already there for the control channel and the sketches'
//! hashing. Measured on the sample firmware (QEMU `-icount`, 40 000 demo frames,
//! `cargo xtask demo --summary --icount`): signing a full datagram costs ≈ 15 200
//! Cortex-M4 instructions (≈ 10.6 per byte; the pump slice that sends one went from
//! 13 640 to 28 880), the epoch end's mean from 435 066 to 578 866 instructions,
//! spread over the frames after it; the per-frame cost and the longest window without
//! a read (114 200, the atomic close) do not change. Where the sketches *are*
//! sensitive, tunnel the export (IPsec, WireGuard).
//!
//! IPFIX (the firmware's other export, RFC 7011) has no integrity of its own over UDP
//! (§11 leaves it to DTLS, which few collectors speak): restrict who may send by
//! address (`loxo collect --allow-from`) and keep it on a network you trust.
//!
//! ```
//! use loxo_control::datagram::{ExportKey, SketchDatagram, Stream, DATAGRAM_MAX};
//! let key = ExportKey::from_hex("00112233445566778899aabbccddeeff").unwrap();
//! let frame = [7u8; 3000];
//! let mut buf = [0u8; DATAGRAM_MAX];
//! let mut back = Vec::new();
//! for (i, d) in SketchDatagram::chunks(Stream::Flows, 1, 42, &frame).enumerate() {
//!     let d = SketchDatagram { seq: 100 + i as u64, ..d };
//!     let n = d.emit(&key, &mut buf).unwrap();
//!     let p = SketchDatagram::authenticate(&buf[..n], &key).unwrap();
//!     assert_eq!((p.device, p.epoch, p.seq, p.offset as usize), (1, 42, 100 + i as u64, back.len()));
//!     back.extend_from_slice(p.data);
//!     // One bit changed anywhere, or another key: refused.
//!     buf[9] ^= 1;
//!     assert!(SketchDatagram::authenticate(&buf[..n], &key).is_err());
//! }
//! assert_eq!(back, frame);
//! ```

use core::fmt;
use core::hash::Hasher as _;

use siphasher::sip::SipHasher24;

/// The datagram magic.
pub const DATAGRAM_MAGIC: [u8; 4] = *b"LXSD";
/// The format version: 2, authenticated (version 1 carried no sequence number and
/// no MAC; it is refused).
pub const DATAGRAM_VERSION: u8 = 2;
/// Header bytes.
pub const DATAGRAM_HEADER: usize = 32;
/// MAC bytes, after the chunk.
pub const DATAGRAM_MAC: usize = 8;
/// Largest chunk per datagram: the datagram (1 440 bytes) plus UDP (8) and IPv4 (20)
/// headers fits a 1 500-byte MTU without fragmentation.
pub const DATAGRAM_CHUNK: usize = 1400;
/// Largest datagram.
pub const DATAGRAM_MAX: usize = DATAGRAM_HEADER + DATAGRAM_CHUNK + DATAGRAM_MAC;

/// A device's 128-bit export key: SipHash-2-4's key, read from 16 bytes as two
/// little-endian words (32 hex digits as `LOXO_EXPORT_KEY` and `loxo collect --keys`
/// write it).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ExportKey {
    k0: u64,
    k1: u64,
}

impl ExportKey {
    /// The key of 16 bytes.
    #[must_use]
    pub const fn from_bytes(b: [u8; 16]) -> Self {
        let [a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7] = b;
        Self {
            k0: u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7]),
            k1: u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]),
        }
    }

    /// The key of 32 hex digits (either case); `None` for anything else.
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        let h = hex.as_bytes();
        if h.len() != 32 {
            return None;
        }
        let mut b = [0u8; 16];
        for (i, out) in b.iter_mut().enumerate() {
            let digit = |c: u8| char::from(c).to_digit(16);
            *out = u8::try_from(digit(h[2 * i])? << 4 | digit(h[2 * i + 1])?).ok()?;
        }
        Some(Self::from_bytes(b))
    }

    /// The MAC of `bytes`.
    fn mac(&self, bytes: &[u8]) -> [u8; DATAGRAM_MAC] {
        let mut h = SipHasher24::new_with_keys(self.k0, self.k1);
        h.write(bytes);
        h.finish().to_le_bytes()
    }
}

impl fmt::Debug for ExportKey {
    /// The key itself is never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExportKey(..)")
    }
}

/// Which sketch of an epoch a datagram carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Stream {
    /// The distinct-flow sketch (`Hll`, wire kind `hll`).
    Flows = 1,
    /// The top-k candidates (`SpaceSaving` of flow keys, wire kind `space-saving`).
    TopK = 2,
}

impl Stream {
    /// The stream of a header byte.
    pub const fn from_u8(b: u8) -> Option<Self> {
        match b {
            1 => Some(Self::Flows),
            2 => Some(Self::TopK),
            _ => None,
        }
    }

    /// A lower-case name (`flows`, `topk`), for file names and logs.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Flows => "flows",
            Self::TopK => "topk",
        }
    }
}

/// Why bytes are not a sketch datagram, or a datagram does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DatagramError {
    /// Not starting with the magic.
    NotSketch,
    /// Another version of the format.
    Version(u8),
    /// An unknown stream byte.
    Stream(u8),
    /// Shorter than its header or its announced chunk, or longer.
    Length,
    /// The chunk lies past the announced total, or is longer than [`DATAGRAM_CHUNK`].
    Range,
    /// The output buffer is too small.
    BufferTooSmall,
    /// The MAC does not verify under the device's key: forged, corrupted, or another
    /// device's key.
    BadMac,
}

impl fmt::Display for DatagramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSketch => f.write_str("not a sketch datagram"),
            Self::Version(v) => write!(f, "sketch datagram of unknown version {v}"),
            Self::Stream(s) => write!(f, "sketch datagram of unknown stream {s}"),
            Self::Length => f.write_str("sketch datagram length does not match its header"),
            Self::Range => f.write_str("sketch datagram chunk outside its frame"),
            Self::BufferTooSmall => f.write_str("buffer too small for the sketch datagram"),
            Self::BadMac => f.write_str("sketch datagram with a bad MAC"),
        }
    }
}

impl core::error::Error for DatagramError {}

/// One datagram: a chunk of one epoch's sketch of one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SketchDatagram<'a> {
    /// Which sketch.
    pub stream: Stream,
    /// The exporting device (its observation domain id).
    pub device: u32,
    /// The epoch the sketch closes.
    pub epoch: u32,
    /// The device's sequence number, strictly increasing over its datagrams.
    pub seq: u64,
    /// The whole frame's length.
    pub total: u32,
    /// This chunk's offset in the frame.
    pub offset: u32,
    /// The chunk.
    pub data: &'a [u8],
}

impl<'a> SketchDatagram<'a> {
    /// The datagrams of `frame`, in order (one empty datagram for an empty frame), all
    /// of sequence number 0: the sender numbers each as it sends it.
    pub fn chunks(
        stream: Stream,
        device: u32,
        epoch: u32,
        frame: &'a [u8],
    ) -> impl Iterator<Item = SketchDatagram<'a>> + 'a {
        let total = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let n = frame.len().div_ceil(DATAGRAM_CHUNK).max(1);
        (0..n).map(move |i| {
            let from = i * DATAGRAM_CHUNK;
            let data = frame
                .get(from..frame.len().min(from + DATAGRAM_CHUNK))
                .unwrap_or(&[]);
            SketchDatagram {
                stream,
                device,
                epoch,
                seq: 0,
                total,
                offset: from as u32,
                data,
            }
        })
    }

    /// Writes the datagram into `buf`, its MAC under `key` after the chunk; returns
    /// its length.
    ///
    /// # Errors
    /// [`DatagramError::Range`] for a chunk over [`DATAGRAM_CHUNK`] or past `total`;
    /// [`DatagramError::BufferTooSmall`].
    pub fn emit(&self, key: &ExportKey, buf: &mut [u8]) -> Result<usize, DatagramError> {
        let n = self.data.len();
        let end = u64::from(self.offset) + n as u64;
        if n > DATAGRAM_CHUNK || end > u64::from(self.total) {
            return Err(DatagramError::Range);
        }
        let len = DATAGRAM_HEADER + n + DATAGRAM_MAC;
        let out = buf.get_mut(..len).ok_or(DatagramError::BufferTooSmall)?;
        let (signed, mac) = out.split_at_mut(DATAGRAM_HEADER + n);
        let (head, body) = signed.split_at_mut(DATAGRAM_HEADER);
        head[..4].copy_from_slice(&DATAGRAM_MAGIC);
        head[4] = DATAGRAM_VERSION;
        head[5] = self.stream as u8;
        head[6..8].copy_from_slice(&(n as u16).to_be_bytes());
        head[8..12].copy_from_slice(&self.device.to_be_bytes());
        head[12..16].copy_from_slice(&self.epoch.to_be_bytes());
        head[16..24].copy_from_slice(&self.seq.to_be_bytes());
        head[24..28].copy_from_slice(&self.total.to_be_bytes());
        head[28..32].copy_from_slice(&self.offset.to_be_bytes());
        body.copy_from_slice(self.data);
        mac.copy_from_slice(&key.mac(signed));
        Ok(len)
    }

    /// Reads a datagram (the whole UDP payload) **without checking its MAC**: for a
    /// receiver to learn which device's key to check it under
    /// ([`authenticate`](Self::authenticate)), or one that trusts its network.
    ///
    /// # Errors
    /// A [`DatagramError`] naming the first check that fails.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DatagramError> {
        Self::split(bytes).map(|(d, _, _)| d)
    }

    /// Reads a datagram and checks its MAC under `key`.
    ///
    /// # Errors
    /// [`DatagramError::BadMac`], or what [`parse`](Self::parse) finds.
    pub fn authenticate(bytes: &'a [u8], key: &ExportKey) -> Result<Self, DatagramError> {
        let (d, signed, mac) = Self::split(bytes)?;
        // Compared without an early exit.
        let diff = key
            .mac(signed)
            .iter()
            .zip(mac)
            .fold(0u8, |a, (x, y)| a | (x ^ y));
        if diff == 0 {
            Ok(d)
        } else {
            Err(DatagramError::BadMac)
        }
    }

    /// The datagram, the bytes its MAC covers, and its MAC.
    fn split(bytes: &'a [u8]) -> Result<(Self, &'a [u8], &'a [u8]), DatagramError> {
        let Some((head, rest)) = bytes.split_first_chunk::<DATAGRAM_HEADER>() else {
            return Err(if bytes.starts_with(&DATAGRAM_MAGIC) {
                DatagramError::Length
            } else {
                DatagramError::NotSketch
            });
        };
        let be32 = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        if head[..4] != DATAGRAM_MAGIC {
            return Err(DatagramError::NotSketch);
        }
        if head[4] != DATAGRAM_VERSION {
            return Err(DatagramError::Version(head[4]));
        }
        let stream = Stream::from_u8(head[5]).ok_or(DatagramError::Stream(head[5]))?;
        let n = usize::from(u16::from_be_bytes([head[6], head[7]]));
        if rest.len() != n + DATAGRAM_MAC {
            return Err(DatagramError::Length);
        }
        let (data, mac) = rest.split_at(n);
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&head[16..24]);
        let d = Self {
            stream,
            device: be32(8),
            epoch: be32(12),
            seq: u64::from_be_bytes(seq),
            total: be32(24),
            offset: be32(28),
            data,
        };
        if n > DATAGRAM_CHUNK || u64::from(d.offset) + n as u64 > u64::from(d.total) {
            return Err(DatagramError::Range);
        }
        Ok((d, &bytes[..DATAGRAM_HEADER + n], mac))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const KEY: ExportKey =
        ExportKey::from_bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

    #[test]
    fn header_bytes_are_the_documented_layout() {
        let d = SketchDatagram {
            stream: Stream::TopK,
            device: 0x0102_0304,
            epoch: 5,
            seq: 0x0a0b_0c0d_0e0f_1011,
            total: 0x1000,
            offset: 0x0800,
            data: &[0xaa, 0xbb],
        };
        let mut buf = [0u8; 64];
        assert_eq!(d.emit(&KEY, &mut buf), Ok(42));
        assert_eq!(
            buf[..34],
            [
                b'L', b'X', b'S', b'D', 2, 2, 0, 2, 1, 2, 3, 4, 0, 0, 0, 5, 0x0a, 0x0b, 0x0c, 0x0d,
                0x0e, 0x0f, 0x10, 0x11, 0, 0, 0x10, 0, 0, 0, 0x08, 0, 0xaa, 0xbb
            ]
        );
        // The MAC: SipHash-2-4 of the 34 bytes before it, little-endian.
        let mut h = SipHasher24::new_with_keys(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);
        h.write(&buf[..34]);
        assert_eq!(buf[34..42], h.finish().to_le_bytes());
        assert_eq!(SketchDatagram::authenticate(&buf[..42], &KEY), Ok(d));
        assert_eq!(SketchDatagram::parse(&buf[..42]), Ok(d));
    }

    #[test]
    fn siphash24_is_the_reference_function() {
        // The SipHash paper's example (Aumasson & Bernstein 2012, appendix A): key
        // 00 01 … 0f, message 00 01 … 0e → 0xa129ca6149be45e5.
        let msg: [u8; 15] = core::array::from_fn(|i| i as u8);
        assert_eq!(u64::from_le_bytes(KEY.mac(&msg)), 0xa129_ca61_49be_45e5);
    }

    #[test]
    fn every_bad_datagram_is_an_error() {
        let d = SketchDatagram {
            stream: Stream::Flows,
            device: 1,
            epoch: 2,
            seq: 3,
            total: 10,
            offset: 8,
            data: &[1, 2],
        };
        let mut buf = [0u8; 64];
        let n = d.emit(&KEY, &mut buf).unwrap();
        assert_eq!(n, DATAGRAM_HEADER + 2 + DATAGRAM_MAC);
        for cut in 0..n {
            assert!(SketchDatagram::parse(&buf[..cut]).is_err(), "cut {cut}");
        }
        // Any bit flipped: refused (the MAC, or a check before it).
        for i in 0..n {
            for bit in 0..8 {
                let mut bad = buf;
                bad[i] ^= 1 << bit;
                assert!(
                    SketchDatagram::authenticate(&bad[..n], &KEY).is_err(),
                    "byte {i} bit {bit}"
                );
            }
        }
        let other = ExportKey::from_bytes([9; 16]);
        assert_eq!(
            SketchDatagram::authenticate(&buf[..n], &other),
            Err(DatagramError::BadMac)
        );
        let mut bad = buf;
        bad[0] = b'X';
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::NotSketch)
        );
        let mut bad = buf;
        bad[4] = 1;
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::Version(1))
        );
        let mut bad = buf;
        bad[5] = 9;
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::Stream(9))
        );
        let mut bad = buf;
        bad[27] = 9; // total 9 < offset 8 + 2
        assert_eq!(SketchDatagram::parse(&bad[..n]), Err(DatagramError::Range));
        assert_eq!(
            SketchDatagram::parse(&buf[..=n]),
            Err(DatagramError::Length)
        );
        assert_eq!(
            SketchDatagram { offset: 9, ..d }.emit(&KEY, &mut buf),
            Err(DatagramError::Range)
        );
        assert_eq!(
            d.emit(&KEY, &mut buf[..n - 1]),
            Err(DatagramError::BufferTooSmall)
        );
    }

    #[test]
    fn keys_from_hex() {
        let k = ExportKey::from_hex("000102030405060708090A0b0c0d0e0f").unwrap();
        assert!(k == KEY);
        for bad in [
            "",
            "00",
            "000102030405060708090a0b0c0d0e0g",
            "000102030405060708090a0b0c0d0e0f00",
            "+00102030405060708090a0b0c0d0e0f",
        ] {
            assert!(ExportKey::from_hex(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn chunks_cover_the_frame_in_order() {
        extern crate std;
        for len in [
            0,
            1,
            DATAGRAM_CHUNK - 1,
            DATAGRAM_CHUNK,
            DATAGRAM_CHUNK + 1,
            12_336,
        ] {
            let frame: std::vec::Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut back = std::vec::Vec::new();
            let mut buf = [0u8; DATAGRAM_MAX];
            for d in SketchDatagram::chunks(Stream::Flows, 3, 4, &frame) {
                let n = d.emit(&KEY, &mut buf).unwrap();
                let p = SketchDatagram::authenticate(&buf[..n], &KEY).unwrap();
                assert_eq!(p.offset as usize, back.len());
                assert_eq!(p.total as usize, len);
                back.extend_from_slice(p.data);
            }
            assert_eq!(back, frame, "len {len}");
        }
    }
}
