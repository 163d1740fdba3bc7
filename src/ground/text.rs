//! Bounded quoting of untrusted text in messages (ground floor: imports
//! nothing of the project).

/// `text` as an error message may repeat it: at most `max` characters, with
/// `…` when cut. Messages quote what they refuse, and what they refuse may
/// be megabytes of hostile input.
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Most characters of caller- or file-supplied text an error message
/// repeats: enough to recognise an ID, a member name or a path.
pub const EXCERPT_CHARS: usize = 80;

/// How many characters of a path a message quotes.
pub const PATH_CHARS: usize = 320;
