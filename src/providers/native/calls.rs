//! The direct call graph of one document, answered from the code index and
//! the procedure extents without materializing it.
//!
//! An instruction belongs to the procedure whose extent covers it
//! ([`Extents::containing`]). A call or jump to an alias — an import's stub
//! or slot, or a stub that leads back into the document — counts as one to
//! the procedure it stands for ([`Thunks::resolve`]). A jump to another
//! procedure's start is a tail call; a jump that stays within what one
//! procedure stands for (a loop back to its entry, a stub's own jump
//! through its slot) is none. Callers and callees both use these rules, so
//! `callers(f)` contains `g` exactly when `callees(g)` contains `f`.

use super::code_index::CodeIndex;
use super::extents::Extents;
use super::thunks::Thunks;
use crate::providers::code::{CallEdge, CallKind};

/// Calls and tail calls to the procedure starting at `entry` (directly or
/// through one of its aliases), in call-site order. An alias itself has no
/// callers: its calls belong to the procedure it stands for.
pub(super) fn callers(
    index: &CodeIndex,
    extents: &Extents,
    thunks: &Thunks,
    entry: u64,
) -> Vec<CallEdge> {
    if thunks.resolve(entry) != entry {
        return Vec::new();
    }
    let targets = std::iter::once(entry).chain(thunks.aliases_of(entry).iter().copied());
    let mut edges: Vec<CallEdge> = targets
        .flat_map(|target| index.xrefs_to(target, target.saturating_add(1)))
        .filter_map(|xref| {
            let kind = CallKind::of(xref.kind)?;
            let caller = extents.containing_start(xref.from);
            let within = caller.is_some_and(|caller| thunks.resolve(caller) == entry);
            (kind == CallKind::Call || !within).then_some(CallEdge {
                caller,
                at: xref.from,
                callee: entry,
                kind,
            })
        })
        .collect();
    edges.sort_unstable_by_key(|edge| edge.at);
    edges.dedup();
    edges
}

/// Calls and tail calls made by the procedure with inventory index
/// `procedure`, in call-site order. Transfers to addresses where no
/// procedure starts are left out (the inventory adds every direct call
/// target in code, so these are calls into data or outside the document,
/// jumps inside a procedure, or calls through pointers that are not
/// import slots).
pub(super) fn callees(
    index: &CodeIndex,
    extents: &Extents,
    thunks: &Thunks,
    procedure: usize,
) -> Vec<CallEdge> {
    let Some((start, end)) = extents.extent(procedure) else {
        return Vec::new();
    };
    let own = thunks.resolve(start);
    index
        .xrefs_from(start, end)
        .iter()
        .filter(|xref| extents.containing(xref.from) == Some(procedure))
        .filter_map(|xref| {
            let kind = CallKind::of(xref.kind)?;
            let callee = thunks.resolve(xref.to);
            extents.index_of_start(callee)?;
            (kind == CallKind::Call || callee != own).then_some(CallEdge {
                caller: Some(start),
                at: xref.from,
                callee,
                kind,
            })
        })
        .collect()
}
