//! Golden files made by the real engines (see `tests/data/README.md`): each decodes
//! into exactly the registers loxo builds from the same keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_interop::datasketches::DataSketchesHll;
use loxo_interop::redis::RedisHll;

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn keys(n: u32) -> impl Iterator<Item = String> {
    (0..n).map(|i| format!("g{i}"))
}

#[test]
fn datasketches_images() {
    // (file, keys, DataSketches mode: 0 LIST, 1 SET, 2 HLL)
    for (file, n, mode) in [
        ("ds_lg8_list.bin", 3, 0),
        ("ds_lg8_set.bin", 15, 1),
        ("ds_lg8_set_updatable.bin", 15, 1),
        ("ds_lg8_hll4.bin", 5000, 2),
        ("ds_lg8_hll6.bin", 5000, 2),
        ("ds_lg8_hll8.bin", 5000, 2),
        ("ds_lg8_hll4_updatable.bin", 5000, 2),
    ] {
        let mut ours = DataSketchesHll::<8>::new();
        keys(n).for_each(|k| {
            ours.insert(k.as_bytes());
        });
        let bytes = data(file);
        assert_eq!(bytes[7] & 3, mode, "{file}");
        let theirs = DataSketchesHll::<8>::decode(&bytes).unwrap();
        assert!(
            theirs.as_hll().registers().eq(ours.as_hll().registers()),
            "{file}"
        );
    }
    let mut ours = DataSketchesHll::<10>::new();
    keys(20_000).for_each(|k| {
        ours.insert(k.as_bytes());
    });
    for file in ["ds_lg10_hll4_aux.bin", "ds_lg10_hll4_aux_updatable.bin"] {
        let bytes = data(file);
        assert_eq!(bytes[36], 1, "{file} exercises the aux table");
        let theirs = DataSketchesHll::<10>::decode(&bytes).unwrap();
        assert!(
            theirs.as_hll().registers().eq(ours.as_hll().registers()),
            "{file}"
        );
    }
}

#[test]
fn redis_strings() {
    for (file, n, count) in [
        ("redis_dense_g5000.bin", 5000, 4989),
        ("redis_sparse_g10.bin", 10, 10),
    ] {
        let mut ours = RedisHll::new();
        keys(n).for_each(|k| {
            ours.insert(k.as_bytes());
        });
        let bytes = data(file);
        let theirs = RedisHll::decode(&bytes).unwrap();
        assert!(
            theirs.as_hll().registers().eq(ours.as_hll().registers()),
            "{file}"
        );
        assert_eq!(theirs.count(), count, "{file}: PFCOUNT said {count}");
        assert_eq!(bytes[4], u8::from(n == 10), "{file}: encoding byte");
    }
}
