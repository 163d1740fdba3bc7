//! The data behind `inspect_binary_layout`: where a document's bytes go in
//! memory (segments, sections), what it links against (needed libraries,
//! rpaths, imports), what it offers (exports) and the loader facts that only
//! some formats have (code signature, Mach-O build version, PE subsystem and
//! TLS callbacks).
//!
//! Every list holds at most [`MAX_LAYOUT_ENTRIES`] entries; past the cap the
//! first entries are kept and a limitation says so. A table that cannot be
//! read is reported in `limitations` instead of failing the whole layout:
//! only a document whose headers do not parse is `Malformed` (that happens in
//! [`super::NativeImage::layout`], before this module runs).
//!
//! Hostile input: every loop here is capped explicitly. Strings this module
//! reads itself (ELF dynamic strings and symbol names, Mach-O load command
//! strings and exports trie edges) are read through a window of at most
//! [`MAX_NAME_BYTES`] bytes. Tables walked through `object`'s iterators (PE
//! and Mach-O imports and exports, section names) also stop at a time limit,
//! because some of them rescan their string table for every entry.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt::Display;
use std::time::{Duration, Instant};

use object::read::elf::{Dyn as _, ElfFile, FileHeader, ProgramHeader as _, SectionHeader as _};
use object::read::elf::{Sym as _, SymbolTable};
use object::read::macho::{LoadCommandVariant, MachHeader, MachOFile};
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader as _, PeFile};
use object::read::{ExportTarget, NameOrOrdinal};
use object::{
    Endianness, LittleEndian as LE, Object, ObjectSection, ObjectSegment, ReadRef, SectionKind,
    SegmentFlags, elf, macho, pe,
};

use super::DocumentInfo;
use super::entry::entry_point;
use crate::providers::{Format, format_address};

/// Cap of every list in a [`Layout`] (segments, sections, imports, exports,
/// needed libraries, rpaths, TLS callbacks).
pub const MAX_LAYOUT_ENTRIES: usize = 10_000;

/// Names longer than this many bytes are cut (and counted in a limitation).
pub const MAX_NAME_BYTES: usize = 4096;

/// Wall-clock budget of one layout; tables still being read when it runs out
/// are cut short with a limitation. Real files finish in milliseconds.
const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Unreadable entries tolerated per table before giving up on it.
const MAX_ENTRY_ERRORS: usize = 1_000;

/// Entries read from one `object` iterator (kept, skipped or broken) at most.
const MAX_PULLS: usize = 4_000_000;

/// ELF dynamic entries read at most (real tables have well under 100).
const MAX_DYNAMIC_ENTRIES: usize = 100_000;

/// ELF dynamic symbols scanned at most.
const MAX_DYNAMIC_SYMBOLS: usize = 4_000_000;

/// Mach-O load commands read at most.
const MAX_LOAD_COMMANDS: usize = 100_000;

/// Mach-O exports trie: nodes visited and nesting depth at most.
const MAX_TRIE_NODES: usize = 100_000;
const MAX_TRIE_DEPTH: usize = 512;

/// Limitations listed at most (each one already summarises a whole table).
const MAX_LIMITATIONS: usize = 100;

/// Layout of one document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    pub format: Format,
    pub architecture: String,
    /// Lowercase `0x` hex; `None` when the document has no entry point.
    pub entry_point: Option<String>,
    /// ELF `PT_LOAD` program headers, Mach-O `LC_SEGMENT(_64)` commands, PE
    /// section headers (a PE section is what the loader maps); empty for COFF
    /// objects.
    pub segments: Vec<LayoutSegment>,
    pub sections: Vec<LayoutSection>,
    /// Imported symbols, without duplicates, in table order.
    pub imports: Vec<LayoutImport>,
    /// Exported symbols that have an address in this image.
    pub exports: Vec<LayoutExport>,
    /// ELF `DT_NEEDED`; Mach-O `LC_LOAD_DYLIB`, `LC_LOAD_WEAK_DYLIB`,
    /// `LC_REEXPORT_DYLIB`, `LC_LAZY_LOAD_DYLIB`, `LC_LOAD_UPWARD_DYLIB`; PE
    /// import and delay-load import DLL names. In file order.
    pub needed_libraries: Vec<String>,
    /// ELF `DT_RPATH` and `DT_RUNPATH` (split at `:`), Mach-O `LC_RPATH`.
    pub rpaths: Vec<String>,
    /// Mach-O: an `LC_CODE_SIGNATURE` command is present. PE: the security
    /// (certificate) directory is non-empty. `None` for ELF and COFF.
    pub code_signature: Option<bool>,
    /// `macos 11.0 (sdk 13.1)`, from `LC_BUILD_VERSION` or, without it,
    /// `LC_VERSION_MIN_*`; several commands are joined with `; `.
    pub macho_build_version: Option<String>,
    /// `windows-cui`, `windows-gui`, `native`, `efi-application`, ...
    pub pe_subsystem: Option<String>,
    /// PE TLS callback addresses (virtual addresses), in array order.
    pub tls_callbacks: Vec<String>,
    /// What could not be read, or was cut, and why.
    pub limitations: Vec<String>,
}

/// A loadable segment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayoutSegment {
    /// Mach-O segment or PE section name; `None` for ELF.
    pub name: Option<String>,
    pub address: String,
    /// Size in memory.
    pub size: u64,
    pub file_offset: u64,
    /// Bytes backed by the file (PE: the smaller of raw and virtual size).
    pub file_size: u64,
    /// `r-x` style: ELF `p_flags`, Mach-O `initprot`, PE characteristics.
    pub permissions: Option<&'static str>,
}

/// A section.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayoutSection {
    pub name: String,
    /// Mach-O segment name (`__TEXT`); `None` for other formats.
    pub segment: Option<String>,
    pub address: String,
    pub size: u64,
    /// `None` when the section has no file data (ELF `SHT_NOBITS`, Mach-O
    /// zero-fill, PE uninitialized data).
    pub file_offset: Option<u64>,
    /// `text`, `data`, `read-only-data`, `read-only-string`,
    /// `uninitialized`, `tls`, `uninitialized-tls`, `tls-variables`,
    /// `string`, `debug`, `linker`, `note`, `metadata` or `other`.
    pub kind: &'static str,
}

/// An imported symbol.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct LayoutImport {
    /// Library the symbol is bound to: the Mach-O install name or the PE DLL
    /// name. Empty when the format does not bind symbols to libraries (ELF)
    /// or the binding is special (Mach-O flat namespace, dynamic lookup).
    pub library: String,
    /// Symbol name; `#N` for a PE import by ordinal.
    pub name: String,
}

/// An exported symbol.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LayoutExport {
    /// Symbol name; `#N` for a PE export by ordinal only.
    pub name: String,
    /// Virtual address (for a Mach-O stub-and-resolver export, the stub; for
    /// an ELF `STT_GNU_IFUNC`, the resolver).
    pub address: String,
}

/// Builds the layout of a parsed document.
pub(super) fn layout(file: &object::File<'_>, info: &DocumentInfo) -> Layout {
    let mut notes = Notes::new();
    let mut layout = Layout {
        format: info.format,
        architecture: info.architecture.clone(),
        entry_point: entry_point(file).map(format_address),
        segments: segments(file, &mut notes),
        sections: sections(file, &mut notes),
        imports: Vec::new(),
        exports: Vec::new(),
        needed_libraries: Vec::new(),
        rpaths: Vec::new(),
        code_signature: None,
        macho_build_version: None,
        pe_subsystem: None,
        tls_callbacks: Vec::new(),
        limitations: Vec::new(),
    };
    match file {
        object::File::Elf32(elf) => elf_layout(elf, &mut layout, &mut notes),
        object::File::Elf64(elf) => elf_layout(elf, &mut layout, &mut notes),
        object::File::MachO32(macho) => macho_layout(file, macho, &mut layout, &mut notes),
        object::File::MachO64(macho) => macho_layout(file, macho, &mut layout, &mut notes),
        object::File::Pe32(pe) => pe_layout(file, pe, &mut layout, &mut notes),
        object::File::Pe64(pe) => pe_layout(file, pe, &mut layout, &mut notes),
        other => {
            layout.imports = object_imports(other, &mut notes);
            layout.exports = object_exports(other, &mut notes);
        }
    }
    layout.limitations = notes.finish();
    layout
}

// ------------------------------------------------------------ bookkeeping

/// Limitations collected while building one layout, plus the time budget.
struct Notes {
    limitations: Vec<String>,
    omitted: usize,
    deadline: Instant,
    out_of_time: bool,
    /// Names cut at [`MAX_NAME_BYTES`]; a `Cell` so that closures holding a
    /// shared borrow can count.
    cut_names: Cell<usize>,
}

impl Notes {
    fn new() -> Notes {
        Notes {
            limitations: Vec::new(),
            omitted: 0,
            deadline: Instant::now() + TIME_LIMIT,
            out_of_time: false,
            cut_names: Cell::new(0),
        }
    }

    fn note(&mut self, text: impl Into<String>) {
        if self.limitations.len() < MAX_LIMITATIONS {
            self.limitations.push(text.into());
        } else {
            self.omitted += 1;
        }
    }

    /// True once the time budget is spent; notes `what` as cut short.
    fn expired(&mut self, what: &str) -> bool {
        if Instant::now() < self.deadline {
            return false;
        }
        self.out_of_time = true;
        self.note(format!(
            "{what}: reading stopped at the {} s time limit, the list is incomplete",
            TIME_LIMIT.as_secs()
        ));
        true
    }

    /// A name as text: invalid UTF-8 is replaced, and names longer than
    /// [`MAX_NAME_BYTES`] are cut (and counted).
    fn name(&self, bytes: &[u8]) -> String {
        let bytes = match bytes.get(..MAX_NAME_BYTES) {
            Some(head) if bytes.len() > MAX_NAME_BYTES => {
                self.cut_names.set(self.cut_names.get() + 1);
                head
            }
            _ => bytes,
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Records how reading a table through [`drain`] went.
    fn drained(&mut self, what: &str, drained: Drained) {
        if drained.errors > 0 {
            let first = drained.first_error.unwrap_or_default();
            let gave_up = if drained.errors >= MAX_ENTRY_ERRORS {
                ", reading stopped there"
            } else {
                ""
            };
            self.note(format!(
                "{what}: {} entries could not be read{gave_up} (first error: {first})",
                drained.errors
            ));
        }
        if drained.too_many {
            self.note(format!(
                "{what}: reading stopped after {MAX_PULLS} table entries"
            ));
        }
        if drained.out_of_time {
            self.out_of_time = true;
            self.note(format!(
                "{what}: reading stopped at the {} s time limit, the list is incomplete",
                TIME_LIMIT.as_secs()
            ));
        }
    }

    fn finish(mut self) -> Vec<String> {
        let cut = self.cut_names.get();
        if cut > 0 {
            self.note(format!(
                "{cut} names were longer than {MAX_NAME_BYTES} bytes and were cut"
            ));
        }
        if self.omitted > 0 {
            self.limitations
                .push(format!("{} further limitations were omitted", self.omitted));
        }
        self.limitations
    }
}

/// A list that keeps its first [`MAX_LAYOUT_ENTRIES`] items and remembers
/// whether more were offered.
struct Capped<T> {
    items: Vec<T>,
    dropped: bool,
}

impl<T> Capped<T> {
    fn new() -> Capped<T> {
        Capped {
            items: Vec::new(),
            dropped: false,
        }
    }

    fn is_full(&self) -> bool {
        self.items.len() >= MAX_LAYOUT_ENTRIES
    }

    /// Keeps `item` if there is room; returns false (and drops it) once the
    /// cap is reached, so that callers can stop reading.
    fn push(&mut self, item: T) -> bool {
        if self.is_full() {
            self.dropped = true;
            return false;
        }
        self.items.push(item);
        true
    }

    fn finish(self, what: &str, notes: &mut Notes) -> Vec<T> {
        if self.dropped {
            notes.note(format!(
                "{what} truncated at {MAX_LAYOUT_ENTRIES}: the first ones are listed"
            ));
        }
        self.items
    }
}

/// How reading one table through [`drain`] ended.
#[derive(Default)]
struct Drained {
    errors: usize,
    first_error: Option<String>,
    too_many: bool,
    out_of_time: bool,
}

/// Feeds the readable items to `accept` until it returns false or the
/// iterator ends; stops early after [`MAX_ENTRY_ERRORS`] errors,
/// [`MAX_PULLS`] items or at `deadline`.
fn drain<T, E: Display>(
    items: impl Iterator<Item = Result<T, E>>,
    deadline: Instant,
    mut accept: impl FnMut(T) -> bool,
) -> Drained {
    let mut drained = Drained::default();
    for (pulled, item) in items.enumerate() {
        if pulled >= MAX_PULLS {
            drained.too_many = true;
            break;
        }
        if pulled % 64 == 0 && Instant::now() >= deadline {
            drained.out_of_time = true;
            break;
        }
        match item {
            Ok(value) => {
                if !accept(value) {
                    break;
                }
            }
            Err(error) => {
                drained.errors += 1;
                if drained.first_error.is_none() {
                    drained.first_error = Some(error.to_string());
                }
                if drained.errors >= MAX_ENTRY_ERRORS {
                    break;
                }
            }
        }
    }
    drained
}

/// The NUL-terminated string at `offset` in `table`, looked for within
/// [`MAX_NAME_BYTES`] bytes only. A longer string comes back as its first
/// `MAX_NAME_BYTES + 1` bytes, which [`Notes::name`] then cuts and counts.
/// `None` when the offset is outside the table or the table ends before the
/// terminator.
fn c_string(table: &[u8], offset: u64) -> Option<&[u8]> {
    let rest = table.get(usize::try_from(offset).ok()?..)?;
    let window = rest.get(..MAX_NAME_BYTES).unwrap_or(rest);
    match window.iter().position(|&byte| byte == 0) {
        Some(end) => window.get(..end),
        // Cut: one byte more than the limit, so that `Notes::name` counts it.
        None if rest.len() > MAX_NAME_BYTES => rest.get(..=MAX_NAME_BYTES),
        None => None,
    }
}

// ------------------------------------------------------ segments, sections

fn segments(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutSegment> {
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

fn sections(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutSection> {
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

// ------------------------------------------- imports, exports via `object`

fn object_imports(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutImport> {
    let imports = match file.imports() {
        Ok(imports) => imports,
        Err(error) => {
            notes.note(format!(
                "imports: the import tables cannot be read: {error}"
            ));
            return Vec::new();
        }
    };
    let mut list = Capped::new();
    let mut seen = HashSet::new();
    let shared: &Notes = notes;
    let drained = drain(imports, shared.deadline, |import| {
        let name = match import.name() {
            NameOrOrdinal::Name(name) => shared.name(name),
            NameOrOrdinal::Ordinal(ordinal) => format!("#{ordinal}"),
        };
        let import = LayoutImport {
            library: shared.name(import.library()),
            name,
        };
        if seen.contains(&import) {
            return true;
        }
        seen.insert(import.clone());
        list.push(import)
    });
    notes.drained("imports", drained);
    list.finish("imports", notes)
}

fn object_exports(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutExport> {
    let exports = match file.exports() {
        Ok(exports) => exports,
        Err(error) => {
            notes.note(format!("exports: the export table cannot be read: {error}"));
            return Vec::new();
        }
    };
    let mut list = Capped::new();
    let mut without_address = 0usize;
    let shared: &Notes = notes;
    let drained = drain(exports, shared.deadline, |export| {
        let address = match export.target() {
            ExportTarget::Address { address } | ExportTarget::TlvDescriptor { address } => address,
            ExportTarget::Resolver { resolver, stub } => stub.unwrap_or(resolver),
            _ => {
                without_address += 1;
                return true;
            }
        };
        let name = match export.name() {
            NameOrOrdinal::Name(name) => shared.name(name),
            NameOrOrdinal::Ordinal(ordinal) => format!("#{ordinal}"),
        };
        list.push(LayoutExport {
            name,
            address: format_address(address),
        })
    });
    notes.drained("exports", drained);
    note_without_address(without_address, notes);
    list.finish("exports", notes)
}

fn note_without_address(count: usize, notes: &mut Notes) {
    if count > 0 {
        notes.note(format!(
            "exports: {count} exports have no address in this image (absolute values, \
             thread-local offsets, re-exports or forwarders) and are not listed"
        ));
    }
}

// -------------------------------------------------------------------- ELF

fn elf_layout<'data, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, Elf, &'data [u8]>,
    layout: &mut Layout,
    notes: &mut Notes,
) {
    match elf_dynamic(file) {
        Ok(Some((dynamics, strings))) => {
            elf_dynamic_entries(file.endian(), dynamics, strings, layout, notes);
        }
        Ok(None) => {}
        Err(reason) => notes.note(format!(
            "needed libraries and rpaths: the dynamic table cannot be read: {reason}"
        )),
    }
    elf_symbols(file, layout, notes);
}

/// The dynamic entries and their string table: from the `SHT_DYNAMIC`
/// section, or from `PT_DYNAMIC` (with `DT_STRTAB`/`DT_STRSZ` mapped through
/// `PT_LOAD`) when the file has no such section. `None` for static files.
#[allow(clippy::type_complexity)]
fn elf_dynamic<'data, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, Elf, &'data [u8]>,
) -> Result<Option<(&'data [Elf::Dyn], &'data [u8])>, String> {
    let endian = file.endian();
    let data = file.data();
    let sections = file.elf_section_table();
    match sections.dynamic(endian, data) {
        Ok(Some((dynamics, link))) => {
            let strings = sections
                .section(link)
                .and_then(|section| section.data(endian, data))
                .map_err(|error| format!("its string table: {error}"))?;
            return Ok(Some((dynamics, strings)));
        }
        Ok(None) => {}
        Err(error) => return Err(error.to_string()),
    }
    let headers = file.elf_program_headers();
    let Some(header) = headers
        .iter()
        .find(|header| header.p_type(endian) == elf::PT_DYNAMIC)
    else {
        return Ok(None);
    };
    let dynamics = header
        .dynamic(endian, data)
        .map_err(|error| error.to_string())?
        .unwrap_or(&[]);
    let (mut strtab, mut strsz) = (None, None);
    for entry in dynamics.iter().take(MAX_DYNAMIC_ENTRIES) {
        let tag = entry.tag(endian);
        if tag == elf::DT_NULL {
            break;
        } else if tag == elf::DT_STRTAB {
            strtab = Some(entry.val(endian));
        } else if tag == elf::DT_STRSZ {
            strsz = Some(entry.val(endian));
        }
    }
    let (Some(address), Some(size)) = (strtab, strsz) else {
        return Err("PT_DYNAMIC has no DT_STRTAB or DT_STRSZ".to_owned());
    };
    let offset = headers
        .iter()
        .filter(|header| header.p_type(endian) == elf::PT_LOAD)
        .find_map(|header| {
            let delta = address.checked_sub(header.p_vaddr(endian).into())?;
            let backed: u64 = header.p_filesz(endian).into();
            let start: u64 = header.p_offset(endian).into();
            (delta < backed).then(|| start.checked_add(delta))?
        })
        .ok_or_else(|| format!("DT_STRTAB {} is not in the file", format_address(address)))?;
    let strings = data
        .read_bytes_at(offset, size)
        .map_err(|()| "DT_STRTAB/DT_STRSZ run past the end of the file".to_owned())?;
    Ok(Some((dynamics, strings)))
}

fn elf_dynamic_entries<D: object::read::elf::Dyn<Endian = Endianness>>(
    endian: Endianness,
    dynamics: &[D],
    strings: &[u8],
    layout: &mut Layout,
    notes: &mut Notes,
) {
    let mut needed = Capped::new();
    let mut rpaths = Capped::new();
    let mut errors = 0usize;
    let mut first_error = None;
    for (index, entry) in dynamics.iter().enumerate() {
        if index >= MAX_DYNAMIC_ENTRIES {
            notes.note(format!(
                "needed libraries and rpaths: reading stopped after {MAX_DYNAMIC_ENTRIES} \
                 dynamic entries"
            ));
            break;
        }
        let tag = entry.tag(endian);
        if tag == elf::DT_NULL {
            break;
        }
        let is_needed = tag == elf::DT_NEEDED;
        if !is_needed && tag != elf::DT_RPATH && tag != elf::DT_RUNPATH {
            continue;
        }
        // Do not read strings that could not be kept anyway.
        if (is_needed && needed.is_full()) || (!is_needed && rpaths.is_full()) {
            if is_needed {
                needed.dropped = true;
            } else {
                rpaths.dropped = true;
            }
            continue;
        }
        let value = entry.val(endian);
        let Some(text) = c_string(strings, value) else {
            errors += 1;
            first_error.get_or_insert_with(|| {
                format!(
                    "string offset {} is outside the dynamic string table",
                    format_address(value)
                )
            });
            continue;
        };
        if is_needed {
            needed.push(notes.name(text));
        } else {
            for path in text.split(|&byte| byte == b':') {
                if !path.is_empty() && !rpaths.push(notes.name(path)) {
                    break;
                }
            }
        }
    }
    if errors > 0 {
        notes.note(format!(
            "needed libraries and rpaths: {errors} dynamic entries could not be read \
             (first error: {})",
            first_error.unwrap_or_default()
        ));
    }
    layout.needed_libraries = needed.finish("needed libraries", notes);
    layout.rpaths = rpaths.finish("rpaths", notes);
}

/// Imports (undefined dynamic symbols) and exports (global or weak defined
/// dynamic symbols) from `.dynsym`, read here rather than through `object`
/// so that every name is read through a bounded window.
fn elf_symbols<'data, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, Elf, &'data [u8]>,
    layout: &mut Layout,
    notes: &mut Notes,
) {
    let endian = file.endian();
    let table: &SymbolTable<'data, Elf, &'data [u8]> = file.elf_dynamic_symbol_table();
    if table.is_empty() {
        let has_dynamic = file
            .elf_program_headers()
            .iter()
            .any(|header| header.p_type(endian) == elf::PT_DYNAMIC);
        if has_dynamic && file.elf_section_table().is_empty() {
            notes.note(
                "imports and exports: the file has no section headers, so its dynamic \
                 symbol table (.dynsym) was not found",
            );
        }
        return;
    }
    let strings = match file
        .elf_section_table()
        .section(table.string_section())
        .and_then(|section| section.data(endian, file.data()))
    {
        Ok(strings) => strings,
        Err(error) => {
            notes.note(format!(
                "imports and exports: the dynamic symbol names cannot be read: {error}"
            ));
            return;
        }
    };
    let mut imports = Capped::new();
    let mut seen = HashSet::new();
    let mut exports = Capped::new();
    let mut without_address = 0usize;
    let mut bad_names = 0usize;
    for (index, symbol) in table.symbols().iter().enumerate().skip(1) {
        if index >= MAX_DYNAMIC_SYMBOLS {
            notes.note(format!(
                "imports and exports: reading stopped after {MAX_DYNAMIC_SYMBOLS} dynamic symbols"
            ));
            break;
        }
        // Once a list is full, later entries for it are only noted as
        // dropped (no name is read), so the scan stays cheap.
        if index % 4096 == 0 && notes.expired("imports and exports") {
            break;
        }
        let section = symbol.st_shndx(endian);
        let address = if section == elf::SHN_UNDEF {
            if imports.is_full() {
                imports.dropped = true;
                continue;
            }
            None
        } else {
            if symbol.st_bind() == elf::STB_LOCAL {
                continue;
            }
            let kind = symbol.st_type();
            let value: u64 = symbol.st_value(endian).into();
            let address = if section == elf::SHN_ABS || kind == elf::STT_TLS {
                None
            } else if section.is_special() && section != elf::SHN_XINDEX {
                // SHN_COMMON and processor-specific values.
                continue;
            } else if kind == elf::STT_NOTYPE
                || kind == elf::STT_OBJECT
                || kind == elf::STT_FUNC
                || kind == elf::STT_GNU_IFUNC
            {
                Some(value)
            } else {
                continue;
            };
            let Some(address) = address else {
                without_address += 1;
                continue;
            };
            if exports.is_full() {
                exports.dropped = true;
                continue;
            }
            Some(address)
        };
        let Some(name) = c_string(strings, symbol.st_name(endian).into()) else {
            bad_names += 1;
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let name = notes.name(name);
        match address {
            None => {
                let import = LayoutImport {
                    library: String::new(),
                    name,
                };
                if seen.insert(import.name.clone()) {
                    imports.push(import);
                }
            }
            Some(address) => {
                exports.push(LayoutExport {
                    name,
                    address: format_address(address),
                });
            }
        }
    }
    if bad_names > 0 {
        notes.note(format!(
            "imports and exports: {bad_names} dynamic symbols have a name outside the string \
             table and are not listed"
        ));
    }
    note_without_address(without_address, notes);
    layout.imports = imports.finish("imports", notes);
    layout.exports = exports.finish("exports", notes);
}

// ----------------------------------------------------------------- Mach-O

fn macho_layout<'data, Mach: MachHeader<Endian = Endianness>>(
    file: &object::File<'data>,
    macho: &MachOFile<'data, Mach, &'data [u8]>,
    layout: &mut Layout,
    notes: &mut Notes,
) {
    let endian = macho.endian();
    let mut needed = Capped::new();
    let mut rpaths = Capped::new();
    let mut signed = false;
    let mut build_versions = Vec::new();
    let mut minimum_versions = Vec::new();
    let mut exports_trie = None;
    let mut dyld_info_exports = None;
    let mut bad_strings = 0usize;
    match macho.macho_load_commands() {
        Ok(mut commands) => {
            for index in 0.. {
                if index >= MAX_LOAD_COMMANDS {
                    notes.note(format!(
                        "load commands: reading stopped after {MAX_LOAD_COMMANDS} commands"
                    ));
                    break;
                }
                let command = match commands.next() {
                    Ok(Some(command)) => command,
                    Ok(None) => break,
                    Err(error) => {
                        notes.note(format!(
                            "load commands: reading stopped at command #{index}: {error}"
                        ));
                        break;
                    }
                };
                let variant = match command.variant() {
                    Ok(variant) => variant,
                    Err(error) => {
                        notes.note(format!("load commands: command #{index}: {error}"));
                        continue;
                    }
                };
                match variant {
                    LoadCommandVariant::Dylib(dylib) => {
                        match command.string(endian, dylib.dylib.name) {
                            Ok(name) => {
                                needed.push(notes.name(name));
                            }
                            Err(_) => bad_strings += 1,
                        }
                    }
                    LoadCommandVariant::Rpath(rpath) => match command.string(endian, rpath.path) {
                        Ok(path) => {
                            rpaths.push(notes.name(path));
                        }
                        Err(_) => bad_strings += 1,
                    },
                    LoadCommandVariant::LinkeditData(linkedit) => {
                        let cmd = command.cmd();
                        if cmd == macho::LC_CODE_SIGNATURE {
                            signed = true;
                        } else if cmd == macho::LC_DYLD_EXPORTS_TRIE {
                            exports_trie =
                                Some((linkedit.dataoff.get(endian), linkedit.datasize.get(endian)));
                        }
                    }
                    LoadCommandVariant::DyldInfo(info) => {
                        let size = info.export_size.get(endian);
                        if size != 0 {
                            dyld_info_exports = Some((info.export_off.get(endian), size));
                        }
                    }
                    LoadCommandVariant::BuildVersion(build, _) => {
                        build_versions.push(build_version(
                            platform_name(build.platform.get(endian).0),
                            build.minos.get(endian),
                            build.sdk.get(endian),
                        ));
                    }
                    LoadCommandVariant::VersionMin(minimum) => {
                        let cmd = command.cmd();
                        let platform = if cmd == macho::LC_VERSION_MIN_MACOSX {
                            "macos"
                        } else if cmd == macho::LC_VERSION_MIN_IPHONEOS {
                            "ios"
                        } else if cmd == macho::LC_VERSION_MIN_TVOS {
                            "tvos"
                        } else {
                            "watchos"
                        };
                        minimum_versions.push(build_version(
                            platform.to_owned(),
                            minimum.version.get(endian),
                            minimum.sdk.get(endian),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Err(error) => notes.note(format!("load commands cannot be read: {error}")),
    }
    if bad_strings > 0 {
        notes.note(format!(
            "load commands: {bad_strings} library or rpath names could not be read"
        ));
    }
    layout.needed_libraries = needed.finish("needed libraries", notes);
    layout.rpaths = rpaths.finish("rpaths", notes);
    layout.code_signature = Some(signed);
    let versions = if build_versions.is_empty() {
        minimum_versions
    } else {
        build_versions
    };
    if !versions.is_empty() {
        layout.macho_build_version = Some(versions.join("; "));
    }
    layout.imports = object_imports(file, notes);
    // `object` walks an exports trie without bounding its work, so tries are
    // walked here; without one, exports come from the symbol table.
    layout.exports = match exports_trie.or(dyld_info_exports) {
        Some((offset, size)) => {
            match macho
                .data()
                .read_bytes_at(u64::from(offset), u64::from(size))
            {
                Ok(trie) => trie_exports(trie, text_base(file), notes),
                Err(()) => {
                    notes.note(format!(
                        "exports: the exports trie (offset {offset}, {size} bytes) runs past \
                         the end of the file"
                    ));
                    Vec::new()
                }
            }
        }
        None => object_exports(file, notes),
    };
}

/// Exports trie addresses are offsets from the `__TEXT` segment's address.
fn text_base(file: &object::File<'_>) -> u64 {
    file.segments()
        .take(MAX_LOAD_COMMANDS)
        .find(|segment| segment.name_bytes().ok().flatten() == Some(b"__TEXT".as_slice()))
        .map_or(0, |segment| segment.address())
}

fn build_version(platform: String, minimum: macho::Version, sdk: macho::Version) -> String {
    let sdk = if sdk.0 == 0 {
        "n/a".to_owned()
    } else {
        version_text(sdk)
    };
    format!("{platform} {} (sdk {sdk})", version_text(minimum))
}

/// `X.Y`, or `X.Y.Z` when Z is not zero (the `otool` spelling).
fn version_text(version: macho::Version) -> String {
    if version.update() == 0 {
        format!("{}.{}", version.major(), version.minor())
    } else {
        format!(
            "{}.{}.{}",
            version.major(),
            version.minor(),
            version.update()
        )
    }
}

fn platform_name(platform: u32) -> String {
    match platform {
        1 => "macos",
        2 => "ios",
        3 => "tvos",
        4 => "watchos",
        5 => "bridgeos",
        6 => "maccatalyst",
        7 => "ios-simulator",
        8 => "tvos-simulator",
        9 => "watchos-simulator",
        10 => "driverkit",
        11 => "visionos",
        12 => "visionos-simulator",
        13 => "firmware",
        14 => "sepos",
        other => return format!("platform {other}"),
    }
    .to_owned()
}

/// Export flags of a trie terminal (`<mach-o/loader.h>`).
const EXPORT_KIND_MASK: u64 = 0x03;
const EXPORT_KIND_ABSOLUTE: u64 = 0x02;
const EXPORT_REEXPORT: u64 = 0x08;
const EXPORT_STUB_AND_RESOLVER: u64 = 0x10;

/// A trie node being walked: where its next edge is, how many edges are
/// left and how long the name was when it was entered.
struct Frame {
    offset: usize,
    cursor: usize,
    children: u8,
    name_len: usize,
}

/// Walks a Mach-O exports trie depth first (the order `llvm-objdump
/// --exports-trie` prints), visiting at most [`MAX_TRIE_NODES`] nodes, so
/// that a trie whose edges share nodes (a DAG with exponentially many
/// paths) cannot hang the walk. Cycles (an edge back to a node on the
/// current path) are skipped, names are capped at [`MAX_NAME_BYTES`].
fn trie_exports(trie: &[u8], base: u64, notes: &mut Notes) -> Vec<LayoutExport> {
    let mut exports = Capped::new();
    let mut without_address = 0usize;
    let mut errors = 0usize;
    let mut first_error: Option<String> = None;
    let mut error = |message: String| {
        errors += 1;
        first_error.get_or_insert(message);
        errors < MAX_ENTRY_ERRORS
    };
    let mut name: Vec<u8> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending = Some(0usize);
    let mut visited = 0usize;
    let mut stopped = None;
    loop {
        if let Some(offset) = pending.take() {
            visited += 1;
            if visited > MAX_TRIE_NODES {
                stopped = Some(format!("after visiting {MAX_TRIE_NODES} trie nodes"));
                break;
            }
            match trie_node(trie, offset) {
                Ok((terminal, children, cursor)) => {
                    if let Some(terminal) = terminal {
                        match trie_terminal(terminal) {
                            Ok(Some(address)) => {
                                let export = LayoutExport {
                                    name: String::from_utf8_lossy(&name).into_owned(),
                                    address: format_address(base.wrapping_add(address)),
                                };
                                if !exports.push(export) {
                                    break;
                                }
                            }
                            Ok(None) => without_address += 1,
                            Err(message) => {
                                if !error(format!("node at offset {offset}: {message}")) {
                                    break;
                                }
                            }
                        }
                    }
                    if children > 0 {
                        if stack.len() >= MAX_TRIE_DEPTH {
                            if !error(format!("the trie is deeper than {MAX_TRIE_DEPTH} nodes")) {
                                break;
                            }
                        } else {
                            stack.push(Frame {
                                offset,
                                cursor,
                                children,
                                name_len: name.len(),
                            });
                        }
                    }
                }
                Err(message) => {
                    if !error(format!("node at offset {offset}: {message}")) {
                        break;
                    }
                }
            }
        }
        let Some(frame) = stack.last_mut() else {
            break;
        };
        name.truncate(frame.name_len);
        if frame.children == 0 {
            stack.pop();
            continue;
        }
        frame.children -= 1;
        let edge = trie_edge(
            trie,
            frame.cursor,
            MAX_NAME_BYTES.saturating_sub(name.len()),
        );
        let (label, child) = match edge {
            Ok((label, child, next)) => {
                frame.cursor = next;
                (label, child)
            }
            Err(message) => {
                // The rest of this node's edges cannot be located.
                let offset = frame.offset;
                frame.children = 0;
                if !error(format!("node at offset {offset}: {message}")) {
                    break;
                }
                continue;
            }
        };
        if stack.iter().any(|frame| frame.offset == child) {
            if !error(format!("an edge loops back to the node at offset {child}")) {
                break;
            }
            continue;
        }
        name.extend_from_slice(label);
        pending = Some(child);
    }
    if let Some(reason) = stopped {
        notes.note(format!("exports: the exports trie walk stopped {reason}"));
    }
    if errors > 0 {
        notes.note(format!(
            "exports: {errors} exports trie entries could not be read (first error: {})",
            first_error.unwrap_or_default()
        ));
    }
    note_without_address(without_address, notes);
    exports.finish("exports", notes)
}

/// Parses the trie node at `offset`: its terminal data (if any), its edge
/// count and the offset of its first edge.
fn trie_node(trie: &[u8], offset: usize) -> Result<(Option<&[u8]>, u8, usize), &'static str> {
    let mut rest = trie.get(offset..).ok_or("offset outside the trie")?;
    let size = usize::try_from(uleb128(&mut rest)?).map_err(|_| "terminal size too large")?;
    let terminal = rest.get(..size).ok_or("terminal data runs past the trie")?;
    let after = rest.get(size..).ok_or("terminal data runs past the trie")?;
    let (&children, edges) = after.split_first().ok_or("missing edge count")?;
    let cursor = trie.len() - edges.len();
    Ok(((size > 0).then_some(terminal), children, cursor))
}

/// Reads the edge at `cursor`: its label (at most `max_label` bytes), the
/// child's offset and where the next edge starts.
fn trie_edge(
    trie: &[u8],
    cursor: usize,
    max_label: usize,
) -> Result<(&[u8], usize, usize), &'static str> {
    let rest = trie.get(cursor..).ok_or("edge outside the trie")?;
    let window = rest.get(..=max_label).unwrap_or(rest);
    let end = window
        .iter()
        .position(|&byte| byte == 0)
        .ok_or("edge label unterminated or longer than the name limit")?;
    let label = rest.get(..end).ok_or("edge outside the trie")?;
    let mut after = rest.get(end + 1..).ok_or("edge outside the trie")?;
    let child = usize::try_from(uleb128(&mut after)?).map_err(|_| "child offset too large")?;
    Ok((label, child, trie.len() - after.len()))
}

/// The address (offset from `__TEXT`) of a terminal; `None` for exports
/// without one (re-exports, absolute symbols).
fn trie_terminal(mut terminal: &[u8]) -> Result<Option<u64>, &'static str> {
    let flags = uleb128(&mut terminal)?;
    if flags & EXPORT_REEXPORT != 0 {
        return Ok(None);
    }
    if flags & EXPORT_STUB_AND_RESOLVER != 0 {
        let stub = uleb128(&mut terminal)?;
        uleb128(&mut terminal)?;
        return Ok(Some(stub));
    }
    let address = uleb128(&mut terminal)?;
    match flags & EXPORT_KIND_MASK {
        EXPORT_KIND_ABSOLUTE => Ok(None),
        // Regular and thread-local (the address of the TLV descriptor).
        0 | 1 => Ok(Some(address)),
        _ => Err("unknown export kind"),
    }
}

/// Reads an unsigned LEB128 value of at most 64 bits (10 bytes).
fn uleb128(bytes: &mut &[u8]) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().enumerate().take(10) {
        let low = u64::from(byte & 0x7f);
        let shift = 7 * index as u32;
        if shift == 63 && low > 1 {
            return Err("ULEB128 value overflows 64 bits");
        }
        value |= low << shift;
        if byte & 0x80 == 0 {
            *bytes = bytes.get(index + 1..).unwrap_or(&[]);
            return Ok(value);
        }
    }
    Err("ULEB128 value truncated or longer than 10 bytes")
}

// --------------------------------------------------------------------- PE

fn pe_layout<'data, Pe: ImageNtHeaders>(
    file: &object::File<'data>,
    pe: &PeFile<'data, Pe, &'data [u8]>,
    layout: &mut Layout,
    notes: &mut Notes,
) {
    let optional = pe.nt_headers().optional_header();
    layout.pe_subsystem = Some(subsystem_name(optional.subsystem().0));
    layout.code_signature = Some(
        pe.data_directory(pe::IMAGE_DIRECTORY_ENTRY_SECURITY)
            .is_some_and(|directory| directory.size.get(LE) != 0),
    );
    layout.needed_libraries = match pe.import_libraries() {
        Ok(libraries) => {
            let mut list = Capped::new();
            let shared: &Notes = notes;
            let drained = drain(libraries, shared.deadline, |library| {
                list.push(shared.name(library.name()))
            });
            notes.drained("needed libraries", drained);
            list.finish("needed libraries", notes)
        }
        Err(error) => {
            notes.note(format!(
                "needed libraries: the import tables cannot be read: {error}"
            ));
            Vec::new()
        }
    };
    layout.imports = object_imports(file, notes);
    layout.exports = object_exports(file, notes);
    layout.tls_callbacks = tls_callbacks(pe, optional.image_base(), notes);
}

fn subsystem_name(subsystem: u16) -> String {
    match subsystem {
        0 => "unknown",
        1 => "native",
        2 => "windows-gui",
        3 => "windows-cui",
        5 => "os2-cui",
        7 => "posix-cui",
        8 => "native-windows",
        9 => "windows-ce-gui",
        10 => "efi-application",
        11 => "efi-boot-service-driver",
        12 => "efi-runtime-driver",
        13 => "efi-rom",
        14 => "xbox",
        16 => "windows-boot-application",
        17 => "xbox-code-catalog",
        other => return format!("subsystem {other}"),
    }
    .to_owned()
}

/// The TLS directory's `AddressOfCallBacks` array, read up to its zero
/// terminator, at most [`MAX_LAYOUT_ENTRIES`] entries, and only within the
/// file data of the section that holds it.
fn tls_callbacks<'data, Pe: ImageNtHeaders>(
    pe: &PeFile<'data, Pe, &'data [u8]>,
    image_base: u64,
    notes: &mut Notes,
) -> Vec<String> {
    let Some(directory) = pe.data_directory(pe::IMAGE_DIRECTORY_ENTRY_TLS) else {
        return Vec::new();
    };
    let (rva, _) = directory.address_range();
    if rva == 0 {
        return Vec::new();
    }
    let data = pe.data();
    let sections = pe.section_table();
    let is_64 = pe.nt_headers().is_type_64();
    let Some(bytes) = sections.pe_data_at(data, rva) else {
        notes.note(format!(
            "TLS callbacks: the TLS directory (RVA {}) is not in the file",
            format_address(rva.into())
        ));
        return Vec::new();
    };
    let array = if is_64 {
        bytes
            .read_at::<pe::ImageTlsDirectory64>(0)
            .map(|tls| tls.address_of_call_backs.get(LE))
    } else {
        bytes
            .read_at::<pe::ImageTlsDirectory32>(0)
            .map(|tls| u64::from(tls.address_of_call_backs.get(LE)))
    };
    let Ok(array) = array else {
        notes.note("TLS callbacks: the TLS directory is truncated");
        return Vec::new();
    };
    if array == 0 {
        return Vec::new();
    }
    let Some(entries) = array
        .checked_sub(image_base)
        .and_then(|offset| u32::try_from(offset).ok())
        .and_then(|offset| sections.pe_data_at(data, offset))
    else {
        notes.note(format!(
            "TLS callbacks: the callback array at {} is not in the file",
            format_address(array)
        ));
        return Vec::new();
    };
    let width = if is_64 { 8 } else { 4 };
    let mut list = Capped::new();
    let mut terminated = false;
    for entry in entries.chunks_exact(width).take(MAX_LAYOUT_ENTRIES + 1) {
        // `chunks_exact` makes every entry exactly `width` bytes long.
        let address = if is_64 {
            entry.try_into().map_or(0, u64::from_le_bytes)
        } else {
            entry
                .try_into()
                .map_or(0, |bytes| u64::from(u32::from_le_bytes(bytes)))
        };
        if address == 0 {
            terminated = true;
            break;
        }
        if !list.push(format_address(address)) {
            break;
        }
    }
    if !terminated && !list.dropped {
        notes.note(format!(
            "TLS callbacks: the callback array at {} has no zero terminator within its \
             section's file data; the {} entries found are listed",
            format_address(array),
            list.items.len()
        ));
    }
    list.finish("TLS callbacks", notes)
}

#[cfg(test)]
mod tests {
    //! Oracles: LLVM's readers (`llvm-readelf`, `llvm-readobj`,
    //! `llvm-objdump`, `llvm-otool`, `llvm-nm`) on pinned real binaries and
    //! on a program compiled here, and hand-built bytes whose layout is known
    //! by construction.

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::super::fixtures::{self, PE_BASE, fixture, skip_or_fail};
    use super::super::{DocumentInfo, NativeImage, documents};
    use super::*;
    use crate::providers::ProviderError;

    // ------------------------------------------------------------ support

    /// The first of `names` that runs, or `None` (after skip-or-fail).
    fn tool(names: &[&str]) -> Option<String> {
        let found = names.iter().find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|output| output.status.success())
        });
        if found.is_none() {
            skip_or_fail(&format!("none of {names:?} is installed"));
        }
        found.map(|name| (*name).to_owned())
    }

    fn run(tool: &str, args: &[&str], path: &Path) -> String {
        let output = Command::new(tool)
            .args(args)
            .arg(path)
            .output()
            .unwrap_or_else(|error| panic!("run {tool}: {error}"));
        assert!(
            output.status.success(),
            "{tool} {args:?} {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn hex(text: &str) -> u64 {
        let digits = text
            .trim()
            .trim_start_matches("0x")
            .trim_start_matches("0X");
        u64::from_str_radix(digits, 16).unwrap_or_else(|_| panic!("not hex: {text:?}"))
    }

    fn addr(text: &str) -> String {
        format_address(hex(text))
    }

    fn open_layouts(path: &Path) -> Vec<(DocumentInfo, Layout)> {
        let image = NativeImage::open(path).expect("open fixture");
        (0..image.documents().len())
            .map(|index| {
                let layout = image.layout(index).expect("layout");
                (image.documents()[index].clone(), layout)
            })
            .collect()
    }

    /// Layout straight from bytes (no temporary file), for hostile sweeps:
    /// every document `classify` accepts.
    fn layouts_of_bytes(bytes: &[u8]) -> Vec<Layout> {
        let Ok(classified) = documents::classify(bytes, Path::new("hostile")) else {
            return Vec::new();
        };
        classified
            .documents
            .iter()
            .zip(&classified.ranges)
            .filter_map(|(info, range)| {
                let data = bytes.get(range.clone())?;
                let file = object::File::parse(data).ok()?;
                Some(layout(&file, info))
            })
            .collect()
    }

    fn layout_of_bytes(bytes: &[u8]) -> Layout {
        let mut layouts = layouts_of_bytes(bytes);
        assert_eq!(layouts.len(), 1, "expected one document");
        layouts.remove(0)
    }

    // ------------------------------------------------------------ ELF fixture

    #[test]
    fn elf_fixture_matches_llvm_readelf_and_nm() {
        let Some(path) = fixture("watcher-linux-x64.node") else {
            return;
        };
        let Some(readelf) = tool(&["llvm-readelf", "llvm-readelf-14"]) else {
            return;
        };
        let Some(nm) = tool(&["llvm-nm", "llvm-nm-14"]) else {
            return;
        };
        let layouts = open_layouts(&path);
        let [(_, layout)] = layouts.as_slice() else {
            panic!("one document expected");
        };
        assert_eq!(layout.format, Format::Elf);
        assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
        assert_eq!(layout.code_signature, None);
        assert_eq!(layout.pe_subsystem, None);

        // DT_NEEDED, in table order.
        let dynamic = run(&readelf, &["-d", "-W"], &path);
        let needed: Vec<String> = dynamic
            .lines()
            .filter(|line| line.contains("(NEEDED)"))
            .filter_map(|line| Some(line.split_once('[')?.1.split_once(']')?.0.to_owned()))
            .collect();
        assert_eq!(needed.len(), 5, "{dynamic}");
        assert_eq!(layout.needed_libraries, needed);
        assert!(layout.rpaths.is_empty());

        // Section headers: name, address, offset, size (index 0 is null).
        let headers = run(&readelf, &["-S", "-W"], &path);
        let mut expected = Vec::new();
        for line in headers.lines() {
            let Some((index, rest)) = line
                .trim_start()
                .strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
            else {
                continue;
            };
            let Ok(index) = index.trim().parse::<usize>() else {
                continue;
            };
            if index == 0 {
                continue;
            }
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let (name, kind) = (fields[0], fields[1]);
            let offset = (kind != "NOBITS").then(|| hex(fields[3]));
            expected.push((name.to_owned(), addr(fields[2]), offset, hex(fields[4])));
        }
        assert_eq!(expected.len(), 27, "{headers}");
        let actual: Vec<_> = layout
            .sections
            .iter()
            .map(|section| {
                (
                    section.name.clone(),
                    section.address.clone(),
                    section.file_offset,
                    section.size,
                )
            })
            .collect();
        assert_eq!(actual, expected);
        let kind = |name: &str| {
            layout
                .sections
                .iter()
                .find(|section| section.name == name)
                .map(|section| section.kind)
        };
        assert_eq!(kind(".text"), Some("text"));
        assert_eq!(kind(".bss"), Some("uninitialized"));
        assert_eq!(kind(".rodata"), Some("read-only-data"));
        assert_eq!(kind(".data"), Some("data"));

        // PT_LOAD program headers.
        let program = run(&readelf, &["-l", "-W"], &path);
        let loads: Vec<LayoutSegment> = program
            .lines()
            .map(str::split_whitespace)
            .map(Iterator::collect::<Vec<_>>)
            .filter(|fields| fields.first() == Some(&"LOAD"))
            .map(|fields| {
                let flags = fields[6..fields.len() - 1].concat();
                let permissions = match (
                    flags.contains('R'),
                    flags.contains('W'),
                    flags.contains('E'),
                ) {
                    (true, false, false) => "r--",
                    (true, false, true) => "r-x",
                    (true, true, false) => "rw-",
                    other => panic!("unexpected flags {other:?}"),
                };
                LayoutSegment {
                    name: None,
                    address: addr(fields[2]),
                    size: hex(fields[5]),
                    file_offset: hex(fields[1]),
                    file_size: hex(fields[4]),
                    permissions: Some(permissions),
                }
            })
            .collect();
        assert_eq!(loads.len(), 4, "{program}");
        assert_eq!(layout.segments, loads);

        let header = run(&readelf, &["-h"], &path);
        let entry = header
            .lines()
            .find_map(|line| line.trim().strip_prefix("Entry point address:"))
            .expect("entry line");
        assert_eq!(layout.entry_point, Some(addr(entry)));

        // Imports: undefined dynamic symbols (versions stripped).
        let undefined = run(&nm, &["-D", "--undefined-only"], &path);
        let expected: BTreeSet<String> = undefined
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1))
            .map(|name| name.split('@').next().unwrap_or(name).to_owned())
            .collect();
        let actual: BTreeSet<String> = layout
            .imports
            .iter()
            .map(|import| import.name.clone())
            .collect();
        assert!(expected.len() > 100);
        assert_eq!(actual, expected);
        assert_eq!(actual.len(), layout.imports.len(), "imports are unique");
        assert!(
            layout
                .imports
                .iter()
                .all(|import| import.library.is_empty())
        );

        // Exports: defined dynamic symbols with their addresses.
        let defined = run(&nm, &["-D", "--defined-only"], &path);
        let expected: BTreeSet<(String, String)> = defined
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let value = fields.next()?;
                let name = fields.nth(1)?;
                Some((
                    name.split('@').next().unwrap_or(name).to_owned(),
                    addr(value),
                ))
            })
            .collect();
        let actual: BTreeSet<(String, String)> = layout
            .exports
            .iter()
            .map(|export| (export.name.clone(), export.address.clone()))
            .collect();
        assert_eq!(expected.len(), 663);
        assert_eq!(actual, expected);
        assert!(actual.contains(&(
            "_Z9subscribeRKN4Napi12CallbackInfoE".to_owned(),
            "0x25590".to_owned()
        )));
    }

    // ------------------------------------------------------------- PE fixtures

    /// `llvm-readobj --coff-imports`: (library, symbol) of the import and
    /// delay-import tables, and the library names in order.
    fn coff_imports(text: &str) -> (BTreeSet<(String, String)>, Vec<String>) {
        let mut imports = BTreeSet::new();
        let mut libraries = Vec::new();
        let mut library = String::new();
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("  Name: ") {
                library = name.trim().to_owned();
                libraries.push(library.clone());
            } else if let Some(symbol) = line.trim().strip_prefix("Symbol: ") {
                let name = symbol.rsplit_once(" (").map_or(symbol, |(name, _)| name);
                imports.insert((library.clone(), name.trim().to_owned()));
            }
        }
        (imports, libraries)
    }

    /// The `Section { ... }` blocks of `llvm-readobj --sections`, as
    /// `Key: value` maps.
    fn readobj_sections(text: &str) -> Vec<BTreeMap<String, String>> {
        let mut sections: Vec<BTreeMap<String, String>> = Vec::new();
        for line in text.lines().map(str::trim) {
            if line == "Section {" {
                sections.push(BTreeMap::new());
            } else if let (Some(section), Some((key, value))) =
                (sections.last_mut(), line.split_once(": "))
            {
                section
                    .entry(key.to_owned())
                    .or_insert_with(|| value.to_owned());
            }
        }
        sections
    }

    /// `Key   value` lines of `llvm-objdump -p`.
    fn objdump_field(text: &str, key: &str) -> String {
        text.lines()
            .find_map(|line| {
                let rest = line.strip_prefix(key)?;
                rest.starts_with(char::is_whitespace)
                    .then(|| rest.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("{key} not in llvm-objdump -p output"))
    }

    fn subsystem_from_objdump(text: &str) -> &'static str {
        let field = objdump_field(text, "Subsystem");
        if field.ends_with("(Windows GUI)") {
            "windows-gui"
        } else if field.ends_with("(Windows CUI)") {
            "windows-cui"
        } else {
            panic!("unexpected subsystem {field}")
        }
    }

    #[test]
    fn pe_dll_fixture_matches_llvm_objdump_and_readobj() {
        let Some(path) = fixture("watcher-win32-x64.node") else {
            return;
        };
        let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
            return;
        };
        let Some(readobj) = tool(&["llvm-readobj", "llvm-readobj-14"]) else {
            return;
        };
        let layouts = open_layouts(&path);
        let [(_, layout)] = layouts.as_slice() else {
            panic!("one document expected");
        };
        assert_eq!(layout.format, Format::Pe);
        assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);

        let private = run(&objdump, &["-p"], &path);
        let image_base = hex(&objdump_field(&private, "ImageBase"));
        let entry = hex(&objdump_field(&private, "AddressOfEntryPoint"));
        assert_eq!(layout.entry_point, Some(format_address(image_base + entry)));
        assert_eq!(layout.entry_point.as_deref(), Some("0x18002e460"));
        assert_eq!(
            layout.pe_subsystem.as_deref(),
            Some(subsystem_from_objdump(&private))
        );
        let security = private
            .lines()
            .find(|line| line.starts_with("Entry 4 "))
            .and_then(|line| line.split_whitespace().nth(3))
            .expect("security directory line");
        assert_eq!(layout.code_signature, Some(hex(security) != 0));

        // Export table: ordinal, RVA, name.
        let exports_text = private.split_once("Export Table:").expect("export table").1;
        let expected: BTreeSet<(String, String)> = exports_text
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [ordinal, rva, name] = fields.as_slice() else {
                    return None;
                };
                ordinal.parse::<u32>().ok()?;
                Some(((*name).to_owned(), format_address(image_base + hex(rva))))
            })
            .collect();
        assert_eq!(expected.len(), 2);
        let actual: BTreeSet<(String, String)> = layout
            .exports
            .iter()
            .map(|export| (export.name.clone(), export.address.clone()))
            .collect();
        assert_eq!(actual, expected);

        // Imports: llvm-objdump -p lists the import table (not the delay
        // one); llvm-readobj lists both.
        let (expected, libraries) = coff_imports(&run(&readobj, &["--coff-imports"], &path));
        let actual: BTreeSet<(String, String)> = layout
            .imports
            .iter()
            .map(|import| (import.library.clone(), import.name.clone()))
            .collect();
        assert_eq!(actual, expected);
        assert_eq!(layout.needed_libraries, libraries);
        assert_eq!(libraries, ["KERNEL32.dll", "node.exe"]);
        let import_table = private
            .split_once("The Import Tables:")
            .expect("import tables")
            .1
            .split_once("Export Table:")
            .expect("export table")
            .0;
        let kernel32: BTreeSet<String> = import_table
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [hint, name] = fields.as_slice() else {
                    return None;
                };
                hint.parse::<u32>().ok()?;
                Some((*name).to_owned())
            })
            .collect();
        let ours: BTreeSet<String> = layout
            .imports
            .iter()
            .filter(|import| import.library == "KERNEL32.dll")
            .map(|import| import.name.clone())
            .collect();
        assert!(kernel32.len() > 100);
        assert_eq!(ours, kernel32);

        // Sections vs llvm-readobj's section headers: name, address, size
        // in memory (VirtualSize; `llvm-objdump -h` prints the raw size) and
        // file offset (none without file data).
        let headers = readobj_sections(&run(&readobj, &["--sections"], &path));
        let expected: Vec<(String, String, u64, Option<u64>)> = headers
            .iter()
            .map(|section| {
                let name = section["Name"]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default();
                let virtual_size = hex(&section["VirtualSize"]);
                let raw_size: u64 = section["RawDataSize"].parse().expect("RawDataSize");
                (
                    name.to_owned(),
                    format_address(image_base + hex(&section["VirtualAddress"])),
                    virtual_size,
                    (raw_size.min(virtual_size) > 0).then(|| hex(&section["PointerToRawData"])),
                )
            })
            .collect();
        assert_eq!(expected.len(), 8);
        let actual: Vec<(String, String, u64, Option<u64>)> = layout
            .sections
            .iter()
            .map(|section| {
                (
                    section.name.clone(),
                    section.address.clone(),
                    section.size,
                    section.file_offset,
                )
            })
            .collect();
        assert_eq!(actual, expected);
        // And llvm-objdump -h agrees on names and addresses.
        let listed: Vec<(String, String)> = run(&objdump, &["-h"], &path)
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [index, name, _size, vma, _kind] = fields.as_slice() else {
                    return None;
                };
                index.parse::<u32>().ok()?;
                Some(((*name).to_owned(), addr(vma)))
            })
            .collect();
        let ours: Vec<(String, String)> = actual
            .iter()
            .map(|(name, address, ..)| (name.clone(), address.clone()))
            .collect();
        assert_eq!(ours, listed);
        let text = &layout.segments[0];
        assert_eq!(text.name.as_deref(), Some(".text"));
        assert_eq!(text.permissions, Some("r-x"));
        assert_eq!(text.file_offset, hex(&headers[0]["PointerToRawData"]));

        // TLS callbacks: AddressOfCallBacks from llvm-readobj, mapped to the
        // file with llvm-readobj's section table, read here until zero.
        let tls = run(&readobj, &["--coff-tls-directory"], &path);
        let array = tls
            .lines()
            .find_map(|line| line.trim().strip_prefix("AddressOfCallBacks:"))
            .map(hex)
            .expect("AddressOfCallBacks");
        let offset = headers.iter().find_map(|section| {
            let start = image_base + hex(&section["VirtualAddress"]);
            let size: u64 = section["RawDataSize"].parse().expect("RawDataSize");
            (start..start + size)
                .contains(&array)
                .then(|| hex(&section["PointerToRawData"]) + (array - start))
        });
        let bytes = std::fs::read(&path).expect("read fixture");
        let mut expected = Vec::new();
        let mut at = usize::try_from(offset.expect("callback array in a section")).unwrap();
        loop {
            let value = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            if value == 0 {
                break;
            }
            expected.push(format_address(value));
            at += 8;
        }
        // This DLL's array is empty (its first entry is the terminator); the
        // hand-built PEs below cover non-empty arrays.
        assert_eq!(layout.tls_callbacks, expected);
    }

    #[test]
    fn pe_exe_fixture_entry_subsystem_and_imports() {
        let Some(path) = fixture("esbuild-win32-x64.exe") else {
            return;
        };
        let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
            return;
        };
        let Some(readobj) = tool(&["llvm-readobj", "llvm-readobj-14"]) else {
            return;
        };
        let layouts = open_layouts(&path);
        let [(_, layout)] = layouts.as_slice() else {
            panic!("one document expected");
        };
        assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
        assert_eq!(layout.entry_point.as_deref(), Some("0x14008c940"));
        assert_eq!(layout.pe_subsystem.as_deref(), Some("windows-cui"));
        let private = run(&objdump, &["-p"], &path);
        assert_eq!(
            layout.pe_subsystem.as_deref(),
            Some(subsystem_from_objdump(&private))
        );
        let listing = run(&readobj, &["--coff-imports"], &path);
        // 50 import entries (some names twice), listed once each here.
        assert_eq!(listing.matches("Symbol: ").count(), 50);
        let (expected, libraries) = coff_imports(&listing);
        assert_eq!(layout.imports.len(), expected.len());
        let actual: BTreeSet<(String, String)> = layout
            .imports
            .iter()
            .map(|import| (import.library.clone(), import.name.clone()))
            .collect();
        assert_eq!(actual, expected);
        assert_eq!(layout.needed_libraries, libraries);
        assert_eq!(layout.needed_libraries, ["kernel32.dll"]);
        assert!(layout.exports.is_empty());
        assert_eq!(layout.code_signature, Some(false));
        assert!(layout.tls_callbacks.is_empty());
    }

    // ---------------------------------------------------------- Mach-O fixture

    /// One `Load command` block of `llvm-objdump --macho --private-headers`:
    /// its key/value lines, and its `Section` blocks.
    #[derive(Default)]
    struct Command_ {
        fields: BTreeMap<String, String>,
        sections: Vec<BTreeMap<String, String>>,
    }

    fn load_commands(text: &str) -> Vec<Command_> {
        let mut commands: Vec<Command_> = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("Load command ") {
                commands.push(Command_::default());
                continue;
            }
            let Some(command) = commands.last_mut() else {
                continue;
            };
            if line == "Section" {
                command.sections.push(BTreeMap::new());
                continue;
            }
            let Some((key, value)) = line.split_once(char::is_whitespace) else {
                continue;
            };
            let target = command.sections.last_mut().unwrap_or(&mut command.fields);
            target
                .entry(key.to_owned())
                .or_insert_with(|| value.trim().to_owned());
        }
        commands
    }

    fn protection(text: &str) -> &'static str {
        match text {
            "r--" => "r--",
            "r-x" => "r-x",
            "rw-" => "rw-",
            "---" => "---",
            "rwx" => "rwx",
            other => panic!("unexpected protection {other}"),
        }
    }

    #[test]
    fn macho_universal_fixture_matches_llvm_per_slice() {
        let Some(path) = fixture("fsevents.node") else {
            return;
        };
        let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
            return;
        };
        let Some(otool) = tool(&["llvm-otool", "llvm-otool-14"]) else {
            return;
        };
        let layouts = open_layouts(&path);
        assert_eq!(layouts.len(), 2);
        let mut signed = Vec::new();
        for (info, layout) in &layouts {
            let arch = info.architecture.as_str();
            let arch_flag = format!("--arch={arch}");
            assert_eq!(layout.format, Format::MachO);
            assert!(
                layout.limitations.is_empty(),
                "{arch}: {:?}",
                layout.limitations
            );

            // Load dylibs: llvm-otool -L.
            let libraries = run(&otool, &["-L", "-arch", arch], &path);
            let expected: Vec<String> = libraries
                .lines()
                .skip(1)
                .filter_map(|line| Some(line.trim().split_once(" (compatibility")?.0.to_owned()))
                .collect();
            assert_eq!(expected.len(), 4, "{libraries}");
            assert_eq!(layout.needed_libraries, expected, "{arch}");

            // Sections: llvm-objdump -h gives name, size, VMA; the private
            // headers give the segment name and file offset.
            let headers = run(&objdump, &["--macho", "-h", &arch_flag], &path);
            let listed: Vec<(String, u64, String)> = headers
                .lines()
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let [index, name, size, vma, ..] = fields.as_slice() else {
                        return None;
                    };
                    index.parse::<u32>().ok()?;
                    Some(((*name).to_owned(), hex(size), addr(vma)))
                })
                .collect();
            assert!(listed.len() >= 8, "{headers}");
            let actual: Vec<(String, u64, String)> = layout
                .sections
                .iter()
                .map(|section| (section.name.clone(), section.size, section.address.clone()))
                .collect();
            assert_eq!(actual, listed, "{arch}");

            let private = run(
                &objdump,
                &["--macho", "--private-headers", &arch_flag],
                &path,
            );
            let commands = load_commands(&private);
            let segments: Vec<&Command_> = commands
                .iter()
                .filter(|command| {
                    command.fields.get("cmd").map(String::as_str) == Some("LC_SEGMENT_64")
                })
                .collect();
            let sections: Vec<(String, String, Option<u64>)> = segments
                .iter()
                .flat_map(|segment| &segment.sections)
                .map(|section| {
                    let zero_fill = section["type"].contains("ZEROFILL");
                    (
                        section["sectname"].clone(),
                        section["segname"].clone(),
                        (!zero_fill).then(|| section["offset"].parse().expect("offset")),
                    )
                })
                .collect();
            let actual: Vec<(String, String, Option<u64>)> = layout
                .sections
                .iter()
                .map(|section| {
                    (
                        section.name.clone(),
                        section.segment.clone().unwrap_or_default(),
                        section.file_offset,
                    )
                })
                .collect();
            assert_eq!(actual, sections, "{arch}");
            let expected_segments: Vec<LayoutSegment> = segments
                .iter()
                .map(|segment| LayoutSegment {
                    name: Some(segment.fields["segname"].clone()),
                    address: addr(&segment.fields["vmaddr"]),
                    size: hex(&segment.fields["vmsize"]),
                    file_offset: segment.fields["fileoff"].parse().expect("fileoff"),
                    file_size: segment.fields["filesize"].parse().expect("filesize"),
                    permissions: Some(protection(&segment.fields["initprot"])),
                })
                .collect();
            assert_eq!(layout.segments, expected_segments, "{arch}");

            let has_signature = commands.iter().any(|command| {
                command.fields.get("cmd").map(String::as_str) == Some("LC_CODE_SIGNATURE")
            });
            assert_eq!(layout.code_signature, Some(has_signature), "{arch}");
            signed.push(has_signature);

            let build = commands
                .iter()
                .find(|command| {
                    command.fields.get("cmd").map(String::as_str) == Some("LC_BUILD_VERSION")
                })
                .expect("LC_BUILD_VERSION");
            let expected = format!(
                "{} {} (sdk {})",
                build.fields["platform"], build.fields["minos"], build.fields["sdk"]
            );
            assert_eq!(
                layout.macho_build_version.as_deref(),
                Some(expected.as_str())
            );

            // Exports: the exports trie as llvm-objdump prints it.
            let trie = run(&objdump, &["--macho", "--exports-trie", &arch_flag], &path);
            let expected: BTreeSet<(String, String)> = trie
                .lines()
                .filter(|line| line.starts_with("0x"))
                .filter_map(|line| {
                    let mut fields = line.split_whitespace();
                    let address = fields.next()?;
                    Some((fields.next()?.to_owned(), addr(address)))
                })
                .collect();
            assert!(expected.len() >= 10, "{trie}");
            let actual: BTreeSet<(String, String)> = layout
                .exports
                .iter()
                .map(|export| (export.name.clone(), export.address.clone()))
                .collect();
            assert_eq!(actual, expected, "{arch}");

            // Imports: the bind tables' (dylib, symbol), with llvm's short
            // dylib names ("libSystem" for /usr/lib/libSystem.B.dylib) and
            // "flat-namespace" for flat lookups, which have no library.
            let binds = run(
                &objdump,
                &[
                    "--macho",
                    "--bind",
                    "--lazy-bind",
                    "--weak-bind",
                    &arch_flag,
                ],
                &path,
            );
            let mut expected = BTreeSet::new();
            let mut dylib_column = None;
            for line in binds.lines() {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if fields.first() == Some(&"segment") {
                    dylib_column = fields.iter().position(|field| *field == "dylib");
                } else if line.starts_with("__") {
                    let symbol = fields[fields.len() - 1].to_owned();
                    let dylib = dylib_column.map(|column| match fields[column] {
                        "flat-namespace" => String::new(),
                        short => short.to_owned(),
                    });
                    expected.insert((dylib, symbol));
                }
            }
            assert!(expected.len() >= 10, "{binds}");
            let short = |library: &str| -> String {
                let file = library.rsplit('/').next().unwrap_or(library);
                file.split('.').next().unwrap_or(file).to_owned()
            };
            let actual: BTreeSet<(Option<String>, String)> = layout
                .imports
                .iter()
                .map(|import| (Some(short(&import.library)), import.name.clone()))
                .collect();
            assert_eq!(actual, expected, "{arch}");
            assert!(
                layout.imports.iter().all(|import| import.library.is_empty()
                    || layout.needed_libraries.contains(&import.library)),
                "{arch}: {:?}",
                layout.imports
            );
        }
        // The x86_64 slice is unsigned, the arm64 one is signed: the check
        // above can tell presence from absence.
        assert_eq!(signed, [false, true]);
    }

    #[test]
    fn every_fixture_layout_is_complete() {
        for name in [
            "fsevents.node",
            "watcher-darwin-arm64.node",
            "watcher-win32-x64.node",
            "watcher-linux-x64.node",
            "esbuild-win32-x64.exe",
            "markupsafe-speedups-universal2.so",
        ] {
            let Some(path) = fixture(name) else {
                continue;
            };
            for (info, layout) in open_layouts(&path) {
                assert!(
                    layout.limitations.is_empty(),
                    "{}: {:?}",
                    info.name,
                    layout.limitations
                );
                assert!(!layout.segments.is_empty(), "{}", info.name);
                assert!(!layout.sections.is_empty(), "{}", info.name);
                assert!(!layout.needed_libraries.is_empty(), "{}", info.name);
                assert!(!layout.imports.is_empty(), "{}", info.name);
                let json = serde_json::to_value(&layout).expect("serialize");
                assert!(
                    json["segments"][0]["address"]
                        .as_str()
                        .is_some_and(|a| a.starts_with("0x"))
                );
            }
        }
    }

    // ----------------------------------------------------- compiled program

    #[test]
    fn compiled_program_has_rpath_and_libc() {
        let Some(cc) = tool(&["cc", "gcc", "clang"]) else {
            return;
        };
        let dir = tempfile::tempdir().expect("temporary directory");
        let source = dir.path().join("hello.c");
        std::fs::write(
            &source,
            "#include <stdio.h>\nint main(void) { puts(\"layout\"); return 0; }\n",
        )
        .expect("write source");
        let program = dir.path().join("hello");
        let output = Command::new(&cc)
            .arg("-o")
            .arg(&program)
            .arg(&source)
            .arg("-Wl,-rpath,/opt/test-rpath")
            .output()
            .expect("run cc");
        assert!(
            output.status.success(),
            "cc failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let layouts = open_layouts(&program);
        let [(_, layout)] = layouts.as_slice() else {
            panic!("one document expected");
        };
        assert_eq!(layout.format, Format::Elf);
        assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
        assert!(
            layout.rpaths.iter().any(|path| path == "/opt/test-rpath"),
            "{:?}",
            layout.rpaths
        );
        assert!(
            layout
                .needed_libraries
                .iter()
                .any(|name| name == "libc.so.6"),
            "{:?}",
            layout.needed_libraries
        );
        assert!(layout.imports.iter().any(|import| import.name == "puts"));
        assert!(layout.entry_point.is_some());
        if let Some(readelf) = tool(&["llvm-readelf", "llvm-readelf-14", "readelf"]) {
            let dynamic = run(&readelf, &["-d", "-W"], &program);
            let paths: Vec<String> = dynamic
                .lines()
                .filter(|line| line.contains("(RUNPATH)") || line.contains("(RPATH)"))
                .filter_map(|line| Some(line.split_once('[')?.1.split_once(']')?.0.to_owned()))
                .flat_map(|paths| paths.split(':').map(str::to_owned).collect::<Vec<_>>())
                .collect();
            assert_eq!(layout.rpaths, paths);
        }
    }

    // -------------------------------------------------- hand-built: ELF

    fn put(out: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if out.len() < at + bytes.len() {
            out.resize(at + bytes.len(), 0);
        }
        out[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// A little-endian ELF64 shared object with a `PT_LOAD` covering the
    /// whole file, a `PT_DYNAMIC`, and (if `section_headers`) `.dynstr`,
    /// `.dynamic` and `.shstrtab` sections. `DT_STRTAB`/`DT_STRSZ` come
    /// first, then `entries`, then `DT_NULL`. Addresses equal offsets.
    fn dynamic_elf(strings: &[u8], entries: &[(i64, u64)], section_headers: bool) -> Vec<u8> {
        const DYNSTR: usize = 0x100;
        let dynamic = (DYNSTR + strings.len()).next_multiple_of(8);
        let mut table = vec![(5i64, DYNSTR as u64), (10, strings.len() as u64)];
        table.extend_from_slice(entries);
        table.push((0, 0));
        let dynamic_size = table.len() * 16;
        let shstrtab = dynamic + dynamic_size;
        let names = b"\0.dynstr\0.dynamic\0.shstrtab\0";
        let shoff = (shstrtab + names.len()).next_multiple_of(8);
        let end = shoff + if section_headers { 4 * 64 } else { 0 };

        let mut out = vec![0u8; end];
        put(&mut out, 0, b"\x7fELF\x02\x01\x01");
        put(&mut out, 16, &3u16.to_le_bytes());
        put(&mut out, 18, &62u16.to_le_bytes());
        put(&mut out, 20, &1u32.to_le_bytes());
        put(&mut out, 32, &64u64.to_le_bytes());
        put(
            &mut out,
            40,
            &(if section_headers { shoff as u64 } else { 0 }).to_le_bytes(),
        );
        put(&mut out, 52, &64u16.to_le_bytes());
        put(&mut out, 54, &56u16.to_le_bytes());
        put(&mut out, 56, &2u16.to_le_bytes());
        put(&mut out, 58, &64u16.to_le_bytes());
        put(
            &mut out,
            60,
            &(if section_headers { 4u16 } else { 0 }).to_le_bytes(),
        );
        put(
            &mut out,
            62,
            &(if section_headers { 3u16 } else { 0 }).to_le_bytes(),
        );
        // PT_LOAD (r--) over the whole file, PT_DYNAMIC over the table.
        for (index, (kind, flags, offset, size)) in
            [(1u32, 4u32, 0usize, end), (2, 6, dynamic, dynamic_size)]
                .into_iter()
                .enumerate()
        {
            let at = 64 + index * 56;
            put(&mut out, at, &kind.to_le_bytes());
            put(&mut out, at + 4, &flags.to_le_bytes());
            for (field, value) in [8, 16, 24].into_iter().zip([offset, offset, offset]) {
                put(&mut out, at + field, &(value as u64).to_le_bytes());
            }
            put(&mut out, at + 32, &(size as u64).to_le_bytes());
            put(&mut out, at + 40, &(size as u64).to_le_bytes());
            put(&mut out, at + 48, &8u64.to_le_bytes());
        }
        put(&mut out, DYNSTR, strings);
        for (index, (tag, value)) in table.iter().enumerate() {
            put(&mut out, dynamic + index * 16, &tag.to_le_bytes());
            put(&mut out, dynamic + index * 16 + 8, &value.to_le_bytes());
        }
        put(&mut out, shstrtab, names);
        if section_headers {
            // name, type, addr/offset, size, link, entsize
            let headers = [
                (1u32, 3u32, DYNSTR, strings.len(), 0u32, 0u64),
                (9, 6, dynamic, dynamic_size, 1, 16),
                (18, 3, shstrtab, names.len(), 0, 0),
            ];
            for (index, (name, kind, offset, size, link, entsize)) in
                headers.into_iter().enumerate()
            {
                let at = shoff + (index + 1) * 64;
                put(&mut out, at, &name.to_le_bytes());
                put(&mut out, at + 4, &kind.to_le_bytes());
                let address = if kind == 6 || index == 0 {
                    offset as u64
                } else {
                    0
                };
                put(&mut out, at + 16, &address.to_le_bytes());
                put(&mut out, at + 24, &(offset as u64).to_le_bytes());
                put(&mut out, at + 32, &(size as u64).to_le_bytes());
                put(&mut out, at + 40, &link.to_le_bytes());
                put(&mut out, at + 48, &1u64.to_le_bytes());
                put(&mut out, at + 56, &entsize.to_le_bytes());
            }
        }
        out
    }

    const DT_NEEDED: i64 = 1;
    const DT_RPATH: i64 = 15;
    const DT_RUNPATH: i64 = 29;

    #[test]
    fn elf_dynamic_entries_from_sections_and_from_pt_dynamic() {
        let strings = b"\0libfoo.so.1\0/a::/b\0libbar.so\0/old\0";
        let entries = [
            (DT_NEEDED, 1),
            (DT_RUNPATH, 13),
            (DT_NEEDED, 20),
            (DT_RPATH, 30),
        ];
        for section_headers in [true, false] {
            let layout = layout_of_bytes(&dynamic_elf(strings, &entries, section_headers));
            assert_eq!(layout.needed_libraries, ["libfoo.so.1", "libbar.so"]);
            assert_eq!(layout.rpaths, ["/a", "/b", "/old"]);
            assert_eq!(layout.segments.len(), 1);
            assert_eq!(layout.segments[0].permissions, Some("r--"));
            if section_headers {
                assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
                let names: Vec<&str> = layout.sections.iter().map(|s| s.name.as_str()).collect();
                assert_eq!(names, [".dynstr", ".dynamic", ".shstrtab"]);
            } else {
                assert!(layout.sections.is_empty());
                assert!(
                    layout
                        .limitations
                        .iter()
                        .any(|l| l.contains("no section headers")),
                    "{:?}",
                    layout.limitations
                );
            }
        }
    }

    #[test]
    fn elf_needed_libraries_are_capped_and_bad_offsets_reported() {
        let entries = vec![(DT_NEEDED, 1u64); MAX_LAYOUT_ENTRIES + 1];
        let layout = layout_of_bytes(&dynamic_elf(b"\0libx.so\0", &entries, true));
        assert_eq!(layout.needed_libraries.len(), MAX_LAYOUT_ENTRIES);
        assert!(
            layout
                .limitations
                .iter()
                .any(|l| l.starts_with("needed libraries truncated at 10000")),
            "{:?}",
            layout.limitations
        );

        let entries = [
            (DT_NEEDED, 1),
            (DT_NEEDED, 0xffff_ffff),
            (DT_RUNPATH, 1 << 40),
        ];
        let layout = layout_of_bytes(&dynamic_elf(b"\0libx.so\0", &entries, true));
        assert_eq!(layout.needed_libraries, ["libx.so"]);
        assert!(layout.rpaths.is_empty());
        assert!(
            layout
                .limitations
                .iter()
                .any(|l| l.contains("2 dynamic entries could not be read")),
            "{:?}",
            layout.limitations
        );

        // A string without terminator longer than the name limit is cut.
        let mut strings = vec![0u8];
        strings.extend(std::iter::repeat_n(b'x', MAX_NAME_BYTES * 3));
        let layout = layout_of_bytes(&dynamic_elf(&strings, &[(DT_NEEDED, 1)], true));
        assert_eq!(layout.needed_libraries.len(), 1);
        assert_eq!(layout.needed_libraries[0].len(), MAX_NAME_BYTES);
        assert!(
            layout.limitations.iter().any(|l| l.contains("were cut")),
            "{:?}",
            layout.limitations
        );
    }

    // --------------------------------------------------- hand-built: PE

    const PE_OPTIONAL: usize = 0x58;
    const PE_RDATA_HEADER: usize = PE_OPTIONAL + 240 + 40;
    const TLS_RVA: u32 = 0x2180;
    const CALLBACKS_RVA: u32 = 0x21b0;

    /// `fixtures::tiny_pe` with a TLS directory whose callback array holds
    /// `callbacks` (then whatever follows); `.rdata` grows to fit.
    fn pe_with_tls(callbacks: &[u64]) -> Vec<u8> {
        let mut out = fixtures::tiny_pe();
        let rdata_file = |rva: u32| 0x400 + (rva as usize - 0x2000);
        let needed = rdata_file(CALLBACKS_RVA) + callbacks.len() * 8;
        let raw_size = (needed - 0x400).next_multiple_of(0x200).max(0x200);
        put(
            &mut out,
            PE_RDATA_HEADER + 8,
            &(raw_size as u32).to_le_bytes(),
        );
        put(
            &mut out,
            PE_RDATA_HEADER + 16,
            &(raw_size as u32).to_le_bytes(),
        );
        out.resize(0x400 + raw_size, 0);
        // Data directory 9 (TLS).
        put(&mut out, PE_OPTIONAL + 112 + 9 * 8, &TLS_RVA.to_le_bytes());
        put(
            &mut out,
            PE_OPTIONAL + 112 + 9 * 8 + 4,
            &40u32.to_le_bytes(),
        );
        let callbacks_va = PE_BASE + u64::from(CALLBACKS_RVA);
        put(
            &mut out,
            rdata_file(TLS_RVA) + 24,
            &callbacks_va.to_le_bytes(),
        );
        for (index, callback) in callbacks.iter().enumerate() {
            put(
                &mut out,
                rdata_file(CALLBACKS_RVA) + index * 8,
                &callback.to_le_bytes(),
            );
        }
        out
    }

    #[test]
    fn pe_tls_callbacks_terminated_unterminated_and_capped() {
        let layout = layout_of_bytes(&pe_with_tls(&[PE_BASE + 0x1000, PE_BASE + 0x1020, 0]));
        assert_eq!(layout.tls_callbacks, ["0x140001000", "0x140001020"]);
        assert_eq!(layout.pe_subsystem.as_deref(), Some("windows-cui"));
        assert_eq!(layout.code_signature, Some(false));
        let exports: BTreeSet<(&str, &str)> = layout
            .exports
            .iter()
            .map(|export| (export.name.as_str(), export.address.as_str()))
            .collect();
        assert_eq!(
            exports,
            BTreeSet::from([
                ("alias_func", "0x140001010"),
                ("exp_data", "0x140002100"),
                ("exp_func", "0x140001010"),
                ("#4", "0x140001020"),
            ])
        );
        // `fwd` is a forwarder (`OTHER.func`): it has no address here.
        assert_eq!(layout.limitations.len(), 1, "{:?}", layout.limitations);
        assert!(layout.limitations[0].contains("1 exports have no address"));

        // The array fills the rest of .rdata with no zero entry.
        let filler = vec![PE_BASE + 0x1000; (0x2200 - CALLBACKS_RVA as usize) / 8];
        let layout = layout_of_bytes(&pe_with_tls(&filler));
        assert_eq!(layout.tls_callbacks.len(), filler.len());
        assert!(
            layout
                .limitations
                .iter()
                .any(|l| l.contains("no zero terminator")),
            "{:?}",
            layout.limitations
        );

        let many = vec![PE_BASE + 0x1000; 2 * MAX_LAYOUT_ENTRIES];
        let layout = layout_of_bytes(&pe_with_tls(&many));
        assert_eq!(layout.tls_callbacks.len(), MAX_LAYOUT_ENTRIES);
        assert!(
            layout
                .limitations
                .iter()
                .any(|l| l.starts_with("TLS callbacks truncated at 10000")),
            "{:?}",
            layout.limitations
        );

        // The array's VA is below the image base.
        let mut bytes = pe_with_tls(&[PE_BASE + 0x1000, 0]);
        put(&mut bytes, 0x400 + 0x180 + 24, &0x10u64.to_le_bytes());
        let layout = layout_of_bytes(&bytes);
        assert!(layout.tls_callbacks.is_empty());
        assert!(
            layout
                .limitations
                .iter()
                .any(|l| l.contains("is not in the file")),
            "{:?}",
            layout.limitations
        );
    }

    // ---------------------------------------------- hand-built: Mach-O

    #[test]
    fn tiny_macho_layout() {
        let layout = layout_of_bytes(&fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64));
        assert_eq!(layout.format, Format::MachO);
        assert_eq!(
            layout.entry_point,
            Some(format_address(fixtures::MACHO_TEXT))
        );
        assert_eq!(layout.code_signature, Some(false));
        assert_eq!(layout.macho_build_version, None);
        assert_eq!(
            layout.segments,
            [LayoutSegment {
                name: Some("__TEXT".to_owned()),
                address: "0x100000000".to_owned(),
                size: 0x1000,
                file_offset: 0,
                file_size: 0x1000,
                permissions: Some("r-x"),
            }]
        );
        assert_eq!(
            layout.sections,
            [LayoutSection {
                name: "__text".to_owned(),
                segment: Some("__TEXT".to_owned()),
                address: format_address(fixtures::MACHO_TEXT),
                size: 0x10,
                file_offset: Some(0x400),
                kind: "text",
            }]
        );
        // No exports trie: exports come from the external symbols.
        let names: BTreeSet<&str> = layout.exports.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, BTreeSet::from(["_main", "_early_weak"]));
    }

    /// `fixtures::tiny_macho` plus `LC_DYLD_EXPORTS_TRIE` (one export `_t`
    /// at `__TEXT` + 0x400), `LC_RPATH`, `LC_LOAD_WEAK_DYLIB`,
    /// `LC_BUILD_VERSION` (macOS 10.13.4, no SDK) and `LC_CODE_SIGNATURE`.
    fn macho_with_commands() -> Vec<u8> {
        fn command(cmd: u32, fixed: &[u32], text: &[u8]) -> Vec<u8> {
            let header = 8 + 4 * fixed.len();
            let size = (header + text.len() + 1).next_multiple_of(8);
            let mut out = Vec::new();
            out.extend_from_slice(&cmd.to_le_bytes());
            out.extend_from_slice(&(size as u32).to_le_bytes());
            for word in fixed {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(text);
            out.resize(size, 0);
            out
        }
        const TRIE: usize = 0xc00;
        // Root: no terminal, one edge "_t" to offset 6; node 6: terminal
        // (flags 0, address 0x400 as ULEB 0x80 0x08), no children.
        let trie = [0u8, 1, b'_', b't', 0, 6, 3, 0, 0x80, 0x08, 0];
        let commands = [
            command(0x8000_0033, &[TRIE as u32, trie.len() as u32], b""),
            command(0x8000_001c, &[12], b"@loader_path/../lib"),
            command(
                0x8000_0018,
                &[24, 2, 0x1_0000, 0x1_0000],
                b"/usr/lib/libweak.dylib",
            ),
            command(0x32, &[1, 0x000a_0d04, 0, 0], b""),
            command(0x1d, &[0xf00, 0x10], b""),
        ];
        let mut out = fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64);
        let word = |out: &[u8], at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
        let (count, size) = (word(&out, 16), word(&out, 20));
        let mut at = 32 + size as usize;
        for command in &commands {
            put(&mut out, at, command);
            at += command.len();
        }
        assert!(at <= 0x400, "load commands overlap __text");
        let added: usize = commands.iter().map(Vec::len).sum();
        put(&mut out, 16, &(count + commands.len() as u32).to_le_bytes());
        put(&mut out, 20, &(size + added as u32).to_le_bytes());
        put(&mut out, TRIE, &trie);
        out
    }

    #[test]
    fn macho_load_commands_and_exports_trie() {
        let layout = layout_of_bytes(&macho_with_commands());
        assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
        assert_eq!(layout.needed_libraries, ["/usr/lib/libweak.dylib"]);
        assert_eq!(layout.rpaths, ["@loader_path/../lib"]);
        assert_eq!(
            layout.macho_build_version.as_deref(),
            Some("macos 10.13.4 (sdk n/a)")
        );
        assert_eq!(layout.code_signature, Some(true));
        // Trie addresses are relative to __TEXT (0x100000000 here); the
        // trie, not the symbol table, is the export list.
        assert_eq!(
            layout.exports,
            [LayoutExport {
                name: "_t".to_owned(),
                address: "0x100000400".to_owned(),
            }]
        );
    }

    fn uleb_padded(value: usize) -> [u8; 2] {
        [0x80 | (value & 0x7f) as u8, (value >> 7) as u8]
    }

    /// A trie of `depth` nodes, each with `fanout` edges labelled `a` to the
    /// next node (a DAG with `fanout^depth` paths); the last node is a
    /// terminal at offset 0x10 when `terminal`.
    fn dag_trie(depth: usize, fanout: u8, terminal: bool) -> Vec<u8> {
        let node_size = 2 + usize::from(fanout) * 4;
        let mut trie = Vec::new();
        for index in 0..depth {
            trie.extend_from_slice(&[0, fanout]);
            for _ in 0..fanout {
                trie.extend_from_slice(b"a\0");
                trie.extend_from_slice(&uleb_padded((index + 1) * node_size));
            }
        }
        if terminal {
            trie.extend_from_slice(&[2, 0, 0x10, 0]);
        } else {
            trie.extend_from_slice(&[0, 0]);
        }
        trie
    }

    #[test]
    fn exports_trie_walk_is_exact_and_bounded() {
        // Root with edges "_a" (regular, 0x10), "_b" (re-export), "_c"
        // (stub 0x20 + resolver 0x30), "_d" (absolute).
        let mut trie = vec![0u8, 4];
        let labels: [&[u8]; 4] = [b"_a\0", b"_b\0", b"_c\0", b"_d\0"];
        let terminals: [&[u8]; 4] = [
            &[2, 0x00, 0x10],
            &[4, 0x08, 0x01, b'x', 0],
            &[3, 0x10, 0x20, 0x30],
            &[2, 0x02, 0x44],
        ];
        let mut offset = 2 + labels.iter().map(|label| label.len() + 1).sum::<usize>();
        for (label, terminal) in labels.iter().zip(terminals) {
            trie.extend_from_slice(label);
            trie.push(offset as u8);
            offset += terminal.len() + 1;
        }
        for terminal in terminals {
            trie.extend_from_slice(terminal);
            trie.push(0);
        }
        let mut notes = Notes::new();
        let exports = trie_exports(&trie, 0x1000, &mut notes);
        assert_eq!(
            exports,
            [
                LayoutExport {
                    name: "_a".to_owned(),
                    address: "0x1010".to_owned()
                },
                LayoutExport {
                    name: "_c".to_owned(),
                    address: "0x1020".to_owned()
                },
            ]
        );
        let limitations = notes.finish();
        assert_eq!(limitations.len(), 1, "{limitations:?}");
        assert!(limitations[0].contains("2 exports have no address"));

        // An edge back to the root is skipped, not followed.
        let mut notes = Notes::new();
        assert!(trie_exports(&[0, 1, b'a', 0, 0], 0, &mut notes).is_empty());
        assert!(notes.finish()[0].contains("loops back"));

        // Exponentially many paths to one terminal: capped exports, fast.
        let started = Instant::now();
        let mut notes = Notes::new();
        let exports = trie_exports(&dag_trie(30, 4, true), 0, &mut notes);
        assert_eq!(exports.len(), MAX_LAYOUT_ENTRIES);
        assert!(notes.finish()[0].starts_with("exports truncated at 10000"));
        // Exponentially many paths and no terminal: the node budget stops it.
        let mut notes = Notes::new();
        assert!(trie_exports(&dag_trie(30, 4, false), 0, &mut notes).is_empty());
        let limitations = notes.finish();
        assert!(
            limitations[0].contains("after visiting 100000 trie nodes"),
            "{limitations:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));

        // Broken numbers and offsets.
        let mut notes = Notes::new();
        let overflowing = [0xffu8; 12];
        assert!(trie_exports(&overflowing, 0, &mut notes).is_empty());
        assert!(trie_exports(&[0, 1, b'a', 0, 0x7f], 0, &mut notes).is_empty());
        assert!(trie_exports(&[], 0, &mut notes).is_empty());
        assert_eq!(notes.finish().len(), 3);
        let mut value: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(uleb128(&mut value), Ok(u64::MAX));
        let mut value: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(uleb128(&mut value).is_err());
    }

    // ------------------------------------------------------------- hostile

    /// xorshift64: deterministic garbage without a dependency.
    fn next_random(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn truncated_and_garbage_inputs_never_panic() {
        let samples = [
            ("tiny elf", fixtures::tiny_elf()),
            (
                "dynamic elf",
                dynamic_elf(b"\0libx.so\0/r\0", &[(DT_NEEDED, 1), (DT_RUNPATH, 9)], true),
            ),
            ("tiny pe", fixtures::tiny_pe()),
            ("pe with tls", pe_with_tls(&[PE_BASE + 0x1000, 0])),
            (
                "tiny mach-o",
                fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
            ),
            (
                "fat",
                fixtures::fat(&[
                    fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64),
                    fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
                ]),
            ),
        ];
        let started = Instant::now();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for (what, bytes) in &samples {
            // Every truncation.
            for length in 0..bytes.len() {
                layouts_of_bytes(&bytes[..length]);
            }
            // Each header word set to all ones or zero (huge counts,
            // offsets and sizes).
            for at in (0..bytes.len().min(0x400)).step_by(4) {
                for fill in [0xffu8, 0x00, 0x7f] {
                    let mut variant = bytes.clone();
                    variant[at..(at + 4).min(bytes.len())].fill(fill);
                    layouts_of_bytes(&variant);
                }
            }
            // Random corruption.
            for _ in 0..300 {
                let mut variant = bytes.clone();
                for _ in 0..1 + next_random(&mut state) % 8 {
                    let at = (next_random(&mut state) % bytes.len() as u64) as usize;
                    variant[at] = next_random(&mut state) as u8;
                }
                layouts_of_bytes(&variant);
            }
            eprintln!("{what}: survived");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "hostile sweep took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn layout_of_unknown_document_and_garbage_file() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("tiny.elf");
        std::fs::write(&path, fixtures::tiny_elf()).expect("write");
        let image = NativeImage::open(&path).expect("open");
        assert!(matches!(
            image.layout(1),
            Err(ProviderError::UnknownDocument { .. })
        ));
        let layout = image.layout(0).expect("layout");
        assert_eq!(
            layout.entry_point,
            Some(format_address(fixtures::ELF_ENTRY))
        );
        assert!(layout.needed_libraries.is_empty());
        assert_eq!(layout.code_signature, None);

        let mut broken = fixtures::tiny_elf();
        broken[fixtures::ELF64_SHOFF_OFFSET..fixtures::ELF64_SHOFF_OFFSET + 8]
            .copy_from_slice(&u64::MAX.to_le_bytes());
        let path = dir.path().join("broken.elf");
        std::fs::write(&path, &broken).expect("write");
        assert!(matches!(
            NativeImage::open(&path),
            Err(ProviderError::Malformed { .. })
        ));
    }
}
