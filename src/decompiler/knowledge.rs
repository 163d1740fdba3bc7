//! What rea knows about a document that the engine does not read itself:
//! procedure starts and names, import stubs and slots, strings. It goes to
//! every worker at load, whole, so a recycled worker sees the same facts and
//! prints the same text; its digest is part of every cache key and Evidence
//! record.

use serde::{Deserialize, Serialize};

/// The most facts of one kind a worker takes (a hostile file can declare
/// millions of symbols; the engine's own loader already reads those).
pub const MAX_FACTS: usize = 200_000;
/// Names longer than this are cut (procedure names are cut at 512 too).
pub const MAX_NAME_BYTES: usize = 512;
/// The bytes of all names together: past it, stubs and slots are left out
/// and starts go without their names, so the load request stays well
/// within the protocol's line limit.
pub const MAX_NAMES_BYTES: usize = 24 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knowledge {
    /// Procedure starts; a name when rea has one the engine may lack.
    pub functions: Vec<Start>,
    /// Code that jumps through an import slot (PLT, `__stubs`, `jmp [IAT]`).
    pub import_stubs: Vec<Named>,
    /// Import slots called through directly (PE `call [IAT]`).
    pub import_slots: Vec<Named>,
    /// Strings in data, to print as literals.
    pub strings: Vec<KnownString>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    pub address: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Named {
    pub address: u64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownString {
    pub address: u64,
    /// Code units, without the terminator.
    pub units: u32,
    /// UTF-16LE (else one byte per unit).
    pub wide: bool,
}

impl Knowledge {
    /// Sorted, deduplicated and bounded, so equal facts give equal digests
    /// whatever order they were gathered in.
    pub fn normalize(mut self) -> Knowledge {
        fn cut(name: &mut String) {
            if name.len() > MAX_NAME_BYTES {
                let mut end = MAX_NAME_BYTES;
                while !name.is_char_boundary(end) {
                    end -= 1;
                }
                name.truncate(end);
            }
        }
        self.functions.sort_by_key(|s| s.address);
        self.functions.dedup_by_key(|s| s.address);
        self.functions.truncate(MAX_FACTS);
        for start in &mut self.functions {
            if let Some(name) = &mut start.name {
                cut(name);
            }
        }
        for list in [&mut self.import_stubs, &mut self.import_slots] {
            list.sort_by_key(|n| n.address);
            list.dedup_by_key(|n| n.address);
            list.truncate(MAX_FACTS);
            list.iter_mut().for_each(|n| cut(&mut n.name));
        }
        let mut budget = MAX_NAMES_BYTES;
        let mut spend = |name: &str| match budget.checked_sub(name.len()) {
            Some(left) => {
                budget = left;
                true
            }
            None => false,
        };
        // Import names first: the engine reads symbols itself, not imports.
        self.import_stubs.retain(|n| spend(&n.name));
        self.import_slots.retain(|n| spend(&n.name));
        for start in &mut self.functions {
            if start.name.as_deref().is_some_and(|name| !spend(name)) {
                start.name = None;
            }
        }
        self.strings.sort_by_key(|s| s.address);
        self.strings.dedup_by_key(|s| s.address);
        self.strings.truncate(MAX_FACTS);
        self
    }

    /// `kn_` + sha256 of the canonical JSON of the facts.
    pub fn digest(&self) -> String {
        // Integers and strings only: canonical form cannot fail; the plain
        // serialization stands in if it ever did.
        let value = serde_json::to_value(self).unwrap_or_default();
        let text =
            crate::ground::canonical::to_canonical(&value).unwrap_or_else(|_| value.to_string());
        format!("kn_{}", crate::ground::digest::sha256_hex(text.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(address: u64, name: &str) -> Named {
        Named {
            address,
            name: name.into(),
        }
    }

    #[test]
    fn the_digest_does_not_depend_on_order() {
        let one = Knowledge {
            import_stubs: vec![named(2, "b"), named(1, "a")],
            ..Knowledge::default()
        }
        .normalize();
        let two = Knowledge {
            import_stubs: vec![named(1, "a"), named(2, "b"), named(1, "a")],
            ..Knowledge::default()
        }
        .normalize();
        assert_eq!(one.digest(), two.digest());
        assert!(one.digest().starts_with("kn_"));
        let other = Knowledge {
            import_stubs: vec![named(1, "a")],
            ..Knowledge::default()
        }
        .normalize();
        assert_ne!(one.digest(), other.digest());
    }

    #[test]
    fn all_names_together_stay_within_their_budget() {
        let name = "n".repeat(MAX_NAME_BYTES);
        let count = MAX_NAMES_BYTES / MAX_NAME_BYTES + 10;
        let k = Knowledge {
            functions: (0..count as u64)
                .map(|address| Start {
                    address,
                    name: Some(name.clone()),
                })
                .collect(),
            import_stubs: vec![named(u64::MAX, "puts")],
            ..Knowledge::default()
        }
        .normalize();
        assert_eq!(k.functions.len(), count, "every start is kept");
        let named_bytes: usize = k
            .functions
            .iter()
            .filter_map(|s| s.name.as_ref())
            .map(String::len)
            .sum();
        assert!(named_bytes <= MAX_NAMES_BYTES);
        assert!(k.functions.iter().any(|s| s.name.is_none()));
        assert_eq!(k.import_stubs.len(), 1, "imports are named first");
    }

    #[test]
    fn long_names_are_cut_on_a_character_boundary() {
        let long = "é".repeat(400);
        let k = Knowledge {
            import_slots: vec![named(1, &long)],
            ..Knowledge::default()
        }
        .normalize();
        let name = &k.import_slots[0].name;
        assert!(name.len() <= MAX_NAME_BYTES && name.starts_with('é'));
    }
}
