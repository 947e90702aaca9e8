//! [`Decoder`]: IPFIX messages back into templates and records, for tests, host tools
//! and collectors of loxo's export; other exporters' messages are read too, their
//! unknown templates skipped.

use crate::message::{MessageHeader, MessageRepr};
use crate::participant::ParticipantRecord;
use crate::record::{DataRecords, EpochRecord, FlowRecord};
use crate::set::{SetKind, Sets};
use crate::template::{FieldSpec, Template, TemplateRecord};
use crate::Error;

/// One learned template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot<const F: usize> {
    used: bool,
    domain: u32,
    id: u16,
    scope_count: u16,
    count: u16,
    fields: [FieldSpec; F],
}

impl<const F: usize> Slot<F> {
    const EMPTY: Self = Self {
        used: false,
        domain: 0,
        id: 0,
        scope_count: 0,
        count: 0,
        fields: [FieldSpec::iana(0, 0); F],
    };

    fn template(&self) -> Template<'_> {
        let n = usize::from(self.count).min(F);
        Template::new(
            self.id,
            self.scope_count,
            self.fields.get(..n).unwrap_or(&[]),
        )
    }
}

/// What a message holds, item by item ([`Message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'m> {
    /// A template or options template record (field count 0: a withdrawal).
    Template {
        /// Template ID.
        id: u16,
        /// Scope fields (0: a template, ≥ 1: an options template).
        scope_count: u16,
        /// Fields.
        field_count: u16,
        /// Whether the decoder holds it now (false when it has more fields than `F`
        /// or the decoder has no free slot: its data sets are then skipped).
        learned: bool,
    },
    /// A flow record (any template with both addresses of one family).
    Flow(FlowRecord),
    /// loxo's epoch options record.
    Epoch(EpochRecord),
    /// A DDoS participant: any template with a distinct-count element (IANA
    /// 378–383, or loxo's distinct destination ports) and its key's address.
    Participant(ParticipantRecord),
    /// A record of a known template that is neither: its template ID and bytes.
    Record {
        /// Template ID.
        template_id: u16,
        /// The record's bytes.
        bytes: &'m [u8],
    },
    /// A data set whose template the decoder does not know: skipped whole.
    Skipped {
        /// Its set ID (the template ID).
        set_id: u16,
        /// Its length, header included.
        len: u16,
    },
}

/// An IPFIX decoder: learns templates per observation domain from the messages it
/// reads and parses data records with them.
///
/// Holds up to `T` templates of up to `F` fields each, inline (`T · (14 + 12·F)`
/// bytes, about 6.4 KiB for the default 16 × 32); no allocation. Every malformed or
/// truncated message is an [`Error`] value, never a panic. Template withdrawals are
/// honoured; a template the decoder cannot hold is reported (`learned: false`) and its
/// data sets skipped.
///
/// ```
/// use loxo_ipfix::{Decoder, Item};
/// // A message with one template set: template 256, sourceIPv4Address and
/// // destinationIPv4Address (RFC 7011 §3.4.1 layout, built by hand).
/// let msg = [
///     0, 10, 0, 32, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, // header
///     0, 2, 0, 16, 1, 0, 0, 2, 0, 8, 0, 4, 0, 12, 0, 4, // template set
/// ];
/// let mut d = Decoder::<4, 8>::new();
/// let mut items = d.read(&msg)?;
/// assert_eq!(items.header().observation_domain_id, 7);
/// assert!(matches!(items.next(), Some(Ok(Item::Template { id: 256, learned: true, .. }))));
/// assert!(items.next().is_none());
/// # Ok::<(), loxo_ipfix::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Decoder<const T: usize = 16, const F: usize = 32> {
    slots: [Slot<F>; T],
}

impl<const T: usize, const F: usize> Default for Decoder<T, F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const T: usize, const F: usize> Decoder<T, F> {
    /// A decoder that knows no template.
    pub const fn new() -> Self {
        Self {
            slots: [Slot::EMPTY; T],
        }
    }

    /// The template `id` of observation domain `domain`, if learned.
    pub fn template(&self, domain: u32, id: u16) -> Option<Template<'_>> {
        self.find(domain, id)
            .and_then(|i| self.slots.get(i))
            .map(Slot::template)
    }

    /// Forgets every template (a new transport session).
    pub fn clear(&mut self) {
        self.slots = [Slot::EMPTY; T];
    }

    fn find(&self, domain: u32, id: u16) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.used && s.domain == domain && s.id == id)
    }

    /// Reads a message: its header now, its items from the returned iterator (which
    /// learns templates as it meets them).
    ///
    /// # Errors
    /// The header's errors ([`MessageHeader::new_checked`]); the items carry the rest.
    pub fn read<'d, 'm>(&'d mut self, message: &'m [u8]) -> Result<Message<'d, 'm, T, F>, Error> {
        let h = MessageHeader::new_checked(message)?;
        let header = MessageRepr::parse(&h);
        let payload = message
            .get(crate::message::HEADER_LEN..usize::from(header.length))
            .unwrap_or(&[]);
        Ok(Message {
            decoder: self,
            header,
            sets: Sets::new(payload),
            current: Current::None,
        })
    }

    /// Learns (or withdraws) one template record; returns whether it is held.
    fn learn<B: AsRef<[u8]>>(&mut self, domain: u32, t: &TemplateRecord<B>) -> bool {
        let id = t.template_id();
        let existing = self.find(domain, id);
        if t.is_withdrawal() {
            if let Some(s) = existing.and_then(|i| self.slots.get_mut(i)) {
                s.used = false;
            }
            return false;
        }
        let count = usize::from(t.field_count());
        let slot = existing.or_else(|| self.slots.iter().position(|s| !s.used));
        let Some(s) = slot.and_then(|i| self.slots.get_mut(i)) else {
            return false;
        };
        if count > F {
            // Too large to hold: forget an older version so that its data sets are
            // skipped rather than misread.
            s.used = false;
            return false;
        }
        *s = Slot {
            used: true,
            domain,
            id,
            scope_count: t.scope_count(),
            count: t.field_count(),
            fields: [FieldSpec::iana(0, 0); F],
        };
        for (d, f) in s.fields.iter_mut().zip(t.fields()) {
            *d = f;
        }
        true
    }
}

/// Where the iterator is inside a set.
#[derive(Debug, Clone, Copy)]
enum Current<'m> {
    None,
    Templates { rest: &'m [u8], options: bool },
    Data { slot: usize, rest: &'m [u8] },
}

/// The items of one message ([`Decoder::read`]). After an error it ends.
#[derive(Debug)]
pub struct Message<'d, 'm, const T: usize, const F: usize> {
    decoder: &'d mut Decoder<T, F>,
    header: MessageRepr,
    sets: Sets<'m>,
    current: Current<'m>,
}

impl<const T: usize, const F: usize> Message<'_, '_, T, F> {
    /// The message header.
    pub const fn header(&self) -> MessageRepr {
        self.header
    }
}

/// One step of the iterator: an item, or move on (end of a set, padding).
type Step<'m> = Option<Result<Item<'m>, Error>>;

impl<'m, const T: usize, const F: usize> Message<'_, 'm, T, F> {
    fn fail(&mut self, e: Error) -> Result<Item<'m>, Error> {
        self.sets = Sets::new(&[]);
        self.current = Current::None;
        Err(e)
    }

    fn next_template(&mut self, rest: &'m [u8], options: bool) -> Step<'m> {
        // Padding: fewer bytes than a template record header.
        if rest.len() < 4 {
            self.current = Current::None;
            return None;
        }
        match TemplateRecord::new_checked(rest, options) {
            Ok(t) => {
                self.current = Current::Templates {
                    rest: rest.get(t.len()..).unwrap_or(&[]),
                    options,
                };
                let learned = self.decoder.learn(self.header.observation_domain_id, &t);
                Some(Ok(Item::Template {
                    id: t.template_id(),
                    scope_count: t.scope_count(),
                    field_count: t.field_count(),
                    learned,
                }))
            }
            Err(e) => Some(self.fail(e)),
        }
    }

    fn next_record(&mut self, slot: usize, rest: &'m [u8]) -> Step<'m> {
        let Some(s) = self.decoder.slots.get(slot) else {
            return Some(self.fail(Error::Template));
        };
        let t = s.template();
        let record = match DataRecords::new(t, rest).next() {
            None => {
                self.current = Current::None;
                return None;
            }
            Some(Err(e)) => return Some(self.fail(e)),
            Some(Ok(r)) => r,
        };
        // Participants first: a vertical scan's template has both addresses.
        let item = if let Some(r) = ParticipantRecord::parse(&t, record) {
            r.map(Item::Participant)
        } else if let Some(r) = FlowRecord::parse(&t, record) {
            r.map(Item::Flow)
        } else if let Some(r) = EpochRecord::parse(&t, record) {
            r.map(Item::Epoch)
        } else {
            Ok(Item::Record {
                template_id: t.id,
                bytes: record,
            })
        };
        self.current = Current::Data {
            slot,
            rest: rest.get(record.len()..).unwrap_or(&[]),
        };
        match item {
            Ok(i) => Some(Ok(i)),
            Err(e) => Some(self.fail(e)),
        }
    }
}

impl<'m, const T: usize, const F: usize> Iterator for Message<'_, 'm, T, F> {
    type Item = Result<Item<'m>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        // A loop, not recursion: a message may hold thousands of empty sets.
        loop {
            let step = match self.current {
                Current::Templates { rest, options } => self.next_template(rest, options),
                Current::Data { slot, rest } => self.next_record(slot, rest),
                Current::None => {
                    let set = match self.sets.next()? {
                        Ok(s) => s,
                        Err(e) => return Some(self.fail(e)),
                    };
                    let (kind, len) = (set.kind(), set.length());
                    let body = set.into_body();
                    match kind {
                        SetKind::Template => self.next_template(body, false),
                        SetKind::OptionsTemplate => self.next_template(body, true),
                        SetKind::Data(id) => {
                            match self.decoder.find(self.header.observation_domain_id, id) {
                                Some(slot) => self.next_record(slot, body),
                                None => Some(Ok(Item::Skipped { set_id: id, len })),
                            }
                        }
                    }
                }
            };
            if step.is_some() {
                return step;
            }
        }
    }
}
