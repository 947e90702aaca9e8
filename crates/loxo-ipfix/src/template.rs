//! Template and options template records (RFC 7011 §3.4.1–3.4.2): field specifiers,
//! a checked view of one record, and [`Template`], its representation.
//!
//! ```text
//! template record:          Template ID (≥ 256) | Field Count
//! options template record:  Template ID (≥ 256) | Field Count | Scope Field Count
//! then Field Count field specifiers, scope fields first:
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |E|  Information Element ID     |        Field Length           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |     Enterprise Number (only when E = 1)                       |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! A record with Field Count 0 withdraws its template (4 bytes, no scope count).

use crate::set::MIN_TEMPLATE_ID;
use crate::wire::{be16, be32, Writer};
use crate::Error;

/// Field length announcing a variable-length field (RFC 7011 §7).
pub const VARIABLE_LENGTH: u16 = 0xffff;

const ENTERPRISE_BIT: u16 = 0x8000;

/// One field specifier: an information element and its length in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FieldSpec {
    /// The element's ID (15 bits; the enterprise bit is [`enterprise`](Self::enterprise)).
    pub id: u16,
    /// Bytes per record, or [`VARIABLE_LENGTH`].
    pub len: u16,
    /// The private enterprise number of an enterprise-specific element, `None` for an
    /// IANA element.
    pub enterprise: Option<u32>,
}

impl FieldSpec {
    /// An IANA element.
    pub const fn iana(id: u16, len: u16) -> Self {
        Self {
            id,
            len,
            enterprise: None,
        }
    }

    /// An enterprise-specific element.
    pub const fn enterprise(id: u16, len: u16, pen: u32) -> Self {
        Self {
            id,
            len,
            enterprise: Some(pen),
        }
    }

    /// Bytes of the specifier on the wire: 4, or 8 with an enterprise number.
    pub const fn wire_len(&self) -> usize {
        if self.enterprise.is_some() {
            8
        } else {
            4
        }
    }

    /// Whether this is element `id` of enterprise `pen` (`None`: IANA).
    pub fn is(&self, pen: Option<u32>, id: u16) -> bool {
        self.id == id && self.enterprise == pen
    }

    fn emit(&self, w: &mut Writer<'_>) {
        match self.enterprise {
            None => {
                w.u16(self.id & !ENTERPRISE_BIT);
                w.u16(self.len);
            }
            Some(pen) => {
                w.u16(self.id | ENTERPRISE_BIT);
                w.u16(self.len);
                w.u32(pen);
            }
        }
    }
}

/// A template: its ID, how many of its first fields are scope fields (0 for a plain
/// template, ≥ 1 for an options template) and its field specifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template<'a> {
    /// Template ID (≥ 256): the set ID of its data sets.
    pub id: u16,
    /// Scope fields (options templates), 0 for a template.
    pub scope_count: u16,
    /// The fields, scope fields first.
    pub fields: &'a [FieldSpec],
}

impl<'a> Template<'a> {
    /// A template (`scope_count` = 0) or options template.
    pub const fn new(id: u16, scope_count: u16, fields: &'a [FieldSpec]) -> Self {
        Self {
            id,
            scope_count,
            fields,
        }
    }

    /// Whether this is an options template.
    pub const fn is_options(&self) -> bool {
        self.scope_count > 0
    }

    /// Bytes of the template record on the wire.
    pub const fn wire_len(&self) -> usize {
        let mut n = if self.is_options() { 6 } else { 4 };
        let mut i = 0;
        while i < self.fields.len() {
            n += self.fields[i].wire_len();
            i += 1;
        }
        n
    }

    /// Bytes of each data record, `None` when a field is variable-length.
    pub const fn record_len(&self) -> Option<usize> {
        let mut n = 0;
        let mut i = 0;
        while i < self.fields.len() {
            if self.fields[i].len == VARIABLE_LENGTH {
                return None;
            }
            n += self.fields[i].len as usize;
            i += 1;
        }
        Some(n)
    }

    /// Bytes of the shortest possible data record (a variable-length field counts its
    /// 1-byte length prefix): data set padding is shorter than this.
    pub fn min_record_len(&self) -> usize {
        self.fields
            .iter()
            .map(|f| {
                if f.len == VARIABLE_LENGTH {
                    1
                } else {
                    usize::from(f.len)
                }
            })
            .sum()
    }

    /// Writes the template record at the start of `buf`; returns its length
    /// ([`wire_len`](Self::wire_len)). Bytes past `buf`'s end are not written: size it
    /// first.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u16(self.id);
        w.u16(self.fields.len() as u16);
        if self.is_options() {
            w.u16(self.scope_count);
        }
        for f in self.fields {
            f.emit(&mut w);
        }
        w.len()
    }
}

/// A checked view of one (options) template record at the start of a buffer.
///
/// [`new_checked`](Self::new_checked) walks the specifiers once: every one must lie
/// inside the buffer, the ID must be ≥ 256, and an options template's scope count must
/// be between 1 and its field count. [`fields`](Self::fields) then iterates them
/// without further checks; [`len`](Self::len) is the record's length, where the next
/// record starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateRecord<T: AsRef<[u8]>> {
    buffer: T,
    options: bool,
    len: usize,
}

impl<T: AsRef<[u8]>> TemplateRecord<T> {
    /// The record at the start of `buffer`, from a template set (`options` = false) or
    /// an options template set (`true`).
    ///
    /// # Errors
    /// [`Error::Truncated`] when the header or a specifier runs past `buffer`,
    /// [`Error::Template`] for an ID below 256 or a bad scope count.
    pub fn new_checked(buffer: T, options: bool) -> Result<Self, Error> {
        let b = buffer.as_ref();
        if b.len() < 4 {
            return Err(Error::Truncated);
        }
        let (id, count) = (be16(b, 0), be16(b, 2));
        if id < MIN_TEMPLATE_ID {
            return Err(Error::Template);
        }
        let mut at = 4;
        if options && count > 0 {
            if b.len() < 6 {
                return Err(Error::Truncated);
            }
            let scope = be16(b, 4);
            if scope == 0 || scope > count {
                return Err(Error::Template);
            }
            at = 6;
        }
        for _ in 0..count {
            if b.len() < at + 4 {
                return Err(Error::Truncated);
            }
            at += if be16(b, at) & ENTERPRISE_BIT != 0 {
                8
            } else {
                4
            };
            if b.len() < at {
                return Err(Error::Truncated);
            }
        }
        Ok(Self {
            buffer,
            options,
            len: at,
        })
    }

    /// The template ID.
    pub fn template_id(&self) -> u16 {
        be16(self.buffer.as_ref(), 0)
    }

    /// The field count (0: a withdrawal).
    pub fn field_count(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }

    /// Scope fields: 0 for a template record, ≥ 1 for an options template record.
    pub fn scope_count(&self) -> u16 {
        if self.options && self.field_count() > 0 {
            be16(self.buffer.as_ref(), 4)
        } else {
            0
        }
    }

    /// Whether this record withdraws its template (field count 0).
    pub fn is_withdrawal(&self) -> bool {
        self.field_count() == 0
    }

    /// The record's length in bytes.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the record is empty (never: a record has at least its 4-byte header).
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The field specifiers, scope fields first.
    pub fn fields(&self) -> FieldSpecs<'_> {
        let start = if self.scope_count() > 0 { 6 } else { 4 };
        FieldSpecs {
            rest: self.buffer.as_ref().get(start..self.len).unwrap_or(&[]),
        }
    }
}

/// The field specifiers of a checked [`TemplateRecord`].
#[derive(Debug, Clone)]
pub struct FieldSpecs<'a> {
    rest: &'a [u8],
}

impl Iterator for FieldSpecs<'_> {
    type Item = FieldSpec;

    fn next(&mut self) -> Option<FieldSpec> {
        if self.rest.len() < 4 {
            return None;
        }
        let (raw, len) = (be16(self.rest, 0), be16(self.rest, 2));
        let (spec, n) = if raw & ENTERPRISE_BIT != 0 {
            let pen = be32(self.rest, 4);
            (FieldSpec::enterprise(raw & !ENTERPRISE_BIT, len, pen), 8)
        } else {
            (FieldSpec::iana(raw, len), 4)
        };
        self.rest = self.rest.get(n..).unwrap_or(&[]);
        Some(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: [FieldSpec; 3] = [
        FieldSpec::iana(8, 4),
        FieldSpec::enterprise(5, 1, 32473),
        FieldSpec::iana(1, 8),
    ];

    #[test]
    fn emit_and_view() {
        let t = Template::new(300, 1, &FIELDS);
        let mut b = [0u8; 64];
        let n = t.emit(&mut b);
        assert_eq!(n, t.wire_len());
        assert_eq!(n, 6 + 4 + 8 + 4);
        assert_eq!(
            b[..n],
            [1, 44, 0, 3, 0, 1, 0, 8, 0, 4, 0x80, 5, 0, 1, 0, 0, 0x7e, 0xd9, 0, 1, 0, 8]
        );
        let v = TemplateRecord::new_checked(&b[..n], true);
        let v = v.ok();
        assert_eq!(v.map(|v| v.len()), Some(n));
        let v = v.as_ref();
        assert_eq!(v.map(TemplateRecord::scope_count), Some(1));
        let mut got = [FieldSpec::default(); 3];
        if let Some(v) = v {
            for (g, f) in got.iter_mut().zip(v.fields()) {
                *g = f;
            }
        }
        assert_eq!(got, FIELDS);
        assert_eq!(t.record_len(), Some(13));
    }

    #[test]
    fn bad_records() {
        let t = Template::new(300, 0, &FIELDS);
        let mut b = [0u8; 64];
        let n = t.emit(&mut b);
        for cut in 0..n {
            assert_eq!(
                TemplateRecord::new_checked(&b[..cut], false).err(),
                Some(Error::Truncated),
                "{cut}"
            );
        }
        assert!(TemplateRecord::new_checked(&b[..n], false).is_ok());
        // As an options template the third byte pair (0, 8) is a scope count of 8 > 3.
        assert_eq!(
            TemplateRecord::new_checked(&b[..n], true).err(),
            Some(Error::Template)
        );
        b[0] = 0;
        assert_eq!(
            TemplateRecord::new_checked(&b[..n], false).err(),
            Some(Error::Template)
        );
        // A withdrawal: 4 bytes.
        let w = [1, 0, 0, 0];
        let v = TemplateRecord::new_checked(&w[..], true).ok();
        assert_eq!(v.map(|v| (v.len(), v.is_withdrawal())), Some((4, true)));
    }
}
