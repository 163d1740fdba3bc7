//! Bounded before/after snapshots of the working directory. Symlinks are
//! recorded, never followed; only regular files are opened (a FIFO the
//! process left behind must not block the host), without following links,
//! and at most [`MAX_HASHED_BYTES`] of each is hashed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::redact::Secrets;
use super::types::{FileChanges, FileEntry};
use crate::ground::confined::{ConfinedFile, EntryKind, Node, Roots};
use crate::ground::digest::hex;

/// Bytes hashed per file.
pub const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes hashed per snapshot: beyond it files are listed unhashed and the
/// snapshot is marked truncated, so a directory of huge files cannot
/// stall the host past its deadline.
pub const MAX_SNAPSHOT_HASHED_BYTES: u64 = 512 * 1024 * 1024;
/// Directory levels walked below the working directory.
pub const MAX_DEPTH: usize = 16;

/// One snapshot: entries by relative path, and whether a bound was hit.
#[derive(Debug, Default)]
pub struct Snapshot {
    entries: BTreeMap<String, FileEntry>,
    truncated: bool,
    hashed: u64,
}

/// Hashes at most [`MAX_HASHED_BYTES`] of an opened file.
fn hash_file(file: &ConfinedFile) -> Option<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut reader = file.reader().take(file.len().min(MAX_HASHED_BYTES));
    let mut buf = vec![0u8; 64 * 1024];
    let mut hashed = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                hashed += n as u64;
            }
            Err(_) => return None,
        }
    }
    Some((hex(&hasher.finalize()), hashed))
}

/// Walks `root` breadth-first, keeping at most `max_entries` entries. The
/// root is opened once; every directory below it is opened beneath it
/// without following a symlink, and entries are typed by the directory
/// (links are listed, never followed) and, for files, by `fstat` on the
/// opened descriptor, so nothing swapped in meanwhile leads outside it.
pub fn snapshot(root: &Path, max_entries: u64) -> Snapshot {
    let mut snap = Snapshot::default();
    let Ok(root) = Roots::default().open_dir(root) else {
        return snap;
    };
    let mut queue = std::collections::VecDeque::from([(String::new(), 0usize)]);
    while let Some((dir_rel, depth)) = queue.pop_front() {
        let Ok(dir) = root
            .open_no_symlinks(Path::new(&dir_rel))
            .and_then(|n| n.into_dir())
        else {
            continue;
        };
        let room = max_entries.saturating_sub(snap.entries.len() as u64);
        let Ok((entries, more)) = dir.entries(room) else {
            continue;
        };
        for entry in entries {
            let name = entry.name.to_string_lossy().into_owned();
            let rel = if dir_rel.is_empty() {
                name
            } else {
                format!("{dir_rel}/{name}")
            };
            let mut record = FileEntry {
                path: rel.clone(),
                kind: match entry.kind {
                    EntryKind::File => "file",
                    EntryKind::Dir => "directory",
                    EntryKind::Symlink => "symlink",
                    EntryKind::Other => "other",
                }
                .to_string(),
                size: 0,
                sha256: None,
                hashed_bytes: 0,
            };
            match entry.kind {
                EntryKind::File => match dir.open_no_symlinks(Path::new(&entry.name)) {
                    Ok(Node::File(file)) => {
                        record.size = file.len();
                        if snap.hashed + file.len().min(MAX_HASHED_BYTES)
                            > MAX_SNAPSHOT_HASHED_BYTES
                        {
                            snap.truncated = true;
                        } else if let Some((h, n)) = hash_file(&file) {
                            snap.hashed += n;
                            record.sha256 = Some(h);
                            record.hashed_bytes = n;
                        }
                    }
                    // Swapped since the listing: listed as what it is now.
                    _ => record.kind = "other".to_string(),
                },
                EntryKind::Dir => {
                    if depth + 1 < MAX_DEPTH {
                        queue.push_back((rel.clone(), depth + 1));
                    } else {
                        snap.truncated = true;
                    }
                }
                EntryKind::Symlink | EntryKind::Other => {
                    if let Ok(meta) = dir.symlink_metadata(Path::new(&entry.name)) {
                        record.size = meta.len();
                    }
                }
            }
            snap.entries.insert(rel, record);
        }
        if more {
            snap.truncated = true;
            return snap;
        }
    }
    snap
}

/// What differs between `before` and `after`, with secret values in
/// names redacted. A directory whose size changed is not reported as
/// changed (its entries are).
pub fn diff(before: &Snapshot, after: &Snapshot, secrets: &Secrets) -> FileChanges {
    let clean = |e: &FileEntry| FileEntry {
        path: secrets.redact_str(&e.path),
        ..e.clone()
    };
    let mut out = FileChanges {
        truncated: before.truncated || after.truncated,
        ..FileChanges::default()
    };
    for (path, a) in &after.entries {
        match before.entries.get(path) {
            None => out.created.push(clean(a)),
            Some(b) if a.kind == "directory" && b.kind == "directory" => {}
            Some(b) if b != a => out.changed.push(clean(a)),
            Some(_) => {}
        }
    }
    for (path, b) in &before.entries {
        if !after.entries.contains_key(path) {
            out.deleted.push(clean(b));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_created_changed_deleted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("keep"), "same").expect("write");
        std::fs::write(root.join("edit"), "old").expect("write");
        std::fs::write(root.join("gone"), "x").expect("write");
        let before = snapshot(root, 100);
        std::fs::write(root.join("edit"), "new").expect("write");
        std::fs::remove_file(root.join("gone")).expect("rm");
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("sub/new"), "hello").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).expect("symlink");
        let after = snapshot(root, 100);
        let d = diff(&before, &after, &Secrets::default());
        let names = |v: &[FileEntry]| v.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
        assert_eq!(names(&d.created), ["link", "sub", "sub/new"]);
        assert_eq!(names(&d.changed), ["edit"]);
        assert_eq!(names(&d.deleted), ["gone"]);
        assert!(!d.truncated);
        let new = &d.created[2];
        assert_eq!(
            new.sha256.as_deref(),
            Some(hex(&Sha256::digest(b"hello")).as_str())
        );
        assert_eq!(d.created[0].kind, "symlink");
        assert_eq!(d.created[0].sha256, None);
    }

    #[test]
    fn entry_limit_marks_truncation() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..5 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").expect("write");
        }
        let snap = snapshot(dir.path(), 3);
        assert_eq!(snap.entries.len(), 3);
        assert!(snap.truncated);
    }

    #[test]
    fn links_and_special_files_are_listed_never_followed_or_opened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "outside").expect("write");
        let root = dir.path();
        std::os::unix::fs::symlink(outside.path(), root.join("elsewhere")).expect("symlink");
        let fifo = std::ffi::CString::new(root.join("pipe").as_os_str().as_encoded_bytes())
            .expect("c string");
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let snap = snapshot(root, 100);
        let paths: Vec<_> = snap.entries.keys().cloned().collect();
        assert_eq!(
            paths,
            ["elsewhere", "pipe"],
            "nothing below the link is listed"
        );
        assert_eq!(snap.entries["elsewhere"].kind, "symlink");
        assert_eq!(snap.entries["pipe"].kind, "other");
        assert!(snap.entries["pipe"].sha256.is_none());
    }
}
