//! Imported functions and where the code reaches them.
//!
//! A stripped binary still names every function it imports, because the
//! loader needs the names: ELF dynamic relocations on GOT slots, the PE
//! import and delay-load directories, and the Mach-O indirect symbol table.
//! This module reads those tables into one [`ImportTable`]: per imported
//! function its name, the library when the file says which, the *slots*
//! the loader fills with its address, and the *stubs* in dedicated stub
//! sections (ELF `.plt*`, Mach-O `__stubs`/`__auth_stubs`) that jump
//! through a slot. Stubs elsewhere (PE `jmp [IAT]` thunks) are found later
//! from the code index, in `thunks.rs`.
//!
//! Everything is bounded by the bytes of the tables themselves and by
//! [`MAX_IMPORT_ENTRIES`]; a table that cannot be read is a limitation,
//! never an error, and no name read from the file enters a message.

mod elf;
mod macho;
mod pe;
pub(super) mod plt;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use object::BinaryFormat;

use super::code_map::CodeMap;
use crate::providers::interrupt::Checkpoint;

/// Most slot and stub entries one table reads; beyond it the rest are
/// left out and a limitation says so. Real binaries stay far below it
/// (librustc_driver has about 5,000 imports).
pub const MAX_IMPORT_ENTRIES: usize = 500_000;

/// Most bytes of distinct names one import table copies out of the file.
///
/// Real import tables name a few thousand functions (tens of KB to a few
/// MB of names), but names may overlap in the file: 400,000 distinct 2 KiB
/// suffixes of a few hundred 4 KiB runs fit in 800 KB of string table and
/// would cost 1.2 GB once copied. Reaching the budget stops reading like
/// [`MAX_IMPORT_ENTRIES`] does, with a limitation that says so.
pub const MAX_IMPORT_NAME_BYTES: usize = 64 << 20;

/// One imported function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The symbol name as the file spells it (Mach-O's leading `_` kept);
    /// `library#ordinal` for a PE import by ordinal. Shared, never
    /// copied: the inventory's procedures borrow it (400,000 imports of
    /// 2 KiB names are 800 MB per copy).
    pub name: Arc<str>,
    /// The library the file binds it to (ELF version need, PE directory,
    /// Mach-O two-level namespace ordinal); `None` when the file does not
    /// say. One allocation per distinct library, shared by its imports
    /// and their procedures.
    pub library: Option<Arc<str>>,
    /// Code that jumps through one of the slots, sorted.
    pub stubs: Vec<u64>,
    /// Pointer slots the loader fills with the function's address, sorted.
    pub slots: Vec<u64>,
    /// The file says the symbol is a function (ELF `STT_FUNC`). PE and
    /// Mach-O tables do not say; there an import with neither a stub nor a
    /// call through its slot may be data (`_kCFRunLoopDefaultMode`).
    pub known_function: bool,
}

impl Import {
    /// The address that stands for the import: its first stub, or its
    /// first slot when calls go through the slot.
    pub fn address(&self) -> Option<u64> {
        self.stubs.first().or(self.slots.first()).copied()
    }
}

/// The imported functions of one document, sorted by name then library.
#[derive(Debug, Default)]
pub struct ImportTable {
    pub imports: Vec<Import>,
    /// Slot → address of the symbol defined in this document that its
    /// dynamic relocation names (ELF): a PLT stub jumping through such a
    /// slot leads back into the document (see `thunks.rs`).
    pub defined_slots: HashMap<u64, u64>,
    /// Sentences about tables that could not be read completely.
    pub limitations: Vec<String>,
}

impl ImportTable {
    /// Reads every import table of `file`; `code` is where stub sections
    /// are decoded.
    pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>) -> ImportTable {
        let mut builder = Builder::default();
        match file.format() {
            BinaryFormat::Elf => elf::read(file, code, &mut builder),
            BinaryFormat::Pe => pe::read(file, &mut builder),
            BinaryFormat::MachO => macho::read(file, &mut builder),
            _ => {}
        }
        builder.finish()
    }

    /// The import a layout lists as `(library, name)`: the same name, and
    /// the same library unless either side names none (ELF layouts list
    /// no library). PE ordinals are `#N` in the layout, `library#N` here.
    pub fn find(&self, library: &str, name: &str) -> Option<&Import> {
        let ordinal = name
            .strip_prefix('#')
            .map(|ordinal| format!("{library}#{ordinal}"));
        let name = ordinal.as_deref().unwrap_or(name);
        let first = self.imports.partition_point(|import| &*import.name < name);
        self.imports[first..]
            .iter()
            .take_while(|import| &*import.name == name)
            .find(|import| {
                library.is_empty() || import.library.as_deref().is_none_or(|own| own == library)
            })
    }

    /// Index of the import with this slot.
    pub fn slot_owner(&self) -> HashMap<u64, usize> {
        let mut owner = HashMap::new();
        for (index, import) in self.imports.iter().enumerate() {
            for &slot in &import.slots {
                owner.entry(slot).or_insert(index);
            }
        }
        owner
    }
}

/// What the format readers add to: entries keyed by `(name, library)`, so a
/// function reached through several slots or stubs is one import. Names
/// and libraries are interned: each distinct text is one allocation,
/// however many entries, slots and stubs name it.
#[derive(Debug, Default)]
pub(super) struct Builder {
    imports: Vec<Import>,
    by_key: HashMap<(Arc<str>, Option<Arc<str>>), usize>,
    /// Slot → its import, for stubs found by decoding (ELF PLTs).
    slot_owner: HashMap<u64, usize>,
    texts: HashSet<Arc<str>>,
    /// Bytes of `texts`, against [`MAX_IMPORT_NAME_BYTES`].
    text_bytes: usize,
    defined_slots: HashMap<u64, u64>,
    entries: usize,
    full: bool,
    limitations: Vec<String>,
    /// Asks whether the call was interrupted; once it was, every reader
    /// stops as if the cap were reached (the table is then discarded).
    checkpoint: Checkpoint,
    interrupted: bool,
}

impl Builder {
    /// Whether another entry may be added; the first refusal notes the cap.
    fn room(&mut self) -> bool {
        if self.checkpoint.stop() {
            self.interrupted = true;
            return false;
        }
        if self.full {
            return false;
        }
        if self.entries < MAX_IMPORT_ENTRIES {
            self.entries += 1;
            return true;
        }
        self.stop(format!(
            "imports: reading stopped after {MAX_IMPORT_ENTRIES} slot and stub entries"
        ));
        false
    }

    /// Ends reading with `sentence` (once).
    fn stop(&mut self, sentence: String) {
        if !self.full {
            self.full = true;
            self.limitations.push(sentence);
        }
    }

    /// Whether `text` may be interned: known already, or within the name
    /// budget (the first refusal ends reading and says so).
    fn name_room(&mut self, text: &str) -> bool {
        if self.full {
            return false;
        }
        if self.texts.contains(text) {
            return true;
        }
        if self.text_bytes.saturating_add(text.len()) <= MAX_IMPORT_NAME_BYTES {
            return true;
        }
        self.stop(format!(
            "imports: reading stopped after {} MiB of distinct names",
            MAX_IMPORT_NAME_BYTES >> 20
        ));
        false
    }

    /// The one shared copy of `text`.
    pub(super) fn intern(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.texts.get(text) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.text_bytes = self.text_bytes.saturating_add(text.len());
        self.texts.insert(shared.clone());
        shared
    }

    /// Records that the loader fills `slot` with `name`'s address.
    pub(super) fn slot(&mut self, name: &str, library: Option<Arc<str>>, slot: u64) {
        self.slot_of(name, library, slot, false);
    }

    /// [`Builder::slot`] for a symbol the file types as a function.
    pub(super) fn function_slot(&mut self, name: &str, library: Option<Arc<str>>, slot: u64) {
        self.slot_of(name, library, slot, true);
    }

    fn slot_of(&mut self, name: &str, library: Option<Arc<str>>, slot: u64, function: bool) {
        if name.is_empty() || !self.name_room(name) || !self.room() {
            return;
        }
        let index = self.entry(name, library);
        self.slot_owner.entry(slot).or_insert(index);
        let import = &mut self.imports[index];
        import.slots.push(slot);
        import.known_function |= function;
    }

    /// Records a stub at `stub` for `name` (formats that say so directly).
    pub(super) fn stub(&mut self, name: &str, library: Option<Arc<str>>, stub: u64) {
        if name.is_empty() || !self.name_room(name) || !self.room() {
            return;
        }
        let index = self.entry(name, library);
        self.imports[index].stubs.push(stub);
    }

    /// Records a stub that jumps through `slot`, when the slot is an
    /// import's; returns whether it was.
    pub(super) fn stub_through(&mut self, slot: u64, stub: u64) -> bool {
        let Some(&index) = self.slot_owner.get(&slot) else {
            return false;
        };
        if self.room() {
            self.imports[index].stubs.push(stub);
        }
        true
    }

    /// Records that the loader fills `slot` with the address of a symbol
    /// this document defines at `target`.
    pub(super) fn defined_slot(&mut self, slot: u64, target: u64) {
        if self.room() {
            self.defined_slots.insert(slot, target);
        }
    }

    /// Counts an entry that could not be used (an unreadable name), so
    /// hostile tables full of them are bounded too.
    pub(super) fn skip(&mut self) {
        self.room();
    }

    /// Whether the entry cap has been reached: readers stop walking.
    pub(super) fn is_full(&self) -> bool {
        self.full || self.entries >= MAX_IMPORT_ENTRIES || self.interrupted
    }

    pub(super) fn note(&mut self, sentence: String) {
        self.limitations.push(sentence);
    }

    /// The index of the import `(name, library)`, added if new.
    fn entry(&mut self, name: &str, library: Option<Arc<str>>) -> usize {
        let key = (self.intern(name), library);
        if let Some(&index) = self.by_key.get(&key) {
            return index;
        }
        let index = self.imports.len();
        self.imports.push(Import {
            name: key.0.clone(),
            library: key.1.clone(),
            stubs: Vec::new(),
            slots: Vec::new(),
            known_function: false,
        });
        self.by_key.insert(key, index);
        index
    }

    fn finish(self) -> ImportTable {
        let mut imports = self.imports;
        for import in &mut imports {
            import.stubs.sort_unstable();
            import.stubs.dedup();
            import.slots.sort_unstable();
            import.slots.dedup();
        }
        imports.sort_unstable_by(|a, b| (&a.name, &a.library).cmp(&(&b.name, &b.library)));
        ImportTable {
            imports,
            defined_slots: self.defined_slots,
            limitations: self.limitations,
        }
    }
}

/// A name read from the file as text: valid UTF-8 only (never repaired),
/// at most 4 KiB, so a hostile string table cannot make names huge.
/// Borrowed from the file: the builder keeps one shared copy.
pub(super) fn name_text(bytes: &[u8]) -> Option<&str> {
    const MAX_NAME_BYTES: usize = 4096;
    if bytes.is_empty() || bytes.len() > MAX_NAME_BYTES {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}
