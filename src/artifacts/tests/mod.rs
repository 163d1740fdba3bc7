//! Tests of the artifact library: builders for hand-made archives, then
//! one file per concern.

mod bundle;
mod containers;
mod hostile;
mod ids;
mod props;

use std::io::Write;

use flate2::Crc;
use flate2::write::DeflateEncoder;

use super::*;
pub(super) use crate::ground::digest::sha256_hex;

/// One entry of a hand-built zip.
#[derive(Clone)]
pub(super) struct Z {
    pub name: Vec<u8>,
    pub data: Vec<u8>,
    pub deflate: bool,
    pub mode: Option<u32>,
    pub flags: u16,
    /// Point the central record at another entry's local header.
    pub local_of: Option<usize>,
    /// The uncompressed size the headers declare, when it is to lie.
    pub declared: Option<u32>,
}

pub(super) fn z(name: &str, data: &[u8]) -> Z {
    Z {
        name: name.as_bytes().to_vec(),
        data: data.to_vec(),
        deflate: false,
        mode: None,
        flags: 0,
        local_of: None,
        declared: None,
    }
}

pub(super) fn deflated(name: &str, data: &[u8]) -> Z {
    Z {
        deflate: true,
        ..z(name, data)
    }
}

/// A zip with local headers, central directory and end record.
pub(super) fn zip(entries: &[Z]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        let mut crc = Crc::new();
        crc.update(&e.data);
        let stored = if e.deflate {
            let mut enc = DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(&e.data).unwrap();
            enc.finish().unwrap()
        } else {
            e.data.clone()
        };
        let method: u16 = if e.deflate { 8 } else { 0 };
        let lho = out.len() as u32;
        offsets.push(lho);
        let local_offset = e.local_of.map_or(lho, |i| offsets[i]);
        let mut local = Vec::new();
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes());
        local.extend_from_slice(&e.flags.to_le_bytes());
        local.extend_from_slice(&method.to_le_bytes());
        local.extend_from_slice(&[0; 4]);
        local.extend_from_slice(&crc.sum().to_le_bytes());
        local.extend_from_slice(&(stored.len() as u32).to_le_bytes());
        local.extend_from_slice(&e.declared.unwrap_or(e.data.len() as u32).to_le_bytes());
        local.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(&e.name);
        if e.local_of.is_none() {
            out.extend_from_slice(&local);
            out.extend_from_slice(&stored);
        }
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        let made_by: u16 = if e.mode.is_some() { 3 << 8 | 20 } else { 20 };
        central.extend_from_slice(&made_by.to_le_bytes());
        central.extend_from_slice(&local[4..30]);
        central.extend_from_slice(&0u16.to_le_bytes()); // comment
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal
        central.extend_from_slice(&(e.mode.unwrap_or(0) << 16).to_le_bytes());
        central.extend_from_slice(&local_offset.to_le_bytes());
        central.extend_from_slice(&e.name);
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// An ar archive of (name, data) members with GNU `name/` names.
pub(super) fn ar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = b"!<arch>\n".to_vec();
    for (name, data) in members {
        out.extend_from_slice(format!("{:<16}", format!("{name}/")).as_bytes());
        out.extend_from_slice(
            format!(
                "{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
                0,
                0,
                0,
                100755,
                data.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}

pub(super) fn bytes(format: ArtifactFormat, b: &[u8]) -> Inspection {
    let i = inspect_bytes(b, format, &Limits::default()).unwrap();
    i.validate().unwrap();
    i
}

pub(super) fn paths_of(i: &Inspection) -> Vec<String> {
    i.occurrences.iter().map(|o| i.display_path(o)).collect()
}

pub(super) fn refusals(i: &Inspection) -> Vec<RefusalReason> {
    i.findings
        .refused_entries
        .iter()
        .map(|r| r.reason)
        .collect()
}

pub(super) fn by_path<'a>(i: &'a Inspection, path: &str) -> &'a Occurrence {
    i.occurrences
        .iter()
        .find(|o| i.display_path(o) == path)
        .unwrap_or_else(|| panic!("no occurrence {path}: {:?}", paths_of(i)))
}

/// The sniffed format of the file at `path`, opened as the server opens.
pub(super) fn sniff_at(path: &std::path::Path) -> Option<ArtifactFormat> {
    sniff(
        &crate::ground::confined::Roots::default()
            .open_file(path)
            .unwrap(),
    )
    .unwrap()
}
