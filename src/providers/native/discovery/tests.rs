//! Tests of table discovery: exact results on hand-built tables (well
//! formed and broken), agreement with binutils/LLVM on real binaries, and
//! robustness on mutated input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

use object::Object;
use proptest::prelude::*;

use super::fixtures::{
    self, CIE_SIZE, ELF_BASE, ELF_EH_FRAME, ELF_TEXT, MACHO_CPU_ARM64, MACHO_EH_FRAME, MACHO_TEXT,
    MACHO_TEXT_SEGMENT, PE_BASE, PE_MACHINE_AMD64, PE_MACHINE_ARM64, PE_PDATA_RVA, PE_TEXT_RVA,
    fde_offset,
};
use super::function_starts::{UlebError, uleb128};
use super::{Discovery, Start, discover, table_starts};
use crate::providers::Source;
use crate::providers::native::MAX_PROCEDURES;
use crate::providers::native::code_map::CodeMap;
use crate::providers::native::fixtures::{fixture, run, skip_or_fail, tool_available};

// ---------------------------------------------------------------- support

fn parse(bytes: &[u8]) -> object::File<'_> {
    object::File::parse(bytes).expect("the fixture parses")
}

fn starts_of(bytes: &[u8]) -> Discovery {
    table_starts(&parse(bytes))
}

fn start(address: u64, size: Option<u64>, source: Source) -> Start {
    Start {
        address,
        size,
        source,
    }
}

/// Asserts that exactly one limitation contains every fragment.
fn assert_limitation(discovery: &Discovery, fragments: &[&str]) {
    let matching = discovery
        .limitations
        .iter()
        .filter(|text| fragments.iter().all(|fragment| text.contains(fragment)))
        .count();
    assert_eq!(
        matching, 1,
        "want one limitation containing {fragments:?}, got {:#?}",
        discovery.limitations
    );
}

/// The structural promises of [`table_starts`].
fn assert_well_formed(discovery: &Discovery, cap: usize) {
    assert!(discovery.starts.len() <= cap);
    for pair in discovery.starts.windows(2) {
        assert!(
            (pair[0].address, pair[0].source) < (pair[1].address, pair[1].source),
            "not strictly sorted by (address, source): {pair:?}"
        );
    }
    for start in &discovery.starts {
        assert_ne!(start.size, Some(0), "{start:?}");
    }
}

/// An ELF whose `.eh_frame` has one FDE per `(start, length)`.
fn elf_fdes(fdes: &[(u64, u32)]) -> Vec<u8> {
    fixtures::elf_with_eh_frame(&fixtures::eh_frame(ELF_EH_FRAME, fdes), false)
}

/// The same, after `edit` changed the `.eh_frame` bytes.
fn elf_fdes_edited(fdes: &[(u64, u32)], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut table = fixtures::eh_frame(ELF_EH_FRAME, fdes);
    edit(&mut table);
    fixtures::elf_with_eh_frame(&table, false)
}

const THREE_FDES: [(u64, u32); 3] = [
    (ELF_TEXT, 0x10),
    (ELF_TEXT + 0x10, 0x30),
    (ELF_TEXT + 0x40, 0x20),
];

// ------------------------------------------------------------- .eh_frame

#[test]
fn eh_frame_fdes_are_starts_with_their_ranges() {
    let discovery = starts_of(&elf_fdes(&THREE_FDES));
    assert_eq!(
        discovery.starts,
        vec![
            start(ELF_TEXT, Some(0x10), Source::EhFrame),
            start(ELF_TEXT + 0x10, Some(0x30), Source::EhFrame),
            start(ELF_TEXT + 0x40, Some(0x20), Source::EhFrame),
        ]
    );
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn eh_frame_output_is_sorted_and_keeps_the_largest_duplicate() {
    let discovery = starts_of(&elf_fdes(&[
        (ELF_TEXT + 0x40, 0x20),
        (ELF_TEXT, 0x8),
        (ELF_TEXT, 0x18),
        (ELF_TEXT, 0x10),
    ]));
    assert_eq!(
        discovery.starts,
        vec![
            start(ELF_TEXT, Some(0x18), Source::EhFrame),
            start(ELF_TEXT + 0x40, Some(0x20), Source::EhFrame),
        ]
    );
}

#[test]
fn eh_frame_zero_range_means_unknown_size() {
    let discovery = starts_of(&elf_fdes(&[(ELF_TEXT + 4, 0)]));
    assert_eq!(
        discovery.starts,
        vec![start(ELF_TEXT + 4, None, Source::EhFrame)]
    );
}

#[test]
fn eh_frame_starts_outside_code_are_ignored_and_counted() {
    // The ELF header and `.eh_frame` itself are mapped but not code; the
    // end of `.text` is exclusive.
    let discovery = starts_of(&elf_fdes(&[
        (ELF_BASE, 4),
        (ELF_TEXT, 4),
        (ELF_EH_FRAME, 4),
        (ELF_TEXT + 0x100, 4),
    ]));
    assert_eq!(
        discovery.starts,
        vec![start(ELF_TEXT, Some(4), Source::EhFrame)]
    );
    assert_limitation(
        &discovery,
        &[
            "3 entries of `.eh_frame` declare a start outside every executable section",
            "the first at 0x400000",
        ],
    );
}

#[test]
fn truncated_fde_stops_the_walk_where_it_starts() {
    let bytes = elf_fdes_edited(&THREE_FDES, |table| table.truncate(fde_offset(1) + 10));
    let discovery = starts_of(&bytes);
    assert_eq!(
        discovery.starts,
        vec![start(ELF_TEXT, Some(0x10), Source::EhFrame)]
    );
    assert_limitation(
        &discovery,
        &[
            &format!(
                "`.eh_frame` entry at offset {:#x} is malformed",
                fde_offset(1)
            ),
            "later entries not read",
        ],
    );
}

#[test]
fn fde_length_past_the_section_stops_the_walk() {
    let bytes = elf_fdes_edited(&THREE_FDES, |table| {
        let at = fde_offset(2);
        table[at..at + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    });
    let discovery = starts_of(&bytes);
    assert_eq!(discovery.starts.len(), 2, "{discovery:?}");
    assert_limitation(
        &discovery,
        &[&format!(
            "entry at offset {:#x} is malformed",
            fde_offset(2)
        )],
    );
}

#[test]
fn cie_pointer_out_of_range_stops_the_walk() {
    let bytes = elf_fdes_edited(&THREE_FDES, |table| {
        let at = fde_offset(1) + 4;
        table[at..at + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    });
    let discovery = starts_of(&bytes);
    assert_eq!(
        discovery.starts,
        vec![start(ELF_TEXT, Some(0x10), Source::EhFrame)]
    );
    assert_limitation(
        &discovery,
        &[
            &format!("entry at offset {:#x} is malformed", fde_offset(1)),
            "later entries not read",
        ],
    );
}

#[test]
fn fde_naming_a_non_cie_is_skipped_and_the_walk_goes_on() {
    // FDE 1's CIE pointer lands on FDE 0: its length is known, so only it
    // is lost.
    let bytes = elf_fdes_edited(&THREE_FDES, |table| {
        let at = fde_offset(1) + 4;
        let back = (at - fde_offset(0)) as u32;
        table[at..at + 4].copy_from_slice(&back.to_le_bytes());
    });
    let discovery = starts_of(&bytes);
    assert_eq!(
        discovery.starts,
        vec![
            start(ELF_TEXT, Some(0x10), Source::EhFrame),
            start(ELF_TEXT + 0x40, Some(0x20), Source::EhFrame),
        ]
    );
    assert_limitation(
        &discovery,
        &[
            "1 FDE of `.eh_frame` could not be decoded and was skipped",
            &format!("at offset {:#x}", fde_offset(1)),
        ],
    );
}

#[test]
fn unknown_cie_augmentation_stops_the_walk() {
    // 'zR' → 'zQ': the iterator parses CIEs itself, so the error ends it.
    let bytes = elf_fdes_edited(&THREE_FDES, |table| table[10] = b'Q');
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty(), "{discovery:?}");
    assert_limitation(
        &discovery,
        &[
            "`.eh_frame` entry at offset 0x0 is malformed: unknown CFI augmentation; later entries not read",
        ],
    );
}

#[test]
fn unsupported_fde_pointer_encoding_skips_every_fde() {
    // FDE encoding 0x1b → 0x5b (DW_EH_PE_aligned, unsupported): the CIE
    // parses, each FDE's address does not.
    let bytes = elf_fdes_edited(&THREE_FDES, |table| table[16] = 0x5b);
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty(), "{discovery:?}");
    assert_limitation(
        &discovery,
        &["3 FDEs of `.eh_frame` could not be decoded and were skipped"],
    );
}

#[test]
fn eh_frame_without_terminator_ends_at_the_section_end() {
    let bytes = elf_fdes_edited(&THREE_FDES, |table| table.truncate(table.len() - 4));
    let discovery = starts_of(&bytes);
    assert_eq!(discovery.starts.len(), 3);
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn relocatable_eh_frame_is_not_read() {
    let table = fixtures::eh_frame(ELF_EH_FRAME, &THREE_FDES);
    let discovery = starts_of(&fixtures::elf_with_eh_frame(&table, true));
    assert!(discovery.starts.is_empty());
    assert_limitation(&discovery, &["`.eh_frame` of a relocatable object"]);
}

#[test]
fn sectionless_elf_finds_eh_frame_through_pt_gnu_eh_frame() {
    let mut fdes = THREE_FDES.to_vec();
    fdes.push((ELF_EH_FRAME + 4, 4)); // in the read-only segment
    let table = fixtures::eh_frame(ELF_EH_FRAME, &fdes);
    let bytes = fixtures::elf_without_sections(&table, |_| {});
    assert_eq!(parse(&bytes).sections().count(), 0);
    let discovery = starts_of(&bytes);
    assert_eq!(
        discovery.starts,
        vec![
            start(ELF_TEXT, Some(0x10), Source::EhFrame),
            start(ELF_TEXT + 0x10, Some(0x30), Source::EhFrame),
            start(ELF_TEXT + 0x40, Some(0x20), Source::EhFrame),
        ]
    );
    assert_limitation(
        &discovery,
        &["1 entry of `.eh_frame` (located through `PT_GNU_EH_FRAME`) declares a start outside"],
    );
    assert_eq!(
        discovery.limitations.len(),
        1,
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn malformed_eh_frame_hdr_is_reported() {
    let table = fixtures::eh_frame(ELF_EH_FRAME, &THREE_FDES);
    let bytes = fixtures::elf_without_sections(&table, |header| header[0] = 2);
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty());
    assert_limitation(
        &discovery,
        &[
            "the `.eh_frame_hdr` at 0x",
            "(`PT_GNU_EH_FRAME`) is malformed",
            "could not be located",
        ],
    );
}

#[test]
fn eh_frame_hdr_pointing_outside_the_file_is_reported() {
    let table = fixtures::eh_frame(ELF_EH_FRAME, &THREE_FDES);
    let bytes = fixtures::elf_without_sections(&table, |header| {
        header[4..8].copy_from_slice(&0x4000_0000u32.to_le_bytes());
    });
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty());
    assert_limitation(
        &discovery,
        &[
            "`PT_GNU_EH_FRAME` places `.eh_frame` at",
            "outside every segment",
        ],
    );
}

#[test]
fn a_table_stops_at_the_cap() {
    let discovery = discover(&parse(&elf_fdes(&THREE_FDES)), 2);
    assert_eq!(discovery.starts.len(), 2);
    assert_eq!(discovery.starts[1].address, ELF_TEXT + 0x10);
    assert_limitation(
        &discovery,
        &["`.eh_frame` declares more than 2 function starts; only the first 2 were read"],
    );
}

#[test]
fn documents_without_tables_say_so() {
    let bytes = crate::providers::native::fixtures::tiny_elf();
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty());
    assert_limitation(
        &discovery,
        &["has no `.eh_frame`, `LC_FUNCTION_STARTS` or `.pdata`"],
    );
}

// ---------------------------------------------------- LC_FUNCTION_STARTS

fn macho_starts(table: &[u8]) -> Vec<u8> {
    fixtures::macho(MACHO_CPU_ARM64, table, &[])
}

/// Valid deltas to `MACHO_TEXT` and `+0x10`, then `tail`.
fn deltas_then(tail: &[u8]) -> Vec<u8> {
    let mut table = fixtures::uleb(MACHO_TEXT - MACHO_TEXT_SEGMENT);
    table.extend(fixtures::uleb(0x10));
    table.extend_from_slice(tail);
    table
}

#[test]
fn function_starts_are_deltas_from_the_text_segment() {
    let starts = [
        MACHO_TEXT,
        MACHO_TEXT + 0x10,
        MACHO_TEXT + 0x44,
        MACHO_TEXT + 0xfc,
    ];
    let discovery = starts_of(&macho_starts(&fixtures::function_starts(&starts)));
    let expected: Vec<Start> = starts
        .iter()
        .map(|&address| start(address, None, Source::FunctionStarts))
        .collect();
    assert_eq!(discovery.starts, expected);
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn function_starts_outside_code_are_ignored() {
    let starts = [MACHO_TEXT_SEGMENT + 0x20, MACHO_TEXT, MACHO_TEXT + 0x100];
    let discovery = starts_of(&macho_starts(&fixtures::function_starts(&starts)));
    assert_eq!(
        discovery.starts,
        vec![start(MACHO_TEXT, None, Source::FunctionStarts)]
    );
    assert_limitation(
        &discovery,
        &["2 entries of `LC_FUNCTION_STARTS` declare a start outside"],
    );
}

#[test]
fn function_starts_uleb_overflow_stops_the_walk() {
    let mut tail = vec![0xff; 10];
    tail.push(0x01);
    let discovery = starts_of(&macho_starts(&deltas_then(&tail)));
    assert_eq!(discovery.starts.len(), 2);
    assert_limitation(
        &discovery,
        &[
            "`LC_FUNCTION_STARTS` entry at offset 0x3 is malformed",
            "does not fit in 64 bits",
            "later entries not read",
        ],
    );
}

#[test]
fn function_starts_overlong_uleb_stops_the_walk() {
    let discovery = starts_of(&macho_starts(&deltas_then(&[0x84, 0x00, 0x04])));
    assert_eq!(discovery.starts.len(), 2);
    assert_limitation(&discovery, &["offset 0x3", "redundant trailing zero bytes"]);
}

#[test]
fn function_starts_truncated_uleb_stops_the_walk() {
    let discovery = starts_of(&macho_starts(&deltas_then(&[0x84])));
    assert_eq!(discovery.starts.len(), 2);
    assert_limitation(&discovery, &["offset 0x3", "ends inside a ULEB128 number"]);
}

#[test]
fn function_starts_past_the_address_space_stop_the_walk() {
    let discovery = starts_of(&macho_starts(&deltas_then(&fixtures::uleb(u64::MAX))));
    assert_eq!(discovery.starts.len(), 2);
    assert_limitation(
        &discovery,
        &["offset 0x3", "passes the end of the address space"],
    );
}

#[test]
fn function_starts_outside_the_file_are_reported() {
    let mut bytes = macho_starts(&fixtures::function_starts(&[MACHO_TEXT]));
    // LC_FUNCTION_STARTS follows the 152-byte segment command: dataoff.
    let dataoff = 32 + 152 + 8;
    bytes[dataoff..dataoff + 4].copy_from_slice(&0x7000_0000u32.to_le_bytes());
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty());
    assert_limitation(
        &discovery,
        &["`LC_FUNCTION_STARTS` points at", "outside the file"],
    );
}

#[test]
fn macho_eh_frame_and_function_starts_both_count() {
    let eh_frame = fixtures::eh_frame(
        MACHO_EH_FRAME,
        &[(MACHO_TEXT, 0x10), (MACHO_TEXT + 0x20, 8)],
    );
    let starts = fixtures::function_starts(&[MACHO_TEXT, MACHO_TEXT + 0x10]);
    let discovery = starts_of(&fixtures::macho(MACHO_CPU_ARM64, &starts, &eh_frame));
    assert_eq!(
        discovery.starts,
        vec![
            start(MACHO_TEXT, Some(0x10), Source::EhFrame),
            start(MACHO_TEXT, None, Source::FunctionStarts),
            start(MACHO_TEXT + 0x10, None, Source::FunctionStarts),
            start(MACHO_TEXT + 0x20, Some(8), Source::EhFrame),
        ]
    );
}

#[test]
fn tables_together_beyond_the_cap_keep_the_lowest_addresses() {
    let eh_frame = fixtures::eh_frame(MACHO_EH_FRAME, &[(MACHO_TEXT + 0x20, 8), (MACHO_TEXT, 4)]);
    let starts = fixtures::function_starts(&[MACHO_TEXT + 0x8, MACHO_TEXT + 0x10]);
    let bytes = fixtures::macho(MACHO_CPU_ARM64, &starts, &eh_frame);
    let discovery = discover(&parse(&bytes), 3);
    let addresses: Vec<u64> = discovery.starts.iter().map(|start| start.address).collect();
    assert_eq!(addresses, [MACHO_TEXT, MACHO_TEXT + 0x8, MACHO_TEXT + 0x10]);
    assert_limitation(
        &discovery,
        &["the tables together declare 4 function starts; only the 3 at the lowest"],
    );
}

#[test]
fn uleb128_accepts_canonical_numbers_only() {
    for value in [
        0,
        1,
        0x7f,
        0x80,
        0x3fff,
        0x4000,
        u64::from(u32::MAX),
        u64::MAX,
    ] {
        let bytes = fixtures::uleb(value);
        assert_eq!(uleb128(&bytes), Ok((value, bytes.len())), "{value:#x}");
    }
    assert_eq!(uleb128(&[0xe5, 0x8e, 0x26, 0xff]), Ok((624_485, 3)));
    assert_eq!(uleb128(&[]), Err(UlebError::Truncated));
    assert_eq!(uleb128(&[0x80, 0x80]), Err(UlebError::Truncated));
    assert_eq!(uleb128(&[0x80, 0x00]), Err(UlebError::Overlong));
    assert_eq!(uleb128(&[0xff, 0x80, 0x00]), Err(UlebError::Overlong));
    // 2^64: bit 64 in the tenth byte.
    let mut too_big = vec![0x80; 9];
    too_big.push(0x02);
    assert_eq!(uleb128(&too_big), Err(UlebError::Overflow));
    let mut eleven = vec![0x80; 9];
    eleven.extend_from_slice(&[0x81, 0x00]);
    assert_eq!(uleb128(&eleven), Err(UlebError::Overflow));
}

// ----------------------------------------------------------------- .pdata

fn x64_pe(entries: &[Vec<u8>]) -> Vec<u8> {
    let pdata = entries.concat();
    fixtures::pe(PE_MACHINE_AMD64, &pdata, pdata.len() as u32)
}

const T: u32 = PE_TEXT_RVA;

#[test]
fn pdata_x64_entries_are_starts_with_sizes() {
    let discovery = starts_of(&x64_pe(&[
        fixtures::x64_entry(T, T + 0x20, 0x3000),
        fixtures::x64_entry(T + 0x20, T + 0x28, 0x3010),
        fixtures::x64_entry(T + 0x100, T + 0x200, 0x3020),
    ]));
    let base = PE_BASE + u64::from(T);
    assert_eq!(
        discovery.starts,
        vec![
            start(base, Some(0x20), Source::Pdata),
            start(base + 0x20, Some(0x8), Source::Pdata),
            start(base + 0x100, Some(0x100), Source::Pdata),
        ]
    );
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn pdata_drops_bad_entries_and_keeps_the_largest_duplicate() {
    let discovery = starts_of(&x64_pe(&[
        fixtures::x64_entry(T + 0x40, T + 0x48, 0),
        fixtures::x64_entry(T + 0x40, T + 0x60, 0),
        fixtures::x64_entry(T + 0x80, T + 0x80, 0), // empty
        fixtures::x64_entry(T + 0x90, T + 0x88, 0), // reversed
        fixtures::x64_entry(0, 0, 0),               // padding
        fixtures::x64_entry(PE_PDATA_RVA, PE_PDATA_RVA + 4, 0), // not code
        fixtures::x64_entry(T, T + 4, 0),
    ]));
    let base = PE_BASE + u64::from(T);
    assert_eq!(
        discovery.starts,
        vec![
            start(base, Some(4), Source::Pdata),
            start(base + 0x40, Some(0x20), Source::Pdata),
        ]
    );
    assert_limitation(
        &discovery,
        &[
            "2 entries of `.pdata` have an end address not after their begin address",
            "0x18",
        ],
    );
    assert_limitation(
        &discovery,
        &[
            "1 entry of `.pdata` declares a start outside every executable section",
            "0x140002000",
        ],
    );
    assert_eq!(
        discovery.limitations.len(),
        2,
        "{:?}",
        discovery.limitations
    );
}

#[test]
fn pdata_with_a_partial_entry_reads_the_whole_ones() {
    let mut pdata = [
        fixtures::x64_entry(T, T + 0x10, 0),
        fixtures::x64_entry(T + 0x10, T + 0x20, 0),
    ]
    .concat();
    pdata.extend_from_slice(&[1, 2, 3, 4, 5]);
    let discovery = starts_of(&fixtures::pe(PE_MACHINE_AMD64, &pdata, pdata.len() as u32));
    assert_eq!(discovery.starts.len(), 2);
    assert_limitation(
        &discovery,
        &["`.pdata` is 29 bytes, not a whole number of 12-byte entries; the trailing 5 bytes"],
    );
}

#[test]
fn pdata_claiming_more_than_its_section_holds_reads_what_is_there() {
    let pdata = fixtures::x64_entry(T, T + 0x10, 0);
    let discovery = starts_of(&fixtures::pe(PE_MACHINE_AMD64, &pdata, 0x10_0000));
    assert_eq!(discovery.starts.len(), 1);
    assert_limitation(
        &discovery,
        &["claims 1048576 bytes but its section holds only 512"],
    );
}

#[test]
fn pdata_directory_outside_every_section_is_reported() {
    let mut bytes = x64_pe(&[fixtures::x64_entry(T, T + 0x10, 0)]);
    let directory = fixtures::PE_EXCEPTION_DIRECTORY;
    bytes[directory..directory + 4].copy_from_slice(&0x9_0000u32.to_le_bytes());
    let discovery = starts_of(&bytes);
    assert!(discovery.starts.is_empty());
    assert_limitation(
        &discovery,
        &["exception directory (RVA 0x90000", "not inside any section"],
    );
}

#[test]
fn pdata_arm64_sizes_come_from_packed_unwind_data() {
    // Flag 1 with FunctionLength 8 (32 bytes); Flag 2 with 3 (12 bytes);
    // Flag 0 points at .xdata: size unknown.
    let packed = |flag: u32, words: u32| flag | (words << 2) | (0x1f << 13);
    let pdata = [
        fixtures::arm64_entry(T, packed(1, 8)),
        fixtures::arm64_entry(T + 0x20, packed(2, 3)),
        fixtures::arm64_entry(T + 0x40, 0x3000),
    ]
    .concat();
    let discovery = starts_of(&fixtures::pe(PE_MACHINE_ARM64, &pdata, pdata.len() as u32));
    let base = PE_BASE + u64::from(T);
    assert_eq!(
        discovery.starts,
        vec![
            start(base, Some(32), Source::Pdata),
            start(base + 0x20, Some(12), Source::Pdata),
            start(base + 0x40, None, Source::Pdata),
        ]
    );
}

#[test]
fn mingw_pe_eh_fram_is_read_at_image_addresses() {
    let address = PE_BASE + u64::from(PE_PDATA_RVA);
    let text = PE_BASE + u64::from(T);
    let table = fixtures::eh_frame(address, &[(text, 0x10), (text + 0x100, 0x80)]);
    let discovery = starts_of(&fixtures::mingw_pe(&table));
    assert_eq!(
        discovery.starts,
        vec![
            start(text, Some(0x10), Source::EhFrame),
            start(text + 0x100, Some(0x80), Source::EhFrame),
        ]
    );
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

// ----------------------------------------------------------- robustness

/// Every tiny fixture, well formed.
fn tiny_fixtures() -> Vec<Vec<u8>> {
    let eh_frame = fixtures::eh_frame(
        MACHO_EH_FRAME,
        &[(MACHO_TEXT, 0x10), (MACHO_TEXT + 0x20, 8)],
    );
    let starts = fixtures::function_starts(&[MACHO_TEXT, MACHO_TEXT + 0x10, MACHO_TEXT + 0x80]);
    let arm64 = [
        fixtures::arm64_entry(T, 1 | (8 << 2)),
        fixtures::arm64_entry(T + 0x40, 0x3000),
    ]
    .concat();
    vec![
        elf_fdes(&THREE_FDES),
        fixtures::elf_without_sections(&fixtures::eh_frame(ELF_EH_FRAME, &THREE_FDES), |_| {}),
        fixtures::macho(MACHO_CPU_ARM64, &starts, &eh_frame),
        x64_pe(&[
            fixtures::x64_entry(T, T + 0x20, 0),
            fixtures::x64_entry(T + 0x20, T + 0x40, 0),
        ]),
        fixtures::pe(PE_MACHINE_ARM64, &arm64, arm64.len() as u32),
        fixtures::mingw_pe(&fixtures::eh_frame(
            PE_BASE + u64::from(PE_PDATA_RVA),
            &[(PE_BASE + u64::from(T), 0x10)],
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn mutated_tables_never_panic_and_stay_well_formed(
        which in 0usize..6,
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..24),
        truncate in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = tiny_fixtures().swap_remove(which);
        for (index, value) in mutations {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        if let Some(index) = truncate {
            bytes.truncate(index.index(bytes.len()));
        }
        let Ok(file) = object::File::parse(&*bytes) else {
            return Ok(());
        };
        let code = CodeMap::new(&file, usize::MAX);
        for cap in [MAX_PROCEDURES, 2] {
            let discovery = discover(&file, cap);
            assert_well_formed(&discovery, cap);
            for start in &discovery.starts {
                prop_assert!(code.contains(start.address), "{start:?} is not in code");
            }
        }
    }

    /// Arbitrary `LC_FUNCTION_STARTS` bytes: every start found is in code
    /// and at most one start per byte.
    #[test]
    fn random_function_starts_never_panic(table in prop::collection::vec(any::<u8>(), 0..96)) {
        let discovery = starts_of(&macho_starts(&table));
        assert_well_formed(&discovery, MAX_PROCEDURES);
        prop_assert!(discovery.starts.len() <= table.len());
    }

    /// Arbitrary `.pdata` bytes for both entry layouts.
    #[test]
    fn random_pdata_never_panics(
        table in prop::collection::vec(any::<u8>(), 0..200),
        arm64 in any::<bool>(),
    ) {
        let (machine, width) = if arm64 { (PE_MACHINE_ARM64, 8) } else { (PE_MACHINE_AMD64, 12) };
        let discovery = starts_of(&fixtures::pe(machine, &table, table.len() as u32));
        assert_well_formed(&discovery, MAX_PROCEDURES);
        prop_assert!(discovery.starts.len() <= table.len() / width);
    }

    /// Mutations aimed at the table bytes only, where structure matters.
    #[test]
    fn mutated_eh_frame_never_panics(
        mutations in prop::collection::vec((0usize..CIE_SIZE + 3 * 24 + 4, any::<u8>()), 1..12),
    ) {
        let bytes = elf_fdes_edited(&THREE_FDES, |table| {
            for (at, value) in mutations {
                if let Some(byte) = table.get_mut(at) {
                    *byte = value;
                }
            }
        });
        let discovery = starts_of(&bytes);
        assert_well_formed(&discovery, MAX_PROCEDURES);
        prop_assert!(discovery.starts.len() <= THREE_FDES.len());
    }
}

// ------------------------------------------------------ real binaries

/// Reads a fixture and reports `table_starts` with its wall time.
fn timed_starts(path: &Path, bytes: &[u8], what: &str) -> Discovery {
    let file = parse(bytes);
    let started = Instant::now();
    let discovery = table_starts(&file);
    eprintln!(
        "{what} ({}): {} starts in {:?}; limitations: {:?}",
        path.display(),
        discovery.starts.len(),
        started.elapsed(),
        discovery.limitations
    );
    assert_well_formed(&discovery, MAX_PROCEDURES);
    discovery
}

/// `address → size` of one source's starts (size 0 when unknown).
fn sized(discovery: &Discovery, source: Source) -> BTreeMap<u64, u64> {
    discovery
        .starts
        .iter()
        .filter(|start| start.source == source)
        .map(|start| (start.address, start.size.unwrap_or(0)))
        .collect()
}

/// `begin → largest size` of oracle ranges, the dedup rule of `Discovery`.
fn largest(ranges: impl IntoIterator<Item = (u64, u64)>) -> BTreeMap<u64, u64> {
    let mut map = BTreeMap::new();
    for (begin, size) in ranges {
        let entry = map.entry(begin).or_insert(size);
        *entry = (*entry).max(size);
    }
    map
}

/// `(pc_begin, pc_range)` of every FDE `readelf --debug-dump=frames` lists
/// (`... FDE cie=00000000 pc=000000000001d020..000000000001ed60`).
fn readelf_fdes(path: &Path) -> Vec<(u64, u64)> {
    let path = path.to_str().expect("UTF-8 path");
    run("readelf", &["-W", "--debug-dump=frames", path])
        .lines()
        .filter(|line| line.contains(" FDE "))
        .map(|line| {
            let range = line
                .split("pc=")
                .nth(1)
                .unwrap_or_else(|| panic!("no pc= in {line:?}"));
            let (begin, end) = range
                .trim()
                .split_once("..")
                .unwrap_or_else(|| panic!("no range in {line:?}"));
            let begin = u64::from_str_radix(begin, 16).expect("hex pc begin");
            let end = u64::from_str_radix(end, 16).expect("hex pc end");
            (begin, end - begin)
        })
        .collect()
}

#[test]
fn watcher_linux_eh_frame_matches_readelf() {
    let Some(path) = fixture("watcher-linux-x64.node") else {
        return;
    };
    if !tool_available("readelf") {
        return skip_or_fail("readelf is not installed");
    }
    let bytes = std::fs::read(&path).expect("read fixture");
    let discovery = timed_starts(&path, &bytes, "watcher-linux-x64 .eh_frame");
    let fdes = readelf_fdes(&path);
    assert_eq!(fdes.len(), 622, "readelf's FDE count changed");
    let oracle = largest(fdes);
    let ours = sized(&discovery, Source::EhFrame);
    assert_eq!(ours.len(), oracle.len(), "distinct FDE starts");
    assert_eq!(ours, oracle);
    assert!(
        discovery.limitations.is_empty(),
        "{:?}",
        discovery.limitations
    );
}

/// Start addresses `llvm-objdump --macho --function-starts` prints.
fn objdump_function_starts(path: &Path, arch: Option<&str>) -> BTreeSet<u64> {
    let path = path.to_str().expect("UTF-8 path");
    let arch = arch.map(|arch| format!("--arch={arch}"));
    let mut args = vec!["--macho", "--function-starts"];
    args.extend(arch.as_deref());
    args.push(path);
    run("llvm-objdump", &args)
        .lines()
        .filter_map(|line| u64::from_str_radix(line.trim(), 16).ok())
        .collect()
}

fn assert_function_starts_match(path: &Path, bytes: &[u8], arch: Option<&str>, expected: usize) {
    let what = format!("{} {}", path.display(), arch.unwrap_or("thin"));
    let discovery = timed_starts(path, bytes, &what);
    let oracle = objdump_function_starts(path, arch);
    assert_eq!(
        oracle.len(),
        expected,
        "{what}: llvm-objdump's count changed"
    );
    let ours: BTreeSet<u64> = sized(&discovery, Source::FunctionStarts)
        .into_keys()
        .collect();
    assert_eq!(ours, oracle, "{what}");
    assert!(
        discovery.limitations.is_empty(),
        "{what}: {:?}",
        discovery.limitations
    );
}

#[test]
fn watcher_darwin_function_starts_match_llvm_objdump() {
    let Some(path) = fixture("watcher-darwin-arm64.node") else {
        return;
    };
    if !tool_available("llvm-objdump") {
        return skip_or_fail("llvm-objdump is not installed");
    }
    let bytes = std::fs::read(&path).expect("read fixture");
    assert_function_starts_match(&path, &bytes, None, 788);
}

#[test]
fn universal_slices_function_starts_match_llvm_objdump() {
    if !tool_available("llvm-objdump") {
        return skip_or_fail("llvm-objdump is not installed");
    }
    for name in ["fsevents.node", "markupsafe-speedups-universal2.so"] {
        let Some(path) = fixture(name) else {
            return;
        };
        let bytes = std::fs::read(&path).expect("read fixture");
        let fat = object::read::macho::MachOFatFile32::parse(&*bytes).expect("fat header");
        for arch in fat.arches() {
            let slice = object::read::macho::FatArch::data(arch, &*bytes).expect("slice");
            let name = match object::read::macho::FatArch::architecture(arch) {
                object::Architecture::X86_64 => "x86_64",
                object::Architecture::Aarch64 => "arm64",
                other => panic!("unexpected slice {other:?}"),
            };
            let expected = objdump_function_starts(&path, Some(name)).len();
            assert!(expected > 0, "{name}: llvm-objdump lists no starts");
            assert_function_starts_match(&path, slice, Some(name), expected);
        }
    }
}

/// `(begin, end - begin)` of every entry in GNU `objdump -p`'s "Function
/// Table (interpreted .pdata section contents)", as absolute addresses.
fn objdump_pdata(path: &Path) -> Vec<(u64, u64)> {
    let path = path.to_str().expect("UTF-8 path");
    let text = run("objdump", &["-p", path]);
    let table = text
        .split("The Function Table (interpreted .pdata section contents)")
        .nth(1)
        .expect("objdump prints the function table");
    table
        .lines()
        .skip(2)
        .take_while(|line| !line.trim().is_empty())
        // Go's unsorted table earns "has smaller begin address as
        // predecessor" warning lines between the entries.
        .filter(|line| {
            line.split_whitespace()
                .next()
                .is_some_and(|vma| vma.ends_with(':'))
        })
        .map(|line| {
            let fields: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|field| u64::from_str_radix(field, 16).expect("hex field"))
                .collect();
            let [begin, end, _unwind] = fields[..] else {
                panic!("unexpected function table line {line:?}");
            };
            (begin, end - begin)
        })
        .collect()
}

fn assert_pdata_matches(name: &str, entries: usize) {
    let Some(path) = fixture(name) else {
        return;
    };
    if !tool_available("objdump") {
        return skip_or_fail("GNU objdump is not installed");
    }
    let bytes = std::fs::read(&path).expect("read fixture");
    let discovery = timed_starts(&path, &bytes, name);
    let oracle = objdump_pdata(&path);
    assert_eq!(
        oracle.len(),
        entries,
        "{name}: objdump's entry count changed"
    );
    let oracle = largest(oracle);
    let ours = sized(&discovery, Source::Pdata);
    assert_eq!(ours.len(), oracle.len(), "{name}: distinct starts");
    assert_eq!(ours, oracle, "{name}");
    assert!(
        discovery.limitations.is_empty(),
        "{name}: {:?}",
        discovery.limitations
    );
}

#[test]
fn watcher_win32_pdata_matches_objdump() {
    assert_pdata_matches("watcher-win32-x64.node", 1695);
}

#[test]
fn esbuild_win32_pdata_matches_objdump() {
    assert_pdata_matches("esbuild-win32-x64.exe", 7949);
}

#[test]
fn go_elf_without_tables_reports_it() {
    let Some(path) = fixture("esbuild-linux-x64") else {
        return;
    };
    let bytes = std::fs::read(&path).expect("read fixture");
    let discovery = timed_starts(&path, &bytes, "esbuild-linux-x64");
    assert!(discovery.starts.is_empty());
    assert_limitation(&discovery, &["has no `.eh_frame`"]);
}

/// A C file with `count` distinct non-inlinable functions, half of them
/// `static`, all reachable through a table so none is dropped.
fn c_source(count: usize) -> String {
    let mut source = String::from("#include <stdio.h>\n");
    for index in 0..count {
        let linkage = if index % 2 == 0 { "static " } else { "" };
        source.push_str(&format!(
            "__attribute__((noinline)) {linkage}int f{index}(int x) {{\n\
             \x20   if (x > {index}) return printf(\"%d\\n\", x * {index}) + x;\n\
             \x20   return x ^ {index};\n}}\n"
        ));
    }
    source.push_str("static int (*const table[])(int) = {");
    for index in 0..count {
        source.push_str(&format!("f{index}, "));
    }
    source.push_str(
        "};\nint main(int argc, char **argv) {\n    int sum = 0;\n    (void)argv;\n\
         \x20   for (unsigned i = 0; i < sizeof table / sizeof *table; i++) sum += table[i](argc);\n\
         \x20   return sum & 1;\n}\n",
    );
    source
}

/// `(address, size, name)` of the defined `FUNC` symbols `readelf -sW`
/// lists (both tables; duplicates removed). The symbol type matters: nm's
/// `W` class also covers weak *data* such as glibc's `data_start`.
fn elf_functions(path: &Path) -> BTreeSet<(u64, u64, String)> {
    let path = path.to_str().expect("UTF-8 path");
    run("readelf", &["-sW", path])
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, address, size, kind, _, _, index, name, ..] = fields.as_slice() else {
                return None;
            };
            if *kind != "FUNC" || *index == "UND" {
                return None;
            }
            let address = u64::from_str_radix(address, 16).ok()?;
            let size = match size.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => size.parse().ok()?,
            };
            let name = name.split('@').next().unwrap_or(name).to_owned();
            Some((address, size, name))
        })
        .collect()
}

#[test]
fn stripped_c_program_keeps_its_function_starts() {
    for tool in ["cc", "strip", "readelf"] {
        if !tool_available(tool) {
            return skip_or_fail(&format!("{tool} is not installed"));
        }
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let source = dir.path().join("many.c");
    std::fs::write(&source, c_source(100)).expect("write C source");
    let binary = dir.path().join("many");
    let (source, binary_text) = (
        source.to_str().expect("UTF-8 path"),
        binary.to_str().expect("UTF-8 path"),
    );
    run("cc", &["-O1", "-o", binary_text, source]);
    let symbols = elf_functions(&binary);
    let before = table_starts(&parse(&std::fs::read(&binary).expect("read binary")));
    run("strip", &["--strip-all", binary_text]);
    let bytes = std::fs::read(&binary).expect("read stripped binary");
    assert!(
        parse(&bytes).symbols().next().is_none(),
        "strip left symbols"
    );
    let after = timed_starts(&binary, &bytes, "stripped cc -O1 program");
    assert_eq!(after.starts, before.starts, "strip changed the tables");

    let found: BTreeMap<u64, Option<u64>> = after
        .starts
        .iter()
        .map(|start| (start.address, start.size))
        .collect();
    let missing: Vec<&String> = symbols
        .iter()
        .filter(|(address, _, _)| !found.contains_key(address))
        .map(|(_, _, name)| name)
        .collect();
    let hits = symbols.len() - missing.len();
    eprintln!(
        "stripped cc -O1 program: {hits} of {} FUNC symbols found ({:.1}%); missing {missing:?}",
        symbols.len(),
        100.0 * hits as f64 / symbols.len() as f64
    );
    assert!(
        symbols.len() > 100,
        "readelf listed only {} functions",
        symbols.len()
    );
    assert!(
        hits * 10 >= symbols.len() * 9,
        "only {hits} of {} found",
        symbols.len()
    );
    // Every function of our own source is found with its exact size.
    for (address, size, name) in &symbols {
        let ours = name == "main"
            || name
                .strip_prefix('f')
                .is_some_and(|n| n.parse::<u32>().is_ok());
        if ours {
            assert_eq!(
                found.get(address),
                Some(&Some(*size)),
                "{name} at {address:#x}"
            );
        }
    }
}

/// `.init_array`/`.fini_array` of a real position-independent addon: every
/// slot is zero in the file and set by an `R_X86_64_RELATIVE` relocation,
/// whose addend `readelf -r` prints; those are exactly the starts found.
#[test]
fn init_and_fini_arrays_match_readelf_relocations() {
    let Some(path) = fixture("watcher-linux-x64.node") else {
        return;
    };
    if !tool_available("readelf") {
        return skip_or_fail("readelf is not installed");
    }
    let sections = run("readelf", &["-SW", path.to_str().expect("utf-8 path")]);
    let ranges: Vec<(u64, u64)> = sections
        .lines()
        .filter(|line| line.contains("INIT_ARRAY") || line.contains("FINI_ARRAY"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let at = fields.iter().position(|f| f.ends_with("_ARRAY"))?;
            let address = u64::from_str_radix(fields.get(at + 1)?, 16).ok()?;
            let size = u64::from_str_radix(fields.get(at + 3)?, 16).ok()?;
            Some((address, address + size))
        })
        .collect();
    assert_eq!(ranges.len(), 2, "{sections}");
    let relocations = run("readelf", &["-rW", path.to_str().expect("utf-8 path")]);
    let expected: BTreeSet<u64> = relocations
        .lines()
        .filter(|line| line.contains("R_X86_64_RELATIVE"))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let slot = u64::from_str_radix(fields.first()?, 16).ok()?;
            let value = u64::from_str_radix(fields.last()?, 16).ok()?;
            ranges
                .iter()
                .any(|&(start, end)| (start..end).contains(&slot))
                .then_some(value)
        })
        .collect();
    assert_eq!(expected.len(), 3, "two constructors and one destructor");
    let data = std::fs::read(&path).expect("read the fixture");
    let found: BTreeSet<u64> = table_starts(&parse(&data))
        .starts
        .iter()
        .filter(|start| start.source == Source::InitArray)
        .map(|start| start.address)
        .collect();
    assert_eq!(found, expected);
}
