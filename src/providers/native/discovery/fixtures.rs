//! Hand-assembled tiny binaries carrying exactly the tables under test, so
//! every start, size and malformation is known byte for byte.

use crate::providers::native::fixtures::{put, put_u16, put_u32, put_u64};

/// Virtual address the tiny ELF maps file offset 0 at.
pub const ELF_BASE: u64 = 0x40_0000;
/// `.text` of the tiny ELF: file offset 0x100, 0x100 bytes.
pub const ELF_TEXT: u64 = ELF_BASE + 0x100;
/// `.eh_frame` of the tiny ELF: file offset 0x200.
pub const ELF_EH_FRAME: u64 = ELF_BASE + 0x200;
const ELF_EH_FRAME_OFFSET: usize = 0x200;

/// Bytes of the CIE and of each FDE that [`eh_frame`] writes.
pub const CIE_SIZE: usize = 24;
pub const FDE_SIZE: usize = 24;

/// `__TEXT` vmaddr and `__text` of the tiny Mach-O (file offset 0x400).
pub const MACHO_TEXT_SEGMENT: u64 = 0x1_0000_0000;
pub const MACHO_TEXT: u64 = MACHO_TEXT_SEGMENT + 0x400;
/// `__TEXT,__eh_frame` of the tiny Mach-O (file offset 0x600).
pub const MACHO_EH_FRAME: u64 = MACHO_TEXT_SEGMENT + 0x600;
pub const MACHO_CPU_ARM64: u32 = 0x0100_000c;

/// Image base and `.text` RVA (0x200 bytes) of the tiny PE.
pub const PE_BASE: u64 = 0x1_4000_0000;
pub const PE_TEXT_RVA: u32 = 0x1000;
/// RVA of the tiny PE's `.pdata`.
pub const PE_PDATA_RVA: u32 = 0x2000;
pub const PE_MACHINE_AMD64: u16 = 0x8664;
pub const PE_MACHINE_ARM64: u16 = 0xaa64;
/// File offsets of data directory 3 (exception) and of the section table
/// in the tiny PE (optional header at 0x58).
pub const PE_EXCEPTION_DIRECTORY: usize = 0x58 + 112 + 3 * 8;
const PE_SECTION_HEADERS: usize = 0x58 + 240;

// ------------------------------------------------------------- .eh_frame

/// An x86-64 `.eh_frame` placed at `address`: one `zR` CIE (FDE pointers
/// `DW_EH_PE_pcrel | sdata4`), one FDE per `(start, length)`, and the zero
/// terminator. The CIE is at offset 0 and FDE `i` at
/// `CIE_SIZE + i * FDE_SIZE`.
pub fn eh_frame(address: u64, fdes: &[(u64, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(CIE_SIZE as u32 - 4).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // CIE id
    out.push(1); // version
    out.extend_from_slice(b"zR\0");
    out.extend_from_slice(&[1, 0x78, 16]); // code align 1, data align -8, RA r16
    out.extend_from_slice(&[1, 0x1b]); // augmentation data: FDE encoding
    out.extend_from_slice(&[0x0c, 7, 8, 0x90, 1]); // def_cfa rsp+8; rip at cfa-8
    out.resize(CIE_SIZE, 0); // DW_CFA_nop padding
    for &(start, length) in fdes {
        let at = out.len();
        out.extend_from_slice(&(FDE_SIZE as u32 - 4).to_le_bytes());
        out.extend_from_slice(&(at as u32 + 4).to_le_bytes()); // back to the CIE
        let field = address + at as u64 + 8;
        out.extend_from_slice(&(start.wrapping_sub(field) as u32).to_le_bytes());
        out.extend_from_slice(&length.to_le_bytes());
        out.push(0); // no augmentation data
        out.resize(at + FDE_SIZE, 0);
    }
    out.extend_from_slice(&[0; 4]);
    out
}

/// Offset of FDE `index` in an [`eh_frame`] table.
pub fn fde_offset(index: usize) -> usize {
    CIE_SIZE + index * FDE_SIZE
}

// ------------------------------------------------------------------- ELF

/// A little-endian x86-64 ELF shared object (`ET_DYN`, or `ET_REL` when
/// `relocatable`) with `.text` at [`ELF_TEXT`] (0x100 bytes, `AX`),
/// `.eh_frame` at [`ELF_EH_FRAME`] holding `eh_frame` (`A`), and one R+X
/// `PT_LOAD` mapping the whole file at [`ELF_BASE`].
pub fn elf_with_eh_frame(eh_frame: &[u8], relocatable: bool) -> Vec<u8> {
    let mut out = vec![0u8; 0x100];
    put(&mut out, 0x100, &[0xc3; 0x100]);
    put(&mut out, ELF_EH_FRAME_OFFSET, eh_frame);
    let shstrtab = b"\0.text\0.eh_frame\0.shstrtab\0";
    let shstrtab_offset = out.len();
    out.extend_from_slice(shstrtab);
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    let shoff = out.len();
    // (name, type, flags, address, offset, size)
    let sections: [(u32, u32, u64, u64, usize, usize); 4] = [
        (0, 0, 0, 0, 0, 0),
        (1, 1, 6, ELF_TEXT, 0x100, 0x100),
        (7, 1, 2, ELF_EH_FRAME, ELF_EH_FRAME_OFFSET, eh_frame.len()),
        (17, 3, 0, 0, shstrtab_offset, shstrtab.len()),
    ];
    for (name, kind, flags, address, offset, size) in sections {
        let header = out.len();
        put_u32(&mut out, header, name);
        put_u32(&mut out, header + 4, kind);
        put_u64(&mut out, header + 8, flags);
        put_u64(&mut out, header + 16, address);
        put_u64(&mut out, header + 24, offset as u64);
        put_u64(&mut out, header + 32, size as u64);
        put_u64(&mut out, header + 48, 8);
        out.resize(header + 64, 0);
    }
    let total = out.len() as u64;
    let elf_type = if relocatable { 1 } else { 3 };
    elf_header(&mut out, elf_type, 1, shoff, 4);
    // R+X, the whole file at ELF_BASE.
    program_header(&mut out, 0, (1, 5), 0, total);
    out
}

/// The tables of [`elf_with_eh_frame`] without any section headers, as
/// after `sstrip`: an R+X `PT_LOAD` for the headers and `.text` (file
/// `[0, 0x200)`), a read-only `PT_LOAD` for `.eh_frame` (at
/// [`ELF_EH_FRAME`]) and the `.eh_frame_hdr` after it, and
/// `PT_GNU_EH_FRAME` pointing at that header, which holds only
/// `eh_frame_ptr`. `header_edit` may corrupt the header's 8 bytes.
pub fn elf_without_sections(eh_frame: &[u8], header_edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut out = vec![0u8; 0x100];
    put(&mut out, 0x100, &[0xc3; 0x100]);
    put(&mut out, ELF_EH_FRAME_OFFSET, eh_frame);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    let header = out.len();
    let field = ELF_BASE + header as u64 + 4;
    let mut hdr = vec![1, 0x1b, 0xff, 0xff]; // version, pcrel|sdata4, no table
    hdr.extend_from_slice(&(ELF_EH_FRAME.wrapping_sub(field) as u32).to_le_bytes());
    header_edit(&mut hdr);
    out.extend_from_slice(&hdr);
    let total = out.len() as u64;
    elf_header(&mut out, 3, 3, 0, 0);
    program_header(&mut out, 0, (1, 5), 0, 0x200);
    program_header(&mut out, 1, (1, 4), 0x200, total - 0x200);
    program_header(&mut out, 2, (0x6474_e550, 4), header as u64, 8);
    out
}

/// ELF64 little-endian x86-64 header with program headers at 64.
fn elf_header(out: &mut Vec<u8>, elf_type: u16, phnum: u16, shoff: usize, shnum: u16) {
    put(out, 0, b"\x7fELF\x02\x01\x01\x00");
    put_u16(out, 16, elf_type);
    put_u16(out, 18, 62); // EM_X86_64
    put_u32(out, 20, 1);
    put_u64(out, 32, 64); // e_phoff
    put_u64(out, 40, shoff as u64);
    let shstrndx = shnum.saturating_sub(1);
    for (at, half) in [
        (52, 64u16),
        (54, 56),
        (56, phnum),
        (58, 64),
        (60, shnum),
        (62, shstrndx),
    ] {
        put_u16(out, at, half);
    }
}

/// Program header `index`: `(p_type, p_flags)`, mapping `size` file bytes
/// at `offset` to `ELF_BASE + offset`.
fn program_header(
    out: &mut Vec<u8>,
    index: usize,
    (kind, flags): (u32, u32),
    offset: u64,
    size: u64,
) {
    let at = 64 + index * 56;
    put_u32(out, at, kind);
    put_u32(out, at + 4, flags);
    for (field, word) in [
        offset,
        ELF_BASE + offset,
        ELF_BASE + offset,
        size,
        size,
        0x1000,
    ]
    .iter()
    .enumerate()
    {
        put_u64(out, at + 8 + field * 8, *word);
    }
}

// ---------------------------------------------------------------- Mach-O

/// ULEB128 encoding of `value` (canonical: no redundant groups).
pub fn uleb(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let low = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(low);
            return out;
        }
        out.push(low | 0x80);
    }
}

/// `LC_FUNCTION_STARTS` data for ascending `starts`, from the `__TEXT`
/// vmaddr, with the zero terminator and padding a linker writes.
pub fn function_starts(starts: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut previous = MACHO_TEXT_SEGMENT;
    for &start in starts {
        out.extend(uleb(start - previous));
        previous = start;
    }
    out.push(0);
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    out
}

/// A 64-bit little-endian Mach-O dylib: `__TEXT` at
/// [`MACHO_TEXT_SEGMENT`] with `__text` at [`MACHO_TEXT`] (0x100 bytes) and,
/// when `eh_frame` is not empty, `__eh_frame` at [`MACHO_EH_FRAME`];
/// `LC_FUNCTION_STARTS` pointing at `starts` (file offset 0x1000).
pub fn macho(cputype: u32, starts: &[u8], eh_frame: &[u8]) -> Vec<u8> {
    let sections = if eh_frame.is_empty() { 1 } else { 2 };
    let segment_size = 72 + 80 * sections;
    let commands = segment_size + 16;
    let mut out = Vec::with_capacity(0x1000 + starts.len());
    for word in [0xfeed_facf, cputype, 0, 6, 2, commands, 0, 0] {
        out.extend_from_slice(&u32::to_le_bytes(word));
    }
    // LC_SEGMENT_64 __TEXT.
    out.extend_from_slice(&0x19u32.to_le_bytes());
    out.extend_from_slice(&segment_size.to_le_bytes());
    out.extend_from_slice(&name16(b"__TEXT"));
    for word in [MACHO_TEXT_SEGMENT, 0x1000, 0, 0x1000] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for word in [5u32, 5, sections, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    let mut section = |name: &[u8], address: u64, size: u64, offset: u32, flags: u32| {
        out.extend_from_slice(&name16(name));
        out.extend_from_slice(&name16(b"__TEXT"));
        out.extend_from_slice(&address.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        for word in [offset, 0, 0, 0, flags, 0, 0, 0] {
            out.extend_from_slice(&word.to_le_bytes());
        }
    };
    section(b"__text", MACHO_TEXT, 0x100, 0x400, 0x8000_0400);
    if !eh_frame.is_empty() {
        section(
            b"__eh_frame",
            MACHO_EH_FRAME,
            eh_frame.len() as u64,
            0x600,
            0x6800_000b,
        );
    }
    // LC_FUNCTION_STARTS.
    for word in [0x26u32, 16, 0x1000, starts.len() as u32] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    put(&mut out, 0x400, &[0xc0, 0x03, 0x5f, 0xd6].repeat(0x40));
    put(&mut out, 0x600, eh_frame);
    out.resize(0x1000, 0);
    out.extend_from_slice(starts);
    out
}

fn name16(name: &[u8]) -> [u8; 16] {
    let mut field = [0u8; 16];
    field[..name.len()].copy_from_slice(name);
    field
}

// -------------------------------------------------------------------- PE

/// [`pe`] for x64 without an exception directory, its second section
/// renamed `.eh_fram` (how MinGW names `.eh_frame` in an image) and
/// holding `eh_frame` at [`PE_PDATA_RVA`].
pub fn mingw_pe(eh_frame: &[u8]) -> Vec<u8> {
    let mut out = pe(PE_MACHINE_AMD64, eh_frame, 0);
    put_u32(&mut out, PE_EXCEPTION_DIRECTORY, 0);
    put(&mut out, PE_SECTION_HEADERS + 40, b".eh_fram");
    out
}

/// One x64 `RUNTIME_FUNCTION`.
pub fn x64_entry(begin: u32, end: u32, unwind: u32) -> Vec<u8> {
    [begin, end, unwind]
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect()
}

/// One ARM64 `.pdata` entry.
pub fn arm64_entry(begin: u32, unwind: u32) -> Vec<u8> {
    [begin, unwind]
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect()
}

/// A PE32+ DLL for `machine`: `.text` at [`PE_TEXT_RVA`] (0x200 bytes of
/// code), `.pdata` at [`PE_PDATA_RVA`] holding `pdata`, and the exception
/// directory claiming `claimed` bytes there.
pub fn pe(machine: u16, pdata: &[u8], claimed: u32) -> Vec<u8> {
    let pdata_raw = pdata.len().div_ceil(0x200).max(1) * 0x200;
    let mut out = vec![0u8; 0x400 + pdata_raw];
    put(&mut out, 0, b"MZ");
    put_u32(&mut out, 0x3c, 0x40);
    put(&mut out, 0x40, b"PE\0\0");
    let coff = 0x44;
    put_u16(&mut out, coff, machine);
    put_u16(&mut out, coff + 2, 2);
    put_u16(&mut out, coff + 16, 240);
    put_u16(&mut out, coff + 18, 0x2022);
    let opt = coff + 20;
    put_u16(&mut out, opt, 0x20b);
    put_u32(&mut out, opt + 4, 0x200); // SizeOfCode
    put_u32(&mut out, opt + 20, PE_TEXT_RVA); // BaseOfCode
    put_u64(&mut out, opt + 24, PE_BASE);
    put_u32(&mut out, opt + 32, 0x1000); // SectionAlignment
    put_u32(&mut out, opt + 36, 0x200); // FileAlignment
    put_u16(&mut out, opt + 48, 6); // MajorSubsystemVersion
    put_u32(&mut out, opt + 56, 0x3000 + pdata_raw as u32); // SizeOfImage
    put_u32(&mut out, opt + 60, 0x200); // SizeOfHeaders
    put_u16(&mut out, opt + 68, 3); // Subsystem: console
    put_u32(&mut out, opt + 108, 16); // NumberOfRvaAndSizes
    put_u32(&mut out, PE_EXCEPTION_DIRECTORY, PE_PDATA_RVA);
    put_u32(&mut out, PE_EXCEPTION_DIRECTORY + 4, claimed);
    let sections = PE_SECTION_HEADERS;
    for (index, (name, rva, raw, file, characteristics)) in [
        (
            b".text\0\0\0",
            PE_TEXT_RVA,
            0x200u32,
            0x200u32,
            0x6000_0020u32,
        ),
        (
            b".pdata\0\0",
            PE_PDATA_RVA,
            pdata_raw as u32,
            0x400,
            0x4000_0040,
        ),
    ]
    .iter()
    .enumerate()
    {
        let header = sections + index * 40;
        put(&mut out, header, *name);
        put_u32(&mut out, header + 8, *raw);
        put_u32(&mut out, header + 12, *rva);
        put_u32(&mut out, header + 16, *raw);
        put_u32(&mut out, header + 20, *file);
        put_u32(&mut out, header + 36, *characteristics);
    }
    put(&mut out, 0x200, &[0xc3; 0x200]);
    put(&mut out, 0x400, pdata);
    out
}
