//! Procedure discovery beyond symbols: function starts declared by the
//! tables a toolchain leaves in a binary even after `strip --strip-all`,
//! because the loader, the unwinder or the debugger needs them.
//!
//! * `.eh_frame` (ELF, MinGW PE, Mach-O `__eh_frame`): one FDE per function
//!   (or function part) with its start and length — [`eh_frame`].
//! * Mach-O `LC_FUNCTION_STARTS`: every function start, no lengths —
//!   [`function_starts`].
//! * PE `.pdata` (the exception directory): one runtime function entry per
//!   non-leaf function or part — [`pdata`].
//!
//! The result is a flat, sorted list of [`Start`]s; merging them with the
//! symbol inventory (names, sources, sizes) is the inventory's job.
//!
//! All input is hostile. Each table walk is bounded by the bytes the table
//! actually has (never by a count a header claims), stops at the first
//! structural error with a limitation naming where, and keeps at most the
//! cap of starts, so nothing here panics, spins or allocates more than a
//! small multiple of the table's size.

mod eh_frame;
mod function_starts;
pub(crate) mod gopclntab;
mod init_arrays;
mod pdata;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::ops::ControlFlow;

use super::MAX_PROCEDURES;
use super::code_map::CodeMap;
use crate::providers::Source;

/// One function start found by an unwind or function-start table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Virtual address as the rest of rea spells it: ELF link-time address,
    /// Mach-O vmaddr, PE image base + RVA.
    pub address: u64,
    /// Extent the table states, if it states one (`LC_FUNCTION_STARTS`
    /// never does; a zero length counts as unknown).
    pub size: Option<u64>,
    /// The table that declared the start.
    pub source: Source,
}

/// Every start the document's tables declare, with what could not be read.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Sorted by `(address, source)`, one entry per pair (see
    /// [`table_starts`]), at most [`MAX_PROCEDURES`] long.
    pub starts: Vec<Start>,
    /// Plain sentences about tables or entries that were not (fully) read.
    pub limitations: Vec<String>,
}

/// Function starts declared by the document's unwind/function-start tables:
/// ELF (and any format with one) `.eh_frame` FDEs; Mach-O `LC_FUNCTION_STARTS`; PE `.pdata`;
/// ELF constructor and destructor arrays.
/// Only starts inside executable sections are kept. Sorted by address, deduplicated (keep the largest size).
///
/// Deduplication is per `(address, source)`: when two tables declare the
/// same address (a Mach-O `__eh_frame` FDE and its `LC_FUNCTION_STARTS`
/// entry), both are kept so the merge can record every source; within one
/// table the largest stated size wins. When the tables together declare
/// more than [`MAX_PROCEDURES`] starts, the lowest addresses are kept.
pub fn table_starts(file: &object::File<'_>) -> Discovery {
    discover(file, MAX_PROCEDURES)
}

/// [`table_starts`] with the cap as a parameter, so tests can reach it.
fn discover(file: &object::File<'_>, cap: usize) -> Discovery {
    let code = CodeMap::new(file, usize::MAX);
    let mut found = Found {
        starts: Vec::new(),
        limitations: Vec::new(),
        cap,
    };
    // Every reader runs (no short-circuit): a binary may carry several.
    let tables = [
        eh_frame::read(file, &code, &mut found),
        function_starts::read(file, &code, &mut found),
        pdata::read(file, &code, &mut found),
    ];
    init_arrays::read(file, &code, &mut found);
    if !tables.contains(&true) {
        found.limitations.push(
            "this document has no `.eh_frame`, `LC_FUNCTION_STARTS` or `.pdata` table, \
             so only symbols, exports and the entry point locate its procedures"
                .to_owned(),
        );
    }
    found.finish()
}

/// Starts and limitations gathered so far from all tables.
struct Found {
    starts: Vec<Start>,
    limitations: Vec<String>,
    /// Most starts any one table contributes, and most kept in the end.
    cap: usize,
}

impl Found {
    /// Begins the walk of one table, named as the analyst would search for
    /// it (e.g. "`.eh_frame`").
    fn walk<'found>(
        &'found mut self,
        table: String,
        source: Source,
        code: &'found CodeMap<'found>,
    ) -> TableWalk<'found> {
        TableWalk {
            table,
            source,
            code,
            found: self,
            read: 0,
            capped: false,
            outside: 0,
            first_outside: None,
        }
    }

    /// Sorts, deduplicates and caps the starts.
    fn finish(mut self) -> Discovery {
        // Largest size first within each (address, source) run; `None`
        // sorts below every `Some`, so a stated size beats an unknown one.
        self.starts
            .sort_unstable_by_key(|start| (start.address, start.source, Reverse(start.size)));
        self.starts
            .dedup_by_key(|start| (start.address, start.source));
        if self.starts.len() > self.cap {
            self.limitations.push(format!(
                "the tables together declare {} function starts; only the {} at the lowest \
                 addresses are kept",
                self.starts.len(),
                self.cap
            ));
            self.starts.truncate(self.cap);
        }
        Discovery {
            starts: self.starts,
            limitations: self.limitations,
        }
    }
}

/// The walk of one table: keeps the starts that fall in code, counts the
/// others, and stops the table at the cap.
struct TableWalk<'found> {
    table: String,
    source: Source,
    code: &'found CodeMap<'found>,
    found: &'found mut Found,
    /// Starts accepted from this table so far.
    read: usize,
    capped: bool,
    outside: usize,
    first_outside: Option<u64>,
}

impl TableWalk<'_> {
    /// Offers one declared start; `Break` means the table reached the cap
    /// and its walk must stop.
    fn push(&mut self, address: u64, size: Option<u64>) -> ControlFlow<()> {
        if !self.code.contains(address) {
            self.outside += 1;
            self.first_outside.get_or_insert(address);
            return ControlFlow::Continue(());
        }
        if self.read == self.found.cap {
            self.capped = true;
            return ControlFlow::Break(());
        }
        self.read += 1;
        self.found.starts.push(Start {
            address,
            size: size.filter(|&size| size > 0),
            source: self.source,
        });
        ControlFlow::Continue(())
    }

    /// Records a sentence about this table.
    fn limitation(&mut self, text: String) {
        self.found.limitations.push(text);
    }

    /// Reports what the walk dropped.
    fn finish(self) {
        if let Some(first) = self.first_outside {
            let (noun, verb, was) = if self.outside == 1 {
                ("entry", "declares", "was")
            } else {
                ("entries", "declare", "were")
            };
            self.found.limitations.push(format!(
                "{} {noun} of {} {verb} a start outside every executable section \
                 (the first at {}) and {was} ignored",
                self.outside,
                self.table,
                crate::providers::format_address(first),
            ));
        }
        if self.capped {
            self.found.limitations.push(format!(
                "{} declares more than {} function starts; only the first {} were read",
                self.table, self.found.cap, self.found.cap
            ));
        }
    }
}

/// Little-endian `u32` at `offset`, if the bytes are there.
fn u32_le(bytes: &[u8], offset: usize) -> Option<u32> {
    let word = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_le_bytes(word.try_into().ok()?))
}
