//! 128-bit keys and seeds on the command line: 32 hex digits, or a file holding them.

use anyhow::Context;
use loxo_core::Seed;

/// Reads a 128-bit key given as 32 hex digits or as a file holding them (the
/// 16 bytes in order, as `Seed::from_bytes` takes them).
///
/// # Errors
/// A file that cannot be read, or anything but 32 hex digits.
pub fn read_key(arg: &str) -> anyhow::Result<Seed> {
    let text = if arg.len() == 32 && arg.bytes().all(|b| b.is_ascii_hexdigit()) {
        arg.to_owned()
    } else {
        std::fs::read_to_string(arg).with_context(|| format!("reading the key file {arg}"))?
    };
    let hex = text.trim();
    anyhow::ensure!(
        hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "a key is 32 hex digits, got {} characters",
        hex.len()
    );
    let mut b = [0u8; 16];
    for (i, byte) in b.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)?;
    }
    Ok(Seed::from_bytes(b))
}

/// A fresh random seed from the OS's entropy (through `std`'s randomly keyed
/// `RandomState`, which the standard library seeds from the OS RNG).
pub fn random_seed() -> Seed {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x6c6f_786f);
        h.finish()
    };
    Seed::new(word(), word())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keys_read_from_hex_or_file() {
        let hex = "000102030405060708090a0b0c0d0e0f";
        let want = Seed::from_bytes(core::array::from_fn(|i| i as u8));
        assert_eq!(read_key(hex).unwrap(), want);
        let path = std::env::temp_dir().join(format!("loxo-key-{}", std::process::id()));
        std::fs::write(&path, format!("{hex}\n")).unwrap();
        assert_eq!(read_key(path.to_str().unwrap()).unwrap(), want);
        std::fs::write(&path, "0011").unwrap();
        assert!(read_key(path.to_str().unwrap()).is_err());
        let _ = std::fs::remove_file(&path);
        assert!(read_key("/nonexistent/key").is_err());
    }

    #[test]
    fn random_seeds_differ() {
        assert_ne!(random_seed(), random_seed());
    }
}
