//! The chunks of a frame split over several collectors (`--redis-cluster`): each
//! chunk of a frame cut into more than one datagram is put into the cluster, and the
//! collector whose chunk completes the frame takes them all back and reassembles
//! the frame as if every chunk had come to it.
//!
//! | key | type | holds |
//! | --- | --- | --- |
//! | `loxo:{fleet:E}:chunks:<device>:<stream>` | hash | field `<offset>`: the datagram as received; field `bytes`: the chunk bytes gathered |
//! | `loxo:{fleet:E}:partial` | set | the chunk hashes of epoch `E` still open (`loxo fleet` reports them) |
//!
//! One script ([`RELAY`]) adds a chunk: `HSETNX` of its offset (a chunk already there
//! is a duplicate, counted by the collector that got it), `HINCRBY` of the bytes
//! gathered, and once they reach the frame's length, `HGETALL` + `DEL`: the chunks
//! go to exactly one collector, which pushes them in offset order into its
//! [`Collector`]. A frame of one datagram is not relayed. Chunk hashes expire after
//! `--redis-ttl` like the rest; a frame some of whose chunks never came stays in
//! `loxo:{fleet:E}:partial`, where `loxo fleet` finds it and counts it incomplete.

use redis::Value;

use loxo_control::datagram::SketchDatagram;

use super::cluster::ClusterSink;
use super::{max_frame, Collector, ErrorKind};

/// Adds a chunk: `KEYS` = the frame's chunk hash, the epoch's partial set; `ARGV` =
/// offset, datagram, chunk length, frame length, TTL (0: none). Returns -1 for a
/// chunk already there, the bytes gathered while the frame is incomplete, else
/// every field and value of the hash (which it deletes).
pub const RELAY: &str = "\
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return -1 end
local have = redis.call('HINCRBY', KEYS[1], 'bytes', ARGV[3])
local ttl = tonumber(ARGV[5])
if have < tonumber(ARGV[4]) then
  redis.call('SADD', KEYS[2], KEYS[1])
  if ttl > 0 then
    redis.call('EXPIRE', KEYS[1], ttl)
    redis.call('EXPIRE', KEYS[2], ttl)
  end
  return have
end
local all = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], KEYS[1])
return all";

/// The set of epoch `epoch`'s chunk hashes still open.
#[must_use]
pub fn partial_key(epoch: u32) -> String {
    format!("loxo:{{fleet:{epoch}}}:partial")
}

/// The chunk hash of a frame.
#[must_use]
pub fn chunks_key(epoch: u32, device: u32, stream: &str) -> String {
    format!("loxo:{{fleet:{epoch}}}:chunks:{device}:{stream}")
}

/// What the relay did with datagrams, for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayCounts {
    /// Chunks put into the cluster.
    pub relayed: u64,
    /// Frames this collector completed and took back.
    pub completed: u64,
}

impl ClusterSink {
    /// Takes one datagram: a chunk of a frame of several datagrams goes through the
    /// cluster (and the whole frame into `c` when this chunk completes it); anything
    /// else, a malformed datagram included, straight into `c`.
    pub fn push(&mut self, c: &mut Collector, bytes: &[u8]) {
        let Ok(d) = SketchDatagram::parse(bytes) else {
            return c.push(bytes);
        };
        // One datagram, or a chunk the collector refuses anyway (a frame too large, an
        // empty chunk or one past the frame's end, which could pile up in the cluster
        // without ever completing a frame): not relayed.
        let (total, end) = (d.total as usize, d.offset as usize + d.data.len());
        if d.data.len() == total || total > max_frame(d.stream) || d.data.is_empty() || end > total
        {
            return c.push(bytes);
        }
        let key = chunks_key(d.epoch, d.device, d.stream.name());
        let what = format!(
            "device {} epoch {} {} chunk at offset {}",
            d.device,
            d.epoch,
            d.stream.name(),
            d.offset
        );
        let r: redis::RedisResult<Value> = redis::cmd("EVAL")
            .arg(RELAY)
            .arg(2)
            .arg(&key)
            .arg(partial_key(d.epoch))
            .arg(d.offset)
            .arg(bytes)
            .arg(d.data.len())
            .arg(d.total)
            .arg(self.ttl)
            .query(&mut self.conn);
        self.relay.relayed += 1;
        match r {
            Ok(Value::Int(-1)) => c.fail(
                ErrorKind::Duplicate,
                format!("{what}: already in the Redis Cluster (chunk received twice)"),
            ),
            Ok(Value::Int(_)) => {}
            Ok(Value::Array(items)) => {
                self.relay.completed += 1;
                for chunk in chunks(items) {
                    c.push(&chunk);
                }
            }
            Ok(v) => c.fail(
                ErrorKind::Output,
                format!("{what}: unexpected Redis Cluster reply {v:?}"),
            ),
            Err(e) => c.fail(ErrorKind::Output, format!("{what}: Redis Cluster: {e}")),
        }
    }

    /// What the relay did so far.
    #[must_use]
    pub const fn relay_counts(&self) -> RelayCounts {
        self.relay
    }
}

/// The datagrams of a complete chunk hash (`HGETALL`'s field, value list), by offset.
fn chunks(items: Vec<Value>) -> Vec<Vec<u8>> {
    let mut by_offset: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        let (Value::BulkString(k), Value::BulkString(v)) = (k, v) else {
            continue;
        };
        if let Some(offset) = std::str::from_utf8(&k).ok().and_then(|k| k.parse().ok()) {
            by_offset.push((offset, v));
        }
    }
    by_offset.sort_by_key(|&(o, _)| o);
    by_offset.into_iter().map(|(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use loxo_control::datagram::Stream;
    use loxo_core::Seed;
    use loxo_hll::Hll;
    use redis::Value;

    use super::chunks;
    use crate::collect::{Collector, ErrorKind, Limits, Sender};
    use loxo_control::datagram::ExportKey;

    fn flows(seed: Seed, n: u32) -> Vec<u8> {
        let mut h = Hll::<14>::new(seed);
        for i in 0..n {
            h.insert(&i.to_le_bytes());
        }
        let mut buf = vec![0u8; h.encoded_len()];
        let len = h.encode_into(&mut buf).unwrap();
        buf.truncate(len);
        buf
    }

    #[test]
    fn a_complete_chunk_hash_comes_back_in_offset_order() {
        let bulk = |s: &[u8]| Value::BulkString(s.to_vec());
        let items = vec![
            bulk(b"2800"),
            bulk(b"c"),
            bulk(b"bytes"),
            bulk(b"3"),
            bulk(b"0"),
            bulk(b"a"),
            bulk(b"1400"),
            bulk(b"b"),
        ];
        assert_eq!(
            chunks(items),
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
        );
    }

    /// A shared collector does not count a frame it never received, nor an epoch of
    /// which it received nothing; one of whose chunks only some came is incomplete,
    /// as on a lone collector.
    #[test]
    fn a_shared_collector_counts_only_what_it_began() {
        let seed = Seed::new(3, 4);
        let frame = flows(seed, 20_000);
        let key = ExportKey::from_bytes([7; 16]);
        let (mut one, mut two) = (Sender::new(1, key, 1), Sender::new(2, key, 1));
        let dg = one.datagrams(Stream::Flows, 5, &frame);
        let dg7 = one.datagrams(Stream::Flows, 7, &frame);
        let half = two.datagrams(Stream::Flows, 7, &frame);
        assert!(dg.len() > 2, "{} chunks", dg.len());
        for shared in [false, true] {
            let mut c = Collector::insecure(Limits::default()).with_fingerprint(seed.fingerprint());
            if shared {
                c = c.shared();
            }
            // Device 1: its flows frame of epoch 5, then epoch 7 (epoch 6 skipped),
            // no top-k frame; device 2: half a frame of epoch 7.
            for d in &dg {
                c.push(d);
            }
            for d in &dg7 {
                c.push(d);
            }
            for d in &half[..half.len() / 2] {
                c.push(d);
            }
            c.finish();
            let counts = c.error_counts();
            let incomplete = counts.get(&ErrorKind::Incomplete).copied().unwrap_or(0);
            let lost = counts.get(&ErrorKind::Lost).copied().unwrap_or(0);
            if shared {
                // Device 2's half frame only.
                assert_eq!((incomplete, lost), (1, 0), "{counts:?}");
            } else {
                // Device 1's two top-k frames; device 2's half frame and its missing
                // top-k frame; device 1's two frames of epoch 6.
                assert_eq!((incomplete, lost), (4, 2), "{counts:?}");
            }
            let fleet: Vec<_> = c
                .take_finalized()
                .iter()
                .map(|s| s.flows_devices.clone())
                .collect();
            assert_eq!(fleet, vec![vec![1], vec![1]]);
        }
    }
}
