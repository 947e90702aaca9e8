//! Frames from a Linux network interface through an `AF_PACKET` socket with a
//! memory-mapped `TPACKET_V3` receive ring — the capture I/O of `loxo probe`, kept
//! apart from its monitor loop.
//!
//! The kernel writes frames into blocks of a ring shared with the process (no copy, no
//! system call per frame); a block is handed over when it is full or after a timeout
//! ([`RingConfig::retire_ms`]), the process reads its frames and hands the block back.
//! When every block is held, the kernel drops frames and counts them: [`Ring::statistics`]
//! reads those counters (`PACKET_STATISTICS`, reset by each read), so a caller can report
//! every frame it did not see.
//!
//! **Why the kernel API through `libc`, not a crate.** The crates that wrap
//! `AF_PACKET` were checked for what they really do: `pnet_datalink`'s Linux backend
//! reads one frame per `recvfrom` call (no ring); `af_packet` has a `TPACKET_V3` ring but
//! is GPL-3.0 (loxo is MIT OR Apache-2.0) and unmaintained since 2020; `netring` (0.6)
//! is young, async-first and much larger than the ~250 lines needed here. `libc` is
//! already in the workspace's dependency tree. The unsafe code is limited to the
//! system calls and the two views of the mapped ring (a block's bytes while the process
//! owns it, and its status word), each with a `SAFETY` comment; parsing a block is safe
//! code over a byte slice ([`BlockFrames`]), tested without a socket.
//!
//! Privileges: opening the socket needs `CAP_NET_RAW` and nothing else
//! ([`OpenError::Permission`] says so).

mod block;
#[cfg(target_os = "linux")]
mod ring;

pub use block::{BlockFrames, Frame, VLAN_TPID_VALID, VLAN_VALID};
#[cfg(target_os = "linux")]
pub use ring::{Block, Ring};

use core::fmt;

/// Geometry of the receive ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingConfig {
    /// Bytes per block: a multiple of the page size, a power of two (the kernel's
    /// rules). A frame larger than a block is cut to it.
    pub block_size: u32,
    /// Blocks in the ring: the ring's memory is `block_size · block_nr`, fixed.
    pub block_nr: u32,
    /// Milliseconds after which the kernel hands over a block that is not full, so
    /// that a quiet link still delivers its frames.
    pub retire_ms: u32,
    /// Put the interface in promiscuous mode while the socket is open.
    pub promiscuous: bool,
}

impl RingConfig {
    /// 1 MiB blocks, 8 of them (8 MiB), blocks retired after 10 ms, promiscuous.
    pub const DEFAULT: Self = Self {
        block_size: 1 << 20,
        block_nr: 8,
        retire_ms: 10,
        promiscuous: true,
    };
}

impl Default for RingConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The kernel's counters since the previous read (`struct tpacket_stats_v3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Statistics {
    /// Frames the socket received, delivered or dropped.
    pub packets: u64,
    /// Frames dropped because the ring was full.
    pub drops: u64,
    /// Times the ring was frozen (every block held by the process).
    pub freezes: u64,
}

/// Why a ring could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The process lacks `CAP_NET_RAW`.
    Permission(std::io::Error),
    /// No interface of that name.
    NoInterface(String),
    /// Another step failed: which, and the system error.
    Io(&'static str, std::io::Error),
    /// Not Linux.
    Unsupported,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Permission(e) => write!(
                f,
                "cannot open an AF_PACKET socket ({e}): capturing needs CAP_NET_RAW — run as \
                 root or grant it once: setcap cap_net_raw+ep $(command -v loxo)"
            ),
            Self::NoInterface(name) => write!(f, "no network interface named {name:?}"),
            Self::Io(step, e) => write!(f, "{step}: {e}"),
            Self::Unsupported => f.write_str("AF_PACKET capture is Linux only"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Permission(e) | Self::Io(_, e) => Some(e),
            _ => None,
        }
    }
}
