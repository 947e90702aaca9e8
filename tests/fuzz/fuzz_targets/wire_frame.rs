//! Any bytes: `Frame::parse` returns a frame or an error, never panics, and a
//! frame it accepts re-encodes to the same bytes — but for the format version: the
//! encoder writes the current one ([`VERSION`]), while `parse` also accepts the
//! older versions a kind allows, so an older frame re-encodes with the version field
//! (bytes 4..6) and hence the CRC changed, everything else the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::wire::{Encoder, Frame, VERSION};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::parse(data) {
        let mut out = vec![0u8; data.len()];
        let mut enc = Encoder::new(&mut out, frame.header()).expect("same length fits");
        enc.put(frame.payload());
        let n = enc.finish();
        assert_eq!(n, data.len());
        if data[4..6] == VERSION.to_le_bytes() {
            assert_eq!(&out[..n], data);
        } else {
            assert_eq!(out[4..6], VERSION.to_le_bytes());
            assert_eq!(out[..4], data[..4]);
            assert_eq!(out[6..n - 4], data[6..n - 4]);
            assert!(Frame::parse(&out[..n]).is_ok(), "the re-encoding parses");
        }
    }
});
