//! The Bloom-family decoders behind a valid CRC: crafted frames, re-signed with a
//! correct CRC-32 so the checksum does not hide them, must each be refused for their
//! own reason (`DecodeError` variant), and a refused decode leaves the target as it
//! was. Bit flips and truncation (caught by the CRC and the length checks) are
//! covered by `bloom_properties.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::{BlockedBloom, Bloom, CountingBloom, Cuckoo, RegisterBloom};
use loxo_core::{DecodeError, Seed};
use proptest::prelude::*;

const SEED: Seed = Seed::new(0x0b10, 0x0f17);
/// Payload offset (after the fixed header).
const P: usize = 36;

use loxo_tests::wire::resign;

/// `bytes` with `edit` applied and the CRC recomputed.
fn edited(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = bytes.to_vec();
    edit(&mut b);
    resign(&mut b);
    b
}

/// The envelope checks every Bloom-family decoder shares, each behind a valid CRC:
/// flags, kind, each parameter, seed fingerprint, payload length.
macro_rules! envelope {
    ($filter:expr, $target:expr, $other_kind:expr) => {{
        let f = $filter;
        let mut buf = vec![0u8; f.encoded_len()];
        f.encode_into(&mut buf).unwrap();
        let mut target = $target;
        let before = target.clone();
        let mut refuse = |bytes: Vec<u8>, want: DecodeError| {
            assert_eq!(target.decode_into(&bytes), Err(want));
            assert_eq!(target, before, "a refused decode changed the target");
        };
        refuse(edited(&buf, |b| b[7] = 1), DecodeError::InvalidValue);
        refuse(
            edited(&buf, |b| b[6] = $other_kind),
            DecodeError::WrongKind {
                expected: buf[6],
                found: $other_kind,
            },
        );
        for param in 0..4 {
            let at = 16 + 4 * param;
            let v = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
            refuse(
                edited(&buf, |b| b[at] ^= 1),
                DecodeError::ParameterMismatch {
                    expected: v,
                    found: v ^ 1,
                },
            );
        }
        let fp = u64::from_le_bytes(buf[8..16].try_into().unwrap());
        refuse(
            edited(&buf, |b| b[8] ^= 1),
            DecodeError::SeedMismatch {
                expected: fp,
                found: fp ^ 1,
            },
        );
        // One payload byte more, declared in the length field.
        refuse(
            edited(&buf, |b| {
                let n = u32::from_le_bytes(b[32..36].try_into().unwrap()) + 1;
                b[32..36].copy_from_slice(&n.to_le_bytes());
                b.insert(b.len() - 4, 0);
            }),
            DecodeError::TrailingBytes,
        );
        // One payload byte less.
        refuse(
            edited(&buf, |b| {
                let n = u32::from_le_bytes(b[32..36].try_into().unwrap()) - 1;
                b[32..36].copy_from_slice(&n.to_le_bytes());
                b.remove(b.len() - 5);
            }),
            DecodeError::Truncated,
        );
        // The unedited frame decodes (the edits above are what was refused).
        target.decode_into(&buf).unwrap();
        assert_eq!(&target, &f);
        buf
    }};
}

fn keyed<F: FnMut(&[u8])>(mut insert: F) {
    for k in 0u32..60 {
        insert(&k.to_le_bytes());
    }
}

#[test]
fn envelope_checks_behind_a_valid_crc() {
    let mut b = Bloom::<16, 3>::new(SEED);
    keyed(|k| b.insert(k));
    envelope!(b, Bloom::<16, 3>::new(SEED), 3);
    let mut bb = BlockedBloom::<2, 5>::new(SEED);
    keyed(|k| bb.insert(k));
    let blocked = envelope!(bb, BlockedBloom::<2, 5>::new(SEED), 1);
    let mut rb = RegisterBloom::<16, 5>::new(SEED);
    keyed(|k| rb.insert(k));
    envelope!(rb, RegisterBloom::<16, 5>::new(SEED), 1);
    let mut cb = CountingBloom::<16, 3>::new(SEED);
    keyed(|k| cb.insert(k));
    envelope!(cb, CountingBloom::<16, 3>::new(SEED), 1);
    let mut cf = Cuckoo::<32, u16>::new(SEED);
    keyed(|k| cf.insert(k).unwrap());
    envelope!(cf, Cuckoo::<32, u16>::new(SEED), 1);

    // The blocked layout changed in version 2: a version-1 frame would put bits where
    // no probe looks (false negatives), so it is refused.
    let mut target = BlockedBloom::<2, 5>::new(SEED);
    let v1 = edited(&blocked, |b| b[4..6].copy_from_slice(&1u16.to_le_bytes()));
    assert_eq!(
        target.decode_into(&v1),
        Err(DecodeError::UnsupportedVersion(1))
    );
    assert!(target.is_empty());
}

/// A full cuckoo filter (its victim slot taken) and its frame.
fn full_cuckoo() -> (Cuckoo<8, u8>, Vec<u8>) {
    let mut f = Cuckoo::<8, u8>::new(SEED);
    let mut k = 0u32;
    while f.insert(&k.to_le_bytes()).is_ok() {
        k += 1;
    }
    assert!(f.is_full());
    let mut buf = vec![0u8; f.encoded_len()];
    f.encode_into(&mut buf).unwrap();
    (f, buf)
}

/// Offsets in a `Cuckoo<8, u8>` payload: 32 one-byte slots, the RNG state (8 bytes),
/// the victim flag, bucket (4 bytes) and fingerprint (1 byte).
const TABLE: usize = 8 * 4;
const RNG: usize = P + TABLE;
const FLAG: usize = RNG + 8;
const BUCKET: usize = FLAG + 1;
const VICTIM_FP: usize = BUCKET + 4;

#[test]
fn cuckoo_values_behind_a_valid_crc() {
    let (full, buf) = full_cuckoo();
    assert_eq!(buf[FLAG], 1);
    let victim_bucket = u32::from_le_bytes(buf[BUCKET..BUCKET + 4].try_into().unwrap());
    let mut target = Cuckoo::<8, u8>::new(SEED);
    target.insert(b"resident").unwrap();
    let before = target.clone();
    let mut refuse = |bytes: Vec<u8>, why: &str| {
        assert_eq!(
            target.decode_into(&bytes),
            Err(DecodeError::InvalidValue),
            "{why}"
        );
        assert_eq!(target, before, "{why}: a refused decode changed the target");
    };

    refuse(
        edited(&buf, |b| b[RNG..RNG + 8].fill(0)),
        "zero eviction RNG state",
    );
    refuse(edited(&buf, |b| b[FLAG] = 2), "victim flag 2");
    refuse(
        edited(&buf, |b| {
            b[BUCKET..BUCKET + 4].copy_from_slice(&8u32.to_le_bytes());
        }),
        "victim bucket out of range (B = 8)",
    );
    refuse(
        edited(&buf, |b| {
            b[BUCKET..BUCKET + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        }),
        "victim bucket u32::MAX",
    );
    refuse(edited(&buf, |b| b[VICTIM_FP] = 0), "victim fingerprint 0");
    // A free slot in the victim's own bucket: an insert would have used it.
    refuse(
        edited(&buf, |b| b[P + 4 * victim_bucket as usize] = 0),
        "victim beside a free slot",
    );
    // Flag 0 with the other victim fields left set.
    refuse(
        edited(&buf, |b| b[FLAG] = 0),
        "victim fields without the flag",
    );
    let (empty, empty_buf) = {
        let f = Cuckoo::<8, u8>::new(SEED);
        let mut b = vec![0u8; f.encoded_len()];
        f.encode_into(&mut b).unwrap();
        (f, b)
    };
    assert_eq!(empty_buf[FLAG], 0);
    refuse(
        edited(&empty_buf, |b| b[BUCKET] = 1),
        "bucket set without the flag",
    );
    refuse(
        edited(&empty_buf, |b| b[VICTIM_FP] = 7),
        "fingerprint set without the flag",
    );

    // The unedited frames decode to the filters they came from.
    target.decode_into(&buf).unwrap();
    assert_eq!(target, full);
    assert_eq!(target.len(), full.len());
    target.decode_into(&empty_buf).unwrap();
    assert_eq!(target, empty);
}

proptest! {
    #![proptest_config(loxo_tests::proptest_config(256, 0xb10))]

    /// Any edit of a cuckoo payload, re-signed: refused without touching the target, or
    /// accepted as a state the filter can be in — it re-encodes to the same bytes, its
    /// length counts its stored fingerprints, and it keeps working.
    #[test]
    fn cuckoo_payload_edits(edits in prop::collection::vec((0usize..TABLE + 8 + 1 + 4 + 1, any::<u8>()), 1..4)) {
        let (_, buf) = full_cuckoo();
        let bad = edited(&buf, |b| {
            for (i, v) in &edits {
                b[P + i] = *v;
            }
        });
        let mut target = Cuckoo::<8, u8>::new(SEED);
        target.insert(b"resident").unwrap();
        let before = target.clone();
        if let Err(e) = target.decode_into(&bad) {
            prop_assert_eq!(e, DecodeError::InvalidValue);
            prop_assert_eq!(&target, &before);
        } else {
            let mut again = vec![0u8; target.encoded_len()];
            target.encode_into(&mut again).unwrap();
            prop_assert_eq!(&again, &bad);
            let stored = bad[P..P + TABLE].iter().filter(|&&x| x != 0).count()
                + usize::from(bad[FLAG] == 1);
            prop_assert_eq!(target.len(), stored);
            for k in 0u32..50 {
                let _ = target.insert(&k.to_le_bytes());
                let _ = target.remove(&(k / 2).to_le_bytes());
                let _ = target.contains(&k.to_le_bytes());
            }
        }
    }
}
