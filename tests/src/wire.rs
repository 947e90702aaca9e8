//! Crafting loxo frames in tests: the CRC-32 the format names, computed here bitwise
//! (independent of the `crc` crate the library uses), and re-signing edited frames so
//! that a test reaches the family decoders behind the envelope's checksum.

/// CRC-32/ISO-HDLC (reflected, polynomial 0xEDB88320, initial and final XOR all ones),
/// bitwise: the reference `docs/format.md` names.
#[must_use]
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Re-signs an edited frame: a fresh CRC over everything before its 4-byte trailer.
///
/// # Panics
/// If `frame` is shorter than the trailer.
pub fn resign(frame: &mut [u8]) {
    let n = frame.len() - loxo_core::wire::TRAILER_LEN;
    let crc = crc32(&frame[..n]);
    frame[n..].copy_from_slice(&crc.to_le_bytes());
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc32_check_value() {
        // The catalogue's check value of CRC-32/ISO-HDLC.
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }
}
