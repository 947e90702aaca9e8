//! A register-level model of the LAN9118 for host tests, following the
//! datasheet and QEMU's `hw/net/lan9118.c` (FIFO word packing, FCS word,
//! frames dropped while RX is disabled, abort on unmodelled registers).
#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;
use std::collections::VecDeque;
use std::vec::Vec;

use crate::{
    MacReg, Reg, Registers, BYTE_TEST_VALUE, HW_CFG_SRST, MAC_CR_RXEN, RX_CFG_RX_DUMP, RX_STS_ES,
};

#[derive(Debug, Default)]
pub(crate) struct Fake {
    pub mac_cr: u32,
    pub mac: [u8; 6],
    mac_data: u32,
    pub tx_cfg: u32,
    pub resets: u32,
    rx_status: VecDeque<u32>,
    rx_data: VecDeque<u32>,
    tx_words: Vec<u32>,
    pub sent: Vec<Vec<u8>>,
    pub int_sts: u32,
    pub rx_drop: u32,
    /// Status FIFO capacity (QEMU: 176 entries after reset).
    pub status_capacity: usize,
    /// Data FIFO capacity in words (QEMU: 2640 after reset; `RXDUSED`, in
    /// bytes, has 16 bits, so at most 16383 words can be described).
    pub data_capacity: usize,
    pub accesses: u32,
    /// Every read returns all ones (a bus with nothing answering), persistently.
    pub all_ones: bool,
    /// A stuck status FIFO until the next soft reset: it reports one entry and
    /// every pop returns this word without removing anything.
    pub stuck_status: Option<u32>,
    /// Panics once this many accesses were made: turns a driver that spins
    /// forever into a failing test instead of a hung one.
    pub access_limit: Option<u32>,
}

impl Fake {
    pub(crate) fn new() -> Self {
        Self {
            status_capacity: 176,
            data_capacity: 2640,
            ..Self::default()
        }
    }

    /// Delivers a frame from the wire; returns whether the MAC took it.
    pub(crate) fn wire_rx(&mut self, frame: &[u8], error: bool) -> bool {
        if self.mac_cr & MAC_CR_RXEN == 0 || frame.len() < 14 || frame.len() >= 2048 {
            return false;
        }
        let words = (frame.len() + 4).div_ceil(4);
        if self.rx_status.len() == self.status_capacity
            || self.rx_data.len() + words > self.data_capacity
        {
            self.rx_drop += 1;
            self.int_sts |= crate::INT_STS_RXDF;
            return false;
        }
        let mut bytes = frame.to_vec();
        bytes.extend_from_slice(&[0xFC, 0xFC, 0xFC, 0xFC]); // stand-in FCS
        let mut status = (bytes.len() as u32) << 16;
        if error {
            status |= RX_STS_ES;
        }
        self.rx_status.push_back(status);
        for chunk in bytes.chunks(4) {
            let mut w = [0u8; 4];
            w[..chunk.len()].copy_from_slice(chunk);
            self.rx_data.push_back(u32::from_le_bytes(w));
        }
        true
    }

    fn count_access(&mut self) {
        self.accesses += 1;
        if let Some(limit) = self.access_limit {
            assert!(
                self.accesses < limit,
                "still polling after {limit} register accesses"
            );
        }
    }

    fn tx_push(&mut self, value: u32) {
        self.tx_words.push(value);
        let a = self.tx_words[0];
        let len = (a & 0x7FF) as usize;
        if self.tx_words.len() == 2 + len.div_ceil(4) {
            assert_ne!(a & crate::TX_CMD_A_FIRST_SEG, 0);
            assert_ne!(a & crate::TX_CMD_A_LAST_SEG, 0);
            assert_eq!(self.tx_words[1] & 0x7FF, a & 0x7FF, "cmd B length");
            let mut out: Vec<u8> = self.tx_words[2..]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            out.truncate(len);
            self.sent.push(out);
            self.tx_words.clear();
        }
    }
}

impl Registers for Fake {
    fn read(&mut self, reg: Reg) -> u32 {
        self.count_access();
        if self.all_ones {
            return u32::MAX;
        }
        if let Some(status) = self.stuck_status {
            match reg {
                Reg::RxFifoInf => return (1 << 16) | ((self.rx_data.len() as u32) * 4),
                Reg::RxStatusFifo => return status,
                Reg::RxDataFifo => return self.rx_data.front().copied().unwrap_or(0),
                _ => {}
            }
        }
        match reg {
            Reg::ByteTest => BYTE_TEST_VALUE,
            Reg::IdRev => 0x0118_0001,
            Reg::HwCfg => 0x0005_0004,
            Reg::PmtCtrl => 1,
            Reg::TxCfg => self.tx_cfg,
            Reg::RxFifoInf => {
                ((self.rx_status.len() as u32) << 16) | ((self.rx_data.len() as u32) * 4)
            }
            Reg::TxFifoInf => 4608 - 4 * self.tx_words.len() as u32,
            Reg::RxStatusFifo => self.rx_status.pop_front().unwrap_or(0),
            Reg::RxDataFifo => self.rx_data.pop_front().expect("rx data underrun"),
            Reg::MacCsrCmd => 0,
            Reg::MacCsrData => self.mac_data,
            Reg::IntSts => self.int_sts,
            Reg::RxDrop => core::mem::take(&mut self.rx_drop),
            other => panic!("read of unmodelled register {other:?} (QEMU would abort)"),
        }
    }

    fn write(&mut self, reg: Reg, value: u32) {
        self.count_access();
        if self.all_ones {
            return;
        }
        match reg {
            Reg::HwCfg if value & HW_CFG_SRST != 0 => {
                self.resets += 1;
                self.stuck_status = None;
                self.mac_cr = 1 << 18;
                self.tx_cfg = 0;
                self.rx_status.clear();
                self.rx_data.clear();
            }
            Reg::RxCfg => {
                if value & RX_CFG_RX_DUMP != 0 {
                    self.rx_status.clear();
                    self.rx_data.clear();
                }
            }
            Reg::TxCfg => self.tx_cfg = value & 6,
            Reg::TxDataFifo => self.tx_push(value),
            Reg::MacCsrData => self.mac_data = value,
            Reg::IntSts => self.int_sts &= !value,
            Reg::MacCsrCmd => {
                assert_ne!(value & crate::MAC_CSR_BUSY, 0);
                let idx = value & 0xF;
                let read = value & crate::MAC_CSR_READ != 0;
                let [a, b, c, d] = self.mac_data.to_le_bytes();
                match (idx, read) {
                    (i, false) if i == MacReg::Cr as u32 => self.mac_cr = self.mac_data,
                    (i, true) if i == MacReg::Cr as u32 => self.mac_data = self.mac_cr,
                    (i, false) if i == MacReg::AddrL as u32 => {
                        self.mac[..4].copy_from_slice(&[a, b, c, d]);
                    }
                    (i, false) if i == MacReg::AddrH as u32 => {
                        self.mac[4..].copy_from_slice(&[a, b]);
                    }
                    (i, true) if i == MacReg::AddrL as u32 => {
                        self.mac_data = u32::from_le_bytes([
                            self.mac[0],
                            self.mac[1],
                            self.mac[2],
                            self.mac[3],
                        ]);
                    }
                    (i, true) if i == MacReg::AddrH as u32 => {
                        self.mac_data = u32::from_le_bytes([self.mac[4], self.mac[5], 0, 0]);
                    }
                    _ => panic!("unmodelled mac register {idx}"),
                }
            }
            other => panic!("write of unmodelled register {other:?} (QEMU would abort)"),
        }
    }
}
