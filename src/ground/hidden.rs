//! Which characters a reader cannot see. Shared with build.rs.
//!
//! One predicate serves two contracts: the untrusted-data fence writes these
//! characters as `\uXXXX` escapes, and completion drops any candidate that
//! contains one (a suggestion the analyst cannot read is not a suggestion).

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Largest value a reader is shown as an argument or a completion choice,
/// in Unicode scalar values: prompt arguments longer than this are refused,
/// and longer completion candidates are never offered.
pub const MAX_VALUE_SCALARS: usize = 4096;

/// Default_Ignorable_Code_Point ranges from Unicode's DerivedCoreProperties.txt.
/// They render as nothing, so they can hide text or split a word invisibly.
pub const DEFAULT_IGNORABLE: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
];

pub fn is_default_ignorable(c: char) -> bool {
    let c = c as u32;
    DEFAULT_IGNORABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Printable characters that render as nothing at all, though they are
/// neither format characters nor default-ignorable: a name made of them
/// looks blank (U+2800 BRAILLE PATTERN BLANK).
const VISUALLY_BLANK: [char; 1] = ['\u{2800}'];

/// Controls (C0, DEL, C1 including U+0085), format characters (bidi
/// embeddings, overrides and isolates, zero-width joiners, the BOM, tag
/// characters), line and paragraph separators, private-use and unassigned
/// code points, every default-ignorable code point, and the visually blank
/// ones.
pub fn is_hidden(c: char) -> bool {
    if VISUALLY_BLANK.contains(&c) {
        return true;
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::Surrogate
    ) || is_default_ignorable(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visually_blank_and_invisible_characters_are_hidden() {
        for c in [
            '\u{2800}',
            '\u{200b}',
            '\u{202e}',
            '\u{3164}',
            '\u{e0041}',
            '\u{85}',
        ] {
            assert!(is_hidden(c), "{:?}", c);
        }
        for c in ['a', ' ', 'ß', '\u{2801}', '中'] {
            assert!(!is_hidden(c), "{:?}", c);
        }
    }
}

/// `text` with every [`is_hidden`] character written as a C universal
/// character name (`\u202E`, `\U000E0041`): what rea prints as C, whether a
/// name from the file or a string literal, shows what is there.
#[allow(dead_code)] // build.rs includes this file and prints no C.
pub fn escape_for_c(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        let code = c as u32;
        match c {
            c if !is_hidden(c) => out.push(c),
            _ if code <= 0xffff => out.push_str(&format!("\\u{code:04X}")),
            _ => out.push_str(&format!("\\U{code:08X}")),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod c_escape_tests {
    use super::escape_for_c;

    #[test]
    fn hidden_characters_become_universal_character_names() {
        assert_eq!(escape_for_c("plain"), "plain");
        assert_eq!(escape_for_c("a\u{202e}b"), "a\\u202Eb");
        assert_eq!(escape_for_c("\u{e0041}"), "\\U000E0041");
        assert_eq!(escape_for_c("tab\there"), "tab\\u0009here");
    }
}
