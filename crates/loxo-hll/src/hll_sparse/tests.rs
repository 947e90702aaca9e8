//! Unit tests of `hll_sparse`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;

use std::vec::Vec;

use super::*;
use crate::entry::le_u32;
use crate::test_util::digests;
use crate::wire::RegisterFrame;
use loxo_core::wire::{self, Encoder, Header, SketchKind};
use loxo_core::DecodeError;

const SEED: Seed = Seed::new(0x5eed, 0x5a5e);

#[test]
fn same_size_as_hll() {
    use core::mem::size_of;
    assert_eq!(size_of::<HllSparse<4>>(), size_of::<Hll<4>>());
    assert_eq!(size_of::<HllSparse<5>>(), size_of::<Hll<5>>());
    assert_eq!(size_of::<HllSparse<10>>(), size_of::<Hll<10>>());
    assert_eq!(size_of::<HllSparse<14>>(), size_of::<Hll<14>>());
    assert_eq!(size_of::<HllSparse<18>>(), size_of::<Hll<18>>());
    assert_eq!(HllSparse::<14>::new(SEED).memory_bytes(), 12_584);
    // 9m/64, above m/8 (the exactness target)
    assert_eq!(HllSparse::<10>::LIST_CAPACITY, 144);
    assert_eq!(HllSparse::<14>::LIST_CAPACITY, 2304);
    assert_eq!(HllSparse::<4>::LIST_CAPACITY, 2);
    assert_eq!(HllSparse::<5>::LIST_CAPACITY, 4);
}

/// An entry's register and rank are those `Hll::insert_hash` derives.
#[test]
fn entries_give_the_hll_register_at_every_precision() {
    fn check<const P: u8>(h: KeyHash)
    where
        Precision<P>: SupportedPrecision,
    {
        let mut hll = Hll::<P>::new(SEED);
        hll.insert_hash(h);
        let (i, rank) = HllSparse::<P>::entry_register(entry_of(h.get()));
        assert_eq!(i, (h.get() >> (64 - P)) as usize);
        assert_eq!(hll.register(i), rank, "{:x} at P = {P}", h.get());
    }
    let special = [0, 1, 1 << 38, 1 << 39, 1 << 40, u64::MAX, 1 << 63, 1 << 50];
    for h in digests(1)
        .take(20_000)
        .chain(special.map(KeyHash::from_u64))
    {
        check::<4>(h);
        check::<5>(h);
        check::<10>(h);
        check::<14>(h);
        check::<18>(h);
    }
}

/// Across the conversion, over many seeds: the list-mode registers, the
/// converted registers, histogram and estimate equal a dense `Hll`'s.
fn conversion_equals_dense<const P: u8>(seeds: u64, keys: usize)
where
    Precision<P>: SupportedPrecision,
{
    let cap = HllSparse::<P>::LIST_CAPACITY;
    for seed in 0..seeds {
        let mut sparse = HllSparse::<P>::new(SEED);
        let mut dense = Hll::<P>::new(SEED);
        let mut converted_at = None;
        for h in digests(seed << 32).take(keys) {
            let was = sparse.list_len();
            let changed = sparse.insert_hash(h);
            dense.insert_hash(h);
            if sparse.is_sparse() {
                assert_eq!(changed, sparse.list_len() == was + 1);
                assert!(sparse.list_len() <= cap);
            } else if converted_at.is_none() {
                converted_at = Some(was);
                // Converted exactly when the list was full.
                assert_eq!(was, cap, "P = {P}, seed {seed}");
                let d = sparse.dense().unwrap();
                assert_eq!(d, &dense);
                assert_eq!(d.histogram(), dense.histogram());
                assert_eq!(sparse.estimate().to_bits(), dense.estimate().to_bits());
            }
            if sparse.is_sparse() && sparse.list_len().is_multiple_of(7) {
                assert_eq!(sparse, dense);
                let mut copy = sparse.clone();
                copy.densify();
                assert!(!copy.is_sparse());
                assert_eq!(copy.dense().unwrap(), &dense);
                assert_eq!(copy.dense().unwrap().histogram(), dense.histogram());
                assert_eq!(copy.estimate().to_bits(), dense.estimate().to_bits());
                assert_eq!(copy.estimate_martingale(), sparse.estimate_martingale());
            }
        }
        assert!(converted_at.is_some(), "P = {P}: never converted");
        let d = sparse.into_dense();
        assert_eq!(d, dense);
        assert_eq!(d.histogram(), dense.histogram());
        assert_eq!(d.estimate().to_bits(), dense.estimate().to_bits());
    }
}

#[test]
fn conversion_equals_dense_over_many_seeds() {
    conversion_equals_dense::<4>(2000, 40);
    conversion_equals_dense::<5>(2000, 60);
    conversion_equals_dense::<7>(1000, 200);
    conversion_equals_dense::<10>(300, 400);
    conversion_equals_dense::<12>(40, 1500);
}

/// Entries crowded onto a few registers: long clusters that wrap around the
/// table's end, converted in place without losing one.
#[test]
fn conversion_survives_wrapping_clusters() {
    for top in [0u64, 1, 15, 63, 62, 60] {
        let mut sparse = HllSparse::<6>::new(SEED);
        let mut dense = Hll::<6>::new(SEED);
        // 64 − 6 bits below the index: vary dropped index bits and rank bits.
        for k in 0..40u64 {
            let h = KeyHash::from_u64(top << 58 | (k * 0x0123_4567) << 20 | 1 << (k % 19));
            sparse.insert_hash(h);
            dense.insert_hash(h);
            if sparse.is_sparse() {
                assert_eq!(sparse, dense, "top {top}, k {k}");
            }
        }
        let d = sparse.into_dense();
        assert_eq!(d, dense, "top {top}");
        assert_eq!(d.histogram(), dense.histogram());
    }
    // Every home slot, including the last (wrap) and the first.
    let mut sparse = HllSparse::<4>::new(SEED);
    let mut dense = Hll::<4>::new(SEED);
    for h in [15u64 << 60 | 1, 15 << 60 | 1 << 40, 5] {
        sparse.insert_hash(KeyHash::from_u64(h));
        dense.insert_hash(KeyHash::from_u64(h));
    }
    assert!(!sparse.is_sparse());
    assert_eq!(sparse.into_dense(), dense);
}

#[test]
fn duplicates_estimates_and_martingale() {
    let mut s = HllSparse::<10>::new(SEED);
    assert!(s.is_empty() && s.is_sparse());
    assert_eq!(s.estimate(), 0.0);
    assert_eq!(s.estimate_martingale(), Some(0.0));
    for h in digests(7).take(100) {
        assert!(s.insert_hash(h));
        assert!(!s.insert_hash(h));
    }
    assert!(!s.is_empty());
    assert_eq!(s.estimate().round(), 100.0);
    assert_eq!(s.estimate_martingale().map(f64::round), Some(100.0));
    let mut d = s.clone();
    let before = d.estimate_martingale().unwrap();
    assert!(!d.as_dense().is_empty());
    assert_eq!(d.estimate_martingale(), Some(before));
    d.insert(b"one more");
    assert!(d.estimate_martingale().unwrap() > before);
    d.clear();
    assert!(d.is_sparse() && d.is_empty());
    assert_eq!(d.estimate_martingale(), Some(0.0));
    let u = HllSparse::<10>::new(SEED).without_martingale();
    assert_eq!(u.estimate_martingale(), None);
    assert!(std::format!("{s:?}").starts_with("HllSparse { precision: 10"));
}

#[test]
fn merge_in_every_mode() {
    for n in [10usize, 60, 100, 140, 200, 1000] {
        let keys: Vec<KeyHash> = digests(n as u64).take(n).collect();
        let union = {
            let mut h = Hll::<10>::new(SEED);
            for &k in &keys {
                h.insert_hash(k);
            }
            h
        };
        // Part `part` of three, as a list-mode sketch converted or not.
        let build = |dense: bool, part: usize| {
            let mut s = HllSparse::<10>::new(SEED);
            for (i, &k) in keys.iter().enumerate() {
                if i % 3 == part {
                    s.insert_hash(k);
                }
            }
            if dense {
                s.densify();
            }
            s
        };
        for (da, db) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut a = build(da, 0);
            a.merge(&build(db, 1)).unwrap();
            a.merge(&build(da, 2)).unwrap();
            assert_eq!(a, union, "n = {n}, modes {da} {db}");
            assert_eq!(a.estimate_martingale(), None);
            if a.is_sparse() {
                // Every key's entry kept: the union's count.
                assert!(n <= HllSparse::<10>::LIST_CAPACITY as usize);
                assert_eq!(a.estimate().round(), n as f64);
            } else {
                let d = a.dense().unwrap();
                assert_eq!(d.histogram(), union.histogram());
                assert_eq!(a.estimate().to_bits(), union.estimate().to_bits());
            }
        }
        let mut a = build(false, 0);
        let mut third = Hll::<10>::new(SEED);
        for (i, &k) in keys.iter().enumerate() {
            if i % 3 != 0 {
                third.insert_hash(k);
            }
        }
        a.merge_hll(&third).unwrap();
        assert!(!a.is_sparse());
        assert_eq!(a, union);
    }
    let mut a = HllSparse::<10>::new(SEED);
    a.insert(b"x");
    let before = a.clone();
    let mut other = HllSparse::<10>::new(Seed::new(1, 1));
    other.insert(b"y");
    assert_eq!(a.merge(&other), Err(MergeError::SeedMismatch));
    assert_eq!(
        a.merge_hll(&Hll::new(Seed::new(1, 1))),
        Err(MergeError::SeedMismatch)
    );
    assert!(a.is_sparse());
    assert_eq!(a, before);
    assert!(a.estimate_martingale().is_some());
}

fn encode<const P: u8>(s: &HllSparse<P>) -> Vec<u8>
where
    Precision<P>: SupportedPrecision,
{
    let mut buf = std::vec![0u8; s.encoded_len()];
    let n = s.encode_into(&mut buf).unwrap();
    assert_eq!(n, buf.len());
    buf
}

#[test]
fn wire_round_trip_in_both_modes() {
    for n in [0usize, 1, 50, 144, 145, 3000] {
        let mut s = HllSparse::<10>::new(SEED);
        let mut dense = Hll::<10>::new(SEED);
        for h in digests(n as u64).take(n) {
            s.insert_hash(h);
            dense.insert_hash(h);
        }
        let bytes = encode(&s);
        let mut back = HllSparse::<10>::new(SEED);
        back.decode_into(&bytes).unwrap();
        assert_eq!(back.is_sparse(), s.is_sparse());
        assert_eq!(back, s);
        assert_eq!(back.list_len(), s.list_len());
        assert_eq!(back.estimate().to_bits(), s.estimate().to_bits());
        assert_eq!(back.estimate_martingale(), s.estimate_martingale());
        assert_eq!(encode(&back), bytes, "n = {n}: re-encoding differs");
        // A dense target holds the registers of the same keys.
        let mut h = Hll::<10>::new(SEED);
        h.decode_into(&bytes).unwrap();
        assert_eq!(h, dense);
        assert_eq!(h.histogram(), dense.histogram());
        assert_eq!(h.estimate_martingale(), s.estimate_martingale());
        if s.is_sparse() {
            assert_eq!(bytes.len(), 36 + 8 + 4 + 4 * n + 4);
            assert_eq!(bytes[7], 4 | 2);
        } else {
            // Dense mode: `Hll`'s frame (header, registers); only the
            // martingale value (from the list's count) and so the CRC differ.
            let mut buf = std::vec![0u8; dense.encoded_len()];
            dense.encode_into(&mut buf).unwrap();
            assert_eq!(bytes.len(), buf.len());
            assert_eq!(bytes[..36], buf[..36]);
            assert_eq!(bytes[44..bytes.len() - 4], buf[44..buf.len() - 4]);
        }
        // A list-mode target decodes a register frame into dense mode.
        let mut buf = std::vec![0u8; dense.encoded_len()];
        dense.encode_into(&mut buf).unwrap();
        let mut from_hll = HllSparse::<10>::new(SEED);
        from_hll.decode_into(&buf).unwrap();
        assert!(!from_hll.is_sparse());
        assert_eq!(from_hll, dense);
        assert_eq!(from_hll.estimate().to_bits(), dense.estimate().to_bits());
    }
    // After a merge: no martingale in the frame, none decoded.
    let mut a = HllSparse::<10>::new(SEED);
    a.insert(b"a");
    a.merge(&HllSparse::new(SEED)).unwrap();
    let bytes = encode(&a);
    assert_eq!(bytes[7], 4);
    let mut back = HllSparse::<10>::new(SEED);
    back.decode_into(&bytes).unwrap();
    assert_eq!(back.estimate_martingale(), None);
    assert_eq!(back, a);
    let mut other = HllSparse::<10>::new(Seed::new(3, 3));
    assert!(matches!(
        other.decode_into(&bytes),
        Err(DecodeError::SeedMismatch { .. })
    ));
    assert_eq!(other.decode_into_any_seed(&bytes), Ok(SEED.fingerprint()));
    assert_eq!(other.list_len(), 1);
}

/// Re-signs a frame after its payload was edited: a fresh envelope (length
/// field and CRC) around the same flags and payload.
fn resign(bytes: &[u8]) -> Vec<u8> {
    let payload = &bytes[36..bytes.len() - 4];
    let mut h = Header::new(
        SketchKind::Hll,
        SEED.fingerprint(),
        <Hll<8> as RegisterFrame>::PARAMS,
        payload.len() as u32,
    );
    h.flags = bytes[7];
    let mut out = std::vec![0u8; wire::frame_len(payload.len())];
    let mut enc = Encoder::new(&mut out, &h).unwrap();
    enc.put(payload);
    enc.finish();
    out
}

#[test]
fn bad_lists_are_refused_and_leave_the_target_unchanged() {
    let mut s = HllSparse::<8>::new(SEED);
    for h in digests(3).take(20) {
        s.insert_hash(h);
    }
    let good = encode(&s);
    // Payload: martingale f64 at 36, count at 44, entries from 48.
    let entry = |b: &[u8], k: usize| le_u32(&b[48 + 4 * k..52 + 4 * k]);
    let with_entry = |k: usize, e: u32| {
        let mut b = good.clone();
        b[48 + 4 * k..52 + 4 * k].copy_from_slice(&e.to_le_bytes());
        resign(&b)
    };
    let e0 = entry(&good, 0);
    let e1 = entry(&good, 1);
    let mut bad: Vec<(&str, Vec<u8>)> = std::vec![
        ("repeated", with_entry(1, e0)),
        ("unordered", with_entry(0, e1 + 1)),
        ("rank 0", with_entry(0, e0 & !63)),
        ("rank 41", with_entry(0, e0 & !63 | 0x29)),
        ("bit 31", with_entry(19, 1 << 31 | 1)),
        ("zero", with_entry(0, 0)),
    ];
    let mut b = good.clone();
    b[7] |= 1; // list and sparse flags together
    bad.push(("flags 0 and 2", resign(&b)));
    let mut b = good.clone();
    b[7] |= 8;
    bad.push(("unknown flag", resign(&b)));
    let mut b = good.clone();
    b[36..44].copy_from_slice(&19.5f64.to_le_bytes());
    bad.push(("martingale below the count", resign(&b)));
    let mut b = good.clone();
    b[36..44].copy_from_slice(&f64::NAN.to_le_bytes());
    bad.push(("martingale NaN", resign(&b)));
    // A list longer than the capacity (36 entries at P = 8).
    let cap = HllSparse::<8>::LIST_CAPACITY;
    let mut b = good[..48].to_vec();
    b[44..48].copy_from_slice(&(cap + 1).to_le_bytes());
    b[36..44].copy_from_slice(&1000.0f64.to_le_bytes());
    for k in 0..=cap {
        b.extend_from_slice(&((k + 1) << 6 | 1).to_le_bytes());
    }
    b.extend_from_slice(&[0; 4]);
    bad.push(("too long", resign(&b)));
    for (what, bytes) in &bad {
        let mut t = s.clone();
        assert_eq!(
            t.decode_into(bytes),
            Err(DecodeError::InvalidValue),
            "{what}"
        );
        assert!(t.is_sparse() && t.list_len() == 20 && t == s, "{what}");
        assert!(t.estimate_martingale().is_some());
        let mut h = Hll::<8>::new(SEED);
        h.insert(b"keep");
        let before = h.clone();
        assert_eq!(
            h.decode_into(bytes),
            Err(DecodeError::InvalidValue),
            "{what}"
        );
        assert_eq!(h, before);
        assert!(h.estimate_martingale().is_some());
    }
    // A count that does not match the payload.
    let mut b = good.clone();
    b[44..48].copy_from_slice(&21u32.to_le_bytes());
    let mut t = s.clone();
    assert_eq!(t.decode_into(&resign(&b)), Err(DecodeError::Truncated));
    assert_eq!(t, s);
    // The capacity itself is accepted.
    let mut b = good[..48].to_vec();
    b[44..48].copy_from_slice(&cap.to_le_bytes());
    b[36..44].copy_from_slice(&1000.0f64.to_le_bytes());
    for k in 0..cap {
        b.extend_from_slice(&((k + 1) << 6 | 1).to_le_bytes());
    }
    b.extend_from_slice(&[0; 4]);
    let mut t = s.clone();
    t.decode_into(&resign(&b)).unwrap();
    assert!(t.is_sparse());
    assert_eq!(t.list_len(), cap);
}
