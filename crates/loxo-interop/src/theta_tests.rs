#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;
use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::*;

/// Images the `datasketches` PyPI package (5.2.0, C++ core) wrote, as hex:
/// `update_theta_sketch(lg_k)` fed the Python ints `0..n` (`update(i)`), then
/// `compact(ordered).serialize(compress)`.
mod python {
    /// lg_k 10, keys 0..5, ordered, v3.
    pub(super) const EXACT5: &str = "02030300001acc93050000000000000015f97dcbbd86a10540de2ee1c9db3d08c397fc1281709d1ee56b61eec8804420ba40b3c1da06695d";
    /// The same, `compact(False)`: unordered.
    pub(super) const EXACT5_UNORDERED: &str = "02030300000acc93050000000000000040de2ee1c9db3d08c397fc1281709d1ee56b61eec880442015f97dcbbd86a105ba40b3c1da06695d";
    /// The same, `serialize(True)`: v4, 62 bits per delta.
    pub(super) const EXACT5_V4: &str = "0104033e011acc930516861af72df7e45429c550c15b0e52b597e52dcc736e60c1a71047db64d422f49218474d475354";
    /// `update_theta_sketch(10)` never updated.
    pub(super) const EMPTY: &str = "01030300001ecc93";
    /// `update("a")` only.
    pub(super) const SINGLE: &str = "01030300001acc9317c11d528507017b";
    /// lg_k 5, keys 0..100: 51 values, θ = 3288091941603431578, estimate
    /// 143.0592520628264; v4 (59 bits per delta).
    pub(super) const EST_V4: &str = "0204033b011acc939ad4182833a6a12d332bf0e396fb644140be73db46785bc5113264834c120a0d48321d8ac4ad9071bd9e6e2465f411f3e1335f4c42c4d6635af187694027f8c606fbd5e2047154218a1b4e67e48c19e33e1fe42bd74f44ca566e8198ceeb08aad295e1791915a3269209d67f46508bebc63486a953c10a89494be26bed49d135b16227eb1afce1bc278cab2727649054066e65dddd8a0d2fecd9b14710ba07f8f872e444593225806062d88d6ac5d09fe04e50d2a2a137edd10d86e615ba5f6a11e01be04e331341ccf6402e83b1bf678aad159622cfbba072bcbad938a5f43772391b78128a86ac854b6f4367a03c0a3656e5ee561af19324abe1ac033e0ebad8171b0838f7535abda72c861890136478de10b4cdbd5ed5552e0327bd6251cc8404a7e0bbbc0195501b923c80da79aa16a4bacb2d99e361f06fc8b3b2aed524bd542238a5869e89385978df620153d0cd7f4da1683e59242a84d7028419d24860be7ee80630293ed10f3e0254efb1ec0a9fe713c5f9de8acea499f2aacfb7a96f00";
}

/// An edit of an image's bytes.
type Mutation<'a> = dyn Fn(&mut Vec<u8>) + 'a;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const DS: Seed = datasketches_theta_seed(DEFAULT_UPDATE_SEED);

fn encode<const K: usize>(s: &ThetaSketch<K>) -> Vec<u8> {
    let mut buf = vec![0u8; encoded_len(s)];
    assert_eq!(encode_into(s, &mut buf), Ok(buf.len()));
    buf
}

fn keyed<const K: usize>(seed: Seed, keys: core::ops::Range<u32>) -> ThetaSketch<K> {
    let mut s = ThetaSketch::new(seed);
    for k in keys {
        s.insert(&k.to_le_bytes());
    }
    s
}

#[test]
fn seed_hash_and_seed_mapping() {
    assert_eq!(compute_seed_hash(DEFAULT_UPDATE_SEED), 0x93cc);
    assert_eq!(datasketches_update_seed(DS), 9001);
    let seed = Seed::new(3, 4);
    assert_eq!(datasketches_update_seed(seed), seed.fingerprint());
    assert_ne!(DS, datasketches_theta_seed(9002));
}

#[test]
fn python_exact_image_is_datasketches_hashing_byte_for_byte() {
    let img = hex(python::EXACT5);
    let view = CompactThetaImage::parse(&img).unwrap();
    assert!(view.is_ordered() && !view.is_empty() && !view.is_estimation_mode());
    assert_eq!(
        (view.serial_version(), view.retained(), view.estimate()),
        (3, 5, 5.0)
    );
    // loxo inserting the same keys with DataSketches' hash retains the same values
    // and writes the same bytes.
    let mut mine = ThetaSketch::<64>::new(DS);
    for i in 0..5i64 {
        mine.insert_hash(datasketches_theta_hash(&i.to_le_bytes(), 9001));
    }
    assert_eq!(encode(&mine), img);
    let back: ThetaSketch<64> = decode(&img, DS).unwrap();
    assert_eq!(encode(&back), img);
    // unordered and compressed forms of the same sketch decode to the same sketch
    for other in [python::EXACT5_UNORDERED, python::EXACT5_V4] {
        let other = hex(other);
        let view = CompactThetaImage::parse(&other).unwrap();
        assert_eq!(view.retained(), 5);
        let s: ThetaSketch<64> = decode(&other, DS).unwrap();
        assert_eq!(encode(&s), img);
    }
    assert!(!CompactThetaImage::parse(&hex(python::EXACT5_UNORDERED))
        .unwrap()
        .is_ordered());
}

#[test]
fn python_empty_single_and_compressed_estimation_images() {
    let empty = hex(python::EMPTY);
    let s: ThetaSketch<64> = decode(&empty, DS).unwrap();
    assert!(s.is_empty());
    assert_eq!(encode(&s), empty);

    let single = hex(python::SINGLE);
    let s: ThetaSketch<64> = decode(&single, DS).unwrap();
    assert_eq!((s.retained(), s.estimate()), (1, 1.0));
    assert_eq!(encode(&s), single);
    let mut a = ThetaSketch::<64>::new(DS);
    a.insert_hash(datasketches_theta_hash(b"a", 9001));
    assert_eq!(encode(&a), single);

    let v4 = hex(python::EST_V4);
    let view = CompactThetaImage::parse(&v4).unwrap();
    assert_eq!(view.serial_version(), 4);
    assert_eq!(
        (view.retained(), view.theta_long()),
        (51, 3288091941603431578)
    );
    assert_eq!(view.estimate(), 143.0592520628264);
    let s: ThetaSketch<128> = decode(&v4, DS).unwrap();
    assert_eq!(s.estimate(), 143.0592520628264);
    // the v3 image of the same sketch: 24-byte preamble, 51 ascending values
    let v3 = encode(&s);
    assert_eq!(v3.len(), 24 + 8 * 51);
    assert_eq!(&v3[..8], &[3, 3, 3, 0, 0, 0x1a, 0xcc, 0x93]);
    let back = CompactThetaImage::parse(&v3).unwrap();
    assert!(back.values().eq(view.values()));
}

#[test]
fn every_state_round_trips_with_its_preamble() {
    let seed = Seed::new(0x1234, 0x5678);
    let hash = compute_seed_hash(seed.fingerprint()).to_le_bytes();
    for (n, pre, len) in [
        (0u32, 1u8, 8usize),
        (1, 1, 16),
        (100, 2, 16 + 800),
        (5000, 3, 0),
    ] {
        let s = keyed::<512>(seed, 0..n);
        let img = encode(&s);
        assert_eq!(img[0], pre, "{n}");
        assert_eq!(&img[1..3], &[3, 3]);
        assert_eq!(&img[6..8], &hash);
        if len > 0 {
            assert_eq!(img.len(), len);
        } else {
            assert_eq!(img.len(), 24 + 8 * s.retained());
            assert_eq!(
                u64::from_le_bytes(img[16..24].try_into().unwrap()),
                s.theta_long()
            );
        }
        let view = CompactThetaImage::parse(&img).unwrap();
        assert!(view.is_ordered());
        assert_eq!(view.estimate(), s.estimate());
        let back: ThetaSketch<512> = decode(&img, seed).unwrap();
        assert_eq!(back.estimate(), s.estimate());
        assert_eq!(back.theta_long(), s.theta_long());
        assert_eq!(back.is_empty(), s.is_empty());
        let mut v: Vec<u64> = back.values().collect();
        v.sort_unstable();
        assert!(v.iter().copied().eq(view.values()));
        // into a smaller sketch: down-sampled, still a sketch of the same set
        let small: ThetaSketch<64> = decode(&img, seed).unwrap();
        assert!(small.retained() <= ThetaSketch::<64>::REBUILD_AT);
        assert!(small.values().all(|v| view.values().any(|w| w == v)));
        // a short buffer
        let mut buf = vec![0u8; img.len() - 1];
        assert_eq!(
            encode_into(&s, &mut buf),
            Err(EncodeError::BufferTooSmall { needed: img.len() })
        );
    }
}

#[test]
fn set_operation_states_encode_as_datasketches_would() {
    let seed = Seed::new(5, 6);
    // disjoint exact sets: no values, θ = 1 -> the empty image (Java's truth table)
    let mut both = keyed::<256>(seed, 0..10);
    both.intersect(&keyed::<256>(seed, 10..20)).unwrap();
    let img = encode(&both);
    assert_eq!((img.len(), &img[..6]), (8, &[1, 3, 3, 0, 0, 0x1e][..]));
    assert!(decode::<256>(&encode(&both), seed).unwrap().is_empty());
    // disjoint sampled sets: θ < 1 and no values -> preamble 3, count 0
    let mut both = keyed::<256>(seed, 0..10_000);
    both.intersect(&keyed::<256>(seed, 20_000..30_000)).unwrap();
    let img = encode(&both);
    assert_eq!((img[0], img.len()), (3, 24));
    let back: ThetaSketch<256> = decode(&img, seed).unwrap();
    assert_eq!((back.retained(), back.theta_long()), (0, both.theta_long()));
    assert!(!back.is_empty());
    // an empty A minus a sampled B: empty, θ back to 1
    let mut a = ThetaSketch::<256>::new(seed);
    a.subtract(&keyed::<256>(seed, 0..10_000)).unwrap();
    assert_eq!(a.theta_long(), THETA_MAX);
    assert_eq!(encode(&a).len(), 8);
}

#[test]
fn seed_checks() {
    let seed = Seed::new(1, 1);
    let img = encode(&keyed::<64>(seed, 0..3));
    let other = Seed::new(1, 2);
    assert_eq!(
        decode::<64>(&img, other).unwrap_err(),
        DecodeError::SeedMismatch {
            expected: u64::from(compute_seed_hash(other.fingerprint())),
            found: u64::from(compute_seed_hash(seed.fingerprint())),
        }
    );
    assert!(matches!(
        decode::<64>(&hex(python::EXACT5), seed),
        Err(DecodeError::SeedMismatch { .. })
    ));
    // empty images carry no usable seed: any seed reads them (as DataSketches)
    assert!(decode::<64>(&hex(python::EMPTY), seed).unwrap().is_empty());
}

#[test]
fn old_serial_versions() {
    let seed = Seed::new(9, 9);
    let s = keyed::<128>(seed, 0..1000);
    let v3 = encode(&s);
    // version 2: the version 3 layout (preamble 3 here)
    let mut v2 = v3.clone();
    v2[1] = 2;
    let view = CompactThetaImage::parse(&v2).unwrap();
    assert!(view.is_ordered());
    assert_eq!(decode::<128>(&v2, seed).unwrap().estimate(), s.estimate());
    // version 1: no seed hash, any seed reads it
    let mut v1 = v3.clone();
    v1[1] = 1;
    v1[6] = 0;
    v1[7] = 0;
    assert_eq!(CompactThetaImage::parse(&v1).unwrap().seed_hash(), None);
    assert_eq!(
        decode::<128>(&v1, Seed::new(0, 0)).unwrap().estimate(),
        s.estimate()
    );
    // version 2, preamble 2 with no values: empty
    let v2_empty = [2, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    assert!(CompactThetaImage::parse(&v2_empty).unwrap().is_empty());
    assert_eq!(
        CompactThetaImage::parse(&[2, 1, 3, 0, 0, 0, 0, 0]).unwrap_err(),
        DecodeError::InvalidValue
    );
}

#[test]
fn malformed_images_are_named() {
    let seed = Seed::new(2, 3);
    let img = encode(&keyed::<256>(seed, 0..2000)); // estimation mode
    let parse = |b: &[u8]| CompactThetaImage::parse(b).map(|_| ());
    let mutated = |f: &Mutation<'_>| {
        let mut b = img.clone();
        f(&mut b);
        parse(&b)
    };
    assert_eq!(parse(&img[..7]), Err(DecodeError::Truncated));
    assert_eq!(parse(&img[..img.len() - 1]), Err(DecodeError::Truncated));
    assert_eq!(parse(&img[..20]), Err(DecodeError::Truncated));
    assert_eq!(mutated(&|b| b.push(0)), Err(DecodeError::TrailingBytes));
    assert_eq!(
        mutated(&|b| b[2] = 2),
        Err(DecodeError::WrongKind {
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        mutated(&|b| b[1] = 5),
        Err(DecodeError::UnsupportedVersion(5))
    );
    let invalid: [&Mutation<'_>; 10] = [
        &|b| b[0] = 4,                                       // preamble longs
        &|b| b[5] |= FLAG_BIG_ENDIAN,                        // big-endian
        &|b| b[5] &= !FLAG_COMPACT,                          // not compact
        &|b| b[5] |= FLAG_EMPTY,                             // empty with values
        &|b| b[5] |= FLAG_SINGLE_ITEM,                       // single item, preamble 3
        &|b| b[16..24].fill(0),                              // θ = 0
        &|b| b[16..24].fill(0xff),                           // θ > 2^63 − 1
        &|b| b[24..32].fill(0),                              // a value 0
        &|b| b[24..32].copy_from_slice(&img[32..40]),        // not ascending (a repeat)
        &|b| b[16..24].copy_from_slice(&1u64.to_le_bytes()), // values above θ
    ];
    for (i, f) in invalid.iter().enumerate() {
        assert_eq!(mutated(f), Err(DecodeError::InvalidValue), "case {i}");
    }
    // an unordered image may repeat a value past parse; the sketch refuses it
    let mut dup = img.clone();
    dup[5] &= !FLAG_ORDERED;
    dup.copy_within(32..40, 24);
    assert!(CompactThetaImage::parse(&dup).is_ok());
    assert_eq!(
        decode::<256>(&dup, seed).unwrap_err(),
        DecodeError::InvalidValue
    );
    // a count that would overflow the length computation
    let mut huge = img.clone();
    huge[8..12].fill(0xff);
    assert_eq!(parse(&huge), Err(DecodeError::Truncated));
}

#[test]
fn malformed_compressed_images() {
    let img = hex(python::EXACT5_V4);
    let mutated = |f: &Mutation<'_>| {
        let mut b = img.clone();
        f(&mut b);
        CompactThetaImage::parse(&b).map(|_| ())
    };
    for (i, f) in [
        &(|b: &mut Vec<u8>| b[3] = 0) as &Mutation, // 0 bits per delta
        &|b| b[3] = 65,
        &|b| b[4] = 0, // count bytes
        &|b| b[4] = 5,
        &|b| b[5] |= FLAG_EMPTY,
        &|b| b[5] &= !FLAG_ORDERED,
        &|b| b[0] = 3,
        &|b| b[9..17].fill(0), // first delta 0: value 0
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(mutated(f), Err(DecodeError::InvalidValue), "case {i}");
    }
    // fewer bits per delta: the stream is now longer than needed
    assert_eq!(mutated(&|b| b[3] = 40), Err(DecodeError::TrailingBytes));
    assert_eq!(mutated(&|b| b[8] = 6), Err(DecodeError::Truncated));
    assert_eq!(mutated(&|b| b.truncate(9)), Err(DecodeError::Truncated));
}

#[test]
fn bit_reader() {
    let data = [0b1010_1100, 0b0101_0011, 0xff];
    assert_eq!(read_bits(&data, 0, 3), 0b101);
    assert_eq!(read_bits(&data, 3, 7), 0b011_0001);
    assert_eq!(read_bits(&data, 16, 8), 0xff);
    assert_eq!(read_bits(&[0xff; 8], 0, 64), u64::MAX);
}

proptest! {
    /// Any bytes: an error or a valid image, never a panic; a parsed image decodes
    /// into a sketch (or names why not) and re-encodes to an image that parses.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(view) = CompactThetaImage::parse(&bytes) {
            prop_assert!(view.values().all(|v| v != 0 && v < view.theta_long()));
            let seed = Seed::new(0, 0);
            if let Ok(s) = view.to_sketch::<32>(seed) {
                let img = encode(&s);
                prop_assert!(CompactThetaImage::parse(&img).is_ok());
            }
        }
    }

    /// Valid images with one byte changed or cut short: an error or a valid image.
    #[test]
    fn mutated_images_never_panic(
        n in 0u32..3000,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let seed = Seed::new(11, 12);
        let img = encode(&keyed::<128>(seed, 0..n));
        let mut m = img.clone();
        m[at.index(img.len())] = byte;
        if let Ok(view) = CompactThetaImage::parse(&m) {
            prop_assert!(view.values().all(|v| v != 0 && v < view.theta_long()));
            let _ = view.to_sketch::<128>(seed);
        }
        let cut = cut.index(img.len());
        prop_assert!(CompactThetaImage::parse(&img[..cut]).is_err());
        // round trip of the valid image: same estimate, same values
        let back: ThetaSketch<128> = decode(&img, seed).unwrap();
        prop_assert_eq!(encode(&back), img);
    }
}
