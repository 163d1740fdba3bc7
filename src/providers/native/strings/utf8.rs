//! The UTF-8 (and ASCII) scanner: one sweep per section that skips bytes
//! no printable character contains. Its own file because the UTF-16LE
//! scanner depends on the runs it records.

use std::ops::{ControlFlow, Range};

use super::collector::Found;
use super::printable::Utf8Tables;
use super::{MAX_STRING_CHARS, MIN_STRING_CHARS, StringEncoding};

/// Finds UTF-8 (and ASCII) strings; records the byte range of each whole
/// run (truncated or not) in `runs`, in increasing order.
pub(super) fn scan_utf8(
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
