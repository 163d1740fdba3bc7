//! ELF `.init_array`, `.fini_array` and `.preinit_array`: pointers to the
//! constructors and destructors the loader calls. Those functions are
//! reached only through these tables (never by a direct call), and C
//! runtime helpers such as `frame_dummy` often have no `.eh_frame` entry,
//! so a stripped binary would otherwise not list them.
//!
//! In position-independent files each slot holds zero until the loader
//! applies a relative relocation; the relocation's addend is the pointer.
//! A slot with neither a relocation nor a non-zero pointer is skipped.

use crate::providers::native::elf_relocations::DynamicRelocations;
use std::collections::HashMap;

use object::{Object, ObjectSection, RelocationTarget, SectionKind};

use super::{Found, TableWalk};
use crate::providers::Source;
use crate::providers::native::code_map::CodeMap;

const SECTIONS: [&str; 3] = [".preinit_array", ".init_array", ".fini_array"];

/// Reads the three arrays of an ELF file; `false` when it has none.
pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, found: &mut Found) -> bool {
    if file.format() != object::BinaryFormat::Elf || file.kind() == object::ObjectKind::Relocatable
    {
        return false;
    }
    let pointer = if file.is_64() { 8 } else { 4 };
    let relocated = relative_values(file);
    let mut any = false;
    for name in SECTIONS {
        let Some(section) = file.section_by_name(name) else {
            continue;
        };
        if section.kind() == SectionKind::UninitializedData {
            continue;
        }
        let Ok(bytes) = section.data() else {
            continue;
        };
        any = true;
        let mut walk = found.walk(format!("`{name}`"), Source::InitArray, code);
        read_slots(
            &mut walk,
            bytes,
            section.address(),
            pointer,
            file.is_little_endian(),
            &relocated,
        );
        walk.finish();
    }
    any
}

/// Offers every non-zero pointer of one array.
fn read_slots(
    walk: &mut TableWalk<'_>,
    bytes: &[u8],
    address: u64,
    pointer: usize,
    little_endian: bool,
    relocated: &HashMap<u64, u64>,
) {
    for (index, slot) in bytes.chunks_exact(pointer).enumerate() {
        let slot_address = address.wrapping_add((index * pointer) as u64);
        let stored = if pointer == 8 {
            let raw: [u8; 8] = slot.try_into().unwrap_or_default();
            if little_endian {
                u64::from_le_bytes(raw)
            } else {
                u64::from_be_bytes(raw)
            }
        } else {
            let raw: [u8; 4] = slot.try_into().unwrap_or_default();
            u64::from(if little_endian {
                u32::from_le_bytes(raw)
            } else {
                u32::from_be_bytes(raw)
            })
        };
        let target = relocated.get(&slot_address).copied().unwrap_or(stored);
        // 0 and -1 are terminators and placeholders, not functions.
        if target == 0 || target == u64::MAX || (pointer == 4 && target == u64::from(u32::MAX)) {
            continue;
        }
        if walk.push(target, None).is_break() {
            return;
        }
    }
}

/// Slot address → value of every dynamic relocation that writes a plain
/// address (relative relocations carry it in their addend).
fn relative_values(file: &object::File<'_>) -> HashMap<u64, u64> {
    // Bounded by what the file holds (sections may share one array).
    let Some(relocations) = DynamicRelocations::of(file) else {
        return HashMap::new();
    };
    relocations
        .filter(|(_, relocation)| relocation.target() == RelocationTarget::Absolute)
        .filter_map(|(slot, relocation)| Some((slot, u64::try_from(relocation.addend()).ok()?)))
        .collect()
}
