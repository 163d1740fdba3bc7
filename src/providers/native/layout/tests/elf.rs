//! ELF: the pinned shared object against `llvm-readelf` and `llvm-nm`, a
//! program compiled here, and hand-built dynamic tables.

use std::collections::BTreeSet;

use super::*;
use crate::providers::native::fixtures::fixture;

// ------------------------------------------------------------ ELF fixture

#[test]
fn elf_fixture_matches_llvm_readelf_and_nm() {
    let Some(path) = fixture("watcher-linux-x64.node") else {
        return;
    };
    let Some(readelf) = tool(&["llvm-readelf", "llvm-readelf-14"]) else {
        return;
    };
    let Some(nm) = tool(&["llvm-nm", "llvm-nm-14"]) else {
        return;
    };
    let layouts = open_layouts(&path);
    let [(_, layout)] = layouts.as_slice() else {
        panic!("one document expected");
    };
    assert_eq!(layout.format, Format::Elf);
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
    assert_eq!(layout.code_signature, None);
    assert_eq!(layout.pe_subsystem, None);

    // DT_NEEDED, in table order.
    let dynamic = run(&readelf, &["-d", "-W"], &path);
    let needed: Vec<String> = dynamic
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .filter_map(|line| Some(line.split_once('[')?.1.split_once(']')?.0.to_owned()))
        .collect();
    assert_eq!(needed.len(), 5, "{dynamic}");
    assert_eq!(layout.needed_libraries, needed);
    assert!(layout.rpaths.is_empty());

    // Section headers: name, address, offset, size (index 0 is null).
    let headers = run(&readelf, &["-S", "-W"], &path);
    let mut expected = Vec::new();
    for line in headers.lines() {
        let Some((index, rest)) = line
            .trim_start()
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
        else {
            continue;
        };
        let Ok(index) = index.trim().parse::<usize>() else {
            continue;
        };
        if index == 0 {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (name, kind) = (fields[0], fields[1]);
        let offset = (kind != "NOBITS").then(|| hex(fields[3]));
        expected.push((name.to_owned(), addr(fields[2]), offset, hex(fields[4])));
    }
    assert_eq!(expected.len(), 27, "{headers}");
    let actual: Vec<_> = layout
        .sections
        .iter()
        .map(|section| {
            (
                section.name.clone(),
                section.address.clone(),
                section.file_offset,
                section.size,
            )
        })
        .collect();
    assert_eq!(actual, expected);
    let kind = |name: &str| {
        layout
            .sections
            .iter()
            .find(|section| section.name == name)
            .map(|section| section.kind)
    };
    assert_eq!(kind(".text"), Some("text"));
    assert_eq!(kind(".bss"), Some("uninitialized"));
    assert_eq!(kind(".rodata"), Some("read-only-data"));
    assert_eq!(kind(".data"), Some("data"));

    // PT_LOAD program headers.
    let program = run(&readelf, &["-l", "-W"], &path);
    let loads: Vec<LayoutSegment> = program
        .lines()
        .map(str::split_whitespace)
        .map(Iterator::collect::<Vec<_>>)
        .filter(|fields| fields.first() == Some(&"LOAD"))
        .map(|fields| {
            let flags = fields[6..fields.len() - 1].concat();
            let permissions = match (
                flags.contains('R'),
                flags.contains('W'),
                flags.contains('E'),
            ) {
                (true, false, false) => "r--",
                (true, false, true) => "r-x",
                (true, true, false) => "rw-",
                other => panic!("unexpected flags {other:?}"),
            };
            LayoutSegment {
                name: None,
                address: addr(fields[2]),
                size: hex(fields[5]),
                file_offset: hex(fields[1]),
                file_size: hex(fields[4]),
                permissions: Some(permissions),
            }
        })
        .collect();
    assert_eq!(loads.len(), 4, "{program}");
    assert_eq!(layout.segments, loads);

    let header = run(&readelf, &["-h"], &path);
    let entry = header
        .lines()
        .find_map(|line| line.trim().strip_prefix("Entry point address:"))
        .expect("entry line");
    assert_eq!(layout.entry_point, Some(addr(entry)));

    // Imports: undefined dynamic symbols (versions stripped).
    let undefined = run(&nm, &["-D", "--undefined-only"], &path);
    let expected: BTreeSet<String> = undefined
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .map(|name| name.split('@').next().unwrap_or(name).to_owned())
        .collect();
    let actual: BTreeSet<String> = layout
        .imports
        .iter()
        .map(|import| import.name.clone())
        .collect();
    assert!(expected.len() > 100);
    assert_eq!(actual, expected);
    assert_eq!(actual.len(), layout.imports.len(), "imports are unique");
    assert!(
        layout
            .imports
            .iter()
            .all(|import| import.library.is_empty())
    );

    // Exports: defined dynamic symbols with their addresses.
    let defined = run(&nm, &["-D", "--defined-only"], &path);
    let expected: BTreeSet<(String, String)> = defined
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let value = fields.next()?;
            let name = fields.nth(1)?;
            Some((
                name.split('@').next().unwrap_or(name).to_owned(),
                addr(value),
            ))
        })
        .collect();
    let actual: BTreeSet<(String, String)> = layout
        .exports
        .iter()
        .map(|export| (export.name.clone(), export.address.clone()))
        .collect();
    assert_eq!(expected.len(), 663);
    assert_eq!(actual, expected);
    assert!(actual.contains(&(
        "_Z9subscribeRKN4Napi12CallbackInfoE".to_owned(),
        "0x25590".to_owned()
    )));
}

// ----------------------------------------------------- compiled program

#[test]
fn compiled_program_has_rpath_and_libc() {
    let Some(cc) = tool(&["cc", "gcc", "clang"]) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let source = dir.path().join("hello.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\nint main(void) { puts(\"layout\"); return 0; }\n",
    )
    .expect("write source");
    let program = dir.path().join("hello");
    let output = Command::new(&cc)
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .arg("-Wl,-rpath,/opt/test-rpath")
        .output()
        .expect("run cc");
    assert!(
        output.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let layouts = open_layouts(&program);
    let [(_, layout)] = layouts.as_slice() else {
        panic!("one document expected");
    };
    assert_eq!(layout.format, Format::Elf);
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
    assert!(
        layout.rpaths.iter().any(|path| path == "/opt/test-rpath"),
        "{:?}",
        layout.rpaths
    );
    assert!(
        layout
            .needed_libraries
            .iter()
            .any(|name| name == "libc.so.6"),
        "{:?}",
        layout.needed_libraries
    );
    assert!(layout.imports.iter().any(|import| import.name == "puts"));
    assert!(layout.entry_point.is_some());
    if let Some(readelf) = tool(&["llvm-readelf", "llvm-readelf-14", "readelf"]) {
        let dynamic = run(&readelf, &["-d", "-W"], &program);
        let paths: Vec<String> = dynamic
            .lines()
            .filter(|line| line.contains("(RUNPATH)") || line.contains("(RPATH)"))
            .filter_map(|line| Some(line.split_once('[')?.1.split_once(']')?.0.to_owned()))
            .flat_map(|paths| paths.split(':').map(str::to_owned).collect::<Vec<_>>())
            .collect();
        assert_eq!(layout.rpaths, paths);
    }
}

// -------------------------------------------------- hand-built: ELF

/// A little-endian ELF64 shared object with a `PT_LOAD` covering the
/// whole file, a `PT_DYNAMIC`, and (if `section_headers`) `.dynstr`,
/// `.dynamic` and `.shstrtab` sections. `DT_STRTAB`/`DT_STRSZ` come
/// first, then `entries`, then `DT_NULL`. Addresses equal offsets.
pub(super) fn dynamic_elf(
    strings: &[u8],
    entries: &[(i64, u64)],
    section_headers: bool,
) -> Vec<u8> {
    const DYNSTR: usize = 0x100;
    let dynamic = (DYNSTR + strings.len()).next_multiple_of(8);
    let mut table = vec![(5i64, DYNSTR as u64), (10, strings.len() as u64)];
    table.extend_from_slice(entries);
    table.push((0, 0));
    let dynamic_size = table.len() * 16;
    let shstrtab = dynamic + dynamic_size;
    let names = b"\0.dynstr\0.dynamic\0.shstrtab\0";
    let shoff = (shstrtab + names.len()).next_multiple_of(8);
    let end = shoff + if section_headers { 4 * 64 } else { 0 };

    let mut out = vec![0u8; end];
    put(&mut out, 0, b"\x7fELF\x02\x01\x01");
    put(&mut out, 16, &3u16.to_le_bytes());
    put(&mut out, 18, &62u16.to_le_bytes());
    put(&mut out, 20, &1u32.to_le_bytes());
    put(&mut out, 32, &64u64.to_le_bytes());
    put(
        &mut out,
        40,
        &(if section_headers { shoff as u64 } else { 0 }).to_le_bytes(),
    );
    put(&mut out, 52, &64u16.to_le_bytes());
    put(&mut out, 54, &56u16.to_le_bytes());
    put(&mut out, 56, &2u16.to_le_bytes());
    put(&mut out, 58, &64u16.to_le_bytes());
    put(
        &mut out,
        60,
        &(if section_headers { 4u16 } else { 0 }).to_le_bytes(),
    );
    put(
        &mut out,
        62,
        &(if section_headers { 3u16 } else { 0 }).to_le_bytes(),
    );
    // PT_LOAD (r--) over the whole file, PT_DYNAMIC over the table.
    for (index, (kind, flags, offset, size)) in
        [(1u32, 4u32, 0usize, end), (2, 6, dynamic, dynamic_size)]
            .into_iter()
            .enumerate()
    {
        let at = 64 + index * 56;
        put(&mut out, at, &kind.to_le_bytes());
        put(&mut out, at + 4, &flags.to_le_bytes());
        for (field, value) in [8, 16, 24].into_iter().zip([offset, offset, offset]) {
            put(&mut out, at + field, &(value as u64).to_le_bytes());
        }
        put(&mut out, at + 32, &(size as u64).to_le_bytes());
        put(&mut out, at + 40, &(size as u64).to_le_bytes());
        put(&mut out, at + 48, &8u64.to_le_bytes());
    }
    put(&mut out, DYNSTR, strings);
    for (index, (tag, value)) in table.iter().enumerate() {
        put(&mut out, dynamic + index * 16, &tag.to_le_bytes());
        put(&mut out, dynamic + index * 16 + 8, &value.to_le_bytes());
    }
    put(&mut out, shstrtab, names);
    if section_headers {
        // name, type, addr/offset, size, link, entsize
        let headers = [
            (1u32, 3u32, DYNSTR, strings.len(), 0u32, 0u64),
            (9, 6, dynamic, dynamic_size, 1, 16),
            (18, 3, shstrtab, names.len(), 0, 0),
        ];
        for (index, (name, kind, offset, size, link, entsize)) in headers.into_iter().enumerate() {
            let at = shoff + (index + 1) * 64;
            put(&mut out, at, &name.to_le_bytes());
            put(&mut out, at + 4, &kind.to_le_bytes());
            let address = if kind == 6 || index == 0 {
                offset as u64
            } else {
                0
            };
            put(&mut out, at + 16, &address.to_le_bytes());
            put(&mut out, at + 24, &(offset as u64).to_le_bytes());
            put(&mut out, at + 32, &(size as u64).to_le_bytes());
            put(&mut out, at + 40, &link.to_le_bytes());
            put(&mut out, at + 48, &1u64.to_le_bytes());
            put(&mut out, at + 56, &entsize.to_le_bytes());
        }
    }
    out
}

pub(super) const DT_NEEDED: i64 = 1;
const DT_RPATH: i64 = 15;
pub(super) const DT_RUNPATH: i64 = 29;

#[test]
fn elf_dynamic_entries_from_sections_and_from_pt_dynamic() {
    let strings = b"\0libfoo.so.1\0/a::/b\0libbar.so\0/old\0";
    let entries = [
        (DT_NEEDED, 1),
        (DT_RUNPATH, 13),
        (DT_NEEDED, 20),
        (DT_RPATH, 30),
    ];
    for section_headers in [true, false] {
        let layout = layout_of_bytes(&dynamic_elf(strings, &entries, section_headers));
        assert_eq!(layout.needed_libraries, ["libfoo.so.1", "libbar.so"]);
        assert_eq!(layout.rpaths, ["/a", "/b", "/old"]);
        assert_eq!(layout.segments.len(), 1);
        assert_eq!(layout.segments[0].permissions, Some("r--"));
        if section_headers {
            assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
            let names: Vec<&str> = layout.sections.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, [".dynstr", ".dynamic", ".shstrtab"]);
        } else {
            assert!(layout.sections.is_empty());
            assert!(
                layout
                    .limitations
                    .iter()
                    .any(|l| l.contains("no section headers")),
                "{:?}",
                layout.limitations
            );
        }
    }
}

#[test]
fn elf_needed_libraries_are_capped_and_bad_offsets_reported() {
    // One name 20,000 times is one library and 19,999 repeats.
    let entries = vec![(DT_NEEDED, 1); 20_000];
    let layout = layout_of_bytes(&dynamic_elf(b"\0libx.so\0", &entries, true));
    assert_eq!(layout.needed_libraries, ["libx.so"]);
    assert_eq!(layout.needed_libraries_repeated, 19_999);
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);

    let mut strings = vec![0u8];
    let mut entries = Vec::new();
    for index in 0..=MAX_LAYOUT_ENTRIES {
        entries.push((DT_NEEDED, strings.len() as u64));
        strings.extend_from_slice(format!("l{index}.so\0").as_bytes());
    }
    let layout = layout_of_bytes(&dynamic_elf(&strings, &entries, true));
    assert_eq!(layout.needed_libraries.len(), MAX_LAYOUT_ENTRIES);
    assert_eq!(layout.needed_libraries_repeated, 0);
    assert!(
        layout
            .limitations
            .iter()
            .any(|l| l.starts_with("needed libraries truncated at 10000")),
        "{:?}",
        layout.limitations
    );

    let entries = [
        (DT_NEEDED, 1),
        (DT_NEEDED, 0xffff_ffff),
        (DT_RUNPATH, 1 << 40),
    ];
    let layout = layout_of_bytes(&dynamic_elf(b"\0libx.so\0", &entries, true));
    assert_eq!(layout.needed_libraries, ["libx.so"]);
    assert!(layout.rpaths.is_empty());
    assert!(
        layout
            .limitations
            .iter()
            .any(|l| l.contains("2 dynamic entries could not be read")),
        "{:?}",
        layout.limitations
    );

    // A string without terminator longer than the name limit is cut.
    let mut strings = vec![0u8];
    strings.extend(std::iter::repeat_n(b'x', MAX_NAME_BYTES * 3));
    let layout = layout_of_bytes(&dynamic_elf(&strings, &[(DT_NEEDED, 1)], true));
    assert_eq!(layout.needed_libraries.len(), 1);
    assert_eq!(layout.needed_libraries[0].len(), MAX_NAME_BYTES);
    assert!(
        layout.limitations.iter().any(|l| l.contains("were cut")),
        "{:?}",
        layout.limitations
    );
}
