//! The hand-written decoder and the scanners against straightforward
//! reference implementations, and mutated documents, by property tests.

use proptest::prelude::*;

use super::super::printable::Utf8Tables;
use super::documents::{table_of, tiny_elf_with_data};
use super::*;
use crate::providers::native::fixtures;

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
    reference_join(out, bytes)
}

/// Joins neighbours of one kind separated by exactly one line break
/// (`\n`, `\r\n` or `\r`, as UTF-16 units for wide strings) while the
/// whole stays within the cap, written the plain way.
fn reference_join(found: Vec<Found>, bytes: &[u8]) -> Vec<Found> {
    let mut out: Vec<(Found, usize)> = Vec::new();
    for next in found {
        let chars = next.value.chars().count();
        if let Some((previous, previous_chars)) = out.last_mut() {
            let wide = previous.encoding == StringEncoding::Utf16Le;
            let end = previous.offset
                + if wide {
                    previous.value.chars().count() * 2
                } else {
                    previous.value.len()
                };
            let same_kind = wide == (next.encoding == StringEncoding::Utf16Le);
            if !previous.truncated && same_kind && next.offset >= end {
                let gap: Vec<u8> = if wide {
                    let raw = &bytes[end..next.offset];
                    if raw.len().is_multiple_of(2) && raw.chunks(2).all(|unit| unit[1] == 0) {
                        raw.iter().step_by(2).copied().collect()
                    } else {
                        Vec::new()
                    }
                } else {
                    bytes[end..next.offset].to_vec()
                };
                let text = match gap.as_slice() {
                    b"\n" => Some("\n"),
                    b"\r\n" => Some("\r\n"),
                    b"\r" => Some("\r"),
                    _ => None,
                };
                if let Some(text) = text
                    && *previous_chars + text.len() + chars <= MAX_STRING_CHARS
                {
                    if next.encoding == StringEncoding::Utf8 {
                        previous.encoding = StringEncoding::Utf8;
                    }
                    previous.value.push_str(text);
                    previous.value.push_str(&next.value);
                    previous.truncated = next.truncated;
                    *previous_chars += text.len() + chars;
                    continue;
                }
            }
        }
        out.push((next, chars));
    }
    out.into_iter().map(|(found, _)| found).collect()
}

/// Bytes that make runs, multi-byte characters, UTF-16LE and breaks.
fn texty_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet = vec![
        0u8, 0, 0, b'a', b'Z', b' ', b'\t', b'\n', 0x7f, 0xc3, 0xa9, 0xe2, 0x80, 0x94, 0xad, 0xf0,
        0x9f, 0x99, 0x82, 0xff, 0x01,
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
