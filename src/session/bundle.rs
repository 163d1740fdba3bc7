//! Evidence bundles: the session's records and residual-unknown revisions in
//! one versioned file, so an investigation survives the server.
//!
//! Format: `{format: "rea-evidence-bundle", bundle_version: 1, records,
//! unknowns}` with records sorted by Evidence ID and unknowns (every
//! revision) by (ID, revision), written as RFC 8785 canonical JSON, so the
//! same ledger always gives the same bytes and `bundle_sha256`. Export is
//! atomic and confined to the operator's write roots; import obeys the read
//! roots, bounds size and nesting, verifies every record's content address
//! and every revision's digest and chain, and applies all or nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::admission::AdmissionError;
use super::evidence::schema_error;
use super::evidence::{Evidence, RecordError};
use super::ledger::{Ledger, Recorded};
use super::policy::write_atomically;
use super::unknowns::{UnknownError, UnknownRevision, heads_acyclic, validate_fields};
use super::{Session, SessionError};
use crate::ground::canonical::{nests_deeper_than, to_canonical};
use crate::ground::confined::OpenError;
use crate::ground::digest::hex;
use crate::ground::text::{EXCERPT_CHARS, excerpt};

pub const BUNDLE_FORMAT: &str = "rea-evidence-bundle";
pub const BUNDLE_VERSION: u64 = 1;
/// Largest bundle file import reads (the ledger's 64 MiB plus framing).
pub const MAX_BUNDLE_BYTES: u64 = 80 << 20;
/// Deepest JSON nesting import accepts.
pub const MAX_BUNDLE_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is larger than the {MAX_BUNDLE_BYTES}-byte bundle limit")]
    TooLarge { path: String },
    #[error("not a usable evidence bundle: {0}")]
    Invalid(String),
    #[error("bundle record {index} refused: {source}")]
    Record { index: usize, source: RecordError },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportSummary {
    pub path: String,
    pub bytes: usize,
    pub records: usize,
    pub unknowns: usize,
    pub bundle_sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    pub path: String,
    pub bundle_sha256: String,
    pub records_added: usize,
    pub records_duplicate: usize,
    /// Unknown revisions added.
    pub unknowns_added: usize,
    pub unknowns_duplicate: usize,
    /// Entries (records and revisions) held after the import.
    pub ledger_entries: usize,
}

/// The canonical bundle bytes of `ledger`.
pub fn bundle_bytes(ledger: &Ledger) -> Result<String, SessionError> {
    let value = json!({
        "format": BUNDLE_FORMAT,
        "bundle_version": BUNDLE_VERSION,
        "records": ledger.records().map(|r| &**r).collect::<Vec<_>>(),
        "unknowns": ledger.unknowns().all_revisions().map(|r| &**r).collect::<Vec<_>>(),
    });
    to_canonical(&value).map_err(|e| SessionError::Evidence(e.to_string()))
}

/// Fails when `bytes` nests arrays and objects deeper than `max`, before
/// any parser recurses into it.
fn check_depth(bytes: &[u8], max: usize) -> Result<(), BundleError> {
    if nests_deeper_than(bytes, max) {
        return Err(BundleError::Invalid(format!(
            "JSON nests deeper than {max} levels"
        )));
    }
    Ok(())
}

/// Parses and verifies a bundle without touching any session.
pub fn parse_bundle(bytes: &[u8]) -> Result<(Vec<Evidence>, Vec<UnknownRevision>), SessionError> {
    check_depth(bytes, MAX_BUNDLE_DEPTH)?;
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| BundleError::Invalid(schema_error(&e)))?;
    let Value::Object(mut members) = value else {
        return Err(BundleError::Invalid("the top level must be an object".into()).into());
    };
    if members
        .keys()
        .any(|k| !["format", "bundle_version", "records", "unknowns"].contains(&k.as_str()))
    {
        return Err(BundleError::Invalid(
            "a top-level member is not one of format, bundle_version, records, unknowns".into(),
        )
        .into());
    }
    if members.get("format") != Some(&json!(BUNDLE_FORMAT)) {
        return Err(BundleError::Invalid(format!("format must be \"{BUNDLE_FORMAT}\"")).into());
    }
    match members.get("bundle_version").and_then(Value::as_u64) {
        Some(BUNDLE_VERSION) => {}
        other => {
            return Err(BundleError::Invalid(format!(
                "bundle_version {} is not supported; this build reads version {BUNDLE_VERSION}",
                other.map_or("(missing)".to_string(), |v| v.to_string())
            ))
            .into());
        }
    }
    let mut list = |name: &str| match members.remove(name) {
        Some(Value::Array(items)) => Ok(items),
        _ => Err(BundleError::Invalid(format!("`{name}` must be an array"))),
    };
    let records = list("records")?
        .into_iter()
        .enumerate()
        .map(|(index, v)| {
            Evidence::from_value(v).map_err(|source| BundleError::Record { index, source })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut unknowns = list("unknowns")?
        .into_iter()
        .enumerate()
        .map(|(index, v)| {
            let revision = UnknownRevision::from_value(v).map_err(|e| {
                BundleError::Invalid(format!("unknown revision {index} is malformed: {e}"))
            })?;
            revision.verify_self()?;
            Ok(revision)
        })
        .collect::<Result<Vec<_>, SessionError>>()?;
    unknowns.sort_by(|a, b| (&a.unknown_id, a.revision).cmp(&(&b.unknown_id, b.revision)));
    Ok((records, unknowns))
}

/// Every Evidence ID a revision cites, mutation records included.
fn cited(revision: &UnknownRevision) -> impl Iterator<Item = &String> {
    revision
        .state
        .supporting_evidence_ids
        .iter()
        .chain(&revision.state.contradicting_evidence_ids)
        .chain(
            revision
                .state
                .resolution
                .iter()
                .flat_map(|r| &r.evidence_ids),
        )
        .chain(&revision.mutation_evidence_ids)
}

impl Session {
    /// Writes the ledger to `path` (inside a write root) atomically.
    pub fn export_bundle(
        &self,
        path: &Path,
        overwrite: bool,
    ) -> Result<ExportSummary, SessionError> {
        let target = self.write_roots.resolve(path, overwrite)?;
        let bytes = bundle_bytes(&self.ledger)?;
        write_atomically(&target, bytes.as_bytes(), overwrite)?;
        Ok(ExportSummary {
            path: target.path.display().to_string(),
            bytes: bytes.len(),
            records: self.ledger.len(),
            unknowns: self.ledger.unknowns().revision_count(),
            bundle_sha256: hex(&Sha256::digest(bytes.as_bytes())),
        })
    }

    /// Reads, verifies and merges a bundle: everything or nothing.
    pub fn import_bundle(&mut self, path: &Path) -> Result<ImportSummary, SessionError> {
        let (real, bytes) = self.read_bundle_file(path)?;
        let (records, unknowns) = parse_bundle(&bytes)?;
        let mut next = self.ledger.clone();
        let mut summary = ImportSummary {
            path: real.display().to_string(),
            bundle_sha256: hex(&Sha256::digest(&bytes)),
            records_added: 0,
            records_duplicate: 0,
            unknowns_added: 0,
            unknowns_duplicate: 0,
            ledger_entries: 0,
        };
        for record in records {
            match next.record(record)? {
                Recorded::Added => summary.records_added += 1,
                Recorded::Duplicate => summary.records_duplicate += 1,
            }
        }
        let mut touched = std::collections::BTreeSet::new();
        for revision in &unknowns {
            if let Some(missing) = cited(revision).find(|id| next.get(id).is_none()) {
                return Err(UnknownError::Integrity(format!(
                    "{} revision {} cites Evidence {missing}, which neither the bundle nor the \
                     session holds",
                    revision.unknown_id, revision.revision
                ))
                .into());
            }
            touched.insert(revision.unknown_id.clone());
        }
        for revision in unknowns {
            match next.add_revision(revision)? {
                Recorded::Added => summary.unknowns_added += 1,
                Recorded::Duplicate => summary.unknowns_duplicate += 1,
            }
        }
        // Heads must satisfy every rule a mutation would have enforced:
        // references, relationships and verified resolutions per head, then
        // one walk for depends-on cycles over all of them.
        for id in &touched {
            if let Some(head) = next.unknowns().head(id) {
                validate_fields(&next, id, &head.state).map_err(|e| {
                    UnknownError::Integrity(format!("the bundle's head of {id} is not valid: {e}"))
                })?;
            }
        }
        heads_acyclic(&next).map_err(|e| {
            UnknownError::Integrity(format!("the bundle's unknowns are not valid: {e}"))
        })?;
        summary.ledger_entries = next.entries();
        self.ledger = next;
        Ok(summary)
    }

    /// The bundle's bytes, read once through a descriptor opened beneath
    /// this session's write roots (a bundle it may have written) or else
    /// the read roots (a FIFO or device is refused without blocking).
    fn read_bundle_file(&self, path: &Path) -> Result<(PathBuf, Vec<u8>), SessionError> {
        let shown = excerpt(&path.display().to_string(), 4 * EXCERPT_CHARS);
        let node = match self.write_roots.open_to_read(path) {
            Some(node) => node.map_err(AdmissionError::from)?,
            None => self.read_roots.open(path)?,
        };
        let file = node.into_file().map_err(AdmissionError::from)?;
        let bytes = file.read_bounded(MAX_BUNDLE_BYTES).map_err(|e| match e {
            OpenError::TooLarge { .. } => SessionError::from(BundleError::TooLarge {
                path: shown.clone(),
            }),
            other => AdmissionError::from(other).into(),
        })?;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Ok((absolute, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::evidence::{Confidence, EvidenceDraft, ProviderIdentity};
    use crate::session::policy::{WriteError, WriteRoots};
    use crate::session::unknowns::{RecordRequest, Severity, Status, UnknownState, UpdateRequest};

    fn observe(session: &mut Session, n: u64) -> String {
        session
            .record(EvidenceDraft {
                operation: "list_documents".into(),
                subject: None,
                provider: ProviderIdentity {
                    id: "native".into(),
                    name: "native".into(),
                    version: "0".into(),
                },
                parameters: json!({"n": n}),
                result: json!({"documents": [n]}),
                confidence: Confidence::Observed,
                limitations: vec![],
                locations: vec![],
                local_path: None,
            })
            .unwrap()
            .evidence_id
    }

    fn state(status: Status, supporting: Vec<String>) -> UnknownState {
        UnknownState {
            status,
            severity: Severity::Medium,
            supporting_evidence_ids: supporting,
            contradicting_evidence_ids: vec![],
            required_authority: None,
            required_confidence: None,
            recommended_probes: vec![],
            relationships: vec![],
            resolution: None,
        }
    }

    /// A session with two records and an unknown at revision 2, exported
    /// under a fresh write root.
    fn exported() -> (tempfile::TempDir, PathBuf, Session, ExportSummary) {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::default()
            .with_write_roots(WriteRoots::new(&[dir.path().to_path_buf()]).unwrap());
        let a = observe(&mut session, 1);
        observe(&mut session, 2);
        let (head, _) = session
            .record_unknown(RecordRequest {
                question: "Which server does it contact?".into(),
                domain: "net".into(),
                state: state(Status::Open, vec![a.clone()]),
            })
            .unwrap();
        session
            .update_unknown(UpdateRequest {
                unknown_id: head.unknown_id.clone(),
                expected_revision: 1,
                state: state(Status::Investigating, vec![a]),
            })
            .unwrap();
        let path = dir.path().join("investigation.json");
        let summary = session.export_bundle(&path, false).unwrap();
        (dir, path, session, summary)
    }

    #[test]
    fn a_bundle_round_trips_into_a_new_session() {
        let (_dir, path, original, summary) = exported();
        assert_eq!(summary.records, 4, "two observations and two mutations");
        assert_eq!(summary.unknowns, 2);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(summary.bytes, bytes.len());
        assert_eq!(summary.bundle_sha256, hex(&Sha256::digest(&bytes)));
        assert_eq!(
            bundle_bytes(original.ledger()).unwrap().as_bytes(),
            &bytes[..]
        );

        let mut fresh = Session::default();
        let imported = fresh.import_bundle(&path).unwrap();
        assert_eq!((imported.records_added, imported.unknowns_added), (4, 2));
        assert_eq!(
            bundle_bytes(fresh.ledger()).unwrap(),
            bundle_bytes(original.ledger()).unwrap()
        );
        // Importing again changes nothing: everything is a duplicate.
        let again = fresh.import_bundle(&path).unwrap();
        assert_eq!((again.records_added, again.records_duplicate), (0, 4));
        assert_eq!((again.unknowns_added, again.unknowns_duplicate), (0, 2));
        // The imported chain continues under CAS.
        let head = fresh.ledger().unknowns().heads().next().unwrap().clone();
        assert!(
            fresh
                .update_unknown(UpdateRequest {
                    unknown_id: head.unknown_id.clone(),
                    expected_revision: 2,
                    state: head.state.clone(),
                })
                .is_ok()
        );
    }

    fn rewrite(path: &Path, edit: impl FnOnce(&mut Value)) {
        let mut value: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        edit(&mut value);
        std::fs::write(path, serde_json::to_vec(&value).unwrap()).unwrap();
    }

    fn refused(path: &Path) -> SessionError {
        let mut session = Session::default();
        observe(&mut session, 99);
        let before = bundle_bytes(session.ledger()).unwrap();
        let err = session.import_bundle(path).unwrap_err();
        assert_eq!(
            bundle_bytes(session.ledger()).unwrap(),
            before,
            "all or nothing"
        );
        err
    }

    #[test]
    fn a_tampered_record_refuses_the_whole_bundle() {
        let (_dir, path, _, _) = exported();
        rewrite(&path, |v| v["records"][3]["result"] = json!("forged"));
        let err = refused(&path);
        assert!(
            matches!(
                err,
                SessionError::Bundle(BundleError::Record { index: 3, .. })
            ),
            "{err}"
        );
    }

    #[test]
    fn a_tampered_or_broken_chain_is_refused() {
        let (_dir, path, _, _) = exported();
        let original = std::fs::read(&path).unwrap();
        rewrite(&path, |v| v["unknowns"][1]["severity"] = json!("critical"));
        assert!(refused(&path).to_string().contains("digest"));
        // Dropping revision 1 leaves revision 2 without its chain.
        std::fs::write(&path, &original).unwrap();
        rewrite(&path, |v| {
            v["unknowns"].as_array_mut().unwrap().remove(0);
        });
        assert!(refused(&path).to_string().contains("does not continue"));
        // Dropping a cited record leaves a dangling reference.
        std::fs::write(&path, &original).unwrap();
        let mut cited = String::new();
        rewrite(&path, |v| {
            let support = v["unknowns"][0]["supporting_evidence_ids"][0].clone();
            cited = support.as_str().unwrap().to_string();
            v["records"]
                .as_array_mut()
                .unwrap()
                .retain(|r| r["evidence_id"] != support);
        });
        let err = refused(&path);
        assert!(err.to_string().contains(&cited), "{err}");
    }

    #[test]
    fn malformed_bundles_are_refused_with_reasons() {
        let (_dir, path, _, _) = exported();
        let original = std::fs::read(&path).unwrap();
        rewrite(&path, |v| v["extra"] = json!(1));
        assert!(
            refused(&path)
                .to_string()
                .contains("a top-level member is not one of")
        );
        assert!(!refused(&path).to_string().contains("extra"));
        std::fs::write(&path, &original).unwrap();
        rewrite(&path, |v| v["bundle_version"] = json!(2));
        assert!(
            refused(&path)
                .to_string()
                .contains("bundle_version 2 is not supported")
        );
        std::fs::write(&path, &original).unwrap();
        rewrite(&path, |v| v["unknowns"][0]["smuggled"] = json!(true));
        assert!(refused(&path).to_string().contains("malformed"));
        std::fs::write(&path, &original).unwrap();
        rewrite(&path, |v| v["records"][0]["note"] = json!("x"));
        assert!(
            refused(&path)
                .to_string()
                .contains("a member is not one of")
        );
        assert!(!refused(&path).to_string().contains("note"));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        std::fs::write(&path, deep).unwrap();
        assert!(refused(&path).to_string().contains("deeper than 64"));
        // A string full of brackets is not nesting.
        assert!(check_depth(format!("[\"{}\\\"\"]", "[".repeat(500)).as_bytes(), 2).is_ok());
        let big = std::fs::File::create(&path).unwrap();
        big.set_len(MAX_BUNDLE_BYTES + 1).unwrap();
        assert!(matches!(
            refused(&path),
            SessionError::Bundle(BundleError::TooLarge { .. })
        ));
    }

    /// A refusal never quotes hostile bundle text (F1b).
    #[test]
    fn refusals_never_quote_hostile_bundle_text() {
        let (_dir, path, _, _) = exported();
        let original = std::fs::read(&path).unwrap();
        let huge = "B".repeat(1 << 20);
        type Edit<'a> = Box<dyn Fn(&mut Value) + 'a>;
        let edits: Vec<Edit> = vec![
            Box::new(|v| v[huge.as_str()] = json!(1)),
            Box::new(|v| v["records"][0][huge.as_str()] = json!(1)),
            Box::new(|v| v["records"][0]["evidence_id"] = json!(huge)),
            Box::new(|v| v["records"][0]["confidence"] = json!(huge)),
            Box::new(|v| v["unknowns"][0][huge.as_str()] = json!(1)),
            Box::new(|v| v["unknowns"][0]["unknown_id"] = json!(huge)),
            Box::new(|v| v["unknowns"][0]["status"] = json!(huge)),
        ];
        for (n, edit) in edits.iter().enumerate() {
            std::fs::write(&path, &original).unwrap();
            rewrite(&path, edit);
            let message = refused(&path).to_string();
            assert!(
                message.len() < 1024 && !message.contains("BBBB"),
                "edit {n} echoed {} bytes",
                message.len()
            );
        }
    }

    /// A FIFO is refused without being opened: opening it for reading
    /// would block until some writer appeared.
    #[test]
    fn importing_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("bundle.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (send, receive) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let _ = send.send(Session::default().import_bundle(&path));
        });
        let outcome = receive.recv_timeout(std::time::Duration::from_secs(10));
        if outcome.is_err() {
            // Release the blocked reader so the test process can finish.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        let err = outcome
            .expect("import_bundle blocked on a FIFO")
            .unwrap_err();
        assert!(
            matches!(
                err,
                SessionError::Admission(AdmissionError::Open(OpenError::NotRegular { .. }))
            ),
            "{err}"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any damage to a valid bundle is refused or still verifies; the
        /// parser never panics.
        #[test]
        fn damaged_bundles_never_panic_and_never_yield_unverified_records(
            position in 0usize..4096,
            byte in proptest::prelude::any::<u8>(),
        ) {
            let (_dir, path, _, _) = exported();
            let mut bytes = std::fs::read(&path).unwrap();
            let at = position % bytes.len();
            bytes[at] = byte;
            if let Ok((records, unknowns)) = parse_bundle(&bytes) {
                for record in &records {
                    proptest::prop_assert!(record.verify().is_ok());
                }
                for revision in &unknowns {
                    proptest::prop_assert!(revision.verify_self().is_ok());
                }
            }
        }
    }

    fn depends_on(id: &str) -> Vec<crate::session::unknowns::Relationship> {
        vec![crate::session::unknowns::Relationship {
            kind: crate::session::unknowns::RelationKind::DependsOn,
            unknown_id: id.to_string(),
        }]
    }

    /// A long depends-on chain is checked in linear time per mutation and
    /// once per import (the path-copying walk was quadratic per mutation
    /// and cubic per import: minutes for this chain).
    #[test]
    fn a_long_depends_on_chain_records_and_imports_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::default()
            .with_write_roots(WriteRoots::new(&[dir.path().to_path_buf()]).unwrap());
        let started = std::time::Instant::now();
        let mut previous: Option<String> = None;
        for n in 0..1500 {
            let mut s = state(Status::Open, vec![]);
            if let Some(p) = &previous {
                s.relationships = depends_on(p);
            }
            let (head, _) = session
                .record_unknown(RecordRequest {
                    question: format!("link {n}"),
                    domain: "chain".into(),
                    state: s,
                })
                .unwrap();
            previous = Some(head.unknown_id.clone());
        }
        let recorded = started.elapsed();
        let path = dir.path().join("chain.json");
        session.export_bundle(&path, false).unwrap();
        let started = std::time::Instant::now();
        let summary = Session::default().import_bundle(&path).unwrap();
        let imported = started.elapsed();
        assert_eq!(summary.unknowns_added, 1500);
        assert!(
            recorded.as_secs() < 60 && imported.as_secs() < 30,
            "recording took {recorded:?}, importing {imported:?}"
        );
    }

    #[test]
    fn a_bundle_whose_heads_cycle_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::default()
            .with_write_roots(WriteRoots::new(&[dir.path().to_path_buf()]).unwrap());
        let request = |question: &str, s| RecordRequest {
            question: question.into(),
            domain: "net".into(),
            state: s,
        };
        let (a, _) = session
            .record_unknown(request("a", state(Status::Open, vec![])))
            .unwrap();
        let mut on_a = state(Status::Open, vec![]);
        on_a.relationships = depends_on(&a.unknown_id);
        let (b, _) = session.record_unknown(request("b", on_a)).unwrap();
        let path = dir.path().join("cycle.json");
        session.export_bundle(&path, false).unwrap();
        // A sealed revision 2 of `a` that depends on `b`, which no mutation
        // would accept; its digest and chain are otherwise sound.
        let mut on_b = a.state.clone();
        on_b.relationships = depends_on(&b.unknown_id);
        let forged = UnknownRevision::seal(
            (
                a.unknown_id.clone(),
                2,
                Some(a.revision_digest.clone()),
                a.scope_digest.clone(),
            ),
            a.question.clone(),
            a.domain.clone(),
            on_b,
            a.mutation_evidence_ids.clone(),
        );
        rewrite(&path, |v| {
            v["unknowns"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::to_value(&forged).unwrap());
        });
        let err = refused(&path);
        assert!(err.to_string().contains("depends-on cycle"), "{err}");
    }

    #[test]
    fn import_obeys_the_read_roots_and_export_the_write_policy() {
        let (_dir, path, session, _) = exported();
        let elsewhere = tempfile::tempdir().unwrap();
        let mut confined = Session::new(
            crate::session::ReadRoots::new(&[elsewhere.path().to_path_buf()]).unwrap(),
            Default::default(),
        );
        let err = confined.import_bundle(&path).unwrap_err();
        assert!(matches!(err, SessionError::Admission(_)), "{err}");
        let err = session.export_bundle(&path, false).unwrap_err();
        assert!(matches!(
            err,
            SessionError::Write(WriteError::AlreadyExists { .. })
        ));
        assert!(session.export_bundle(&path, true).is_ok());
        let err = Session::default().export_bundle(&path, true).unwrap_err();
        assert!(matches!(err, SessionError::Write(WriteError::Disabled)));
    }
}
