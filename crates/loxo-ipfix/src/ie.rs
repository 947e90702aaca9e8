//! Information elements (RFC 7012 and the IANA IPFIX registry), loxo's
//! enterprise-specific elements, and the templates loxo exports: five for the
//! elephants and the epoch, six for the DDoS participants.
//!
//! Elephants have two templates per family: one with the transport ports (every
//! protocol but ICMP/ICMPv6) and one with `icmpTypeCodeIPv4`/`IPv6` and no ports.
//! A single template carrying both (loxo up to issue 32) is valid IPFIX, but nfdump
//! 1.7 takes the ICMP type/code element for the destination port of the flows it does
//! not key on TCP or UDP: it listed loxo's SCTP elephants with destination port 0
//! (TCP and UDP kept theirs; measured with the old templates, issue 32).
//!
//! The templates are fixed (their layout is the contract documented in
//! `docs/ipfix.md`): records are fixed-length, every integer in its full size.

use crate::template::{FieldSpec, Template};

/// IANA-assigned information elements loxo exports (ID, abstract type, size).
pub mod iana {
    /// `octetDeltaCount` (unsigned64): IP bytes, header + payload, of the flow's packets
    /// in the observation interval.
    pub const OCTET_DELTA_COUNT: u16 = 1;
    /// `packetDeltaCount` (unsigned64).
    pub const PACKET_DELTA_COUNT: u16 = 2;
    /// `protocolIdentifier` (unsigned8): the IP protocol (IPv6: the last next header).
    pub const PROTOCOL_IDENTIFIER: u16 = 4;
    /// `sourceTransportPort` (unsigned16): TCP, UDP and SCTP only, else 0.
    pub const SOURCE_TRANSPORT_PORT: u16 = 7;
    /// `sourceIPv4Address` (ipv4Address).
    pub const SOURCE_IPV4_ADDRESS: u16 = 8;
    /// `destinationTransportPort` (unsigned16): TCP, UDP and SCTP only, else 0.
    pub const DESTINATION_TRANSPORT_PORT: u16 = 11;
    /// `destinationIPv4Address` (ipv4Address).
    pub const DESTINATION_IPV4_ADDRESS: u16 = 12;
    /// `sourceIPv6Address` (ipv6Address).
    pub const SOURCE_IPV6_ADDRESS: u16 = 27;
    /// `destinationIPv6Address` (ipv6Address).
    pub const DESTINATION_IPV6_ADDRESS: u16 = 28;
    /// `icmpTypeCodeIPv4` (unsigned16): type · 256 + code of an ICMP flow.
    pub const ICMP_TYPE_CODE_IPV4: u16 = 32;
    /// `icmpTypeCodeIPv6` (unsigned16): type · 256 + code of an ICMPv6 flow.
    pub const ICMP_TYPE_CODE_IPV6: u16 = 139;
    /// `ignoredPacketTotalCount` (unsigned64): packets the metering process did not
    /// observe since it started (RFC 7011 §4.2's reliability statistics): a host
    /// probe's kernel drops.
    pub const IGNORED_PACKET_TOTAL_COUNT: u16 = 164;
    /// `observationDomainId` (unsigned32): the scope of loxo's epoch options record.
    pub const OBSERVATION_DOMAIN_ID: u16 = 149;
    /// `flowStartMilliseconds` (dateTimeMilliseconds).
    pub const FLOW_START_MILLISECONDS: u16 = 152;
    /// `flowEndMilliseconds` (dateTimeMilliseconds).
    pub const FLOW_END_MILLISECONDS: u16 = 153;
    /// `monitoringIntervalStartMilliSeconds` (dateTimeMilliseconds).
    pub const MONITORING_INTERVAL_START_MILLISECONDS: u16 = 359;
    /// `monitoringIntervalEndMilliSeconds` (dateTimeMilliseconds).
    pub const MONITORING_INTERVAL_END_MILLISECONDS: u16 = 360;
    /// `distinctCountOfSourceIPAddress` (unsigned64, RFC 7015): distinct source
    /// addresses of either family. loxo exports the family's own element instead
    /// (a participant's elements are always of its family); read back all the same.
    pub const DISTINCT_COUNT_OF_SOURCE_IP_ADDRESS: u16 = 378;
    /// `distinctCountOfDestinationIPAddress` (unsigned64): read back, not exported.
    pub const DISTINCT_COUNT_OF_DESTINATION_IP_ADDRESS: u16 = 379;
    /// `distinctCountOfSourceIPv4Address` (unsigned32): an IPv4 victim's distinct
    /// sources.
    pub const DISTINCT_COUNT_OF_SOURCE_IPV4_ADDRESS: u16 = 380;
    /// `distinctCountOfDestinationIPv4Address` (unsigned32): an IPv4 scanner's
    /// distinct destinations.
    pub const DISTINCT_COUNT_OF_DESTINATION_IPV4_ADDRESS: u16 = 381;
    /// `distinctCountOfSourceIPv6Address` (unsigned64): an IPv6 victim's distinct
    /// sources.
    pub const DISTINCT_COUNT_OF_SOURCE_IPV6_ADDRESS: u16 = 382;
    /// `distinctCountOfDestinationIPv6Address` (unsigned64): an IPv6 scanner's
    /// distinct destinations.
    pub const DISTINCT_COUNT_OF_DESTINATION_IPV6_ADDRESS: u16 = 383;
}

/// The private enterprise number loxo's own elements are scoped by: 32473, which
/// RFC 5612 reserves for documentation and examples. loxo has no PEN of its own; a
/// documentation number cannot collide with a real enterprise's elements, which
/// borrowing another project's number could. Collectors show the elements as
/// enterprise 32473 (Wireshark: "Example Enterprise").
pub const LOXO_PEN: u32 = 32473;

/// loxo's enterprise-specific elements (enterprise bit set, [`LOXO_PEN`]).
pub mod loxo {
    /// `loxoOctetLower` (unsigned64): lower bound on the flow's IP bytes.
    pub const OCTET_LOWER: u16 = 1;
    /// `loxoOctetUpper` (unsigned64): upper bound on the flow's IP bytes (always holds).
    pub const OCTET_UPPER: u16 = 2;
    /// `loxoPacketLower` (unsigned64): lower bound on the flow's packets.
    pub const PACKET_LOWER: u16 = 3;
    /// `loxoPacketUpper` (unsigned64): upper bound on the flow's packets (always holds).
    pub const PACKET_UPPER: u16 = 4;
    /// `loxoElephantFlags` (unsigned8, flags): see [`crate::flags`].
    pub const ELEPHANT_FLAGS: u16 = 5;
    /// `loxoEpoch` (unsigned32): the monitor's epoch number.
    pub const EPOCH: u16 = 6;
    /// `loxoFrames` (unsigned64): frames seen in the epoch, of every kind.
    pub const FRAMES: u16 = 10;
    /// `loxoPackets` (unsigned64): IP packets in the epoch.
    pub const PACKETS: u16 = 11;
    /// `loxoOctets` (unsigned64): IP bytes (header + payload) in the epoch.
    pub const OCTETS: u16 = 12;
    /// `loxoFragments` (unsigned64): non-first fragments among the packets.
    pub const FRAGMENTS: u16 = 13;
    /// `loxoNotIp` (unsigned64): frames that are not IP.
    pub const NOT_IP: u16 = 14;
    /// `loxoMalformed` (unsigned64): malformed frames, every reason.
    pub const MALFORMED: u16 = 15;
    /// `loxoDistinctFlows` (unsigned64): HyperLogLog estimate of distinct flows.
    pub const DISTINCT_FLOWS: u16 = 16;
    /// `loxoDistinctSources` (unsigned64): HyperLogLog estimate of distinct sources.
    pub const DISTINCT_SOURCES: u16 = 17;
    /// `loxoNewFlows` (unsigned64): flows not seen in this or the previous epoch.
    pub const NEW_FLOWS: u16 = 18;
    /// `loxoElephantsLeftOut` (unsigned32): elephants that did not fit in the report.
    pub const ELEPHANTS_LEFT_OUT: u16 = 19;
    /// `loxoEpochFlags` (unsigned8, flags): see [`crate::flags`].
    pub const EPOCH_FLAGS: u16 = 20;
    /// `loxoThetaNumerator` (unsigned64): θ = numerator / denominator.
    pub const THETA_NUMERATOR: u16 = 21;
    /// `loxoThetaDenominator` (unsigned64).
    pub const THETA_DENOMINATOR: u16 = 22;
    /// `loxoElephants` (unsigned32): elephant records the epoch exports.
    pub const ELEPHANTS: u16 = 23;
    /// `loxoDistinctDestinationPorts` (unsigned64): a vertical scan's distinct
    /// destination ports (IANA has no distinct count of ports).
    pub const DISTINCT_DESTINATION_PORTS: u16 = 24;
    /// `loxoSpreadLower` (unsigned64): lower bound on a participant's spread (4σ
    /// below the estimate, never below the pairs its sketch holds).
    pub const SPREAD_LOWER: u16 = 25;
    /// `loxoSpreadUpper` (unsigned64): upper bound on the spread (4σ above).
    pub const SPREAD_UPPER: u16 = 26;
    /// `loxoSpreadSigma` (float64): the estimate's standard error.
    pub const SPREAD_SIGMA: u16 = 27;
    /// `loxoParticipantFlags` (unsigned8, flags): see [`crate::flags`].
    pub const PARTICIPANT_FLAGS: u16 = 28;
    /// `loxoIgnoredPackets` (unsigned64): packets the metering process did not observe
    /// in the epoch (a host probe's kernel drops).
    pub const IGNORED_PACKETS: u16 = 29;
}

/// Template ID of IPv4 elephant records.
pub const FLOW_V4_TEMPLATE_ID: u16 = 256;
/// Template ID of IPv6 elephant records.
pub const FLOW_V6_TEMPLATE_ID: u16 = 257;
/// Template ID of the per-epoch options record.
pub const EPOCH_TEMPLATE_ID: u16 = 258;
/// Template ID of IPv4 horizontal scanners (a source's distinct destinations).
pub const SCANNER_V4_TEMPLATE_ID: u16 = 259;
/// Template ID of IPv6 horizontal scanners.
pub const SCANNER_V6_TEMPLATE_ID: u16 = 260;
/// Template ID of IPv4 victims (a destination's distinct sources).
pub const VICTIM_V4_TEMPLATE_ID: u16 = 261;
/// Template ID of IPv6 victims.
pub const VICTIM_V6_TEMPLATE_ID: u16 = 262;
/// Template ID of IPv4 vertical scans (a (source, destination)'s distinct ports).
pub const VERTICAL_V4_TEMPLATE_ID: u16 = 263;
/// Template ID of IPv6 vertical scans.
pub const VERTICAL_V6_TEMPLATE_ID: u16 = 264;

const fn iana(id: u16, len: u16) -> FieldSpec {
    FieldSpec::iana(id, len)
}

const fn ours(id: u16, len: u16) -> FieldSpec {
    FieldSpec::enterprise(id, len, LOXO_PEN)
}

/// Template ID of the per-epoch loss options record ([`LOSS`]).
pub const LOSS_TEMPLATE_ID: u16 = 267;
/// Template ID of IPv4 ICMP elephant records.
pub const FLOW_ICMP_V4_TEMPLATE_ID: u16 = 265;
/// Template ID of IPv6 ICMPv6 elephant records.
pub const FLOW_ICMP_V6_TEMPLATE_ID: u16 = 266;

/// The fields of a flow template: the addresses, then `$l4` (the ports and protocol,
/// or the protocol and ICMP type/code), then counters, times and loxo's elements.
macro_rules! flow_fields {
    ($src:expr, $dst:expr, $addr:expr; $($l4:expr),+) => {
        [
            iana($src, $addr),
            iana($dst, $addr),
            $($l4,)+
            iana(iana::OCTET_DELTA_COUNT, 8),
            iana(iana::PACKET_DELTA_COUNT, 8),
            iana(iana::FLOW_START_MILLISECONDS, 8),
            iana(iana::FLOW_END_MILLISECONDS, 8),
            ours(loxo::OCTET_LOWER, 8),
            ours(loxo::OCTET_UPPER, 8),
            ours(loxo::PACKET_LOWER, 8),
            ours(loxo::PACKET_UPPER, 8),
            ours(loxo::ELEPHANT_FLAGS, 1),
            ours(loxo::EPOCH, 4),
        ]
    };
}

const FLOW_V4_FIELDS: [FieldSpec; 15] = flow_fields!(
    iana::SOURCE_IPV4_ADDRESS, iana::DESTINATION_IPV4_ADDRESS, 4;
    iana(iana::SOURCE_TRANSPORT_PORT, 2),
    iana(iana::DESTINATION_TRANSPORT_PORT, 2),
    iana(iana::PROTOCOL_IDENTIFIER, 1)
);

const FLOW_V6_FIELDS: [FieldSpec; 15] = flow_fields!(
    iana::SOURCE_IPV6_ADDRESS, iana::DESTINATION_IPV6_ADDRESS, 16;
    iana(iana::SOURCE_TRANSPORT_PORT, 2),
    iana(iana::DESTINATION_TRANSPORT_PORT, 2),
    iana(iana::PROTOCOL_IDENTIFIER, 1)
);

const FLOW_ICMP_V4_FIELDS: [FieldSpec; 14] = flow_fields!(
    iana::SOURCE_IPV4_ADDRESS, iana::DESTINATION_IPV4_ADDRESS, 4;
    iana(iana::PROTOCOL_IDENTIFIER, 1), iana(iana::ICMP_TYPE_CODE_IPV4, 2)
);

const FLOW_ICMP_V6_FIELDS: [FieldSpec; 14] = flow_fields!(
    iana::SOURCE_IPV6_ADDRESS, iana::DESTINATION_IPV6_ADDRESS, 16;
    iana(iana::PROTOCOL_IDENTIFIER, 1), iana(iana::ICMP_TYPE_CODE_IPV6, 2)
);

const EPOCH_FIELDS: [FieldSpec; 18] = [
    iana(iana::OBSERVATION_DOMAIN_ID, 4),
    iana(iana::MONITORING_INTERVAL_START_MILLISECONDS, 8),
    iana(iana::MONITORING_INTERVAL_END_MILLISECONDS, 8),
    ours(loxo::EPOCH, 4),
    ours(loxo::FRAMES, 8),
    ours(loxo::PACKETS, 8),
    ours(loxo::OCTETS, 8),
    ours(loxo::FRAGMENTS, 8),
    ours(loxo::NOT_IP, 8),
    ours(loxo::MALFORMED, 8),
    ours(loxo::DISTINCT_FLOWS, 8),
    ours(loxo::DISTINCT_SOURCES, 8),
    ours(loxo::NEW_FLOWS, 8),
    ours(loxo::ELEPHANTS_LEFT_OUT, 4),
    ours(loxo::EPOCH_FLAGS, 1),
    ours(loxo::THETA_NUMERATOR, 8),
    ours(loxo::THETA_DENOMINATOR, 8),
    ours(loxo::ELEPHANTS, 4),
];

const LOSS_FIELDS: [FieldSpec; 6] = [
    iana(iana::OBSERVATION_DOMAIN_ID, 4),
    iana(iana::MONITORING_INTERVAL_START_MILLISECONDS, 8),
    iana(iana::MONITORING_INTERVAL_END_MILLISECONDS, 8),
    ours(loxo::EPOCH, 4),
    iana(iana::IGNORED_PACKET_TOTAL_COUNT, 8),
    ours(loxo::IGNORED_PACKETS, 8),
];

/// The fields of a participant template: the key's address(es), the distinct
/// count element `$count`, the epoch's interval, loxo's bounds, σ, flags and
/// epoch.
macro_rules! participant_fields {
    ($($addr:expr),+ ; $count:expr) => {
        [
            $($addr,)+
            $count,
            iana(iana::MONITORING_INTERVAL_START_MILLISECONDS, 8),
            iana(iana::MONITORING_INTERVAL_END_MILLISECONDS, 8),
            ours(loxo::SPREAD_LOWER, 8),
            ours(loxo::SPREAD_UPPER, 8),
            ours(loxo::SPREAD_SIGMA, 8),
            ours(loxo::PARTICIPANT_FLAGS, 1),
            ours(loxo::EPOCH, 4),
        ]
    };
}

const SCANNER_V4_FIELDS: [FieldSpec; 9] = participant_fields!(
    iana(iana::SOURCE_IPV4_ADDRESS, 4);
    iana(iana::DISTINCT_COUNT_OF_DESTINATION_IPV4_ADDRESS, 4)
);
const SCANNER_V6_FIELDS: [FieldSpec; 9] = participant_fields!(
    iana(iana::SOURCE_IPV6_ADDRESS, 16);
    iana(iana::DISTINCT_COUNT_OF_DESTINATION_IPV6_ADDRESS, 8)
);
const VICTIM_V4_FIELDS: [FieldSpec; 9] = participant_fields!(
    iana(iana::DESTINATION_IPV4_ADDRESS, 4);
    iana(iana::DISTINCT_COUNT_OF_SOURCE_IPV4_ADDRESS, 4)
);
const VICTIM_V6_FIELDS: [FieldSpec; 9] = participant_fields!(
    iana(iana::DESTINATION_IPV6_ADDRESS, 16);
    iana(iana::DISTINCT_COUNT_OF_SOURCE_IPV6_ADDRESS, 8)
);
const VERTICAL_V4_FIELDS: [FieldSpec; 10] = participant_fields!(
    iana(iana::SOURCE_IPV4_ADDRESS, 4), iana(iana::DESTINATION_IPV4_ADDRESS, 4);
    ours(loxo::DISTINCT_DESTINATION_PORTS, 8)
);
const VERTICAL_V6_FIELDS: [FieldSpec; 10] = participant_fields!(
    iana(iana::SOURCE_IPV6_ADDRESS, 16), iana(iana::DESTINATION_IPV6_ADDRESS, 16);
    ours(loxo::DISTINCT_DESTINATION_PORTS, 8)
);

/// IPv4 horizontal scanners: 9 fields, 53-byte records.
pub const SCANNER_V4: Template<'static> =
    Template::new(SCANNER_V4_TEMPLATE_ID, 0, &SCANNER_V4_FIELDS);
/// IPv6 horizontal scanners: 9 fields, 69-byte records.
pub const SCANNER_V6: Template<'static> =
    Template::new(SCANNER_V6_TEMPLATE_ID, 0, &SCANNER_V6_FIELDS);
/// IPv4 victims: 9 fields, 53-byte records.
pub const VICTIM_V4: Template<'static> = Template::new(VICTIM_V4_TEMPLATE_ID, 0, &VICTIM_V4_FIELDS);
/// IPv6 victims: 9 fields, 69-byte records.
pub const VICTIM_V6: Template<'static> = Template::new(VICTIM_V6_TEMPLATE_ID, 0, &VICTIM_V6_FIELDS);
/// IPv4 vertical scans: 10 fields, 61-byte records.
pub const VERTICAL_V4: Template<'static> =
    Template::new(VERTICAL_V4_TEMPLATE_ID, 0, &VERTICAL_V4_FIELDS);
/// IPv6 vertical scans: 10 fields, 85-byte records.
pub const VERTICAL_V6: Template<'static> =
    Template::new(VERTICAL_V6_TEMPLATE_ID, 0, &VERTICAL_V6_FIELDS);

/// The six participant templates, in ID order.
pub const PARTICIPANTS: [Template<'static>; 6] = [
    SCANNER_V4,
    SCANNER_V6,
    VICTIM_V4,
    VICTIM_V6,
    VERTICAL_V4,
    VERTICAL_V6,
];

/// IPv4 elephants with transport ports (every protocol but ICMP): 15 fields, 82-byte
/// records.
pub const FLOW_V4: Template<'static> = Template::new(FLOW_V4_TEMPLATE_ID, 0, &FLOW_V4_FIELDS);
/// IPv6 elephants with transport ports (every protocol but ICMPv6): 15 fields,
/// 106-byte records.
pub const FLOW_V6: Template<'static> = Template::new(FLOW_V6_TEMPLATE_ID, 0, &FLOW_V6_FIELDS);
/// IPv4 ICMP elephants: `icmpTypeCodeIPv4`, no ports; 14 fields, 80-byte records.
pub const FLOW_ICMP_V4: Template<'static> =
    Template::new(FLOW_ICMP_V4_TEMPLATE_ID, 0, &FLOW_ICMP_V4_FIELDS);
/// IPv6 ICMPv6 elephants: `icmpTypeCodeIPv6`, no ports; 14 fields, 104-byte records.
pub const FLOW_ICMP_V6: Template<'static> =
    Template::new(FLOW_ICMP_V6_TEMPLATE_ID, 0, &FLOW_ICMP_V6_FIELDS);
/// Packets the metering process did not observe (a host probe's kernel drops), an
/// options template scoped by `observationDomainId` (RFC 7011 §4.2's reliability
/// statistics): 6 fields, 40-byte records. Sent with `Config::loss_records`.
pub const LOSS: Template<'static> = Template::new(LOSS_TEMPLATE_ID, 1, &LOSS_FIELDS);
/// The four flow templates, in the order the template set carries them.
pub const FLOWS: [Template<'static>; 4] = [FLOW_V4, FLOW_V6, FLOW_ICMP_V4, FLOW_ICMP_V6];
/// The epoch's totals, an options template scoped by `observationDomainId`: 18
/// fields, 121-byte records.
pub const EPOCH: Template<'static> = Template::new(EPOCH_TEMPLATE_ID, 1, &EPOCH_FIELDS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sizes() {
        assert_eq!(FLOW_V4.record_len(), Some(82));
        assert_eq!(FLOW_V6.record_len(), Some(106));
        assert_eq!(FLOW_ICMP_V4.record_len(), Some(80));
        assert_eq!(FLOW_ICMP_V6.record_len(), Some(104));
        assert_eq!(EPOCH.record_len(), Some(121));
        assert_eq!(LOSS.record_len(), Some(40));
        assert_eq!(LOSS.wire_len(), 6 + 4 * 4 + 2 * 8);
        assert_eq!(FLOW_V4.wire_len(), 4 + 9 * 4 + 6 * 8);
        assert_eq!(FLOW_V6.wire_len(), 88);
        assert_eq!(FLOW_ICMP_V4.wire_len(), 4 + 8 * 4 + 6 * 8);
        assert_eq!(FLOW_ICMP_V6.wire_len(), 84);
        // No flow template has both the ports and an ICMP type/code element.
        for t in FLOWS {
            let has = |id| t.fields.iter().any(|f| f.is(None, id));
            let ports = has(iana::DESTINATION_TRANSPORT_PORT);
            let icmp = has(iana::ICMP_TYPE_CODE_IPV4) || has(iana::ICMP_TYPE_CODE_IPV6);
            assert!(ports != icmp, "template {}", t.id);
        }
        assert_eq!(EPOCH.wire_len(), 6 + 3 * 4 + 15 * 8);
        let lens = PARTICIPANTS.map(|t| (t.id, t.record_len(), t.wire_len()));
        assert_eq!(
            lens,
            [
                (259, Some(53), 60),
                (260, Some(69), 60),
                (261, Some(53), 60),
                (262, Some(69), 60),
                (263, Some(61), 68),
                (264, Some(85), 68),
            ]
        );
    }
}
