//! One `TPACKET_V3` block, parsed as bytes: its frames, each with its wire length and
//! VLAN tag. Safe code, bounds-checked: a malformed block ends the iteration.
//!
//! ```text
//! block descriptor (struct tpacket_block_desc, hdr.bh1):
//!   0 version  4 offset_to_priv  8 block_status  12 num_pkts  16 offset_to_first_pkt
//!   20 blk_len  24 seq_num (u64) …
//! each frame (struct tpacket3_hdr), at offset_to_first_pkt then + tp_next_offset:
//!   0 tp_next_offset  4 tp_sec  8 tp_nsec  12 tp_snaplen  16 tp_len  20 tp_status
//!   24 tp_mac (u16)  26 tp_net (u16)  28 hv1.tp_rxhash  32 hv1.tp_vlan_tci
//!   36 hv1.tp_vlan_tpid (u16)
//! ```

/// `TP_STATUS_VLAN_VALID`: the frame had a VLAN tag, which the kernel took out of the
/// frame's bytes (VLAN offload) and put in `tp_vlan_tci`.
pub const VLAN_VALID: u32 = 1 << 4;
/// `TP_STATUS_VLAN_TPID_VALID`: `tp_vlan_tpid` holds the tag's TPID.
pub const VLAN_TPID_VALID: u32 = 1 << 6;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let x: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_ne_bytes(x))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let x: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_ne_bytes(x))
}

/// One captured frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The captured bytes from the link-layer header (without a VLAN tag the kernel
    /// took out: see [`vlan`](Self::vlan)).
    pub data: &'a [u8],
    /// The frame's length on the wire (as the kernel saw it, tag excluded).
    pub wire_len: u32,
    /// The VLAN tag the kernel took out of the frame: (TPID, TCI).
    pub vlan: Option<(u16, u16)>,
    /// Receive time: seconds and nanoseconds since 1970.
    pub time: (u32, u32),
}

impl Frame<'_> {
    /// The frame as it was on the wire: its bytes with the VLAN tag put back after the
    /// MAC addresses, written into `out` (cleared first); returns the bytes and the
    /// wire length, both with the tag. A frame without a taken-out tag is copied as is.
    ///
    /// ```
    /// use loxo_afpacket::Frame;
    /// let f = Frame { data: &[1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 0x08, 0x00, 0x45], wire_len: 15,
    ///                 vlan: Some((0x8100, 7)), time: (0, 0) };
    /// let mut out = Vec::new();
    /// let (bytes, wire) = f.with_vlan(&mut out);
    /// assert_eq!(&bytes[12..18], &[0x81, 0x00, 0, 7, 0x08, 0x00]);
    /// assert_eq!(wire, 19);
    /// ```
    pub fn with_vlan<'o>(&self, out: &'o mut Vec<u8>) -> (&'o [u8], u32) {
        out.clear();
        if let (Some((tpid, tci)), Some((macs, rest))) = (self.vlan, self.data.split_at_checked(12))
        {
            out.extend_from_slice(macs);
            out.extend_from_slice(&tpid.to_be_bytes());
            out.extend_from_slice(&tci.to_be_bytes());
            out.extend_from_slice(rest);
            (out.as_slice(), self.wire_len.saturating_add(4))
        } else {
            out.extend_from_slice(self.data);
            (out.as_slice(), self.wire_len)
        }
    }
}

/// The frames of one block (`num_pkts` of them at most), in order.
#[derive(Debug, Clone)]
pub struct BlockFrames<'a> {
    block: &'a [u8],
    left: u32,
    at: usize,
}

impl<'a> BlockFrames<'a> {
    /// The frames of `block`, a whole `TPACKET_V3` block (its descriptor first).
    pub fn new(block: &'a [u8]) -> Self {
        Self {
            block,
            left: u32_at(block, 12).unwrap_or(0),
            at: u32_at(block, 16).unwrap_or(0) as usize,
        }
    }
}

impl<'a> Iterator for BlockFrames<'a> {
    type Item = Frame<'a>;

    fn next(&mut self) -> Option<Frame<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let b = self.block;
        let at = self.at;
        let parsed = (|| {
            let next = u32_at(b, at)? as usize;
            let time = (u32_at(b, at + 4)?, u32_at(b, at + 8)?);
            let snaplen = u32_at(b, at + 12)? as usize;
            let wire_len = u32_at(b, at + 16)?;
            let status = u32_at(b, at + 20)?;
            let mac = u16_at(b, at + 24)? as usize;
            let tci = u32_at(b, at + 32)?;
            let tpid = u16_at(b, at + 36)?;
            let start = at.checked_add(mac)?;
            let data = b.get(start..start.checked_add(snaplen)?)?;
            let vlan = (status & VLAN_VALID != 0).then(|| {
                let tpid = if status & VLAN_TPID_VALID != 0 && tpid != 0 {
                    tpid
                } else {
                    0x8100
                };
                (tpid, tci as u16)
            });
            Some((
                next,
                Frame {
                    data,
                    wire_len,
                    vlan,
                    time,
                },
            ))
        })();
        let Some((next, f)) = parsed else {
            // A malformed frame ends the block.
            self.left = 0;
            return None;
        };
        // The last frame's next offset is 0.
        if next == 0 {
            self.left = 0;
        }
        self.at = at.saturating_add(next);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of `frames`, laid out as the kernel lays it out (48-byte descriptor,
    /// frames 16-byte aligned, data at tp_mac = 68 like TPACKET_ALIGN(48) + 20).
    fn block(frames: &[(&[u8], Option<u16>)]) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        b[12..16].copy_from_slice(&(frames.len() as u32).to_ne_bytes());
        b[16..20].copy_from_slice(&48u32.to_ne_bytes());
        let mut at = 48;
        for (i, (data, vlan)) in frames.iter().enumerate() {
            let len = (68 + data.len()).next_multiple_of(16);
            let next = if i + 1 == frames.len() { 0 } else { len as u32 };
            b[at..at + 4].copy_from_slice(&next.to_ne_bytes());
            b[at + 12..at + 16].copy_from_slice(&(data.len() as u32).to_ne_bytes());
            b[at + 16..at + 20].copy_from_slice(&(data.len() as u32 + 100).to_ne_bytes());
            if let Some(tci) = vlan {
                b[at + 20..at + 24].copy_from_slice(&VLAN_VALID.to_ne_bytes());
                b[at + 32..at + 36].copy_from_slice(&u32::from(*tci).to_ne_bytes());
            }
            b[at + 24..at + 26].copy_from_slice(&68u16.to_ne_bytes());
            b[at + 68..at + 68 + data.len()].copy_from_slice(data);
            at += len;
        }
        b
    }

    #[test]
    fn frames_of_a_block() {
        let b = block(&[(&[1; 60], None), (&[2; 1514], Some(42)), (&[3; 14], None)]);
        let f: Vec<_> = BlockFrames::new(&b).collect();
        assert_eq!(f.len(), 3);
        assert_eq!(
            (f[0].data, f[0].wire_len, f[0].vlan),
            (&[1u8; 60][..], 160, None)
        );
        assert_eq!((f[1].data.len(), f[1].vlan), (1514, Some((0x8100, 42))));
        assert_eq!(f[2].data, &[3u8; 14][..]);
    }

    #[test]
    fn malformed_blocks_end_quietly() {
        // A frame running past the block, a count larger than the frames, garbage.
        let mut b = block(&[(&[1; 60], None)]);
        b[48 + 12..48 + 16].copy_from_slice(&10_000u32.to_ne_bytes());
        assert_eq!(BlockFrames::new(&b).count(), 0);
        let mut b = block(&[(&[1; 60], None)]);
        b[12..16].copy_from_slice(&5u32.to_ne_bytes());
        assert_eq!(BlockFrames::new(&b).count(), 1);
        for len in [0, 10, 47, 100] {
            let g = vec![0xffu8; len];
            assert!(BlockFrames::new(&g).count() <= 1);
        }
    }
}
