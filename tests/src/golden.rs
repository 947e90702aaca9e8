//! Golden files under `tests/golden/`: the committed bytes a wire format must keep
//! producing. `LOXO_BLESS=1` rewrites them (only after a deliberate, versioned format
//! change).
#![allow(clippy::unwrap_used)] // a test harness: failing loudly is the point

use std::path::PathBuf;

/// The path of golden file `name`.
#[must_use]
pub fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name)
}

/// Compares `bytes` with golden file `name` (writing it first under `LOXO_BLESS`)
/// and returns the stored bytes.
///
/// # Panics
/// If the file is missing or differs from `bytes`.
#[must_use]
pub fn check(name: &str, bytes: &[u8]) -> Vec<u8> {
    let path = path(name);
    if std::env::var_os("LOXO_BLESS").is_some() {
        std::fs::write(&path, bytes).unwrap();
    }
    let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(stored, bytes, "{name}: the encoder's output changed");
    stored
}

/// Golden round trip of a sketch with `encoded_len`/`encode_into`/`decode_into`:
/// encodes `$f` (expecting `$len` bytes), compares with golden file `$name`, decodes
/// the stored bytes into `$fresh` (which must then equal `$f`) and re-encodes them
/// byte for byte. Evaluates to `(decoded, stored bytes)`.
#[macro_export]
macro_rules! golden_round_trip {
    ($name:literal, $f:expr, $fresh:expr, $len:expr) => {{
        let f = $f;
        let mut buf = vec![0u8; f.encoded_len()];
        let n = f.encode_into(&mut buf).unwrap();
        assert_eq!(n, $len, "{}", $name);
        let stored = $crate::golden::check($name, &buf);
        let mut back = $fresh;
        back.decode_into(&stored).unwrap();
        assert_eq!(back, f);
        let mut again = vec![0u8; n];
        back.encode_into(&mut again).unwrap();
        assert_eq!(again, stored);
        (back, stored)
    }};
}
