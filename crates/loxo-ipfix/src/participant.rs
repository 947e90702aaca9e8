//! [`ParticipantRecord`]: one DDoS participant of a `loxo_flow::ParticipantsReport`
//! — a horizontal scanner, a vertical scan or a victim — in its template of
//! [`ie::PARTICIPANTS`], with IANA's distinct-count elements.

use core::net::IpAddr;

use loxo_flow::{Participant, Role};

use crate::ie::{self, iana, loxo, LOXO_PEN};
use crate::record::Fields;
use crate::template::Template;
use crate::wire::{be_uint, Writer};
use crate::{flags, Error};

/// One participant on the wire.
///
/// | role | key | count element |
/// |---|---|---|
/// | horizontal scan | `sourceIPv4Address` / `sourceIPv6Address` | `distinctCountOfDestinationIPv4Address` (381, 4 bytes) / `…IPv6Address` (383, 8 bytes) |
/// | victim | `destinationIPv4Address` / `destinationIPv6Address` | `distinctCountOfSourceIPv4Address` (380, 4 bytes) / `…IPv6Address` (382, 8 bytes) |
/// | vertical scan | both addresses | `loxoDistinctDestinationPorts` (32473/24, 8 bytes): IANA has no distinct count of ports |
///
/// then `monitoringIntervalStartMilliSeconds` / `…EndMilliSeconds` (the epoch's
/// observation interval) and loxo's `loxoSpreadLower`, `loxoSpreadUpper`,
/// `loxoSpreadSigma` (float64), `loxoParticipantFlags` and `loxoEpoch`. The count is
/// the estimate rounded to an integer (saturating at the element's maximum), the
/// bounds its `[lower, upper]` rounded outwards.
///
/// Records compare as they are encoded (`sigma` by its bits), so equality is an
/// equivalence (`Eq`) and a decoded record equals the one emitted.
#[derive(Debug, Clone, Copy)]
pub struct ParticipantRecord {
    /// What the participant does.
    pub role: Role,
    /// The scanner's source or the victim.
    pub address: IpAddr,
    /// A vertical scan's destination.
    pub target: Option<IpAddr>,
    /// The distinct count: destinations, ports or sources.
    pub count: u64,
    /// Lower bound on the spread.
    pub lower: u64,
    /// Upper bound on the spread.
    pub upper: u64,
    /// The estimate's standard error.
    pub sigma: f64,
    /// [`flags::SPREAD_SATURATED`] and [`flags::PARTICIPANTS_LEFT_OUT`].
    pub flags: u8,
    /// The epoch.
    pub epoch: u32,
    /// The epoch's observation start, ms since 1970.
    pub start_ms: u64,
    /// Its end.
    pub end_ms: u64,
}

impl PartialEq for ParticipantRecord {
    fn eq(&self, o: &Self) -> bool {
        (
            self.role,
            self.address,
            self.target,
            self.count,
            self.lower,
            self.upper,
            self.sigma.to_bits(),
        ) == (
            o.role,
            o.address,
            o.target,
            o.count,
            o.lower,
            o.upper,
            o.sigma.to_bits(),
        ) && (self.flags, self.epoch, self.start_ms, self.end_ms)
            == (o.flags, o.epoch, o.start_ms, o.end_ms)
    }
}

impl Eq for ParticipantRecord {}

impl ParticipantRecord {
    /// The record of a reported participant of epoch `epoch`, observed from
    /// `start_ms` to `end_ms`; `left_out`: its list was full.
    pub fn from_participant(
        p: &Participant,
        epoch: u32,
        left_out: bool,
        start_ms: u64,
        end_ms: u64,
    ) -> Self {
        let mut f = 0;
        if p.saturated {
            f |= flags::SPREAD_SATURATED;
        }
        if left_out {
            f |= flags::PARTICIPANTS_LEFT_OUT;
        }
        // Float to integer conversions saturate (NaN gives 0).
        Self {
            role: p.role,
            address: p.address,
            target: p.target,
            count: libm_round(p.spread.value) as u64,
            lower: p.lower as u64,
            upper: ceil(p.upper) as u64,
            sigma: p.spread.sigma,
            flags: f,
            epoch,
            start_ms,
            end_ms,
        }
    }

    /// Whether the record is IPv6 (its address is).
    pub const fn is_v6(&self) -> bool {
        self.address.is_ipv6()
    }

    /// The template it is written with.
    pub const fn template(&self) -> Template<'static> {
        match (self.role, self.is_v6()) {
            (Role::HorizontalScan, false) => ie::SCANNER_V4,
            (Role::HorizontalScan, true) => ie::SCANNER_V6,
            (Role::Victim, false) => ie::VICTIM_V4,
            (Role::Victim, true) => ie::VICTIM_V6,
            (Role::VerticalScan, false) => ie::VERTICAL_V4,
            (Role::VerticalScan, true) => ie::VERTICAL_V6,
        }
    }

    /// Bytes [`emit`](Self::emit) writes: 53 to 85.
    pub const fn wire_len(&self) -> usize {
        match self.template().record_len() {
            Some(n) => n,
            None => 0,
        }
    }

    /// Writes the record in its template at the start of `buf`; returns
    /// [`wire_len`](Self::wire_len). Bytes past `buf`'s end are not written. A
    /// vertical scan's target of another family than its source (which no flow can
    /// have) is written as the unspecified address.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        put_address(&mut w, self.address, self.is_v6());
        if self.role == Role::VerticalScan {
            let t = self.target.unwrap_or(if self.is_v6() {
                IpAddr::from([0u8; 16])
            } else {
                IpAddr::from([0u8; 4])
            });
            put_address(&mut w, t, self.is_v6());
            w.u64(self.count);
        } else if self.is_v6() {
            w.u64(self.count);
        } else {
            w.u32(u32::try_from(self.count).unwrap_or(u32::MAX));
        }
        w.u64(self.start_ms);
        w.u64(self.end_ms);
        w.u64(self.lower);
        w.u64(self.upper);
        w.u64(self.sigma.to_bits());
        w.u8(self.flags);
        w.u32(self.epoch);
        w.len()
    }

    /// Reads a participant record under any template with a distinct-count element
    /// (IANA 378–383) or `loxoDistinctDestinationPorts`, and the address its role
    /// is keyed by (`None` for other templates): a distinct count of destinations
    /// makes a horizontal scanner keyed by its source, of sources a victim keyed by
    /// its destination, of ports a vertical scan keyed by both. Missing loxo
    /// elements read 0.
    ///
    /// # Errors
    /// [`Error::FieldLength`] for a known field of a length its type does not allow,
    /// [`Error::Truncated`] for a record shorter than its template.
    pub fn parse(template: &Template<'_>, record: &[u8]) -> Option<Result<Self, Error>> {
        let has = |pen, id| template.fields.iter().any(|f| f.is(pen, id));
        let any = |ids: [u16; 3]| ids.iter().any(|&id| has(None, id));
        let role = if has(Some(LOXO_PEN), loxo::DISTINCT_DESTINATION_PORTS) {
            Role::VerticalScan
        } else if any([
            iana::DISTINCT_COUNT_OF_DESTINATION_IP_ADDRESS,
            iana::DISTINCT_COUNT_OF_DESTINATION_IPV4_ADDRESS,
            iana::DISTINCT_COUNT_OF_DESTINATION_IPV6_ADDRESS,
        ]) {
            Role::HorizontalScan
        } else if any([
            iana::DISTINCT_COUNT_OF_SOURCE_IP_ADDRESS,
            iana::DISTINCT_COUNT_OF_SOURCE_IPV4_ADDRESS,
            iana::DISTINCT_COUNT_OF_SOURCE_IPV6_ADDRESS,
        ]) {
            Role::Victim
        } else {
            return None;
        };
        Some(Self::parse_fields(template, record, role))
    }

    fn parse_fields(t: &Template<'_>, record: &[u8], role: Role) -> Result<Self, Error> {
        let mut r = Self {
            role,
            address: IpAddr::from([0u8; 4]),
            target: None,
            count: 0,
            lower: 0,
            upper: 0,
            sigma: 0.0,
            flags: 0,
            epoch: 0,
            start_ms: 0,
            end_ms: 0,
        };
        let (mut src, mut dst) = (None, None);
        let uint = |v: &[u8]| be_uint(v).ok_or(Error::FieldLength);
        for field in Fields::new(t, record) {
            let (f, v) = field?;
            match (f.enterprise, f.id) {
                (None, iana::SOURCE_IPV4_ADDRESS | iana::SOURCE_IPV6_ADDRESS) => {
                    src = Some(address(v)?);
                }
                (None, iana::DESTINATION_IPV4_ADDRESS | iana::DESTINATION_IPV6_ADDRESS) => {
                    dst = Some(address(v)?);
                }
                (
                    None,
                    iana::DISTINCT_COUNT_OF_SOURCE_IP_ADDRESS
                    | iana::DISTINCT_COUNT_OF_DESTINATION_IP_ADDRESS
                    | iana::DISTINCT_COUNT_OF_SOURCE_IPV4_ADDRESS
                    | iana::DISTINCT_COUNT_OF_DESTINATION_IPV4_ADDRESS
                    | iana::DISTINCT_COUNT_OF_SOURCE_IPV6_ADDRESS
                    | iana::DISTINCT_COUNT_OF_DESTINATION_IPV6_ADDRESS,
                )
                | (Some(LOXO_PEN), loxo::DISTINCT_DESTINATION_PORTS) => r.count = uint(v)?,
                (None, iana::MONITORING_INTERVAL_START_MILLISECONDS) => r.start_ms = uint(v)?,
                (None, iana::MONITORING_INTERVAL_END_MILLISECONDS) => r.end_ms = uint(v)?,
                (Some(LOXO_PEN), loxo::SPREAD_LOWER) => r.lower = uint(v)?,
                (Some(LOXO_PEN), loxo::SPREAD_UPPER) => r.upper = uint(v)?,
                (Some(LOXO_PEN), loxo::SPREAD_SIGMA) => {
                    r.sigma = match *v {
                        [a, b, c, d] => f64::from(f32::from_be_bytes([a, b, c, d])),
                        [a, b, c, d, e, f, g, h] => f64::from_be_bytes([a, b, c, d, e, f, g, h]),
                        _ => return Err(Error::FieldLength),
                    };
                }
                (Some(LOXO_PEN), loxo::PARTICIPANT_FLAGS) => {
                    r.flags = u8::try_from(uint(v)?).map_err(|_| Error::FieldLength)?;
                }
                (Some(LOXO_PEN), loxo::EPOCH) => {
                    r.epoch = u32::try_from(uint(v)?).map_err(|_| Error::FieldLength)?;
                }
                _ => {}
            }
        }
        let (key, target) = match role {
            Role::HorizontalScan => (src, None),
            Role::Victim => (dst, None),
            Role::VerticalScan => (src, dst),
        };
        // A template without the address its role is keyed by: not a participant
        // loxo can name.
        r.address = key.ok_or(Error::Template)?;
        r.target = target;
        Ok(r)
    }
}

/// An address field's value: 4 or 16 bytes.
fn address(v: &[u8]) -> Result<IpAddr, Error> {
    if let Ok(a) = <[u8; 4]>::try_from(v) {
        Ok(IpAddr::from(a))
    } else {
        <[u8; 16]>::try_from(v)
            .map(IpAddr::from)
            .map_err(|_| Error::FieldLength)
    }
}

/// Writes `a` in the record's family (an address of the other family, which a
/// flow's endpoints never are, as the unspecified one).
fn put_address(w: &mut Writer<'_>, a: IpAddr, v6: bool) {
    match (a, v6) {
        (IpAddr::V4(a), false) => w.bytes(&a.octets()),
        (IpAddr::V6(a), true) => w.bytes(&a.octets()),
        (_, false) => w.bytes(&[0; 4]),
        (_, true) => w.bytes(&[0; 16]),
    }
}

/// `x` rounded half away from zero (`f64::round` needs `std`).
fn libm_round(x: f64) -> f64 {
    let t = x as i64 as f64;
    if (x - t).abs() >= 0.5 {
        t + x.signum()
    } else {
        t
    }
}

/// The smallest integer not below `x` (for `x` in the `i64` range).
fn ceil(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t < x {
        t + 1.0
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loxo_flow::Estimate;

    fn participant(role: Role, address: IpAddr, target: Option<IpAddr>) -> Participant {
        Participant {
            role,
            address,
            target,
            spread: Estimate {
                value: 1234.6,
                sigma: 40.25,
            },
            lower: 1073.5,
            upper: 1395.6,
            sampled: 7,
            saturated: true,
        }
    }

    #[test]
    fn every_template_round_trips() {
        let (v4, v6) = (IpAddr::from([192, 0, 2, 10]), IpAddr::from([0x20; 16]));
        let (t4, t6) = (IpAddr::from([203, 0, 113, 9]), IpAddr::from([0x30; 16]));
        for (role, a, t) in [
            (Role::HorizontalScan, v4, None),
            (Role::HorizontalScan, v6, None),
            (Role::Victim, v4, None),
            (Role::Victim, v6, None),
            (Role::VerticalScan, v4, Some(t4)),
            (Role::VerticalScan, v6, Some(t6)),
        ] {
            let r = ParticipantRecord::from_participant(&participant(role, a, t), 7, true, 10, 20);
            assert_eq!((r.count, r.lower, r.upper), (1235, 1073, 1396));
            assert_eq!(
                r.flags,
                flags::SPREAD_SATURATED | flags::PARTICIPANTS_LEFT_OUT
            );
            let mut b = [0u8; 128];
            let n = r.emit(&mut b);
            assert_eq!(Some(n), r.template().record_len());
            let back = ParticipantRecord::parse(&r.template(), &b[..n]);
            assert_eq!(back, Some(Ok(r)), "{role:?} {a}");
        }
    }

    #[test]
    fn counts_saturate_and_other_templates_are_not_participants() {
        let mut p = participant(Role::HorizontalScan, IpAddr::from([10, 0, 0, 1]), None);
        p.spread.value = 1e12;
        let r = ParticipantRecord::from_participant(&p, 0, false, 0, 0);
        let mut b = [0u8; 64];
        let n = r.emit(&mut b);
        // distinctCountOfDestinationIPv4Address is 4 bytes: the largest value.
        assert_eq!(b[4..8], [0xff; 4]);
        assert_eq!(n, 53);
        assert!(ParticipantRecord::parse(&ie::FLOW_V4, &[0; 82]).is_none());
        assert!(ParticipantRecord::parse(&ie::EPOCH, &[0; 121]).is_none());
        assert_eq!(
            ParticipantRecord::parse(&ie::SCANNER_V4, &b[..10]),
            Some(Err(Error::Truncated))
        );
        assert_eq!(libm_round(2.5), 3.0);
        assert_eq!(libm_round(2.49), 2.0);
        assert_eq!((ceil(2.0), ceil(2.01)), (2.0, 3.0));
    }
}
