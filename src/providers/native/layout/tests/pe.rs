//! PE: the pinned DLL and EXE against `llvm-objdump` and `llvm-readobj`,
//! and hand-built TLS callback arrays.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::providers::native::fixtures::{self, PE_BASE, fixture};

// ------------------------------------------------------------- PE fixtures

/// `llvm-readobj --coff-imports`: (library, symbol) of the import and
/// delay-import tables, and the library names in order.
fn coff_imports(text: &str) -> (BTreeSet<(String, String)>, Vec<String>) {
    let mut imports = BTreeSet::new();
    let mut libraries = Vec::new();
    let mut library = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("  Name: ") {
            library = name.trim().to_owned();
            libraries.push(library.clone());
        } else if let Some(symbol) = line.trim().strip_prefix("Symbol: ") {
            let name = symbol.rsplit_once(" (").map_or(symbol, |(name, _)| name);
            imports.insert((library.clone(), name.trim().to_owned()));
        }
    }
    (imports, libraries)
}

/// The `Section { ... }` blocks of `llvm-readobj --sections`, as
/// `Key: value` maps.
fn readobj_sections(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut sections: Vec<BTreeMap<String, String>> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line == "Section {" {
            sections.push(BTreeMap::new());
        } else if let (Some(section), Some((key, value))) =
            (sections.last_mut(), line.split_once(": "))
        {
            section
                .entry(key.to_owned())
                .or_insert_with(|| value.to_owned());
        }
    }
    sections
}

/// `Key   value` lines of `llvm-objdump -p`.
fn objdump_field(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| {
            let rest = line.strip_prefix(key)?;
            rest.starts_with(char::is_whitespace)
                .then(|| rest.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("{key} not in llvm-objdump -p output"))
}

fn subsystem_from_objdump(text: &str) -> &'static str {
    let field = objdump_field(text, "Subsystem");
    if field.ends_with("(Windows GUI)") {
        "windows-gui"
    } else if field.ends_with("(Windows CUI)") {
        "windows-cui"
    } else {
        panic!("unexpected subsystem {field}")
    }
}

#[test]
fn pe_dll_fixture_matches_llvm_objdump_and_readobj() {
    let Some(path) = fixture("watcher-win32-x64.node") else {
        return;
    };
    let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
        return;
    };
    let Some(readobj) = tool(&["llvm-readobj", "llvm-readobj-14"]) else {
        return;
    };
    let layouts = open_layouts(&path);
    let [(_, layout)] = layouts.as_slice() else {
        panic!("one document expected");
    };
    assert_eq!(layout.format, Format::Pe);
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);

    let private = run(&objdump, &["-p"], &path);
    let image_base = hex(&objdump_field(&private, "ImageBase"));
    let entry = hex(&objdump_field(&private, "AddressOfEntryPoint"));
    assert_eq!(layout.entry_point, Some(format_address(image_base + entry)));
    assert_eq!(layout.entry_point.as_deref(), Some("0x18002e460"));
    assert_eq!(
        layout.pe_subsystem.as_deref(),
        Some(subsystem_from_objdump(&private))
    );
    let security = private
        .lines()
        .find(|line| line.starts_with("Entry 4 "))
        .and_then(|line| line.split_whitespace().nth(3))
        .expect("security directory line");
    assert_eq!(layout.code_signature, Some(hex(security) != 0));

    // Export table: ordinal, RVA, name.
    let exports_text = private.split_once("Export Table:").expect("export table").1;
    let expected: BTreeSet<(String, String)> = exports_text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [ordinal, rva, name] = fields.as_slice() else {
                return None;
            };
            ordinal.parse::<u32>().ok()?;
            Some(((*name).to_owned(), format_address(image_base + hex(rva))))
        })
        .collect();
    assert_eq!(expected.len(), 2);
    let actual: BTreeSet<(String, String)> = layout
        .exports
        .iter()
        .map(|export| (export.name.clone(), export.address.clone()))
        .collect();
    assert_eq!(actual, expected);

    // Imports: llvm-objdump -p lists the import table (not the delay
    // one); llvm-readobj lists both.
    let (expected, libraries) = coff_imports(&run(&readobj, &["--coff-imports"], &path));
    let actual: BTreeSet<(String, String)> = layout
        .imports
        .iter()
        .map(|import| (import.library.clone(), import.name.clone()))
        .collect();
    assert_eq!(actual, expected);
    assert_eq!(layout.needed_libraries, libraries);
    assert_eq!(libraries, ["KERNEL32.dll", "node.exe"]);
    let import_table = private
        .split_once("The Import Tables:")
        .expect("import tables")
        .1
        .split_once("Export Table:")
        .expect("export table")
        .0;
    let kernel32: BTreeSet<String> = import_table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [hint, name] = fields.as_slice() else {
                return None;
            };
            hint.parse::<u32>().ok()?;
            Some((*name).to_owned())
        })
        .collect();
    let ours: BTreeSet<String> = layout
        .imports
        .iter()
        .filter(|import| import.library == "KERNEL32.dll")
        .map(|import| import.name.clone())
        .collect();
    assert!(kernel32.len() > 100);
    assert_eq!(ours, kernel32);

    // Sections vs llvm-readobj's section headers: name, address, size
    // in memory (VirtualSize; `llvm-objdump -h` prints the raw size) and
    // file offset (none without file data).
    let headers = readobj_sections(&run(&readobj, &["--sections"], &path));
    let expected: Vec<(String, String, u64, Option<u64>)> = headers
        .iter()
        .map(|section| {
            let name = section["Name"]
                .split_whitespace()
                .next()
                .unwrap_or_default();
            let virtual_size = hex(&section["VirtualSize"]);
            let raw_size: u64 = section["RawDataSize"].parse().expect("RawDataSize");
            (
                name.to_owned(),
                format_address(image_base + hex(&section["VirtualAddress"])),
                virtual_size,
                (raw_size.min(virtual_size) > 0).then(|| hex(&section["PointerToRawData"])),
            )
        })
        .collect();
    assert_eq!(expected.len(), 8);
    let actual: Vec<(String, String, u64, Option<u64>)> = layout
        .sections
        .iter()
        .map(|section| {
            (
                section.name.clone(),
                section.address.clone(),
                section.size,
                section.file_offset,
            )
        })
        .collect();
    assert_eq!(actual, expected);
    // And llvm-objdump -h agrees on names and addresses.
    let listed: Vec<(String, String)> = run(&objdump, &["-h"], &path)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [index, name, _size, vma, _kind] = fields.as_slice() else {
                return None;
            };
            index.parse::<u32>().ok()?;
            Some(((*name).to_owned(), addr(vma)))
        })
        .collect();
    let ours: Vec<(String, String)> = actual
        .iter()
        .map(|(name, address, ..)| (name.clone(), address.clone()))
        .collect();
    assert_eq!(ours, listed);
    let text = &layout.segments[0];
    assert_eq!(text.name.as_deref(), Some(".text"));
    assert_eq!(text.permissions, Some("r-x"));
    assert_eq!(text.file_offset, hex(&headers[0]["PointerToRawData"]));

    // TLS callbacks: AddressOfCallBacks from llvm-readobj, mapped to the
    // file with llvm-readobj's section table, read here until zero.
    let tls = run(&readobj, &["--coff-tls-directory"], &path);
    let array = tls
        .lines()
        .find_map(|line| line.trim().strip_prefix("AddressOfCallBacks:"))
        .map(hex)
        .expect("AddressOfCallBacks");
    let offset = headers.iter().find_map(|section| {
        let start = image_base + hex(&section["VirtualAddress"]);
        let size: u64 = section["RawDataSize"].parse().expect("RawDataSize");
        (start..start + size)
            .contains(&array)
            .then(|| hex(&section["PointerToRawData"]) + (array - start))
    });
    let bytes = std::fs::read(&path).expect("read fixture");
    let mut expected = Vec::new();
    let mut at = usize::try_from(offset.expect("callback array in a section")).unwrap();
    loop {
        let value = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        if value == 0 {
            break;
        }
        expected.push(format_address(value));
        at += 8;
    }
    // This DLL's array is empty (its first entry is the terminator); the
    // hand-built PEs below cover non-empty arrays.
    assert_eq!(layout.tls_callbacks, expected);
}

#[test]
fn pe_exe_fixture_entry_subsystem_and_imports() {
    let Some(path) = fixture("esbuild-win32-x64.exe") else {
        return;
    };
    let Some(objdump) = tool(&["llvm-objdump", "llvm-objdump-14"]) else {
        return;
    };
    let Some(readobj) = tool(&["llvm-readobj", "llvm-readobj-14"]) else {
        return;
    };
    let layouts = open_layouts(&path);
    let [(_, layout)] = layouts.as_slice() else {
        panic!("one document expected");
    };
    assert!(layout.limitations.is_empty(), "{:?}", layout.limitations);
    assert_eq!(layout.entry_point.as_deref(), Some("0x14008c940"));
    assert_eq!(layout.pe_subsystem.as_deref(), Some("windows-cui"));
    let private = run(&objdump, &["-p"], &path);
    assert_eq!(
        layout.pe_subsystem.as_deref(),
        Some(subsystem_from_objdump(&private))
    );
    let listing = run(&readobj, &["--coff-imports"], &path);
    // 50 import entries (some names twice), listed once each here.
    assert_eq!(listing.matches("Symbol: ").count(), 50);
    let (expected, libraries) = coff_imports(&listing);
    assert_eq!(layout.imports.len(), expected.len());
    let actual: BTreeSet<(String, String)> = layout
        .imports
        .iter()
        .map(|import| (import.library.clone(), import.name.clone()))
        .collect();
    assert_eq!(actual, expected);
    assert_eq!(layout.needed_libraries, libraries);
    assert_eq!(layout.needed_libraries, ["kernel32.dll"]);
    assert!(layout.exports.is_empty());
    assert_eq!(layout.code_signature, Some(false));
    assert!(layout.tls_callbacks.is_empty());
}

// --------------------------------------------------- hand-built: PE

const PE_OPTIONAL: usize = 0x58;
const PE_RDATA_HEADER: usize = PE_OPTIONAL + 240 + 40;
const TLS_RVA: u32 = 0x2180;
const CALLBACKS_RVA: u32 = 0x21b0;

/// `fixtures::tiny_pe` with a TLS directory whose callback array holds
/// `callbacks` (then whatever follows); `.rdata` grows to fit.
pub(super) fn pe_with_tls(callbacks: &[u64]) -> Vec<u8> {
    let mut out = fixtures::tiny_pe();
    let rdata_file = |rva: u32| 0x400 + (rva as usize - 0x2000);
    let needed = rdata_file(CALLBACKS_RVA) + callbacks.len() * 8;
    let raw_size = (needed - 0x400).next_multiple_of(0x200).max(0x200);
    put(
        &mut out,
        PE_RDATA_HEADER + 8,
        &(raw_size as u32).to_le_bytes(),
    );
    put(
        &mut out,
        PE_RDATA_HEADER + 16,
        &(raw_size as u32).to_le_bytes(),
    );
    out.resize(0x400 + raw_size, 0);
    // Data directory 9 (TLS).
    put(&mut out, PE_OPTIONAL + 112 + 9 * 8, &TLS_RVA.to_le_bytes());
    put(
        &mut out,
        PE_OPTIONAL + 112 + 9 * 8 + 4,
        &40u32.to_le_bytes(),
    );
    let callbacks_va = PE_BASE + u64::from(CALLBACKS_RVA);
    put(
        &mut out,
        rdata_file(TLS_RVA) + 24,
        &callbacks_va.to_le_bytes(),
    );
    for (index, callback) in callbacks.iter().enumerate() {
        put(
            &mut out,
            rdata_file(CALLBACKS_RVA) + index * 8,
            &callback.to_le_bytes(),
        );
    }
    out
}

#[test]
fn pe_tls_callbacks_terminated_unterminated_and_capped() {
    let layout = layout_of_bytes(&pe_with_tls(&[PE_BASE + 0x1000, PE_BASE + 0x1020, 0]));
    assert_eq!(layout.tls_callbacks, ["0x140001000", "0x140001020"]);
    assert_eq!(layout.pe_subsystem.as_deref(), Some("windows-cui"));
    assert_eq!(layout.code_signature, Some(false));
    let exports: BTreeSet<(&str, &str)> = layout
        .exports
        .iter()
        .map(|export| (export.name.as_str(), export.address.as_str()))
        .collect();
    assert_eq!(
        exports,
        BTreeSet::from([
            ("alias_func", "0x140001010"),
            ("exp_data", "0x140002100"),
            ("exp_func", "0x140001010"),
            ("#4", "0x140001020"),
        ])
    );
    // `fwd` is a forwarder (`OTHER.func`): it has no address here.
    assert_eq!(layout.limitations.len(), 1, "{:?}", layout.limitations);
    assert!(layout.limitations[0].contains("1 exports have no address"));

    // The array fills the rest of .rdata with no zero entry.
    let filler = vec![PE_BASE + 0x1000; (0x2200 - CALLBACKS_RVA as usize) / 8];
    let layout = layout_of_bytes(&pe_with_tls(&filler));
    assert_eq!(layout.tls_callbacks.len(), filler.len());
    assert!(
        layout
            .limitations
            .iter()
            .any(|l| l.contains("no zero terminator")),
        "{:?}",
        layout.limitations
    );

    let many = vec![PE_BASE + 0x1000; 2 * MAX_LAYOUT_ENTRIES];
    let layout = layout_of_bytes(&pe_with_tls(&many));
    assert_eq!(layout.tls_callbacks.len(), MAX_LAYOUT_ENTRIES);
    assert!(
        layout
            .limitations
            .iter()
            .any(|l| l.starts_with("TLS callbacks truncated at 10000")),
        "{:?}",
        layout.limitations
    );

    // The array's VA is below the image base.
    let mut bytes = pe_with_tls(&[PE_BASE + 0x1000, 0]);
    put(&mut bytes, 0x400 + 0x180 + 24, &0x10u64.to_le_bytes());
    let layout = layout_of_bytes(&bytes);
    assert!(layout.tls_callbacks.is_empty());
    assert!(
        layout
            .limitations
            .iter()
            .any(|l| l.contains("is not in the file")),
        "{:?}",
        layout.limitations
    );
}
