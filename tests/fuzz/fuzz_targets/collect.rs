//! Any sequence of sketch datagrams as `loxo collect --keys` takes them
//! (`loxo_cli::collect::Collector`), most of them **signed** so fuzzing reaches past
//! the MAC into reassembly, decoding and merging: never a panic, the state never past
//! its memory limit, a device the keys do not list never merged, and a datagram sent
//! again byte for byte always refused as a replay (or, unlisted, as unknown).
//!
//! Input: records of an op byte, a `u16` LE length and that many bytes. Op bits 0–1:
//! the device (0–2 listed, 3 not), bit 2: the stream, bits 3–5: the epoch, bit 6
//! clear: the bytes are a loxo frame (its length and CRC fixed up by
//! `loxo_fuzz::resign`) that the device sends, chunked and signed — bit 7 skips a
//! sequence number first (a datagram lost); bit 6 set: bit 7 clear pushes the bytes
//! as a raw datagram, bit 7 set replays datagram number `bytes[0]` of those sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cli::collect::{Collector, ErrorKind, Keys, Limits, Sender};
use loxo_control::datagram::{ExportKey, Stream};
use loxo_core::Seed;

const FLEET: Seed = Seed::new(0x6675_7a7a, 0x666c_6565);

fn key(d: u32) -> ExportKey {
    ExportKey::from_bytes([d as u8 ^ 0xa5; 16])
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_partial: 4,
        max_devices: 3,
        max_open_epochs: 3,
        max_messages: 8,
        min_devices: 0,
        max_bytes: 2 << 20,
    };
    let keys = (0..3).fold(Keys::new(FLEET.fingerprint()), |k, d| k.with(d, key(d)));
    let mut c = Collector::new(limits, keys);
    let mut senders: Vec<Sender> = (0..4).map(|d| Sender::new(d, key(d), 0)).collect();
    let mut sent: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut rest = data;
    while let [op, a, b, tail @ ..] = rest {
        let n = usize::from(u16::from_le_bytes([*a, *b])).min(tail.len());
        let (bytes, next) = tail.split_at(n);
        rest = next;
        let device = u32::from(op & 3);
        let stream = if op & 4 == 0 { Stream::Flows } else { Stream::TopK };
        let epoch = u32::from(op >> 3 & 7);
        match (op & 0x40 != 0, op & 0x80 != 0) {
            (false, skip) => {
                let s = &mut senders[device as usize];
                if skip {
                    s.skip(1);
                }
                for d in s.datagrams(stream, epoch, &loxo_fuzz::resign(bytes)) {
                    c.push(&d);
                    if sent.len() < 256 {
                        sent.push((device, d));
                    }
                }
            }
            (true, false) => c.push(bytes),
            (true, true) => {
                let Some((device, d)) = bytes.first().and_then(|&i| sent.get(usize::from(i)))
                else {
                    continue;
                };
                let kind = if *device == 3 {
                    ErrorKind::UnknownDevice
                } else {
                    ErrorKind::Replay
                };
                let before = c.error_counts().get(&kind).copied().unwrap_or(0);
                c.push(d);
                assert_eq!(c.error_counts().get(&kind).copied(), Some(before + 1));
            }
        }
        assert!(c.memory_bytes() <= limits.max_bytes);
        for e in c.take_finalized() {
            assert!(!e.flows_devices.contains(&3) && !e.top_devices.contains(&3));
        }
        drop(c.take_frames());
        drop(c.take_messages());
    }
    c.finish();
    for e in c.take_finalized() {
        assert!(!e.flows_devices.contains(&3) && !e.top_devices.contains(&3));
        assert!(e.fingerprint == Some(FLEET.fingerprint()));
    }
});
