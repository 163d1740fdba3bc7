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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::evidence::{Confidence, EvidenceDraft, ProviderIdentity};
    use serde_json::json;

    fn evidence(i: usize) -> Evidence {
        EvidenceDraft {
            operation: "list_procedures".into(),
            subject: None,
            provider: ProviderIdentity {
                id: "native".into(),
                name: "native".into(),
                version: "0".into(),
            },
            parameters: json!({"offset": i}),
            result: json!([]),
            confidence: Confidence::Observed,
            limitations: vec![],
            locations: vec![],
            local_path: None,
        }
        .seal()
        .unwrap()
    }

    #[test]
    fn equal_records_deduplicate_and_a_full_ledger_refuses() {
        let mut ledger = Ledger::default();
        assert_eq!(ledger.record(evidence(0)), Ok(Recorded::Added));
        assert_eq!(ledger.record(evidence(0)), Ok(Recorded::Duplicate));
        for i in 1..MAX_RECORDS {
            ledger.record(evidence(i)).unwrap();
        }
        assert_eq!(ledger.len(), MAX_RECORDS);
        let err = ledger.record(evidence(MAX_RECORDS)).unwrap_err();
        assert!(err.to_string().contains("close_binary"), "{err}");
        // A record already held is still a duplicate, not an error.
        assert_eq!(ledger.record(evidence(5)), Ok(Recorded::Duplicate));
        let ids: Vec<&String> = ledger.records().map(|r| &r.evidence_id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "records are in ID order"
        );
    }
}
