//! The LAN9118 register map: system control and status registers (SCSR) on
//! the memory-mapped bus, and the MAC control registers reached indirectly
//! through `MAC_CSR_CMD` / `MAC_CSR_DATA`.
//!
//! Offsets and bits follow the SMSC LAN9118 datasheet (section 5) and were
//! cross-checked against QEMU's `hw/net/lan9118.c` and Linux `smsc911x.h`.
//! Only registers QEMU implements are listed: QEMU aborts the whole machine
//! on an access to a register it does not model, so the type system keeps
//! the driver inside this set.

/// A memory-mapped register of the LAN9118, as a byte offset from its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
#[non_exhaustive]
pub enum Reg {
    /// RX data FIFO port (read pops one 32-bit word of the current frame).
    RxDataFifo = 0x00,
    /// TX data FIFO port (write pushes a command or data word).
    TxDataFifo = 0x20,
    /// RX status FIFO port (read pops the status word of the next frame).
    RxStatusFifo = 0x40,
    /// TX status FIFO port.
    TxStatusFifo = 0x48,
    /// Chip ID and revision; `0x0118_xxxx` on a LAN9118.
    IdRev = 0x50,
    /// Interrupt status (write 1 to clear).
    IntSts = 0x58,
    /// Interrupt enable.
    IntEn = 0x5C,
    /// Byte-order test register; reads [`BYTE_TEST_VALUE`].
    ByteTest = 0x64,
    /// Receive configuration (`RX_DUMP`, data offset, end alignment).
    RxCfg = 0x6C,
    /// Transmit configuration (`TX_ON`, FIFO dumps).
    TxCfg = 0x70,
    /// Hardware configuration (`SRST` soft reset).
    HwCfg = 0x74,
    /// RX FIFO information: used status entries and used data bytes.
    RxFifoInf = 0x7C,
    /// TX FIFO information: used status entries and free data bytes.
    TxFifoInf = 0x80,
    /// Power management control (`READY` bit).
    PmtCtrl = 0x84,
    /// Free-running 25 MHz counter.
    FreeRun = 0x9C,
    /// RX dropped-frame counter (clears on read on silicon).
    RxDrop = 0xA0,
    /// MAC CSR indirect access: command.
    MacCsrCmd = 0xA4,
    /// MAC CSR indirect access: data.
    MacCsrData = 0xA8,
}

impl Reg {
    /// Byte offset of the register from the device base address.
    #[inline]
    pub const fn offset(self) -> usize {
        self as usize
    }
}

/// Value `BYTE_TEST` reads when the bus is wired and byte order is right.
pub const BYTE_TEST_VALUE: u32 = 0x8765_4321;

/// `HW_CFG.SRST`: soft reset, self-clearing.
pub const HW_CFG_SRST: u32 = 1 << 0;
/// `PMT_CTRL.READY`: the device is out of reset and accessible.
pub const PMT_CTRL_READY: u32 = 1 << 0;
/// `TX_CFG.TX_ON`: enable the transmitter.
pub const TX_CFG_TX_ON: u32 = 1 << 1;
/// `TX_CFG.TXSAO`: allow TX status FIFO overrun.
pub const TX_CFG_TXSAO: u32 = 1 << 2;
/// `RX_CFG.RX_DUMP`: discard the whole RX data and status FIFOs.
pub const RX_CFG_RX_DUMP: u32 = 1 << 15;
/// `INT_STS.RXDF_INT`: the RX data FIFO overflowed and a frame was dropped.
pub const INT_STS_RXDF: u32 = 1 << 6;
/// `INT_STS.RXE_INT`: receiver error (e.g. FIFO underrun on read).
pub const INT_STS_RXE: u32 = 1 << 14;

/// `MAC_CSR_CMD.CSR_BUSY`: start the access / access in progress.
pub const MAC_CSR_BUSY: u32 = 1 << 31;
/// `MAC_CSR_CMD.R_NW`: 1 = read, 0 = write.
pub const MAC_CSR_READ: u32 = 1 << 30;

/// Indirect MAC control registers (index for `MAC_CSR_CMD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
#[non_exhaustive]
pub enum MacReg {
    /// MAC control register.
    Cr = 1,
    /// MAC address, bytes 4..6.
    AddrH = 2,
    /// MAC address, bytes 0..4.
    AddrL = 3,
}

/// `MAC_CR.RXEN`: enable the receiver.
pub const MAC_CR_RXEN: u32 = 1 << 2;
/// `MAC_CR.TXEN`: enable the transmitter.
pub const MAC_CR_TXEN: u32 = 1 << 3;
/// `MAC_CR.PRMS`: promiscuous mode.
pub const MAC_CR_PRMS: u32 = 1 << 18;
/// `MAC_CR.FDPX`: full duplex.
pub const MAC_CR_FDPX: u32 = 1 << 20;

/// RX status word: frame length in bytes (FCS included), bits 29:16.
pub const RX_STS_LEN_SHIFT: u32 = 16;
/// RX status word: frame length mask after shifting.
pub const RX_STS_LEN_MASK: u32 = 0x3FFF;
/// RX status word: error summary (CRC, runt, too long, collision...).
pub const RX_STS_ES: u32 = 1 << 15;
/// RX status word: filtering failed (frame only delivered in RXALL mode).
pub const RX_STS_FILTER_FAIL: u32 = 1 << 30;

/// `RX_FIFO_INF.RXSUSED`: used RX status FIFO entries, bits 23:16.
pub const RX_FIFO_INF_SUSED_SHIFT: u32 = 16;
/// Mask of `RXSUSED` after shifting.
pub const RX_FIFO_INF_SUSED_MASK: u32 = 0xFF;
/// `TX_FIFO_INF.TDFREE`: free TX data FIFO space in bytes, bits 15:0.
pub const TX_FIFO_INF_TDFREE_MASK: u32 = 0xFFFF;

/// TX command A: first segment of a frame.
pub const TX_CMD_A_FIRST_SEG: u32 = 1 << 13;
/// TX command A: last segment of a frame.
pub const TX_CMD_A_LAST_SEG: u32 = 1 << 12;
/// TX command A / B: buffer size and frame length field mask (11 bits).
pub const TX_CMD_LEN_MASK: u32 = 0x7FF;
/// TX command B: packet tag shift (the tag comes back in the TX status).
pub const TX_CMD_B_TAG_SHIFT: u32 = 16;
