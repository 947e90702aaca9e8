//! A minimal Redis client (RESP2 over TCP): enough for `loxo export` to `SET` a
//! `HYLL` string and read back `PFCOUNT`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{bail, Context};

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
    /// `*n` array.
    Array(Vec<Reply>),
}

/// A connection to one Redis server.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    /// Connects to `addr` (`host:port`) with 5-second timeouts.
    ///
    /// # Errors
    /// Connection errors, with the address.
    pub fn connect(addr: &str) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(addr)
            .with_context(|| format!("cannot connect to Redis at {addr}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        Ok(Self {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    /// I/O errors and malformed replies (a Redis error reply is `Ok(Reply::Error)`).
    pub fn command(&mut self, args: &[&[u8]]) -> anyhow::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out)?;
        self.read_reply()
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

    fn read_line(&mut self) -> anyhow::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            bail!("Redis closed the connection");
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn read_reply(&mut self) -> anyhow::Result<Reply> {
        let line = self.read_line()?;
        let (tag, rest) = line.split_at_checked(1).context("empty reply line")?;
        Ok(match tag {
            "+" => Reply::Status(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Integer(rest.parse().context("bad integer reply")?),
            "$" => {
                let n: i64 = rest.parse().context("bad bulk length")?;
                if n < 0 {
                    Reply::Bulk(None)
                } else {
                    let mut buf = vec![0u8; usize::try_from(n)? + 2];
                    self.reader.read_exact(&mut buf)?;
                    buf.truncate(buf.len() - 2);
                    Reply::Bulk(Some(buf))
                }
            }
            "*" => {
                let n: i64 = rest.parse().context("bad array length")?;
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    items.push(self.read_reply()?);
                }
                Reply::Array(items)
            }
            _ => bail!("unexpected reply {line:?}"),
        })
    }
}
