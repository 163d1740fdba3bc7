//! Bounded before/after snapshots of the working directory. Symlinks are
//! recorded, never followed; only regular files are opened (a FIFO the
//! process left behind must not block the host), without following links,
//! and at most [`MAX_HASHED_BYTES`] of each is hashed.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::redact::Secrets;
use super::types::{FileChanges, FileEntry};
use crate::session::evidence::hex;

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

fn hash_file(path: &Path, size: u64) -> Option<(String, u64)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let mut hasher = Sha256::new();
    let mut reader = file.take(size.min(MAX_HASHED_BYTES));
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

/// Walks `root` breadth-first, keeping at most `max_entries` entries.
pub fn snapshot(root: &Path, max_entries: u64) -> Snapshot {
    let mut snap = Snapshot::default();
    let mut queue = std::collections::VecDeque::from([(root.to_path_buf(), 0usize)]);
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in read.filter_map(Result::ok) {
            if snap.entries.len() as u64 >= max_entries {
                snap.truncated = true;
                return snap;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            let ft = meta.file_type();
            let kind = if ft.is_file() {
                "file"
            } else if ft.is_dir() {
                "directory"
            } else if ft.is_symlink() {
                "symlink"
            } else {
                "other"
            };
            let (sha256, hashed_bytes) = if !ft.is_file() {
                (None, 0)
            } else if snap.hashed + meta.len().min(MAX_HASHED_BYTES) > MAX_SNAPSHOT_HASHED_BYTES {
                snap.truncated = true;
                (None, 0)
            } else {
                match hash_file(&path, meta.len()) {
                    Some((h, n)) => {
                        snap.hashed += n;
                        (Some(h), n)
                    }
                    None => (None, 0),
                }
            };
            if ft.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    queue.push_back((path.clone(), depth + 1));
                } else {
                    snap.truncated = true;
                }
            }
            snap.entries.insert(
                rel.clone(),
                FileEntry {
                    path: rel,
                    kind: kind.to_string(),
                    size: meta.len(),
                    sha256,
                    hashed_bytes,
                },
            );
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
}
