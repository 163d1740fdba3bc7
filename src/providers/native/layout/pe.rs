//! PE: subsystem, code signature (security directory), import libraries,
//! imports and exports, and the TLS callback array. One file per format
//! keeps each reader next to the facts only that format has.

use object::read::pe::{ImageNtHeaders, ImageOptionalHeader as _, PeFile};
use object::{LittleEndian as LE, Object, ReadRef, pe};

use super::notes::{Capped, Distinct, Notes, drain};
use super::object_tables::{object_exports, object_imports};
use super::{Layout, MAX_LAYOUT_ENTRIES};
use crate::providers::format_address;

pub(super) fn pe_layout<'data, Pe: ImageNtHeaders>(
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
    (layout.needed_libraries, layout.needed_libraries_repeated) = match pe.import_libraries() {
        Ok(libraries) => {
            let mut list = Distinct::new();
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
            (Vec::new(), 0)
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
