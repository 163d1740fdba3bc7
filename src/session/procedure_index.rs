//! A document's procedure inventory together with its completion key index.
//!
//! The index is inventory state, not a completion cache: it is built when the
//! inventory loads, carries the inventory's generation, and is rebuilt if an
//! inventory with another generation replaces it. Completion still reads the
//! live session on every request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::matching::CandidateIndex;
use crate::providers::demangle::demangle;
use crate::providers::{Inventory, Procedure, SharedName, format_address};

static GENERATION: AtomicU64 = AtomicU64::new(1);

pub struct ProcedureIndex {
    /// Distinguishes inventory loads; the candidates below belong to this one.
    pub generation: u64,
    pub inventory: Arc<Inventory>,
    /// Every address, plus each name that identifies exactly one address.
    /// A truncated inventory cannot prove uniqueness, so it offers no names.
    pub candidates: CandidateIndex,
    /// Raw name → demangled form, for the names that demangle; built on the
    /// first name search.
    demangled: OnceLock<HashMap<SharedName, Box<str>>>,
}

impl ProcedureIndex {
    pub fn build(inventory: Arc<Inventory>) -> ProcedureIndex {
        let generation = GENERATION.fetch_add(1, Ordering::Relaxed);
        // Names go into the index shared with the inventory, not copied.
        let mut names: HashMap<&SharedName, u32> =
            HashMap::with_capacity(inventory.procedures.len());
        if !inventory.truncated {
            for p in &inventory.procedures {
                for name in p.name.iter().chain(&p.aliases) {
                    *names.entry(name).or_default() += 1;
                }
            }
        }
        let addresses = inventory
            .procedures
            .iter()
            .map(|p| SharedName::from(format_address(p.address)));
        let unique_names = names
            .into_iter()
            .filter(|&(_, count)| count == 1)
            .map(|(name, _)| name.clone());
        let candidates = CandidateIndex::build(addresses.chain(unique_names));
        ProcedureIndex {
            generation,
            inventory,
            candidates,
            demangled: OnceLock::new(),
        }
    }

    /// The procedure starting exactly at `address`.
    pub fn procedure_at(&self, address: u64) -> Option<&Procedure> {
        let procedures = &self.inventory.procedures;
        let index = procedures
            .binary_search_by_key(&address, |p| p.address)
            .ok()?;
        procedures.get(index)
    }

    /// The demangled form of a raw procedure name, if it has one.
    pub fn demangled(&self, raw: &str) -> Option<&str> {
        self.demangled
            .get_or_init(|| {
                self.inventory
                    .procedures
                    .iter()
                    .flat_map(|p| p.name.iter().chain(&p.aliases))
                    .filter_map(|n| demangle(n).map(|d| (n.clone(), d.into_boxed_str())))
                    .collect()
            })
            .get(raw)
            .map(|d| &**d)
    }
}

/// Lazily filled, at most once per inventory generation.
#[derive(Default)]
pub(super) struct Slot(Mutex<Option<Arc<ProcedureIndex>>>);

impl Slot {
    /// The index of the inventory `load` returns (providers cache their
    /// inventories, so an unchanged one is recognised by identity).
    pub(super) fn get_or_build<E>(
        &self,
        load: impl FnOnce() -> Result<Arc<Inventory>, E>,
    ) -> Result<Arc<ProcedureIndex>, E> {
        let inventory = load()?;
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = slot.as_ref()
            && Arc::ptr_eq(&index.inventory, &inventory)
        {
            return Ok(index.clone());
        }
        let index = Arc::new(ProcedureIndex::build(inventory));
        *slot = Some(index.clone());
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Procedure;

    fn procedure(address: u64, name: Option<&str>, aliases: &[&str]) -> Procedure {
        Procedure {
            address,
            name: name.map(Into::into),
            aliases: aliases.iter().map(|a| (*a).into()).collect(),
            size: None,
            sources: crate::providers::Sources::of(crate::providers::Source::Symbol),
            library: None,
            part_of: None,
        }
    }

    fn inventory(truncated: bool) -> Arc<Inventory> {
        Arc::new(Inventory {
            procedures: vec![
                procedure(0x1000, Some("main"), &["_start_alias"]),
                procedure(0x2000, Some("dup"), &[]),
                procedure(0x3000, Some("dup"), &[]),
                procedure(0x4000, None, &[]),
            ],
            truncated,
            non_utf8_names: 0,
            limitations: Vec::new(),
        })
    }

    #[test]
    fn offers_every_address_and_only_unique_names() {
        let index = ProcedureIndex::build(inventory(false));
        let all = index.candidates.query("");
        assert_eq!(
            all.values,
            [
                "0x1000",
                "0x2000",
                "0x3000",
                "0x4000",
                "_start_alias",
                "main"
            ]
        );
    }

    #[test]
    fn a_truncated_inventory_offers_addresses_but_no_names() {
        let index = ProcedureIndex::build(inventory(true));
        assert_eq!(
            index.candidates.query("").values,
            ["0x1000", "0x2000", "0x3000", "0x4000"]
        );
    }

    #[test]
    fn each_build_has_its_own_generation() {
        let a = ProcedureIndex::build(inventory(false));
        let b = ProcedureIndex::build(inventory(false));
        assert_ne!(a.generation, b.generation);
    }
}
