//! Golden files of the `spread` wire format (kind 15, since version 2): an empty
//! sketch, a fan-out sketch with IPv6-sized keys (one scanner among many small
//! sources), and the merge of that stream split over two devices (the same bytes as
//! the whole). The stored frames decode into the same sketches, re-encode byte for
//! byte, and `SpreadView` reads them. Regenerate (after a deliberate, versioned
//! format change only) with `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_spread`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::wire::{Frame, SketchKind, HEADER_LEN, TRAILER_LEN};
use loxo_core::Seed;
use loxo_spread::{SpreadView, Spreaders};
use loxo_tests::golden_round_trip;

/// "golden", "spread".
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x7370_7265_6164);

type FanOut = Spreaders<[u8; 16], 16, 8, 64>;

/// 2001:db8::`i` as 16 bytes.
fn addr(i: u32) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    a[12..].copy_from_slice(&i.to_be_bytes());
    a
}

/// The stream: source 1 scans 1 000 destinations; sources 100 ..< 300 reach 2 each;
/// every pair twice. `part` keeps every pair (`None`) or one half of them.
fn fan_out(part: Option<u32>) -> FanOut {
    let mut s = FanOut::new(SEED);
    let mut n = 0u32;
    let mut add = |src: u32, dst: u32| {
        n += 1;
        if part.is_none_or(|p| n % 2 == p) {
            s.insert(&addr(src), &addr(dst));
            s.insert(&addr(src), &addr(dst));
        }
    };
    for dst in 0..1000 {
        add(1, 10_000 + dst);
    }
    for src in 100..300 {
        add(src, 7);
        add(src, 8);
    }
    s
}

/// The header and the payload's layout: pool, bitmap, then one 24-byte record per
/// set bit, each record's priority consistent with its cell.
fn check_layout(stored: &[u8], s: &FanOut) {
    let frame = Frame::parse(stored).unwrap();
    let h = frame.header();
    assert_eq!(h.kind, SketchKind::Spread);
    assert_eq!(h.params, [16, 8, 64, 16]);
    assert_eq!(h.flags, 0);
    assert_eq!(h.seed_fingerprint, SEED.fingerprint());
    let p = frame.payload();
    let bitmap = &p[128..136];
    let set: Vec<usize> = (0..64)
        .filter(|&c| bitmap[c / 8] >> (c % 8) & 1 == 1)
        .collect();
    assert_eq!(set.len(), s.occupied());
    assert_eq!(
        stored.len(),
        HEADER_LEN + 128 + 8 + 24 * set.len() + TRAILER_LEN
    );
    for (r, &c) in p[136..].chunks_exact(24).zip(&set) {
        let priority = u32::from_le_bytes(r[4..8].try_into().unwrap());
        // (cell·2³² + priority) is a multiple of the cell count.
        assert_eq!(((c as u64) << 32 | u64::from(priority)) % 64, 0);
        let key: [u8; 16] = r[8..].try_into().unwrap();
        let tag = u32::from_le_bytes(r[..4].try_into().unwrap());
        assert_eq!(tag, (SEED.hash(&key).get() >> 32) as u32);
    }
}

#[test]
fn empty() {
    let s = FanOut::new(SEED);
    let (back, stored) = golden_round_trip!(
        "spread_empty.bin",
        s.clone(),
        fan_out(Some(0)),
        HEADER_LEN + 128 + 8 + TRAILER_LEN
    );
    check_layout(&stored, &s);
    assert!(back.is_empty());
    assert_eq!(back.distinct_pairs().value, 0.0);
}

#[test]
fn fan_out_scanner() {
    let s = fan_out(None);
    let len = s.encoded_len();
    let (back, stored) =
        golden_round_trip!("spread_fan_out.bin", s.clone(), FanOut::new(SEED), len);
    check_layout(&stored, &s);
    let mut top = heapless::Vec::<_, 4>::new();
    assert_eq!(back.report(500.0, 0.0, &mut top), 1);
    assert_eq!(top[0].key, addr(1));
    assert!(top[0].lower(4.0) <= 1000.0 && 1000.0 <= top[0].upper(4.0));
    let view = SpreadView::parse(&stored).unwrap();
    let mut keys = Vec::new();
    view.report(500.0, 0.0, |k, _| keys.push(k.to_vec()));
    assert_eq!(keys, [addr(1).to_vec()]);
}

#[test]
fn merged_halves_are_the_whole() {
    let mut s = fan_out(Some(0));
    s.merge(&fan_out(Some(1))).unwrap();
    assert!(s == fan_out(None));
    let len = s.encoded_len();
    let (_, stored) = golden_round_trip!("spread_merged.bin", s.clone(), FanOut::new(SEED), len);
    let whole = std::fs::read(loxo_tests::golden::path("spread_fan_out.bin")).unwrap();
    assert_eq!(stored, whole);
    // And merged from bytes, in place.
    let mut half = fan_out(Some(0));
    let mut buf = vec![0u8; FanOut::max_encoded_len::<16>()];
    let n = fan_out(Some(1)).encode_into(&mut buf).unwrap();
    half.merge_encoded(&buf[..n]).unwrap();
    assert!(half == s);
}
