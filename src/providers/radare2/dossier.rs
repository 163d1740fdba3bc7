//! One function as radare2 sees it (`afbj` blocks, `pdj` instructions) as a
//! [`FunctionDossier`]: the instruction budget, block edges, the extent.

use std::collections::HashMap;

use super::super::code::{
    BasicBlock, CallSite, Edge, EdgeKind, Flow, FunctionDossier, Unresolved, UnresolvedKind, Xref,
};
use super::convert::{Sections, flow, instruction};
use super::json::{BlockJson, OpJson};

/// The order in which blocks are listed under an instruction budget: the
/// entry block and those after it by address, then blocks radare2 placed
/// below the entry (shared tails, stubs). Blocks without an address or size
/// are left out.
pub(crate) fn listing_order(blocks: &[BlockJson], entry: u64) -> Vec<&BlockJson> {
    let mut ordered: Vec<&BlockJson> = blocks
        .iter()
        .filter(|b| b.addr.is_some() && b.size.is_some_and(|s| s > 0))
        .collect();
    ordered.sort_by_key(|b| {
        let a = b.addr.unwrap_or(0);
        (a < entry, a)
    });
    ordered.dedup_by_key(|b| b.addr);
    ordered
}

/// Lists up to `max_instructions` instructions of `blocks` in
/// [`listing_order`]; `fetch(count, start)` decodes `count` instructions
/// linearly from `start` (`pdj`). Only instructions inside each block are
/// kept, so alignment padding between blocks never appears. Returns the
/// instructions and whether some were left out.
pub(crate) fn list_instructions<E>(
    blocks: &[BlockJson],
    entry: u64,
    max_instructions: usize,
    mut fetch: impl FnMut(usize, u64) -> Result<Vec<OpJson>, E>,
) -> Result<(Vec<OpJson>, bool), E> {
    let mut ops = Vec::new();
    let mut remaining = max_instructions;
    for block in listing_order(blocks, entry) {
        let (Some(start), Some(size)) = (block.addr, block.size) else {
            continue;
        };
        if remaining == 0 {
            return Ok((ops, true));
        }
        let end = start.saturating_add(size);
        // At most one instruction per byte when radare2 gives no count.
        let count = usize::try_from(block.ninstr.filter(|&n| n > 0).unwrap_or(size))
            .unwrap_or(usize::MAX)
            .min(remaining);
        let mut covered = start;
        for op in fetch(count, start)?
            .into_iter()
            .filter(|op| op.offset.is_some_and(|a| a >= start && a < end))
            .take(count)
        {
            let len = op.size.filter(|&l| l > 0).unwrap_or(1);
            covered = covered.max(op.offset.unwrap_or(start).saturating_add(len));
            ops.push(op);
            remaining -= 1;
        }
        if covered < end {
            return Ok((ops, true));
        }
    }
    Ok((ops, false))
}

fn block_edges(block: &BlockJson, end: u64, last: Option<Flow>) -> Vec<Edge> {
    let mut edges = Vec::new();
    let mut push = |target: u64, kind: EdgeKind| {
        if !edges.iter().any(|e: &Edge| e.target == target) {
            edges.push(Edge { target, kind });
        }
    };
    match (block.jump, block.fail) {
        (Some(jump), Some(fail)) => {
            push(jump, EdgeKind::ConditionalTaken);
            push(fail, EdgeKind::ConditionalNotTaken);
        }
        (Some(jump), None) => {
            // radare2 also writes `jump` for a block that merely runs into
            // the next one; the last instruction tells them apart.
            let falls = match last {
                Some(Flow::Sequential | Flow::Call { .. } | Flow::IndirectCall) => true,
                Some(_) => false,
                None => jump == end,
            };
            let kind = if falls {
                EdgeKind::Fallthrough
            } else {
                EdgeKind::Jump
            };
            push(jump, kind);
        }
        (None, Some(fail)) => push(fail, EdgeKind::Fallthrough),
        (None, None) => {}
    }
    if let Some(switch) = &block.switch_op {
        for case in &switch.cases {
            if let Some(target) = case.jump {
                push(target, EdgeKind::Jump);
            }
        }
    }
    edges
}

/// Everything radare2 said about one function, as a [`FunctionDossier`].
/// `ops` are the instructions listed (within `max_instructions`);
/// `truncated` says whether instructions were left out.
pub(crate) fn dossier(
    entry: u64,
    blocks: &[BlockJson],
    ops: &[OpJson],
    truncated: bool,
    max_instructions: usize,
    sections: &Sections,
) -> FunctionDossier {
    let mut instructions = Vec::new();
    let mut references = Vec::new();
    for op in ops {
        if let Some((instruction, refs)) = instruction(op, sections) {
            references.extend(refs.iter().map(|r| Xref {
                from: instruction.address,
                to: r.target,
                kind: r.kind,
            }));
            instructions.push(instruction);
        }
    }
    instructions.sort_by_key(|i| i.address);
    instructions.dedup_by_key(|i| i.address);
    references.sort();
    references.dedup();

    // The flow of the instruction that ends at each address.
    let ends: HashMap<u64, Flow> = ops
        .iter()
        .filter_map(|op| {
            let len = op.size.filter(|&l| l > 0)?;
            Some((op.offset?.checked_add(len)?, flow(op)))
        })
        .collect();
    let mut basic_blocks: Vec<BasicBlock> = listing_order(blocks, entry)
        .into_iter()
        .filter_map(|b| {
            let start = b.addr?;
            let end = start.saturating_add(b.size?);
            let last = ends.get(&end).copied();
            Some(BasicBlock {
                start,
                end,
                instruction_count: b.ninstr.and_then(|n| usize::try_from(n).ok()).unwrap_or(0),
                successors: block_edges(b, end, last),
            })
        })
        .collect();
    basic_blocks.sort_by_key(|b| b.start);

    let end = contiguous_end(&basic_blocks, entry);
    let mut callees: Vec<CallSite> = instructions
        .iter()
        .filter_map(|i| match i.flow {
            Flow::Call { target } => Some(CallSite {
                at: i.address,
                target,
            }),
            _ => None,
        })
        .collect();
    callees.sort();
    callees.dedup();
    let unresolved = instructions
        .iter()
        .filter_map(|i| {
            let kind = match i.flow {
                Flow::IndirectCall => UnresolvedKind::IndirectCall,
                Flow::IndirectJump => UnresolvedKind::IndirectJump,
                _ => return None,
            };
            Some(Unresolved {
                at: i.address,
                kind,
            })
        })
        .collect();

    let mut limitations = Vec::new();
    if truncated {
        limitations.push(format!(
            "the instruction listing stops after {max_instructions} instructions (max_instructions), entry block first; blocks and edges are complete"
        ));
    }
    if !basic_blocks.iter().any(|b| b.start == entry) {
        limitations.push("radare2 lists no basic block at the entry address".to_string());
    }
    let outside = basic_blocks
        .iter()
        .filter(|b| b.start < entry || end.is_none_or(|e| b.start >= e))
        .count();
    if outside > 0 {
        limitations.push(format!(
            "{outside} basic block(s) lie outside the contiguous extent from the entry: code radare2 shares with, or attributes to, this function"
        ));
    }
    if blocks.iter().any(|b| b.switch_op.is_some()) {
        limitations
            .push("switch cases are reported as jump edges of the dispatching block".to_string());
    }
    FunctionDossier {
        entry,
        end,
        instructions,
        blocks: basic_blocks,
        callees,
        references,
        unresolved,
        truncated,
        limitations,
    }
}

/// Largest gap between blocks still counted as one extent: alignment
/// padding (`nop`s before a 16-byte aligned block) is shorter.
const PADDING: u64 = 16;

/// The end of the run of blocks that starts at `entry`, bridging gaps
/// shorter than [`PADDING`]; `None` when no block starts there. `blocks` are
/// sorted by start.
fn contiguous_end(blocks: &[BasicBlock], entry: u64) -> Option<u64> {
    let mut end = None;
    for b in blocks.iter().filter(|b| b.start >= entry) {
        match end {
            None if b.start == entry => end = Some(b.end),
            Some(e) if b.start < e.saturating_add(PADDING) => end = Some(e.max(b.end)),
            _ => {}
        }
    }
    end
}
