//! `loxo inspect`'s description of a frame (`loxo_cli::sketch::describe`) on
//! hostile frames behind a valid CRC: parameters near `u32::MAX` (whose byte
//! counts overflowed `u64` and panicked), payloads whose length contradicts the
//! parameters (summarised as if they matched), and heap headers that claim more
//! entries than the capacity or than the payload holds. Each is an error, never a
//! panic; every golden file still describes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: failing loudly is the point

use loxo_cli::sketch::{describe, expected_payload_len};
use loxo_core::wire::{frame_len, Encoder, Header, SketchKind};

/// A well-formed frame (valid CRC) around any header fields and payload.
fn frame(kind: SketchKind, params: [u32; 4], payload: &[u8]) -> Vec<u8> {
    let header = Header::new(kind, 0x1234, params, payload.len() as u32);
    let mut buf = vec![0u8; frame_len(payload.len())];
    let mut enc = Encoder::new(&mut buf, &header).unwrap();
    enc.put(payload);
    let n = enc.finish();
    buf.truncate(n);
    buf
}

/// `describe` must return (not panic) and refuse the frame.
fn refused(kind: SketchKind, params: [u32; 4], payload: &[u8]) -> String {
    let bytes = frame(kind, params, payload);
    let r = std::panic::catch_unwind(|| describe(&bytes));
    let r = r.unwrap_or_else(|_| panic!("describe panicked on {kind:?} {params:?}"));
    match r {
        Ok(text) => panic!(
            "{kind:?} {params:?} with {} payload bytes accepted:\n{text}",
            payload.len()
        ),
        Err(e) => format!("{e:#}"),
    }
}

const ALL: [SketchKind; 10] = [
    SketchKind::Bloom,
    SketchKind::BlockedBloom,
    SketchKind::CountingBloom,
    SketchKind::Cuckoo,
    SketchKind::Cms,
    SketchKind::CmsConservative,
    SketchKind::CountSketch,
    SketchKind::SpaceSaving,
    SketchKind::HeavyKeeper,
    SketchKind::RegisterBloom,
];

#[test]
fn huge_parameters_are_an_error_not_an_overflow() {
    let m = u32::MAX;
    // The cases of the four overflow panics (CMS and Count-Sketch byte counts,
    // HeavyKeeper's bucket offset, the top-k memory figure), and their kin.
    for (kind, params) in [
        (SketchKind::Cms, [m, m, 64, 0]),
        (SketchKind::CmsConservative, [m, m, 32, 0]),
        (SketchKind::CountSketch, [m, m, 64, 0]),
        (SketchKind::HeavyKeeper, [m, m, 4, 38 + (108 << 16)]),
        (SketchKind::HeavyKeeper, [1, 1, m, m]),
        (SketchKind::SpaceSaving, [m, m, 0, 0]),
        (SketchKind::Cuckoo, [m, 16, 4, 0]),
        (SketchKind::Bloom, [m, m, 0, 0]),
        (SketchKind::BlockedBloom, [m, 16, 0, 0]),
        (SketchKind::RegisterBloom, [m, 10, 0, 0]),
        (SketchKind::CountingBloom, [m, 3, 4, 0]),
    ] {
        for payload in [&[][..], &[0xff; 64][..], &[0; 16][..]] {
            refused(kind, params, payload);
        }
    }
    // Every kind, every parameter at an edge.
    for kind in ALL {
        for edge in [0, 1, 8, 0xffff, 0x1_0000, m / 8, m] {
            for i in 0..4 {
                let mut params = [16, 3, 32, 4];
                params[i] = edge;
                let bytes = frame(kind, params, &[0x5a; 40]);
                let r = std::panic::catch_unwind(|| describe(&bytes));
                assert!(r.is_ok(), "describe panicked on {kind:?} {params:?}");
            }
        }
    }
}

#[test]
fn payload_length_must_match_the_parameters() {
    // Each kind with its documented length, then one byte short and one over.
    let cases: [(SketchKind, [u32; 4], usize); 9] = [
        (SketchKind::Bloom, [16, 4, 0, 0], 64),
        (SketchKind::BlockedBloom, [2, 5, 0, 0], 128),
        (SketchKind::RegisterBloom, [8, 5, 0, 0], 64),
        (SketchKind::CountingBloom, [32, 3, 4, 0], 128),
        (
            SketchKind::Cuckoo,
            [16, 16, 4, 0],
            16 * 4 * 2 + 8 + 1 + 4 + 2,
        ),
        (SketchKind::Cms, [32, 3, 32, 0], 8 + 32 * 3 * 4),
        (SketchKind::CmsConservative, [32, 3, 16, 0], 8 + 32 * 3 * 2),
        (SketchKind::CountSketch, [16, 3, 64, 0], 16 * 3 * 8),
        (SketchKind::SpaceSaving, [8, 4, 0, 0], 8 + 4),
    ];
    for (kind, params, len) in cases {
        let ok = frame(kind, params, &vec![0; len]);
        describe(&ok).unwrap_or_else(|e| panic!("{kind:?} at its length: {e:#}"));
        for bad in [len - 1, len + 1, 0, 2 * len] {
            let msg = refused(kind, params, &vec![0; bad]);
            assert!(
                msg.contains("say") || msg.contains("short"),
                "{kind:?}: {msg}"
            );
        }
    }
}

#[test]
fn heap_headers_are_checked_against_capacity_and_length() {
    // Space-Saving, N = 8, 4-byte keys: 3 records declared, 3 present.
    let mut p = vec![0u8; 8];
    p.extend_from_slice(&3u32.to_le_bytes());
    p.extend(vec![0u8; 3 * 24]);
    describe(&frame(SketchKind::SpaceSaving, [8, 4, 0, 0], &p)).unwrap();
    // ... 9 declared with capacity 8.
    p[8..12].copy_from_slice(&9u32.to_le_bytes());
    p.extend(vec![0u8; 6 * 24]);
    let msg = refused(SketchKind::SpaceSaving, [8, 4, 0, 0], &p);
    assert!(msg.contains("capacity"), "{msg}");
    // ... u32::MAX declared, 0 present.
    let mut p = vec![0u8; 8];
    p.extend_from_slice(&u32::MAX.to_le_bytes());
    refused(SketchKind::SpaceSaving, [u32::MAX, 4, 0, 0], &p);
    // HeavyKeeper: the heap header past the payload's end.
    refused(
        SketchKind::HeavyKeeper,
        [16, 2, 4, 38 + (108 << 16)],
        &[0; 16],
    );
    // Unknown fingerprint and counter widths.
    assert!(expected_payload_len(SketchKind::Cuckoo, [16, 12, 4, 0], &[]).is_err());
    assert!(expected_payload_len(SketchKind::Cms, [16, 3, 12, 0], &[]).is_err());
    assert!(expected_payload_len(SketchKind::CountSketch, [16, 3, 32, 0], &[]).is_err());
}

#[test]
fn every_golden_file_still_describes_with_its_version() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let text = describe(&bytes).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
        assert!(
            text.contains("format version:   2"),
            "{}: {text}",
            path.display()
        );
        assert!(text.contains("memory:"), "{}: {text}", path.display());
        seen += 1;
    }
    // 14, the four `ull` files, the two `binary-fuse` ones, the four `theta` ones
    // and the three `spread` ones.
    assert_eq!(seen, 27);
    // HeavyKeeper's fourth parameter packs the key length with the decay base:
    // its entries are read with 38-byte keys, not 38 + 108·2^16.
    let hk = std::fs::read(dir.join("heavy_keeper.bin")).unwrap();
    let text = describe(&hk).unwrap();
    assert!(text.contains("38-byte keys, decay base 1.08"), "{text}");
    assert!(text.contains("top 1:"), "{text}");
}
