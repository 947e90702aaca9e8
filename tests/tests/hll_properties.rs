//! Properties of `loxo_hll::Hll`: merge is the union, commutative, associative and
//! idempotent; cross-precision folds equal a coarser sketch fed the same keys;
//! duplicates change nothing; the O(1) estimate equals a full recomputation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{DecodeError, KeyHash, MergeError, Seed};
use loxo_hll::{Hll, Precision, SupportedPrecision};
use proptest::prelude::*;

const SEED: Seed = Seed::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);

fn sketch<const P: u8>(keys: &[u64]) -> Hll<P>
where
    Precision<P>: SupportedPrecision,
{
    let mut h = Hll::<P>::new(SEED);
    for k in keys {
        h.insert(&k.to_le_bytes());
    }
    h
}

/// The register histogram recomputed by a full scan.
fn scanned_histogram<const P: u8>(h: &Hll<P>) -> [u32; 64]
where
    Precision<P>: SupportedPrecision,
{
    let mut hist = [0u32; 64];
    for r in h.registers() {
        hist[usize::from(r)] += 1;
    }
    hist
}

/// Asserts that the maintained histogram and the O(1) estimate equal a full
/// recomputation: a fresh sketch loaded register by register.
fn assert_matches_recomputation<const P: u8>(h: &Hll<P>)
where
    Precision<P>: SupportedPrecision,
{
    assert_eq!(h.histogram(), &scanned_histogram(h));
    let mut fresh = Hll::<P>::new(h.seed());
    fresh.set_registers(h.registers()).unwrap();
    assert_eq!(&fresh, h);
    assert_eq!(fresh.estimate().to_bits(), h.estimate().to_bits());
    assert_eq!(
        fresh.estimate_classic().to_bits(),
        h.estimate_classic().to_bits()
    );
}

fn keys(max_len: usize) -> impl Strategy<Value = Vec<u64>> {
    // Keys from a small range so that sets overlap and duplicates occur.
    prop::collection::vec(0u64..5_000, 0..max_len)
}

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<u64>),
    Merge(Vec<u64>),
    MergeFiner(Vec<u64>),
    UpdateRegister(usize, u8),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => keys(300).prop_map(Op::Insert),
        2 => keys(300).prop_map(Op::Merge),
        2 => keys(300).prop_map(Op::MergeFiner),
        1 => (0usize..300, 0u8..70).prop_map(|(i, r)| Op::UpdateRegister(i, r)),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(128, 10) })]

    #[test]
    fn union_of_sketches_is_sketch_of_union(a in keys(2000), b in keys(2000)) {
        let mut merged = sketch::<8>(&a);
        merged.merge(&sketch::<8>(&b)).unwrap();
        let union: Vec<u64> = a.iter().chain(&b).copied().collect();
        let direct = sketch::<8>(&union);
        prop_assert!(merged.registers().eq(direct.registers()));
        prop_assert_eq!(merged.histogram(), direct.histogram());
        prop_assert_eq!(merged.estimate().to_bits(), direct.estimate().to_bits());
        prop_assert_eq!(merged.estimate_martingale(), None);
    }

    #[test]
    fn merge_is_commutative_associative_idempotent(
        a in keys(1000), b in keys(1000), c in keys(1000)
    ) {
        let (ha, hb, hc) = (sketch::<8>(&a), sketch::<8>(&b), sketch::<8>(&c));
        let mut ab_c = ha.clone();
        ab_c.merge(&hb).unwrap();
        ab_c.merge(&hc).unwrap();
        let mut bc = hb.clone();
        bc.merge(&hc).unwrap();
        let mut a_bc = ha.clone();
        a_bc.merge(&bc).unwrap();
        let mut c_ba = hc.clone();
        c_ba.merge(&hb).unwrap();
        c_ba.merge(&ha).unwrap();
        prop_assert_eq!(&ab_c, &a_bc);
        prop_assert_eq!(&ab_c, &c_ba);
        let once = ab_c.clone();
        ab_c.merge(&hb).unwrap();
        ab_c.merge(&once).unwrap();
        prop_assert_eq!(&ab_c, &once);
        prop_assert_eq!(ab_c.histogram(), once.histogram());
        assert_matches_recomputation(&ab_c);
    }

    #[test]
    fn fold_equals_coarser_sketch_of_same_keys(a in keys(4000), b in keys(500)) {
        let fine = sketch::<12>(&a);
        let f8: Hll<8> = fine.fold();
        let s8 = sketch::<8>(&a);
        prop_assert_eq!(&f8, &s8);
        prop_assert_eq!(f8.histogram(), s8.histogram());
        let f4: Hll<4> = fine.fold();
        prop_assert_eq!(&f4, &sketch::<4>(&a));
        let f11: Hll<11> = fine.fold();
        prop_assert_eq!(&f11, &sketch::<11>(&a));
        // merge_from into a non-empty coarse sketch = the coarse sketch of the union
        let mut coarse = sketch::<6>(&b);
        coarse.merge_from(&fine).unwrap();
        let union: Vec<u64> = a.iter().chain(&b).copied().collect();
        prop_assert_eq!(&coarse, &sketch::<6>(&union));
        assert_matches_recomputation(&coarse);
    }

    #[test]
    fn duplicates_never_change_the_sketch(a in keys(2000), picks in prop::collection::vec(any::<prop::sample::Index>(), 1..500)) {
        prop_assume!(!a.is_empty());
        let mut h = sketch::<10>(&a);
        let (e, hip, before) = (h.estimate(), h.estimate_martingale(), h.clone());
        for i in picks {
            prop_assert!(!h.insert(&i.get(&a).to_le_bytes()));
        }
        prop_assert_eq!(h.estimate().to_bits(), e.to_bits());
        prop_assert_eq!(h.estimate_martingale(), hip);
        prop_assert_eq!(&h, &before);
    }

    #[test]
    fn o1_estimate_equals_full_recomputation(ops in prop::collection::vec(op(), 1..20)) {
        let mut h = Hll::<8>::new(SEED);
        let mut inserts_only = true;
        for op in ops {
            match op {
                Op::Insert(k) => for key in k { h.insert(&key.to_le_bytes()); },
                Op::Merge(k) => { h.merge(&sketch::<8>(&k)).unwrap(); inserts_only = false; }
                Op::MergeFiner(k) => { h.merge_from(&sketch::<11>(&k)).unwrap(); inserts_only = false; }
                Op::UpdateRegister(i, r) => { h.update_register(i, r); }
                Op::Clear => { h.clear(); inserts_only = true; }
            }
            assert_matches_recomputation(&h);
            prop_assert_eq!(h.estimate_martingale().is_some(), inserts_only);
        }
    }

    #[test]
    fn pre_hashed_insert_equals_keyed_insert(a in keys(1000)) {
        let mut pre = Hll::<9>::new(SEED);
        for k in &a {
            pre.insert_hash(SEED.hash(&k.to_le_bytes()));
        }
        prop_assert_eq!(&pre, &sketch::<9>(&a));
        prop_assert_eq!(pre.estimate_martingale(), sketch::<9>(&a).estimate_martingale());
    }
}

#[test]
fn set_registers_round_trips_and_rejects_bad_input() {
    let a: Vec<u64> = (0..3000).collect();
    let h = sketch::<10>(&a);
    let regs: Vec<u8> = h.registers().collect();
    assert_eq!(regs.len(), 1024);
    let mut g = Hll::<10>::new(SEED);
    g.set_registers(regs.iter().copied()).unwrap();
    assert_eq!(g, h);
    assert_eq!(g.estimate().to_bits(), h.estimate().to_bits());

    let mut too_high = regs.clone();
    too_high[1023] = 56; // 64 − 10 + 1 = 55 is the maximum rank
    let mut t = Hll::<10>::new(SEED);
    assert_eq!(
        t.set_registers(too_high.iter().copied()),
        Err(DecodeError::InvalidValue)
    );
    assert!(t.is_empty());
    assert!(matches!(
        t.set_registers(regs[..1000].iter().copied()),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert!(t.is_empty());
}

#[test]
fn merge_across_seeds_is_refused() {
    let mut a = sketch::<8>(&[1, 2, 3]);
    let b = Hll::<8>::new(Seed::new(7, 7));
    assert_eq!(a.merge(&b), Err(MergeError::SeedMismatch));
    assert_eq!(a, sketch::<8>(&[1, 2, 3]));
}

/// `Hll<18>` is 192 KiB: build it on a thread with a big stack (debug builds may
/// place several temporaries on the stack) and in a `Box`.
#[test]
fn precision_18_folds_to_14_exactly() {
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(|| {
            let mut big = Box::new(Hll::<18>::new(SEED));
            let mut small = Box::new(Hll::<14>::new(SEED));
            for k in loxo_tests::DistinctKeys::new(18).take(200_000) {
                big.insert_hash(KeyHash::from_u64(k));
                small.insert_hash(KeyHash::from_u64(k));
            }
            let folded: Box<Hll<14>> = Box::new(big.fold());
            assert_eq!(folded, small);
            let e = big.estimate();
            assert!((e - 200_000.0).abs() < 5.0 * big.relative_standard_error() * 200_000.0);
            assert_eq!(big.memory_bytes(), 196_608 + 296);
        })
        .unwrap()
        .join()
        .unwrap();
}
