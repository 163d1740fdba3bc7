//! Tests of the native provider: exact behaviour on hand-built fixtures,
//! agreement with `llvm-nm` on real compiler output, and robustness on
//! hostile input.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sha2::{Digest, Sha256};

use super::fixtures::{
    self, ELF_ENTRY, ELF_TEXT, MACHO_TEXT, TempFile, run, skip_or_fail, temp_file, tool_available,
};
use super::{NativeImage, documents::architecture_name};
use crate::ground::digest::hex;
use crate::providers::{Format, Inventory, Procedure, ProviderError, format_address};

// ---------------------------------------------------------------- support

fn open_bytes(name: &str, bytes: &[u8]) -> (TempFile, Result<NativeImage, ProviderError>) {
    let file = temp_file(name, bytes);
    let image = NativeImage::open(&file.path);
    (file, image)
}

/// A function symbol as `llvm-nm` prints it.
#[derive(Debug)]
struct NmSymbol {
    address: u64,
    kind: char,
    name: String,
}

/// Defined function symbols from `llvm-nm --defined-only --format=sysv`
/// (`-D` for the dynamic table): class letter `T t W w` and, where the
/// format records one (ELF), type `FUNC`. The type matters because nm's
/// `W` also marks weak *data* such as glibc's `data_start`. Version
/// suffixes (`@@V`) are dropped: they are nm's rendering of
/// `.gnu.version`, not part of the name.
fn nm_functions(path: &Path, dynamic: bool) -> Vec<NmSymbol> {
    let path = path.to_str().expect("temporary paths are UTF-8");
    let mut args = vec!["--defined-only", "--format=sysv"];
    if dynamic {
        args.push("-D");
    }
    args.push(path);
    run("llvm-nm", &args)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('|').map(str::trim).collect();
            let [name, address, class, kind, ..] = fields.as_slice() else {
                return None;
            };
            let address = u64::from_str_radix(address, 16).ok()?;
            let class = class.chars().next()?;
            let is_function = "TtWw".contains(class) && (kind.is_empty() || *kind == "FUNC");
            let name = name.split('@').next().unwrap_or(name).to_owned();
            is_function.then_some(NmSymbol {
                address,
                kind: class,
                name,
            })
        })
        .collect()
}

fn procedure_at(inventory: &Inventory, address: u64) -> Option<&Procedure> {
    let index = inventory
        .procedures
        .binary_search_by_key(&address, |procedure| procedure.address)
        .ok()?;
    inventory.procedures.get(index)
}

fn names(procedure: &Procedure) -> impl Iterator<Item = &str> {
    procedure.name.as_deref().into_iter().chain(
        procedure
            .aliases
            .iter()
            .map(crate::providers::SharedName::as_str),
    )
}

/// Every nm function symbol is in the inventory, at the same address
/// (compared in `format_address` spelling), under its name.
fn assert_covers(inventory: &Inventory, symbols: &[NmSymbol], what: &str) {
    assert!(
        !symbols.is_empty(),
        "llvm-nm listed no function symbols for {what}"
    );
    for symbol in symbols {
        let procedure = procedure_at(inventory, symbol.address).unwrap_or_else(|| {
            panic!(
                "{what}: {} {} {} is not in the inventory",
                format_address(symbol.address),
                symbol.kind,
                symbol.name
            )
        });
        assert_eq!(
            format_address(procedure.address),
            format_address(symbol.address)
        );
        assert!(
            names(procedure).any(|name| name == symbol.name),
            "{what}: {} at {} missing from {procedure:?}",
            symbol.name,
            format_address(symbol.address)
        );
    }
}

/// Structural invariants every inventory must satisfy.
fn assert_well_formed(inventory: &Inventory) {
    assert!(inventory.procedures.len() <= super::MAX_PROCEDURES);
    for pair in inventory.procedures.windows(2) {
        assert!(
            pair[0].address < pair[1].address,
            "not strictly sorted: {pair:?}"
        );
    }
    for procedure in &inventory.procedures {
        assert!(
            procedure.aliases.windows(2).all(|pair| pair[0] < pair[1]),
            "{procedure:?}"
        );
        if procedure.name.is_none() {
            assert!(
                procedure.aliases.is_empty(),
                "aliases without a primary: {procedure:?}"
            );
        }
        if let Some(name) = &procedure.name {
            assert!(!name.is_empty());
            assert!(
                !procedure.aliases.contains(name),
                "primary among aliases: {procedure:?}"
            );
        }
    }
}

/// The procedures with how-found facts reset to [`procedure`]'s defaults, for
/// tests about addresses and the primary name rule.
fn named(procedures: &[Procedure]) -> Vec<Procedure> {
    procedures
        .iter()
        .map(|p| {
            procedure(
                p.address,
                p.name.as_deref(),
                &p.aliases
                    .iter()
                    .map(crate::providers::SharedName::as_str)
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

fn procedure(address: u64, name: Option<&str>, aliases: &[&str]) -> Procedure {
    Procedure {
        address,
        name: name.map(Into::into),
        aliases: aliases.iter().map(|alias| (*alias).into()).collect(),
        size: None,
        sources: crate::providers::Sources::of(crate::providers::Source::Symbol),
        library: None,
        part_of: None,
    }
}

// ------------------------------------------------------- hand-built fixtures

#[test]
fn native_image_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<NativeImage>();
}

#[test]
fn tiny_elf_inventory_follows_the_primary_name_rule() {
    let (_file, image) = open_bytes("tiny.elf", &fixtures::tiny_elf());
    let image = image.expect("open tiny ELF");
    assert_eq!(image.format(), Format::Elf);
    assert_eq!(image.documents().len(), 1);
    assert_eq!(image.documents()[0].name, "tiny.elf");
    assert_eq!(image.documents()[0].architecture, "x86_64");

    let inventory = image.inventory(0).expect("inventory");
    let expected = vec![
        procedure(
            ELF_TEXT,
            Some("alpha"),
            &["aardvark", "ab_weak", "gamma", "omega"],
        ),
        procedure(ELF_TEXT + 0x10, Some("zz_weak"), &["aaa_local"]),
        procedure(ELF_TEXT + 0x18, Some("dyn_only"), &[]),
        procedure(ELF_TEXT + 0x20, None, &[]),
        procedure(ELF_TEXT + 0x28, None, &[]),
        procedure(ELF_ENTRY, None, &[]),
    ];
    assert_eq!(named(&inventory.procedures), expected);
    let sources = |address| {
        procedure_at(&inventory, address)
            .map(|p| p.sources.names())
            .unwrap_or_default()
    };
    assert_eq!(sources(ELF_TEXT + 0x18), ["dynamic_symbol"]);
    assert_eq!(sources(ELF_ENTRY), ["entry"]);
    assert_eq!(inventory.non_utf8_names, 2);
    assert!(!inventory.truncated);
    assert_well_formed(&inventory);
    // Cached: the same Arc comes back.
    assert!(std::sync::Arc::ptr_eq(
        &inventory,
        &image.inventory(0).expect("again")
    ));
}

#[test]
fn tiny_elf_overview() {
    let (_file, image) = open_bytes("tiny.elf", &fixtures::tiny_elf());
    let image = image.expect("open tiny ELF");
    let overview = image.overview(0, 10).expect("overview");
    assert_eq!(overview.format, Format::Elf);
    assert_eq!(overview.architecture, "x86_64");
    assert_eq!(overview.endianness, "little");
    assert_eq!(overview.bits, 64);
    assert_eq!(overview.entry_point.as_deref(), Some("0x401138"));
    assert_eq!(overview.segment_count, 1);
    assert_eq!(overview.segments.len(), 1);
    assert_eq!(overview.segments[0].address, "0x401000");
    assert_eq!(overview.segments[0].name, None);
    assert_eq!(overview.section_count, 6, "non-null sections");
    // 12 + 3 symbols; object does not yield the null symbols.
    assert_eq!(overview.symbol_count, 15);

    let limited = image.overview(0, 0).expect("overview");
    assert!(limited.segments.is_empty());
    assert_eq!(limited.segment_count, 1);
}

#[test]
fn tiny_macho_uses_lc_main_as_a_virtual_address() {
    let (_file, image) = open_bytes("tiny", &fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64));
    let image = image.expect("open tiny Mach-O");
    assert_eq!(image.format(), Format::MachO);
    assert_eq!(image.documents()[0].architecture, "arm64");
    let inventory = image.inventory(0).expect("inventory");
    assert_eq!(
        named(&inventory.procedures),
        vec![
            procedure(MACHO_TEXT, Some("_main"), &["_early_weak"]),
            procedure(MACHO_TEXT + 8, Some("_helper"), &[]),
        ]
    );
    let overview = image.overview(0, 10).expect("overview");
    assert_eq!(overview.entry_point, Some(format_address(MACHO_TEXT)));
    assert_eq!(overview.segments.len(), 1);
    assert_eq!(overview.segments[0].name.as_deref(), Some("__TEXT"));
    assert_eq!(overview.segments[0].address, "0x100000000");
    assert_eq!(overview.symbol_count, 3);
}

#[test]
fn tiny_macho_matches_llvm_nm() {
    if !tool_available("llvm-nm") {
        return skip_or_fail("llvm-nm is not installed");
    }
    let file = temp_file("tiny", &fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64));
    let image = NativeImage::open(&file.path).expect("open tiny Mach-O");
    let inventory = image.inventory(0).expect("inventory");
    assert_covers(&inventory, &nm_functions(&file.path, false), "tiny Mach-O");
}

#[test]
fn universal_slices_are_documents_named_by_architecture() {
    let slices = [
        fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64),
        fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
        fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64),
    ];
    let (_file, image) = open_bytes("fsevents.node", &fixtures::fat(&slices));
    let image = image.expect("open fat file");
    assert_eq!(image.format(), Format::MachOUniversal);
    let names: Vec<&str> = image
        .documents()
        .iter()
        .map(|document| document.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "fsevents.node (x86_64)",
            "fsevents.node (arm64)",
            "fsevents.node (x86_64 #2)"
        ]
    );
    let architectures: Vec<&str> = image
        .documents()
        .iter()
        .map(|document| document.architecture.as_str())
        .collect();
    assert_eq!(architectures, ["x86_64", "arm64", "x86_64"]);
    assert!(
        image
            .documents()
            .iter()
            .all(|document| document.format == Format::MachO)
    );
    for index in 0..3 {
        let inventory = image.inventory(index).expect("slice inventory");
        assert_eq!(inventory.procedures.len(), 2);
        let overview = image.overview(index, 4).expect("slice overview");
        assert_eq!(overview.format, Format::MachO);
        assert_eq!(overview.entry_point, Some(format_address(MACHO_TEXT)));
    }
    assert_eq!(image.document_index("fsevents.node (arm64)"), Ok(1));
}

#[test]
fn document_index_errors_list_the_available_names() {
    let slices = [
        fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64),
        fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
    ];
    let (_file, image) = open_bytes("fat.bin", &fixtures::fat(&slices));
    let image = image.expect("open fat file");
    match image.document_index("fat.bin (ppc)") {
        Err(ProviderError::UnknownDocument { name, available }) => {
            assert_eq!(name, "fat.bin (ppc)");
            assert!(available.contains("fat.bin (x86_64)"), "{available}");
            assert!(available.contains("fat.bin (arm64)"), "{available}");
        }
        other => panic!("expected UnknownDocument, got {other:?}"),
    }
    let (_thin, thin) = open_bytes("watcher.node", &fixtures::tiny_elf());
    let thin = thin.expect("open tiny ELF");
    assert_eq!(thin.document_index("watcher.node"), Ok(0));
    let error = thin.document_index("watcher").expect_err("unknown name");
    assert!(error.to_string().contains("\"watcher.node\""), "{error}");
    assert!(matches!(
        thin.inventory(1),
        Err(ProviderError::UnknownDocument { .. })
    ));
    assert!(matches!(
        thin.overview(7, 1),
        Err(ProviderError::UnknownDocument { .. })
    ));
}

#[test]
fn sha256_is_lowercase_hex_of_the_whole_file() {
    assert_eq!(
        hex(&Sha256::digest(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let bytes = fixtures::tiny_elf();
    let (_file, image) = open_bytes("tiny.elf", &bytes);
    let image = image.expect("open tiny ELF");
    assert_eq!(image.sha256(), hex(&Sha256::digest(&bytes)));
    assert_eq!(image.sha256().len(), 64);
}

#[test]
fn architecture_names() {
    use object::Architecture;
    assert_eq!(architecture_name(Architecture::X86_64), "x86_64");
    assert_eq!(architecture_name(Architecture::I386), "x86");
    assert_eq!(architecture_name(Architecture::Aarch64), "arm64");
    assert_eq!(architecture_name(Architecture::Arm), "arm");
    assert_eq!(architecture_name(Architecture::Riscv64), "riscv64");
    assert_eq!(architecture_name(Architecture::PowerPc64), "powerpc64");
}

// ------------------------------------------------------ real compiler output

const C_PROGRAM: &str = r#"
__attribute__((noinline)) static int helper(int x) { return x * 3; }
int compute(int x) { return helper(x) + 1; }
int alias_of_compute(int x) __attribute__((weak, alias("compute")));
int main(int argc, char **argv) { (void)argv; return compute(argc); }
"#;

/// Compiles `source` with `cc` into `dir/output`; `None` (after skip or
/// fail) when no compiler is available.
fn compile(dir: &Path, output: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    if !tool_available("cc") {
        skip_or_fail("cc is not installed");
        return None;
    }
    let source_path = dir.join("program.c");
    std::fs::write(&source_path, source).expect("write C source");
    let output_path = dir.join(output);
    let mut args: Vec<&str> = flags.to_vec();
    let (source_arg, output_arg) = (
        source_path.to_str().expect("UTF-8 temp path"),
        output_path.to_str().expect("UTF-8 temp path"),
    );
    args.extend(["-o", output_arg, source_arg]);
    run("cc", &args);
    Some(output_path)
}

#[test]
fn compiled_c_program_matches_llvm_nm() {
    if !tool_available("llvm-nm") || !tool_available("llvm-readelf") {
        return skip_or_fail("llvm-nm or llvm-readelf is not installed");
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let Some(program) = compile(dir.path(), "program", C_PROGRAM, &["-O0"]) else {
        return;
    };
    let image = NativeImage::open(&program).expect("open compiled program");
    assert_eq!(image.documents()[0].name, "program");
    let inventory = image.inventory(0).expect("inventory");
    assert_well_formed(&inventory);

    let symbols = nm_functions(&program, false);
    assert_covers(&inventory, &symbols, "compiled C program");
    let find = |name: &str| {
        symbols
            .iter()
            .find(|symbol| symbol.name == name)
            .unwrap_or_else(|| panic!("llvm-nm does not list {name}"))
    };
    assert_eq!(find("helper").kind, 't');
    assert_eq!(find("alias_of_compute").kind, 'W');
    let compute = find("compute");
    assert_eq!(compute.address, find("alias_of_compute").address);
    let pair = procedure_at(&inventory, compute.address).expect("compute is a procedure");
    assert_eq!(pair.name.as_deref(), Some("compute"), "global beats weak");
    assert!(
        pair.aliases.contains(&"alias_of_compute".into()),
        "{pair:?}"
    );

    let header = run("llvm-readelf", &["-h", program.to_str().expect("UTF-8")]);
    let entry = header
        .lines()
        .find_map(|line| line.trim().strip_prefix("Entry point address:"))
        .and_then(|value| u64::from_str_radix(value.trim().trim_start_matches("0x"), 16).ok())
        .expect("llvm-readelf prints the entry point");
    assert!(
        procedure_at(&inventory, entry).is_some(),
        "entry {entry:#x} missing"
    );
    let overview = image.overview(0, 64).expect("overview");
    assert_eq!(overview.entry_point, Some(format_address(entry)));
    assert_eq!(overview.format, Format::Elf);
}

/// A shared library without `.symtab`: the system zlib when present (it is
/// stripped on Debian-like systems) and one built here with `-s`.
#[test]
fn stripped_shared_libraries_list_dynamic_symbols() {
    if !tool_available("llvm-nm") {
        return skip_or_fail("llvm-nm is not installed");
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut libraries = Vec::new();
    let system = [
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .iter()
    .find_map(|path| std::fs::canonicalize(path).ok());
    libraries.extend(system);
    let source = "int exported(int x) { return x + 1; }\nint other(void) { return 7; }\n";
    let built = compile(
        dir.path(),
        "libbuilt.so",
        source,
        &["-shared", "-fPIC", "-s"],
    );
    if let Some(built) = &built {
        let static_symbols = run("llvm-nm", &[built.to_str().expect("UTF-8")]);
        assert!(
            static_symbols.trim().is_empty(),
            "-s left a symbol table: {static_symbols}"
        );
    }
    libraries.extend(built);
    if libraries.is_empty() {
        return skip_or_fail("no shared library found and no compiler to build one");
    }
    for library in &libraries {
        let image = NativeImage::open(library).expect("open shared library");
        let inventory = image.inventory(0).expect("inventory");
        assert_well_formed(&inventory);
        let what = library.display().to_string();
        assert_covers(&inventory, &nm_functions(library, true), &what);
    }
}

// ------------------------------------------------------------ hostile input

fn is_typed_rejection(result: &Result<NativeImage, ProviderError>) -> bool {
    matches!(
        result,
        Err(ProviderError::UnsupportedFormat { .. } | ProviderError::Malformed { .. })
    )
}

fn assert_unsupported(name: &str, bytes: &[u8]) {
    let (_file, result) = open_bytes(name, bytes);
    assert!(
        matches!(result, Err(ProviderError::UnsupportedFormat { .. })),
        "{name}: {result:?}"
    );
}

fn assert_malformed(name: &str, bytes: &[u8]) {
    let (_file, result) = open_bytes(name, bytes);
    assert!(
        matches!(result, Err(ProviderError::Malformed { .. })),
        "{name}: {result:?}"
    );
}

/// Deterministic pseudo-random bytes (xorshift64), no external state.
fn noise(len: usize, mut state: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

#[test]
fn unsupported_inputs_are_rejected_with_a_reason() {
    assert_unsupported("empty", b"");
    assert_unsupported("notes.txt", b"These are release notes, not a binary.\n");
    assert_unsupported(
        "libfoo.a",
        b"!<arch>\nfoo.o/          0           0     0     644     4         `\nabcd",
    );
    assert_unsupported("short", b"\x7fELF");
    let (_file, result) = open_bytes("noise", &noise(64, 0x9e37_79b9_7f4a_7c15));
    assert!(is_typed_rejection(&result), "{result:?}");
    let (_file, result) = open_bytes("notes.txt", b"plain text that is long enough to classify");
    match result {
        Err(ProviderError::UnsupportedFormat { reason, .. }) => {
            // The file is untrusted: its bytes are never repeated.
            assert!(
                reason.contains("match no ELF")
                    && !reason.contains("70 6c")
                    && !reason.contains("plain"),
                "{reason}"
            );
        }
        other => panic!("expected UnsupportedFormat, got {other:?}"),
    }
}

#[test]
fn directories_and_missing_files_are_io_errors() {
    let dir = tempfile::tempdir().expect("temporary directory");
    assert!(matches!(
        NativeImage::open(dir.path()),
        Err(ProviderError::Io { .. })
    ));
    let missing = dir.path().join("missing");
    assert!(matches!(
        NativeImage::open(&missing),
        Err(ProviderError::Io { .. })
    ));
}

#[test]
fn truncated_and_broken_elf_files_are_malformed() {
    let elf = fixtures::tiny_elf();
    for length in [20, 52, 64] {
        assert_malformed(&format!("elf-{length}"), &elf[..length]);
    }
    let mut past_end = elf.clone();
    let beyond = (elf.len() as u64 + 0x1000).to_le_bytes();
    past_end[fixtures::ELF64_SHOFF_OFFSET..fixtures::ELF64_SHOFF_OFFSET + 8]
        .copy_from_slice(&beyond);
    assert_malformed("shoff-past-end", &past_end);
}

#[test]
fn hostile_fat_headers_are_rejected() {
    let mut huge = Vec::new();
    huge.extend_from_slice(&0xcafe_babeu32.to_be_bytes());
    huge.extend_from_slice(&0x8000_0000u32.to_be_bytes());
    huge.resize(64, 0);
    let (_file, result) = open_bytes("huge.fat", &huge);
    assert!(is_typed_rejection(&result), "{result:?}");

    let mut empty = fixtures::fat(&[]);
    empty.resize(64, 0);
    assert_malformed("empty.fat", &empty);

    // One slice whose offset points past the end of the file.
    let mut past_end = fixtures::fat(&[fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64)]);
    past_end[16..20].copy_from_slice(&0x7fff_0000u32.to_be_bytes());
    assert_malformed("past-end.fat", &past_end);

    // A slice that is an ELF file, not a Mach-O image.
    let mut elf_slice = fixtures::tiny_elf();
    elf_slice.resize(0x1000, 0);
    assert_malformed("elf-slice.fat", &fixtures::fat(&[elf_slice]));
}

/// Opens `bytes` and, when that succeeds, exercises every document; only
/// panics (and broken invariants) fail.
fn exercise(bytes: &[u8]) {
    let (_file, result) = open_bytes("case", bytes);
    let Ok(image) = result else {
        assert!(
            is_typed_rejection(&result),
            "unexpected error kind: {result:?}"
        );
        return;
    };
    for (index, document) in image.documents().iter().enumerate() {
        assert_eq!(image.document_index(&document.name), Ok(index));
        if let Ok(inventory) = image.inventory(index) {
            assert_well_formed(&inventory);
        }
        let _ = image.overview(index, 8);
    }
    assert_eq!(image.sha256().len(), 64);
}

fn prefixed(magic: &[u8], tail: &[u8]) -> Vec<u8> {
    magic.iter().chain(tail).copied().collect()
}

/// Overwrites `mutations` positions of `base` (positions wrap around).
fn mutated(mut base: Vec<u8>, mutations: &[(usize, u8)]) -> Vec<u8> {
    let len = base.len();
    for &(position, value) in mutations {
        if let Some(byte) = base.get_mut(position % len) {
            *byte = value;
        }
    }
    base
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_after_elf_magic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&prefixed(b"\x7fELF\x02\x01\x01", &tail));
    }

    #[test]
    fn arbitrary_bytes_after_macho64_magic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&prefixed(&[0xcf, 0xfa, 0xed, 0xfe], &tail));
    }

    #[test]
    fn arbitrary_bytes_after_fat_magic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&prefixed(&[0xca, 0xfe, 0xba, 0xbe], &tail));
    }

    #[test]
    fn arbitrary_bytes_after_pe_magic(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&prefixed(b"MZ", &tail));
    }

    /// Random bytes rarely get past the first header check; mutating a valid
    /// file reaches symbol tables, strings and load commands.
    #[test]
    fn mutated_tiny_elf(mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        exercise(&mutated(fixtures::tiny_elf(), &mutations));
    }

    #[test]
    fn mutated_tiny_fat(mutations in proptest::collection::vec((0usize..0x1100, any::<u8>()), 1..8)) {
        let slices = [fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64)];
        let mut bytes = fixtures::fat(&slices);
        // Mutate the fat header and the slice's load commands (not the padding).
        for &(position, value) in &mutations {
            let position = if position < 0x100 { position } else { 0x1000 + (position - 0x100) };
            if let Some(byte) = bytes.get_mut(position) {
                *byte = value;
            }
        }
        exercise(&bytes);
    }
}

#[test]
fn tiny_pe_lists_code_exports_and_the_entry_point_as_virtual_addresses() {
    use fixtures::PE_BASE;
    let (_file, image) = open_bytes("tiny.dll", &fixtures::tiny_pe());
    let image = image.expect("open tiny PE");
    assert_eq!(image.format(), Format::Pe);
    assert_eq!(image.documents()[0].architecture, "x86_64");
    let inventory = image.inventory(0).expect("inventory");
    // The fixture's code is `ret` filler ending in zero padding, so its
    // last `ret` reads as an empty function no table declares (`code_gap`);
    // this test is about what the tables declare.
    let declared: Vec<_> = inventory
        .procedures
        .iter()
        .filter(|p| p.sources != crate::providers::Sources::of(crate::providers::Source::CodeGap))
        .cloned()
        .collect();
    assert_eq!(
        named(&declared),
        vec![
            procedure(PE_BASE + 0x1000, None, &[]),
            procedure(PE_BASE + 0x1010, Some("alias_func"), &["exp_func"]),
            procedure(PE_BASE + 0x1020, None, &[]),
        ],
        "data exports and forwarders are not procedures"
    );
    let overview = image.overview(0, 10).expect("overview");
    assert_eq!(overview.entry_point.as_deref(), Some("0x140001000"));
    assert_eq!(overview.bits, 64);
    assert_eq!(overview.section_count, 2);
}

/// A layout read while the call is interrupted answers `Interrupted`, never
/// the part its walks read before they stopped.
#[test]
fn an_interrupted_layout_is_an_interruption_not_a_partial_layout() {
    let (_file, image) = open_bytes("tiny", &super::fixtures::tiny_elf());
    let image = image.expect("opens");
    let stop: crate::providers::interrupt::Check = std::sync::Arc::new(|| true);
    let stopped = crate::providers::interrupt::with_check(Some(stop), || image.layout(0));
    assert_eq!(stopped.err(), Some(ProviderError::Interrupted));
    assert!(image.layout(0).is_ok(), "uninterrupted, it reads");
}
