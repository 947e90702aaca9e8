//! A bounded min-heap of keyed counts with a hash index: the candidate store shared
//! by [`SpaceSaving`](crate::SpaceSaving), [`HeavyKeeper`](crate::HeavyKeeper) and
//! [`CmsTopK`](crate::CmsTopK).
//!
//! Slots live in a `heapless::Vec` ordered as a binary min-heap on `count`. The
//! index is an open-addressing table of `2N` `u16` cells (linear probing, load
//! ≤ ½, backward-shift deletion) holding `heap position + 1`; each slot remembers
//! its table cell so heap swaps update the index in O(1). Lookup, insert, increase
//! and replace-minimum are O(log N) plus an expected O(1) probe.

use loxo_core::{reduce, KeyHash};

use crate::topk::Entry;

/// One monitored key of a top-k summary, as stored (see [`Entry`] for reports).
///
/// Memory: `size_of::<K>()` + 16 (count, error) + 6 (index bookkeeping), rounded up
/// to the alignment of `u64`: 32 bytes for a `u64` key, 64 for a 40-byte key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot<K> {
    key: K,
    count: u64,
    error: u64,
    /// High 32 bits of the key's digest: home cell in the index, cheap pre-compare.
    tag: u32,
    /// The index cell pointing at this slot.
    cell: u16,
}

impl<K: Copy> Slot<K> {
    /// The report view of this slot with Space-Saving's bounds (`count − error ≤ f ≤
    /// count`); the other summaries replace the bounds they do not have.
    pub(crate) fn entry(&self) -> Entry<K> {
        Entry {
            key: self.key,
            count: self.count,
            lower: Some(self.count.saturating_sub(self.error)),
            upper: Some(self.count),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyHeap<K, const N: usize> {
    slots: heapless::Vec<Slot<K>, N>,
    /// `2N` cells as `N` pairs, so the length is in the type.
    index: [[u16; 2]; N],
}

#[inline(always)]
fn tag_of(h: KeyHash) -> u32 {
    (h.get() >> 32) as u32
}

impl<K: Copy + Eq, const N: usize> KeyHeap<K, N> {
    const CHECK: () = assert!(
        N >= 1 && N <= 32_767,
        "top-k capacity N must be in 1..=32767"
    );
    const CELLS: usize = 2 * N;

    pub(crate) const fn new() -> Self {
        let () = Self::CHECK;
        Self {
            slots: heapless::Vec::new(),
            index: [[0; 2]; N],
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.slots.len() >= N
    }

    /// Smallest monitored count, `None` when empty.
    pub(crate) fn min_count(&self) -> Option<u64> {
        self.slots.first().map(|s| s.count)
    }

    pub(crate) fn slot(&self, pos: usize) -> Option<&Slot<K>> {
        self.slots.get(pos)
    }

    /// The monitored slots in heap order (the minimum first).
    pub(crate) fn slots(&self) -> &[Slot<K>] {
        &self.slots
    }

    #[inline(always)]
    fn home(tag: u32) -> usize {
        reduce((tag as u64) << 32, Self::CELLS as u32) as usize
    }

    #[inline(always)]
    fn next(p: usize) -> usize {
        let q = p + 1;
        if q >= Self::CELLS {
            0
        } else {
            q
        }
    }

    #[inline(always)]
    fn cell(&self, p: usize) -> u16 {
        self.index.get(p >> 1).map_or(0, |pair| pair[p & 1])
    }

    #[inline(always)]
    fn set_cell(&mut self, p: usize, v: u16) {
        if let Some(pair) = self.index.get_mut(p >> 1) {
            pair[p & 1] = v;
        }
    }

    /// Heap position of `key`, if monitored.
    #[inline]
    pub(crate) fn find(&self, key: &K, h: KeyHash) -> Option<usize> {
        let tag = tag_of(h);
        let mut p = Self::home(tag);
        for _ in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            let s = self.slots.get(v.checked_sub(1)?)?;
            if s.tag == tag && s.key == *key {
                return Some(v - 1);
            }
            p = Self::next(p);
        }
        None
    }

    /// Points a free index cell for `tag` at heap position `pos`; returns the cell.
    fn index_insert(&mut self, tag: u32, pos: usize) -> u16 {
        let mut p = Self::home(tag);
        for _ in 0..Self::CELLS {
            if self.cell(p) == 0 {
                break;
            }
            p = Self::next(p);
        }
        // Load ≤ ½ guarantees a free cell was found.
        self.set_cell(p, (pos + 1) as u16);
        p as u16
    }

    /// Frees index cell `p` and shifts the rest of its probe run back (Knuth's
    /// algorithm R), so lookups never need tombstones.
    fn index_remove(&mut self, p: usize) {
        let mut hole = p;
        self.set_cell(hole, 0);
        let mut j = hole;
        for _ in 0..Self::CELLS {
            j = Self::next(j);
            let v = self.cell(j);
            let Some(s) = (v as usize).checked_sub(1).and_then(|i| self.slots.get(i)) else {
                break;
            };
            let k = Self::home(s.tag);
            // Move the entry at j into the hole unless its home lies cyclically in
            // (hole, j]: then its probe run never passed the hole.
            let stays = if hole <= j {
                hole < k && k <= j
            } else {
                hole < k || k <= j
            };
            if !stays {
                self.set_cell(hole, v);
                if let Some(s) = self.slots.get_mut(v as usize - 1) {
                    s.cell = hole as u16;
                }
                self.set_cell(j, 0);
                hole = j;
            }
        }
    }

    fn count_at(&self, i: usize) -> u64 {
        self.slots.get(i).map_or(u64::MAX, |s| s.count)
    }

    /// Writes `s` at heap position `to` and re-points its index cell.
    #[inline(always)]
    fn place(&mut self, to: usize, s: Slot<K>) {
        if let Some(d) = self.slots.get_mut(to) {
            *d = s;
            let cell = s.cell as usize;
            self.set_cell(cell, (to + 1) as u16);
        }
    }

    // Both sifts move a "hole" instead of swapping: one slot copy and one index
    // write per level.
    fn sift_up(&mut self, mut i: usize) {
        if i == 0 || self.count_at((i - 1) / 2) <= self.count_at(i) {
            return;
        }
        let Some(&s) = self.slots.get(i) else { return };
        while i > 0 {
            let parent = (i - 1) / 2;
            let Some(&p) = self.slots.get(parent) else {
                break;
            };
            if p.count <= s.count {
                break;
            }
            self.place(i, p);
            i = parent;
        }
        self.place(i, s);
    }

    /// Smallest child of heap position `i`, if any.
    #[inline(always)]
    fn min_child(&self, i: usize) -> Option<usize> {
        let l = 2 * i + 1;
        let r = l + 1;
        if l >= self.slots.len() {
            None
        } else if r < self.slots.len() && self.count_at(r) < self.count_at(l) {
            Some(r)
        } else {
            Some(l)
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.slots.len();
        // Most raises leave the slot in place (a counted elephant stays above its
        // children): check before moving a whole slot (64 bytes for a flow key).
        match self.min_child(i) {
            Some(c) if self.count_at(c) < self.count_at(i) => {}
            _ => return,
        }
        let Some(&s) = self.slots.get(i) else { return };
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.count_at(r) < self.count_at(l) {
                r
            } else {
                l
            };
            let Some(&child) = self.slots.get(c) else {
                break;
            };
            if s.count <= child.count {
                break;
            }
            self.place(i, child);
            i = c;
        }
        self.place(i, s);
    }

    /// Adds a new key; the caller checked it is absent. No-op when full.
    pub(crate) fn push(&mut self, key: K, h: KeyHash, count: u64, error: u64) {
        if self.is_full() {
            return;
        }
        let pos = self.slots.len();
        let tag = tag_of(h);
        let cell = self.index_insert(tag, pos);
        if self
            .slots
            .push(Slot {
                key,
                count,
                error,
                tag,
                cell,
            })
            .is_ok()
        {
            self.sift_up(pos);
        }
    }

    /// Evicts the minimum and monitors `key` instead; the caller checked it is
    /// absent. Returns the evicted slot.
    pub(crate) fn replace_min(
        &mut self,
        key: K,
        h: KeyHash,
        count: u64,
        error: u64,
    ) -> Option<Slot<K>> {
        let old = *self.slots.first()?;
        self.index_remove(old.cell as usize);
        let tag = tag_of(h);
        let cell = self.index_insert(tag, 0);
        if let Some(s) = self.slots.first_mut() {
            *s = Slot {
                key,
                count,
                error,
                tag,
                cell,
            };
        }
        self.sift_down(0);
        Some(old)
    }

    /// Sets the count at heap position `pos` to `count`, which must not be smaller.
    pub(crate) fn raise(&mut self, pos: usize, count: u64) {
        if let Some(s) = self.slots.get_mut(pos) {
            if count > s.count {
                s.count = count;
                self.sift_down(pos);
            }
        }
    }

    /// Halves every count and error (monotone, so the heap order survives).
    pub(crate) fn halve(&mut self) {
        for s in &mut self.slots {
            s.count >>= 1;
            s.error >>= 1;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.index = [[0; 2]; N];
    }

    /// Bytes [`encode`](Self::encode) writes: `4 + len·(L + 20)`.
    pub(crate) fn encoded_len<const L: usize>(&self) -> usize {
        4 + self.slots.len() * (L + 20)
    }

    /// Writes the heap: `u32` count, then per slot in heap order the key (`L`
    /// bytes), count (`u64`), error (`u64`) and hash tag (`u32`).
    pub(crate) fn encode<const L: usize>(&self, enc: &mut loxo_core::wire::Encoder<'_>)
    where
        K: crate::WireKey<L>,
    {
        enc.put_u32(self.slots.len() as u32);
        for s in &self.slots {
            enc.put(&s.key.to_wire());
            enc.put_u64(s.count);
            enc.put_u64(s.error);
            enc.put_u32(s.tag);
        }
    }

    /// Validates an encoded heap (all of `bytes`): at most `N` slots, decodable
    /// keys, `error ≤ count`, the min-heap order, no key twice.
    pub(crate) fn validate<const L: usize>(bytes: &[u8]) -> Result<(), loxo_core::DecodeError>
    where
        K: crate::WireKey<L>,
    {
        use loxo_core::DecodeError;
        let (n, body) = bytes.split_at_checked(4).ok_or(DecodeError::Truncated)?;
        let n = u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize;
        if n > N {
            return Err(DecodeError::InvalidValue);
        }
        let size = L + 20;
        match body.len().cmp(&(n * size)) {
            core::cmp::Ordering::Less => return Err(DecodeError::Truncated),
            core::cmp::Ordering::Greater => return Err(DecodeError::TrailingBytes),
            core::cmp::Ordering::Equal => {}
        }
        let rec = |i: usize| body.get(i * size..(i + 1) * size).map(Self::record::<L>);
        for i in 0..n {
            let Some(Some((key, count, error, _))) = rec(i) else {
                return Err(DecodeError::InvalidValue);
            };
            if error > count {
                return Err(DecodeError::InvalidValue);
            }
            if i > 0 {
                let Some(Some((_, parent, _, _))) = rec((i - 1) / 2) else {
                    return Err(DecodeError::InvalidValue);
                };
                if parent > count {
                    return Err(DecodeError::InvalidValue);
                }
            }
            for j in 0..i {
                if matches!(rec(j), Some(Some((k, ..))) if k == key) {
                    return Err(DecodeError::InvalidValue);
                }
            }
        }
        Ok(())
    }

    fn record<const L: usize>(r: &[u8]) -> Option<(K, u64, u64, u32)>
    where
        K: crate::WireKey<L>,
    {
        let key = K::from_wire(r.get(..L)?.try_into().ok()?)?;
        let u64_at = |o: usize| Some(u64::from_le_bytes(r.get(o..o + 8)?.try_into().ok()?));
        let tag = u32::from_le_bytes(r.get(L + 16..L + 20)?.try_into().ok()?);
        Some((key, u64_at(L)?, u64_at(L + 8)?, tag))
    }

    /// Replaces the heap with a [validated](Self::validate) encoding.
    pub(crate) fn decode_validated<const L: usize>(&mut self, bytes: &[u8])
    where
        K: crate::WireKey<L>,
    {
        self.clear();
        for r in bytes.get(4..).unwrap_or(&[]).chunks_exact(L + 20) {
            if let Some((key, count, error, tag)) = Self::record::<L>(r) {
                // Slots come in heap order, so every push stays where it lands.
                self.push(key, KeyHash::from_u64(u64::from(tag) << 32), count, error);
            }
        }
    }

    /// Fills `out` with the largest entries, by count descending (ties: heap order).
    pub(crate) fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>) {
        out.clear();
        if M == 0 {
            return;
        }
        for s in &self.slots {
            let e = s.entry();
            // First position whose count is smaller than e's.
            let at = out.partition_point(|x| x.count >= e.count);
            if at >= M {
                continue;
            }
            if out.is_full() {
                out.pop();
            }
            let _ = out.insert(at, e);
        }
    }

    /// Checks every invariant (tests only).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let n = self.slots.len();
        for i in 1..n {
            assert!(
                self.slots[(i - 1) / 2].count <= self.slots[i].count,
                "heap order"
            );
        }
        let mut used = 0;
        for p in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            if v != 0 {
                used += 1;
                assert_eq!(self.slots[v - 1].cell as usize, p, "back pointer");
                let h = KeyHash::from_u64((self.slots[v - 1].tag as u64) << 32);
                assert_eq!(
                    self.find(&self.slots[v - 1].key, h),
                    Some(v - 1),
                    "findable"
                );
            }
        }
        assert_eq!(used, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(k: u64) -> KeyHash {
        KeyHash::from_u64(loxo_core::mix64(k.wrapping_add(0x1234_5678)))
    }

    #[test]
    fn random_operations_keep_invariants() {
        let mut heap = KeyHeap::<u64, 13>::new();
        let mut x = 1u64;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 40;
            match heap.find(&key, h(key)) {
                Some(p) => {
                    let c = heap.slot(p).map_or(0, |s| s.count);
                    heap.raise(p, c + step % 5);
                }
                None if !heap.is_full() => heap.push(key, h(key), step % 7, 0),
                None => {
                    let m = heap.min_count().unwrap_or(0);
                    let _ = heap.replace_min(key, h(key), m + 1, m);
                }
            }
            if step % 997 == 0 {
                heap.halve();
            }
            heap.check();
        }
        let mut out = heapless::Vec::<Entry<u64>, 5>::new();
        heap.report(&mut out);
        assert_eq!(out.len(), 5);
        assert!(out.windows(2).all(|w| w[0].count >= w[1].count));
        let max = heap.slots().iter().map(|s| s.count).max();
        assert_eq!(out.first().map(|e| e.count), max);
        heap.clear();
        heap.check();
        assert_eq!(heap.len(), 0);
    }
}
