//! `loxo_interop::RedisHll` against a real `redis-server` (nothing mocked).
//!
//! Each test starts its own `redis-server --port <free> --save '' --appendonly no`
//! on 127.0.0.1 (found on `PATH`) and kills it when done, and talks RESP over a
//! plain `TcpStream` (`loxo_cli::resp`). Without `redis-server` the tests **fail**, unless
//! `LOXO_SKIP_COLLECTORS=1` (or `LOXO_SKIP_REDIS=1`) is set, in which case they print
//! a `SKIPPED` line and return (`loxo_tests::collectors`).
//!
//! What is checked, exactly (no tolerance anywhere):
//! * `SET key <loxo dense HYLL>` → `PFCOUNT key` == `RedisHll::count()` (the Ertl
//!   estimate rounded half away from zero, as Redis's `llroundl`);
//! * `PFADD` in Redis → `GET` → `RedisHll::decode` (sparse and dense) has the same
//!   16 384 registers as a `RedisHll` fed the same elements;
//! * `PFMERGE` of a Redis-built and a loxo-built key == `RedisHll::merge`, both in
//!   registers and in count;
//! * `PFADD` on a loxo-written key replies what `RedisHll::insert` returns, and
//!   `PFDEBUG GETREG` (Redis's own decoder) reads every register value 0..=51 back;
//! * corrupted `HYLL` strings: Redis's verdict (`WRONGTYPE`, `INVALIDOBJ` or a
//!   count) and loxo's `DecodeError`, case by case.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cli::resp::{Client, Reply};
use loxo_core::DecodeError;
use loxo_interop::redis::{RedisHll, DENSE_LEN, MAX_RANK};
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
        // Redis updates it as its own: PFADD replies whether a register changed,
        // which is what `insert` returns, and the result is the same sketch.
        let mut more = h.clone();
        let changed = more.insert(b"one-more");
        assert_eq!(
            c.int(&[b"PFADD", b"loxo", b"one-more"]),
            i64::from(changed),
            "n = {n}"
        );
        assert_eq!(
            c.int(&[b"PFCOUNT", b"loxo"]) as u64,
            more.count(),
            "n = {n}"
        );
        let back = RedisHll::decode(&c.get(b"loxo")).unwrap();
        assert!(back.as_hll().registers().eq(more.as_hll().registers()));
    }
}

/// `PFDEBUG GETREG` (Redis's own register decoder) reads back every register of a
/// loxo-written dense string, with every register value from 0 to the maximum 51
/// present, at every bit offset of the 6-bit packing.
#[test]
fn redis_reads_every_register_value_we_write() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    // Registers from elements: find one element per (index, rank) pattern needed.
    // Simpler and exhaustive: load the registers directly through the `Hll` API.
    let mut hll = loxo_hll::Hll::<14>::new(loxo_interop::redis::REDIS_TAG_SEED);
    let regs: Vec<u8> = (0..16_384u32)
        .map(|i| ((i * 7 + i / 52) % 52) as u8)
        .collect();
    hll.set_registers(regs.iter().copied()).unwrap();
    let h = RedisHll::from_hll(&hll);
    assert!((0..=MAX_RANK).all(|v| regs.contains(&v)));
    c.set_loxo(b"all", &h);
    match c.command(&[b"PFDEBUG", b"GETREG", b"all"]) {
        Reply::Array(items) => {
            let theirs: Vec<i64> = items
                .into_iter()
                .map(|r| match r {
                    Reply::Integer(i) => i,
                    other => panic!("PFDEBUG GETREG item {other:?}"),
                })
                .collect();
            let ours: Vec<i64> = regs.iter().map(|&r| i64::from(r)).collect();
            assert_eq!(theirs, ours);
        }
        other => panic!("PFDEBUG GETREG: {other:?}"),
    }
    assert_eq!(c.int(&[b"PFCOUNT", b"all"]) as u64, h.count());
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

/// What Redis says of a corrupted `HYLL` string.
enum Redis {
    /// `-WRONGTYPE Key is not a valid HyperLogLog string value.` (header checks:
    /// length, magic, encoding byte, dense length).
    WrongType,
    /// `-INVALIDOBJ Corrupted HLL object detected` (sparse runs that do not sum to
    /// 16 384 registers, found when `PFCOUNT` walks them).
    InvalidObj,
    /// `PFCOUNT` answers this number.
    Count(i64),
}

/// One corrupted string: what `RedisHll::decode` and what Redis say of it.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    loxo: Result<(), DecodeError>,
    redis: Redis,
}

fn case(name: &'static str, bytes: Vec<u8>, loxo: Result<(), DecodeError>, redis: Redis) -> Case {
    Case {
        name,
        bytes,
        loxo,
        redis,
    }
}

/// Corruptions of the header and of the dense length of `dense`, a valid dense
/// string whose `PFCOUNT` is `count`.
fn header_corruptions(dense: &[u8], count: i64) -> Vec<Case> {
    use DecodeError as E;
    let with = |at: usize, v: u8| {
        let mut b = dense.to_vec();
        b[at] = v;
        b
    };
    vec![
        case(
            "the valid string",
            dense.to_vec(),
            Ok(()),
            Redis::Count(count),
        ),
        case(
            "bad magic",
            with(3, b'X'),
            Err(E::BadMagic { found: *b"HYLX" }),
            Redis::WrongType,
        ),
        case(
            "encoding byte 2",
            with(4, 2),
            Err(E::WrongKind {
                expected: 0,
                found: 2,
            }),
            Redis::WrongType,
        ),
        // 255 is Redis's internal "raw" encoding, which never leaves the server.
        case(
            "encoding byte 255",
            with(4, 255),
            Err(E::WrongKind {
                expected: 0,
                found: 255,
            }),
            Redis::WrongType,
        ),
        case(
            "dense one byte short",
            dense[..DENSE_LEN - 1].to_vec(),
            Err(E::Truncated),
            Redis::WrongType,
        ),
        case(
            "dense one byte long",
            [dense, &[0]].concat(),
            Err(E::TrailingBytes),
            Redis::WrongType,
        ),
        case(
            "dense header alone",
            dense[..16].to_vec(),
            Err(E::Truncated),
            Redis::WrongType,
        ),
        case(
            "shorter than the header",
            dense[..15].to_vec(),
            Err(E::Truncated),
            Redis::WrongType,
        ),
    ]
}

/// Corruptions of the registers: sparse runs that do not cover 16 384 registers,
/// and dense registers above 51 in `dense`, the dense string of `h`.
fn register_corruptions(h: &RedisHll, dense: &[u8]) -> Vec<Case> {
    use DecodeError as E;
    // A sparse string from opcodes: XZERO(n) is 01xxxxxx yyyyyyyy, n − 1 in 14 bits;
    // VAL(v, len) is 1vvvvvll.
    let sparse = |ops: &[u8]| {
        let mut b = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
        b.extend_from_slice(ops);
        b
    };
    let xzero = |n: u16| [0x40 | ((n - 1) >> 8) as u8, (n - 1) as u8];
    let val = |v: u8, len: u8| 0x80 | (v - 1) << 2 | (len - 1);
    let [x16382, x16383, x16384] = [xzero(16_382), xzero(16_383), xzero(16_384)];
    // Registers i and i + 1 both 0, i a multiple of 4: register i is the low six
    // bits of byte 16 + 3i/4, whose top two bits (register i + 1's low bits) stay 0.
    let i = (0..16_384)
        .step_by(4)
        .find(|&i| h.register(i) == 0 && h.register(i + 1) == 0)
        .unwrap();
    let with = |v: u8| {
        let mut b = dense.to_vec();
        b[16 + 3 * i / 4] = v;
        b
    };
    // Redis's estimator puts a register above 51 in neither of its sums but counts
    // it as non-zero: the count of the sketch with register i at 50 (2^−50 is
    // nothing in the sum).
    let mut raised = h.as_hll().clone();
    raised.update_register(i, 50);
    let beyond = RedisHll::from_hll(&raised).count() as i64;
    assert_eq!(beyond, h.count() as i64 + 1);
    vec![
        case(
            "sparse, no opcodes",
            sparse(&[]),
            Err(E::InvalidValue),
            Redis::InvalidObj,
        ),
        case(
            "sparse, 16 383 registers",
            sparse(&x16383),
            Err(E::InvalidValue),
            Redis::InvalidObj,
        ),
        case(
            "sparse, ZERO past 16 384",
            sparse(&[x16384[0], x16384[1], 0x00]),
            Err(E::InvalidValue),
            Redis::InvalidObj,
        ),
        case(
            "sparse, VAL run of 4 from register 16 382",
            sparse(&[x16382[0], x16382[1], val(5, 4)]),
            Err(E::InvalidValue),
            Redis::InvalidObj,
        ),
        // Redis reads the missing byte from the string's NUL terminator (0: a run
        // of 1) and so counts 16 384 registers; loxo does not read past the end.
        case(
            "sparse, XZERO cut in half",
            sparse(&[x16383[0], x16383[1], 0x40]),
            Err(E::Truncated),
            Redis::Count(0),
        ),
        // Registers above 51 never come out of PFADD: Redis counts them, loxo
        // refuses them.
        case(
            "dense register 52",
            with(52),
            Err(E::InvalidValue),
            Redis::Count(beyond),
        ),
        case(
            "dense register 63",
            with(63),
            Err(E::InvalidValue),
            Redis::Count(beyond),
        ),
    ]
}

/// Real corruptions of a `HYLL` string, each sent to Redis (`SET` then `PFCOUNT`)
/// and decoded by loxo. Where both reject, both must; where Redis accepts what loxo
/// rejects (it never produces such a string itself), the test pins Redis's answer
/// so that a change of either side is noticed.
#[test]
fn corrupted_hyll_strings_are_rejected_by_redis_and_by_loxo() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut c = connect(&server);
    let h = loxo(&elements(0..1000));
    let mut dense = vec![0u8; DENSE_LEN];
    h.encode_dense_into(&mut dense).unwrap();
    let mut before = RedisHll::new();
    before.insert(b"keep");
    for Case {
        name,
        bytes,
        loxo,
        redis,
    } in header_corruptions(&dense, h.count() as i64)
        .into_iter()
        .chain(register_corruptions(&h, &dense))
    {
        let mut t = before.clone();
        let got = t.decode_into(&bytes);
        assert_eq!(got, loxo, "{name}: loxo");
        if got.is_err() {
            assert_eq!(t, before, "{name}: a failed decode changed the target");
        }
        c.ok(&[b"SET", b"k", &bytes]);
        let reply = c.command(&[b"PFCOUNT", b"k"]);
        let ok = match (&redis, &reply) {
            (Redis::WrongType, Reply::Error(e)) => e.starts_with("WRONGTYPE"),
            (Redis::InvalidObj, Reply::Error(e)) => e.starts_with("INVALIDOBJ"),
            (Redis::Count(n), Reply::Integer(i)) => i == n,
            _ => false,
        };
        assert!(ok, "{name}: Redis replied {reply:?}");
    }

    // Redis trusts a cached cardinality marked valid (bit 7 of byte 15 clear);
    // loxo never writes one (it always marks the cache invalid) and ignores it.
    let mut cached = dense.clone();
    cached[8..16].copy_from_slice(&12_345u64.to_le_bytes());
    c.ok(&[b"SET", b"k", &cached]);
    assert_eq!(c.int(&[b"PFCOUNT", b"k"]), 12_345);
    assert_eq!(RedisHll::decode(&cached).unwrap().count(), h.count());
    assert_eq!(dense[15] & 0x80, 0x80, "loxo marks its cache invalid");
}
