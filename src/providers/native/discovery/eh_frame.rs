//! `.eh_frame` FDEs: the call-frame information C++ exceptions, Rust panics
//! and every stack unwinder rely on, so `strip` keeps it. Each FDE covers
//! one function (or one split part, such as GCC's `.cold` blocks) with its
//! start and length. The same table exists in MinGW PE files and as
//! Mach-O `__TEXT,__eh_frame`; an ELF file without section headers still
//! locates it through `PT_GNU_EH_FRAME`.
//!
//! Parsing is gimli's; this module bounds it. gimli's iterator consumes at
//! least an entry's length field per step and empties itself on an error,
//! so the walk ends within `len / 4` steps; the explicit budget only makes
//! that termination independent of the parser's internals.

use crate::providers::interrupt::Checkpoint;
use std::collections::HashMap;

use gimli::{
    BaseAddresses, CieOrFde, CommonInformationEntry, EhFrame, EhFrameHdr, EhFrameOffset,
    EndianSlice, Pointer, RunTimeEndian, UnwindSection,
};
use object::elf::PT_GNU_EH_FRAME;
use object::read::elf::{ElfFile, FileHeader, ProgramHeader};
use object::{BinaryFormat, Endianness, Object, ObjectKind, ObjectSection, ObjectSegment};

use super::{Found, TableWalk};
use crate::providers::native::code_map::CodeMap;
use crate::providers::{Source, format_address};

type Reader<'data> = EndianSlice<'data, RunTimeEndian>;
type Cie<'data> = CommonInformationEntry<Reader<'data>>;

/// Walks the document's `.eh_frame` (`__eh_frame` on Mach-O); `false` when
/// it has none.
///
/// An ELF file stripped of its section headers (`sstrip`, some packers)
/// still has the `PT_GNU_EH_FRAME` segment the unwinder uses to find
/// `.eh_frame`; the table is then read from there up to its terminator.
pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, found: &mut Found) -> bool {
    let located = match eh_frame_section(file) {
        Some(section) => from_section(&section),
        None => match from_program_header(file) {
            Some(located) => located,
            None => return false,
        },
    };
    let located = match located {
        Ok(located) => located,
        Err(sentence) => {
            found.limitations.push(sentence);
            return true;
        }
    };
    // Unrelocated pointers would decode to plausible but wrong addresses.
    if file.kind() == ObjectKind::Relocatable {
        found.limitations.push(format!(
            "{} of a relocatable object holds addresses that only its relocations \
             resolve, so its FDEs were not read; link the object to see them",
            located.table
        ));
        return true;
    }
    let mut eh_frame = EhFrame::new(located.data, endian(file));
    eh_frame.set_address_size(address_size(file));
    let bases = base_addresses(file, located.address);
    let mut walk = found.walk(located.table, Source::EhFrame, code);
    walk_entries(&eh_frame, &bases, located.data, &mut walk);
    walk.finish();
    true
}

/// The `.eh_frame` section: `__eh_frame` on Mach-O (`object` maps the
/// name), and on PE also `.eh_fram`: GNU ld truncates section names to 8
/// characters in PE images unless long section names are enabled.
fn eh_frame_section<'data, 'file>(
    file: &'file object::File<'data>,
) -> Option<object::Section<'data, 'file>> {
    file.section_by_name(".eh_frame").or_else(|| {
        (file.format() == BinaryFormat::Pe)
            .then(|| file.section_by_name(".eh_fram"))
            .flatten()
    })
}

/// The bytes of an `.eh_frame` table, its address, and its name for
/// limitation sentences.
struct Located<'data> {
    table: String,
    address: u64,
    data: &'data [u8],
}

fn from_section<'data>(section: &object::Section<'data, '_>) -> Result<Located<'data>, String> {
    let table = format!("`{}`", section.name().unwrap_or(".eh_frame"));
    match section.data() {
        Ok(data) => Ok(Located {
            table,
            address: section.address(),
            data,
        }),
        Err(error) => Err(format!(
            "{table} could not be read ({error}), so its FDEs are missing"
        )),
    }
}

/// `.eh_frame` through `PT_GNU_EH_FRAME` (its `.eh_frame_hdr`), for ELF
/// files without a `.eh_frame` section; `None` when there is no such
/// segment either.
fn from_program_header<'data>(
    file: &object::File<'data>,
) -> Option<Result<Located<'data>, String>> {
    let header = match file {
        object::File::Elf32(elf) => gnu_eh_frame(elf),
        object::File::Elf64(elf) => gnu_eh_frame(elf),
        _ => None,
    }?;
    Some(header.and_then(|(address, bytes)| through_header(file, address, bytes)))
}

/// Address and file bytes of the `PT_GNU_EH_FRAME` segment.
fn gnu_eh_frame<'data, Elf: FileHeader<Endian = Endianness>>(
    elf: &ElfFile<'data, Elf>,
) -> Option<Result<(u64, &'data [u8]), String>> {
    let endian = elf.endian();
    let header = elf
        .elf_program_headers()
        .iter()
        .find(|header| header.p_type(endian) == PT_GNU_EH_FRAME)?;
    let address: u64 = header.p_vaddr(endian).into();
    Some(
        header
            .data(endian, elf.data())
            .map(|bytes| (address, bytes))
            .map_err(|()| {
                format!(
                    "the `PT_GNU_EH_FRAME` segment at {} lies outside the file, so \
                     `.eh_frame` could not be located",
                    format_address(address)
                )
            }),
    )
}

/// Follows `.eh_frame_hdr`'s `eh_frame_ptr` to the bytes from there to the
/// end of the segment holding them; the table's zero terminator ends the
/// walk well before that.
fn through_header<'data>(
    file: &object::File<'data>,
    header_address: u64,
    header: &[u8],
) -> Result<Located<'data>, String> {
    let bases = BaseAddresses::default().set_eh_frame_hdr(header_address);
    let parsed = EhFrameHdr::new(header, endian(file))
        .parse(&bases, address_size(file))
        .map_err(|error| {
            format!(
                "the `.eh_frame_hdr` at {} (`PT_GNU_EH_FRAME`) is malformed ({error}), so \
                 `.eh_frame` could not be located",
                format_address(header_address)
            )
        })?;
    let Pointer::Direct(address) = parsed.eh_frame_ptr() else {
        return Err(
            "the `.eh_frame_hdr` (`PT_GNU_EH_FRAME`) points at `.eh_frame` indirectly, \
             which is not followed; `.eh_frame` was not read"
                .to_owned(),
        );
    };
    let data = segment_bytes_from(file, address).ok_or_else(|| {
        format!(
            "`PT_GNU_EH_FRAME` places `.eh_frame` at {}, outside every segment's file \
             data; it was not read",
            format_address(address)
        )
    })?;
    Ok(Located {
        table: "`.eh_frame` (located through `PT_GNU_EH_FRAME`)".to_owned(),
        address,
        data,
    })
}

/// The file bytes of the segment containing `address`, from `address` on.
fn segment_bytes_from<'data>(file: &object::File<'data>, address: u64) -> Option<&'data [u8]> {
    file.segments().find_map(|segment| {
        let offset = usize::try_from(address.checked_sub(segment.address())?).ok()?;
        let data = segment.data().ok()?;
        data.get(offset..).filter(|rest| !rest.is_empty())
    })
}

fn address_size(file: &object::File<'_>) -> u8 {
    if file.is_64() { 8 } else { 4 }
}

fn endian(file: &object::File<'_>) -> RunTimeEndian {
    if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    }
}

/// Bases for `DW_EH_PE_pcrel` (the section itself), `textrel` (`.text`)
/// and `datarel` (`.got`) pointers. A missing base makes only the FDEs
/// that need it fail, each reported as skipped.
fn base_addresses(file: &object::File<'_>, eh_frame_address: u64) -> BaseAddresses {
    let mut bases = BaseAddresses::default().set_eh_frame(eh_frame_address);
    if let Some(text) = file.section_by_name(".text") {
        bases = bases.set_text(text.address());
    }
    if let Some(got) = file.section_by_name(".got") {
        bases = bases.set_got(got.address());
    }
    bases
}

/// Offers every FDE's `[pc_begin, pc_begin + pc_range)` to `walk`.
///
/// An error from the entry iterator means the next entry's extent is
/// unknown, so the walk stops there. An FDE whose own fields fail to
/// decode (unknown CIE, unsupported pointer encoding) still has a known
/// length, so it is skipped and the walk goes on.
fn walk_entries(
    eh_frame: &EhFrame<Reader<'_>>,
    bases: &BaseAddresses,
    data: &[u8],
    walk: &mut TableWalk<'_>,
) {
    let mut entries = eh_frame.entries(bases);
    let mut cies = HashMap::new();
    let mut skipped = Skipped::default();
    // Offset of the entry the iterator reads next.
    let mut offset = 0usize;
    let mut budget = data.len() / 4 + 1;
    let mut checkpoint = Checkpoint::new();
    loop {
        if checkpoint.stop() {
            break;
        }
        if budget == 0 {
            walk.limitation(format!(
                "{} has more entries than its size allows; the walk stopped at offset \
                 {offset:#x} and later entries were not read",
                walk.table
            ));
            break;
        }
        budget -= 1;
        let entry = match entries.next() {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(error) => {
                walk.limitation(format!(
                    "{} entry at offset {offset:#x} is malformed: {error}; later entries \
                     not read",
                    walk.table
                ));
                break;
            }
        };
        let partial = match entry {
            CieOrFde::Cie(cie) => {
                offset = following(data, cie.offset(), cie.entry_len());
                continue;
            }
            CieOrFde::Fde(partial) => partial,
        };
        offset = following(data, partial.offset(), partial.entry_len());
        match partial.parse(|section, bases, at| cie_at(&mut cies, section, bases, at)) {
            Ok(fde) => {
                if walk.push(fde.initial_address(), Some(fde.len())).is_break() {
                    break;
                }
            }
            Err(error) => skipped.note(partial.offset(), error),
        }
    }
    skipped.report(walk);
}

/// Offset just past the entry at `offset` whose length field says `length`
/// (a 64-bit DWARF entry has a 12-byte length field, others 4 bytes).
fn following(data: &[u8], offset: usize, length: usize) -> usize {
    let field = if super::u32_le(data, offset) == Some(u32::MAX) {
        12
    } else {
        4
    };
    offset.saturating_add(field).saturating_add(length)
}

/// The CIE at `offset`, parsed once per offset however many FDEs share it.
/// The cache holds at most one CIE per distinct offset, each occupying
/// bytes of the section, so it is bounded by the section size.
fn cie_at<'data>(
    cache: &mut HashMap<usize, Cie<'data>>,
    section: &EhFrame<Reader<'data>>,
    bases: &BaseAddresses,
    offset: EhFrameOffset,
) -> gimli::Result<Cie<'data>> {
    if let Some(cie) = cache.get(&offset.0) {
        return Ok(cie.clone());
    }
    let cie = section.cie_from_offset(bases, offset)?;
    cache.insert(offset.0, cie.clone());
    Ok(cie)
}

/// FDEs that were skipped, summarised in one limitation.
#[derive(Default)]
struct Skipped {
    count: usize,
    first: Option<(usize, gimli::Error)>,
}

impl Skipped {
    fn note(&mut self, offset: usize, error: gimli::Error) {
        self.count += 1;
        self.first.get_or_insert((offset, error));
    }

    fn report(self, walk: &mut TableWalk<'_>) {
        let Some((offset, error)) = self.first else {
            return;
        };
        let (noun, was) = if self.count == 1 {
            ("FDE", "was")
        } else {
            ("FDEs", "were")
        };
        walk.limitation(format!(
            "{} {noun} of {} could not be decoded and {was} skipped (the first, at offset \
             {offset:#x}: {error})",
            self.count, walk.table
        ));
    }
}
