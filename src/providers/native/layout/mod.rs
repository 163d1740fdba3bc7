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
//!
//! The code is split by concern: [`notes`] (the limitation bookkeeping and
//! the bounded readers every table shares), [`memory`] (segments and
//! sections), [`object_tables`] (imports and exports through `object`),
//! then one file per format ([`elf`], [`macho`] with its [`exports_trie`],
//! [`pe`]). This file holds the public types, every cap, and [`layout`].

mod elf;
mod exports_trie;
mod macho;
mod memory;
mod notes;
mod object_tables;
mod pe;
#[cfg(test)]
mod tests;

use std::time::Duration;

use super::DocumentInfo;
use super::entry::entry_point;
use crate::providers::{Format, format_address};
use elf::elf_layout;
use macho::macho_layout;
use memory::{sections, segments};
use notes::Notes;
use object_tables::{object_exports, object_imports};
use pe::pe_layout;

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
    /// import and delay-load import DLL names. Each name once, in the order
    /// first seen.
    pub needed_libraries: Vec<String>,
    /// Entries naming a library already in `needed_libraries` (a hostile
    /// file may repeat one name 20,000 times); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub needed_libraries_repeated: usize,
    /// ELF `DT_RPATH` and `DT_RUNPATH` (split at `:`), Mach-O `LC_RPATH`;
    /// each path once, in the order first seen.
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
    /// The first stub in a stub section (ELF PLT, Mach-O `__stubs`) that
    /// jumps through the import's slot, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stub: Option<String>,
    /// The first slot the loader fills with the function's address (GOT,
    /// IAT, `__got`/`__la_symbol_ptr`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
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

fn is_zero(count: &usize) -> bool {
    *count == 0
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
        needed_libraries_repeated: 0,
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
