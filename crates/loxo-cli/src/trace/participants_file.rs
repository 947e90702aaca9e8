//! The participants file `loxo gen` writes beside its pcap ([`PARTICIPANTS_HEADER`]):
//! per epoch and role, the keys whose spread reaches a minimum and every designed
//! participant, one CSV row each ([`ParticipantRow`]).

use std::fmt;
use std::io::{BufRead, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::participants::{EpochSpreads, Role, SpreadKey};
use super::TruthParseError;

/// Header of the participants file.
pub const PARTICIPANTS_HEADER: &str = "epoch,role,src,dst,spread,pairs,designed";

/// One row of the participants file: a key's exact spread in one epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParticipantRow {
    /// The epoch, from 0.
    pub epoch: u64,
    /// The key (its variant is the row's role: `fan_out` keys have a source only,
    /// `fan_in` a destination only, `dst_ports` both).
    pub key: SpreadKey,
    /// Its distinct elements in the epoch (0: a designed participant not seen).
    pub spread: u64,
    /// The epoch's distinct (key, element) pairs of the role
    /// ([`EpochSpreads::pairs`]).
    pub pairs: u64,
    /// Whether the trace's class designed the key as a participant (a scanner, a
    /// vertical scanner's (source, target), a victim).
    pub designed: bool,
}

impl fmt::Display for ParticipantRow {
    /// The row as [`PARTICIPANTS_HEADER`] orders it: addresses in their usual text
    /// form, an empty column for the address the role has no use for.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |a: Option<IpAddr>| a.map(|a| a.to_string()).unwrap_or_default();
        write!(
            f,
            "{},{},{},{},{},{},{}",
            self.epoch,
            self.key.role(),
            text(self.key.src()),
            text(self.key.dst()),
            self.spread,
            self.pairs,
            u8::from(self.designed)
        )
    }
}

impl std::str::FromStr for ParticipantRow {
    type Err = TruthParseError;

    /// Reads one row written by [`ParticipantRow`]'s `Display`.
    fn from_str(row: &str) -> Result<Self, Self::Err> {
        let bad = |what: &str| TruthParseError::new(format!("{what} in participants row {row:?}"));
        let c: Vec<&str> = row.trim_end().split(',').collect();
        let [epoch, role, src, dst, spread, pairs, designed] = c.as_slice() else {
            return Err(bad("not 7 columns"));
        };
        let addr = |s: &str| s.parse::<IpAddr>().map_err(|_| bad("a bad address"));
        let key = match (*role, src.is_empty(), dst.is_empty()) {
            ("fan_out", false, true) => SpreadKey::Source(addr(src)?),
            ("fan_in", true, false) => SpreadKey::Destination(addr(dst)?),
            ("dst_ports", false, false) => SpreadKey::Pair(addr(src)?, addr(dst)?),
            _ => return Err(bad("an unknown role or its addresses missing")),
        };
        let number = |s: &str, what| s.parse::<u64>().map_err(|_| bad(what));
        Ok(Self {
            epoch: number(epoch, "a bad epoch")?,
            key,
            spread: number(spread, "a bad spread")?,
            pairs: number(pairs, "a bad pair count")?,
            designed: match *designed {
                "0" => false,
                "1" => true,
                _ => return Err(bad("a flag not 0/1")),
            },
        })
    }
}

/// Where `loxo gen` writes the participants of the pcap at `pcap`: the same path with
/// the extension replaced by `participants.csv` (`trace.pcap` →
/// `trace.participants.csv`).
pub fn participants_path(pcap: &Path) -> PathBuf {
    pcap.with_extension("participants.csv")
}

/// Writes the participants file's header row.
///
/// # Errors
/// The writer's.
pub fn write_participants_header(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "{PARTICIPANTS_HEADER}")
}

/// The rows of one epoch: for each [`Role`] in turn, every key whose spread is at
/// least `min` and every `designed` key of that role (spread 0 if not seen), the
/// largest spread first (ties in key order).
pub fn participant_rows(
    spreads: &EpochSpreads,
    designed: &[SpreadKey],
    min: u64,
) -> Vec<ParticipantRow> {
    let mut rows = Vec::new();
    for role in Role::ALL {
        let pairs = spreads.pairs(role);
        let row = |key: SpreadKey, spread| ParticipantRow {
            epoch: spreads.epoch(),
            key,
            spread,
            pairs,
            designed: designed.contains(&key),
        };
        let listed = spreads.spreads(role);
        rows.extend(
            listed
                .iter()
                .filter(|(k, s)| *s >= min || designed.contains(k))
                .map(|&(k, s)| row(k, s)),
        );
        let mut unseen: Vec<SpreadKey> = designed
            .iter()
            .filter(|k| k.role() == role && spreads.spread(k) == 0)
            .copied()
            .collect();
        unseen.sort_unstable();
        unseen.dedup();
        rows.extend(unseen.into_iter().map(|k| row(k, 0)));
    }
    rows
}

/// Writes one epoch's rows ([`participant_rows`]); returns how many.
///
/// # Errors
/// The writer's.
pub fn write_participants(
    w: &mut impl Write,
    spreads: &EpochSpreads,
    designed: &[SpreadKey],
    min: u64,
) -> std::io::Result<u64> {
    let rows = participant_rows(spreads, designed, min);
    for r in &rows {
        writeln!(w, "{r}")?;
    }
    Ok(rows.len() as u64)
}

/// Reads a participants file written by `loxo gen`.
///
/// # Errors
/// An I/O error, a missing header or a row that does not parse (with its line).
pub fn read_participants(r: impl BufRead) -> anyhow::Result<Vec<ParticipantRow>> {
    let mut lines = r.lines();
    let header = lines.next().transpose()?.unwrap_or_default();
    anyhow::ensure!(
        header.trim_end() == PARTICIPANTS_HEADER,
        "not a loxo participants file (header {header:?})"
    );
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let row: ParticipantRow = line?
            .parse()
            .map_err(|e| anyhow::anyhow!("line {}: {e}", i + 2))?;
        out.push(row);
    }
    Ok(out)
}
