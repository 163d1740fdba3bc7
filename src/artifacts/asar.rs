//! Electron asar archives: the header parser, reusable on its own.
//!
//! Layout: a Chromium pickle `u32 4, u32 header_size`, then the header
//! pickle `u32 payload_size, u32 json_len, json` padded to `header_size`;
//! file data starts at `8 + header_size`. The JSON is a tree of
//! `{"files": {name: node}}` where a node is a directory (`files`), a link
//! (`link`: a path from the archive root) or a file (`size`, `offset` as a
//! decimal string relative to the data start, `unpacked`, `executable`,
//! `integrity{algorithm, hash, blockSize, blocks}`).
//!
//! Everything is bounded: header bytes, JSON nesting (checked by a scan
//! before parsing) and entry count. Offsets are returned as read; the
//! caller checks them against the archive's length.

use crate::ground::canonical::nests_deeper_than;
use crate::ground::digest::sha256_hex;
use serde_json::Value;
use std::path::Path;

use crate::ground::confined::{ConfinedDir, ConfinedFile, Roots};

/// Largest header accepted.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// Deepest JSON nesting accepted (directories nest two levels per step).
pub const MAX_NESTING: usize = 96;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AsarError {
    #[error("too short for an asar header")]
    TooShort,
    #[error("not an asar pickle header: {0}")]
    BadPickle(String),
    #[error("the header is {0} bytes; the limit is {MAX_HEADER_BYTES}")]
    HeaderTooLarge(u64),
    #[error("the header JSON nests deeper than {MAX_NESTING} levels")]
    TooDeep,
    #[error("the header JSON does not parse: {0}")]
    Json(String),
    #[error("the header lists more than {0} entries")]
    TooManyEntries(usize),
    #[error("the header JSON is not an asar file table: {0}")]
    Shape(String),
}

/// Byte ranges of the header: (json start, json length, data offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderBounds {
    pub json_start: u64,
    pub json_len: u64,
    pub data_offset: u64,
}

/// Checks the pickle prefix against the archive length (`total_len`);
/// needs only the first 16 bytes, plus the first JSON byte when present.
pub fn header_bounds(prefix: &[u8], total_len: u64) -> Result<HeaderBounds, AsarError> {
    let word = |at: usize| {
        prefix
            .get(at..at + 4)
            .map(|s| u64::from(u32::from_le_bytes([s[0], s[1], s[2], s[3]])))
    };
    let (Some(first), Some(header_size), Some(payload), Some(json_len)) =
        (word(0), word(4), word(8), word(12))
    else {
        return Err(AsarError::TooShort);
    };
    if first != 4 {
        return Err(AsarError::BadPickle(format!(
            "first word is {first}, not 4"
        )));
    }
    if header_size > MAX_HEADER_BYTES {
        return Err(AsarError::HeaderTooLarge(header_size));
    }
    if payload + 4 != header_size && payload + 4 > header_size {
        return Err(AsarError::BadPickle(
            "payload size exceeds the header".into(),
        ));
    }
    if json_len + 8 > header_size || json_len < 2 {
        return Err(AsarError::BadPickle(format!(
            "JSON length {json_len} does not fit the header of {header_size} bytes"
        )));
    }
    let data_offset = 8 + header_size;
    if data_offset > total_len {
        return Err(AsarError::BadPickle("the header runs past the file".into()));
    }
    if let Some(&b) = prefix.get(16)
        && b != b'{'
    {
        return Err(AsarError::BadPickle(
            "the header is not a JSON object".into(),
        ));
    }
    Ok(HeaderBounds {
        json_start: 16,
        json_len,
        data_offset,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integrity {
    pub algorithm: String,
    pub hash: String,
    pub block_size: u64,
    pub blocks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AsarEntryKind {
    Directory,
    File {
        size: u64,
        /// `None` for unpacked files (they have no offset).
        offset: Option<u64>,
        unpacked: bool,
        executable: bool,
        integrity: Option<Integrity>,
    },
    Link {
        target: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsarEntry {
    /// Names from the root joined with `/` (not yet checked as a logical path).
    pub raw_path: String,
    pub kind: AsarEntryKind,
    /// Why a malformed node could not be read, if it could not.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsarHeader {
    pub bounds: HeaderBounds,
    /// Depth-first, names in byte order within each directory.
    pub entries: Vec<AsarEntry>,
    /// True when `max_entries` stopped the listing.
    pub truncated: bool,
}

/// Parses the header of an asar held in memory.
pub fn read_header(bytes: &[u8], max_entries: usize) -> Result<AsarHeader, AsarError> {
    let bounds = header_bounds(bytes, bytes.len() as u64)?;
    let start = bounds.json_start as usize;
    let json = bytes
        .get(start..start + bounds.json_len as usize)
        .ok_or(AsarError::TooShort)?;
    check_nesting(json)?;
    let value: Value = serde_json::from_slice(json).map_err(|e| AsarError::Json(e.to_string()))?;
    let files = value
        .get("files")
        .and_then(Value::as_object)
        .ok_or_else(|| AsarError::Shape("no top-level \"files\" object".into()))?;
    let mut out = AsarHeader {
        bounds,
        entries: Vec::new(),
        truncated: false,
    };
    walk(files, "", &mut out, max_entries);
    Ok(out)
}

/// Maximum bracket depth outside strings, without parsing.
fn check_nesting(json: &[u8]) -> Result<(), AsarError> {
    if nests_deeper_than(json, MAX_NESTING) {
        return Err(AsarError::TooDeep);
    }
    Ok(())
}

fn walk(files: &serde_json::Map<String, Value>, prefix: &str, out: &mut AsarHeader, max: usize) {
    for (name, node) in files {
        if out.entries.len() >= max {
            out.truncated = true;
            return;
        }
        let raw_path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let (kind, problem) = node_kind(node);
        let children = node.get("files").and_then(Value::as_object);
        out.entries.push(AsarEntry {
            raw_path: raw_path.clone(),
            kind,
            problem,
        });
        if let Some(children) = children {
            walk(children, &raw_path, out, max);
        }
    }
}

fn node_kind(node: &Value) -> (AsarEntryKind, Option<String>) {
    if node.get("files").is_some_and(Value::is_object) {
        return (AsarEntryKind::Directory, None);
    }
    if let Some(target) = node.get("link").and_then(Value::as_str) {
        return (
            AsarEntryKind::Link {
                target: target.to_owned(),
            },
            None,
        );
    }
    let unpacked = node
        .get("unpacked")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let size = node.get("size").and_then(Value::as_u64);
    let offset = match node.get("offset") {
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    };
    let problem = match (size, offset, unpacked) {
        (None, _, _) => Some("no valid size".to_owned()),
        (_, None, false) => Some("no valid offset".to_owned()),
        _ => None,
    };
    let integrity = node.get("integrity").and_then(|i| {
        Some(Integrity {
            algorithm: i.get("algorithm")?.as_str()?.to_owned(),
            hash: i.get("hash")?.as_str()?.to_owned(),
            block_size: i.get("blockSize").and_then(Value::as_u64).unwrap_or(0),
            blocks: i
                .get("blocks")
                .and_then(Value::as_array)
                .map(|b| {
                    b.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
    });
    (
        AsarEntryKind::File {
            size: size.unwrap_or(0),
            offset: if unpacked { None } else { offset },
            unpacked,
            executable: node
                .get("executable")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            integrity,
        },
        problem,
    )
}

/// Compares the header's SHA256 records with the bytes.
pub fn check_integrity(i: &Integrity, bytes: &[u8]) -> Result<(), String> {
    if !i.algorithm.eq_ignore_ascii_case("sha256") {
        return Err(format!(
            "algorithm {:?} is not checked",
            i.algorithm.chars().take(32).collect::<String>()
        ));
    }
    if !sha256_hex(bytes).eq_ignore_ascii_case(&i.hash) {
        return Err("the file's sha256 differs from its integrity hash".into());
    }
    if i.block_size > 0 && !i.blocks.is_empty() {
        let size = usize::try_from(i.block_size).unwrap_or(usize::MAX);
        let chunks = bytes.chunks(size);
        if chunks.len() != i.blocks.len() {
            return Err(format!(
                "{} integrity blocks for {} chunks",
                i.blocks.len(),
                chunks.len()
            ));
        }
        for (n, (chunk, want)) in chunks.zip(&i.blocks).enumerate() {
            if !sha256_hex(chunk).eq_ignore_ascii_case(want) {
                return Err(format!("block {n} differs from its integrity hash"));
            }
        }
    }
    Ok(())
}

/// The `<archive>.unpacked` directory beside the asar file at `archive`,
/// opened beneath the read roots, when it is a real directory (its own
/// name never a symlink).
pub fn unpacked_dir(roots: &Roots, archive: &Path) -> Option<ConfinedDir> {
    let (parent, name) = roots.open_parent(archive).ok()?;
    let mut unpacked = name;
    unpacked.push(".unpacked");
    parent
        .open_no_symlinks(Path::new(&unpacked))
        .ok()?
        .into_dir()
        .ok()
}

/// The unpacked file at logical path `path` inside `dir`, opened when it
/// is a regular file reached without any symlink: a symlinked component
/// could otherwise probe (or read) anything.
pub fn unpacked_file_inside(dir: &ConfinedDir, path: &str) -> Option<ConfinedFile> {
    dir.open_no_symlinks(Path::new(path)).ok()?.into_file().ok()
}

/// Builds asar bytes from a JSON header and the data section (for tests
/// and fuzz seeds).
pub fn build(header_json: &str, data: &[u8]) -> Vec<u8> {
    let json = header_json.as_bytes();
    let padded = (json.len() + 3) & !3;
    let header_size = 8 + padded as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&header_size.to_le_bytes());
    out.extend_from_slice(&(header_size - 4).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(json);
    out.resize(8 + header_size as usize, 0);
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_tree_of_files_links_and_unpacked_entries() {
        let json = r#"{"files":{"a":{"files":{"b.js":{"size":3,"offset":"0"}}},"l":{"link":"a/b.js"},"u.node":{"size":9,"unpacked":true}}}"#;
        let bytes = build(json, b"abc");
        let h = read_header(&bytes, 100).unwrap();
        let paths: Vec<_> = h.entries.iter().map(|e| e.raw_path.as_str()).collect();
        assert_eq!(paths, ["a", "a/b.js", "l", "u.node"]);
        assert_eq!(h.bounds.data_offset as usize, bytes.len() - 3);
        assert!(matches!(h.entries[2].kind, AsarEntryKind::Link { .. }));
        assert!(matches!(
            h.entries[3].kind,
            AsarEntryKind::File {
                unpacked: true,
                offset: None,
                ..
            }
        ));
    }

    #[test]
    fn hostile_headers_fail_cleanly() {
        let mut big = build(r#"{"files":{}}"#, b"");
        big[4..8].copy_from_slice(&((MAX_HEADER_BYTES + 8) as u32).to_le_bytes());
        assert!(matches!(
            read_header(&big, 10),
            Err(AsarError::HeaderTooLarge(_))
        ));
        let deep = format!(
            r#"{{"files":{}{}}}"#,
            "{\"a\":{\"files\":".repeat(60),
            "{}".to_owned() + &"}}".repeat(60)
        );
        assert_eq!(read_header(&build(&deep, b""), 10), Err(AsarError::TooDeep));
        assert_eq!(read_header(b"\x04\0\0", 10), Err(AsarError::TooShort));
        let many = build(
            r#"{"files":{"a":{"size":0,"offset":"0"},"b":{"size":0,"offset":"0"}}}"#,
            b"",
        );
        assert!(read_header(&many, 1).unwrap().truncated);
    }
}
