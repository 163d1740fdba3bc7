//! The built-in native provider: pure Rust analysis with the `object` crate
//! over a read-only memory map.
//!
//! Opening a target only maps the file and parses headers, so it is cheap even
//! for very large binaries. Everything that walks symbol tables (inventories)
//! or the whole file (sha256) runs on first use and is cached.
//!
//! All input is treated as hostile: nothing here panics on file contents,
//! indexes without checking, or allocates more than a small multiple of the
//! file's own size.

pub mod disasm;
mod documents;
mod entry;
mod layout;
mod overview;
mod procedures;
mod strings;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;
use sha2::{Digest, Sha256};

use super::{Format, Inventory, Overview, ProviderError};

pub use layout::{
    Layout, LayoutExport, LayoutImport, LayoutSection, LayoutSegment, MAX_LAYOUT_ENTRIES,
};

pub use strings::{
    FoundString, MAX_STRING_CHARS, MAX_STRINGS, MAX_TEXT_BYTES, MIN_STRING_CHARS, StringEncoding,
    StringTable,
};

/// Documented cap of an inventory: at most this many distinct procedure
/// addresses are kept (the lowest ones); the inventory is then `truncated`.
pub const MAX_PROCEDURES: usize = 1_000_000;

/// One analysable image inside a target: the whole file for a thin binary,
/// or one slice of a Mach-O universal binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentInfo {
    /// `watcher.node` for a thin file, `fsevents.node (x86_64)` for a slice.
    pub name: String,
    /// `x86_64`, `x86`, `arm64`, `arm`, or a lowercase `object` name.
    pub architecture: String,
    /// Format of this document itself (a universal slice is `MachO`).
    pub format: Format,
}

/// A memory-mapped executable file and the documents it holds.
///
/// `Send + Sync`: the map is read-only and the lazily computed values live in
/// [`OnceLock`]s, so one image can be shared behind an `Arc`.
pub struct NativeImage {
    path: PathBuf,
    map: Mmap,
    format: Format,
    documents: Vec<DocumentInfo>,
    /// Byte range of each document inside `map` (parallel to `documents`).
    ranges: Vec<std::ops::Range<usize>>,
    sha256: OnceLock<String>,
    /// One cell per document; errors are cached too because they are a pure
    /// function of the (immutable) mapped bytes.
    inventories: Vec<OnceLock<Result<Arc<Inventory>, ProviderError>>>,
    /// One string table per document, cached like `inventories`.
    string_tables: Vec<OnceLock<Result<Arc<StringTable>, ProviderError>>>,
}

impl std::fmt::Debug for NativeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeImage")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("documents", &self.documents)
            .finish_non_exhaustive()
    }
}

impl NativeImage {
    /// Memory-maps the file, classifies it and lists its documents.
    ///
    /// Only headers are parsed (so that broken headers are reported here, as
    /// `Malformed`, and architectures are known); symbol tables are not
    /// touched and the file is not hashed, so even a 150 MB library opens in
    /// milliseconds.
    pub fn open(path: &Path) -> Result<NativeImage, ProviderError> {
        let map = map_file(path)?;
        let classified = documents::classify(&map, path)?;
        let inventories = classified
            .documents
            .iter()
            .map(|_| OnceLock::new())
            .collect();
        let string_tables = classified
            .documents
            .iter()
            .map(|_| OnceLock::new())
            .collect();
        Ok(NativeImage {
            path: path.to_path_buf(),
            map,
            format: classified.format,
            documents: classified.documents,
            ranges: classified.ranges,
            sha256: OnceLock::new(),
            inventories,
            string_tables,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File-level format: `MachOUniversal` for a fat file.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Lowercase hex sha256 of the whole file, computed on first call.
    pub fn sha256(&self) -> &str {
        self.sha256
            .get_or_init(|| hex(&Sha256::digest(&self.map[..])))
    }

    pub fn documents(&self) -> &[DocumentInfo] {
        &self.documents
    }

    /// Index of the document with exactly this name.
    pub fn document_index(&self, name: &str) -> Result<usize, ProviderError> {
        self.documents
            .iter()
            .position(|document| document.name == name)
            .ok_or_else(|| self.unknown_document(name.to_owned()))
    }

    /// Complete procedure inventory of one document, computed on first call.
    pub fn inventory(&self, document: usize) -> Result<Arc<Inventory>, ProviderError> {
        let cell = self
            .inventories
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        cell.get_or_init(|| {
            let file = self.parse(document)?;
            Ok(Arc::new(procedures::inventory(&file, [])))
        })
        .clone()
    }

    /// Printable strings of one document's data sections (see
    /// [`StringTable`] for the rules and caps), computed on first call.
    pub fn strings(&self, document: usize) -> Result<Arc<StringTable>, ProviderError> {
        let cell = self
            .string_tables
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        cell.get_or_init(|| {
            let file = self.parse(document)?;
            let size = self.ranges.get(document).map_or(0, |range| range.len());
            Ok(Arc::new(strings::string_table(&file, size)))
        })
        .clone()
    }

    /// Summary facts of one document with at most `segment_limit` segments
    /// listed (COFF objects list sections instead: they have no segments).
    pub fn overview(
        &self,
        document: usize,
        segment_limit: usize,
    ) -> Result<Overview, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let file = self.parse(document)?;
        Ok(overview::overview(&file, info, segment_limit))
    }

    /// Layout of one document: segments, sections, imports, exports, needed
    /// libraries, rpaths and loader facts, each list capped at
    /// [`MAX_LAYOUT_ENTRIES`]. Only unparsable headers are an error; tables
    /// that cannot be read are listed in [`Layout::limitations`].
    pub fn layout(&self, document: usize) -> Result<Layout, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let file = self.parse(document)?;
        Ok(layout::layout(&file, info))
    }

    /// Parses one document's headers again. Parsing is cheap (no symbol
    /// walk) and keeps `NativeImage` free of self-references to its map.
    fn parse(&self, document: usize) -> Result<object::File<'_>, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let data = self
            .ranges
            .get(document)
            .and_then(|range| self.map.get(range.clone()))
            .ok_or_else(|| self.unknown_index(document))?;
        object::File::parse(data).map_err(|error| malformed(&self.path, info.format, error))
    }

    fn unknown_document(&self, name: String) -> ProviderError {
        let available = self
            .documents
            .iter()
            .map(|document| format!("{:?}", document.name))
            .collect::<Vec<_>>()
            .join(", ");
        ProviderError::UnknownDocument { name, available }
    }

    fn unknown_index(&self, document: usize) -> ProviderError {
        self.unknown_document(format!("#{document}"))
    }
}

/// Opens and maps a regular, non-empty file read-only.
fn map_file(path: &Path) -> Result<Mmap, ProviderError> {
    let io = |reason: String| ProviderError::Io {
        path: path.display().to_string(),
        reason,
    };
    let file = File::open(path).map_err(|error| io(error.to_string()))?;
    let metadata = file.metadata().map_err(|error| io(error.to_string()))?;
    if !metadata.is_file() {
        return Err(io("not a regular file".to_owned()));
    }
    if metadata.len() == 0 {
        return Err(unsupported(path, "the file is empty"));
    }
    // SAFETY: the map is read-only and private to this process. If another
    // process truncates the file while it is mapped, reads past the new end
    // fault (SIGBUS); that is the accepted price of not copying 100+ MB
    // binaries into memory, and analysis targets are not expected to change
    // underneath the session.
    unsafe { Mmap::map(&file) }.map_err(|error| io(error.to_string()))
}

fn unsupported(path: &Path, reason: impl Into<String>) -> ProviderError {
    ProviderError::UnsupportedFormat {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn malformed(path: &Path, format: Format, reason: impl std::fmt::Display) -> ProviderError {
    ProviderError::Malformed {
        path: path.display().to_string(),
        format: format.as_str(),
        reason: reason.to_string(),
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a String cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}
