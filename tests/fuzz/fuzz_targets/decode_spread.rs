//! Any bytes into `Spreaders::decode_into` / `merge_encoded` at the golden files'
//! geometry (16-byte keys) and a `u32`-keyed one, and into `SpreadView::parse`, as
//! they are and re-signed (length field and CRC recomputed, so mutations reach the
//! payload checks): never a panic; a failed decode or merge leaves the target
//! unchanged; an accepted frame is a sketch whose own encoding is the input (the
//! format is canonical), whose merge into a sketch equals the decoded sketch merged
//! in, and whose report and distinct-pair estimate are finite — the same through
//! the view. A decoded sketch continued as a `HipSpreaders` (`from_sketch`, then
//! more pairs) reports finite estimates with ordered bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::Seed;
use loxo_core::WireKey;
use loxo_spread::{HipSpreaders, SpreadView, Spreaders};

/// The seed the golden files and the corpus were made with.
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x7370_7265_6164);

fn check<K, const S: usize, const W: usize, const C: usize, const L: usize>(data: &[u8], key: K)
where
    K: Copy + Eq + WireKey<L> + core::fmt::Debug,
{
    let mut target = Spreaders::<K, S, W, C>::new(SEED);
    for e in 0..64u32 {
        target.insert(&key, &e.to_le_bytes());
    }
    let before = target.clone();
    match target.decode_into(data) {
        Ok(()) => {
            let mut buf = vec![0u8; target.encoded_len()];
            let n = target.encode_into(&mut buf).expect("encoded_len fits");
            assert!(loxo_fuzz::same_frame(&buf[..n], data));
            let mut merged = before.clone();
            merged.merge_encoded(data).expect("decodable frames merge");
            let mut reference = before.clone();
            reference.merge(&target).expect("same seed");
            assert!(merged == reference);
            let d = target.distinct_pairs();
            assert!(d.value.is_finite() && d.value >= 0.0 && d.sigma >= 0.0);
            let mut top = heapless::Vec::<_, 8>::new();
            target.report(0.0, 1.0, &mut top);
            for s in &top {
                assert!(s.spread.value.is_finite() && s.spread.value >= 0.0);
                assert!(s.lower(4.0) <= s.upper(4.0));
            }
            let mut hip = HipSpreaders::<K, S, W, C, 4>::from_sketch(target.clone());
            for e in 0..256u32 {
                hip.insert(&key, &(e ^ 0x5a5a).to_le_bytes());
            }
            hip.report(0.0, 1.0, &mut top);
            for s in &top {
                assert!(s.spread.value.is_finite() && s.spread.value >= 0.0);
                assert!(s.lower(4.0) <= s.upper(4.0));
            }
        }
        Err(_) => {
            assert!(target == before);
            let mut m = before.clone();
            assert!(m.merge_encoded(data).is_err());
            assert!(m == before);
        }
    }
}

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        check::<[u8; 16], 16, 8, 64, 16>(data, [1; 16]);
        check::<u32, 64, 8, 256, 4>(data, 1);
        if let Ok(view) = SpreadView::parse(data) {
            let d = view.distinct_pairs();
            assert!(d.value.is_finite());
            view.report(0.0, 0.0, |key, s| {
                assert_eq!(key.len(), view.params()[3] as usize);
                assert!(s.spread.value.is_finite());
            });
            assert!(view.occupied() <= view.params()[2] as usize);
        }
    }
});
