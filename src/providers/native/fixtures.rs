//! Hand-assembled tiny binaries for tests that must not depend on external
//! tools: their symbols, bindings and entry points are known exactly.

/// Symbol binding and type values (ELF `st_info` halves).
const STB_LOCAL: u8 = 0;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;

/// Virtual address of the tiny ELF's `.text` section.
pub const ELF_TEXT: u64 = 0x40_1100;
/// `e_entry` of the tiny ELF: inside `.text`, named by no symbol.
pub const ELF_ENTRY: u64 = ELF_TEXT + 0x38;
/// Offset of `e_shoff` in an ELF64 header.
pub const ELF64_SHOFF_OFFSET: usize = 0x28;

/// `__TEXT,__text` address and `LC_MAIN` entry of the tiny Mach-O.
pub const MACHO_TEXT: u64 = 0x1_0000_0400;
pub const MACHO_CPU_X86_64: u32 = 0x0100_0007;
pub const MACHO_CPU_ARM64: u32 = 0x0100_000c;

struct Sym {
    name: &'static [u8],
    value: u64,
    info: u8,
    shndx: u16,
}

const fn sym(name: &'static [u8], value: u64, bind: u8, kind: u8, shndx: u16) -> Sym {
    Sym {
        name,
        value,
        info: (bind << 4) | kind,
        shndx,
    }
}

/// A little-endian x86_64 ELF executable with one `PT_LOAD`, a `.text`
/// section and both symbol tables. Expected inventory (see the tests):
///
/// * `0x401100`: `alpha` (global) beats `omega` (global, sorts later),
///   `ab_weak` (weak, sorts earlier), `gamma` and `aardvark` (local, sort
///   earlier too); plus a non-UTF-8 name.
/// * `0x401110`: `zz_weak` (weak) beats `aaa_local` (local).
/// * `0x401118`: `dyn_only`, only in `.dynsym`.
/// * `0x401120`: only a non-UTF-8 name → `name: None`.
/// * `0x401128`: an empty name → `name: None`.
/// * `0x401130`: `table`, a data object → not a procedure.
/// * `0x401138`: the entry point, unnamed.
/// * `printf`: undefined → not a procedure.
pub fn tiny_elf() -> Vec<u8> {
    let t = ELF_TEXT;
    let symtab = [
        sym(b"gamma", t, STB_LOCAL, STT_FUNC, 1),
        sym(b"aardvark", t, STB_LOCAL, STT_FUNC, 1),
        sym(b"\xffbad", t, STB_LOCAL, STT_FUNC, 1),
        sym(b"aaa_local", t + 0x10, STB_LOCAL, STT_FUNC, 1),
        sym(b"\xff\xfe", t + 0x20, STB_LOCAL, STT_FUNC, 1),
        sym(b"", t + 0x28, STB_LOCAL, STT_FUNC, 1),
        sym(b"omega", t, STB_GLOBAL, STT_FUNC, 1),
        sym(b"alpha", t, STB_GLOBAL, STT_FUNC, 1),
        sym(b"ab_weak", t, STB_WEAK, STT_FUNC, 1),
        sym(b"zz_weak", t + 0x10, STB_WEAK, STT_FUNC, 1),
        sym(b"table", t + 0x30, STB_GLOBAL, STT_OBJECT, 1),
        sym(b"printf", 0, STB_GLOBAL, STT_FUNC, 0),
    ];
    let dynsym = [
        sym(b"alpha", t, STB_GLOBAL, STT_FUNC, 1),
        sym(b"gamma", t, STB_GLOBAL, STT_FUNC, 1),
        sym(b"dyn_only", t + 0x18, STB_GLOBAL, STT_FUNC, 1),
    ];
    let (strtab, symtab_bytes) = symbols(&symtab);
    let (dynstr, dynsym_bytes) = symbols(&dynsym);
    let (shstrtab, sh_names) = strings(&[
        b".text",
        b".symtab",
        b".strtab",
        b".dynsym",
        b".dynstr",
        b".shstrtab",
    ]);

    let mut out = vec![0u8; 0x100]; // header + program header + padding
    let text_offset = out.len();
    out.extend_from_slice(&[0xc3; 0x40]);
    let symtab_offset = append_aligned(&mut out, &symtab_bytes, 8);
    let strtab_offset = append_aligned(&mut out, &strtab, 1);
    let dynsym_offset = append_aligned(&mut out, &dynsym_bytes, 8);
    let dynstr_offset = append_aligned(&mut out, &dynstr, 1);
    let shstrtab_offset = append_aligned(&mut out, &shstrtab, 1);
    let shoff = align(&mut out, 8);

    let name = |index: usize| sh_names.get(index).copied().unwrap_or(0);
    let headers = [
        [0u8; 64],
        section(name(0), 1, 6, t, text_offset, 0x40, 0, 0, 0),
        section(
            name(1),
            2,
            0,
            0,
            symtab_offset,
            symtab_bytes.len(),
            3,
            7,
            24,
        ),
        section(name(2), 3, 0, 0, strtab_offset, strtab.len(), 0, 0, 0),
        section(
            name(3),
            11,
            2,
            0,
            dynsym_offset,
            dynsym_bytes.len(),
            5,
            1,
            24,
        ),
        section(name(4), 3, 2, 0, dynstr_offset, dynstr.len(), 0, 0, 0),
        section(name(5), 3, 0, 0, shstrtab_offset, shstrtab.len(), 0, 0, 0),
    ];
    for header in &headers {
        out.extend_from_slice(header);
    }
    let total = out.len() as u64;

    let mut header = Vec::with_capacity(0x100);
    header.extend_from_slice(b"\x7fELF\x02\x01\x01\x00");
    header.extend_from_slice(&[0; 8]);
    header.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    header.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&ELF_ENTRY.to_le_bytes());
    header.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
    header.extend_from_slice(&(shoff as u64).to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    for half in [64u16, 56, 1, 64, headers.len() as u16, 6] {
        header.extend_from_slice(&half.to_le_bytes());
    }
    // PT_LOAD, R+X, mapping the whole file at 0x401000.
    header.extend_from_slice(&1u32.to_le_bytes());
    header.extend_from_slice(&5u32.to_le_bytes());
    for word in [0, t - 0x100, t - 0x100, total, total, 0x1000] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    out[..header.len()].copy_from_slice(&header);
    out
}

/// A string table (leading NUL) and the offset of each string in it; the
/// empty string gets offset 0.
fn strings(names: &[&[u8]]) -> (Vec<u8>, Vec<u32>) {
    let mut table = vec![0u8];
    let mut offsets = Vec::with_capacity(names.len());
    for name in names {
        if name.is_empty() {
            offsets.push(0);
            continue;
        }
        offsets.push(table.len() as u32);
        table.extend_from_slice(name);
        table.push(0);
    }
    (table, offsets)
}

/// `(string table, symbol table bytes)`, with the null symbol first.
fn symbols(symbols: &[Sym]) -> (Vec<u8>, Vec<u8>) {
    let names: Vec<&[u8]> = symbols.iter().map(|symbol| symbol.name).collect();
    let (table, offsets) = strings(&names);
    let mut bytes = vec![0u8; 24];
    for (symbol, offset) in symbols.iter().zip(offsets) {
        bytes.extend_from_slice(&offset.to_le_bytes());
        bytes.push(symbol.info);
        bytes.push(0);
        bytes.extend_from_slice(&symbol.shndx.to_le_bytes());
        bytes.extend_from_slice(&symbol.value.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
    }
    (table, bytes)
}

#[allow(clippy::too_many_arguments)]
fn section(
    name: u32,
    kind: u32,
    flags: u64,
    address: u64,
    offset: usize,
    size: usize,
    link: u32,
    info: u32,
    entsize: u64,
) -> [u8; 64] {
    let mut header = Vec::with_capacity(64);
    header.extend_from_slice(&name.to_le_bytes());
    header.extend_from_slice(&kind.to_le_bytes());
    header.extend_from_slice(&flags.to_le_bytes());
    header.extend_from_slice(&address.to_le_bytes());
    header.extend_from_slice(&(offset as u64).to_le_bytes());
    header.extend_from_slice(&(size as u64).to_le_bytes());
    header.extend_from_slice(&link.to_le_bytes());
    header.extend_from_slice(&info.to_le_bytes());
    header.extend_from_slice(&8u64.to_le_bytes());
    header.extend_from_slice(&entsize.to_le_bytes());
    header
        .try_into()
        .expect("an ELF64 section header is 64 bytes")
}

fn align(out: &mut Vec<u8>, alignment: usize) -> usize {
    while !out.len().is_multiple_of(alignment) {
        out.push(0);
    }
    out.len()
}

fn append_aligned(out: &mut Vec<u8>, bytes: &[u8], alignment: usize) -> usize {
    let offset = align(out, alignment);
    out.extend_from_slice(bytes);
    offset
}

/// A 4 KiB little-endian 64-bit Mach-O executable: `__TEXT` at
/// 0x100000000 with `__text` at [`MACHO_TEXT`], `LC_MAIN` pointing at file
/// offset 0x400 (= `MACHO_TEXT`), and symbols `_main` (external),
/// `_early_weak` (external, weak definition) at `MACHO_TEXT` and `_helper`
/// (non-external) at `MACHO_TEXT + 8`.
pub fn tiny_macho(cputype: u32) -> Vec<u8> {
    const SYMOFF: u32 = 0x800;
    let (strtab, offsets) = strings(&[b"_main", b"_early_weak", b"_helper"]);
    let offset = |index: usize| offsets.get(index).copied().unwrap_or(0);
    let stroff = SYMOFF + 3 * 16;

    let mut out = Vec::with_capacity(0x1000);
    let commands_size: u32 = (72 + 80) + 24 + 24;
    // CPU_SUBTYPE_X86_64_ALL is 3; CPU_SUBTYPE_ARM64_ALL is 0.
    let cpusubtype = if cputype == MACHO_CPU_X86_64 { 3 } else { 0 };
    for word in [0xfeed_facf, cputype, cpusubtype, 2, 3, commands_size, 0, 0] {
        out.extend_from_slice(&u32::to_le_bytes(word));
    }
    // LC_SEGMENT_64 __TEXT with one section.
    out.extend_from_slice(&0x19u32.to_le_bytes());
    out.extend_from_slice(&(72u32 + 80).to_le_bytes());
    out.extend_from_slice(&name16(b"__TEXT"));
    for word in [0x1_0000_0000u64, 0x1000, 0, 0x1000] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for word in [5u32, 5, 1, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&name16(b"__text"));
    out.extend_from_slice(&name16(b"__TEXT"));
    out.extend_from_slice(&MACHO_TEXT.to_le_bytes());
    out.extend_from_slice(&0x10u64.to_le_bytes());
    for word in [0x400u32, 0, 0, 0, 0x8000_0400, 0, 0, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    // LC_MAIN: entryoff 0x400, stacksize 0.
    out.extend_from_slice(&0x8000_0028u32.to_le_bytes());
    out.extend_from_slice(&24u32.to_le_bytes());
    out.extend_from_slice(&0x400u64.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    // LC_SYMTAB.
    for word in [2u32, 24, SYMOFF, 3, stroff, strtab.len() as u32] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.resize(0x400, 0);
    out.extend_from_slice(&[0xc3; 0x10]);
    out.resize(SYMOFF as usize, 0);
    // nlist_64: strx, type (N_SECT | N_EXT?), sect, desc (N_WEAK_DEF?), value.
    let nlists = [
        (offset(0), 0x0f, 0u16, MACHO_TEXT),
        (offset(1), 0x0f, 0x80, MACHO_TEXT),
        (offset(2), 0x0e, 0, MACHO_TEXT + 8),
    ];
    for (strx, kind, desc, value) in nlists {
        out.extend_from_slice(&strx.to_le_bytes());
        out.push(kind);
        out.push(1);
        out.extend_from_slice(&desc.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&strtab);
    out.resize(0x1000, 0);
    out
}

/// A little-endian 64-bit x86-64 Mach-O whose `sections` stub sections
/// (`S_SYMBOL_STUBS`, 6-byte stubs) all cover the same `entries` entries of
/// the indirect symbol table, each naming the one undefined symbol `_f`:
/// only a hostile file shares a range, and a walk per section would visit
/// sections × entries.
pub fn macho_sharing_indirect_entries(sections: u32, entries: u32) -> Vec<u8> {
    const SECTION: u32 = 80;
    let segment = 72 + sections * SECTION;
    let commands_size = segment + 24 + 80;
    let data = 32 + commands_size;
    let symoff = data.next_multiple_of(8);
    let stroff = symoff + 16;
    let strings = b"\0_f\0";
    let indirectoff = (stroff + strings.len() as u32).next_multiple_of(4);
    let end = indirectoff + 4 * entries;

    let mut out = Vec::new();
    let words = [0xfeed_facf, MACHO_CPU_X86_64, 3, 2, 3, commands_size, 0, 0];
    for word in words {
        out.extend_from_slice(&u32::to_le_bytes(word));
    }
    out.extend_from_slice(&0x19u32.to_le_bytes());
    out.extend_from_slice(&segment.to_le_bytes());
    out.extend_from_slice(&name16(b"__TEXT"));
    for word in [0x1_0000_0000u64, 0x10_0000, 0, u64::from(end)] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for word in [5u32, 5, sections, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for index in 0..u64::from(sections) {
        out.extend_from_slice(&name16(b"__stubs"));
        out.extend_from_slice(&name16(b"__TEXT"));
        out.extend_from_slice(&(0x1_0000_1000 + index * 0x1000).to_le_bytes());
        out.extend_from_slice(&(u64::from(entries) * 6).to_le_bytes());
        // offset 0 (no bytes needed), S_SYMBOL_STUBS | instructions,
        // reserved1 = first indirect entry 0, reserved2 = stub size 6.
        for word in [0u32, 0, 0, 0, 0x8000_0408, 0, 6, 0] {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    // LC_SYMTAB: one symbol.
    for word in [2u32, 24, symoff, 1, stroff, strings.len() as u32] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    // LC_DYSYMTAB: the undefined symbol is index 0; the indirect table.
    let mut dysymtab = [0u32; 20];
    dysymtab[0] = 0xb;
    dysymtab[1] = 80;
    dysymtab[6] = 0; // iundefsym
    dysymtab[7] = 1; // nundefsym
    dysymtab[14] = indirectoff;
    dysymtab[15] = entries;
    for word in dysymtab {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.resize(symoff as usize, 0);
    // nlist_64 `_f`: N_UNDF | N_EXT, no section, library ordinal 0.
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&[0x01, 0, 0, 0]);
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(strings);
    out.resize(indirectoff as usize, 0);
    for _ in 0..entries {
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    out
}

fn name16(name: &[u8]) -> [u8; 16] {
    let mut field = [0u8; 16];
    for (slot, byte) in field.iter_mut().zip(name) {
        *slot = *byte;
    }
    field
}

/// A 32-bit fat file holding `slices` at 4 KiB-aligned offsets; the
/// `fat_arch` CPU type and subtype of each slice are read from its header.
pub fn fat(slices: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xcafe_babeu32.to_be_bytes());
    out.extend_from_slice(&(slices.len() as u32).to_be_bytes());
    let mut offset = 0x1000u32;
    for slice in slices {
        let word_at = |at: usize| {
            slice.get(at..at + 4).map_or(0, |bytes| {
                u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
            })
        };
        for word in [word_at(4), word_at(8), offset, slice.len() as u32, 12] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        offset += (slice.len() as u32).div_ceil(0x1000) * 0x1000;
    }
    for slice in slices {
        align(&mut out, 0x1000);
        out.extend_from_slice(slice);
    }
    out
}

/// Image base of the tiny PE.
pub const PE_BASE: u64 = 0x1_4000_0000;

/// Writes `bytes` at `offset`, growing `out` as needed.
pub(crate) fn put(out: &mut Vec<u8>, offset: usize, bytes: &[u8]) {
    if out.len() < offset + bytes.len() {
        out.resize(offset + bytes.len(), 0);
    }
    out[offset..offset + bytes.len()].copy_from_slice(bytes);
}

pub(crate) fn put_u16(out: &mut Vec<u8>, offset: usize, value: u16) {
    put(out, offset, &value.to_le_bytes());
}

pub(crate) fn put_u32(out: &mut Vec<u8>, offset: usize, value: u32) {
    put(out, offset, &value.to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, offset: usize, value: u64) {
    put(out, offset, &value.to_le_bytes());
}

/// A PE32+ x86_64 DLL: `.text` at RVA 0x1000 (entry point 0x1000), `.rdata`
/// at RVA 0x2000 holding the export directory. Exports: `alias_func` and
/// `exp_func` → RVA 0x1010, `exp_data` → RVA 0x2100 (data), `fwd` →
/// forwarder `OTHER.func`, and ordinal 4 (no name) → RVA 0x1020.
pub fn tiny_pe() -> Vec<u8> {
    let mut out = vec![0u8; 0x600];
    put(&mut out, 0, b"MZ");
    put_u32(&mut out, 0x3c, 0x40);
    put(&mut out, 0x40, b"PE\0\0");
    // COFF file header.
    let coff = 0x44;
    put_u16(&mut out, coff, 0x8664);
    put_u16(&mut out, coff + 2, 2);
    put_u16(&mut out, coff + 16, 240);
    put_u16(&mut out, coff + 18, 0x2022);
    // Optional header (PE32+).
    let opt = coff + 20;
    put_u16(&mut out, opt, 0x20b);
    put_u32(&mut out, opt + 4, 0x200); // SizeOfCode
    put_u32(&mut out, opt + 16, 0x1000); // AddressOfEntryPoint
    put_u32(&mut out, opt + 20, 0x1000); // BaseOfCode
    put_u64(&mut out, opt + 24, PE_BASE);
    put_u32(&mut out, opt + 32, 0x1000); // SectionAlignment
    put_u32(&mut out, opt + 36, 0x200); // FileAlignment
    put_u16(&mut out, opt + 48, 6); // MajorSubsystemVersion
    put_u32(&mut out, opt + 56, 0x3000); // SizeOfImage
    put_u32(&mut out, opt + 60, 0x200); // SizeOfHeaders
    put_u16(&mut out, opt + 68, 3); // Subsystem: console
    put_u32(&mut out, opt + 108, 16); // NumberOfRvaAndSizes
    put_u32(&mut out, opt + 112, 0x2000); // export directory RVA
    put_u32(&mut out, opt + 116, 0xc0); // export directory size
    // Section headers.
    let sections = opt + 240;
    for (index, (name, rva, file, characteristics)) in [
        (b".text\0\0\0", 0x1000u32, 0x200u32, 0x6000_0020u32),
        (b".rdata\0\0", 0x2000, 0x400, 0x4000_0040),
    ]
    .iter()
    .enumerate()
    {
        let header = sections + index * 40;
        put(&mut out, header, *name);
        put_u32(&mut out, header + 8, 0x200);
        put_u32(&mut out, header + 12, *rva);
        put_u32(&mut out, header + 16, 0x200);
        put_u32(&mut out, header + 20, *file);
        put_u32(&mut out, header + 36, *characteristics);
    }
    put(&mut out, 0x200, &[0xc3; 0x100]);
    // Export directory at RVA 0x2000 = file offset 0x400.
    let rva = |rva: u32| 0x400 + (rva as usize - 0x2000);
    put_u32(&mut out, rva(0x200c), 0x2070); // Name
    put_u32(&mut out, rva(0x2010), 1); // Base
    put_u32(&mut out, rva(0x2014), 4); // NumberOfFunctions
    put_u32(&mut out, rva(0x2018), 4); // NumberOfNames
    put_u32(&mut out, rva(0x201c), 0x2040); // AddressOfFunctions
    put_u32(&mut out, rva(0x2020), 0x2050); // AddressOfNames
    put_u32(&mut out, rva(0x2024), 0x2060); // AddressOfNameOrdinals
    for (index, target) in [0x1010u32, 0x2100, 0x20b0, 0x1020].iter().enumerate() {
        put_u32(&mut out, rva(0x2040) + index * 4, *target);
    }
    // Names sorted by bytes, each with the index of its function.
    let names: [(u32, u16); 4] = [(0x2080, 0), (0x2090, 1), (0x20a0, 0), (0x20aa, 2)];
    for (index, (name, function)) in names.iter().enumerate() {
        put_u32(&mut out, rva(0x2050) + index * 4, *name);
        put_u16(&mut out, rva(0x2060) + index * 2, *function);
    }
    for (at, text) in [
        (0x2070u32, &b"tiny.dll\0"[..]),
        (0x2080, b"alias_func\0"),
        (0x2090, b"exp_data\0"),
        (0x20a0, b"exp_func\0"),
        (0x20aa, b"fwd\0"),
        (0x20b0, b"OTHER.func\0"),
    ] {
        put(&mut out, rva(at), text);
    }
    out
}

/// External tools and pinned fixtures are optional unless
/// `REA_REQUIRE_EXTERNALS=1` (as in CI), where a missing one fails the test.
pub(crate) fn skip_or_fail(reason: &str) {
    if std::env::var("REA_REQUIRE_EXTERNALS").is_ok_and(|value| value == "1") {
        panic!("required external unavailable: {reason}");
    }
    // Straight to stderr, past the harness's capture, so the skip shows in
    // plain `cargo test` output.
    use std::io::Write;
    let thread = std::thread::current();
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {}: {reason} (run `bash scripts/test.sh` to install it)",
        thread.name().unwrap_or("a test")
    );
}

pub(super) fn tool_available(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Runs an oracle tool and returns its stdout; a failure fails the test.
pub(super) fn run(tool: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("run {tool}: {error}"));
    assert!(
        output.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A pinned fixture (file or directory) from `tests/fixtures/fetch.sh`, or `None` (after
/// [`skip_or_fail`]) when it is missing.
pub(crate) fn fixture(name: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        skip_or_fail(&format!(
            "{} is missing; run tests/fixtures/fetch.sh",
            path.display()
        ));
        None
    }
}

/// A file written into its own temporary directory (removed on drop).
pub(crate) struct TempFile {
    _dir: tempfile::TempDir,
    pub path: std::path::PathBuf,
}

/// Writes `bytes` to `name` in a fresh temporary directory.
pub(crate) fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write a temporary file");
    TempFile { _dir: dir, path }
}
