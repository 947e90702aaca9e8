//! The device nonce of the control channel (`loxo_control::device_nonce`): a boot
//! counter kept in flash and 64 bits from the TRNG, mixed under the control key.
//!
//! QEMU's `mps2-an386` has neither: its flash is RAM that every QEMU run starts
//! afresh, and it has no TRNG. What stands in, both through semihosting (QEMU's
//! `-semihosting-config enable=on,target=native`, which the demo uses):
//!
//! - **boot counter**: an 8-byte file, `out/boot-counter` (relative to QEMU's working
//!   directory, the repository root under `cargo xtask demo`), read, incremented and
//!   written back at each boot — the flash page of a product. Runs started at once
//!   may race on it; the entropy keeps their nonces apart;
//! - **TRNG**: 8 bytes read from the host's `/dev/urandom`.
//!
//! Either one alone gives two boots different nonces, in the same second or not (the
//! nonce derived from the boot time in whole seconds did not); when neither is
//! available (semihosting file access off, another host OS), the nonce falls back to
//! the boot time and says so in the log (`entropy=none`) — and the host nonce of `loxo
//! replay` still keeps every session's ACK/DONE fresh for the host.

use cortex_m_semihosting::{nr, syscall};

/// Where the boot counter lives under QEMU (NUL-terminated for semihosting).
const COUNTER_PATH: &[u8] = b"out/boot-counter\0";
/// The TRNG's stand-in (NUL-terminated).
const ENTROPY_PATH: &[u8] = b"/dev/urandom\0";

/// This boot's device nonce, the boot counter it used (if any) and whether the
/// TRNG stand-in answered.
pub(crate) fn device_nonce(key: &loxo_core::Seed) -> (u64, Option<u64>, bool) {
    let counter = next_boot_count();
    let entropy = read_u64(ENTROPY_PATH);
    let fallback = entropy.is_none() && counter.is_none();
    let word = match (entropy, fallback) {
        (Some(e), _) => e,
        // Neither stand-in: the boot time is all that is left (documented above).
        (None, true) => crate::boot_secs(),
        (None, false) => 0,
    };
    (
        loxo_control::device_nonce(key, counter.unwrap_or(0), word),
        counter,
        entropy.is_some(),
    )
}

/// Reads, increments and writes back the boot counter; its new value.
fn next_boot_count() -> Option<u64> {
    let previous = read_u64(COUNTER_PATH).unwrap_or(0);
    let next = previous.wrapping_add(1);
    let fd = open(COUNTER_PATH, nr::open::W_TRUNC_BINARY)?;
    let bytes = next.to_le_bytes();
    // SAFETY: SYS_WRITE reads `bytes.len()` bytes from `bytes`, which outlives the call.
    let unwritten = unsafe { syscall!(WRITE, fd, bytes.as_ptr(), bytes.len()) };
    close(fd);
    (unwritten == 0).then_some(next)
}

/// 8 bytes of the host file `path` (NUL-terminated), little-endian.
fn read_u64(path: &[u8]) -> Option<u64> {
    let fd = open(path, nr::open::R_BINARY)?;
    let mut bytes = [0u8; 8];
    // SAFETY: SYS_READ writes at most `bytes.len()` bytes into `bytes`, which is ours
    // for the call's duration.
    let unread = unsafe { syscall!(READ, fd, bytes.as_mut_ptr(), bytes.len()) };
    close(fd);
    (unread == 0).then(|| u64::from_le_bytes(bytes))
}

/// Opens the host file `path` (NUL-terminated) in semihosting `mode`.
fn open(path: &[u8], mode: usize) -> Option<usize> {
    // SAFETY: SYS_OPEN reads the NUL-terminated name (its length excludes the NUL)
    // from a static; it writes no memory of ours.
    let fd = unsafe { syscall!(OPEN, path.as_ptr(), mode, path.len() - 1) };
    (fd != usize::MAX).then_some(fd)
}

fn close(fd: usize) {
    // SAFETY: SYS_CLOSE of a handle SYS_OPEN returned; no memory of ours is touched.
    unsafe {
        syscall!(CLOSE, fd);
    }
}
