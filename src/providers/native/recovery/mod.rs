//! Procedure recovery from the code itself, for binaries whose tables do
//! not list every function (no unwind tables, stripped symbols).
//!
//! Starting from every start the tables and direct calls declare, a
//! recursive descent follows each procedure's control flow (conditional
//! and unconditional jumps, switch tables, fall-through; a call to an
//! import that never returns ends its path) and claims the bytes it
//! reaches. What it finds on the way are procedures too:
//!
//! * **tail calls**: a jump to the first instruction after padding, or
//!   to a known start;
//! * **fragments**: code one procedure reaches that is not contiguous with
//!   its entry (gcc's `.cold` and `.part` pieces), reported with the
//!   procedure they belong to.
//!
//! Then weaker evidence, in address order, for what nothing claimed yet:
//! code pointers in data (relocations, or the aligned scan) and code whose
//! address an instruction computes (`lea`, `adr`). Last, every run of
//! unclaimed code that is not padding starts a procedure (`code_gap`):
//! compilers leave no unreachable code between functions, so code that no
//! known procedure reaches is one reached indirectly.
//!
//! Everything is bounded: each byte is claimed once, each run of a
//! descent stops at claimed bytes, and the work is linear in the code.

mod claims;
mod descent;
mod jump_tables;
mod noreturn;

#[cfg(test)]
mod tests;

pub use noreturn::never_returns;

use std::collections::{HashMap, HashSet};

use super::code_map::CodeMap;
use super::pointers::DataPointers;
use super::words::Words;
use crate::providers::Source;
use crate::providers::code::Arch;
use claims::Claims;
use descent::Descent;

/// What recovery starts from.
pub(super) struct Input<'a> {
    pub code: &'a CodeMap<'a>,
    pub arch: Arch,
    /// Starts the tables, symbols, entry point and direct calls declare,
    /// with the extent a table states.
    pub known: Vec<(u64, Option<u64>)>,
    /// Weaker starts: code pointers in data, computed code addresses.
    pub pointed: Vec<(u64, Source)>,
    /// Code that is never a procedure of its own (the PLT sections).
    pub excluded: Vec<(u64, u64)>,
    /// Addresses whose call never returns (stubs and slots of `exit`...).
    pub noreturn: Vec<u64>,
    /// The document's section bytes, for jump-table entries.
    pub words: &'a Words<'a>,
    /// Pointers stored in data, for absolute jump tables.
    pub pointers: &'a DataPointers,
    /// Whether code or a pointer refers to an address: where a table no
    /// compare bounds ends.
    pub referenced: &'a dyn Fn(u64) -> bool,
}

/// One procedure start recovery found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Found {
    pub address: u64,
    pub source: Source,
    /// For a fragment, the start of the procedure it belongs to.
    pub part_of: Option<u64>,
}

/// What recovery found.
#[derive(Debug, Default)]
pub(super) struct Recovery {
    /// Sorted by address, one per address.
    pub found: Vec<Found>,
    /// Jump tables read, and table-shaped jumps whose index nothing bounds.
    pub tables: usize,
    pub unbounded_tables: usize,
    /// Jump-table entries the last pass read, at most a quarter of the
    /// code's bytes plus 65,536 (see `descent.rs`); tests check it.
    #[cfg(test)]
    pub table_entries: u64,
    pub limitations: Vec<String>,
}

/// Runs recovery over `input` (see the module comment).
pub(super) fn recover(mut input: Input<'_>) -> Recovery {
    input.known.sort_unstable();
    input.known.dedup_by(|next, kept| {
        if next.0 == kept.0 {
            kept.1 = kept.1.max(next.1);
            true
        } else {
            false
        }
    });
    input.noreturn.sort_unstable();
    input.pointed.sort_unstable();
    // The first pass learns which procedures never return (a call
    // followed by padding is suspected not to); the second walks again
    // knowing them, so their callers' paths end at those calls and nothing
    // else's do.
    let first = walk(&input, true, Default::default());
    let lessons = first.lessons();
    drop(first);
    walk(&input, false, lessons).finish()
}

/// One complete pass of recovery over `input`.
fn walk<'a>(
    input: &'a Input<'a>,
    suspect: bool,
    lessons: (HashSet<u64>, HashMap<u64, u64>),
) -> Descent<'a> {
    let mut claims = Claims::new(input.code);
    for &(start, end) in &input.excluded {
        claims.claim_span(start, end);
    }
    // A stated extent is claimed whole: the table that states it is
    // better evidence than any descent.
    for &(start, size) in &input.known {
        if let Some(size) = size {
            claims.claim_span(start, start.saturating_add(size));
        }
    }
    let mut descent = Descent::new(input, claims, suspect, lessons);
    for &(start, size) in &input.known {
        if size.is_none() {
            descent.procedure(start, None);
        }
    }
    descent.drain_tail_calls();
    for &(address, source) in &input.pointed {
        if descent.plausible_start(address) {
            descent.procedure(address, Some(source));
            descent.drain_tail_calls();
        }
    }
    descent.fill_gaps();
    descent
}
