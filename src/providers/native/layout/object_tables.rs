//! Imports and exports read through `object`'s own iterators (PE, Mach-O
//! without an exports trie, COFF and other formats), bounded by
//! [`drain`]. Separate because several format readers share it; ELF reads
//! its dynamic symbols itself (see `elf.rs`).

use std::collections::HashSet;

use object::Object;
use object::read::{ExportTarget, NameOrOrdinal};

use super::notes::{Capped, Notes, drain};
use super::{LayoutExport, LayoutImport};
use crate::providers::format_address;

pub(super) fn object_imports(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutImport> {
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
            stub: None,
            slot: None,
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

pub(super) fn object_exports(file: &object::File<'_>, notes: &mut Notes) -> Vec<LayoutExport> {
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

pub(super) fn note_without_address(count: usize, notes: &mut Notes) {
    if count > 0 {
        notes.note(format!(
            "exports: {count} exports have no address in this image (absolute values, \
             thread-local offsets, re-exports or forwarders) and are not listed"
        ));
    }
}
