//! External oracles: `llvm-objdump`, `llvm-readelf` and GNU `strings` on a
//! program compiled here and on the pinned fixtures.

use std::path::Path;

use super::*;
use crate::providers::native::NativeImage;
use crate::providers::native::fixtures::{fixture, run, skip_or_fail, tool_available};

// ------------------------------------------------ external oracles

/// `llvm-objdump [extra] -s -j <section>`: the section's start address
/// and bytes.
fn objdump_section(path: &Path, section: &str, extra: &[&str]) -> (u64, Vec<u8>) {
    let mut args = extra.to_vec();
    args.extend(["-s", "-j", section, path.to_str().expect("UTF-8 path")]);
    let dump = run("llvm-objdump", &args);
    let mut start = None;
    let mut bytes = Vec::new();
    for line in dump.lines() {
        // " 2000 01000200 72656100 ...  ....rea."
        let Some(rest) = line.strip_prefix(' ') else {
            continue;
        };
        let Some((address, hex)) = rest.split_once(' ') else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(address, 16) else {
            continue;
        };
        let start = *start.get_or_insert(address);
        assert_eq!(address, start + bytes.len() as u64, "gap in objdump output");
        // Four groups of 8 hex digits, each preceded by a space, then
        // two spaces and the ASCII column.
        let digits: String = hex
            .get(..35)
            .unwrap_or(hex)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        for index in (0..digits.len()).step_by(2) {
            let byte = u8::from_str_radix(&digits[index..index + 2], 16)
                .unwrap_or_else(|_| panic!("bad objdump line {line:?}"));
            bytes.push(byte);
        }
    }
    (start.expect("objdump printed the section"), bytes)
}

/// Address of the one occurrence of `needle` in the dumped section.
fn oracle_address(dump: &(u64, Vec<u8>), needle: &[u8]) -> u64 {
    let hits: Vec<usize> = dump
        .1
        .windows(needle.len())
        .enumerate()
        .filter(|(_, window)| *window == needle)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(hits.len(), 1, "{needle:?} occurs {} times", hits.len());
    dump.0 + hits[0] as u64
}

const NEEDLE_PROGRAM: &str = r#"#include <uchar.h>
const char *narrow = "rea-needle-string";
const char16_t *wide = u"utf16-needle";
int main(void) { return narrow[0] + (int)wide[0]; }
"#;

#[test]
fn compiled_needles_are_found_where_llvm_objdump_shows_them() {
    if !tool_available("cc") {
        return skip_or_fail("cc is not installed");
    }
    if !tool_available("llvm-objdump") {
        return skip_or_fail("llvm-objdump is not installed");
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let source = dir.path().join("needles.c");
    std::fs::write(&source, NEEDLE_PROGRAM).expect("write C source");
    let program = dir.path().join("needles");
    run(
        "cc",
        &[
            "-std=c11",
            "-O0",
            "-o",
            program.to_str().expect("UTF-8"),
            source.to_str().expect("UTF-8"),
        ],
    );
    let rodata = objdump_section(&program, ".rodata", &[]);
    let narrow = oracle_address(&rodata, b"rea-needle-string\0");
    let wide = oracle_address(&rodata, &utf16("utf16-needle\0"));

    let image = NativeImage::open(&program).expect("open compiled program");
    let table = image.strings(0).expect("strings");
    assert_well_formed(&table);
    let at = |address: u64| {
        table
            .strings
            .iter()
            .find(|string| string.address == address)
            .unwrap_or_else(|| panic!("nothing found at {address:#x}"))
    };
    let expected = |address, encoding, value: &str| FoundString {
        address,
        encoding,
        value: value.to_owned(),
        section: ".rodata".to_owned(),
        truncated: false,
    };
    assert_eq!(
        at(narrow),
        &expected(narrow, StringEncoding::Ascii, "rea-needle-string")
    );
    assert_eq!(
        at(wide),
        &expected(wide, StringEncoding::Utf16Le, "utf16-needle")
    );
}

/// Each slice of the universal fsevents.node has its own table: every
/// NUL-terminated, all-printable C string of 4+ characters that
/// `llvm-objdump --arch=<a>` shows in `__TEXT,__cstring` is found, whole,
/// at that address.
#[test]
fn universal_slices_match_llvm_objdump_cstrings() {
    if !tool_available("llvm-objdump") {
        return skip_or_fail("llvm-objdump is not installed");
    }
    let Some(path) = fixture("fsevents.node") else {
        return;
    };
    let image = NativeImage::open(&path).expect("open fixture");
    assert_eq!(image.documents().len(), 2);
    for (index, document) in image.documents().iter().enumerate() {
        let arch = format!("--arch={}", document.architecture);
        let (start, bytes) = objdump_section(&path, "__cstring", &[&arch]);
        let table = image.strings(index).expect("strings");
        assert_well_formed(&table);
        let mut expected = 0;
        let mut offset = 0;
        for piece in bytes.split(|&byte| byte == 0) {
            let printable = piece
                .iter()
                .all(|&byte| byte == b'\t' || (0x20..0x7f).contains(&byte));
            if printable && piece.len() >= MIN_STRING_CHARS {
                expected += 1;
                let address = start + offset as u64;
                let text = std::str::from_utf8(piece).expect("ASCII");
                let hit = table.strings.iter().find(|s| s.address == address);
                assert_eq!(
                    hit.map(|s| (s.value.as_str(), s.section.as_str())),
                    Some((text, "__TEXT,__cstring")),
                    "{} at {address:#x}",
                    document.name
                );
            }
            offset += piece.len() + 1;
        }
        assert!(expected >= 20, "{}: only {expected}", document.name);
    }
}

/// `.rodata`'s (address, file offset, size) from `llvm-readelf -S -W`.
fn readelf_rodata(path: &Path) -> (u64, u64, u64) {
    let sections = run("llvm-readelf", &["-S", "-W", path.to_str().expect("UTF-8")]);
    sections
        .lines()
        .find_map(|line| {
            let (_, rest) = line.split_once(']')?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let [name, _kind, address, offset, size, ..] = fields.as_slice() else {
                return None;
            };
            let hex = |text: &str| u64::from_str_radix(text, 16).ok();
            (*name == ".rodata").then_some((hex(address)?, hex(offset)?, hex(size)?))
        })
        .expect("llvm-readelf lists .rodata")
}

/// Every string GNU `strings -a -n 8` reports inside `.rodata` of the
/// pinned stripped ELF is found at the same address (as part of a run
/// that may start earlier: we also accept UTF-8 and shorter runs).
#[test]
fn watcher_rodata_strings_match_gnu_strings() {
    if !tool_available("strings") || !tool_available("llvm-readelf") {
        return skip_or_fail("GNU strings or llvm-readelf is not installed");
    }
    let Some(path) = fixture("watcher-linux-x64.node") else {
        return;
    };
    let (address, offset, size) = readelf_rodata(&path);
    let listing = run(
        "strings",
        &["-a", "-n", "8", "-t", "x", path.to_str().expect("UTF-8")],
    );
    let all: Vec<(u64, &str)> = listing
        .lines()
        .filter_map(|line| {
            let (at, text) = line.trim_start().split_once(' ')?;
            Some((u64::from_str_radix(at, 16).ok()?, text))
        })
        .collect();
    let in_rodata: Vec<(u64, &str)> = all
        .iter()
        .filter(|(at, text)| *at >= offset && at + text.len() as u64 <= offset + size)
        .map(|(at, text)| (address + (at - offset), *text))
        .collect();
    assert!(
        in_rodata.len() >= 50,
        "only {} strings in .rodata",
        in_rodata.len()
    );

    let image = NativeImage::open(&path).expect("open fixture");
    let table = image.strings(0).expect("strings");
    assert_well_formed(&table);
    let narrow: Vec<&FoundString> = table
        .strings
        .iter()
        .filter(|s| s.encoding != StringEncoding::Utf16Le)
        .collect();
    let covers = |at: u64, text: &str| {
        let index = narrow.partition_point(|s| s.address <= at);
        let Some(string) = index.checked_sub(1).and_then(|i| narrow.get(i)) else {
            return false;
        };
        let skip = (at - string.address) as usize;
        string.section == ".rodata"
            && match string.value.as_bytes().get(skip..) {
                Some(tail) => {
                    tail.starts_with(text.as_bytes())
                        || (string.truncated && text.as_bytes().starts_with(tail))
                }
                None => string.truncated,
            }
    };
    let missing: Vec<_> = in_rodata
        .iter()
        .filter(|(at, text)| !covers(*at, text))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} missing, e.g. {:?}",
        missing.len(),
        in_rodata.len(),
        &missing[..missing.len().min(5)]
    );

    // Five distinctive ones by name: the longest that occur once in the
    // whole file, each found as an exact string inside .rodata.
    let mut distinctive: Vec<(u64, &str)> = in_rodata
        .iter()
        .filter(|(_, text)| all.iter().filter(|(_, other)| other == text).count() == 1)
        .copied()
        .collect();
    distinctive.sort_by_key(|(_, text)| std::cmp::Reverse(text.len()));
    distinctive.truncate(5);
    assert_eq!(distinctive.len(), 5);
    for (at, text) in distinctive {
        eprintln!("distinctive: {at:#x} {text:?}");
        assert!((address..address + size).contains(&at));
        assert!(covers(at, text), "{text:?} at {at:#x} not found");
    }
}
