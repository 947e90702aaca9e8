//! Properties of the `hll` wire format: round trips for any key set, and corrupt or
//! truncated bytes always give an error, never a panic, never a modified sketch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{DecodeError, EncodeError, Seed};
use loxo_hll::Hll;
use proptest::prelude::*;

fn sketch(seed: Seed, keys: &[u64]) -> Hll<8> {
    let mut h = Hll::<8>::new(seed);
    for k in keys {
        h.insert(&k.to_le_bytes());
    }
    h
}

fn encode(h: &Hll<8>) -> Vec<u8> {
    let mut buf = vec![0u8; h.encoded_len()];
    let n = h.encode_into(&mut buf).unwrap();
    buf.truncate(n);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip(k0 in any::<u64>(), k1 in any::<u64>(), keys in prop::collection::vec(any::<u64>(), 0..600), merged in any::<bool>()) {
        let seed = Seed::new(k0, k1);
        let mut h = sketch(seed, &keys);
        if merged {
            h.merge(&sketch(seed, &keys[..keys.len() / 2])).unwrap();
        }
        let bytes = encode(&h);
        let mut back = Hll::<8>::new(seed);
        back.decode_into(&bytes).unwrap();
        prop_assert_eq!(&back, &h);
        prop_assert_eq!(back.estimate().to_bits(), h.estimate().to_bits());
        prop_assert_eq!(back.estimate_martingale().map(f64::to_bits), h.estimate_martingale().map(f64::to_bits));
        prop_assert_eq!(encode(&back), bytes);
    }

    #[test]
    fn corruption_is_an_error_and_leaves_the_target_alone(
        keys in prop::collection::vec(any::<u64>(), 0..400),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let seed = Seed::new(9, 9);
        let bytes = encode(&sketch(seed, &keys));
        let target_keys: Vec<u64> = (0..100).collect();
        let mut target = sketch(seed, &target_keys);
        let before = target.clone();

        // Bit flips: the CRC catches them (or, if a flip hits the CRC itself, still an error).
        let mut bad = bytes.clone();
        for (i, x) in &flips {
            let i = i.index(bad.len());
            bad[i] ^= x;
        }
        prop_assert!(target.decode_into(&bad).is_err());
        prop_assert_eq!(&target, &before);

        // Truncation anywhere.
        let n = cut.index(bytes.len());
        prop_assert!(target.decode_into(&bytes[..n]).is_err());
        prop_assert_eq!(&target, &before);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut t = Hll::<8>::new(Seed::new(1, 1));
        let _ = t.decode_into(&bytes);
        let _ = t.decode_into_any_seed(&bytes);
    }
}

/// Re-signs a frame whose payload was edited: the checks behind the CRC must hold too.
fn resign(frame: &mut [u8]) {
    let n = frame.len() - 4;
    let crc = crc32(&frame[..n]);
    frame[n..].copy_from_slice(&crc.to_le_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    // CRC-32/ISO-HDLC, bitwise (the reference the format names).
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn invalid_payloads_behind_a_valid_crc() {
    let seed = Seed::new(3, 3);
    let keys: Vec<u64> = (0..20).collect();
    let sparse = encode(&sketch(seed, &keys));
    assert_eq!(sparse[7], 0b11, "sparse + martingale flags");
    let mut target = Hll::<8>::new(seed);

    // Unknown flag bit.
    let mut b = sparse.clone();
    b[7] |= 0x80;
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::InvalidValue));

    // Negative martingale estimate.
    let mut b = sparse.clone();
    b[36 + 7] |= 0x80;
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::InvalidValue));

    // Rank above 64 − P + 1 = 57 in the first sparse entry (rank = low 6 bits).
    let mut b = sparse.clone();
    b[36 + 8 + 4] |= 63;
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::InvalidValue));

    // Entries out of order: swap the first two.
    let mut b = sparse.clone();
    let e = 36 + 8 + 4;
    let (first, second) = (b[e..e + 3].to_vec(), b[e + 3..e + 6].to_vec());
    b[e..e + 3].copy_from_slice(&second);
    b[e + 3..e + 6].copy_from_slice(&first);
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::InvalidValue));

    // Count larger than the entries present.
    let mut b = sparse.clone();
    b[36 + 8] = b[36 + 8].wrapping_add(1);
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::Truncated));

    // Another kind.
    let mut b = sparse.clone();
    b[6] = 6;
    resign(&mut b);
    assert_eq!(target.decode_into(&b), Err(DecodeError::WrongKind));

    assert!(target.is_empty(), "no failed decode wrote anything");
}

#[test]
fn small_buffer_is_an_error() {
    let h = sketch(Seed::new(1, 2), &[1, 2, 3]);
    let mut buf = [0u8; 10];
    assert_eq!(
        h.encode_into(&mut buf),
        Err(EncodeError::BufferTooSmall {
            needed: h.encoded_len()
        })
    );
    assert_eq!(buf, [0u8; 10]);
}
