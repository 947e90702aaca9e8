//! The few board peripherals of QEMU `mps2-an386` the demo uses, besides the
//! NIC: an FPGAIO LED as an embedded-hal `OutputPin`, SysTick as a cycle
//! counter, and the stack painter.

use core::convert::Infallible;

/// LAN9118 base address.
pub(crate) const LAN9118_BASE: usize = 0x4020_0000;
/// FPGAIO LED0 register: bit n drives user LED n.
const FPGAIO_LED0: *mut u32 = 0x4002_8000 as *mut u32;

/// One FPGAIO user LED.
pub(crate) struct Led {
    mask: u32,
}

impl Led {
    /// Takes LED `n` (0 or 1).
    pub(crate) const fn new(n: u8) -> Self {
        Self { mask: 1 << n }
    }

    fn update(&mut self, on: bool) {
        // SAFETY: FPGAIO LED0 is a 32-bit read/write register of the
        // mps2-an386 FPGA block, always mapped; the read-modify-write races
        // with nothing (single core, no interrupt touches it).
        unsafe {
            let v = FPGAIO_LED0.read_volatile();
            FPGAIO_LED0.write_volatile(if on { v | self.mask } else { v & !self.mask });
        }
    }

    /// Whether the LED is lit.
    pub(crate) fn is_lit(&self) -> bool {
        // SAFETY: as in `update`, a plain read of an always-mapped register.
        unsafe { FPGAIO_LED0.read_volatile() & self.mask != 0 }
    }
}

impl embedded_hal::digital::ErrorType for Led {
    type Error = Infallible;
}

impl embedded_hal::digital::OutputPin for Led {
    fn set_low(&mut self) -> Result<(), Infallible> {
        self.update(false);
        Ok(())
    }
    fn set_high(&mut self) -> Result<(), Infallible> {
        self.update(true);
        Ok(())
    }
}

/// SysTick as a free-running 24-bit down-counter at the core clock (25 MHz on
/// mps2-an386: one tick is 40 ns of virtual time). Under `qemu -icount shift=7` an
/// instruction is 3.2 ticks, so an interval's ticks give its instruction count
/// exactly ([`insns`]; the arithmetic is in `cost_hist`'s docs).
pub(crate) struct Ticks(cortex_m::peripheral::SYST);

/// The instructions run in an interval of `ticks` SysTick ticks, exactly
/// ([`cost_hist::insns`](crate::cost_hist::insns): under `-icount shift=7`).
#[inline(always)]
pub(crate) const fn insns(ticks: u32) -> u32 {
    crate::cost_hist::insns(ticks as u64) as u32
}

impl Ticks {
    pub(crate) fn start(mut syst: cortex_m::peripheral::SYST) -> Self {
        syst.set_clock_source(cortex_m::peripheral::syst::SystClkSource::Core);
        syst.set_reload(0x00FF_FFFF);
        syst.clear_current();
        syst.enable_counter();
        Self(syst)
    }

    #[inline(always)]
    pub(crate) fn now(&self) -> u32 {
        self.0.cvr.read()
    }

    /// Ticks elapsed from `earlier` to `later` (the counter counts down, mod 2^24).
    #[inline(always)]
    pub(crate) fn elapsed(earlier: u32, later: u32) -> u32 {
        earlier.wrapping_sub(later) & 0x00FF_FFFF
    }

    /// Instructions run since SysTick read `earlier` ([`insns`]).
    #[inline(always)]
    pub(crate) fn insns_since(&self, earlier: u32) -> u32 {
        insns(Self::elapsed(earlier, self.now()))
    }
}

const PAINT: u32 = 0xA5A5_5A5A;

extern "C" {
    static mut __sheap: u32;
    static _stack_start: u32;
}

/// Fills the unused stack (from the end of static data to just below the
/// current stack pointer) with a pattern.
#[inline(never)]
pub(crate) fn paint_stack() {
    let sp = cortex_m::register::msp::read() as usize;
    // SAFETY: [__sheap, sp - 256) is RAM above all statics and below the
    // live stack frames (256 bytes of margin for this function's own frame);
    // no heap exists, so nothing else owns it.
    unsafe {
        let mut p = core::ptr::addr_of_mut!(__sheap);
        while (p as usize) < sp - 256 {
            p.write_volatile(PAINT);
            p = p.add(1);
        }
    }
}

/// (static RAM bytes, peak stack bytes): `.data`+`.bss` and the high-water
/// mark of the painted stack.
pub(crate) fn ram_usage() -> (u32, u32) {
    // SAFETY: reads the painted region of `paint_stack`, which is plain RAM.
    unsafe {
        let bottom = core::ptr::addr_of!(__sheap) as usize;
        let top = core::ptr::addr_of!(_stack_start) as usize;
        let mut p = bottom as *const u32;
        while (p as usize) < top && p.read_volatile() == PAINT {
            p = p.add(1);
        }
        ((bottom - 0x2000_0000) as u32, (top - p as usize) as u32)
    }
}
