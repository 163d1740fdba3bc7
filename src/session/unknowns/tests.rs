//! Registry rules: identity, CAS, invariants, relationships, verification,
//! and the shared ledger limit.

use serde_json::json;

use super::*;
use crate::session::evidence::{EvidenceDraft, ProviderIdentity, Subject};
use crate::session::ledger::MAX_RECORDS;
use crate::session::{Session, SessionError};

fn observe(session: &mut Session, n: u64, confidence: Confidence) -> String {
    session
        .record(EvidenceDraft {
            operation: "list_procedures".into(),
            subject: Some(Subject {
                sha256: "cd".repeat(32),
                format: "elf".into(),
                architecture: Some("x86_64".into()),
            }),
            provider: ProviderIdentity {
                id: "native".into(),
                name: "native".into(),
                version: "0".into(),
            },
            parameters: json!({"offset": n}),
            result: json!([n]),
            confidence,
            limitations: vec![],
            locations: vec![],
            local_path: None,
        })
        .unwrap()
        .evidence_id
}

fn state(status: Status) -> UnknownState {
    UnknownState {
        status,
        severity: Severity::High,
        supporting_evidence_ids: vec![],
        contradicting_evidence_ids: vec![],
        required_authority: None,
        required_confidence: None,
        recommended_probes: vec![],
        relationships: vec![],
        resolution: None,
    }
}

fn record(session: &mut Session, question: &str, s: UnknownState) -> Arc<UnknownRevision> {
    session
        .record_unknown(RecordRequest {
            question: question.into(),
            domain: "net".into(),
            state: s,
        })
        .unwrap()
        .0
}

fn unknown_err(
    result: Result<(Arc<UnknownRevision>, crate::session::Evidence), SessionError>,
) -> UnknownError {
    match result {
        Err(SessionError::Unknown(e)) => e,
        other => panic!("expected an unknown error, got {other:?}"),
    }
}

fn update(
    session: &mut Session,
    id: &str,
    expected: u64,
    s: UnknownState,
) -> Result<(Arc<UnknownRevision>, crate::session::Evidence), SessionError> {
    session.update_unknown(UpdateRequest {
        unknown_id: id.into(),
        expected_revision: expected,
        state: s,
    })
}

#[test]
fn identity_collapses_whitespace_and_covers_scope() {
    let a = unknown_id("net", "  Who  calls\n connect? ", None);
    assert_eq!(a, unknown_id("net", "Who calls connect?", None));
    assert_ne!(a, unknown_id("fs", "Who calls connect?", None));
    assert_ne!(
        a,
        unknown_id("net", "Who calls connect?", Some(&"ab".repeat(32)))
    );
    assert!(is_unknown_id(&a));
}

#[test]
fn record_creates_a_sealed_revision_with_its_mutation_evidence() {
    let mut session = Session::default();
    let (head, evidence) = session
        .record_unknown(RecordRequest {
            question: "Who calls connect?".into(),
            domain: "net".into(),
            state: state(Status::Resolved),
        })
        .unwrap();
    assert_eq!(head.revision, 1);
    assert_eq!(head.state.status, Status::Open, "record decides the status");
    assert_eq!(
        head.mutation_evidence_ids,
        vec![evidence.evidence_id.clone()]
    );
    assert_eq!(
        evidence.body.provider.id,
        crate::session::evidence::UNKNOWN_REGISTRY_PROVIDER
    );
    assert_eq!(evidence.body.operation, "record_unknown");
    assert_eq!(evidence.body.confidence, Confidence::Derived);
    assert!(head.verify_self().is_ok());
    assert!(session.ledger().get(&evidence.evidence_id).is_some());
    assert_eq!(session.ledger().entries(), 2);
    let again = session.record_unknown(RecordRequest {
        question: "Who  calls connect?".into(),
        domain: "net".into(),
        state: state(Status::Open),
    });
    assert!(matches!(unknown_err(again), UnknownError::AlreadyExists(_)));
    // Tampering with a field breaks the digest.
    let mut forged = (*head).clone();
    forged.state.severity = Severity::Low;
    assert!(matches!(
        forged.verify_self(),
        Err(UnknownError::Integrity(_))
    ));
}

#[test]
fn updates_are_compare_and_swap_and_chain() {
    let mut session = Session::default();
    let head = record(&mut session, "q", state(Status::Open));
    let (second, _) = update(
        &mut session,
        &head.unknown_id,
        1,
        state(Status::Investigating),
    )
    .unwrap();
    assert_eq!(second.revision, 2);
    assert_eq!(
        second.previous_revision_digest.as_deref(),
        Some(head.revision_digest.as_str())
    );
    assert_eq!(second.mutation_evidence_ids.len(), 2);
    assert!(second.mutation_evidence_ids.windows(2).all(|w| w[0] < w[1]));
    let stale = update(&mut session, &head.unknown_id, 1, state(Status::Blocked));
    match unknown_err(stale) {
        UnknownError::RevisionConflict { head, expected, .. } => {
            assert_eq!(expected, 1);
            assert_eq!(*head, *second);
        }
        other => panic!("{other:?}"),
    }
    let missing = update(
        &mut session,
        &unknown_id("x", "y", None),
        1,
        state(Status::Open),
    );
    assert!(matches!(unknown_err(missing), UnknownError::NotFound(_)));
}

#[test]
fn invariants_and_evidence_references_are_enforced() {
    let mut session = Session::default();
    let ev = observe(&mut session, 1, Confidence::Observed);
    let head = record(&mut session, "q", state(Status::Open));
    let id = head.unknown_id.clone();
    let resolved_without = update(&mut session, &id, 1, state(Status::Resolved));
    assert!(matches!(
        unknown_err(resolved_without),
        UnknownError::InvalidTransition(_)
    ));
    let contradicted = update(&mut session, &id, 1, state(Status::Contradicted));
    assert!(matches!(
        unknown_err(contradicted),
        UnknownError::InvalidTransition(_)
    ));
    let mut open_with_resolution = state(Status::Open);
    open_with_resolution.resolution = Some(Resolution {
        disposition: Disposition::Withdrawn,
        rationale: "moot".into(),
        evidence_ids: vec![],
    });
    assert!(update(&mut session, &id, 1, open_with_resolution).is_err());
    let mut absent = state(Status::Open);
    absent.supporting_evidence_ids = vec![format!("ev_{}", "0".repeat(64))];
    assert!(matches!(
        unknown_err(update(&mut session, &id, 1, absent)),
        UnknownError::EvidenceNotFound(_)
    ));
    let mut overlapping = state(Status::Open);
    overlapping.supporting_evidence_ids = vec![ev.clone()];
    overlapping.contradicting_evidence_ids = vec![ev.clone()];
    assert!(matches!(
        unknown_err(update(&mut session, &id, 1, overlapping)),
        UnknownError::Invalid(_)
    ));
    let mut twice = state(Status::Open);
    twice.supporting_evidence_ids = vec![ev.clone(), ev.clone()];
    assert!(update(&mut session, &id, 1, twice).is_err());
    let mut probes = state(Status::Open);
    probes.recommended_probes = (0..=MAX_PROBES)
        .map(|i| Probe {
            operation: format!("op{i}"),
            rationale: "r".into(),
        })
        .collect();
    assert!(update(&mut session, &id, 1, probes).is_err());
    // Nothing above changed the head.
    assert_eq!(session.ledger().unknowns().head(&id).unwrap().revision, 1);
    let mut withdrawn = state(Status::Resolved);
    withdrawn.resolution = Some(Resolution {
        disposition: Disposition::Withdrawn,
        rationale: "no longer relevant".into(),
        evidence_ids: vec![],
    });
    assert!(update(&mut session, &id, 1, withdrawn).is_ok());
}

#[test]
fn relationships_must_exist_and_depends_on_may_not_cycle() {
    let mut session = Session::default();
    let a = record(&mut session, "a", state(Status::Open))
        .unknown_id
        .clone();
    let mut on_a = state(Status::Open);
    on_a.relationships = vec![Relationship {
        kind: RelationKind::DependsOn,
        unknown_id: a.clone(),
    }];
    let b = record(&mut session, "b", on_a).unknown_id.clone();
    let mut on_b = state(Status::Open);
    on_b.relationships = vec![Relationship {
        kind: RelationKind::DependsOn,
        unknown_id: b.clone(),
    }];
    let c = record(&mut session, "c", on_b).unknown_id.clone();
    // a -> c closes a -> c -> b -> a.
    let mut cycle = state(Status::Open);
    cycle.relationships = vec![Relationship {
        kind: RelationKind::DependsOn,
        unknown_id: c.clone(),
    }];
    let err = unknown_err(update(&mut session, &a, 1, cycle));
    assert!(err.to_string().contains("cycle"), "{err}");
    // related-to is not a dependency: no cycle.
    let mut related = state(Status::Open);
    related.relationships = vec![Relationship {
        kind: RelationKind::RelatedTo,
        unknown_id: c.clone(),
    }];
    assert!(update(&mut session, &a, 1, related).is_ok());
    let mut own = state(Status::Open);
    own.relationships = vec![Relationship {
        kind: RelationKind::RelatedTo,
        unknown_id: c.clone(),
    }];
    assert!(matches!(
        unknown_err(update(&mut session, &c, 1, own)),
        UnknownError::Invalid(_)
    ));
    let mut dangling = state(Status::Open);
    dangling.relationships = vec![Relationship {
        kind: RelationKind::RelatedTo,
        unknown_id: unknown_id("z", "z", None),
    }];
    assert!(matches!(
        unknown_err(update(&mut session, &c, 1, dangling)),
        UnknownError::NotFound(_)
    ));
}

fn verified(supporting: Vec<String>, resolution: Vec<String>) -> UnknownState {
    let mut s = state(Status::Resolved);
    s.supporting_evidence_ids = supporting;
    s.resolution = Some(Resolution {
        disposition: Disposition::Verified,
        rationale: "seen in the binary".into(),
        evidence_ids: resolution,
    });
    s
}

#[test]
fn verified_resolutions_need_qualifying_supporting_evidence() {
    let mut session = Session::default();
    let observed = observe(&mut session, 1, Confidence::Observed);
    let inferred = observe(&mut session, 2, Confidence::Inferred);
    let mut needs = state(Status::Open);
    needs.required_confidence = Some(Confidence::Derived);
    needs.required_authority = Some(Authority::ShippedArtifact);
    let head = record(&mut session, "q", needs.clone());
    let id = head.unknown_id.clone();
    let mutation = head.mutation_evidence_ids[0].clone();

    let with = |mut s: UnknownState| {
        s.required_confidence = needs.required_confidence;
        s.required_authority = needs.required_authority;
        s
    };
    // Cited but not supporting.
    let err = unknown_err(update(
        &mut session,
        &id,
        1,
        with(verified(vec![], vec![observed.clone()])),
    ));
    assert!(err.to_string().contains("not a supporting"), "{err}");
    // Below the required confidence.
    let err = unknown_err(update(
        &mut session,
        &id,
        1,
        with(verified(vec![inferred.clone()], vec![inferred.clone()])),
    ));
    assert!(
        err.to_string().contains("below the required derived"),
        "{err}"
    );
    // A registry mutation record never qualifies.
    let err = unknown_err(update(
        &mut session,
        &id,
        1,
        with(verified(vec![mutation.clone()], vec![mutation])),
    ));
    assert!(err.to_string().contains("mutation record"), "{err}");
    // Verified needs at least one ID.
    assert!(update(&mut session, &id, 1, with(verified(vec![], vec![]))).is_err());
    // Authority mismatch.
    let mut replay = with(verified(vec![observed.clone()], vec![observed.clone()]));
    replay.required_authority = Some(Authority::ControlledReplay);
    let err = unknown_err(update(&mut session, &id, 1, replay));
    assert!(err.to_string().contains("controlled-replay"), "{err}");

    let (head, _) = update(
        &mut session,
        &id,
        1,
        with(verified(vec![observed.clone(), inferred], vec![observed])),
    )
    .unwrap();
    let verification = session.verify_unknown(&id).unwrap();
    assert!(
        verification.valid && verification.truth_verified,
        "{:?}",
        verification.reasons
    );
    assert_eq!(*verification.unknown, *head);

    // Withdrawn is valid but not truth-verified.
    let mut withdrawn = state(Status::Resolved);
    withdrawn.resolution = Some(Resolution {
        disposition: Disposition::Withdrawn,
        rationale: "moot".into(),
        evidence_ids: vec![],
    });
    update(&mut session, &id, 2, withdrawn).unwrap();
    let verification = session.verify_unknown(&id).unwrap();
    assert!(verification.valid);
    assert!(!verification.truth_verified);
    assert!(
        verification.reasons.iter().any(|r| r.contains("withdrawn")),
        "{:?}",
        verification.reasons
    );
    let open = record(&mut session, "still open", state(Status::Open));
    let verification = session.verify_unknown(&open.unknown_id).unwrap();
    assert!(!verification.valid && !verification.truth_verified);
}

#[test]
fn unknown_revisions_count_against_the_shared_limit() {
    let mut session = Session::default();
    for i in 0..(MAX_RECORDS as u64 - 1) {
        observe(&mut session, i, Confidence::Observed);
    }
    // A mutation needs two entries (its Evidence and the revision): only one is left.
    let result = session.record_unknown(RecordRequest {
        question: "q".into(),
        domain: "d".into(),
        state: state(Status::Open),
    });
    let err = unknown_err(result);
    assert!(err.to_string().contains("10000 entries"), "{err}");
    assert!(session.ledger().unknowns().is_empty());
    assert_eq!(session.ledger().entries(), MAX_RECORDS - 1);
}

/// An open archive has no code view, but it is the active target: an
/// unknown recorded then is scoped to it and its mutation Evidence names it.
#[test]
fn an_unknown_recorded_on_an_open_archive_is_scoped_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lib.a");
    let bytes = b"!<arch>\n".to_vec();
    std::fs::write(&path, &bytes).unwrap();
    let mut session = Session::default();
    let opened = session.open(&path, None).unwrap();
    assert!(opened.binary.is_none(), "an ar archive has no code view");
    let sha256 = crate::ground::digest::hex(&sha2::Sha256::digest(&bytes));
    let (head, evidence) = session
        .record_unknown(RecordRequest {
            question: "What does the archive ship?".into(),
            domain: "contents".into(),
            state: state(Status::Open),
        })
        .unwrap();
    assert_eq!(head.scope_digest.as_deref(), Some(sha256.as_str()));
    assert_eq!(
        head.unknown_id,
        unknown_id("contents", "What does the archive ship?", Some(&sha256))
    );
    let subject = evidence.body.subject.expect("the archive is the subject");
    assert_eq!(
        (subject.sha256.as_str(), subject.format.as_str()),
        (sha256.as_str(), "ar")
    );
    assert!(
        evidence.body.limitations.is_empty(),
        "{:?}",
        evidence.body.limitations
    );
}
