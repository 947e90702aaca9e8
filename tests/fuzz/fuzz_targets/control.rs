//! Any bytes as a control frame of the replay protocol (`loxo-control`), as the
//! firmware and `loxo replay` receive them: `peek`, `verify` and `sketch_chunk` never
//! panic; any message signed under the test key verifies to itself and fails under
//! another nonce; and the `Guard` of a run accepts only non-decreasing sequence
//! numbers. (No "a raw input never verifies" property: libFuzzer watches the tag
//! comparison's operands and solves it — an attacker on the wire sees no such thing.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_control::{build, build_sketch, peek, sketch_chunk, verify, Guard, OP_SKETCH};
use loxo_core::Seed;

const KEY: Seed = Seed::new(0x6675_7a7a, 0x636f_6e74);

fuzz_target!(|data: &[u8]| {
    let nonce = data.get(..8).map_or(0, |b| {
        let mut n = [0u8; 8];
        n.copy_from_slice(b);
        u64::from_le_bytes(n)
    });
    let frame = data.get(8..).unwrap_or(&[]);
    let _ = peek(frame);
    let _ = sketch_chunk(frame);
    let _ = verify(frame, &KEY, nonce);
    // The same message signed properly verifies, and round-trips.
    if let Some(c) = peek(frame) {
        let signed = if c.op == OP_SKETCH {
            let chunk = sketch_chunk(frame).unwrap_or(&[]);
            let (f, len) = build_sketch([2; 6], c.seq, c.value, c.extra, chunk, &KEY, nonce);
            f[..len].to_vec()
        } else {
            build([2; 6], c, &KEY, nonce).to_vec()
        };
        assert_eq!(verify(&signed, &KEY, nonce), Ok(c));
        assert!(verify(&signed, &KEY, nonce ^ 1).is_err());
    }
    // A run's guard: accepted sequence numbers never go down.
    let mut g = Guard::default();
    let mut last: Option<u32> = None;
    for w in frame.chunks_exact(4) {
        let seq = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let c = loxo_control::Control { op: 2, seq, value: 0, extra: 0 };
        let ok = g.accept(&c);
        assert_eq!(ok, last.is_none_or(|l| seq >= l));
        if ok {
            last = Some(seq);
        }
    }
});
