//! A throw-away `redis-server` for interop tests: started on a free 127.0.0.1 port,
//! killed when dropped. Nothing is mocked: the tests talk to the Debian package.
#![allow(clippy::expect_used)] // a test harness: failing loudly is the point

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child process, killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Starts a server on a free port (no persistence), waiting until it answers
    /// `PING`. Returns `None` only if `redis-server` cannot run and
    /// `LOXO_SKIP_COLLECTORS=1` or `LOXO_SKIP_REDIS=1` (`crate::collectors`).
    ///
    /// # Panics
    /// If `redis-server` is missing (without either variable) or does not answer
    /// within 10 seconds.
    #[must_use]
    pub fn start() -> Option<Self> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("no free TCP port on 127.0.0.1")
            .port();
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                crate::collectors::missing(
                    "redis-server",
                    &e.to_string(),
                    "Debian: apt-get install redis-server",
                    Some("LOXO_SKIP_REDIS"),
                );
                return None;
            }
        };
        let server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.pings() {
            assert!(
                Instant::now() < deadline,
                "redis-server on port {port} did not answer PING within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(server)
    }

    /// `127.0.0.1:PORT`.
    #[must_use]
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The TCP port.
    #[must_use]
    pub const fn port(&self) -> u16 {
        self.port
    }

    fn pings(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut reply = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok()
            && s.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
