//! The flow-control protocol between the loxo sample firmware and `loxo replay`:
//! small Ethernet frames of a local-experimental EtherType, **authenticated**; and
//! ([`datagram`]) the UDP datagrams that carry a device's sketches to a collector.
//!
//! Layout after the 14-byte Ethernet header: `b"LX"`, op (`u8`), protocol version
//! ([`VERSION`], `u8`), `seq` (`u32` LE), `value` (`u32` LE), `extra` (`u32` LE), then
//! an 8-byte tag — 38 bytes, padded to the 60-byte Ethernet minimum. SKETCH frames carry
//! a `u16` LE chunk length at offset 30, the chunk from offset 32, and the tag right
//! after the chunk.
//!
//! | op | direction | meaning | tag under |
//! |---|---|---|---|
//! | READY | fw → host | RX is enabled; `value`/`extra` = the device nonce (low, high) | (device, 0) |
//! | HELLO | host → fw | opens the session; `value`/`extra` = the host nonce (low, high), never 0 | (device, host) |
//! | WELCOME | fw → host | session open; `value`/`extra` echo the host nonce | (device, host) |
//! | SYNC  | host → fw | end of batch `seq` (sequence numbers never decrease); `value` = data frames sent so far | (device, host) |
//! | ACK   | fw → host | batch `seq` consumed; `value` = frames counted so far | (device, host) |
//! | END   | host → fw | no more frames; `value` = data frames sent; `seq` after the last SYNC | (device, host) |
//! | DONE  | fw → host | verdict in `extra` (0 = ok), `value` = frames counted | (device, host) |
//! | SKETCH | fw → host | one chunk of an epoch's distinct-flow sketch | (device, host) |
//!
//! Version 2 (this one) added HELLO/WELCOME and the host nonce; version 1 frames
//! (byte 17 = 0, tags under the device nonce alone) fail [`verify`] with
//! [`ControlError::Version`].
//!
//! # Authentication and freshness
//!
//! The tag is SipHash-1-3 under a 128-bit key shared out of band (the firmware's
//! build-time `LOXO_CONTROL_KEY`, `loxo replay --control-key`), over the session's
//! two nonces followed by the frame from offset 14 to the tag: `tag = SipHash(key,
//! device_le ‖ host_le ‖ frame[14..end])`, stored little-endian ([`Session`]). SipHash
//! is a PRF: without the key nobody can forge a tag. Freshness is a challenge and
//! response in both directions:
//!
//! - the **device nonce** is new at every boot ([`device_nonce`]: a boot counter kept
//!   in flash and the TRNG's output, mixed under the key), so host frames recorded in
//!   an earlier boot (HELLO, SYNC, END) fail the device's check;
//! - the **host nonce** is drawn at random by `loxo replay` for each session and sent
//!   in HELLO; the device's WELCOME, ACK, DONE and SKETCH frames are tagged under it,
//!   so frames recorded from an earlier session — even a whole earlier boot's READY,
//!   ACK and DONE — fail the host's check. A READY only tells the host which device
//!   nonce to answer; it proves nothing fresh, and the host acts on WELCOME alone.
//!
//! Within a session, [`Guard`] refuses sequence numbers that go backwards, so a
//! replayed SYNC or END from earlier in the same session is ignored too. A frame of
//! the control EtherType that fails any check is **not** a control frame for the
//! receiver and **not** traffic either: both sides count it apart (the firmware's
//! `control_rejected`, `loxo replay`'s "unauthenticated control frames ignored"), so
//! no frame on the wire can stop the firmware, make it lie about its counts or turn
//! its verdict.
//!
//! ```
//! use loxo_control::{build, verify, Control, Guard, Session, OP_SYNC};
//! use loxo_core::Seed;
//!
//! let key = Seed::new(7, 8);
//! let s = Session { device: 0x1234_5678_9abc_def0, host: 0x0bad_cafe };
//! let c = Control { op: OP_SYNC, seq: 3, value: 0, extra: 0 };
//! let f = build([2, 0, 0, 0, 0, 2], c, &key, s);
//! assert_eq!(verify(&f, &key, s), Ok(c));
//! assert!(verify(&f, &key, Session { device: s.device + 1, ..s }).is_err()); // another boot
//! assert!(verify(&f, &key, Session { host: s.host + 1, ..s }).is_err()); // another session
//! assert!(verify(&f, &Seed::new(7, 9), s).is_err()); // another key
//! let mut g = Guard::default();
//! assert!(g.accept(&c));
//! assert!(!g.accept(&Control { seq: 2, ..c })); // stale
//! ```
#![no_std]
#![forbid(unsafe_code)]

use core::fmt;
use core::hash::Hasher as _;

use loxo_core::Seed;

pub mod datagram;
pub mod host;

/// IEEE 802 local experimental EtherType 1.
pub const ETHERTYPE: u16 = 0x88B5;
/// The protocol version a frame carries in byte 17 (1: the device nonce alone).
pub const VERSION: u8 = 2;
/// RX enabled; carries the device nonce.
pub const OP_READY: u8 = 1;
/// End of a batch.
pub const OP_SYNC: u8 = 2;
/// Batch consumed.
pub const OP_ACK: u8 = 3;
/// No more frames.
pub const OP_END: u8 = 4;
/// Verdict.
pub const OP_DONE: u8 = 5;
/// A sketch chunk.
pub const OP_SKETCH: u8 = 6;
/// Opens a session; carries the host nonce.
pub const OP_HELLO: u8 = 7;
/// Session open; echoes the host nonce.
pub const OP_WELCOME: u8 = 8;
/// Sketch bytes per SKETCH frame (frame length 40 + chunk ≤ 1 064 bytes).
pub const SKETCH_CHUNK: usize = 1024;
/// Bytes of a SKETCH frame buffer ([`build_sketch`]).
pub const SKETCH_FRAME: usize = 40 + SKETCH_CHUNK;
/// Length of the tag.
pub const TAG_LEN: usize = 8;
/// Where the authenticated part of a plain control frame ends (its tag included).
const PLAIN_END: usize = 30 + TAG_LEN;

/// A decoded control message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Control {
    /// One of the `OP_*` codes.
    pub op: u8,
    /// Batch sequence number (or epoch, for SKETCH).
    pub seq: u32,
    /// Op-specific value.
    pub value: u32,
    /// Op-specific extra value.
    pub extra: u32,
}

/// Why a frame was not accepted as a control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ControlError {
    /// Not of the control EtherType or without the `LX` marker.
    NotControl,
    /// Too short for its header, tag or announced chunk.
    Truncated,
    /// The tag does not match: forged, corrupted, another key, another boot or
    /// another session.
    BadTag,
    /// Another protocol version (in byte 17).
    Version(u8),
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotControl => f.write_str("not a control frame"),
            Self::Truncated => f.write_str("control frame cut short"),
            Self::BadTag => f.write_str("control frame with a bad authentication tag"),
            Self::Version(v) => write!(
                f,
                "control protocol version {v}, expected {VERSION} (update the firmware or loxo)"
            ),
        }
    }
}

impl core::error::Error for ControlError {}

impl Control {
    /// The 64-bit nonce a READY, HELLO or WELCOME frame carries (`value` low, `extra`
    /// high).
    #[must_use]
    pub const fn nonce(&self) -> u64 {
        (self.extra as u64) << 32 | self.value as u64
    }

    /// A message of `op` carrying `nonce` in `value` (low) and `extra` (high).
    #[must_use]
    pub const fn with_nonce(op: u8, nonce: u64) -> Self {
        Self {
            op,
            seq: 0,
            value: nonce as u32,
            extra: (nonce >> 32) as u32,
        }
    }
}

/// The two nonces a session's tags cover: the device's (new at each boot) and the
/// host's (new at each session; 0 before one is open, in READY only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Session {
    /// The device nonce, announced in READY ([`device_nonce`]).
    pub device: u64,
    /// The host nonce, sent in HELLO (never 0).
    pub host: u64,
}

impl Session {
    /// What a READY is tagged under: the device nonce, no host nonce yet.
    #[must_use]
    pub const fn announce(device: u64) -> Self {
        Self { device, host: 0 }
    }
}

/// A device's nonce for one boot: `SipHash(key, "LXboot" ‖ boot_counter ‖ entropy)`.
///
/// `boot_counter` is a counter the device increments in flash at every boot (it never
/// repeats while the key lives), `entropy` 64 bits from its TRNG; either alone keeps
/// two boots apart — the counter deterministically, the TRNG with probability
/// `1 − 2⁻⁶⁴` per pair — and the pair survives the loss of one (a board without a
/// TRNG, a flash page rewritten). Keyed, so the nonce reveals neither. The boot time
/// is no substitute: two boots in one second shared the old time-based nonce.
///
/// ```
/// use loxo_control::device_nonce;
/// use loxo_core::Seed;
/// let key = Seed::new(1, 2);
/// assert_ne!(device_nonce(&key, 7, 0), device_nonce(&key, 8, 0));
/// assert_ne!(device_nonce(&key, 7, 1), device_nonce(&key, 7, 2));
/// ```
#[must_use]
pub fn device_nonce(key: &Seed, boot_counter: u64, entropy: u64) -> u64 {
    let mut h = key.hasher();
    h.write(b"LXboot");
    h.write_u64(boot_counter);
    h.write_u64(entropy);
    h.finish()
}

/// The message fields of a frame of the control EtherType, **unauthenticated**:
/// for telling control frames from traffic (whatever their version) and for reading
/// the nonce a READY or HELLO carries before verifying it. Never act on it without
/// [`verify`].
#[must_use]
pub fn peek(frame: &[u8]) -> Option<Control> {
    let f = frame.get(..30)?;
    if u16::from_be_bytes([f[12], f[13]]) != ETHERTYPE || f[14..16] != *b"LX" {
        return None;
    }
    let word = |i: usize| u32::from_le_bytes([f[i], f[i + 1], f[i + 2], f[i + 3]]);
    Some(Control {
        op: f[16],
        seq: word(18),
        value: word(22),
        extra: word(26),
    })
}

/// The tag of `body` (frame bytes 14 up to the tag) under `key` and `session`.
fn tag(key: &Seed, session: Session, body: &[u8]) -> u64 {
    let mut h = key.hasher();
    h.write_u64(session.device);
    h.write_u64(session.host);
    h.write(body);
    h.finish()
}

/// End of the authenticated part of `frame` (where its tag ends), from its op.
fn auth_end(frame: &[u8], op: u8) -> Result<usize, ControlError> {
    if op == OP_SKETCH {
        let len = frame.get(30..32).ok_or(ControlError::Truncated)?;
        let n = usize::from(u16::from_le_bytes([len[0], len[1]]));
        if n > SKETCH_CHUNK {
            return Err(ControlError::Truncated);
        }
        Ok(32 + n + TAG_LEN)
    } else {
        Ok(PLAIN_END)
    }
}

/// Checks `frame`'s version and its tag under `key` and `session`; returns its message.
///
/// # Errors
/// [`ControlError::NotControl`], [`ControlError::Truncated`],
/// [`ControlError::Version`], [`ControlError::BadTag`].
pub fn verify(frame: &[u8], key: &Seed, session: Session) -> Result<Control, ControlError> {
    let c = peek(frame).ok_or(ControlError::NotControl)?;
    match frame.get(17) {
        Some(&VERSION) => {}
        Some(&v) => return Err(ControlError::Version(v)),
        None => return Err(ControlError::Truncated),
    }
    let end = auth_end(frame, c.op)?;
    let (body, t) = frame
        .get(14..end)
        .ok_or(ControlError::Truncated)?
        .split_at(end - 14 - TAG_LEN);
    let mut got = [0u8; TAG_LEN];
    got.copy_from_slice(t);
    if u64::from_le_bytes(got) == tag(key, session, body) {
        Ok(c)
    } else {
        Err(ControlError::BadTag)
    }
}

/// The chunk a verified SKETCH frame carries.
#[must_use]
pub fn sketch_chunk(frame: &[u8]) -> Option<&[u8]> {
    let len = frame.get(30..32)?;
    let n = usize::from(u16::from_le_bytes([len[0], len[1]]));
    frame.get(32..32 + n)
}

fn header(f: &mut [u8], src: [u8; 6], c: Control) {
    f[..6].copy_from_slice(&[0xFF; 6]);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    f[14..16].copy_from_slice(b"LX");
    f[16] = c.op;
    f[17] = VERSION;
    f[18..22].copy_from_slice(&c.seq.to_le_bytes());
    f[22..26].copy_from_slice(&c.value.to_le_bytes());
    f[26..30].copy_from_slice(&c.extra.to_le_bytes());
}

fn sign(f: &mut [u8], end: usize, key: &Seed, session: Session) {
    let t = tag(key, session, &f[14..end - TAG_LEN]);
    f[end - TAG_LEN..end].copy_from_slice(&t.to_le_bytes());
}

/// Builds a 60-byte control frame from `src` (broadcast destination), signed under
/// `session`.
#[must_use]
pub fn build(src: [u8; 6], c: Control, key: &Seed, session: Session) -> [u8; 60] {
    let mut f = [0u8; 60];
    header(&mut f, src, c);
    sign(&mut f, PLAIN_END, key, session);
    f
}

/// Builds a signed SKETCH frame carrying `chunk` (at most [`SKETCH_CHUNK`] bytes,
/// the rest is cut) of the `total`-byte sketch of `epoch` at `offset`; returns the
/// buffer and the frame's length.
#[must_use]
pub fn build_sketch(
    src: [u8; 6],
    epoch: u32,
    offset: u32,
    total: u32,
    chunk: &[u8],
    key: &Seed,
    session: Session,
) -> ([u8; SKETCH_FRAME], usize) {
    let mut f = [0u8; SKETCH_FRAME];
    let c = Control {
        op: OP_SKETCH,
        seq: epoch,
        value: offset,
        extra: total,
    };
    header(&mut f, src, c);
    let n = chunk.len().min(SKETCH_CHUNK);
    f[30..32].copy_from_slice(&(n as u16).to_le_bytes());
    f[32..32 + n].copy_from_slice(&chunk[..n]);
    let end = 32 + n + TAG_LEN;
    sign(&mut f, end, key, session);
    (f, end.max(60))
}

/// Replay protection within a run: sequence numbers of accepted frames never go
/// backwards. An equal `seq` is accepted again (a re-sent SYNC whose ACK was lost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Guard {
    last: Option<u32>,
    /// Frames refused so far (bad tag, another boot or session, stale sequence
    /// number).
    pub rejected: u32,
}

impl Guard {
    /// True if a verified `c` is fresh (its `seq` is not below the last accepted
    /// one); a stale one is counted in `rejected`.
    pub fn accept(&mut self, c: &Control) -> bool {
        if self.last.is_some_and(|l| c.seq < l) {
            self.rejected = self.rejected.saturating_add(1);
            return false;
        }
        self.last = Some(c.seq);
        true
    }

    /// Counts a frame that failed [`verify`].
    pub fn reject(&mut self) {
        self.rejected = self.rejected.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: Seed = Seed::new(0x006b_6579, 0x1);
    const NONCE: Session = Session {
        device: 0xfeed_f00d_0bad_cafe,
        host: 0x5eed_0000_0000_0001,
    };
    const SRC: [u8; 6] = [2, 0, 0, 0, 0, 9];

    #[test]
    fn every_byte_of_the_authenticated_part_is_covered() {
        let c = Control {
            op: OP_END,
            seq: 9,
            value: 1000,
            extra: 0,
        };
        let f = build(SRC, c, &KEY, NONCE);
        assert_eq!(verify(&f, &KEY, NONCE), Ok(c));
        for i in 14..PLAIN_END {
            for bit in 0..8 {
                let mut g = f;
                g[i] ^= 1 << bit;
                assert!(verify(&g, &KEY, NONCE).is_err(), "byte {i} bit {bit}");
            }
        }
        // Padding and the Ethernet addresses are not covered (they carry nothing).
        let mut g = f;
        g[59] ^= 1;
        g[0] ^= 1;
        assert_eq!(verify(&g, &KEY, NONCE), Ok(c));
        assert_eq!(verify(&f[..37], &KEY, NONCE), Err(ControlError::Truncated));
        assert_eq!(
            verify(&[0u8; 60], &KEY, NONCE),
            Err(ControlError::NotControl)
        );
    }

    #[test]
    fn sketch_frames_round_trip_and_cover_the_chunk() {
        let data: [u8; 300] = core::array::from_fn(|i| i as u8);
        let (f, len) = build_sketch(SRC, 4, 1024, 5000, &data, &KEY, NONCE);
        assert_eq!(len, 40 + 300);
        let c = verify(&f[..len], &KEY, NONCE);
        assert_eq!(
            c.map(|c| (c.op, c.seq, c.value, c.extra)),
            Ok((OP_SKETCH, 4, 1024, 5000))
        );
        assert_eq!(sketch_chunk(&f[..len]), Some(&data[..]));
        let mut g = f;
        g[100] ^= 4;
        assert_eq!(verify(&g[..len], &KEY, NONCE), Err(ControlError::BadTag));
        // A chunk length past the limit or the frame is refused, not read.
        let mut g = f;
        g[30..32].copy_from_slice(&2000u16.to_le_bytes());
        assert_eq!(verify(&g[..len], &KEY, NONCE), Err(ControlError::Truncated));
    }

    #[test]
    fn guard_refuses_stale_sequence_numbers() {
        let mut g = Guard::default();
        let c = |seq| Control {
            op: OP_SYNC,
            seq,
            value: 0,
            extra: 0,
        };
        assert!(g.accept(&c(0)) && g.accept(&c(1)) && g.accept(&c(1)) && g.accept(&c(5)));
        assert!(!g.accept(&c(4)));
        g.reject();
        assert_eq!(g.rejected, 2);
    }

    #[test]
    fn tags_cover_both_nonces_and_the_version() {
        let c = Control {
            op: OP_ACK,
            seq: 2,
            value: 77,
            extra: 0,
        };
        let f = build(SRC, c, &KEY, NONCE);
        // Another boot, another session, the announcement's "no session yet".
        for s in [
            Session {
                device: NONCE.device ^ 1,
                ..NONCE
            },
            Session {
                host: NONCE.host ^ 1,
                ..NONCE
            },
            Session::announce(NONCE.device),
        ] {
            assert_eq!(verify(&f, &KEY, s), Err(ControlError::BadTag));
        }
        // A version 1 frame (byte 17 = 0) is refused before its tag is looked at.
        let mut g = f;
        g[17] = 0;
        assert_eq!(verify(&g, &KEY, NONCE), Err(ControlError::Version(0)));
    }

    #[test]
    fn device_nonces_differ_by_counter_or_entropy_alone() {
        // Two boots in one second: the same clock, a counter one apart — or, on a
        // board whose counter was lost, two TRNG draws.
        let n = |counter, entropy| device_nonce(&KEY, counter, entropy);
        assert_ne!(n(41, 0), n(42, 0));
        assert_ne!(n(0, 0x1111), n(0, 0x2222));
        assert_eq!(n(42, 9), n(42, 9));
        assert_ne!(device_nonce(&Seed::new(1, 1), 42, 9), n(42, 9));
    }

    #[test]
    fn ready_nonce_halves() {
        let c = Control {
            op: OP_READY,
            seq: 0,
            value: 0x0bad_cafe,
            extra: 0xfeed_f00d,
        };
        assert_eq!(c.nonce(), 0xfeed_f00d_0bad_cafe);
        assert_eq!(Control::with_nonce(OP_READY, c.nonce()), c);
    }
}
