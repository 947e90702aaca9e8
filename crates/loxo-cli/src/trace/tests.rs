//! The generator against its own truth, and the truth file round trip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;

use loxo_flow::ParseError;

use super::*;

/// The trace of `packets` frames over `flows` flows (Zipf(1), seed 1) with these
/// shares of malformed, flood and extended frames: its frames, truth and counts.
fn collect(
    packets: u64,
    flows: u32,
    malformed: f64,
    flood: f64,
    extensions: f64,
) -> (Vec<Vec<u8>>, Vec<FrameTruth>, TraceStats) {
    let cfg = &TraceConfig {
        packets,
        flows,
        flood,
        malformed,
        extensions,
        ..TraceConfig::default()
    };
    let (mut frames, mut truth) = (Vec::new(), Vec::new());
    let st = generate_with_truth(cfg, |f, t| {
        frames.push(f.to_vec());
        truth.push(*t);
        Ok::<_, ()>(())
    })
    .unwrap();
    (frames, truth, st)
}

#[test]
fn reproducible_and_counts_from_the_truth() {
    let (a, ta, sa) = collect(20_000, 500, 0.05, 0.1, 0.0);
    let (b, tb, sb) = collect(20_000, 500, 0.05, 0.1, 0.0);
    assert_eq!((a.clone(), ta.clone(), sa), (b, tb, sb));
    // The counts are the truth's.
    let count = |p: fn(&FrameTruth) -> bool| ta.iter().filter(|t| p(t)).count() as u64;
    assert_eq!(
        sa.malformed,
        count(|t| matches!(t.expected, Expected::Malformed(_)))
    );
    assert_eq!(sa.not_ip, count(|t| t.expected == Expected::NotIp));
    assert_eq!(sa.damaged, count(|t| t.damage != Damage::None));
    assert_eq!(sa.flood, count(|t| t.flood));
    assert_eq!(sa.bytes, ta.iter().map(|t| u64::from(t.len)).sum::<u64>());
    assert!(a.iter().zip(&ta).all(|(f, t)| f.len() == t.len as usize));
    // Damaged ~ Binomial(20 000, 0.05): mean 1000, σ = √(20 000·0.05·0.95) ≈ 30.8;
    // 4σ. Flood ~ Binomial(20 000, 0.1): 2000 ± 4·42.4.
    let sd = (20_000.0f64 * 0.05 * 0.95).sqrt();
    assert!((sa.damaged as f64 - 1000.0).abs() < 4.0 * sd, "{sa:?}");
    let sd = (20_000.0f64 * 0.1 * 0.9).sqrt();
    assert!((sa.flood as f64 - 2000.0).abs() < 4.0 * sd, "{sa:?}");
    // Every damaged IP frame of the classic trace is malformed (the cuts land
    // before the end of the IP length, the fields rewritten are checked ones);
    // a damaged non-IP frame is malformed only if cut below 14 bytes.
    for t in &ta {
        match (t.damage, t.key, t.expected) {
            (Damage::None, Some(_), e) => assert_eq!(e, Expected::Flow, "{t:?}"),
            (Damage::None, None, e) => assert_eq!(e, Expected::NotIp, "{t:?}"),
            (_, Some(_), e) => assert!(matches!(e, Expected::Malformed(_)), "{t:?}"),
            (_, None, e) => assert!(
                e == Expected::NotIp || e == Expected::Malformed(ParseError::Runt),
                "{t:?}"
            ),
        }
    }
    assert!(a.iter().all(|f| f.len() <= 1514));
}

#[test]
fn truth_rows_round_trip() {
    let (_, truth, _) = collect(5_000, 300, 0.3, 0.2, 0.5);
    let mut file = Vec::new();
    write_truth_header(&mut file).unwrap();
    for t in &truth {
        writeln!(file, "{t}").unwrap();
    }
    let back = read_truth(std::io::Cursor::new(file)).unwrap();
    assert_eq!(back, truth);
    assert!(read_truth(std::io::Cursor::new(b"frame,len\n0,1\n")).is_err());
    assert_eq!(
        truth_path(Path::new("out/demo-7.pcap")),
        Path::new("out/demo-7.truth.csv")
    );
}
