//! The truth file `loxo gen` writes beside its pcap: one CSV row per frame
//! ([`TRUTH_HEADER`]), [`FrameTruth`]'s `Display` and `FromStr`.

use std::fmt;
use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use loxo_flow::{FlowKey, ParseError};

use super::{Damage, Expected, FrameTruth};

/// Header of the truth file written by `loxo gen` beside its pcap.
pub const TRUTH_HEADER: &str =
    "frame,len,ip_len,expected,error,damage,fragment,flood,src,dst,src_port,dst_port,protocol";

impl fmt::Display for FrameTruth {
    /// One CSV row of the truth file ([`TRUTH_HEADER`]): addresses in their usual text
    /// form, `error` the [`ParseError::name`] of a malformed frame, key columns empty
    /// for a non-IP frame.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (expected, error) = match self.expected {
            Expected::Flow => ("flow", ""),
            Expected::NotIp => ("not_ip", ""),
            Expected::Malformed(e) => ("malformed", e.name()),
        };
        write!(
            f,
            "{},{},{},{expected},{error},{},{},{},",
            self.index,
            self.len,
            self.ip_len,
            self.damage.name(),
            u8::from(self.fragment),
            u8::from(self.flood)
        )?;
        match self.key {
            Some(k) if k.is_v6() => {
                let a = |b: &[u8]| <[u8; 16]>::try_from(b).map(Ipv6Addr::from).ok();
                let (s, d) = (a(k.src_bytes()), a(k.dst_bytes()));
                let (Some(s), Some(d)) = (s, d) else {
                    return Err(fmt::Error);
                };
                write!(f, "{s},{d},")?;
            }
            Some(k) => {
                let a = |b: &[u8]| <[u8; 4]>::try_from(b).map(Ipv4Addr::from).ok();
                let (s, d) = (a(k.src_bytes()), a(k.dst_bytes()));
                let (Some(s), Some(d)) = (s, d) else {
                    return Err(fmt::Error);
                };
                write!(f, "{s},{d},")?;
            }
            None => return f.write_str(",,,,"),
        }
        let k = self.key.unwrap_or_default();
        write!(f, "{},{},{}", k.src_port(), k.dst_port(), k.protocol())
    }
}

/// Why a row of a truth or participants file was not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthParseError(String);

impl TruthParseError {
    pub(super) const fn new(message: String) -> Self {
        Self(message)
    }
}

impl fmt::Display for TruthParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TruthParseError {}

impl std::str::FromStr for FrameTruth {
    type Err = TruthParseError;

    /// Reads one CSV row written by [`FrameTruth`]'s `Display`.
    fn from_str(row: &str) -> Result<Self, Self::Err> {
        let bad = |what: &str| TruthParseError(format!("{what} in truth row {row:?}"));
        let c: Vec<&str> = row.trim_end().split(',').collect();
        let [index, len, ip_len, expected, error, damage, fragment, flood, src, dst, sp, dp, proto] =
            c.as_slice()
        else {
            return Err(bad("not 13 columns"));
        };
        let flag = |s: &str| match s {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(bad("a flag not 0/1")),
        };
        let expected = match (*expected, *error) {
            ("flow", "") => Expected::Flow,
            ("not_ip", "") => Expected::NotIp,
            ("malformed", e) => Expected::Malformed(
                ParseError::ALL
                    .into_iter()
                    .find(|x| x.name() == e)
                    .ok_or_else(|| bad("an unknown parse error"))?,
            ),
            _ => return Err(bad("an unknown expected outcome")),
        };
        let key = if src.is_empty() {
            None
        } else {
            let sp = sp.parse().map_err(|_| bad("a bad source port"))?;
            let dp = dp.parse().map_err(|_| bad("a bad destination port"))?;
            let proto = proto.parse().map_err(|_| bad("a bad protocol"))?;
            let v4 = (src.parse::<Ipv4Addr>(), dst.parse::<Ipv4Addr>());
            Some(if let (Ok(s), Ok(d)) = v4 {
                FlowKey::v4(s.octets(), d.octets(), sp, dp, proto)
            } else {
                let s: Ipv6Addr = src.parse().map_err(|_| bad("a bad source"))?;
                let d: Ipv6Addr = dst.parse().map_err(|_| bad("a bad destination"))?;
                FlowKey::v6(s.octets(), d.octets(), sp, dp, proto)
            })
        };
        Ok(Self {
            index: index.parse().map_err(|_| bad("a bad frame index"))?,
            len: len.parse().map_err(|_| bad("a bad length"))?,
            ip_len: ip_len.parse().map_err(|_| bad("a bad IP length"))?,
            key,
            fragment: flag(fragment)?,
            flood: flag(flood)?,
            damage: Damage::ALL
                .into_iter()
                .find(|d| d.name() == *damage)
                .ok_or_else(|| bad("an unknown damage"))?,
            expected,
        })
    }
}

/// Where `loxo gen` writes the truth of the pcap at `pcap`: the same path with the
/// extension replaced by `truth.csv` (`trace.pcap` → `trace.truth.csv`).
pub fn truth_path(pcap: &Path) -> PathBuf {
    pcap.with_extension("truth.csv")
}

/// Writes the truth file's header row.
///
/// # Errors
/// The writer's.
pub fn write_truth_header(w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "{TRUTH_HEADER}")
}

/// Reads a truth file written by `loxo gen`.
///
/// # Errors
/// An I/O error, a missing header or a row that does not parse (with its line).
pub fn read_truth(r: impl BufRead) -> anyhow::Result<Vec<FrameTruth>> {
    let mut lines = r.lines();
    let header = lines.next().transpose()?.unwrap_or_default();
    anyhow::ensure!(
        header.trim_end() == TRUTH_HEADER,
        "not a loxo truth file (header {header:?})"
    );
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line?;
        let t: FrameTruth = line
            .parse()
            .map_err(|e| anyhow::anyhow!("line {}: {e}", i + 2))?;
        out.push(t);
    }
    Ok(out)
}
