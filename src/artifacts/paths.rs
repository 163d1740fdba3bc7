//! Entry names from hostile containers: decide whether a stored name becomes
//! a logical path (relative POSIX, no `..`) or a refusal, and resolve
//! relative references lexically without ever leaving the container.

use super::model::RefusalReason;

/// Longest `raw_path` kept in a refusal.
const MAX_RAW_PATH_CHARS: usize = 256;

/// The stored name, escaped and bounded, for `RefusedEntry::raw_path`.
pub fn escape_raw(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::new();
    for (count, c) in text.chars().flat_map(char::escape_default).enumerate() {
        if count >= MAX_RAW_PATH_CHARS {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// A stored entry name as a logical path: trailing `/` and `.`/empty
/// components dropped; anything absolute, Windows-style, `..`, non-UTF-8,
/// control-character or over-long is refused.
pub fn logical_path(raw: &[u8], max_path_bytes: u64) -> Result<String, (RefusalReason, String)> {
    if raw.len() as u64 > max_path_bytes {
        return Err((
            RefusalReason::PathTooLong,
            format!("{} bytes; the limit is {max_path_bytes}", raw.len()),
        ));
    }
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err((RefusalReason::InvalidName, "not valid UTF-8".into()));
    };
    if text.chars().any(char::is_control) {
        return Err((
            RefusalReason::InvalidName,
            "holds control characters".into(),
        ));
    }
    if text.contains('\\') {
        return Err((RefusalReason::NonPosixPath, "holds a backslash".into()));
    }
    let b = text.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return Err((
            RefusalReason::NonPosixPath,
            "starts with a drive letter".into(),
        ));
    }
    if text.starts_with('/') {
        return Err((RefusalReason::AbsolutePath, "absolute path".into()));
    }
    let mut parts = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err((
                    RefusalReason::PathTraversal,
                    "holds a `..` component".into(),
                ));
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return Err((RefusalReason::InvalidName, "empty name".into()));
    }
    Ok(parts.join("/"))
}

/// The directory part of a logical path ("" at the top).
pub fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The last component of a path.
pub fn base_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Joins `reference` (relative) onto `dir` lexically; `None` when the
/// result would leave the container or `reference` is absolute.
pub fn join_inside(dir: &str, reference: &str) -> Option<String> {
    if reference.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in reference.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_refused_with_their_reason() {
        let r = |s: &str| logical_path(s.as_bytes(), 4096).map_err(|e| e.0);
        assert_eq!(r("a/./b//c/"), Ok("a/b/c".into()));
        assert_eq!(r("../etc/passwd"), Err(RefusalReason::PathTraversal));
        assert_eq!(r("a/../../b"), Err(RefusalReason::PathTraversal));
        assert_eq!(r("/etc/passwd"), Err(RefusalReason::AbsolutePath));
        assert_eq!(r("C:/x"), Err(RefusalReason::NonPosixPath));
        assert_eq!(r("a\\b"), Err(RefusalReason::NonPosixPath));
        assert_eq!(r("a\nb"), Err(RefusalReason::InvalidName));
        assert_eq!(r("./"), Err(RefusalReason::InvalidName));
        assert_eq!(
            logical_path(&[b'a'; 10], 9).map_err(|e| e.0),
            Err(RefusalReason::PathTooLong)
        );
        assert_eq!(
            logical_path(&[0xff, 0xfe], 9).map_err(|e| e.0),
            Err(RefusalReason::InvalidName)
        );
    }

    #[test]
    fn joins_stay_inside() {
        assert_eq!(join_inside("a/b", "../c"), Some("a/c".into()));
        assert_eq!(join_inside("a", "../../c"), None);
        assert_eq!(join_inside("a", "/c"), None);
        assert!(escape_raw(&[b'x'; 1000]).chars().count() <= 257);
    }
}
