//! A polling, allocation-free driver for the SMSC LAN9118 Ethernet MAC+PHY —
//! the NIC of Arm's MPS2 boards and of QEMU's `mps2-an385`/`mps2-an386`.
//!
//! The driver logic ([`Lan9118`]) talks to the chip only through the small
//! [`Registers`] trait, so it is unit-tested on the host against a register
//! model; on the target, [`Mmio`] implements the trait with volatile accesses
//! (the crate's only `unsafe`, confined to `mmio.rs`).
//!
//! What it does: soft reset, MAC address through the MAC CSR indirect
//! registers, RX/TX enable in promiscuous full-duplex mode, polling of the RX
//! status and data FIFOs into a caller buffer, counting of RX errors and
//! drops (never a panic), and transmission of one frame.
//!
//! Every hardware wait is bounded: a register that never settles is an
//! [`Error`] after [`POLL_LIMIT`] reads, and [`Lan9118::receive`] handles at
//! most the frames the status FIFO held when it was called. RX FIFO words no
//! working chip produces (reserved bits set, as on an all-ones bus; a status
//! whose frame is not in the data FIFO; a status FIFO that keeps delivering
//! only bad frames) are reported as [`Error::RxFault`] after a soft reset
//! that brings the device back up ([`Lan9118::recover`]).
//!
//! Memory: a [`Lan9118<R>`] is `size_of::<R>()` + 32 bytes (counters, MAC
//! address, fault bookkeeping); the frame buffer is the caller's
//! ([`FRAME_BUF_LEN`] bytes).
//!
//! Cost: receiving a frame of `n` bytes is `3 + ⌈(n + 4) / 4⌉` register
//! accesses (FIFO info, status pop, data words including the FCS); sending
//! one is `3 + ⌈n / 4⌉`. One `receive` call makes at most
//! `1 + 255 · (2 + 4096)` accesses (every status entry the FIFO can report,
//! each with the largest length field), plus a recovery's
//! `≤ 8 · POLL_LIMIT + 10` when it detects a fault.
//!
//! ```
//! use loxo_lan9118::{Lan9118, Reg, Registers};
//!
//! // A stand-in for the chip: reports "no frame pending" and a correct
//! // BYTE_TEST; a real program uses `unsafe { Mmio::new(0x4020_0000) }`.
//! struct Idle;
//! impl Registers for Idle {
//!     fn read(&mut self, reg: Reg) -> u32 {
//!         match reg {
//!             Reg::ByteTest => loxo_lan9118::BYTE_TEST_VALUE,
//!             Reg::PmtCtrl => 1,
//!             _ => 0,
//!         }
//!     }
//!     fn write(&mut self, _reg: Reg, _value: u32) {}
//! }
//!
//! let mut nic = Lan9118::new(Idle);
//! nic.init([0x02, 0, 0, 0, 0, 1]).unwrap();
//! let mut buf = [0u8; loxo_lan9118::FRAME_BUF_LEN];
//! assert_eq!(nic.receive(&mut buf), Ok(None));
//! ```
#![no_std]
#![deny(unsafe_code)]

mod mmio;
mod regs;

pub use mmio::Mmio;
pub use regs::*;

/// Register access to one LAN9118: the only way the driver touches the chip.
///
/// Implementations must perform exactly one 32-bit access per call, in call
/// order: reads of the FIFO ports pop data.
pub trait Registers {
    /// Reads a 32-bit register.
    fn read(&mut self, reg: Reg) -> u32;
    /// Writes a 32-bit register.
    fn write(&mut self, reg: Reg, value: u32);
}

/// Size of a receive buffer: the largest frame the driver delivers (a
/// 1518-byte VLAN-tagged frame without FCS, rounded up to whole FIFO words).
pub const FRAME_BUF_LEN: usize = 1536;

/// How many times a self-clearing bit is polled before giving up.
pub const POLL_LIMIT: u32 = 100_000;

/// Frames skipped in a row (error summary or oversized) after which the RX
/// path counts as stuck and is reset: four full status FIFOs' worth (its
/// 8-bit `RXSUSED` field counts at most 255 entries). A link that delivers
/// only bad frames also trips it; the reset then drops nothing of value.
pub const MAX_SKIPPED_IN_A_ROW: u32 = 4 * 255;

/// `RX_FIFO_INF` bits 31:24 are reserved and read 0 on a working chip.
const RX_FIFO_INF_RESERVED: u32 = 0xFF00_0000;
/// `RX_FIFO_INF.RXDUSED`: used RX data FIFO bytes, bits 15:0.
const RX_FIFO_INF_DUSED_MASK: u32 = 0xFFFF;
/// Bit 31 of an RX status word is reserved and reads 0 on a working chip.
const RX_STS_RESERVED: u32 = 1 << 31;

/// Why the device could not be brought up or driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Error {
    /// `BYTE_TEST` did not read `0x87654321`: no device, or wrong bus width/order.
    NotPresent {
        /// The value read.
        byte_test: u32,
    },
    /// `HW_CFG.SRST` or `PMT_CTRL.READY` did not settle after a soft reset.
    ResetTimeout,
    /// `MAC_CSR_CMD.CSR_BUSY` did not clear.
    MacCsrTimeout,
    /// A frame to send is empty or longer than 1518 bytes.
    FrameLength,
    /// The TX data FIFO has no room for the frame right now.
    TxFifoFull,
    /// The RX FIFOs reported what no working chip does: reserved bits set
    /// (an all-ones bus reads so), a status whose frame is not in the data
    /// FIFO, or [`MAX_SKIPPED_IN_A_ROW`] bad frames in a row (a stuck status
    /// FIFO). The driver soft-reset and re-initialised the device before
    /// returning this; frames queued at that moment are lost (counted in
    /// [`RxStats::faults`]). A failed recovery returns its own error instead
    /// ([`Error::NotPresent`], [`Error::ResetTimeout`], [`Error::MacCsrTimeout`]).
    RxFault {
        /// `RX_FIFO_INF` as read before the offending status.
        fifo_inf: u32,
        /// The offending RX status word (0 if none was popped).
        status: u32,
    },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotPresent { byte_test } => {
                write!(f, "no lan9118 found (byte test read {byte_test:#010x})")
            }
            Self::ResetTimeout => f.write_str("lan9118 did not come out of soft reset"),
            Self::MacCsrTimeout => f.write_str("lan9118 mac csr access timed out"),
            Self::FrameLength => f.write_str("frame length out of range 1..=1518"),
            Self::TxFifoFull => f.write_str("lan9118 tx fifo full"),
            Self::RxFault { fifo_inf, status } => write!(
                f,
                "lan9118 rx fifo fault (rx_fifo_inf {fifo_inf:#010x}, status {status:#010x}), device reset"
            ),
        }
    }
}

impl core::error::Error for Error {}

/// Receive counters; all saturate at `u32::MAX`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RxStats {
    /// Frames delivered to the caller.
    pub frames: u32,
    /// Frames whose status had the error-summary bit set (CRC, runt, too
    /// long, collision), drained and skipped.
    pub errors: u32,
    /// Frames longer than [`FRAME_BUF_LEN`], drained and skipped.
    pub oversized: u32,
    /// Frames the chip dropped because its RX FIFO was full (`RX_DROP` plus
    /// `INT_STS.RXDF` events), as of the last [`Lan9118::update_drop_counter`].
    pub overruns: u32,
    /// RX faults detected and recovered from by a soft reset ([`Error::RxFault`]).
    pub faults: u32,
}

/// A LAN9118 driven by polling through register access `R`.
#[derive(Debug)]
pub struct Lan9118<R> {
    regs: R,
    stats: RxStats,
    tx_tag: u16,
    /// The station address of the last [`init`](Self::init), restored by a recovery.
    mac: [u8; 6],
    /// Frames skipped since the last good one (see [`MAX_SKIPPED_IN_A_ROW`]).
    skipped_in_a_row: u32,
}

impl<R: Registers> Lan9118<R> {
    /// Wraps the register access; the device is untouched until [`init`](Self::init).
    pub const fn new(regs: R) -> Self {
        Self {
            regs,
            stats: RxStats {
                frames: 0,
                errors: 0,
                oversized: 0,
                overruns: 0,
                faults: 0,
            },
            tx_tag: 0,
            mac: [0; 6],
            skipped_in_a_row: 0,
        }
    }

    /// Checks the device, soft-resets it, sets the MAC address and enables
    /// the receiver and transmitter (promiscuous, full duplex).
    ///
    /// Frames that reach the wire before this returns are lost (the MAC
    /// drops them while RX is disabled).
    ///
    /// # Errors
    ///
    /// [`Error::NotPresent`], [`Error::ResetTimeout`], [`Error::MacCsrTimeout`].
    pub fn init(&mut self, mac: [u8; 6]) -> Result<(), Error> {
        self.mac = mac;
        self.skipped_in_a_row = 0;
        let byte_test = self.regs.read(Reg::ByteTest);
        if byte_test != BYTE_TEST_VALUE {
            return Err(Error::NotPresent { byte_test });
        }
        self.regs.write(Reg::HwCfg, HW_CFG_SRST);
        self.wait(Reg::HwCfg, HW_CFG_SRST, 0)?;
        self.wait(Reg::PmtCtrl, PMT_CTRL_READY, PMT_CTRL_READY)?;
        self.set_mac_address(mac)?;
        // Start from empty FIFOs whatever happened before the reset.
        self.regs.write(Reg::RxCfg, RX_CFG_RX_DUMP);
        // TXSAO: let the TX status FIFO overrun instead of stalling TX, since
        // nobody consumes TX statuses in a polling receiver.
        self.regs.write(Reg::TxCfg, TX_CFG_TX_ON | TX_CFG_TXSAO);
        self.mac_write(
            MacReg::Cr,
            MAC_CR_RXEN | MAC_CR_TXEN | MAC_CR_PRMS | MAC_CR_FDPX,
        )
    }

    /// Writes the station address through `MAC_ADDRL`/`MAC_ADDRH`.
    ///
    /// # Errors
    ///
    /// [`Error::MacCsrTimeout`].
    pub fn set_mac_address(&mut self, mac: [u8; 6]) -> Result<(), Error> {
        let [a, b, c, d, e, g] = mac;
        self.mac_write(MacReg::AddrL, u32::from_le_bytes([a, b, c, d]))?;
        self.mac_write(MacReg::AddrH, u32::from_le_bytes([e, g, 0, 0]))
    }

    /// Reads the station address back.
    ///
    /// # Errors
    ///
    /// [`Error::MacCsrTimeout`].
    pub fn mac_address(&mut self) -> Result<[u8; 6], Error> {
        let [a, b, c, d] = self.mac_read(MacReg::AddrL)?.to_le_bytes();
        let [e, g, _, _] = self.mac_read(MacReg::AddrH)?.to_le_bytes();
        Ok([a, b, c, d, e, g])
    }

    /// Takes the next good frame out of the RX FIFOs into `buf` and returns
    /// its length without the FCS, `Ok(None)` if no frame is pending.
    ///
    /// Frames with the error-summary bit and frames longer than the buffer
    /// are drained, counted in [`stats`](Self::stats) and skipped. One call
    /// handles at most the status entries the FIFO reported when it began
    /// (≤ 255), so it returns in bounded time whatever the bus reads; if only
    /// bad frames were among them it returns `Ok(None)`.
    ///
    /// # Errors
    ///
    /// [`Error::RxFault`] when the FIFOs report something no working chip
    /// does; the device has then been soft-reset and re-initialised
    /// ([`recover`](Self::recover)), so the next call receives again. A
    /// recovery that fails returns its error instead.
    pub fn receive(&mut self, buf: &mut [u8; FRAME_BUF_LEN]) -> Result<Option<usize>, Error> {
        let mut budget = None;
        loop {
            let inf = self.regs.read(Reg::RxFifoInf);
            if inf & RX_FIFO_INF_RESERVED != 0 {
                return Err(self.fault(inf, 0));
            }
            let pending = (inf >> RX_FIFO_INF_SUSED_SHIFT) & RX_FIFO_INF_SUSED_MASK;
            let left = budget.get_or_insert(pending);
            if pending == 0 || *left == 0 {
                return Ok(None);
            }
            *left -= 1;
            let status = self.regs.read(Reg::RxStatusFifo);
            // Length counts the 4-byte FCS the MAC leaves in the FIFO.
            let len = ((status >> RX_STS_LEN_SHIFT) & RX_STS_LEN_MASK) as usize;
            let words = len.div_ceil(4);
            // A status is pushed only once its frame is wholly in the data
            // FIFO, so a working chip always has the words it announces.
            if status & RX_STS_RESERVED != 0 || words * 4 > (inf & RX_FIFO_INF_DUSED_MASK) as usize
            {
                return Err(self.fault(inf, status));
            }
            let payload = len.saturating_sub(4);
            if status & RX_STS_ES != 0 || payload > FRAME_BUF_LEN {
                self.drain(words);
                if status & RX_STS_ES != 0 {
                    self.stats.errors = self.stats.errors.saturating_add(1);
                } else {
                    self.stats.oversized = self.stats.oversized.saturating_add(1);
                }
                self.skipped_in_a_row = self.skipped_in_a_row.saturating_add(1);
                if self.skipped_in_a_row >= MAX_SKIPPED_IN_A_ROW {
                    return Err(self.fault(inf, status));
                }
                continue;
            }
            // The words that fit the buffer (the payload and, where there is room,
            // the FCS), then the FCS words past its end, read and dropped. Two
            // plain loops: the copy is a load, a store and the loop's count per
            // word (one loop that tested for room on every word cost a Cortex-M4
            // about twice that: a 64-byte frame's read 234 → … instructions).
            let fit = words.min(FRAME_BUF_LEN / 4);
            for chunk in buf.chunks_exact_mut(4).take(fit) {
                chunk.copy_from_slice(&self.regs.read(Reg::RxDataFifo).to_le_bytes());
            }
            for _ in fit..words {
                let _ = self.regs.read(Reg::RxDataFifo);
            }
            self.skipped_in_a_row = 0;
            self.stats.frames = self.stats.frames.saturating_add(1);
            return Ok(Some(payload));
        }
    }

    /// Brings the device back after a fault: soft reset (which empties both
    /// RX FIFOs), then the [`init`](Self::init) sequence with the last MAC
    /// address. [`receive`](Self::receive) calls it on [`Error::RxFault`];
    /// call it yourself to recover from any other error. Bounded, like
    /// `init`: at most `8 · POLL_LIMIT + 10` register accesses (two reset
    /// waits and six MAC CSR waits of at most [`POLL_LIMIT`] reads each).
    ///
    /// # Errors
    ///
    /// As [`init`](Self::init).
    pub fn recover(&mut self) -> Result<(), Error> {
        self.init(self.mac)
    }

    /// Counts an RX fault and recovers; returns the error `receive` reports.
    fn fault(&mut self, fifo_inf: u32, status: u32) -> Error {
        self.stats.faults = self.stats.faults.saturating_add(1);
        match self.recover() {
            Ok(()) => Error::RxFault { fifo_inf, status },
            Err(e) => e,
        }
    }

    /// Folds the chip's drop counter and overflow flag into
    /// [`RxStats::overruns`]; call it now and then (e.g. at epoch end).
    pub fn update_drop_counter(&mut self) {
        let dropped = self.regs.read(Reg::RxDrop);
        let sts = self.regs.read(Reg::IntSts);
        let flagged = u32::from(sts & INT_STS_RXDF != 0 && dropped == 0);
        if sts & (INT_STS_RXDF | INT_STS_RXE) != 0 {
            self.regs
                .write(Reg::IntSts, sts & (INT_STS_RXDF | INT_STS_RXE));
        }
        self.stats.overruns = self
            .stats
            .overruns
            .saturating_add(dropped)
            .saturating_add(flagged);
    }

    /// Queues one frame (without FCS; the MAC appends it) for transmission.
    ///
    /// # Errors
    ///
    /// [`Error::FrameLength`] for an empty or > 1518-byte frame,
    /// [`Error::TxFifoFull`] if the TX data FIFO lacks room (retry later).
    pub fn transmit(&mut self, frame: &[u8]) -> Result<(), Error> {
        let len = frame.len();
        if len == 0 || len > 1518 {
            return Err(Error::FrameLength);
        }
        let free = (self.regs.read(Reg::TxFifoInf) & TX_FIFO_INF_TDFREE_MASK) as usize;
        if free < len.div_ceil(4) * 4 + 8 {
            return Err(Error::TxFifoFull);
        }
        let len = len as u32;
        self.tx_tag = self.tx_tag.wrapping_add(1);
        self.regs.write(
            Reg::TxDataFifo,
            TX_CMD_A_FIRST_SEG | TX_CMD_A_LAST_SEG | (len & TX_CMD_LEN_MASK),
        );
        self.regs.write(
            Reg::TxDataFifo,
            (u32::from(self.tx_tag) << TX_CMD_B_TAG_SHIFT) | (len & TX_CMD_LEN_MASK),
        );
        let mut chunks = frame.chunks_exact(4);
        for chunk in &mut chunks {
            let mut w = [0u8; 4];
            w.copy_from_slice(chunk);
            self.regs.write(Reg::TxDataFifo, u32::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 4];
            w[..rest.len()].copy_from_slice(rest);
            self.regs.write(Reg::TxDataFifo, u32::from_le_bytes(w));
        }
        Ok(())
    }

    /// The receive counters.
    pub const fn stats(&self) -> RxStats {
        self.stats
    }

    /// Gives the register access back.
    pub fn release(self) -> R {
        self.regs
    }

    /// The register model under the driver (tests inject faults through it).
    #[cfg(test)]
    pub(crate) fn regs_mut(&mut self) -> &mut R {
        &mut self.regs
    }

    fn drain(&mut self, words: usize) {
        for _ in 0..words {
            let _ = self.regs.read(Reg::RxDataFifo);
        }
    }

    fn wait(&mut self, reg: Reg, mask: u32, want: u32) -> Result<(), Error> {
        for _ in 0..POLL_LIMIT {
            if self.regs.read(reg) & mask == want {
                return Ok(());
            }
        }
        Err(Error::ResetTimeout)
    }

    fn mac_wait(&mut self) -> Result<(), Error> {
        for _ in 0..POLL_LIMIT {
            if self.regs.read(Reg::MacCsrCmd) & MAC_CSR_BUSY == 0 {
                return Ok(());
            }
        }
        Err(Error::MacCsrTimeout)
    }

    fn mac_write(&mut self, reg: MacReg, value: u32) -> Result<(), Error> {
        self.mac_wait()?;
        self.regs.write(Reg::MacCsrData, value);
        self.regs.write(Reg::MacCsrCmd, MAC_CSR_BUSY | reg as u32);
        self.mac_wait()
    }

    fn mac_read(&mut self, reg: MacReg) -> Result<u32, Error> {
        self.mac_wait()?;
        self.regs
            .write(Reg::MacCsrCmd, MAC_CSR_BUSY | MAC_CSR_READ | reg as u32);
        self.mac_wait()?;
        Ok(self.regs.read(Reg::MacCsrData))
    }
}

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
