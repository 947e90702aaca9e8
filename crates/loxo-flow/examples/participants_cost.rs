//! Feeds 1 000 000 synthetic flow keys — a flood of one-packet flows from random
//! IPv4 sources onto 4 victims, 4 horizontal scanners, ordinary traffic; every key
//! distinct, the worst case for the cells — to a `DeviceParticipants` and a
//! `HostParticipants`, and prints the host's nanoseconds per `observe` and per
//! `end_epoch`. With `valgrind --tool=callgrind --toggle-collect='*feed*'` it
//! counts instructions per call (`cargo build --release --example participants_cost
//! -p loxo-flow`, then callgrind on `target/release/examples/participants_cost`).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Instant;

use loxo_flow::{
    DeviceParticipants, FlowKey, HostParticipants, Participants, ParticipantsConfig,
    ParticipantsReport,
};

/// The fixed seed of this example (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

const N: u32 = 1_000_000;

fn keys() -> Vec<FlowKey> {
    (0..N)
        .map(|i| {
            let h = loxo_core::mix64(u64::from(i));
            let r = (h >> 32) as u32;
            match i % 10 {
                0..=5 => FlowKey::v4(r.to_be_bytes(), [192, 0, 2, (i % 4) as u8], 1234, 53, 17),
                6 | 7 => FlowKey::v4([198, 51, 100, (i % 4) as u8], r.to_be_bytes(), 40000, 22, 6),
                _ => FlowKey::v4(
                    (0x0a00_0000 | (r & 0xffff)).to_be_bytes(),
                    (0xc0a8_0000 | (r >> 20)).to_be_bytes(),
                    (h >> 8) as u16,
                    443,
                    6,
                ),
            }
        })
        .collect()
}

/// One `observe`, not inlined: callgrind's `--toggle-collect='*feed*'` counts it.
#[inline(never)]
fn feed<const S: usize, const W: usize, const C: usize, const VW: usize, const VC: usize>(
    p: &mut Participants<S, W, C, VW, VC>,
    k: &FlowKey,
) {
    p.observe(k);
}

fn run<const S: usize, const W: usize, const C: usize, const VW: usize, const VC: usize>(
    name: &str,
    config: ParticipantsConfig,
    keys: &[FlowKey],
) {
    let mut p = Box::new(Participants::<S, W, C, VW, VC>::new(config));
    let t = Instant::now();
    for k in keys {
        feed(&mut p, black_box(k));
    }
    let per = t.elapsed().as_nanos() as f64 / keys.len() as f64;
    let mut r = ParticipantsReport::<16>::new();
    let t = Instant::now();
    p.end_epoch(&mut r);
    let end = t.elapsed().as_micros();
    println!(
        "{name} ({} bytes): observe {per:.1} ns, end_epoch {end} µs; {} scanners, {} victims",
        Participants::<S, W, C, VW, VC>::MEMORY_BYTES,
        r.scanners.len(),
        r.victims.len()
    );
}

fn main() {
    let keys = keys();
    run::<128, 16, 128, 16, 72>(
        "DeviceParticipants",
        ParticipantsConfig::device(TEST_SEED),
        &keys,
    );
    run::<1024, 19, 512, 12, 512>(
        "HostParticipants",
        ParticipantsConfig::host(TEST_SEED),
        &keys,
    );
    let _ = (
        DeviceParticipants::MEMORY_BYTES,
        HostParticipants::MEMORY_BYTES,
    );
}
