//! Is this directory something `analyze_javascript_application` can read?
//! Routing asks before it names the action in a `not_a_binary_target`
//! error, so the check is cheap and bounded: it never follows symlinks,
//! looks at most [`MAX_ENTRIES`] entries and [`MAX_LEVELS`] levels deep.

use std::path::{Path, PathBuf};

use crate::ground::confined::{ConfinedDir, EntryKind, Node};

/// Most directory entries examined.
const MAX_ENTRIES: usize = 2000;
/// The root and its children (an app's sources sit near its package.json).
const MAX_LEVELS: usize = 2;

/// Source and page extensions that make a directory worth analysing.
const APPLICATION_EXTENSIONS: [&str; 9] = [
    "js", "mjs", "cjs", "ts", "tsx", "jsx", "html", "htm", "asar",
];

/// True when the opened `dir` holds a `package.json` at its root, or a
/// JavaScript, TypeScript, HTML or `.asar` file within its first two
/// levels. Subdirectories are opened beneath it without following symlinks.
pub fn looks_like_application(dir: &ConfinedDir) -> bool {
    let mut budget = MAX_ENTRIES as u64;
    let mut level = vec![PathBuf::new()];
    for _ in 0..MAX_LEVELS {
        let mut next = Vec::new();
        for rel in level {
            let Ok(Node::Dir(d)) = dir.open_no_symlinks(&rel) else {
                continue;
            };
            let Ok((entries, _)) = d.entries(budget) else {
                continue;
            };
            for entry in entries {
                if budget == 0 {
                    return false;
                }
                budget -= 1;
                let path = rel.join(&entry.name);
                match entry.kind {
                    EntryKind::Dir => next.push(path),
                    EntryKind::File
                        if rel.as_os_str().is_empty() && entry.name == "package.json" =>
                    {
                        return true;
                    }
                    EntryKind::File if has_application_extension(&path) => return true,
                    _ => {}
                }
            }
        }
        level = next;
    }
    false
}

fn has_application_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        APPLICATION_EXTENSIONS
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ground::confined::Roots;

    fn looks(path: &Path) -> bool {
        looks_like_application(&Roots::default().open_dir(path).unwrap())
    }

    #[test]
    fn package_json_or_nearby_sources_make_an_application() {
        let d = tempfile::tempdir().unwrap();
        assert!(!looks(d.path()));
        std::fs::write(d.path().join("README.md"), "x").unwrap();
        assert!(!looks(d.path()));
        std::fs::create_dir(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/index.js"), "x").unwrap();
        assert!(looks(d.path()));

        let p = tempfile::tempdir().unwrap();
        std::fs::write(p.path().join("package.json"), "{}").unwrap();
        assert!(looks(p.path()));
    }

    #[test]
    fn deep_sources_and_symlinks_do_not_count() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        std::fs::write(d.path().join("a/b/deep.js"), "x").unwrap();
        assert!(!looks(d.path()));
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("main.js"), "x").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("main.js"), d.path().join("main.js"))
            .unwrap();
        assert!(!looks(d.path()));
    }
}
