//! What the unit tests share.

use loxo_core::KeyHash;

/// Distinct, uniform digests: a Weyl sequence through `mix64` (a bijection), one
/// stream per `seed`.
pub(crate) fn digests(seed: u64) -> impl Iterator<Item = KeyHash> {
    let mut s = seed;
    core::iter::from_fn(move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        Some(KeyHash::from_u64(loxo_core::mix64(s)))
    })
}
