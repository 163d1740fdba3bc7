//! Entry points as virtual addresses.

use object::read::macho::{MachHeader, MachOFile};
use object::{Object, ObjectSegment, ReadRef};

/// The document's entry point as a virtual address; `None` when it has none
/// (the field is zero, as in shared libraries and relocatable objects).
///
/// ELF: `e_entry`. PE: image base + `AddressOfEntryPoint` (as `object`
/// computes it). Mach-O: see [`macho_entry`].
pub(super) fn entry_point(file: &object::File<'_>) -> Option<u64> {
    let address = match file {
        object::File::MachO32(macho) => macho_entry(macho),
        object::File::MachO64(macho) => macho_entry(macho),
        other => other.entry(),
    };
    (address != 0).then_some(address)
}

/// `object` reports `LC_MAIN`'s `entryoff`, which is a file offset, not an
/// address; it is translated here into the virtual address of the segment
/// that maps that offset, so that it compares with symbol addresses.
/// `LC_UNIXTHREAD` already holds the initial program counter, which
/// `object` extracts.
fn macho_entry<'data, Mach: MachHeader, R: ReadRef<'data>>(
    file: &MachOFile<'data, Mach, R>,
) -> u64 {
    lc_main(file).unwrap_or_else(|| file.entry())
}

/// `main`'s address when the file has `LC_MAIN` (whose entry is `main`
/// itself, called by `dyld`); `None` for other files and for Mach-O with
/// `LC_UNIXTHREAD`, whose entry is the C runtime's `start`.
pub(super) fn macho_main(file: &object::File<'_>) -> Option<u64> {
    match file {
        object::File::MachO32(macho) => lc_main(macho),
        object::File::MachO64(macho) => lc_main(macho),
        _ => None,
    }
    .filter(|&address| address != 0)
}

/// `LC_MAIN`'s `entryoff` as a virtual address (0 when no segment maps
/// it); `None` without `LC_MAIN`.
fn lc_main<'data, Mach: MachHeader, R: ReadRef<'data>>(
    file: &MachOFile<'data, Mach, R>,
) -> Option<u64> {
    let mut commands = file.macho_load_commands().ok()?;
    while let Ok(Some(command)) = commands.next() {
        if let Ok(Some(main)) = command.entry_point() {
            let offset = main.entryoff.get(file.endian());
            return Some(file_offset_to_address(file, offset).unwrap_or(0));
        }
    }
    None
}

fn file_offset_to_address<'data>(file: &impl Object<'data>, offset: u64) -> Option<u64> {
    file.segments().find_map(|segment| {
        let (start, size) = segment.file_range();
        let delta = offset.checked_sub(start)?;
        (delta < size).then(|| segment.address().wrapping_add(delta))
    })
}
