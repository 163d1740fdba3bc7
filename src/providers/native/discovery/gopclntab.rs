//! Go's function table (`pclntab`), which the Go runtime needs for stack
//! traces and garbage collection, so `strip` and `-ldflags=-s -w` keep it:
//! a stripped Go executable still names every function in it.
//!
//! Layout read here (Go 1.18 and later; magic `0xfffffff0` or
//! `0xfffffff1`): an 8-byte header (magic, two pad bytes, the instruction
//! quantum, the pointer size), then eight pointer-sized fields: function
//! count, file count, text start, and the offsets of the function-name
//! table, the compilation-unit table, the file table, the pc tables and the
//! function table. The function table holds `nfunc + 1` pairs of 32-bit
//! `(entry offset from text start, offset of the function's record)`; each
//! record begins with its entry offset and the offset of its name in the
//! name table (NUL-terminated).
//!
//! The table is found by section name (ELF `.gopclntab`, Mach-O
//! `__gopclntab`) or, in PE images, which have no such section, by
//! searching the read-only data for a header that validates. Everything is
//! bounds-checked against the table's bytes; a count is never trusted
//! beyond what the bytes can hold.

use crate::providers::interrupt::Checkpoint;
use object::{Object, ObjectSection, SectionKind};

/// Longest function name kept (longer ones are cut at the cap's end).
const MAX_NAME: usize = 4096;
/// Magic numbers of the layouts this reader understands.
const MAGICS: [u32; 2] = [0xffff_fff0, 0xffff_fff1];

/// Functions named by a Go function table.
#[derive(Debug, Default)]
pub struct GoFunctions<'data> {
    /// `(entry address, name)`, in table order (ascending addresses).
    pub functions: Vec<(u64, &'data [u8])>,
    pub limitations: Vec<String>,
}

/// The functions of the document's Go function table, if it has one.
pub fn go_functions<'data>(file: &object::File<'data>) -> GoFunctions<'data> {
    let mut found = GoFunctions::default();
    let Some((table, from_section)) = locate(file) else {
        return found;
    };
    let text_base = file
        .section_by_name(".text")
        .or_else(|| file.section_by_name("__text"))
        .map_or(0, |section| section.address());
    match parse(table, file.is_little_endian(), text_base, &mut found.functions) {
        Ok(()) => {}
        Err(reason) => found.limitations.push(format!(
            "the Go function table ({}) could not be read: {reason}; its function names are not listed",
            if from_section { "section" } else { "found by its header" }
        )),
    }
    found
}

/// The table's bytes, and whether a section named it.
fn locate<'data>(file: &object::File<'data>) -> Option<(&'data [u8], bool)> {
    if let Some(section) = file
        .section_by_name(".gopclntab")
        .or_else(|| file.section_by_name("__gopclntab"))
    {
        return section.data().ok().map(|bytes| (bytes, true));
    }
    if file.format() != object::BinaryFormat::Pe {
        return None;
    }
    file.sections()
        .filter(|section| section.kind() == SectionKind::ReadOnlyData)
        .filter_map(|section| section.data().ok())
        .find_map(|bytes| {
            (0..bytes.len().saturating_sub(8))
                .step_by(4)
                .find(|&at| header_is_plausible(&bytes[at..], file.is_little_endian()))
                .map(|at| (&bytes[at..], false))
        })
}

fn header_is_plausible(bytes: &[u8], little: bool) -> bool {
    let Some(magic) = read_u32(bytes, 0, little) else {
        return false;
    };
    MAGICS.contains(&magic)
        && bytes.get(4..6) == Some(&[0, 0])
        && bytes.get(6).is_some_and(|q| matches!(q, 1 | 2 | 4))
        && bytes.get(7).is_some_and(|p| matches!(p, 4 | 8))
}

/// Reads the table into `out`; `Err` says why it stopped.
fn parse<'data>(
    table: &'data [u8],
    little: bool,
    text_base: u64,
    out: &mut Vec<(u64, &'data [u8])>,
) -> Result<(), String> {
    if !header_is_plausible(table, little) {
        return Err("its header is not a Go 1.18+ function table header".to_owned());
    }
    let pointer = usize::from(table[7]);
    let field = |index: usize| -> Result<u64, String> {
        read_word(table, 8 + index * pointer, pointer, little)
            .ok_or_else(|| "the header is truncated".to_owned())
    };
    let nfunc = field(0)?;
    let text_start = match field(2)? {
        0 => text_base,
        start => start,
    };
    let names = offset(field(3)?, table)?;
    let functab = offset(field(7)?, table)?;
    // Each entry is 8 bytes; the bytes present bound the count.
    let available = (table.len() - functab) / 8;
    if nfunc > available as u64 {
        return Err(format!(
            "it claims {nfunc} functions but holds room for {available}"
        ));
    }
    out.reserve(nfunc as usize);
    // Hostile records can make every name overlap one long unterminated
    // run; the bytes scanned for names stay linear in the table's size.
    let mut scan_budget = table.len().saturating_mul(4).saturating_add(1 << 20);
    let mut checkpoint = Checkpoint::new();
    for index in 0..nfunc as usize {
        if checkpoint.stop() {
            break;
        }
        let at = functab + index * 8;
        let entry = read_u32(table, at, little).ok_or("a function entry is truncated")?;
        let record = read_u32(table, at + 4, little).ok_or("a function entry is truncated")?;
        let record = functab
            .checked_add(record as usize)
            .ok_or("a function record offset overflows")?;
        let name_offset =
            read_u32(table, record + 4, little).ok_or("a function record is out of range")?;
        let name =
            name_at(table, names, name_offset as usize).ok_or("a function name is out of range")?;
        scan_budget = scan_budget
            .checked_sub(name.len() + 1)
            .ok_or("its function names overlap far more than a real table's do")?;
        if name.starts_with(b"go:") || name.is_empty() {
            // Linker markers such as `go:textfipsstart`, not functions.
            continue;
        }
        out.push((text_start.wrapping_add(u64::from(entry)), name));
    }
    Ok(())
}

fn offset(value: u64, table: &[u8]) -> Result<usize, String> {
    usize::try_from(value)
        .ok()
        .filter(|&v| v < table.len())
        .ok_or_else(|| {
            format!(
                "offset {value:#x} is past the table's {} bytes",
                table.len()
            )
        })
}

fn name_at(table: &[u8], names: usize, offset: usize) -> Option<&[u8]> {
    let start = names.checked_add(offset)?;
    let rest = table.get(start..)?;
    let end = rest
        .iter()
        .take(MAX_NAME)
        .position(|&b| b == 0)
        .unwrap_or(rest.len().min(MAX_NAME));
    Some(&rest[..end])
}

fn read_u32(bytes: &[u8], at: usize, little: bool) -> Option<u32> {
    let raw: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if little {
        u32::from_le_bytes(raw)
    } else {
        u32::from_be_bytes(raw)
    })
}

fn read_word(bytes: &[u8], at: usize, size: usize, little: bool) -> Option<u64> {
    if size == 4 {
        return read_u32(bytes, at, little).map(u64::from);
    }
    let raw: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if little {
        u64::from_le_bytes(raw)
    } else {
        u64::from_be_bytes(raw)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian 64-bit table with the given `(entry offset, name)`
    /// functions and text start 0x1000.
    fn table(functions: &[(u32, &str)], claimed: u64) -> Vec<u8> {
        let header = 8 + 8 * 8;
        let mut names = Vec::new();
        let mut name_offsets = Vec::new();
        for (_, name) in functions {
            name_offsets.push(names.len() as u32);
            names.extend_from_slice(name.as_bytes());
            names.push(0);
        }
        let names_at = header;
        let functab_at = names_at + names.len();
        let records_at = (functions.len() + 1) * 8;
        let mut out = vec![0u8; functab_at];
        out[..4].copy_from_slice(&0xffff_fff1u32.to_le_bytes());
        out[6] = 1;
        out[7] = 8;
        let fields = [
            claimed,
            1,
            0x1000,
            names_at as u64,
            0,
            0,
            0,
            functab_at as u64,
        ];
        for (i, value) in fields.iter().enumerate() {
            out[8 + i * 8..16 + i * 8].copy_from_slice(&value.to_le_bytes());
        }
        out[names_at..names_at + names.len()].copy_from_slice(&names);
        let mut functab = Vec::new();
        let mut records = Vec::new();
        for (i, (entry, _)) in functions.iter().enumerate() {
            functab.extend_from_slice(&entry.to_le_bytes());
            functab.extend_from_slice(&((records_at + records.len()) as u32).to_le_bytes());
            records.extend_from_slice(&entry.to_le_bytes());
            records.extend_from_slice(&name_offsets[i].to_le_bytes());
        }
        functab.extend_from_slice(&[0xff; 8]);
        out.extend_from_slice(&functab);
        out.extend_from_slice(&records);
        out
    }

    #[test]
    fn functions_are_read_with_names_and_markers_skipped() {
        let bytes = table(
            &[
                (0, "main.main"),
                (0x40, "go:textfipsstart"),
                (0x80, "runtime.main"),
            ],
            3,
        );
        let mut out = Vec::new();
        parse(&bytes, true, 0x9999, &mut out).expect("valid table");
        assert_eq!(
            out,
            vec![(0x1000, &b"main.main"[..]), (0x1080, &b"runtime.main"[..])]
        );
    }

    #[test]
    fn a_zero_text_start_uses_the_text_section() {
        let mut bytes = table(&[(0x10, "f")], 1);
        bytes[8 + 16..8 + 24].copy_from_slice(&0u64.to_le_bytes());
        let mut out = Vec::new();
        parse(&bytes, true, 0x40_1000, &mut out).expect("valid table");
        assert_eq!(out, vec![(0x40_1010, &b"f"[..])]);
    }

    #[test]
    fn hostile_counts_and_offsets_are_errors_not_panics() {
        let bytes = table(&[(0, "f")], u64::MAX);
        assert!(parse(&bytes, true, 0, &mut Vec::new()).is_err());
        let mut bad_names = table(&[(0, "f")], 1);
        bad_names[8 + 24..8 + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse(&bad_names, true, 0, &mut Vec::new()).is_err());
        for cut in 0..table(&[(0, "f"), (4, "g")], 2).len() {
            let mut short = table(&[(0, "f"), (4, "g")], 2);
            short.truncate(cut);
            let _ = parse(&short, true, 0, &mut Vec::new());
        }
        assert!(!header_is_plausible(
            &[0xf1, 0xff, 0xff, 0xff, 0, 0, 3, 8],
            true
        ));
    }
}
