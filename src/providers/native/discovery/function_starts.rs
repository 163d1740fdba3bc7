//! Mach-O `LC_FUNCTION_STARTS`: the linker's list of every function start,
//! kept for debuggers and crash reporters after symbols are stripped.
//!
//! The command points at a run of ULEB128 deltas in `__LINKEDIT`: the first
//! is relative to the `__TEXT` segment's vmaddr, each next one to the
//! previous start, and a zero delta ends the list (zeros after it are
//! padding). The table states no lengths.

use crate::providers::interrupt::Checkpoint;
use object::macho::LC_FUNCTION_STARTS;
use object::read::macho::{LoadCommandVariant, MachHeader, MachOFile};
use object::{Architecture, Endianness, Object, ObjectSegment};

use super::{Found, TableWalk};
use crate::providers::Source;
use crate::providers::native::code_map::CodeMap;

const TABLE: &str = "`LC_FUNCTION_STARTS`";

/// Walks every `LC_FUNCTION_STARTS` of a Mach-O document; `false` for other
/// formats or when there is certainly none.
pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, found: &mut Found) -> bool {
    match file {
        object::File::MachO32(macho) => read_macho(macho, code, found),
        object::File::MachO64(macho) => read_macho(macho, code, found),
        _ => false,
    }
}

fn read_macho<'data, Mach: MachHeader<Endian = Endianness>>(
    macho: &MachOFile<'data, Mach>,
    code: &CodeMap<'_>,
    found: &mut Found,
) -> bool {
    let mut commands = match macho.macho_load_commands() {
        Ok(commands) => commands,
        Err(error) => {
            found.limitations.push(format!(
                "the load commands could not be read ({error}), so {TABLE} was not looked for"
            ));
            // Unknown is not absent: no "this document has no table" claim.
            return true;
        }
    };
    let mut present = false;
    // The iterator is bounded by the header's command count and size.
    loop {
        let command = match commands.next() {
            Ok(Some(command)) => command,
            Ok(None) => break,
            Err(error) => {
                found.limitations.push(format!(
                    "a load command is malformed ({error}); later commands, possibly \
                     including {TABLE}, were not read"
                ));
                return true;
            }
        };
        if command.cmd() != LC_FUNCTION_STARTS {
            continue;
        }
        present = true;
        match command.variant() {
            Ok(LoadCommandVariant::LinkeditData(linkedit)) => {
                match linkedit.data(macho.endian(), macho.data()) {
                    Ok(bytes) => read_table(macho, bytes, code, found),
                    Err(_) => found.limitations.push(format!(
                        "{TABLE} points at {} bytes at file offset {:#x}, outside the file; \
                         it was not read",
                        linkedit.datasize.get(macho.endian()),
                        linkedit.dataoff.get(macho.endian()),
                    )),
                }
            }
            Ok(_) | Err(_) => found.limitations.push(format!(
                "an {TABLE} command is too short to hold its data location; it was not read"
            )),
        }
    }
    present
}

/// Decodes one table's deltas from the `__TEXT` segment's vmaddr.
fn read_table<Mach: MachHeader<Endian = Endianness>>(
    macho: &MachOFile<'_, Mach>,
    bytes: &[u8],
    code: &CodeMap<'_>,
    found: &mut Found,
) {
    let Some(text) = macho
        .segments()
        .find(|segment| segment.name().ok().flatten() == Some("__TEXT"))
    else {
        found.limitations.push(format!(
            "there is no `__TEXT` segment to anchor {TABLE}'s offsets, so it was not read"
        ));
        return;
    };
    // ld64 records Thumb functions with the low bit set; the start is even.
    let thumb_mask = if macho.architecture() == Architecture::Arm {
        !1
    } else {
        !0
    };
    let mut walk = found.walk(TABLE.to_owned(), Source::FunctionStarts, code);
    walk_deltas(bytes, text.address(), thumb_mask, &mut walk);
    walk.finish();
}

/// Offers each start to `walk`. Every delta takes at least one byte, so the
/// loop runs at most `bytes.len()` times.
fn walk_deltas(bytes: &[u8], base: u64, mask: u64, walk: &mut TableWalk<'_>) {
    let mut address = base;
    let mut offset = 0usize;
    let mut checkpoint = Checkpoint::new();
    while let Some(rest) = bytes.get(offset..).filter(|rest| !rest.is_empty()) {
        if checkpoint.stop() {
            return;
        }
        let (delta, used) = match uleb128(rest) {
            Ok((0, _)) => return,
            Ok(decoded) => decoded,
            Err(error) => {
                walk.limitation(format!(
                    "{TABLE} entry at offset {offset:#x} is malformed: {error}; later entries \
                     not read"
                ));
                return;
            }
        };
        let Some(next) = address.checked_add(delta) else {
            walk.limitation(format!(
                "{TABLE} entry at offset {offset:#x} is malformed: the start passes the end \
                 of the address space; later entries not read"
            ));
            return;
        };
        address = next;
        offset += used;
        if walk.push(address & mask, None).is_break() {
            return;
        }
    }
}

/// Why a ULEB128 number was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum UlebError {
    #[error("the table ends inside a ULEB128 number")]
    Truncated,
    #[error("a ULEB128 number does not fit in 64 bits")]
    Overflow,
    #[error("a ULEB128 number has redundant trailing zero bytes")]
    Overlong,
}

/// Decodes one canonical ULEB128 number: `(value, bytes used)`.
///
/// A linker never writes an overlong encoding (trailing `0x80 … 0x00`
/// groups) or one beyond 64 bits, so both are treated as corruption rather
/// than silently reinterpreted.
pub(super) fn uleb128(bytes: &[u8]) -> Result<(u64, usize), UlebError> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().enumerate() {
        let low = u64::from(byte & 0x7f);
        let more = byte & 0x80 != 0;
        // The tenth byte holds bit 63 only, and must end the number.
        if index == 9 && (low > 1 || more) {
            return Err(UlebError::Overflow);
        }
        value |= low << (7 * index);
        if !more {
            if index > 0 && byte == 0 {
                return Err(UlebError::Overlong);
            }
            return Ok((value, index + 1));
        }
    }
    Err(UlebError::Truncated)
}
