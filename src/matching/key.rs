//! The match key: the one normalization every completion comparison uses.
//!
//! Unicode §3.13 D146 compatibility caseless matching, stored compactly:
//! NFD → case fold → NFKD → case fold → NFKC, then Default_Ignorable code
//! points removed (as NFKC_Casefold does). Folding and NFKC do not commute,
//! which is why the chain folds twice; `to_lowercase` is not case folding
//! (`straße` vs `STRASSE`).

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

use crate::ground::hidden::is_default_ignorable;

/// The key of `s`. Idempotent: `key(&key(s)) == key(s)`.
pub fn key(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    // Removing ignorables can leave text that normalizes further (a combining
    // mark after a removed joiner, say); repeating the pass reaches the fixed
    // point, in practice after one or two rounds.
    let mut current = one_pass(s);
    for _ in 0..3 {
        let next = one_pass(&current);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

fn one_pass(s: &str) -> String {
    s.chars()
        .nfd()
        .default_case_fold()
        .nfkd()
        .default_case_fold()
        .nfkc()
        .filter(|&c| !is_default_ignorable(c))
        .collect()
}

/// Whether `candidate` matches the typed `prefix` (both given as keys).
pub fn is_prefix(prefix_key: &str, candidate_key: &str) -> bool {
    candidate_key.starts_with(prefix_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pinned_equivalences() {
        let pairs = [
            ("STRASSE", "straße"),
            ("㎒", "MHz"),
            ("ᾳ", "ΑΙ"),
            ("ǅ", "dž"),
            ("ＡＰ", "Ap"),
            ("ﬁle", "FILE"),
            ("x\u{AD}y", "xy"),
            ("K", "k"),
            ("Ω", "ω"),
        ];
        for (a, b) in pairs {
            assert_eq!(key(a), key(b), "{a:?} vs {b:?}");
        }
        assert!(is_prefix(&key("ＡＰ"), &key("App")));
        assert!(is_prefix(&key("STRAS"), &key("straße")));
        assert!(!is_prefix(&key("b"), &key("App")));
    }

    #[test]
    fn ascii_fast_path_is_lowercase() {
        assert_eq!(key("Open_Binary0x1F"), "open_binary0x1f");
    }

    proptest! {
        #[test]
        fn key_is_idempotent(s in any::<String>()) {
            let k = key(&s);
            prop_assert_eq!(key(&k), k);
        }

        #[test]
        fn key_is_idempotent_on_tricky_text(s in "[A-Za-zßẞſﬁﬀ㎒ǅǄᾳΣς\u{0345}\u{0301}\u{AD}\u{200D}\u{FE0F}İı ]{0,12}") {
            let k = key(&s);
            prop_assert_eq!(key(&k), k);
        }

    }
}
