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
//! default-ignorable code points all end a run). Two decodings are tried:
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

use std::ops::{ControlFlow, Range};
use std::sync::LazyLock;

use object::{CompressionFormat, Object, ObjectSection, SectionKind};

use crate::catalog::hidden::is_hidden;
use crate::providers::format_address;

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

/// Accumulates strings under the caps.
struct Collector {
    limits: Limits,
    table: StringTable,
    text_bytes: usize,
    /// Limitations past [`MAX_LIMITATIONS`], reported as a count.
    omitted_limitations: usize,
}

impl Collector {
    fn new(limits: Limits) -> Collector {
        Collector {
            limits,
            table: StringTable::default(),
            text_bytes: 0,
            omitted_limitations: 0,
        }
    }

    fn limitation(&mut self, sentence: String) {
        self.omitted_limitations += 1;
        if self.table.limitations.len() < MAX_LIMITATIONS {
            self.omitted_limitations -= 1;
            self.table.limitations.push(sentence);
        }
    }

    fn push(&mut self, section: &str, address: u64, found: Found) -> ControlFlow<()> {
        let cap = if self.table.strings.len() >= self.limits.max_strings {
            Some(format!("{} strings", self.limits.max_strings))
        } else if self.text_bytes.saturating_add(found.value.len()) > self.limits.max_text_bytes {
            Some(format!("{} bytes of text", self.limits.max_text_bytes))
        } else {
            None
        };
        if let Some(cap) = cap {
            self.table.truncated = true;
            // Not subject to MAX_LIMITATIONS: there is at most one.
            self.table.limitations.push(format!(
                "the table reached its cap of {cap} while scanning section {section}: \
                 the rest of that section and any later sections were not scanned"
            ));
            return ControlFlow::Break(());
        }
        self.text_bytes += found.value.len();
        self.table.strings.push(FoundString {
            address: address.wrapping_add(found.offset as u64),
            encoding: found.encoding,
            value: found.value,
            section: section.to_owned(),
            truncated: found.truncated,
        });
        ControlFlow::Continue(())
    }

    fn finish(mut self) -> StringTable {
        if self.omitted_limitations > 0 {
            self.table.limitations.push(format!(
                "{} more limitations like the ones above are not listed",
                self.omitted_limitations
            ));
        }
        self.table.strings.sort_by_key(|string| string.address);
        self.table
    }
}

/// A string as the scanner reports it: offset within the scanned bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    offset: usize,
    encoding: StringEncoding,
    value: String,
    truncated: bool,
}

/// Scans one section's bytes into `collector`; `Break` once a cap is hit.
fn scan_section(
    bytes: &[u8],
    address: u64,
    section: &str,
    collector: &mut Collector,
) -> ControlFlow<()> {
    let mut emit = |found| collector.push(section, address, found);
    let mut utf8_runs = Vec::new();
    scan_utf8(bytes, &mut utf8_runs, &mut emit)?;
    scan_utf16le(bytes, 0, &utf8_runs, &mut emit)?;
    scan_utf16le(bytes, 1, &utf8_runs, &mut emit)
}

// ------------------------------------------------------------------ printable

/// Printable characters of Latin-1 (as bytes): tab, U+0020–U+007E and
/// U+00A0–U+00FF except the soft hyphen U+00AD (`printable_slow` on
/// U+0000–U+00FF, pinned by a test).
static LATIN1: LazyLock<[bool; 256]> = LazyLock::new(|| {
    let mut table = [false; 256];
    for (byte, slot) in (0u8..=255).zip(table.iter_mut()) {
        *slot = printable_slow(char::from(byte));
    }
    table
});

/// One bit per BMP code point: set when the character is printable.
static PRINTABLE_BMP: LazyLock<Box<[u64; 1024]>> = LazyLock::new(|| {
    let mut bits = Box::new([0u64; 1024]);
    for (word_index, word) in bits.iter_mut().enumerate() {
        for bit in 0..64u32 {
            let unit = ((word_index as u32) << 6) | bit;
            if char::from_u32(unit).is_some_and(printable_slow) {
                *word |= 1 << bit;
            }
        }
    }
    bits
});

fn printable_slow(c: char) -> bool {
    c == '\t' || !is_hidden(c)
}

/// Lookup tables of the UTF-8 sweep, resolved once per section.
struct Utf8Tables<'a> {
    /// Printable ASCII bytes (tab, 0x20–0x7e).
    ascii: [bool; 256],
    bmp: &'a [u64; 1024],
}

impl Utf8Tables<'_> {
    fn new() -> Utf8Tables<'static> {
        let mut ascii = *LATIN1;
        ascii[0x80..].fill(false);
        Utf8Tables {
            ascii,
            bmp: &PRINTABLE_BMP,
        }
    }

    fn printable(&self, code: u32) -> bool {
        match u16::try_from(code) {
            Ok(unit) => self
                .bmp
                .get(usize::from(unit >> 6))
                .is_some_and(|word| word & (1 << (unit & 63)) != 0),
            Err(_) => char::from_u32(code).is_some_and(printable_slow),
        }
    }

    /// Width of the printable UTF-8 character at `at`; 0 when the bytes
    /// there are not one (non-printable, invalid, overlong, surrogate, above
    /// U+10FFFF or cut off). Decoded by hand: `str::from_utf8` per character
    /// costs several times more.
    #[inline]
    fn width(&self, bytes: &[u8], at: usize) -> usize {
        let Some(&lead) = bytes.get(at) else {
            return 0;
        };
        if lead < 0x80 {
            return usize::from(self.ascii[usize::from(lead)]);
        }
        let continuation = |index: usize| {
            bytes
                .get(at + index)
                .filter(|&&byte| byte & 0xc0 == 0x80)
                .map(|&byte| u32::from(byte & 0x3f))
        };
        let (code, width) = match lead {
            0xc2..=0xdf => {
                let Some(b1) = continuation(1) else {
                    return 0;
                };
                ((u32::from(lead & 0x1f) << 6) | b1, 2)
            }
            0xe0..=0xef => {
                let (Some(b1), Some(b2)) = (continuation(1), continuation(2)) else {
                    return 0;
                };
                let code = (u32::from(lead & 0x0f) << 12) | (b1 << 6) | b2;
                if code < 0x800 || (0xd800..=0xdfff).contains(&code) {
                    return 0;
                }
                (code, 3)
            }
            0xf0..=0xf4 => {
                let (Some(b1), Some(b2), Some(b3)) =
                    (continuation(1), continuation(2), continuation(3))
                else {
                    return 0;
                };
                let code = (u32::from(lead & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3;
                if !(0x1_0000..=0x10_ffff).contains(&code) {
                    return 0;
                }
                (code, 4)
            }
            _ => return 0,
        };
        if self.printable(code) { width } else { 0 }
    }
}

// ---------------------------------------------------------------------- UTF-8

/// Finds UTF-8 (and ASCII) strings; records the byte range of each whole
/// run (truncated or not) in `runs`, in increasing order.
fn scan_utf8(
    bytes: &[u8],
    runs: &mut Vec<Range<usize>>,
    emit: &mut impl FnMut(Found) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let tables = Utf8Tables::new();
    let ascii = &tables.ascii;
    // Bytes that may start a character: printable ASCII and lead bytes.
    let mut may_start = tables.ascii;
    may_start[0xc2..=0xf4].fill(true);
    let printable_ascii_end = |mut at: usize| {
        while bytes.get(at).is_some_and(|&byte| ascii[usize::from(byte)]) {
            at += 1;
        }
        at
    };
    // Bytes that occur in no printable character: controls, DEL and bytes
    // that never occur in UTF-8.
    let mut impossible = [true; 256];
    for (byte, slot) in impossible.iter_mut().enumerate() {
        *slot = !(ascii[byte] || (0x80..=0xbf).contains(&byte) || may_start[byte]);
    }
    let mut at = 0;
    while at < bytes.len() {
        // A reported run starting in at..at + 4 spans at least 4 bytes, so
        // it holds byte at + 3; when that byte is impossible, skip all four.
        // (`at` never points inside a character here: it follows the end of
        // a run, an impossible byte, or a byte that starts no character.)
        while bytes
            .get(at + MIN_STRING_CHARS - 1)
            .is_some_and(|&byte| impossible[usize::from(byte)])
        {
            at += MIN_STRING_CHARS;
        }
        while bytes
            .get(at)
            .is_some_and(|&byte| !may_start[usize::from(byte)])
        {
            at += 1;
        }
        let start = at;
        let mut chars = 0usize;
        let mut cap_end = 0;
        loop {
            // Printable ASCII, the common case, without the UTF-8 decoder.
            let sprint_end = printable_ascii_end(at);
            let sprint = sprint_end - at;
            if chars < MAX_STRING_CHARS && chars + sprint >= MAX_STRING_CHARS {
                cap_end = at + (MAX_STRING_CHARS - chars);
            }
            chars += sprint;
            at = sprint_end;
            let width = tables.width(bytes, at);
            if width == 0 {
                break;
            }
            chars += 1;
            at += width;
            if chars == MAX_STRING_CHARS {
                cap_end = at;
            }
        }
        if at == start {
            at += 1;
            continue;
        }
        if chars < MIN_STRING_CHARS {
            continue;
        }
        runs.push(start..at);
        let truncated = chars > MAX_STRING_CHARS;
        let end = if truncated { cap_end } else { at };
        // Validated character by character, so this cannot fail; should it
        // ever, the run is dropped rather than repaired.
        let Some(value) = bytes
            .get(start..end)
            .and_then(|slice| std::str::from_utf8(slice).ok())
        else {
            continue;
        };
        emit(Found {
            offset: start,
            encoding: if value.is_ascii() {
                StringEncoding::Ascii
            } else {
                StringEncoding::Utf8
            },
            value: value.to_owned(),
            truncated,
        })?;
    }
    ControlFlow::Continue(())
}

// ------------------------------------------------------------------- UTF-16LE

/// Finds UTF-16LE strings of printable Latin-1 characters whose code units
/// start at offsets of the given parity (0 or 1). A code unit whose first
/// byte ends a UTF-8 run in `utf8_runs` (sorted by end) is not used, so that
/// the last letter of `"abc\0"` does not start a UTF-16LE string `"c"…`.
fn scan_utf16le(
    bytes: &[u8],
    parity: usize,
    utf8_runs: &[Range<usize>],
    emit: &mut impl FnMut(Found) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let latin1: &[bool; 256] = &LATIN1;
    let (pairs, _) = bytes.get(parity..).unwrap_or_default().as_chunks::<2>();
    // `&`, not `&&`: branch-free, which matters on binary data.
    let latin = |pair: &[u8; 2]| (pair[1] == 0) & latin1[usize::from(pair[0])];
    let is_latin = |index: usize| pairs.get(index).is_some_and(latin);
    let offset = |index: usize| parity + 2 * index;
    // Unit `index - 1`, if any, is not Latin-1. A run of at least 4 units
    // starting in index..index + 4 holds unit index + 3, so only that unit
    // is probed; on binary data most probes fail and skip four units.
    let mut index = 0;
    while index + MIN_STRING_CHARS <= pairs.len() {
        let probe = index + MIN_STRING_CHARS - 1;
        if !is_latin(probe) {
            index = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > index && is_latin(start - 1) {
            start -= 1;
        }
        let end = pairs
            .get(probe..)
            .and_then(|rest| rest.iter().position(|pair| !latin(pair)))
            .map_or(pairs.len(), |length| probe + length);
        index = end + 1;
        // Only the first unit can overlap a UTF-8 run: every later unit is
        // preceded by the NUL of the one before, and a UTF-8 run holding
        // just that one byte is too short to be reported.
        if utf8_runs
            .binary_search_by_key(&(offset(start) + 1), |run| run.end)
            .is_ok()
        {
            start += 1;
        }
        let length = end - start;
        if length < MIN_STRING_CHARS {
            continue;
        }
        let kept = length.min(MAX_STRING_CHARS);
        let value: String = pairs
            .get(start..start + kept)
            .unwrap_or_default()
            .iter()
            .map(|pair| char::from(pair[0]))
            .collect();
        emit(Found {
            offset: offset(start),
            encoding: StringEncoding::Utf16Le,
            value,
            truncated: length > MAX_STRING_CHARS,
        })?;
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::providers::ProviderError;
    use crate::providers::native::fixtures::{fixture, run, skip_or_fail, tool_available};
    use crate::providers::native::{NativeImage, fixtures};

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
            assert!(string.value.chars().all(printable_slow), "{string:?}");
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

    /// A file written into its own temporary directory (removed on drop).
    struct TempFile {
        _dir: tempfile::TempDir,
        path: PathBuf,
    }

    fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
        let dir = tempfile::tempdir().expect("create a temporary directory");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write a temporary file");
        TempFile { _dir: dir, path }
    }

    // ------------------------------------------------------- byte scanner

    #[test]
    fn latin1_table_is_tab_ascii_and_the_upper_half_without_soft_hyphen() {
        let expected: Vec<u8> = (0u8..=255)
            .filter(|&byte| byte == b'\t' || (0x20..0x7f).contains(&byte) || byte >= 0xa0)
            .filter(|&byte| byte != 0xad)
            .collect();
        let actual: Vec<u8> = (0u8..=255)
            .filter(|&byte| LATIN1[usize::from(byte)])
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn four_characters_is_the_minimum() {
        assert_eq!(scan(b"abc"), []);
        assert_eq!(scan(b"abc\0"), []);
        assert_eq!(scan(b"abcd"), [ascii(0, "abcd")]);
        assert_eq!(scan(b"abc\0wxyz\0"), [ascii(4, "wxyz")]);
        assert_eq!(scan(b"\x01abc\x02defg"), [ascii(5, "defg")]);
        // Characters, not bytes: three 3-byte characters are too short.
        assert_eq!(scan("日本語".as_bytes()), []);
        assert_eq!(
            scan("日本語で".as_bytes()),
            [found(0, StringEncoding::Utf8, "日本語で")]
        );
    }

    #[test]
    fn nul_terminated_and_unterminated_runs() {
        assert_eq!(
            scan(b"\x01\x02first\0\x7fsecond"),
            [ascii(2, "first"), ascii(9, "second")]
        );
        // Tab continues a run; newline and DEL end one.
        assert_eq!(
            scan(b"a\tbcd\nefgh\x7fijkl"),
            [ascii(0, "a\tbcd"), ascii(6, "efgh"), ascii(11, "ijkl")]
        );
        assert_eq!(scan(b"\0\0\0\0"), []);
        assert_eq!(scan(b""), []);
    }

    #[test]
    fn utf8_multibyte_characters() {
        let text = "héllo wörld, 🙂 €5";
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        assert_eq!(scan(&bytes), [found(0, StringEncoding::Utf8, text)]);
        // Invalid bytes end a run without swallowing what follows.
        assert_eq!(scan(b"abcd\xffefgh"), [ascii(0, "abcd"), ascii(5, "efgh")]);
        assert_eq!(scan(b"\xe6\x97abcd"), [ascii(2, "abcd")]);
        assert_eq!(scan(b"\xf0\x9f\x99abcd"), [ascii(3, "abcd")]);
        // Overlong forms and encoded surrogates are not characters.
        assert_eq!(scan(b"ab\xc0\xafcd"), []);
        assert_eq!(scan(b"xy\xed\xa0\x80zw"), []);
        // A C1 control (U+0085, valid UTF-8) ends a run.
        assert_eq!(
            scan("abcd\u{85}efgh".as_bytes()),
            [ascii(0, "abcd"), ascii(6, "efgh")]
        );
    }

    #[test]
    fn utf16le_strings_at_even_and_odd_offsets() {
        assert_eq!(
            scan(b"H\0e\0l\0l\0o\0\0\0"),
            [found(0, StringEncoding::Utf16Le, "Hello")]
        );
        assert_eq!(
            scan(b"\x01H\0e\0l\0l\0o\0"),
            [found(1, StringEncoding::Utf16Le, "Hello")]
        );
        assert_eq!(scan(b"H\0e\0l\0\0\0"), []);
        // The last letter of an ASCII string does not start a UTF-16LE one.
        assert_eq!(
            scan(b"abcd\0x\0y\0z\0!\0"),
            [ascii(0, "abcd"), found(5, StringEncoding::Utf16Le, "xyz!")]
        );
        let mut bytes = b"\0\0".to_vec();
        bytes.extend(utf16("Crème brûlée\0"));
        assert_eq!(
            scan(&bytes),
            [found(2, StringEncoding::Utf16Le, "Crème brûlée")]
        );
        // Only Latin-1: other scripts are not UTF-16LE strings (see the
        // module documentation), and a non-Latin-1 character ends a run.
        assert_eq!(scan(&utf16("Привет мир")), []);
        assert_eq!(
            scan(&utf16("menu: Файл")),
            [found(0, StringEncoding::Utf16Le, "menu: ")]
        );
    }

    #[test]
    fn ascii_read_one_byte_off_is_not_utf16() {
        assert_eq!(scan(b"\0abcdefgh\0"), [ascii(1, "abcdefgh")]);
        assert_eq!(scan(b"aaaaaaaa"), [ascii(0, "aaaaaaaa")]);
        // Short strings are not long enough for ASCII, and their pairs come
        // from different blocks, so nothing at all.
        assert_eq!(scan(b"Jan\0Feb\0Mar\0Apr\0May\0Jun\0"), []);
    }

    #[test]
    fn invisible_and_bidi_characters_end_a_run() {
        for hidden in [
            '\u{202e}', '\u{200b}', '\u{2066}', '\u{feff}', '\u{ad}', '\u{85}',
        ] {
            let text = format!("abcd{hidden}efgh");
            let width = hidden.len_utf8();
            assert_eq!(
                scan(text.as_bytes()),
                [ascii(0, "abcd"), ascii(4 + width, "efgh")],
                "UTF-8 U+{:04X}",
                u32::from(hidden)
            );
            assert_eq!(
                scan(&utf16(&text)),
                [
                    found(0, StringEncoding::Utf16Le, "abcd"),
                    found(10, StringEncoding::Utf16Le, "efgh"),
                ],
                "UTF-16LE U+{:04X}",
                u32::from(hidden)
            );
        }
        // A visible character in the same place keeps the run whole.
        assert_eq!(
            scan("abcd\u{2013}efgh".as_bytes()),
            [found(0, StringEncoding::Utf8, "abcd\u{2013}efgh")]
        );
        assert_eq!(
            scan(&utf16("abcd\u{e9}efgh")),
            [found(0, StringEncoding::Utf16Le, "abcd\u{e9}efgh")]
        );
    }

    #[test]
    fn values_are_capped_at_4096_characters() {
        let exact = "a".repeat(MAX_STRING_CHARS);
        assert_eq!(scan(exact.as_bytes()), [ascii(0, &exact)]);

        let mut long = "a".repeat(5000).into_bytes();
        long.extend(b"\0next");
        assert_eq!(
            scan(&long),
            [
                Found {
                    truncated: true,
                    ..ascii(0, &exact)
                },
                ascii(5001, "next"),
            ]
        );

        let accents = "é".repeat(4100);
        assert_eq!(
            scan(accents.as_bytes()),
            [Found {
                truncated: true,
                ..found(0, StringEncoding::Utf8, &"é".repeat(MAX_STRING_CHARS))
            }]
        );

        assert_eq!(
            scan(&utf16(&"x".repeat(5000))),
            [Found {
                truncated: true,
                ..found(0, StringEncoding::Utf16Le, &"x".repeat(MAX_STRING_CHARS))
            }]
        );
    }

    #[test]
    fn table_caps_stop_the_scan_and_say_which() {
        let bytes = b"aaaa\0bbbb\0cccc\0";
        let by_count = scan_limited(
            bytes,
            Limits {
                max_strings: 2,
                max_text_bytes: MAX_TEXT_BYTES,
            },
        );
        assert_eq!(by_count.strings.len(), 2);
        assert!(by_count.truncated);
        assert_eq!(by_count.limitations.len(), 1);
        assert!(
            by_count.limitations[0].contains("cap of 2 strings"),
            "{:?}",
            by_count.limitations
        );

        let by_text = scan_limited(
            bytes,
            Limits {
                max_strings: MAX_STRINGS,
                max_text_bytes: 9,
            },
        );
        let values: Vec<&str> = by_text.strings.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["aaaa", "bbbb"]);
        assert!(by_text.truncated);
        assert!(
            by_text.limitations[0].contains("cap of 9 bytes of text"),
            "{:?}",
            by_text.limitations
        );

        let unlimited = scan_limited(bytes, LIMITS);
        assert_eq!(unlimited.strings.len(), 3);
        assert!(!unlimited.truncated && unlimited.limitations.is_empty());
    }

    /// About 85% of random code units are printable BMP characters; only
    /// Latin-1 keeps random bytes from becoming UTF-16LE text.
    #[test]
    fn random_bytes_yield_almost_no_utf16() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let bytes: Vec<u8> = (0..1 << 20)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[3]
            })
            .collect();
        let table = scan_limited(&bytes, LIMITS);
        assert_well_formed(&table);
        let wide = table
            .strings
            .iter()
            .filter(|string| string.encoding == StringEncoding::Utf16Le)
            .count();
        assert!(wide < 4, "{wide} UTF-16LE strings in 1 MiB of noise");
    }

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
    fn tiny_elf_with_data() -> Vec<u8> {
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
    fn table_of(name: &str, bytes: &[u8]) -> Option<Arc<StringTable>> {
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

    fn mutated(mut base: Vec<u8>, mutations: &[(usize, u8)]) -> Vec<u8> {
        let len = base.len();
        for &(position, value) in mutations {
            if let Some(byte) = base.get_mut(position % len) {
                *byte = value;
            }
        }
        base
    }

    /// What `str::from_utf8` and [`is_hidden`] say about the character at
    /// the start of `bytes`: its width when valid and printable, else 0.
    fn reference_width(bytes: &[u8]) -> usize {
        (1..=bytes.len().min(4))
            .find_map(|width| std::str::from_utf8(&bytes[..width]).ok())
            .filter(|text| text.chars().next().is_some_and(printable_slow))
            .map_or(0, str::len)
    }

    #[test]
    fn hand_decoder_agrees_with_std_on_every_boundary() {
        let tables = Utf8Tables::new();
        // Every lead byte against boundary continuation bytes.
        let edges = [
            0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff,
        ];
        for lead in 0..=255u8 {
            for &b1 in &edges {
                for &b2 in &[0x80u8, 0xbf, 0x41] {
                    for &b3 in &[0x80u8, 0xbf, 0x00] {
                        let bytes = [lead, b1, b2, b3];
                        assert_eq!(
                            tables.width(&bytes, 0),
                            reference_width(&bytes),
                            "{bytes:02x?}"
                        );
                        // Cut off at every length.
                        for len in 0..4 {
                            assert_eq!(
                                tables.width(&bytes[..len], 0),
                                reference_width(&bytes[..len]),
                                "{:02x?}",
                                &bytes[..len]
                            );
                        }
                    }
                }
            }
        }
        // Every BMP character and a sample above it, encoded.
        for code in (0..=0x10_ffffu32).filter(|code| *code < 0x1_0000 || code % 97 == 0) {
            if let Some(c) = char::from_u32(code) {
                let mut buffer = [0u8; 4];
                let bytes = c.encode_utf8(&mut buffer).as_bytes();
                assert_eq!(
                    tables.width(bytes, 0),
                    reference_width(bytes),
                    "U+{code:04X}"
                );
            }
        }
    }

    /// The scanners written the obvious way: one character (or code unit)
    /// at a time, no skipping. The real ones must agree with them.
    fn reference_scan(bytes: &[u8]) -> Vec<Found> {
        let tables = Utf8Tables::new();
        let mut out = Vec::new();
        let mut utf8_runs = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let start = at;
            let mut chars = Vec::new();
            while let width @ 1.. = tables.width(bytes, at) {
                chars.push(std::str::from_utf8(&bytes[at..at + width]).expect("valid"));
                at += width;
            }
            if chars.len() >= MIN_STRING_CHARS {
                utf8_runs.push(start..at);
                let value: String = chars.iter().take(MAX_STRING_CHARS).copied().collect();
                let encoding = if value.is_ascii() {
                    StringEncoding::Ascii
                } else {
                    StringEncoding::Utf8
                };
                out.push(Found {
                    offset: start,
                    encoding,
                    value,
                    truncated: chars.len() > MAX_STRING_CHARS,
                });
            }
            if at == start {
                at += 1;
            }
        }
        for parity in 0..2 {
            let mut units = Vec::new();
            let mut at = parity;
            let mut flush = |units: &mut Vec<(usize, char)>| {
                if units.len() >= MIN_STRING_CHARS {
                    out.push(Found {
                        offset: units[0].0,
                        encoding: StringEncoding::Utf16Le,
                        value: units.iter().take(MAX_STRING_CHARS).map(|u| u.1).collect(),
                        truncated: units.len() > MAX_STRING_CHARS,
                    });
                }
                units.clear();
            };
            while at + 1 < bytes.len() {
                let c = char::from(bytes[at]);
                let in_utf8 = utf8_runs
                    .iter()
                    .any(|run| run.start < at + 2 && at < run.end);
                if bytes[at + 1] == 0 && printable_slow(c) && !in_utf8 {
                    units.push((at, c));
                } else {
                    flush(&mut units);
                }
                at += 2;
            }
            flush(&mut units);
        }
        out.sort_by_key(|found| found.offset);
        out
    }

    /// Bytes that make runs, multi-byte characters, UTF-16LE and breaks.
    fn texty_bytes() -> impl Strategy<Value = Vec<u8>> {
        let alphabet = vec![
            0u8, 0, 0, b'a', b'Z', b' ', b'\t', b'\n', 0x7f, 0xc3, 0xa9, 0xe2, 0x80, 0x94, 0xad,
            0xf0, 0x9f, 0x99, 0x82, 0xff, 0x01,
        ];
        proptest::collection::vec(proptest::sample::select(alphabet), 0..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn scanner_agrees_with_the_reference(bytes in texty_bytes()) {
            prop_assert_eq!(scan(&bytes), reference_scan(&bytes));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn hand_decoder_agrees_with_std(bytes in proptest::array::uniform4(any::<u8>())) {
            prop_assert_eq!(Utf8Tables::new().width(&bytes, 0), reference_width(&bytes));
        }

        #[test]
        fn mutated_elf_never_panics(
            mutations in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)
        ) {
            let _ = table_of("case", &mutated(tiny_elf_with_data(), &mutations));
        }

        #[test]
        fn mutated_pe_never_panics(
            mutations in proptest::collection::vec((0usize..0x600, any::<u8>()), 1..8)
        ) {
            let _ = table_of("case.dll", &mutated(fixtures::tiny_pe(), &mutations));
        }
    }

    // ------------------------------------------------ external oracles

    /// `llvm-objdump [extra] -s -j <section>`: the section's start address
    /// and bytes.
    fn objdump_section(path: &Path, section: &str, extra: &[&str]) -> (u64, Vec<u8>) {
        let mut args = extra.to_vec();
        args.extend(["-s", "-j", section, path.to_str().expect("UTF-8 path")]);
        let dump = run("llvm-objdump", &args);
        let mut start = None;
        let mut bytes = Vec::new();
        for line in dump.lines() {
            // " 2000 01000200 72656100 ...  ....rea."
            let Some(rest) = line.strip_prefix(' ') else {
                continue;
            };
            let Some((address, hex)) = rest.split_once(' ') else {
                continue;
            };
            let Ok(address) = u64::from_str_radix(address, 16) else {
                continue;
            };
            let start = *start.get_or_insert(address);
            assert_eq!(address, start + bytes.len() as u64, "gap in objdump output");
            // Four groups of 8 hex digits, each preceded by a space, then
            // two spaces and the ASCII column.
            let digits: String = hex
                .get(..35)
                .unwrap_or(hex)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            for index in (0..digits.len()).step_by(2) {
                let byte = u8::from_str_radix(&digits[index..index + 2], 16)
                    .unwrap_or_else(|_| panic!("bad objdump line {line:?}"));
                bytes.push(byte);
            }
        }
        (start.expect("objdump printed the section"), bytes)
    }

    /// Address of the one occurrence of `needle` in the dumped section.
    fn oracle_address(dump: &(u64, Vec<u8>), needle: &[u8]) -> u64 {
        let hits: Vec<usize> = dump
            .1
            .windows(needle.len())
            .enumerate()
            .filter(|(_, window)| *window == needle)
            .map(|(at, _)| at)
            .collect();
        assert_eq!(hits.len(), 1, "{needle:?} occurs {} times", hits.len());
        dump.0 + hits[0] as u64
    }

    const NEEDLE_PROGRAM: &str = r#"#include <uchar.h>
const char *narrow = "rea-needle-string";
const char16_t *wide = u"utf16-needle";
int main(void) { return narrow[0] + (int)wide[0]; }
"#;

    #[test]
    fn compiled_needles_are_found_where_llvm_objdump_shows_them() {
        if !tool_available("cc") {
            return skip_or_fail("cc is not installed");
        }
        if !tool_available("llvm-objdump") {
            return skip_or_fail("llvm-objdump is not installed");
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let source = dir.path().join("needles.c");
        std::fs::write(&source, NEEDLE_PROGRAM).expect("write C source");
        let program = dir.path().join("needles");
        run(
            "cc",
            &[
                "-std=c11",
                "-O0",
                "-o",
                program.to_str().expect("UTF-8"),
                source.to_str().expect("UTF-8"),
            ],
        );
        let rodata = objdump_section(&program, ".rodata", &[]);
        let narrow = oracle_address(&rodata, b"rea-needle-string\0");
        let wide = oracle_address(&rodata, &utf16("utf16-needle\0"));

        let image = NativeImage::open(&program).expect("open compiled program");
        let table = image.strings(0).expect("strings");
        assert_well_formed(&table);
        let at = |address: u64| {
            table
                .strings
                .iter()
                .find(|string| string.address == address)
                .unwrap_or_else(|| panic!("nothing found at {address:#x}"))
        };
        let expected = |address, encoding, value: &str| FoundString {
            address,
            encoding,
            value: value.to_owned(),
            section: ".rodata".to_owned(),
            truncated: false,
        };
        assert_eq!(
            at(narrow),
            &expected(narrow, StringEncoding::Ascii, "rea-needle-string")
        );
        assert_eq!(
            at(wide),
            &expected(wide, StringEncoding::Utf16Le, "utf16-needle")
        );
    }

    /// Each slice of the universal fsevents.node has its own table: every
    /// NUL-terminated, all-printable C string of 4+ characters that
    /// `llvm-objdump --arch=<a>` shows in `__TEXT,__cstring` is found, whole,
    /// at that address.
    #[test]
    fn universal_slices_match_llvm_objdump_cstrings() {
        if !tool_available("llvm-objdump") {
            return skip_or_fail("llvm-objdump is not installed");
        }
        let Some(path) = fixture("fsevents.node") else {
            return;
        };
        let image = NativeImage::open(&path).expect("open fixture");
        assert_eq!(image.documents().len(), 2);
        for (index, document) in image.documents().iter().enumerate() {
            let arch = format!("--arch={}", document.architecture);
            let (start, bytes) = objdump_section(&path, "__cstring", &[&arch]);
            let table = image.strings(index).expect("strings");
            assert_well_formed(&table);
            let mut expected = 0;
            let mut offset = 0;
            for piece in bytes.split(|&byte| byte == 0) {
                let printable = piece
                    .iter()
                    .all(|&byte| byte == b'\t' || (0x20..0x7f).contains(&byte));
                if printable && piece.len() >= MIN_STRING_CHARS {
                    expected += 1;
                    let address = start + offset as u64;
                    let text = std::str::from_utf8(piece).expect("ASCII");
                    let hit = table.strings.iter().find(|s| s.address == address);
                    assert_eq!(
                        hit.map(|s| (s.value.as_str(), s.section.as_str())),
                        Some((text, "__TEXT,__cstring")),
                        "{} at {address:#x}",
                        document.name
                    );
                }
                offset += piece.len() + 1;
            }
            assert!(expected >= 20, "{}: only {expected}", document.name);
        }
    }

    /// `.rodata`'s (address, file offset, size) from `llvm-readelf -S -W`.
    fn readelf_rodata(path: &Path) -> (u64, u64, u64) {
        let sections = run("llvm-readelf", &["-S", "-W", path.to_str().expect("UTF-8")]);
        sections
            .lines()
            .find_map(|line| {
                let (_, rest) = line.split_once(']')?;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let [name, _kind, address, offset, size, ..] = fields.as_slice() else {
                    return None;
                };
                let hex = |text: &str| u64::from_str_radix(text, 16).ok();
                (*name == ".rodata").then_some((hex(address)?, hex(offset)?, hex(size)?))
            })
            .expect("llvm-readelf lists .rodata")
    }

    /// Every string GNU `strings -a -n 8` reports inside `.rodata` of the
    /// pinned stripped ELF is found at the same address (as part of a run
    /// that may start earlier: we also accept UTF-8 and shorter runs).
    #[test]
    fn watcher_rodata_strings_match_gnu_strings() {
        if !tool_available("strings") || !tool_available("llvm-readelf") {
            return skip_or_fail("GNU strings or llvm-readelf is not installed");
        }
        let Some(path) = fixture("watcher-linux-x64.node") else {
            return;
        };
        let (address, offset, size) = readelf_rodata(&path);
        let listing = run(
            "strings",
            &["-a", "-n", "8", "-t", "x", path.to_str().expect("UTF-8")],
        );
        let all: Vec<(u64, &str)> = listing
            .lines()
            .filter_map(|line| {
                let (at, text) = line.trim_start().split_once(' ')?;
                Some((u64::from_str_radix(at, 16).ok()?, text))
            })
            .collect();
        let in_rodata: Vec<(u64, &str)> = all
            .iter()
            .filter(|(at, text)| *at >= offset && at + text.len() as u64 <= offset + size)
            .map(|(at, text)| (address + (at - offset), *text))
            .collect();
        assert!(
            in_rodata.len() >= 50,
            "only {} strings in .rodata",
            in_rodata.len()
        );

        let image = NativeImage::open(&path).expect("open fixture");
        let table = image.strings(0).expect("strings");
        assert_well_formed(&table);
        let narrow: Vec<&FoundString> = table
            .strings
            .iter()
            .filter(|s| s.encoding != StringEncoding::Utf16Le)
            .collect();
        let covers = |at: u64, text: &str| {
            let index = narrow.partition_point(|s| s.address <= at);
            let Some(string) = index.checked_sub(1).and_then(|i| narrow.get(i)) else {
                return false;
            };
            let skip = (at - string.address) as usize;
            string.section == ".rodata"
                && match string.value.as_bytes().get(skip..) {
                    Some(tail) => {
                        tail.starts_with(text.as_bytes())
                            || (string.truncated && text.as_bytes().starts_with(tail))
                    }
                    None => string.truncated,
                }
        };
        let missing: Vec<_> = in_rodata
            .iter()
            .filter(|(at, text)| !covers(*at, text))
            .collect();
        assert!(
            missing.is_empty(),
            "{} of {} missing, e.g. {:?}",
            missing.len(),
            in_rodata.len(),
            &missing[..missing.len().min(5)]
        );

        // Five distinctive ones by name: the longest that occur once in the
        // whole file, each found as an exact string inside .rodata.
        let mut distinctive: Vec<(u64, &str)> = in_rodata
            .iter()
            .filter(|(_, text)| all.iter().filter(|(_, other)| other == text).count() == 1)
            .copied()
            .collect();
        distinctive.sort_by_key(|(_, text)| std::cmp::Reverse(text.len()));
        distinctive.truncate(5);
        assert_eq!(distinctive.len(), 5);
        for (at, text) in distinctive {
            eprintln!("distinctive: {at:#x} {text:?}");
            assert!((address..address + size).contains(&at));
            assert!(covers(at, text), "{text:?} at {at:#x} not found");
        }
    }
}
