//! Properties of the `hll` wire format: round trips for any key set, and corrupt or
//! truncated bytes always give an error, never a panic, never a modified sketch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{DecodeError, EncodeError, Seed};
use loxo_hll::{Hll, HllSparse};
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
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(256, 14) })]

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

    /// Payload bytes overwritten and the CRC re-signed, so that the decoder's own
    /// checks are all that stands between the bytes and the sketch, on dense and
    /// sparse frames with and without a martingale: an error leaves the target
    /// exactly as it was; a success yields a sketch whose histogram and estimates
    /// equal a recomputation from its registers, whose martingale (if any) is
    /// finite and at least the number of non-zero registers (every register change
    /// adds at least 1 to it), and that round-trips.
    #[test]
    fn resigned_payload_edits_are_rejected_or_decode_to_a_valid_sketch(
        keys in prop::collection::vec(any::<u64>(), 0..400),
        merged in any::<bool>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let seed = Seed::new(9, 9);
        let mut h = sketch(seed, &keys);
        if merged {
            h.merge(&sketch(seed, &[1, 2, 3])).unwrap();
        }
        let mut bytes = encode(&h);
        let end = bytes.len() - 4;
        for (i, v) in &edits {
            let at = 36 + i.index(end - 36);
            bytes[at] = *v;
        }
        resign(&mut bytes);
        let mut target = sketch(seed, &(0..100).collect::<Vec<u64>>());
        let before = target.clone();
        let before_hip = target.estimate_martingale();
        if target.decode_into(&bytes).is_ok() {
            let mut fresh = Hll::<8>::new(seed);
            fresh.set_registers(target.registers()).unwrap();
            prop_assert_eq!(&fresh, &target);
            prop_assert_eq!(fresh.histogram(), target.histogram());
            prop_assert_eq!(fresh.estimate().to_bits(), target.estimate().to_bits());
            if let Some(hip) = target.estimate_martingale() {
                let non_zero = target.registers().filter(|&r| r != 0).count();
                prop_assert!(hip.is_finite() && hip >= non_zero as f64, "martingale {} with {} registers hit", hip, non_zero);
            }
            let again = encode(&target);
            let mut back = Hll::<8>::new(seed);
            back.decode_into(&again).unwrap();
            prop_assert_eq!(&back, &target);
            prop_assert_eq!(back.estimate_martingale().map(f64::to_bits), target.estimate_martingale().map(f64::to_bits));
        } else {
            prop_assert_eq!(&target, &before);
            prop_assert_eq!(target.estimate_martingale(), before_hip);
        }
    }

    /// List frames (`HllSparse` in list mode, flag bit 2) with payload bytes and
    /// possibly the flags overwritten and the CRC re-signed: an `HllSparse` target
    /// and an `Hll` target either both refuse (each unchanged, the list target
    /// still a list) or both accept and hold the same registers; an accepted list
    /// frame stays a list within the capacity, and the target's own encoding
    /// decodes back to it in the same mode.
    #[test]
    fn resigned_list_edits_are_rejected_or_decode_to_the_same_registers(
        n in 0usize..36,
        merged in any::<bool>(),
        flags in prop::option::of(any::<u8>()),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let seed = Seed::new(9, 9);
        let mut s = HllSparse::<8>::new(seed);
        for k in 0..n as u64 {
            s.insert(&k.to_le_bytes());
        }
        if merged {
            s.merge(&HllSparse::new(seed)).unwrap();
        }
        prop_assert!(s.is_sparse());
        let mut bytes = vec![0u8; s.encoded_len()];
        s.encode_into(&mut bytes).unwrap();
        if let Some(f) = flags {
            bytes[7] = f;
        }
        let end = bytes.len() - 4;
        for (i, v) in &edits {
            let at = 36 + i.index(end - 36);
            bytes[at] = *v;
        }
        resign(&mut bytes);
        let mut list = HllSparse::<8>::new(seed);
        list.insert(b"list");
        let list_before = list.clone();
        let mut dense = sketch(seed, &[7, 8, 9]);
        let dense_before = dense.clone();
        match (list.decode_into(&bytes), dense.decode_into(&bytes)) {
            (Ok(()), Ok(())) => {
                prop_assert!(list == dense);
                prop_assert_eq!(list.estimate_martingale(), dense.estimate_martingale());
                if list.is_sparse() {
                    prop_assert!(list.list_len() <= HllSparse::<8>::LIST_CAPACITY);
                }
                let mut again = vec![0u8; list.encoded_len()];
                list.encode_into(&mut again).unwrap();
                let mut back = HllSparse::<8>::new(seed);
                back.decode_into(&again).unwrap();
                prop_assert!(back == list && back.is_sparse() == list.is_sparse());
                prop_assert_eq!(back.estimate().to_bits(), list.estimate().to_bits());
            }
            (Err(a), Err(b)) => {
                prop_assert_eq!(a, b);
                prop_assert!(list == list_before && list.is_sparse() && list.list_len() == 1);
                prop_assert_eq!(&dense, &dense_before);
                prop_assert!(dense.estimate_martingale().is_some());
            }
            (a, b) => prop_assert!(false, "HllSparse {:?}, Hll {:?}", a, b),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut t = Hll::<8>::new(Seed::new(1, 1));
        let _ = t.decode_into(&bytes);
        let _ = t.decode_into_any_seed(&bytes);
        let mut s = HllSparse::<8>::new(Seed::new(1, 1));
        let _ = s.decode_into(&bytes);
        let _ = s.decode_into_any_seed(&bytes);
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
    assert!(matches!(
        target.decode_into(&b),
        Err(DecodeError::WrongKind { .. })
    ));

    assert!(target.is_empty(), "no failed decode wrote anything");
}

/// The payload at `36..`, replaced by `payload` (length field updated), signed.
fn with_payload(frame: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = frame[..36].to_vec();
    out[32..36].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&[0; 4]);
    resign(&mut out);
    out
}

/// A 3-byte sparse entry `index << 6 | rank`.
fn entry(index: u32, rank: u8) -> [u8; 3] {
    let v = index << 6 | u32::from(rank);
    [v as u8, (v >> 8) as u8, (v >> 16) as u8]
}

/// Decodes `b` into a copy of `before`: the decoded sketch, or the error with the
/// copy checked unchanged (registers and martingale).
fn decoded(before: &Hll<8>, what: &str, b: &[u8]) -> Result<Hll<8>, DecodeError> {
    let mut t = before.clone();
    match t.decode_into(b) {
        Ok(()) => Ok(t),
        Err(e) => {
            assert_eq!(&t, before, "{what}: a failed decode changed the target");
            assert_eq!(t.estimate_martingale(), before.estimate_martingale());
            Err(e)
        }
    }
}

const SEED3: Seed = Seed::new(3, 3);

/// A dense frame with a martingale (300 keys in 256 registers), its sketch, and a
/// non-empty decode target.
fn dense_frame() -> (Vec<u8>, Hll<8>, Hll<8>) {
    let h = sketch(SEED3, &(0..300).collect::<Vec<u64>>());
    let dense = encode(&h);
    assert_eq!(dense[7], 0b10, "dense + martingale flags");
    (dense, h, sketch(SEED3, &[7, 8, 9]))
}

/// `hip` then `body`: a payload with a martingale.
fn with_hip(hip: f64, body: &[u8]) -> Vec<u8> {
    [&hip.to_le_bytes()[..], body].concat()
}

/// The other rejection reasons of the `hll` decoder, each behind a valid CRC and
/// next to the nearest accepted frame (so that the check, not something else, is
/// what refuses it): envelope and dense payload.
#[test]
fn envelope_and_dense_rejections_behind_a_valid_crc() {
    use DecodeError::{InvalidValue, TrailingBytes, Truncated};
    let (dense, h, before) = dense_frame();
    let dec = |what: &str, b: &[u8]| decoded(&before, what, b).map(drop);
    let hip = h.estimate_martingale().unwrap();
    let regs = &dense[36 + 8..dense.len() - 4];

    // Each parameter ([P, 6, 0, 0]), the seed, an unknown flag bit.
    for (at, v) in [(16, 9u32), (16, 7), (20, 5), (20, 8), (24, 1), (28, 1)] {
        let mut b = dense.clone();
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        resign(&mut b);
        let got = dec("param", &b);
        assert!(
            matches!(got, Err(DecodeError::ParameterMismatch { .. })),
            "offset {at} = {v}"
        );
    }
    let mut b = dense.clone();
    b[8] ^= 1;
    resign(&mut b);
    assert!(matches!(
        dec("seed", &b),
        Err(DecodeError::SeedMismatch { .. })
    ));
    let fingerprint = u64::from_le_bytes(b[8..16].try_into().unwrap());
    let mut any = Hll::<8>::new(Seed::new(1, 1));
    assert_eq!(any.decode_into_any_seed(&b), Ok(fingerprint));
    let mut b = dense.clone();
    b[7] |= 0b100;
    resign(&mut b);
    assert_eq!(dec("flag bit 2", &b), Err(InvalidValue));

    // The dense payload's length, a register above 64 − P + 1 = 57.
    assert_eq!(dec("as encoded", &dense), Ok(()));
    let short = with_payload(&dense, &with_hip(hip, &regs[..191]));
    assert_eq!(dec("dense short", &short), Err(Truncated));
    let long = with_payload(&dense, &with_hip(hip, &[regs, &[0]].concat()));
    assert_eq!(dec("dense long", &long), Err(TrailingBytes));
    let mut r = regs.to_vec();
    r[0] = (r[0] & 0xc0) | 0x39; // register 0 = 57: the maximum, accepted
    let max = with_payload(&dense, &with_hip(hip, &r));
    assert_eq!(dec("register 57", &max), Ok(()));
    r[0] = (r[0] & 0xc0) | 0x3a;
    let above = with_payload(&dense, &with_hip(hip, &r));
    assert_eq!(dec("register 58", &above), Err(InvalidValue));
    // Without the martingale flag, the martingale's bytes are 8 bytes too many.
    let mut b = with_payload(&dense, &with_hip(hip, regs));
    b[7] = 0;
    resign(&mut b);
    assert_eq!(dec("martingale without its flag", &b), Err(TrailingBytes));
    let mut b = with_payload(&dense, regs);
    b[7] = 0;
    resign(&mut b);
    let plain = decoded(&before, "no martingale", &b).unwrap();
    assert_eq!(plain.estimate_martingale(), None);
    // The flag without the martingale: 8 register bytes are read as one, and the
    // registers come out 8 bytes short.
    let b = with_payload(&dense, regs);
    assert_eq!(dec("martingale flag, no martingale", &b), Err(Truncated));
}

/// The martingale must be finite, not negative, and at least the number of
/// non-zero registers: each register change adds `1/P(change) ≥ 1` to it.
#[test]
fn martingale_rejections_behind_a_valid_crc() {
    let (dense, h, before) = dense_frame();
    let regs = &dense[36 + 8..dense.len() - 4];
    let hit = h.registers().filter(|&r| r != 0).count() as f64;
    assert!(h.estimate_martingale().unwrap() >= hit);
    for (v, ok) in [
        (hit, true),
        (1e300, true),
        (0.0, false),
        (hit - 1.0, false),
        (f64::NAN, false),
        (f64::INFINITY, false),
        (-1.0, false),
    ] {
        let got = decoded(
            &before,
            "martingale",
            &with_payload(&dense, &with_hip(v, regs)),
        );
        match got {
            Ok(t) => {
                assert!(ok, "martingale {v} accepted with {hit} registers hit");
                assert_eq!(t.estimate_martingale(), Some(v));
            }
            Err(e) => {
                assert!(!ok, "martingale {v} refused: {e}");
                assert_eq!(e, DecodeError::InvalidValue);
            }
        }
    }
}

/// Sparse entries `index << 6 | rank`: strictly increasing indices below `m`,
/// ranks `1 ..= 57`, a count of at most `m` that matches the entries.
#[test]
fn sparse_rejections_behind_a_valid_crc() {
    use DecodeError::{InvalidValue, TrailingBytes, Truncated};
    let (dense, _, before) = dense_frame();
    let dec = |what: &str, b: &[u8]| decoded(&before, what, b).map(drop);
    let sparse = |hip: f64, n: u32, entries: &[[u8; 3]]| {
        let mut body = hip.to_le_bytes().to_vec();
        body.extend_from_slice(&n.to_le_bytes());
        for e in entries {
            body.extend_from_slice(e);
        }
        let mut b = with_payload(&dense, &body);
        b[7] = 0b11;
        resign(&mut b);
        b
    };
    let one = decoded(&before, "one entry", &sparse(1.0, 1, &[entry(255, 57)])).unwrap();
    assert_eq!(one.register(255), 57);
    assert_eq!(one.estimate_martingale(), Some(1.0));
    for (what, n, entries, err) in [
        ("index 256", 1, vec![entry(256, 1)], InvalidValue),
        ("rank 0", 1, vec![entry(3, 0)], InvalidValue),
        ("rank 58", 1, vec![entry(3, 58)], InvalidValue),
        (
            "index twice",
            2,
            vec![entry(4, 1), entry(4, 2)],
            InvalidValue,
        ),
        (
            "indices falling",
            2,
            vec![entry(5, 1), entry(4, 1)],
            InvalidValue,
        ),
        ("count > m", 257, vec![], InvalidValue),
        ("count > entries", 2, vec![entry(1, 1)], Truncated),
        (
            "count < entries",
            1,
            vec![entry(1, 1), entry(2, 1)],
            TrailingBytes,
        ),
    ] {
        assert_eq!(dec(what, &sparse(2.0, n, &entries)), Err(err), "{what}");
    }
    let two = sparse(1.0, 2, &[entry(1, 1), entry(2, 1)]);
    assert_eq!(
        dec("martingale 1, two registers hit", &two),
        Err(InvalidValue)
    );
    let mut b = sparse(0.0, 0, &[]);
    assert_eq!(dec("empty", &b), Ok(()));
    b.truncate(36 + 8 + 2);
    let cut = with_payload(&b, &b[36..]);
    assert_eq!(dec("count cut short", &cut), Err(Truncated));
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
