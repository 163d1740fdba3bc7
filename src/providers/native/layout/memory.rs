//! Where a document's bytes go in memory: its loadable segments and its
//! sections, read through `object` for every format. Separate from the
//! format readers because it is the same code for all of them.

use object::{Object, ObjectSection, ObjectSegment, SectionKind, SegmentFlags, elf, macho, pe};

use super::notes::{Capped, Notes};
use super::{LayoutSection, LayoutSegment};
use crate::providers::format_address;

pub(super) fn segments(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutSegment> {
    let mut list = Capped::new();
    for segment in file.segments() {
        if notes.expired("segments") {
            break;
        }
        let (file_offset, file_size) = segment.file_range();
        let name = segment
            .name_bytes()
            .ok()
            .flatten()
            .map(|name| notes.name(name));
        let kept = list.push(LayoutSegment {
            name,
            address: format_address(segment.address()),
            size: segment.size(),
            file_offset,
            file_size,
            permissions: permissions(segment.flags()),
        });
        if !kept {
            break;
        }
    }
    list.finish("segments", notes)
}

/// `r-x` style permissions; `None` when the format gives none.
fn permissions(flags: SegmentFlags) -> Option<&'static str> {
    let (read, write, execute) = match flags {
        SegmentFlags::Elf { p_flags, .. } => (
            p_flags.contains(elf::PF_R),
            p_flags.contains(elf::PF_W),
            p_flags.contains(elf::PF_X),
        ),
        // `initprot` is what the segment is mapped with; `maxprot` only
        // bounds later `mprotect` calls.
        SegmentFlags::MachO { initprot, .. } => (
            initprot.contains(macho::VM_PROT_READ),
            initprot.contains(macho::VM_PROT_WRITE),
            initprot.contains(macho::VM_PROT_EXECUTE),
        ),
        SegmentFlags::Coff { characteristics } => (
            characteristics.contains(pe::IMAGE_SCN_MEM_READ),
            characteristics.contains(pe::IMAGE_SCN_MEM_WRITE),
            characteristics.contains(pe::IMAGE_SCN_MEM_EXECUTE),
        ),
        _ => return None,
    };
    Some(match (read, write, execute) {
        (false, false, false) => "---",
        (false, false, true) => "--x",
        (false, true, false) => "-w-",
        (false, true, true) => "-wx",
        (true, false, false) => "r--",
        (true, false, true) => "r-x",
        (true, true, false) => "rw-",
        (true, true, true) => "rwx",
    })
}

pub(super) fn sections(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutSection> {
    let mut list = Capped::new();
    for section in file.sections() {
        if notes.expired("sections") {
            break;
        }
        let name = section
            .name_bytes()
            .map(|name| notes.name(name))
            .unwrap_or_default();
        let segment = section
            .segment_name_bytes()
            .ok()
            .flatten()
            .map(|name| notes.name(name));
        let kept = list.push(LayoutSection {
            name,
            segment,
            address: format_address(section.address()),
            size: section.size(),
            file_offset: section.file_range().map(|(offset, _)| offset),
            kind: section_kind(section.kind()),
        });
        if !kept {
            break;
        }
    }
    list.finish("sections", notes)
}

fn section_kind(kind: SectionKind) -> &'static str {
    match kind {
        SectionKind::Text => "text",
        SectionKind::Data => "data",
        SectionKind::ReadOnlyData | SectionKind::ReadOnlyDataWithRel => "read-only-data",
        SectionKind::ReadOnlyString => "read-only-string",
        SectionKind::UninitializedData => "uninitialized",
        SectionKind::Tls => "tls",
        SectionKind::UninitializedTls => "uninitialized-tls",
        SectionKind::TlsVariables => "tls-variables",
        SectionKind::OtherString => "string",
        SectionKind::Debug | SectionKind::DebugString => "debug",
        SectionKind::Linker => "linker",
        SectionKind::Note => "note",
        SectionKind::Metadata => "metadata",
        _ => "other",
    }
}
