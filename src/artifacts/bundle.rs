//! A macOS `.app` directory, walked without following symlinks: every
//! file, directory and symlink below the bundle is an occurrence of the
//! root; symlinks whose targets leave the bundle are refused
//! (`symlink-escape`) and never followed.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::model::*;
use super::paths;
use super::walk::{Container, Content, Entry, Walk};
use crate::ground::confined::{ConfinedDir, EntryKind as DiskKind, OpenError};

fn io(path: &str, e: impl std::fmt::Display) -> ArtifactError {
    ArtifactError::Io {
        path: if path.is_empty() {
            "the bundle".into()
        } else {
            path.to_owned()
        },
        reason: e.to_string(),
    }
}

/// Walks the bundle opened as `root`. Every directory is opened beneath it
/// without following any symlink, so nothing swapped in during the walk
/// leads outside the bundle.
pub(crate) fn walk(w: &mut Walk, c: &Container, root: &ConfinedDir) -> Result<(), ArtifactError> {
    // Directories still to read, as logical paths ("" = the bundle).
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        if w.stopped() {
            break;
        }
        let handle = match root
            .open_no_symlinks(Path::new(&dir))
            .and_then(|n| n.into_dir())
        {
            Ok(h) => h,
            Err(e) if dir.is_empty() => return Err(io(&dir, e)),
            Err(e) => {
                w.unexplored(
                    None,
                    dir,
                    UnexploredReason::Malformed,
                    format!("the directory cannot be read: {}", e.kind()),
                );
                continue;
            }
        };
        let (entries, more) = handle
            .entries(w.limits.max_entries + 1)
            .map_err(|e| io(&dir, e))?;
        let mut subdirs = Vec::new();
        for entry in entries {
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
            raw.extend_from_slice(entry.name.as_bytes());
            let path = match paths::logical_path(&raw, w.limits.max_path_bytes) {
                Ok(p) => p,
                Err((reason, detail)) => {
                    w.refuse(&raw, reason, detail);
                    continue;
                }
            };
            if let Some(sub) = one(w, c, &handle, Path::new(&entry.name), entry.kind, path)? {
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

/// Lists one entry of `dir` (named `name` there, `path` in the bundle);
/// returns it when it is a directory to descend into.
fn one(
    w: &mut Walk,
    c: &Container,
    dir: &ConfinedDir,
    name: &Path,
    kind: DiskKind,
    path: String,
) -> Result<Option<String>, ArtifactError> {
    match kind {
        DiskKind::Dir => {
            let e = Entry::new(
                path.clone(),
                EntryKind::Directory,
                Content::Absent(HashStatus::Unavailable),
            );
            return Ok(w.add(c, e).map(|_| path));
        }
        DiskKind::Symlink => {
            symlink(w, c, dir, name, path)?;
            return Ok(None);
        }
        DiskKind::Other => {
            special(w, path);
            return Ok(None);
        }
        DiskKind::File => {}
    }
    // Opened without following a symlink, and typed by `fstat`: an entry
    // swapped since the listing is refused as what it now is.
    let file = match dir.open_no_symlinks(name).and_then(|n| n.into_file()) {
        Ok(f) => f,
        Err(OpenError::NotRegular { .. }) => {
            special(w, path);
            return Ok(None);
        }
        Err(e) => return Err(io(&path, e)),
    };
    let size = file.len();
    let mut e = Entry::new(
        path.clone(),
        EntryKind::File,
        Content::Absent(HashStatus::NotHashedLimit),
    );
    e.declared_size = size;
    e.executable = file.is_executable();
    w.add_from_disk(c, e, &file, size)
        .map_err(|e| io(&path, e))?;
    Ok(None)
}

fn special(w: &mut Walk, path: String) {
    w.unexplored(
        None,
        path,
        UnexploredReason::UnsupportedFormat,
        "a special file (device, FIFO or socket); not read",
    );
}

fn symlink(
    w: &mut Walk,
    c: &Container,
    dir: &ConfinedDir,
    name: &Path,
    path: String,
) -> Result<(), ArtifactError> {
    let target = dir.read_link(name).map_err(|e| io(&path, e))?;
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
