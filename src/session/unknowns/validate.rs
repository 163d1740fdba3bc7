//! The rules a revision's state must satisfy against the ledger, and the
//! verified-resolution rule.

use std::collections::{BTreeSet, HashSet};

use super::{
    Disposition, MAX_EVIDENCE_REFS, MAX_PROBES, MAX_RELATIONSHIPS, RelationKind, Status,
    UnknownRevision, UnknownState, is_unknown_id,
};
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::evidence::{UNKNOWN_REGISTRY_PROVIDER, authority, is_evidence_id};
use crate::session::ledger::{Ledger, LedgerError};

const MAX_RATIONALE_CHARS: usize = 2000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownError {
    #[error("{0}")]
    Invalid(String),
    #[error("residual unknown {0} does not exist")]
    NotFound(String),
    #[error("residual unknown {0} already exists (same question, domain and scope)")]
    AlreadyExists(String),
    #[error(
        "revision conflict on {id}: expected revision {expected}, but the head is revision {}",
        head.revision
    )]
    RevisionConflict {
        id: String,
        expected: u64,
        head: Box<UnknownRevision>,
    },
    #[error("invalid transition: {0}")]
    InvalidTransition(String),
    #[error("Evidence {0} is not in the session ledger")]
    EvidenceNotFound(String),
    #[error("integrity error: {0}")]
    Integrity(String),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

pub(crate) fn chars_within(field: &str, value: &str, max: usize) -> Result<(), UnknownError> {
    let n = value.trim().chars().count();
    if n == 0 || n > max {
        return Err(UnknownError::Invalid(format!(
            "{field} must be 1-{max} characters (it has {n} after trimming)"
        )));
    }
    Ok(())
}

/// Evidence references: well formed, unique, bounded, held.
fn evidence_refs(ledger: &Ledger, field: &str, ids: &[String]) -> Result<(), UnknownError> {
    if ids.len() > MAX_EVIDENCE_REFS {
        return Err(UnknownError::Invalid(format!(
            "{field} lists {} IDs; at most {MAX_EVIDENCE_REFS}",
            ids.len()
        )));
    }
    let mut seen = HashSet::new();
    for id in ids {
        if !is_evidence_id(id) {
            return Err(UnknownError::Invalid(format!(
                "{field}: `{}` is not an Evidence ID (ev_ and 64 lowercase hex digits)",
                excerpt(id, EXCERPT_CHARS)
            )));
        }
        if !seen.insert(id) {
            return Err(UnknownError::Invalid(format!("{field} lists {id} twice")));
        }
        if ledger.get(id).is_none() {
            return Err(UnknownError::EvidenceNotFound(id.clone()));
        }
    }
    Ok(())
}

/// Checks `state` as the next state of unknown `id`, depends-on cycles
/// through it included.
pub(crate) fn validate_state(
    ledger: &Ledger,
    id: &str,
    state: &UnknownState,
) -> Result<(), UnknownError> {
    validate_fields(ledger, id, state)?;
    if let Some(path) = depends_on_cycle(ledger, id, state) {
        return Err(cycle_error(&path));
    }
    Ok(())
}

fn cycle_error(path: &[String]) -> UnknownError {
    UnknownError::InvalidTransition(format!("depends-on cycle: {}", path.join(" -> ")))
}

/// Every rule of [`validate_state`] except the cycle check, which an import
/// runs once over all heads ([`heads_acyclic`]) instead of once per head.
pub(crate) fn validate_fields(
    ledger: &Ledger,
    id: &str,
    state: &UnknownState,
) -> Result<(), UnknownError> {
    evidence_refs(
        ledger,
        "supporting_evidence_ids",
        &state.supporting_evidence_ids,
    )?;
    evidence_refs(
        ledger,
        "contradicting_evidence_ids",
        &state.contradicting_evidence_ids,
    )?;
    if let Some(both) = state
        .supporting_evidence_ids
        .iter()
        .find(|e| state.contradicting_evidence_ids.contains(e))
    {
        return Err(UnknownError::Invalid(format!(
            "{both} is both supporting and contradicting; the lists must be disjoint"
        )));
    }
    if state.recommended_probes.len() > MAX_PROBES {
        return Err(UnknownError::Invalid(format!(
            "at most {MAX_PROBES} recommended_probes"
        )));
    }
    for probe in &state.recommended_probes {
        chars_within("a probe's operation", &probe.operation, 100)?;
        chars_within("a probe's rationale", &probe.rationale, 1000)?;
    }
    relationships(ledger, id, state)?;
    match (&state.status, &state.resolution) {
        (Status::Resolved, None) => {
            return Err(UnknownError::InvalidTransition(
                "status resolved needs a resolution".into(),
            ));
        }
        (status, Some(_)) if *status != Status::Resolved => {
            return Err(UnknownError::InvalidTransition(
                "a resolution is only allowed with status resolved".into(),
            ));
        }
        (Status::Contradicted, _) if state.contradicting_evidence_ids.is_empty() => {
            return Err(UnknownError::InvalidTransition(
                "status contradicted needs contradicting_evidence_ids".into(),
            ));
        }
        _ => {}
    }
    if let Some(resolution) = &state.resolution {
        chars_within(
            "resolution.rationale",
            &resolution.rationale,
            MAX_RATIONALE_CHARS,
        )?;
        evidence_refs(ledger, "resolution.evidence_ids", &resolution.evidence_ids)?;
        if resolution.disposition == Disposition::Verified {
            let reasons = verified_resolution_failures(ledger, state);
            if !reasons.is_empty() {
                return Err(UnknownError::InvalidTransition(format!(
                    "a verified resolution needs qualifying supporting Evidence: {}",
                    reasons.join("; ")
                )));
            }
        }
    }
    Ok(())
}

fn relationships(ledger: &Ledger, id: &str, state: &UnknownState) -> Result<(), UnknownError> {
    if state.relationships.len() > MAX_RELATIONSHIPS {
        return Err(UnknownError::Invalid(format!(
            "at most {MAX_RELATIONSHIPS} relationships"
        )));
    }
    let mut seen = BTreeSet::new();
    for rel in &state.relationships {
        if !is_unknown_id(&rel.unknown_id) {
            return Err(UnknownError::Invalid(format!(
                "`{}` is not an unknown ID (unk_ and 64 lowercase hex digits)",
                excerpt(&rel.unknown_id, EXCERPT_CHARS)
            )));
        }
        if rel.unknown_id == id {
            return Err(UnknownError::Invalid(
                "an unknown cannot relate to itself".into(),
            ));
        }
        if !seen.insert(rel) {
            return Err(UnknownError::Invalid(format!(
                "relationship to {} is listed twice",
                rel.unknown_id
            )));
        }
        if !ledger.unknowns().contains(&rel.unknown_id) {
            return Err(UnknownError::NotFound(rel.unknown_id.clone()));
        }
    }
    Ok(())
}

fn depends_on(rels: &[super::Relationship]) -> impl Iterator<Item = &str> {
    rels.iter()
        .filter(|r| r.kind == RelationKind::DependsOn)
        .map(|r| r.unknown_id.as_str())
}

/// A depends-on path from `id` back to itself once `id` has `state`. The
/// held heads are acyclic, so any cycle reachable from `id` runs through it.
fn depends_on_cycle(ledger: &Ledger, id: &str, state: &UnknownState) -> Option<Vec<String>> {
    find_cycle([id], |node| {
        if node == id {
            depends_on(&state.relationships).collect()
        } else {
            head_depends_on(ledger, node)
        }
    })
}

/// Fails when the current heads' depends-on links form a cycle.
pub(crate) fn heads_acyclic(ledger: &Ledger) -> Result<(), UnknownError> {
    let starts = ledger.unknowns().heads().map(|h| h.unknown_id.as_str());
    match find_cycle(starts, |node| head_depends_on(ledger, node)) {
        Some(path) => Err(cycle_error(&path)),
        None => Ok(()),
    }
}

fn head_depends_on<'a>(ledger: &'a Ledger, node: &str) -> Vec<&'a str> {
    ledger
        .unknowns()
        .head(node)
        .map(|h| depends_on(&h.state.relationships).collect())
        .unwrap_or_default()
}

/// A cycle reachable from `starts`, as the path that closes it: one
/// iterative depth-first walk that visits each node and edge once, so a
/// long chain costs linear time (copying the path per step made it
/// quadratic, and an import checking every head cubic).
fn find_cycle<'a>(
    starts: impl IntoIterator<Item = &'a str>,
    edges: impl Fn(&str) -> Vec<&'a str>,
) -> Option<Vec<String>> {
    let mut done: HashSet<&str> = HashSet::new();
    for start in starts {
        if done.contains(start) {
            continue;
        }
        let mut on_path: HashSet<&str> = HashSet::from([start]);
        let mut stack = vec![(start, edges(start), 0usize)];
        while let Some((node, next_edges, index)) = stack.last_mut() {
            let node = *node;
            let Some(&next) = next_edges.get(*index) else {
                on_path.remove(node);
                done.insert(node);
                stack.pop();
                continue;
            };
            *index += 1;
            if on_path.contains(next) {
                let mut cycle: Vec<String> = stack
                    .iter()
                    .map(|frame| frame.0)
                    .skip_while(|n| *n != next)
                    .map(str::to_string)
                    .collect();
                cycle.push(next.to_string());
                return Some(cycle);
            }
            if !done.contains(next) {
                on_path.insert(next);
                stack.push((next, edges(next), 0));
            }
        }
    }
    None
}

/// Why `state` is not a verified resolution (empty when it is): resolved
/// with disposition verified, no contradicting Evidence left, and at least
/// one resolution Evidence ID that is also supporting, is not a registry
/// mutation record, and meets the required authority (exactly) and
/// confidence (rank at least the required one).
pub(crate) fn verified_resolution_failures(ledger: &Ledger, state: &UnknownState) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(resolution) = state
        .resolution
        .as_ref()
        .filter(|_| state.status == Status::Resolved)
    else {
        return vec!["the unknown is not resolved".into()];
    };
    if resolution.disposition != Disposition::Verified {
        reasons.push(format!(
            "the disposition is {}, not verified",
            wire(resolution.disposition)
        ));
    }
    if !state.contradicting_evidence_ids.is_empty() {
        reasons.push(format!(
            "{} contradicting Evidence ID(s) remain",
            state.contradicting_evidence_ids.len()
        ));
    }
    let mut candidate_reasons = Vec::new();
    let mut qualified = false;
    for id in &resolution.evidence_ids {
        if !state.supporting_evidence_ids.contains(id) {
            candidate_reasons.push(format!("{id} is not a supporting Evidence ID"));
            continue;
        }
        let Some(record) = ledger.get(id) else {
            candidate_reasons.push(format!("{id} is not in the ledger"));
            continue;
        };
        if record.body.provider.id == UNKNOWN_REGISTRY_PROVIDER {
            candidate_reasons.push(format!("{id} is a registry mutation record"));
            continue;
        }
        if let Some(required) = state.required_authority
            && authority(record) != required
        {
            candidate_reasons.push(format!(
                "{id} has authority {}, not the required {}",
                wire(authority(record)),
                wire(required)
            ));
            continue;
        }
        if let Some(required) = state.required_confidence
            && record.body.confidence.rank() < required.rank()
        {
            candidate_reasons.push(format!(
                "{id} is {}, below the required {}",
                wire(record.body.confidence),
                wire(required)
            ));
            continue;
        }
        qualified = true;
    }
    if !qualified {
        if resolution.evidence_ids.is_empty() {
            reasons.push("the resolution cites no Evidence".into());
        }
        reasons.push(format!(
            "no resolution Evidence qualifies{}",
            if candidate_reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", candidate_reasons.join("; "))
            }
        ));
    }
    reasons
}

/// The wire spelling of a unit enum value.
fn wire<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
