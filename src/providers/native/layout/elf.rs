//! ELF: needed libraries and rpaths from the dynamic table (found through
//! the section headers or `PT_DYNAMIC`), imports and exports from `.dynsym`,
//! every string read through a bounded window. One file per format keeps
//! each reader next to the facts only that format has.

use std::collections::HashSet;

use object::read::elf::{Dyn as _, ElfFile, FileHeader, ProgramHeader as _, SectionHeader as _};
use object::read::elf::{Sym as _, SymbolTable};
use object::{Endianness, ReadRef, elf};

use super::notes::{Capped, Distinct, Notes, c_string};
use super::object_tables::note_without_address;
use super::{Layout, LayoutExport, LayoutImport, MAX_DYNAMIC_ENTRIES, MAX_DYNAMIC_SYMBOLS};
use crate::providers::format_address;
use crate::providers::interrupt::Checkpoint;

pub(super) fn elf_layout<'data, Elf: FileHeader<Endian = Endianness>>(
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
    let mut needed = Distinct::new();
    let mut rpaths = Distinct::new();
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
                needed.drop_one();
            } else {
                rpaths.drop_one();
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
    (layout.needed_libraries, layout.needed_libraries_repeated) =
        needed.finish("needed libraries", notes);
    layout.rpaths = rpaths.finish("rpaths", notes).0;
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
    // An interrupted walk stops here; `NativeImage::layout` then answers
    // `Interrupted` rather than the part it read.
    let mut checkpoint = Checkpoint::new();
    for (index, symbol) in table.symbols().iter().enumerate().skip(1) {
        if checkpoint.stop() {
            break;
        }
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
                    stub: None,
                    slot: None,
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
