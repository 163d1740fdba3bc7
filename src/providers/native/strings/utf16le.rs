//! The UTF-16LE scanner: Latin-1 code units at either byte parity, probing
//! one unit in four on binary data. Its own file because it is one of the
//! two decodings, with its own rules (see the module documentation).

use std::ops::{ControlFlow, Range};

use super::collector::Found;
use super::printable::LATIN1;
use super::{MAX_STRING_CHARS, MIN_STRING_CHARS, StringEncoding};

/// Finds UTF-16LE strings of printable Latin-1 characters whose code units
/// start at offsets of the given parity (0 or 1). A code unit whose first
/// byte ends a UTF-8 run in `utf8_runs` (sorted by end) is not used, so that
/// the last letter of `"abc\0"` does not start a UTF-16LE string `"c"…`.
pub(super) fn scan_utf16le(
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
