//! Fresh entry ids: the one helper here that is not a pure function, kept
//! here so the native host and the WASI shim component name entries alike.

use std::hash::{BuildHasher, Hasher};

/// 8 lowercase hex characters, the first a letter, from the process's
/// random hasher keys (the OS's randomness natively, `wasi:random` in a
/// component) mixed with the clock. Unique in practice for a ledger's size
/// (6 × 16⁷ values); callers that need certainty check for a clash. The
/// leading letter keeps an id from reading as a number: clients that parse
/// `key=value` arguments as JSON (the MCP Inspector CLI) turned one id in
/// 40 ("12345678", "4e012345") into a number.
pub fn new_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let bits = h.finish();
    let letter = char::from(b"abcdef"[(bits >> 32) as usize % 6]);
    format!("{letter}{:07x}", bits as u32 & 0x0fff_ffff)
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

    #[test]
    fn no_id_reads_as_a_json_number() {
        for _ in 0..2000 {
            let id = super::new_id();
            assert!(id.starts_with(|c: char| ('a'..='f').contains(&c)), "{id}");
            assert!(serde_json::from_str::<f64>(&id).is_err(), "{id}");
        }
    }
}
