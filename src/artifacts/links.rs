//! Resolving what native binaries name (needed libraries through rpaths,
//! `@loader_path`, `@executable_path`, `$ORIGIN` and plain basenames)
//! against the occurrences of the same container, following symlinks
//! inside it. Unresolvable artifact-relative references are missing
//! libraries; absolute paths and unmatched basenames are external.

use std::cell::Cell;
use std::collections::HashMap;

use super::classify::NativeFacts;
use super::model::*;
use super::paths::{base_name, join_inside, parent_dir};

/// Symlink hops followed while resolving one path.
const MAX_HOPS: usize = 16;

/// Path bytes one inspection may look up while resolving links. Each
/// binary may name 10,000 libraries and 10,000 rpaths of paths up to 4 KiB,
/// so without a budget a crafted archive could ask for billions of
/// lookups; real artifacts use a tiny fraction of this.
const MAX_RESOLVE_WORK: u64 = 64 << 20;

/// Occurrences by place, for lookups inside one container.
pub(crate) struct Index<'a> {
    pub occurrences: &'a [(Vec<String>, Occurrence)],
    by_place: HashMap<(&'a str, &'a str), usize>,
    by_base: HashMap<(&'a str, String), usize>,
    /// Path bytes looked up so far, against [`MAX_RESOLVE_WORK`].
    work: Cell<u64>,
}

impl<'a> Index<'a> {
    pub fn new(occurrences: &'a [(Vec<String>, Occurrence)]) -> Self {
        let mut by_place = HashMap::new();
        let mut by_base = HashMap::new();
        for (i, (_, o)) in occurrences.iter().enumerate() {
            let Some(parent) = o.parent_occurrence_id.as_deref() else {
                continue;
            };
            by_place.insert((parent, o.logical_path.as_str()), i);
            if o.entry_kind == EntryKind::File {
                let base = base_name(&o.logical_path).to_ascii_lowercase();
                by_base
                    .entry((parent, base))
                    .and_modify(|k: &mut usize| {
                        if occurrences[*k].1.logical_path > o.logical_path {
                            *k = i;
                        }
                    })
                    .or_insert(i);
            }
        }
        Index {
            occurrences,
            by_place,
            by_base,
            work: Cell::new(0),
        }
    }

    pub fn get(&self, i: usize) -> &'a Occurrence {
        &self.occurrences[i].1
    }

    /// Whether the lookup budget ran out (some references were left
    /// unresolved).
    pub fn exhausted(&self) -> bool {
        self.work.get() > MAX_RESOLVE_WORK
    }

    /// Charges `bytes` of lookup work; false once the budget is spent.
    fn charge(&self, bytes: usize) -> bool {
        self.work.set(self.work.get().saturating_add(bytes as u64));
        !self.exhausted()
    }

    /// The occurrence at `path` in `container`, following symlinks (on any
    /// component) that stay inside it. `None` also once the lookup budget
    /// is spent ([`Index::exhausted`]).
    pub fn resolve(&self, container: &str, path: &str) -> Option<usize> {
        let mut path = path.to_owned();
        for _ in 0..MAX_HOPS {
            let mut next = None;
            // Each prefix ends at a `/` (or the end): look it up in place.
            let ends = path
                .match_indices('/')
                .map(|(i, _)| i)
                .chain(std::iter::once(path.len()));
            for end in ends {
                let prefix = &path[..end];
                if !self.charge(prefix.len()) {
                    return None;
                }
                let Some(&k) = self.by_place.get(&(container, prefix)) else {
                    continue;
                };
                let o = self.get(k);
                if o.entry_kind == EntryKind::Symlink {
                    let base = join_inside(parent_dir(prefix), o.symlink_target.as_deref()?)?;
                    let rest = path.get(end + 1..).unwrap_or("");
                    next = Some(if rest.is_empty() {
                        base
                    } else {
                        format!("{base}/{rest}")
                    });
                    break;
                }
            }
            match next {
                Some(p) => path = p,
                None => return self.by_place.get(&(container, path.as_str())).copied(),
            }
        }
        None
    }

    /// A file with this basename anywhere in the container (case-insensitive).
    pub fn by_basename(&self, container: &str, name: &str) -> Option<usize> {
        self.by_base
            .get(&(container, name.to_ascii_lowercase()))
            .copied()
    }
}

pub(crate) enum Resolution {
    Found(usize),
    Missing(String),
    External,
}

/// Resolves one library reference of `n`; `exe_dir` is the directory of
/// the bundle executable (for `@executable_path`), when known.
pub(crate) fn resolve(
    index: &Index<'_>,
    n: &NativeFacts,
    lib: &str,
    exe_dir: Option<&str>,
) -> Resolution {
    let Some(container) = n.location.0.as_deref() else {
        // A lone binary: nothing ships beside it.
        return if is_relative_reference(lib) {
            Resolution::Missing("the artifact is a single file".into())
        } else {
            Resolution::External
        };
    };
    let dir = parent_dir(&n.location.1);
    let exe_dir = exe_dir.unwrap_or(dir);
    let found = |path: Option<String>| path.and_then(|p| index.resolve(container, &p));
    if let Some(rest) = lib.strip_prefix("@rpath/") {
        let mut relative = 0;
        for rpath in &n.rpaths {
            if let Some(d) = expand(rpath, dir, exe_dir) {
                relative += 1;
                if let Some(k) = found(join_inside(&d, rest)) {
                    return Resolution::Found(k);
                }
            }
        }
        return if relative > 0 {
            Resolution::Missing("no rpath resolves it inside the artifact".into())
        } else if n.rpaths.is_empty() {
            Resolution::Missing("an @rpath reference, but the binary has no rpaths".into())
        } else {
            Resolution::External
        };
    }
    for (prefix, base) in [("@loader_path/", dir), ("@executable_path/", exe_dir)] {
        if let Some(rest) = lib.strip_prefix(prefix) {
            return match found(join_inside(base, rest)) {
                Some(k) => Resolution::Found(k),
                None => {
                    Resolution::Missing(format!("{prefix} resolves to nothing in the artifact"))
                }
            };
        }
    }
    if lib.starts_with('/') {
        return Resolution::External;
    }
    if lib.contains('/') {
        return match found(join_inside(dir, lib)) {
            Some(k) => Resolution::Found(k),
            None => Resolution::Missing("a relative path that resolves to nothing".into()),
        };
    }
    // ELF DT_RUNPATH/RPATH entries may hold several `:`-separated dirs.
    for rpath in n.rpaths.iter().flat_map(|r| r.split(':')) {
        if let Some(d) = expand(rpath, dir, exe_dir)
            && let Some(k) = found(join_inside(&d, lib))
        {
            return Resolution::Found(k);
        }
    }
    match index.by_basename(container, lib) {
        Some(k) => Resolution::Found(k),
        None => Resolution::External,
    }
}

fn is_relative_reference(lib: &str) -> bool {
    lib.starts_with('@') || (lib.contains('/') && !lib.starts_with('/'))
}

/// An rpath as a directory inside the container, when it is relative to
/// the binary or the executable.
fn expand(rpath: &str, dir: &str, exe_dir: &str) -> Option<String> {
    for (prefix, base) in [
        ("@loader_path", dir),
        ("@executable_path", exe_dir),
        ("$ORIGIN", dir),
        ("${ORIGIN}", dir),
    ] {
        if let Some(rest) = rpath.strip_prefix(prefix) {
            return join_inside(base, rest.trim_start_matches('/'));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occurrence(
        parent: Option<&str>,
        path: &str,
        kind: EntryKind,
        target: Option<&str>,
    ) -> Occurrence {
        Occurrence {
            occurrence_id: format!("occ_{path}"),
            parent_occurrence_id: parent.map(str::to_owned),
            node_id: None,
            logical_path: path.to_owned(),
            entry_kind: kind,
            size: 0,
            compressed_size: None,
            sha256: None,
            hash_status: HashStatus::Unavailable,
            executable: false,
            encrypted: false,
            symlink_target: target.map(str::to_owned),
            architecture: None,
            limitations: Vec::new(),
        }
    }

    #[test]
    fn lookups_follow_symlinks_and_stop_at_the_work_budget() {
        let occurrences: Vec<(Vec<String>, Occurrence)> = [
            occurrence(None, "", EntryKind::Directory, None),
            occurrence(Some("root"), "lib", EntryKind::Directory, None),
            occurrence(Some("root"), "lib/libz.so.1", EntryKind::File, None),
            occurrence(Some("root"), "link", EntryKind::Symlink, Some("lib")),
        ]
        .into_iter()
        .map(|o| (Vec::new(), o))
        .collect();
        let index = Index::new(&occurrences);
        assert_eq!(index.resolve("root", "link/libz.so.1"), Some(2));
        assert!(!index.exhausted());

        // A crafted binary asking again and again for long paths.
        let long = "a/".repeat(2000) + "libz.so.1";
        let mut lookups = 0u64;
        while index.resolve("root", &long).is_none() && !index.exhausted() {
            lookups += 1;
            assert!(lookups < 1_000_000, "the budget must end the work");
        }
        assert!(index.exhausted());
        assert_eq!(
            index.resolve("root", "lib/libz.so.1"),
            None,
            "a spent budget answers nothing"
        );
    }
}
