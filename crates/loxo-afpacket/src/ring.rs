//! The socket and its mapped ring: every `unsafe` of the crate is here.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::{BlockFrames, OpenError, RingConfig, Statistics};

/// `enum tpacket_versions`: TPACKET_V3.
const TPACKET_V3: libc::c_int = 2;
/// `tp_frame_size` of the request: V3 packs frames of any size into blocks, but the
/// kernel still checks a frame size (≥ TPACKET3_HDRLEN, 16-byte aligned, dividing the
/// block size).
const FRAME_SIZE: u32 = 2048;
/// Byte offset of `hdr.bh1.block_status` in a block.
const BLOCK_STATUS: usize = 8;

/// An `AF_PACKET` socket bound to one interface, with its `TPACKET_V3` receive ring.
///
/// Memory: `block_size · block_nr` bytes of ring, mapped once; nothing is allocated
/// per frame.
#[derive(Debug)]
pub struct Ring {
    fd: OwnedFd,
    map: NonNull<u8>,
    len: usize,
    block_size: usize,
    block_nr: usize,
    /// The block to read next (the kernel fills them in order).
    next: usize,
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

fn setsockopt<T>(
    fd: &OwnedFd,
    name: libc::c_int,
    value: &T,
    step: &'static str,
) -> Result<(), OpenError> {
    // SAFETY: `value` points to a live `T` of `size_of::<T>()` bytes, which the kernel
    // only reads during the call; `fd` is an open socket.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            name,
            std::ptr::from_ref(value).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(OpenError::Io(step, last_error()));
    }
    Ok(())
}

impl Ring {
    /// Opens the ring on interface `iface`: a socket of protocol 0 (it receives
    /// nothing yet), TPACKET_V3, the ring requested and mapped, then bound to the
    /// interface for every protocol (`ETH_P_ALL`), promiscuous if configured; the
    /// kernel's counters are read once, so [`statistics`](Self::statistics) starts at 0.
    ///
    /// # Errors
    /// [`OpenError::Permission`] without `CAP_NET_RAW`, [`OpenError::NoInterface`],
    /// [`OpenError::Io`] for a geometry the kernel refuses or a failed step.
    pub fn open(iface: &str, config: &RingConfig) -> Result<Self, OpenError> {
        let name = CString::new(iface).map_err(|_| OpenError::NoInterface(iface.to_owned()))?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(OpenError::NoInterface(iface.to_owned()));
        }
        // SAFETY: a system call without pointers.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            let e = last_error();
            return Err(match e.raw_os_error() {
                Some(libc::EPERM | libc::EACCES) => OpenError::Permission(e),
                _ => OpenError::Io("socket(AF_PACKET)", e),
            });
        }
        // SAFETY: `raw` is a descriptor just opened and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        setsockopt(
            &fd,
            libc::PACKET_VERSION,
            &TPACKET_V3,
            "PACKET_VERSION TPACKET_V3",
        )?;
        let block_size = config.block_size;
        let req = libc::tpacket_req3 {
            tp_block_size: block_size,
            tp_block_nr: config.block_nr,
            tp_frame_size: FRAME_SIZE,
            tp_frame_nr: (block_size / FRAME_SIZE).saturating_mul(config.block_nr),
            tp_retire_blk_tov: config.retire_ms,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        setsockopt(
            &fd,
            libc::PACKET_RX_RING,
            &req,
            "PACKET_RX_RING (ring geometry)",
        )?;
        let len = block_size as usize * config.block_nr as usize;
        // SAFETY: maps `len` bytes of the socket's ring, which the kernel just
        // allocated with exactly that size; no existing memory is touched.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(OpenError::Io("mmap of the ring", last_error()));
        }
        let Some(map) = NonNull::new(map.cast::<u8>()) else {
            return Err(OpenError::Io(
                "mmap of the ring",
                io::Error::other("null mapping"),
            ));
        };
        let mut ring = Self {
            fd,
            map,
            len,
            block_size: block_size as usize,
            block_nr: config.block_nr as usize,
            next: 0,
        };
        ring.bind(index, config.promiscuous)?;
        ring.statistics()
            .map_err(|e| OpenError::Io("PACKET_STATISTICS", e))?;
        Ok(ring)
    }

    fn bind(&mut self, index: u32, promiscuous: bool) -> Result<(), OpenError> {
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: `sockaddr_ll` is plain old data; all zeros is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = index.cast_signed();
        // SAFETY: `sll` is a live `sockaddr_ll` of the length passed, read by the
        // kernel during the call only.
        let r = unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                std::ptr::from_ref(&sll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(OpenError::Io("bind to the interface", last_error()));
        }
        if promiscuous {
            let mreq = libc::packet_mreq {
                mr_ifindex: index.cast_signed(),
                mr_type: libc::PACKET_MR_PROMISC as u16,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            setsockopt(
                &self.fd,
                libc::PACKET_ADD_MEMBERSHIP,
                &mreq,
                "promiscuous mode",
            )?;
        }
        Ok(())
    }

    /// Bytes of ring memory.
    pub const fn memory_bytes(&self) -> usize {
        self.len
    }

    /// Block `i`'s status word, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        let offset = (i % self.block_nr) * self.block_size + BLOCK_STATUS;
        #[allow(clippy::cast_ptr_alignment)] // 4-byte aligned: see below
        // SAFETY: `offset + 4 ≤ len` (i < block_nr, blocks are ≥ one page), so the
        // pointer is inside the mapping, which lives as long as `self`; it is 4-byte
        // aligned (the mapping is page-aligned, blocks are page multiples, the field is
        // at 8). The word is written by the kernel and by us, always atomically here.
        unsafe {
            AtomicU32::from_ptr(self.map.as_ptr().add(offset).cast::<u32>())
        }
    }

    fn ready(&self) -> bool {
        self.status(self.next).load(Ordering::Acquire) & libc::TP_STATUS_USER != 0
    }

    /// The next block the kernel has handed over, waiting up to `timeout` for one;
    /// `None` after the timeout or when a signal interrupted the wait. Drop the block
    /// to hand it back.
    ///
    /// # Errors
    /// A failed `poll`.
    pub fn next_block(&mut self, timeout: Duration) -> io::Result<Option<Block<'_>>> {
        if !self.ready() {
            let mut p = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN | libc::POLLERR,
                revents: 0,
            };
            let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: `p` is one live `pollfd` for the duration of the call.
            let r = unsafe { libc::poll(&raw mut p, 1, ms) };
            if r < 0 {
                let e = last_error();
                return if e.kind() == io::ErrorKind::Interrupted {
                    Ok(None)
                } else {
                    Err(e)
                };
            }
            if !self.ready() {
                return Ok(None);
            }
        }
        Ok(Some(Block { ring: self }))
    }

    /// The kernel's counters since the previous call (the kernel resets them on
    /// each read).
    ///
    /// # Errors
    /// A failed `getsockopt`.
    pub fn statistics(&self) -> io::Result<Statistics> {
        let mut s = libc::tpacket_stats_v3 {
            tp_packets: 0,
            tp_drops: 0,
            tp_freeze_q_cnt: 0,
        };
        let mut len = size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: `s` and `len` are live and writable, `len` holds `s`'s size; the
        // kernel writes at most that many bytes during the call.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                std::ptr::from_mut(&mut s).cast(),
                &raw mut len,
            )
        };
        if r < 0 {
            return Err(last_error());
        }
        Ok(Statistics {
            packets: u64::from(s.tp_packets),
            drops: u64::from(s.tp_drops),
            freezes: u64::from(s.tp_freeze_q_cnt),
        })
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `open` made; no `Block` borrows it any
        // more (a block borrows the ring mutably).
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.len);
        }
    }
}

/// A block the process holds: its frames are readable until it is dropped, which
/// hands it back to the kernel.
#[derive(Debug)]
pub struct Block<'r> {
    ring: &'r mut Ring,
}

impl Block<'_> {
    /// The ring's [`statistics`](Ring::statistics), read while the block is held.
    ///
    /// # Errors
    /// A failed `getsockopt`.
    pub fn statistics(&self) -> io::Result<Statistics> {
        self.ring.statistics()
    }

    /// The block's frames.
    pub fn frames(&self) -> BlockFrames<'_> {
        BlockFrames::new(self.bytes())
    }

    fn bytes(&self) -> &[u8] {
        let r = &*self.ring;
        // SAFETY: block `next` lies inside the mapping (`next < block_nr`). The kernel
        // set its status to TP_STATUS_USER (read with Acquire in `next_block`) and
        // does not write a block the process holds until its status goes back to
        // TP_STATUS_KERNEL, which only `Drop` does, after every view borrowed from
        // `self` has ended.
        unsafe {
            std::slice::from_raw_parts(r.map.as_ptr().add(r.next * r.block_size), r.block_size)
        }
    }
}

impl Drop for Block<'_> {
    fn drop(&mut self) {
        let next = self.ring.next;
        self.ring
            .status(next)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.ring.next = (next + 1) % self.ring.block_nr;
    }
}
