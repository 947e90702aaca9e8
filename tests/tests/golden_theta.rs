//! Golden files of the `theta` wire format (kind 14, since version 2): an exact-mode
//! sketch, one in estimation mode, an empty one and the result of a set operation
//! (an intersection, θ the smaller of its inputs'). The stored frames decode into the
//! same sketches and re-encode byte for byte; their values are ascending.
//! Regenerate (after a deliberate, versioned format change only) with
//! `LOXO_BLESS=1 cargo test -p loxo-tests --test golden_theta`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::wire::{Frame, SketchKind, HEADER_LEN, TRAILER_LEN};
use loxo_core::Seed;
use loxo_tests::golden_round_trip;
use loxo_theta::{ThetaSketch, THETA_MAX};

/// "golden", "theta".
const SEED: Seed = Seed::new(0x676f_6c64_656e, 0x0074_6865_7461);

fn sketch(keys: std::ops::Range<u32>) -> ThetaSketch<256> {
    let mut s = ThetaSketch::<256>::new(SEED);
    for k in keys {
        s.insert(&k.to_le_bytes());
    }
    s
}

/// The header's fields and that the payload is θ, `n`, then `n` ascending values
/// below θ (the canonical form the decoder insists on).
fn check_layout(stored: &[u8], s: &ThetaSketch<256>, flags: u8) {
    let frame = Frame::parse(stored).unwrap();
    let h = frame.header();
    assert_eq!(h.kind, SketchKind::Theta);
    assert_eq!(h.params, [256, 63, 0, 0]);
    assert_eq!(h.flags, flags);
    assert_eq!(h.seed_fingerprint, SEED.fingerprint());
    let p = frame.payload();
    assert_eq!(
        u64::from_le_bytes(p[..8].try_into().unwrap()),
        s.theta_long()
    );
    let n = u32::from_le_bytes(p[8..12].try_into().unwrap()) as usize;
    assert_eq!(n, s.retained());
    assert_eq!(stored.len(), HEADER_LEN + 12 + 8 * n + TRAILER_LEN);
    let values: Vec<u64> = p[12..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(values.iter().all(|&v| v != 0 && v < s.theta_long()));
    let mut own: Vec<u64> = s.values().collect();
    own.sort_unstable();
    assert_eq!(values, own);
}

#[test]
fn exact_mode() {
    let s = sketch(0..100);
    let n = 36 + 12 + 8 * 100 + 4;
    let (back, stored) = golden_round_trip!(
        "theta_exact.bin",
        s.clone(),
        ThetaSketch::<256>::new(SEED),
        n
    );
    check_layout(&stored, &s, 0);
    assert_eq!(back.theta_long(), THETA_MAX);
    assert!((back.estimate() - 100.0).abs() < 1e-9);
}

#[test]
fn estimation_mode() {
    let s = sketch(0..10_000);
    assert!(s.is_estimation_mode());
    let len = s.encoded_len();
    let (back, stored) = golden_round_trip!(
        "theta_estimation.bin",
        s.clone(),
        ThetaSketch::<256>::new(SEED),
        len
    );
    check_layout(&stored, &s, 0);
    // Between rebuilds a sketch of K = 256 holds 128 ..= 239 values.
    assert!((128..240).contains(&back.retained()), "{}", back.retained());
    assert!(back.lower_bound(3) <= 10_000.0 && 10_000.0 <= back.upper_bound(3));
}

#[test]
fn empty() {
    let s = ThetaSketch::<256>::new(SEED);
    let (back, stored) =
        golden_round_trip!("theta_empty.bin", s.clone(), sketch(0..5), 36 + 12 + 4);
    check_layout(&stored, &s, 1);
    assert!(back.is_empty());
    assert_eq!(back.estimate(), 0.0);
}

#[test]
fn intersection() {
    // |A ∩ B| = 3 000 of a union of 9 000.
    let mut s = sketch(0..6_000);
    s.intersect(&sketch(3_000..9_000)).unwrap();
    let len = s.encoded_len();
    let (back, stored) = golden_round_trip!(
        "theta_intersection.bin",
        s.clone(),
        ThetaSketch::<256>::new(SEED),
        len
    );
    check_layout(&stored, &s, 0);
    assert!(back.theta_long() < THETA_MAX && !back.is_empty());
    assert!(back.lower_bound(3) <= 3_000.0 && 3_000.0 <= back.upper_bound(3));
}
