//! The LAN9118 driver on hostile hardware: every register read returns the next
//! 32-bit word of the input (then an idle, ready chip once the input runs out),
//! and the input's first bytes choose the driver calls. Never a panic, every
//! `receive` returns within its documented bound of register accesses, and a
//! delivered frame fits the buffer.
#![no_main]

use std::cell::Cell;

use libfuzzer_sys::fuzz_target;
use loxo_lan9118::{
    Lan9118, Reg, Registers, BYTE_TEST_VALUE, FRAME_BUF_LEN, PMT_CTRL_READY, POLL_LIMIT,
};

/// `receive`'s bound (crate docs): every status entry `RXSUSED` can report with
/// the largest length, plus one recovery (`init`).
const RECEIVE_BOUND: u64 = 1 + 255 * (2 + 4096) + 8 * POLL_LIMIT as u64 + 10;

struct Hostile<'a> {
    words: &'a [u8],
    accesses: &'a Cell<u64>,
}

impl Registers for Hostile<'_> {
    fn read(&mut self, reg: Reg) -> u32 {
        self.accesses.set(self.accesses.get() + 1);
        if let Some((w, rest)) = self.words.split_first_chunk::<4>() {
            self.words = rest;
            return u32::from_le_bytes(*w);
        }
        match reg {
            Reg::ByteTest => BYTE_TEST_VALUE,
            Reg::PmtCtrl => PMT_CTRL_READY,
            _ => 0,
        }
    }
    fn write(&mut self, _: Reg, _: u32) {
        self.accesses.set(self.accesses.get() + 1);
    }
}

fuzz_target!(|data: &[u8]| {
    let (ops, words) = data.split_at(data.len().min(8));
    let accesses = Cell::new(0);
    let mut nic = Lan9118::new(Hostile {
        words,
        accesses: &accesses,
    });
    let mut buf = [0u8; FRAME_BUF_LEN];
    for &op in ops {
        match op % 8 {
            0 => {
                let _ = nic.init([2, 0, 0, 0, 0, 1]);
            }
            1 => {
                let _ = nic.recover();
            }
            2 => nic.update_drop_counter(),
            3 => {
                let _ = nic.transmit(&buf[..usize::from(op) * 6]);
            }
            4 => {
                let _ = nic.mac_address();
            }
            _ => {
                let before = accesses.get();
                let r = nic.receive(&mut buf);
                let used = accesses.get() - before;
                assert!(used <= RECEIVE_BOUND, "receive took {used} accesses");
                if let Ok(Some(n)) = r {
                    assert!(n <= FRAME_BUF_LEN);
                }
            }
        }
    }
});
