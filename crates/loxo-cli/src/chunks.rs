//! Reassembly of the firmware's SKETCH frames (`loxo replay --sketch-dir`): each
//! epoch's encoded sketch arrives in ordered chunks (`offset`, `total`, bytes), already
//! authenticated by `loxo-control`. Pure bookkeeping, no I/O, so it can be fuzzed.

use std::collections::BTreeMap;

/// Largest sketch accepted (an `Hll<14>` frame is 12 336 bytes; every loxo sketch the
/// firmware ships fits with room to spare): a frame announcing more is refused before
/// anything is buffered.
pub const MAX_SKETCH: usize = 1 << 24;

/// Sketches being reassembled, by epoch.
#[derive(Debug, Default)]
pub struct SketchChunks {
    /// Epoch → (total length, bytes so far).
    partial: BTreeMap<u32, (usize, Vec<u8>)>,
    error: Option<String>,
}

impl SketchChunks {
    /// Adds the chunk `data` at `offset` of epoch `epoch`'s `total`-byte sketch.
    /// Returns the sketch when this chunk completes it. A chunk out of order, past the
    /// total, of a total that changed or is over [`MAX_SKETCH`] is refused and
    /// recorded (the first such error is kept, see [`error`](Self::error)); the
    /// epoch's partial sketch is then dropped.
    pub fn push(&mut self, epoch: u32, offset: u32, total: u32, data: &[u8]) -> Option<Vec<u8>> {
        let (offset, total) = (offset as usize, total as usize);
        if total > MAX_SKETCH {
            self.fail(format!(
                "sketch of epoch {epoch}: {total} bytes announced, at most {MAX_SKETCH}"
            ));
            self.partial.remove(&epoch);
            return None;
        }
        let (want_total, buf) = self
            .partial
            .entry(epoch)
            .or_insert_with(|| (total, Vec::new()));
        let bad = if offset != buf.len() || *want_total != total {
            Some(format!(
                "sketch of epoch {epoch}: chunk at offset {offset} (total {total}), expected offset {} (total {want_total})",
                buf.len()
            ))
        } else if buf.len() + data.len() > total {
            Some(format!(
                "sketch of epoch {epoch}: chunk of {} bytes at {offset} runs past its total {total}",
                data.len()
            ))
        } else {
            None
        };
        if let Some(msg) = bad {
            self.partial.remove(&epoch);
            self.fail(msg);
            return None;
        }
        buf.extend_from_slice(data);
        if buf.len() == total {
            return self.partial.remove(&epoch).map(|(_, b)| b);
        }
        None
    }

    /// Records an error of the caller's (a chunk it could not read, a file it could
    /// not write); the first one is kept.
    pub fn fail(&mut self, msg: String) {
        self.error.get_or_insert(msg);
    }

    /// The first error, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// An epoch whose sketch is still incomplete: (epoch, bytes so far, total).
    pub fn incomplete(&self) -> Option<(u32, usize, usize)> {
        self.partial
            .iter()
            .next()
            .map(|(&e, (total, buf))| (e, buf.len(), *total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_chunks_reassemble_and_bad_ones_are_refused() {
        let mut s = SketchChunks::default();
        assert_eq!(s.push(3, 0, 5, b"ab"), None);
        assert_eq!(s.push(3, 2, 5, b"cde"), Some(b"abcde".to_vec()));
        assert_eq!(s.incomplete(), None);
        assert!(s.error().is_none());
        // Out of order, past the total, a total that changes, a huge total.
        assert_eq!(s.push(4, 1, 5, b"x"), None);
        assert!(s.error().is_some_and(|e| e.contains("offset 1")));
        let mut s = SketchChunks::default();
        assert_eq!(s.push(4, 0, 3, b"abcd"), None);
        assert!(s.error().is_some_and(|e| e.contains("past its total")));
        let mut s = SketchChunks::default();
        assert_eq!(s.push(5, 0, 4, b"ab"), None);
        assert_eq!(s.push(5, 2, 6, b"cd"), None);
        assert!(s.error().is_some());
        let mut s = SketchChunks::default();
        assert_eq!(s.push(6, 0, u32::MAX, b"ab"), None);
        assert!(s.error().is_some_and(|e| e.contains("at most")));
        assert_eq!(s.incomplete(), None);
        // An empty sketch completes at once.
        assert_eq!(SketchChunks::default().push(7, 0, 0, b""), Some(Vec::new()));
    }
}
