//! HeavyKeeper [`HeavyKeeper<W, D, N, K>`]: count-with-exponential-decay top-k.

use loxo_core::KeyHash;

use crate::cms::MAX_DEPTH;
use crate::entry::Entry;
use crate::heap::KeyHeap;
use crate::topk::TopK;

/// The default decay base `b`: a foreign bucket with count `C` decays with
/// probability `b^−C`. 1.08 is the value recommended and used by Yang et al.
pub const DECAY_BASE: f64 = 1.08;

/// The default of `HeavyKeeper`'s `B` parameter: `b` in hundredths (1.08).
pub const DECAY_BASE_PERCENT: u32 = 108;

/// Length of the decay tables: `b^−k < 2^−32` beyond it for every `b ≥ 1.02`.
pub(crate) const DECAY_LEN: usize = 1_200;

/// `Decay::<B>::TABLE[k] = ⌊b^−k · 2³²⌋` with `b = B/100`; 0 (never) once
/// `b^−k < 2^−32`. Built at compile time, one table per `B` in use (4.8 KB of flash).
pub(crate) struct Decay<const B: u32>;

impl<const B: u32> Decay<B> {
    pub(crate) const TABLE: [u32; DECAY_LEN] = {
        let b = B as f64 / 100.0;
        let mut t = [0u32; DECAY_LEN];
        let mut p = 4_294_967_296.0_f64;
        let mut k = 0;
        while k < DECAY_LEN {
            t[k] = if p >= 4_294_967_295.0 {
                u32::MAX
            } else {
                p as u32
            };
            p /= b;
            k += 1;
        }
        t
    };
}

/// One bucket: a 32-bit key fingerprint and its count (0 = empty).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bucket {
    pub(crate) fp: u32,
    pub(crate) count: u32,
}

/// HeavyKeeper (Yang, Gong, Zhang et al., USENIX ATC 2018): top-k by
/// *count-with-exponential-decay*, accurate for the elephants in little memory.
///
/// `D` arrays of `W` buckets hold a (fingerprint, count) pair each; an `N`-entry
/// min-heap holds the candidate top keys. Per update of key `x` and each row `i`,
/// at bucket `index(i, W)`:
///
/// * empty bucket → take it: `(fp(x), w)`;
/// * same fingerprint → add `w`, but only if `x` is in the heap or the bucket's
///   count `C ≤ n_min` (the heap minimum) — the increment condition of the
///   authors' reference code (the paper prints `C < n_min`);
/// * other fingerprint → with probability `b^−⌈C/w⌉` (`b = B/100`, default
///   [`DECAY_BASE`] = 1.08)
///   decay it: `C ← C − w`, and if that reaches `C ≤ 0` the key takes the bucket
///   with count `w`.
///
/// The decay base is a type parameter, `B` in hundredths (`HeavyKeeper<W, D, N, K,
/// 160>` for b = 1.6; default [`DECAY_BASE_PERCENT`] = 108). With little memory per
/// heavy key a larger base protects established buckets from the tail: top-100 F1 at
/// 8 KiB on Zipf 0.8 goes from 0.77 (b = 1.08) to 0.94 (b = 1.6).
///
/// Then, with `maxv` the largest count `x` holds in its buckets: an unmonitored key
/// enters the heap with count `maxv` when the heap has room or `maxv > n_min`
/// (evicting the minimum); a monitored key's heap count becomes
/// `max(count + w, maxv)`.
///
/// That last rule deviates from the reference code, which sets the heap count to
/// `max(count, maxv)`: there a monitored elephant that loses its buckets to a
/// bigger colliding elephant stops counting. Counting monitored keys exactly in the
/// heap (still never above the truth, barring fingerprint collisions) cut the
/// top-100 ARE on Zipf(1.0), 10⁷ packets, 8 KiB from 0.099 to 0.0015–0.009
/// (`tests/tests/topk_accuracy.rs`).
///
/// # Weighted updates (an extension; the original counts packets only)
///
/// A weight `w` is treated as **one arrival measured in units of `w`**: decay
/// probability `b^−⌈C/w⌉`, decrement `w`, takeover with count `w`. For `w = 1`
/// this is exactly the reference algorithm. If every update has the same weight
/// `w`, every bucket and heap count is exactly `w ×` the unit-weight run's (same RNG
/// seed, same draws) — tested. Big packets therefore evict small flows as easily as
/// one packet evicts a one-packet flow, while a 64-byte packet hardly dents a
/// bucket worth many 1500-byte packets. Expanding `w` into `w` unit arrivals would
/// instead cost `w` RNG draws and make byte counts (`C` in the thousands, `b^−C ≈ 0`)
/// immune to decay.
///
/// # Parameters
///
/// * `W` — buckets per row, 1..=2³²−1; `D` — rows, 1..=32 (2 is the paper's choice);
/// * `N` — heap capacity (the `k` of top-k), 1..=32767; `K` — the key type.
///
/// Out-of-range parameters fail to compile (a failed `const` assertion, E0080), e.g.
/// a decay base below 1.02 or more than 32 rows:
///
/// ```compile_fail,E0080
/// let _ = loxo_cms::HeavyKeeper::<64, 2, 8, u64, 101>::new(1); // b = 1.01
/// ```
///
/// ```compile_fail,E0080
/// let _ = loxo_cms::HeavyKeeper::<64, 33, 8, u64>::new(1); // D = 33
/// ```
///
/// Fingerprints are the low 32 bits of the caller's [`KeyHash`] (bucket indices use
/// the high bits of its probes), so a key is hashed once, never twice. The decay
/// RNG is a xorshift64 seeded by [`new`](Self::new): runs are reproducible.
///
/// # Guarantee
///
/// No worst-case bound: counts never exceed the truth except through a 2⁻³²
/// fingerprint collision, and the paper proves the error probability of an
/// elephant's count decays exponentially with its size — but it can under-count by
/// any amount (measured: −26 % for a flow of 1.6 % of a 10⁶-frame epoch), so reports
/// carry no bound at all ([`Entry::lower`](crate::Entry::lower) and `upper` are
/// `None`).
/// Bucket counts saturate at `u32::MAX`.
///
/// # Memory
///
/// `8·D·W` bytes of buckets + `N·(size_of::<Slot<K>>() + 14) + 8` of heap + 16 (RNG,
/// total): `HeavyKeeper<545, 1, 100, u64>` is 8 192 bytes. The 1.2 KB decay table is
/// a `const` (flash).
///
/// # Cost
///
/// Per update: an index probe and O(log N) heap work, `D` bucket reads/writes, at
/// most `D` xorshift draws; one integer division per decayed bucket when `w > 1`.
///
/// # Example
///
/// ```
/// use loxo_cms::{HeavyKeeper, TopK};
/// use loxo_core::Seed;
///
/// let seed = Seed::new(1, 2);
/// let mut hk = HeavyKeeper::<128, 2, 8, u64>::new(42);
/// for i in 0..10_000u64 {
///     let key = if i % 3 == 0 { u64::MAX } else { i }; // 3334 times u64::MAX
///     hk.update(&key, seed.hash_u64(key), 1);
/// }
/// let mut top = heapless::Vec::<_, 1>::new();
/// hk.report(&mut top);
/// assert_eq!(top[0].key, u64::MAX);
/// assert!(top[0].count > 3200 && top[0].count <= 3334, "{top:?}");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HeavyKeeper<
    const W: usize,
    const D: usize,
    const N: usize,
    K,
    const B: u32 = DECAY_BASE_PERCENT,
> {
    pub(crate) rows: [[Bucket; W]; D],
    pub(crate) heap: KeyHeap<K, N>,
    pub(crate) rng: u64,
    pub(crate) total: u64,
}

impl<const W: usize, const D: usize, const N: usize, K: Copy + Eq, const B: u32>
    HeavyKeeper<W, D, N, K, B>
{
    /// The decay base `b = B/100`.
    pub const DECAY_BASE: f64 = B as f64 / 100.0;

    const CHECK: () = {
        assert!(
            B >= 102 && B <= 1_000,
            "HeavyKeeper: decay base B/100 must be in 1.02..=10"
        );
        assert!(
            W >= 1 && W <= u32::MAX as usize,
            "HeavyKeeper: W must be in 1..=u32::MAX"
        );
        assert!(D >= 1 && D <= MAX_DEPTH, "HeavyKeeper: D must be in 1..=32");
    };

    /// An empty summary whose decay RNG is seeded from `rng_seed`.
    #[must_use]
    pub const fn new(rng_seed: u64) -> Self {
        let () = Self::CHECK;
        Self {
            rows: [[Bucket { fp: 0, count: 0 }; W]; D],
            heap: KeyHeap::new(),
            rng: crate::bucket::rng_start(rng_seed),
            total: 0,
        }
    }

    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        crate::bucket::next_u32(&mut self.rng)
    }

    /// The sketch's own estimate of any key: the largest count among its buckets
    /// holding its fingerprint (0 if none). Usually an underestimate for mice.
    pub fn sketch_estimate(&self, hash: KeyHash) -> u64 {
        let fp = hash.get() as u32;
        let mut maxv = 0;
        for (i, row) in self.rows.iter().enumerate() {
            if let Some(b) = row.get(hash.index(i as u32, W as u32) as usize) {
                if b.count > 0 && b.fp == fp {
                    maxv = maxv.max(b.count);
                }
            }
        }
        u64::from(maxv)
    }
}

impl<const W: usize, const D: usize, const N: usize, K: Copy + Eq, const B: u32> TopK<K>
    for HeavyKeeper<W, D, N, K, B>
{
    fn update(&mut self, key: &K, hash: KeyHash, weight: u64) {
        if weight == 0 {
            return;
        }
        self.total = self.total.saturating_add(weight);
        let w = u32::try_from(weight).unwrap_or(u32::MAX);
        let fp = hash.get() as u32;
        let pos = self.heap.find(key, hash);
        let n_min = if self.heap.is_full() {
            self.heap.min_count().unwrap_or(0)
        } else {
            u64::MAX
        };
        let mut maxv = 0u32;
        for i in 0..D {
            let j = hash.index(i as u32, W as u32) as usize;
            let Some(b) = self.rows.get(i).and_then(|r| r.get(j)).copied() else {
                continue;
            };
            let nb = if b.count == 0 {
                maxv = maxv.max(w);
                Bucket { fp, count: w }
            } else if b.fp == fp {
                let count = if pos.is_some() || u64::from(b.count) <= n_min {
                    b.count.saturating_add(w)
                } else {
                    b.count
                };
                maxv = maxv.max(count);
                Bucket { fp: b.fp, count }
            } else {
                // k = ⌈C/w⌉ indexes the decay table; past its end there is no draw and
                // no decay. On 64-bit hosts that case (a mouse packet against an
                // elephant's bucket) is detected with a multiply, sparing a division's
                // latency; the outcome and the RNG stream are the same everywhere (a
                // 32-bit core's one-instruction `UDIV` is cheaper than the check).
                let beyond = cfg!(target_pointer_width = "64")
                    && u64::from(b.count) > (DECAY_LEN as u64 - 1) * u64::from(w);
                let decays = !beyond && {
                    let k = if w == 1 { b.count } else { b.count.div_ceil(w) } as usize;
                    Decay::<B>::TABLE
                        .get(k)
                        .is_some_and(|&p| self.next_u32() < p)
                };
                if !decays {
                    continue;
                }
                if b.count > w {
                    Bucket {
                        fp: b.fp,
                        count: b.count - w,
                    }
                } else {
                    maxv = maxv.max(w);
                    Bucket { fp, count: w }
                }
            };
            if let Some(slot) = self.rows.get_mut(i).and_then(|r| r.get_mut(j)) {
                *slot = nb;
            }
        }
        let maxv = u64::from(maxv);
        match pos {
            Some(p) => {
                let c = self.heap.count(p);
                self.heap.raise(p, maxv.max(c.saturating_add(weight)));
            }
            None if maxv == 0 => {}
            None if !self.heap.is_full() => self.heap.push(*key, hash, maxv, 0),
            None if maxv > n_min => {
                self.heap.replace_min(*key, hash, maxv, 0);
            }
            None => {}
        }
    }

    fn estimate(&self, key: &K, hash: KeyHash) -> Option<u64> {
        self.heap.count_of(key, hash)
    }

    fn report<const M: usize>(&self, out: &mut heapless::Vec<Entry<K>, M>) {
        self.heap.report(out);
        for e in out.iter_mut() {
            (e.lower, e.upper) = (None, None);
        }
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn capacity(&self) -> usize {
        N
    }

    fn clear(&mut self) {
        self.rows = [[Bucket { fp: 0, count: 0 }; W]; D];
        self.heap.clear();
        self.total = 0;
    }

    fn halve(&mut self) {
        for row in &mut self.rows {
            for b in row {
                b.count >>= 1;
            }
        }
        self.heap.halve();
        self.total >>= 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use loxo_core::mix64;

    use super::*;

    #[test]
    fn documented_size() {
        assert_eq!(core::mem::size_of::<HeavyKeeper<545, 1, 100, u64>>(), 8192);
    }

    #[test]
    fn decay_table_is_b_to_the_minus_k() {
        let t = &Decay::<108>::TABLE;
        assert_eq!(t[0], u32::MAX);
        let p5 = f64::from(t[5]) / 4_294_967_296.0;
        assert!((p5 - 1.08f64.powi(-5)).abs() < 1e-9);
        // b^−288 ≥ 2^−32 > b^−289: the old 289-entry table, then never.
        assert!(t[288] >= 1 && t[289] == 0 && t[DECAY_LEN - 1] == 0);
        let t = &Decay::<160>::TABLE;
        assert!((f64::from(t[3]) / 4_294_967_296.0 - 1.6f64.powi(-3)).abs() < 1e-9);
        // Every supported base reaches "never" inside the table.
        assert_eq!(Decay::<102>::TABLE[DECAY_LEN - 1], 0);
    }

    fn run(w: u64) -> HeavyKeeper<32, 2, 8, u64> {
        let mut hk = HeavyKeeper::<32, 2, 8, u64>::new(5);
        let mut x = 99u64;
        for _ in 0..50_000 {
            x = mix64(x.wrapping_add(1));
            // Skewed keys: small keys are frequent.
            let key = (x >> 40).trailing_zeros() as u64 * 1000 + (x & 3);
            hk.update(&key, KeyHash::from_u64(mix64(key ^ 0xabc)), w);
        }
        hk
    }

    #[test]
    fn constant_weight_scales_the_unit_run_exactly() {
        let one = run(1);
        for w in [3u64, 1500] {
            let scaled = run(w);
            assert_eq!(scaled.total, one.total * w);
            for (ra, rb) in one.rows.iter().zip(scaled.rows.iter()) {
                for (a, b) in ra.iter().zip(rb.iter()) {
                    assert_eq!(u64::from(a.count) * w, u64::from(b.count));
                    if a.count > 0 {
                        assert_eq!(a.fp, b.fp);
                    }
                }
            }
            let mut ea = heapless::Vec::<Entry<u64>, 8>::new();
            let mut eb = heapless::Vec::<Entry<u64>, 8>::new();
            one.report(&mut ea);
            scaled.report(&mut eb);
            let mut a: std_free::Pairs = ea.iter().map(|e| (e.key, e.count * w)).collect();
            let mut b: std_free::Pairs = eb.iter().map(|e| (e.key, e.count)).collect();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
        }
    }

    mod std_free {
        pub(super) type Pairs = heapless::Vec<(u64, u64), 8>;
    }

    #[test]
    fn halve_and_clear() {
        let mut hk = run(2);
        let before = hk.total();
        hk.halve();
        assert_eq!(hk.total(), before / 2);
        hk.clear();
        assert!(hk.is_empty());
        assert_eq!(hk.sketch_estimate(KeyHash::from_u64(1)), 0);
    }
}
