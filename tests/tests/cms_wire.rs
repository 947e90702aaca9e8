//! Wire round trips of the Count-Min family for random streams; corrupted or
//! truncated frames: always an error, never a panic, never a modified target; and
//! crafted payloads behind a **valid** CRC, one per rejection reason of each
//! decoder (a byte flip alone only ever reaches `BadChecksum`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_cms::{Cms, CmsCu, CountSketch, HeavyKeeper, SpaceSaving, TopK};
use loxo_core::wire::{HEADER_LEN, TRAILER_LEN};
use loxo_core::{DecodeError, Seed};
use loxo_flow::FlowKey;
use proptest::prelude::*;

const SEED: Seed = Seed::new(4, 2);

fn plain<T>(f: &T, len: usize, enc: impl Fn(&T, &mut [u8]) -> usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let n = enc(f, &mut buf);
    buf.truncate(n);
    buf
}

use loxo_tests::wire::resign;

/// The payload of a frame.
fn payload(frame: &[u8]) -> &[u8] {
    &frame[HEADER_LEN..frame.len() - TRAILER_LEN]
}

/// `frame`'s header with another payload (length field updated), signed.
fn with_payload(frame: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = frame[..HEADER_LEN].to_vec();
    out[32..36].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&[0; TRAILER_LEN]);
    resign(&mut out);
    out
}

/// `frame` with header bytes `at..` replaced, signed.
fn with_header(frame: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut out = frame.to_vec();
    out[at..at + bytes.len()].copy_from_slice(bytes);
    resign(&mut out);
    out
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..loxo_tests::proptest_config(256, 20) })]

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

    /// Payload bytes overwritten and the CRC re-signed, so the decoder's own checks
    /// are what stands between the bytes and the sketch: every outcome is either an
    /// error that leaves the target exactly as it was, or a sketch that re-encodes
    /// to the very same bytes and keeps working (updates, reports, encodes) without
    /// a panic. Edits land on the heap of the top-k summaries half of the time,
    /// where most of their checks are.
    #[test]
    fn resigned_payload_edits_are_rejected_or_decode_to_a_working_sketch(
        stream in prop::collection::vec((0u32..40, 1u64..3000), 1..300),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..4),
        later in prop::collection::vec((0u32..60, 1u64..3000), 0..40),
    ) {
        let mut cms = Cms::<16, 3, u16>::new(SEED);
        let mut cs = CountSketch::<16, 3>::new(SEED);
        let mut ss = SpaceSaving::<u32, 6>::new();
        let mut hk = HeavyKeeper::<8, 2, 6, u32>::new(5);
        for (k, w) in &stream {
            let h = SEED.hash(&k.to_le_bytes());
            cms.add_hash(h, *w);
            cs.add_hash(h, i64::try_from(*w).unwrap() - 1500);
            ss.update(k, h, *w);
            hk.update(k, h, *w);
        }
        // The targets already hold something, so "unchanged" means something.
        let mut target_ss = SpaceSaving::<u32, 6>::new();
        let mut target_hk = HeavyKeeper::<8, 2, 6, u32>::new(9);
        let mut target_cms = Cms::<16, 3, u16>::new(SEED);
        let mut target_cs = CountSketch::<16, 3>::new(SEED);
        for k in 100..110u32 {
            let h = SEED.hash(&k.to_le_bytes());
            target_ss.update(&k, h, u64::from(k));
            target_hk.update(&k, h, u64::from(k));
            target_cms.add_hash(h, u64::from(k));
            target_cs.add_hash(h, i64::from(k));
        }

        let edit = |frame: &[u8], heap_from: usize| {
            let mut f = frame.to_vec();
            let end = f.len() - TRAILER_LEN;
            for (i, v, on_heap) in &edits {
                let from = if *on_heap { HEADER_LEN + heap_from } else { HEADER_LEN };
                let at = from + i.index(end - from);
                f[at] = *v;
            }
            resign(&mut f);
            f
        };

        // Count-Min and Count-Sketch: every counter value decodes; the result is
        // the edited frame, byte for byte.
        let bytes = edit(&plain(&cms, cms.encoded_len(), |f, b| f.encode_into(b).unwrap()), 0);
        let before = target_cms.clone();
        if target_cms.decode_into(&bytes).is_ok() {
            prop_assert_eq!(plain(&target_cms, bytes.len(), |f, b| f.encode_into(b).unwrap()), bytes);
            target_cms.add(b"later", 7);
        } else {
            prop_assert_eq!(&target_cms, &before);
        }
        let bytes = edit(&plain(&cs, cs.encoded_len(), |f, b| f.encode_into(b).unwrap()), 0);
        let before = target_cs.clone();
        if target_cs.decode_into(&bytes).is_ok() {
            prop_assert_eq!(plain(&target_cs, bytes.len(), |f, b| f.encode_into(b).unwrap()), bytes);
            target_cs.add(b"later", -7);
        } else {
            prop_assert_eq!(&target_cs, &before);
        }

        // Space-Saving: payload = total (8) + heap.
        let bytes = edit(&plain(&ss, ss.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap()), 8);
        let before = target_ss.clone();
        if target_ss.decode_into(&SEED, &bytes).is_ok() {
            prop_assert_eq!(plain(&target_ss, bytes.len(), |f, b| f.encode_into(&SEED, b).unwrap()), bytes.clone());
            check_summary(&target_ss, 6)?;
            for (k, w) in &later {
                target_ss.update(k, SEED.hash(&k.to_le_bytes()), *w);
            }
            check_summary(&target_ss, 6)?;
            let again = plain(&target_ss, target_ss.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap());
            // The decoder cannot check a record's hash tag (the caller's hash, the
            // top 32 bits of the key's digest): a re-signed edit of a tag decodes, and
            // that key's next update starts a second entry (documented on
            // `SpaceSaving::decode_into`), which the decoder then refuses as a key
            // listed twice. Every other state an update reaches must decode again.
            let records = &bytes[HEADER_LEN + 12..bytes.len() - TRAILER_LEN];
            let wrong_tag: Vec<u32> = records
                .chunks_exact(24)
                .map(|r| (u32::from_le_bytes(r[..4].try_into().unwrap()), u32::from_le_bytes(r[20..24].try_into().unwrap())))
                .filter(|&(k, tag)| (SEED.hash(&k.to_le_bytes()).get() >> 32) as u32 != tag)
                .map(|(k, _)| k)
                .collect();
            let redecoded = SpaceSaving::<u32, 6>::new().decode_into(&SEED, &again);
            if later.iter().any(|(k, _)| wrong_tag.contains(k)) {
                prop_assert!(matches!(redecoded, Ok(()) | Err(DecodeError::InvalidValue)), "{redecoded:?}");
            } else {
                prop_assert!(redecoded.is_ok(), "{redecoded:?}");
            }
        } else {
            prop_assert_eq!(&target_ss, &before);
        }

        // HeavyKeeper: payload = total (8) + RNG (8) + buckets (8·W·D) + heap.
        let bytes = edit(&plain(&hk, hk.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap()), 16 + 8 * 8 * 2);
        let before = target_hk.clone();
        if target_hk.decode_into(&SEED, &bytes).is_ok() {
            prop_assert_eq!(plain(&target_hk, bytes.len(), |f, b| f.encode_into(&SEED, b).unwrap()), bytes);
            check_summary(&target_hk, 6)?;
            for (k, w) in &later {
                target_hk.update(k, SEED.hash(&k.to_le_bytes()), *w);
            }
            check_summary(&target_hk, 6)?;
        } else {
            prop_assert_eq!(&target_hk, &before);
        }
    }
}

/// What every decoded or updated summary must satisfy: at most `n` entries, sorted
/// reports, counts within the total, `lower ≤ count ≤ upper` where bounds exist.
fn check_summary<T: TopK<u32>>(t: &T, n: usize) -> Result<(), TestCaseError> {
    prop_assert!(t.len() <= n);
    let mut out = heapless::Vec::<loxo_cms::Entry<u32>, 8>::new();
    t.report(&mut out);
    prop_assert_eq!(out.len(), t.len());
    prop_assert!(out.windows(2).all(|w| w[0].count >= w[1].count));
    for e in &out {
        prop_assert!(e.count <= t.total(), "{:?} above total {}", e, t.total());
        prop_assert!(e.lower.is_none_or(|l| l <= e.count));
        prop_assert!(e.upper.is_none_or(|u| u >= e.count));
    }
    Ok(())
}

/// Decodes a frame (the `&str` names the case for messages).
type Decode<'a> = dyn FnMut(&str, &[u8]) -> Result<(), DecodeError> + 'a;

/// One heap record as the top-k summaries encode it: key (`L` bytes), count, error,
/// hash tag.
#[derive(Clone)]
struct Rec {
    key: Vec<u8>,
    count: u64,
    error: u64,
    tag: u32,
}

fn parse_heap(bytes: &[u8], l: usize) -> Vec<Rec> {
    let n = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    let recs: Vec<Rec> = bytes[4..]
        .chunks_exact(l + 20)
        .map(|r| Rec {
            key: r[..l].to_vec(),
            count: le64(&r[l..l + 8]),
            error: le64(&r[l + 8..l + 16]),
            tag: u32::from_le_bytes(r[l + 16..].try_into().unwrap()),
        })
        .collect();
    assert_eq!(recs.len(), n);
    recs
}

fn heap_bytes(n: usize, recs: &[Rec]) -> Vec<u8> {
    let mut out = (n as u32).to_le_bytes().to_vec();
    for r in recs {
        out.extend_from_slice(&r.key);
        out.extend_from_slice(&r.count.to_le_bytes());
        out.extend_from_slice(&r.error.to_le_bytes());
        out.extend_from_slice(&r.tag.to_le_bytes());
    }
    out
}

/// The heap checks shared by Space-Saving and HeavyKeeper, on a full summary of
/// capacity `cap` with `l`-byte keys whose payload is `head` (total first) then the
/// heap. `decode` decodes into a non-empty target and asserts it unchanged on error.
/// `total_floor` gives the smallest total the heap's counts allow.
fn heap_rejections(
    frame: &[u8],
    head: usize,
    l: usize,
    cap: usize,
    total_floor: fn(&[u64]) -> u64,
    decode: &mut Decode<'_>,
) {
    use DecodeError::{InvalidValue, TrailingBytes, Truncated};
    let p = payload(frame);
    let (prefix, heap) = p.split_at(head);
    let recs = parse_heap(heap, l);
    assert_eq!(recs.len(), cap, "the summary must be full for these cases");
    let total = le64(&prefix[..8]);
    let frame_of = |total: u64, n: usize, recs: &[Rec]| {
        let mut body = prefix.to_vec();
        body[..8].copy_from_slice(&total.to_le_bytes());
        body.extend_from_slice(&heap_bytes(n, recs));
        with_payload(frame, &body)
    };
    let max = recs.iter().map(|r| r.count).max().unwrap();

    // The unedited heap, rebuilt by these helpers, decodes (so every rejection
    // below comes from the one edit).
    assert_eq!(decode("rebuilt", &frame_of(total, cap, &recs)), Ok(()));

    // More entries than the capacity, every one of them well-formed (a distinct
    // key, the largest count: heap order and total hold).
    let mut more = recs.clone();
    // A new valid key: the root's with its second byte changed (an integer key's
    // or an IPv4 source address's byte, distinct from every key in these tests).
    let mut extra = recs[0].clone();
    extra.key[1] ^= 0x55;
    extra.count = max;
    more.push(extra);
    assert_eq!(
        decode("len > N", &frame_of(total, cap + 1, &more)),
        Err(InvalidValue)
    );
    // The count field against the records present.
    assert_eq!(
        decode("count > records", &frame_of(total, cap, &recs[..cap - 1])),
        Err(Truncated)
    );
    assert_eq!(
        decode("count < records", &frame_of(total, cap - 1, &recs)),
        Err(TrailingBytes)
    );
    // No entries at all is a valid (empty) heap.
    assert_eq!(decode("empty heap", &frame_of(total, 0, &[])), Ok(()));

    // error > count is impossible (error is the count a key inherited).
    let last = cap - 1;
    let mut e = recs.clone();
    e[last].error = e[last].count;
    assert_eq!(decode("error = count", &frame_of(total, cap, &e)), Ok(()));
    e[last].error = e[last].count + 1;
    assert_eq!(
        decode("error > count", &frame_of(total, cap, &e)),
        Err(InvalidValue)
    );

    // Heap order: slot 1 below its parent, slot 0 (error kept ≤ count).
    let mut h = recs.clone();
    h[1].count = h[0].count;
    h[1].error = h[1].error.min(h[1].count);
    assert_eq!(decode("child = parent", &frame_of(total, cap, &h)), Ok(()));
    assert!(h[0].count > 0);
    h[1].count = h[0].count - 1;
    h[1].error = h[1].error.min(h[1].count);
    assert_eq!(
        decode("child < parent", &frame_of(total, cap, &h)),
        Err(InvalidValue)
    );

    // A key listed twice (the last slot takes the root's key; counts untouched).
    let mut d = recs.clone();
    let (root, rest) = d.split_at_mut(1);
    rest[last - 1].key.clone_from(&root[0].key);
    assert_eq!(
        decode("duplicate key", &frame_of(total, cap, &d)),
        Err(InvalidValue)
    );

    // A total below what the counts add up to.
    let counts: Vec<u64> = recs.iter().map(|r| r.count).collect();
    let floor = total_floor(&counts);
    assert!(floor <= total);
    assert_eq!(
        decode("total at its floor", &frame_of(floor, cap, &recs)),
        Ok(())
    );
    assert_eq!(
        decode("total below its floor", &frame_of(floor - 1, cap, &recs)),
        Err(InvalidValue)
    );
}

/// Space-Saving adds each weight to exactly one count (a replaced key's count
/// absorbs the evicted one), so the counts add up to the total (less after
/// `halve`, which rounds down): `Σ count ≤ total`. That is what makes the
/// documented "minimum count ≤ total / N" hold.
fn sum_of_counts(c: &[u64]) -> u64 {
    c.iter().fold(0u64, |a, &b| a.saturating_add(b))
}

/// HeavyKeeper's heap counts are per-key estimates, each at most the total.
fn max_count(c: &[u64]) -> u64 {
    c.iter().copied().max().unwrap_or(0)
}

/// The envelope checks every family decoder makes after the CRC: kind, each
/// parameter, seed fingerprint, flags, payload length.
fn envelope_rejections(frame: &[u8], params: usize, decode: &mut Decode<'_>) {
    use DecodeError::{
        InvalidValue, ParameterMismatch, SeedMismatch, TrailingBytes, Truncated, WrongKind,
    };
    assert_eq!(decode("as encoded", frame), Ok(()));
    for flag in [1u8, 0x80] {
        assert_eq!(
            decode("flags", &with_header(frame, 7, &[flag])),
            Err(InvalidValue),
            "flag {flag:#x}"
        );
    }
    for i in 0..params {
        let at = 16 + 4 * i;
        let v = u32::from_le_bytes(frame[at..at + 4].try_into().unwrap());
        for other in [v + 1, v.wrapping_sub(1), v ^ 0x8000_0000] {
            assert_eq!(
                decode("param", &with_header(frame, at, &other.to_le_bytes())),
                Err(ParameterMismatch {
                    expected: v,
                    found: other
                }),
                "param {i} = {other}"
            );
        }
    }
    let fp = u64::from_le_bytes(frame[8..16].try_into().unwrap());
    assert_eq!(
        decode("seed", &with_header(frame, 8, &(fp ^ 1).to_le_bytes())),
        Err(SeedMismatch {
            expected: fp,
            found: fp ^ 1
        })
    );
    let p = payload(frame);
    assert_eq!(
        decode("short", &with_payload(frame, &p[..p.len() - 1])),
        Err(Truncated)
    );
    assert_eq!(
        decode("long", &with_payload(frame, &[p, &[0]].concat())),
        Err(TrailingBytes)
    );
    for kind in [5u8, 9, 10, 11] {
        if kind != frame[6] {
            assert_eq!(
                decode("kind", &with_header(frame, 6, &[kind])),
                Err(WrongKind {
                    expected: frame[6],
                    found: kind
                }),
                "kind {kind}"
            );
        }
    }
}

/// Decodes into a clone of `target` and, on error, checks the clone is unchanged.
fn into<'a, T: Clone + PartialEq + std::fmt::Debug>(
    target: &'a T,
    f: impl Fn(&mut T, &[u8]) -> Result<(), DecodeError> + 'a,
) -> impl FnMut(&str, &[u8]) -> Result<(), DecodeError> + 'a {
    move |what, bytes| {
        let mut t = target.clone();
        let r = f(&mut t, bytes);
        if r.is_err() {
            assert_eq!(&t, target, "{what}: a failed decode changed the target");
        }
        r
    }
}

fn full_stream() -> Vec<(u32, u64)> {
    (0..300u32)
        .map(|i| (i % 23, u64::from(i % 7) * 100 + 1))
        .collect()
}

#[test]
fn cms_and_count_sketch_reject_bad_envelopes_behind_a_valid_crc() {
    let mut cms = Cms::<16, 3, u16>::new(SEED);
    let mut cu = CmsCu::<16, 3>::new(SEED);
    let mut cs = CountSketch::<16, 3>::new(SEED);
    for (k, w) in full_stream() {
        let h = SEED.hash_u64(u64::from(k));
        cms.add_hash(h, w);
        cu.add_hash(h, w);
        cs.add_hash(h, i64::try_from(w).unwrap() - 300);
    }
    let mut t = Cms::<16, 3, u16>::new(SEED);
    t.add(b"resident", 5);
    let frame = plain(&cms, cms.encoded_len(), |f, b| f.encode_into(b).unwrap());
    // params: W, D, counter bits.
    envelope_rejections(&frame, 3, &mut into(&t, loxo_cms::Cms::decode_into));
    // A plain frame never decodes as conservative, nor the reverse.
    let mut tcu = CmsCu::<16, 3>::new(SEED);
    tcu.add(b"resident", 5);
    assert!(matches!(
        into(&tcu, loxo_cms::Cms::decode_into)("plain as cu", &frame),
        Err(DecodeError::WrongKind { .. })
    ));
    let cu_frame = plain(&cu, cu.encoded_len(), |f, b| f.encode_into(b).unwrap());
    envelope_rejections(&cu_frame, 3, &mut into(&tcu, loxo_cms::Cms::decode_into));
    assert!(matches!(
        into(&t, loxo_cms::Cms::decode_into)("cu as plain", &cu_frame),
        Err(DecodeError::WrongKind { .. })
    ));

    let mut tcs = CountSketch::<16, 3>::new(SEED);
    tcs.add(b"resident", -5);
    let cs_frame = plain(&cs, cs.encoded_len(), |f, b| f.encode_into(b).unwrap());
    // params: W, D, 64.
    envelope_rejections(
        &cs_frame,
        3,
        &mut into(&tcs, loxo_cms::CountSketch::decode_into),
    );
}

#[test]
fn space_saving_rejects_each_invalid_heap_behind_a_valid_crc() {
    let mut ss = SpaceSaving::<u32, 6>::new();
    for (k, w) in full_stream() {
        ss.update(&k, SEED.hash(&k.to_le_bytes()), w);
    }
    let mut target = SpaceSaving::<u32, 6>::new();
    target.update(&7, SEED.hash(&7u32.to_le_bytes()), 70);
    let frame = plain(&ss, ss.encoded_len(), |f, b| {
        f.encode_into(&SEED, b).unwrap()
    });
    let mut dec = into(&target, |t, b| t.decode_into(&SEED, b));
    heap_rejections(&frame, 8, 4, 6, sum_of_counts, &mut dec);
    // params: N, L; the payload length is checked by the heap (above), so the
    // envelope's short/long cases are Truncated/TrailingBytes too.
    envelope_rejections(&frame, 2, &mut dec);
    // A payload without even the total.
    assert_eq!(
        dec("no total", &with_payload(&frame, &[0; 7])),
        Err(DecodeError::Truncated)
    );
    assert_eq!(
        dec("no heap count", &with_payload(&frame, &[0; 11])),
        Err(DecodeError::Truncated)
    );
    // Other key types: a u64 summary reads no u32 frame (L differs).
    let mut wide = SpaceSaving::<u64, 6>::new();
    assert!(matches!(
        wide.decode_into(&SEED, &frame),
        Err(DecodeError::ParameterMismatch { .. })
    ));
}

/// A key whose wire bytes are no valid key (`WireKey::from_wire` is `None`):
/// `FlowKey`'s length byte must be 13 or 37 and the bytes past it zero.
#[test]
fn space_saving_rejects_invalid_keys_behind_a_valid_crc() {
    let mut ss = SpaceSaving::<FlowKey, 4>::new();
    for i in 0..6u8 {
        let k = FlowKey::v4([10, 0, 0, i], [10, 0, 1, 1], 1000 + u16::from(i), 443, 6);
        ss.update(&k, k.hash_with(&SEED), 100 * u64::from(i) + 1);
    }
    let target = SpaceSaving::<FlowKey, 4>::new();
    let mut dec = into(&target, |t, b| t.decode_into(&SEED, b));
    let frame = plain(&ss, ss.encoded_len(), |f, b| {
        f.encode_into(&SEED, b).unwrap()
    });
    heap_rejections(&frame, 8, 38, 4, sum_of_counts, &mut dec);
    let first_key = HEADER_LEN + 8 + 4;
    assert_eq!(frame[first_key], 13, "an IPv4 key: length 13");
    for (what, at, v) in [
        ("length 12", first_key, 12),
        ("length 38", first_key, 38),
        ("a byte past the length", first_key + 1 + 13, 1),
    ] {
        let mut b = frame.clone();
        b[at] = v;
        resign(&mut b);
        assert_eq!(dec(what, &b), Err(DecodeError::InvalidValue), "{what}");
    }
}

#[test]
fn heavy_keeper_rejects_each_invalid_state_behind_a_valid_crc() {
    const W: usize = 8;
    const D: usize = 2;
    let mut hk = HeavyKeeper::<W, D, 6, u32>::new(5);
    for (k, w) in full_stream() {
        hk.update(&k, SEED.hash(&k.to_le_bytes()), w);
    }
    let mut target = HeavyKeeper::<W, D, 6, u32>::new(9);
    target.update(&7, SEED.hash(&7u32.to_le_bytes()), 70);
    let frame = plain(&hk, hk.encoded_len(), |f, b| {
        f.encode_into(&SEED, b).unwrap()
    });
    let mut dec = into(&target, |t, b| t.decode_into(&SEED, b));
    let buckets = 8 * W * D;
    heap_rejections(&frame, 16 + buckets, 4, 6, max_count, &mut dec);
    // params: W, D, N, L | B << 16.
    envelope_rejections(&frame, 4, &mut dec);

    let p = payload(&frame).to_vec();
    let edited = |at: usize, bytes: &[u8]| {
        let mut q = p.clone();
        q[at..at + bytes.len()].copy_from_slice(bytes);
        with_payload(&frame, &q)
    };
    // The xorshift RNG state 0 is a fixed point: it would never decay again.
    assert_eq!(
        dec("rng 0", &edited(8, &0u64.to_le_bytes())),
        Err(DecodeError::InvalidValue)
    );
    assert_eq!(dec("rng 1", &edited(8, &1u64.to_le_bytes())), Ok(()));
    // An empty bucket (count 0) holds no fingerprint.
    let b0 = 16;
    assert_eq!(dec("empty bucket", &edited(b0, &[0; 8])), Ok(()));
    let mut bad = [0u8; 8];
    bad[..4].copy_from_slice(&7u32.to_le_bytes());
    assert_eq!(
        dec("count 0, fp 7", &edited(b0, &bad)),
        Err(DecodeError::InvalidValue)
    );
    let last = 16 + buckets - 8;
    assert_eq!(
        dec("last bucket count 0, fp 7", &edited(last, &bad)),
        Err(DecodeError::InvalidValue)
    );
    // A bucket counts weights that also went into the total: never more than it.
    let total = le64(&p[..8]);
    let mut full = [0u8; 8];
    full[..4].copy_from_slice(&7u32.to_le_bytes());
    full[4..].copy_from_slice(&(total as u32).to_le_bytes());
    assert_eq!(dec("bucket = total", &edited(b0, &full)), Ok(()));
    full[4..].copy_from_slice(&(total as u32 + 1).to_le_bytes());
    assert_eq!(
        dec("bucket > total", &edited(b0, &full)),
        Err(DecodeError::InvalidValue)
    );
    // Fingerprint 0 is a fingerprint like any other when the count is not 0.
    let mut fp0 = [0u8; 8];
    fp0[4..].copy_from_slice(&3u32.to_le_bytes());
    assert_eq!(dec("fp 0, count 3", &edited(b0, &fp0)), Ok(()));
    // Buckets cut short (no heap after them at all).
    assert_eq!(
        dec(
            "buckets short",
            &with_payload(&frame, &p[..16 + buckets - 1])
        ),
        Err(DecodeError::Truncated)
    );
    assert_eq!(
        dec("no rng", &with_payload(&frame, &p[..15])),
        Err(DecodeError::Truncated)
    );

    // Another decay base is another sketch.
    let mut other_b = HeavyKeeper::<W, D, 6, u32, 160>::new(1);
    assert!(matches!(
        other_b.decode_into(&SEED, &frame),
        Err(DecodeError::ParameterMismatch { .. })
    ));
}

/// The documented deterministic guarantee "the minimum count is at most total / N"
/// holds for every summary a frame can decode to: a frame whose counts add up to
/// more than its total is refused (the counts of a real summary add up to the
/// total; see [`sum_of_counts`]).
#[test]
fn space_saving_frames_keep_the_minimum_count_guarantee() {
    let mut ss = SpaceSaving::<u32, 6>::new();
    for (k, w) in full_stream() {
        ss.update(&k, SEED.hash(&k.to_le_bytes()), w);
    }
    let frame = plain(&ss, ss.encoded_len(), |f, b| {
        f.encode_into(&SEED, b).unwrap()
    });
    let recs = parse_heap(&payload(&frame)[8..], 4);
    let counts: Vec<u64> = recs.iter().map(|r| r.count).collect();
    assert_eq!(
        sum_of_counts(&counts),
        ss.total(),
        "Space-Saving's counts add up to the total"
    );
    // Real summaries always decode: halved (counts and total rounded down apart),
    // with counts saturated at `MAX_COUNT` (2⁴⁸ − 1) and the total at u64::MAX, and
    // with one count saturated under a total that is not.
    let mut aged = ss.clone();
    for round in 0..5u64 {
        aged.halve();
        for (k, w) in full_stream().into_iter().take(40) {
            aged.update(&k, SEED.hash(&k.to_le_bytes()), w + round);
        }
    }
    let mut huge = ss.clone();
    for k in [1u32, 2, 1, 3, 40, 41, 42, 43, 44, 45, 46] {
        huge.update(&k, SEED.hash(&k.to_le_bytes()), u64::MAX / 3);
    }
    assert_eq!(huge.total(), u64::MAX);
    let mut big = ss.clone();
    let k = 99u32;
    big.update(&k, SEED.hash(&k.to_le_bytes()), 1_000_000_000_000_000);
    let e = big.entry(&k, SEED.hash(&k.to_le_bytes())).unwrap();
    // Saturated: counted as MAX_COUNT (the counts still add up to ≤ the total), the
    // upper bound unknown, the lower bound true.
    assert_eq!((e.count, e.upper), (loxo_cms::MAX_COUNT, Some(u64::MAX)));
    assert!(e.lower.unwrap() <= 1_000_000_000_000_000);
    for s in [&aged, &huge, &big] {
        let bytes = plain(s, s.encoded_len(), |f, b| f.encode_into(&SEED, b).unwrap());
        let mut back = SpaceSaving::<u32, 6>::new();
        back.decode_into(&SEED, &bytes).unwrap();
        let again = plain(&back, bytes.len(), |f, b| f.encode_into(&SEED, b).unwrap());
        assert_eq!(again, bytes);
    }
    // Every total from the largest count up: decodes only where the guarantee holds.
    for total in max_count(&counts)..=ss.total() {
        let mut body = payload(&frame).to_vec();
        body[..8].copy_from_slice(&total.to_le_bytes());
        let mut back = SpaceSaving::<u32, 6>::new();
        if back
            .decode_into(&SEED, &with_payload(&frame, &body))
            .is_ok()
        {
            assert!(
                back.min_count() * 6 <= back.total(),
                "decoded: min count {} × 6 > total {}",
                back.min_count(),
                back.total()
            );
        }
    }
}

/// A Count-Min row whose cells add up to more than the total is no reachable state:
/// refused behind a valid CRC, for plain and conservative sketches, and the target is
/// left unchanged; a saturated cell is left out of the sum.
#[test]
fn count_min_row_sum_above_total_is_refused() {
    use loxo_core::wire::{Encoder, Header, SketchKind};
    let seed = Seed::new(0x5eed, 0x7a11);
    let frame = |kind: SketchKind, total: u64, cells: &[u32]| {
        let mut buf = vec![0u8; 36 + 8 + 4 * cells.len() + 4];
        let h = Header::new(
            kind,
            seed.fingerprint(),
            [4, 2, 32, 0],
            (8 + 4 * cells.len()) as u32,
        );
        let mut enc = Encoder::new(&mut buf, &h).unwrap();
        enc.put_u64(total);
        for c in cells {
            enc.put_u32(*c);
        }
        let n = enc.finish();
        buf.truncate(n);
        buf
    };
    // Rows sum to 10 and 10: fine. Row 1 sums to 11 > 10: refused.
    let ok = frame(SketchKind::Cms, 10, &[1, 2, 3, 4, 10, 0, 0, 0]);
    let bad = frame(SketchKind::Cms, 10, &[1, 2, 3, 4, 10, 1, 0, 0]);
    let mut s = Cms::<4, 2>::new(seed);
    s.decode_into(&ok).unwrap();
    let before = s.clone();
    assert_eq!(
        s.decode_into(&bad),
        Err(loxo_core::DecodeError::InvalidValue)
    );
    assert_eq!(s, before);
    let bad_cu = frame(SketchKind::CmsConservative, 3, &[1, 1, 1, 1, 0, 0, 0, 0]);
    assert_eq!(
        CmsCu::<4, 2>::new(seed).decode_into(&bad_cu),
        Err(loxo_core::DecodeError::InvalidValue)
    );
    // A saturated cell means "at least MAX": not counted.
    let sat = frame(SketchKind::Cms, 10, &[u32::MAX, 2, 3, 4, 10, 0, 0, 0]);
    Cms::<4, 2>::new(seed).decode_into(&sat).unwrap();
}
