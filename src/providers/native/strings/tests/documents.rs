//! Whole documents: which sections are scanned, corrupted and overlapping
//! section headers, and the cap on limitations.

use std::sync::Arc;

use super::*;
use crate::providers::ProviderError;
use crate::providers::native::{NativeImage, fixtures};

// ---------------------------------------------------- whole documents

/// `tiny_pe` with `.rdata` (export names) as the only data section.
#[test]
fn tiny_pe_export_names_are_found_at_their_virtual_addresses() {
    use fixtures::PE_BASE;
    let file = temp_file("tiny.dll", &fixtures::tiny_pe());
    let image = NativeImage::open(&file.path).expect("open tiny PE");
    let table = image.strings(0).expect("strings");
    assert_well_formed(&table);
    let listed: Vec<(u64, &str, &str)> = table
        .strings
        .iter()
        .map(|s| (s.address, s.value.as_str(), s.section.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (PE_BASE + 0x2070, "tiny.dll", ".rdata"),
            (PE_BASE + 0x2080, "alias_func", ".rdata"),
            (PE_BASE + 0x2090, "exp_data", ".rdata"),
            (PE_BASE + 0x20a0, "exp_func", ".rdata"),
            (PE_BASE + 0x20b0, "OTHER.func", ".rdata"),
        ]
    );
    assert!(table.limitations.is_empty(), "{:?}", table.limitations);
    // Cached: the same table again.
    assert!(Arc::ptr_eq(&table, &image.strings(0).expect("strings")));
    assert!(matches!(
        image.strings(1),
        Err(ProviderError::UnknownDocument { .. })
    ));
}

/// Offset of the `.rdata` section header in `tiny_pe`.
const PE_RDATA_HEADER: usize = 0x44 + 20 + 240 + 40;
/// Offset of section header `index` in `tiny_elf` (1 is `.text`, 5 is
/// `.dynstr`).
fn elf_section_header(elf: &[u8], index: usize) -> usize {
    let at = fixtures::ELF64_SHOFF_OFFSET;
    let shoff = u64::from_le_bytes(elf[at..at + 8].try_into().expect("8 bytes"));
    shoff as usize + index * 64
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// `tiny_elf` whose `.text` is read-only data (`SHF_ALLOC` only) over the
/// bytes of `.dynstr` (`"\0alpha\0gamma\0dyn_only\0"`), so that it is
/// scanned. (`.dynstr` itself must stay a string table for `.dynsym`.)
pub(super) fn tiny_elf_with_data() -> Vec<u8> {
    let mut elf = fixtures::tiny_elf();
    let text = elf_section_header(&elf, 1);
    let dynstr = elf_section_header(&elf, 5);
    let (offset, size) = (get_u64(&elf, dynstr + 24), get_u64(&elf, dynstr + 32));
    put_u64(&mut elf, text + 8, 2);
    put_u64(&mut elf, text + 24, offset);
    put_u64(&mut elf, text + 32, size);
    elf
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Opens `bytes` and returns document 0's table, or `None` when the
/// file is rejected with a typed error.
pub(super) fn table_of(name: &str, bytes: &[u8]) -> Option<Arc<StringTable>> {
    let file = temp_file(name, bytes);
    let image = match NativeImage::open(&file.path) {
        Ok(image) => image,
        Err(error) => {
            assert!(
                matches!(
                    error,
                    ProviderError::Malformed { .. } | ProviderError::UnsupportedFormat { .. }
                ),
                "{name}: {error:?}"
            );
            return None;
        }
    };
    let mut first = None;
    for index in 0..image.documents().len() {
        match image.strings(index) {
            Ok(table) => {
                assert_well_formed(&table);
                first.get_or_insert(table);
            }
            Err(error) => assert!(
                matches!(error, ProviderError::Malformed { .. }),
                "{name}: {error:?}"
            ),
        }
    }
    first
}

fn assert_skipped(table: &StringTable, section: &str, why: &str) {
    assert!(
        table
            .limitations
            .iter()
            .any(|line| line.contains(section) && line.contains(why)),
        "expected {section} skipped ({why}): {:?}",
        table.limitations
    );
}

#[test]
fn elf_data_sections_are_scanned_and_code_is_not() {
    use fixtures::ELF_TEXT;
    let table = table_of("tiny", &tiny_elf_with_data()).expect("opens");
    let listed: Vec<(u64, &str, &str)> = table
        .strings
        .iter()
        .map(|s| (s.address, s.value.as_str(), s.section.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (ELF_TEXT + 1, "alpha", ".text"),
            (ELF_TEXT + 7, "gamma", ".text"),
            (ELF_TEXT + 13, "dyn_only", ".text")
        ]
    );
    assert!(table.limitations.is_empty(), "{:?}", table.limitations);
    // Unmodified, nothing is data: .dynstr is metadata, .text is code.
    let plain = table_of("plain", &fixtures::tiny_elf()).expect("opens");
    assert!(plain.strings.is_empty());
    assert!(
        plain.limitations[0].contains("no data section"),
        "{:?}",
        plain.limitations
    );
}

#[test]
fn corrupted_section_headers_are_skipped_with_a_limitation() {
    let elf = tiny_elf_with_data();
    let text = elf_section_header(&elf, 1);

    let mut past_end = elf.clone();
    put_u64(&mut past_end, text + 24, 0x7fff_ffff_0000);
    let table = table_of("past-end", &past_end).expect("opens");
    assert!(table.strings.is_empty());
    assert_skipped(&table, ".text", "file range is invalid");

    let mut huge = elf.clone();
    put_u64(&mut huge, text + 32, u64::MAX - 8);
    let table = table_of("huge", &huge).expect("opens");
    assert!(table.strings.is_empty());
    assert_skipped(&table, ".text", "file range is invalid");

    // SHF_COMPRESSED over bytes that are no compression header.
    let mut garbage = elf.clone();
    put_u64(&mut garbage, text + 8, 0x802);
    let table = table_of("garbage-chdr", &garbage).expect("opens");
    assert!(table.strings.is_empty());
    assert_skipped(&table, ".text", "compression header is unreadable");

    // SHF_COMPRESSED with a valid zlib header: skipped, not inflated.
    let mut zlib = fixtures::tiny_elf();
    let text_offset = get_u64(&zlib, text + 24) as usize;
    put_u64(&mut zlib, text + 8, 0x802);
    put_u32(&mut zlib, text_offset, 1); // ELFCOMPRESS_ZLIB
    put_u64(&mut zlib, text_offset + 8, 64);
    let table = table_of("zlib", &zlib).expect("opens");
    assert!(table.strings.is_empty());
    assert_skipped(&table, ".text", "compressed (Zlib)");

    // PE: raw data of .rdata far past the end of the file.
    let mut pe = fixtures::tiny_pe();
    put_u32(&mut pe, PE_RDATA_HEADER + 20, 0x7fff_0000);
    let table = table_of("past-end.dll", &pe).expect("opens");
    assert!(table.strings.is_empty());
    assert_skipped(&table, ".rdata", "file range is invalid");

    let mut pe = fixtures::tiny_pe();
    put_u32(&mut pe, PE_RDATA_HEADER + 8, 0xffff_ff00);
    put_u32(&mut pe, PE_RDATA_HEADER + 16, 0xffff_ff00);
    let table = table_of("huge.dll", &pe).expect("opens");
    assert_skipped(&table, ".rdata", "file range is invalid");

    // No section table at all: a typed error or an empty, explained table.
    let mut no_sections = elf.clone();
    put_u64(&mut no_sections, fixtures::ELF64_SHOFF_OFFSET, 0);
    if let Some(table) = table_of("no-sections", &no_sections) {
        assert!(table.strings.is_empty());
        assert!(table.limitations[0].contains("no data section"));
    }
}

/// Three sections over the whole file: the third would take the bytes
/// scanned past twice the file size.
#[test]
fn overlapping_sections_stop_at_twice_the_document_size() {
    let mut elf = tiny_elf_with_data();
    let len = elf.len() as u64;
    // .text, .symtab and .dynsym all become read-only data over the
    // whole file (the symbol tables are then simply absent).
    for index in [1, 2, 4] {
        let header = elf_section_header(&elf, index);
        put_u32(&mut elf, header + 4, 1); // SHT_PROGBITS
        put_u64(&mut elf, header + 8, 2); // SHF_ALLOC
        put_u64(&mut elf, header + 24, 0);
        put_u64(&mut elf, header + 32, len);
    }
    let table = table_of("overlap", &elf).expect("opens");
    let sections: std::collections::BTreeSet<&str> =
        table.strings.iter().map(|s| s.section.as_str()).collect();
    assert_eq!(
        sections.into_iter().collect::<Vec<_>>(),
        [".symtab", ".text"]
    );
    assert_skipped(&table, ".dynsym", "twice the document size");
    assert!(!table.truncated);
}

#[test]
fn limitations_are_capped_and_counted() {
    let mut collector = Collector::new(LIMITS);
    for index in 0..MAX_LIMITATIONS + 8 {
        collector.limitation(format!("skipped #{index}"));
    }
    let table = collector.finish();
    assert_eq!(table.limitations.len(), MAX_LIMITATIONS + 1);
    assert_eq!(
        table.limitations.last().map(String::as_str),
        Some("8 more limitations like the ones above are not listed")
    );
}
