//! Mach-O imports through the indirect symbol table: entry `i` of a stub
//! section (`__stubs`, `__auth_stubs`: `S_SYMBOL_STUBS`, stub size in
//! `reserved2`) or of a pointer section (`__got`, `__auth_got`,
//! `__la_symbol_ptr`) is the symbol at indirect-table position
//! `reserved1 + i`. An undefined external symbol there is an import, and in
//! a two-level namespace image its library ordinal names the dylib load
//! command that provides it. This holds for classic binds and for chained
//! fixups alike, since both keep the indirect table.

use object::macho;
use object::read::macho::{MachHeader, MachOFile, Nlist as _, Section as _};
use object::{Endianness, Object};

use std::sync::Arc;

use super::{Builder, name_text};
use crate::providers::interrupt::Checkpoint;

pub(super) fn read(file: &object::File<'_>, out: &mut Builder) {
    match file {
        object::File::MachO32(macho) => read_macho(file, macho, out),
        object::File::MachO64(macho) => read_macho(file, macho, out),
        _ => {}
    }
}

fn read_macho<Mach: MachHeader<Endian = Endianness>>(
    file: &object::File<'_>,
    macho: &MachOFile<'_, Mach>,
    out: &mut Builder,
) {
    let endian = macho.endian();
    let Some(indirect) = indirect_symbols(macho, out) else {
        return;
    };
    // Ordinal N (1-based) is the N-th dylib load command.
    let libraries: Vec<Option<Arc<str>>> = match file.import_libraries() {
        Ok(libraries) => libraries
            .take(usize::from(macho::MAX_LIBRARY_ORDINAL))
            .map(|library| {
                let name = library.ok().and_then(|l| name_text(l.name()))?;
                Some(out.intern(name))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    let two_level = macho
        .macho_header()
        .flags(endian)
        .contains(macho::MH_TWOLEVEL);
    let symbols = macho.macho_symbol_table();
    let pointer_size: u64 = if macho.is_64() { 8 } else { 4 };
    // Sections may share indirect-table ranges (only a hostile file's do):
    // every entry visited, used or skipped, counts, and no walk visits more
    // entries than the table holds.
    let mut left = indirect.len();
    let mut checkpoint = Checkpoint::new();
    for section in macho.sections() {
        let header = section.macho_section();
        let (is_stub, entry_size) = match header.section_type(endian) {
            macho::S_SYMBOL_STUBS => (true, u64::from(header.reserved2(endian))),
            macho::S_NON_LAZY_SYMBOL_POINTERS | macho::S_LAZY_SYMBOL_POINTERS => {
                (false, pointer_size)
            }
            _ => continue,
        };
        let Ok(entries) = header.indirect_symbols(endian, indirect) else {
            out.note(
                "imports: a stub or pointer section's indirect symbol range is outside the table"
                    .to_owned(),
            );
            continue;
        };
        let start: u64 = header.addr(endian).into();
        for (position, entry) in entries.iter().enumerate() {
            if out.is_full() || checkpoint.stop() {
                return;
            }
            if left == 0 {
                out.note(
                    "imports: stub and pointer sections share indirect symbol entries; reading \
                     stopped after as many entries as the table holds"
                        .to_owned(),
                );
                return;
            }
            left -= 1;
            let address = start.wrapping_add(position as u64 * entry_size);
            let Some(index) = entry.get(endian).index() else {
                continue;
            };
            let Ok(nlist) = symbols.symbol(object::SymbolIndex(index as usize)) else {
                out.skip();
                continue;
            };
            if !nlist.is_undefined() {
                continue;
            }
            let Some(name) = nlist
                .name(endian, symbols.strings())
                .ok()
                .and_then(name_text)
            else {
                out.skip();
                continue;
            };
            let library = two_level
                .then(|| nlist.n_desc(endian).library().index())
                .flatten()
                .and_then(|ordinal| libraries.get(usize::from(ordinal) - 1).cloned())
                .flatten();
            if is_stub {
                out.stub(name, library, address);
            } else {
                out.slot(name, library, address);
            }
        }
    }
}

/// The indirect symbol table from `LC_DYSYMTAB`.
fn indirect_symbols<'data, Mach: MachHeader<Endian = Endianness>>(
    macho: &MachOFile<'data, Mach>,
    out: &mut Builder,
) -> Option<&'data [object::U32<Endianness, macho::IndirectSymbol>]> {
    let endian = macho.endian();
    let mut commands = macho.macho_load_commands().ok()?;
    while let Ok(Some(command)) = commands.next() {
        if let Ok(Some(dysymtab)) = command.dysymtab() {
            return match dysymtab.indirect_symbols(endian, macho.data()) {
                Ok(table) => Some(table),
                Err(_) => {
                    out.note("imports: the indirect symbol table is not in the file".to_owned());
                    None
                }
            };
        }
    }
    None
}
