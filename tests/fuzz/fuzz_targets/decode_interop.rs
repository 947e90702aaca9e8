//! Any bytes into the Redis `HYLL`, DataSketches HLL and DataSketches compact theta
//! decoders: never a panic, and a failed decode leaves the target unchanged; a theta
//! image that parses holds only values below its θ and re-encodes to an image that
//! parses again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::Seed;
use loxo_interop::datasketches::DataSketchesHll;
use loxo_interop::redis::RedisHll;
use loxo_interop::theta::{self, CompactThetaImage};
use loxo_theta::ThetaSketch;

fuzz_target!(|data: &[u8]| {
    let mut redis = RedisHll::new();
    redis.insert(b"resident");
    let before = redis.clone();
    if redis.decode_into(data).is_err() {
        assert!(redis == before);
    }

    let mut ds = DataSketchesHll::<12>::new();
    ds.insert(b"resident");
    let before = ds.clone();
    if ds.decode_into(data).is_err() {
        assert!(ds == before);
    }
    let mut ds4 = DataSketchesHll::<4>::new();
    let _ = ds4.decode_into(data);

    if let Ok(view) = CompactThetaImage::parse(data) {
        assert!(view.values().all(|v| v != 0 && v < view.theta_long()));
        // The image's own seed hash is 9001's for DataSketches' images; any seed
        // either passes the check or is refused with SeedMismatch.
        for seed in [theta::datasketches_theta_seed(9001), Seed::new(1, 2)] {
            if let Ok(s) = view.to_sketch::<64>(seed) {
                let mut buf = [0u8; 24 + 8 * 64];
                let n = theta::encode_into(&s, &mut buf);
                assert!(n.is_ok_and(|n| CompactThetaImage::parse(&buf[..n]).is_ok()));
            }
        }
    }
});
