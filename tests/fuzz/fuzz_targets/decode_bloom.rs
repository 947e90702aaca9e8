//! Any bytes into the five Bloom-family decoders, as they are and re-signed (length
//! field and CRC recomputed, so mutations get past the checksum to the payload and
//! parameter checks): never a panic, a failed decode leaves the target unchanged,
//! an accepted frame re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_bloom::{BlockedBloom, Bloom, CountingBloom, Cuckoo, RegisterBloom};
use loxo_core::Seed;

/// The seed of the golden files that seed the corpus.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0062_6c6f_6f6d);

macro_rules! check {
    ($data:expr, $t:ty, $fill:expr) => {{
        let mut f = <$t>::new(SEED);
        $fill(&mut f);
        let before = f.clone();
        match f.decode_into($data) {
            Ok(()) => {
                let mut buf = vec![0u8; f.encoded_len()];
                let n = f.encode_into(&mut buf).expect("fits");
                assert!(loxo_fuzz::same_frame(&buf[..n], $data));
            }
            Err(_) => assert!(f == before),
        }
    }};
}

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        check_all(data);
    }
});

fn check_all(data: &[u8]) {
    check!(data, Bloom<16, 4>, |f: &mut Bloom<16, 4>| f.insert(b"x"));
    check!(data, BlockedBloom<2, 5>, |f: &mut BlockedBloom<2, 5>| f.insert(b"x"));
    check!(data, RegisterBloom<8, 5>, |f: &mut RegisterBloom<8, 5>| f.insert(b"x"));
    check!(data, CountingBloom<32, 3>, |f: &mut CountingBloom<32, 3>| f.insert(b"x"));
    check!(data, Cuckoo<16, u16>, |f: &mut Cuckoo<16, u16>| {
        let _ = f.insert(b"x");
    });
}
