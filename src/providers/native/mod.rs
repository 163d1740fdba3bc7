//! The built-in native provider: pure Rust analysis with the `object` crate
//! over a read-only memory map.
//!
//! Opening a target only maps the file and parses headers, so it is cheap even
//! for very large binaries. Everything that walks symbol tables (inventories)
//! or the whole file (sha256) runs on first use and is cached.
//!
//! All input is treated as hostile: nothing here panics on file contents,
//! indexes without checking, or allocates more than a small multiple of the
//! file's own size.

mod c_runtime;
mod calls;
mod cell;
mod code_index;
mod code_map;
pub mod disasm;
pub(crate) mod discovery;
mod documents;
mod elf_relocations;
mod entry;
mod extents;
mod function;
pub mod imports;
mod layout;
mod macho_rebases;
mod overview;
pub mod pointers;
mod procedures;
mod recovered;
mod recovery;
mod strings;
mod thunks;
mod windows_main;
mod words;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
pub(crate) mod synth_elf;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use crate::ground::confined::ConfinedFile;

use super::code::{CallEdge, FunctionDossier, UnresolvedKind, Xref};
use super::interrupt;
use super::limitations::Limitations;
use super::{Format, Inventory, Overview, ProviderError};
use code_map::CodeMap;

pub use code_index::{CodeIndex, MAX_XREFS, Progress};
pub use extents::{Containment, Extents};
pub use function::MAX_FUNCTION_INSTRUCTIONS;
pub use recovery::never_returns;
pub use thunks::Thunks;

pub use layout::{
    Layout, LayoutExport, LayoutImport, LayoutSection, LayoutSegment, MAX_LAYOUT_ENTRIES,
};

pub use strings::{
    FoundString, MAX_STRING_CHARS, MAX_STRINGS, MAX_TEXT_BYTES, MIN_STRING_CHARS, StringEncoding,
    StringTable,
};

/// Layout facts of every document of an in-memory image (one per
/// universal slice), for callers that hold bytes rather than a file (the
/// artifact inventory reads archive members this way). `name` only labels
/// documents and errors. Same parsing and caps as [`NativeImage::layout`].
pub fn layouts_of_bytes(
    bytes: &[u8],
    name: &str,
) -> Result<Vec<(DocumentInfo, Layout)>, ProviderError> {
    let path = Path::new(name);
    let classified = documents::classify(bytes, path)?;
    let mut out = Vec::with_capacity(classified.documents.len());
    for (info, range) in classified.documents.into_iter().zip(classified.ranges) {
        let data = bytes.get(range).unwrap_or_default();
        let file =
            object::File::parse(data).map_err(|error| malformed(path, info.format, error))?;
        let layout = layout::layout(&file, &info);
        out.push((info, layout));
    }
    Ok(out)
}

/// One document's lazily computed value (or the error computing it).
type Cached<T> = cell::Cell<T>;

/// Documented cap of an inventory: at most this many distinct procedure
/// addresses are kept (the lowest ones); the inventory is then `truncated`.
pub const MAX_PROCEDURES: usize = 1_000_000;

/// One analysable image inside a target: the whole file for a thin binary,
/// or one slice of a Mach-O universal binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentInfo {
    /// `watcher.node` for a thin file, `fsevents.node (x86_64)` for a slice.
    pub name: String,
    /// `x86_64`, `x86`, `arm64`, `arm`, or a lowercase `object` name.
    pub architecture: String,
    /// Format of this document itself (a universal slice is `MachO`).
    pub format: Format,
}

/// A memory-mapped executable file and the documents it holds.
///
/// `Send + Sync`: the map is read-only and the lazily computed values live in
/// [`OnceLock`]s, so one image can be shared behind an `Arc`.
pub struct NativeImage {
    path: PathBuf,
    map: Mmap,
    format: Format,
    documents: Vec<DocumentInfo>,
    /// Byte range of each document inside `map` (parallel to `documents`).
    ranges: Vec<std::ops::Range<usize>>,
    sha256: OnceLock<String>,
    /// One cell per document; errors are cached too because they are a pure
    /// function of the (immutable) mapped bytes.
    inventories: Vec<Cached<Inventory>>,
    /// One string table per document, cached like `inventories`.
    string_tables: Vec<Cached<StringTable>>,
    /// One code index per document, cached like `inventories`.
    code_indexes: Vec<Cached<CodeIndex>>,
    /// Procedure extents per document, derived from the inventory.
    extents: Vec<Cached<Extents>>,
    /// Pointer slots in data, per document.
    pointers: Vec<Cached<pointers::DataPointers>>,
    /// The import tables, read once per document (thunks and layout).
    import_tables: Vec<Cached<imports::ImportTable>>,
    /// Import stubs that forward into the document, per document.
    thunks: Vec<Cached<Thunks>>,
}

/// One data slot pointing at an address, and who uses its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableUse {
    pub slot: u64,
    /// `[start, end)` of the table the slot belongs to.
    pub table: (u64, u64),
    /// References into the table, at most the requested number, by target
    /// then source.
    pub users: Vec<Xref>,
    pub users_total: usize,
}

/// [`NativeImage::pointer_uses`]' answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointerUses {
    pub total_slots: usize,
    pub uses: Vec<TableUse>,
    pub source: pointers::PointerSource,
    pub limitations: Vec<String>,
}

/// Where an address is, as [`NativeImage::locate`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub containment: Containment,
    /// Whether a segment (for COFF objects: a section) maps the address.
    pub mapped: bool,
    /// That segment's name, when it has one (ELF program headers do not).
    pub segment: Option<String>,
}

/// Why a function dossier could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FunctionError {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("{0:#x} is not the start of a procedure in this document")]
    NotAProcedure(u64),
    #[error("rea cannot disassemble {0} code")]
    UnsupportedArchitecture(String),
}

impl std::fmt::Debug for NativeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeImage")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("documents", &self.documents)
            .finish_non_exhaustive()
    }
}

impl NativeImage {
    /// Memory-maps the file, classifies it and lists its documents.
    ///
    /// Only headers are parsed (so that broken headers are reported here, as
    /// `Malformed`, and architectures are known); symbol tables are not
    /// touched and the file is not hashed, so even a 150 MB library opens in
    /// milliseconds.
    /// Opens the file at `path` once, unconfined (the CLI's tests and
    /// benches). The session opens beneath its read roots and calls
    /// [`NativeImage::from_file`].
    pub fn open(path: &Path) -> Result<NativeImage, ProviderError> {
        let file = crate::ground::confined::Roots::default()
            .open_file(path)
            .map_err(|e| ProviderError::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
        NativeImage::from_file(&file, path)
    }

    /// Maps an already opened file; `path` names it in messages.
    pub fn from_file(file: &ConfinedFile, path: &Path) -> Result<NativeImage, ProviderError> {
        let map = map_file(file, path)?;
        let classified = documents::classify(&map, path)?;
        let count = classified.documents.len();
        fn cells<T>(count: usize) -> Vec<Cached<T>> {
            std::iter::repeat_with(Cached::default)
                .take(count)
                .collect()
        }
        Ok(NativeImage {
            path: path.to_path_buf(),
            map,
            format: classified.format,
            documents: classified.documents,
            ranges: classified.ranges,
            sha256: OnceLock::new(),
            inventories: cells(count),
            string_tables: cells(count),
            code_indexes: cells(count),
            extents: cells(count),
            import_tables: cells(count),
            pointers: cells(count),
            thunks: cells(count),
        })
    }

    /// The bytes of one document: the whole file for a thin binary, the
    /// slice for a member of a universal binary.
    pub fn document_bytes(&self, document: usize) -> &[u8] {
        self.ranges
            .get(document)
            .and_then(|range| self.map.get(range.clone()))
            .unwrap_or(&[])
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File-level format: `MachOUniversal` for a fat file.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Lowercase hex sha256 of the whole file, computed on first call.
    /// Records the file's sha256 when the caller already computed it from
    /// the same descriptor (the session hashes while it opens, with
    /// progress and cancellation), so it is not read twice.
    pub fn set_sha256(&self, sha256: String) {
        let _ = self.sha256.set(sha256);
    }

    pub fn sha256(&self) -> &str {
        self.sha256
            .get_or_init(|| crate::ground::digest::sha256_hex(&self.map[..]))
    }

    pub fn documents(&self) -> &[DocumentInfo] {
        &self.documents
    }

    /// Index of the document with exactly this name.
    pub fn document_index(&self, name: &str) -> Result<usize, ProviderError> {
        self.documents
            .iter()
            .position(|document| document.name == name)
            .ok_or_else(|| self.unknown_document(name.to_owned()))
    }

    /// Complete procedure inventory of one document, computed on first call:
    /// symbols, unwind and function-start tables, the entry point, and the
    /// direct call targets of the code index (which it builds if needed).
    pub fn inventory(&self, document: usize) -> Result<Arc<Inventory>, ProviderError> {
        self.inventory_with_progress(document, &|_, _| {})
    }

    /// [`NativeImage::inventory`], reporting the code sweep's progress.
    pub fn inventory_with_progress(
        &self,
        document: usize,
        progress: Progress<'_>,
    ) -> Result<Arc<Inventory>, ProviderError> {
        self.cached(&self.inventories, document, || {
            // The pointers in data (a string table and a scan of the data
            // sections) need no code index: read them on a second core
            // while the code is swept. Their result, error included, is
            // cached for recovery to pick up.
            let check = interrupt::current();
            let code = std::thread::scope(|scope| {
                let pointers = scope.spawn(|| {
                    interrupt::with_check(check, || self.data_pointers(document).is_ok())
                });
                let code = self.code_index(document, progress);
                let _read = pointers.join();
                code
            })?;
            let file = self.parse(document)?;
            let discovered = discovery::table_starts(&file);
            let tables = discovered.starts.into_iter().map(|start| {
                procedures::Candidate::unnamed(start.address, start.size, start.source)
            });
            let calls = code.call_targets().iter().map(|&address| {
                procedures::Candidate::unnamed(address, None, super::Source::CallTarget)
            });
            let go = discovery::gopclntab::go_functions(&file);
            let code_map = CodeMap::new(&file, self.code_budget(document));
            let go_named = go
                .functions
                .iter()
                .filter(|(address, _)| code_map.contains(*address))
                .map(|&(address, name)| {
                    procedures::Candidate::named(address, name, super::Source::GoPclntab)
                });
            let thunks = self.thunks(document)?;
            let macho = self.documents[document].format == super::Format::MachO;
            let imports = thunks.imports().iter().flat_map(|import| {
                let name = crate::providers::SharedName::new(import.name.clone());
                // Mach-O spells C symbols with a leading `_`; the C name is
                // an alias (a view of the same allocation), so `open` finds
                // `_open`.
                let c_name = name
                    .strip_prefix('_')
                    .filter(|rest| macho && !rest.is_empty() && !rest.starts_with('_'))
                    .and_then(|_| name.suffix(1));
                import.address().into_iter().flat_map(move |address| {
                    std::iter::once(name.clone())
                        .chain(c_name.clone())
                        .map(move |name| {
                            procedures::Candidate::import(address, name, import.library.as_ref())
                        })
                })
            });
            let main = self
                .c_runtime_main(document, &file, &code_map, &code, &thunks)?
                .map(procedures::Candidate::c_runtime_main);
            let candidates: Vec<_> = tables
                .chain(calls)
                .chain(go_named)
                .chain(imports)
                .chain(main)
                .collect();
            let declared = procedures::inventory(&file, candidates.iter().cloned());
            let recovered = self.recover_procedures(document, &file, &code, &thunks, &declared)?;
            let mut inventory = if recovered.candidates.is_empty() {
                declared
            } else {
                procedures::inventory(&file, candidates.into_iter().chain(recovered.candidates))
            };
            // Every source's sentences, each kind once (see `Limitations`).
            let limitations = std::mem::take(&mut inventory.limitations)
                .into_iter()
                .chain(recovered.limitations)
                .chain(discovered.limitations)
                .chain(thunks.limitations.iter().cloned())
                .chain(self.unbound_imports_note(document, &thunks))
                .chain(go.limitations)
                .chain(code.limitations.iter().cloned())
                .collect::<Limitations>();
            inventory.limitations = limitations.sentences();
            Ok(Arc::new(inventory))
        })
    }

    /// The procedures the symbol tables, PE exports and entry point name,
    /// without table or code discovery: what `nm` would list. Not cached.
    pub fn symbol_inventory(&self, document: usize) -> Result<Inventory, ProviderError> {
        let file = self.parse(document)?;
        Ok(procedures::inventory(&file, []))
    }

    /// The whole-document code index (references, indirect branches, call
    /// targets), built on first call by one sweep of the code.
    pub fn code_index(
        &self,
        document: usize,
        progress: Progress<'_>,
    ) -> Result<Arc<CodeIndex>, ProviderError> {
        self.cached(&self.code_indexes, document, || {
            let file = self.parse(document)?;
            let code = CodeMap::new(&file, self.code_budget(document));
            Ok(Arc::new(CodeIndex::build(
                &code,
                code_index::arch_of(&file),
                progress,
            )))
        })
    }

    /// Disjoint procedure extents of one document (see [`Extents`]).
    pub fn extents(&self, document: usize) -> Result<Arc<Extents>, ProviderError> {
        self.cached(&self.extents, document, || {
            let inventory = self.inventory(document)?;
            Ok(Arc::new(self.extents_of(document, &inventory)?))
        })
    }

    /// Extents of another provider's inventory of this document, bounded by
    /// this document's sections (not cached).
    pub fn extents_of(
        &self,
        document: usize,
        inventory: &Inventory,
    ) -> Result<Extents, ProviderError> {
        let file = self.parse(document)?;
        let code = CodeMap::new(&file, self.code_budget(document));
        Ok(Extents::new(inventory, &code))
    }

    /// Which procedure (if any) covers `address`, and which segment maps it.
    pub fn locate(&self, document: usize, address: u64) -> Result<Location, ProviderError> {
        let extents = self.extents(document)?;
        self.locate_in(document, address, &extents)
    }

    /// [`NativeImage::locate`] with the extents of another inventory.
    pub fn locate_in(
        &self,
        document: usize,
        address: u64,
        extents: &Extents,
    ) -> Result<Location, ProviderError> {
        let file = self.parse(document)?;
        let code = CodeMap::new(&file, self.code_budget(document));
        let segment = overview::segment_of(&file, address);
        Ok(Location {
            containment: extents.classify(address, &code),
            mapped: segment.is_some(),
            segment: segment.flatten(),
        })
    }

    /// The dossier of the procedure starting at `entry`.
    pub fn function(
        &self,
        document: usize,
        entry: u64,
        max_instructions: usize,
    ) -> Result<FunctionDossier, FunctionError> {
        let extents = self.extents(document)?;
        let index = extents
            .index_of_start(entry)
            .ok_or(FunctionError::NotAProcedure(entry))?;
        let (start, end) = extents
            .extent(index)
            .ok_or(FunctionError::NotAProcedure(entry))?;
        let file = self.parse(document)?;
        let arch = code_index::arch_of(&file).ok_or_else(|| {
            FunctionError::UnsupportedArchitecture(self.documents[document].architecture.clone())
        })?;
        let code = CodeMap::new(&file, self.code_budget(document));
        let bytes = code.region_of(start).map_or(&[][..], |region| {
            let from = region.bytes_from(start);
            let len = usize::try_from(end - start).unwrap_or(usize::MAX);
            &from[..from.len().min(len)]
        });
        Ok(function::dossier(arch, bytes, start, end, max_instructions))
    }

    /// Import stubs of one document that forward into it (see [`Thunks`]).
    pub fn thunks(&self, document: usize) -> Result<Arc<Thunks>, ProviderError> {
        self.cached(&self.thunks, document, || {
            let index = self.code_index(document, &|_, _| {})?;
            let table = self.import_table(document)?;
            let file = self.parse(document)?;
            let code = CodeMap::new(&file, self.code_budget(document));
            Ok(Arc::new(Thunks::new(&code, &index, &table)))
        })
    }

    /// Pointer slots in one document's data (see [`pointers::DataPointers`]),
    /// read on first call; a scan looks for string starts and code.
    pub fn data_pointers(
        &self,
        document: usize,
    ) -> Result<Arc<pointers::DataPointers>, ProviderError> {
        self.cached(&self.pointers, document, || {
            let strings = self.strings(document)?;
            let file = self.parse(document)?;
            let code = CodeMap::new(&file, self.code_budget(document));
            let is_string_start = |address: u64| {
                strings
                    .strings
                    .binary_search_by_key(&address, |s| s.address)
                    .is_ok()
            };
            // Most data words are no address at all: one compare with the
            // span of every target turns them away before any search.
            // Both lists are sorted by address.
            let (first_string, last_string) = (strings.strings.first(), strings.strings.last());
            let (first_region, last_region) = (code.regions().first(), code.regions().last());
            let low = [
                first_string.map(|s| s.address),
                first_region.map(|r| r.address),
            ];
            let high = [last_string.map(|s| s.address), last_region.map(|r| r.end)];
            let low = low.into_iter().flatten().min().unwrap_or(u64::MAX);
            let high = high.into_iter().flatten().max().unwrap_or(0);
            Ok(Arc::new(pointers::DataPointers::read(&file, |address| {
                (low..=high).contains(&address)
                    && (code.contains(address) || is_string_start(address))
            })))
        })
    }

    /// Data slots that point at `target`, each with the table it belongs
    /// to ([`pointers::DataPointers::table_of`]) and the code that refers
    /// into that table (an address just past it is the next object's as
    /// often as a loop's end, so it does not count): at most `max_slots` slots and `max_users` references each, with the
    /// totals.
    pub fn pointer_uses(
        &self,
        document: usize,
        target: u64,
        max_slots: usize,
        max_users: usize,
    ) -> Result<PointerUses, ProviderError> {
        let pointers = self.data_pointers(document)?;
        let index = self.code_index(document, &|_, _| {})?;
        let slots: Vec<u64> = pointers.slots_pointing_at(target).collect();
        let uses = slots
            .iter()
            .take(max_slots)
            .map(|&slot| {
                let (start, end) = pointers.table_of(slot);
                // Code that takes the table's address or reads or writes
                // it; a jump or call through a slot is no use of the table.
                let users = || {
                    index
                        .xrefs_to(start, end)
                        .filter(|xref| !xref.kind.is_code())
                };
                TableUse {
                    slot,
                    table: (start, end),
                    users: users().take(max_users).copied().collect(),
                    users_total: users().count(),
                }
            })
            .collect();
        Ok(PointerUses {
            total_slots: slots.len(),
            uses,
            source: pointers.source,
            limitations: pointers.limitations.clone(),
        })
    }

    /// The import tables of one document (see [`imports::ImportTable`]),
    /// read on first call.
    fn import_table(&self, document: usize) -> Result<Arc<imports::ImportTable>, ProviderError> {
        self.cached(&self.import_tables, document, || {
            let file = self.parse(document)?;
            let code = CodeMap::new(&file, self.code_budget(document));
            Ok(Arc::new(imports::ImportTable::read(&file, &code)))
        })
    }

    /// ELF names no library for an import without a version need: say so
    /// once, with the libraries the file needs (any of them may provide
    /// it), rather than guess.
    fn unbound_imports_note(&self, document: usize, thunks: &Thunks) -> Option<String> {
        let unbound = thunks
            .imports()
            .iter()
            .filter(|import| import.library.is_none())
            .count();
        if unbound == 0 {
            return None;
        }
        let needed = self.layout(document).ok()?.needed_libraries;
        // A few names, then a count: a hostile file may need thousands.
        const NAMED: usize = 8;
        let more = match needed.len().saturating_sub(NAMED) {
            0 => String::new(),
            more => format!(" and {more} more (inspect_binary_layout lists them)"),
        };
        let candidates = if needed.is_empty() {
            "the file names no needed library".to_owned()
        } else {
            format!(
                "any of the libraries the file needs may provide them: {}{more}",
                needed
                    .iter()
                    .take(NAMED)
                    .map(|name| crate::ground::text::excerpt(name, 128))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Some(format!(
            "{unbound} imported function(s) are not bound to a library by the file; {candidates}"
        ))
    }

    /// Direct calls to the procedure starting at `entry`.
    pub fn callers(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, ProviderError> {
        let index = self.code_index(document, &|_, _| {})?;
        let extents = self.extents(document)?;
        let thunks = self.thunks(document)?;
        Ok(calls::callers(&index, &extents, &thunks, entry))
    }

    /// Direct calls made by the procedure starting at `entry`.
    pub fn callees(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, FunctionError> {
        let index = self.code_index(document, &|_, _| {})?;
        let extents = self.extents(document)?;
        let procedure = extents
            .index_of_start(entry)
            .ok_or(FunctionError::NotAProcedure(entry))?;
        let thunks = self.thunks(document)?;
        Ok(calls::callees(&index, &extents, &thunks, procedure))
    }

    /// Indirect calls and jumps inside the procedure starting at `entry`.
    pub fn unresolved(
        &self,
        document: usize,
        entry: u64,
    ) -> Result<Vec<(u64, UnresolvedKind)>, FunctionError> {
        let index = self.code_index(document, &|_, _| {})?;
        let extents = self.extents(document)?;
        let procedure = extents
            .index_of_start(entry)
            .ok_or(FunctionError::NotAProcedure(entry))?;
        let (start, end) = extents
            .extent(procedure)
            .ok_or(FunctionError::NotAProcedure(entry))?;
        Ok(index.indirect_in(start, end).to_vec())
    }

    /// References whose target lies in `[start, end)`, sorted by target then
    /// source, at most `limit` of them, with the exact total.
    pub fn xrefs_to(
        &self,
        document: usize,
        start: u64,
        end: u64,
        limit: usize,
    ) -> Result<(Vec<Xref>, usize), ProviderError> {
        let index = self.code_index(document, &|_, _| {})?;
        let total = index.xrefs_to(start, end).count();
        Ok((
            index.xrefs_to(start, end).take(limit).copied().collect(),
            total,
        ))
    }

    /// Bytes of code one document may have analysed: its own size (the
    /// code map trims overlaps, so this only guards against hostile tables).
    fn code_budget(&self, document: usize) -> usize {
        self.ranges.get(document).map_or(0, |range| range.len())
    }

    /// Printable strings of one document's data sections (see
    /// [`StringTable`] for the rules and caps), computed on first call.
    pub fn strings(&self, document: usize) -> Result<Arc<StringTable>, ProviderError> {
        self.cached(&self.string_tables, document, || {
            let file = self.parse(document)?;
            let size = self.ranges.get(document).map_or(0, |range| range.len());
            Ok(Arc::new(strings::string_table(&file, size)))
        })
    }

    /// Summary facts of one document with at most `segment_limit` segments
    /// listed (COFF objects list sections instead: they have no segments).
    pub fn overview(
        &self,
        document: usize,
        segment_limit: usize,
    ) -> Result<Overview, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let file = self.parse(document)?;
        Ok(overview::overview(&file, info, segment_limit))
    }

    /// Layout of one document: segments, sections, imports, exports, needed
    /// libraries, rpaths and loader facts, each list capped at
    /// [`MAX_LAYOUT_ENTRIES`]. Only unparsable headers are an error; tables
    /// that cannot be read are listed in [`Layout::limitations`].
    pub fn layout(&self, document: usize) -> Result<Layout, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let file = self.parse(document)?;
        let mut layout = layout::layout(&file, info);
        if interrupt::interrupted() {
            return Err(ProviderError::Interrupted);
        }
        let table = self.import_table(document)?;
        for import in &mut layout.imports {
            if let Some(found) = table.find(&import.library, &import.name) {
                import.stub = found.stubs.first().copied().map(super::format_address);
                import.slot = found.slots.first().copied().map(super::format_address);
            }
        }
        Ok(layout)
    }

    /// Parses one document's headers again. Parsing is cheap (no symbol
    /// walk) and keeps `NativeImage` free of self-references to its map.
    fn parse(&self, document: usize) -> Result<object::File<'_>, ProviderError> {
        let info = self
            .documents
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?;
        let data = self
            .ranges
            .get(document)
            .and_then(|range| self.map.get(range.clone()))
            .ok_or_else(|| self.unknown_index(document))?;
        object::File::parse(data).map_err(|error| malformed(&self.path, info.format, error))
    }

    /// What one document's cell holds, computed by `init` on first call.
    /// Errors are cached too: they are a pure function of the (immutable)
    /// mapped bytes; interrupted work is not (see [`cell::Cell`]).
    fn cached<T>(
        &self,
        cells: &[Cached<T>],
        document: usize,
        init: impl FnOnce() -> Result<Arc<T>, ProviderError>,
    ) -> Result<Arc<T>, ProviderError> {
        cells
            .get(document)
            .ok_or_else(|| self.unknown_index(document))?
            .get_or_init(init)
    }

    fn unknown_document(&self, name: String) -> ProviderError {
        let available = self
            .documents
            .iter()
            .map(|document| format!("{:?}", document.name))
            .collect::<Vec<_>>()
            .join(", ");
        ProviderError::UnknownDocument { name, available }
    }

    fn unknown_index(&self, document: usize) -> ProviderError {
        self.unknown_document(format!("#{document}"))
    }
}

/// Maps an opened regular, non-empty file read-only.
fn map_file(file: &ConfinedFile, path: &Path) -> Result<Mmap, ProviderError> {
    if file.is_empty() {
        return Err(unsupported(path, "the file is empty"));
    }
    file.map().map_err(|error| ProviderError::Io {
        path: path.display().to_string(),
        reason: error.to_string(),
    })
}

fn unsupported(path: &Path, reason: impl Into<String>) -> ProviderError {
    ProviderError::UnsupportedFormat {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn malformed(path: &Path, format: Format, reason: impl std::fmt::Display) -> ProviderError {
    ProviderError::Malformed {
        path: path.display().to_string(),
        format: format.as_str(),
        reason: reason.to_string(),
    }
}
