//! Tests of the string table, split by what they exercise: `scanner.rs`
//! (the byte scanners on hand-written bytes), `documents.rs` (whole
//! documents, corrupted headers, caps), `properties.rs` (reference
//! decoders and property tests) and `oracles.rs` (LLVM and GNU tools on
//! compiled and pinned binaries). This file holds the support they share.

mod documents;
mod oracles;
mod properties;
mod scanner;

use super::collector::Found;
use super::printable::printable_slow;
use super::*;
use crate::providers::native::fixtures::temp_file;

// ------------------------------------------------------------ support

/// Scans `bytes` as one section at address 0 with the real caps.
fn scan(bytes: &[u8]) -> Vec<Found> {
    scan_limited(bytes, LIMITS)
        .strings
        .into_iter()
        .map(|string| Found {
            offset: string.address as usize,
            encoding: string.encoding,
            value: string.value,
            truncated: string.truncated,
        })
        .collect()
}

fn scan_limited(bytes: &[u8], limits: Limits) -> StringTable {
    let mut collector = Collector::new(limits);
    let _ = scan_section(bytes, 0, "test", &mut collector);
    collector.finish()
}

fn found(offset: usize, encoding: StringEncoding, value: &str) -> Found {
    Found {
        offset,
        encoding,
        value: value.to_owned(),
        truncated: false,
    }
}

fn ascii(offset: usize, value: &str) -> Found {
    found(offset, StringEncoding::Ascii, value)
}

fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// Invariants every table keeps, whatever the input.
fn assert_well_formed(table: &StringTable) {
    assert!(
        table
            .strings
            .windows(2)
            .all(|pair| pair[0].address <= pair[1].address),
        "not sorted by address"
    );
    for string in &table.strings {
        let chars = string.value.chars().count();
        assert!(
            (MIN_STRING_CHARS..=MAX_STRING_CHARS).contains(&chars),
            "{string:?}"
        );
        assert!(!string.truncated || chars == MAX_STRING_CHARS, "{string:?}");
        // Line breaks appear only between the lines of joined text.
        assert!(
            string
                .value
                .chars()
                .all(|c| printable_slow(c) || matches!(c, '\n' | '\r')),
            "{string:?}"
        );
        assert_eq!(
            string.value.is_ascii(),
            string.encoding == StringEncoding::Ascii
                || (string.encoding == StringEncoding::Utf16Le && string.value.is_ascii()),
            "{string:?}"
        );
    }
    assert_eq!(table.truncated, {
        table
            .limitations
            .iter()
            .any(|line| line.contains("reached its cap"))
    });
}
