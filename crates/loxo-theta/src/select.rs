//! In-place selection of the `j`-th smallest value (Hoare's quickselect,
//! median-of-three pivots): O(n) expected, no scratch memory.

/// Reorders `v` so that `v[j]` is the value a sort would put there, every value
/// before it is `≤` it and every value after is `≥` it. Does nothing when
/// `j ≥ v.len()`.
pub(crate) fn select(v: &mut [u64], j: usize) {
    if j >= v.len() {
        return;
    }
    let (mut lo, mut hi) = (0usize, v.len() - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // Median of three into v[mid].
        if v[mid] < v[lo] {
            v.swap(mid, lo);
        }
        if v[hi] < v[lo] {
            v.swap(hi, lo);
        }
        if v[hi] < v[mid] {
            v.swap(hi, mid);
        }
        let pivot = v[mid];
        // Hoare partition of [lo, hi] around `pivot`.
        let (mut i, mut k) = (lo, hi);
        loop {
            while v[i] < pivot {
                i += 1;
            }
            while v[k] > pivot {
                k -= 1;
            }
            if i >= k {
                break;
            }
            v.swap(i, k);
            i += 1;
            k -= 1;
        }
        // Now [lo, k] ≤ pivot ≤ [k + 1, hi].
        if j <= k {
            hi = k;
        } else {
            lo = k + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::select;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn selects_what_a_sort_puts_there(mut v in proptest::collection::vec(0u64..50, 1..200), j in 0usize..200) {
            let mut sorted = v.clone();
            sorted.sort_unstable();
            select(&mut v, j);
            if j < v.len() {
                prop_assert_eq!(v[j], sorted[j]);
                prop_assert!(v[..j].iter().all(|&x| x <= v[j]));
                prop_assert!(v[j + 1..].iter().all(|&x| x >= v[j]));
            }
            v.sort_unstable();
            prop_assert_eq!(v, sorted);
        }
    }
}
