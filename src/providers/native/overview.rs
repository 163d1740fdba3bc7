//! Summary facts of one document.

use object::{Object, ObjectSection, ObjectSegment};

use super::DocumentInfo;
use super::entry::entry_point;
use crate::providers::{Format, Overview, Segment, format_address};

/// Builds the overview of a parsed document, listing at most
/// `segment_limit` segments but counting all of them.
///
/// COFF objects have no segments; their sections are listed instead (and
/// `segment_count` counts those), since that is the only layout they have.
pub(super) fn overview(
    file: &object::File<'_>,
    info: &DocumentInfo,
    segment_limit: usize,
) -> Overview {
    let (segments, segment_count) = if info.format == Format::Coff {
        first_and_count(file.sections(), segment_limit, |section| Segment {
            name: section.name().ok().map(str::to_owned),
            address: format_address(section.address()),
            size: section.size(),
        })
    } else {
        first_and_count(file.segments(), segment_limit, |segment| Segment {
            name: segment.name().ok().flatten().map(str::to_owned),
            address: format_address(segment.address()),
            size: segment.size(),
        })
    };
    Overview {
        format: info.format,
        architecture: info.architecture.clone(),
        endianness: if file.is_little_endian() {
            "little"
        } else {
            "big"
        },
        bits: if file.is_64() { 64 } else { 32 },
        entry_point: entry_point(file).map(format_address),
        image_base: image_base(file, info.format).map(format_address),
        segments,
        segment_count,
        section_count: file.sections().count(),
        symbol_count: file.symbols().count() + file.dynamic_symbols().count(),
    }
}

/// The link-time address of file offset 0: PE's ImageBase; otherwise the
/// address of the segment that maps the header (Mach-O `__TEXT`, ELF's
/// first `PT_LOAD`). A segment that maps no file bytes (`__PAGEZERO`) does
/// not count. `None` for COFF objects and files whose header no segment maps.
fn image_base(file: &object::File<'_>, format: Format) -> Option<u64> {
    match format {
        Format::Pe => Some(file.relative_address_base()),
        Format::Coff => None,
        Format::Elf | Format::MachO | Format::MachOUniversal => file
            .segments()
            .filter(|segment| {
                let (offset, size) = segment.file_range();
                offset == 0 && size > 0
            })
            .map(|segment| segment.address())
            .min(),
    }
}

/// Converts the first `limit` items and counts all of them; items past the
/// limit are only counted, never converted.
fn first_and_count<I: Iterator, T>(
    mut items: I,
    limit: usize,
    convert: impl FnMut(I::Item) -> T,
) -> (Vec<T>, usize) {
    let first: Vec<T> = items.by_ref().take(limit).map(convert).collect();
    let count = first.len() + items.count();
    (first, count)
}

/// The segment (COFF: section) that maps `address`: `None` when none does,
/// `Some(None)` when one does but has no name (ELF program headers).
/// Zero-sized segments map nothing.
pub(super) fn segment_of(file: &object::File<'_>, address: u64) -> Option<Option<String>> {
    let covers = |start: u64, size: u64| address >= start && address - start < size;
    if file.format() == object::BinaryFormat::Coff {
        file.sections()
            .find(|section| covers(section.address(), section.size()))
            .map(|section| section.name().ok().map(str::to_owned))
    } else {
        file.segments()
            .find(|segment| covers(segment.address(), segment.size()))
            .map(|segment| segment.name().ok().flatten().map(str::to_owned))
    }
}
