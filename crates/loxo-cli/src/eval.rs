//! Run `FlowMonitor` and the exact counter side by side over a frame stream, epoch by
//! epoch — and, when asked, a `HostParticipants` beside them.

use std::collections::HashSet;

use loxo_core::DecodeError;
use loxo_flow::{
    Blocklist, Bounds, Config, ConfigError, FlowKey, FlowMonitor, HostParticipants, ParseError,
    ParticipantsConfig, ParticipantsReport, Report, ShareOf,
};

use crate::exact::{Counts, Exact};
use crate::participants::ParticipantsResult;

/// One elephant row: the monitor's estimate next to the exact figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// The flow.
    pub key: FlowKey,
    /// Bounds on the bytes.
    pub bytes: Bounds,
    /// Bounds on the packets.
    pub packets: Bounds,
    /// Certain (lower bound ≥ θ) or possible.
    pub certain: bool,
    /// Exact figures (zero if the flow never occurred).
    pub exact: Counts,
    /// Exact share of the epoch (bytes or packets per the config).
    pub true_share: f64,
}

/// Quality of one epoch's elephant report against the exact set.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochResult {
    /// Epoch number.
    pub epoch: u32,
    /// The monitor's report.
    pub report: Report,
    /// Reported elephants with exact figures.
    pub rows: Vec<Row>,
    /// Exact elephants (share ≥ θ).
    pub exact_elephants: Vec<(FlowKey, Counts)>,
    /// Exact flows in the epoch.
    pub exact_flows: usize,
    /// Exact distinct source addresses in the epoch.
    pub exact_sources: usize,
    /// Exact new flows: flows of the epoch absent from it and the previous epoch
    /// before (the monitor's definition).
    pub exact_new_flows: usize,
    /// Exact malformed counts per reason.
    pub exact_errors: [u64; ParseError::COUNT],
    /// |reported ∩ exact| / |reported| (1 if nothing reported).
    pub precision: f64,
    /// |reported ∩ exact| / |exact| (1 if no exact elephant).
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// Mean |upper − true| / true over exact elephants (ranking measure, the upper bound
    /// as the estimate; missed ones count 1).
    pub are: f64,
    /// Smallest true share among reported elephants (1 if none).
    pub min_reported_share: f64,
    /// Exact flows of the epoch the blocklist matches (0 without one): what the
    /// monitor's `blocklisted_flows` counts, but for its new-flow filter's misses.
    pub exact_blocklisted: usize,
    /// The epoch's DDoS participants and their exact spreads, when tracked
    /// ([`Evaluator::track_participants`]).
    pub participants: Option<ParticipantsResult>,
}

/// Evaluates a frame stream; `epoch_packets` = 0 means one epoch for the whole stream.
pub struct Evaluator {
    monitor: Box<FlowMonitor>,
    exact: Exact,
    config: Config,
    report: Box<Report>,
    /// The previous epoch's flows (for exact new-flow counts).
    previous: HashSet<FlowKey>,
    /// The monitor's blocklist, for the exact count of the flows it matches.
    blocklist: Option<Blocklist<'static>>,
    /// DDoS participants, fed the keys the exact counter parses.
    participants: Option<Box<HostParticipants>>,
    /// Finished epochs.
    pub results: Vec<EpochResult>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Evaluator {
    /// A fresh evaluator, or why the monitor refuses `config`.
    ///
    /// # Errors
    /// [`ConfigError::ThetaBelowMin`] when `config.theta` is below the monitor's
    /// `θ_min` ([`FlowMonitor::THETA_MIN`], 1/256).
    pub fn try_new(config: Config) -> Result<Self, ConfigError> {
        // Checked before the monitor is built: built on the stack and then boxed, a
        // 64 KiB value is copied once more for nothing.
        FlowMonitor::<{ loxo_flow::DEFAULT_CANDIDATES }>::check(&config)?;
        Ok(Self {
            monitor: Box::new(FlowMonitor::new(config)),
            exact: Exact::with_weight(config.byte_weight),
            config,
            report: Box::default(),
            previous: HashSet::new(),
            blocklist: None,
            participants: None,
            results: Vec::new(),
        })
    }

    /// Tracks the DDoS participants too: a [`HostParticipants`] under `config`,
    /// fed every parsed flow and closed with the monitor's epochs; each
    /// [`EpochResult::participants`] then holds its report and the exact spreads.
    pub fn track_participants(&mut self, config: ParticipantsConfig) {
        self.participants = Some(Box::new(HostParticipants::new(config)));
    }

    /// The participants' memory in bytes (0 when not tracked).
    pub fn participants_memory_bytes(&self) -> usize {
        self.participants
            .as_ref()
            .map_or(0, |_| HostParticipants::MEMORY_BYTES)
    }

    /// Gives the monitor a blocklist ([`FlowMonitor::set_blocklist`]); each epoch's
    /// result then also counts the exact flows it matches.
    ///
    /// # Errors
    /// [`DecodeError::SeedMismatch`] when it was built under another seed.
    pub fn set_blocklist(&mut self, b: Blocklist<'static>) -> Result<(), DecodeError> {
        self.monitor.set_blocklist(Some(b))?;
        self.blocklist = Some(b);
        Ok(())
    }

    /// The monitor's memory in bytes.
    pub fn memory_bytes(&self) -> usize {
        self.monitor.memory_bytes()
    }

    /// Feeds one frame to both (and the participants: the key the exact counter
    /// parsed, so the frame is parsed twice in all — the monitor takes frames).
    pub fn feed(&mut self, frame: &[u8]) {
        let key = self.exact.feed(frame);
        if let (Some(p), Some(k)) = (&mut self.participants, key) {
            p.observe(&k);
        }
        if self.monitor.feed(frame) {
            self.close();
        }
    }

    /// Closes the running epoch (if it saw any frame) and returns all results.
    pub fn finish(mut self) -> Vec<EpochResult> {
        if self.exact.total.packets > 0
            || self.exact.not_ip > 0
            || self.exact.errors.iter().any(|&e| e > 0)
        {
            self.close();
        }
        self.results
    }

    fn close(&mut self) {
        self.monitor.end_epoch(&mut self.report);
        let ex = std::mem::replace(&mut self.exact, Exact::with_weight(self.config.byte_weight));
        let by_bytes = self.config.share_of == ShareOf::Bytes;
        let theta = self.config.theta;
        let total = if by_bytes {
            ex.total.bytes
        } else {
            ex.total.packets
        }
        .max(1) as f64;
        let exact_elephants = ex.heavy(theta, by_bytes);
        let rows: Vec<Row> = self
            .report
            .elephants
            .iter()
            .map(|e| {
                let c = ex.flows.get(&e.key).copied().unwrap_or_default();
                let m = if by_bytes { c.bytes } else { c.packets };
                Row {
                    key: e.key,
                    bytes: e.bytes,
                    packets: e.packets,
                    certain: e.certain,
                    exact: c,
                    true_share: m as f64 / total,
                }
            })
            .collect();
        let hits = rows
            .iter()
            .filter(|r| exact_elephants.iter().any(|(k, _)| *k == r.key))
            .count() as f64;
        let precision = if rows.is_empty() {
            1.0
        } else {
            hits / rows.len() as f64
        };
        let recall = if exact_elephants.is_empty() {
            1.0
        } else {
            hits / exact_elephants.len() as f64
        };
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        let are = if exact_elephants.is_empty() {
            0.0
        } else {
            exact_elephants
                .iter()
                .map(|(k, c)| {
                    let t = if by_bytes { c.bytes } else { c.packets } as f64;
                    rows.iter().find(|r| r.key == *k).map_or(1.0, |r| {
                        let est = if by_bytes {
                            r.bytes.upper
                        } else {
                            r.packets.upper
                        } as f64;
                        (est - t).abs() / t
                    })
                })
                .sum::<f64>()
                / exact_elephants.len() as f64
        };
        let min_reported_share = rows.iter().map(|r| r.true_share).fold(1.0, f64::min);
        let exact_new_flows = ex
            .flows
            .keys()
            .filter(|k| !self.previous.contains(*k))
            .count();
        let exact_sources = ex.sources();
        let exact_blocklisted = self
            .blocklist
            .map_or(0, |b| ex.flows.keys().filter(|k| b.matches(k)).count());
        let participants = self.participants.as_mut().map(|p| {
            let mut r = ParticipantsReport::new();
            p.end_epoch(&mut r);
            ParticipantsResult::new(r, ex.flows.keys())
        });
        self.results.push(EpochResult {
            epoch: self.report.epoch,
            report: (*self.report).clone(),
            rows,
            exact_elephants,
            exact_flows: ex.flows.len(),
            exact_sources,
            exact_new_flows,
            exact_errors: ex.errors,
            precision,
            recall,
            f1,
            are,
            min_reported_share,
            exact_blocklisted,
            participants,
        });
        self.previous = ex.flows.into_keys().collect();
    }
}
