//! [`SpreadView`]: a validated `spread` frame read in place, with its geometry known
//! only at run time — what a collector or `loxo inspect` reads without the type.

use loxo_core::wire::{Frame, Header, SketchKind};
use loxo_core::DecodeError;

use crate::cells::{self, Record};
use crate::digest;
use crate::estimate::Estimate;
use crate::pool::PoolRef;
use crate::report::{self, Spreader};

/// Largest key encoding a frame may declare, in bytes.
pub const MAX_KEY_LEN: u32 = 256;

/// A `spread` frame (kind 15), checked once: envelope and CRC, parameters in range,
/// the payload's exact length, zero padding bits and every cell's priority
/// consistent with its index. Everything after [`parse`](Self::parse) is
/// panic-free and allocation-free.
///
/// Payload (`docs/format.md`), params `[S, W, C, L]`:
///
/// | bytes | content |
/// |---|---|
/// | `S·W` | the pool: stripe-major, register `2b` of a stripe in the low nibble of its byte `b`, `2b + 1` in the high nibble |
/// | `⌈C/8⌉` | cell occupancy, bit `c` in byte `c/8` (least significant first); bits from `C` on are 0 |
/// | `k·(8 + L)` | the `k` occupied cells in index order: tag `u32`, priority `u32`, key (`L` bytes) |
///
/// ```
/// use loxo_core::Seed;
/// use loxo_spread::{SpreadView, Spreaders};
///
/// let mut s = Spreaders::<u32, 16, 4, 32>::new(Seed::new(1, 2));
/// for e in 0..500u32 {
///     s.insert(&9, &e.to_le_bytes());
/// }
/// let mut buf = [0u8; 2048];
/// let n = s.encode_into(&mut buf)?;
/// let view = SpreadView::parse(&buf[..n])?;
/// assert_eq!(view.params(), [16, 4, 32, 4]);
/// let mut keys = Vec::new();
/// view.report(100.0, 0.0, |key, spreader| keys.push((key.to_vec(), spreader.spread.value)));
/// assert_eq!(keys[0].0, 9u32.to_le_bytes());
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SpreadView<'a> {
    header: Header,
    pool: &'a [u8],
    bitmap: &'a [u8],
    records: &'a [u8],
    stripes: usize,
    width: usize,
    cells: usize,
    key_len: usize,
}

impl<'a> SpreadView<'a> {
    /// Parses and validates a whole frame.
    ///
    /// # Errors
    /// The envelope's errors ([`Frame::parse`]); [`DecodeError::WrongKind`] for
    /// another kind; [`DecodeError::InvalidValue`] for parameters out of range (`S`
    /// a power of two in 16 ..= 4096, `W` in 1 ..= 32 768, `C` in 1 ..= 65 536, `L`
    /// in 1 ..= 256), flags, padding bits or an inconsistent cell;
    /// [`DecodeError::Truncated`] / [`DecodeError::TrailingBytes`] for a payload of
    /// the wrong length.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let frame = Frame::parse(bytes)?;
        if frame.header().kind != SketchKind::Spread {
            return Err(DecodeError::WrongKind {
                expected: SketchKind::Spread as u8,
                found: frame.header().kind as u8,
            });
        }
        Self::from_frame(&frame)
    }

    /// The structural checks of [`parse`](Self::parse) on a frame already known to
    /// be of kind `spread`.
    pub(crate) fn from_frame(frame: &Frame<'a>) -> Result<Self, DecodeError> {
        let header = *frame.header();
        let [s, w, c, l] = header.params;
        let in_range = s.is_power_of_two()
            && (16..=4096).contains(&s)
            && (1..=32_768).contains(&w)
            && (1..=65_536).contains(&c)
            && (1..=MAX_KEY_LEN).contains(&l);
        if !in_range || header.flags != 0 {
            return Err(DecodeError::InvalidValue);
        }
        let (stripes, width, cells, key_len) = (s as usize, w as usize, c as usize, l as usize);
        let mut r = frame.reader();
        let pool = r.take(stripes * width)?;
        let bitmap = r.take(cells.div_ceil(8))?;
        let spare = (bitmap.len() * 8 - cells) as u32;
        if let Some(&last) = bitmap.last() {
            if spare > 0 && last >> (8 - spare) != 0 {
                return Err(DecodeError::InvalidValue);
            }
        }
        let occupied: usize = bitmap.iter().map(|b| b.count_ones() as usize).sum();
        let records = r.take(occupied * (8 + key_len))?;
        r.finish()?;
        let view = Self {
            header,
            pool,
            bitmap,
            records,
            stripes,
            width,
            cells,
            key_len,
        };
        if view
            .cells()
            .any(|(i, rec)| !digest::cell_consistent(i, rec.priority, cells))
        {
            return Err(DecodeError::InvalidValue);
        }
        Ok(view)
    }

    /// The parameters `[S, W, C, L]`.
    #[must_use]
    pub const fn params(&self) -> [u32; 4] {
        self.header.params
    }

    /// The seed fingerprint the frame carries.
    #[must_use]
    pub const fn seed_fingerprint(&self) -> u64 {
        self.header.seed_fingerprint
    }

    /// How many cells hold a pair.
    #[must_use]
    pub fn occupied(&self) -> usize {
        self.records.len() / (8 + self.key_len)
    }

    /// The bytes a typed sketch of these parameters with `L`-byte array keys
    /// (`[u8; L]`) takes: `S·W + C·(L + 9) + 16`, rounded up to 8.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        (self.stripes * self.width + self.cells * (self.key_len + 9) + 16).next_multiple_of(8)
    }

    /// The estimated number of distinct pairs ([`Spreaders::distinct_pairs`](crate::Spreaders::distinct_pairs)).
    #[must_use]
    pub fn distinct_pairs(&self) -> Estimate {
        cells::distinct_pairs(self.records(), self.cells)
    }

    /// [`Spreaders::report`](crate::Spreaders::report) over the frame: calls `f`
    /// with each qualifying key's bytes (in cell order, not sorted) and its spread;
    /// returns how many qualified.
    pub fn report(
        &self,
        threshold: f64,
        z: f64,
        mut f: impl FnMut(&'a [u8], Spreader<()>),
    ) -> usize {
        report::report(self.pool_ref(), &self.records(), threshold, z, |r, s| {
            f(r.key, s);
        })
    }

    pub(crate) fn pool_bytes(&self) -> &'a [u8] {
        self.pool
    }

    fn pool_ref(&self) -> PoolRef<'a> {
        PoolRef {
            bytes: self.pool,
            stripes: self.stripes,
            width: self.width,
        }
    }

    /// The occupied cells in index order, as `(cell, record)`.
    pub(crate) fn cells(&self) -> Cells<'a> {
        Cells {
            bitmap: self.bitmap,
            records: self.records,
            next: 0,
            count: self.cells,
            key_len: self.key_len,
        }
    }

    fn records(&self) -> impl Iterator<Item = Record<&'a [u8]>> + Clone {
        self.cells().map(|(_, r)| r)
    }
}

/// Iterator over a view's occupied cells.
#[derive(Clone, Debug)]
pub(crate) struct Cells<'a> {
    bitmap: &'a [u8],
    records: &'a [u8],
    next: usize,
    count: usize,
    key_len: usize,
}

impl<'a> Iterator for Cells<'a> {
    type Item = (usize, Record<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        while self.next < self.count {
            let c = self.next;
            self.next += 1;
            let set = self
                .bitmap
                .get(c / 8)
                .is_some_and(|b| b >> (c % 8) & 1 == 1);
            if !set {
                continue;
            }
            let (rec, rest) = self.records.split_at_checked(8 + self.key_len)?;
            self.records = rest;
            let word = |at: usize| {
                rec.get(at..at + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map_or(0, u32::from_le_bytes)
            };
            return Some((
                c,
                Record {
                    tag: word(0),
                    priority: word(4),
                    key: rec.get(8..).unwrap_or(&[]),
                },
            ));
        }
        None
    }
}
