//! Any bytes, as they are and re-signed (length field and CRC recomputed), into
//! `loxo inspect`'s description (`loxo_cli::sketch::describe`) and the collector's
//! HLL decoder (`AnyHll::decode`, used by `loxo merge` / `loxo export`): never a
//! panic, whatever the kind, parameters and payload.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cli::sketch::{describe, AnyHll};

fuzz_target!(|raw: &[u8]| {
    let signed = loxo_fuzz::resign(raw);
    for data in [raw, &signed[..]] {
        let _ = describe(data);
        if let Ok((hll, fp)) = AnyHll::decode(data) {
            // A decoded sketch re-encodes to a frame that decodes to itself.
            let again = hll.encode(fp);
            let (back, fp2) = AnyHll::decode(&again).expect("own encoding decodes");
            assert!(back == hll && fp2 == fp);
        }
    }
});
