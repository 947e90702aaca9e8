//! Benchmarks (`benches/`) and accuracy-chart tools (`src/bin/`) of the loxo
//! sketches; host only, never published.

pub mod flow_frames {
    //! The `FlowMonitor` benchmark's frames, shared by `benches/flow.rs` and the
    //! `flow_cost` instruction counter (`valgrind --tool=callgrind`).

    use loxo_tests::zipf::Zipf;

    /// Frames kept in memory (the stream cycles over them): 2^15 frames ≈ 25 MB.
    pub const FRAMES: usize = 1 << 15;

    fn frame(key: u64, bytes: u64) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        let v6 = key.is_multiple_of(5);
        let proto = if key.is_multiple_of(3) { 17u8 } else { 6 };
        let l4 = if proto == 6 { 20 } else { 8 };
        let k = key.to_be_bytes();
        if v6 {
            f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
            let size = (bytes as usize).max(14 + 40 + l4);
            f.extend_from_slice(&((size - 54) as u16).to_be_bytes());
            f.extend_from_slice(&[proto, 64]);
            f.extend_from_slice(&k);
            f.extend_from_slice(&k);
            f.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
            f.extend_from_slice(&k[..4]);
            f.resize(size, 0);
        } else {
            f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
            let size = (bytes as usize).max(14 + 20 + l4);
            f.extend_from_slice(&((size - 14) as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
            f.extend_from_slice(&k[..4]);
            f.extend_from_slice(&[10, 0, 0, 1]);
            f.extend_from_slice(&k[4..8]);
            f.resize(size, 0);
        }
        f
    }

    /// `FRAMES` frames: Zipf(1.0) over 10^5 flows with a `flood` share of unique keys.
    pub fn frames(flood: f64) -> Vec<Vec<u8>> {
        let z = Zipf::new(100_000, 1.0);
        z.stream_with_flood(FRAMES, flood, 6)
            .iter()
            .map(|p| frame(p.key, p.bytes))
            .collect()
    }
}
