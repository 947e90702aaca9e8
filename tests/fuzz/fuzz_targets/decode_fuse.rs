//! Any bytes, as they are and re-signed (length field and CRC recomputed, so
//! mutations get past the checksum to the parameter, geometry and length checks),
//! into the binary fuse filters' frame views: never a panic; an accepted frame's
//! lookups stay in bounds (a few keys queried) and it re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_bloom::{BinaryFuse16, BinaryFuse8};
use loxo_core::{KeyHash, Seed};

/// The seed of the golden files that seed the corpus.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        if let Ok(f) = BinaryFuse8::from_bytes(data, SEED) {
            for d in [0u64, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
                let _ = f.contains_hash(KeyHash::from_u64(d));
            }
            let _ = f.contains(b"10.0.0.1");
            let mut buf = vec![0u8; f.encoded_len()];
            let n = f.encode_into(&mut buf).expect("fits");
            assert!(loxo_fuzz::same_frame(&buf[..n], data));
        }
        if let Ok(f) = BinaryFuse16::from_bytes(data, SEED) {
            for d in [0u64, 1, u64::MAX, 0x9e37_79b9_7f4a_7c15] {
                let _ = f.contains_hash(KeyHash::from_u64(d));
            }
            let mut buf = vec![0u8; f.encoded_len()];
            let n = f.encode_into(&mut buf).expect("fits");
            assert!(loxo_fuzz::same_frame(&buf[..n], data));
        }
    }
});
