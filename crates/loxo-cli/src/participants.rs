//! `loxo top`'s DDoS participants: each epoch's `loxo_flow::ParticipantsReport`
//! next to the exact spreads of the epoch's flows (`crate::trace::EpochSpreads` of
//! the exact counter's keys), with precision and recall.

use loxo_flow::{FlowKey, Participant, ParticipantsReport, Role as Kind};

use crate::trace::{EpochSpreads, Role, SpreadKey};

/// A reported participant and its exact spread in the epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParticipantRow {
    /// What the sketch reported.
    pub participant: Participant,
    /// The key's exact spread (distinct destinations, ports or sources).
    pub exact: u64,
}

/// One epoch's participants, estimated and exact.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticipantsResult {
    /// The sketch's report.
    pub report: ParticipantsReport,
    /// Its scanners with their exact spreads, in report order.
    pub scanners: Vec<ParticipantRow>,
    /// Its victims with their exact spreads.
    pub victims: Vec<ParticipantRow>,
    /// Exact distinct (source, destination) pairs.
    pub exact_pairs: u64,
    /// Exact distinct (source, destination, destination port) triples.
    pub exact_triples: u64,
    /// Keys whose exact spread reaches the share of their role's exact pairs.
    pub exact_above: Vec<(SpreadKey, u64)>,
    /// Reported keys that are above threshold / reported (1 if none reported).
    pub precision: f64,
    /// Keys above threshold that are reported / keys above threshold (1 if none).
    pub recall: f64,
}

/// The truth's name of a reported participant.
pub fn spread_key(p: &Participant) -> SpreadKey {
    match (p.role, p.target) {
        (Kind::VerticalScan, Some(t)) => SpreadKey::Pair(p.address, t),
        (Kind::Victim, _) => SpreadKey::Destination(p.address),
        _ => SpreadKey::Source(p.address),
    }
}

impl ParticipantsResult {
    /// `report` against the exact spreads of `flows` (the epoch's distinct flows).
    pub fn new<'a>(
        report: ParticipantsReport,
        flows: impl IntoIterator<Item = &'a FlowKey>,
    ) -> Self {
        let mut exact = EpochSpreads::new(u64::from(report.epoch));
        for k in flows {
            exact.add_flow(k);
        }
        let share = report.share.to_f64();
        let exact_above: Vec<(SpreadKey, u64)> = Role::ALL
            .iter()
            .flat_map(|&role| {
                let t = share * exact.pairs(role) as f64;
                exact
                    .spreads(role)
                    .into_iter()
                    .take_while(move |&(_, s)| s as f64 >= t)
            })
            .collect();
        let row = |p: &Participant| ParticipantRow {
            participant: *p,
            exact: exact.spread(&spread_key(p)),
        };
        let scanners: Vec<ParticipantRow> = report.scanners.iter().map(row).collect();
        let victims: Vec<ParticipantRow> = report.victims.iter().map(row).collect();
        let reported = scanners.len() + victims.len();
        let correct = scanners
            .iter()
            .chain(&victims)
            .filter(|r| {
                exact_above
                    .iter()
                    .any(|(k, _)| *k == spread_key(&r.participant))
            })
            .count();
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        Self {
            precision: ratio(correct, reported),
            recall: ratio(correct, exact_above.len()),
            exact_pairs: exact.pairs(Role::FanOut),
            exact_triples: exact.pairs(Role::DstPorts),
            exact_above,
            scanners,
            victims,
            report,
        }
    }
}
