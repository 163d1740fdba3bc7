use super::super::code_map::{CodeMap, CodeRegion};
use super::super::pointers::DataPointers;
use super::super::synth_elf::{Elf, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS, Section};
use super::super::words::Words;
use super::claims::Claims;
use super::{Input, recover};
use crate::providers::code::Arch;

fn map(bytes: &[u8]) -> CodeMap<'_> {
    CodeMap::from_regions(vec![CodeRegion {
        address: 0x1000,
        end: 0x1000 + bytes.len() as u64,
        bytes,
        section: ".text",
    }])
}

#[test]
fn claims_find_the_next_unclaimed_byte_across_words() {
    let bytes = [0u8; 300];
    let code = map(&bytes);
    let mut claims = Claims::new(&code);
    assert_eq!(claims.next_unclaimed(0x1000), Some(0x1000));
    claims.claim_span(0x1000, 0x1000 + 130);
    assert!(claims.is_claimed(0x1000 + 129));
    assert!(!claims.is_claimed(0x1000 + 130));
    assert_eq!(claims.next_unclaimed(0x1000), Some(0x1000 + 130));
    claims.claim_span(0x1000 + 130, 0x1000 + 300);
    assert_eq!(claims.next_unclaimed(0x1005), Some(0x1000 + 300));
    assert_eq!(claims.next_unclaimed(0x2000), None);
    // A span past the region is clipped, never out of bounds.
    claims.claim_span(0x0f00, 0x9000);
}

/// `functions` switch functions (`cmp edi, 0x7fffffff; ja; lea rdx,
/// [rip + T]; movsxd rax, [rdx + rdi*4]; add rax, rdx; jmp rax`), 32
/// bytes each from 0x1000, all dispatching through one table `T` of
/// `entries` entries, entry `i` leading to the `ret` of function `i %
/// functions`.
fn switches_sharing_one_table(functions: u64, entries: u64) -> Vec<u8> {
    const TEXT: u64 = 0x1000;
    const TABLE: u64 = 0x20_0000;
    let mut code = Vec::new();
    for index in 0..functions {
        let at = TEXT + index * 32;
        code.extend_from_slice(&[0x81, 0xff, 0xff, 0xff, 0xff, 0x7f]); // cmp edi, 0x7fffffff
        code.extend_from_slice(&[0x77, 0x10]); // ja ret
        code.extend_from_slice(&[0x48, 0x8d, 0x15]); // lea rdx, [rip + T]
        code.extend_from_slice(&((TABLE.wrapping_sub(at + 15)) as u32).to_le_bytes());
        code.extend_from_slice(&[0x48, 0x63, 0x04, 0xba]); // movsxd rax, [rdx + rdi*4]
        code.extend_from_slice(&[0x48, 0x01, 0xd0, 0xff, 0xe0, 0xc3]); // add; jmp rax; ret
        code.resize(code.len() + 7, 0xcc);
    }
    let table = (0..entries)
        .flat_map(|entry| {
            let ret = TEXT + (entry % functions) * 32 + 24;
            (ret.wrapping_sub(TABLE) as u32).to_le_bytes()
        })
        .collect();
    let mut elf = Elf::new(TEXT);
    elf.section(Section::new(
        ".text",
        SHT_PROGBITS,
        SHF_ALLOC | SHF_EXECINSTR,
        TEXT,
        code,
    ));
    elf.section(Section::new(
        ".rodata",
        SHT_PROGBITS,
        SHF_ALLOC,
        TABLE,
        table,
    ));
    elf.build()
}

#[test]
fn switches_sharing_one_huge_table_read_a_bounded_number_of_entries() {
    let functions = 2_000u64;
    let bytes = switches_sharing_one_table(functions, 100_000);
    let file = object::File::parse(&*bytes).unwrap();
    let code = CodeMap::new(&file, bytes.len());
    let words = Words::new(&file);
    let pointers = DataPointers::read(&file, |_| false);
    let recovery = recover(Input {
        code: &code,
        arch: Arch::X86_64,
        known: (0..functions).map(|i| (0x1000 + i * 32, None)).collect(),
        pointed: Vec::new(),
        excluded: Vec::new(),
        noreturn: Vec::new(),
        words: &words,
        pointers: &pointers,
        referenced: &|_| false,
    });
    // Each jump alone would read 4,096 entries (8,192,000 in all).
    let ceiling = code.byte_len() / 4 + (1 << 16);
    assert!(recovery.tables > 0, "the shape is recognised");
    assert!(
        recovery.table_entries <= ceiling,
        "{} entries read, ceiling {ceiling}",
        recovery.table_entries
    );
    assert!(
        recovery
            .limitations
            .iter()
            .any(|l| l.contains("jump tables")),
        "{:?}",
        recovery.limitations
    );
}
