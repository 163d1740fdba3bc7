//! Search patterns shared by the search tools: literal or regex, case
//! sensitive or not, always bounded.
//!
//! A case-insensitive literal compares match keys (full case folding and
//! compatibility normalization, as completion does), so `straße` finds
//! `STRASSE`. Regexes are compiled with size limits; the `regex` crate
//! guarantees linear-time matching, so no pattern can hang a search.

use crate::tools::errors::ErrorCode;
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::ToolError;
use crate::matching::key::key;

pub const MAX_PATTERN_CHARS: usize = 256;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// The pattern is plain text found anywhere in the name.
    #[default]
    Literal,
    /// The pattern is a regular expression (Rust `regex` syntax).
    Regex,
}

pub enum Pattern {
    Literal {
        needle: String,
        case_sensitive: bool,
    },
    Regex(Regex),
}

impl Pattern {
    pub fn new(
        pattern: &str,
        mode: SearchMode,
        case_sensitive: bool,
    ) -> Result<Pattern, ToolError> {
        let count = pattern.chars().count();
        if count == 0 || count > MAX_PATTERN_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "pattern has {count} characters; give 1-{MAX_PATTERN_CHARS}"
            )));
        }
        Ok(match mode {
            SearchMode::Literal => Pattern::Literal {
                needle: if case_sensitive {
                    pattern.to_string()
                } else {
                    key(pattern)
                },
                case_sensitive,
            },
            SearchMode::Regex => Pattern::Regex(
                RegexBuilder::new(pattern)
                    .case_insensitive(!case_sensitive)
                    // Multi-line text is one string, matched line by line:
                    // `^` and `$` also match at its line breaks.
                    .multi_line(true)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .dfa_size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| {
                        ToolError::new(
                            ErrorCode::InvalidPattern,
                            format!("the regex does not compile: {e}"),
                        )
                    })?,
            ),
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Literal {
                needle,
                case_sensitive: true,
            } => text.contains(needle.as_str()),
            Pattern::Literal {
                needle,
                case_sensitive: false,
            } => key(text).contains(needle.as_str()),
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_matching_folds_case_unless_asked_not_to() {
        let p = Pattern::new("straße", SearchMode::Literal, false).unwrap();
        assert!(p.is_match("get_STRASSE_name"));
        let p = Pattern::new("Open", SearchMode::Literal, true).unwrap();
        assert!(p.is_match("xOpen") && !p.is_match("open"));
    }

    #[test]
    fn regexes_are_checked_and_bounded() {
        let p = Pattern::new("^_Z.*Init", SearchMode::Regex, true).unwrap();
        assert!(p.is_match("_Z4InitN4Napi3EnvE") && !p.is_match("Init"));
        // One string of several lines matches line by line.
        let p = Pattern::new("^  -D, --dired", SearchMode::Regex, true).unwrap();
        assert!(p.is_match("Usage: ls\n  -D, --dired    generate output\n"));
        assert_eq!(
            Pattern::new("(", SearchMode::Regex, false)
                .err()
                .map(|e| e.code.as_str()),
            Some("invalid_pattern")
        );
        assert!(Pattern::new("a{1000}{1000}", SearchMode::Regex, false).is_err());
        assert!(Pattern::new("", SearchMode::Literal, false).is_err());
        assert!(Pattern::new(&"a".repeat(257), SearchMode::Literal, false).is_err());
    }
}
