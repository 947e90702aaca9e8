//! `SpaceSaving::update_bounded` — Space-Saving gated by a caller's upper bound —
//! keeps every Space-Saving guarantee for any honest bound: a tiny colliding
//! Count-Min sketch's estimate (loose), the exact count (tight), or a mix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cms::{CmsCu, SpaceSaving, TopK};
use loxo_core::Seed;
use proptest::prelude::*;

const SEED: Seed = Seed::new(0x9a7e, 0xd55);

fn stream() -> impl Strategy<Value = Vec<(u64, u64, u64)>> {
    // (key, weight, slack added to the exact count for the "loose exact" bound)
    prop::collection::vec(
        (
            prop_oneof![3 => 0u64..6, 2 => 0u64..300],
            1u64..1500,
            0u64..5000,
        ),
        0..800,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(256, 17) })]

    #[test]
    fn gated_space_saving_keeps_its_guarantees(s in stream(), mode in 0u8..3) {
        let mut ss = SpaceSaving::<u64, 8>::new();
        let mut cms = CmsCu::<16, 2, u64>::new(SEED);
        let mut exact: HashMap<u64, u64> = HashMap::new();
        let mut skipped = 0u64;
        for &(k, w, slack) in &s {
            let h = SEED.hash_u64(k);
            let f = exact.entry(k).or_insert(0);
            *f += w;
            let est = cms.add_hash_estimate(h, w);
            prop_assert!(est >= *f, "the sketch is an upper bound");
            let upper = match mode {
                0 => est,
                1 => *f,
                _ => *f + slack,
            };
            let (len, min, monitored) = (ss.len(), ss.min_count(), ss.estimate(&k, h).is_some());
            ss.update_bounded(&k, h, w, upper);
            skipped += u64::from(!monitored && len == 8 && upper <= min);
        }
        let total: u64 = exact.values().sum();
        prop_assert_eq!(ss.total(), total);
        let mut out = heapless::Vec::<_, 8>::new();
        ss.report(&mut out);
        let sum: u64 = out.iter().map(|e| e.count).sum();
        prop_assert!(sum <= total, "counts add up to at most the total");
        let min = ss.min_count();
        prop_assert!(min * 8 <= total);
        for e in &out {
            let f = exact[&e.key];
            prop_assert!(e.admits(f), "{:?} vs {}", e, f);
            prop_assert!(e.lower.is_some() && e.upper == Some(e.count));
            // Metwally's error bound: the over-count is at most the minimum.
            prop_assert!(e.count - e.lower.unwrap() <= min, "{:?} min {}", e, min);
        }
        // Unmonitored keys weigh at most the smallest count.
        for (&k, &f) in &exact {
            if !out.iter().any(|e| e.key == k) {
                prop_assert!(f <= min, "unmonitored key {} weighs {} > min {}", k, f, min);
            }
        }
        // With the exact count as the bound, the gate must actually skip work on
        // skewed streams (otherwise it is plain Space-Saving).
        if mode == 1 && s.len() >= 600 {
            prop_assert!(skipped > 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(256, 18) })]

    /// `update_gated` (the bound computed only for an unmonitored key) leaves the same
    /// summary as `update_bounded`, calls its closure exactly when the key is not
    /// monitored, and says which case it was — also for zero weights.
    #[test]
    fn gated_update_equals_bounded_update(s in stream(), mode in 0u8..3) {
        let mut a = SpaceSaving::<u64, 8>::new();
        let mut b = SpaceSaving::<u64, 8>::new();
        let (mut ca, mut cb) = (CmsCu::<16, 2, u64>::new(SEED), CmsCu::<16, 2, u64>::new(SEED));
        for (i, &(k, w, slack)) in s.iter().enumerate() {
            let w = if i % 97 == 5 { 0 } else { w };
            let h = SEED.hash_u64(k);
            let monitored = b.estimate(&k, h).is_some();
            let upper_a = ca.add_hash_estimate(h, w);
            a.update_bounded(&k, h, w, if mode == 2 { upper_a + slack } else { upper_a });
            let mut called = false;
            let hit = b.update_gated(&k, h, w, || {
                called = true;
                let u = cb.add_hash_estimate(h, w);
                if mode == 2 { u + slack } else { u }
            });
            if hit {
                cb.add_hash(h, w);
            }
            prop_assert_eq!(hit, monitored);
            prop_assert_eq!(called, !monitored);
            // The gated update may leave an eviction's sift deferred: it reads the
            // same at once, and is the same summary once settled.
            prop_assert!(a.entries().eq(b.entries()));
            prop_assert_eq!(a.min_count(), b.min_count());
            let mut settled = b.clone();
            settled.settle();
            prop_assert_eq!(&a, &settled);
        }
    }
}
