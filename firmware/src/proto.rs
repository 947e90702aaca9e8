//! The flow-control protocol between `loxo replay` and the firmware: small
//! Ethernet frames of a local-experimental EtherType.
//!
//! Layout after the 14-byte Ethernet header: `b"LX"`, op (u8), 0 (u8),
//! `seq` (u32 LE), `value` (u32 LE), `extra` (u32 LE) — 16 bytes, padded to
//! the 60-byte Ethernet minimum.
//!
//! | op | direction | meaning |
//! |---|---|---|
//! | READY | fw → host | RX is enabled; repeated until the first host frame |
//! | SYNC  | host → fw | end of batch `seq` |
//! | ACK   | fw → host | batch `seq` consumed; `value` = frames counted so far |
//! | END   | host → fw | no more frames; `value` = data frames sent |
//! | DONE  | fw → host | verdict in `extra` (0 = ok), `value` = frames counted |
//! | SKETCH | fw → host | one chunk of an epoch's distinct-flow sketch (below) |
//!
//! SKETCH frames ship each epoch's `Hll<14>` of flows in the loxo wire format
//! (`docs/format.md`), cut into chunks: `seq` = epoch, `value` = the chunk's
//! offset in the encoded sketch, `extra` = the sketch's total length, then a
//! `u16` LE chunk length at offset 30 and the chunk's bytes from offset 32
//! (at most [`SKETCH_CHUNK`] bytes). Chunks are sent in order; `loxo replay
//! --sketch-dir DIR` reassembles them into `DIR/epoch-<seq>.loxo`.

/// IEEE 802 local experimental EtherType 1.
pub(crate) const ETHERTYPE: u16 = 0x88B5;
pub(crate) const OP_READY: u8 = 1;
pub(crate) const OP_SYNC: u8 = 2;
pub(crate) const OP_ACK: u8 = 3;
pub(crate) const OP_END: u8 = 4;
pub(crate) const OP_DONE: u8 = 5;
pub(crate) const OP_SKETCH: u8 = 6;
/// Sketch bytes per SKETCH frame (frame length 32 + chunk ≤ 1 056 bytes).
pub(crate) const SKETCH_CHUNK: usize = 1024;

/// Builds a SKETCH frame carrying `chunk` (at most [`SKETCH_CHUNK`] bytes) of the
/// `total`-byte sketch of `epoch` at `offset`; returns the buffer and its length.
pub(crate) fn build_sketch(
    src: [u8; 6],
    epoch: u32,
    offset: u32,
    total: u32,
    chunk: &[u8],
) -> ([u8; 32 + SKETCH_CHUNK], usize) {
    let mut f = [0u8; 32 + SKETCH_CHUNK];
    let head = build(
        src,
        Control {
            op: OP_SKETCH,
            seq: epoch,
            value: offset,
            extra: total,
        },
    );
    f[..30].copy_from_slice(&head[..30]);
    let n = chunk.len().min(SKETCH_CHUNK);
    f[30..32].copy_from_slice(&(n as u16).to_le_bytes());
    f[32..32 + n].copy_from_slice(&chunk[..n]);
    (f, (32 + n).max(60))
}

/// A decoded control message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Control {
    pub(crate) op: u8,
    pub(crate) seq: u32,
    pub(crate) value: u32,
    pub(crate) extra: u32,
}

/// Returns the control message a frame carries, if it is one.
pub(crate) fn parse(frame: &[u8]) -> Option<Control> {
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

/// Builds a 60-byte control frame from `src` (broadcast destination).
pub(crate) fn build(src: [u8; 6], c: Control) -> [u8; 60] {
    let mut f = [0u8; 60];
    f[..6].copy_from_slice(&[0xFF; 6]);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    f[14..16].copy_from_slice(b"LX");
    f[16] = c.op;
    f[18..22].copy_from_slice(&c.seq.to_le_bytes());
    f[22..26].copy_from_slice(&c.value.to_le_bytes());
    f[26..30].copy_from_slice(&c.extra.to_le_bytes());
    f
}
