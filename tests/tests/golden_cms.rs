//! Golden files of the Count-Min family wire formats, decoded and re-encoded byte for
//! byte. Regenerate only after a deliberate, versioned format change:
//! `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_cms`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cms::{Cms, CmsCu, CountSketch};
use loxo_core::{DecodeError, Seed};

use loxo_tests::golden::check;

const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0063_6d73);

fn stream() -> impl Iterator<Item = ([u8; 4], u64)> {
    (0u32..200).map(|i| ((i % 37).to_le_bytes(), u64::from(i % 7 + 1) * 64))
}

#[test]
fn cms_plain_u32() {
    let mut f = Cms::<32, 3>::new(SEED);
    stream().for_each(|(k, w)| f.add(&k, w));
    let (back, bytes) = loxo_tests::golden_round_trip!(
        "cms.bin",
        f.clone(),
        Cms::<32, 3>::new(SEED),
        36 + 8 + 32 * 3 * 4 + 4
    );
    assert_eq!(
        back.estimate(&5u32.to_le_bytes()),
        f.estimate(&5u32.to_le_bytes())
    );
    // The same bytes are refused as conservative, as u16 counters, or under another seed.
    assert!(matches!(
        CmsCu::<32, 3>::new(SEED).decode_into(&bytes),
        Err(DecodeError::WrongKind { .. })
    ));
    assert!(matches!(
        Cms::<32, 3, u16>::new(SEED).decode_into(&bytes),
        Err(DecodeError::ParameterMismatch { .. })
    ));
    assert!(matches!(
        Cms::<32, 3>::new(Seed::new(1, 1)).decode_into(&bytes),
        Err(DecodeError::SeedMismatch { .. })
    ));
}

#[test]
fn cms_conservative_u16() {
    let mut f = CmsCu::<32, 3, u16>::new(SEED);
    stream().for_each(|(k, w)| f.add(&k, w));
    loxo_tests::golden_round_trip!(
        "cms_conservative.bin",
        f,
        CmsCu::<32, 3, u16>::new(SEED),
        36 + 8 + 32 * 3 * 2 + 4
    );
}

#[test]
fn count_sketch() {
    let mut f = CountSketch::<16, 3>::new(SEED);
    stream().for_each(|(k, w)| f.add(&k, i64::try_from(w).unwrap() - 200));
    loxo_tests::golden_round_trip!(
        "count_sketch.bin",
        f,
        CountSketch::<16, 3>::new(SEED),
        36 + 16 * 3 * 8 + 4
    );
}

#[test]
fn space_saving() {
    use loxo_cms::{SpaceSaving, TopK};
    let mut f = SpaceSaving::<u32, 8>::new();
    for (k, w) in stream() {
        let key = u32::from_le_bytes(k);
        f.update(&key, SEED.hash(&k), w);
    }
    let mut buf = vec![0u8; f.encoded_len()];
    let n = f.encode_into(&SEED, &mut buf).unwrap();
    assert_eq!(n, 36 + 8 + 4 + 8 * (4 + 20) + 4);
    let stored = check("space_saving.bin", &buf);
    let mut back = SpaceSaving::<u32, 8>::new();
    back.decode_into(&SEED, &stored).unwrap();
    let mut again = vec![0u8; n];
    back.encode_into(&SEED, &mut again).unwrap();
    assert_eq!(again, stored);
    let (mut a, mut b) = (heapless::Vec::<_, 8>::new(), heapless::Vec::<_, 8>::new());
    f.report(&mut a);
    back.report(&mut b);
    assert_eq!(a, b);
    assert_eq!(back.total(), f.total());
}

#[test]
fn heavy_keeper_of_flow_keys() {
    use loxo_cms::{HeavyKeeper, TopK};
    use loxo_flow::FlowKey;
    let mut f = HeavyKeeper::<16, 2, 4, FlowKey>::new(3);
    for (k, w) in stream() {
        let key = FlowKey::v4([10, 0, 0, k[0]], [10, 0, 1, 1], 1000, 443, 6);
        f.update(&key, SEED.hash(&key), w);
    }
    let mut buf = vec![0u8; f.encoded_len()];
    let n = f.encode_into(&SEED, &mut buf).unwrap();
    assert_eq!(n, 36 + 16 + 8 * 16 * 2 + 4 + 4 * (38 + 20) + 4);
    let stored = check("heavy_keeper.bin", &buf);
    let mut back = HeavyKeeper::<16, 2, 4, FlowKey>::new(0);
    back.decode_into(&SEED, &stored).unwrap();
    let mut again = vec![0u8; n];
    back.encode_into(&SEED, &mut again).unwrap();
    assert_eq!(again, stored);
    let (mut a, mut b) = (heapless::Vec::<_, 4>::new(), heapless::Vec::<_, 4>::new());
    f.report(&mut a);
    back.report(&mut b);
    assert_eq!(a, b);
    // Updates continue identically (same buckets, heap and decay RNG).
    let key = FlowKey::v4([10, 0, 0, 1], [10, 0, 1, 1], 1000, 443, 6);
    f.update(&key, SEED.hash(&key), 999);
    back.update(&key, SEED.hash(&key), 999);
    assert_eq!(
        f.estimate(&key, SEED.hash(&key)),
        back.estimate(&key, SEED.hash(&key))
    );
    assert!(matches!(
        HeavyKeeper::<16, 2, 4, FlowKey>::new(0).decode_into(&Seed::new(9, 9), &stored),
        Err(DecodeError::SeedMismatch { .. })
    ));
}
