//! Unit tests of `Spreaders`: reports on small streams, merge, clear, the wire
//! format's round trip and refusals, the view, sizes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;

use loxo_core::wire::{Frame, SketchKind, HEADER_LEN};
use loxo_core::{DecodeError, MergeError, Seed};
use std::vec;
use std::vec::Vec;

use crate::{SpreadView, Spreaders};

const SEED: Seed = Seed::new(0x5350_5245_4144, 0x7465_7374);

type Small = Spreaders<u32, 64, 8, 256>;

/// Key 1 with 2 000 elements, key 2 with 300, keys 100.. with 2 each; key 3 sends
/// 50 000 packets to 4 elements.
fn stream(s: &mut Small) {
    for e in 0..2000u32 {
        s.insert(&1, &e.to_le_bytes());
    }
    for e in 0..300u32 {
        s.insert(&2, &e.to_le_bytes());
    }
    for k in 100..1100u32 {
        s.insert(&k, b"a");
        s.insert(&k, b"b");
    }
    for i in 0..50_000u32 {
        s.insert(&3, &(i % 4).to_le_bytes());
    }
}

#[test]
fn reports_the_wide_keys_not_the_heavy_one() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    let mut top = heapless::Vec::<_, 8>::new();
    let n = s.report(200.0, 0.0, &mut top);
    assert_eq!(n, 2);
    assert_eq!(top.iter().map(|t| t.key).collect::<Vec<_>>(), [1, 2]);
    for (t, truth) in top.iter().zip([2000.0, 300.0]) {
        assert!(t.lower(4.0) <= truth && truth <= t.upper(4.0), "{t:?}");
        assert!(!t.saturated);
        assert!(t.sampled >= 1);
    }
    // The heavy key's spread is 4, estimated near 0 within its error.
    let heavy = s.spread(&3, SEED.hash(&3u32.to_le_bytes()));
    assert!(
        heavy.lower(4.0) <= 4.0 && 4.0 <= heavy.upper(4.0),
        "{heavy:?}"
    );
    // 4 300 distinct pairs in all.
    let d = s.distinct_pairs();
    assert!((d.value - 4304.0).abs() < 4.0 * d.sigma, "{d:?}");
}

#[test]
fn a_full_output_keeps_the_largest() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    let mut top = heapless::Vec::<_, 1>::new();
    assert_eq!(s.report(200.0, 0.0, &mut top), 2);
    assert_eq!(top[0].key, 1);
    assert_eq!(s.report(1e9, 0.0, &mut top), 0);
    assert!(top.is_empty());
}

#[test]
fn repeats_change_nothing() {
    let mut a = Small::new(SEED);
    let mut b = Small::new(SEED);
    for e in 0..100u32 {
        a.insert(&7, &e.to_le_bytes());
        for _ in 0..3 {
            b.insert(&7, &e.to_le_bytes());
        }
    }
    assert!(a == b);
}

#[test]
fn merge_is_the_sketch_of_both_streams_in_any_order() {
    let mut whole = Small::new(SEED);
    stream(&mut whole);
    let (mut a, mut b) = (Small::new(SEED), Small::new(SEED));
    let mut n = 0u32;
    // Split the same pairs between two devices (every other pair).
    let mut split = |k: u32, e: &[u8]| {
        n += 1;
        if n.is_multiple_of(2) { &mut a } else { &mut b }.insert(&k, e);
    };
    for e in 0..2000u32 {
        split(1, &e.to_le_bytes());
    }
    for e in 0..300u32 {
        split(2, &e.to_le_bytes());
    }
    for k in 100..1100u32 {
        split(k, b"a");
        split(k, b"b");
    }
    for i in 0..50_000u32 {
        split(3, &(i % 4).to_le_bytes());
    }
    let mut ab = a.clone();
    ab.merge(&b).unwrap();
    let mut ba = b.clone();
    ba.merge(&a).unwrap();
    assert!(ab == whole);
    assert!(ba == whole);
    let mut c = a.clone();
    assert_eq!(
        c.merge(&Small::new(Seed::new(1, 1))),
        Err(MergeError::SeedMismatch)
    );
    assert!(c == a);
}

#[test]
fn clear_empties() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    assert!(!s.is_empty());
    s.clear();
    assert!(s == Small::new(SEED));
    assert!(s.is_empty() && s.occupied() == 0);
    assert_eq!(s.distinct_pairs().value, 0.0);
    let mut top = heapless::Vec::<_, 4>::new();
    assert_eq!(s.report(0.0, 0.0, &mut top), 0);
}

#[test]
fn hashed_insert_equals_keyed_insert() {
    let mut a = Small::new(SEED);
    let mut b = Small::new(SEED);
    for e in 0..50u32 {
        a.insert(&9, &e.to_le_bytes());
        b.insert_hashed(
            &9,
            SEED.hash(&9u32.to_le_bytes()),
            SEED.hash(&e.to_le_bytes()),
        );
    }
    assert!(a == b);
}

fn encode(s: &Small) -> Vec<u8> {
    let mut buf = vec![0u8; Small::max_encoded_len::<4>()];
    let n = s.encode_into(&mut buf).unwrap();
    assert_eq!(n, s.encoded_len());
    buf.truncate(n);
    buf
}

/// Recomputes the CRC after an edit.
fn resign(buf: &mut [u8]) {
    let n = buf.len();
    let crc = crc32(&buf[..n - 4]);
    buf[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn wire_round_trip_and_merge_from_bytes() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    let bytes = encode(&s);
    let frame = Frame::parse(&bytes).unwrap();
    assert_eq!(frame.header().kind, SketchKind::Spread);
    assert_eq!(frame.header().params, [64, 8, 256, 4]);
    assert_eq!(
        bytes.len(),
        HEADER_LEN + 64 * 8 + 32 + s.occupied() * 12 + 4
    );
    let back = Small::decode(&bytes, SEED).unwrap();
    assert!(back == s);
    assert_eq!(encode(&back), bytes);
    let mut m = Small::new(SEED);
    m.merge_encoded(&bytes).unwrap();
    m.merge_encoded(&bytes).unwrap();
    assert!(m == s);
    // An empty sketch: pool and bitmap only.
    assert_eq!(encode(&Small::new(SEED)).len(), HEADER_LEN + 512 + 32 + 4);
}

#[test]
fn wire_refusals_leave_the_target_unchanged() {
    type Odd = Spreaders<u32, 16, 2, 60>;
    let mut s = Small::new(SEED);
    stream(&mut s);
    let bytes = encode(&s);
    let mut target = Small::new(SEED);
    target.insert(&5, b"x");
    let before = target.clone();
    let check = |target: &mut Small, bytes: &[u8], want: DecodeError| {
        assert_eq!(target.decode_into(bytes), Err(want));
        assert_eq!(target.merge_encoded(bytes), Err(want));
    };
    // Another seed.
    let mut other = Small::new(Seed::new(1, 2));
    assert!(matches!(
        other.decode_into(&bytes),
        Err(DecodeError::SeedMismatch { .. })
    ));
    // Another geometry.
    let mut wide = Spreaders::<u32, 64, 16, 256>::new(SEED);
    assert_eq!(
        wide.decode_into(&bytes),
        Err(DecodeError::ParameterMismatch {
            expected: 16,
            found: 8
        })
    );
    // Another key length.
    let mut long = Spreaders::<u64, 64, 8, 256>::new(SEED);
    assert_eq!(
        long.merge_encoded(&bytes),
        Err(DecodeError::ParameterMismatch {
            expected: 8,
            found: 4
        })
    );
    // A cell priority that its index cannot produce (256 cells: priorities are
    // multiples of 256 offset by the cell's share of 2³²).
    let mut bad = bytes.clone();
    let first_record = HEADER_LEN + 512 + 32;
    bad[first_record + 4] ^= 1;
    resign(&mut bad);
    check(&mut target, &bad, DecodeError::InvalidValue);
    // A padding bit set in the bitmap of a frame of 60 cells, and a bitmap bit
    // without its record.
    let mut odd = Odd::new(SEED);
    odd.insert(&1, b"y");
    let mut buf = vec![0u8; Odd::max_encoded_len::<4>()];
    let n = odd.encode_into(&mut buf).unwrap();
    buf.truncate(n);
    let bitmap = HEADER_LEN + 32;
    let mut padded = buf.clone();
    padded[bitmap + 7] |= 0x80;
    resign(&mut padded);
    assert_eq!(
        odd.clone().decode_into(&padded),
        Err(DecodeError::InvalidValue)
    );
    assert_eq!(
        SpreadView::parse(&padded).err(),
        Some(DecodeError::InvalidValue)
    );
    let empty = (0..60)
        .find(|&c| buf[bitmap + c / 8] >> (c % 8) & 1 == 0)
        .unwrap();
    let mut short = buf.clone();
    short[bitmap + empty / 8] |= 1 << (empty % 8);
    resign(&mut short);
    assert_eq!(
        odd.clone().merge_encoded(&short),
        Err(DecodeError::Truncated)
    );
    assert_eq!(Odd::decode(&buf, SEED).unwrap(), odd);
    // Flags.
    let mut flagged = bytes.clone();
    flagged[7] = 1;
    resign(&mut flagged);
    check(&mut target, &flagged, DecodeError::InvalidValue);
    assert!(target == before);
}

#[test]
fn view_reports_what_the_sketch_reports() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    let bytes = encode(&s);
    let view = SpreadView::parse(&bytes).unwrap();
    assert_eq!(view.occupied(), s.occupied());
    assert_eq!(view.distinct_pairs(), s.distinct_pairs());
    assert_eq!(view.seed_fingerprint(), SEED.fingerprint());
    let mut from_view = Vec::new();
    view.report(200.0, 0.0, |k, sp| {
        from_view.push((u32::from_le_bytes(k.try_into().unwrap()), sp.spread));
    });
    from_view.sort_by(|a, b| b.1.value.total_cmp(&a.1.value));
    let mut top = heapless::Vec::<_, 8>::new();
    s.report(200.0, 0.0, &mut top);
    assert_eq!(
        from_view,
        top.iter().map(|t| (t.key, t.spread)).collect::<Vec<_>>()
    );
    assert_eq!(
        view.memory_bytes(),
        core::mem::size_of::<Spreaders<[u8; 4], 64, 8, 256>>()
    );
}

#[test]
fn memory_is_the_documented_formula() {
    fn formula(s: usize, w: usize, c: usize, key: usize) -> usize {
        (s * w + c * (key + 9) + 16).next_multiple_of(8)
    }
    assert_eq!(
        Spreaders::<[u8; 16], 1024, 19, 512>::MEMORY_BYTES,
        formula(1024, 19, 512, 16)
    );
    assert_eq!(
        Spreaders::<[u8; 16], 128, 16, 128>::MEMORY_BYTES,
        formula(128, 16, 128, 16)
    );
    const { assert!(Spreaders::<[u8; 16], 1024, 19, 512>::MEMORY_BYTES <= 32 * 1024) };
    // u32 keys: Option<u32> is 8 bytes.
    assert_eq!(
        Spreaders::<u32, 64, 8, 64>::MEMORY_BYTES,
        64 * 8 + 64 * 16 + 16
    );
}

/// The report's two-evaluation screen agrees with the full estimate: with `z = 0`
/// a candidate is reported exactly when its estimate reaches the threshold (keys
/// within the solver's tolerance of it left out).
#[test]
fn the_screen_agrees_with_the_estimate() {
    let mut s = Small::new(SEED);
    stream(&mut s);
    let mut all = heapless::Vec::<_, 256>::new();
    s.report(0.0, 0.0, &mut all);
    assert!(all.len() > 100);
    for threshold in [1.0, 5.0, 20.0, 50.0, 100.0, 250.0, 1000.0, 1900.0, 3000.0] {
        let mut top = heapless::Vec::<_, 256>::new();
        s.report(threshold, 0.0, &mut top);
        for c in &all {
            let v = c.spread.value;
            if (v - threshold).abs() <= 1e-4 * threshold {
                continue;
            }
            let reported = top.iter().any(|t| t.key == c.key);
            assert_eq!(reported, v >= threshold, "{c:?} at {threshold}");
        }
    }
    // z > 0 reports a superset.
    let mut wide = heapless::Vec::<_, 256>::new();
    let mut narrow = heapless::Vec::<_, 256>::new();
    s.report(250.0, 2.0, &mut wide);
    s.report(250.0, 0.0, &mut narrow);
    assert!(narrow.iter().all(|n| wide.iter().any(|w| w.key == n.key)));
    assert!(wide.len() >= narrow.len());
}
