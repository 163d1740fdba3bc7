//! The byte scanners on hand-written bytes: minimum length, terminators,
//! multi-byte UTF-8, UTF-16LE at both parities, hidden characters and caps.

use super::super::printable::LATIN1;
use super::*;

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
    // Tab continues a run; DEL ends one; lines separated by one line
    // break are one multi-line string.
    assert_eq!(
        scan(b"a\tbcd\nefgh\x7fijkl"),
        [ascii(0, "a\tbcd\nefgh"), ascii(11, "ijkl")]
    );
    assert_eq!(scan(b"\0\0\0\0"), []);
    assert_eq!(scan(b""), []);
}

#[test]
fn multi_line_text_is_one_string_within_the_cap() {
    assert_eq!(
        scan(b"Usage: ls\r\n  -a, --all\n  -D, --dired\0"),
        [ascii(0, "Usage: ls\r\n  -a, --all\n  -D, --dired")]
    );
    // Two line breaks, or a short line between, end the text.
    assert_eq!(
        scan(b"first line\n\nsecond line\0"),
        [ascii(0, "first line"), ascii(12, "second line")]
    );
    let wide: Vec<u8> = "ab\u{e9}cd\nefgh"
        .chars()
        .flat_map(|c| [c as u8, 0])
        .collect();
    assert_eq!(
        scan(&wide),
        [found(0, StringEncoding::Utf16Le, "ab\u{e9}cd\nefgh")]
    );
    // Joining never passes the cap: each piece keeps its text.
    let line = "x".repeat(MAX_STRING_CHARS - 10);
    let text = format!("{line}\n{line}");
    let pieces = scan(text.as_bytes());
    assert_eq!(pieces.len(), 2);
    assert!(
        pieces
            .iter()
            .all(|piece| piece.value == line && !piece.truncated)
    );
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
