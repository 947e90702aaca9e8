//! Data records (RFC 7011 §3.4.3): the records of a data set under their template,
//! the fields of one record, and the two record kinds loxo exports — [`FlowRecord`]
//! (one elephant) and [`EpochRecord`] (an epoch's totals, an options record).
//!
//! Emitting writes loxo's fixed templates ([`ie::FLOW_V4`], [`ie::FLOW_V6`],
//! [`ie::EPOCH`]) field by field. Parsing goes by information element, not by offset,
//! so it also reads other exporters' flow records: any template with both addresses of
//! one family gives a [`FlowRecord`] (missing fields read 0, integers in any reduced
//! size of RFC 7011 §6.2, variable-length fields skipped).

use loxo_flow::{Bounds, Elephant, FlowKey, Report, ShareOf};

use crate::ie::{self, iana, loxo, LOXO_PEN};
use crate::template::{FieldSpec, Template, VARIABLE_LENGTH};
use crate::wire::{be_uint, Writer};
use crate::{flags, Error};

/// The data records of a data set's body under `template`, each as its bytes.
///
/// Ends at the body's end or at padding (fewer bytes left than the template's
/// shortest record); a record that runs past the body is [`Error::Truncated`], a
/// variable-length field that does, [`Error::FieldLength`]. After an error the
/// iterator ends.
#[derive(Debug, Clone)]
pub struct DataRecords<'t, 'a> {
    template: Template<'t>,
    rest: &'a [u8],
}

impl<'t, 'a> DataRecords<'t, 'a> {
    /// The records of `body` (a data set's bytes after its header).
    pub const fn new(template: Template<'t>, body: &'a [u8]) -> Self {
        Self {
            template,
            rest: body,
        }
    }
}

impl<'a> Iterator for DataRecords<'_, 'a> {
    type Item = Result<&'a [u8], Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let min = self.template.min_record_len();
        // Padding, or a template of empty fields only (a record of 0 bytes would never
        // end the set).
        if min == 0 || self.rest.len() < min {
            return None;
        }
        match record_len(&self.template, self.rest) {
            Ok(n) => {
                let (this, rest) = self.rest.split_at_checked(n).unwrap_or((self.rest, &[]));
                self.rest = rest;
                Some(Ok(this))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// Length of the record at the start of `b` under `t`.
fn record_len(t: &Template<'_>, b: &[u8]) -> Result<usize, Error> {
    let mut at = 0usize;
    for f in t.fields {
        at = at
            .checked_add(field_len(f, b, at)?)
            .ok_or(Error::Truncated)?;
        if at > b.len() {
            return Err(Error::Truncated);
        }
    }
    Ok(at)
}

/// Bytes field `f` occupies at `at` of `b` (a variable-length field's prefix included).
fn field_len(f: &FieldSpec, b: &[u8], at: usize) -> Result<usize, Error> {
    if f.len != VARIABLE_LENGTH {
        return Ok(usize::from(f.len));
    }
    match b.get(at) {
        None => Err(Error::Truncated),
        Some(&n) if n < 255 => Ok(1 + usize::from(n)),
        Some(_) => match b.get(at + 1..at + 3) {
            Some(&[x, y]) => Ok(3 + usize::from(u16::from_be_bytes([x, y]))),
            _ => Err(Error::FieldLength),
        },
    }
}

/// The fields of one record (from [`DataRecords`]) under its template: each
/// specifier with its value (a variable-length field's value without its prefix).
#[derive(Debug, Clone)]
pub struct Fields<'t, 'a> {
    specs: core::slice::Iter<'t, FieldSpec>,
    rest: &'a [u8],
}

impl<'t, 'a> Fields<'t, 'a> {
    /// The fields of `record` under `template`.
    pub fn new(template: &Template<'t>, record: &'a [u8]) -> Self {
        Self {
            specs: template.fields.iter(),
            rest: record,
        }
    }
}

impl<'a> Iterator for Fields<'_, 'a> {
    type Item = Result<(FieldSpec, &'a [u8]), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let f = *self.specs.next()?;
        let n = match field_len(&f, self.rest, 0) {
            Ok(n) => n,
            Err(e) => return Some(Err(e)),
        };
        let Some((field, rest)) = self.rest.split_at_checked(n) else {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        };
        self.rest = rest;
        let value = if f.len == VARIABLE_LENGTH {
            let prefix = if field.first() == Some(&255) { 3 } else { 1 };
            field.get(prefix..).unwrap_or(&[])
        } else {
            field
        };
        Some(Ok((f, value)))
    }
}

fn uint(v: &[u8]) -> Result<u64, Error> {
    be_uint(v).ok_or(Error::FieldLength)
}

fn uint32(v: &[u8]) -> Result<u32, Error> {
    u32::try_from(uint(v)?).map_err(|_| Error::FieldLength)
}

fn uint16(v: &[u8]) -> Result<u16, Error> {
    u16::try_from(uint(v)?).map_err(|_| Error::FieldLength)
}

fn byte(v: &[u8]) -> Result<u8, Error> {
    u8::try_from(uint(v)?).map_err(|_| Error::FieldLength)
}

fn array<const N: usize>(v: &[u8]) -> Result<[u8; N], Error> {
    v.try_into().map_err(|_| Error::FieldLength)
}

/// What loxo knows about an exported elephant beyond the standard counters: its
/// bounds, its status and its epoch (the enterprise elements of `docs/ipfix.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ElephantInfo {
    /// The monitor's epoch.
    pub epoch: u32,
    /// Bounds on the flow's IP bytes.
    pub bytes: Bounds,
    /// Bounds on the flow's packets.
    pub packets: Bounds,
    /// Certain (its share is ≥ θ for certain) or possible.
    pub certain: bool,
}

/// One flow record: the 5-tuple, counters and observation interval, and for loxo's
/// records the bounds behind the counters.
///
/// `octets` and `packets` are the elephant's **upper bounds**: they always hold (the
/// true count is never above them) and equal the exact count whenever the bounds are
/// exact, whereas a lower bound may hold with probability 95 % only or be 0 when a
/// sketch saturated (see `docs/ipfix.md`). A saturated measure has upper bound
/// 2⁶⁴ − 1: no figure, and a collector that ignores the flags sees an impossible
/// value rather than a plausible wrong one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowRecord {
    /// The flow. ICMP and ICMPv6 flows carry type and code in the key's ports (loxo's
    /// key rules) and on the wire in `icmpTypeCodeIPv4`/`IPv6`, with the transport
    /// ports 0.
    pub key: FlowKey,
    /// `octetDeltaCount`: IP bytes.
    pub octets: u64,
    /// `packetDeltaCount`.
    pub packets: u64,
    /// `flowStartMilliseconds`: ms since 1970-01-01 UTC.
    pub start_ms: u64,
    /// `flowEndMilliseconds`.
    pub end_ms: u64,
    /// loxo's enterprise elements, when the record has all of them.
    pub elephant: Option<ElephantInfo>,
}

impl FlowRecord {
    /// The record of an elephant of epoch `epoch` observed from `start_ms` to `end_ms`.
    pub const fn from_elephant(e: &Elephant, epoch: u32, start_ms: u64, end_ms: u64) -> Self {
        Self {
            key: e.key,
            octets: e.bytes.upper,
            packets: e.packets.upper,
            start_ms,
            end_ms,
            elephant: Some(ElephantInfo {
                epoch,
                bytes: e.bytes,
                packets: e.packets,
                certain: e.certain,
            }),
        }
    }

    /// The elephant back, when the record carries loxo's elements.
    pub fn to_elephant(&self) -> Option<Elephant> {
        self.elephant.map(|i| Elephant {
            key: self.key,
            bytes: i.bytes,
            packets: i.packets,
            certain: i.certain,
        })
    }

    /// Whether the record goes in an ICMP template: an ICMP (IPv4) or ICMPv6 (IPv6)
    /// flow whose key holds a type and code (both ≤ 255).
    const fn is_icmp(&self) -> bool {
        let k = &self.key;
        let icmp = if k.is_v6() { 58 } else { 1 };
        k.protocol() == icmp && k.src_port() <= 0xff && k.dst_port() <= 0xff
    }

    /// The template this record is written with: [`ie::FLOW_V4`] / [`ie::FLOW_V6`]
    /// (transport ports), or [`ie::FLOW_ICMP_V4`] / [`ie::FLOW_ICMP_V6`] for ICMP
    /// flows (type and code, no ports).
    pub const fn template(&self) -> Template<'static> {
        match (self.key.is_v6(), self.is_icmp()) {
            (false, false) => ie::FLOW_V4,
            (true, false) => ie::FLOW_V6,
            (false, true) => ie::FLOW_ICMP_V4,
            (true, true) => ie::FLOW_ICMP_V6,
        }
    }

    /// Bytes [`emit`](Self::emit) writes: 82 (IPv4), 106 (IPv6), 80 (ICMP) or 104
    /// (ICMPv6).
    pub const fn wire_len(&self) -> usize {
        match (self.key.is_v6(), self.is_icmp()) {
            (false, false) => 82,
            (true, false) => 106,
            (false, true) => 80,
            (true, true) => 104,
        }
    }

    /// Writes the record in loxo's flow template ([`template`](Self::template)) at the
    /// start of `buf`; returns [`wire_len`](Self::wire_len). Bytes past `buf`'s end
    /// are not written: size it first. A record without [`ElephantInfo`] is written
    /// with exact bounds equal to its counters, epoch 0.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        let k = &self.key;
        w.bytes(k.src_bytes());
        w.bytes(k.dst_bytes());
        let (sp, dp) = (k.src_port(), k.dst_port());
        if self.is_icmp() {
            w.u8(k.protocol());
            w.u16(sp << 8 | dp);
        } else {
            w.u16(sp);
            w.u16(dp);
            w.u8(k.protocol());
        }
        w.u64(self.octets);
        w.u64(self.packets);
        w.u64(self.start_ms);
        w.u64(self.end_ms);
        let exact = |v| Bounds {
            lower: v,
            upper: v,
            lower_certain: true,
            saturated: false,
        };
        let i = self.elephant.unwrap_or(ElephantInfo {
            epoch: 0,
            bytes: exact(self.octets),
            packets: exact(self.packets),
            certain: true,
        });
        w.u64(i.bytes.lower);
        w.u64(i.bytes.upper);
        w.u64(i.packets.lower);
        w.u64(i.packets.upper);
        let mut f = 0;
        for (set, bit) in [
            (i.certain, flags::CERTAIN),
            (i.bytes.lower_certain, flags::OCTETS_LOWER_CERTAIN),
            (i.packets.lower_certain, flags::PACKETS_LOWER_CERTAIN),
            (i.bytes.saturated, flags::OCTETS_SATURATED),
            (i.packets.saturated, flags::PACKETS_SATURATED),
        ] {
            if set {
                f |= bit;
            }
        }
        w.u8(f);
        w.u32(i.epoch);
        w.len()
    }

    /// Reads a flow record under any template that has a source and a destination
    /// address of one family (`None` for other templates). Missing counters, ports,
    /// protocol or times read 0; [`elephant`](Self::elephant) is set when every loxo
    /// element is present.
    ///
    /// # Errors
    /// [`Error::FieldLength`] for a known field of a length its type does not allow,
    /// [`Error::Truncated`] for a record shorter than its template.
    pub fn parse(template: &Template<'_>, record: &[u8]) -> Option<Result<Self, Error>> {
        let has = |id| template.fields.iter().any(|f| f.is(None, id));
        let v6 = if has(iana::SOURCE_IPV4_ADDRESS) && has(iana::DESTINATION_IPV4_ADDRESS) {
            false
        } else if has(iana::SOURCE_IPV6_ADDRESS) && has(iana::DESTINATION_IPV6_ADDRESS) {
            true
        } else {
            return None;
        };
        Some(Self::parse_fields(template, record, v6))
    }

    fn parse_fields(t: &Template<'_>, record: &[u8], v6: bool) -> Result<Self, Error> {
        let (mut src, mut dst) = ([0u8; 16], [0u8; 16]);
        let (mut sp, mut dp, mut proto, mut icmp) = (0u16, 0u16, 0u8, None);
        let mut r = Self::default();
        let mut i = ElephantInfo::default();
        let mut fl = 0u8;
        // loxo elements seen, one bit per element (1..=6).
        let mut seen = 0u8;
        for field in Fields::new(t, record) {
            let (f, v) = field?;
            match f.enterprise {
                None => match f.id {
                    iana::SOURCE_IPV4_ADDRESS if !v6 => {
                        src[..4].copy_from_slice(&array::<4>(v)?);
                    }
                    iana::DESTINATION_IPV4_ADDRESS if !v6 => {
                        dst[..4].copy_from_slice(&array::<4>(v)?);
                    }
                    iana::SOURCE_IPV6_ADDRESS if v6 => src = array::<16>(v)?,
                    iana::DESTINATION_IPV6_ADDRESS if v6 => dst = array::<16>(v)?,
                    iana::SOURCE_TRANSPORT_PORT => sp = uint16(v)?,
                    iana::DESTINATION_TRANSPORT_PORT => dp = uint16(v)?,
                    iana::PROTOCOL_IDENTIFIER => proto = byte(v)?,
                    iana::ICMP_TYPE_CODE_IPV4 if !v6 => icmp = Some(uint16(v)?),
                    iana::ICMP_TYPE_CODE_IPV6 if v6 => icmp = Some(uint16(v)?),
                    iana::OCTET_DELTA_COUNT => r.octets = uint(v)?,
                    iana::PACKET_DELTA_COUNT => r.packets = uint(v)?,
                    iana::FLOW_START_MILLISECONDS => r.start_ms = uint(v)?,
                    iana::FLOW_END_MILLISECONDS => r.end_ms = uint(v)?,
                    _ => {}
                },
                Some(LOXO_PEN) => {
                    match f.id {
                        loxo::OCTET_LOWER => i.bytes.lower = uint(v)?,
                        loxo::OCTET_UPPER => i.bytes.upper = uint(v)?,
                        loxo::PACKET_LOWER => i.packets.lower = uint(v)?,
                        loxo::PACKET_UPPER => i.packets.upper = uint(v)?,
                        loxo::ELEPHANT_FLAGS => fl = byte(v)?,
                        loxo::EPOCH => i.epoch = uint32(v)?,
                        _ => continue,
                    }
                    seen |= 1 << f.id;
                }
                Some(_) => {}
            }
        }
        let icmp_proto = if v6 { 58 } else { 1 };
        if let (Some(tc), true) = (icmp, proto == icmp_proto && sp == 0 && dp == 0) {
            (sp, dp) = (tc >> 8, tc & 0xff);
        }
        r.key = if v6 {
            FlowKey::v6(src, dst, sp, dp, proto)
        } else {
            let (s, d) = (array::<4>(&src[..4])?, array::<4>(&dst[..4])?);
            FlowKey::v4(s, d, sp, dp, proto)
        };
        if seen == 0b111_1110 {
            i.certain = fl & flags::CERTAIN != 0;
            i.bytes.lower_certain = fl & flags::OCTETS_LOWER_CERTAIN != 0;
            i.packets.lower_certain = fl & flags::PACKETS_LOWER_CERTAIN != 0;
            i.bytes.saturated = fl & flags::OCTETS_SATURATED != 0;
            i.packets.saturated = fl & flags::PACKETS_SATURATED != 0;
            r.elephant = Some(i);
        }
        Ok(r)
    }
}

/// An epoch's totals: loxo's options record, scoped by the observation domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EpochRecord {
    /// `observationDomainId`, the scope.
    pub observation_domain_id: u32,
    /// `monitoringIntervalStartMilliSeconds`: the epoch's start.
    pub start_ms: u64,
    /// `monitoringIntervalEndMilliSeconds`: the epoch's end.
    pub end_ms: u64,
    /// The monitor's epoch number.
    pub epoch: u32,
    /// Frames of every kind.
    pub frames: u64,
    /// IP packets.
    pub packets: u64,
    /// IP bytes.
    pub octets: u64,
    /// Non-first fragments.
    pub fragments: u64,
    /// Frames that are not IP.
    pub not_ip: u64,
    /// Malformed frames, every reason.
    pub malformed: u64,
    /// Estimated distinct flows.
    pub distinct_flows: u64,
    /// Estimated distinct sources.
    pub distinct_sources: u64,
    /// New flows (an unbiased estimate; wider when `new_flows_overloaded`).
    pub new_flows: u64,
    /// Elephants that did not fit in the report: always 0 from a loxo `Report`, which
    /// has a row for every candidate of its monitor (a monitor of `N` candidates fills
    /// a `Report<N>` and accepts no θ below `1/N`). The element stays in the template,
    /// so that collectors reading it keep working.
    pub elephants_left_out: u32,
    /// The new-flow filters were past their design load (or sampled).
    pub new_flows_overloaded: bool,
    /// Recall 1 certified for the epoch.
    pub elephants_complete: bool,
    /// The measure θ is a share of.
    pub share_of: ShareOf,
    /// θ's numerator.
    pub theta_num: u64,
    /// θ's denominator.
    pub theta_den: u64,
    /// Elephant records the epoch exports.
    pub elephants: u32,
}

impl EpochRecord {
    /// Bytes of a record: 121.
    pub const WIRE_LEN: usize = 121;

    /// The totals of `report`, observed by domain `domain` from `start_ms` to `end_ms`.
    pub fn from_report<const N: usize>(
        report: &Report<N>,
        domain: u32,
        start_ms: u64,
        end_ms: u64,
    ) -> Self {
        Self {
            observation_domain_id: domain,
            start_ms,
            end_ms,
            epoch: report.epoch,
            frames: report.frames,
            packets: report.packets,
            octets: report.bytes,
            fragments: report.fragments,
            not_ip: report.not_ip,
            malformed: report.errors.iter().fold(0u64, |s, &e| s.saturating_add(e)),
            distinct_flows: report.distinct_flows,
            distinct_sources: report.distinct_sources,
            new_flows: report.new_flows,
            elephants_left_out: 0,
            new_flows_overloaded: report.new_flows_overloaded,
            elephants_complete: report.elephants_complete,
            share_of: report.share_of,
            theta_num: report.theta.num(),
            theta_den: report.theta.den(),
            elephants: report.elephants.len() as u32,
        }
    }

    /// Writes the record in [`ie::EPOCH`]'s layout at the start of `buf`; returns
    /// [`WIRE_LEN`](Self::WIRE_LEN). Bytes past `buf`'s end are not written.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u32(self.observation_domain_id);
        w.u64(self.start_ms);
        w.u64(self.end_ms);
        w.u32(self.epoch);
        for v in [
            self.frames,
            self.packets,
            self.octets,
            self.fragments,
            self.not_ip,
            self.malformed,
            self.distinct_flows,
            self.distinct_sources,
            self.new_flows,
        ] {
            w.u64(v);
        }
        w.u32(self.elephants_left_out);
        let mut f = 0;
        if self.new_flows_overloaded {
            f |= flags::NEW_FLOWS_OVERLOADED;
        }
        if self.elephants_complete {
            f |= flags::ELEPHANTS_COMPLETE;
        }
        if self.share_of == ShareOf::Packets {
            f |= flags::SHARE_OF_PACKETS;
        }
        w.u8(f);
        w.u64(self.theta_num);
        w.u64(self.theta_den);
        w.u32(self.elephants);
        w.len()
    }

    /// Reads an epoch record under an options template with loxo's epoch and frames
    /// elements (`None` for other templates); missing fields read 0.
    ///
    /// # Errors
    /// [`Error::FieldLength`] or [`Error::Truncated`] as for [`FlowRecord::parse`].
    pub fn parse(template: &Template<'_>, record: &[u8]) -> Option<Result<Self, Error>> {
        let has = |id| template.fields.iter().any(|f| f.is(Some(LOXO_PEN), id));
        if !template.is_options() || !has(loxo::EPOCH) || !has(loxo::FRAMES) {
            return None;
        }
        Some(Self::parse_fields(template, record))
    }

    fn parse_fields(t: &Template<'_>, record: &[u8]) -> Result<Self, Error> {
        let mut r = Self::default();
        for field in Fields::new(t, record) {
            let (f, v) = field?;
            match f.enterprise {
                None => match f.id {
                    iana::OBSERVATION_DOMAIN_ID => r.observation_domain_id = uint32(v)?,
                    iana::MONITORING_INTERVAL_START_MILLISECONDS => r.start_ms = uint(v)?,
                    iana::MONITORING_INTERVAL_END_MILLISECONDS => r.end_ms = uint(v)?,
                    _ => {}
                },
                Some(LOXO_PEN) => match f.id {
                    loxo::EPOCH => r.epoch = uint32(v)?,
                    loxo::FRAMES => r.frames = uint(v)?,
                    loxo::PACKETS => r.packets = uint(v)?,
                    loxo::OCTETS => r.octets = uint(v)?,
                    loxo::FRAGMENTS => r.fragments = uint(v)?,
                    loxo::NOT_IP => r.not_ip = uint(v)?,
                    loxo::MALFORMED => r.malformed = uint(v)?,
                    loxo::DISTINCT_FLOWS => r.distinct_flows = uint(v)?,
                    loxo::DISTINCT_SOURCES => r.distinct_sources = uint(v)?,
                    loxo::NEW_FLOWS => r.new_flows = uint(v)?,
                    loxo::ELEPHANTS_LEFT_OUT => r.elephants_left_out = uint32(v)?,
                    loxo::EPOCH_FLAGS => {
                        let f = byte(v)?;
                        r.new_flows_overloaded = f & flags::NEW_FLOWS_OVERLOADED != 0;
                        r.elephants_complete = f & flags::ELEPHANTS_COMPLETE != 0;
                        r.share_of = if f & flags::SHARE_OF_PACKETS != 0 {
                            ShareOf::Packets
                        } else {
                            ShareOf::Bytes
                        };
                    }
                    loxo::THETA_NUMERATOR => r.theta_num = uint(v)?,
                    loxo::THETA_DENOMINATOR => r.theta_den = uint(v)?,
                    loxo::ELEPHANTS => r.elephants = uint32(v)?,
                    _ => {}
                },
                Some(_) => {}
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elephant(key: FlowKey) -> Elephant {
        Elephant {
            key,
            bytes: Bounds {
                lower: 1000,
                upper: 1200,
                lower_certain: true,
                saturated: false,
            },
            packets: Bounds {
                lower: 0,
                upper: u64::MAX,
                lower_certain: true,
                saturated: true,
            },
            certain: false,
        }
    }

    #[test]
    fn flow_records_round_trip() {
        for key in [
            FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 1234, 80, 6),
            FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 8, 0, 1),
            FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 0, 0, 1),
            FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 300, 2, 1),
            FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 8, 0, 58),
            FlowKey::v6([0x20; 16], [0x30; 16], 128, 0, 58),
            FlowKey::v6([0x20; 16], [0x30; 16], 5, 6, 17),
        ] {
            let r = FlowRecord::from_elephant(&elephant(key), 9, 1_000, 2_000);
            let mut b = [0u8; 106];
            let n = r.emit(&mut b);
            assert_eq!(n, r.wire_len());
            assert_eq!(Some(n), r.template().record_len());
            let back = FlowRecord::parse(&r.template(), &b[..n]);
            assert_eq!(back, Some(Ok(r)), "{key}");
            assert_eq!(
                back.and_then(Result::ok).and_then(|r| r.to_elephant()),
                Some(elephant(key))
            );
        }
    }

    #[test]
    fn icmp_on_the_wire() {
        let key = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 8, 3, 1);
        let r = FlowRecord::from_elephant(&elephant(key), 0, 0, 0);
        let mut b = [0u8; 80];
        assert_eq!(r.emit(&mut b), 80);
        assert_eq!(r.template().id, ie::FLOW_ICMP_V4_TEMPLATE_ID);
        // Protocol 1, icmpTypeCodeIPv4 = 8 · 256 + 3, no ports.
        assert_eq!(b[8..11], [1, 8, 3]);
        // SCTP: the ports template, no ICMP element (nfdump 1.7 would take it for
        // the destination port).
        let key = FlowKey::v4([10, 0, 0, 1], [10, 0, 0, 2], 2905, 3868, 132);
        let r = FlowRecord::from_elephant(&elephant(key), 0, 0, 0);
        assert_eq!(r.emit(&mut b), 82);
        assert_eq!(r.template().id, ie::FLOW_V4_TEMPLATE_ID);
        assert_eq!(b[8..13], [0x0b, 0x59, 0x0f, 0x1c, 132]);
    }

    #[test]
    fn generic_templates() {
        // A minimal exporter's template: addresses, reduced-size counters, a
        // variable-length field and an unknown enterprise element.
        let fields = [
            FieldSpec::iana(iana::SOURCE_IPV4_ADDRESS, 4),
            FieldSpec::iana(iana::DESTINATION_IPV4_ADDRESS, 4),
            FieldSpec::iana(iana::OCTET_DELTA_COUNT, 4),
            FieldSpec::iana(82, VARIABLE_LENGTH),
            FieldSpec::enterprise(1, 2, 9),
            FieldSpec::iana(iana::PROTOCOL_IDENTIFIER, 1),
        ];
        let t = Template::new(400, 0, &fields);
        let rec = [
            1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 1, 0, 3, b'e', b't', b'h', 0xaa, 0xbb, 17,
        ];
        let r = FlowRecord::parse(&t, &rec);
        let want = FlowRecord {
            key: FlowKey::v4([1, 2, 3, 4], [5, 6, 7, 8], 0, 0, 17),
            octets: 256,
            ..FlowRecord::default()
        };
        assert_eq!(r, Some(Ok(want)));
        // Two records and padding in one set.
        let mut body = [0u8; 2 * 19 + 3];
        body[..19].copy_from_slice(&rec);
        body[19..38].copy_from_slice(&rec);
        let n = DataRecords::new(t, &body).count();
        assert_eq!(n, 2);
        // A long variable-length prefix (255, then 2 bytes) past the end.
        let bad = [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 1, 0, 255, 0, 9, 1];
        assert_eq!(
            DataRecords::new(t, &bad).next(),
            Some(Err(Error::Truncated))
        );
        // Wrong address length.
        let f2 = [FieldSpec::iana(8, 3), FieldSpec::iana(12, 4)];
        let t2 = Template::new(401, 0, &f2);
        assert_eq!(
            FlowRecord::parse(&t2, &[0; 7]),
            Some(Err(Error::FieldLength))
        );
        // Not a flow template.
        let f3 = [FieldSpec::iana(1, 8)];
        assert_eq!(
            FlowRecord::parse(&Template::new(402, 0, &f3), &[0; 8]),
            None
        );
        // A template of zero-length fields never yields records.
        let f4 = [FieldSpec::iana(1, 0)];
        assert_eq!(
            DataRecords::new(Template::new(403, 0, &f4), &[0; 8]).count(),
            0
        );
    }

    #[test]
    fn epoch_record_round_trip() {
        let mut rep = Report::new();
        rep.epoch = 4;
        rep.frames = 10;
        rep.packets = 9;
        rep.bytes = 900;
        rep.errors[0] = 1;
        rep.new_flows_overloaded = true;
        rep.share_of = ShareOf::Packets;
        let r = EpochRecord::from_report(&rep, 77, 5, 6);
        let mut b = [0u8; EpochRecord::WIRE_LEN];
        assert_eq!(r.emit(&mut b), EpochRecord::WIRE_LEN);
        assert_eq!(EpochRecord::parse(&ie::EPOCH, &b), Some(Ok(r)));
        assert_eq!(r.malformed, 1);
        assert!(EpochRecord::parse(&ie::FLOW_V4, &b).is_none());
    }
}
