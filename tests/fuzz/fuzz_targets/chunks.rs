//! Any sequence of SKETCH chunks as `loxo replay --sketch-dir` reassembles them
//! (`loxo_cli::chunks::SketchChunks`): never a panic, never more buffered than
//! `MAX_SKETCH` per epoch, and every sketch handed back is exactly its announced total,
//! made of the chunks in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cli::chunks::{SketchChunks, MAX_SKETCH};

fuzz_target!(|data: &[u8]| {
    let mut s = SketchChunks::default();
    let mut rest = data;
    // Each chunk: epoch (1 byte), offset (u16), total (u32), length (u16), bytes.
    while rest.len() >= 9 {
        let epoch = u32::from(rest[0] % 4);
        let offset = u32::from(u16::from_le_bytes([rest[1], rest[2]]));
        let total = u32::from_le_bytes([rest[3], rest[4], rest[5], rest[6]]);
        let n = usize::from(u16::from_le_bytes([rest[7], rest[8]])) % 1025;
        let chunk = rest.get(9..9 + n).unwrap_or(&rest[9..]);
        let taken = 9 + chunk.len();
        if let Some(sketch) = s.push(epoch, offset, total, chunk) {
            assert_eq!(sketch.len(), total as usize);
            assert!(sketch.len() <= MAX_SKETCH);
        }
        if let Some((_, have, want)) = s.incomplete() {
            assert!(have < want && want <= MAX_SKETCH);
        }
        rest = &rest[taken..];
    }
});
