//! Disassembly as compact lines: what `analyze_function` answers and what
//! a comparison reads back from a retained dossier.

use crate::providers::code::Instruction;
use crate::providers::format_address;

/// One listed instruction as the line a reader scans:
/// `address  mnemonic operands` (two spaces after the address; the
/// mnemonic never holds a space, so the line splits back exactly).
pub(crate) fn instruction_line(instruction: &Instruction) -> String {
    let address = format_address(instruction.address);
    if instruction.operands.is_empty() {
        format!("{address}  {}", instruction.mnemonic)
    } else {
        format!(
            "{address}  {} {}",
            instruction.mnemonic, instruction.operands
        )
    }
}

/// One basic block as a line: `start..end (instructions): kind target, ...`.
pub(crate) fn block_line(block: &crate::providers::code::BasicBlock) -> String {
    let mut line = format!(
        "{}..{} ({})",
        format_address(block.start),
        format_address(block.end),
        block.instruction_count
    );
    for (i, edge) in block.successors.iter().enumerate() {
        line.push_str(if i == 0 { ": " } else { ", " });
        line.push_str(edge.kind.as_str());
        line.push(' ');
        line.push_str(&format_address(edge.target));
    }
    line
}

/// Characters of a string from the target that an answer shows where it
/// only points at it (a reference in a dossier, a trace's seed):
/// `search_strings` shows the whole text.
pub(crate) const SHOWN_STRING_CHARS: usize = 240;

/// `value` as such an answer shows it: its first [`SHOWN_STRING_CHARS`]
/// characters (with `…` when cut, through `ground::text::excerpt`) and,
/// when cut, its whole length in characters.
pub(crate) fn shown_string(value: &str) -> (String, Option<usize>) {
    let shown = crate::ground::text::excerpt(value, SHOWN_STRING_CHARS);
    let cut = (shown.len() != value.len()).then(|| value.chars().count());
    (shown, cut)
}

#[cfg(test)]
mod shown_tests {
    use super::{SHOWN_STRING_CHARS, shown_string};

    #[test]
    fn a_long_string_is_shown_in_part_with_its_length() {
        assert_eq!(shown_string("short"), ("short".to_owned(), None));
        let long = "é".repeat(SHOWN_STRING_CHARS + 5);
        let (shown, chars) = shown_string(&long);
        assert_eq!(shown.chars().count(), SHOWN_STRING_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(chars, Some(SHOWN_STRING_CHARS + 5));
        let exact = "x".repeat(SHOWN_STRING_CHARS);
        assert_eq!(shown_string(&exact), (exact.clone(), None));
    }
}
