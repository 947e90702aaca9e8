//! `loxo collect --redis`: each epoch's fleet HLL `PFMERGE`d into Redis.

use anyhow::bail;
use loxo_hll::Hll;
use loxo_interop::redis::{RedisHll, DENSE_LEN};

use crate::resp::{Client, Reply};

/// The Redis `HYLL` string (dense) of an `Hll<14>`: the registers converted exactly.
///
/// # Errors
/// An encoding error (none for a sketch of precision 14).
pub fn redis_hyll(hll: &Hll<14>) -> anyhow::Result<(RedisHll, Vec<u8>)> {
    let redis = RedisHll::from_hll(hll);
    let mut hyll = vec![0u8; DENSE_LEN];
    let n = redis.encode_dense_into(&mut hyll)?;
    hyll.truncate(n);
    Ok((redis, hyll))
}

/// `PFMERGE`s `hll` into `key` through `key:incoming`; returns `PFCOUNT key`.
pub(super) fn export_redis(c: &mut Client, key: &str, hll: &Hll<14>) -> anyhow::Result<i64> {
    let (_, hyll) = redis_hyll(hll)?;
    let tmp = format!("{key}:incoming");
    for cmd in [
        &[&b"SET"[..], tmp.as_bytes(), &hyll][..],
        &[b"PFMERGE", key.as_bytes(), tmp.as_bytes()],
    ] {
        match c.checked(cmd)? {
            Reply::Status(s) if s == "OK" => {}
            r => bail!(
                "unexpected reply to {}: {r:?}",
                String::from_utf8_lossy(cmd[0])
            ),
        }
    }
    c.integer(&[b"DEL", tmp.as_bytes()])?;
    c.integer(&[b"PFCOUNT", key.as_bytes()])
}
