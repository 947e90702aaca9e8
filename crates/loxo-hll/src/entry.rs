//! The high-precision list entries of the sparse modes ([`HllSparse`](crate::HllSparse)
//! and [`Ull::new_sparse`](crate::Ull::new_sparse)), and the open-addressing table
//! both keep them in, inside their register bytes.
//!
//! # Entries
//!
//! One **entry** per distinct pair (25-bit index, rank) of the keys' digests
//! (HLL++'s `p' = 25`, Heule et al. 2013): the little-endian `u32`
//! `index25 << 6 | rank25`, `index25` the top 25 bits of the digest and `rank25`
//! the leading zeros of the other 39 bits plus one (`1 ..= 40`). An entry determines
//! the register update its keys make at every precision `P ≤ 25` ([`entry_update`]), so converting a list to
//! registers is exact. An entry is never 0 (its rank is ≥ 1): 0 marks a free slot.
//!
//! # Estimate
//!
//! `k` entries stand for `n` distinct keys minus the pairs two keys share: a pair
//! has probability `2^−25·2^−rank`, so two keys collide with probability
//! `q = 2^−25·Σ_r 4^−r = 2^−25/3` and `E[k] = n − q·n²/2 + O(q²n³)`. The estimate
//! `k + q·k²/2` ([`list_estimate`]) is unbiased to that order; its error is the
//! deviation of the number of colliding pairs (about Poisson with mean `q·n²/2`)
//! from its mean: relative standard error `√(q/2) = 7.0·10^−5`, at every `n` a list
//! holds. Checked by `tests/tests/sparse_accuracy.rs`.
//!
//! # The table ([`EntryTable`])
//!
//! The register bytes are read as slots of one little-endian `u32` each. An entry
//! sits in the first free slot from its home slot on (linear probing, wrapping at
//! the end), at most 3/4 of the slots used, so a free slot always exists. Each
//! sketch chooses the home slot so that the registers an entry updates lie in
//! slots the in-place conversion has already visited (see the sketches' module
//! docs): walking the slots once from just after a free slot, each entry is read,
//! its slot zeroed and its update applied to the registers.

/// Index bits of an entry (HLL++'s `p'`).
pub(crate) const SPARSE_P: u32 = 25;
/// Largest `rank25` (all 39 bits below the index zero).
pub(crate) const MAX_RANK25: u32 = 64 - SPARSE_P + 1;
/// `q/2`, `q = 2^−25·Σ_{r=1}^{39} 4^−r + 2^−25·4^−39 = 2^−25/3` (to 10^−23): half
/// the probability that two keys share an entry.
const HALF_Q: f64 = 1.0 / (6.0 * (1u64 << SPARSE_P) as f64);

/// The entry of a digest: `index25 << 6 | rank25`.
#[inline(always)]
pub(crate) const fn entry_of(h: u64) -> u32 {
    let index = (h >> (64 - SPARSE_P)) as u32;
    // The sentinel bit caps the leading zeros of the 39 low bits at 39.
    let rank = ((h << SPARSE_P) | (1 << (SPARSE_P - 1))).leading_zeros() + 1;
    index << 6 | rank
}

/// Whether `e` is an entry a digest can produce.
pub(crate) const fn is_valid_entry(e: u32) -> bool {
    let rank = e & 63;
    e >> 31 == 0 && rank >= 1 && rank <= MAX_RANK25
}

/// The register index an entry stands for at precision `p ≤ 25` and its update
/// value `u` (the `Hll` rank), in `1 ..= 65 − p`: the `d = 25 − p` index bits the
/// precision drops move into the rank's bit string, so `u` is the leading zeros of
/// those `d` bits plus one, or `d + rank25` when they are all zero (at most
/// `25 − p + 40 = 65 − p`, the largest rank of precision `p`: no cap needed).
#[inline(always)]
pub(crate) const fn entry_update(e: u32, p: u8) -> (usize, u32) {
    let d = SPARSE_P - p as u32;
    let index25 = e >> 6;
    let low = index25 & ((1 << d) - 1);
    let u = if low == 0 {
        d + (e & 63)
    } else {
        d - (32 - low.leading_zeros()) + 1
    };
    ((index25 >> d) as usize, u)
}

/// The estimate of a list of `k` entries, `k + q·k²/2` (module docs); also the
/// martingale value of a list, which decoders take from the count.
pub(crate) fn list_estimate(k: u32) -> f64 {
    let k = f64::from(k);
    k + HALF_Q * k * k
}

/// The little-endian `u32` of up to four bytes (missing high bytes are 0).
pub(crate) fn le_u32(e: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    if let Some(dst) = w.get_mut(..e.len()) {
        dst.copy_from_slice(e);
    }
    u32::from_le_bytes(w)
}

/// A sketch that keeps its list of entries as an open-addressing table in its
/// register bytes (module docs). The probing, the walks and the in-place
/// conversion are written here once; a sketch says where the table is, how many
/// slots it has, where an entry's home is and how an entry updates its registers.
pub(crate) trait EntryTable {
    /// Slots of the table (`u32` each).
    const SLOTS: usize;
    /// Most entries the list holds (at most 3/4 of [`SLOTS`](Self::SLOTS)).
    const LIST_CAPACITY: u32;

    /// The home slot of an entry.
    fn home(e: u32) -> usize;
    /// The register bytes that hold the table.
    fn table(&self) -> &[u8];
    /// The register bytes that hold the table, writable.
    fn table_mut(&mut self) -> &mut [u8];
    /// Whether the sketch holds a list now.
    fn is_list(&self) -> bool;
    /// Entries in the list.
    fn entries_len(&self) -> u32;
    /// Records the number of entries in the list.
    fn set_entries_len(&mut self, n: u32);
    /// Converts the list to registers (the sketch's own bookkeeping around
    /// [`convert_in_place`](Self::convert_in_place)).
    fn convert(&mut self);
    /// Applies entry `e`'s register update to the register bytes, during the
    /// in-place conversion (the table and the registers share the bytes).
    fn apply_in_place(&mut self, e: u32);

    /// The slot after `s`, wrapping (a compare, no `%`: the slot count need not
    /// be a power of two).
    #[inline(always)]
    fn next(s: usize) -> usize {
        if s + 1 >= Self::SLOTS {
            0
        } else {
            s + 1
        }
    }

    /// Slot `s` (0 = free).
    fn slot(&self, s: usize) -> u32 {
        self.table().get(4 * s..4 * s + 4).map_or(0, le_u32)
    }

    /// Writes slot `s`.
    fn set_slot(&mut self, s: usize, e: u32) {
        if let Some(dst) = self.table_mut().get_mut(4 * s..4 * s + 4) {
            dst.copy_from_slice(&e.to_le_bytes());
        }
    }

    /// Inserts `e` into the table: `Some(whether it was new)`, or `None` after
    /// converting to registers because the list was full.
    fn list_insert(&mut self, e: u32) -> Option<bool> {
        let mut s = Self::home(e);
        // Ends at a free slot within `SLOTS` probes: at most 3/4 are used.
        for _ in 0..Self::SLOTS {
            match self.slot(s) {
                0 => break,
                x if x == e => return Some(false),
                _ => s = Self::next(s),
            }
        }
        if self.entries_len() >= Self::LIST_CAPACITY || self.slot(s) != 0 {
            self.convert();
            return None;
        }
        self.set_slot(s, e);
        self.set_entries_len(self.entries_len() + 1);
        Some(true)
    }

    /// Empties the table into the registers in one pass, in place (module docs):
    /// from just after a free slot `f` up to the slot before it (`f` holds no
    /// entry, and may hold register bits by the end).
    fn convert_in_place(&mut self) {
        let mut s = (0..Self::SLOTS).find(|&s| self.slot(s) == 0).unwrap_or(0);
        for _ in 1..Self::SLOTS {
            s = Self::next(s);
            let e = self.slot(s);
            if e != 0 {
                self.set_slot(s, 0);
                self.apply_in_place(e);
            }
        }
    }

    /// The occupied slots from `home` up to the next free one.
    fn cluster(&self, home: usize) -> impl Iterator<Item = u32> + '_ {
        let mut s = home;
        (0..Self::SLOTS)
            .map(move |_| {
                let e = self.slot(s);
                s = Self::next(s);
                e
            })
            .take_while(|&e| e != 0)
    }

    /// The list's entries in table order (nothing unless [`is_list`](Self::is_list)).
    fn list_entries(&self) -> impl Iterator<Item = u32> + '_ {
        let slots = if self.is_list() { Self::SLOTS } else { 0 };
        (0..slots).map(|s| self.slot(s)).filter(|&e| e != 0)
    }

    /// The list's entries in increasing order (the wire format's): the home slot
    /// grows with the entry, so per home slot, the entries of its cluster that
    /// belong to it, smallest first. O(slots) for a table of short clusters.
    fn list_entries_sorted(&self) -> impl Iterator<Item = u32> + '_ {
        let slots = if self.is_list() { Self::SLOTS } else { 0 };
        (0..slots).flat_map(move |home| {
            let mut last: Option<u32> = None;
            core::iter::from_fn(move || {
                let next = self
                    .cluster(home)
                    .filter(|&e| Self::home(e) == home && last.is_none_or(|l| e > l))
                    .min();
                last = next.or(last);
                next
            })
        })
    }
}
