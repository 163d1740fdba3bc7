//! Function dossiers from the native disassembler: the instructions of one
//! procedure's extent, split into basic blocks with their edges, plus its
//! direct callees, data references and unresolved control transfers.

use std::collections::BTreeSet;

use super::disasm;
use crate::providers::code::{
    Arch, BasicBlock, CallSite, Edge, EdgeKind, Flow, FunctionDossier, Instruction, RefKind,
    Unresolved, UnresolvedKind, Xref,
};

/// Most instructions one dossier lists.
pub const MAX_FUNCTION_INSTRUCTIONS: usize = 20_000;

/// Dossier of the code in `bytes` (mapped at `entry`, already cut to the
/// procedure's extent ending at `end`), at most `max_instructions` long.
pub(super) fn dossier(
    arch: Arch,
    bytes: &[u8],
    entry: u64,
    end: u64,
    max_instructions: usize,
) -> FunctionDossier {
    let max = max_instructions.clamp(1, MAX_FUNCTION_INSTRUCTIONS);
    let instructions = disasm::disassemble(arch, bytes, entry, max);
    let listed_end = instructions.last().map_or(entry, |last| {
        last.address.wrapping_add(last.bytes.len() as u64)
    });
    let truncated = listed_end < end && instructions.len() >= max;
    let mut limitations = Vec::new();
    if truncated {
        limitations.push(format!(
            "listing stopped after {max} instructions at {listed_end:#x}; the procedure extends \
             to {end:#x} (raise max_instructions to see more)"
        ));
    } else if listed_end < end {
        limitations.push(format!(
            "the file holds no bytes for {listed_end:#x}..{end:#x} (zero-filled in memory)"
        ));
    }
    let mut callees = Vec::new();
    let mut references = Vec::new();
    let mut unresolved = Vec::new();
    for instruction in &instructions {
        let at = instruction.address;
        match instruction.flow {
            Flow::Call { target } => callees.push(CallSite { at, target }),
            Flow::IndirectCall => unresolved.push(Unresolved {
                at,
                kind: UnresolvedKind::IndirectCall,
            }),
            Flow::IndirectJump => unresolved.push(Unresolved {
                at,
                kind: UnresolvedKind::IndirectJump,
            }),
            _ => {}
        }
        if let Some(data) = instruction.data {
            // `call [slot]`: a call through a static slot is a callee the
            // tool layer names when the slot is an import's; it stays
            // unresolved too, since the slot's content is not read here.
            if data.kind == RefKind::Call {
                callees.push(CallSite {
                    at,
                    target: data.target,
                });
                continue;
            }
            references.push(Xref {
                from: at,
                to: data.target,
                kind: data.kind,
            });
        }
    }
    if !unresolved.is_empty() {
        limitations.push(format!(
            "{} indirect call(s) or jump(s) have targets not known statically; they are listed \
             as unresolved",
            unresolved.len()
        ));
    }
    FunctionDossier {
        entry,
        end: Some(end),
        blocks: blocks(&instructions, entry, listed_end),
        instructions,
        callees,
        references,
        unresolved,
        truncated,
        limitations,
    }
}

/// Splits a listing into basic blocks: a block starts at the entry, at every
/// branch target inside the listing, and after every block-ending
/// instruction; edges follow the last instruction's flow.
fn blocks(instructions: &[Instruction], entry: u64, listed_end: u64) -> Vec<BasicBlock> {
    let inside = |address: u64| (entry..listed_end).contains(&address);
    let mut leaders = BTreeSet::from([entry]);
    for (i, instruction) in instructions.iter().enumerate() {
        if let Flow::Jump { target } | Flow::ConditionalJump { target } = instruction.flow
            && inside(target)
        {
            leaders.insert(target);
        }
        if instruction.flow.ends_block()
            && let Some(next) = instructions.get(i + 1)
        {
            leaders.insert(next.address);
        }
    }
    let mut blocks: Vec<BasicBlock> = Vec::new();
    for (i, instruction) in instructions.iter().enumerate() {
        let next = instructions.get(i + 1).map(|n| n.address);
        if leaders.contains(&instruction.address) || blocks.is_empty() {
            blocks.push(BasicBlock {
                start: instruction.address,
                end: instruction.address,
                instruction_count: 0,
                successors: Vec::new(),
            });
        }
        let Some(block) = blocks.last_mut() else {
            continue;
        };
        block.end = instruction
            .address
            .wrapping_add(instruction.bytes.len() as u64);
        block.instruction_count += 1;
        let last_of_block = next.is_none_or(|n| leaders.contains(&n));
        if last_of_block {
            block.successors = successors(instruction.flow, next);
        }
    }
    blocks
}

fn successors(flow: Flow, next: Option<u64>) -> Vec<Edge> {
    let edge = |target, kind| Edge { target, kind };
    match flow {
        Flow::Jump { target } => vec![edge(target, EdgeKind::Jump)],
        Flow::ConditionalJump { target } => {
            let mut edges = vec![edge(target, EdgeKind::ConditionalTaken)];
            edges.extend(next.map(|n| edge(n, EdgeKind::ConditionalNotTaken)));
            edges
        }
        Flow::Sequential | Flow::Call { .. } | Flow::IndirectCall => next
            .map(|n| vec![edge(n, EdgeKind::Fallthrough)])
            .unwrap_or_default(),
        Flow::IndirectJump | Flow::Return | Flow::Stop => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(address: u64, len: usize, flow: Flow) -> Instruction {
        Instruction {
            address,
            bytes: vec![0x90; len],
            mnemonic: "x".to_owned(),
            operands: String::new(),
            flow,
            data: None,
        }
    }

    #[test]
    fn blocks_split_at_targets_and_after_branches() {
        // 0: cmp; 2: jcc 8; 4: call; 6: jmp 10; 8: nop; 9: ret; 10: ret
        let listing = [
            insn(0, 2, Flow::Sequential),
            insn(2, 2, Flow::ConditionalJump { target: 8 }),
            insn(4, 2, Flow::Call { target: 0x100 }),
            insn(6, 2, Flow::Jump { target: 10 }),
            insn(8, 1, Flow::Sequential),
            insn(9, 1, Flow::Return),
            insn(10, 1, Flow::Return),
        ];
        let blocks = blocks(&listing, 0, 11);
        let shape: Vec<(u64, u64, usize)> = blocks
            .iter()
            .map(|b| (b.start, b.end, b.instruction_count))
            .collect();
        assert_eq!(shape, [(0, 4, 2), (4, 8, 2), (8, 10, 2), (10, 11, 1)]);
        assert_eq!(
            blocks[0].successors,
            [
                Edge {
                    target: 8,
                    kind: EdgeKind::ConditionalTaken
                },
                Edge {
                    target: 4,
                    kind: EdgeKind::ConditionalNotTaken
                },
            ]
        );
        assert_eq!(
            blocks[1].successors,
            [Edge {
                target: 10,
                kind: EdgeKind::Jump
            }]
        );
        assert!(blocks[2].successors.is_empty(), "ret ends the block");
        assert!(blocks[3].successors.is_empty());
    }

    #[test]
    fn a_branch_into_the_middle_splits_with_a_fallthrough_edge() {
        let listing = [
            insn(0, 1, Flow::Sequential),
            insn(1, 1, Flow::Sequential),
            insn(2, 2, Flow::ConditionalJump { target: 1 }),
            insn(4, 1, Flow::Return),
        ];
        let blocks = blocks(&listing, 0, 5);
        assert_eq!(
            blocks[0].successors,
            [Edge {
                target: 1,
                kind: EdgeKind::Fallthrough
            }]
        );
        assert_eq!(blocks[1].start, 1);
        assert_eq!(blocks.len(), 3);
    }
}
