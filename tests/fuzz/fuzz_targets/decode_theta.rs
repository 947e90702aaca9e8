//! Any bytes into `ThetaSketch::decode` / `decode_into` / `decode_into_any_seed` at
//! three `K` (the golden files' 256, a smaller and a larger one), as they are and
//! re-signed (length field and CRC recomputed, so mutations reach the payload
//! checks): never a panic; a failed `decode_into` leaves the target unchanged; an
//! accepted frame is a valid sketch (fewer values than a rebuild keeps, each
//! non-zero and below θ) whose own encoding decodes back to it, and set operations
//! on it succeed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::Seed;
use loxo_theta::ThetaSketch;

/// The seed the golden files and the corpus were made with.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0074_6865_7461);

fn check<const K: usize>(data: &[u8]) {
    let mut target = ThetaSketch::<K>::new(SEED);
    for i in 0..64u32 {
        target.insert(&i.to_le_bytes());
    }
    let before = target.clone();
    match target.decode_into(data) {
        Ok(()) => {
            assert!(target.retained() < ThetaSketch::<K>::REBUILD_AT);
            assert!(target.values().all(|v| v != 0 && v < target.theta_long()));
            let mut buf = vec![0u8; target.encoded_len()];
            let n = target.encode_into(&mut buf).expect("encoded_len fits");
            let back = ThetaSketch::<K>::decode(&buf[..n], SEED).expect("own encoding decodes");
            assert!(back == target);
            let est = target.estimate();
            assert!(est.is_finite() && est >= 0.0);
            assert!(target.lower_bound(2) <= est && est <= target.upper_bound(2));
            let mut u = before.clone();
            u.merge(&target).expect("same seed");
            u.intersect(&target).expect("same seed");
            u.subtract(&target).expect("same seed");
        }
        Err(_) => assert!(target == before),
    }
    let mut any = ThetaSketch::<K>::new(Seed::new(1, 2));
    let _ = any.decode_into_any_seed(data);
}

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        check::<32>(data);
        check::<256>(data);
        check::<1024>(data);
    }
});
