//! The session's ledger: Evidence records and residual-unknown revisions,
//! bounded together, deduplicating, ordered by ID.
//!
//! One store holds both because they share fate: an unknown's revisions cite
//! Evidence IDs, bundles carry both, and `close_binary` clears both. The
//! limits therefore count them together.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::evidence::Evidence;
use super::unknowns::{Registry, UnknownRevision};

/// Most entries (Evidence records plus unknown revisions) a session holds.
pub const MAX_RECORDS: usize = 10_000;
/// Most JSON bytes those entries may take together.
pub const MAX_BYTES: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    Added,
    /// An equal record was already held.
    Duplicate,
}

/// Which limit a ledger operation would exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Records,
    Bytes,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    #[error(
        "the session ledger would exceed its limit of {} ({held} held, {adding} more requested); \
         save the investigation with export_evidence_bundle, then close_binary to clear the \
         ledger, or start a new session",
        match limit { Limit::Records => format!("{MAX_RECORDS} entries (Evidence records and unknown revisions together)"), Limit::Bytes => format!("{MAX_BYTES} bytes of JSON") }
    )]
    Full {
        limit: Limit,
        held: usize,
        adding: usize,
    },
    #[error(
        "integrity error: {id} is already held with different content; a record with this ID \
         was altered, so neither copy is replaced"
    )]
    Integrity { id: String },
}

#[derive(Debug, Default, Clone)]
pub struct Ledger {
    records: BTreeMap<String, Arc<Evidence>>,
    unknowns: Registry,
    bytes: usize,
}

fn json_size<T: serde::Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

impl Ledger {
    /// Holds `evidence` unless an equal record is already held. Equality
    /// ignores the local path (the same observation of a copy elsewhere is
    /// the same record); the same ID with any other difference is an
    /// integrity error.
    pub fn record(&mut self, evidence: Evidence) -> Result<Recorded, LedgerError> {
        if let Some(held) = self.records.get(&evidence.evidence_id) {
            let mut masked = evidence.clone();
            masked.body.local_path = held.body.local_path.clone();
            return if **held == masked {
                Ok(Recorded::Duplicate)
            } else {
                Err(LedgerError::Integrity {
                    id: evidence.evidence_id,
                })
            };
        }
        let size = json_size(&evidence);
        self.reserve(1, size)?;
        self.bytes += size;
        self.records
            .insert(evidence.evidence_id.clone(), Arc::new(evidence));
        Ok(Recorded::Added)
    }

    /// Fails unless `entries` more entries of `bytes` total fit.
    pub fn reserve(&self, entries: usize, bytes: usize) -> Result<(), LedgerError> {
        if self.entries() + entries > MAX_RECORDS {
            return Err(LedgerError::Full {
                limit: Limit::Records,
                held: self.entries(),
                adding: entries,
            });
        }
        if self.bytes + bytes > MAX_BYTES {
            return Err(LedgerError::Full {
                limit: Limit::Bytes,
                held: self.bytes,
                adding: bytes,
            });
        }
        Ok(())
    }

    /// Appends one unknown revision. It must extend its chain by exactly one
    /// (or equal a revision already held: a duplicate); anything else is an
    /// integrity error. Reference checks are the registry's caller's job.
    pub fn add_revision(&mut self, revision: UnknownRevision) -> Result<Recorded, LedgerError> {
        if let Some(held) = self
            .unknowns
            .revision(&revision.unknown_id, revision.revision)
        {
            return if **held == revision {
                Ok(Recorded::Duplicate)
            } else {
                Err(LedgerError::Integrity {
                    id: format!("{} revision {}", revision.unknown_id, revision.revision),
                })
            };
        }
        let head = self.unknowns.head(&revision.unknown_id);
        let extends = match head {
            None => revision.revision == 1 && revision.previous_revision_digest.is_none(),
            Some(h) => {
                revision.revision == h.revision + 1
                    && revision.previous_revision_digest.as_deref() == Some(&h.revision_digest)
            }
        };
        if !extends {
            return Err(LedgerError::Integrity {
                id: format!(
                    "{} revision {} (it does not continue the held chain)",
                    revision.unknown_id, revision.revision
                ),
            });
        }
        let size = json_size(&revision);
        self.reserve(1, size)?;
        self.bytes += size;
        self.unknowns.push(revision);
        Ok(Recorded::Added)
    }

    /// Records a mutation's Evidence and the revision it produced, both or
    /// neither.
    pub fn commit_mutation(
        &mut self,
        evidence: Evidence,
        revision: UnknownRevision,
    ) -> Result<(), LedgerError> {
        let new_record = !self.records.contains_key(&evidence.evidence_id);
        let bytes = json_size(&revision) + if new_record { json_size(&evidence) } else { 0 };
        self.reserve(1 + usize::from(new_record), bytes)?;
        let mut next = self.clone();
        next.record(evidence)?;
        next.add_revision(revision)?;
        *self = next;
        Ok(())
    }

    /// Evidence records held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.unknowns.is_empty()
    }

    /// Entries counted against [`MAX_RECORDS`]: records and unknown revisions.
    pub fn entries(&self) -> usize {
        self.records.len() + self.unknowns.revision_count()
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

    /// The residual-unknown registry.
    pub fn unknowns(&self) -> &Registry {
        &self.unknowns
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
        assert!(
            matches!(
                err,
                LedgerError::Full {
                    limit: Limit::Records,
                    ..
                }
            ),
            "{err}"
        );
        let message = err.to_string();
        assert!(message.contains("10000 entries"), "{message}");
        assert!(message.contains("export_evidence_bundle"), "{message}");
        // A record already held is still a duplicate, not an error.
        assert_eq!(ledger.record(evidence(5)), Ok(Recorded::Duplicate));
        let ids: Vec<&String> = ledger.records().map(|r| &r.evidence_id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "records are in ID order"
        );
    }

    #[test]
    fn same_id_different_content_is_an_integrity_error() {
        let mut ledger = Ledger::default();
        let original = evidence(1);
        ledger.record(original.clone()).unwrap();
        let mut forged = evidence(2);
        forged.evidence_id = original.evidence_id.clone();
        let err = ledger.record(forged).unwrap_err();
        assert_eq!(
            err,
            LedgerError::Integrity {
                id: original.evidence_id.clone()
            }
        );
        assert_eq!(**ledger.get(&original.evidence_id).unwrap(), original);
        // The same observation of a copy elsewhere is a duplicate.
        let mut elsewhere = original.clone();
        elsewhere.body.local_path = Some("/copy/of/it".into());
        assert_eq!(ledger.record(elsewhere), Ok(Recorded::Duplicate));
        let mut weaker = original.clone();
        weaker.body.confidence = Confidence::Inferred;
        assert!(matches!(
            ledger.record(weaker),
            Err(LedgerError::Integrity { .. })
        ));
    }

    #[test]
    fn the_byte_limit_names_itself() {
        let mut ledger = Ledger::default();
        let mut big = evidence(0);
        big.body.result = json!("x".repeat(MAX_BYTES));
        let big = big.body.seal().unwrap();
        let err = ledger.record(big).unwrap_err();
        assert!(matches!(
            err,
            LedgerError::Full {
                limit: Limit::Bytes,
                ..
            }
        ));
        assert!(err.to_string().contains("bytes of JSON"), "{err}");
        assert!(ledger.is_empty());
    }
}
