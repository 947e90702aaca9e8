//! Helpers shared by the fuzz targets.

use crc::{Crc, CRC_32_ISO_HDLC};

/// The frame checksum of `docs/format.md` (CRC-32/ISO-HDLC).
const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// The fuzzer's bytes made into a frame that passes the envelope's length and
/// checksum checks, so mutations reach the family decoders: the payload-length
/// field (bytes 32..36) is set to what the input holds between the 36-byte
/// header and the 4-byte trailer, and the trailer to the CRC-32 of everything
/// before it. Magic, version, kind, flags, fingerprint and parameters stay the
/// fuzzer's. Inputs shorter than a header and a trailer are returned as they are.
pub fn resign(data: &[u8]) -> Vec<u8> {
    let mut f = data.to_vec();
    let n = f.len();
    if n >= 40 {
        f[32..36].copy_from_slice(&((n - 40) as u32).to_le_bytes());
        let crc = CRC32.checksum(&f[..n - 4]);
        f[n - 4..].copy_from_slice(&crc.to_le_bytes());
    }
    f
}

/// Whether `encoded` (an encoder's output, always the current format version)
/// is the frame `input` decoded from: the same bytes, or — for an input of an
/// older version that a kind still reads — the same bytes but for the version
/// field and the CRC that covers it.
pub fn same_frame(encoded: &[u8], input: &[u8]) -> bool {
    if encoded == input {
        return true;
    }
    let n = input.len();
    let old = input
        .get(4..6)
        .is_some_and(|v| u16::from_le_bytes([v[0], v[1]]) < 2);
    old && n >= 40
        && encoded.len() == n
        && encoded[..4] == input[..4]
        && encoded[6..n - 4] == input[6..n - 4]
}
