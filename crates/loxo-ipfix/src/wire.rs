//! Panic-free big-endian reads and writes at an offset: a read past the end is 0, a
//! write past the end is dropped. The views check their lengths once in `new_checked`,
//! so these never hit the end there; they keep the accessors free of panics anyway.

/// The big-endian `u16` at `at` (0 if the buffer is too short).
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at.saturating_add(2)) {
        Some(&[x, y]) => u16::from_be_bytes([x, y]),
        _ => 0,
    }
}

/// The big-endian `u32` at `at` (0 if the buffer is too short).
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at.saturating_add(4)) {
        Some(&[x, y, z, w]) => u32::from_be_bytes([x, y, z, w]),
        _ => 0,
    }
}

/// A big-endian unsigned integer of 1 to 8 bytes (RFC 7011 §6.2 reduced-size
/// encoding), `None` for any other length.
pub(crate) fn be_uint(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 8 {
        return None;
    }
    Some(b.iter().fold(0u64, |v, &x| v << 8 | u64::from(x)))
}

/// Writes `bytes` at `at` (nothing if they do not fit).
pub(crate) fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(d) = b.get_mut(at..at.saturating_add(bytes.len())) {
        d.copy_from_slice(bytes);
    }
}

/// Writes a big-endian `u16` at `at`.
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    put(b, at, &v.to_be_bytes());
}

/// Writes a big-endian `u32` at `at`.
pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    put(b, at, &v.to_be_bytes());
}

/// A cursor that appends to a buffer whose room was checked before (writes past its
/// end are dropped, never a panic).
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, at: 0 }
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        put(self.buf, self.at, bytes);
        self.at = self.at.saturating_add(bytes.len());
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }

    /// Bytes written so far.
    pub(crate) const fn len(&self) -> usize {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_stay_inside() {
        let mut b = [0u8; 3];
        put32(&mut b, 0, 0x0102_0304);
        assert_eq!(b, [0; 3]);
        put16(&mut b, 1, 0x0102);
        assert_eq!(b, [0, 1, 2]);
        assert_eq!(be16(&b, 1), 0x0102);
        assert_eq!(be16(&b, 2), 0);
        assert_eq!(be32(&b, usize::MAX), 0);
        assert_eq!(be_uint(&[1, 2, 3]), Some(0x0001_0203));
        assert_eq!(be_uint(&[]), None);
        assert_eq!(be_uint(&[0; 9]), None);
        let mut w = Writer::new(&mut b);
        w.u16(0xaabb);
        w.u16(0xccdd);
        assert_eq!(w.len(), 4);
        assert_eq!(b, [0xaa, 0xbb, 2]);
    }
}
