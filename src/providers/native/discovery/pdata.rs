//! PE `.pdata`: the exception directory, which the Windows unwinder needs
//! for every function that is not a leaf, so no linker option drops it.
//!
//! * x64: 12-byte `RUNTIME_FUNCTION {BeginAddress, EndAddress,
//!   UnwindInfoAddress}` RVAs. Chained entries (`UNW_FLAG_CHAININFO`,
//!   parts of a function split by the compiler) are kept like the other
//!   entries: each is a distinct code range with its own start, just as
//!   ELF lists a `.cold` part as its own FDE.
//! * ARM64: 8-byte `{BeginAddress, UnwindData}`. With packed unwind data
//!   (`Flag` 1 or 2) bits 2–12 hold the function length in 4-byte units;
//!   otherwise `UnwindData` points at an `.xdata` record, which is not
//!   followed, and the size is unknown.
//!
//! The table is found through data directory 3 (where the loader looks),
//! not by section name: linkers may merge `.pdata` into another section.

use crate::providers::interrupt::Checkpoint;
use object::pe::IMAGE_DIRECTORY_ENTRY_EXCEPTION;
use object::read::pe::{ImageNtHeaders, PeFile};
use object::{Architecture, Object};

use super::{Found, TableWalk};
use crate::providers::Source;
use crate::providers::native::code_map::CodeMap;

const TABLE: &str = "`.pdata`";

/// Walks the exception directory of a PE image; `false` for other formats
/// or when it is absent. COFF objects are skipped with a limitation: their
/// `.pdata` is all zeros until the linker applies relocations.
pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, found: &mut Found) -> bool {
    match file {
        object::File::Pe32(pe) => read_pe(pe, code, found),
        object::File::Pe64(pe) => read_pe(pe, code, found),
        object::File::Coff(_) | object::File::CoffBig(_) => {
            let present = file.section_by_name(".pdata").is_some();
            if present {
                found.limitations.push(format!(
                    "{TABLE} of a COFF object holds addresses that only its relocations \
                     resolve, so it was not read; link the object to see it"
                ));
            }
            present
        }
        _ => false,
    }
}

fn read_pe<Pe: ImageNtHeaders>(pe: &PeFile<'_, Pe>, code: &CodeMap<'_>, found: &mut Found) -> bool {
    let Some(directory) = pe.data_directory(IMAGE_DIRECTORY_ENTRY_EXCEPTION) else {
        return false;
    };
    let (rva, size) = directory.address_range();
    if size == 0 {
        return false;
    }
    let Some(available) = pe.section_table().pe_data_at(pe.data(), rva) else {
        found.limitations.push(format!(
            "the exception directory (RVA {rva:#x}, {size} bytes) is not inside any section's \
             file data, so {TABLE} was not read"
        ));
        return true;
    };
    let bytes = match available.get(..size as usize) {
        Some(bytes) => bytes,
        None => {
            found.limitations.push(format!(
                "the exception directory claims {size} bytes but its section holds only {} \
                 from RVA {rva:#x}; the entries beyond were not read",
                available.len()
            ));
            available
        }
    };
    let base = pe.relative_address_base();
    let mut walk = found.walk(TABLE.to_owned(), Source::Pdata, code);
    match pe.architecture() {
        Architecture::X86_64 => walk_entries(bytes, 12, base, x64_entry, &mut walk),
        Architecture::Aarch64 => walk_entries(bytes, 8, base, arm64_entry, &mut walk),
        other => walk.limitation(format!(
            "{TABLE} entries for the {other:?} architecture are not decoded"
        )),
    }
    walk.finish();
    true
}

/// What one entry says: `(begin RVA, size)`, or `None` for an entry that
/// does not describe code (all zeros, or an end not after its begin).
type Decode = fn(&[u8]) -> Option<(u32, Option<u64>)>;

/// Offers each fixed-size entry to `walk`; the entry count comes from the
/// bytes present, never from a header.
fn walk_entries(bytes: &[u8], width: usize, base: u64, decode: Decode, walk: &mut TableWalk<'_>) {
    let entries = bytes.chunks_exact(width);
    let trailing = entries.remainder().len();
    let mut invalid = Invalid::default();
    let mut checkpoint = Checkpoint::new();
    for (index, entry) in entries.enumerate() {
        if checkpoint.stop() {
            break;
        }
        let Some((begin, size)) = decode(entry) else {
            invalid.note(index * width, entry);
            continue;
        };
        // An image base so high that the start wraps cannot hold code.
        let address = base.checked_add(u64::from(begin)).unwrap_or(0);
        if walk.push(address, size).is_break() {
            break;
        }
    }
    if trailing > 0 {
        walk.limitation(format!(
            "{TABLE} is {} bytes, not a whole number of {width}-byte entries; the trailing \
             {trailing} bytes were not read",
            bytes.len()
        ));
    }
    invalid.report(walk);
}

/// x64 `RUNTIME_FUNCTION`: size is `EndAddress - BeginAddress`.
fn x64_entry(entry: &[u8]) -> Option<(u32, Option<u64>)> {
    let begin = super::u32_le(entry, 0)?;
    let end = super::u32_le(entry, 4)?;
    (end > begin).then(|| (begin, Some(u64::from(end - begin))))
}

/// ARM64 entry: packed unwind data (`Flag` 1 or 2) states the length.
fn arm64_entry(entry: &[u8]) -> Option<(u32, Option<u64>)> {
    let begin = super::u32_le(entry, 0)?;
    let unwind = super::u32_le(entry, 4)?;
    if begin == 0 && unwind == 0 {
        return None;
    }
    let size = matches!(unwind & 3, 1 | 2).then(|| u64::from((unwind >> 2) & 0x7ff) * 4);
    Some((begin, size))
}

/// Entries that describe no code, summarised in one limitation. All-zero
/// entries are padding some linkers leave and are not reported.
#[derive(Default)]
struct Invalid {
    count: usize,
    first: Option<usize>,
}

impl Invalid {
    fn note(&mut self, offset: usize, entry: &[u8]) {
        if entry.iter().all(|&byte| byte == 0) {
            return;
        }
        self.count += 1;
        self.first.get_or_insert(offset);
    }

    fn report(self, walk: &mut TableWalk<'_>) {
        let Some(offset) = self.first else {
            return;
        };
        let (noun, has, its, was) = if self.count == 1 {
            ("entry", "has", "its", "was")
        } else {
            ("entries", "have", "their", "were")
        };
        walk.limitation(format!(
            "{} {noun} of {TABLE} {has} an end address not after {its} begin address (the \
             first at table offset {offset:#x}) and {was} ignored",
            self.count
        ));
    }
}
