//! The session's Evidence ledger: bounded, deduplicating, ordered by ID.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::evidence::Evidence;

pub const MAX_RECORDS: usize = 10_000;
pub const MAX_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Added,
    /// An equal record was already held.
    Duplicate,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error(
        "the Evidence ledger is full ({limit}); close_binary clears it, or start a new session"
    )]
    Full { limit: String },
}

#[derive(Debug, Default)]
pub struct Ledger {
    records: BTreeMap<String, Arc<Evidence>>,
    bytes: usize,
}

impl Ledger {
    pub fn record(&mut self, evidence: Evidence) -> Result<Recorded, LedgerError> {
        if self.records.contains_key(&evidence.evidence_id) {
            return Ok(Recorded::Duplicate);
        }
        let size = serde_json::to_string(&evidence).map_or(0, |s| s.len());
        if self.records.len() >= MAX_RECORDS {
            return Err(LedgerError::Full {
                limit: format!("{MAX_RECORDS} records"),
            });
        }
        if self.bytes + size > MAX_BYTES {
            return Err(LedgerError::Full {
                limit: format!("{MAX_BYTES} bytes"),
            });
        }
        self.bytes += size;
        self.records
            .insert(evidence.evidence_id.clone(), Arc::new(evidence));
        Ok(Recorded::Added)
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Records in evidence-ID order.
    pub fn records(&self) -> impl Iterator<Item = &Arc<Evidence>> {
        self.records.values()
    }

    pub fn get(&self, id: &str) -> Option<&Arc<Evidence>> {
        self.records.get(id)
    }
}
