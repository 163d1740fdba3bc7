//! Artifact inventory: a bounded, content-addressed graph of what an
//! archive, bundle or universal binary holds, with findings (refused and
//! unexplored entries, library resolution, bundle facts). Nothing is
//! extracted to disk and nothing is executed. See ARCHITECTURE.md
//! ("src/artifacts/").
//!
//! This is a pure library: the MCP side (admission, paging, Evidence)
//! calls [`sniff`] and [`inspect`].

mod ar;
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

use std::io::Read;
use std::path::Path;

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

/// The container format of `path`, or `None` for a plain file (the caller
/// tries it as a binary) and for directories that are not `*.app`.
/// Reads only a bounded prefix (an asar's header, at most
/// [`asar::MAX_HEADER_BYTES`], is parsed to validate it).
pub fn sniff(path: &Path) -> Result<Option<ArtifactFormat>, ArtifactError> {
    let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
    if meta.is_dir() {
        let is_app = path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("app"));
        return Ok(is_app.then_some(ArtifactFormat::AppBundle));
    }
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut prefix = Vec::new();
    file.take(SNIFF_BYTES)
        .read_to_end(&mut prefix)
        .map_err(|e| io(path, e))?;
    if prefix.starts_with(b"PK\x03\x04") || prefix.starts_with(b"PK\x05\x06") {
        return Ok(Some(ArtifactFormat::Zip));
    }
    if prefix.starts_with(b"!<arch>\n") {
        return Ok(Some(ArtifactFormat::Ar));
    }
    if fat::slice_count(&prefix).is_some() {
        return Ok(Some(ArtifactFormat::UniversalMacho));
    }
    if let Ok(bounds) = asar::header_bounds(&prefix, meta.len()) {
        let mut header = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(bounds.data_offset).read_to_end(&mut header))
            .map_err(|e| io(path, e))?;
        if asar::read_header(&header, 0).is_ok() {
            return Ok(Some(ArtifactFormat::Asar));
        }
    }
    Ok(None)
}

/// Inspects the admitted target at `root` (a file, or a `.app` directory).
pub fn inspect(
    root: &Path,
    format: ArtifactFormat,
    limits: &Limits,
) -> Result<Inspection, ArtifactError> {
    limits.validate()?;
    if format == ArtifactFormat::AppBundle {
        if !root.is_dir() {
            return Err(ArtifactError::FormatMismatch {
                detail: format!(
                    "{} is not a directory, so not an .app bundle",
                    root.display()
                ),
            });
        }
        let mut w = Walk::new(*limits);
        let c = w.add_root(None, EntryKind::Directory);
        bundle::walk(&mut w, &c, root)?;
        return Ok(finish::finish(w, format));
    }
    let file = std::fs::File::open(root).map_err(|e| io(root, e))?;
    let meta = file.metadata().map_err(|e| io(root, e))?;
    if !meta.is_file() {
        return Err(ArtifactError::FormatMismatch {
            detail: format!("{} is not a regular file", root.display()),
        });
    }
    let mut w = Walk::new(*limits);
    if format == ArtifactFormat::Asar {
        // Only a real directory beside the archive (itself admitted and
        // canonical), never one reached through a symlink.
        w.asar_unpacked = asar::unpacked_dir(root);
    }
    if meta.len() == 0 {
        return run(w, &[], format);
    }
    // SAFETY: read-only map of the admitted target, as the native provider
    // maps binaries; artifacts are not expected to change under inspection.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io(root, e))?;
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
