//! The IPFIX message header (RFC 7011 §3.1): a checked view and its [`MessageRepr`].
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |       Version Number (10)     |            Length             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           Export Time                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       Sequence Number                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                    Observation Domain ID                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```

use crate::wire::{be16, be32, put16, put32};
use crate::Error;

/// The IPFIX version number.
pub const VERSION: u16 = 10;

/// Length of the message header.
pub const HEADER_LEN: usize = 16;

/// A view of an IPFIX message: the 16-byte header and the sets after it.
///
/// [`new_checked`](Self::new_checked) validates once that the buffer holds the header,
/// that the version is 10 and that the length field lies between 16 and the buffer's
/// length; every accessor after it is panic-free. Bytes past the length field are not
/// part of the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MessageHeader<T> {
    /// A view of `buffer` without checks: accessors read 0 where bytes are missing.
    /// Use [`new_checked`](Self::new_checked) on input.
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// A view of `buffer`, checked: [`Error::Truncated`] if it is shorter than the
    /// header, [`Error::Version`] if the version is not 10, [`Error::MessageLength`]
    /// if the length field is below 16 or above `buffer`'s length.
    ///
    /// # Errors
    /// As above.
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let h = Self::new_unchecked(buffer);
        h.check()?;
        Ok(h)
    }

    fn check(&self) -> Result<(), Error> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != VERSION {
            return Err(Error::Version(self.version()));
        }
        let len = usize::from(self.length());
        if len < HEADER_LEN || len > b.len() {
            return Err(Error::MessageLength);
        }
        Ok(())
    }

    /// The version number (10).
    pub fn version(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    /// The message's length in bytes, header included.
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    /// Seconds since 1970-01-01 UTC when the message left the exporter.
    pub fn export_time(&self) -> u32 {
        be32(self.buffer.as_ref(), 4)
    }

    /// Data records sent in this observation domain before this message, mod 2³².
    pub fn sequence_number(&self) -> u32 {
        be32(self.buffer.as_ref(), 8)
    }

    /// The observation domain.
    pub fn observation_domain_id(&self) -> u32 {
        be32(self.buffer.as_ref(), 12)
    }

    /// The sets: the bytes after the header up to the message's length.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        b.get(HEADER_LEN..usize::from(self.length())).unwrap_or(&[])
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MessageHeader<T> {
    /// Sets the version number.
    pub fn set_version(&mut self, v: u16) {
        put16(self.buffer.as_mut(), 0, v);
    }

    /// Sets the length.
    pub fn set_length(&mut self, v: u16) {
        put16(self.buffer.as_mut(), 2, v);
    }

    /// Sets the export time.
    pub fn set_export_time(&mut self, v: u32) {
        put32(self.buffer.as_mut(), 4, v);
    }

    /// Sets the sequence number.
    pub fn set_sequence_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), 8, v);
    }

    /// Sets the observation domain.
    pub fn set_observation_domain_id(&mut self, v: u32) {
        put32(self.buffer.as_mut(), 12, v);
    }
}

/// The meaningful fields of a message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessageRepr {
    /// The message's length, header included.
    pub length: u16,
    /// Seconds since 1970-01-01 UTC.
    pub export_time: u32,
    /// Data records sent in this observation domain before this message, mod 2³².
    pub sequence_number: u32,
    /// The observation domain.
    pub observation_domain_id: u32,
}

impl MessageRepr {
    /// The header of a checked view.
    pub fn parse<T: AsRef<[u8]>>(h: &MessageHeader<T>) -> Self {
        Self {
            length: h.length(),
            export_time: h.export_time(),
            sequence_number: h.sequence_number(),
            observation_domain_id: h.observation_domain_id(),
        }
    }

    /// Writes the header (version 10) into the first 16 bytes of `h`'s buffer; missing
    /// bytes are not written (size the buffer with [`HEADER_LEN`]).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut MessageHeader<T>) {
        h.set_version(VERSION);
        h.set_length(self.length);
        h.set_export_time(self.export_time);
        h.set_sequence_number(self.sequence_number);
        h.set_observation_domain_id(self.observation_domain_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        let mut b = [0u8; 20];
        assert_eq!(
            MessageHeader::new_checked(&b[..15]).err(),
            Some(Error::Truncated)
        );
        assert_eq!(
            MessageHeader::new_checked(&b[..]).err(),
            Some(Error::Version(0))
        );
        b[1] = 10;
        assert_eq!(
            MessageHeader::new_checked(&b[..]).err(),
            Some(Error::MessageLength)
        );
        b[3] = 21;
        assert_eq!(
            MessageHeader::new_checked(&b[..]).err(),
            Some(Error::MessageLength)
        );
        b[3] = 18;
        let h = MessageHeader::new_checked(&b[..]).ok();
        assert_eq!(h.map(|h| h.payload().len()), Some(2));
    }

    #[test]
    fn round_trip() {
        let r = MessageRepr {
            length: 16,
            export_time: 0x0102_0304,
            sequence_number: 0xa0b0_c0d0,
            observation_domain_id: 7,
        };
        let mut b = [0u8; 16];
        r.emit(&mut MessageHeader::new_unchecked(&mut b[..]));
        assert_eq!(
            b,
            [0, 10, 0, 16, 1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0, 0, 0, 0, 7]
        );
        let h = MessageHeader::new_checked(&b[..]);
        assert_eq!(h.map(|h| MessageRepr::parse(&h)), Ok(r));
    }
}
