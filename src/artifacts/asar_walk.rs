//! Lists an asar's entries as occurrences: packed files are hashed (and
//! their integrity record checked), links become symlink occurrences,
//! unpacked files are looked for in `<archive>.asar.unpacked/`.

use super::asar::{AsarEntryKind, AsarError, check_integrity, read_header, unpacked_file_inside};
use super::model::*;
use super::paths;
use super::walk::{Container, Content, Entry, Walk};

fn error(e: AsarError) -> ArtifactError {
    ArtifactError::malformed("asar", e.to_string())
}

pub(crate) fn walk(w: &mut Walk, c: &Container, b: &[u8]) -> Result<(), ArtifactError> {
    let cap = usize::try_from(w.limits.max_entries).unwrap_or(usize::MAX);
    let header = read_header(b, cap.saturating_add(1)).map_err(error)?;
    let data_offset = header.bounds.data_offset;
    for item in header.entries {
        if w.stopped() {
            break;
        }
        if !w.see(c) {
            break;
        }
        let raw = item.raw_path.as_bytes();
        let path = match paths::logical_path(raw, w.limits.max_path_bytes) {
            Ok(p) => p,
            Err((reason, detail)) => {
                w.refuse(raw, reason, detail);
                continue;
            }
        };
        if let Some(problem) = item.problem {
            w.refuse(
                raw,
                RefusalReason::InvalidName,
                format!("file record: {problem}"),
            );
            continue;
        }
        match item.kind {
            AsarEntryKind::Directory => {
                w.add(
                    c,
                    Entry::new(
                        path,
                        EntryKind::Directory,
                        Content::Absent(HashStatus::Unavailable),
                    ),
                );
            }
            AsarEntryKind::Link { target } => {
                let inside = paths::join_inside("", &target).is_some();
                let mut e = Entry::new(
                    path,
                    EntryKind::Symlink,
                    Content::Absent(HashStatus::Unavailable),
                );
                if target.starts_with('/') {
                    e.limitations.push("absolute link target withheld".into());
                } else {
                    e.symlink_target = Some(target);
                }
                if w.add(c, e).is_some() && !inside {
                    w.refuse(
                        raw,
                        RefusalReason::SymlinkEscape,
                        "the link's target lies outside the archive; not followed",
                    );
                }
            }
            AsarEntryKind::File {
                size,
                offset,
                unpacked,
                executable,
                integrity,
            } => {
                let mut e = Entry::new(
                    path.clone(),
                    EntryKind::File,
                    Content::Absent(HashStatus::Unavailable),
                );
                e.declared_size = size;
                e.executable = executable;
                if unpacked {
                    if !unpacked_file(w, c, e) {
                        break;
                    }
                    continue;
                }
                let range = offset
                    .and_then(|o| data_offset.checked_add(o))
                    .and_then(|start| Some((start, start.checked_add(size)?)))
                    .filter(|&(_, end)| end <= b.len() as u64);
                let Some((start, end)) = range else {
                    w.refuse(
                        raw,
                        RefusalReason::OutOfBounds,
                        "the file's offset and size lie outside the archive",
                    );
                    continue;
                };
                let bytes = &b[start as usize..end as usize];
                let verdict = integrity
                    .as_ref()
                    .filter(|_| size <= w.limits.max_entry_bytes)
                    .map(|i| check_integrity(i, bytes));
                if let Some(Err(reason)) = &verdict {
                    e.limitations.push(format!("integrity: {reason}"));
                }
                let mismatched = matches!(verdict, Some(Err(_)));
                let (id, more) = w.add_in_memory(c, e, bytes, mismatched);
                if let Some(id) = id
                    && let Some(Err(reason)) = verdict
                {
                    w.findings.observe(Observation {
                        kind: ObservationKind::IntegrityMismatch,
                        occurrence_id: Some(id),
                        message: format!("{path}: {reason}"),
                    });
                }
                if !more {
                    break;
                }
            }
        }
    }
    if header.truncated {
        w.stop("max_entries", c);
    }
    Ok(())
}

/// An unpacked file: read from `<archive>.asar.unpacked/` when the asar
/// is the root file on disk (a regular file there, never a symlink),
/// reported missing when absent, unexplored for nested asars. Returns
/// false when the byte budget stopped the walk.
fn unpacked_file(w: &mut Walk, c: &Container, mut e: Entry<'_>) -> bool {
    let path = e.logical_path.clone();
    let opened = match (&w.asar_unpacked, c.depth) {
        (Some(dir), 0) => unpacked_file_inside(dir, &path),
        _ => {
            e.limitations
                .push("stored outside the archive in <archive>.asar.unpacked/; not read".into());
            if let Some(id) = w.add(c, e) {
                w.unexplored(
                    Some(id),
                    path,
                    UnexploredReason::UnsupportedFormat,
                    "an unpacked file of an asar that is not read from disk",
                );
            }
            return true;
        }
    };
    let Some(file) = opened else {
        e.limitations
            .push("marked unpacked, but not a regular file in <archive>.asar.unpacked/".into());
        if let Some(id) = w.add(c, e) {
            w.findings.observe(Observation {
                kind: ObservationKind::UnpackedMissing,
                occurrence_id: Some(id),
                message: format!(
                    "{path} is marked unpacked but is not in the .asar.unpacked directory"
                ),
            });
        }
        return true;
    };
    e.limitations
        .push("read from <archive>.asar.unpacked/".into());
    if file.len() != e.declared_size {
        e.limitations.push(format!(
            "the header declares {} bytes, the unpacked file has {}",
            e.declared_size,
            file.len()
        ));
    }
    match w.add_from_disk(c, e, &file, file.len()) {
        Ok((id, more)) => {
            if let Some(id) = id {
                w.findings.observe(Observation {
                    kind: ObservationKind::UnpackedEntry,
                    occurrence_id: Some(id),
                    message: format!("{path} was read from the .asar.unpacked directory"),
                });
            }
            more
        }
        Err(error) => {
            w.unexplored(
                None,
                path,
                UnexploredReason::Malformed,
                format!("the unpacked file cannot be read: {error}"),
            );
            true
        }
    }
}
