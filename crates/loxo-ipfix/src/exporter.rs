//! [`Exporter`]: an epoch's [`Report`] (and its [`ParticipantsReport`]) as a
//! sequence of IPFIX messages, one at a time into the caller's buffer.

use loxo_flow::{ByteWeight, Elephant, Participant, ParticipantsReport, Report};

use crate::ie::{self, EPOCH_TEMPLATE_ID};
use crate::loss::LossRecord;
use crate::message::{MessageHeader, MessageRepr, HEADER_LEN};
use crate::participant::ParticipantRecord;
use crate::record::{EpochRecord, FlowRecord};
use crate::set::{SetHeader, OPTIONS_TEMPLATE_SET_ID, SET_HEADER_LEN, TEMPLATE_SET_ID};
use crate::Error;

/// Exporter configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The device's observation domain (RFC 7011 §3.1): collectors keep templates and
    /// sequence numbers per domain, so every device exporting to one collector needs
    /// its own.
    pub observation_domain_id: u32,
    /// Largest message, in bytes: the UDP payload that fits the path MTU without
    /// fragmentation (1472 on a 1500-byte Ethernet MTU over IPv4, 1452 over IPv6). At
    /// least [`min_message_len`](Self::min_message_len).
    pub max_message_len: u16,
    /// Re-send the templates in the first message after this many messages (counting
    /// the one that carried them); 0 = never by count.
    pub template_refresh_messages: u32,
    /// Re-send the templates in the first message at least this many seconds of export
    /// time after they were last sent; 0 = never by time. With both 0 the templates go
    /// out in the first message only, which over UDP a collector that restarts never
    /// recovers from (RFC 7011 §8.4): keep one of them.
    pub template_refresh_seconds: u32,
    /// Send an epoch options record (the report's totals) with each report.
    pub epoch_records: bool,
    /// Announce the six participant templates ([`ie::PARTICIPANTS`], 376 bytes
    /// more in every template set) so that [`Exporter::participant_messages`] may
    /// send DDoS participants. Off by default: a collector that reads every record
    /// with an address as a flow (nfdump 1.7) lists each participant as a flow of
    /// 0 packets and 0 bytes.
    pub participant_records: bool,
    /// Announce the loss options template ([`ie::LOSS`], 38 bytes more) so that
    /// [`Exporter::loss_message`] may send the packets a host probe's kernel dropped.
    /// Off by default (a device sees every frame its NIC hands over).
    pub loss_records: bool,
}

impl Config {
    /// Domain 1, 1472-byte messages (1500-byte MTU, IPv4), templates every 20 messages
    /// and every 600 s, epoch records on, participant records off.
    pub const DEFAULT: Self = Self {
        observation_domain_id: 1,
        max_message_len: 1472,
        template_refresh_messages: 20,
        template_refresh_seconds: 600,
        epoch_records: true,
        participant_records: false,
        loss_records: false,
    };

    /// Bytes of the template sets: 348 (the four flow templates), plus 376 for the
    /// participant templates when [`participant_records`](Self::participant_records)
    /// is on, plus 142 for the epoch options template when
    /// [`epoch_records`](Self::epoch_records) is, plus 38 for the loss options
    /// template when [`loss_records`](Self::loss_records) is (42 without epoch
    /// records: its set header).
    pub const fn templates_len(&self) -> usize {
        let mut n = SET_HEADER_LEN;
        let mut f = 0;
        while f < ie::FLOWS.len() {
            n += ie::FLOWS[f].wire_len();
            f += 1;
        }
        if self.participant_records {
            let mut i = 0;
            while i < ie::PARTICIPANTS.len() {
                n += ie::PARTICIPANTS[i].wire_len();
                i += 1;
            }
        }
        if self.epoch_records || self.loss_records {
            n += SET_HEADER_LEN;
        }
        if self.epoch_records {
            n += ie::EPOCH.wire_len();
        }
        if self.loss_records {
            n += ie::LOSS.wire_len();
        }
        n
    }

    /// The smallest maximum message length: a header, the templates and one data set
    /// of the largest record (so that every message makes progress, whether or not it
    /// carries templates) — 631 bytes with epoch records, 474 without (1 007 and 850
    /// with participant records).
    pub const fn min_message_len(&self) -> u16 {
        let largest = if self.epoch_records {
            EpochRecord::WIRE_LEN
        } else {
            106
        };
        (HEADER_LEN + self.templates_len() + SET_HEADER_LEN + largest) as u16
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// When a report was observed and exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Times {
    /// Export time: seconds since 1970-01-01 UTC (the message header's).
    pub export_time: u32,
    /// Start of the epoch's observation: ms since 1970-01-01 UTC
    /// (`flowStartMilliseconds` of every elephant).
    pub start_ms: u64,
    /// End of the epoch's observation (`flowEndMilliseconds`).
    pub end_ms: u64,
}

/// When the templates were last sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sent {
    /// Messages since, counting the one that carried them.
    messages: u32,
    /// Export time of that message.
    at: u32,
}

/// An IPFIX exporting process for one observation domain over UDP: sequence numbers,
/// template refresh, messages no longer than the MTU allows.
///
/// Each report becomes messages through [`messages`](Self::messages): the first one
/// (after the templates, when due) carries the epoch's options record, then the
/// elephants in report order, each data set holding consecutive records of one family
/// and a new message started whenever the next record does not fit. The header's
/// sequence number is the count of data records (flow and epoch records) sent before
/// the message, mod 2³² (RFC 7011 §3.1).
///
/// Memory: 36 bytes. Cost: one pass over the report, writing each record once; no
/// allocation, no panic from any report or buffer.
///
/// ```
/// use loxo_flow::{ByteWeight, Config as MonitorConfig, FlowMonitor, Report};
/// use loxo_ipfix::{Config, Exporter, Times};
///
/// let mut monitor = FlowMonitor::new(MonitorConfig {
///     byte_weight: ByteWeight::Ip, // octetDeltaCount counts IP bytes
///     ..MonitorConfig::with_seed(loxo_core::Seed::new(1, 2))
/// });
/// let mut frame = [0u8; 60];
/// frame[12..14].copy_from_slice(&[0x08, 0x00]);
/// frame[14] = 0x45;
/// frame[17] = 46; // IP total length 46
/// frame[23] = 17; // UDP
/// monitor.feed(&frame);
/// let mut report = Report::new();
/// monitor.end_epoch(&mut report);
///
/// let mut exporter = Exporter::new(Config::DEFAULT)?;
/// let times = Times { export_time: 1_700_000_000, start_ms: 1_699_999_990_000, end_ms: 1_700_000_000_000 };
/// let mut msgs = exporter.messages(&report, times)?;
/// let mut buf = [0u8; 1472];
/// let mut sent = 0;
/// while let Some(len) = msgs.next_into(&mut buf)? {
///     sent += len; // udp.send(&buf[..len])
/// }
/// assert_eq!(sent, 16 + 490 + 4 + 121 + 4 + 82); // templates, epoch record, one flow
/// assert_eq!(exporter.sequence_number(), 2);
/// # Ok::<(), loxo_ipfix::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exporter {
    config: Config,
    sequence: u32,
    templates: Option<Sent>,
}

impl Exporter {
    /// An exporter; its first message will carry the templates.
    ///
    /// # Errors
    /// [`Error::MessageTooSmall`] when `config.max_message_len` is below
    /// [`Config::min_message_len`].
    pub const fn new(config: Config) -> Result<Self, Error> {
        let min = config.min_message_len();
        if config.max_message_len < min {
            return Err(Error::MessageTooSmall { min });
        }
        Ok(Self {
            config,
            sequence: 0,
            templates: None,
        })
    }

    /// The configuration.
    pub const fn config(&self) -> &Config {
        &self.config
    }

    /// Data records sent so far, mod 2³²: the next message's sequence number.
    pub const fn sequence_number(&self) -> u32 {
        self.sequence
    }

    /// Sends the templates again in the next message (e.g. when the link comes back).
    pub fn resend_templates(&mut self) {
        self.templates = None;
    }

    /// The messages of `report` (of a monitor with any number `N` of candidates),
    /// observed and exported at `times`: call [`Messages::next_into`] until it returns
    /// `None`.
    ///
    /// # Errors
    /// [`Error::NotIpBytes`] when the report's bytes are not IP bytes
    /// (`Report::byte_weight` is not [`ByteWeight::Ip`]).
    pub fn messages<'a, const N: usize>(
        &'a mut self,
        report: &'a Report<N>,
        times: Times,
    ) -> Result<Messages<'a>, Error> {
        if report.byte_weight != ByteWeight::Ip {
            return Err(Error::NotIpBytes);
        }
        let epoch_pending = self.config.epoch_records;
        let epoch = EpochRecord::from_report(
            report,
            self.config.observation_domain_id,
            times.start_ms,
            times.end_ms,
        );
        Ok(Messages {
            exporter: self,
            epoch,
            elephants: &report.elephants,
            times,
            next: 0,
            epoch_pending,
            done: false,
        })
    }

    /// The messages of a [`ParticipantsReport`] (its scanners, then its victims; one
    /// [`ParticipantRecord`] each), observed and exported at `times`: call
    /// [`ParticipantMessages::next_into`] until it returns `None`. They share the
    /// exporter's sequence numbers and template refresh with the flow messages;
    /// send them after the same epoch's [`messages`](Self::messages).
    ///
    /// ```
    /// use loxo_flow::{FlowKey, Participants, ParticipantsConfig, ParticipantsReport};
    /// use loxo_ipfix::{Config, Decoder, Exporter, Item, Times};
    ///
    /// let mut p = Participants::<128, 16, 128, 16, 72>::new(ParticipantsConfig::device(loxo_core::Seed::new(1, 2)));
    /// for src in 0..5000u32 {
    ///     p.observe(&FlowKey::v4(src.to_be_bytes(), [192, 0, 2, 10], 1234, 53, 17));
    /// }
    /// let mut report = ParticipantsReport::<8>::new();
    /// p.end_epoch(&mut report);
    ///
    /// let mut exporter = Exporter::new(Config { participant_records: true, ..Config::DEFAULT })?;
    /// let mut msgs = exporter.participant_messages(&report, Times::default())?;
    /// let mut buf = [0u8; 1472];
    /// let len = msgs.next_into(&mut buf)?.unwrap_or(0);
    /// let mut decoder = Decoder::<16, 32>::new();
    /// let victims: Vec<_> = decoder
    ///     .read(&buf[..len])?
    ///     .filter_map(|i| match i { Ok(Item::Participant(p)) => Some(p), _ => None })
    ///     .collect();
    /// assert_eq!(victims[0].address.to_string(), "192.0.2.10");
    /// assert!(victims[0].lower <= 5000 && 5000 <= victims[0].upper);
    /// # Ok::<(), loxo_ipfix::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoParticipantTemplates`] when the configuration's
    /// [`participant_records`](Config::participant_records) is off.
    pub fn participant_messages<'a, const R: usize>(
        &'a mut self,
        report: &'a ParticipantsReport<R>,
        times: Times,
    ) -> Result<ParticipantMessages<'a>, Error> {
        if !self.config.participant_records {
            return Err(Error::NoParticipantTemplates);
        }
        Ok(ParticipantMessages {
            exporter: self,
            lists: [
                (&report.scanners, report.scanners_left_out > 0),
                (&report.victims, report.victims_left_out > 0),
            ],
            epoch: report.epoch,
            times,
            next: 0,
            done: false,
        })
    }

    /// Writes one message with `record` (the templates first when due) into `buf`;
    /// returns its length. Send it after the same epoch's
    /// [`messages`](Self::messages); it shares their sequence numbers.
    ///
    /// ```
    /// use loxo_ipfix::{Config, Decoder, Exporter, Item, LossRecord, ie};
    /// let mut x = Exporter::new(Config { loss_records: true, ..Config::DEFAULT })?;
    /// let mut buf = [0u8; 1472];
    /// let r = LossRecord { epoch: 4, ignored_total: 17, ignored: 5, ..LossRecord::default() };
    /// let len = x.loss_message(&r, 1_700_000_000, &mut buf)?;
    /// let mut d = Decoder::<8, 32>::new();
    /// let back: Vec<_> = d.read(&buf[..len])?.filter_map(|i| match i {
    ///     Ok(Item::Record { template_id: ie::LOSS_TEMPLATE_ID, bytes }) => LossRecord::parse(&ie::LOSS, bytes),
    ///     _ => None,
    /// }).collect();
    /// assert_eq!(back, [Ok(r)]);
    /// # Ok::<(), loxo_ipfix::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::NoLossTemplate`] when [`Config::loss_records`] is off;
    /// [`Error::BufferTooSmall`] as for [`Messages::next_into`].
    pub fn loss_message(
        &mut self,
        record: &LossRecord,
        export_time: u32,
        buf: &mut [u8],
    ) -> Result<usize, Error> {
        if !self.config.loss_records {
            return Err(Error::NoLossTemplate);
        }
        let (buf, with_templates, at) = self.begin(buf, export_time)?;
        let n = record.emit(buf.get_mut(at + SET_HEADER_LEN..).unwrap_or(&mut []));
        close_set(buf, at, ie::LOSS_TEMPLATE_ID, SET_HEADER_LEN + n);
        let len = at + SET_HEADER_LEN + n;
        self.end(buf, len, with_templates, export_time, 1);
        Ok(len)
    }

    /// Starts a message in `buf`: checks its size, writes the templates when due.
    /// Returns the usable part of `buf`, whether it carries templates, and where
    /// the data sets start.
    fn begin<'b>(&self, buf: &'b mut [u8], now: u32) -> Result<(&'b mut [u8], bool, usize), Error> {
        let config = self.config;
        let min = config.min_message_len();
        let limit = buf.len().min(usize::from(config.max_message_len));
        if limit < usize::from(min) {
            return Err(Error::BufferTooSmall { min });
        }
        let buf = buf.get_mut(..limit).unwrap_or(&mut []);
        let with_templates = self.templates_due(now);
        let mut at = HEADER_LEN;
        if with_templates {
            at += write_templates(buf.get_mut(at..).unwrap_or(&mut []), &config);
        }
        Ok((buf, with_templates, at))
    }

    /// Ends a message of `len` bytes holding `records` data records: writes its
    /// header, advances the sequence number.
    fn end(&mut self, buf: &mut [u8], len: usize, with_templates: bool, now: u32, records: u32) {
        MessageRepr {
            length: len as u16,
            export_time: now,
            sequence_number: self.sequence,
            observation_domain_id: self.config.observation_domain_id,
        }
        .emit(&mut MessageHeader::new_unchecked(&mut *buf));
        self.note_message(with_templates, now, records);
    }

    fn templates_due(&self, now: u32) -> bool {
        let c = &self.config;
        self.templates.is_none_or(|s| {
            c.template_refresh_messages != 0 && s.messages >= c.template_refresh_messages
                || c.template_refresh_seconds != 0
                    && now.wrapping_sub(s.at) >= c.template_refresh_seconds
        })
    }

    fn note_message(&mut self, with_templates: bool, now: u32, records: u32) {
        self.sequence = self.sequence.wrapping_add(records);
        self.templates = match self.templates {
            Some(s) if !with_templates => Some(Sent {
                messages: s.messages.saturating_add(1),
                at: s.at,
            }),
            _ => Some(Sent {
                messages: 1,
                at: now,
            }),
        };
    }
}

/// The messages of one report; see [`Exporter::messages`].
#[derive(Debug)]
pub struct Messages<'a> {
    exporter: &'a mut Exporter,
    /// The report's totals.
    epoch: EpochRecord,
    /// The report's elephants, in report order.
    elephants: &'a [Elephant],
    times: Times,
    /// The next elephant to send.
    next: usize,
    epoch_pending: bool,
    done: bool,
}

impl Messages<'_> {
    /// Writes the next message into `buf` and returns its length, or `None` when the
    /// report is sent. A message is at most `min(buf.len(), max_message_len)` bytes.
    ///
    /// A report with nothing to send (no elephant, epoch records off) yields no
    /// message unless the templates are due.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when `buf` is shorter than
    /// [`Config::min_message_len`] (nothing is sent; a larger buffer may follow).
    pub fn next_into(&mut self, buf: &mut [u8]) -> Result<Option<usize>, Error> {
        if self.done {
            return Ok(None);
        }
        let now = self.times.export_time;
        let (buf, with_templates, mut at) = self.exporter.begin(buf, now)?;
        let limit = buf.len();
        let mut records = 0u32;
        if self.epoch_pending && at + SET_HEADER_LEN + EpochRecord::WIRE_LEN <= limit {
            let n = self
                .epoch
                .emit(buf.get_mut(at + SET_HEADER_LEN..).unwrap_or(&mut []));
            close_set(buf, at, EPOCH_TEMPLATE_ID, SET_HEADER_LEN + n);
            at += SET_HEADER_LEN + n;
            records += 1;
            self.epoch_pending = false;
        }
        let (elephants, epoch, times) = (self.elephants, self.epoch.epoch, self.times);
        records += write_records(buf, &mut at, &mut self.next, |i| {
            elephants
                .get(i)
                .map(|e| FlowRecord::from_elephant(e, epoch, times.start_ms, times.end_ms))
        });
        if !self.epoch_pending && self.next >= self.elephants.len() {
            self.done = true;
        }
        if at == HEADER_LEN {
            self.done = true;
            return Ok(None);
        }
        self.exporter.end(buf, at, with_templates, now, records);
        Ok(Some(at))
    }
}

/// The messages of one [`ParticipantsReport`]; see
/// [`Exporter::participant_messages`].
#[derive(Debug)]
pub struct ParticipantMessages<'a> {
    exporter: &'a mut Exporter,
    /// The scanners and the victims, each with "its list was full".
    lists: [(&'a [Participant], bool); 2],
    epoch: u32,
    times: Times,
    /// The next participant, counting the scanners then the victims.
    next: usize,
    done: bool,
}

impl ParticipantMessages<'_> {
    /// Writes the next message into `buf` and returns its length, or `None` when the
    /// report is sent; as [`Messages::next_into`] (a report without participants
    /// yields no message unless the templates are due).
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when `buf` is shorter than
    /// [`Config::min_message_len`].
    pub fn next_into(&mut self, buf: &mut [u8]) -> Result<Option<usize>, Error> {
        if self.done {
            return Ok(None);
        }
        let now = self.times.export_time;
        let (buf, with_templates, mut at) = self.exporter.begin(buf, now)?;
        let ([(scanners, s_full), (victims, v_full)], epoch, t) =
            (self.lists, self.epoch, self.times);
        let total = scanners.len() + victims.len();
        let records = write_records(buf, &mut at, &mut self.next, |i| {
            let (p, full) = match scanners.get(i) {
                Some(p) => (p, s_full),
                None => (victims.get(i - scanners.len())?, v_full),
            };
            Some(ParticipantRecord::from_participant(
                p, epoch, full, t.start_ms, t.end_ms,
            ))
        });
        if self.next >= total {
            self.done = true;
        }
        if at == HEADER_LEN {
            self.done = true;
            return Ok(None);
        }
        self.exporter.end(buf, at, with_templates, now, records);
        Ok(Some(at))
    }
}

/// A data record the exporter writes.
trait DataRecord {
    fn template_id(&self) -> u16;
    fn wire_len(&self) -> usize;
    fn emit(&self, buf: &mut [u8]) -> usize;
}

impl DataRecord for FlowRecord {
    fn template_id(&self) -> u16 {
        self.template().id
    }
    fn wire_len(&self) -> usize {
        Self::wire_len(self)
    }
    fn emit(&self, buf: &mut [u8]) -> usize {
        Self::emit(self, buf)
    }
}

impl DataRecord for ParticipantRecord {
    fn template_id(&self) -> u16 {
        self.template().id
    }
    fn wire_len(&self) -> usize {
        Self::wire_len(self)
    }
    fn emit(&self, buf: &mut [u8]) -> usize {
        Self::emit(self, buf)
    }
}

/// Writes records `record(*next)`, `record(*next + 1)`, … at `*at` in `buf` while
/// they fit, one data set per run of records of one template; advances `*next` and
/// `*at`, returns how many it wrote.
fn write_records<D: DataRecord>(
    buf: &mut [u8],
    at: &mut usize,
    next: &mut usize,
    record: impl Fn(usize) -> Option<D>,
) -> u32 {
    let limit = buf.len();
    let mut records = 0u32;
    // The data set being filled: (start, template ID).
    let mut open: Option<(usize, u16)> = None;
    while let Some(r) = record(*next) {
        let id = r.template_id();
        let same = matches!(open, Some((_, o)) if o == id);
        let need = r.wire_len() + if same { 0 } else { SET_HEADER_LEN };
        if *at + need > limit {
            break;
        }
        if !same {
            if let Some((start, o)) = open {
                close_set(buf, start, o, *at - start);
            }
            open = Some((*at, id));
            *at += SET_HEADER_LEN;
        }
        *at += r.emit(buf.get_mut(*at..).unwrap_or(&mut []));
        records += 1;
        *next += 1;
    }
    if let Some((start, o)) = open {
        close_set(buf, start, o, *at - start);
    }
    records
}

/// Writes the set header of the set at `start`, `len` bytes long.
fn close_set(buf: &mut [u8], start: usize, id: u16, len: usize) {
    let mut s = SetHeader::new_unchecked(buf.get_mut(start..).unwrap_or(&mut []));
    s.set_set_id(id);
    s.set_length(len as u16);
}

/// Writes the template set (and the options template set) at the start of `buf`;
/// returns [`Config::templates_len`].
fn write_templates(buf: &mut [u8], config: &Config) -> usize {
    let mut at = SET_HEADER_LEN;
    for t in ie::FLOWS {
        at += t.emit(buf.get_mut(at..).unwrap_or(&mut []));
    }
    if config.participant_records {
        for t in ie::PARTICIPANTS {
            at += t.emit(buf.get_mut(at..).unwrap_or(&mut []));
        }
    }
    close_set(buf, 0, TEMPLATE_SET_ID, at);
    if config.epoch_records || config.loss_records {
        let start = at;
        at += SET_HEADER_LEN;
        if config.epoch_records {
            at += ie::EPOCH.emit(buf.get_mut(at..).unwrap_or(&mut []));
        }
        if config.loss_records {
            at += ie::LOSS.emit(buf.get_mut(at..).unwrap_or(&mut []));
        }
        close_set(buf, start, OPTIONS_TEMPLATE_SET_ID, at - start);
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let c = Config::DEFAULT;
        assert_eq!(c.templates_len(), 490);
        assert_eq!(c.min_message_len(), 631);
        let c = Config {
            epoch_records: false,
            ..c
        };
        assert_eq!(c.templates_len(), 348);
        assert_eq!(c.min_message_len(), 474);
        let l = Config {
            loss_records: true,
            ..c
        };
        assert_eq!(l.templates_len(), 348 + 4 + 38);
        let l = Config {
            loss_records: true,
            ..Config::DEFAULT
        };
        assert_eq!(l.templates_len(), 490 + 38);
        assert_eq!(
            core::mem::size_of::<Exporter>(),
            36,
            "pin the documented size"
        );
    }

    #[test]
    fn refuses_small_messages_and_wire_bytes() {
        let c = Config {
            max_message_len: 630,
            ..Config::DEFAULT
        };
        assert_eq!(Exporter::new(c), Err(Error::MessageTooSmall { min: 631 }));
        let mut x = Exporter::new(Config::DEFAULT).unwrap_or_else(|_| unreachable!());
        let r = Report::new();
        assert_eq!(
            x.messages(&r, Times::default()).err(),
            Some(Error::NotIpBytes)
        );
        let r = Report {
            byte_weight: ByteWeight::Ip,
            ..Report::new()
        };
        let mut m = x
            .messages(&r, Times::default())
            .unwrap_or_else(|_| unreachable!());
        let mut small = [0u8; 630];
        assert_eq!(
            m.next_into(&mut small),
            Err(Error::BufferTooSmall { min: 631 })
        );
        let mut b = [0u8; 2000];
        // Templates and the epoch record, in a message no longer than 1472.
        assert_eq!(m.next_into(&mut b), Ok(Some(16 + 490 + 125)));
        assert_eq!(m.next_into(&mut b), Ok(None));
        assert_eq!(x.sequence_number(), 1);
    }

    #[test]
    fn sequence_number_wraps() {
        let mut x = Exporter {
            sequence: u32::MAX - 1,
            ..Exporter::new(Config::DEFAULT).unwrap_or_else(|_| unreachable!())
        };
        let mut r = Report {
            byte_weight: ByteWeight::Ip,
            ..Report::new()
        };
        let _ = r.elephants.push(loxo_flow::Elephant::default());
        let _ = r.elephants.push(loxo_flow::Elephant::default());
        let mut m = x
            .messages(&r, Times::default())
            .unwrap_or_else(|_| unreachable!());
        let mut b = [0u8; 1472];
        assert!(matches!(m.next_into(&mut b), Ok(Some(_))));
        assert_eq!(b[8..12], [0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(x.sequence_number(), 1, "3 records after 2^32 - 2");
    }
}
