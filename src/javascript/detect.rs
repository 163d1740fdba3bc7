//! A cheap, bounded test of whether a directory looks like a JavaScript
//! application, for routing (`open_binary` on a directory names
//! `analyze_javascript_application` when it does).

use std::path::Path;

/// Most directory entries examined.
const MAX_ENTRIES: usize = 2000;

/// True when `dir` has a `package.json` at its root, or a `.js`, `.mjs`
/// or `.html` file within its first two directory levels. Symlinks are
/// not followed; at most [`MAX_ENTRIES`] entries are examined.
pub fn looks_like_application(dir: &Path) -> bool {
    let mut budget = MAX_ENTRIES;
    let Ok(meta) = std::fs::metadata(dir) else {
        return false;
    };
    if !meta.is_dir() {
        return false;
    }
    if std::fs::symlink_metadata(dir.join("package.json")).is_ok_and(|m| m.is_file()) {
        return true;
    }
    scan(dir, 1, &mut budget)
}

fn scan(dir: &Path, level: u8, budget: &mut usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut subdirs = Vec::new();
    for entry in entries.flatten() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy().to_ascii_lowercase();
        if kind.is_file() && [".js", ".mjs", ".html"].iter().any(|e| name.ends_with(e)) {
            return true;
        }
        if kind.is_dir() && level < 2 && name != "node_modules" && !name.starts_with('.') {
            subdirs.push(entry.path());
        }
    }
    subdirs.sort();
    subdirs.into_iter().any(|d| scan(&d, level + 1, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_manifests_and_shallow_sources_only() {
        let t = tempfile::tempdir().unwrap();
        assert!(!looks_like_application(t.path()));
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::fs::write(t.path().join("a/b/deep.js"), "x").unwrap();
        assert!(
            !looks_like_application(t.path()),
            "third level is not examined"
        );
        std::fs::write(t.path().join("a/page.html"), "<p>").unwrap();
        assert!(looks_like_application(t.path()));
        let m = tempfile::tempdir().unwrap();
        std::fs::write(m.path().join("package.json"), "{}").unwrap();
        assert!(looks_like_application(m.path()));
        assert!(!looks_like_application(&m.path().join("package.json")));
        #[cfg(unix)]
        {
            let s = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(t.path().join("a"), s.path().join("link")).unwrap();
            assert!(
                !looks_like_application(s.path()),
                "symlinks are not followed"
            );
        }
    }
}
