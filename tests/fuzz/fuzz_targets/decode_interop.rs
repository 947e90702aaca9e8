//! Any bytes into the Redis `HYLL` and DataSketches HLL decoders: never a panic, and a
//! failed decode leaves the target unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_interop::datasketches::DataSketchesHll;
use loxo_interop::redis::RedisHll;

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
});
