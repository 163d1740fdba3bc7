//! Import tables and the call sites that reach them, checked against
//! outside oracles (GNU objdump's `name@plt` labels, llvm-objdump's
//! `symbol stub for:` comments, llvm-readobj's COFF import tables) on real
//! binaries, plus the pure pieces on hand-made bytes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::plt::{ebx_relative_jump, stub_start};
use super::{Builder, ImportTable, MAX_IMPORT_ENTRIES};
use crate::providers::code::Arch;
use crate::providers::native::NativeImage;
use crate::providers::native::code_map::{CodeMap, CodeRegion};
use crate::providers::native::fixtures::{fixture, run, skip_or_fail, tool_available};

/// Import name → every call-site address, per an oracle.
type Sites = BTreeMap<String, BTreeSet<u64>>;

fn hex(text: &str) -> u64 {
    u64::from_str_radix(text.trim_start_matches("0x"), 16).expect("oracle address")
}

/// What rea answers: for each import the oracle names, the call sites of
/// `callers` on its procedure (found by name in the inventory).
fn rea_sites(image: &NativeImage, document: usize, names: &Sites) -> Sites {
    let inventory = image.inventory(document).expect("inventory");
    let by_name: HashMap<&str, u64> = inventory
        .procedures
        .iter()
        .flat_map(|p| {
            p.name
                .iter()
                .chain(&p.aliases)
                .map(move |n| (n.as_str(), p.address))
        })
        .collect();
    names
        .keys()
        .map(|name| {
            let sites = by_name
                .get(name.as_str())
                .map_or_else(BTreeSet::new, |&entry| {
                    let callers = image.callers(document, entry).expect("callers");
                    callers.iter().map(|edge| edge.at).collect()
                });
            (name.clone(), sites)
        })
        .collect()
}

fn assert_same(what: &str, oracle: &Sites, ours: &Sites) {
    let total: usize = oracle.values().map(BTreeSet::len).sum();
    assert!(
        total > 100,
        "{what}: the oracle found only {total} call sites"
    );
    let wrong: Vec<_> = oracle
        .iter()
        .filter(|(name, sites)| ours.get(*name) != Some(sites))
        .map(|(name, sites)| {
            let got = ours.get(name).cloned().unwrap_or_default();
            (name, sites.len(), got.len())
        })
        .take(10)
        .collect();
    assert!(
        wrong.is_empty(),
        "{what}: (import, oracle sites, rea sites): {wrong:?}"
    );
}

/// GNU objdump's `call|jmp|jcc X <name@plt>` lines outside the PLT
/// sections themselves.
fn objdump_plt_sites(path: &Path) -> Sites {
    let text = run(
        "objdump",
        &["-d", "--no-show-raw-insn", &path.to_string_lossy()],
    );
    let mut sites = Sites::new();
    let mut in_plt = false;
    for line in text.lines() {
        if let Some(section) = line.strip_prefix("Disassembly of section ") {
            in_plt = section.starts_with(".plt");
            continue;
        }
        let Some((address, rest)) = line.trim_start().split_once(":\t") else {
            continue;
        };
        let Some(name) = rest
            .strip_suffix("@plt>")
            .and_then(|head| head.rsplit_once('<'))
            .map(|(_, name)| name)
        else {
            continue;
        };
        let mnemonic = rest
            .split_whitespace()
            .find(|word| *word != "bnd" && *word != "notrack");
        let branch = mnemonic.is_some_and(|m| m.starts_with('j') || m.starts_with("call"));
        if !in_plt && branch && !name.contains('+') {
            sites
                .entry(name.to_owned())
                .or_default()
                .insert(hex(address));
        }
    }
    sites
}

fn check_elf(path: &Path) {
    if !tool_available("objdump") {
        return skip_or_fail("objdump (binutils) is not installed");
    }
    let oracle = objdump_plt_sites(path);
    let image = NativeImage::open(path).expect("open");
    assert_same(
        &path.display().to_string(),
        &oracle,
        &rea_sites(&image, 0, &oracle),
    );
}

#[test]
fn elf_import_call_sites_match_objdump_on_ls() {
    check_elf(Path::new("/usr/bin/ls"));
}

#[test]
fn elf_import_call_sites_match_objdump_on_llvm_objdump() {
    // The oracle's own executable: a large C++ program calling libLLVM.
    let Ok(path) = std::fs::canonicalize(which("llvm-objdump")) else {
        return skip_or_fail("llvm-objdump is not installed");
    };
    check_elf(&path);
}

fn which(tool: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(tool))
        .find(|candidate| candidate.is_file())
        .unwrap_or_default()
}

#[test]
fn elf_imports_carry_the_library_of_their_version_need() {
    let image = NativeImage::open(Path::new("/usr/bin/ls")).expect("open");
    let inventory = image.inventory(0).expect("inventory");
    let opendir = inventory
        .procedures
        .iter()
        .find(|p| p.name.as_deref() == Some("opendir"))
        .expect("opendir is a procedure");
    assert!(opendir.sources.contains(crate::providers::Source::Import));
    assert_eq!(opendir.library.as_deref(), Some("libc.so.6"));
    // The procedure is the PLT stub objdump labels `opendir@plt`.
    let text = run(
        "objdump",
        &["-d", "-j", ".plt", "-j", ".plt.sec", "/usr/bin/ls"],
    );
    let label = format!("{:016x} <opendir@plt>:", opendir.address);
    assert!(
        text.contains(&label),
        "no `{label}` in objdump's PLT listing"
    );
}

/// llvm-readobj's COFF import tables: slot address → name, for the import
/// and delay-load directories (`library#ordinal` for ordinals).
fn readobj_slots(path: &Path) -> HashMap<u64, String> {
    let text = run(
        "llvm-readobj",
        &["--coff-imports", "--file-headers", &path.to_string_lossy()],
    );
    fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
        line.trim().strip_prefix(key).map(str::trim)
    }
    let base = text
        .lines()
        .find_map(|line| field(line, "ImageBase:"))
        .map(hex)
        .expect("ImageBase");
    let (mut slots, mut next, mut library) = (HashMap::new(), None, String::new());
    for line in text.lines() {
        if let Some(rva) =
            field(line, "ImportAddressTableRVA:").or_else(|| field(line, "ImportAddressTable:"))
        {
            next = Some(base + hex(rva));
        } else if let Some(name) = field(line, "Name:") {
            library = name.to_owned();
        } else if let Some(symbol) = field(line, "Symbol:")
            && let Some(slot) = next.as_mut()
        {
            let (name, hint) = symbol.rsplit_once(" (").expect("Symbol: name (hint)");
            let name = match name {
                "" => format!("{library}#{}", hint.trim_end_matches(')')),
                name => name.to_owned(),
            };
            slots.insert(*slot, name);
            *slot += 8;
        }
    }
    slots
}

/// Calls and jumps through a slot (`call qword ptr [rip + d] # slot`), and
/// direct calls or jumps to a thunk, a called address whose instruction is
/// `jmp [slot]` (the thunk's own jump is not a call site).
fn objdump_iat_sites(path: &Path, slots: &HashMap<u64, String>) -> Sites {
    let text = run(
        "llvm-objdump",
        &[
            "-d",
            "--no-show-raw-insn",
            "--x86-asm-syntax=intel",
            &path.to_string_lossy(),
        ],
    );
    let mut through = Vec::new();
    let mut direct = Vec::new();
    for line in text.lines() {
        let Some((address, rest)) = line.trim_start().split_once(":") else {
            continue;
        };
        let Ok(at) = u64::from_str_radix(address, 16) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(mnemonic) = words.next() else {
            continue;
        };
        if !(mnemonic == "call" || mnemonic.starts_with('j')) {
            continue;
        }
        if rest.contains("qword ptr [rip")
            && let Some((_, slot)) = rest.rsplit_once("# ")
            && let Some(name) = slots.get(&hex(slot))
        {
            through.push((at, mnemonic == "jmp", name.clone()));
        } else if let Some(target) = words.next().filter(|w| w.starts_with("0x")) {
            direct.push((at, mnemonic == "call", hex(target)));
        }
    }
    let called: BTreeSet<u64> = direct.iter().filter(|d| d.1).map(|d| d.2).collect();
    let thunks: HashMap<u64, &String> = through
        .iter()
        .filter(|(at, jump, _)| *jump && called.contains(at))
        .map(|(at, _, name)| (*at, name))
        .collect();
    let mut sites = Sites::new();
    for (at, _, name) in &through {
        if !thunks.contains_key(at) {
            sites.entry(name.clone()).or_default().insert(*at);
        }
    }
    for (at, _, target) in &direct {
        if let Some(name) = thunks.get(target) {
            sites.entry((*name).clone()).or_default().insert(*at);
        }
    }
    sites
}

#[test]
fn pe_import_call_sites_match_llvm_readobj_and_objdump() {
    let Some(path) = fixture("watcher-win32-x64.node") else {
        return;
    };
    let slots = readobj_slots(&path);
    assert!(
        slots.len() > 100,
        "readobj listed {} import slots",
        slots.len()
    );
    let oracle = objdump_iat_sites(&path, &slots);
    let image = NativeImage::open(&path).expect("open");
    assert_same(
        "watcher-win32-x64.node",
        &oracle,
        &rea_sites(&image, 0, &oracle),
    );
    // Every slot readobj lists is the first slot of an import of the same
    // name in the layout.
    let layout = image.layout(0).expect("layout");
    for (slot, name) in &slots {
        let spelled = format!("{slot:#x}");
        let listed = layout.imports.iter().any(|import| {
            import.slot.as_deref() == Some(spelled.as_str())
                && (import.name == *name || name.ends_with(&import.name))
        });
        assert!(
            listed,
            "slot {spelled} ({name}) is not in the layout's imports"
        );
    }
    let thunks = image.thunks(0).expect("thunks");
    let create = thunks
        .imports()
        .iter()
        .find(|import| &*import.name == "CreateFileW")
        .expect("CreateFileW");
    assert_eq!(create.library.as_deref(), Some("KERNEL32.dll"));
}

/// llvm-objdump's `; symbol stub for: _name` (arm64) and `## symbol stub
/// for: _name` (x86-64) comments on calls and jumps.
fn objdump_stub_sites(path: &Path, arch: &str) -> Sites {
    let text = run(
        "llvm-objdump",
        &[
            "--macho",
            "-d",
            "--no-show-raw-insn",
            &format!("--arch={arch}"),
            &path.to_string_lossy(),
        ],
    );
    let mut sites = Sites::new();
    for line in text.lines() {
        let Some((head, name)) = line.split_once("symbol stub for: ") else {
            continue;
        };
        let Some((address, _)) = head.trim_start().split_once(':') else {
            continue;
        };
        sites
            .entry(name.trim().to_owned())
            .or_default()
            .insert(hex(address));
    }
    sites
}

fn check_macho(name: &str, document: &str, arch: &str) {
    let Some(path) = fixture(name) else { return };
    let oracle = objdump_stub_sites(&path, arch);
    let image = NativeImage::open(&path).expect("open");
    let document = image.document_index(document).expect("document");
    assert_same(name, &oracle, &rea_sites(&image, document, &oracle));
}

#[test]
fn macho_arm64_stub_call_sites_match_llvm_objdump() {
    check_macho(
        "watcher-darwin-arm64.node",
        "watcher-darwin-arm64.node",
        "arm64",
    );
}

#[test]
fn macho_x86_64_stub_call_sites_match_llvm_objdump() {
    check_macho("fsevents.node", "fsevents.node (x86_64)", "x86_64");
}

#[test]
fn macho_imports_name_their_dylib_and_answer_to_the_c_name() {
    let Some(path) = fixture("watcher-darwin-arm64.node") else {
        return;
    };
    let image = NativeImage::open(&path).expect("open");
    let inventory = image.inventory(0).expect("inventory");
    let strlen = inventory
        .procedures
        .iter()
        .find(|p| p.name.as_deref() == Some("_strlen"))
        .expect("_strlen");
    assert_eq!(strlen.aliases, vec!["strlen"]);
    assert_eq!(
        strlen.library.as_deref(),
        Some("/usr/lib/libSystem.B.dylib")
    );
}

#[test]
fn i386_pic_plt_jumps_through_the_got_base() {
    // jmp *0x10(%ebx), with and without a bnd prefix.
    assert_eq!(
        ebx_relative_jump(&[0xff, 0xa3, 0x10, 0, 0, 0], 0x4000),
        Some(0x4010)
    );
    assert_eq!(
        ebx_relative_jump(&[0xf2, 0xff, 0xa3, 0xfc, 0xff, 0xff, 0xff], 0x4000),
        Some(0x3ffc)
    );
    assert_eq!(
        ebx_relative_jump(&[0xff, 0x25, 0x10, 0, 0, 0], 0x4000),
        None
    );
    assert_eq!(ebx_relative_jump(&[0xff, 0xa3, 0x10], 0x4000), None);
}

#[test]
fn stubs_start_at_their_landing_pad() {
    let x86 = [0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0, 0, 0, 0];
    let region = CodeRegion {
        address: 0x1000,
        end: 0x1000 + x86.len() as u64,
        bytes: &x86,
        section: ".plt.sec",
    };
    assert_eq!(stub_start(Arch::X86_64, &region, 0x1004), 0x1000);
    assert_eq!(stub_start(Arch::X86_64, &region, 0x1000), 0x1000);
    // bti c; adrp x16, ...; ldr x17, [x16, ...]; add; br x17
    let words: [u32; 5] = [
        0xd503_245f,
        0x9000_0090,
        0xf940_0611,
        0x9100_2210,
        0xd61f_0220,
    ];
    let arm: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let region = CodeRegion {
        address: 0x2000,
        end: 0x2000 + arm.len() as u64,
        bytes: &arm,
        section: ".plt",
    };
    assert_eq!(stub_start(Arch::Aarch64, &region, 0x2008), 0x2000);
    // Without an adrp before it, the load itself starts the stub.
    assert_eq!(stub_start(Arch::Aarch64, &region, 0x2004), 0x2004);
}

#[test]
fn one_import_reached_through_several_slots_and_stubs_is_one_entry() {
    let mut builder = Builder::default();
    let libc = builder.intern("libc.so.6");
    builder.slot("f", Some(libc.clone()), 0x20);
    builder.slot("f", Some(libc), 0x10);
    builder.function_slot("f", None, 0x30);
    assert!(builder.stub_through(0x20, 0x400));
    assert!(!builder.stub_through(0x99, 0x500));
    builder.slot("", None, 0x40);
    let table = builder.finish();
    assert_eq!(table.imports.len(), 2);
    let bound = &table.imports[1];
    assert_eq!(bound.library.as_deref(), Some("libc.so.6"));
    assert_eq!(bound.slots, vec![0x10, 0x20]);
    assert_eq!(bound.stubs, vec![0x400]);
    assert_eq!(bound.address(), Some(0x400));
    assert_eq!(table.imports[0].address(), Some(0x30));
    assert!(table.imports[0].known_function && !bound.known_function);
}

#[test]
fn the_entry_cap_stops_reading_and_says_so() {
    let mut builder = Builder::default();
    for slot in 0..MAX_IMPORT_ENTRIES as u64 + 10 {
        builder.slot("f", None, slot);
    }
    assert!(builder.is_full());
    let table = builder.finish();
    assert_eq!(table.imports[0].slots.len(), MAX_IMPORT_ENTRIES);
    assert_eq!(table.limitations.len(), 1);
}

/// Names and libraries are held once however many entries name them:
/// 400,000 imports of 2 KiB names would otherwise be copied per slot,
/// stub, key and procedure (R3-5).
#[test]
fn names_and_libraries_are_one_shared_allocation_across_entries_and_views() {
    let mut builder = Builder::default();
    let library = builder.intern("libhuge.so");
    let name = "n".repeat(2048);
    for slot in 0..4u64 {
        let again = builder.intern("libhuge.so");
        builder.slot(&name, Some(again), 0x100 + slot * 8);
    }
    let again = builder.intern("libhuge.so");
    builder.slot("other", Some(again), 0x200);
    assert!(builder.stub_through(0x108, 0x1000));
    let table = builder.finish();
    assert_eq!(table.imports.len(), 2);
    for import in &table.imports {
        let shared = import.library.as_ref().expect("bound");
        assert!(Arc::ptr_eq(shared, &library), "one copy of the library");
    }
    let long = table.imports.iter().find(|i| i.name.len() == 2048).unwrap();
    assert_eq!(long.slots.len(), 4);
    assert_eq!(
        Arc::strong_count(&long.name),
        1,
        "the table's one copy, no per-slot key"
    );

    // The inventory's procedure holds the table's library, not a copy.
    let candidates = table.imports.iter().map(|import| {
        crate::providers::native::procedures::Candidate::import(
            import.address().unwrap(),
            crate::providers::SharedName::new(Arc::clone(&import.name)),
            import.library.as_ref(),
        )
    });
    let file_bytes = crate::providers::native::fixtures::tiny_elf();
    let file = object::File::parse(&*file_bytes).unwrap();
    let inventory = crate::providers::native::procedures::inventory(&file, candidates);
    let procedure = inventory
        .procedures
        .iter()
        .find(|p| p.address == 0x1000)
        .expect("the stub's procedure");
    assert!(Arc::ptr_eq(procedure.library.as_ref().unwrap(), &library));
    // Its name is the table's one copy too.
    assert!(
        procedure
            .name
            .as_ref()
            .expect("named")
            .shares_allocation_with(&long.name),
        "the procedure shares the import table's name"
    );
}

/// Distinct names are copied out of the file up to a budget; past it,
/// reading stops and says so, however few bytes the file spent on them
/// (overlapping suffixes of one string table).
#[test]
fn the_name_budget_stops_reading_and_says_so() {
    let mut builder = Builder::default();
    let run = "r".repeat(4096);
    let fits = super::MAX_IMPORT_NAME_BYTES / 4096;
    for slot in 0..fits as u64 + 10 {
        // Distinct names of 4 KiB each: a counter behind a shared run.
        let name = format!("{slot:08}{}", &run[8..]);
        builder.slot(&name, None, slot * 8);
    }
    assert!(builder.is_full());
    let table = builder.finish();
    assert_eq!(table.imports.len(), fits);
    assert_eq!(
        table.limitations,
        vec!["imports: reading stopped after 64 MiB of distinct names".to_owned()]
    );
}

/// Round-3 finding R3-4 on Mach-O: 500 stub sections over one range of
/// 1,000 indirect entries visit the table's 1,000 entries, not 500,000, and
/// say why they stopped.
#[test]
fn macho_sections_sharing_indirect_entries_visit_the_table_once() {
    let bytes = crate::providers::native::fixtures::macho_sharing_indirect_entries(500, 1_000);
    let file = object::File::parse(&*bytes).expect("a Mach-O");
    let code = CodeMap::new(&file, usize::MAX);
    let table = ImportTable::read(&file, &code);
    assert_eq!(table.imports.len(), 1, "{:?}", table.limitations);
    let import = &table.imports[0];
    assert_eq!(&*import.name, "_f");
    assert_eq!(
        import.stubs.len(),
        1_000,
        "one stub per entry the table holds"
    );
    assert!(
        table
            .limitations
            .iter()
            .any(|l| l.contains("share indirect symbol entries")),
        "{:?}",
        table.limitations
    );
}
