//! Properties of the interop codecs: every register array survives an encode /
//! decode round trip in every format, and no input bytes make a decoder panic or
//! half-overwrite its target. Seeded (proptest's default deterministic runner
//! configuration plus a fixed case count).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_interop::datasketches::{DataSketchesHll, TargetType};
use loxo_interop::redis::{RedisHll, DENSE_LEN, MAX_RANK};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(
            std::env::var("LOXO_PROPTEST_SEED").map_or(0x10c5_0001, |s| {
                s.trim().parse().expect("LOXO_PROPTEST_SEED: a decimal u64")
            }),
        ),
        ..ProptestConfig::default()
    }
}

/// A sparse register assignment: (index, value) pairs.
fn updates(max_index: usize, max_value: u8) -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((0..max_index, 1..=max_value), 0..600)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn redis_dense_round_trip(ups in updates(16_384, MAX_RANK)) {
        // Arbitrary registers: write them into a dense string (register i = 6 bits
        // at bit 6·i), decode, re-encode: the same bytes.
        let mut buf = vec![0u8; DENSE_LEN];
        RedisHll::new().encode_dense_into(&mut buf).unwrap();
        for &(i, r) in &ups {
            let bit = i * 6;
            let w = u16::from(r) << (bit & 7);
            let byte = 16 + (bit >> 3);
            let old = u16::from(buf[byte]) | u16::from(buf.get(byte + 1).copied().unwrap_or(0)) << 8;
            let cur = ((old >> (bit & 7)) & 0x3f) as u8;
            if r > cur {
                let cleared = old & !(0x3f << (bit & 7));
                let new = cleared | w;
                buf[byte] = new as u8;
                if byte + 1 < DENSE_LEN {
                    buf[byte + 1] = (new >> 8) as u8;
                }
            }
        }
        let h = RedisHll::decode(&buf).unwrap();
        let mut again = vec![0u8; DENSE_LEN];
        h.encode_dense_into(&mut again).unwrap();
        prop_assert_eq!(&buf, &again);
        for &(i, r) in &ups {
            prop_assert!(h.register(i) >= r);
            prop_assert!(h.register(i) > 0);
        }
    }

    #[test]
    fn redis_decode_never_panics(tail in prop::collection::vec(any::<u8>(), 0..200), enc in 0u8..3) {
        let mut bytes = b"HYLL".to_vec();
        bytes.push(enc);
        bytes.extend_from_slice(&tail);
        let mut target = RedisHll::new();
        target.insert(b"keep");
        let before = target.clone();
        if target.decode_into(&bytes).is_err() {
            prop_assert_eq!(target, before);
        }
    }

    #[test]
    fn datasketches_round_trip_every_type(ups in updates(1024, 55)) {
        let mut s = DataSketchesHll::<10>::new();
        for &(i, r) in &ups {
            // Arbitrary (slot, value): a one-coupon LIST image sets exactly that.
            let coupon = u32::from(r) << 26 | i as u32;
            let mut img = vec![2u8, 1, 7, 10, 3, 8, 1, 0];
            img.extend_from_slice(&coupon.to_le_bytes());
            let one = DataSketchesHll::<10>::decode(&img).unwrap();
            s.merge(&one);
        }
        for t in [TargetType::Hll4, TargetType::Hll6, TargetType::Hll8] {
            let mut buf = vec![0u8; s.encoded_len(t)];
            let n = s.encode_into(t, &mut buf).unwrap();
            let back = DataSketchesHll::<10>::decode(&buf[..n]).unwrap();
            prop_assert!(back.as_hll().registers().eq(s.as_hll().registers()), "{:?}", t);
        }
    }

    #[test]
    fn datasketches_decode_never_panics(
        head in prop::collection::vec(any::<u8>(), 8),
        tail in prop::collection::vec(any::<u8>(), 0..700),
        mode in 0u8..12,
        pre in prop::sample::select(vec![2u8, 3, 10]),
    ) {
        let mut bytes = head;
        bytes[0] = pre;
        bytes[1] = 1;
        bytes[2] = 7;
        bytes[3] = 8;
        bytes[7] = mode;
        bytes.extend_from_slice(&tail);
        let mut target = DataSketchesHll::<8>::new();
        target.insert(b"keep");
        let before = target.clone();
        if target.decode_into(&bytes).is_err() {
            prop_assert_eq!(target, before);
        }
    }
}
