//! Properties of the `theta` wire format: encode → decode round trips for any key
//! set and after set operations (into the same `K`, a larger one holding the same
//! sketch, a smaller one down-sampling it); corrupted bytes give an error or a valid
//! sketch, never a panic and never a modified target on error; and every rule of
//! the payload (`docs/format.md`) is refused with its error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::wire::{Encoder, Header, SketchKind};
use loxo_core::{DecodeError, EncodeError, Seed};
use loxo_tests::wire::resign;
use loxo_theta::{ThetaSketch, THETA_MAX};
use proptest::prelude::*;

fn sketch<const K: usize>(seed: Seed, keys: &[u64]) -> ThetaSketch<K> {
    let mut s = ThetaSketch::<K>::new(seed);
    for k in keys {
        s.insert(&k.to_le_bytes());
    }
    s
}

fn encode<const K: usize>(s: &ThetaSketch<K>) -> Vec<u8> {
    let mut buf = vec![0u8; s.encoded_len()];
    let n = s.encode_into(&mut buf).unwrap();
    assert_eq!(n, buf.len());
    buf
}

fn sorted<const K: usize>(s: &ThetaSketch<K>) -> Vec<u64> {
    let mut v: Vec<u64> = s.values().collect();
    v.sort_unstable();
    v
}

/// A `theta` frame with the given fields, as an encoder that follows none of the
/// rules would write it.
fn craft(seed: Seed, params: [u32; 4], flags: u8, theta: u64, n: u32, values: &[u64]) -> Vec<u8> {
    let mut h = Header::new(
        SketchKind::Theta,
        seed.fingerprint(),
        params,
        (12 + 8 * values.len()) as u32,
    );
    h.flags = flags;
    let mut buf = vec![0u8; 36 + 12 + 8 * values.len() + 4];
    let mut enc = Encoder::new(&mut buf, &h).unwrap();
    enc.put_u64(theta);
    enc.put_u32(n);
    for v in values {
        enc.put_u64(*v);
    }
    let len = enc.finish();
    assert_eq!(len, buf.len());
    buf
}

/// Checks what a successful decode must give: a sketch whose own encoding decodes
/// back to it.
fn valid<const K: usize>(s: &ThetaSketch<K>) {
    assert!(s.retained() < ThetaSketch::<K>::REBUILD_AT);
    assert!(sorted(s).iter().all(|&v| v != 0 && v < s.theta_long()));
    let again = ThetaSketch::<K>::decode(&encode(s), s.seed()).unwrap();
    assert!(again == *s);
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(128, 29) })]

    #[test]
    fn round_trip(k0 in any::<u64>(), k1 in any::<u64>(), keys in prop::collection::vec(any::<u64>(), 0..1500), op in 0u8..4) {
        let seed = Seed::new(k0, k1);
        let mut s = sketch::<128>(seed, &keys);
        let half = sketch::<64>(seed, &keys[..keys.len() / 2]);
        match op {
            1 => s.merge(&half).unwrap(),
            2 => s.intersect(&half).unwrap(),
            3 => s.subtract(&half).unwrap(),
            _ => {}
        }
        let bytes = encode(&s);
        let back = ThetaSketch::<128>::decode(&bytes, seed).unwrap();
        prop_assert!(back == s);
        prop_assert_eq!(back.estimate().to_bits(), s.estimate().to_bits());
        prop_assert_eq!(encode(&back), bytes.clone());
        let mut into = sketch::<128>(seed, &[1, 2, 3]);
        into.decode_into(&bytes).unwrap();
        prop_assert!(into == s);

        // A larger K holds the very same sketch.
        let big = ThetaSketch::<1024>::decode(&bytes, seed).unwrap();
        prop_assert_eq!(sorted(&big), sorted(&s));
        prop_assert_eq!((big.theta_long(), big.is_empty()), (s.theta_long(), s.is_empty()));
        // A smaller one down-samples it: the smallest values, at a θ no larger.
        let small = ThetaSketch::<32>::decode(&bytes, seed).unwrap();
        valid(&small);
        prop_assert!(small.theta_long() <= s.theta_long());
        let below: Vec<u64> = sorted(&s).into_iter().filter(|&v| v < small.theta_long()).collect();
        prop_assert_eq!(sorted(&small), below);
        prop_assert_eq!(small.is_empty(), s.is_empty());

        // Without the seed: the frame's fingerprint comes back, the sketch is the same
        // values under the placeholder seed.
        let mut any = ThetaSketch::<128>::new(Seed::new(0, 0));
        prop_assert_eq!(any.decode_into_any_seed(&bytes), Ok(seed.fingerprint()));
        prop_assert_eq!(sorted(&any), sorted(&s));
    }

    #[test]
    fn corruption_gives_an_error_or_a_valid_sketch(
        keys in prop::collection::vec(any::<u64>(), 0..600),
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let seed = Seed::new(9, 9);
        let bytes = encode(&sketch::<128>(seed, &keys));
        let mut target = sketch::<128>(seed, &[7, 8, 9]);
        let before = target.clone();

        let mut bad = bytes.clone();
        for (i, x) in &flips {
            let i = i.index(bad.len());
            bad[i] ^= x;
        }
        // As they are the CRC catches the flips; re-signed they reach the payload checks.
        prop_assert!(target.decode_into(&bad).is_err());
        prop_assert!(target == before);
        resign(&mut bad);
        for b in [&bad[..], &bad[..cut.index(bad.len())]] {
            match target.decode_into(b) {
                Ok(()) => valid(&target),
                Err(_) => prop_assert!(target == before),
            }
            target = before.clone();
            if let Ok(s) = ThetaSketch::<32>::decode(b, seed) {
                valid(&s);
            }
        }
    }
}

#[test]
fn encode_refuses_a_short_buffer() {
    let s = sketch::<64>(Seed::new(1, 1), &[1, 2, 3]);
    let mut buf = vec![0u8; s.encoded_len() - 1];
    assert_eq!(
        s.encode_into(&mut buf),
        Err(EncodeError::BufferTooSmall {
            needed: 36 + 12 + 24 + 4
        })
    );
}

#[test]
fn every_payload_rule_is_refused() {
    let seed = Seed::new(3, 4);
    let p = [64, 63, 0, 0];
    let t = THETA_MAX / 2;
    let dec = |b: &[u8]| ThetaSketch::<64>::decode(b, seed);
    // The crafted frame of a valid sketch decodes.
    assert!(dec(&craft(seed, p, 0, t, 2, &[5, 9])).is_ok());
    assert!(dec(&craft(seed, p, 1, t, 0, &[])).unwrap().is_empty());
    // Values unordered, repeated, zero, at or above θ.
    for values in [[9, 5], [5, 5], [0, 5], [5, t], [5, t + 1]] {
        assert_eq!(
            dec(&craft(seed, p, 0, t, 2, &values)),
            Err(DecodeError::InvalidValue),
            "{values:?}"
        );
    }
    // θ = 0 or above the scale; an empty sketch with values; unknown flags.
    assert_eq!(
        dec(&craft(seed, p, 0, 0, 0, &[])),
        Err(DecodeError::InvalidValue)
    );
    assert_eq!(
        dec(&craft(seed, p, 0, THETA_MAX + 1, 0, &[])),
        Err(DecodeError::InvalidValue)
    );
    assert_eq!(
        dec(&craft(seed, p, 1, t, 1, &[5])),
        Err(DecodeError::InvalidValue)
    );
    assert_eq!(
        dec(&craft(seed, p, 2, t, 1, &[5])),
        Err(DecodeError::InvalidValue)
    );
    // More values than a sketch of K = 64 retains (it rebuilds at 60): 59 pass, 60 not.
    let many: Vec<u64> = (1..=60).collect();
    assert!(dec(&craft(seed, p, 0, t, 59, &many[..59])).is_ok());
    assert_eq!(
        dec(&craft(seed, p, 0, t, 60, &many)),
        Err(DecodeError::InvalidValue)
    );
    // A count that disagrees with the payload's length.
    assert_eq!(
        dec(&craft(seed, p, 0, t, 3, &[5, 9])),
        Err(DecodeError::Truncated)
    );
    assert_eq!(
        dec(&craft(seed, p, 0, t, 1, &[5, 9])),
        Err(DecodeError::TrailingBytes)
    );
    // K not a power of two in 32..=2^26, another value width, other parameters.
    for k in [0, 16, 48, 1 << 27] {
        assert_eq!(
            dec(&craft(seed, [k, 63, 0, 0], 0, t, 0, &[])),
            Err(DecodeError::ParameterMismatch {
                expected: 64,
                found: k
            })
        );
    }
    assert_eq!(
        dec(&craft(seed, [64, 64, 0, 0], 0, t, 0, &[])),
        Err(DecodeError::ParameterMismatch {
            expected: 63,
            found: 64
        })
    );
    assert_eq!(
        dec(&craft(seed, [64, 63, 0, 1], 0, t, 0, &[])),
        Err(DecodeError::ParameterMismatch {
            expected: 0,
            found: 1
        })
    );
    // Another seed, another kind.
    let other = Seed::new(3, 5);
    assert_eq!(
        ThetaSketch::<64>::decode(&craft(seed, p, 0, t, 0, &[]), other),
        Err(DecodeError::SeedMismatch {
            expected: other.fingerprint(),
            found: seed.fingerprint()
        })
    );
    let mut hll = craft(seed, p, 0, t, 0, &[]);
    hll[6] = SketchKind::Hll as u8;
    resign(&mut hll);
    assert_eq!(
        dec(&hll),
        Err(DecodeError::WrongKind {
            expected: SketchKind::Theta as u8,
            found: SketchKind::Hll as u8
        })
    );
}
