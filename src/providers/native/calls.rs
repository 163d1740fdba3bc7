//! The direct call graph of one document, answered from the code index and
//! the procedure extents without materializing it.
//!
//! An instruction belongs to the procedure whose extent covers it
//! ([`Extents::containing`]), and a call to an import stub that leads back
//! into the document counts as a call to the real function
//! ([`Thunks::resolve`]); callers and callees both use those two rules, so
//! `callers(f)` contains `g` exactly when `callees(g)` contains `f`.

use super::code_index::CodeIndex;
use super::extents::Extents;
use super::thunks::Thunks;
use crate::providers::code::{CallEdge, RefKind};

/// Calls to the procedure starting at `entry` (directly or through one of
/// its stubs), in call-site order. A stub itself has no callers: its calls
/// belong to the function it forwards to.
pub(super) fn callers(
    index: &CodeIndex,
    extents: &Extents,
    thunks: &Thunks,
    entry: u64,
) -> Vec<CallEdge> {
    if thunks.resolve(entry) != entry {
        return Vec::new();
    }
    let targets = std::iter::once(entry).chain(thunks.stubs_of(entry).iter().copied());
    let mut edges: Vec<CallEdge> = targets
        .flat_map(|target| index.xrefs_to(target, target.saturating_add(1)))
        .filter(|xref| xref.kind == RefKind::Call)
        .map(|xref| CallEdge {
            caller: extents.containing_start(xref.from),
            at: xref.from,
            callee: entry,
        })
        .collect();
    edges.sort_unstable_by_key(|edge| edge.at);
    edges
}

/// Calls made by the procedure with inventory index `procedure`, in
/// call-site order. Calls to addresses where no procedure starts are left
/// out (the inventory adds every direct call target in code, so these are
/// calls into data or outside the document).
pub(super) fn callees(
    index: &CodeIndex,
    extents: &Extents,
    thunks: &Thunks,
    procedure: usize,
) -> Vec<CallEdge> {
    let Some((start, end)) = extents.extent(procedure) else {
        return Vec::new();
    };
    index
        .xrefs_from(start, end)
        .iter()
        .filter(|xref| xref.kind == RefKind::Call)
        .filter(|xref| extents.containing(xref.from) == Some(procedure))
        .map(|xref| (xref.from, thunks.resolve(xref.to)))
        .filter(|(_, callee)| extents.index_of_start(*callee).is_some())
        .map(|(at, callee)| CallEdge {
            caller: Some(start),
            at,
            callee,
        })
        .collect()
}
