//! From scanned bytes to table entries: [`scan_section`] runs both
//! scanners over one section and [`Collector`] keeps what they find under
//! the table's caps. Separate from the scanners, which only report
//! [`Found`] runs and never see the caps.

use std::ops::ControlFlow;

use super::utf8::scan_utf8;
use super::utf16le::scan_utf16le;
use super::{FoundString, Limits, MAX_LIMITATIONS, MAX_STRING_CHARS, StringEncoding, StringTable};

/// Accumulates strings under the caps.
pub(super) struct Collector {
    limits: Limits,
    pub(super) table: StringTable,
    text_bytes: usize,
    /// Limitations past [`MAX_LIMITATIONS`], reported as a count.
    omitted_limitations: usize,
}

impl Collector {
    pub(super) fn new(limits: Limits) -> Collector {
        Collector {
            limits,
            table: StringTable::default(),
            text_bytes: 0,
            omitted_limitations: 0,
        }
    }

    pub(super) fn limitation(&mut self, sentence: String) {
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

    pub(super) fn finish(mut self) -> StringTable {
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
pub(super) struct Found {
    pub(super) offset: usize,
    pub(super) encoding: StringEncoding,
    pub(super) value: String,
    pub(super) truncated: bool,
}

/// Scans one section's bytes into `collector`; `Break` once a cap is hit.
pub(super) fn scan_section(
    bytes: &[u8],
    address: u64,
    section: &str,
    collector: &mut Collector,
) -> ControlFlow<()> {
    let first = collector.table.strings.len();
    let scanned = {
        let mut emit = |found| collector.push(section, address, found);
        let mut utf8_runs = Vec::new();
        let mut scan = || {
            scan_utf8(bytes, &mut utf8_runs, &mut emit)?;
            scan_utf16le(bytes, 0, &utf8_runs, &mut emit)?;
            scan_utf16le(bytes, 1, &utf8_runs, &mut emit)
        };
        scan()
    };
    join_lines(&mut collector.table.strings, first, bytes, address);
    scanned
}

/// Multi-line text is one string: strings of this section separated only
/// by line breaks (`\n`, `\r\n`, `\r`, in their encoding) are joined,
/// as long as the result stays within [`MAX_STRING_CHARS`]. A long packed
/// blob (Go's string data) therefore stays in pieces that each hold their
/// text, and a reference to a later line still lands inside the string.
fn join_lines(strings: &mut Vec<FoundString>, first: usize, bytes: &[u8], base: u64) {
    if strings.len() <= first + 1 {
        return;
    }
    let mut section: Vec<FoundString> = strings.drain(first..).collect();
    section.sort_by_key(|string| string.address);
    let mut joined: Vec<(FoundString, usize)> = Vec::with_capacity(section.len());
    for next in section {
        let chars = next.value.chars().count();
        if let Some((previous, previous_chars)) = joined.last_mut()
            && let Some(gap) = line_break_gap(previous, &next, bytes, base)
            && *previous_chars + gap.len() + chars <= MAX_STRING_CHARS
        {
            if next.encoding == StringEncoding::Utf8 {
                previous.encoding = StringEncoding::Utf8;
            }
            previous.value.push_str(gap);
            previous.value.push_str(&next.value);
            previous.truncated = next.truncated;
            *previous_chars += gap.len() + chars;
            continue;
        }
        joined.push((next, chars));
    }
    strings.extend(joined.into_iter().map(|(string, _)| string));
}

/// The line breaks between two strings, when that is all there is between
/// them and both are of one kind (narrow, or UTF-16LE).
fn line_break_gap(
    previous: &FoundString,
    next: &FoundString,
    bytes: &[u8],
    base: u64,
) -> Option<&'static str> {
    let wide = previous.encoding == StringEncoding::Utf16Le;
    if previous.truncated || wide != (next.encoding == StringEncoding::Utf16Le) {
        return None;
    }
    let start = previous
        .address
        .checked_sub(base)?
        .checked_add(previous.byte_len())?;
    let start = usize::try_from(start).ok()?;
    let end = usize::try_from(next.address.checked_sub(base)?).ok()?;
    let gap = bytes.get(start..end)?;
    let narrow: Vec<u8> = if wide {
        if gap.len() % 2 != 0 || gap.chunks(2).any(|unit| unit[1] != 0) {
            return None;
        }
        gap.iter().step_by(2).copied().collect()
    } else {
        gap.to_vec()
    };
    match narrow.as_slice() {
        b"\n" => Some("\n"),
        b"\r\n" => Some("\r\n"),
        b"\r" => Some("\r"),
        _ => None,
    }
}
