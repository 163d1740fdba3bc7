//! What a content is (its `NodeFormat`), whether it is a container to walk,
//! the native layout facts links are resolved from, and Info.plist facts.

use object::FileKind;

use super::model::{ArtifactFormat, InfoPlistFacts, NodeFormat};
use super::{MAX_PLIST_BYTES, asar, paths, zip};
use crate::providers::Format;
use crate::providers::native::layouts_of_bytes;

/// Bytes looked at to tell text from data.
const TEXT_PROBE_BYTES: usize = 4096;
/// Longest Info.plist string kept.
const MAX_PLIST_STRING_CHARS: usize = 256;
/// A universal binary lists at most this many slices (as in the native provider).
pub(crate) const MAX_FAT_SLICES: u32 = 32;

const MACHO_MAGICS: [[u8; 4]; 4] = [
    [0xfe, 0xed, 0xfa, 0xce],
    [0xfe, 0xed, 0xfa, 0xcf],
    [0xce, 0xfa, 0xed, 0xfe],
    [0xcf, 0xfa, 0xed, 0xfe],
];

/// Layout facts of one native image, kept for link resolution.
#[derive(Debug, Clone, Default)]
pub(crate) struct NativeFacts {
    pub occurrence_id: String,
    /// (container occurrence id, logical path) libraries resolve against.
    pub location: (Option<String>, String),
    pub architecture: String,
    pub macho: bool,
    pub needed: Vec<String>,
    pub rpaths: Vec<String>,
    pub code_signature: Option<bool>,
}

pub(crate) fn node_format(bytes: &[u8]) -> NodeFormat {
    if bytes.is_empty() {
        return NodeFormat::Unknown;
    }
    if bytes.starts_with(b"!<arch>\n") || bytes.starts_with(b"!<thin>\n") {
        return NodeFormat::Ar;
    }
    // Too short for `FileKind` but unmistakably a (broken) native image.
    if bytes.starts_with(b"\x7fELF") {
        return parsed(bytes, NodeFormat::Elf);
    }
    if MACHO_MAGICS.iter().any(|m| bytes.starts_with(m)) {
        return parsed(bytes, NodeFormat::Macho);
    }
    match FileKind::parse(bytes) {
        Ok(FileKind::Elf32 | FileKind::Elf64) => return parsed(bytes, NodeFormat::Elf),
        Ok(FileKind::MachO32 | FileKind::MachO64) => return parsed(bytes, NodeFormat::Macho),
        Ok(FileKind::Pe32 | FileKind::Pe64) => return parsed(bytes, NodeFormat::Pe),
        Ok(FileKind::MachOFat32 | FileKind::MachOFat64) => {
            return if super::fat::slice_count(bytes).is_some() {
                NodeFormat::UniversalMacho
            } else {
                NodeFormat::Data
            };
        }
        Ok(FileKind::Archive) => return NodeFormat::Ar,
        _ => {}
    }
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return if zip::find_directory(bytes).is_ok() {
            NodeFormat::Zip
        } else {
            NodeFormat::Unknown
        };
    }
    if asar::header_bounds(bytes, bytes.len() as u64).is_ok() {
        return NodeFormat::Asar;
    }
    let probe = &bytes[..bytes.len().min(TEXT_PROBE_BYTES)];
    if probe.starts_with(b"bplist0") || is_xml_plist(probe) {
        return NodeFormat::Plist;
    }
    if is_text(probe, bytes.len() > TEXT_PROBE_BYTES) {
        return NodeFormat::Text;
    }
    NodeFormat::Data
}

fn parsed(bytes: &[u8], format: NodeFormat) -> NodeFormat {
    if object::File::parse(bytes).is_ok() {
        format
    } else {
        NodeFormat::Unknown
    }
}

fn is_xml_plist(probe: &[u8]) -> bool {
    let head = &probe[..probe.len().min(1024)];
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    (t.starts_with("<?xml") || t.starts_with("<!DOCTYPE plist") || t.starts_with("<plist"))
        && t.contains("<plist")
}

fn is_text(probe: &[u8], cut: bool) -> bool {
    if probe.contains(&0) {
        return false;
    }
    match std::str::from_utf8(probe) {
        Ok(_) => true,
        // A character split by the probe's end is still text.
        Err(e) => cut && e.error_len().is_none(),
    }
}

/// The container format to walk, for contents that are containers.
pub(crate) fn container_format(bytes: &[u8]) -> Option<ArtifactFormat> {
    match node_format(bytes) {
        NodeFormat::Zip => Some(ArtifactFormat::Zip),
        NodeFormat::Ar => Some(ArtifactFormat::Ar),
        NodeFormat::Asar => Some(ArtifactFormat::Asar),
        NodeFormat::UniversalMacho => Some(ArtifactFormat::UniversalMacho),
        _ => None,
    }
}

/// Needed libraries, rpaths and code-signature presence of a thin image.
pub(crate) fn native_facts(bytes: &[u8], name: &str) -> Result<NativeFacts, String> {
    let layouts = layouts_of_bytes(bytes, name).map_err(|e| e.to_string())?;
    let Some((info, layout)) = layouts.into_iter().next() else {
        return Err("no document".into());
    };
    Ok(NativeFacts {
        architecture: info.architecture,
        macho: matches!(info.format, Format::MachO),
        needed: layout.needed_libraries,
        rpaths: layout.rpaths,
        code_signature: layout.code_signature,
        ..NativeFacts::default()
    })
}

/// `…/Contents/Info.plist` (macOS) or `X.app/Info.plist` (iOS).
pub(crate) fn is_info_plist_path(path: &str) -> bool {
    if paths::base_name(path) != "Info.plist" {
        return false;
    }
    let dir = paths::base_name(paths::parent_dir(path));
    dir == "Contents" || dir.ends_with(".app")
}

/// Bundle facts from an Info.plist held in memory (size-bounded as at admission).
pub(crate) fn info_plist_facts(
    bytes: &[u8],
    occurrence_id: &str,
) -> Result<InfoPlistFacts, String> {
    if bytes.len() as u64 > MAX_PLIST_BYTES {
        return Err(format!(
            "{} bytes; the limit is {MAX_PLIST_BYTES}",
            bytes.len()
        ));
    }
    let value: plist::Value = plist::from_bytes(bytes).map_err(|e| e.to_string())?;
    let dict = value
        .as_dictionary()
        .ok_or_else(|| "the top level is not a dictionary".to_owned())?;
    let get = |key: &str| {
        dict.get(key)
            .and_then(plist::Value::as_string)
            .map(|s| s.chars().take(MAX_PLIST_STRING_CHARS).collect::<String>())
    };
    Ok(InfoPlistFacts {
        occurrence_id: occurrence_id.to_owned(),
        bundle_identifier: get("CFBundleIdentifier"),
        executable: get("CFBundleExecutable"),
        short_version: get("CFBundleShortVersionString"),
        version: get("CFBundleVersion"),
        minimum_system_version: get("LSMinimumSystemVersion").or_else(|| get("MinimumOSVersion")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_content() {
        assert_eq!(node_format(b""), NodeFormat::Unknown);
        assert_eq!(node_format(b"hello\n"), NodeFormat::Text);
        assert_eq!(node_format(b"\0\x01\x02"), NodeFormat::Data);
        assert_eq!(node_format(b"!<arch>\n"), NodeFormat::Ar);
        assert_eq!(
            node_format(b"<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>"),
            NodeFormat::Plist
        );
        assert_eq!(node_format(b"\x7fELF\x02\x01\x01"), NodeFormat::Unknown);
        assert!(is_info_plist_path("Contents/Info.plist"));
        assert!(is_info_plist_path("Payload/A.app/Info.plist"));
        assert!(!is_info_plist_path("Info.plist"));
    }
}
