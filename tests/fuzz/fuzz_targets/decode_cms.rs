//! Any bytes into the Count-Min family decoders (plain and conservative CMS,
//! Count-Sketch, Space-Saving, HeavyKeeper of flow keys), as they are and re-signed
//! (length field and CRC recomputed, so mutations reach the payload checks): never a
//! panic, a failed decode leaves the target unchanged, an accepted frame re-encodes
//! to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cms::{Cms, CmsCu, CountSketch, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use loxo_flow::FlowKey;

/// The seed of the golden files that seed the corpus.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0063_6d73);

macro_rules! check {
    ($data:expr, $f:expr, $enc:expr, $dec:expr) => {{
        let mut f = $f;
        let before = $enc(&f);
        match $dec(&mut f, $data) {
            Ok(()) => assert!(loxo_fuzz::same_frame(&$enc(&f), $data)),
            Err(_) => assert!($enc(&f) == before),
        }
    }};
}

fn enc_with(len: usize, e: impl FnOnce(&mut [u8]) -> usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let n = e(&mut buf);
    buf.truncate(n);
    buf
}

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        check_all(data);
    }
});

fn check_all(data: &[u8]) {
    let mut cms = Cms::<32, 3>::new(SEED);
    cms.add(b"x", 5);
    check!(data, cms, |f: &Cms<32, 3>| enc_with(f.encoded_len(), |b| f.encode_into(b).unwrap()),
        |f: &mut Cms<32, 3>, d| f.decode_into(d));
    check!(data, CmsCu::<32, 3, u16>::new(SEED),
        |f: &CmsCu<32, 3, u16>| enc_with(f.encoded_len(), |b| f.encode_into(b).unwrap()),
        |f: &mut CmsCu<32, 3, u16>, d| f.decode_into(d));
    check!(data, CountSketch::<16, 3>::new(SEED),
        |f: &CountSketch<16, 3>| enc_with(f.encoded_len(), |b| f.encode_into(b).unwrap()),
        |f: &mut CountSketch<16, 3>, d| f.decode_into(d));
    let mut ss = SpaceSaving::<u32, 8>::new();
    ss.update(&7, SEED.hash(&7u32.to_le_bytes()), 3);
    check!(data, ss,
        |f: &SpaceSaving<u32, 8>| enc_with(f.encoded_len(), |b| f.encode_into(&SEED, b).unwrap()),
        |f: &mut SpaceSaving<u32, 8>, d| f.decode_into(&SEED, d));
    check!(data, HeavyKeeper::<16, 2, 4, FlowKey>::new(3),
        |f: &HeavyKeeper<16, 2, 4, FlowKey>| enc_with(f.encoded_len(), |b| f.encode_into(&SEED, b).unwrap()),
        |f: &mut HeavyKeeper<16, 2, 4, FlowKey>, d| f.decode_into(&SEED, d));
}
