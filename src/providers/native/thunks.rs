//! Addresses that stand for another procedure: import stubs and slots,
//! and stubs that lead back into the same document.
//!
//! - An import is reached through its stubs (ELF PLT entries, Mach-O
//!   `__stubs`, PE `jmp [IAT]` thunks) or directly through its slots
//!   (`call [IAT]`, `-fno-plt` `call [GOT]`). One of these addresses is the
//!   import's procedure ([`crate::providers::native::imports::Import::address`]
//!   after the thunks found here are added); the others are its aliases.
//! - A shared library calls its own exported functions through the PLT
//!   (`call f@plt` → `jmp [rip + f@got]`), so that another library could
//!   interpose them. When the slot's dynamic relocation names a symbol
//!   defined in this document, the stub is an alias of that function.
//!
//! The call graph resolves every alias to the procedure it stands for, so
//! callers of an import or of an exported function are found whichever
//! address an instruction names.

use std::collections::HashMap;

use super::code_index::CodeIndex;
use super::code_map::CodeMap;
use super::imports::plt::{ENDBR32, ENDBR64};
use super::imports::{Import, ImportTable};
use crate::providers::code::{Arch, CallKind, RefKind, UnresolvedKind};

/// How far into a stub the slot access may start (`endbr64` is 4 bytes;
/// AArch64 `bti c; adrp; ldr` puts the load at +8).
const STUB_ACCESS_WINDOW: u64 = 12;
/// How far into a stub its indirect jump may sit (AArch64 `bti c; adrp;
/// ldr; add; br` puts it at +16).
const STUB_JUMP_WINDOW: u64 = 20;

/// Alias → the procedure it stands for, and the imports with their final
/// stubs and slots.
#[derive(Debug, Default)]
pub struct Thunks {
    target_of: HashMap<u64, u64>,
    aliases_of: HashMap<u64, Vec<u64>>,
    imports: Vec<Import>,
    pub limitations: Vec<String>,
}

impl Thunks {
    pub(super) fn new(code: &CodeMap<'_>, index: &CodeIndex, table: &ImportTable) -> Thunks {
        let slot_import = table.slot_owner();
        let mut imports = table.imports.clone();
        let defined = &table.defined_slots;
        let mut thunks = Thunks {
            limitations: table.limitations.clone(),
            ..Thunks::default()
        };
        // Call targets whose first instructions jump through a slot.
        for &stub in index.call_targets() {
            let Some(slot) = slot_jumped_through(code, index, stub) else {
                continue;
            };
            if let Some(&position) = slot_import.get(&slot) {
                imports[position].stubs.push(stub);
            } else if let Some(&target) = defined.get(&slot)
                && target != stub
            {
                thunks.alias(stub, target);
            }
        }
        for import in &mut imports {
            import.stubs.sort_unstable();
            import.stubs.dedup();
        }
        // An import the file does not type is a function when code reaches
        // it through a stub or calls or jumps through its slot; otherwise
        // it may be data, and it is no procedure.
        imports.retain(|import| {
            import.known_function
                || !import.stubs.is_empty()
                || import.slots.iter().any(|&slot| {
                    index
                        .xrefs_to(slot, slot.saturating_add(1))
                        .any(|xref| CallKind::of(xref.kind).is_some())
                })
        });
        for import in &imports {
            let Some(address) = import.address() else {
                continue;
            };
            for &alias in import.stubs.iter().chain(&import.slots) {
                if alias != address && !thunks.target_of.contains_key(&alias) {
                    thunks.alias(alias, address);
                }
            }
        }
        thunks.imports = imports;
        thunks
    }

    fn alias(&mut self, alias: u64, target: u64) {
        self.target_of.insert(alias, target);
        self.aliases_of.entry(target).or_default().push(alias);
    }

    /// The procedure `address` stands for (itself when it is no alias).
    pub fn resolve(&self, address: u64) -> u64 {
        self.target_of.get(&address).copied().unwrap_or(address)
    }

    /// Addresses that stand for `target`, in discovery order.
    pub fn aliases_of(&self, target: u64) -> &[u64] {
        self.aliases_of.get(&target).map_or(&[], Vec::as_slice)
    }

    /// Every imported function, with the stubs found in code added.
    pub fn imports(&self) -> &[Import] {
        &self.imports
    }

    /// The import one of whose stubs or slots is `address`.
    pub fn import_at(&self, address: u64) -> Option<&Import> {
        self.imports
            .iter()
            .find(|import| import.stubs.contains(&address) || import.slots.contains(&address))
    }

    pub fn len(&self) -> usize {
        self.target_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.target_of.is_empty()
    }
}

/// The slot a stub at `stub` jumps through: x86 `jmp [slot]` as its first
/// instruction (after an optional `endbr64`/`endbr32`); AArch64 a load of
/// the slot followed by an indirect branch, with no call between.
fn slot_jumped_through(code: &CodeMap<'_>, index: &CodeIndex, stub: u64) -> Option<u64> {
    let window = |length: u64| (stub, stub.saturating_add(length));
    match index.arch? {
        Arch::X86 | Arch::X86_64 => {
            let first = match code.region_of(stub)?.bytes_from(stub).get(..4) {
                Some(prefix) if prefix == ENDBR64 || prefix == ENDBR32 => stub + 4,
                _ => stub,
            };
            index
                .xrefs_from(first, first.saturating_add(1))
                .iter()
                .find(|xref| xref.kind == RefKind::Jump)
                .map(|xref| xref.to)
        }
        Arch::Aarch64 => {
            let (start, end) = window(STUB_ACCESS_WINDOW);
            let load = index
                .xrefs_from(start, end)
                .iter()
                .find(|xref| xref.kind == RefKind::Read)?;
            let (start, end) = window(STUB_JUMP_WINDOW);
            let jump = index
                .indirect_in(start, end)
                .iter()
                .find(|(at, _)| *at > load.from)?;
            let no_call_between = index
                .xrefs_from(stub, jump.0)
                .iter()
                .all(|xref| !xref.kind.is_code());
            (jump.1 == UnresolvedKind::IndirectJump && no_call_between).then_some(load.to)
        }
    }
}
