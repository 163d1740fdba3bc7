//! A macOS `.app` directory, walked without following symlinks: every
//! file, directory and symlink below the bundle is an occurrence of the
//! root; symlinks whose targets leave the bundle are refused
//! (`symlink-escape`) and never followed.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::model::*;
use super::paths;
use super::walk::{Container, Content, Entry, Walk};

fn io(path: &str, e: std::io::Error) -> ArtifactError {
    ArtifactError::Io {
        path: if path.is_empty() {
            "the bundle".into()
        } else {
            path.to_owned()
        },
        reason: e.to_string(),
    }
}

/// Names in one directory, sorted, at most `cap` (+1 to detect more).
fn names(dir: &Path, cap: u64) -> std::io::Result<(Vec<OsString>, bool)> {
    let mut out = Vec::new();
    let mut more = false;
    for item in std::fs::read_dir(dir)? {
        if out.len() as u64 > cap {
            more = true;
            break;
        }
        out.push(item?.file_name());
    }
    out.sort();
    Ok((out, more))
}

pub(crate) fn walk(w: &mut Walk, c: &Container, root: &Path) -> Result<(), ArtifactError> {
    // Directories still to read, as logical paths ("" = the bundle).
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        if w.stopped() {
            break;
        }
        let (names, more) =
            names(&root.join(&dir), w.limits.max_entries).map_err(|e| io(&dir, e))?;
        let mut subdirs = Vec::new();
        for name in names {
            if w.stopped() {
                break;
            }
            if !w.see(c) {
                break;
            }
            let mut raw = dir.as_bytes().to_vec();
            if !raw.is_empty() {
                raw.push(b'/');
            }
            raw.extend_from_slice(name.as_bytes());
            let path = match paths::logical_path(&raw, w.limits.max_path_bytes) {
                Ok(p) => p,
                Err((reason, detail)) => {
                    w.refuse(&raw, reason, detail);
                    continue;
                }
            };
            if let Some(sub) = one(w, c, root, path)? {
                subdirs.push(sub);
            }
        }
        if more {
            w.stop("max_entries", c);
        }
        // Depth-first in name order.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(())
}

/// Lists one entry; returns it when it is a directory to descend into.
fn one(
    w: &mut Walk,
    c: &Container,
    root: &Path,
    path: String,
) -> Result<Option<String>, ArtifactError> {
    let full = root.join(&path);
    let meta = std::fs::symlink_metadata(&full).map_err(|e| io(&path, e))?;
    let kind = meta.file_type();
    if kind.is_dir() {
        let e = Entry::new(
            path.clone(),
            EntryKind::Directory,
            Content::Absent(HashStatus::Unavailable),
        );
        return Ok(w.add(c, e).map(|_| path));
    }
    if kind.is_symlink() {
        symlink(w, c, &full, path)?;
        return Ok(None);
    }
    if !kind.is_file() {
        w.unexplored(
            None,
            path,
            UnexploredReason::UnsupportedFormat,
            "a special file (device, FIFO or socket); not read",
        );
        return Ok(None);
    }
    let size = meta.len();
    let mut e = Entry::new(
        path.clone(),
        EntryKind::File,
        Content::Absent(HashStatus::NotHashedLimit),
    );
    e.declared_size = size;
    e.executable = meta.permissions().mode() & 0o111 != 0;
    if size > w.limits.max_entry_bytes {
        w.limits_hit.insert("max_entry_bytes");
        e.limitations
            .push("over max_entry_bytes; not hashed".into());
        w.add(c, e);
        return Ok(None);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&full)
        .and_then(|f| f.take(w.limits.max_entry_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| io(&path, e))?;
    // A file that grew past the limit while read is listed unhashed.
    w.add_in_memory(c, e, &bytes, false);
    Ok(None)
}

fn symlink(w: &mut Walk, c: &Container, full: &Path, path: String) -> Result<(), ArtifactError> {
    let target = std::fs::read_link(full).map_err(|e| io(&path, e))?;
    let text = target.to_string_lossy().into_owned();
    let absolute = target.is_absolute();
    let inside = !absolute && paths::join_inside(paths::parent_dir(&path), &text).is_some();
    let mut e = Entry::new(
        path.clone(),
        EntryKind::Symlink,
        Content::Absent(HashStatus::Unavailable),
    );
    if absolute {
        e.limitations
            .push("absolute symlink target withheld".into());
    } else {
        e.symlink_target = Some(text);
    }
    if w.add(c, e).is_some() && !inside {
        w.refuse(
            path.as_bytes(),
            RefusalReason::SymlinkEscape,
            "the symlink's target lies outside the bundle; not followed",
        );
    }
    Ok(())
}
