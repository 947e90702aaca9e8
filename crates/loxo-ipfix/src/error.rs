//! [`Error`]: why a message could not be built or read.

use core::fmt;

/// Why an IPFIX message could not be built ([`Exporter`](crate::Exporter)) or read
/// ([`Decoder`](crate::Decoder), the wire views' `new_checked`).
///
/// Every malformed or truncated input maps to one of these values; no input makes the
/// decoder panic or read past the bytes it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// The report's bytes are not IP bytes (`Report::byte_weight` is not
    /// `ByteWeight::Ip`): `octetDeltaCount` counts IP header + payload (RFC 7012),
    /// so a report of Ethernet frame lengths would export wrong figures.
    NotIpBytes,
    /// The configured maximum message length cannot hold a message header with the
    /// templates, or with one data set of one record: at least `min` bytes.
    MessageTooSmall {
        /// The smallest maximum message length the exporter accepts.
        min: u16,
    },
    /// The caller's buffer is shorter than the smallest message the exporter may need
    /// to write (its `min` bytes, [`Config::min_message_len`](crate::Config::min_message_len)).
    BufferTooSmall {
        /// Bytes the buffer must hold.
        min: u16,
    },
    /// [`Exporter::participant_messages`](crate::Exporter::participant_messages)
    /// without the participant templates: turn on
    /// [`Config::participant_records`](crate::Config::participant_records).
    NoParticipantTemplates,
    /// [`Exporter::loss_message`](crate::Exporter::loss_message) without the loss
    /// template: turn on [`Config::loss_records`](crate::Config::loss_records).
    NoLossTemplate,
    /// Fewer bytes than a header or a length field announces.
    Truncated,
    /// The message header's version is not 10 (IPFIX).
    Version(u16),
    /// The message header's length is below 16 or above the bytes given.
    MessageLength,
    /// A set header's length is below 4 or runs past the message.
    SetLength,
    /// A set ID of the reserved ranges (0, 1, 4–255).
    SetId(u16),
    /// A template or options template record is malformed: an ID below 256, a field
    /// specifier past the end of its set, or a scope field count of 0 or above the
    /// field count.
    Template,
    /// A known field has a length its type does not allow (an address not 4 or 16
    /// bytes, an integer of 0 or more than 8 bytes), or a variable-length field runs
    /// past its record.
    FieldLength,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotIpBytes => f.write_str(
                "the report's bytes are not IP bytes: configure the monitor with ByteWeight::Ip",
            ),
            Self::MessageTooSmall { min } => {
                write!(f, "maximum message length too small: at least {min} bytes")
            }
            Self::BufferTooSmall { min } => {
                write!(f, "message buffer too small: at least {min} bytes")
            }
            Self::NoParticipantTemplates => f.write_str(
                "participant records are off: set Config::participant_records to announce their templates",
            ),
            Self::NoLossTemplate => f.write_str(
                "loss records are off: set Config::loss_records to announce their template",
            ),
            Self::Truncated => f.write_str("truncated message"),
            Self::Version(v) => write!(f, "not an IPFIX message (version {v}, expected 10)"),
            Self::MessageLength => f.write_str("bad message length"),
            Self::SetLength => f.write_str("bad set length"),
            Self::SetId(id) => write!(f, "reserved set id {id}"),
            Self::Template => f.write_str("malformed template record"),
            Self::FieldLength => f.write_str("bad field length"),
        }
    }
}

impl core::error::Error for Error {}
