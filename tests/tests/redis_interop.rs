//! `loxo_interop::RedisHll` against a real `redis-server` (nothing mocked).
//!
//! Each test starts its own `redis-server --port <free> --save '' --appendonly no`
//! on 127.0.0.1 (found on `PATH`) and kills it when done, and talks RESP over a
//! plain `TcpStream` (`loxo_cli::resp`). Without `redis-server` the tests **fail**, unless
//! `LOXO_SKIP_REDIS=1` is set, in which case they print why and return.
//!
//! What is checked, exactly (no tolerance anywhere):
//! * `SET key <loxo dense HYLL>` → `PFCOUNT key` == `RedisHll::count()` (the Ertl
//!   estimate rounded half away from zero, as Redis's `llroundl`);
//! * `PFADD` in Redis → `GET` → `RedisHll::decode` (sparse and dense) has the same
//!   16 384 registers as a `RedisHll` fed the same elements;
//! * `PFMERGE` of a Redis-built and a loxo-built key == `RedisHll::merge`, both in
//!   registers and in count.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::resp::{Client, Reply};
use loxo_interop::redis::{RedisHll, DENSE_LEN};
use loxo_tests::redis::RedisServer;

/// A connection with the assertions these tests need.
struct Conn(Client);

fn connect(server: &RedisServer) -> Conn {
    Conn(Client::connect(&server.addr()).expect("connect to redis-server"))
}

impl Conn {
    fn command(&mut self, args: &[&[u8]]) -> Reply {
        self.0.command(args).expect("RESP round trip")
    }

    fn ok(&mut self, args: &[&[u8]]) {
        assert_eq!(self.command(args), Reply::Status("OK".into()), "{args:?}");
    }

    fn int(&mut self, args: &[&[u8]]) -> i64 {
        match self.command(args) {
            Reply::Integer(i) => i,
            other => panic!("expected an integer for {args:?}, got {other:?}"),
        }
    }

    fn get(&mut self, key: &[u8]) -> Vec<u8> {
        match self.command(&[b"GET", key]) {
            Reply::Bulk(Some(v)) => v,
            other => panic!("GET: {other:?}"),
        }
    }

    /// `PFADD key e...` in batches of 1000 elements.
    fn pfadd(&mut self, key: &[u8], elements: &[Vec<u8>]) {
        for batch in elements.chunks(1000) {
            let mut args: Vec<&[u8]> = vec![b"PFADD", key];
            args.extend(batch.iter().map(Vec::as_slice));
            self.int(&args);
        }
    }

    fn set_loxo(&mut self, key: &[u8], hll: &RedisHll) {
        let mut buf = vec![0u8; DENSE_LEN];
        let n = hll.encode_dense_into(&mut buf).unwrap();
        self.ok(&[b"SET", key, &buf[..n]]);
    }
}

fn elements(range: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    range.map(|i| format!("flow:{i}").into_bytes()).collect()
}

fn loxo(elements: &[Vec<u8>]) -> RedisHll {
    let mut h = RedisHll::new();
    for e in elements {
        h.insert(e);
    }
    h
}

#[test]
fn pfcount_of_a_loxo_made_key_equals_count() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    // From empty through the small range to far beyond m = 16 384.
    for n in [0u32, 1, 10, 100, 1000, 5000, 16_384, 50_000, 200_000] {
        let h = loxo(&elements(0..n));
        c.set_loxo(b"loxo", &h);
        let count = c.int(&[b"PFCOUNT", b"loxo"]);
        assert_eq!(
            count as u64,
            h.count(),
            "n = {n}, estimate {}",
            h.estimate()
        );
        // Redis accepted it as a valid HLL: PFADD of a new element works on it.
        assert!(c.int(&[b"PFADD", b"loxo", b"one-more"]) >= 0);
    }
}

#[test]
fn redis_built_keys_decode_with_equal_registers() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    // PFADD without elements creates an empty (sparse) HLL.
    assert_eq!(c.int(&[b"PFADD", b"empty"]), 1);
    let empty = RedisHll::decode(&c.get(b"empty")).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.count(), 0);
    // Small n stays sparse in Redis (≤ 3000 bytes of opcodes, values ≤ 32); large
    // n is promoted to dense.
    for n in [1u32, 7, 300, 2000, 30_000, 100_000] {
        let key = format!("redis:{n}");
        let els = elements(0..n);
        c.pfadd(key.as_bytes(), &els);
        let bytes = c.get(key.as_bytes());
        let decoded = RedisHll::decode(&bytes).unwrap();
        let ours = loxo(&els);
        assert!(
            decoded.as_hll().registers().eq(ours.as_hll().registers()),
            "n = {n}, encoding byte {}",
            bytes[4]
        );
        assert_eq!(decoded.count(), ours.count());
        assert_eq!(c.int(&[b"PFCOUNT", key.as_bytes()]) as u64, ours.count());
        if n <= 300 {
            assert_eq!(bytes[4], 1, "expected Redis's sparse encoding at n = {n}");
        }
        if n >= 30_000 {
            assert_eq!(bytes[4], 0, "expected Redis's dense encoding at n = {n}");
        }
    }
}

#[test]
fn pfmerge_with_a_redis_built_key_equals_loxo_merge() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    for (a, b) in [(0..500, 300..900), (0..30_000, 20_000..60_000)] {
        let from_redis = elements(a);
        let from_loxo = elements(b);
        c.command(&[b"DEL", b"r", b"l", b"dst"]);
        c.pfadd(b"r", &from_redis);
        let l = loxo(&from_loxo);
        c.set_loxo(b"l", &l);
        c.ok(&[b"PFMERGE", b"dst", b"r", b"l"]);

        let mut merged = loxo(&from_redis);
        merged.merge(&l);
        let count = c.int(&[b"PFCOUNT", b"dst"]) as u64;
        assert_eq!(count, merged.count());
        // PFCOUNT of several keys merges on the fly: the same number.
        assert_eq!(c.int(&[b"PFCOUNT", b"r", b"l"]) as u64, merged.count());
        let dst = RedisHll::decode(&c.get(b"dst")).unwrap();
        assert!(dst.as_hll().registers().eq(merged.as_hll().registers()));
    }
}

#[test]
fn redis_rejects_nothing_we_send_and_we_reject_a_corrupted_key() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    let h = loxo(&elements(0..1000));
    let mut buf = vec![0u8; DENSE_LEN];
    h.encode_dense_into(&mut buf).unwrap();
    // One byte short: Redis refuses it as an HLL, and so does loxo.
    c.ok(&[b"SET", b"short", &buf[..DENSE_LEN - 1]]);
    assert!(matches!(
        c.command(&[b"PFCOUNT", b"short"]),
        Reply::Error(_)
    ));
    assert!(RedisHll::decode(&buf[..DENSE_LEN - 1]).is_err());
}
