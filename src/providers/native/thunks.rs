//! Import stubs that lead back into the same document.
//!
//! A shared library calls its own exported functions through the PLT
//! (`call f@plt` → `jmp [rip + f@got]`), so that another library could
//! interpose them. Statically the slot's dynamic relocation names the
//! symbol, and when that symbol is defined in this document the stub is a
//! thunk to it. The call graph resolves such calls to the real function,
//! so callers of an exported function are found even though no
//! instruction calls it directly.

use std::collections::HashMap;

use object::{Object, ObjectSymbol, ObjectSymbolTable, RelocationTarget};

use super::code_index::CodeIndex;
use crate::providers::code::{RefKind, UnresolvedKind};

/// How far into a stub the indirect jump may sit (`endbr64` is 4 bytes,
/// `bnd` a 1-byte prefix of the jump itself).
const STUB_JUMP_WINDOW: u64 = 8;

/// Stub address → the procedure it forwards to, for every direct call
/// target whose first instructions jump through a slot relocated to a
/// symbol defined in this document.
#[derive(Debug, Default)]
pub struct Thunks {
    target_of: HashMap<u64, u64>,
    stubs_of: HashMap<u64, Vec<u64>>,
}

impl Thunks {
    pub(super) fn new(file: &object::File<'_>, index: &CodeIndex) -> Thunks {
        let slots = defined_slot_targets(file);
        let mut thunks = Thunks::default();
        if slots.is_empty() {
            return thunks;
        }
        for &stub in index.call_targets() {
            let window_end = stub.saturating_add(STUB_JUMP_WINDOW);
            let jump = index
                .indirect_in(stub, window_end)
                .iter()
                .find(|(_, kind)| *kind == UnresolvedKind::IndirectJump);
            let Some(&(at, _)) = jump else { continue };
            let slot = index
                .xrefs_from(at, at.saturating_add(1))
                .iter()
                .find(|xref| xref.kind == RefKind::Read)
                .map(|xref| xref.to);
            if let Some(&target) = slot.and_then(|slot| slots.get(&slot))
                && target != stub
            {
                thunks.target_of.insert(stub, target);
                thunks.stubs_of.entry(target).or_default().push(stub);
            }
        }
        thunks
    }

    /// Where a call to `address` really goes.
    pub fn resolve(&self, address: u64) -> u64 {
        self.target_of.get(&address).copied().unwrap_or(address)
    }

    /// Stubs that forward to `target`, in discovery (address) order.
    pub fn stubs_of(&self, target: u64) -> &[u64] {
        self.stubs_of.get(&target).map_or(&[], Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.target_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.target_of.is_empty()
    }
}

/// Slot address → address of the defined symbol its dynamic relocation
/// names (ELF `JUMP_SLOT`, `GLOB_DAT`); undefined (imported) symbols are
/// left out.
fn defined_slot_targets(file: &object::File<'_>) -> HashMap<u64, u64> {
    let (Some(relocations), Some(symbols)) =
        (file.dynamic_relocations(), file.dynamic_symbol_table())
    else {
        return HashMap::new();
    };
    relocations
        .filter_map(|(slot, relocation)| {
            let RelocationTarget::Symbol(index) = relocation.target() else {
                return None;
            };
            let symbol = symbols.symbol_by_index(index).ok()?;
            (symbol.is_definition() && symbol.address() != 0).then(|| (slot, symbol.address()))
        })
        .collect()
}
