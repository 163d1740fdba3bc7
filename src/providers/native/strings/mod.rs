//! Printable strings in a document's data sections: the table behind
//! `search_strings`.
//!
//! **What is scanned.** Every section that `object` classifies as data:
//! `Data`, `ReadOnlyData`, `ReadOnlyString`, `ReadOnlyDataWithRel` and
//! `OtherString` (ELF `.rodata`/`.data`, PE `.rdata`/`.data`/`.rsrc`, Mach-O
//! `__cstring`, `__const`, `__cfstring`, …). Code, debug, metadata (symbol
//! and string tables) and uninitialized sections are not. Section bytes are
//! borrowed from the memory map, never copied; a section whose file range
//! lies outside the file, or that is compressed, is skipped and named in
//! [`StringTable::limitations`].
//!
//! **What a string is.** A run of at least [`MIN_STRING_CHARS`] printable
//! characters, ended by NUL, by any byte (or code unit) that does not
//! continue the run, or by the end of the section. A character is printable
//! when it is a tab or not [`is_hidden`] (so controls, format characters
//! such as RLO and zero-width spaces, private-use, unassigned and
//! default-ignorable code points all end a run). Strings of one section
//! separated only by a line break (`\n`, `\r\n` or `\r`) are then joined
//! into one multi-line string while it stays within [`MAX_STRING_CHARS`],
//! so a usage message is one string. Two decodings are tried:
//!
//! * UTF-8: ASCII bytes and valid multi-byte sequences (no overlongs, no
//!   surrogates). A run whose characters are all ASCII is [`StringEncoding::Ascii`],
//!   otherwise [`StringEncoding::Utf8`].
//! * UTF-16LE: 2-byte code units at any byte offset (even or odd) whose
//!   characters are printable and in Latin-1 (U+0000–U+00FF): the
//!   convention of `strings -el`, widened from ASCII to Latin-1. Other BMP
//!   characters are not accepted, because about 85% of all 16-bit values are
//!   printable BMP characters: on the pinned esbuild PE (a Go binary without
//!   such text) accepting them, even with a one-script-block-per-string
//!   rule, gave 49,663 UTF-16LE "strings", nearly all 16-bit table values
//!   (`"ȄȃȃȄ"`, `"ЂЂЂЂ"`, `"㏀=㏀="`); the strictest script rule tried still
//!   left about 4,400 in `.rdata` alone. Latin-1 only gives 210. UTF-16LE
//!   text in Cyrillic, Greek, CJK, … is therefore not found. Bytes of a
//!   UTF-8 string are never part of a UTF-16LE one (`"abc\0"` followed by
//!   UTF-16LE `"xyz"` does not become `"cxyz"`).
//!
//! The address of a string is the section address plus the string's offset
//! in the section. Each value keeps at most [`MAX_STRING_CHARS`] characters
//! (the rest of that run is skipped and the string is `truncated`). The
//! table stops at [`MAX_STRINGS`] strings or [`MAX_TEXT_BYTES`] of text
//! (`truncated`, with a limitation naming the cap), and scanning stops when
//! overlapping sections would make it read more than twice the document's
//! size (a limitation, not `truncated`).
//!
//! **Cost.** Linear, no backtracking: one sweep for UTF-8 and one for
//! UTF-16LE at each parity, each a tight loop over table lookups; short runs
//! allocate nothing. Printability of BMP characters (UTF-8) is looked up in
//! an 8 KiB bitmap built once.
//!
//! The code is split by concern: this file holds the public types, the
//! caps and [`string_table`] (which sections are scanned); [`collector`]
//! keeps found strings under the caps; [`printable`] holds the character
//! tables both decodings share; [`utf8`] and [`utf16le`] are the two
//! scanners.
//!
//! [`is_hidden`]: crate::ground::hidden::is_hidden

mod collector;
mod printable;
#[cfg(test)]
mod tests;
mod utf16le;
mod utf8;

use object::{CompressionFormat, Object, ObjectSection, SectionKind};

use crate::providers::format_address;
use collector::{Collector, scan_section};

/// Shortest run reported, in characters.
pub const MIN_STRING_CHARS: usize = 4;
/// Longest value kept, in characters; longer runs keep this prefix.
pub const MAX_STRING_CHARS: usize = 4096;
/// At most this many strings per table.
pub const MAX_STRINGS: usize = 1_000_000;
/// At most this many bytes of (UTF-8) text per table.
pub const MAX_TEXT_BYTES: usize = 256 << 20;

/// How the bytes of a [`FoundString`] encode its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum StringEncoding {
    /// UTF-8 bytes that are all ASCII.
    #[serde(rename = "ascii")]
    Ascii,
    /// UTF-8 with at least one multi-byte character.
    #[serde(rename = "utf-8")]
    Utf8,
    /// UTF-16 little-endian code units, Latin-1 characters only.
    #[serde(rename = "utf-16le")]
    Utf16Le,
}

impl StringEncoding {
    pub fn as_str(self) -> &'static str {
        match self {
            StringEncoding::Ascii => "ascii",
            StringEncoding::Utf8 => "utf-8",
            StringEncoding::Utf16Le => "utf-16le",
        }
    }
}

/// One string found in a data section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundString {
    /// Virtual address of the first byte (section address + offset).
    pub address: u64,
    pub encoding: StringEncoding,
    /// The decoded text (at most [`MAX_STRING_CHARS`] characters).
    pub value: String,
    /// Section name; Mach-O names are `segment,section` (`__TEXT,__cstring`).
    pub section: String,
    /// The run in the file continues past `value`.
    pub truncated: bool,
}

impl FoundString {
    /// Bytes `value` occupies in the file (UTF-16LE: two per character).
    pub fn byte_len(&self) -> u64 {
        match self.encoding {
            StringEncoding::Ascii | StringEncoding::Utf8 => self.value.len() as u64,
            StringEncoding::Utf16Le => self.value.chars().count() as u64 * 2,
        }
    }
}

impl StringTable {
    /// The string whose bytes cover `address`, if any.
    pub fn covering(&self, address: u64) -> Option<&FoundString> {
        let after = self.strings.partition_point(|s| s.address <= address);
        let found = self.strings.get(after.checked_sub(1)?)?;
        (address - found.address < found.byte_len()).then_some(found)
    }
}

/// All strings of one document, sorted by address.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StringTable {
    pub strings: Vec<FoundString>,
    /// A cap ([`MAX_STRINGS`], [`MAX_TEXT_BYTES`]) stopped the scan; a
    /// limitation says which.
    pub truncated: bool,
    /// Sentences naming what was not scanned and why.
    pub limitations: Vec<String>,
}

/// The caps of one table (parameters so that tests can use small ones).
#[derive(Debug, Clone, Copy)]
struct Limits {
    max_strings: usize,
    max_text_bytes: usize,
}

const LIMITS: Limits = Limits {
    max_strings: MAX_STRINGS,
    max_text_bytes: MAX_TEXT_BYTES,
};

/// At most this many limitation sentences; the rest are counted in one more.
const MAX_LIMITATIONS: usize = 32;

/// The string table of a parsed document of `document_size` bytes.
///
/// Sections of a well-formed file do not overlap in the file, so their data
/// adds up to less than the document. A hostile file can point thousands of
/// section headers at the same bytes; scanning stops once the scanned bytes
/// would exceed twice the document size, which keeps the cost linear in it.
pub(super) fn string_table(file: &object::File<'_>, document_size: usize) -> StringTable {
    let mut collector = Collector::new(LIMITS);
    let budget = document_size.saturating_mul(2);
    let mut scanned_bytes = 0usize;
    let mut scanned = 0usize;
    for section in file.sections() {
        if !is_data(section.kind()) {
            continue;
        }
        let name = section_name(&section);
        let address = section.address();
        let at = format_address(address);
        match section.compressed_file_range() {
            Ok(range) if range.format == CompressionFormat::None => {}
            Ok(range) => {
                collector.limitation(format!(
                    "section {name} at {at} was skipped: it is compressed ({:?}) and \
                     sections are not decompressed",
                    range.format
                ));
                continue;
            }
            Err(error) => {
                collector.limitation(format!(
                    "section {name} at {at} was skipped: its compression header is \
                     unreadable ({error})"
                ));
                continue;
            }
        }
        let bytes = match section.data() {
            Ok(bytes) => bytes,
            Err(error) => {
                collector.limitation(format!(
                    "section {name} at {at} was skipped: its file range is invalid ({error})"
                ));
                continue;
            }
        };
        scanned_bytes = scanned_bytes.saturating_add(bytes.len());
        if scanned_bytes > budget {
            collector.limitation(format!(
                "scanning stopped at section {name} at {at}: the data sections overlap, \
                 and scanning it would take the bytes scanned past twice the document \
                 size ({budget} bytes); it and any later sections were not scanned"
            ));
            break;
        }
        scanned += 1;
        if scan_section(bytes, address, &name, &mut collector).is_break() {
            break;
        }
    }
    if scanned == 0 && !collector.table.truncated {
        collector.limitation(
            "no data section was scanned: the document has none that rea could read \
             (no section table, or only code, debug and uninitialized sections)"
                .to_owned(),
        );
    }
    collector.finish()
}

fn is_data(kind: SectionKind) -> bool {
    matches!(
        kind,
        SectionKind::Data
            | SectionKind::ReadOnlyData
            | SectionKind::ReadOnlyString
            | SectionKind::ReadOnlyDataWithRel
            | SectionKind::OtherString
    )
}

fn section_name(section: &object::Section<'_, '_>) -> String {
    let name = match section.name_bytes() {
        Ok(name) => String::from_utf8_lossy(name).into_owned(),
        Err(_) => format!("#{}", section.index().0),
    };
    match section.segment_name_bytes() {
        Ok(Some(segment)) if !segment.is_empty() => {
            format!("{},{name}", String::from_utf8_lossy(segment))
        }
        _ => name,
    }
}
