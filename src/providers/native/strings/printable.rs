//! Which characters are printable, as lookup tables built once: Latin-1
//! (UTF-16LE scanner, ASCII part of the UTF-8 one) and a BMP bitmap plus a
//! hand-written decoder for the UTF-8 scanner. Separate because both
//! scanners share it and it is where the cost is.

use std::sync::LazyLock;

use crate::ground::hidden::is_hidden;

/// Printable characters of Latin-1 (as bytes): tab, U+0020–U+007E and
/// U+00A0–U+00FF except the soft hyphen U+00AD (`printable_slow` on
/// U+0000–U+00FF, pinned by a test).
pub(super) static LATIN1: LazyLock<[bool; 256]> = LazyLock::new(|| {
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

pub(super) fn printable_slow(c: char) -> bool {
    c == '\t' || !is_hidden(c)
}

/// Lookup tables of the UTF-8 sweep, resolved once per section.
pub(super) struct Utf8Tables<'a> {
    /// Printable ASCII bytes (tab, 0x20–0x7e).
    pub(super) ascii: [bool; 256],
    bmp: &'a [u64; 1024],
}

impl Utf8Tables<'_> {
    pub(super) fn new() -> Utf8Tables<'static> {
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
    pub(super) fn width(&self, bytes: &[u8], at: usize) -> usize {
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
