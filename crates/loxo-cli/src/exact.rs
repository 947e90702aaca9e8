//! Exact per-flow counts with a `HashMap`, under the same key rules as `loxo_flow::parse_frame`.
//!
//! Two ways in: [`Exact::feed`] parses a captured frame with `parse_frame` (what
//! `loxo top` does on a user's capture, where nothing else knows the truth), and
//! [`Exact::feed_truth`] takes the generator's own record of a frame
//! ([`FrameTruth`]), so tests on generated traces count without the parser they test.

use std::collections::HashMap;

use loxo_flow::{parse_frame_weighted, ByteWeight, FlowKey, ParseError, Parsed, Theta};

use crate::trace::{Expected, FrameTruth};

/// Exact figures of one flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Bytes in the counter's [`ByteWeight`] (wire lengths by default).
    pub bytes: u64,
    /// Packets.
    pub packets: u64,
}

/// Exact counter of one epoch.
#[derive(Debug, Clone, Default)]
pub struct Exact {
    /// Per-flow counts.
    pub flows: HashMap<FlowKey, Counts>,
    /// Totals over IP frames.
    pub total: Counts,
    /// Frames that are not IP.
    pub not_ip: u64,
    /// Malformed frames per reason (`ParseError::index`).
    pub errors: [u64; ParseError::COUNT],
    /// What a byte is (the monitor's `Config::byte_weight` to compare with).
    pub weight: ByteWeight,
}

impl Exact {
    /// An empty counter weighing frames by `weight`.
    pub fn with_weight(weight: ByteWeight) -> Self {
        Self {
            weight,
            ..Self::default()
        }
    }

    /// Feeds one frame; returns its flow's key if it parsed as a flow (for a caller
    /// that counts more of it without parsing it again).
    pub fn feed(&mut self, frame: &[u8]) -> Option<FlowKey> {
        match parse_frame_weighted(frame, self.weight) {
            Ok(Parsed::Flow(f)) => {
                let len = u64::from(f.len);
                let c = self.flows.entry(f.key).or_default();
                c.bytes += len;
                c.packets += 1;
                self.total.bytes += len;
                self.total.packets += 1;
                return Some(f.key);
            }
            Ok(Parsed::NotIp) => self.not_ip += 1,
            Err(e) => {
                if let Some(c) = self.errors.get_mut(e.index()) {
                    *c += 1;
                }
            }
        }
        None
    }

    /// Feeds the generator's record of one frame instead of the frame: its key,
    /// weight and expected outcome are the generator's, `parse_frame` is not run.
    pub fn feed_truth(&mut self, t: &FrameTruth) {
        match (t.expected, t.key) {
            (Expected::Flow, Some(key)) => {
                let len = u64::from(match self.weight {
                    ByteWeight::Wire => t.len,
                    ByteWeight::Ip => t.ip_len,
                });
                let c = self.flows.entry(key).or_default();
                c.bytes += len;
                c.packets += 1;
                self.total.bytes += len;
                self.total.packets += 1;
            }
            (Expected::Malformed(e), _) => {
                if let Some(c) = self.errors.get_mut(e.index()) {
                    *c += 1;
                }
            }
            (Expected::NotIp | Expected::Flow, _) => self.not_ip += 1,
        }
    }

    /// An exact counter of the frames whose truths are `truths`.
    pub fn from_truth<'a>(truths: impl IntoIterator<Item = &'a FrameTruth>) -> Self {
        let mut e = Self::default();
        for t in truths {
            e.feed_truth(t);
        }
        e
    }

    /// Flows whose share of bytes (`by_bytes`) or packets is ≥ `theta` (exact integer
    /// comparison, inclusive), sorted by that measure, descending.
    pub fn heavy(&self, theta: Theta, by_bytes: bool) -> Vec<(FlowKey, Counts)> {
        let total = if by_bytes {
            self.total.bytes
        } else {
            self.total.packets
        };
        let m = |c: &Counts| if by_bytes { c.bytes } else { c.packets };
        let mut v: Vec<_> = self
            .flows
            .iter()
            .filter(|(_, c)| total > 0 && theta.reached(m(c), total))
            .map(|(k, c)| (*k, *c))
            .collect();
        v.sort_by(|a, b| m(&b.1).cmp(&m(&a.1)).then(a.0.cmp(&b.0)));
        v
    }

    /// Distinct source addresses among the flows.
    pub fn sources(&self) -> usize {
        self.flows
            .keys()
            .map(FlowKey::src_bytes)
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}
