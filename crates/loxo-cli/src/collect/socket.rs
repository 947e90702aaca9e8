//! The collector's UDP socket: a larger receive buffer (`SO_RCVBUF`), a thread that
//! drains it into a bounded queue while the main thread decodes, writes and exports,
//! and the kernel's count of the datagrams it dropped, so that a burst that overflows
//! the buffer is counted, never silent.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs as _, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context};
use loxo_control::datagram::DATAGRAM_MAX;
use socket2::{Domain, Protocol, Socket, Type};

use super::{AllowFrom, Collector, ErrorKind};

/// `--recv-buffer`'s default: 8 MiB asked of the kernel (Linux grants at most
/// `net.core.rmem_max`, and counts each datagram's bookkeeping too: a 1 424-byte
/// datagram takes about 2.3 KiB of it).
pub const DEFAULT_RECV_BUFFER: usize = 8 << 20;

/// Datagrams the receive thread queues for the main thread, at most `RECV_QUEUE ·
/// (DATAGRAM_MAX + 1)` bytes (5.8 MB); one more is dropped and counted.
pub const RECV_QUEUE: usize = 4096;

/// Binds `addr` (the first of its addresses that binds) with a receive buffer of
/// `recv_buffer` bytes asked for; returns the socket and the buffer granted.
pub(super) fn bind(addr: &str, recv_buffer: usize) -> anyhow::Result<(UdpSocket, usize)> {
    let mut last = None;
    for a in addr
        .to_socket_addrs()
        .with_context(|| format!("cannot listen on UDP {addr}"))?
    {
        match bind_one(a, recv_buffer) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Err(e).with_context(|| format!("cannot listen on UDP {addr}")),
        None => bail!("cannot listen on UDP {addr}: no address"),
    }
}

fn bind_one(a: SocketAddr, recv_buffer: usize) -> io::Result<(UdpSocket, usize)> {
    let s = Socket::new(Domain::for_address(a), Type::DGRAM, Some(Protocol::UDP))?;
    // A refusal leaves the default buffer, reported by the size granted.
    let _ = s.set_recv_buffer_size(recv_buffer);
    s.bind(&a.into())?;
    let granted = s.recv_buffer_size()?;
    Ok((s.into(), granted))
}

/// The receive thread and what it hands over.
#[derive(Debug)]
pub(super) struct Datagrams {
    rx: Receiver<Vec<u8>>,
    stop: Arc<AtomicBool>,
    queue_drops: Arc<AtomicU64>,
    /// Datagrams from addresses `--allow-from` does not list.
    refused: Arc<AtomicU64>,
    thread: Option<JoinHandle<io::Result<()>>>,
    /// The socket (the thread reads a clone of it), for the kernel's drop count.
    socket: UdpSocket,
    /// Drops already counted: (kernel, queue, refused).
    counted: (u64, u64, u64),
}

impl Datagrams {
    /// Starts the receive thread on `socket`, taking datagrams from the addresses
    /// `allow` lists (any, when `None`).
    pub(super) fn start(socket: UdpSocket, allow: Option<AllowFrom>) -> anyhow::Result<Self> {
        let reader = socket.try_clone().context("cannot clone the socket")?;
        // The thread looks at its stop flag every 100 ms.
        reader.set_read_timeout(Some(Duration::from_millis(100)))?;
        let (tx, rx) = mpsc::sync_channel(RECV_QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let queue_drops = Arc::new(AtomicU64::new(0));
        let refused = Arc::new(AtomicU64::new(0));
        let thread = {
            let counts = [Arc::clone(&queue_drops), Arc::clone(&refused)];
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || receive(&reader, &tx, &stop, allow.as_ref(), &counts))
        };
        Ok(Self {
            rx,
            stop,
            queue_drops,
            refused,
            thread: Some(thread),
            socket,
            counted: (0, 0, 0),
        })
    }

    /// The next datagram, or `None` after `wait` without one.
    ///
    /// # Errors
    /// The socket's error that stopped the receive thread.
    pub(super) fn next(&mut self, wait: Duration) -> anyhow::Result<Option<Vec<u8>>> {
        match self.rx.recv_timeout(wait) {
            Ok(d) => Ok(Some(d)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                let r = self.thread.take().map(JoinHandle::join);
                match r {
                    Some(Ok(Err(e))) => Err(e).context("cannot receive"),
                    _ => bail!("the receive thread stopped"),
                }
            }
        }
    }

    /// Counts the datagrams dropped unread since the last call: by the kernel (its
    /// receive buffer full; Linux only, from `/proc/net/udp`) and by the queue.
    pub(super) fn count_drops(&mut self, c: &mut Collector, granted: usize) {
        if let Some(k) = kernel_drops(&self.socket) {
            let n = k.saturating_sub(self.counted.0);
            self.counted.0 = k;
            if n > 0 {
                c.fail_n(
                    ErrorKind::Dropped,
                    n,
                    format!("{n} datagrams dropped by the kernel: the socket's receive buffer ({granted} bytes) was full (--recv-buffer, net.core.rmem_max)"),
                );
            }
        }
        let q = self.queue_drops.load(Ordering::Relaxed);
        let n = q - self.counted.1;
        self.counted.1 = q;
        if n > 0 {
            c.fail_n(
                ErrorKind::Dropped,
                n,
                format!("{n} datagrams dropped: the receive queue of {RECV_QUEUE} was full"),
            );
        }
        let r = self.refused.load(Ordering::Relaxed);
        let n = r - self.counted.2;
        self.counted.2 = r;
        if n > 0 {
            c.fail_n(
                ErrorKind::Address,
                n,
                format!("{n} datagrams from addresses --allow-from does not list: refused"),
            );
        }
    }

    /// Stops the receive thread (within 100 ms).
    pub(super) fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The receive thread: socket → queue until told to stop; `counts` are the
/// datagrams dropped for a full queue and those refused for their address.
fn receive(
    socket: &UdpSocket,
    tx: &SyncSender<Vec<u8>>,
    stop: &AtomicBool,
    allow: Option<&AllowFrom>,
    counts: &[Arc<AtomicU64>; 2],
) -> io::Result<()> {
    let [drops, refused] = counts;
    // One byte more than a sketch datagram: a longer one arrives cut, and the
    // collector refuses it as malformed without a larger copy.
    let mut buf = [0u8; DATAGRAM_MAX + 1];
    while !stop.load(Ordering::Acquire) {
        match socket.recv_from(&mut buf) {
            Ok((_, from)) if allow.is_some_and(|a| !a.allows(from.ip())) => {
                refused.fetch_add(1, Ordering::Relaxed);
            }
            Ok((n, _)) => match tx.try_send(buf.get(..n).unwrap_or(&buf).to_vec()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    drops.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => return Ok(()),
            },
            // A read timeout, an ICMP error of an earlier send, or a signal: not the
            // senders' fault.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Datagrams the kernel dropped on `socket` since it was opened (the `drops` column
/// of `/proc/net/udp` or `udp6` for its inode); `None` where that is not known.
#[cfg(target_os = "linux")]
fn kernel_drops(socket: &UdpSocket) -> Option<u64> {
    use std::os::fd::AsRawFd as _;
    let link = std::fs::read_link(format!("/proc/self/fd/{}", socket.as_raw_fd())).ok()?;
    let inode = link
        .to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .to_owned();
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            drops_of(&text, &inode)
        })
}

#[cfg(not(target_os = "linux"))]
fn kernel_drops(_: &UdpSocket) -> Option<u64> {
    None
}

/// The `drops` column of the line of a `/proc/net/udp` table whose inode (the
/// tenth column) is `inode`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn drops_of(table: &str, inode: &str) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        (cols.get(9) == Some(&inode)).then(|| cols.last()?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn drops_column_of_the_socket_inode() {
        let table = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  193: 0100007F:A3F9 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 81265 2 0000000000000000 0
  511: 0100007F:B0C1 00000000:0000 07 00000000:00034000 00:00000000 00000000     0        0 81301 2 0000000000000000 164
";
        assert_eq!(super::drops_of(table, "81301"), Some(164));
        assert_eq!(super::drops_of(table, "81265"), Some(0));
        assert_eq!(super::drops_of(table, "1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_bound_socket_is_in_the_table() {
        let (s, granted) = super::bind("127.0.0.1:0", 1 << 20).unwrap();
        assert!(granted > 0);
        assert_eq!(super::kernel_drops(&s), Some(0));
    }
}
