//! The zip family (zip, jar, apk, ipa, whl, …), read from memory with a
//! small central-directory reader of our own: every offset and size is
//! checked against the bytes we hold, entries are inflated in bounded
//! chunks while counting the real output (declared sizes are never
//! trusted), and the local-header spans are checked for overlap (Fifield
//! bombs) before anything is decompressed.

use std::io::Read;

use flate2::Crc;
use flate2::read::DeflateDecoder;

use super::model::{
    ArtifactError, EntryKind, HashStatus, Observation, ObservationKind, RefusalReason,
    UnexploredReason,
};
use super::paths;
use super::walk::{Container, Content, Entry, Walk};

const EOCD_SIG: u64 = 0x0605_4b50;
const EOCD64_LOCATOR_SIG: u64 = 0x0706_4b50;
const EOCD64_SIG: u64 = 0x0606_4b50;
const CENTRAL_SIG: u64 = 0x0201_4b50;
const LOCAL_SIG: u64 = 0x0403_4b50;
const EOCD_LEN: usize = 22;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: usize = 30;
/// Inflate output is checked against the limits after each chunk.
const CHUNK: usize = 64 * 1024;

fn u16_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u64::from(u16::from_le_bytes([s[0], s[1]])))
}
fn u32_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u64::from(u32::from_le_bytes([s[0], s[1], s[2], s[3]])))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

fn malformed(detail: impl Into<String>) -> ArtifactError {
    ArtifactError::malformed("zip", detail)
}

/// Where the central directory lies and how many entries it claims.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Directory {
    pub offset: usize,
    pub size: usize,
    pub entries: u64,
}

/// Finds the end-of-central-directory record (and its zip64 form).
pub(crate) fn find_directory(b: &[u8]) -> Result<Directory, ArtifactError> {
    if b.len() < EOCD_LEN {
        return Err(malformed("shorter than an end-of-central-directory record"));
    }
    let last = b.len() - EOCD_LEN;
    let first = last.saturating_sub(u16::MAX as usize);
    let eocd = (first..=last)
        .rev()
        .find(|&at| u32_at(b, at) == Some(EOCD_SIG))
        .ok_or_else(|| malformed("no end-of-central-directory record"))?;
    let field = |at: usize| u16_at(b, eocd + at).unwrap_or(0);
    let mut entries = field(10);
    let mut size = u32_at(b, eocd + 12).unwrap_or(0);
    let mut offset = u32_at(b, eocd + 16).unwrap_or(0);
    if (entries == 0xffff || size == 0xffff_ffff || offset == 0xffff_ffff)
        && eocd >= 20
        && u32_at(b, eocd - 20) == Some(EOCD64_LOCATOR_SIG)
    {
        let at = u64_at(b, eocd - 20 + 8)
            .and_then(|v| usize::try_from(v).ok())
            .filter(|&at| u32_at(b, at) == Some(EOCD64_SIG))
            .ok_or_else(|| malformed("the zip64 end record is missing"))?;
        entries = u64_at(b, at + 32).ok_or_else(|| malformed("truncated zip64 end record"))?;
        size = u64_at(b, at + 40).ok_or_else(|| malformed("truncated zip64 end record"))?;
        offset = u64_at(b, at + 48).ok_or_else(|| malformed("truncated zip64 end record"))?;
    }
    let offset = usize::try_from(offset).map_err(|_| malformed("directory offset too large"))?;
    let size = usize::try_from(size).map_err(|_| malformed("directory size too large"))?;
    if offset.checked_add(size).is_none_or(|end| end > b.len()) {
        return Err(malformed(
            "the central directory lies outside the file (truncated?)",
        ));
    }
    Ok(Directory {
        offset,
        size,
        entries,
    })
}

/// One central-directory record, sizes resolved through zip64 extras.
struct Record<'a> {
    raw_name: &'a [u8],
    flags: u64,
    method: u64,
    crc: u32,
    compressed: u64,
    uncompressed: u64,
    local_offset: u64,
    unix_mode: Option<u32>,
}

fn parse_records<'a>(b: &'a [u8], dir: Directory, cap: u64) -> (Vec<Record<'a>>, Option<String>) {
    let cd = &b[dir.offset..dir.offset + dir.size];
    let mut at = 0usize;
    let mut out = Vec::new();
    while at < cd.len() {
        if out.len() as u64 >= cap {
            break;
        }
        if u32_at(cd, at) != Some(CENTRAL_SIG) {
            return (
                out,
                Some(format!("no central-directory record at offset {at}")),
            );
        }
        let (Some(name_len), Some(extra_len), Some(comment_len)) = (
            u16_at(cd, at + 28),
            u16_at(cd, at + 30),
            u16_at(cd, at + 32),
        ) else {
            return (out, Some("truncated central-directory record".into()));
        };
        let name_at = at + CENTRAL_LEN;
        let extra_at = name_at + name_len as usize;
        let next = extra_at + extra_len as usize + comment_len as usize;
        let (Some(raw_name), Some(extra)) = (
            cd.get(name_at..extra_at),
            cd.get(extra_at..extra_at + extra_len as usize),
        ) else {
            return (out, Some("truncated central-directory record".into()));
        };
        let g16 = |o: usize| u16_at(cd, at + o).unwrap_or(0);
        let g32 = |o: usize| u32_at(cd, at + o).unwrap_or(0);
        let made_by = g16(4) >> 8;
        let mut rec = Record {
            raw_name,
            flags: g16(8),
            method: g16(10),
            crc: g32(16) as u32,
            compressed: g32(20),
            uncompressed: g32(24),
            local_offset: g32(42),
            unix_mode: (made_by == 3).then(|| (g32(38) >> 16) as u32),
        };
        apply_zip64(&mut rec, extra);
        out.push(rec);
        at = next;
    }
    (out, None)
}

/// The zip64 extra field (0x0001) holds the values whose 32-bit field is all ones.
fn apply_zip64(rec: &mut Record<'_>, extra: &[u8]) {
    let mut at = 0usize;
    while let (Some(id), Some(len)) = (u16_at(extra, at), u16_at(extra, at + 2)) {
        let body = extra.get(at + 4..at + 4 + len as usize).unwrap_or(&[]);
        if id == 1 {
            let mut pos = 0usize;
            for field in [
                &mut rec.uncompressed,
                &mut rec.compressed,
                &mut rec.local_offset,
            ] {
                if *field == 0xffff_ffff {
                    if let Some(v) = u64_at(body, pos) {
                        *field = v;
                    }
                    pos += 8;
                }
            }
        }
        at += 4 + len as usize;
    }
}

/// The span [local header, end of data) and where the data starts.
fn data_span(b: &[u8], rec: &Record<'_>) -> Result<(usize, usize, usize), String> {
    let lho = usize::try_from(rec.local_offset).map_err(|_| "offset too large".to_owned())?;
    if u32_at(b, lho) != Some(LOCAL_SIG) {
        return Err("no local header at the recorded offset".into());
    }
    let (Some(n), Some(e)) = (u16_at(b, lho + 26), u16_at(b, lho + 28)) else {
        return Err("truncated local header".into());
    };
    let start = lho + LOCAL_LEN + n as usize + e as usize;
    let end = usize::try_from(rec.compressed)
        .ok()
        .and_then(|c| start.checked_add(c))
        .filter(|&end| end <= b.len())
        .ok_or_else(|| "the entry's data runs past the end of the archive".to_owned())?;
    Ok((lho, start, end))
}

enum Inflated {
    Done(Vec<u8>),
    TooLarge(u64),
    Ratio(u64),
    Budget,
    Corrupt(String),
}

/// Inflates (or copies) one entry, stopping at the first limit crossed.
fn inflate(data: &[u8], method: u64, entry_cap: u64, ratio: u64, budget: u64) -> Inflated {
    let ratio_cap = ratio.saturating_mul((data.len() as u64).max(1));
    let mut out = Vec::new();
    let mut reader: Box<dyn Read + '_> = if method == 0 {
        Box::new(data)
    } else {
        Box::new(DeflateDecoder::new(data))
    };
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Inflated::Done(out),
            Ok(n) => n,
            Err(e) => return Inflated::Corrupt(e.to_string()),
        };
        let total = out.len() as u64 + n as u64;
        if total > ratio_cap {
            return Inflated::Ratio(total);
        }
        if total > entry_cap {
            return Inflated::TooLarge(total);
        }
        if total > budget {
            return Inflated::Budget;
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

pub(crate) fn walk(w: &mut Walk, c: &Container, b: &[u8]) -> Result<(), ArtifactError> {
    let dir = find_directory(b)?;
    let cap = w.limits.max_entries.saturating_add(1);
    let (records, broken) = parse_records(b, dir, cap);
    if let Some(detail) = &broken {
        w.unexplored(
            Some(c.id.clone()),
            c.display.clone(),
            UnexploredReason::Malformed,
            format!("central directory: {detail}; later entries are not listed"),
        );
    }
    if dir.entries != records.len() as u64 && broken.is_none() && (records.len() as u64) < cap {
        w.limitations.push(format!(
            "{}: the end record claims {} entries, the directory holds {}",
            super::walk::display_or_root(&c.display),
            dir.entries,
            records.len()
        ));
    }
    let overlapping = overlaps(b, &records);
    for (index, rec) in records.iter().enumerate() {
        if w.stopped() {
            break;
        }
        if !w.see(c) {
            break;
        }
        let path = match paths::logical_path(rec.raw_name, w.limits.max_path_bytes) {
            Ok(p) => p,
            Err((reason, detail)) => {
                w.refuse(rec.raw_name, reason, detail);
                continue;
            }
        };
        let (start, end) = match data_span(b, rec) {
            Ok((_, start, end)) => (start, end),
            Err(detail) => {
                w.refuse(rec.raw_name, RefusalReason::OutOfBounds, detail);
                continue;
            }
        };
        if overlapping.contains(&index) {
            w.refuse(
                rec.raw_name,
                RefusalReason::Overlapping,
                "its data overlaps another entry's (a Fifield-style bomb); not read",
            );
            continue;
        }
        entry(w, c, rec, path, &b[start..end]);
    }
    Ok(())
}

/// Indexes of records whose local span overlaps an earlier span.
fn overlaps(b: &[u8], records: &[Record<'_>]) -> std::collections::HashSet<usize> {
    let mut spans: Vec<(usize, usize, usize)> = records
        .iter()
        .enumerate()
        .filter_map(|(i, r)| data_span(b, r).ok().map(|(lho, _, end)| (lho, i, end)))
        .collect();
    spans.sort_unstable();
    let mut out = std::collections::HashSet::new();
    let mut reach = 0usize;
    // At equal offsets the earlier central record wins.
    for (k, &(lho, i, end)) in spans.iter().enumerate() {
        if k > 0 && lho < reach {
            out.insert(i);
        }
        reach = reach.max(end);
    }
    out
}

fn entry(w: &mut Walk, c: &Container, rec: &Record<'_>, path: String, data: &[u8]) {
    let mode = rec.unix_mode.unwrap_or(0);
    let is_dir = rec.raw_name.ends_with(b"/") || mode & 0o170000 == 0o040000;
    let is_link = mode & 0o170000 == 0o120000;
    let encrypted = rec.flags & 1 != 0;
    if is_dir {
        w.add(
            c,
            Entry::new(
                path,
                EntryKind::Directory,
                Content::Absent(HashStatus::Unavailable),
            ),
        );
        return;
    }
    let mut e = Entry::new(
        path.clone(),
        EntryKind::File,
        Content::Absent(HashStatus::Unavailable),
    );
    e.declared_size = rec.uncompressed;
    e.compressed_size = Some(rec.compressed);
    e.executable = mode & 0o111 != 0;
    e.encrypted = encrypted;
    if encrypted {
        e.limitations.push("encrypted; not read".into());
        if let Some(id) = w.add(c, e) {
            w.unexplored(
                Some(id),
                path,
                UnexploredReason::Encrypted,
                "encrypted zip entry",
            );
        }
        return;
    }
    if rec.method != 0 && rec.method != 8 {
        e.limitations
            .push(format!("compression method {} is not read", rec.method));
        if let Some(id) = w.add(c, e) {
            w.unexplored(
                Some(id),
                path,
                UnexploredReason::UnsupportedFormat,
                format!(
                    "compression method {}; rea reads stored and deflate",
                    rec.method
                ),
            );
        }
        return;
    }
    let limits = w.limits;
    if rec.uncompressed > limits.max_entry_bytes && !is_link {
        w.limits_hit.insert("max_entry_bytes");
        e.content = Content::Absent(HashStatus::NotHashedLimit);
        e.limitations.push(format!(
            "declared {} bytes, over max_entry_bytes; not read",
            rec.uncompressed
        ));
        w.add(c, e);
        return;
    }
    let entry_cap = if is_link {
        limits.max_path_bytes
    } else {
        limits.max_entry_bytes
    };
    match inflate(
        data,
        rec.method,
        entry_cap,
        limits.max_compression_ratio,
        w.budget(),
    ) {
        Inflated::Done(bytes) => {
            if !w.charge(bytes.len() as u64, c) {
                return;
            }
            let mut crc = Crc::new();
            crc.update(&bytes);
            let mismatched = crc.sum() != rec.crc;
            if mismatched {
                e.limitations
                    .push("CRC-32 does not match the central directory".into());
            }
            let size_note = (bytes.len() as u64 != rec.uncompressed)
                .then(|| format!("declared {} bytes, {} read", rec.uncompressed, bytes.len()));
            if let Some(note) = &size_note {
                e.limitations.push(note.clone());
            }
            if is_link {
                link(w, c, e, rec, &bytes);
                return;
            }
            e.content = Content::Bytes {
                bytes: &bytes,
                mismatched,
            };
            if let (Some(id), Some(note)) = (w.add(c, e), size_note) {
                w.findings.observe(Observation {
                    kind: ObservationKind::SizeMismatch,
                    occurrence_id: Some(id),
                    message: format!("{path}: {note}"),
                });
            }
        }
        // Decompression done for an entry that is then refused or left
        // unhashed is work all the same: it is charged to max_total_bytes,
        // so nested bombs (a 256 MiB leaf per member, level after level)
        // stop once the budget is spent instead of inflating every leaf.
        Inflated::TooLarge(read) => {
            if !w.charge(read, c) {
                return;
            }
            w.limits_hit.insert(if is_link {
                "max_path_bytes"
            } else {
                "max_entry_bytes"
            });
            e.content = Content::Absent(HashStatus::NotHashedLimit);
            e.limitations
                .push(format!("stopped after {read} bytes (over the entry limit)"));
            w.add(c, e);
        }
        Inflated::Ratio(read) => {
            if !w.charge(read, c) {
                return;
            }
            w.limits_hit.insert("max_compression_ratio");
            w.refuse(
                rec.raw_name,
                RefusalReason::CompressionRatio,
                format!(
                    "{read} bytes from {} compressed exceeds ratio {} (a zip bomb?); stopped",
                    rec.compressed, limits.max_compression_ratio
                ),
            );
        }
        Inflated::Budget => w.stop("max_total_bytes", c),
        Inflated::Corrupt(reason) => {
            e.limitations.push(format!("does not decompress: {reason}"));
            if let Some(id) = w.add(c, e) {
                w.unexplored(Some(id), path, UnexploredReason::Malformed, reason);
            }
        }
    }
}

/// A Unix symlink entry: its data is the target, which is never followed.
fn link(w: &mut Walk, c: &Container, mut e: Entry<'_>, rec: &Record<'_>, target: &[u8]) {
    e.kind = EntryKind::Symlink;
    e.executable = false;
    e.content = Content::Absent(HashStatus::Unavailable);
    let target_text = String::from_utf8_lossy(target).into_owned();
    let inside = !target_text.starts_with('/')
        && paths::join_inside(paths::parent_dir(&e.logical_path), &target_text).is_some();
    if target_text.starts_with('/') {
        e.limitations
            .push("absolute symlink target withheld".into());
    } else {
        e.symlink_target = Some(target_text.clone());
    }
    if w.add(c, e).is_some() && !inside {
        w.refuse(
            rec.raw_name,
            RefusalReason::SymlinkEscape,
            "the symlink's target lies outside the archive; not followed",
        );
    }
}
