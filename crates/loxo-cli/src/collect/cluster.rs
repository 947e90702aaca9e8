//! `loxo collect --redis-cluster`: several collectors share the fleet's state in a
//! Redis Cluster, each storing the frames it decodes there on arrival.
//!
//! # Keys
//!
//! Every key of epoch `E` carries the hash tag `{fleet:E}`, so an epoch's keys live in
//! one hash slot (one master): a frame is stored and merged by one atomic script, and
//! the epochs spread over the masters.
//!
//! | key | type | holds |
//! | --- | --- | --- |
//! | `loxo:{fleet:E}:frames` | hash | field `<device>:flows` / `<device>:topk`: the device's loxo frame of epoch `E`, as received |
//! | `loxo:{fleet:E}:flows` | HyperLogLog | the `PFMERGE` of every fleet flows frame of `E` (`Hll<14>`, the fleet's seed fingerprint), converted exactly ([`redis_hyll`]) |
//! | `loxo:{fleet:E}:incoming:<device>` | string | the device's `HYLL`, inside the script only |
//! | `loxo:{fleet:E}:chunks:<device>:<stream>`, `loxo:{fleet:E}:partial` | hash, set | chunks of a frame split over collectors ([`cluster_relay`](super::cluster_relay)) |
//! | `loxo:fleet:epochs` | sorted set | the epochs stored (score = epoch) |
//! | `loxo:fleet:fingerprint` | string | the fleet's seed fingerprint (16 hex digits), set by the first collector; one configured with another refuses to start |
//!
//! The fleet's top flows are not merged in Redis (Space-Saving summaries have no Redis
//! type): each device's summary is stored and `loxo fleet` merges them when it reads
//! ([`read_epoch`](super::cluster_read::read_epoch)), exactly as one collector does.
//!
//! A frame is stored by `EVAL` of one script ([`STORE`]): `HSETNX` of the frame, and
//! only when it is new, `SET` of its `HYLL` into the incoming key, `PFMERGE`, `DEL`,
//! `EXPIRE` of the epoch's keys. A second frame for the same `(device, stream,
//! epoch)` — the same device's frame reaching two collectors — is not stored and not
//! merged: it is counted as [`ErrorKind::Duplicate`], as one collector counts it.
//!
//! # Why the `redis` crate here
//!
//! Cluster mode needs the slot map (`CLUSTER SLOTS`), CRC16 key slots, and
//! `MOVED`/`ASK` redirections followed while slots migrate: the `redis` crate's
//! `cluster` feature does all of it, and is used as is. Its reader has no bound on a
//! reply line (see [`crate::resp`], kept for the single-server `--redis`, which
//! faces a server it need not trust): the cluster's nodes are the collectors' own
//! infrastructure, and every reply the collector reads back is bounded by what it
//! wrote.

use std::time::Duration;

use anyhow::{bail, Context};
use loxo_control::datagram::Stream;
use loxo_core::wire::{Frame, SketchKind};
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::Value;

use super::cluster_relay::RelayCounts;
use super::{redis_hyll, ErrorKind, ReceivedFrame};
use crate::sketch::AnyHll;

/// Seconds an epoch's keys live after its last frame was stored, by default: 7 days.
pub const DEFAULT_TTL: u64 = 7 * 24 * 3600;
/// Timeout of a connection to a node, and of each reply.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// The key holding the fleet's seed fingerprint.
pub const FINGERPRINT_KEY: &str = "loxo:fleet:fingerprint";
/// The sorted set of epochs stored.
pub const EPOCHS_KEY: &str = "loxo:fleet:epochs";

/// Stores a frame: `KEYS` = frames hash, fleet HLL, incoming key; `ARGV` = field,
/// frame, `HYLL` (empty: not merged), TTL in seconds (0: none). Returns 1 when
/// stored, 0 when the same frame was there, -1 when another frame was.
pub const STORE: &str = "\
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return 0 end
  return -1
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], ARGV[3])
  redis.call('PFMERGE', KEYS[2], KEYS[3])
  redis.call('DEL', KEYS[3])
end
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ttl) end
end
return 1";

/// The hash of epoch `epoch`'s frames.
#[must_use]
pub fn frames_key(epoch: u32) -> String {
    format!("loxo:{{fleet:{epoch}}}:frames")
}

/// The fleet HyperLogLog of epoch `epoch`.
#[must_use]
pub fn flows_key(epoch: u32) -> String {
    format!("loxo:{{fleet:{epoch}}}:flows")
}

/// A frame's field in [`frames_key`]: `<device>:flows` or `<device>:topk`.
#[must_use]
pub fn field(device: u32, stream: Stream) -> String {
    format!("{device}:{}", stream.name())
}

/// Connects to a Redis Cluster through any of `nodes` (`host:port`, comma-separated
/// or given apart; the others are learned from the cluster).
///
/// # Errors
/// No node given, a node that cannot be reached, a cluster without every slot served.
pub fn connect(nodes: &[String]) -> anyhow::Result<ClusterConnection> {
    let urls: Vec<String> = nodes
        .iter()
        .flat_map(|n| n.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            if n.contains("://") {
                n.to_owned()
            } else {
                format!("redis://{n}")
            }
        })
        .collect();
    if urls.is_empty() {
        bail!("--redis-cluster: no node given");
    }
    let client = ClusterClient::builder(urls.clone())
        .connection_timeout(TIMEOUT)
        .response_timeout(TIMEOUT)
        .build()
        .with_context(|| format!("Redis Cluster {}", urls.join(",")))?;
    client
        .get_connection()
        .with_context(|| format!("cannot connect to the Redis Cluster at {}", urls.join(",")))
}

/// Parses a seed fingerprint: 16 hex digits, `0x` allowed.
///
/// # Errors
/// Anything else.
pub fn parse_fingerprint(hex: &str) -> anyhow::Result<u64> {
    u64::from_str_radix(hex.trim().trim_start_matches("0x"), 16)
        .with_context(|| format!("seed fingerprint {hex:?}: not a hexadecimal u64"))
}

/// The fleet's seed fingerprint stored in the cluster, if any.
///
/// # Errors
/// Redis errors, a stored value that is not a fingerprint.
pub fn stored_fingerprint(c: &mut ClusterConnection) -> anyhow::Result<Option<u64>> {
    let v: Option<String> = redis::cmd("GET").arg(FINGERPRINT_KEY).query(c)?;
    v.map(|s| parse_fingerprint(&s)).transpose()
}

/// A collector's connection to the cluster, for the frames it decodes.
pub struct ClusterSink {
    pub(super) conn: ClusterConnection,
    fingerprint: u64,
    pub(super) ttl: u64,
    /// What [`push`](Self::push) did.
    pub(super) relay: RelayCounts,
    /// Frames stored, and flows frames `PFMERGE`d.
    stored: u64,
    merged: u64,
}

impl std::fmt::Debug for ClusterSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSink")
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// What became of a frame handed to [`ClusterSink::store`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Stored; for a flows frame of the fleet, `PFMERGE`d too.
    New {
        /// Whether it was merged into the fleet HLL.
        merged: bool,
    },
    /// The cluster already had this frame (same bytes): left as it was.
    Same,
    /// The cluster had another frame for this device, stream and epoch: left as it was.
    Other,
}

impl ClusterSink {
    /// Connects, and records `fingerprint` as the fleet's (or checks it against the
    /// one recorded by another collector).
    ///
    /// # Errors
    /// Connection errors, or a cluster that holds another fleet's fingerprint.
    pub fn connect(nodes: &[String], fingerprint: u64, ttl: u64) -> anyhow::Result<Self> {
        let mut conn = connect(nodes)?;
        let hex = format!("{fingerprint:016x}");
        let _: Value = redis::cmd("SET")
            .arg(FINGERPRINT_KEY)
            .arg(&hex)
            .arg("NX")
            .query(&mut conn)
            .context("recording the fleet's seed fingerprint")?;
        match stored_fingerprint(&mut conn)? {
            Some(f) if f == fingerprint => {}
            Some(f) => bail!(
                "the Redis Cluster holds the fleet of seed fingerprint {f:016x} ({FINGERPRINT_KEY}), \
                 not {hex}: another fleet's, or a mistyped --seed-fingerprint"
            ),
            None => bail!("{FINGERPRINT_KEY} vanished right after SET"),
        }
        Ok(Self {
            conn,
            fingerprint,
            ttl,
            stored: 0,
            merged: 0,
            relay: RelayCounts::default(),
        })
    }

    /// Frames stored so far, and flows frames among them `PFMERGE`d.
    #[must_use]
    pub const fn counts(&self) -> (u64, u64) {
        (self.stored, self.merged)
    }

    /// Stores a decoded frame; a flows frame of the fleet (its fingerprint, an
    /// `Hll<14>`) is `PFMERGE`d into the epoch's fleet HLL.
    ///
    /// # Errors
    /// Redis errors, and a frame that no longer decodes (it did when received).
    pub fn store(&mut self, f: &ReceivedFrame) -> anyhow::Result<Stored> {
        let header = *Frame::parse(&f.bytes)?.header();
        let fleet = header.seed_fingerprint == self.fingerprint;
        let hyll = match f.stream {
            Stream::Flows if fleet && header.kind == SketchKind::Hll => {
                let (h, _) = AnyHll::decode(&f.bytes)?;
                match h.as_p14() {
                    Some(p14) => redis_hyll(p14)?.1,
                    None => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        let merged = !hyll.is_empty();
        let r: i64 = redis::cmd("EVAL")
            .arg(STORE)
            .arg(3)
            .arg(frames_key(f.epoch))
            .arg(flows_key(f.epoch))
            .arg(format!("loxo:{{fleet:{}}}:incoming:{}", f.epoch, f.device))
            .arg(field(f.device, f.stream))
            .arg(&f.bytes[..])
            .arg(hyll)
            .arg(self.ttl)
            .query(&mut self.conn)?;
        let _: i64 = redis::cmd("ZADD")
            .arg(EPOCHS_KEY)
            .arg(f.epoch)
            .arg(f.epoch)
            .query(&mut self.conn)?;
        Ok(match r {
            1 => {
                self.stored += 1;
                self.merged += u64::from(merged);
                Stored::New { merged }
            }
            0 => Stored::Same,
            _ => Stored::Other,
        })
    }
}

/// Stores `f` (for [`Output`](super::output)); what is not stored is an error to count.
pub(super) fn store_frame(
    sink: &mut ClusterSink,
    f: &ReceivedFrame,
) -> Result<(), (ErrorKind, String)> {
    let what = format!("device {} epoch {} {}", f.device, f.epoch, f.stream.name());
    match sink.store(f) {
        Ok(Stored::New { .. }) => Ok(()),
        Ok(Stored::Same) => Err((
            ErrorKind::Duplicate,
            format!(
                "{what}: already in the Redis Cluster (sent to two collectors?): not merged again"
            ),
        )),
        Ok(Stored::Other) => Err((
            ErrorKind::Duplicate,
            format!("{what}: the Redis Cluster holds another frame for it: not stored"),
        )),
        Err(e) => Err((ErrorKind::Output, format!("{what}: Redis Cluster: {e:#}"))),
    }
}
