//! Fresh entry ids: the one helper here that is not a pure function, kept
//! here so the native host and the WASI shim component name entries alike.

use std::hash::{BuildHasher, Hasher};

/// 8 lowercase hex characters, from the process's random hasher keys (the
/// OS's randomness natively, `wasi:random` in a component) mixed with the
/// clock. Unique in practice for a ledger's size; callers that need
/// certainty check for a clash.
pub fn new_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    format!("{:08x}", h.finish() as u32)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_8_hex_and_differ() {
        let a = super::new_id();
        let b = super::new_id();
        assert_eq!(a.len(), 8);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }
}
