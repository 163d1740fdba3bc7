//! Building a document's procedure inventory.
//!
//! Symbols are gathered as borrowed `(address, name, binding)` candidates
//! pointing into the memory map, sorted once, and grouped by address; only the
//! names that end up in the inventory are copied into `String`s. Memory is
//! therefore linear in the size of the symbol tables, independent of what
//! their headers claim.

use std::borrow::Cow;

use object::{BinaryFormat, ExportTarget, NameOrOrdinal, Object, ObjectSymbol, SymbolKind};

use super::MAX_PROCEDURES;
use super::code_map::CodeMap;
use super::entry::entry_point;
use crate::providers::{Inventory, Procedure, SharedName, Source, Sources};

/// Cap on the total bytes of names one inventory copies out of the file.
///
/// Legitimate binaries stay far below it (librustc_driver: ~186k symbols,
/// tens of MB of names), but a hostile string table can make millions of
/// symbols name overlapping suffixes of one huge string, which would
/// otherwise cost quadratic memory. Reaching the cap ends the inventory
/// like [`MAX_PROCEDURES`] does: lowest addresses kept, `truncated` set.
const MAX_NAME_BYTES: usize = 256 << 20;

/// Binding of a symbol, in primary-name priority order (lower wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Binding {
    /// ELF `STB_GLOBAL` (and other non-local, non-weak bindings), Mach-O
    /// external non-weak, PE exports and COFF externals.
    Global,
    /// ELF `STB_WEAK`, Mach-O `N_WEAK_DEF`, COFF weak externals.
    Weak,
    /// ELF `STB_LOCAL`, Mach-O non-external, COFF static.
    Local,
    /// A name inferred from the code (`main` from the C runtime's call):
    /// any name a table states comes first.
    Inferred,
}

/// One name (possibly empty: "no usable name") proposed for an address.
#[derive(Debug, Clone)]
pub(super) struct Candidate<'data> {
    address: u64,
    name: CandidateName<'data>,
    binding: Binding,
    source: Source,
    /// Extent stated by the table this came from (zero means unknown).
    size: u64,
    /// The library an imported function comes from (shared).
    library: Option<std::sync::Arc<str>>,
    /// The procedure a fragment belongs to.
    part_of: Option<u64>,
}

/// A candidate's name: bytes borrowed from the file, or a name some table
/// already holds as one shared allocation (kept shared into the inventory).
#[derive(Debug, Clone)]
enum CandidateName<'data> {
    Bytes(Cow<'data, [u8]>),
    Shared(SharedName),
}

impl CandidateName<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            CandidateName::Bytes(bytes) => bytes,
            CandidateName::Shared(name) => name.as_bytes(),
        }
    }

    /// The inventory's copy: the shared allocation itself, or a new one.
    fn to_shared(&self, text: &str) -> SharedName {
        match self {
            CandidateName::Shared(name) => name.clone(),
            CandidateName::Bytes(_) => SharedName::from(text),
        }
    }
}

impl<'data> Candidate<'data> {
    /// A start named by a function table other than the symbol tables
    /// (Go's `pclntab`).
    pub(super) fn named(address: u64, name: &'data [u8], source: Source) -> Candidate<'data> {
        Candidate {
            address,
            name: CandidateName::Bytes(Cow::Borrowed(name)),
            binding: Binding::Global,
            source,
            size: 0,
            library: None,
            part_of: None,
        }
    }

    /// An imported function at its stub or slot. Its binding is weak, so
    /// a symbol the file defines at the same address names it first.
    pub(super) fn import(
        address: u64,
        name: SharedName,
        library: Option<&std::sync::Arc<str>>,
    ) -> Candidate<'static> {
        Candidate {
            address,
            name: CandidateName::Shared(name),
            binding: Binding::Weak,
            source: Source::Import,
            size: 0,
            library: library.cloned(),
            part_of: None,
        }
    }

    /// `main` (or `wmain`), as the C runtime's call shows it (an
    /// inference).
    pub(super) fn c_runtime_main((address, name): (u64, &'static str)) -> Candidate<'static> {
        Candidate {
            name: CandidateName::Bytes(Cow::Borrowed(name.as_bytes())),
            binding: Binding::Inferred,
            ..Candidate::unnamed(address, None, Source::CRuntimeMain)
        }
    }

    /// A piece of the procedure at `parent`, laid out apart from it.
    pub(super) fn fragment(address: u64, parent: u64) -> Candidate<'static> {
        Candidate {
            part_of: Some(parent),
            ..Candidate::unnamed(address, None, Source::Fragment)
        }
    }

    /// A nameless start found by a table or by disassembly.
    pub(super) fn unnamed(address: u64, size: Option<u64>, source: Source) -> Candidate<'static> {
        Candidate {
            address,
            name: CandidateName::Bytes(Cow::Borrowed(&[])),
            binding: Binding::Local,
            source,
            size: size.unwrap_or(0),
            library: None,
            part_of: None,
        }
    }
}

/// The complete procedure inventory of one parsed document.
///
/// Procedures are the defined function symbols (`SymbolKind::Text`,
/// `is_definition()`) of the symbol table and of the dynamic symbol table
/// (so a stripped ELF still lists its exports), PE exports that point into
/// executable sections (data exports and forwarders are not procedures), and
/// the entry point when it is non-zero, even if no symbol names it.
///
/// **Primary name rule.** Among the names found at one address, the primary
/// `name` is the one with the strongest binding — global, then weak, then
/// local — and among equally bound names the one that sorts first by bytes.
/// A name found with several bindings (e.g. in both tables) counts with its
/// strongest one. All other names go to `aliases`, sorted by bytes and
/// deduplicated. Names that are not valid UTF-8 are never used (nor lossily
/// repaired); each distinct such `(address, name)` pair is counted in
/// `non_utf8_names`. Empty or unreadable names are ignored, but their symbol
/// still marks a procedure (with `name: None` if nothing else names it).
///
/// Procedures are sorted by address. Beyond [`MAX_PROCEDURES`] distinct
/// addresses (or [`MAX_NAME_BYTES`] of names) only the lowest addresses are
/// kept and `truncated` is set.
///
/// `extra` adds nameless starts found elsewhere (unwind tables, call
/// targets); each procedure records every [`Source`] that found it, and its
/// `size` is the largest extent any table stated.
pub(super) fn inventory<'data>(
    file: &object::File<'data>,
    extra: impl IntoIterator<Item = Candidate<'data>>,
) -> Inventory {
    let mut candidates = symbol_candidates(file);
    candidates.extend(extra);
    build(candidates, MAX_NAME_BYTES)
}

/// Candidates from the symbol tables, PE exports and the entry point only.
pub(super) fn symbol_candidates<'data>(file: &object::File<'data>) -> Vec<Candidate<'data>> {
    let mut candidates = Vec::new();
    collect_symbols(file.symbols(), Source::Symbol, &mut candidates);
    collect_symbols(
        file.dynamic_symbols(),
        Source::DynamicSymbol,
        &mut candidates,
    );
    if file.format() == BinaryFormat::Pe {
        collect_pe_exports(file, &mut candidates);
    }
    if let Some(address) = entry_point(file) {
        candidates.push(Candidate::unnamed(address, None, Source::Entry));
    }
    candidates
}

fn collect_symbols<'data, S: ObjectSymbol<'data>>(
    symbols: impl Iterator<Item = S>,
    source: Source,
    out: &mut Vec<Candidate<'data>>,
) {
    for symbol in symbols {
        if symbol.kind() != SymbolKind::Text || !symbol.is_definition() {
            continue;
        }
        out.push(Candidate {
            address: symbol.address(),
            name: CandidateName::Bytes(Cow::Borrowed(symbol.name_bytes().unwrap_or_default())),
            binding: binding(&symbol),
            source,
            size: symbol.size(),
            library: None,
            part_of: None,
        });
    }
}

fn binding<'data>(symbol: &impl ObjectSymbol<'data>) -> Binding {
    if symbol.is_weak() {
        Binding::Weak
    } else if symbol.is_local() {
        Binding::Local
    } else {
        Binding::Global
    }
}

/// PE exports carry image base + RVA already (`object` adds the base).
fn collect_pe_exports<'data>(file: &object::File<'data>, out: &mut Vec<Candidate<'data>>) {
    let Ok(exports) = file.exports() else {
        return;
    };
    let code = CodeMap::new(file, usize::MAX);
    // The iterator always advances, so skipping broken entries terminates.
    for export in exports.flatten() {
        let ExportTarget::Address { address } = export.target() else {
            continue;
        };
        if !code.contains(address) {
            continue;
        }
        let name = match export.into_name() {
            NameOrOrdinal::Name(name) => name,
            NameOrOrdinal::Ordinal(_) => Cow::Borrowed(&[][..]),
        };
        out.push(Candidate {
            address,
            name: CandidateName::Bytes(name),
            binding: Binding::Global,
            source: Source::Export,
            size: 0,
            library: None,
            part_of: None,
        });
    }
}

/// Sorts, deduplicates and groups candidates into the inventory, stopping
/// at [`MAX_PROCEDURES`] addresses or `max_name_bytes` of names.
fn build(mut candidates: Vec<Candidate<'_>>, max_name_bytes: usize) -> Inventory {
    // Sorting by (address, name, binding) puts each name's strongest binding
    // first within its run, already in byte order for the aliases.
    candidates.sort_unstable_by(|a, b| {
        (a.address, a.name.bytes(), a.binding).cmp(&(b.address, b.name.bytes(), b.binding))
    });

    let mut inventory = Inventory {
        procedures: Vec::new(),
        truncated: false,
        non_utf8_names: 0,
        limitations: Vec::new(),
    };
    let mut name_bytes = 0usize;
    for group in candidates.chunk_by(|a, b| a.address == b.address) {
        name_bytes = group.iter().fold(name_bytes, |total, candidate| {
            total.saturating_add(candidate.name.bytes().len())
        });
        if inventory.procedures.len() == MAX_PROCEDURES || name_bytes > max_name_bytes {
            inventory.truncated = true;
            break;
        }
        if let Some(procedure) = procedure_at(group, &mut inventory.non_utf8_names) {
            inventory.procedures.push(procedure);
        }
    }
    inventory
}

/// The procedure for one address group (all candidates share the address,
/// sorted by name then binding).
fn procedure_at(group: &[Candidate<'_>], non_utf8_names: &mut usize) -> Option<Procedure> {
    let address = group.first()?.address;
    let sources = group.iter().fold(Sources::default(), |sources, candidate| {
        sources.union(Sources::of(candidate.source))
    });
    let size = group
        .iter()
        .map(|candidate| candidate.size)
        .max()
        .filter(|&size| size > 0);
    // The first candidate of each name run carries its strongest binding.
    let distinct = || {
        group
            .iter()
            .enumerate()
            .filter(|(index, candidate)| {
                *index == 0
                    || group
                        .get(index - 1)
                        .is_none_or(|prev| prev.name.bytes() != candidate.name.bytes())
            })
            .map(|(_, candidate)| candidate)
    };
    let stated = || {
        distinct().filter_map(|candidate| {
            let text = std::str::from_utf8(candidate.name.bytes()).ok()?;
            (!text.is_empty()).then_some((candidate.binding, text, candidate))
        })
    };
    // A name a table states replaces an inferred one.
    let inferred_only = stated().all(|(binding, ..)| binding == Binding::Inferred);
    let usable =
        || stated().filter(move |(binding, ..)| inferred_only || *binding != Binding::Inferred);
    let primary = usable()
        .min_by_key(|&(binding, text, _)| (binding, text))
        .map(|(_, text, candidate)| candidate.name.to_shared(text));
    let aliases = usable()
        .filter(|(_, text, _)| primary.as_deref() != Some(*text))
        .map(|(_, text, candidate)| candidate.name.to_shared(text))
        .collect();
    *non_utf8_names += distinct()
        .filter(|candidate| std::str::from_utf8(candidate.name.bytes()).is_err())
        .count();
    Some(Procedure {
        address,
        name: primary,
        aliases,
        size,
        sources,
        library: group.iter().find_map(|candidate| candidate.library.clone()),
        // A symbol at a fragment says it is a function of its own.
        part_of: group
            .iter()
            .find_map(|candidate| candidate.part_of)
            .filter(|_| {
                !sources.contains(Source::Symbol) && !sources.contains(Source::DynamicSymbol)
            }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(address: u64, name: &'static [u8], binding: Binding) -> Candidate<'static> {
        Candidate {
            address,
            name: CandidateName::Bytes(Cow::Borrowed(name)),
            binding,
            source: Source::Symbol,
            size: 0,
            library: None,
            part_of: None,
        }
    }

    #[test]
    fn more_than_max_procedures_keeps_the_lowest_addresses() {
        let count = MAX_PROCEDURES as u64 + 2;
        // Descending input, so keeping the lowest requires the sort.
        let candidates = (0..count)
            .rev()
            .map(|address| candidate(address, b"f", Binding::Global))
            .collect();
        let inventory = build(candidates, MAX_NAME_BYTES);
        assert!(inventory.truncated);
        assert_eq!(inventory.procedures.len(), MAX_PROCEDURES);
        assert_eq!(inventory.procedures.first().map(|p| p.address), Some(0));
        assert_eq!(
            inventory.procedures.last().map(|p| p.address),
            Some(MAX_PROCEDURES as u64 - 1)
        );
    }

    #[test]
    fn exactly_max_procedures_is_not_truncated() {
        let candidates = (0..MAX_PROCEDURES as u64)
            .map(|address| candidate(address, b"", Binding::Local))
            .collect();
        let inventory = build(candidates, MAX_NAME_BYTES);
        assert!(!inventory.truncated);
        assert_eq!(inventory.procedures.len(), MAX_PROCEDURES);
    }

    #[test]
    fn duplicate_names_count_once_with_their_strongest_binding() {
        let inventory = build(
            vec![
                candidate(0x10, b"zeta", Binding::Local),
                candidate(0x10, b"alpha", Binding::Local),
                candidate(0x10, b"zeta", Binding::Global),
                candidate(0x10, b"\xff", Binding::Global),
                candidate(0x10, b"\xff", Binding::Local),
            ],
            MAX_NAME_BYTES,
        );
        assert_eq!(inventory.non_utf8_names, 1);
        assert_eq!(
            inventory.procedures,
            vec![Procedure {
                address: 0x10,
                name: Some("zeta".into()),
                aliases: vec!["alpha".into()],
                size: None,
                sources: Sources::of(Source::Symbol),
                library: None,
                part_of: None,
            }]
        );
    }

    #[test]
    fn names_beyond_the_byte_budget_truncate() {
        let candidates = (0..10)
            .map(|address| candidate(address, b"0123456789", Binding::Global))
            .collect();
        let inventory = build(candidates, 35);
        assert!(inventory.truncated);
        assert_eq!(inventory.procedures.len(), 3);
    }
}
