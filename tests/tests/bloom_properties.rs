//! Properties of the loxo-bloom filters: no false negatives ever (all five; cuckoo
//! while no insert failed; counting across interleaved insert/remove), batched
//! lookups answering as `contains` does, union equals
//! the filter of the union bit for bit, seed checks, and wire round trips where
//! corrupt bytes are an error that leaves the target unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_bloom::{BlockedBloom, Bloom, CountingBloom, Cuckoo, RegisterBloom};
use loxo_core::{DecodeError, MergeError, Seed};
use proptest::prelude::*;

fn seed() -> impl Strategy<Value = Seed> {
    (any::<u64>(), any::<u64>()).prop_map(|(a, b)| Seed::new(a, b))
}

fn keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..300)
}

proptest! {
    #![proptest_config(loxo_tests::proptest_config(128, 0xb1))]

    #[test]
    fn no_false_negatives(s in seed(), ks in keys()) {
        let mut b = Bloom::<64, 5>::new(s);
        let mut bb = BlockedBloom::<4, 6>::new(s);
        let mut rb = RegisterBloom::<32, 5>::new(s);
        let mut cb = CountingBloom::<128, 5>::new(s);
        let mut cf = Cuckoo::<128, u16>::new(s);
        let mut distinct = std::collections::HashSet::new();
        for k in &ks {
            b.insert(k);
            bb.insert(k);
            rb.insert(k);
            cb.insert(k);
            // A cuckoo filter stores a copy per insert: insert each key once.
            if distinct.insert(k) {
                prop_assert!(cf.insert(k).is_ok(), "300 keys fit in 512 slots");
            }
        }
        for k in &ks {
            prop_assert!(b.contains(k));
            prop_assert!(b.insert_checked(k), "insert_checked reports a present key");
            prop_assert!(bb.contains(k));
            prop_assert!(rb.contains(k));
            prop_assert!(rb.clone().insert_checked(k));
            prop_assert!(cb.contains(k));
            prop_assert!(cf.contains(k));
        }
    }

    #[test]
    fn batched_lookups_agree_with_contains(
        s in seed(),
        present in prop::collection::vec(any::<u64>(), 0..200),
        queried in prop::collection::vec(any::<u64>(), 0..200),
    ) {
        let mut b = Bloom::<64, 5>::new(s);
        let mut bb = BlockedBloom::<4, 6>::new(s);
        let mut rb = RegisterBloom::<32, 5>::new(s);
        for k in &present {
            b.insert(&k.to_le_bytes());
            bb.insert(&k.to_le_bytes());
            rb.insert(&k.to_le_bytes());
        }
        let keys: Vec<[u8; 8]> = present.iter().chain(&queried).map(|k| k.to_le_bytes()).collect();
        let (batches, _) = keys.as_chunks::<16>();
        for (n, batch) in batches.iter().enumerate() {
            let hashes = batch.map(|k| s.hash(&k));
            let (found, found_blocked) = (b.contains_batch(batch), bb.contains_batch(batch));
            prop_assert_eq!(found, b.contains_hash_batch(&hashes));
            prop_assert_eq!(found_blocked, bb.contains_hash_batch(&hashes));
            let found_register = rb.contains_batch(batch);
            prop_assert_eq!(found_register, rb.contains_hash_batch(&hashes));
            for (i, k) in batch.iter().enumerate() {
                prop_assert_eq!(found[i], b.contains(k));
                prop_assert_eq!(found_blocked[i], bb.contains(k));
                prop_assert_eq!(found_register[i], rb.contains(k));
                if 16 * n + i < present.len() {
                    prop_assert!(
                        found[i] && found_blocked[i] && found_register[i],
                        "false negative in a batch"
                    );
                }
            }
        }
    }

    #[test]
    fn counting_and_cuckoo_survive_interleaved_removals(
        s in seed(),
        ops in prop::collection::vec((any::<bool>(), 0u16..200), 0..600),
    ) {
        let mut cb = CountingBloom::<64, 4>::new(s);
        let mut cf = Cuckoo::<64, u16>::new(s);
        let mut live: HashMap<u16, u32> = HashMap::new();
        for (insert, k) in ops {
            let key = k.to_le_bytes();
            if insert {
                cb.insert(&key);
                if cf.insert(&key).is_err() {
                    continue; // refused: nothing changed, the key is not live in cf
                }
                *live.entry(k).or_default() += 1;
            } else if let Some(n) = live.get_mut(&k) {
                // Only keys that were inserted are removed.
                prop_assert!(cb.remove(&key));
                prop_assert!(cf.remove(&key));
                *n -= 1;
                if *n == 0 {
                    live.remove(&k);
                }
            }
            for k in live.keys() {
                prop_assert!(cb.contains(&k.to_le_bytes()), "counting lost {k}");
                prop_assert!(cf.contains(&k.to_le_bytes()), "cuckoo lost {k}");
            }
        }
    }

    #[test]
    fn union_is_the_filter_of_the_union(s in seed(), a in keys(), b in keys()) {
        let build = |ks: &[&Vec<u8>]| {
            let mut f = Bloom::<32, 4>::new(s);
            let mut g = BlockedBloom::<2, 5>::new(s);
            let mut r = RegisterBloom::<16, 4>::new(s);
            for k in ks {
                f.insert(k);
                g.insert(k);
                r.insert(k);
            }
            (f, g, r)
        };
        let (mut fa, mut ga, mut ra) = build(&a.iter().collect::<Vec<_>>());
        let (fb, gb, rb) = build(&b.iter().collect::<Vec<_>>());
        let (fab, gab, rab) = build(&a.iter().chain(&b).collect::<Vec<_>>());
        let (mut fi, mut gi, mut ri) = (fa.clone(), ga.clone(), ra.clone());
        fa.union_with(&fb).unwrap();
        ga.union_with(&gb).unwrap();
        ra.union_with(&rb).unwrap();
        prop_assert_eq!(&fa, &fab);
        prop_assert_eq!(&ga, &gab);
        prop_assert_eq!(&ra, &rab);
        fi.intersect_with(&fb).unwrap();
        gi.intersect_with(&gb).unwrap();
        ri.intersect_with(&rb).unwrap();
        for k in a.iter().filter(|k| b.contains(k)) {
            prop_assert!(fi.contains(k) && gi.contains(k) && ri.contains(k));
        }
    }

    #[test]
    fn wire_round_trip_and_corruption(
        s in seed(),
        ks in keys(),
        flip in any::<prop::sample::Index>(),
        x in 1u8..,
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = Bloom::<16, 3>::new(s);
        let mut bb = BlockedBloom::<2, 4>::new(s);
        let mut rb = RegisterBloom::<8, 5>::new(s);
        let mut cb = CountingBloom::<16, 3>::new(s);
        let mut cf = Cuckoo::<16, u8>::new(s);
        for k in &ks {
            b.insert(k);
            bb.insert(k);
            rb.insert(k);
            cb.insert(k);
            let _ = cf.insert(k);
        }
        macro_rules! check {
            ($f:expr, $empty:expr) => {{
                let f = &$f;
                let mut buf = vec![0u8; f.encoded_len()];
                let n = f.encode_into(&mut buf).unwrap();
                prop_assert_eq!(n, buf.len());
                let mut back = $empty;
                back.decode_into(&buf).unwrap();
                prop_assert_eq!(&back, f);
                let before = back.clone();
                let mut bad = buf.clone();
                let i = flip.index(bad.len());
                bad[i] ^= x;
                prop_assert!(back.decode_into(&bad).is_err());
                prop_assert_eq!(&back, &before);
                prop_assert!(back.decode_into(&buf[..cut.index(buf.len())]).is_err());
                prop_assert_eq!(&back, &before);
            }};
        }
        check!(b, Bloom::<16, 3>::new(s));
        check!(bb, BlockedBloom::<2, 4>::new(s));
        check!(rb, RegisterBloom::<8, 5>::new(s));
        check!(cb, CountingBloom::<16, 3>::new(s));
        check!(cf, Cuckoo::<16, u8>::new(s));
    }
}

#[test]
fn mismatches_are_errors() {
    let (s1, s2) = (Seed::new(1, 1), Seed::new(2, 2));
    let mut a = Bloom::<8, 3>::new(s1);
    assert_eq!(a.union_with(&Bloom::new(s2)), Err(MergeError::SeedMismatch));
    assert_eq!(
        a.intersect_with(&Bloom::new(s2)),
        Err(MergeError::SeedMismatch)
    );
    let mut g = BlockedBloom::<1, 3>::new(s1);
    assert_eq!(
        g.union_with(&BlockedBloom::new(s2)),
        Err(MergeError::SeedMismatch)
    );
    let mut r = RegisterBloom::<8, 3>::new(s1);
    assert_eq!(
        r.union_with(&RegisterBloom::new(s2)),
        Err(MergeError::SeedMismatch)
    );
    assert_eq!(
        r.intersect_with(&RegisterBloom::new(s2)),
        Err(MergeError::SeedMismatch)
    );

    a.insert(b"x");
    let mut buf = vec![0u8; a.encoded_len()];
    a.encode_into(&mut buf).unwrap();
    assert!(matches!(
        Bloom::<8, 3>::new(s2).decode_into(&buf),
        Err(DecodeError::SeedMismatch { .. })
    ));
    assert!(matches!(
        Bloom::<8, 4>::new(s1).decode_into(&buf),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert!(matches!(
        Bloom::<16, 3>::new(s1).decode_into(&buf),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert!(matches!(
        BlockedBloom::<1, 3>::new(s1).decode_into(&buf),
        Err(DecodeError::WrongKind { .. })
    ));
    // Same payload length (8 × 32 bits = 4 × 64 bits), other kind.
    assert!(matches!(
        RegisterBloom::<4, 3>::new(s1).decode_into(&buf),
        Err(DecodeError::WrongKind { .. })
    ));
    r.insert(b"x");
    let mut rbuf = vec![0u8; r.encoded_len()];
    r.encode_into(&mut rbuf).unwrap();
    assert!(matches!(
        RegisterBloom::<8, 4>::new(s1).decode_into(&rbuf),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert!(matches!(
        RegisterBloom::<8, 3>::new(s2).decode_into(&rbuf),
        Err(DecodeError::SeedMismatch { .. })
    ));
    assert!(matches!(
        CountingBloom::<8, 3>::new(s1).decode_into(&buf),
        Err(DecodeError::WrongKind { .. })
    ));
    assert!(matches!(
        Cuckoo::<8, u8>::new(s1).decode_into(&buf),
        Err(DecodeError::WrongKind { .. })
    ));
}

#[test]
fn counting_counters_stick_at_15() {
    let mut f = CountingBloom::<1, 1>::new(Seed::new(3, 3)); // 8 counters, 1 probe
    for _ in 0..20 {
        f.insert(b"k");
    }
    assert_eq!(f.count_saturated(), 1);
    for _ in 0..20 {
        assert!(f.remove(b"k"));
    }
    // Stuck at 15: still present (another key sharing the counter cannot vanish).
    assert!(f.contains(b"k"));
    assert_eq!(f.count_saturated(), 1);
}
