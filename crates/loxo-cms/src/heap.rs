//! A bounded min-heap of keyed counts with a hash index: the candidate store shared
//! by [`SpaceSaving`](crate::SpaceSaving), [`HeavyKeeper`](crate::HeavyKeeper) and
//! [`CmsTopK`](crate::CmsTopK).
//!
//! Keys live in fixed **slots** (a `heapless::Vec`; a slot never moves). The heap is
//! *indirect*: two parallel arrays in heap order, the counts (`u64`) and the slot
//! each count belongs to (`u16`), ordered as a binary min-heap on count; each slot
//! remembers its heap position. A sift therefore moves 10 bytes per level, not a
//! whole slot (56 bytes with a flow key: on a Cortex-M4 that halved the
//! Space-Saving update). The index is an open-addressing table of `2N` `u16` cells
//! (linear probing, load ≤ ½, backward-shift deletion) holding `slot + 1`, which a
//! sift never touches. Lookup, insert, increase and replace-minimum are O(log N) plus
//! an expected O(1) probe.

use loxo_core::{reduce, KeyHash};

use crate::entry::Entry;

/// One monitored key of a top-k summary, as stored (see [`Entry`] for reports).
///
/// Memory: `size_of::<K>()` + 8 (error) + 8 (hash tag, index cell, heap position),
/// rounded up to the alignment of `u64`: 24 bytes for a `u64` key, 56 for a
/// 40-byte key. Each monitored key also takes 10 bytes of heap (count, slot) and 4 of
/// index: `size_of::<Slot<K>>() + 14` bytes in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot<K> {
    key: K,
    error: u64,
    /// High 32 bits of the key's digest: home cell in the index, cheap pre-compare.
    tag: u32,
    /// The index cell pointing at this slot.
    cell: u16,
    /// This slot's position in the heap arrays.
    pos: u16,
}

/// Space-Saving's bounds on a count: `count − error ≤ f ≤ count`; the other summaries
/// replace the bounds they do not have.
fn entry<K: Copy>(s: &Slot<K>, count: u64) -> Entry<K> {
    Entry {
        key: s.key,
        count,
        lower: Some(count.saturating_sub(s.error)),
        upper: Some(count),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyHeap<K, const N: usize> {
    slots: heapless::Vec<Slot<K>, N>,
    /// Heap order: the count of heap entry `i`.
    counts: [u64; N],
    /// Heap order: the slot of heap entry `i`.
    ids: [u16; N],
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
            counts: [0; N],
            ids: [0; N],
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
        if self.slots.is_empty() {
            None
        } else {
            self.counts.first().copied()
        }
    }

    /// The count of slot `id`.
    pub(crate) fn count(&self, id: usize) -> u64 {
        self.slots
            .get(id)
            .and_then(|s| self.counts.get(s.pos as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The count of `key`, if monitored.
    pub(crate) fn count_of(&self, key: &K, h: KeyHash) -> Option<u64> {
        self.find(key, h).map(|id| self.count(id))
    }

    /// The report view of slot `id` (Space-Saving's bounds).
    pub(crate) fn entry(&self, id: usize) -> Option<Entry<K>> {
        self.slots.get(id).map(|s| entry(s, self.count(id)))
    }

    /// Every monitored entry in heap order (the minimum first).
    pub(crate) fn entries(&self) -> impl Iterator<Item = Entry<K>> + '_ {
        self.counts
            .iter()
            .zip(&self.ids)
            .take(self.slots.len())
            .filter_map(|(&c, &id)| self.slots.get(id as usize).map(|s| entry(s, c)))
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

    /// Slot of `key`, if monitored.
    #[inline]
    pub(crate) fn find(&self, key: &K, h: KeyHash) -> Option<usize> {
        self.find_or_vacancy(key, h).ok()
    }

    /// `Ok(slot)` of `key` if monitored, else `Err(cell)`: the free index cell where
    /// its probe stopped, which [`replace_min_at`](Self::replace_min_at) can fill
    /// without probing again.
    #[inline]
    pub(crate) fn find_or_vacancy(&self, key: &K, h: KeyHash) -> Result<usize, usize> {
        let tag = tag_of(h);
        let mut p = Self::home(tag);
        for _ in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            let Some(s) = v.checked_sub(1).and_then(|i| self.slots.get(i)) else {
                return Err(p);
            };
            if s.tag == tag && s.key == *key {
                return Ok(v - 1);
            }
            p = Self::next(p);
        }
        Err(p)
    }

    /// Points a free index cell for `tag` at slot `id`; returns the cell.
    fn index_insert(&mut self, tag: u32, id: usize) -> u16 {
        let mut p = Self::home(tag);
        for _ in 0..Self::CELLS {
            if self.cell(p) == 0 {
                break;
            }
            p = Self::next(p);
        }
        // Load ≤ ½ guarantees a free cell was found.
        self.set_cell(p, (id + 1) as u16);
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

    #[inline(always)]
    fn count_at(&self, i: usize) -> u64 {
        self.counts.get(i).copied().unwrap_or(u64::MAX)
    }

    /// Writes heap entry `(count, id)` at position `to` and re-points its slot.
    #[inline(always)]
    fn place(&mut self, to: usize, count: u64, id: u16) {
        if let (Some(c), Some(i)) = (self.counts.get_mut(to), self.ids.get_mut(to)) {
            *c = count;
            *i = id;
        }
        if let Some(s) = self.slots.get_mut(id as usize) {
            s.pos = to as u16;
        }
    }

    // Both sifts move a "hole" instead of swapping: one 10-byte entry per level.
    fn sift_up(&mut self, mut i: usize) {
        let (Some(&c), Some(&id)) = (self.counts.get(i), self.ids.get(i)) else {
            return;
        };
        while i > 0 {
            let parent = (i - 1) / 2;
            let pc = self.count_at(parent);
            if pc <= c {
                break;
            }
            let pid = self.ids.get(parent).copied().unwrap_or(0);
            self.place(i, pc, pid);
            i = parent;
        }
        self.place(i, c, id);
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.slots.len();
        // Slices of the live heap: every index below is checked against `n` once, so
        // the compiler drops the per-access bounds checks (a 32-bit core pays for
        // each one in this loop).
        let (Some(counts), Some(ids)) = (self.counts.get_mut(..n), self.ids.get_mut(..n)) else {
            return;
        };
        let (Some(&c), Some(&id)) = (counts.get(i), ids.get(i)) else {
            return;
        };
        let slots = &mut self.slots;
        loop {
            let l = 2 * i + 1;
            let (Some(&lc), Some(&lid)) = (counts.get(l), ids.get(l)) else {
                break;
            };
            let (ch, cc, cid) = match (counts.get(l + 1), ids.get(l + 1)) {
                (Some(&rc), Some(&rid)) if rc < lc => (l + 1, rc, rid),
                _ => (l, lc, lid),
            };
            if c <= cc {
                break;
            }
            if let (Some(dc), Some(di)) = (counts.get_mut(i), ids.get_mut(i)) {
                *dc = cc;
                *di = cid;
            }
            if let Some(s) = slots.get_mut(cid as usize) {
                s.pos = i as u16;
            }
            i = ch;
        }
        if let (Some(dc), Some(di)) = (counts.get_mut(i), ids.get_mut(i)) {
            *dc = c;
            *di = id;
        }
        if let Some(s) = slots.get_mut(id as usize) {
            s.pos = i as u16;
        }
    }

    /// Adds a new key; the caller checked it is absent. No-op when full.
    pub(crate) fn push(&mut self, key: K, h: KeyHash, count: u64, error: u64) {
        if self.is_full() {
            return;
        }
        let id = self.slots.len();
        let tag = tag_of(h);
        let cell = self.index_insert(tag, id);
        if self
            .slots
            .push(Slot {
                key,
                error,
                tag,
                cell,
                pos: id as u16,
            })
            .is_ok()
        {
            self.place(id, count, id as u16);
            self.sift_up(id);
        }
    }

    /// Evicts the minimum and monitors `key` instead, in its slot; the caller checked
    /// it is absent.
    pub(crate) fn replace_min(&mut self, key: K, h: KeyHash, count: u64, error: u64) {
        if let Err(cell) = self.find_or_vacancy(&key, h) {
            self.replace_min_at(cell, key, h, count, error);
        }
    }

    /// [`replace_min`](Self::replace_min) for an absent key whose free index cell
    /// [`find_or_vacancy`](Self::find_or_vacancy) just returned (no change since).
    pub(crate) fn replace_min_at(
        &mut self,
        vacancy: usize,
        key: K,
        h: KeyHash,
        count: u64,
        error: u64,
    ) {
        let id = self.ids.first().copied().unwrap_or(0);
        if self.slots.is_empty() || self.cell(vacancy) != 0 {
            return;
        }
        let Some(s) = self.slots.get_mut(id as usize) else {
            return;
        };
        let old_cell = s.cell;
        // The new key takes the vacancy first (load ≤ (N + 1)/2N for a moment), then
        // the old key's cell is freed: the backward shift may move the new key's cell
        // and re-points the slot, which already holds the new tag.
        *s = Slot {
            key,
            error,
            tag: tag_of(h),
            cell: vacancy as u16,
            pos: 0,
        };
        self.set_cell(vacancy, id + 1);
        self.index_remove(old_cell as usize);
        if let Some(c) = self.counts.first_mut() {
            *c = count;
        }
        self.sift_down(0);
    }

    /// Sets the count of slot `id` to `count`, which must not be smaller.
    #[inline]
    pub(crate) fn raise(&mut self, id: usize, count: u64) {
        let Some(p) = self.slots.get(id).map(|s| s.pos as usize) else {
            return;
        };
        self.raise_at(p, count);
    }

    /// [`raise`](Self::raise) of the entry at heap position `p`.
    #[inline(always)]
    fn raise_at(&mut self, p: usize, count: u64) {
        let Some(c) = self.counts.get_mut(p) else {
            return;
        };
        if count <= *c {
            return;
        }
        *c = count;
        // Most raises leave the entry in place (an elephant stays below its parent
        // and at or under its children): check before entering the sift.
        let (l, n) = (2 * p + 1, self.slots.len());
        if l < n && (self.count_at(l) < count || (l + 1 < n && self.count_at(l + 1) < count)) {
            self.sift_down(p);
        }
    }

    /// Adds `w` to the count of slot `id` (saturating).
    #[inline]
    pub(crate) fn add(&mut self, id: usize, w: u64) {
        let Some(p) = self.slots.get(id).map(|s| s.pos as usize) else {
            return;
        };
        let c = self.count_at(p).saturating_add(w);
        self.raise_at(p, c);
    }

    /// Halves every count and error (monotone, so the heap order survives).
    pub(crate) fn halve(&mut self) {
        for c in &mut self.counts {
            *c >>= 1;
        }
        for s in &mut self.slots {
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
    ///
    /// The slots are written in place, each into its own `L + 20`-byte piece of the
    /// frame (no bounds-checked append per field): at the epoch end of the sample
    /// firmware, 128 flow keys of 38 bytes cost a Cortex-M4 a fraction of the
    /// field-by-field writes, with the same bytes (golden `space_saving.bin`).
    pub(crate) fn encode<const L: usize>(&self, enc: &mut loxo_core::wire::Encoder<'_>)
    where
        K: crate::WireKey<L>,
    {
        let n = self.slots.len();
        enc.put_u32(n as u32);
        enc.put_with(n * (L + 20), |dst| {
            let entries = self.counts.iter().zip(&self.ids);
            for (piece, (&count, &id)) in dst.chunks_exact_mut(L + 20).zip(entries) {
                let Some(s) = self.slots.get(id as usize) else {
                    // A heap position without its slot: no working heap has one.
                    piece.fill(0);
                    continue;
                };
                let (key, fields) = piece.split_at_mut(L);
                key.copy_from_slice(&s.key.to_wire());
                let (c, fields) = fields.split_at_mut(8);
                let (e, tag) = fields.split_at_mut(8);
                c.copy_from_slice(&count.to_le_bytes());
                e.copy_from_slice(&s.error.to_le_bytes());
                tag.copy_from_slice(&s.tag.to_le_bytes());
            }
        });
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
        for e in self.entries() {
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
            assert!(self.counts[(i - 1) / 2] <= self.counts[i], "heap order");
        }
        for i in 0..n {
            assert_eq!(self.slots[self.ids[i] as usize].pos as usize, i, "position");
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
                    let c = heap.count(p);
                    heap.raise(p, c + step % 5);
                }
                None if !heap.is_full() => heap.push(key, h(key), step % 7, 0),
                None => {
                    let m = heap.min_count().unwrap_or(0);
                    heap.replace_min(key, h(key), m + 1, m);
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
        let max = heap.entries().map(|e| e.count).max();
        assert_eq!(out.first().map(|e| e.count), max);
        heap.clear();
        heap.check();
        assert_eq!(heap.len(), 0);
    }
}
