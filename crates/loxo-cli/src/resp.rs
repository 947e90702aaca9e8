//! A minimal Redis client (RESP2 over TCP): enough for `loxo export` to `SET` a
//! `HYLL` string and read back `PFCOUNT`.
//!
//! The server is not trusted: every reply is read within fixed bounds — a line
//! of at most [`MAX_LINE`] bytes, a bulk string of at most [`MAX_BULK`] bytes
//! (allocated as its bytes arrive, never up front), at most [`MAX_ELEMENTS`]
//! values in one reply, arrays nested at most [`MAX_DEPTH`] deep (read without
//! recursion), and the whole reply within the client's timeout. A reply past
//! any bound, truncated or malformed, is an error; nothing a server sends
//! aborts the process.
//!
//! Why not the `redis` crate: `redis` 1.8.2 with default features off resolves to
//! 48 packages (through `url` → `idna`, the ICU crates) for the two commands used
//! here, and its reader (combine-based; source of 1.6 read) bounds nesting (100) and
//! allocates bulk strings as they arrive, but buffers a line until CRLF without a
//! bound and has per-read timeouts only. This reader's bounds are tested against a
//! hostile fake server (`tests/tests/harden_resp.rs`) and fuzzed (`tests/fuzz`,
//! target `resp`).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Longest status, error or integer line accepted, `\r\n` excluded (64 KiB).
pub const MAX_LINE: usize = 64 << 10;
/// Longest bulk string accepted (Redis's own `proto-max-bulk-len` default, 512 MiB).
pub const MAX_BULK: usize = 512 << 20;
/// Most values in one reply, counting every nested element (2^20).
pub const MAX_ELEMENTS: usize = 1 << 20;
/// Deepest array nesting accepted (Redis's replies to `loxo`'s commands nest
/// at most 2 deep).
pub const MAX_DEPTH: usize = 32;
/// Timeout of [`Client::connect`]: for the connection, and for each whole reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// One RESP2 reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`.
    Status(String),
    /// `-ERR …`.
    Error(String),
    /// `:n`.
    Integer(i64),
    /// `$n` bulk string, `None` for the null bulk.
    Bulk(Option<Vec<u8>>),
    /// `*n` array (`*-1`, the null array, reads as an empty one).
    Array(Vec<Reply>),
}

/// A connection to one Redis server.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<Deadline>,
    writer: TcpStream,
    timeout: Duration,
}

impl Client {
    /// Connects to `addr` (`host:port`) with [`DEFAULT_TIMEOUT`].
    ///
    /// # Errors
    /// Connection errors, with the address.
    pub fn connect(addr: &str) -> anyhow::Result<Self> {
        Self::connect_with_timeout(addr, DEFAULT_TIMEOUT)
    }

    /// Connects to `addr` (`host:port`); `timeout` bounds the connection, each
    /// write, and each reply as a whole (a server that trickles a reply byte by
    /// byte still has only `timeout` to finish it).
    ///
    /// # Errors
    /// Connection errors, with the address.
    pub fn connect_with_timeout(addr: &str, timeout: Duration) -> anyhow::Result<Self> {
        let target = addr
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve Redis address {addr}"))?
            .next()
            .with_context(|| format!("no address for {addr}"))?;
        let stream = TcpStream::connect_timeout(&target, timeout)
            .with_context(|| format!("cannot connect to Redis at {addr}"))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Self {
            reader: BufReader::new(Deadline {
                stream: stream.try_clone()?,
                until: None,
            }),
            writer: stream,
            timeout,
        })
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    /// I/O errors (timeouts included), malformed replies and replies past the
    /// module's bounds (a Redis error reply is `Ok(Reply::Error)`).
    pub fn command(&mut self, args: &[&[u8]]) -> anyhow::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out)?;
        self.reader.get_mut().until = Some(Instant::now() + self.timeout);
        let reply = read_reply(&mut self.reader);
        self.reader.get_mut().until = None;
        reply
    }

    /// Sends a command that must succeed; turns an error reply into an error.
    ///
    /// # Errors
    /// As [`command`](Self::command), plus Redis error replies.
    pub fn checked(&mut self, args: &[&[u8]]) -> anyhow::Result<Reply> {
        match self.command(args)? {
            Reply::Error(e) => bail!(
                "Redis refused {}: {e}",
                String::from_utf8_lossy(args.first().copied().unwrap_or_default())
            ),
            r => Ok(r),
        }
    }

    /// A command whose reply is an integer (`PFCOUNT`, `PFADD`…).
    ///
    /// # Errors
    /// As [`checked`](Self::checked), or a non-integer reply.
    pub fn integer(&mut self, args: &[&[u8]]) -> anyhow::Result<i64> {
        match self.checked(args)? {
            Reply::Integer(n) => Ok(n),
            r => bail!("expected an integer reply, got {r:?}"),
        }
    }
}

/// The read half of the connection, each read bounded by what is left of the
/// current reply's deadline.
#[derive(Debug)]
struct Deadline {
    stream: TcpStream,
    until: Option<Instant>,
}

impl Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(until) = self.until {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "Redis reply not complete within the timeout",
                ));
            }
            self.stream.set_read_timeout(Some(left))?;
        }
        self.stream.read(buf)
    }
}

/// Reads one reply from `r` within the module's bounds. Arrays are filled from
/// an explicit stack, so nesting costs heap (bounded by [`MAX_DEPTH`]), not
/// call stack.
///
/// # Errors
/// I/O errors, a connection closed mid-reply, malformed or out-of-bounds replies.
pub fn read_reply(r: &mut impl BufRead) -> anyhow::Result<Reply> {
    // Each open array: its declared length and the items read so far.
    let mut open: Vec<(usize, Vec<Reply>)> = Vec::new();
    let mut elements = 0usize;
    loop {
        elements += 1;
        if elements > MAX_ELEMENTS {
            bail!("Redis reply has more than {MAX_ELEMENTS} values");
        }
        let line = read_line(r)?;
        let (&tag, rest) = line.split_first().context("empty Redis reply line")?;
        let text = || String::from_utf8_lossy(rest).into_owned();
        let mut value = match tag {
            b'+' => Reply::Status(text()),
            b'-' => Reply::Error(text()),
            b':' => Reply::Integer(parse_int(rest).context("bad integer reply")?),
            b'$' => Reply::Bulk(read_bulk(r, parse_int(rest).context("bad bulk length")?)?),
            b'*' => {
                let n = parse_int(rest).context("bad array length")?;
                if n <= 0 {
                    Reply::Array(Vec::new())
                } else {
                    let n = usize::try_from(n).ok().filter(|&n| n <= MAX_ELEMENTS);
                    let n = n.with_context(|| {
                        format!("Redis array of {rest:?} elements exceeds {MAX_ELEMENTS}")
                    })?;
                    if open.len() >= MAX_DEPTH {
                        bail!("Redis reply nests arrays deeper than {MAX_DEPTH}");
                    }
                    // Items arrive one by one: reserve for what they can prove.
                    open.push((n, Vec::with_capacity(n.min(1024))));
                    continue;
                }
            }
            _ => bail!(
                "unexpected Redis reply line {:?}",
                String::from_utf8_lossy(&line[..line.len().min(64)])
            ),
        };
        // Close every array this value completes.
        loop {
            let Some((want, items)) = open.last_mut() else {
                return Ok(value);
            };
            items.push(value);
            if items.len() < *want {
                break;
            }
            let Some((_, items)) = open.pop() else {
                bail!("internal: array stack underflow");
            };
            value = Reply::Array(items);
        }
    }
}

/// One `\r\n`-terminated line without its terminator, at most [`MAX_LINE`] bytes.
fn read_line(r: &mut impl BufRead) -> anyhow::Result<Vec<u8>> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_LINE as u64 + 2)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        bail!("Redis closed the connection");
    }
    if line.last() != Some(&b'\n') {
        if n > MAX_LINE {
            bail!("Redis reply line longer than {MAX_LINE} bytes");
        }
        bail!("Redis closed the connection mid-reply");
    }
    line.pop();
    if line.pop() != Some(b'\r') {
        bail!("Redis reply line not terminated by CRLF");
    }
    Ok(line)
}

/// The body of a `$len` bulk string (`None` for `$-1`), read as it arrives.
fn read_bulk(r: &mut impl BufRead, len: i64) -> anyhow::Result<Option<Vec<u8>>> {
    if len < 0 {
        return Ok(None);
    }
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= MAX_BULK)
        .with_context(|| format!("Redis bulk string of {len} bytes exceeds {MAX_BULK}"))?;
    // Grows with the bytes actually received: a claimed length costs nothing.
    let mut buf = Vec::with_capacity(len.min(64 << 10) + 2);
    r.by_ref().take(len as u64 + 2).read_to_end(&mut buf)?;
    if buf.len() < len + 2 {
        bail!(
            "Redis closed the connection mid-reply ({} of {len} bulk bytes)",
            buf.len().min(len)
        );
    }
    if buf.split_off(len) != b"\r\n" {
        bail!("Redis bulk string not terminated by CRLF");
    }
    Ok(Some(buf))
}

/// A RESP integer: optional `-`, then ASCII digits, fitting an `i64`.
fn parse_int(s: &[u8]) -> anyhow::Result<i64> {
    let text = std::str::from_utf8(s).context("not ASCII")?;
    if text.starts_with('+') || text.is_empty() {
        bail!("not an integer: {text:?}");
    }
    Ok(text.parse()?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(bytes: &[u8]) -> anyhow::Result<Reply> {
        read_reply(&mut &bytes[..])
    }

    #[test]
    fn reads_every_reply_type() {
        assert_eq!(parse(b"+OK\r\n").unwrap(), Reply::Status("OK".into()));
        assert_eq!(
            parse(b"-ERR no\r\n").unwrap(),
            Reply::Error("ERR no".into())
        );
        assert_eq!(parse(b":-42\r\n").unwrap(), Reply::Integer(-42));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Reply::Bulk(None));
        assert_eq!(
            parse(b"$5\r\na\r\nbc\r\n").unwrap(),
            Reply::Bulk(Some(b"a\r\nbc".to_vec()))
        );
        assert_eq!(
            parse(b"*3\r\n:1\r\n*2\r\n+a\r\n$0\r\n\r\n*0\r\n").unwrap(),
            Reply::Array(vec![
                Reply::Integer(1),
                Reply::Array(vec![
                    Reply::Status("a".into()),
                    Reply::Bulk(Some(Vec::new()))
                ]),
                Reply::Array(vec![]),
            ])
        );
    }

    #[test]
    fn nesting_up_to_the_bound_reads_and_one_more_is_an_error() {
        let nest = |d: usize| {
            let mut v = b"*1\r\n".repeat(d);
            v.extend_from_slice(b":7\r\n");
            v
        };
        let mut want = Reply::Integer(7);
        for _ in 0..MAX_DEPTH {
            want = Reply::Array(vec![want]);
        }
        assert_eq!(parse(&nest(MAX_DEPTH)).unwrap(), want);
        assert!(parse(&nest(MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn out_of_bounds_and_malformed_replies_are_errors() {
        for bad in [
            &b"$9223372036854775807\r\n"[..],
            b"$536870913\r\n",
            b"*9223372036854775807\r\n",
            b"$3\r\nab",
            b"$3\r\nabcXY",
            b":12x\r\n",
            b":+1\r\n",
            b":\r\n",
            b"?\r\n",
            b"\r\n",
            b"+OK\n",
            b"+OK",
            b"",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let mut long = b"+".to_vec();
        long.resize(MAX_LINE + 10, b'a');
        long.extend_from_slice(b"\r\n");
        assert!(parse(&long).is_err());
    }
}
