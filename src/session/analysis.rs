//! Code analysis of the active target through its bound provider.
//!
//! Tools ask the target, never a provider directly, so the binding decides
//! who answers: every question here is routed to the provider the session
//! bound at `open_binary`, and a provider failure is reported as that
//! provider's error — there is no fallback to another provider.

use std::sync::Arc;

use super::{ActiveTarget, ProcedureIndex, SessionError};
use crate::providers::code::{CallEdge, FunctionDossier, UnresolvedKind, Xref};
use crate::providers::native::{Location, Progress};

impl ActiveTarget {
    /// The procedure inventory with its completion index, reporting the
    /// progress of any whole-document sweep it needs.
    pub fn procedure_index_with_progress(
        &self,
        document: usize,
        progress: Progress<'_>,
    ) -> Result<Arc<ProcedureIndex>, SessionError> {
        Ok(self.indexes[document].get_or_build(&self.image, document, progress)?)
    }

    /// Which procedure covers `address`, and which segment maps it.
    pub fn locate(&self, document: usize, address: u64) -> Result<Location, SessionError> {
        Ok(self.image.locate(document, address)?)
    }

    /// The dossier of the procedure starting at `entry`.
    pub fn function(
        &self,
        document: usize,
        entry: u64,
        max_instructions: usize,
    ) -> Result<FunctionDossier, SessionError> {
        Ok(self.image.function(document, entry, max_instructions)?)
    }

    pub fn callers(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, SessionError> {
        Ok(self.image.callers(document, entry)?)
    }

    pub fn callees(&self, document: usize, entry: u64) -> Result<Vec<CallEdge>, SessionError> {
        Ok(self.image.callees(document, entry)?)
    }

    /// Indirect calls and jumps inside the procedure starting at `entry`.
    pub fn unresolved(
        &self,
        document: usize,
        entry: u64,
    ) -> Result<Vec<(u64, UnresolvedKind)>, SessionError> {
        Ok(self.image.unresolved(document, entry)?)
    }

    /// References into `[start, end)`: at most `limit`, and the exact total.
    pub fn xrefs_to(
        &self,
        document: usize,
        start: u64,
        end: u64,
        limit: usize,
    ) -> Result<(Vec<Xref>, usize), SessionError> {
        Ok(self.image.xrefs_to(document, start, end, limit)?)
    }
}
