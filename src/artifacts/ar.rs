//! Unix `ar` archives (static libraries, .deb outer layers) through
//! `object::read::archive`: each member is an occurrence of the archive.

use object::read::archive::ArchiveFile;

use super::model::{ArtifactError, EntryKind, HashStatus, UnexploredReason};
use super::paths;
use super::walk::{Container, Content, Entry, Walk};

pub(crate) fn walk(w: &mut Walk, c: &Container, b: &[u8]) -> Result<(), ArtifactError> {
    let archive =
        ArchiveFile::parse(b).map_err(|e| ArtifactError::malformed("ar", e.to_string()))?;
    for member in archive.members() {
        if w.stopped() {
            break;
        }
        let member = match member {
            Ok(m) => m,
            Err(e) => {
                w.unexplored(
                    Some(c.id.clone()),
                    c.display.clone(),
                    UnexploredReason::Malformed,
                    format!("member table: {e}; later members are not listed"),
                );
                break;
            }
        };
        if !w.see(c) {
            break;
        }
        let raw = member.name();
        let path = match paths::logical_path(raw, w.limits.max_path_bytes) {
            Ok(p) => p,
            Err((reason, detail)) => {
                w.refuse(raw, reason, detail);
                continue;
            }
        };
        let mut e = Entry::new(
            path.clone(),
            EntryKind::File,
            Content::Absent(HashStatus::Unavailable),
        );
        e.declared_size = member.size();
        e.executable = member.mode().is_some_and(|m| m & 0o111 != 0);
        if member.is_thin() {
            e.limitations
                .push("a thin archive member: its bytes live in another file".into());
            w.add(c, e);
            continue;
        }
        let data = match member.data(b) {
            Ok(d) => d,
            Err(err) => {
                e.limitations.push(format!("data cannot be read: {err}"));
                if let Some(id) = w.add(c, e) {
                    w.unexplored(Some(id), path, UnexploredReason::Malformed, err.to_string());
                }
                continue;
            }
        };
        if !w.add_in_memory(c, e, data, false).1 {
            break;
        }
    }
    Ok(())
}
