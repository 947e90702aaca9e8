//! A throw-away `redis-server` for interop tests (or a Redis Cluster of several:
//! [`RedisCluster`]): started on a free 127.0.0.1 port,
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
        Self::spawn(port, |_| {})
    }

    /// `redis-server` on `port` (no persistence) with the options `configure` adds,
    /// once it answers `PING`; `None` as [`start`](Self::start).
    fn spawn(port: u16, configure: impl FnOnce(&mut Command)) -> Option<Self> {
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        configure(&mut cmd);
        let child = match cmd.spawn() {
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

/// A throw-away Redis Cluster: `masters` `redis-server` processes in cluster mode on
/// free 127.0.0.1 ports (client and bus ports both chosen free), no replicas, joined
/// by `redis-cli --cluster create` (slots split evenly: with 3 masters 0–5460,
/// 5461–10922, 10923–16383), killed and their files removed when dropped.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    dir: std::path::PathBuf,
}

/// `n` distinct free TCP ports on 127.0.0.1 (all held at once while picked, then
/// released).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("no free TCP port on 127.0.0.1"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("a bound listener's address").port())
        .collect()
}

impl RedisCluster {
    /// Starts the nodes, joins them and waits until every node reports
    /// `cluster_state:ok`. `None` as [`RedisServer::start`].
    ///
    /// # Panics
    /// If `redis-server` or `redis-cli` is missing (without the skip variables), or the
    /// cluster is not up within 30 seconds.
    #[must_use]
    pub fn start(masters: usize) -> Option<Self> {
        let dir = std::env::temp_dir().join(format!(
            "loxo-redis-cluster-{}-{}",
            std::process::id(),
            free_ports(1)[0]
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the cluster's directory");
        let ports = free_ports(2 * masters);
        let mut nodes = Vec::new();
        for (i, pair) in ports.chunks_exact(2).enumerate() {
            // The client port, and the cluster bus port (by default client + 10 000,
            // which may be taken or past 65 535).
            let (port, bus) = (pair[0], pair[1]);
            let node = RedisServer::spawn(port, |cmd| {
                cmd.args([
                    "--cluster-enabled",
                    "yes",
                    "--cluster-port",
                    &bus.to_string(),
                ])
                .args(["--cluster-config-file", &format!("nodes-{i}.conf")])
                .args(["--cluster-node-timeout", "5000"])
                .arg("--dir")
                .arg(&dir);
            })?;
            nodes.push(node);
        }
        let cluster = Self { nodes, dir };
        let create = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(cluster.addrs())
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output();
        match create {
            Ok(o) => assert!(
                o.status.success(),
                "redis-cli --cluster create failed: {}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => {
                crate::collectors::missing(
                    "redis-cli",
                    &e.to_string(),
                    "Debian: apt-get install redis-tools",
                    Some("LOXO_SKIP_REDIS"),
                );
                return None;
            }
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        for port in cluster.nodes.iter().map(RedisServer::port) {
            while !cluster
                .cli(port, &["CLUSTER", "INFO"])
                .contains("cluster_state:ok")
            {
                assert!(
                    Instant::now() < deadline,
                    "the Redis Cluster node on port {port} is not ok within 30 s"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Some(cluster)
    }

    /// `127.0.0.1:PORT` of each node, in start order.
    #[must_use]
    pub fn addrs(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::addr).collect()
    }

    /// `redis-cli -c -p PORT ARGS…` (redirections followed): its standard output.
    ///
    /// # Panics
    /// If `redis-cli` cannot run.
    #[must_use]
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        let o = Command::new("redis-cli")
            .args(["-c", "-h", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run redis-cli");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The TCP port of each node, in start order.
    #[must_use]
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.nodes.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
