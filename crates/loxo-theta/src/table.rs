//! The hash table under a [`ThetaSketch`](crate::ThetaSketch): `K` slots of 64-bit
//! hash values (0 = empty), open addressing with double hashing, rebuilt in place.
//!
//! Retained values are below θ ≤ 2^63 − 1, so they concentrate in the low bits once θ
//! shrinks: the home slot comes from the **low** bits and the odd stride from the
//! bits above them (as DataSketches' QuickSelect sketch does). Bit 63 is never set in
//! a retained value, which the in-place rebuild borrows as a "not yet placed" mark.

/// Bit 63: marks a value still to be re-placed during [`Table::rehash_in_place`].
const PENDING: u64 = 1 << 63;

/// `K` slots, `K` a power of two (checked by the sketch at compile time).
#[derive(Clone)]
pub(crate) struct Table<const K: usize> {
    slots: [u64; K],
}

/// Where a probe for a value ended.
enum Probe {
    /// The value is in this slot.
    Found,
    /// The value is absent; this empty slot is where it goes.
    Empty(usize),
    /// Every slot was probed (cannot happen below full load; treated as absent).
    Full,
}

impl<const K: usize> Table<K> {
    /// `log2 K`.
    const LG: u32 = K.trailing_zeros();

    pub(crate) const fn new() -> Self {
        Self { slots: [0; K] }
    }

    #[inline(always)]
    const fn home(v: u64) -> usize {
        (v as usize) & (K - 1)
    }

    #[inline(always)]
    const fn stride(v: u64) -> usize {
        ((v >> Self::LG) as usize & (K - 1)) | 1
    }

    #[inline]
    fn probe(&self, v: u64) -> Probe {
        let (mut i, step) = (Self::home(v), Self::stride(v));
        for _ in 0..K {
            match self.slots.get(i).copied() {
                Some(0) => return Probe::Empty(i),
                Some(s) if s == v => return Probe::Found,
                _ => i = (i + step) & (K - 1),
            }
        }
        Probe::Full
    }

    /// Whether `v` (non-zero) is in the table.
    #[inline]
    pub(crate) fn contains(&self, v: u64) -> bool {
        matches!(self.probe(v), Probe::Found)
    }

    /// Inserts `v` (non-zero, bit 63 clear); `true` when it was not there.
    #[inline]
    pub(crate) fn insert(&mut self, v: u64) -> bool {
        match self.probe(v) {
            Probe::Empty(i) => {
                if let Some(s) = self.slots.get_mut(i) {
                    *s = v;
                }
                true
            }
            Probe::Found | Probe::Full => false,
        }
    }

    /// The occupied slots' values, in slot order.
    pub(crate) fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().copied().filter(|&v| v != 0)
    }

    /// Empties every slot.
    pub(crate) fn clear(&mut self) {
        self.slots = [0; K];
    }

    /// Keeps the values for which `keep` holds, moved to the front `[0, n)`, and
    /// zeroes the rest; returns `n`. The table is not a valid hash table until
    /// [`rehash_in_place`](Self::rehash_in_place).
    pub(crate) fn compact(&mut self, mut keep: impl FnMut(u64) -> bool) -> usize {
        let mut n = 0;
        for i in 0..K {
            let v = self.slots.get(i).copied().unwrap_or(0);
            if let Some(s) = self.slots.get_mut(i) {
                *s = 0;
            }
            if v != 0 && keep(v) {
                if let Some(d) = self.slots.get_mut(n) {
                    *d = v;
                }
                n += 1;
            }
        }
        n
    }

    /// The compacted prefix `[0, n)`, to reorder (selection) before rehashing.
    pub(crate) fn prefix_mut(&mut self, n: usize) -> &mut [u64] {
        let n = n.min(K);
        self.slots.get_mut(..n).unwrap_or_default()
    }

    /// Turns a compacted prefix `[0, n)` (the rest zero) back into a hash table
    /// without scratch memory: each value is marked pending, then re-placed along
    /// its probe sequence; a pending value met on the way is displaced (and placed in
    /// turn), a placed one is probed past. Placed values never move again, so every
    /// slot before a value on its probe sequence is occupied when lookups run.
    pub(crate) fn rehash_in_place(&mut self, n: usize) {
        for s in self.slots.iter_mut().take(n) {
            *s |= PENDING;
        }
        for start in 0..K {
            let Some(&first) = self.slots.get(start) else {
                break;
            };
            if first & PENDING == 0 {
                continue;
            }
            if let Some(s) = self.slots.get_mut(start) {
                *s = 0;
            }
            let mut v = first & !PENDING;
            // Each pass of the loop places `v` for good; at most K placements.
            'place: for _ in 0..K {
                let (mut i, step) = (Self::home(v), Self::stride(v));
                for _ in 0..K {
                    let Some(slot) = self.slots.get_mut(i) else {
                        break 'place;
                    };
                    if *slot == 0 {
                        *slot = v;
                        break 'place;
                    }
                    if *slot & PENDING != 0 {
                        let displaced = *slot & !PENDING;
                        *slot = v;
                        v = displaced;
                        continue 'place;
                    }
                    i = (i + step) & (K - 1);
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::Table;
    use std::vec::Vec;

    #[test]
    fn rehash_in_place_keeps_every_value_findable() {
        let mut t = Table::<64>::new();
        let values: Vec<u64> = (1..=60u64).map(|i| loxo_core::mix64(i) >> 1).collect();
        for &v in &values {
            assert!(t.insert(v));
        }
        let n = t.compact(|v| v % 3 != 0);
        let kept: Vec<u64> = values.iter().copied().filter(|v| v % 3 != 0).collect();
        assert_eq!(n, kept.len());
        t.rehash_in_place(n);
        for &v in &values {
            assert_eq!(t.contains(v), v % 3 != 0, "{v:#x}");
        }
        assert_eq!(t.values().count(), n);
    }
}
