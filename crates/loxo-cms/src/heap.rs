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
//! A third eviction finishes the first sift in full; to keep that off evictions'
//! frames, quiet updates move the first on further while two wait
//! ([`KeyHeap::settle_some_or`]).
//! Readers of heap order (reports, encodings) read the heap as the finished sifts
//! would leave it, computed along their paths. Counts
//! and bounds are final at once. Under a flood of one-packet flows, where an eviction
//! sifts about five levels of a 128-key heap, this moves about four of them off the
//! eviction's frame.
//!
//! The index is a two-choice **cuckoo table** of `N` buckets of two `u16` cells
//! (load ≤ ½), each cell holding `slot + 1` under the low bits of the key's hash
//! tag, which a sift never touches ([`KeyHeap::find_or_vacancy`]). A lookup reads
//! at most four cells and compares a key only where the tag's bits match; an
//! eviction frees one cell and fills one, moving no other key unless both of the
//! new key's buckets are full (then one of their four keys moves to its other
//! bucket if that has a free cell, else keys move in a random walk; if none frees a
//! cell, the index is rebuilt under another salt, and
//! after a few salts — only crafted tags get there — given up for a scan of the
//! slots until [`KeyHeap::clear`]). Lookup, insert, increase and replace-minimum
//! are O(log N) plus an expected O(1) index step. Against the Robin Hood table it
//! replaced (linear probing over `2N` cells, runs moved on every insertion and
//! removal), the firmware's candidates on issue 27's traffic classes (QEMU,
//! `firmware_cost_classes`): an eviction's `replace_min_deferred` 210 → 152
//! instructions on average, a probe 74–88 → 52, every class's mean per frame 3–8
//! less and its p99.9 40–160 less (but flood-v4's, 40 more).

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
    /// The cuckoo index ([`find_or_vacancy`](Self::find_or_vacancy)): `N` buckets of
    /// two cells, so the length is in the type; a cell is read as one indexed
    /// halfword of the flat `[u16]` (`as_flattened`).
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
    /// How far tags are rotated before they pick their buckets: 0 until an insertion
    /// finds no place ([`rebuild`](Self::rebuild)); back to 0 at
    /// [`clear`](Self::clear). A byte, and `scan` another, in the padding after
    /// `pending2` (the summaries' sizes are documented and pinned).
    salt: u8,
    /// The index was given up ([`rebuild`](Self::rebuild)): lookups compare every
    /// slot until [`clear`](Self::clear).
    scan: bool,
}

/// A second multiplier for a tag's second bucket (odd; the golden ratio's).
const SECOND: u32 = 0x9e37_79b9;
/// No index cell: both buckets full ([`KeyHeap::find_or_vacancy`]), or a slot with
/// no cell (only once the index is given up).
const NO_CELL: usize = usize::MAX;
/// Keys an insertion may move to their other buckets before the index is rebuilt.
const MAX_MOVES: usize = 64;
/// Salts tried by a rebuild before the index is given up.
const REBUILDS: usize = 4;
/// Multipliers of a move's choice of cell ([`KeyHeap::displace`]).
const WALK: (u32, u32) = (0x85eb_ca6b, 0xc2b2_ae35);

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

/// `a == b`, out of line: inlined into [`KeyHeap::find_or_vacancy`], a 40-byte flow
/// key's comparison had the compiler load the key sought into registers (and spill
/// them) before the first cell was read, on every probe — most of which compare no
/// key (a Cortex-M4 probe: 88 instructions on average in a flood's epoch).
#[inline(never)]
fn same_key<K: Eq>(a: &K, b: &K) -> bool {
    a == b
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
    /// Bits of an index cell holding its slot + 1 (`1..=N`).
    const ID_BITS: u32 = usize::BITS - N.leading_zeros();
    /// The cell's bits below [`ID_BITS`](Self::ID_BITS): its slot + 1.
    const CELL_ID: u16 = ((1u32 << Self::ID_BITS) - 1) as u16;
    /// The tag's low bits a cell keeps above them (`16 − ID_BITS`, at least 1).
    const FT_MASK: u16 = ((1u32 << (16 - Self::ID_BITS)) - 1) as u16;

    pub(crate) const fn new() -> Self {
        let () = Self::CHECK;
        Self {
            slots: heapless::Vec::new(),
            heap: [0; N],
            pos: [0; N],
            index: [[0; 2]; N],
            pending: 0,
            pending2: 0,
            salt: 0,
            scan: false,
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

    /// The two buckets a tag may live in (index cells `2b` and `2b + 1` each).
    #[inline(always)]
    fn buckets(&self, tag: u32) -> (usize, usize) {
        let t = tag.rotate_left(u32::from(self.salt));
        (Self::first(t), Self::second(t))
    }

    /// A rotated tag's first bucket: its high bits.
    #[inline(always)]
    fn first(t: u32) -> usize {
        reduce(u64::from(t) << 32, N as u32) as usize
    }

    /// A rotated tag's second bucket: the high bits of its product with [`SECOND`].
    #[inline(always)]
    fn second(t: u32) -> usize {
        reduce(u64::from(t.wrapping_mul(SECOND)) << 32, N as u32) as usize
    }

    /// The index cell of slot `id` under `tag`: the tag's low bits over `id + 1`.
    #[inline(always)]
    fn cell_value(tag: u32, id: usize) -> u16 {
        ((tag as u16) << Self::ID_BITS) | (id + 1) as u16
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

    /// `Ok(slot)` of `key` if monitored, else `Err(cell)`: a free index cell of its
    /// two buckets, where [`replace_min_at`](Self::replace_min_at) puts it without
    /// looking again — or [`NO_CELL`] when both are full (the insertion then moves
    /// a key to its other bucket).
    ///
    /// The index is a **two-choice cuckoo table of `N` buckets of two `u16` cells**
    /// (load ≤ ½): a key lives in one of the two buckets its tag picks, its cell
    /// holding the tag's low bits over its slot + 1, so a probe reads four cells
    /// and compares a key only where those bits match (`16 − ID_BITS` of them: 1
    /// in 256 cells for `N` = 128). Insertion and removal move no other cell —
    /// except when both buckets are full, when the insertion moves keys to their
    /// other buckets (one in 12 insertions in a churning 128-key table, at most 18
    /// moves in 300 000: a Python model). The Robin Hood table of `2N` cells it
    /// replaced probed 1.7 cells for an absent key but moved runs of cells on every
    /// insertion and removal: an eviction's index work (the evicted key's cell
    /// found, the new key's inserted, the old one's removed) was about 200
    /// Cortex-M4 instructions.
    #[inline]
    pub(crate) fn find_or_vacancy(&self, key: &K, h: KeyHash) -> Result<usize, usize> {
        self.find_or_vacancy_inline(key, h)
    }

    /// [`find_or_vacancy`](Self::find_or_vacancy) inlined, for the one call site
    /// where a probe is part of a flood's eviction (`SpaceSaving::update_unmonitored`):
    /// out of line it costs the call and the setup again (inlined everywhere, the
    /// firmware no longer fits its flash).
    #[inline(always)]
    pub(crate) fn find_or_vacancy_inline(&self, key: &K, h: KeyHash) -> Result<usize, usize> {
        let tag = tag_of(h);
        if self.scan {
            return self.scan_for(key, tag);
        }
        let t = tag.rotate_left(u32::from(self.salt));
        let want = tag as u16 & Self::FT_MASK;
        let mut vacancy = NO_CELL;
        // The first bucket, then the second (computed only if needed): a key is put
        // in its first when that has room, so most are found there.
        for b in [Self::first(t), Self::second(t)] {
            for p in [2 * b, 2 * b + 1] {
                let v = self.cell(p);
                if v == 0 {
                    if vacancy == NO_CELL {
                        vacancy = p;
                    }
                } else if v >> Self::ID_BITS == want {
                    let id = usize::from(v & Self::CELL_ID) - 1;
                    if self
                        .slots
                        .get(id)
                        .is_some_and(|s| s.tag == tag && same_key(&s.key, key))
                    {
                        return Ok(id);
                    }
                }
            }
        }
        Err(vacancy)
    }

    /// [`find_or_vacancy`](Self::find_or_vacancy) when the index is given up
    /// ([`rebuild`](Self::rebuild)): every slot compared.
    #[cold]
    #[inline(never)]
    fn scan_for(&self, key: &K, tag: u32) -> Result<usize, usize> {
        self.slots
            .iter()
            .position(|s| s.tag == tag && s.key == *key)
            .ok_or(NO_CELL)
    }

    /// The index cell of slot `id` (it holds a key), [`NO_CELL`] if none.
    fn cell_of(&self, id: usize) -> usize {
        let Some(s) = self.slots.get(id) else {
            return NO_CELL;
        };
        let want = Self::cell_value(s.tag, id);
        let (b1, b2) = self.buckets(s.tag);
        [2 * b1, 2 * b1 + 1, 2 * b2, 2 * b2 + 1]
            .into_iter()
            .find(|&p| self.cell(p) == want)
            .unwrap_or(NO_CELL)
    }

    /// Indexes slot `id` under `tag` (its key absent; at most `N` keys in `2N`
    /// cells): into a free cell of its buckets, else by moving keys to their other
    /// buckets ([`MAX_MOVES`] at most, then [`rebuild`](Self::rebuild)).
    fn index_insert(&mut self, tag: u32, id: usize) {
        if !self.scan && !self.index_place(tag, id) {
            self.rebuild();
        }
    }

    /// Puts slot `id` under `tag` into a free cell of its buckets, else by moving
    /// keys ([`displace`](Self::displace)): whether every key has a cell after.
    fn index_place(&mut self, tag: u32, id: usize) -> bool {
        let (b1, b2) = self.buckets(tag);
        let v = Self::cell_value(tag, id);
        if let Some(p) = [2 * b1, 2 * b1 + 1, 2 * b2, 2 * b2 + 1]
            .into_iter()
            .find(|&p| self.cell(p) == 0)
        {
            self.set_cell(p, v);
            true
        } else {
            self.one_move(b1, b2, v) || self.displace(b1, v)
        }
    }

    /// Both of a new key's buckets `b1`, `b2` full: moves one of their four keys to
    /// its other bucket if that has a free cell, and puts cell value `v` in its
    /// place; whether one could move. At the index's load (at most ½) a key's other
    /// bucket is free about four times in five, so one of four nearly always is: a
    /// random walk ([`displace`](Self::displace)) that tries one key at a time moved
    /// 2–7 keys on a third of the insertions that needed a move (Cortex-M4 evictions
    /// of 110–340 instructions more under a vertical scan).
    #[cold]
    #[inline(never)]
    fn one_move(&mut self, b1: usize, b2: usize, v: u16) -> bool {
        for (b, p) in [
            (b1, 2 * b1),
            (b1, 2 * b1 + 1),
            (b2, 2 * b2),
            (b2, 2 * b2 + 1),
        ] {
            let out = self.cell(p);
            let Some(s) = usize::from(out & Self::CELL_ID)
                .checked_sub(1)
                .and_then(|i| self.slots.get(i))
            else {
                continue;
            };
            let (c1, c2) = self.buckets(s.tag);
            let other = if b == c1 { c2 } else { c1 };
            if other == b {
                continue;
            }
            if let Some(q) = [2 * other, 2 * other + 1]
                .into_iter()
                .find(|&q| self.cell(q) == 0)
            {
                self.set_cell(q, out);
                self.set_cell(p, v);
                return true;
            }
        }
        false
    }

    /// Puts cell value `v` into bucket `b`, moving the key it displaces to its
    /// other bucket, and so on: whether a free cell was reached within
    /// [`MAX_MOVES`] (if not, the last key displaced is in no cell).
    #[cold]
    #[inline(never)]
    fn displace(&mut self, mut b: usize, mut v: u16) -> bool {
        for k in 0..MAX_MOVES as u32 {
            // Which cell of the bucket to take: a bit mixed from the move's number
            // and the key in hand, a random walk. (By the number alone, or by the
            // key alone, the walk cycles: in a Python model of a churning 128-key
            // table one insertion in 8 000–40 000 found no place; mixed, none in
            // 900 000.)
            let tag = self
                .slots
                .get(usize::from(v & Self::CELL_ID).wrapping_sub(1))
                .map_or(0, |s| s.tag);
            let x = (tag ^ k.wrapping_mul(WALK.0)).wrapping_mul(WALK.1);
            let p = 2 * b + (x >> 31) as usize;
            let out = self.cell(p);
            self.set_cell(p, v);
            v = out;
            let Some(s) = usize::from(v & Self::CELL_ID)
                .checked_sub(1)
                .and_then(|i| self.slots.get(i))
            else {
                return v == 0;
            };
            let (b1, b2) = self.buckets(s.tag);
            b = if b == b1 { b2 } else { b1 };
            if let Some(q) = [2 * b, 2 * b + 1].into_iter().find(|&q| self.cell(q) == 0) {
                self.set_cell(q, v);
                return true;
            }
        }
        false
    }

    /// Indexes every slot afresh under a new salt (the buckets' choice), when an
    /// insertion found no place: a few times, then gives the index up for good —
    /// until [`clear`](Self::clear) — and compares keys slot by slot
    /// ([`scan_for`](Self::scan_for)). Keyed digests make the first rare (a churning
    /// 128-key table never needed more than 18 moves of the [`MAX_MOVES`] in a
    /// model); only slots decoded from crafted bytes, their tags chosen to collide,
    /// reach the second.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self) {
        'salt: for _ in 0..REBUILDS {
            self.salt = (self.salt + 7) % 32;
            self.index = [[0; 2]; N];
            for id in 0..self.slots.len() {
                let Some(&Slot { tag, .. }) = self.slots.get(id) else {
                    continue;
                };
                if !self.index_place(tag, id) {
                    continue 'salt;
                }
            }
            return;
        }
        self.scan = true;
    }

    /// Frees index cell `p` ([`NO_CELL`]: nothing).
    #[inline(always)]
    fn index_remove(&mut self, p: usize) {
        self.set_cell(p, 0);
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

    /// Whether a deferred sift waits.
    #[inline(always)]
    pub(crate) const fn sift_waiting(&self) -> bool {
        self.pending != 0
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
        self.settle_some_or(levels, levels);
    }

    /// [`settle_some`](Self::settle_some), by at most `crowded` levels while two
    /// sifts wait: the next eviction would otherwise finish the first in full on its
    /// own frame (an update admitting nothing has the time to spare).
    #[inline]
    pub(crate) fn settle_some_or(&mut self, levels: usize, crowded: usize) {
        if self.pending != 0 {
            let p = self.pending as usize;
            let levels = if self.pending2 != 0 { crowded } else { levels };
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
        // The evicted key's cell, found before its slot takes the new key's tag, is
        // freed; the new key goes to the free cell its probe found, or (both its
        // buckets were full) wherever an insertion puts it.
        let old_cell = self.cell_of(id as usize);
        let Some(s) = self.slots.get_mut(id as usize) else {
            return;
        };
        let tag = tag_of(h);
        *s = Slot { key, error, tag };
        self.index_remove(old_cell);
        if vacancy != NO_CELL && self.cell(vacancy) == 0 && !self.scan {
            self.set_cell(vacancy, Self::cell_value(tag, id as usize));
        } else {
            self.index_insert(tag, id as usize);
        }
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
        self.salt = 0;
        self.scan = false;
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
        if self.scan {
            for s in &self.slots {
                let h = KeyHash::from_u64((s.tag as u64) << 32);
                assert!(self
                    .find(&s.key, h)
                    .is_some_and(|i| self.slots[i].key == s.key));
            }
            return;
        }
        let mut used = 0;
        for p in 0..2 * N {
            let v = self.cell(p);
            if v != 0 {
                used += 1;
                let id = usize::from(v & Self::CELL_ID) - 1;
                assert!(id < n, "a cell of a live slot");
                let tag = self.slots[id].tag;
                assert_eq!(v, Self::cell_value(tag, id), "the slot's tag bits");
                let (b1, b2) = self.buckets(tag);
                assert!(p / 2 == b1 || p / 2 == b2, "in one of its buckets");
                assert_eq!(self.cell_of(id), p, "found by its probe");
                let h = KeyHash::from_u64((tag as u64) << 32);
                assert_eq!(self.find(&self.slots[id].key, h), Some(id), "findable");
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
        // The monitor's size, keys churning through a full index (every cell in one
        // of its key's buckets, every key findable after each operation).
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
                2 => lazy.settle_some_or(1, 3),
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

    /// Churn through a full 128-key index moves keys to their other buckets now
    /// and then (both of a new key's buckets full): every move keeps every key
    /// findable (`check` after each operation, in `random_operations`), and no
    /// insertion gives up on the salt.
    #[test]
    fn cuckoo_moves_happen_and_keep_every_key() {
        let mut heap = KeyHeap::<u64, 128>::new();
        let (mut moved, mut walked, mut k) = (0, 0, 0u64);
        while heap.len() < 128 {
            heap.push(k, h(k), k, 0);
            k += 1;
        }
        for _ in 0..100_000 {
            let before = heap.index;
            let Err(vacancy) = heap.find_or_vacancy(&k, h(k)) else {
                unreachable!("a new key")
            };
            heap.replace_min_at(vacancy, k, h(k), k, 0);
            // Cells other than the evicted key's and the new key's changed: a move.
            let changed = before
                .as_flattened()
                .iter()
                .zip(heap.index.as_flattened())
                .filter(|(a, b)| a != b)
                .count();
            moved += usize::from(changed > 2);
            // One key moved: its old cell, its new one and the evicted key's. More
            // is a walk of several moves.
            walked += usize::from(changed > 3);
            k += 1;
        }
        heap.check();
        std::println!(
            "insertions that moved keys: {moved}, of them with more than one move: {walked}"
        );
        assert!(moved > 1_000, "moves: {moved}");
        // One move of one of four keys nearly always finds room (`one_move`: 2.5 %
        // of these insertions moved more); the random walk alone moved several keys
        // on 38 % of them.
        assert!(walked * 20 < moved, "{walked} walks in {moved} moves");
        assert_eq!((heap.salt, heap.scan), (0, false));
    }

    /// Five keys whose tags pick the same two buckets (four cells) cannot all be
    /// indexed: the insertion of the fifth rebuilds the index under another salt,
    /// where they spread.
    #[test]
    fn a_full_bucket_pair_rebuilds_under_another_salt() {
        let mut heap = KeyHeap::<u64, 16>::new();
        let mut by_pair = std::collections::HashMap::<(usize, usize), std::vec::Vec<u32>>::new();
        let mut tags = (1u32..).map(|t| t.wrapping_mul(0x2545_f491));
        let crowd = tags
            .find_map(|t| {
                let v = by_pair.entry(heap.buckets(t)).or_default();
                v.push(t);
                (v.len() == 5).then(|| v.clone())
            })
            .unwrap();
        for (i, &t) in crowd.iter().enumerate() {
            heap.push(i as u64, KeyHash::from_u64(u64::from(t) << 32), 1, 0);
            heap.check();
        }
        assert_ne!(heap.salt, 0, "rebuilt");
        assert!(!heap.scan);
        for (i, &t) in crowd.iter().enumerate() {
            let h = KeyHash::from_u64(u64::from(t) << 32);
            assert_eq!(heap.find(&(i as u64), h), Some(i));
        }
        heap.clear();
        assert_eq!(heap.salt, 0);
    }

    /// Keys that share one tag (slots decoded from crafted bytes, say) pick the same
    /// buckets under every salt: past four of them the index is given up, and every
    /// operation still finds every key, slot by slot, until `clear`.
    #[test]
    fn identical_tags_fall_back_to_comparing_every_slot() {
        let mut heap = KeyHeap::<u64, 16>::new();
        let tag = KeyHash::from_u64(0xdead_beef_0000_0000);
        for k in 0..16u64 {
            heap.push(k, tag, k + 1, 0);
            heap.check();
        }
        assert!(heap.scan, "given up");
        for k in 16..40u64 {
            assert_eq!(heap.find(&k, tag), None);
            let m = heap.min_count().unwrap();
            heap.replace_min(k, tag, m + 1, m);
            heap.check();
            assert!(heap.find(&k, tag).is_some());
        }
        assert_eq!(heap.find(&0, tag), None, "evicted");
        heap.clear();
        assert!(!heap.scan);
        heap.push(1, h(1), 1, 0);
        heap.check();
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
