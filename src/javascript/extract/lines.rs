//! Byte offsets to 1-based (line, character column) positions.
//!
//! oxc reports byte spans; the facts carry character columns (what an editor
//! shows). Minified files are often one multi-megabyte line, so counting the
//! characters from the line start for every fact would be quadratic: the
//! index keeps, besides the line starts, a checkpoint of the character count
//! every [`CHECKPOINT_BYTES`] bytes, and counts at most that far per query.

use crate::javascript::facts::Pos;

/// Distance between character-count checkpoints (bytes).
const CHECKPOINT_BYTES: usize = 4096;

/// Line starts and character checkpoints of one text.
pub(crate) struct LineIndex<'s> {
    text: &'s str,
    /// Byte offset of the first byte of each line (line 1 starts at 0).
    line_starts: Vec<usize>,
    /// `(byte offset, characters before it)` at char boundaries, ascending.
    checkpoints: Vec<(usize, usize)>,
}

impl<'s> LineIndex<'s> {
    pub(crate) fn new(text: &'s str) -> Self {
        let mut line_starts = vec![0];
        let mut checkpoints = vec![(0, 0)];
        let mut next_checkpoint = CHECKPOINT_BYTES;
        for (chars, (offset, c)) in text.char_indices().enumerate() {
            if offset >= next_checkpoint {
                checkpoints.push((offset, chars));
                next_checkpoint = offset + CHECKPOINT_BYTES;
            }
            if c == '\n' {
                line_starts.push(offset + 1);
            }
        }
        LineIndex {
            text,
            line_starts,
            checkpoints,
        }
    }

    /// Number of lines (a text without newline has one).
    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The position of byte `offset` (clamped to the text, and moved back to
    /// a character boundary, so a stray offset still gives a position).
    pub(crate) fn pos(&self, offset: u32) -> Pos {
        let offset = self.floor_boundary(offset as usize);
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line.saturating_sub(1)];
        let column = self.chars_before(offset) - self.chars_before(start) + 1;
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }

    fn floor_boundary(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// Characters in `text[..offset]` (`offset` on a char boundary).
    fn chars_before(&self, offset: usize) -> usize {
        let at = self
            .checkpoints
            .partition_point(|&(byte, _)| byte <= offset);
        let (byte, chars) = self.checkpoints[at.saturating_sub(1)];
        chars + self.text[byte..offset].chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, column: u32) -> Pos {
        Pos { line, column }
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        let text = "ab\né€x\n\nz";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.pos(0), at(1, 1));
        assert_eq!(index.pos(2), at(1, 3));
        assert_eq!(index.pos(3), at(2, 1));
        // "é" is 2 bytes and "€" 3: "x" is the third character of line 2.
        assert_eq!(index.pos(3 + 2 + 3), at(2, 3));
        assert_eq!(index.pos(text.len() as u32 - 1), at(4, 1));
    }

    #[test]
    fn stray_offsets_are_clamped_to_boundaries() {
        let text = "é";
        let index = LineIndex::new(text);
        assert_eq!(index.pos(1), at(1, 1));
        assert_eq!(index.pos(99), at(1, 2));
    }

    #[test]
    fn long_lines_use_checkpoints() {
        let text = format!("{}x", "é".repeat(10_000));
        let index = LineIndex::new(&text);
        assert!(index.checkpoints.len() > 2);
        assert_eq!(index.pos(20_000), at(1, 10_001));
        assert_eq!(index.pos(5_000), at(1, 2_501));
    }
}
