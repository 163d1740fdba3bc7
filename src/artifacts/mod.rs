//! Artifact inventory: a bounded, content-addressed graph of what an
//! archive, bundle or universal binary holds, with findings (refused and
//! unexplored entries, library resolution, bundle facts). Nothing is
//! extracted to disk and nothing is executed. See ARCHITECTURE.md
//! ("src/artifacts/").
//!
//! This is a pure library: the MCP side (admission, paging, Evidence)
//! calls [`sniff`] and [`inspect`].

mod ar;
/// Bound on an Info.plist rea is willing to parse (opening a bundle and
/// inspecting an artifact read it alike).
pub const MAX_PLIST_BYTES: u64 = 1 << 20;

pub mod asar;
mod asar_walk;
mod bundle;
mod classify;
mod fat;
mod findings;
mod finish;
mod links;
pub mod model;
pub mod paths;
mod walk;
mod zip;

#[cfg(test)]
mod tests;

use std::path::Path;

use crate::ground::confined::{ConfinedDir, ConfinedFile, Node as DiskNode, Roots};

pub use model::*;

use walk::Walk;

/// Bytes read to recognise a format.
const SNIFF_BYTES: u64 = 4096;

fn io(path: &Path, e: impl std::fmt::Display) -> ArtifactError {
    ArtifactError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The container format of an opened file, or `None` for a plain file
/// (the caller tries it as a binary). Reads only a bounded prefix (an
/// asar's header, at most [`asar::MAX_HEADER_BYTES`], is parsed to
/// validate it), through the descriptor.
pub fn sniff(file: &ConfinedFile) -> Result<Option<ArtifactFormat>, ArtifactError> {
    let io = |e: std::io::Error| io(Path::new(file.shown()), e);
    let prefix = file.prefix(SNIFF_BYTES).map_err(io)?;
    if prefix.starts_with(b"PK\x03\x04") || prefix.starts_with(b"PK\x05\x06") {
        return Ok(Some(ArtifactFormat::Zip));
    }
    if prefix.starts_with(b"!<arch>\n") {
        return Ok(Some(ArtifactFormat::Ar));
    }
    if fat::slice_count(&prefix).is_some() {
        return Ok(Some(ArtifactFormat::UniversalMacho));
    }
    if let Ok(bounds) = asar::header_bounds(&prefix, file.len()) {
        let header = file.prefix(bounds.data_offset).map_err(io)?;
        if asar::read_header(&header, 0).is_ok() {
            return Ok(Some(ArtifactFormat::Asar));
        }
    }
    Ok(None)
}

/// Inspects the file or `.app` directory at `path`, opened once and
/// unconfined (tests, benches). The server opens through its read roots
/// and calls [`inspect_file`] or [`inspect_bundle`].
pub fn inspect(
    path: &Path,
    format: ArtifactFormat,
    limits: &Limits,
) -> Result<Inspection, ArtifactError> {
    let roots = Roots::default();
    let opened = roots.open_path(path).map_err(|e| io(path, e))?;
    match opened {
        DiskNode::Dir(dir) if format == ArtifactFormat::AppBundle => inspect_bundle(&dir, limits),
        DiskNode::Dir(_) => Err(ArtifactError::FormatMismatch {
            detail: format!(
                "{} is a directory, not a {} file",
                path.display(),
                format.as_str()
            ),
        }),
        DiskNode::File(file) => {
            let unpacked = if format == ArtifactFormat::Asar {
                asar::unpacked_dir(&roots, path)
            } else {
                None
            };
            inspect_file(&file, format, unpacked, limits)
        }
    }
}

/// Inspects an opened `.app` bundle directory.
pub fn inspect_bundle(root: &ConfinedDir, limits: &Limits) -> Result<Inspection, ArtifactError> {
    limits.validate()?;
    let mut w = Walk::new(*limits);
    let c = w.add_root(None, EntryKind::Directory);
    bundle::walk(&mut w, &c, root)?;
    Ok(finish::finish(w, ArtifactFormat::AppBundle))
}

/// Inspects an opened file of `format` (not a bundle). An asar's unpacked
/// files are read from `unpacked` (the `<archive>.unpacked` directory the
/// caller opened beside it, see [`asar::unpacked_dir`]).
pub fn inspect_file(
    file: &ConfinedFile,
    format: ArtifactFormat,
    unpacked: Option<ConfinedDir>,
    limits: &Limits,
) -> Result<Inspection, ArtifactError> {
    limits.validate()?;
    if format == ArtifactFormat::AppBundle {
        return Err(ArtifactError::FormatMismatch {
            detail: format!("{} is not a directory, so not an .app bundle", file.shown()),
        });
    }
    let mut w = Walk::new(*limits);
    if format == ArtifactFormat::Asar {
        w.asar_unpacked = unpacked;
    }
    if file.is_empty() {
        return run(w, &[], format);
    }
    let map = file.map().map_err(|e| io(Path::new(file.shown()), e))?;
    run(w, &map, format)
}

/// Inspects an artifact held in memory (nested archives, the fuzz target).
pub fn inspect_bytes(
    bytes: &[u8],
    format: ArtifactFormat,
    limits: &Limits,
) -> Result<Inspection, ArtifactError> {
    limits.validate()?;
    if format == ArtifactFormat::AppBundle {
        return Err(ArtifactError::FormatMismatch {
            detail: "an .app bundle is a directory; inspect it by path".into(),
        });
    }
    run(Walk::new(*limits), bytes, format)
}

fn run(mut w: Walk, bytes: &[u8], format: ArtifactFormat) -> Result<Inspection, ArtifactError> {
    let c = w.add_root(Some(bytes), EntryKind::File);
    w.explore(&c, format, bytes)?;
    Ok(finish::finish(w, format))
}
