//! Sketch datagrams: a device's per-epoch sketches (loxo wire frames) cut into UDP
//! datagrams for a collector (`loxo collect`).
//!
//! A loxo wire frame can be larger than one datagram (the monitor's distinct-flow
//! `Hll<14>` is 12 336 bytes), and IP fragmentation would cost a device a reassembly-
//! sized buffer on the way out, so a frame travels in ordered chunks of at most
//! [`DATAGRAM_CHUNK`] bytes, each behind a 24-byte header (big-endian, network order):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | magic `b"LXSD"` |
//! | 4 | 1 | version, [`DATAGRAM_VERSION`] |
//! | 5 | 1 | [`Stream`]: which sketch of the epoch |
//! | 6 | 2 | chunk length |
//! | 8 | 4 | device (the exporter's observation domain id) |
//! | 12 | 4 | epoch |
//! | 16 | 4 | total length of the loxo wire frame |
//! | 20 | 4 | offset of this chunk in it |
//! | 24 | n | the chunk |
//!
//! The collector puts the chunks of `(device, stream, epoch)` back together and
//! decodes the frame, whose own CRC-32 catches corruption. Like IPFIX over UDP
//! (RFC 7011 §10.4), the datagrams carry no authentication: export over a network you
//! trust, or tunnel it.
//!
//! ```
//! use loxo_control::datagram::{SketchDatagram, Stream, DATAGRAM_MAX};
//! let frame = [7u8; 3000];
//! let mut buf = [0u8; DATAGRAM_MAX];
//! let mut back = Vec::new();
//! for d in SketchDatagram::chunks(Stream::Flows, 1, 42, &frame) {
//!     let n = d.emit(&mut buf).unwrap();
//!     let p = SketchDatagram::parse(&buf[..n]).unwrap();
//!     assert_eq!((p.device, p.epoch, p.offset as usize), (1, 42, back.len()));
//!     back.extend_from_slice(p.data);
//! }
//! assert_eq!(back, frame);
//! ```

use core::fmt;

/// The datagram magic.
pub const DATAGRAM_MAGIC: [u8; 4] = *b"LXSD";
/// The format version.
pub const DATAGRAM_VERSION: u8 = 1;
/// Header bytes.
pub const DATAGRAM_HEADER: usize = 24;
/// Largest chunk per datagram: the datagram (1 424 bytes) plus UDP (8) and IPv4 (20)
/// headers fits a 1 500-byte MTU without fragmentation.
pub const DATAGRAM_CHUNK: usize = 1400;
/// Largest datagram.
pub const DATAGRAM_MAX: usize = DATAGRAM_HEADER + DATAGRAM_CHUNK;

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
    /// The whole frame's length.
    pub total: u32,
    /// This chunk's offset in the frame.
    pub offset: u32,
    /// The chunk.
    pub data: &'a [u8],
}

impl<'a> SketchDatagram<'a> {
    /// The datagrams of `frame`, in order (one empty datagram for an empty frame).
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
                total,
                offset: from as u32,
                data,
            }
        })
    }

    /// Writes the datagram into `buf`; returns its length.
    ///
    /// # Errors
    /// [`DatagramError::Range`] for a chunk over [`DATAGRAM_CHUNK`] or past `total`;
    /// [`DatagramError::BufferTooSmall`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, DatagramError> {
        let n = self.data.len();
        let end = u64::from(self.offset) + n as u64;
        if n > DATAGRAM_CHUNK || end > u64::from(self.total) {
            return Err(DatagramError::Range);
        }
        let out = buf
            .get_mut(..DATAGRAM_HEADER + n)
            .ok_or(DatagramError::BufferTooSmall)?;
        let (head, body) = out.split_at_mut(DATAGRAM_HEADER);
        head[..4].copy_from_slice(&DATAGRAM_MAGIC);
        head[4] = DATAGRAM_VERSION;
        head[5] = self.stream as u8;
        head[6..8].copy_from_slice(&(n as u16).to_be_bytes());
        head[8..12].copy_from_slice(&self.device.to_be_bytes());
        head[12..16].copy_from_slice(&self.epoch.to_be_bytes());
        head[16..20].copy_from_slice(&self.total.to_be_bytes());
        head[20..24].copy_from_slice(&self.offset.to_be_bytes());
        body.copy_from_slice(self.data);
        Ok(DATAGRAM_HEADER + n)
    }

    /// Reads a datagram (the whole UDP payload).
    ///
    /// # Errors
    /// A [`DatagramError`] naming the first check that fails.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DatagramError> {
        let Some((head, data)) = bytes.split_first_chunk::<DATAGRAM_HEADER>() else {
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
        if n != data.len() {
            return Err(DatagramError::Length);
        }
        let d = Self {
            stream,
            device: be32(8),
            epoch: be32(12),
            total: be32(16),
            offset: be32(20),
            data,
        };
        if n > DATAGRAM_CHUNK || u64::from(d.offset) + n as u64 > u64::from(d.total) {
            return Err(DatagramError::Range);
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn header_bytes_are_the_documented_layout() {
        let d = SketchDatagram {
            stream: Stream::TopK,
            device: 0x0102_0304,
            epoch: 5,
            total: 0x1000,
            offset: 0x0800,
            data: &[0xaa, 0xbb],
        };
        let mut buf = [0u8; 32];
        assert_eq!(d.emit(&mut buf), Ok(26));
        assert_eq!(
            buf[..26],
            [
                b'L', b'X', b'S', b'D', 1, 2, 0, 2, 1, 2, 3, 4, 0, 0, 0, 5, 0, 0, 0x10, 0, 0, 0,
                0x08, 0, 0xaa, 0xbb
            ]
        );
        assert_eq!(SketchDatagram::parse(&buf[..26]), Ok(d));
    }

    #[test]
    fn every_bad_datagram_is_an_error() {
        let d = SketchDatagram {
            stream: Stream::Flows,
            device: 1,
            epoch: 2,
            total: 10,
            offset: 8,
            data: &[1, 2],
        };
        let mut buf = [0u8; 64];
        let n = d.emit(&mut buf).unwrap();
        for cut in 0..n {
            assert!(SketchDatagram::parse(&buf[..cut]).is_err(), "cut {cut}");
        }
        let mut bad = buf;
        bad[0] = b'X';
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::NotSketch)
        );
        let mut bad = buf;
        bad[4] = 2;
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::Version(2))
        );
        let mut bad = buf;
        bad[5] = 9;
        assert_eq!(
            SketchDatagram::parse(&bad[..n]),
            Err(DatagramError::Stream(9))
        );
        let mut bad = buf;
        bad[19] = 9; // total 9 < offset 8 + 2
        assert_eq!(SketchDatagram::parse(&bad[..n]), Err(DatagramError::Range));
        assert_eq!(
            SketchDatagram::parse(&buf[..=n]),
            Err(DatagramError::Length)
        );
        assert_eq!(
            SketchDatagram { offset: 9, ..d }.emit(&mut buf),
            Err(DatagramError::Range)
        );
        assert_eq!(d.emit(&mut buf[..25]), Err(DatagramError::BufferTooSmall));
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
                let n = d.emit(&mut buf).unwrap();
                let p = SketchDatagram::parse(&buf[..n]).unwrap();
                assert_eq!(p.offset as usize, back.len());
                assert_eq!(p.total as usize, len);
                back.extend_from_slice(p.data);
            }
            assert_eq!(back, frame, "len {len}");
        }
    }
}
