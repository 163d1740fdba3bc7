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
