//! [`LossRecord`]: the packets an epoch's metering process did not observe — a host
//! probe's kernel drops — as an options record of [`crate::ie::LOSS`] (RFC 7011 §4.2's
//! metering process reliability statistics), so that a collector sees what the
//! elephant and epoch records could not count.

use crate::ie::{iana, loxo, LOXO_PEN};
use crate::record::Fields;
use crate::template::Template;
use crate::wire::{be_uint, Writer};
use crate::Error;

/// One epoch's loss: the packets not observed in it and since the exporter started.
///
/// ```
/// use loxo_ipfix::{ie, LossRecord};
/// let r = LossRecord { observation_domain_id: 7, epoch: 3, ignored_total: 900, ignored: 120, ..LossRecord::default() };
/// let mut b = [0u8; LossRecord::WIRE_LEN];
/// assert_eq!(r.emit(&mut b), 40);
/// assert_eq!(LossRecord::parse(&ie::LOSS, &b), Some(Ok(r)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LossRecord {
    /// `observationDomainId`, the scope.
    pub observation_domain_id: u32,
    /// `monitoringIntervalStartMilliSeconds`: the epoch's start.
    pub start_ms: u64,
    /// `monitoringIntervalEndMilliSeconds`: the epoch's end.
    pub end_ms: u64,
    /// The monitor's epoch number.
    pub epoch: u32,
    /// `ignoredPacketTotalCount`: packets not observed since the exporter started.
    pub ignored_total: u64,
    /// `loxoIgnoredPackets`: packets not observed in this epoch.
    pub ignored: u64,
}

impl LossRecord {
    /// Bytes of a record: 40.
    pub const WIRE_LEN: usize = 40;

    /// Writes the record in [`crate::ie::LOSS`]'s layout at the start of `buf`; returns
    /// [`WIRE_LEN`](Self::WIRE_LEN). Bytes past `buf`'s end are not written.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut w = Writer::new(buf);
        w.u32(self.observation_domain_id);
        w.u64(self.start_ms);
        w.u64(self.end_ms);
        w.u32(self.epoch);
        w.u64(self.ignored_total);
        w.u64(self.ignored);
        w.len()
    }

    /// Reads a loss record under an options template with `ignoredPacketTotalCount`
    /// and loxo's epoch element (`None` for other templates); missing fields read 0.
    ///
    /// # Errors
    /// [`Error::FieldLength`] or [`Error::Truncated`] as for
    /// [`FlowRecord::parse`](crate::FlowRecord::parse).
    pub fn parse(template: &Template<'_>, record: &[u8]) -> Option<Result<Self, Error>> {
        let has = |pen, id| template.fields.iter().any(|f| f.is(pen, id));
        if !template.is_options()
            || !has(None, iana::IGNORED_PACKET_TOTAL_COUNT)
            || !has(Some(LOXO_PEN), loxo::EPOCH)
        {
            return None;
        }
        Some(Self::parse_fields(template, record))
    }

    fn parse_fields(t: &Template<'_>, record: &[u8]) -> Result<Self, Error> {
        let mut r = Self::default();
        let uint = |v: &[u8]| be_uint(v).ok_or(Error::FieldLength);
        let uint32 = |v: &[u8]| u32::try_from(uint(v)?).map_err(|_| Error::FieldLength);
        for field in Fields::new(t, record) {
            let (f, v) = field?;
            match (f.enterprise, f.id) {
                (None, iana::OBSERVATION_DOMAIN_ID) => r.observation_domain_id = uint32(v)?,
                (None, iana::MONITORING_INTERVAL_START_MILLISECONDS) => r.start_ms = uint(v)?,
                (None, iana::MONITORING_INTERVAL_END_MILLISECONDS) => r.end_ms = uint(v)?,
                (None, iana::IGNORED_PACKET_TOTAL_COUNT) => r.ignored_total = uint(v)?,
                (Some(LOXO_PEN), loxo::EPOCH) => r.epoch = uint32(v)?,
                (Some(LOXO_PEN), loxo::IGNORED_PACKETS) => r.ignored = uint(v)?,
                _ => {}
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ie;

    #[test]
    fn round_trip_and_layout() {
        let r = LossRecord {
            observation_domain_id: 0x0102_0304,
            start_ms: 5,
            end_ms: 6,
            epoch: 9,
            ignored_total: 0x1122,
            ignored: 0x33,
        };
        let mut b = [0u8; LossRecord::WIRE_LEN];
        assert_eq!(r.emit(&mut b), LossRecord::WIRE_LEN);
        assert_eq!(Some(LossRecord::WIRE_LEN), ie::LOSS.record_len());
        assert_eq!(b[..4], [1, 2, 3, 4]);
        assert_eq!(b[20..24], [0, 0, 0, 9]);
        assert_eq!(b[24..32], [0, 0, 0, 0, 0, 0, 0x11, 0x22]);
        assert_eq!(LossRecord::parse(&ie::LOSS, &b), Some(Ok(r)));
        assert!(LossRecord::parse(&ie::EPOCH, &[0; 121]).is_none());
        assert_eq!(
            LossRecord::parse(&ie::LOSS, &b[..30]),
            Some(Err(Error::Truncated))
        );
    }
}
