//! The only `unsafe` of the crate: volatile 32-bit accesses to the device's
//! memory-mapped registers.
#![allow(unsafe_code)]

use crate::{Reg, Registers};

/// Memory-mapped access to a LAN9118 at a fixed physical address.
///
/// Costs one volatile 32-bit load or store per register access; 4 bytes.
#[derive(Debug)]
pub struct Mmio {
    base: usize,
}

impl Mmio {
    /// Creates the register access for a device mapped at `base`.
    ///
    /// # Safety
    ///
    /// `base` must be the 4-byte-aligned address of a LAN9118 register block
    /// (at least 0x100 bytes of device memory, e.g. `0x4020_0000` on QEMU's
    /// `mps2-an385/386`), and no other code may access that block while this
    /// value lives: the FIFO ports pop on read, so two owners would steal
    /// each other's words.
    pub const unsafe fn new(base: usize) -> Self {
        Self { base }
    }
}

impl Registers for Mmio {
    #[inline]
    fn read(&mut self, reg: Reg) -> u32 {
        let addr = (self.base + reg.offset()) as *const u32;
        // SAFETY: `new`'s contract makes `base` a valid, aligned, exclusively
        // owned device block of ≥ 0x100 bytes, and every `Reg` offset is an
        // aligned offset < 0x100 of a register the device implements.
        unsafe { addr.read_volatile() }
    }

    #[inline]
    fn write(&mut self, reg: Reg, value: u32) {
        let addr = (self.base + reg.offset()) as *mut u32;
        // SAFETY: as in `read`; the block is device memory, not Rust-owned
        // memory, so a store aliases no Rust reference.
        unsafe { addr.write_volatile(value) }
    }
}
