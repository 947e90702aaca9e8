//! `loxo collect --out DIR`: the files written, under a cap on their bytes
//! (`--out-max-bytes`), the oldest finalized epochs removed to make room.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// `--out-max-bytes`'s default: 1 GiB (≈ 38 epochs of 1 024 devices sending a
/// 12 336-byte `Hll<14>` and a 14 900-byte top-k frame each).
pub const DEFAULT_OUT_MAX_BYTES: u64 = 1 << 30;

/// The output directory: `DIR/epoch-<n>/<name>` files, whose bytes (those this
/// collector wrote) stay within a cap. To make room for a file it removes the files
/// of the oldest *finalized* epoch it wrote (and the epoch's directory once empty);
/// a file that would pass the cap while only open epochs hold the bytes is refused.
/// Files it did not write (an earlier run's) are neither counted nor removed.
///
/// ```
/// use loxo_cli::collect::OutDir;
/// let root = std::env::temp_dir().join(format!("loxo-outdir-doc-{}", std::process::id()));
/// let mut out = OutDir::new(&root, 250);
/// out.write(0, "a.loxo", &[0; 100])?;
/// out.write(0, "b.loxo", &[0; 100])?;
/// out.finalized(0);
/// // Epoch 1's file needs room: epoch 0 (finalized) goes.
/// assert_eq!(out.write(1, "a.loxo", &[0; 100])?, vec![0]);
/// assert_eq!(out.used(), 100);
/// assert!(!root.join("epoch-0").exists());
/// // Open epochs are never removed: past the cap a file is refused.
/// out.write(1, "b.loxo", &[0; 100])?;
/// assert!(out.write(2, "a.loxo", &[0; 100]).is_err());
/// # std::fs::remove_dir_all(&root)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct OutDir {
    root: PathBuf,
    cap: u64,
    used: u64,
    /// The files written, by epoch, with their sizes.
    files: BTreeMap<u32, Vec<(PathBuf, u64)>>,
    /// Epochs finalized: their files may go.
    finalized: BTreeSet<u32>,
}

impl OutDir {
    /// Writes under `root`, at most `cap` bytes of files at once.
    #[must_use]
    pub fn new(root: &Path, cap: u64) -> Self {
        Self {
            root: root.to_owned(),
            cap,
            used: 0,
            files: BTreeMap::new(),
            finalized: BTreeSet::new(),
        }
    }

    /// Bytes of the files written and not removed.
    #[must_use]
    pub const fn used(&self) -> u64 {
        self.used
    }

    /// Marks `epoch` finalized: its files may be removed to make room.
    pub fn finalized(&mut self, epoch: u32) {
        if self.files.contains_key(&epoch) {
            self.finalized.insert(epoch);
        }
    }

    /// Writes `DIR/epoch-<epoch>/<name>`; returns the epochs removed to make room.
    ///
    /// # Errors
    /// A file larger than the cap, or one that would pass it while every byte is
    /// held by an open epoch (nothing written); I/O errors, with the path.
    pub fn write(&mut self, epoch: u32, name: &str, bytes: &[u8]) -> anyhow::Result<Vec<u32>> {
        let dir = self.root.join(format!("epoch-{epoch}"));
        let path = dir.join(name);
        let n = bytes.len() as u64;
        // Rewriting a file of this run frees its old bytes first.
        let old = self
            .files
            .get(&epoch)
            .and_then(|f| f.iter().find(|(p, _)| *p == path))
            .map_or(0, |f| f.1);
        if n > self.cap {
            bail!(
                "{}: not written: {n} bytes, more than --out-max-bytes {}",
                path.display(),
                self.cap
            );
        }
        let mut removed = Vec::new();
        while self.used - old + n > self.cap {
            let Some(&oldest) = self.finalized.iter().find(|&&e| e != epoch) else {
                bail!(
                    "{}: not written: {n} more bytes would pass --out-max-bytes {} ({} written by open epochs)",
                    path.display(),
                    self.cap,
                    self.used
                );
            };
            self.remove(oldest);
            removed.push(oldest);
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        std::fs::write(&path, bytes)
            .with_context(|| format!("{}: cannot write", path.display()))?;
        let files = self.files.entry(epoch).or_default();
        files.retain(|(p, _)| *p != path);
        files.push((path, n));
        self.used = self.used - old + n;
        Ok(removed)
    }

    /// Removes an epoch's files, and its directory if that leaves it empty.
    fn remove(&mut self, epoch: u32) {
        self.finalized.remove(&epoch);
        for (path, n) in self.files.remove(&epoch).unwrap_or_default() {
            // A file already gone (removed by hand) frees its bytes all the same.
            let _ = std::fs::remove_file(&path);
            self.used -= n;
        }
        let _ = std::fs::remove_dir(self.root.join(format!("epoch-{epoch}")));
    }
}
