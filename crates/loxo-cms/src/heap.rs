//! A bounded min-heap of keyed counts with a hash index: the candidate store shared
//! by [`SpaceSaving`](crate::SpaceSaving), [`HeavyKeeper`](crate::HeavyKeeper) and
//! [`CmsTopK`](crate::CmsTopK).
//!
//! Keys live in fixed **slots** (a `heapless::Vec`; a slot never moves). The heap is
//! *indirect*: one array in heap order of packed `u64` entries, the count in the
//! high 48 bits and the slot it belongs to in the low 16, ordered as a binary
//! min-heap on count, and an array of each slot's heap position. A sift therefore
//! moves one word pair per level, not a whole slot (56 bytes with a flow key: on a
//! Cortex-M4 that halved the Space-Saving update), compares packed entries directly
//! (the counts' order is at most one mask away) and re-points a slot with one
//! halfword store. Against separate count and slot arrays, a flood's Space-Saving
//! eviction on the Cortex-M4 (`replace_min_at`, IPv6 DDoS capture, QEMU) went from
//! 515 to 422 instructions, its sift from 351 to 251.
//!
//! Counts are held in 48 bits: a count reaching [`MAX_COUNT`] stays there and means
//! "at least `MAX_COUNT`". Such a count is reported and encoded as `MAX_COUNT` (so
//! the counts still add up to no more than the total, which decoding checks), with
//! the upper bound `u64::MAX` and the lower bound `MAX_COUNT − error`: every bound
//! stays true. Decoding reads a wire count of `MAX_COUNT` as saturated and refuses
//! one above it (no summary writes one: every accepted frame re-encodes to itself).
//!
//! **Deferred sifts.** An eviction may sift its new key down one level only and
//! leave the rest pending ([`KeyHeap::replace_min_deferred`]): the heap then holds one
//! entry that may exceed its children, never at the root, so the root is still the
//! minimum. Quiet updates move the sift on a few levels
//! ([`KeyHeap::settle_some`]); any update that changes the heap finishes it first.
//! An eviction that comes while a sift is still under way (a flood's evictions come
//! in clusters) does not finish it: it moves it at least two levels deep, out of
//! reach of its own first level, and leaves its own sift waiting second — at most
//! two wait, finished in order, so the heap ends exactly as eager sifts leave it.
//! Readers of heap order (reports, encodings) read the heap as the finished sifts
//! would leave it, computed along their paths. Counts
//! and bounds are final at once. Under a flood of one-packet flows, where an eviction
//! sifts about five levels of a 128-key heap, this moves about four of them off the
//! eviction's frame.
//!
//! The index is an open-addressing table of `2N` `u16` cells (linear probing, load
//! ≤ ½, backward-shift deletion) holding `slot + 1`, which a sift never touches.
//! Lookup, insert, increase and replace-minimum are O(log N) plus an expected O(1)
//! probe.

use loxo_core::{reduce, KeyHash};

use crate::entry::Entry;

/// One monitored key of a top-k summary, as stored (see [`Entry`] for reports).
///
/// Memory: `size_of::<K>()` + 8 (error) + 4 (hash tag), rounded up to the
/// alignment of `u64`: 24 bytes for a `u64` key, 56 for a 40-byte key. Each
/// monitored key also takes 10 bytes of heap (packed count and slot, and the slot's
/// heap position) and 4 of index: `size_of::<Slot<K>>() + 14` bytes in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot<K> {
    key: K,
    error: u64,
    /// High 32 bits of the key's digest: home cell in the index, cheap pre-compare.
    tag: u32,
}

/// The largest count a heap holds (2⁴⁸ − 1): a count reaching it saturates there.
pub const MAX_COUNT: u64 = (1 << 48) - 1;

/// The low bits of a packed heap entry: its slot.
const ID_MASK: u64 = 0xffff;

/// A heap entry: `count` (clamped to [`MAX_COUNT`]) over slot `id`.
#[inline(always)]
fn pack(count: u64, id: u16) -> u64 {
    count.min(MAX_COUNT) << 16 | u64::from(id)
}

/// The count of a packed entry (`MAX_COUNT` when saturated).
#[inline(always)]
fn count_of(e: u64) -> u64 {
    e >> 16
}

/// The upper bound of a packed entry's count: the count, or `u64::MAX` when
/// saturated.
#[inline(always)]
fn upper_of(e: u64) -> u64 {
    let c = count_of(e);
    if c >= MAX_COUNT {
        u64::MAX
    } else {
        c
    }
}

/// The slot of a packed entry.
#[inline(always)]
fn id_of(e: u64) -> u16 {
    (e & ID_MASK) as u16
}

/// Space-Saving's bounds on a count: `count − error ≤ f ≤ count`; the other summaries
/// replace the bounds they do not have. A saturated count ([`MAX_COUNT`]) has the
/// upper bound `u64::MAX`.
fn entry<K: Copy>(s: &Slot<K>, e: u64) -> Entry<K> {
    let count = count_of(e);
    Entry {
        key: s.key,
        count,
        lower: Some(count.saturating_sub(s.error)),
        upper: Some(upper_of(e)),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyHeap<K, const N: usize> {
    slots: heapless::Vec<Slot<K>, N>,
    /// Heap order: entry `i`, its count over its slot ([`pack`]).
    heap: [u64; N],
    /// By slot: the slot's position in `heap` (an array of its own, so a sift's
    /// re-pointing is one indexed halfword store).
    pos: [u16; N],
    /// `2N` cells as `N` pairs, so the length is in the type; read as one flat
    /// `[u16]` (`as_flattened`: a cell is one indexed halfword load, not a pair's
    /// load and a select — an eviction's index work on a Cortex-M4 29 instructions
    /// less on average, a probe 7).
    index: [[u16; 2]; N],
    /// The heap position of an entry whose sift down was deferred
    /// ([`replace_min_deferred`](Self::replace_min_deferred)): its count may exceed
    /// its children's. 0 when none — a deferred sift has always left the root, so the
    /// root is the minimum either way.
    pending: u16,
    /// A second deferred sift, from an eviction that came while `pending`'s was
    /// still under way (a flood's evictions come in clusters); 0 when none. It is
    /// finished after `pending`'s, and while both wait `pending` lies at least two
    /// levels deep, where the second's first level never reaches (see
    /// [`replace_min_deferred`](Self::replace_min_deferred)).
    pending2: u16,
}

/// The longest root-to-leaf path of a heap of at most 32 767 entries, plus one.
const DEPTH: usize = 16;

/// Where a deferred sift will move entries: `len` heap positions along one path and
/// the entry each will hold once the sift is done (see [`KeyHeap::settled`]).
struct Settled {
    at: [u16; DEPTH],
    entry: [u64; DEPTH],
    len: usize,
}

impl Settled {
    const NONE: Self = Self {
        at: [0; DEPTH],
        entry: [0; DEPTH],
        len: 0,
    };

    /// The entry at heap position `i` in the settled heap, given its current one.
    #[inline]
    fn get(&self, i: usize, current: u64) -> u64 {
        for (&a, &e) in self.at.iter().zip(&self.entry).take(self.len) {
            if a as usize == i {
                return e;
            }
        }
        current
    }
}

/// Both deferred sifts' moves: the first's, then the second's on the heap the first
/// leaves ([`KeyHeap::settled`]).
struct SettledPair {
    first: Settled,
    second: Settled,
}

impl SettledPair {
    /// The entry at heap position `i` once both sifts are done, given its current one.
    #[inline]
    fn get(&self, i: usize, current: u64) -> u64 {
        self.second.get(i, self.first.get(i, current))
    }
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
            heap: [0; N],
            pos: [0; N],
            index: [[0; 2]; N],
            pending: 0,
            pending2: 0,
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
            self.heap.first().map(|&e| count_of(e))
        }
    }

    /// Smallest monitored count as held (a saturated one is `MAX_COUNT`), 0 when
    /// empty: the update paths' admission test, without the report's widening.
    #[inline(always)]
    pub(crate) fn min_held(&self) -> u64 {
        if self.slots.is_empty() {
            0
        } else {
            self.heap.first().map_or(0, |&e| e >> 16)
        }
    }

    /// The count of slot `id`.
    pub(crate) fn count(&self, id: usize) -> u64 {
        self.position(id)
            .and_then(|p| self.heap.get(p))
            .map_or(0, |&e| count_of(e))
    }

    /// The count of `key`, if monitored.
    pub(crate) fn count_of(&self, key: &K, h: KeyHash) -> Option<u64> {
        self.find(key, h).map(|id| self.count(id))
    }

    /// The report view of slot `id` (Space-Saving's bounds).
    pub(crate) fn entry(&self, id: usize) -> Option<Entry<K>> {
        let (s, p) = (self.slots.get(id)?, self.position(id)?);
        self.heap.get(p).map(|&e| entry(s, e))
    }

    /// Every monitored entry in heap order (the minimum first) — the order of the
    /// settled heap, as if no sift had been deferred.
    pub(crate) fn entries(&self) -> impl Iterator<Item = Entry<K>> + '_ {
        let settled = self.settled();
        self.heap
            .iter()
            .take(self.slots.len())
            .enumerate()
            .filter_map(move |(i, &e)| {
                let e = settled.get(i, e);
                self.slots.get(id_of(e) as usize).map(|s| entry(s, e))
            })
    }

    /// The moves a deferred sift has yet to make, computed without making them: the
    /// heap as [`settle`](Self::settle) would leave it is the current one with these
    /// positions replaced. `&self` readers that expose heap order (reports, encodings)
    /// read through it, so a deferred sift never shows.
    fn settled(&self) -> SettledPair {
        let first = self.path(self.pending as usize, &Settled::NONE);
        let second = self.path(self.pending2 as usize, &first);
        SettledPair { first, second }
    }

    /// The moves of a sift down from position `i` (none if `i` is 0), on the heap as
    /// `before`'s moves leave it.
    fn path(&self, mut i: usize, before: &Settled) -> Settled {
        let mut out = Settled::NONE;
        let n = self.slots.len();
        let at = |j: usize| {
            self.heap
                .get(j)
                .filter(|_| j < n)
                .map(|&e| before.get(j, e))
        };
        let Some(e) = at(i).filter(|_| i != 0) else {
            return out;
        };
        let floor = e & !ID_MASK;
        for (a, x) in out.at.iter_mut().zip(out.entry.iter_mut()) {
            out.len += 1;
            *a = i as u16;
            let l = 2 * i + 1;
            let (ch, ce) = match (at(l), at(l + 1)) {
                (Some(le), Some(re)) if re < le & !ID_MASK => (l + 1, re),
                (Some(le), _) => (l, le),
                _ => (0, u64::MAX),
            };
            if ch == 0 || floor <= ce {
                *x = e;
                break;
            }
            *x = ce;
            i = ch;
        }
        out
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
        self.index.as_flattened().get(p).copied().unwrap_or(0)
    }

    #[inline(always)]
    fn set_cell(&mut self, p: usize, v: u16) {
        if let Some(c) = self.index.as_flattened_mut().get_mut(p) {
            *c = v;
        }
    }

    /// Slot of `key`, if monitored.
    #[inline]
    pub(crate) fn find(&self, key: &K, h: KeyHash) -> Option<usize> {
        self.find_or_vacancy(key, h).ok()
    }

    /// How far index cell `p` is from `tag`'s home cell (cyclically).
    #[inline(always)]
    fn dist(p: usize, tag: u32) -> usize {
        let h = Self::home(tag);
        if p >= h {
            p - h
        } else {
            p + Self::CELLS - h
        }
    }

    /// `Ok(slot)` of `key` if monitored, else `Err(cell)`: the index cell where its
    /// probe stopped — where [`replace_min_at`](Self::replace_min_at) inserts it
    /// without probing again.
    ///
    /// The index keeps **Robin Hood order**: along every run of occupied cells the
    /// keys' home cells never decrease (cyclically), so a probe for an absent key
    /// stops at the first key whose home lies past its own (that key is nearer its
    /// home than the probe is to its own) instead of at the run's end. With `N` keys
    /// in `2N` cells that cut an absent key's probe from 2.5 cells on average (p99 12,
    /// p99.9 19: a Python model of the table) to 1.7 (p99 5, p99.9 6) — a Cortex-M4
    /// frame that probed for an evicted candidate's flow spent up to 413 instructions
    /// in the probe.
    #[inline]
    pub(crate) fn find_or_vacancy(&self, key: &K, h: KeyHash) -> Result<usize, usize> {
        let tag = tag_of(h);
        let mut p = Self::home(tag);
        for d in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            let Some(s) = v.checked_sub(1).and_then(|i| self.slots.get(i)) else {
                return Err(p);
            };
            if s.tag == tag {
                if s.key == *key {
                    return Ok(v - 1);
                }
            } else if Self::dist(p, s.tag) < d {
                return Err(p);
            }
            p = Self::next(p);
        }
        Err(p)
    }

    /// Points index cell `p` — where a probe for slot `id`'s key stopped — at slot
    /// `id`, moving the keys from `p` to the run's end one cell on (their order, and
    /// so Robin Hood order, kept). Returns where the cell at `watch` went (the
    /// evicted key's, whose slot `id` already is).
    ///
    /// Slots keep no pointer back to their cell (a move is one halfword load and
    /// store): [`cell_of`](Self::cell_of) finds a slot's cell by probing.
    fn index_insert_at(&mut self, p: usize, id: usize, watch: usize) -> usize {
        let mut carry = self.cell(p);
        self.set_cell(p, (id + 1) as u16);
        let (mut from, mut watched) = (p, watch);
        for _ in 0..Self::CELLS {
            if carry == 0 {
                break;
            }
            let q = Self::next(from);
            let v = self.cell(q);
            self.set_cell(q, carry);
            if from == watch {
                watched = q;
            }
            (carry, from) = (v, q);
        }
        watched
    }

    /// The index cell of slot `id` (it holds a key): the probe from its key's home
    /// cell, as long as the key's run up to it (Robin Hood order keeps it short: 1.5
    /// cells on average at load ½).
    fn cell_of(&self, id: usize) -> usize {
        let Some(s) = self.slots.get(id) else {
            return 0;
        };
        let want = (id + 1) as u16;
        let mut p = Self::home(s.tag);
        for _ in 0..Self::CELLS {
            if self.cell(p) == want {
                return p;
            }
            p = Self::next(p);
        }
        p
    }

    /// Indexes slot `id` under `tag` (its key absent, a free cell certain: load ≤ ½).
    fn index_insert(&mut self, tag: u32, id: usize) {
        let mut p = Self::home(tag);
        for d in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            match v.checked_sub(1).and_then(|i| self.slots.get(i)) {
                Some(s) if Self::dist(p, s.tag) >= d => p = Self::next(p),
                _ => break,
            }
        }
        self.index_insert_at(p, id, usize::MAX);
    }

    /// Frees index cell `p` and moves the rest of its run back one cell until a key
    /// at its home or a free cell (Robin Hood backward shift: no tombstones, the
    /// order kept).
    fn index_remove(&mut self, p: usize) {
        let mut hole = p;
        for _ in 0..Self::CELLS {
            let j = Self::next(hole);
            let v = self.cell(j);
            let Some(s) = (v as usize).checked_sub(1).and_then(|i| self.slots.get(i)) else {
                break;
            };
            if Self::home(s.tag) == j {
                break;
            }
            self.set_cell(hole, v);
            hole = j;
        }
        self.set_cell(hole, 0);
    }

    #[inline(always)]
    fn at(&self, i: usize) -> u64 {
        self.heap.get(i).copied().unwrap_or(u64::MAX)
    }

    /// Writes packed entry `e` at heap position `to` and re-points its slot.
    #[inline(always)]
    fn place(&mut self, to: usize, e: u64) {
        if let Some(d) = self.heap.get_mut(to) {
            *d = e;
        }
        if let Some(p) = self.pos.get_mut(id_of(e) as usize) {
            *p = to as u16;
        }
    }

    // Both sifts move a "hole" instead of swapping: one packed entry per level. Their
    // comparisons are on counts alone (ties keep their places, as with separate
    // count and slot arrays), each at most one mask away from a packed compare.
    fn sift_up(&mut self, mut i: usize) {
        let Some(&e) = self.heap.get(i) else {
            return;
        };
        // `parent's count ≤ e's count` ⟺ `parent ≤ e | ID_MASK`.
        let top = e | ID_MASK;
        while i > 0 {
            let parent = (i - 1) / 2;
            let pe = self.at(parent);
            if pe <= top {
                break;
            }
            self.place(i, pe);
            i = parent;
        }
        self.place(i, e);
    }

    fn sift_down(&mut self, i: usize) {
        self.sift_down_for(i, usize::MAX);
    }

    /// Sifts the entry at `i` down at most `levels` levels (at least one); returns
    /// where it stopped short — its count may still exceed its children's — or 0 when
    /// it is in place.
    fn sift_down_for(&mut self, mut i: usize, levels: usize) -> usize {
        let mut left = levels.max(1);
        let n = self.slots.len();
        // A slice of the live heap: every index below is checked against `n` once, so
        // the compiler drops the per-access bounds checks (a 32-bit core pays for
        // each one in this loop).
        let pos = &mut self.pos;
        let Some(heap) = self.heap.get_mut(..n) else {
            return 0;
        };
        let Some(&e) = heap.get(i) else {
            return 0;
        };
        // `e's count ≤ child's count` ⟺ `e & !ID_MASK ≤ child`.
        let floor = e & !ID_MASK;
        let mut short = 0;
        loop {
            if left == 0 {
                short = i;
                break;
            }
            left -= 1;
            let l = 2 * i + 1;
            // Both children in one bounds check; the last parent may have one.
            let (ch, ce) = match heap.get(l..l + 2) {
                // The right child only if its count is smaller:
                // `right's count < left's` ⟺ `right < left & !ID_MASK`.
                Some(&[le, re]) => {
                    if re < le & !ID_MASK {
                        (l + 1, re)
                    } else {
                        (l, le)
                    }
                }
                _ => match heap.get(l) {
                    Some(&le) => (l, le),
                    None => break,
                },
            };
            if floor <= ce {
                break;
            }
            if let Some(d) = heap.get_mut(i) {
                *d = ce;
            }
            if let Some(p) = pos.get_mut(id_of(ce) as usize) {
                *p = i as u16;
            }
            i = ch;
        }
        if let Some(d) = heap.get_mut(i) {
            *d = e;
        }
        if let Some(p) = pos.get_mut(id_of(e) as usize) {
            *p = i as u16;
        }
        short
    }

    /// Finishes the deferred sifts, if any: every update that changes the heap
    /// starts here, so only evictions leave sifts deferred (at most two).
    #[inline]
    pub(crate) fn settle(&mut self) {
        // `pending2` waits only with `pending`: one test on the common path.
        if self.pending != 0 {
            self.settle_both();
        }
    }

    #[inline(never)]
    fn settle_both(&mut self) {
        let (p, p2) = (self.pending as usize, self.pending2 as usize);
        self.pending = 0;
        self.pending2 = 0;
        self.sift_down(p);
        if p2 != 0 {
            self.sift_down(p2);
        }
    }

    /// Moves a deferred sift on by at most `levels` levels (spare time of a frame
    /// that changed nothing in the heap).
    #[inline]
    pub(crate) fn settle_some(&mut self, levels: usize) {
        if self.pending != 0 {
            let p = self.pending as usize;
            self.pending = self.sift_down_for(p, levels) as u16;
            if self.pending == 0 {
                self.pending = self.pending2;
                self.pending2 = 0;
            }
        }
    }

    /// Adds a new key; the caller checked it is absent. No-op when full.
    pub(crate) fn push(&mut self, key: K, h: KeyHash, count: u64, error: u64) {
        if self.is_full() {
            return;
        }
        self.settle();
        let id = self.slots.len();
        let tag = tag_of(h);
        if self.slots.push(Slot { key, error, tag }).is_ok() {
            self.index_insert(tag, id);
            self.place(id, pack(count, id as u16));
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
        self.replace_min_deferred(vacancy, key, h, count, error, usize::MAX);
    }

    /// [`replace_min_at`](Self::replace_min_at) that sifts the new key down at most
    /// `levels` levels (at least one) and defers the rest: to the next update that
    /// changes the heap, or to [`settle_some`](Self::settle_some). Every count and
    /// bound is final at once; the order only is not, and readers of the order see
    /// the settled heap.
    pub(crate) fn replace_min_deferred(
        &mut self,
        vacancy: usize,
        key: K,
        h: KeyHash,
        count: u64,
        error: u64,
        levels: usize,
    ) {
        // Room for this sift: at most one other may wait, at least two levels deep
        // (positions 1 and 2 are the root's children, which this sift's first level
        // compares: they must be their subtrees' minima). A longer sift here waits
        // for none.
        if levels > 1 || self.pending2 != 0 {
            let (p, p2) = (self.pending as usize, self.pending2 as usize);
            self.pending = 0;
            self.pending2 = 0;
            if p != 0 {
                self.sift_down(p);
            }
            self.pending = p2 as u16;
        }
        if levels > 1 {
            self.settle();
        } else if self.pending != 0 && self.pending <= 2 {
            let p = self.pending as usize;
            self.pending = self.sift_down_for(p, 1) as u16;
        }
        let id = self.heap.first().map_or(0, |&e| id_of(e));
        if self.slots.is_empty() {
            return;
        }
        // The evicted key's cell, found before its slot takes the new key's tag.
        let old_cell = self.cell_of(id as usize);
        let Some(s) = self.slots.get_mut(id as usize) else {
            return;
        };
        // The new key takes its place in the index first (load ≤ (N + 1)/2N for a
        // moment), moving the evicted key's cell along if it lies past it; then that
        // cell is freed: the backward shift may move the new key's cell (found by
        // probing from the new tag, which the slot already holds).
        *s = Slot {
            key,
            error,
            tag: tag_of(h),
        };
        let old_cell = self.index_insert_at(vacancy, id as usize, old_cell);
        self.index_remove(old_cell);
        if let Some(e) = self.heap.first_mut() {
            *e = pack(count, id);
        }
        let p = self.sift_down_for(0, levels) as u16;
        if self.pending == 0 {
            self.pending = p;
        } else {
            self.pending2 = p;
        }
    }

    /// Slot `id`'s heap position, if the slot holds a key.
    #[inline(always)]
    fn position(&self, id: usize) -> Option<usize> {
        self.slots
            .get(id)
            .and(self.pos.get(id))
            .map(|&p| p as usize)
    }

    /// Sets the count of slot `id` to `count`, which must not be smaller.
    #[inline]
    pub(crate) fn raise(&mut self, id: usize, count: u64) {
        self.settle();
        let Some(p) = self.position(id) else {
            return;
        };
        self.raise_at(p, count);
    }

    /// [`raise`](Self::raise) of the entry at heap position `p`.
    #[inline(always)]
    fn raise_at(&mut self, p: usize, count: u64) {
        let Some(e) = self.heap.get_mut(p) else {
            return;
        };
        let raised = pack(count, id_of(*e));
        if raised <= *e {
            return;
        }
        *e = raised;
        // Most raises leave the entry in place (an elephant stays below its parent
        // and at or under its children): check before entering the sift. A child's
        // count is below the new one ⟺ the child is below `raised & !ID_MASK`.
        let (l, n, floor) = (2 * p + 1, self.slots.len(), raised & !ID_MASK);
        if l < n && (self.at(l) < floor || (l + 1 < n && self.at(l + 1) < floor)) {
            self.sift_down(p);
        }
    }

    /// Adds `w` to the count of slot `id` (saturating).
    #[inline]
    pub(crate) fn add(&mut self, id: usize, w: u64) {
        self.settle();
        let Some(p) = self.position(id) else {
            return;
        };
        let c = (self.at(p) >> 16).saturating_add(w);
        self.raise_at(p, c);
    }

    /// Halves every count and error (monotone, so the heap order survives). A
    /// saturated count stays saturated (its upper bound is still unknown); its lower
    /// bound `MAX_COUNT − error` halves, through its error.
    pub(crate) fn halve(&mut self) {
        self.settle();
        let n = self.slots.len();
        let slots = &mut self.slots;
        for e in self.heap.iter_mut().take(n) {
            let Some(s) = slots.get_mut(id_of(*e) as usize) else {
                continue;
            };
            if *e >> 16 >= MAX_COUNT {
                s.error = MAX_COUNT - (MAX_COUNT - s.error.min(MAX_COUNT)) / 2;
            } else {
                *e = (*e >> 17) << 16 | (*e & ID_MASK);
                s.error >>= 1;
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.index = [[0; 2]; N];
        self.pending = 0;
        self.pending2 = 0;
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
        let settled = self.settled();
        enc.put_u32(n as u32);
        enc.put_with(n * (L + 20), |dst| {
            for (i, (piece, &e)) in dst.chunks_exact_mut(L + 20).zip(&self.heap).enumerate() {
                let e = settled.get(i, e);
                let (count, id) = (count_of(e), id_of(e));
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
            // No summary writes a count above MAX_COUNT (saturated counts are written
            // as MAX_COUNT): refused, so that every accepted frame re-encodes to itself.
            if error > count || count > MAX_COUNT {
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
            // A deferred sift's entry may exceed its children, and only it.
            let parent = (i - 1) / 2;
            assert!(
                parent == self.pending as usize
                    || parent == self.pending2 as usize
                    || self.heap[parent] >> 16 <= self.heap[i] >> 16,
                "heap order"
            );
        }
        assert!(
            self.pending == 0 || (self.pending as usize) < n,
            "pending in the heap"
        );
        assert!(
            self.pending2 == 0 || self.pending != 0,
            "the second waits on a first"
        );
        assert!(
            self.pending2 == 0 || (self.pending2 as usize) < n && self.pending > 2,
            "the first two levels deep while a second waits"
        );
        for i in 0..n {
            assert_eq!(
                self.pos[id_of(self.heap[i]) as usize] as usize,
                i,
                "position"
            );
        }
        let mut used = 0;
        for p in 0..Self::CELLS {
            let v = self.cell(p) as usize;
            if v != 0 {
                used += 1;
                assert_eq!(self.cell_of(v - 1), p, "found by its probe");
                // Robin Hood order: a key off its home follows an occupied cell whose
                // key is at least as far from its own home, less one.
                let d = Self::dist(p, self.slots[v - 1].tag);
                if d > 0 {
                    let q = (p + Self::CELLS - 1) % Self::CELLS;
                    let u = self.cell(q) as usize;
                    assert!(u != 0, "run unbroken");
                    assert!(
                        Self::dist(q, self.slots[u - 1].tag) + 1 >= d,
                        "Robin Hood order"
                    );
                }
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
    #![allow(clippy::unwrap_used)]
    extern crate std;
    use super::*;

    fn h(k: u64) -> KeyHash {
        KeyHash::from_u64(loxo_core::mix64(k.wrapping_add(0x1234_5678)))
    }

    #[test]
    fn random_operations_keep_invariants() {
        random_operations::<13>(40, 20_000);
        // The monitor's size, keys churning through a full index (Robin Hood order,
        // back pointers and every key findable after each operation).
        random_operations::<128>(400, 6_000);
    }

    /// A heap whose evictions defer their sifts (one level at once, then a level or
    /// two now and then, as a monitor's quiet frames give them) reads exactly as one
    /// that sifts at once, after every operation: the same entries in the same order,
    /// the same minimum, the same bytes encoded.
    #[test]
    fn deferred_sifts_read_as_eager_ones() {
        deferred_against_eager::<13>(40, 20_000);
        deferred_against_eager::<128>(400, 20_000);
        deferred_against_eager::<1>(3, 200);
    }

    fn bytes<const N: usize>(heap: &KeyHeap<u64, N>) -> std::vec::Vec<u8> {
        use loxo_core::wire::{frame_len, Encoder, Header, SketchKind};
        let len = heap.encoded_len::<8>();
        let mut buf = std::vec![0u8; frame_len(len)];
        let header = Header::new(SketchKind::SpaceSaving, 0, [0; 4], len as u32);
        let mut enc = Encoder::new(&mut buf, &header).unwrap();
        heap.encode::<8>(&mut enc);
        let n = enc.finish();
        buf.truncate(n);
        buf
    }

    fn deferred_against_eager<const N: usize>(keys: u64, steps: u64) {
        let (mut eager, mut lazy) = (KeyHeap::<u64, N>::new(), KeyHeap::<u64, N>::new());
        let mut x = 7u64;
        let (mut deferred, mut both) = (0, 0);
        for step in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly a flood of new keys (evictions), some repeats (raises).
            let key = if x.is_multiple_of(4) { x % 8 } else { x % keys };
            match (
                eager.find_or_vacancy(&key, h(key)),
                lazy.find_or_vacancy(&key, h(key)),
            ) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b);
                    eager.add(a, step % 5);
                    lazy.add(b, step % 5);
                }
                (Err(_), Err(_)) if !eager.is_full() => {
                    eager.push(key, h(key), step % 7, 0);
                    lazy.push(key, h(key), step % 7, 0);
                }
                (Err(a), Err(b)) => {
                    assert_eq!(eager.min_held(), lazy.min_held());
                    let m = eager.min_held();
                    let c = m + 1 + x % 3;
                    eager.replace_min_at(a, key, h(key), c, m);
                    lazy.replace_min_deferred(b, key, h(key), c, m, 1);
                }
                (a, b) => panic!("found {a:?} and {b:?}"),
            }
            deferred += usize::from(lazy.pending != 0);
            both += usize::from(lazy.pending2 != 0);
            match x % 5 {
                0 => lazy.settle_some(1),
                1 => lazy.settle_some(2),
                _ => {}
            }
            if step % 997 == 0 {
                eager.halve();
                lazy.halve();
            }
            lazy.check();
            assert_eq!(eager.min_count(), lazy.min_count());
            assert!(eager.entries().eq(lazy.entries()), "order at step {step}");
            if step % 101 == 0 {
                assert_eq!(bytes(&eager), bytes(&lazy), "encoding at step {step}");
            }
        }
        if N > 1 {
            assert!(
                deferred > steps as usize / 10,
                "sifts were deferred: {deferred}"
            );
        }
        if N > 13 {
            // Clustered evictions: two sifts waiting at once.
            assert!(both > steps as usize / 100, "two sifts deferred: {both}");
        }
        lazy.settle();
        assert_eq!(lazy, eager);
    }

    fn random_operations<const N: usize>(keys: u64, steps: u64) {
        let mut heap = KeyHeap::<u64, N>::new();
        let mut x = 1u64;
        for step in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % keys;
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

    #[test]
    fn counts_saturate_at_max_count_with_true_bounds() {
        let mut heap = KeyHeap::<u64, 4>::new();
        heap.push(1, h(1), 5, 0);
        heap.push(2, h(2), MAX_COUNT - 10, 100);
        heap.push(3, h(3), 7, 2);
        heap.check();
        // Past MAX_COUNT: saturated, reported as u64::MAX, lower bound from MAX_COUNT.
        let id = heap.find(&2, h(2)).unwrap();
        heap.add(id, 1_000);
        heap.check();
        let e = heap.entry(id).unwrap();
        assert_eq!((e.count, e.upper), (MAX_COUNT, Some(u64::MAX)));
        assert_eq!(e.lower, Some(MAX_COUNT - 100));
        // Raising further, or by u64::MAX, changes nothing and never wraps.
        heap.add(id, u64::MAX);
        assert_eq!(heap.entry(id).unwrap().lower, Some(MAX_COUNT - 100));
        // A push or replacement beyond MAX_COUNT saturates too, and keeps heap order.
        heap.push(4, h(4), u64::MAX - 1, 0);
        heap.check();
        assert_eq!(heap.count_of(&4, h(4)), Some(MAX_COUNT));
        heap.replace_min(5, h(5), u64::MAX, 1);
        heap.check();
        assert_eq!(heap.min_count(), Some(7));
        assert_eq!(heap.count_of(&5, h(5)), Some(MAX_COUNT));
        // Halving: the others halve, a saturated count stays saturated (its upper
        // bound is still unknown) and its lower bound halves.
        heap.halve();
        heap.check();
        assert_eq!(heap.count_of(&3, h(3)), Some(3));
        let e = heap.entry(heap.find(&2, h(2)).unwrap()).unwrap();
        assert_eq!((e.count, e.upper), (MAX_COUNT, Some(u64::MAX)));
        assert_eq!(e.lower, Some((MAX_COUNT - 100) / 2));
        assert_eq!(heap.min_held(), 3);
    }

    #[test]
    fn a_decoded_count_of_max_count_is_saturated_and_one_above_refused() {
        let record = |bytes: &mut std::vec::Vec<u8>, key: u64, count: u64, error: u64| {
            bytes.extend(key.to_le_bytes());
            bytes.extend(count.to_le_bytes());
            bytes.extend(error.to_le_bytes());
            bytes.extend(((h(key).get() >> 32) as u32).to_le_bytes());
        };
        let mut above = 1u32.to_le_bytes().to_vec();
        record(&mut above, 2, MAX_COUNT + 1, 3);
        assert_eq!(
            KeyHeap::<u64, 4>::validate::<8>(&above),
            Err(loxo_core::DecodeError::InvalidValue)
        );
        let mut bytes = 2u32.to_le_bytes().to_vec();
        for (key, count, error) in [(1u64, 10u64, 0u64), (2, MAX_COUNT, 3)] {
            record(&mut bytes, key, count, error);
        }
        assert_eq!(KeyHeap::<u64, 4>::validate::<8>(&bytes), Ok(()));
        let mut heap = KeyHeap::<u64, 4>::new();
        heap.decode_validated::<8>(&bytes);
        heap.check();
        assert_eq!(heap.count_of(&1, h(1)), Some(10));
        let e = heap.entry(heap.find(&2, h(2)).unwrap()).unwrap();
        assert_eq!(
            (e.count, e.lower, e.upper),
            (MAX_COUNT, Some(MAX_COUNT - 3), Some(u64::MAX))
        );
    }
}
