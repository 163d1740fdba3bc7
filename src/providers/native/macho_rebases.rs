//! Mach-O rebases: the pointer slots `dyld` slides, from the classic
//! rebase opcodes (`LC_DYLD_INFO`) or the chained fixups
//! (`LC_DYLD_CHAINED_FIXUPS`), both decoded by `object`.
//!
//! A classic rebase names a slot (segment index and offset) whose word
//! holds the unslid target address. A chained rebase holds its target in
//! the word itself, as an offset from the image base (`__TEXT`) or an
//! address, interleaved with the link to the next fixup; `object` decodes
//! either. Binds (imports) are not pointers into the image and are left out.
//!
//! Bounded: at most `limit` rebases are visited, whatever counts the
//! opcodes claim, and a slot outside every segment's file data is skipped.

use object::macho;
use object::read::macho::{Fixup, MachHeader, MachOFile};
use object::{Object, ObjectSegment, ReadRef};

use super::words::Words;

/// The top bit Apple's arm64 C++ ABI sets in a `type_info`'s name
/// pointer when the name is not unique; `dyld` slides the word as it is,
/// the pointer is the rest.
const NON_UNIQUE_RTTI: u64 = 1 << 63;

/// Calls `push(slot, target)` for every rebase of a Mach-O `file`, until it
/// answers `false` or `limit` rebases were visited. Returns whether the
/// file has rebase information at all (so an image without any is
/// scanned instead).
pub(super) fn rebases(
    file: &object::File<'_>,
    words: &Words<'_>,
    limit: usize,
    push: &mut dyn FnMut(u64, u64) -> bool,
) -> bool {
    match file {
        object::File::MachO32(macho) => of(macho, words, limit, push),
        object::File::MachO64(macho) => of(macho, words, limit, push),
        _ => false,
    }
}

fn of<'data, Mach: MachHeader, R: ReadRef<'data>>(
    file: &MachOFile<'data, Mach, R>,
    words: &Words<'_>,
    limit: usize,
    push: &mut dyn FnMut(u64, u64) -> bool,
) -> bool {
    let endian = file.endian();
    let segments: Vec<(u64, &'data [u8])> = file
        .segments()
        .map(|segment| (segment.address(), segment.data().unwrap_or(&[])))
        .collect();
    let base = file
        .segments()
        .find(|segment| segment.name().ok().flatten() == Some("__TEXT"))
        .map_or(0, |segment| segment.address());
    let pointer_size = if file.is_64() { 8 } else { 4 };
    let Ok(mut commands) = file.macho_load_commands() else {
        return false;
    };
    let mut found = false;
    let mut visited = 0usize;
    while let Ok(Some(command)) = commands.next() {
        if let Ok(Some(info)) = command.dyld_info() {
            let Ok(rebases) = info.rebases(endian, file.data(), pointer_size) else {
                continue;
            };
            found = true;
            for rebase in rebases {
                let Ok(rebase) = rebase else { break };
                visited += 1;
                if visited > limit {
                    return true;
                }
                let Some(&(address, _)) = segments.get(usize::from(rebase.segment_index)) else {
                    continue;
                };
                let slot = address.wrapping_add(rebase.segment_offset);
                let width = if rebase.kind == macho::REBASE_TYPE_TEXT_ABSOLUTE32 {
                    4
                } else {
                    pointer_size
                };
                if let Some(target) = words.value(slot, width)
                    && !push(slot, target & !NON_UNIQUE_RTTI)
                {
                    return true;
                }
            }
        }
        if let Ok(Some(linkedit)) = command.dyld_chained_fixups() {
            let Ok(fixups) = linkedit.chained_fixups(endian, file.data()) else {
                continue;
            };
            let Ok(chained) = fixups.segments(endian) else {
                continue;
            };
            found = true;
            for segment in chained {
                let Ok(segment) = segment else { break };
                let Some(&(address, data)) = segments.get(segment.index() as usize) else {
                    continue;
                };
                for fixup in segment.fixups(endian, base, data) {
                    let Ok((offset, fixup)) = fixup else { break };
                    visited += 1;
                    if visited > limit {
                        return true;
                    }
                    let Fixup::Rebase(rebase) = fixup else {
                        continue;
                    };
                    let slot = address.wrapping_add(offset);
                    if !push(slot, base.wrapping_add(rebase.target_offset)) {
                        return true;
                    }
                }
            }
        }
    }
    found
}
