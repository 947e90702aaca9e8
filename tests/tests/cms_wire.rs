//! Wire round trips of the Count-Min family for random streams, and corrupted or
//! truncated frames: always an error, never a panic, never a modified target.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cms::{Cms, CmsCu, CountSketch, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::Seed;
use proptest::prelude::*;

const SEED: Seed = Seed::new(4, 2);

fn plain<T>(f: &T, len: usize, enc: impl Fn(&T, &mut [u8]) -> usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let n = enc(f, &mut buf);
    buf.truncate(n);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn round_trips_and_corruption(
        stream in prop::collection::vec((0u32..64, 1u64..5000), 0..400),
        flip in any::<prop::sample::Index>(),
        x in 1u8..,
        cut in any::<prop::sample::Index>(),
    ) {
        let mut cms = Cms::<16, 3, u16>::new(SEED);
        let mut cu = CmsCu::<16, 3>::new(SEED);
        let mut cs = CountSketch::<16, 3>::new(SEED);
        let mut ss = SpaceSaving::<u32, 6>::new();
        let mut hk = HeavyKeeper::<8, 2, 6, u32>::new(5);
        for (k, w) in &stream {
            let b = k.to_le_bytes();
            cms.add(&b, *w);
            cu.add(&b, *w);
            cs.add(&b, i64::try_from(*w).unwrap() - 2500);
            ss.update(k, SEED.hash(&b), *w);
            hk.update(k, SEED.hash(&b), *w);
        }
        macro_rules! check {
            ($f:expr, $fresh:expr, $enc:expr, $dec:expr) => {{
                let f = &$f;
                let bytes = $enc(f);
                let mut back = $fresh;
                $dec(&mut back, &bytes).unwrap();
                prop_assert_eq!($enc(&back), bytes.clone());
                let before = $enc(&back);
                let mut bad = bytes.clone();
                let i = flip.index(bad.len());
                bad[i] ^= x;
                prop_assert!($dec(&mut back, &bad).is_err());
                prop_assert!($dec(&mut back, &bytes[..cut.index(bytes.len())]).is_err());
                prop_assert_eq!($enc(&back), before);
            }};
        }
        check!(cms, Cms::<16, 3, u16>::new(SEED),
            |f: &Cms<16, 3, u16>| plain(f, f.encoded_len(), |f, b| f.encode_into(b).unwrap()),
            |f: &mut Cms<16, 3, u16>, b: &[u8]| f.decode_into(b));
        check!(cu, CmsCu::<16, 3>::new(SEED),
            |f: &CmsCu<16, 3>| plain(f, f.encoded_len(), |f, b| f.encode_into(b).unwrap()),
            |f: &mut CmsCu<16, 3>, b: &[u8]| f.decode_into(b));
        check!(cs, CountSketch::<16, 3>::new(SEED),
            |f: &CountSketch<16, 3>| plain(f, f.encoded_len(), |f, b| f.encode_into(b).unwrap()),
            |f: &mut CountSketch<16, 3>, b: &[u8]| f.decode_into(b));
        check!(ss, SpaceSaving::<u32, 6>::new(),
            |f: &SpaceSaving<u32, 6>| plain(f, f.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap()),
            |f: &mut SpaceSaving<u32, 6>, b: &[u8]| f.decode_into(&SEED, b));
        check!(hk, HeavyKeeper::<8, 2, 6, u32>::new(1),
            |f: &HeavyKeeper<8, 2, 6, u32>| plain(f, f.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap()),
            |f: &mut HeavyKeeper<8, 2, 6, u32>, b: &[u8]| f.decode_into(&SEED, b));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = Cms::<16, 3>::new(SEED).decode_into(&bytes);
        let _ = CountSketch::<16, 3>::new(SEED).decode_into(&bytes);
        let _ = SpaceSaving::<u32, 6>::new().decode_into(&SEED, &bytes);
        let _ = HeavyKeeper::<8, 2, 6, u32>::new(1).decode_into(&SEED, &bytes);
    }
}
