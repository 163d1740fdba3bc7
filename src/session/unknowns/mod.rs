//! Residual unknowns: what the investigation does not know yet, as revision
//! chains with digests.
//!
//! An unknown's ID is the content address of its question: `unk_` + sha256
//! of the canonical `{domain, question (whitespace collapsed), scope_digest}`,
//! where the scope is the sha256 of the target active when it was recorded
//! (or null). Every mutation appends a revision whose `revision_digest`
//! covers the whole revision (except that digest) and chains through
//! `previous_revision_digest`, and records its own Evidence, whose ID the
//! revision lists. Revisions live in the session ledger, counted against its
//! limits, and travel in evidence bundles.

mod ops;
#[cfg(test)]
mod tests;
mod validate;

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::evidence::{Authority, Confidence};
use crate::ground::canonical::to_canonical;
use crate::ground::digest::hex;

pub use ops::{RecordRequest, UpdateRequest, Verification};
pub use validate::UnknownError;
pub(crate) use validate::{heads_acyclic, validate_fields};

/// The version of the revision record format.
pub const REGISTRY_VERSION: u32 = 1;
pub const MAX_QUESTION_CHARS: usize = 1000;
pub const MAX_DOMAIN_CHARS: usize = 100;
pub const MAX_EVIDENCE_REFS: usize = 100;
pub const MAX_PROBES: usize = 20;
pub const MAX_RELATIONSHIPS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Open,
    Investigating,
    Blocked,
    Contradicted,
    Resolved,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

/// A probe that might settle the unknown: which operation, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// A tool or operation name (1-100 characters).
    pub operation: String,
    /// Why it would help (1-1000 characters).
    pub rationale: String,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RelationKind {
    DependsOn,
    RelatedTo,
    Contradicts,
}

/// A link to another unknown, which must exist.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Relationship {
    #[serde(rename = "type")]
    pub kind: RelationKind,
    pub unknown_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// Settled by Evidence (at least one ID, which must qualify).
    Verified,
    /// The question no longer applies.
    Withdrawn,
    /// Not this investigation's to answer.
    OutOfScope,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    pub disposition: Disposition,
    /// Why (1-2000 characters).
    pub rationale: String,
    /// Evidence that settles it (verified needs at least one).
    #[serde(default)]
    pub evidence_ids: Vec<String>,
}

/// The mutable part of an unknown: what `update_unknown` replaces whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownState {
    pub status: Status,
    pub severity: Severity,
    pub supporting_evidence_ids: Vec<String>,
    pub contradicting_evidence_ids: Vec<String>,
    pub required_authority: Option<Authority>,
    pub required_confidence: Option<Confidence>,
    pub recommended_probes: Vec<Probe>,
    pub relationships: Vec<Relationship>,
    pub resolution: Option<Resolution>,
}

/// One revision of an unknown, exactly as it is stored and exported.
/// Parse untrusted revisions with [`UnknownRevision::from_value`]: the
/// flattened state rules out serde's `deny_unknown_fields`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownRevision {
    pub registry_version: u32,
    pub unknown_id: String,
    pub revision: u64,
    pub previous_revision_digest: Option<String>,
    /// sha256 of the canonical revision without this member.
    pub revision_digest: String,
    pub scope_digest: Option<String>,
    pub question: String,
    pub domain: String,
    #[serde(flatten)]
    pub state: UnknownState,
    /// The Evidence of every mutation so far, sorted and unique.
    pub mutation_evidence_ids: Vec<String>,
}

/// The members a serialized revision has, no more.
const REVISION_MEMBERS: [&str; 18] = [
    "registry_version",
    "unknown_id",
    "revision",
    "previous_revision_digest",
    "revision_digest",
    "scope_digest",
    "question",
    "domain",
    "status",
    "severity",
    "supporting_evidence_ids",
    "contradicting_evidence_ids",
    "required_authority",
    "required_confidence",
    "recommended_probes",
    "relationships",
    "resolution",
    "mutation_evidence_ids",
];

/// Collapses runs of whitespace to one space and trims.
pub fn normalize_question(question: &str) -> String {
    question.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `unk_` + sha256 of the canonical identity projection.
pub fn unknown_id(domain: &str, question: &str, scope_digest: Option<&str>) -> String {
    let projection = json!({
        "domain": domain,
        "question": normalize_question(question),
        "scope_digest": scope_digest,
    });
    // Strings and null only: canonicalization cannot fail.
    let canonical = to_canonical(&projection).unwrap_or_default();
    format!("unk_{}", hex(&Sha256::digest(canonical.as_bytes())))
}

/// Whether `s` has the shape of an unknown ID.
pub fn is_unknown_id(s: &str) -> bool {
    s.strip_prefix("unk_")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

impl UnknownRevision {
    /// Builds a sealed revision: the digest is computed here.
    pub(crate) fn seal(
        header: (String, u64, Option<String>, Option<String>),
        question: String,
        domain: String,
        state: UnknownState,
        mutation_evidence_ids: Vec<String>,
    ) -> UnknownRevision {
        let (unknown_id, revision, previous_revision_digest, scope_digest) = header;
        let mut sealed = UnknownRevision {
            registry_version: REGISTRY_VERSION,
            unknown_id,
            revision,
            previous_revision_digest,
            revision_digest: String::new(),
            scope_digest,
            question,
            domain,
            state,
            mutation_evidence_ids,
        };
        sealed.revision_digest = sealed.digest();
        sealed
    }

    /// Parses a revision from untrusted JSON, refusing unknown members
    /// (nested records refuse theirs through `deny_unknown_fields`).
    pub fn from_value(value: Value) -> Result<UnknownRevision, String> {
        let Value::Object(members) = &value else {
            return Err("a revision must be a JSON object".into());
        };
        if members
            .keys()
            .any(|k| !REVISION_MEMBERS.contains(&k.as_str()))
        {
            return Err(format!(
                "a member is not one of {}",
                REVISION_MEMBERS.join(", ")
            ));
        }
        serde_json::from_value(value).map_err(|e| crate::session::evidence::schema_error(&e))
    }

    /// sha256 of the canonical revision without `revision_digest`.
    pub fn digest(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(members) = &mut value {
            members.remove("revision_digest");
        }
        // No floats anywhere in a revision: canonicalization cannot fail.
        let canonical = to_canonical(&value).unwrap_or_default();
        hex(&Sha256::digest(canonical.as_bytes()))
    }

    /// Checks what a revision says about itself: format version, ID shape
    /// and identity, digest, and the revision/previous-digest pairing.
    pub fn verify_self(&self) -> Result<(), UnknownError> {
        // The ID is quoted only when it has the shape of one: the
        // revision may come from an untrusted bundle.
        let named = if is_unknown_id(&self.unknown_id) {
            self.unknown_id.as_str()
        } else {
            "an unknown with a malformed ID,"
        };
        let fail = |why: String| {
            Err(UnknownError::Integrity(format!(
                "{named} revision {}: {why}",
                self.revision
            )))
        };
        if self.registry_version != REGISTRY_VERSION {
            return fail(format!(
                "registry_version {} is not supported (this build reads {REGISTRY_VERSION})",
                self.registry_version
            ));
        }
        let expected = unknown_id(&self.domain, &self.question, self.scope_digest.as_deref());
        if self.unknown_id != expected {
            return fail("the ID is not the address of its question, domain and scope".into());
        }
        if self.revision_digest != self.digest() {
            return fail("the revision digest does not match its content".into());
        }
        if (self.revision == 1) != self.previous_revision_digest.is_none() || self.revision == 0 {
            return fail(
                "only revision 1 (and every revision is at least 1) lacks a previous digest".into(),
            );
        }
        if self.mutation_evidence_ids.is_empty() {
            return fail("a revision lists at least one mutation Evidence ID".into());
        }
        Ok(())
    }
}

/// Every unknown's revision chain, by ID.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    chains: BTreeMap<String, Vec<Arc<UnknownRevision>>>,
    revisions: usize,
}

impl Registry {
    pub fn head(&self, id: &str) -> Option<&Arc<UnknownRevision>> {
        self.chains.get(id).and_then(|c| c.last())
    }

    pub fn revision(&self, id: &str, revision: u64) -> Option<&Arc<UnknownRevision>> {
        let index = usize::try_from(revision.checked_sub(1)?).ok()?;
        self.chains.get(id)?.get(index)
    }

    /// Current heads in unknown-ID order.
    pub fn heads(&self) -> impl Iterator<Item = &Arc<UnknownRevision>> {
        self.chains.values().filter_map(|c| c.last())
    }

    /// Every revision, sorted by (ID, revision).
    pub fn all_revisions(&self) -> impl Iterator<Item = &Arc<UnknownRevision>> {
        self.chains.values().flatten()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.chains.contains_key(id)
    }

    pub fn revision_count(&self) -> usize {
        self.revisions
    }

    pub fn is_empty(&self) -> bool {
        self.chains.is_empty()
    }

    /// Appends without checks; the ledger checks chaining and limits.
    pub(crate) fn push(&mut self, revision: UnknownRevision) {
        self.revisions += 1;
        self.chains
            .entry(revision.unknown_id.clone())
            .or_default()
            .push(Arc::new(revision));
    }
}
