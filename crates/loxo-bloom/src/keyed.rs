//! The methods the filters derive from their pre-hashed ones, written once: each
//! filter implements `contains_hash`, `insert_hash`, `insert_checked_hash` and (for
//! a batched lookup) `prefetch_hash`, and invokes these macros in its `impl` block
//! for the keyed forms (`contains`, `insert`, `insert_checked`: one SipHash-1-3 of
//! the key under the filter's `seed`, then the pre-hashed method), the batched
//! lookups ([`crate::prefetch::batch`]) and the accessors every filter has.

/// `seed` and `memory_bytes` (`size_of::<Self>()`, whose formula is `$memory`).
macro_rules! seed_and_memory {
    ($memory:literal) => {
        /// The seed keys are hashed with.
        #[must_use]
        pub const fn seed(&self) -> Seed {
            self.seed
        }

        #[doc = concat!("Bytes of RAM the filter occupies", $memory, ".")]
        #[must_use]
        pub const fn memory_bytes(&self) -> usize {
            core::mem::size_of::<Self>()
        }
    };
}

/// `insert`, `insert_checked` and `contains` for a key, from their `*_hash` forms.
macro_rules! keyed_set_methods {
    () => {
        /// Inserts a key.
        #[inline]
        pub fn insert<Q: AsRef<[u8]> + ?Sized>(&mut self, key: &Q) {
            self.insert_hash(self.seed.hash(key));
        }

        /// Inserts a key and returns whether it was (maybe) present before, in one
        /// pass: `false` means certainly new. The primitive of a new-flow detector.
        #[inline]
        pub fn insert_checked<Q: AsRef<[u8]> + ?Sized>(&mut self, key: &Q) -> bool {
            self.insert_checked_hash(self.seed.hash(key))
        }

        /// True if the key may have been inserted (false positives at the filter's
        /// rate); false means it certainly was not.
        #[inline]
        #[must_use]
        pub fn contains<Q: AsRef<[u8]> + ?Sized>(&self, key: &Q) -> bool {
            self.contains_hash(self.seed.hash(key))
        }
    };
}

/// `contains_batch` and `contains_hash_batch` from `contains_hash` and
/// `prefetch_hash`, which prefetches `$reads` (doc text); `$ty::<$params>` (e.g.
/// `"Bloom", "1024, 7"`) is the filter of the example.
macro_rules! batch_lookups {
    ($reads:literal, $ty:literal, $params:literal) => {
        /// Looks up `N` keys at once: `found[i] == self.contains(&keys[i])`.
        ///
        /// Same answers as `N` calls of [`contains`](Self::contains), faster on a
        /// filter larger than the CPU's caches: every key is hashed and
        #[doc = concat!($reads, " prefetched before any is tested, so the")]
        /// cache misses of the whole batch overlap each other and the hashing (on
        /// x86_64; elsewhere it is the same work as the loop). The fewer cache lines
        /// a key's lookup reads, the more this pays off. 16–32 keys per batch suit
        /// x86_64; `slice::as_chunks` cuts a slice into such arrays. Numbers: the
        /// crate README.
        ///
        /// ```
        #[doc = concat!("use loxo_bloom::", $ty, ";")]
        /// use loxo_core::Seed;
        ///
        #[doc = concat!("let mut f = ", $ty, "::<", $params, ">::new(Seed::new(1, 2));")]
        /// f.insert(b"b");
        /// assert_eq!(f.contains_batch(&[b"a", b"b", b"c"]), [false, true, false]);
        ///
        /// let keys: Vec<[u8; 8]> = (0..100u64).map(u64::to_le_bytes).collect();
        /// let (batches, rest) = keys.as_chunks::<16>();
        /// let found = batches.iter().flat_map(|b| f.contains_batch(b)).filter(|&x| x).count()
        ///     + rest.iter().filter(|k| f.contains(k)).count();
        /// assert_eq!(found, 0);
        /// ```
        #[inline]
        #[must_use]
        pub fn contains_batch<Q: AsRef<[u8]>, const N: usize>(&self, keys: &[Q; N]) -> [bool; N] {
            crate::prefetch::batch(
                &self.seed,
                keys,
                |h| self.prefetch_hash(h),
                |h| self.contains_hash(h),
            )
        }

        /// [`contains_batch`](Self::contains_batch) for keys hashed by the caller.
        #[inline]
        #[must_use]
        pub fn contains_hash_batch<const N: usize>(&self, hashes: &[KeyHash; N]) -> [bool; N] {
            crate::prefetch::batch_hashed(
                hashes,
                |h| self.prefetch_hash(h),
                |h| self.contains_hash(h),
            )
        }
    };
}
