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
    let Ok(mut commands) = file.macho_load_commands() else {
        return 0;
    };
    while let Ok(Some(command)) = commands.next() {
        if let Ok(Some(main)) = command.entry_point() {
            let offset = main.entryoff.get(file.endian());
            return file_offset_to_address(file, offset).unwrap_or(0);
        }
    }
    file.entry()
}

fn file_offset_to_address<'data>(file: &impl Object<'data>, offset: u64) -> Option<u64> {
    file.segments().find_map(|segment| {
        let (start, size) = segment.file_range();
        let delta = offset.checked_sub(start)?;
        (delta < size).then(|| segment.address().wrapping_add(delta))
    })
}
