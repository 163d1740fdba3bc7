//! Code analysis of the active target through its bound provider.
//!
//! Tools ask the target, never a provider directly, so the binding decides
//! who answers: every question here goes to the provider bound at
//! `open_binary`, and a provider failure is that provider's typed error —
//! there is no fallback to another provider. File facts (segments, bytes,
//! strings) always come from the built-in reader of the file itself.

use std::sync::{Arc, MutexGuard};

use super::{ActiveTarget, Backend, ProcedureIndex, Radare2Backend, SessionError};
use crate::providers::Inventory;
use crate::providers::code::{CallEdge, CallKind, FunctionDossier, UnresolvedKind, Xref};
use crate::providers::native::{
    Extents, FunctionError, Location, MAX_FUNCTION_INSTRUCTIONS, PointerUses, Progress,
};
use crate::providers::radare2::Radare2Session;

impl ActiveTarget {
    /// The procedure inventory with its completion index, reporting the
    /// progress of any whole-document sweep it needs.
    pub fn procedure_index_with_progress(
        &self,
        document: usize,
        progress: Progress<'_>,
    ) -> Result<Arc<ProcedureIndex>, SessionError> {
        let slot = &self.indexes[document];
        match &self.backend {
            Backend::Native => {
                slot.get_or_build(|| Ok(self.image.inventory_with_progress(document, progress)?))
            }
            Backend::Radare2(r2) => {
                slot.get_or_build(|| Ok(self.radare2_inventory(r2, document)?.0))
            }
        }
    }

    /// radare2's inventory and extents, loaded once.
    fn radare2_inventory(
        &self,
        r2: &Radare2Backend,
        document: usize,
    ) -> Result<(Arc<Inventory>, Arc<Extents>), SessionError> {
        let mut cached = r2.inventory.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(loaded) = cached.as_ref() {
            return Ok(loaded.clone());
        }
        let inventory = Arc::new(lock(r2).procedures()?);
        let extents = Arc::new(self.image.extents_of(document, &inventory)?);
        *cached = Some((inventory.clone(), extents.clone()));
        Ok((inventory, extents))
    }

    /// Entry of the procedure whose extent covers `address`, if any: the
    /// cheap lookup for loops over references (no segment facts, so the
    /// file's headers are not parsed again per address).
    pub fn containing_procedure(
        &self,
        document: usize,
        address: u64,
    ) -> Result<Option<u64>, SessionError> {
        let extents = match &self.backend {
            Backend::Native => self.image.extents(document)?,
            Backend::Radare2(r2) => self.radare2_inventory(r2, document)?.1,
        };
        Ok(extents.containing_start(address))
    }

    /// Which procedure covers `address`, and which segment maps it.
    pub fn locate(&self, document: usize, address: u64) -> Result<Location, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.locate(document, address)?),
            Backend::Radare2(r2) => {
                let (_, extents) = self.radare2_inventory(r2, document)?;
                Ok(self.image.locate_in(document, address, &extents)?)
            }
        }
    }

    /// The dossier of the procedure starting at `entry`.
    pub fn function(
        &self,
        document: usize,
        entry: u64,
        max_instructions: usize,
    ) -> Result<FunctionDossier, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.function(document, entry, max_instructions)?),
            Backend::Radare2(r2) => Ok(lock(r2).analyze_function(entry, max_instructions)?),
        }
    }

    /// How many procedures a graph search (`build_call_path`, the caller
    /// walk of `trace_feature`) may expand. Native queries are index
    /// lookups; each radare2 query is a round trip to its process (and a
    /// function analysis), so searches over radare2 are kept smaller to
    /// stay in seconds.
    pub fn max_graph_expansions(&self) -> usize {
        match &self.backend {
            Backend::Native => 50_000,
            Backend::Radare2(_) => 1_000,
        }
    }

    /// Where a direct call to `address` really goes: through an import stub
    /// that forwards into this document, the function it forwards to.
    pub fn call_target(&self, document: usize, address: u64) -> Result<u64, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.thunks(document)?.resolve(address)),
            Backend::Radare2(_) => Ok(address),
        }
    }

    /// Other addresses that stand for the procedure starting at `entry`:
    /// an import's other stubs and its slots, stubs that forward to it.
    pub fn aliases(&self, document: usize, entry: u64) -> Result<Vec<u64>, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.thunks(document)?.aliases_of(entry).to_vec()),
            Backend::Radare2(_) => Ok(Vec::new()),
        }
    }

    /// Data slots that point at `target` and the code using their tables
    /// (see [`crate::providers::native::NativeImage::pointer_uses`]).
    /// `None` under radare2: its analysis has no such index, and answering
    /// from the native one would be a fallback.
    pub fn pointer_uses(
        &self,
        document: usize,
        target: u64,
        max_slots: usize,
        max_users: usize,
    ) -> Result<Option<PointerUses>, SessionError> {
        match &self.backend {
            Backend::Native => Ok(Some(
                self.image
                    .pointer_uses(document, target, max_slots, max_users)?,
            )),
            Backend::Radare2(_) => Ok(None),
        }
    }

    /// Direct calls to the procedure starting at `entry`.
    pub fn callers(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.callers(document, entry)?),
            Backend::Radare2(r2) => {
                let (_, extents) = self.radare2_inventory(r2, document)?;
                let sites = lock(r2).callers(entry)?;
                Ok(sites
                    .into_iter()
                    .map(|site| CallEdge {
                        caller: extents.containing_start(site.at),
                        at: site.at,
                        callee: entry,
                        kind: CallKind::Call,
                    })
                    .collect())
            }
        }
    }

    /// Direct calls made by the procedure starting at `entry`, to procedure
    /// starts (the same rule for every provider, so callers and callees stay
    /// symmetric).
    pub fn callees(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.callees(document, entry)?),
            Backend::Radare2(r2) => {
                let (_, extents) = self.radare2_inventory(r2, document)?;
                if extents.index_of_start(entry).is_none() {
                    return Err(FunctionError::NotAProcedure(entry).into());
                }
                let sites = lock(r2).callees(entry)?;
                Ok(sites
                    .into_iter()
                    .filter(|site| extents.index_of_start(site.target).is_some())
                    .map(|site| CallEdge {
                        caller: Some(entry),
                        at: site.at,
                        callee: site.target,
                        kind: CallKind::Call,
                    })
                    .collect())
            }
        }
    }

    /// Indirect calls and jumps inside the procedure starting at `entry`.
    pub fn unresolved(
        &self,
        document: usize,
        entry: u64,
    ) -> Result<Vec<(u64, UnresolvedKind)>, SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.unresolved(document, entry)?),
            Backend::Radare2(r2) => Ok(lock(r2)
                .analyze_function(entry, MAX_FUNCTION_INSTRUCTIONS)?
                .unresolved
                .into_iter()
                .map(|u| (u.at, u.kind))
                .collect()),
        }
    }

    /// References into `[start, end)`: at most `limit`, and the exact total.
    /// radare2 answers references to `start` itself.
    pub fn xrefs_to(
        &self,
        document: usize,
        start: u64,
        end: u64,
        limit: usize,
    ) -> Result<(Vec<Xref>, usize), SessionError> {
        match &self.backend {
            Backend::Native => Ok(self.image.xrefs_to(document, start, end, limit)?),
            Backend::Radare2(r2) => {
                let mut all = lock(r2).xrefs_to(start, usize::MAX)?.xrefs;
                let total = all.len();
                all.truncate(limit);
                Ok((all, total))
            }
        }
    }
}

fn lock(r2: &Radare2Backend) -> MutexGuard<'_, Radare2Session> {
    r2.session.lock().unwrap_or_else(|p| p.into_inner())
}
