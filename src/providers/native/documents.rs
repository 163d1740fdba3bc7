//! Classifying a mapped file and splitting it into documents.

use std::ops::Range;
use std::path::Path;

use object::read::macho::{FatArch, FatArch32, FatArch64, MachOFatFile};
use object::{Architecture, FileKind, Object};

use super::{DocumentInfo, malformed, unsupported};
use crate::providers::Format;

/// Real universal binaries hold a handful of slices. The fat magic
/// `CAFEBABE` is shared with Java class files, whose "slice count" is the
/// class file version (45 and up), so a small cap both rejects those and
/// refuses headers that claim absurd counts.
const MAX_FAT_SLICES: u32 = 32;

/// Result of classifying a file.
#[derive(Debug)]
pub(super) struct Classified {
    pub format: Format,
    pub documents: Vec<DocumentInfo>,
    /// Byte range of each document inside the file.
    pub ranges: Vec<Range<usize>>,
}

/// Classifies `data` (the whole file) and lists its documents, parsing each
/// document's headers once so that broken headers fail here.
pub(super) fn classify(data: &[u8], path: &Path) -> Result<Classified, super::ProviderError> {
    let kind = FileKind::parse(data).map_err(|error| {
        unsupported(
            path,
            // Never the bytes themselves: the file is untrusted.
            format!(
                "{error}; its first bytes match no ELF, Mach-O, PE or COFF header ({} bytes in all)",
                data.len()
            ),
        )
    })?;
    let name = file_name(path);
    match kind {
        FileKind::MachOFat32 => universal::<FatArch32>(data, path, &name),
        FileKind::MachOFat64 => universal::<FatArch64>(data, path, &name),
        other => match thin_format(other) {
            Some(format) => thin(data, path, name, format),
            None => Err(unsupported(
                path,
                format!("{} files are not supported", kind_name(other)),
            )),
        },
    }
}

/// The document format of a thin file kind, `None` for kinds rea does not read.
fn thin_format(kind: FileKind) -> Option<Format> {
    match kind {
        FileKind::Elf32 | FileKind::Elf64 => Some(Format::Elf),
        FileKind::MachO32 | FileKind::MachO64 => Some(Format::MachO),
        FileKind::Pe32 | FileKind::Pe64 => Some(Format::Pe),
        FileKind::Coff | FileKind::CoffBig => Some(Format::Coff),
        _ => None,
    }
}

fn kind_name(kind: FileKind) -> String {
    match kind {
        FileKind::Archive => "ar archive".to_owned(),
        FileKind::CoffImport => "Windows short import".to_owned(),
        FileKind::DyldCache => "dyld shared cache".to_owned(),
        FileKind::Xcoff32 | FileKind::Xcoff64 => "XCOFF".to_owned(),
        other => format!("{other:?}"),
    }
}

fn thin(
    data: &[u8],
    path: &Path,
    name: String,
    format: Format,
) -> Result<Classified, super::ProviderError> {
    let file = object::File::parse(data).map_err(|error| malformed(path, format, error))?;
    let whole_file = 0..data.len();
    Ok(Classified {
        format,
        documents: vec![DocumentInfo {
            name,
            architecture: architecture_name(file.architecture()),
            format,
        }],
        ranges: vec![whole_file],
    })
}

/// One document per slice, named `<file name> (<arch>)`.
fn universal<Fat: FatArch>(
    data: &[u8],
    path: &Path,
    file_name: &str,
) -> Result<Classified, super::ProviderError> {
    let claimed = data
        .get(4..8)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u32::from_be_bytes);
    if claimed > MAX_FAT_SLICES {
        return Err(unsupported(
            path,
            format!(
                "fat header claims {claimed} slices (a universal binary has at most \
                 {MAX_FAT_SLICES}; CAFEBABE files with many slices are usually Java classes)"
            ),
        ));
    }
    let fat_error = |reason: String| malformed(path, Format::MachOUniversal, reason);
    let fat = MachOFatFile::<Fat>::parse(data).map_err(|error| fat_error(error.to_string()))?;
    if fat.arches().is_empty() {
        return Err(fat_error("the fat header lists no slices".to_owned()));
    }
    let mut architectures = Vec::with_capacity(fat.arches().len());
    let mut ranges = Vec::with_capacity(fat.arches().len());
    for (index, arch) in fat.arches().iter().enumerate() {
        let slice = arch
            .data(data)
            .map_err(|error| fat_error(format!("slice {index}: {error}")))?;
        let start = usize::try_from(arch.file_range().0)
            .map_err(|_| fat_error(format!("slice {index}: offset out of range")))?;
        if !matches!(
            FileKind::parse(slice),
            Ok(FileKind::MachO32 | FileKind::MachO64)
        ) {
            return Err(fat_error(format!(
                "slice {index} is not a thin Mach-O image"
            )));
        }
        let file = object::File::parse(slice)
            .map_err(|error| malformed(path, Format::MachO, format!("slice {index}: {error}")))?;
        architectures.push(architecture_name(file.architecture()));
        let end = start
            .checked_add(slice.len())
            .ok_or_else(|| fat_error(format!("slice {index}: size out of range")))?;
        ranges.push(start..end);
    }
    let documents = slice_labels(&architectures)
        .into_iter()
        .zip(architectures)
        .map(|(label, architecture)| DocumentInfo {
            name: format!("{file_name} ({label})"),
            architecture,
            format: Format::MachO,
        })
        .collect();
    Ok(Classified {
        format: Format::MachOUniversal,
        documents,
        ranges,
    })
}

/// Labels slices by architecture; a repeated architecture gets ` #2`, ` #3`…
/// so that every document name is unique.
fn slice_labels(architectures: &[String]) -> Vec<String> {
    architectures
        .iter()
        .enumerate()
        .map(|(index, architecture)| {
            let earlier = architectures
                .iter()
                .take(index)
                .filter(|other| *other == architecture)
                .count();
            if earlier == 0 {
                architecture.clone()
            } else {
                format!("{architecture} #{}", earlier + 1)
            }
        })
        .collect()
}

/// rea's architecture spelling: the common short names, otherwise the
/// lowercase `object` variant name (e.g. `riscv64`).
pub(super) fn architecture_name(architecture: Architecture) -> String {
    match architecture {
        Architecture::X86_64 => "x86_64".to_owned(),
        Architecture::I386 => "x86".to_owned(),
        Architecture::Aarch64 => "arm64".to_owned(),
        Architecture::Arm => "arm".to_owned(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}
