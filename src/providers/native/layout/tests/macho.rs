//! Mach-O: the pinned universal binary against `llvm-objdump` and
//! `llvm-otool` per slice, and hand-built load commands.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::providers::native::fixtures::{self, fixture};

// ---------------------------------------------------------- Mach-O fixture

/// One `Load command` block of `llvm-objdump --macho --private-headers`:
/// its key/value lines, and its `Section` blocks.
#[derive(Default)]
struct Command_ {
    fields: BTreeMap<String, String>,
    sections: Vec<BTreeMap<String, String>>,
}

fn load_commands(text: &str) -> Vec<Command_> {
    let mut commands: Vec<Command_> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Load command ") {
            commands.push(Command_::default());
            continue;
        }
        let Some(command) = commands.last_mut() else {
            continue;
        };
        if line == "Section" {
            command.sections.push(BTreeMap::new());
            continue;
        }
        let Some((key, value)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let target = command.sections.last_mut().unwrap_or(&mut command.fields);
        target
            .entry(key.to_owned())
            .or_insert_with(|| value.trim().to_owned());
    }
    commands
}

fn protection(text: &str) -> &'static str {
    match text {
        "r--" => "r--",
        "r-x" => "r-x",
        "rw-" => "rw-",
        "---" => "---",
        "rwx" => "rwx",
        other => panic!("unexpected protection {other}"),
    }
}

#[test]
fn macho_universal_fixture_matches_llvm_per_slice() {
    let Some(path) = fixture("fsevents.node") else {
        return;
    };
    let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
        return;
    };
    let Some(otool) = tool(&["llvm-otool", "llvm-otool-14"]) else {
        return;
    };
    let layouts = open_layouts(&path);
    assert_eq!(layouts.len(), 2);
    let mut signed = Vec::new();
    for (info, layout) in &layouts {
        let arch = info.architecture.as_str();
        let arch_flag = format!("--arch={arch}");
        assert_eq!(layout.format, Format::MachO);
        assert!(
            layout.limitations.is_empty(),
            "{arch}: {:?}",
            layout.limitations
        );

        // Load dylibs: llvm-otool -L.
        let libraries = run(&otool, &["-L", "-arch", arch], &path);
        let expected: Vec<String> = libraries
            .lines()
            .skip(1)
            .filter_map(|line| Some(line.trim().split_once(" (compatibility")?.0.to_owned()))
            .collect();
        assert_eq!(expected.len(), 4, "{libraries}");
        assert_eq!(layout.needed_libraries, expected, "{arch}");

        // Sections: llvm-objdump -h gives name, size, VMA; the private
        // headers give the segment name and file offset.
        let headers = run(&objdump, &["--macho", "-h", &arch_flag], &path);
        let listed: Vec<(String, u64, String)> = headers
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [index, name, size, vma, ..] = fields.as_slice() else {
                    return None;
                };
                index.parse::<u32>().ok()?;
                Some(((*name).to_owned(), hex(size), addr(vma)))
            })
            .collect();
        assert!(listed.len() >= 8, "{headers}");
        let actual: Vec<(String, u64, String)> = layout
            .sections
            .iter()
            .map(|section| (section.name.clone(), section.size, section.address.clone()))
            .collect();
        assert_eq!(actual, listed, "{arch}");

        let private = run(
            &objdump,
            &["--macho", "--private-headers", &arch_flag],
            &path,
        );
        let commands = load_commands(&private);
        let segments: Vec<&Command_> = commands
            .iter()
            .filter(|command| {
                command.fields.get("cmd").map(String::as_str) == Some("LC_SEGMENT_64")
            })
            .collect();
        let sections: Vec<(String, String, Option<u64>)> = segments
            .iter()
            .flat_map(|segment| &segment.sections)
            .map(|section| {
                let zero_fill = section["type"].contains("ZEROFILL");
                (
                    section["sectname"].clone(),
                    section["segname"].clone(),
                    (!zero_fill).then(|| section["offset"].parse().expect("offset")),
                )
            })
            .collect();
        let actual: Vec<(String, String, Option<u64>)> = layout
            .sections
            .iter()
            .map(|section| {
                (
                    section.name.clone(),
                    section.segment.clone().unwrap_or_default(),
                    section.file_offset,
                )
            })
            .collect();
        assert_eq!(actual, sections, "{arch}");
        let expected_segments: Vec<LayoutSegment> = segments
            .iter()
            .map(|segment| LayoutSegment {
                name: Some(segment.fields["segname"].clone()),
                address: addr(&segment.fields["vmaddr"]),
                size: hex(&segment.fields["vmsize"]),
                file_offset: segment.fields["fileoff"].parse().expect("fileoff"),
                file_size: segment.fields["filesize"].parse().expect("filesize"),
                permissions: Some(protection(&segment.fields["initprot"])),
            })
            .collect();
        assert_eq!(layout.segments, expected_segments, "{arch}");

        let has_signature = commands.iter().any(|command| {
            command.fields.get("cmd").map(String::as_str) == Some("LC_CODE_SIGNATURE")
        });
        assert_eq!(layout.code_signature, Some(has_signature), "{arch}");
        signed.push(has_signature);

        let build = commands
            .iter()
            .find(|command| {
                command.fields.get("cmd").map(String::as_str) == Some("LC_BUILD_VERSION")
            })
            .expect("LC_BUILD_VERSION");
        let expected = format!(
            "{} {} (sdk {})",
            build.fields["platform"], build.fields["minos"], build.fields["sdk"]
        );
        assert_eq!(
            layout.macho_build_version.as_deref(),
            Some(expected.as_str())
        );

        // Exports: the exports trie as llvm-objdump prints it.
        let trie = run(&objdump, &["--macho", "--exports-trie", &arch_flag], &path);
        let expected: BTreeSet<(String, String)> = trie
            .lines()
            .filter(|line| line.starts_with("0x"))
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let address = fields.next()?;
                Some((fields.next()?.to_owned(), addr(address)))
            })
            .collect();
        assert!(expected.len() >= 10, "{trie}");
        let actual: BTreeSet<(String, String)> = layout
            .exports
            .iter()
            .map(|export| (export.name.clone(), export.address.clone()))
            .collect();
        assert_eq!(actual, expected, "{arch}");

        // Imports: the bind tables' (dylib, symbol), with llvm's short
        // dylib names ("libSystem" for /usr/lib/libSystem.B.dylib) and
        // "flat-namespace" for flat lookups, which have no library.
        let binds = run(
            &objdump,
            &[
                "--macho",
                "--bind",
                "--lazy-bind",
                "--weak-bind",
                &arch_flag,
            ],
            &path,
        );
        let mut expected = BTreeSet::new();
        let mut dylib_column = None;
        for line in binds.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.first() == Some(&"segment") {
                dylib_column = fields.iter().position(|field| *field == "dylib");
            } else if line.starts_with("__") {
                let symbol = fields[fields.len() - 1].to_owned();
                let dylib = dylib_column.map(|column| match fields[column] {
                    "flat-namespace" => String::new(),
                    short => short.to_owned(),
                });
                expected.insert((dylib, symbol));
            }
        }
        assert!(expected.len() >= 10, "{binds}");
        let short = |library: &str| -> String {
            let file = library.rsplit('/').next().unwrap_or(library);
            file.split('.').next().unwrap_or(file).to_owned()
        };
        let actual: BTreeSet<(Option<String>, String)> = layout
            .imports
            .iter()
            .map(|import| (Some(short(&import.library)), import.name.clone()))
            .collect();
        assert_eq!(actual, expected, "{arch}");
        assert!(
            layout.imports.iter().all(|import| import.library.is_empty()
                || layout.needed_libraries.contains(&import.library)),
            "{arch}: {:?}",
            layout.imports
        );
    }
    // The x86_64 slice is unsigned, the arm64 one is signed: the check
    // above can tell presence from absence.
    assert_eq!(signed, [false, true]);
}

// ---------------------------------------------- hand-built: Mach-O

#[test]
fn tiny_macho_layout() {
    let layout = layout_of_bytes(&fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64));
    assert_eq!(layout.format, Format::MachO);
    assert_eq!(
        layout.entry_point,
        Some(format_address(fixtures::MACHO_TEXT))
    );
    assert_eq!(layout.code_signature, Some(false));
    assert_eq!(layout.macho_build_version, None);
    assert_eq!(
        layout.segments,
        [LayoutSegment {
            name: Some("__TEXT".to_owned()),
            address: "0x100000000".to_owned(),
            size: 0x1000,
            file_offset: 0,
            file_size: 0x1000,
            permissions: Some("r-x"),
        }]
    );
    assert_eq!(
        layout.sections,
        [LayoutSection {
            name: "__text".to_owned(),
            segment: Some("__TEXT".to_owned()),
            address: format_address(fixtures::MACHO_TEXT),
            size: 0x10,
            file_offset: Some(0x400),
            kind: "text",
        }]
    );
    // No exports trie: exports come from the external symbols.
    let names: BTreeSet<&str> = layout.exports.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["_main", "_early_weak"]));
}

/// `fixtures::tiny_macho` plus `LC_DYLD_EXPORTS_TRIE` (one export `_t`
/// at `__TEXT` + 0x400), `LC_RPATH`, `LC_LOAD_WEAK_DYLIB`,
/// `LC_BUILD_VERSION` (macOS 10.13.4, no SDK) and `LC_CODE_SIGNATURE`.
fn macho_with_commands() -> Vec<u8> {
    fn command(cmd: u32, fixed: &[u32], text: &[u8]) -> Vec<u8> {
        let header = 8 + 4 * fixed.len();
        let size = (header + text.len() + 1).next_multiple_of(8);
        let mut out = Vec::new();
        out.extend_from_slice(&cmd.to_le_bytes());
        out.extend_from_slice(&(size as u32).to_le_bytes());
        for word in fixed {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(text);
        out.resize(size, 0);
        out
    }
    const TRIE: usize = 0xc00;
    // Root: no terminal, one edge "_t" to offset 6; node 6: terminal
    // (flags 0, address 0x400 as ULEB 0x80 0x08), no children.
    let trie = [0u8, 1, b'_', b't', 0, 6, 3, 0, 0x80, 0x08, 0];
    let commands = [
        command(0x8000_0033, &[TRIE as u32, trie.len() as u32], b""),
        command(0x8000_001c, &[12], b"@loader_path/../lib"),
        command(
            0x8000_0018,
            &[24, 2, 0x1_0000, 0x1_0000],
            b"/usr/lib/libweak.dylib",
        ),
        command(0x32, &[1, 0x000a_0d04, 0, 0], b""),
        command(0x1d, &[0xf00, 0x10], b""),
    ];
    let mut out = fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64);
    let word = |out: &[u8], at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
    let (count, size) = (word(&out, 16), word(&out, 20));
    let mut at = 32 + size as usize;
    for command in &commands {
        put(&mut out, at, command);
        at += command.len();
    }
    assert!(at <= 0x400, "load commands overlap __text");
    let added: usize = commands.iter().map(Vec::len).sum();
    put(&mut out, 16, &(count + commands.len() as u32).to_le_bytes());
    put(&mut out, 20, &(size + added as u32).to_le_bytes());
    put(&mut out, TRIE, &trie);
    out
}

#[test]
fn macho_load_commands_and_exports_trie() {
    let layout = layout_of_bytes(&macho_with_commands());
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
    assert_eq!(layout.needed_libraries, ["/usr/lib/libweak.dylib"]);
    assert_eq!(layout.rpaths, ["@loader_path/../lib"]);
    assert_eq!(
        layout.macho_build_version.as_deref(),
        Some("macos 10.13.4 (sdk n/a)")
    );
    assert_eq!(layout.code_signature, Some(true));
    // Trie addresses are relative to __TEXT (0x100000000 here); the
    // trie, not the symbol table, is the export list.
    assert_eq!(
        layout.exports,
        [LayoutExport {
            name: "_t".to_owned(),
            address: "0x100000400".to_owned(),
        }]
    );
}
