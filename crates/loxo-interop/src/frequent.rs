//! Apache DataSketches frequent items: a loxo top-k summary written as the serialized
//! image of a DataSketches `frequent_strings_sketch` (C++ / Python
//! `frequent_items_sketch<std::string>`, Java `ItemsSketch<String>` with
//! `ArrayOfStringsSerDe`), so that Druid, Spark, Pinot or Python merge the top-k of a
//! whole fleet; and [`FrequentItemsView`], a zero-copy reader of such images.
//!
//! # The image (DataSketches `frequent_items_sketch::serialize`, little-endian)
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 1 | preamble longs: 4 (1 when empty) |
//! | 1 | 1 | serialization version: 1 |
//! | 2 | 1 | family id: 10 (frequent items) |
//! | 3 | 1 | lg_max_map_size: the map holds at most `⌊0.75 · 2^lg⌋` items |
//! | 4 | 1 | lg_cur_map_size (3 ≤ lg_cur ≤ lg_max) |
//! | 5 | 1 | flags: bits 0 and 2 both set when empty |
//! | 6 | 2 | unused |
//! | 8 | 4 | number of active items `n` (`u32`) |
//! | 12 | 4 | unused |
//! | 16 | 8 | stream weight `N` (`u64`; Java reads an `i64`) |
//! | 24 | 8 | offset `o`, the sketch's maximum error (`u64`) |
//! | 32 | `8n` | the items' weights `w_i` |
//! | … | … | the items: `u32` length + that many UTF-8 bytes each, in the weights' order |
//!
//! An empty image is the first 8 bytes only (no stream weight, no offset).
//!
//! # DataSketches' bound contract (read from `frequent_items_sketch_impl.hpp`)
//!
//! For an item `x` with stored weight `w(x)` (0 when `x` is not stored):
//! `get_lower_bound(x) = w(x)`, `get_upper_bound(x) = w(x) + o`, and
//! `get_estimate(x) = w(x) + o` for a stored item, 0 otherwise. The sketch promises
//! `lower ≤ f(x) ≤ upper` for **every** item, stored or not — an item it does not
//! store weighs at most `o`. `get_frequent_items(NO_FALSE_NEGATIVES, t)` lists the
//! stored items with `upper > t`, `NO_FALSE_POSITIVES` those with `lower > t`; so for
//! `t ≥ o` the first list holds every item with `f > t`. A merge adds weights and
//! offsets (and a purge moves weight from every item to the offset), which keeps
//! the contract if both inputs kept it.
//!
//! # Space-Saving in that contract (the Misra–Gries view)
//!
//! A [`SpaceSaving<K, N>`] guarantees `count − error ≤ f ≤ count` for a monitored
//! key and `f ≤ m` for any other key, `m` = [`min_count`](SpaceSaving::min_count)
//! (Metwally et al. 2005, Lemma 3; 0 until the summary is full). In general, an
//! entry with bounds `[l, u]` ([`Entry::lower`], [`Entry::upper`]) and a summary
//! whose unmonitored keys weigh at most `m` are written with
//!
//! * offset `o = max(m, max over entries of (u − l))` — for a Space-Saving summary
//!   `u − l` is the entry's `error`, and `error ≤ m` (a key is admitted with
//!   `error = count − weight ≤ m` at that moment, minima only grow, halving floors
//!   both), so `o = m`;
//! * weight `w = u − o` when `u > o`; else `w = 1` when `l ≥ 1`; else the entry is
//!   left out ([`image_weight`]).
//!
//! **Proof that DataSketches' bounds then hold.** If `u > o`: `lower = u − o ≤ u −
//! (u − l) = l ≤ f` and `upper = u ≥ f`. If `u ≤ o` and `l ≥ 1`: `lower = 1 ≤ l ≤ f`
//! and `upper = 1 + o > u ≥ f`. A left-out entry (`u ≤ o`, `l = 0`) and every
//! unmonitored key read as not stored: `lower = 0 ≤ f` and `upper = o ≥ max(u, m) ≥ f`.
//! ∎ So after a DataSketches merge of many devices' images, every bound DataSketches
//! reports still contains the exact fleet count.
//!
//! What a device's own image says, next to loxo's [`Entry`]: for every key above the
//! offset (`count > m`, all keys until the summary is full) DataSketches' estimate
//! and upper bound **equal** loxo's `count` and `upper`; its lower bound `count − m`
//! is at most loxo's `count − error` (DataSketches has one offset per sketch, not one
//! error per item). A key at the minimum (`count = m`) is written with weight 1
//! (DataSketches drops zero weights): estimate and upper bound `m + 1`, lower bound 1.
//! Until the summary is full `o = 0` and the image is exact, as loxo is.
//!
//! HeavyKeeper and CMS + heap have no such image: HeavyKeeper's counts carry no
//! bound at all and CMS + heap has no lower bound ([`Entry`]'s `None`s), so no offset
//! would make DataSketches' promises true; [`encode_entries`] refuses entries
//! without both bounds ([`FrequentItemsError::MissingBound`]).
//!
//! # Keys as text
//!
//! Items are strings. The caller renders each key into the image with a
//! `FnMut(&K, &mut [u8]) -> Option<usize>` (bytes written, `None` if it does not fit);
//! [`display_text`] renders any `Display` key, e.g. a `loxo_flow::FlowKey` as
//! `10.0.0.1:1234 -> 10.0.0.2:80 proto 6` (at most 108 bytes, IPv6 included). The
//! text must be valid UTF-8 (Python and Java decode it) and distinct keys must render
//! distinct texts (DataSketches would add their weights up as one item): both are
//! checked.
//!
//! ```
//! use loxo_cms::{SpaceSaving, TopK};
//! use loxo_core::Seed;
//! use loxo_interop::frequent::{display_text, encode_space_saving, max_encoded_len, FrequentItemsView};
//!
//! let seed = Seed::new(1, 2);
//! let mut ss = SpaceSaving::<u32, 4>::new();
//! for k in [7u32, 7, 7, 1, 2, 3, 7, 4, 5] {
//!     ss.update(&k, seed.hash(&k.to_le_bytes()), 1);
//! }
//! let mut buf = [0u8; max_encoded_len(4, 10)];
//! let n = encode_space_saving(&ss, None, display_text, &mut buf)?;
//! // frequent_strings_sketch.deserialize(buf[..n]) in Python; here loxo's own reader:
//! let image = FrequentItemsView::new_checked(&buf[..n])?;
//! assert_eq!(image.maximum_error(), ss.min_count());
//! assert_eq!(image.estimate("7"), 4);
//! assert!(image.lower_bound("7") <= 4 && 4 <= image.upper_bound("7"));
//! assert!(image.upper_bound("1") >= 1); // evicted: bounded by the offset
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Memory and cost
//!
//! No allocation: the image is written into the caller's buffer, at most
//! [`max_encoded_len`]`(len, longest text)` bytes. Encoding makes three passes over
//! the entries and checks the rendered texts pairwise for duplicates: O(n²) byte
//! compares for `n` items (n = 256 flow keys: about 33 000 compares, mostly of the
//! first byte or the length). [`FrequentItemsView::new_checked`] is O(n²) too (it
//! refuses duplicates, as the encoder does); a lookup is O(n).

use core::fmt;

use loxo_cms::{Entry, SpaceSaving, TopK};
use loxo_core::DecodeError;

/// DataSketches' family id of frequent items sketches.
pub const FAMILY_FREQUENT_ITEMS: u8 = 10;
/// Bytes before the weights of a non-empty image (4 preamble longs).
pub const PREAMBLE_LEN: usize = 32;
/// Bytes of an empty image (1 preamble long).
pub const EMPTY_LEN: usize = 8;
/// DataSketches' smallest map, `LG_MIN_MAP_SIZE`.
pub const LG_MIN_MAP_SIZE: u8 = 3;
/// The largest `lg_max_map_size` written or read (a map of `0.75 · 2^30` items, far
/// beyond any top-k summary; Java's map arrays are indexed by `int`).
pub const LG_MAX_MAP_SIZE: u8 = 30;
/// The largest weight, offset or stream weight written or read: Java reads them as
/// `long`.
pub const MAX_WEIGHT: u64 = i64::MAX as u64;

const SER_VER: u8 = 1;
const PREAMBLE_LONGS_EMPTY: u8 = 1;
const PREAMBLE_LONGS_NONEMPTY: u8 = 4;
/// `IS_EMPTY_1` (bit 0) and `IS_EMPTY_2` (bit 2).
const FLAGS_EMPTY: u8 = 1 | 1 << 2;

/// Items a DataSketches map of `2^lg` slots holds before it grows or purges:
/// `⌊0.75 · 2^lg⌋` (`LOAD_FACTOR`).
#[must_use]
pub const fn map_capacity(lg: u8) -> u64 {
    if lg < 2 {
        0
    } else if lg >= 62 {
        u64::MAX
    } else {
        3 << (lg - 2)
    }
}

/// The smallest `lg_max_map_size` (≥ [`LG_MIN_MAP_SIZE`]) whose map holds `items`
/// without a purge: DataSketches re-inserts an image's items on deserialization, and
/// a map too small for them would purge (lower every weight) on the way in.
#[must_use]
pub const fn lg_map_size_for(items: u64) -> u8 {
    let mut lg = LG_MIN_MAP_SIZE;
    while map_capacity(lg) < items {
        lg += 1;
    }
    lg
}

/// An upper bound on the image of `items` items whose texts are at most
/// `max_text_len` bytes: `32 + items · (8 + 4 + max_text_len)`.
#[must_use]
pub const fn max_encoded_len(items: usize, max_text_len: usize) -> usize {
    PREAMBLE_LEN + items * (12 + max_text_len)
}

/// The weight an entry with bounds `[lower, upper]` gets in an image with offset
/// `offset` (see the module docs), `None` if it is left out: `upper − offset` when
/// `upper > offset`, else 1 when `lower ≥ 1`, else `None`.
///
/// DataSketches then reports `lower_bound = w`, `upper_bound = w + offset` and
/// `estimate = w + offset` for the item (0, `offset`, 0 when left out).
#[must_use]
pub const fn image_weight(lower: u64, upper: u64, offset: u64) -> Option<u64> {
    if upper > offset {
        Some(upper - offset)
    } else if lower >= 1 {
        Some(1)
    } else {
        None
    }
}

/// Why a summary could not be written as a frequent items image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FrequentItemsError {
    /// The output buffer is too small for the image.
    BufferTooSmall,
    /// The key renderer returned `None`: the text does not fit in the buffer.
    TextTooLong,
    /// A rendered text is not valid UTF-8.
    NotUtf8,
    /// Two keys rendered the same text.
    DuplicateText,
    /// An entry has no lower or no upper bound (HeavyKeeper, CMS + heap).
    MissingBound,
    /// A weight, the offset or the stream weight is above [`MAX_WEIGHT`].
    WeightTooLarge,
    /// `lg_max_map_size` is above [`LG_MAX_MAP_SIZE`] or its map cannot hold the
    /// items without a purge (at least [`lg_map_size_for`] is needed).
    MapTooSmall,
    /// The offset is positive but no entry has a positive weight: an empty image
    /// cannot carry the offset (only after halving, when every count is at the
    /// minimum and every lower bound 0).
    Unrepresentable,
}

impl fmt::Display for FrequentItemsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BufferTooSmall => "output buffer too small for the frequent items image",
            Self::TextTooLong => "a key's text does not fit in the output buffer",
            Self::NotUtf8 => "a key's text is not valid UTF-8",
            Self::DuplicateText => "two keys have the same text",
            Self::MissingBound => "an entry has no lower or no upper bound",
            Self::WeightTooLarge => "a weight is above i64::MAX",
            Self::MapTooSmall => "lg_max_map_size out of range or too small for the items",
            Self::Unrepresentable => "positive offset but no item with a positive weight",
        })
    }
}

impl core::error::Error for FrequentItemsError {}

/// Renders a key through its `Display` text into `out`: the renderer for
/// [`encode_space_saving`] of keys like `loxo_flow::FlowKey`. `None` if it does not fit.
pub fn display_text<K: fmt::Display>(key: &K, out: &mut [u8]) -> Option<usize> {
    struct Cursor<'a> {
        out: &'a mut [u8],
        at: usize,
    }
    impl fmt::Write for Cursor<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.at.checked_add(s.len()).ok_or(fmt::Error)?;
            let dst = self.out.get_mut(self.at..end).ok_or(fmt::Error)?;
            dst.copy_from_slice(s.as_bytes());
            self.at = end;
            Ok(())
        }
    }
    let mut c = Cursor { out, at: 0 };
    fmt::write(&mut c, format_args!("{key}")).ok()?;
    Some(c.at)
}

/// Writes a [`SpaceSaving`] summary as a DataSketches frequent strings image into the
/// front of `buf` and returns its length: [`encode_entries`] of its entries, its
/// total and [`min_count`](SpaceSaving::min_count) (see the module docs for the
/// mapping and its proof).
///
/// `lg_max_map_size`: the map size the image announces (DataSketches' `lg_max_k`; a
/// sketch merged into from it keeps the larger of the two), `None` for the smallest
/// that holds the items ([`lg_map_size_for`]). A larger map lets a DataSketches union
/// of many devices keep more items before it purges.
///
/// # Errors
/// See [`encode_entries`].
pub fn encode_space_saving<K: Copy + Eq, const N: usize>(
    summary: &SpaceSaving<K, N>,
    lg_max_map_size: Option<u8>,
    render: impl FnMut(&K, &mut [u8]) -> Option<usize>,
    buf: &mut [u8],
) -> Result<usize, FrequentItemsError> {
    encode_entries(
        || summary.entries(),
        summary.total(),
        summary.min_count(),
        lg_max_map_size,
        render,
        buf,
    )
}

/// Writes any top-k entries with deterministic bounds as a DataSketches frequent
/// strings image; returns its length.
///
/// * `entries` yields the same entries each call (it is called three times);
/// * `total`: the stream weight `N`;
/// * `unmonitored_upper`: a bound on the weight of every key not among the entries
///   (Space-Saving's [`min_count`](SpaceSaving::min_count));
/// * `lg_max_map_size`, `render`: as for [`encode_space_saving`].
///
/// On error the contents of `buf` are unspecified.
///
/// # Errors
/// [`FrequentItemsError::MissingBound`] for an entry without both bounds;
/// [`WeightTooLarge`](FrequentItemsError::WeightTooLarge) if `total` or the offset
/// exceed [`MAX_WEIGHT`]; [`MapTooSmall`](FrequentItemsError::MapTooSmall);
/// [`Unrepresentable`](FrequentItemsError::Unrepresentable); from rendering:
/// [`BufferTooSmall`](FrequentItemsError::BufferTooSmall),
/// [`TextTooLong`](FrequentItemsError::TextTooLong),
/// [`NotUtf8`](FrequentItemsError::NotUtf8),
/// [`DuplicateText`](FrequentItemsError::DuplicateText).
pub fn encode_entries<K, I: Iterator<Item = Entry<K>>>(
    entries: impl Fn() -> I,
    total: u64,
    unmonitored_upper: u64,
    lg_max_map_size: Option<u8>,
    mut render: impl FnMut(&K, &mut [u8]) -> Option<usize>,
    buf: &mut [u8],
) -> Result<usize, FrequentItemsError> {
    let bounds = |e: &Entry<K>| e.lower.zip(e.upper).filter(|(l, u)| l <= u);
    // Pass 1: the offset.
    let mut offset = unmonitored_upper;
    for e in entries() {
        let (l, u) = bounds(&e).ok_or(FrequentItemsError::MissingBound)?;
        offset = offset.max(u - l);
    }
    if offset > MAX_WEIGHT || total > MAX_WEIGHT {
        return Err(FrequentItemsError::WeightTooLarge);
    }
    // Pass 2: the items that keep a weight.
    let weight = |e: &Entry<K>| bounds(e).and_then(|(l, u)| image_weight(l, u, offset));
    let n = entries().filter(|e| weight(e).is_some()).count();
    let lg_needed = lg_map_size_for(n as u64);
    let lg_max = lg_max_map_size.unwrap_or(lg_needed);
    if lg_max < lg_needed || lg_max > LG_MAX_MAP_SIZE {
        return Err(FrequentItemsError::MapTooSmall);
    }
    if n == 0 {
        if offset > 0 {
            return Err(FrequentItemsError::Unrepresentable);
        }
        let out = buf
            .get_mut(..EMPTY_LEN)
            .ok_or(FrequentItemsError::BufferTooSmall)?;
        out.copy_from_slice(&[
            PREAMBLE_LONGS_EMPTY,
            SER_VER,
            FAMILY_FREQUENT_ITEMS,
            lg_max,
            LG_MIN_MAP_SIZE,
            FLAGS_EMPTY,
            0,
            0,
        ]);
        return Ok(EMPTY_LEN);
    }
    let items_at = n
        .checked_mul(8)
        .and_then(|w| w.checked_add(PREAMBLE_LEN))
        .ok_or(FrequentItemsError::BufferTooSmall)?;
    let (head, items) = buf
        .split_at_mut_checked(items_at)
        .ok_or(FrequentItemsError::BufferTooSmall)?;
    let (pre, weights) = head.split_at_mut(PREAMBLE_LEN);
    pre.fill(0);
    pre[..6].copy_from_slice(&[
        PREAMBLE_LONGS_NONEMPTY,
        SER_VER,
        FAMILY_FREQUENT_ITEMS,
        lg_max,
        lg_needed,
        0,
    ]);
    pre[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    pre[16..24].copy_from_slice(&total.to_le_bytes());
    pre[24..32].copy_from_slice(&offset.to_le_bytes());
    // Pass 3: weights and texts, in the same order.
    let mut at = 0;
    let mut slots = weights.chunks_exact_mut(8);
    for e in entries() {
        let Some(w) = weight(&e) else { continue };
        if let Some(slot) = slots.next() {
            slot.copy_from_slice(&w.to_le_bytes());
        }
        let text_at = at + 4;
        let room = items
            .get_mut(text_at..)
            .ok_or(FrequentItemsError::BufferTooSmall)?;
        let len = render(&e.key, room).ok_or(FrequentItemsError::TextTooLong)?;
        let text = room.get(..len).ok_or(FrequentItemsError::TextTooLong)?;
        if core::str::from_utf8(text).is_err() {
            return Err(FrequentItemsError::NotUtf8);
        }
        let len32 = u32::try_from(len).map_err(|_| FrequentItemsError::TextTooLong)?;
        if let Some(prefix) = items.get_mut(at..text_at) {
            prefix.copy_from_slice(&len32.to_le_bytes());
        }
        at = text_at + len;
    }
    let texts = items.get(..at).unwrap_or(&[]);
    if has_duplicate(texts) {
        return Err(FrequentItemsError::DuplicateText);
    }
    Ok(items_at + at)
}

/// Length-prefixed texts, in order; stops at the first that does not fit.
fn texts(mut bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    core::iter::from_fn(move || {
        let (len, rest) = bytes.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        let (text, rest) = rest.split_at_checked(len)?;
        bytes = rest;
        Some(text)
    })
}

/// True if two of the length-prefixed texts are equal (O(n²)).
fn has_duplicate(bytes: &[u8]) -> bool {
    texts(bytes)
        .enumerate()
        .any(|(i, a)| texts(bytes).skip(i + 1).any(|b| a == b))
}

/// A validated DataSketches frequent items image with string items (any writer:
/// loxo, Java, C++, Python), read in place: the preamble fields, the items with their
/// weights, and DataSketches' per-item estimate and bounds.
///
/// [`new_checked`](Self::new_checked) validates once, so every accessor after it is
/// panic-free and total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrequentItemsView<'a> {
    lg_max_map_size: u8,
    lg_cur_map_size: u8,
    total_weight: u64,
    offset: u64,
    weights: &'a [u8],
    items: &'a [u8],
}

impl<'a> FrequentItemsView<'a> {
    /// Validates an image: preamble size matching the empty flags, version 1, family
    /// 10, `3 ≤ lg_cur ≤ lg_max ≤ 30`, then (non-empty) `1 ≤ n ≤ ⌊0.75 · 2^lg_max⌋`
    /// items (DataSketches would purge more on the way in), weights in
    /// `1..=i64::MAX`, offset and stream weight `≤ i64::MAX`, every text UTF-8, no text
    /// twice (DataSketches would add their weights), nothing after the last item.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`], [`DecodeError::TrailingBytes`],
    /// [`DecodeError::UnsupportedVersion`], [`DecodeError::WrongKind`] (family or a
    /// preamble size that does not match the flags), [`DecodeError::InvalidValue`]
    /// (any other check above).
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let pre = bytes.first_chunk::<8>().ok_or(DecodeError::Truncated)?;
        let [pre_longs, ser_ver, family, lg_max, lg_cur, flags, _, _] = *pre;
        if family != FAMILY_FREQUENT_ITEMS {
            return Err(DecodeError::WrongKind {
                expected: FAMILY_FREQUENT_ITEMS,
                found: family,
            });
        }
        if ser_ver != SER_VER {
            return Err(DecodeError::UnsupportedVersion(u16::from(ser_ver)));
        }
        let empty = flags & FLAGS_EMPTY != 0;
        let expected = if empty {
            PREAMBLE_LONGS_EMPTY
        } else {
            PREAMBLE_LONGS_NONEMPTY
        };
        if pre_longs != expected {
            return Err(DecodeError::WrongKind {
                expected,
                found: pre_longs,
            });
        }
        if lg_cur < LG_MIN_MAP_SIZE || lg_cur > lg_max || lg_max > LG_MAX_MAP_SIZE {
            return Err(DecodeError::InvalidValue);
        }
        let mut view = Self {
            lg_max_map_size: lg_max,
            lg_cur_map_size: lg_cur,
            total_weight: 0,
            offset: 0,
            weights: &[],
            items: &[],
        };
        if empty {
            return match bytes.len().cmp(&EMPTY_LEN) {
                core::cmp::Ordering::Greater => Err(DecodeError::TrailingBytes),
                _ => Ok(view),
            };
        }
        let (pre, rest) = bytes
            .split_first_chunk::<PREAMBLE_LEN>()
            .ok_or(DecodeError::Truncated)?;
        let u64_at = |o: usize| pre.get(o..o + 8).and_then(|b| b.try_into().ok());
        let n = pre
            .get(8..12)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes);
        view.total_weight = u64_at(16).map_or(0, u64::from_le_bytes);
        view.offset = u64_at(24).map_or(0, u64::from_le_bytes);
        if n == 0
            || u64::from(n) > map_capacity(lg_max)
            || view.total_weight > MAX_WEIGHT
            || view.offset > MAX_WEIGHT
        {
            return Err(DecodeError::InvalidValue);
        }
        let weights_len = (n as usize).checked_mul(8).ok_or(DecodeError::Truncated)?;
        let (weights, items) = rest
            .split_at_checked(weights_len)
            .ok_or(DecodeError::Truncated)?;
        if weights
            .chunks_exact(8)
            .map(|w| w.try_into().map_or(0, u64::from_le_bytes))
            .any(|w| w == 0 || w > MAX_WEIGHT)
        {
            return Err(DecodeError::InvalidValue);
        }
        let mut at = 0;
        for _ in 0..n {
            let (len, tail) = items
                .get(at..)
                .and_then(<[u8]>::split_first_chunk::<4>)
                .ok_or(DecodeError::Truncated)?;
            let len = u32::from_le_bytes(*len) as usize;
            let text = tail.get(..len).ok_or(DecodeError::Truncated)?;
            core::str::from_utf8(text).map_err(|_| DecodeError::InvalidValue)?;
            at += 4 + len;
        }
        if items.len() > at {
            return Err(DecodeError::TrailingBytes);
        }
        if has_duplicate(items) {
            return Err(DecodeError::InvalidValue);
        }
        view.weights = weights;
        view.items = items;
        Ok(view)
    }

    /// True for an image without items.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Number of stored items.
    #[must_use]
    pub const fn num_items(&self) -> usize {
        self.weights.len() / 8
    }

    /// `lg_max_map_size`: the sketch keeps at most `⌊0.75 · 2^lg⌋` items.
    #[must_use]
    pub const fn lg_max_map_size(&self) -> u8 {
        self.lg_max_map_size
    }

    /// `lg_cur_map_size`.
    #[must_use]
    pub const fn lg_cur_map_size(&self) -> u8 {
        self.lg_cur_map_size
    }

    /// The stream weight `N` (0 for an empty image).
    #[must_use]
    pub const fn total_weight(&self) -> u64 {
        self.total_weight
    }

    /// The offset `o`, DataSketches' `get_maximum_error`: an item that is not stored
    /// weighs at most this.
    #[must_use]
    pub const fn maximum_error(&self) -> u64 {
        self.offset
    }

    /// The stored items and their weights, in image order.
    pub fn items(&self) -> impl Iterator<Item = (&'a str, u64)> + 'a {
        let weights = self
            .weights
            .chunks_exact(8)
            .map(|w| w.try_into().map_or(0, u64::from_le_bytes));
        texts(self.items)
            .map(|t| core::str::from_utf8(t).unwrap_or(""))
            .zip(weights)
    }

    /// The stored weight of `item`, 0 if it is not stored.
    #[must_use]
    pub fn weight(&self, item: &str) -> u64 {
        self.items().find(|(t, _)| *t == item).map_or(0, |(_, w)| w)
    }

    /// DataSketches' `get_estimate`: weight + offset if stored, else 0.
    #[must_use]
    pub fn estimate(&self, item: &str) -> u64 {
        match self.weight(item) {
            0 => 0,
            w => w + self.offset,
        }
    }

    /// DataSketches' `get_lower_bound`: the stored weight (0 if not stored).
    #[must_use]
    pub fn lower_bound(&self, item: &str) -> u64 {
        self.weight(item)
    }

    /// DataSketches' `get_upper_bound`: the stored weight + offset.
    #[must_use]
    pub fn upper_bound(&self, item: &str) -> u64 {
        self.weight(item) + self.offset
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use loxo_core::Seed;

    fn feed<const N: usize>(keys: impl IntoIterator<Item = u32>) -> SpaceSaving<u32, N> {
        let seed = Seed::new(3, 4);
        let mut ss = SpaceSaving::new();
        for k in keys {
            ss.update(&k, seed.hash(&k.to_le_bytes()), 1);
        }
        ss
    }

    fn encode<const N: usize>(ss: &SpaceSaving<u32, N>) -> Vec<u8> {
        let mut buf = vec![0u8; max_encoded_len(N, 10)];
        let n = encode_space_saving(ss, None, display_text, &mut buf).unwrap();
        buf.truncate(n);
        buf
    }

    extern crate std;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn the_python_image_of_two_items_reads() {
        // datasketches 5.2.0: s = frequent_strings_sketch(4); s.update('a', 5);
        // s.update('b', 3); s.serialize()
        let py = [
            4, 1, 10, 4, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, b'b', 1, 0, 0, 0,
            b'a',
        ];
        let v = FrequentItemsView::new_checked(&py).unwrap();
        assert_eq!((v.lg_max_map_size(), v.lg_cur_map_size()), (4, 3));
        assert_eq!(
            (v.total_weight(), v.maximum_error(), v.num_items()),
            (8, 0, 2)
        );
        assert_eq!(
            (v.estimate("a"), v.estimate("b"), v.estimate("c")),
            (5, 3, 0)
        );
        // loxo writes the same bytes for a summary of the same counts (heap order:
        // b, then a), at the same map size.
        let ss = feed::<4>([0, 0, 0, 0, 0, 1, 1, 1]);
        let mut buf = [0u8; 64];
        let n = encode_space_saving(
            &ss,
            Some(4),
            |k: &u32, out: &mut [u8]| {
                let c = [b'a', b'b'][*k as usize];
                *out.first_mut()? = c;
                Some(1)
            },
            &mut buf,
        )
        .unwrap();
        assert_eq!(&buf[..n], &py[..]);
    }

    #[test]
    fn bounds_follow_the_contract_and_contain_the_truth() {
        // 1000 keys, Zipf-ish: key k appears ⌊400 / (k + 1)⌋ + 1 times, interleaved.
        let mut stream = Vec::new();
        for round in 0..401u32 {
            for k in 0..1000u32 {
                if round <= 400 / (k + 1) {
                    stream.push(k);
                }
            }
        }
        let truth = |k: u32| u64::from(400 / (k + 1) + 1);
        let ss = feed::<32>(stream.iter().copied());
        let img = encode(&ss);
        let v = FrequentItemsView::new_checked(&img).unwrap();
        let m = ss.min_count();
        assert!(m > 0);
        assert_eq!(v.maximum_error(), m);
        assert_eq!(v.total_weight(), stream.len() as u64);
        for e in ss.entries() {
            let t = std::format!("{}", e.key);
            let w = image_weight(e.lower.unwrap(), e.count, m).unwrap();
            assert_eq!(v.lower_bound(&t), w);
            assert_eq!(v.upper_bound(&t), w + m);
            if e.count > m {
                assert_eq!(v.estimate(&t), e.count);
                assert!(v.lower_bound(&t) <= e.lower.unwrap());
            }
        }
        for k in 0..1000u32 {
            let t = std::format!("{k}");
            assert!(
                v.lower_bound(&t) <= truth(k) && truth(k) <= v.upper_bound(&t),
                "{k}"
            );
        }
    }

    #[test]
    fn until_full_the_image_is_exact_and_empty_is_eight_bytes() {
        let ss = feed::<8>([1, 2, 2, 3, 3, 3]);
        let img = encode(&ss);
        let v = FrequentItemsView::new_checked(&img).unwrap();
        assert_eq!(v.maximum_error(), 0);
        assert_eq!(
            (v.estimate("3"), v.lower_bound("3"), v.upper_bound("3")),
            (3, 3, 3)
        );
        let empty = encode(&SpaceSaving::<u32, 8>::new());
        assert_eq!(empty, [1, 1, 10, 3, 3, 5, 0, 0]);
        assert!(FrequentItemsView::new_checked(&empty).unwrap().is_empty());
    }

    fn e(
        ss: &SpaceSaving<u32, 4>,
        render: impl FnMut(&u32, &mut [u8]) -> Option<usize>,
    ) -> Result<usize, FrequentItemsError> {
        let mut buf = [0u8; 256];
        encode_space_saving(ss, None, render, &mut buf)
    }

    #[test]
    fn refusals() {
        let ss = feed::<4>([1, 2, 2, 3, 3, 3]);
        let mut buf = [0u8; 256];
        let ss = &ss;
        assert_eq!(
            e(ss, |_: &u32, o: &mut [u8]| o
                .first_mut()
                .map(|b| *b = b'x')
                .map(|()| 1)),
            Err(FrequentItemsError::DuplicateText)
        );
        assert_eq!(
            e(ss, |_: &u32, o: &mut [u8]| o
                .first_mut()
                .map(|b| *b = 0xff)
                .map(|()| 1)),
            Err(FrequentItemsError::NotUtf8)
        );
        assert_eq!(
            e(ss, |_: &u32, _: &mut [u8]| None),
            Err(FrequentItemsError::TextTooLong)
        );
        let mut small = [0u8; 40];
        assert_eq!(
            encode_space_saving(ss, None, display_text, &mut small),
            Err(FrequentItemsError::BufferTooSmall)
        );
        assert_eq!(
            encode_space_saving(ss, Some(31), display_text, &mut buf),
            Err(FrequentItemsError::MapTooSmall)
        );
        let no_bounds = || {
            core::iter::once(Entry {
                key: 1u32,
                count: 5,
                lower: None,
                upper: None,
            })
        };
        assert_eq!(
            encode_entries(no_bounds, 5, 0, None, display_text, &mut buf),
            Err(FrequentItemsError::MissingBound)
        );
        let big = ss.entries().count();
        assert_eq!(big, 3);
        // A too-small map: 7 items need lg 4 (capacity 12 ≥ 7 > 6).
        let seven = feed::<7>(0..7);
        assert_eq!(
            encode_space_saving(&seven, Some(3), display_text, &mut buf),
            Err(FrequentItemsError::MapTooSmall)
        );
    }

    #[test]
    fn the_view_refuses_corrupt_images_and_never_panics() {
        let img = encode(&feed::<16>((0..40u32).map(|i| i % 23)));
        assert!(FrequentItemsView::new_checked(&img).is_ok());
        for cut in 0..img.len() {
            assert!(
                FrequentItemsView::new_checked(&img[..cut]).is_err(),
                "{cut}"
            );
        }
        let mut longer = img.clone();
        longer.push(0);
        assert_eq!(
            FrequentItemsView::new_checked(&longer),
            Err(DecodeError::TrailingBytes)
        );
        for (at, v, err) in [
            (
                2,
                7,
                DecodeError::WrongKind {
                    expected: 10,
                    found: 7,
                },
            ),
            (1, 2, DecodeError::UnsupportedVersion(2)),
            (
                0,
                1,
                DecodeError::WrongKind {
                    expected: 4,
                    found: 1,
                },
            ),
            (4, 2, DecodeError::InvalidValue),
            (3, 31, DecodeError::InvalidValue),
            (32, 0, DecodeError::InvalidValue), // a zero weight (low byte of weight 0)
        ] {
            let mut bad = img.clone();
            bad[at] = v;
            if at == 32 {
                bad[32..40].fill(0);
            }
            assert_eq!(FrequentItemsView::new_checked(&bad), Err(err), "byte {at}");
        }
        // Every single-byte change: an error or a valid view, never a panic.
        for at in 0..img.len() {
            for v in [0u8, 1, 0x7f, 0x80, 0xff] {
                let mut bad = img.clone();
                bad[at] = v;
                if let Ok(view) = FrequentItemsView::new_checked(&bad) {
                    let _ = view.items().fold(0u64, |a, (t, w)| {
                        a ^ w ^ view.estimate(t) ^ view.upper_bound(t)
                    });
                }
            }
        }
    }
}
