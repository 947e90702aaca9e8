//! `loxo fleet --redis-cluster NODES`: the fleet's figures of each epoch, read back
//! from the Redis Cluster that several `loxo collect --redis-cluster` processes fill
//! ([keys](super::cluster)).
//!
//! An epoch's summary is built from the frames stored, in `(device, stream)` order,
//! by the rules one collector follows: a frame of the fleet's seed fingerprint is
//! merged, another is listed as not merged; the flows frames' HLLs are merged
//! register-wise (the maximum: order does not matter), the top-k summaries by
//! [`SpaceSavingMerge`](loxo_cms::SpaceSavingMerge) at read time. So the text printed
//! ([`describe`]) is the one a single collector that received every
//! datagram prints. The `PFMERGE`d fleet HyperLogLog in Redis is read too: its 16 384
//! registers must equal those of the merged flows frames (else the epoch is an
//! error), and its `PFCOUNT` is printed.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loxo_control::datagram::Stream;
use loxo_interop::redis::RedisHll;
use redis::cluster::ClusterConnection;

use super::cluster::{self, flows_key, frames_key, EPOCHS_KEY, FINGERPRINT_KEY};
use super::cluster_relay::partial_key;
use super::describe;
use super::fleet::{combine_frames, decode_topk, DeviceFrame, EpochSummary};
use crate::sketch::AnyHll;

/// An epoch read back from the cluster.
#[derive(Clone, Debug)]
pub struct ClusterEpoch {
    /// The fleet figures, as one collector makes them.
    pub summary: EpochSummary,
    /// `PFCOUNT` of the fleet HyperLogLog (`None`: no such key).
    pub pfcount: Option<i64>,
    /// Whether the fleet HyperLogLog's registers equal the merged flows frames' (`None`:
    /// nothing to compare, the fleet's HLL not being an `Hll<14>`).
    pub registers_equal: Option<bool>,
    /// Frames the stored ones imply but no collector stored: the other stream of a
    /// device that sent one.
    pub missing: Vec<(u32, Stream)>,
    /// Stored frames that do not decode (not merged), with the reason.
    pub bad: Vec<String>,
    /// Frames split over collectors of which some chunks never came: the chunk hash
    /// and the bytes gathered ([`cluster_relay`](super::cluster_relay)).
    pub incomplete: Vec<(String, u64)>,
}

/// The fleet's seed fingerprint and the epochs stored, oldest first.
///
/// # Errors
/// Redis errors; no fleet in the cluster.
pub fn fleet(c: &mut ClusterConnection) -> anyhow::Result<(u64, Vec<u32>)> {
    let fp = cluster::stored_fingerprint(c)?.with_context(|| {
        format!("no loxo fleet in this Redis Cluster ({FINGERPRINT_KEY} unset)")
    })?;
    let epochs: Vec<u32> = redis::cmd("ZRANGE")
        .arg(EPOCHS_KEY)
        .arg(0)
        .arg(-1)
        .query(c)?;
    Ok((fp, epochs))
}

/// Parses a field of the frames hash: `<device>:flows` or `<device>:topk`.
fn parse_field(f: &str) -> Option<(u32, Stream)> {
    let (d, s) = f.split_once(':')?;
    let stream = [Stream::Flows, Stream::TopK]
        .into_iter()
        .find(|x| x.name() == s)?;
    Some((d.parse().ok()?, stream))
}

/// Reads epoch `epoch` of the fleet of seed fingerprint `fingerprint`; `None` when the
/// cluster holds no frame of it (never stored, or expired).
///
/// # Errors
/// Redis errors, a frames hash with a field not of the collectors' making.
pub fn read_epoch(
    c: &mut ClusterConnection,
    epoch: u32,
    fingerprint: u64,
) -> anyhow::Result<Option<ClusterEpoch>> {
    let raw: BTreeMap<String, Vec<u8>> = redis::cmd("HGETALL").arg(frames_key(epoch)).query(c)?;
    if raw.is_empty() {
        return Ok(None);
    }
    let mut stored = BTreeMap::new();
    for (k, v) in raw {
        let key = parse_field(&k).with_context(|| {
            format!(
                "{}: field {k:?} is not <device>:<stream>",
                frames_key(epoch)
            )
        })?;
        stored.insert(key, v);
    }
    let (summary, bad) = summarize(epoch, fingerprint, &stored);
    let mut missing = Vec::new();
    let devices: Vec<u32> = {
        let mut d: Vec<u32> = stored.keys().map(|k| k.0).collect();
        d.dedup();
        d
    };
    for d in devices {
        for st in [Stream::Flows, Stream::TopK] {
            if !stored.contains_key(&(d, st)) {
                missing.push((d, st));
            }
        }
    }
    let key = flows_key(epoch);
    let hyll: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(c)?;
    let pfcount = match &hyll {
        Some(_) => Some(redis::cmd("PFCOUNT").arg(&key).query(c)?),
        None => None,
    };
    let registers_equal = match (summary.flows.as_ref().and_then(|h| h.as_p14()), &hyll) {
        (Some(ours), Some(theirs)) => {
            let r = RedisHll::decode(theirs).map_err(|e| anyhow::anyhow!("{key}: {e}"))?;
            Some(r.as_hll().registers().eq(ours.registers()))
        }
        (Some(_), None) | (None, Some(_)) => Some(false),
        (None, None) => None,
    };
    let open: Vec<String> = redis::cmd("SMEMBERS").arg(partial_key(epoch)).query(c)?;
    let mut incomplete = Vec::new();
    for k in open {
        let have: Option<u64> = redis::cmd("HGET").arg(&k).arg("bytes").query(c)?;
        if let Some(have) = have {
            incomplete.push((k, have));
        }
    }
    Ok(Some(ClusterEpoch {
        summary,
        pfcount,
        registers_equal,
        missing,
        bad,
        incomplete,
    }))
}

/// The summary one collector makes of `stored` (frames by device and stream), and
/// the stored frames that do not decode or merge.
fn summarize(
    epoch: u32,
    fingerprint: u64,
    stored: &BTreeMap<(u32, Stream), Vec<u8>>,
) -> (EpochSummary, Vec<String>) {
    let mut s = EpochSummary {
        epoch,
        frames: Vec::new(),
        fingerprint: Some(fingerprint),
        flows: None,
        flows_devices: Vec::new(),
        top: Vec::new(),
        top_devices: Vec::new(),
        top_total: 0,
        unlisted_upper: 0,
    };
    let (mut bad, mut tops, mut listed) = (Vec::new(), Vec::new(), 0);
    for (&(device, stream), bytes) in stored {
        let what = format!("device {device} epoch {epoch} {}", stream.name());
        let decoded = match stream {
            Stream::Flows => AnyHll::decode(bytes)
                .map(|(h, fp)| (fp, Some(h), 0))
                .map_err(|e| format!("{e:#}")),
            Stream::TopK => decode_topk(bytes).map(|(fp, t)| (fp, None, t.len())),
        };
        let (fp, hll, n) = match decoded {
            Ok(x) => x,
            Err(e) => {
                bad.push(format!("{what}: {e}"));
                continue;
            }
        };
        let mut merged = fp == fingerprint;
        if merged {
            match (hll, &mut s.flows) {
                (Some(h), Some(acc)) => {
                    if let Err(e) = acc.merge(&h) {
                        bad.push(format!("{what}: {e:#}: not merged"));
                        merged = false;
                    }
                }
                (Some(h), None) => s.flows = Some(h),
                (None, _) => {
                    tops.push(&bytes[..]);
                    listed += n;
                }
            }
        }
        if merged {
            match stream {
                Stream::Flows => s.flows_devices.push(device),
                Stream::TopK => s.top_devices.push(device),
            }
        }
        s.frames.push(DeviceFrame {
            device,
            stream,
            len: bytes.len(),
            fingerprint: fp,
            merged,
        });
    }
    (s.top, s.top_total, s.unlisted_upper) = combine_frames(tops.into_iter(), listed);
    (s, bad)
}

/// Options of `loxo fleet`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo fleet --redis-cluster 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002 --top 5
  loxo fleet --redis-cluster 127.0.0.1:7000 --epoch 3 --devices 3")]
pub struct FleetArgs {
    /// Nodes of the Redis Cluster the collectors store into (`host:port`,
    /// comma-separated; one is enough, the others are learned).
    #[arg(
        long,
        value_name = "HOST:PORT,...",
        required = true,
        value_delimiter = ','
    )]
    pub redis_cluster: Vec<String>,
    /// Only these epochs (repeat or comma-separate; default: every epoch stored).
    #[arg(long, value_name = "E", value_delimiter = ',')]
    pub epoch: Vec<u32>,
    /// Fleet top flows printed per epoch.
    #[arg(long, value_name = "K", default_value_t = 10)]
    pub top: usize,
    /// An epoch is complete only with at least this many devices' frames.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub devices: usize,
}

/// Runs `loxo fleet`: prints each epoch as one collector would, then its Redis
/// figures; fails when a frame is missing, a stored frame does not decode, or the
/// `PFMERGE`d HLL differs from the frames' merge.
///
/// # Errors
/// Redis errors; no fleet stored.
pub fn run(a: &FleetArgs) -> anyhow::Result<ExitCode> {
    let mut c = cluster::connect(&a.redis_cluster)?;
    let (fp, stored) = fleet(&mut c)?;
    let epochs = if a.epoch.is_empty() {
        stored
    } else {
        a.epoch.clone()
    };
    if epochs.is_empty() {
        bail!("the fleet of seed fingerprint {fp:016x} has no epoch stored");
    }
    let mut problems = 0u64;
    for e in epochs {
        let Some(r) = read_epoch(&mut c, e, fp)? else {
            println!("epoch {e}: no frame in the Redis Cluster (never stored, or expired)");
            problems += 1;
            continue;
        };
        print!("{}", describe(&r.summary, a.top));
        let key = flows_key(e);
        match (r.pfcount, r.registers_equal) {
            (Some(n), Some(true)) => println!(
                "  redis: PFCOUNT {key} {n} (its registers equal the merged flows frames')"
            ),
            (Some(n), None) => println!("  redis: PFCOUNT {key} {n}"),
            (n, Some(false)) => {
                problems += 1;
                println!(
                    "  redis: error: {key} (PFCOUNT {n:?}) differs from the merged flows frames"
                );
            }
            (None, _) => println!("  redis: no {key} (no Hll<14> of the fleet stored)"),
        }
        for (d, s) in &r.missing {
            problems += 1;
            println!(
                "  fleet: error: device {d} epoch {e} {}: stored by no collector",
                s.name()
            );
        }
        for (k, have) in &r.incomplete {
            problems += 1;
            println!("  fleet: error: {k}: incomplete, {have} bytes of chunks gathered");
        }
        for m in &r.bad {
            problems += 1;
            println!("  fleet: error: {m}");
        }
        let n = r.summary.devices().len();
        if n < a.devices {
            problems += 1;
            println!(
                "  fleet: error: {n} device(s), {} expected (--devices)",
                a.devices
            );
        }
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        println!("{problems} errors");
        ExitCode::FAILURE
    })
}
