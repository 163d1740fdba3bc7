//! Registry mutations on the session: record, update (compare-and-swap) and
//! verification. Each mutation records its own Evidence, attributed to the
//! registry provider, and the revision lists that Evidence's ID.

use std::sync::Arc;

use serde_json::{Value, json};

use super::validate::{chars_within, validate_state, verified_resolution_failures};
use super::{
    MAX_DOMAIN_CHARS, MAX_QUESTION_CHARS, Status, UnknownError, UnknownRevision, UnknownState,
    unknown_id,
};
use crate::session::evidence::{
    Confidence, Evidence, EvidenceDraft, ProviderIdentity, UNKNOWN_REGISTRY_PROVIDER,
};
use crate::session::{Session, SessionError};

/// What `record_unknown` asks for; the status follows from it (contradicted
/// when contradicting Evidence is given, else open).
#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub question: String,
    pub domain: String,
    /// Everything but the status and resolution, which a new unknown lacks.
    pub state: UnknownState,
}

/// A full-state replacement, applied only if the head is `expected_revision`.
#[derive(Debug, Clone)]
pub struct UpdateRequest {
    pub unknown_id: String,
    pub expected_revision: u64,
    pub state: UnknownState,
}

/// The answer of `verify_unknown_resolution`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verification {
    /// The head is resolved (with a resolution, as every resolved head is).
    pub valid: bool,
    /// The resolution is verified and its supporting Evidence qualifies.
    pub truth_verified: bool,
    /// Why `truth_verified` is false (empty when it is true).
    pub reasons: Vec<String>,
    pub unknown: Arc<UnknownRevision>,
}

fn registry_identity() -> ProviderIdentity {
    ProviderIdentity {
        id: UNKNOWN_REGISTRY_PROVIDER.to_string(),
        name: "rea residual-unknown registry".to_string(),
        version: "1".to_string(),
    }
}

/// The revision as the mutation Evidence states it: everything but the
/// digest and the mutation IDs, which depend on that Evidence.
fn mutation_result(draft: &UnknownRevision) -> Value {
    let mut value = serde_json::to_value(draft).unwrap_or(Value::Null);
    if let Value::Object(members) = &mut value {
        members.remove("revision_digest");
        members.remove("mutation_evidence_ids");
    }
    value
}

impl Session {
    /// The sha256 an unknown recorded now is scoped to: the active target's
    /// code view, or, for an archive (which has none), the archive file.
    fn scope_digest(&self) -> Option<String> {
        match (self.target(), self.artifact()) {
            (Some(t), _) => Some(t.image.sha256().to_string()),
            (None, Some(a)) => a.file_sha256().map(str::to_string),
            (None, None) => None,
        }
    }

    /// The mutation's Evidence draft. Its subject is the unknown's scope:
    /// the active target when that is the artifact the unknown is about,
    /// otherwise none (with a limitation saying why).
    fn mutation_draft(
        &self,
        scope: Option<&str>,
        operation: &str,
        parameters: Value,
        result: Value,
    ) -> EvidenceDraft {
        let active = self.scope_digest();
        let here = scope.is_some() && scope == active.as_deref();
        // The active target's code view when it has one, else the artifact
        // as a whole (an archive has no code view).
        let target = match (here, self.target(), self.artifact(), scope) {
            (false, ..) => None,
            (true, Some(t), ..) => Some((t.subject(), t.display_path())),
            (true, None, Some(a), Some(sha256)) => Some((a.subject(sha256), a.display.clone())),
            _ => None,
        };
        let limitations = match (scope, &target) {
            (None, _) => vec![
                "no target was open when the unknown was recorded: it is not scoped to an \
                 artifact identity"
                    .to_string(),
            ],
            (Some(sha256), None) => vec![format!(
                "the unknown is about the artifact with sha256 {sha256}, which is not the \
                 active target"
            )],
            (Some(_), Some(_)) => Vec::new(),
        };
        EvidenceDraft {
            operation: operation.to_string(),
            subject: target.as_ref().map(|(subject, _)| subject.clone()),
            provider: registry_identity(),
            parameters,
            result,
            confidence: Confidence::Derived,
            limitations,
            locations: Vec::new(),
            local_path: target.map(|(_, path)| path),
        }
    }

    /// Seals the mutation Evidence and the revision, and commits both.
    fn commit(
        &mut self,
        draft_revision: UnknownRevision,
        earlier_mutations: &[String],
        operation: &str,
        parameters: Value,
    ) -> Result<(Arc<UnknownRevision>, Evidence), SessionError> {
        let evidence = self
            .mutation_draft(
                draft_revision.scope_digest.as_deref(),
                operation,
                parameters,
                mutation_result(&draft_revision),
            )
            .seal()
            .map_err(|e| SessionError::Evidence(e.to_string()))?;
        let mut mutations = earlier_mutations.to_vec();
        mutations.push(evidence.evidence_id.clone());
        mutations.sort();
        mutations.dedup();
        let mut revision = draft_revision;
        revision.mutation_evidence_ids = mutations;
        revision.revision_digest = revision.digest();
        let id = revision.unknown_id.clone();
        self.ledger
            .commit_mutation(evidence.clone(), revision)
            .map_err(UnknownError::from)?;
        let head = self
            .ledger
            .unknowns()
            .head(&id)
            .cloned()
            .ok_or(UnknownError::NotFound(id))?;
        Ok((head, evidence))
    }

    /// Records a new unknown scoped to the active target (or to nothing).
    pub fn record_unknown(
        &mut self,
        request: RecordRequest,
    ) -> Result<(Arc<UnknownRevision>, Evidence), SessionError> {
        chars_within("question", &request.question, MAX_QUESTION_CHARS)?;
        chars_within("domain", &request.domain, MAX_DOMAIN_CHARS)?;
        let question = request.question.trim().to_string();
        let domain = request.domain.trim().to_string();
        let scope = self.scope_digest();
        let id = unknown_id(&domain, &question, scope.as_deref());
        if self.ledger.unknowns().contains(&id) {
            return Err(UnknownError::AlreadyExists(id).into());
        }
        let mut state = request.state;
        state.status = if state.contradicting_evidence_ids.is_empty() {
            Status::Open
        } else {
            Status::Contradicted
        };
        state.resolution = None;
        validate_state(&self.ledger, &id, &state)?;
        let draft = UnknownRevision::seal(
            (id.clone(), 1, None, scope),
            question,
            domain,
            state,
            vec![],
        );
        self.commit(draft, &[], "record_unknown", json!({"unknown_id": id}))
    }

    /// Replaces the state of an unknown if its head is `expected_revision`.
    pub fn update_unknown(
        &mut self,
        request: UpdateRequest,
    ) -> Result<(Arc<UnknownRevision>, Evidence), SessionError> {
        let head = self
            .ledger
            .unknowns()
            .head(&request.unknown_id)
            .cloned()
            .ok_or_else(|| UnknownError::NotFound(request.unknown_id.clone()))?;
        if head.revision != request.expected_revision {
            return Err(UnknownError::RevisionConflict {
                id: request.unknown_id,
                expected: request.expected_revision,
                head: Box::new((*head).clone()),
            }
            .into());
        }
        validate_state(&self.ledger, &head.unknown_id, &request.state)?;
        let draft = UnknownRevision::seal(
            (
                head.unknown_id.clone(),
                head.revision + 1,
                Some(head.revision_digest.clone()),
                head.scope_digest.clone(),
            ),
            head.question.clone(),
            head.domain.clone(),
            request.state,
            vec![],
        );
        self.commit(
            draft,
            &head.mutation_evidence_ids,
            "update_unknown",
            json!({"unknown_id": head.unknown_id, "expected_revision": request.expected_revision}),
        )
    }

    /// Checks the head of `id` against the verified-resolution rule.
    pub fn verify_unknown(&self, id: &str) -> Result<Verification, UnknownError> {
        let head = self
            .ledger
            .unknowns()
            .head(id)
            .cloned()
            .ok_or_else(|| UnknownError::NotFound(id.to_string()))?;
        let state = head.state.clone();
        let reasons = verified_resolution_failures(&self.ledger, &state);
        Ok(Verification {
            valid: head.state.status == Status::Resolved && head.state.resolution.is_some(),
            truth_verified: reasons.is_empty(),
            reasons,
            unknown: head,
        })
    }
}
