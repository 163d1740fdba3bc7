//! ELF imports: the dynamic relocations that fill GOT slots with an
//! undefined function symbol's address (`JUMP_SLOT`, `GLOB_DAT`), the
//! `IRELATIVE` slots of IFUNCs, the slots of symbols this document
//! defines (for `thunks.rs`), and the library from the symbol's version
//! need (`vn_file`) when it has one. ELF binds no other symbol to a
//! library, so `library` is otherwise `None` (never guessed from
//! `DT_NEEDED`).

use std::collections::HashMap;

use object::read::elf::{ElfFile, FileHeader};
use object::{
    Endianness, Object, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget,
    SymbolIndex, SymbolKind, elf,
};

use super::{Builder, name_text, plt};
use crate::providers::native::code_map::CodeMap;
use crate::providers::native::elf_relocations::DynamicRelocations;

/// What a dynamic relocation type means for imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    /// `JUMP_SLOT` / `GLOB_DAT`: the named symbol's address.
    Symbol,
    /// `IRELATIVE`: whatever the resolver at the addend returns.
    Ifunc,
}

fn slot_kind(machine: elf::Machine, r_type: elf::RelocationType) -> Option<SlotKind> {
    match (machine, r_type) {
        (elf::EM_X86_64, elf::R_X86_64_JUMP_SLOT | elf::R_X86_64_GLOB_DAT)
        | (elf::EM_386, elf::R_386_JMP_SLOT | elf::R_386_GLOB_DAT)
        | (elf::EM_AARCH64, elf::R_AARCH64_JUMP_SLOT | elf::R_AARCH64_GLOB_DAT) => {
            Some(SlotKind::Symbol)
        }
        (elf::EM_X86_64, elf::R_X86_64_IRELATIVE)
        | (elf::EM_386, elf::R_386_IRELATIVE)
        | (elf::EM_AARCH64, elf::R_AARCH64_IRELATIVE) => Some(SlotKind::Ifunc),
        _ => None,
    }
}

pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, out: &mut Builder) {
    let machine = match file {
        object::File::Elf32(elf) => elf.elf_header().e_machine(elf.endian()),
        object::File::Elf64(elf) => elf.elf_header().e_machine(elf.endian()),
        _ => return,
    };
    let libraries = match file {
        object::File::Elf32(elf) => version_files(elf),
        object::File::Elf64(elf) => version_files(elf),
        _ => HashMap::new(),
    };
    let Some(mut relocations) = DynamicRelocations::of(file) else {
        return;
    };
    let symbols = file.dynamic_symbol_table();
    let mut ifunc_names: Option<HashMap<u64, &str>> = None;
    let mut unnamed_ifuncs = 0usize;
    for (slot, relocation) in relocations.by_ref() {
        if out.is_full() {
            break;
        }
        let RelocationFlags::Elf { r_type } = relocation.flags() else {
            continue;
        };
        match slot_kind(machine, r_type) {
            Some(SlotKind::Symbol) => {
                let RelocationTarget::Symbol(index) = relocation.target() else {
                    continue;
                };
                let Some(symbol) = symbols
                    .as_ref()
                    .and_then(|table| table.symbol_by_index(index).ok())
                else {
                    continue;
                };
                // Defined symbols are this document's own functions (see
                // `thunks.rs`); data objects are not procedures.
                if symbol.is_definition() {
                    if symbol.address() != 0 {
                        out.defined_slot(slot, symbol.address());
                    }
                    continue;
                }
                if matches!(symbol.kind(), SymbolKind::Data | SymbolKind::Tls) {
                    continue;
                }
                let Some(name) = symbol.name_bytes().ok().and_then(name_text) else {
                    continue;
                };
                let library = libraries.get(&index.0).map(|library| out.intern(library));
                if symbol.kind() == SymbolKind::Text {
                    out.function_slot(name, library, slot);
                } else {
                    out.slot(name, library, slot);
                }
            }
            Some(SlotKind::Ifunc) => {
                let names = ifunc_names.get_or_insert_with(|| ifunc_symbols(file));
                let resolver = u64::try_from(relocation.addend()).unwrap_or(u64::MAX);
                match names.get(&resolver) {
                    Some(name) => out.function_slot(name, None, slot),
                    None => unnamed_ifuncs += 1,
                }
            }
            None => {}
        }
    }
    if relocations.capped() {
        out.note(DynamicRelocations::limitation("imports"));
    }
    if unnamed_ifuncs > 0 {
        out.note(format!(
            "imports: {unnamed_ifuncs} IRELATIVE slot(s) have a resolver no symbol names; their \
             PLT stubs stay unnamed"
        ));
    }
    plt::read(file, code, out);
}

/// Dynamic symbol index → the library its version need names.
fn version_files<'data, Elf: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, Elf>,
) -> HashMap<usize, &'data str> {
    let endian = file.endian();
    let Ok(Some(versions)) = file.elf_section_table().versions(endian, file.data()) else {
        return HashMap::new();
    };
    let count = file.elf_dynamic_symbol_table().len();
    let mut files = HashMap::new();
    for index in 0..count {
        let version = versions.version_index(endian, SymbolIndex(index)).index();
        let Ok(Some(version)) = versions.version(version) else {
            continue;
        };
        if let Some(library) = version.file().and_then(name_text) {
            files.insert(index, library);
        }
    }
    files
}

/// Address → name of every defined `STT_GNU_IFUNC` symbol (the resolvers
/// `IRELATIVE` addends point at), from both symbol tables.
fn ifunc_symbols<'data>(file: &object::File<'data>) -> HashMap<u64, &'data str> {
    let mut names = HashMap::new();
    for symbol in file.symbols().chain(file.dynamic_symbols()) {
        let object::SymbolFlags::Elf { st_info, .. } = symbol.flags() else {
            continue;
        };
        if st_info.st_type() != elf::STT_GNU_IFUNC || !symbol.is_definition() {
            continue;
        }
        if let Some(name) = symbol.name_bytes().ok().and_then(name_text) {
            names.entry(symbol.address()).or_insert(name);
        }
    }
    names
}
