//! Properties of the `TopK` summaries over random weighted streams: Space-Saving's
//! deterministic guarantees, CMS-CU + heap's upper bound, HeavyKeeper's lower bound,
//! sorted reports, aging.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use loxo_cms::{CmsTopK, Entry, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use proptest::prelude::*;

const SEED: Seed = Seed::new(0xab, 0xcd);

fn stream() -> impl Strategy<Value = Vec<(u64, u64)>> {
    // Skewed small universe: keys 0..8 are frequent, 0..200 occasional.
    prop::collection::vec(
        (prop_oneof![3 => 0u64..8, 2 => 0u64..200], 1u64..1500),
        0..600,
    )
}

fn feed<T: TopK<u64>>(t: &mut T, s: &[(u64, u64)]) -> HashMap<u64, u64> {
    let mut exact = HashMap::new();
    for &(k, w) in s {
        t.update(&k, SEED.hash_u64(k), w);
        *exact.entry(k).or_insert(0) += w;
    }
    exact
}

fn report<T: TopK<u64>>(t: &T) -> heapless::Vec<Entry<u64>, 64> {
    let mut out = heapless::Vec::new();
    t.report(&mut out);
    assert!(out.windows(2).all(|w| w[0].count >= w[1].count), "sorted");
    out
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(256, 9) })]

    /// Metwally et al.: count − error ≤ f ≤ count for every monitored key; the
    /// minimum count is ≤ N/K, so every key with f > N/K is monitored.
    #[test]
    fn space_saving_guarantees(s in stream()) {
        let mut ss = SpaceSaving::<u64, 16>::new();
        let exact = feed(&mut ss, &s);
        let total: u64 = exact.values().sum();
        prop_assert_eq!(ss.total(), total);
        prop_assert!(ss.len() <= 16);
        let out = report(&ss);
        prop_assert_eq!(out.len(), ss.len());
        for e in &out {
            let f = exact[&e.key];
            prop_assert!(e.lower.is_some() && e.upper == Some(e.count), "{:?}", e);
            prop_assert!(e.admits(f), "{:?} f={}", e, f);
            // Not a vacuous lower bound: a key's error is the minimum count it
            // inherited, and the minimum never decreases (Metwally et al., Lemma 3),
            // so count − lower ≤ the current minimum (0 while the summary has room).
            let width = e.count - e.lower.unwrap_or(0);
            prop_assert!(width <= ss.min_count(), "{:?}: error {} > min count {}", e, width, ss.min_count());
            prop_assert_eq!(ss.estimate(&e.key, SEED.hash_u64(e.key)), Some(e.count));
        }
        prop_assert!(ss.min_count() * 16 <= total);
        for (&k, &f) in &exact {
            if f * 16 > total {
                prop_assert!(ss.entry(&k, SEED.hash_u64(k)).is_some(), "heavy key {} missing", k);
            }
        }
    }

    /// CMS-CU + heap counts are upper bounds; HeavyKeeper's are lower bounds (a
    /// 2⁻³² fingerprint collision aside, impossible to hit with ≤ 200 keys here).
    #[test]
    fn cms_topk_upper_and_heavy_keeper_lower_bounds(s in stream()) {
        let mut cu = CmsTopK::<32, 3, 8, u64>::new(SEED);
        let mut hk = HeavyKeeper::<16, 2, 8, u64>::new(3);
        let exact = feed(&mut cu, &s);
        feed(&mut hk, &s);
        for e in report(&cu) {
            prop_assert!(e.count >= exact[&e.key]);
            // The contract: an upper bound that always holds, no lower bound.
            prop_assert_eq!((e.lower, e.upper), (None, Some(e.count)));
            prop_assert!(e.admits(exact[&e.key]));
        }
        for e in report(&hk) {
            prop_assert!(e.count <= exact[&e.key] && e.count > 0);
            // HeavyKeeper guarantees nothing: no bound is claimed.
            prop_assert_eq!((e.lower, e.upper), (None, None));
        }
    }

    /// Halving halves every reported count and the total; clear empties.
    #[test]
    fn halve_and_clear(s in stream()) {
        let mut ss = SpaceSaving::<u64, 8>::new();
        let mut hk = HeavyKeeper::<16, 2, 8, u64>::new(3);
        feed(&mut ss, &s);
        feed(&mut hk, &s);
        for (before, t) in [(report(&ss), &mut ss as &mut dyn Halve), (report(&hk), &mut hk as &mut dyn Halve)] {
            let total = t.total_();
            t.halve_();
            prop_assert_eq!(t.total_(), total / 2);
            let after = t.report_();
            let mut b: Vec<(u64, u64)> = before.iter().map(|e| (e.key, e.count / 2)).collect();
            let mut a: Vec<(u64, u64)> = after.iter().map(|e| (e.key, e.count)).collect();
            b.sort_unstable();
            a.sort_unstable();
            prop_assert_eq!(a, b);
            t.clear_();
            prop_assert!(t.report_().is_empty());
        }
    }
}

/// Object-safe test adapter over `TopK<u64>` (the trait itself has a generic
/// `report`, so it is used statically in real code).
trait Halve {
    fn total_(&self) -> u64;
    fn halve_(&mut self);
    fn clear_(&mut self);
    fn report_(&self) -> heapless::Vec<Entry<u64>, 64>;
}

impl<T: TopK<u64>> Halve for T {
    fn total_(&self) -> u64 {
        self.total()
    }
    fn halve_(&mut self) {
        self.halve();
    }
    fn clear_(&mut self) {
        self.clear();
    }
    fn report_(&self) -> heapless::Vec<Entry<u64>, 64> {
        report(self)
    }
}

/// A report into a smaller buffer holds the largest entries.
#[test]
fn short_report_keeps_the_largest() {
    let mut ss = SpaceSaving::<u64, 32>::new();
    for k in 0..32u64 {
        ss.update(&k, SEED.hash_u64(k), k + 1);
    }
    let mut out = heapless::Vec::<Entry<u64>, 3>::new();
    ss.report(&mut out);
    let keys: Vec<u64> = out.iter().map(|e| e.key).collect();
    assert_eq!(keys, [31, 30, 29]);
    ss.update(&5, SEED.hash_u64(5), 0);
    assert_eq!(ss.estimate(&5, SEED.hash_u64(5)), Some(6));
}
