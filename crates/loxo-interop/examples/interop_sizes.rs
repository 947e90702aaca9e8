//! Prints the serialized size of each interop format, and the estimates, for
//! sketches of `n` distinct keys: `cargo run --release -p loxo-interop --example interop_sizes`.
//!
//! The HLL_4 size depends on how many registers sit 15 or more above the minimum
//! (the aux table), so it is measured, not computed.

use loxo_interop::datasketches::{DataSketchesHll, TargetType};
use loxo_interop::redis::{RedisHll, DENSE_LEN};

fn main() {
    println!("| n | Redis dense | Redis count | DS HLL_8 | DS HLL_6 | DS HLL_4 | DS estimate (Ertl) | DS HIP |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut redis = Box::new(RedisHll::new());
    let mut ds = Box::new(DataSketchesHll::<14>::new());
    let mut inserted = 0u64;
    for n in [1_000u64, 10_000, 100_000, 1_000_000, 10_000_000] {
        while inserted < n {
            let key = inserted.to_le_bytes();
            redis.insert(&key);
            ds.insert(&key);
            inserted += 1;
        }
        println!(
            "| {n} | {DENSE_LEN} | {} | {} | {} | {} | {:.0} | {:.0} |",
            redis.count(),
            ds.encoded_len(TargetType::Hll8),
            ds.encoded_len(TargetType::Hll6),
            ds.encoded_len(TargetType::Hll4),
            ds.estimate(),
            ds.as_hll().estimate_martingale().unwrap_or(f64::NAN),
        );
    }
}
