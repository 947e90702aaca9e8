//! Sets (RFC 7011 §3.3): a checked view of one set, its kind, and the sets of a message.
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Set ID               |          Length               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  records … (and padding)                                      |
//! ```
//!
//! Set ID 2 holds template records, 3 options template records, 256 and above data
//! records of the template with that ID; 0, 1 and 4–255 are reserved.

use crate::wire::{be16, put16};
use crate::Error;

/// Length of a set header.
pub const SET_HEADER_LEN: usize = 4;

/// Set ID of a template set.
pub const TEMPLATE_SET_ID: u16 = 2;

/// Set ID of an options template set.
pub const OPTIONS_TEMPLATE_SET_ID: u16 = 3;

/// The smallest template ID, hence the smallest data set ID.
pub const MIN_TEMPLATE_ID: u16 = 256;

/// What a set holds, from its ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKind {
    /// Template records (set ID 2).
    Template,
    /// Options template records (set ID 3).
    OptionsTemplate,
    /// Data records of the template with this ID (≥ 256).
    Data(u16),
}

impl SetKind {
    /// The kind of a set ID: [`Error::SetId`] for the reserved IDs 0, 1 and 4–255.
    ///
    /// # Errors
    /// As above.
    pub const fn from_id(id: u16) -> Result<Self, Error> {
        match id {
            TEMPLATE_SET_ID => Ok(Self::Template),
            OPTIONS_TEMPLATE_SET_ID => Ok(Self::OptionsTemplate),
            MIN_TEMPLATE_ID.. => Ok(Self::Data(id)),
            _ => Err(Error::SetId(id)),
        }
    }

    /// The set ID.
    pub const fn id(self) -> u16 {
        match self {
            Self::Template => TEMPLATE_SET_ID,
            Self::OptionsTemplate => OPTIONS_TEMPLATE_SET_ID,
            Self::Data(id) => id,
        }
    }
}

/// A view of one set: header and body.
///
/// [`new_checked`](Self::new_checked) validates once that the header fits, that the
/// length field is at least 4 and no more than the buffer, and that the set ID is not
/// reserved; [`body`](Self::body) is then the set's records and padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SetHeader<T> {
    /// A view without checks (accessors read 0 where bytes are missing).
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// A checked view of the set at the start of `buffer` (bytes past its length
    /// field belong to the next set).
    ///
    /// # Errors
    /// [`Error::Truncated`] if the header does not fit, [`Error::SetLength`] if the
    /// length is below 4 or past the buffer, [`Error::SetId`] for a reserved ID.
    pub fn new_checked(buffer: T) -> Result<Self, Error> {
        let s = Self::new_unchecked(buffer);
        let n = s.buffer.as_ref().len();
        if n < SET_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = usize::from(s.length());
        if len < SET_HEADER_LEN || len > n {
            return Err(Error::SetLength);
        }
        SetKind::from_id(s.set_id())?;
        Ok(s)
    }

    /// The set ID.
    pub fn set_id(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    /// The kind of set ([`SetKind::Data`] for a reserved ID on an unchecked view).
    pub fn kind(&self) -> SetKind {
        SetKind::from_id(self.set_id()).unwrap_or(SetKind::Data(self.set_id()))
    }

    /// The set's length, header included.
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    /// The records and padding after the header.
    pub fn body(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(SET_HEADER_LEN..usize::from(self.length()))
            .unwrap_or(&[])
    }
}

impl<'a> SetHeader<&'a [u8]> {
    /// The body, borrowed for the buffer's lifetime rather than the view's.
    pub fn into_body(self) -> &'a [u8] {
        self.buffer
            .get(SET_HEADER_LEN..usize::from(self.length()))
            .unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SetHeader<T> {
    /// Sets the set ID.
    pub fn set_set_id(&mut self, id: u16) {
        put16(self.buffer.as_mut(), 0, id);
    }

    /// Sets the length.
    pub fn set_length(&mut self, len: u16) {
        put16(self.buffer.as_mut(), 2, len);
    }
}

/// The sets of a message payload ([`MessageHeader::payload`](crate::MessageHeader::payload)),
/// each checked; after an error the iterator ends.
#[derive(Debug, Clone)]
pub struct Sets<'a> {
    rest: &'a [u8],
}

impl<'a> Sets<'a> {
    /// The sets of `payload`.
    pub const fn new(payload: &'a [u8]) -> Self {
        Self { rest: payload }
    }
}

impl<'a> Iterator for Sets<'a> {
    type Item = Result<SetHeader<&'a [u8]>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match SetHeader::new_checked(self.rest) {
            Ok(s) => {
                let len = usize::from(s.length());
                let (this, rest) = self.rest.split_at_checked(len).unwrap_or((self.rest, &[]));
                self.rest = rest;
                Some(Ok(SetHeader::new_unchecked(this)))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(SetKind::from_id(2), Ok(SetKind::Template));
        assert_eq!(SetKind::from_id(3), Ok(SetKind::OptionsTemplate));
        assert_eq!(SetKind::from_id(256), Ok(SetKind::Data(256)));
        for id in [0, 1, 4, 255] {
            assert_eq!(SetKind::from_id(id), Err(Error::SetId(id)));
        }
    }

    #[test]
    fn sets_of_a_payload() {
        let p = [0, 2, 0, 4, 1, 0, 0, 6, 9, 9, 0, 3, 0, 3];
        let mut s = Sets::new(&p);
        let a = s.next();
        assert!(
            matches!(a, Some(Ok(ref h)) if h.kind() == SetKind::Template && h.body().is_empty())
        );
        let b = s.next();
        assert!(matches!(b, Some(Ok(ref h)) if h.set_id() == 256 && h.body() == [9, 9]));
        assert_eq!(s.next(), Some(Err(Error::SetLength)));
        assert_eq!(s.next(), None);
        assert_eq!(Sets::new(&[0, 2, 0]).next(), Some(Err(Error::Truncated)));
        assert_eq!(Sets::new(&[0, 9, 0, 4]).next(), Some(Err(Error::SetId(9))));
    }
}
