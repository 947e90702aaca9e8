//! Any bytes: `Frame::parse` returns a frame or an error, never panics, and a
//! frame it accepts re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_core::wire::{Encoder, Frame};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::parse(data) {
        let mut out = vec![0u8; data.len()];
        let mut enc = Encoder::new(&mut out, frame.header()).expect("same length fits");
        enc.put(frame.payload());
        let n = enc.finish();
        assert_eq!(&out[..n], data);
    }
});
