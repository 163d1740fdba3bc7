//! PE imports: the import directory and the delay-load directory. Entry
//! `i` of a descriptor's name table names the function whose address the
//! loader (or the delay-load helper) writes into slot `i` of its import
//! address table, so every slot's address follows from the table's RVA.
//! An import by ordinal is named `library#ordinal`.

use object::LittleEndian as LE;
use object::pe::ImageDelayloadDescriptor;
use object::read::pe::{
    ImageNtHeaders, ImageOptionalHeader as _, ImageThunkData as _, Import, ImportThunkList, PeFile,
};

use std::borrow::Cow;
use std::sync::Arc;

use super::{Builder, name_text};

pub(super) fn read(file: &object::File<'_>, out: &mut Builder) {
    match file {
        object::File::Pe32(pe) => read_pe(pe, out),
        object::File::Pe64(pe) => read_pe(pe, out),
        _ => {}
    }
}

fn read_pe<Pe: ImageNtHeaders>(pe: &PeFile<'_, Pe>, out: &mut Builder) {
    let base = pe.nt_headers().optional_header().image_base();
    match pe.import_table() {
        Ok(Some(table)) => match table.descriptors() {
            Ok(descriptors) => {
                for (index, descriptor) in descriptors.enumerate() {
                    if out.is_full() {
                        break;
                    }
                    let Ok(descriptor) = descriptor else {
                        out.note(format!(
                            "imports: the import directory stops at descriptor #{index}"
                        ));
                        break;
                    };
                    let library = table
                        .name(descriptor.name.get(LE))
                        .ok()
                        .and_then(name_text)
                        .map(|library| out.intern(library));
                    let iat = descriptor.first_thunk.get(LE);
                    let names = match descriptor.original_first_thunk.get(LE) {
                        0 => iat,
                        rva => rva,
                    };
                    let Ok(thunks) = table.thunks(names) else {
                        out.note(format!(
                            "imports: descriptor #{index}'s name table is not in the file"
                        ));
                        continue;
                    };
                    let entries = walk::<Pe>(thunks, |thunk| table.import::<Pe>(thunk).ok());
                    add_slots::<Pe>(out, library, base, iat, entries);
                }
            }
            Err(_) => out.note("imports: the import directory cannot be read".to_owned()),
        },
        Ok(None) => {}
        Err(_) => out.note("imports: the import directory is not in the file".to_owned()),
    }
    match pe.delay_load_import_table() {
        Ok(Some(table)) => match table.descriptors() {
            Ok(mut descriptors) => {
                for index in 0.. {
                    if out.is_full() {
                        break;
                    }
                    let descriptor = match descriptors.next() {
                        Ok(Some(descriptor)) => descriptor,
                        Ok(None) => break,
                        Err(_) => {
                            out.note(format!(
                                "imports: the delay-load directory stops at descriptor #{index}"
                            ));
                            break;
                        }
                    };
                    let rva = |value: u32| delay_rva(descriptor, value, base);
                    let library = table
                        .name(rva(descriptor.dll_name_rva.get(LE)))
                        .ok()
                        .and_then(name_text)
                        .map(|library| out.intern(library));
                    let Ok(thunks) = table.thunks(rva(descriptor.import_name_table_rva.get(LE)))
                    else {
                        out.note(format!(
                            "imports: delay-load descriptor #{index}'s name table is not in the file"
                        ));
                        continue;
                    };
                    let iat = rva(descriptor.import_address_table_rva.get(LE));
                    let entries = walk::<Pe>(thunks, |thunk| {
                        if thunk.is_ordinal() {
                            return Some(Import::Ordinal(thunk.ordinal()));
                        }
                        let (hint, name) = table.hint_name(rva(thunk.address())).ok()?;
                        Some(Import::Name(hint, name))
                    });
                    add_slots::<Pe>(out, library, base, iat, entries);
                }
            }
            Err(_) => out.note("imports: the delay-load directory cannot be read".to_owned()),
        },
        Ok(None) => {}
        Err(_) => out.note("imports: the delay-load directory is not in the file".to_owned()),
    }
}

/// Version 1 delay-load descriptors (no `dlattrRva` bit) hold virtual
/// addresses instead of RVAs.
fn delay_rva(descriptor: &ImageDelayloadDescriptor, value: u32, base: u64) -> u32 {
    if descriptor.attributes.get(LE) & 1 == 1 {
        value
    } else {
        value.wrapping_sub(base as u32)
    }
}

/// The name-table entries up to the terminator (each `None` when it cannot
/// be read), bounded by the table's bytes.
fn walk<'data, Pe: ImageNtHeaders>(
    mut thunks: ImportThunkList<'data>,
    mut import: impl FnMut(Pe::ImageThunkData) -> Option<Import<'data>>,
) -> Vec<Option<Import<'data>>> {
    let mut entries = Vec::new();
    while let Ok(Some(thunk)) = thunks.next::<Pe>() {
        entries.push(import(thunk));
        if entries.len() >= super::MAX_IMPORT_ENTRIES {
            break;
        }
    }
    entries
}

fn add_slots<Pe: ImageNtHeaders>(
    out: &mut Builder,
    library: Option<Arc<str>>,
    base: u64,
    iat: u32,
    entries: Vec<Option<Import<'_>>>,
) {
    let slot_size = std::mem::size_of::<Pe::ImageThunkData>() as u64;
    for (position, entry) in entries.into_iter().enumerate() {
        let name = match entry {
            Some(Import::Name(_, name)) => name_text(name).map(Cow::Borrowed),
            Some(Import::Ordinal(ordinal)) => Some(Cow::Owned(format!(
                "{}#{ordinal}",
                library.as_deref().unwrap_or("unknown")
            ))),
            None => None,
        };
        let Some(name) = name else {
            out.skip();
            continue;
        };
        let slot = base
            .wrapping_add(u64::from(iat))
            .wrapping_add(position as u64 * slot_size);
        out.slot(&name, library.clone(), slot);
    }
}
