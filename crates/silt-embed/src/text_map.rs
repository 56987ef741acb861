//! Maps keyed by text whose lookups compare keys eight bytes at a time.
//!
//! In the sandbox `==` on two strings calls wasi-libc's `memcmp`, which
//! goes a byte at a time: in a sleep over 100k lessons the judge looks up
//! four texts a pair, and comparing the keys it found was a quarter of
//! the judge's time (perf map, `agents` text, docs/history/benchmarks.md).

use std::rc::Rc;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// Values by text.
pub struct TextMap<V> {
    table: HashTable<(Rc<str>, V)>,
}

impl<V> Default for TextMap<V> {
    fn default() -> Self {
        TextMap {
            table: HashTable::new(),
        }
    }
}

fn hash(text: &str) -> u64 {
    FxBuildHasher.hash_one(text)
}

/// Whether two byte strings are equal, eight bytes at a time.
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in x.by_ref().zip(y.by_ref()) {
        let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("chunks of 8"));
        if word(p) != word(q) {
            return false;
        }
    }
    x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

impl<V> TextMap<V> {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }

    pub fn get(&self, text: &str) -> Option<&V> {
        self.table
            .find(hash(text), |(k, _)| {
                same_bytes(k.as_bytes(), text.as_bytes())
            })
            .map(|(_, v)| v)
    }

    /// Keeps `value` for `text`, in place of any value it had.
    pub fn insert(&mut self, text: Rc<str>, value: V) {
        let h = hash(&text);
        match self
            .table
            .find_entry(h, |(k, _)| same_bytes(k.as_bytes(), text.as_bytes()))
        {
            Ok(mut kept) => kept.get_mut().1 = value,
            Err(_) => {
                self.table.insert_unique(h, (text, value), |(k, _)| hash(k));
            }
        }
    }

    pub fn remove(&mut self, text: &str) -> Option<V> {
        self.table
            .find_entry(hash(text), |(k, _)| {
                same_bytes(k.as_bytes(), text.as_bytes())
            })
            .ok()
            .map(|kept| kept.remove().0.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_equal_only_when_every_one_is() {
        let base = "editing the parser in repo r3 before the release";
        for len in 0..base.len() {
            let a = &base.as_bytes()[..len];
            assert!(same_bytes(a, a));
            for i in 0..len {
                let mut b = a.to_vec();
                b[i] ^= 1;
                assert!(!same_bytes(a, &b), "length {len}, byte {i}");
            }
            assert!(!same_bytes(a, &base.as_bytes()[..len + 1]));
        }
    }

    #[test]
    fn a_text_map_keeps_replaces_and_lets_go() {
        let mut map: TextMap<u32> = TextMap::default();
        let texts: Vec<String> = (0..1000).map(|i| format!("lesson text {i}")).collect();
        for (i, t) in texts.iter().enumerate() {
            map.insert(Rc::from(t.as_str()), i as u32);
        }
        assert_eq!(map.len(), 1000);
        assert_eq!(map.get("lesson text 7"), Some(&7));
        assert_eq!(map.get("lesson text 1000"), None);
        map.insert(Rc::from("lesson text 7"), 70);
        assert_eq!((map.len(), map.get("lesson text 7")), (1000, Some(&70)));
        assert_eq!(map.remove("lesson text 7"), Some(70));
        assert_eq!((map.len(), map.get("lesson text 7")), (999, None));
        assert_eq!(map.remove("lesson text 7"), None);
        map.clear();
        assert!(map.is_empty());
    }
}
