//! The application's files as (logical path, bytes), listed without
//! executing anything and the same way for a directory and its `.asar`:
//! depth-first, names in byte order within each directory, so both inputs
//! give the same files, the same truncation and therefore the same graph.
//!
//! Only files the analysis uses are read (sources, pages, JSON, source
//! maps, native addons); the rest are listed by size. Symlinks and asar
//! links are never followed; escaping or invalid names and asar data
//! outside the archive are refused and counted.

use std::path::Path;

use crate::ground::confined::{ConfinedDir, ConfinedFile, EntryKind, Node, OpenError, Roots};

use super::model::{InputFormat, JsError, Limits, content_sha256, directory_root_sha256};
use crate::artifacts::asar::{
    self, AsarEntryKind, check_integrity, read_header, unpacked_file_inside,
};

/// The application, opened: a directory, or an `.asar` file with the
/// `<archive>.unpacked` directory beside it when there is one. Every read
/// of the analysis goes through these handles.
pub enum Input {
    Directory(ConfinedDir),
    Asar {
        file: ConfinedFile,
        unpacked: Option<ConfinedDir>,
    },
}

impl Input {
    /// Opens `path` once beneath `roots`: a directory, or a regular file
    /// named `*.asar`. Anything else is refused without blocking.
    pub fn open(roots: &Roots, path: &Path) -> Result<Input, JsError> {
        let shown = path.display().to_string();
        match roots.open_path(path)? {
            Node::Dir(dir) => Ok(Input::Directory(dir)),
            Node::File(file) => {
                let is_asar = path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("asar"));
                if !is_asar {
                    return Err(JsError::NotAnApplication { path: shown });
                }
                let unpacked = asar::unpacked_dir(roots, path);
                Ok(Input::Asar { file, unpacked })
            }
        }
    }

    pub fn format(&self) -> InputFormat {
        match self {
            Input::Directory(_) => InputFormat::Directory,
            Input::Asar { .. } => InputFormat::Asar,
        }
    }
}

use crate::artifacts::paths::logical_path;

/// Longest logical path accepted (bytes).
const MAX_PATH_BYTES: u64 = 4096;

/// One file of the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Relative POSIX path inside the application root.
    pub path: String,
    pub size: u64,
    /// The contents, when read.
    pub bytes: Option<Vec<u8>>,
    pub sha256: Option<String>,
    /// Stored in `<archive>.asar.unpacked/`.
    pub unpacked: bool,
    /// Why a file the analysis wanted was not read.
    pub not_read: Option<String>,
    /// The asar integrity record disagrees with the bytes (the reason);
    /// checked for every packed file, read or not.
    pub integrity_mismatch: Option<String>,
}

/// An entry refused (never read): escaping names, links, bad records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub path: String,
    pub reason: String,
}

/// Everything the listing found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub format: InputFormat,
    pub root_sha256: String,
    pub files: Vec<SourceFile>,
    pub refused: Vec<Refused>,
    /// The limit that stopped the listing (`max_files`, `max_depth`, `max_total_bytes`).
    pub stopped_by: Option<&'static str>,
    pub bytes_read: u64,
    pub limitations: Vec<String>,
}

/// True for files whose contents the analysis reads.
pub fn wanted(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    super::facts::Language::of_path(path).is_some()
        || [".html", ".htm", ".json", ".map", ".node"]
            .iter()
            .any(|ext| lower.ends_with(ext))
}

fn is_native(path: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".node")
}

/// Shared bookkeeping of both listings.
struct Lister {
    limits: Limits,
    out: Listing,
    /// Files plus refused entries so far.
    count: u64,
}

impl Lister {
    fn new(format: InputFormat, limits: Limits) -> Lister {
        Lister {
            limits,
            out: Listing {
                format,
                root_sha256: String::new(),
                files: Vec::new(),
                refused: Vec::new(),
                stopped_by: None,
                bytes_read: 0,
                limitations: Vec::new(),
            },
            count: 0,
        }
    }

    fn stop(&mut self, limit: &'static str, what: String) {
        if self.out.stopped_by.is_none() {
            self.out.stopped_by = Some(limit);
        }
        if self.out.limitations.len() < 16 {
            self.out.limitations.push(what);
        }
    }

    fn stopped(&self) -> bool {
        matches!(self.out.stopped_by, Some("max_files" | "max_total_bytes"))
    }

    /// Counts one entry; false (and stopped) when `max_files` is reached.
    fn admit(&mut self) -> bool {
        if self.count >= self.limits.max_files {
            let max = self.limits.max_files;
            self.stop(
                "max_files",
                format!("max_files ({max}) reached; later entries were not listed"),
            );
            return false;
        }
        self.count += 1;
        true
    }

    fn refuse(&mut self, path: String, reason: impl Into<String>) {
        if self.admit() {
            self.out.refused.push(Refused {
                path,
                reason: reason.into(),
            });
        }
    }

    /// True when `depth` (directories above a file) is within `max_depth`.
    fn depth_ok(&mut self, path: &str, depth: u64) -> bool {
        if depth <= self.limits.max_depth {
            return true;
        }
        let max = self.limits.max_depth;
        self.stop(
            "max_depth",
            format!("{path} lies deeper than max_depth ({max}); not listed"),
        );
        false
    }

    /// Whether a file of `size` bytes should be read, and if not why.
    fn plan(&mut self, path: &str, size: u64) -> Result<bool, String> {
        if !wanted(path) {
            return Ok(false);
        }
        if size > self.limits.max_file_bytes && !is_native(path) {
            return Err(format!(
                "{size} bytes exceeds max_file_bytes ({})",
                self.limits.max_file_bytes
            ));
        }
        if self.out.bytes_read.saturating_add(size) > self.limits.max_total_bytes {
            let max = self.limits.max_total_bytes;
            self.stop(
                "max_total_bytes",
                format!("max_total_bytes ({max}) reached at {path}; later files were not read"),
            );
            return Err("the max_total_bytes budget was spent".into());
        }
        Ok(true)
    }

    fn push(
        &mut self,
        path: String,
        size: u64,
        unpacked: bool,
        bytes: Result<Option<Vec<u8>>, String>,
    ) {
        let (bytes, not_read) = match bytes {
            Ok(b) => (b, None),
            Err(reason) => (None, Some(reason)),
        };
        if let Some(b) = &bytes {
            self.out.bytes_read += b.len() as u64;
        }
        self.out.files.push(SourceFile {
            path,
            size,
            sha256: bytes.as_deref().map(content_sha256),
            bytes,
            unpacked,
            not_read,
            integrity_mismatch: None,
        });
    }
}

/// Lists the opened application.
pub fn list(input: &Input, limits: &Limits) -> Result<Listing, JsError> {
    match input {
        Input::Directory(dir) => list_directory(dir, limits),
        Input::Asar { file, unpacked } => list_asar(file, unpacked.as_ref(), limits),
    }
}

fn io(path: &str, e: impl std::fmt::Display) -> JsError {
    JsError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

fn list_directory(root: &ConfinedDir, limits: &Limits) -> Result<Listing, JsError> {
    let mut l = Lister::new(InputFormat::Directory, *limits);
    // Entries examined (directories included), so a tree of empty
    // directories cannot keep the walk busy.
    let mut budget = limits.max_files.saturating_mul(4).saturating_add(1000);
    walk_dir(&mut l, root, "", 0, &mut budget)?;
    let listing: Vec<(&str, &str)> = l
        .out
        .files
        .iter()
        .filter_map(|f| Some((f.path.as_str(), f.sha256.as_deref()?)))
        .collect();
    l.out.root_sha256 = directory_root_sha256(listing.into_iter());
    Ok(l.out)
}

fn walk_dir(
    l: &mut Lister,
    dir: &ConfinedDir,
    prefix: &str,
    depth: u64,
    budget: &mut u64,
) -> Result<(), JsError> {
    let (entries, more) = match dir.entries(*budget) {
        Ok(r) => r,
        Err(e) if depth == 0 => return Err(io(dir.shown(), e)),
        Err(e) => {
            l.refuse(
                prefix.to_owned(),
                format!("the directory cannot be read: {e}"),
            );
            return Ok(());
        }
    };
    *budget -= entries.len() as u64;
    if more {
        l.stop(
            "max_files",
            "the walk examined its entry budget; later entries were not listed".into(),
        );
    }
    for entry in entries {
        if l.stopped() {
            return Ok(());
        }
        let name = entry.name;
        let shown = if prefix.is_empty() {
            name.to_string_lossy().into_owned()
        } else {
            format!("{prefix}/{}", name.to_string_lossy())
        };
        let Some(utf8) = name.to_str() else {
            l.refuse(shown, "the name is not valid UTF-8");
            continue;
        };
        let logical = match logical_path(utf8.as_bytes(), MAX_PATH_BYTES) {
            // One component: it must stay one component.
            Ok(p) if p == utf8 => {
                if prefix.is_empty() {
                    p
                } else {
                    format!("{prefix}/{p}")
                }
            }
            Ok(_) => {
                l.refuse(shown, "not a plain file name");
                continue;
            }
            Err((_, detail)) => {
                l.refuse(shown, detail);
                continue;
            }
        };
        // Opened without following a symlink and typed by `fstat`, so an
        // entry swapped since the listing is taken for what it now is.
        let opened = || dir.open_no_symlinks(Path::new(&name));
        match entry.kind {
            EntryKind::Symlink => l.refuse(logical, "a symbolic link; not followed"),
            EntryKind::Dir => {
                if l.depth_ok(&logical, depth + 1) {
                    match opened() {
                        Ok(Node::Dir(sub)) => walk_dir(l, &sub, &logical, depth + 1, budget)?,
                        _ => l.refuse(
                            logical,
                            "the directory cannot be opened without following a link",
                        ),
                    }
                }
            }
            EntryKind::File => {
                if !l.admit() {
                    return Ok(());
                }
                let file = match opened() {
                    Ok(Node::File(f)) => f,
                    Ok(Node::Dir(_)) | Err(OpenError::NotRegular { .. }) => {
                        l.refuse(logical, "not a regular file or directory");
                        continue;
                    }
                    Err(e) => {
                        l.push(
                            logical,
                            0,
                            false,
                            Err(format!("cannot be opened ({})", e.kind())),
                        );
                        continue;
                    }
                };
                let size = file.len();
                let bytes = match l.plan(&logical, size) {
                    Ok(true) => read_bounded(&file, size).map(Some),
                    Ok(false) => Ok(None),
                    Err(reason) => Err(reason),
                };
                l.push(logical, size, false, bytes);
            }
            EntryKind::Other => l.refuse(logical, "not a regular file or directory"),
        }
    }
    Ok(())
}

/// Reads at most `size` bytes (the size seen when opening): a file that
/// grows meanwhile cannot push the total over the budget.
fn read_bounded(file: &ConfinedFile, size: u64) -> Result<Vec<u8>, String> {
    file.prefix(size).map_err(|e| e.to_string())
}

fn list_asar(
    file: &ConfinedFile,
    unpacked_dir: Option<&ConfinedDir>,
    limits: &Limits,
) -> Result<Listing, JsError> {
    let len = file.len();
    if len < 16 {
        return Err(JsError::MalformedAsar {
            detail: format!("{}", asar::AsarError::TooShort),
        });
    }
    let map = file.map().map_err(|e| io(file.shown(), e))?;
    let bytes: &[u8] = &map;
    let cap = usize::try_from(limits.max_files.saturating_mul(4).saturating_add(1000))
        .unwrap_or(usize::MAX);
    let header = read_header(bytes, cap).map_err(|e| JsError::MalformedAsar {
        detail: e.to_string(),
    })?;
    let mut l = Lister::new(InputFormat::Asar, *limits);
    l.out.root_sha256 = content_sha256(bytes);
    let data_offset = header.bounds.data_offset;
    for item in header.entries {
        if l.stopped() {
            break;
        }
        let raw = item.raw_path.as_bytes();
        let path = match logical_path(raw, MAX_PATH_BYTES) {
            Ok(p) => p,
            Err((_, detail)) => {
                let shown = crate::artifacts::paths::escape_raw(raw);
                l.refuse(shown, detail);
                continue;
            }
        };
        let depth = path.matches('/').count() as u64;
        let is_dir = matches!(item.kind, AsarEntryKind::Directory);
        if !l.depth_ok(&path, depth + u64::from(is_dir)) {
            continue;
        }
        if let Some(problem) = item.problem {
            l.refuse(path, format!("file record: {problem}"));
            continue;
        }
        match item.kind {
            AsarEntryKind::Directory => {}
            AsarEntryKind::Link { .. } => l.refuse(path, "an asar link; not followed"),
            AsarEntryKind::File {
                size,
                offset,
                unpacked,
                integrity,
                ..
            } => {
                if unpacked {
                    if !l.admit() {
                        break;
                    }
                    let bytes = read_unpacked(&mut l, unpacked_dir, &path, size);
                    l.push(path, size, true, bytes);
                    continue;
                }
                let range = offset
                    .and_then(|o| data_offset.checked_add(o))
                    .and_then(|start| Some((start, start.checked_add(size)?)))
                    .filter(|&(_, end)| end <= len);
                let Some((start, end)) = range else {
                    l.refuse(path, "the file's offset and size lie outside the archive");
                    continue;
                };
                if !l.admit() {
                    break;
                }
                let data = bytes.get(start as usize..end as usize).unwrap_or_default();
                let read = match l.plan(&path, size) {
                    Ok(true) => Ok(Some(data.to_vec())),
                    Ok(false) => Ok(None),
                    Err(reason) => Err(reason),
                };
                // Every packed file is checked, read or not: hashing the
                // mapped bytes copies nothing.
                let mismatch = integrity.and_then(|i| check_integrity(&i, data).err());
                l.push(path, size, false, read);
                if let Some(last) = l.out.files.last_mut() {
                    last.integrity_mismatch = mismatch;
                }
            }
        }
    }
    if header.truncated && l.out.stopped_by.is_none() {
        l.stop(
            "max_files",
            "the asar header lists more entries than the limits allow; later entries were not listed"
                .into(),
        );
    }
    Ok(l.out)
}

/// An unpacked file's bytes from `<archive>.asar.unpacked/`, confined to it.
fn read_unpacked(
    l: &mut Lister,
    dir: Option<&ConfinedDir>,
    path: &str,
    size: u64,
) -> Result<Option<Vec<u8>>, String> {
    let Some(dir) = dir else {
        return Err(
            "marked unpacked, but there is no .asar.unpacked directory beside the archive".into(),
        );
    };
    let Some(file) = unpacked_file_inside(dir, path) else {
        return Err(
            "marked unpacked, but not a regular file inside the .asar.unpacked directory".into(),
        );
    };
    let real = file.len();
    if real != size {
        return Err(format!(
            "the header declares {size} bytes, the unpacked file has {real}; not read"
        ));
    }
    match l.plan(path, size)? {
        true => read_bounded(&file, size).map(Some),
        false => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wanted_files_are_sources_pages_json_maps_and_addons() {
        for p in [
            "a.js",
            "b/c.mjs",
            "x.html",
            "package.json",
            "m.js.map",
            "a.node",
            "t.ts",
        ] {
            assert!(wanted(p), "{p}");
        }
        for p in ["a.png", "README.md", "x.d.ts"] {
            assert!(!wanted(p), "{p}");
        }
    }
}
