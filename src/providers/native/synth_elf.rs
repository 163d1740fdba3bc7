//! A small ELF64 (x86-64, little-endian) writer for tests that need
//! hostile shapes no compiler emits: thousands of sections sharing one
//! range of file bytes, a dynamic table of 20,000 `DT_NEEDED` entries,
//! relocation sections that all point at one array.
//!
//! Self-contained (it imports nothing of the crate), so the integration
//! tests include the same file through `#[path]` (`tests/common`); each
//! user needs only part of it.
#![allow(dead_code)]

/// `SHT_*` section types the tests use.
pub const SHT_PROGBITS: u32 = 1;
pub const SHT_SYMTAB: u32 = 2;
pub const SHT_STRTAB: u32 = 3;
pub const SHT_RELA: u32 = 4;
pub const SHT_DYNAMIC: u32 = 6;
pub const SHT_DYNSYM: u32 = 11;
/// `SHF_*` flags.
pub const SHF_WRITE: u64 = 1;
pub const SHF_ALLOC: u64 = 2;
pub const SHF_EXECINSTR: u64 = 4;

/// Where a section's bytes are.
#[derive(Debug, Clone)]
pub enum Contents {
    /// Its own bytes, written into the file.
    Bytes(Vec<u8>),
    /// `size` bytes from the start of another section's bytes (by the index
    /// [`Elf::section`] returned for it): many headers, one range.
    Shared { section: u32, size: u64 },
}

/// One section header and its contents.
#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub kind: u32,
    pub flags: u64,
    pub address: u64,
    pub contents: Contents,
    pub link: u32,
    pub info: u32,
    pub entsize: u64,
}

impl Section {
    /// A section of `kind` holding `bytes`, mapped at `address`.
    pub fn new(name: &str, kind: u32, flags: u64, address: u64, bytes: Vec<u8>) -> Section {
        Section {
            name: name.to_owned(),
            kind,
            flags,
            address,
            contents: Contents::Bytes(bytes),
            link: 0,
            info: 0,
            entsize: 0,
        }
    }

    pub fn link(mut self, link: u32) -> Section {
        self.link = link;
        self
    }

    pub fn entsize(mut self, entsize: u64) -> Section {
        self.entsize = entsize;
        self
    }
}

/// An ELF64 executable being written.
#[derive(Debug, Clone)]
pub struct Elf {
    entry: u64,
    sections: Vec<Section>,
}

impl Elf {
    /// An `ET_DYN` x86-64 file whose entry point is `entry`.
    pub fn new(entry: u64) -> Elf {
        Elf {
            entry,
            sections: Vec::new(),
        }
    }

    /// Adds a section; returns its header index (the null header is 0).
    pub fn section(&mut self, section: Section) -> u32 {
        self.sections.push(section);
        self.sections.len() as u32
    }

    /// The file's bytes. Section counts past 0xff00 use the extended
    /// numbering of the ELF spec (counts in the null header).
    pub fn build(&self) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut name_offsets = Vec::with_capacity(self.sections.len());
        for section in &self.sections {
            name_offsets.push(names.len() as u32);
            names.extend_from_slice(section.name.as_bytes());
            names.push(0);
        }
        let shstrtab_name = names.len() as u32;
        names.extend_from_slice(b".shstrtab\0");
        let mut out = vec![0u8; 64];
        let mut ranges = Vec::with_capacity(self.sections.len());
        for section in &self.sections {
            let range = match &section.contents {
                Contents::Bytes(bytes) => {
                    align(&mut out, 16);
                    let offset = out.len() as u64;
                    out.extend_from_slice(bytes);
                    (offset, bytes.len() as u64)
                }
                Contents::Shared { section, size } => {
                    let (offset, _) = ranges[*section as usize - 1];
                    (offset, *size)
                }
            };
            ranges.push(range);
        }
        align(&mut out, 16);
        let names_offset = out.len() as u64;
        out.extend_from_slice(&names);
        align(&mut out, 8);
        let shoff = out.len() as u64;
        let count = self.sections.len() as u64 + 2;
        let extended = count >= 0xff00;
        let names_index = count - 1;
        let null = if extended {
            header(0, 0, 0, 0, 0, count, names_index as u32, 0, 0)
        } else {
            header(0, 0, 0, 0, 0, 0, 0, 0, 0)
        };
        out.extend_from_slice(&null);
        for ((section, &(offset, size)), name) in
            self.sections.iter().zip(&ranges).zip(&name_offsets)
        {
            out.extend_from_slice(&header(
                *name,
                section.kind,
                section.flags,
                section.address,
                offset,
                size,
                section.link,
                section.info,
                section.entsize,
            ));
        }
        out.extend_from_slice(&header(
            shstrtab_name,
            SHT_STRTAB,
            0,
            0,
            names_offset,
            names.len() as u64,
            0,
            0,
            0,
        ));
        out[..4].copy_from_slice(b"\x7fELF");
        out[4] = 2; // ELFCLASS64
        out[5] = 1; // little-endian
        out[6] = 1; // EV_CURRENT
        put16(&mut out, 16, 3); // ET_DYN
        put16(&mut out, 18, 62); // EM_X86_64
        put32(&mut out, 20, 1);
        put64(&mut out, 24, self.entry);
        put64(&mut out, 40, shoff);
        put16(&mut out, 52, 64); // e_ehsize
        put16(&mut out, 54, 56); // e_phentsize
        put16(&mut out, 58, 64); // e_shentsize
        put16(&mut out, 60, if extended { 0 } else { count as u16 });
        put16(
            &mut out,
            62,
            if extended { 0xffff } else { names_index as u16 },
        );
        out
    }
}

/// A string table of `names` and each name's offset in it.
pub fn strtab(names: &[&[u8]]) -> (Vec<u8>, Vec<u32>) {
    let mut table = vec![0u8];
    let mut offsets = Vec::with_capacity(names.len());
    for name in names {
        offsets.push(table.len() as u32);
        table.extend_from_slice(name);
        table.push(0);
    }
    (table, offsets)
}

/// An `Elf64_Sym`.
pub fn sym(name: u32, info: u8, shndx: u16, value: u64, size: u64) -> [u8; 24] {
    let mut out = [0u8; 24];
    out[..4].copy_from_slice(&name.to_le_bytes());
    out[4] = info;
    out[6..8].copy_from_slice(&shndx.to_le_bytes());
    out[8..16].copy_from_slice(&value.to_le_bytes());
    out[16..24].copy_from_slice(&size.to_le_bytes());
    out
}

/// An `Elf64_Rela`.
pub fn rela(offset: u64, symbol: u32, kind: u32, addend: i64) -> [u8; 24] {
    let mut out = [0u8; 24];
    out[..8].copy_from_slice(&offset.to_le_bytes());
    let info = (u64::from(symbol) << 32) | u64::from(kind);
    out[8..16].copy_from_slice(&info.to_le_bytes());
    out[16..24].copy_from_slice(&addend.to_le_bytes());
    out
}

/// An `Elf64_Dyn`.
pub fn dynamic(tag: u64, value: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&tag.to_le_bytes());
    out[8..].copy_from_slice(&value.to_le_bytes());
    out
}

#[allow(clippy::too_many_arguments)]
fn header(
    name: u32,
    kind: u32,
    flags: u64,
    address: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    entsize: u64,
) -> [u8; 64] {
    let mut out = [0u8; 64];
    out[..4].copy_from_slice(&name.to_le_bytes());
    out[4..8].copy_from_slice(&kind.to_le_bytes());
    out[8..16].copy_from_slice(&flags.to_le_bytes());
    out[16..24].copy_from_slice(&address.to_le_bytes());
    out[24..32].copy_from_slice(&offset.to_le_bytes());
    out[32..40].copy_from_slice(&size.to_le_bytes());
    out[40..44].copy_from_slice(&link.to_le_bytes());
    out[44..48].copy_from_slice(&info.to_le_bytes());
    out[48..56].copy_from_slice(&1u64.to_le_bytes()); // sh_addralign
    out[56..64].copy_from_slice(&entsize.to_le_bytes());
    out
}

fn align(out: &mut Vec<u8>, to: usize) {
    out.resize(out.len().next_multiple_of(to), 0);
}

fn put16(out: &mut [u8], at: usize, value: u16) {
    out[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

fn put32(out: &mut [u8], at: usize, value: u32) {
    out[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put64(out: &mut [u8], at: usize, value: u64) {
    out[at..at + 8].copy_from_slice(&value.to_le_bytes());
}
