//! Any bytes as a capture file, read the way `loxo top` and `loxo replay` read one
//! (`loxo_cli::capture::CaptureReader`: pcap or pcapng by magic, any snap length,
//! link types turned into Ethernet), every record turned into a frame, checked with
//! `parse_frame_captured`, and fed to `loxo_cli::eval::Evaluator` as `top` does:
//! never a panic, no record holding more bytes than its original length, and a bad
//! record ends the reading with an error, not a misread.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cli::capture::{self, CaptureReader};
use loxo_cli::eval::Evaluator;
use loxo_flow::{CapturedError, Config};

/// The fixed seed of this fuzz target (the value of the public default seed that was
/// removed, so the figures stay as they were; a device's seed is provisioned, never
/// written in the source).
const TEST_SEED: loxo_core::Seed = loxo_core::Seed::new(0x6c6f_786f, 0x666c_6f77);

fuzz_target!(|data: &[u8]| {
    let config = Config {
        epoch_packets: 64,
        ..Config::with_seed(TEST_SEED)
    };
    let Ok(mut reader) = CaptureReader::new(std::io::Cursor::new(data)) else {
        return;
    };
    let Ok(mut ev) = Evaluator::try_new(config) else {
        return; // θ = 1 % is above θ_min: never taken
    };
    let (mut scratch, mut whole) = (Vec::new(), Vec::new());
    while let Some(Ok(record)) = reader.next_record() {
        assert!(record.data.len() <= record.orig_len as usize);
        let frame = record.frame(&mut scratch);
        if !frame.is_whole()
            && matches!(
                loxo_flow::parse_frame_captured(frame.captured, frame.wire_len),
                Err(CapturedError::Snapped { .. })
            )
        {
            continue;
        }
        let f = capture::padded(frame, &mut whole);
        if f.len() <= 262_144 {
            ev.feed(f);
        }
    }
    let _ = ev.finish();
});
