//! Any bytes into `Hll::decode_into` (seed-checked and any-seed) at two precisions,
//! as they are and re-signed (length field and CRC recomputed, so mutations reach
//! the payload checks): never a panic; a failed decode leaves the target unchanged; an accepted frame
//! re-encodes to a frame that decodes to the same sketch. An `HllSparse` target
//! accepts the same frames, keeps list frames as lists and holds the same registers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::Seed;
use loxo_hll::{Hll, HllSparse, Precision, SupportedPrecision};

/// The seed the golden files and the corpus were made with.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0068_6c6c);

fn check<const P: u8>(data: &[u8])
where
    Precision<P>: SupportedPrecision,
{
    let mut target = Hll::<P>::new(SEED);
    for i in 0..64u32 {
        target.insert(&i.to_le_bytes());
    }
    let before = target.clone();
    match target.decode_into(data) {
        Ok(()) => {
            let mut buf = vec![0u8; target.encoded_len()];
            let n = target.encode_into(&mut buf).expect("encoded_len fits");
            let mut back = Hll::<P>::new(SEED);
            back.decode_into(&buf[..n]).expect("own encoding decodes");
            assert!(back == target);
        }
        Err(_) => assert!(target == before),
    }
    let mut any = Hll::<P>::new(Seed::new(1, 2));
    let _ = any.decode_into_any_seed(data);

    // A list-mode target keeps list frames as lists: the same registers as the
    // dense decode, its own encoding decodes back to it.
    let mut sparse = HllSparse::<P>::new(SEED);
    sparse.insert(b"sparse");
    let before = sparse.clone();
    match sparse.decode_into(data) {
        Ok(()) => {
            let mut dense = Hll::<P>::new(SEED);
            dense.decode_into(data).expect("a dense target accepts it too");
            assert!(sparse == dense);
            let mut buf = vec![0u8; sparse.encoded_len()];
            let n = sparse.encode_into(&mut buf).expect("encoded_len fits");
            let mut back = HllSparse::<P>::new(SEED);
            back.decode_into(&buf[..n]).expect("own encoding decodes");
            assert!(back == sparse && back.is_sparse() == sparse.is_sparse());
            let _ = sparse.estimate();
        }
        Err(_) => assert!(sparse == before && sparse.is_sparse()),
    }
}

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        check::<10>(data);
        check::<14>(data);
    }
});
