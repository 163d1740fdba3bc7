//! Session lifecycle tools: status, open, close, document selection.

use crate::tools::tool::{Call, Tool};
use std::path::Path;

use serde_json::{Value, json};

use super::inputs::{
    BinarySessionInput, CloseBinaryInput, OpenBinaryInput, SetCurrentDocumentInput,
};
use super::{CATALOG, HandlerResult, ToolName, availability};
use crate::session::ledger::{MAX_BYTES, MAX_RECORDS};
use std::sync::Arc;

use crate::artifacts::ArtifactFormat;
use crate::session::{
    ActiveTarget, ArtifactTarget, AvailableAction, Confidence, EvidenceDraft, Location, Opened,
    Session, native_identity,
};

/// Session status. Reads state only and records no Evidence, so calling it
/// twice with nothing in between returns the same value.
pub struct BinarySession;

impl Tool for BinarySession {
    const NAME: ToolName = ToolName::BinarySession;
    type Input = BinarySessionInput;

    fn run(_: BinarySessionInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let artifact = session.artifact().map(|a| {
            json!({
                "path": a.display,
                "format": a.format.as_str(),
                "has_code_documents": a.has_code(),
            })
        });
        let target = session.target().map(|t| {
        let documents = t.document_names();
        json!({
            "path": t.display_path(),
            "bundle": t.admitted.bundle.as_ref().map(|b| b.shown().to_owned()),
            "sha256": t.image.sha256(),
            "format": t.image.format().as_str(),
            "documents": documents,
            "current_document": session.current_document().and_then(|i| documents.get(i).cloned()),
        })
    });
        let tools: Vec<Value> = CATALOG
            .iter()
            .filter_map(|spec| ToolName::from_name(&spec.name))
            .map(|tool| match availability(tool, session) {
                Ok(()) => json!({"name": tool.as_str(), "available": true}),
                Err(reason) => json!({"name": tool.as_str(), "available": false, "reason": reason}),
            })
            .collect();
        let result = json!({
            "open": artifact.is_some(),
            "artifact": artifact,
            "target": target,
            "binding": session.target().map(|t| &t.binding),
            "providers": {
                "built_in": native_identity(),
                "deep_candidates": session
                    .deep_providers()
                    .candidates(session.target().map(|t| t.image.format())),
                "note": "Deep candidates are sorted by id; the order is not a priority. Status never starts a provider.",
            },
            "ledger": {
                "records": session.ledger().len(),
                "unknown_heads": session.ledger().unknowns().heads().count(),
                "unknown_revisions": session.ledger().unknowns().revision_count(),
                "entries": session.ledger().entries(),
                "bytes": session.ledger().bytes(),
                "max_records": MAX_RECORDS,
                "max_bytes": MAX_BYTES,
            },
            "write_policy": {
                "enabled": session.write_roots().is_enabled(),
                "write_roots": session.write_roots().roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>(),
            },
            "process_capture": session.capture_policy().status(),
            "read_roots": session.read_roots().is_confined().then(|| {
                session.read_roots().roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>()
            }),
            "tools": tools,
        });
        Ok((result, None))
    }
}

/// Opening maps and hashes the whole file, which a huge file makes long:
/// the session is held only to take its opener and, at the end, to install
/// the target and record the Evidence. Progress is reported and the open
/// stops when the call is interrupted, leaving the previous target active;
/// meanwhile every other request is answered.
pub struct OpenBinary;

impl Tool for OpenBinary {
    const NAME: ToolName = ToolName::OpenBinary;
    type Input = OpenBinaryInput;

    fn run(input: OpenBinaryInput, call: &Call<'_>) -> HandlerResult {
        let opener = call.session().opener();
        let opened = opener.open(
            Path::new(&input.path),
            input.provider_id.as_deref(),
            &call.watch(),
        )?;
        installed(input, &opened, &mut call.session())
    }
}

/// Installs an opened target in the session and answers for it.
pub(crate) fn installed(
    input: OpenBinaryInput,
    opened: &Opened,
    session: &mut Session,
) -> HandlerResult {
    session.install(opened);
    match &opened.binary {
        Some(target) => open_binary_result(&input, target, &opened.artifact, session),
        None => open_archive_result(&input, &opened.artifact, session),
    }
}

/// A binary (or bundle, or universal file): its code documents and binding.
fn open_binary_result(
    input: &OpenBinaryInput,
    target: &Arc<ActiveTarget>,
    artifact: &ArtifactTarget,
    session: &mut Session,
) -> HandlerResult {
    let documents = target.document_names();
    let identity = json!({
        "format": target.image.format().as_str(),
        "sha256": target.image.sha256(),
        "documents": documents,
        "binding": {
            "provider_id": target.binding.provider.id,
            "selection_source": target.binding.selection_source,
        },
    });
    let mut draft = target.observation(
        ToolName::OpenBinary.as_str(),
        target.subject(),
        json!({"provider_id": input.provider_id.as_deref().unwrap_or("auto")}),
        identity.clone(),
        Vec::new(),
    );
    draft.locations = vec![file_name_location(&target.admitted.file_path)];
    let evidence = session.record(draft)?;
    let mut result = identity;
    result["path"] = json!(target.display_path());
    result["bundle"] = json!(
        target
            .admitted
            .bundle
            .as_ref()
            .map(|b| b.shown().to_owned())
    );
    result["artifact_format"] = json!(artifact.format.as_str());
    result["current_document"] = json!(documents.first());
    Ok((result, Some(evidence)))
}

/// An archive: identity only; there are no documents and no binding.
fn open_archive_result(
    input: &OpenBinaryInput,
    artifact: &ArtifactTarget,
    session: &mut Session,
) -> HandlerResult {
    let sha256 = artifact.file_sha256().unwrap_or_default().to_string();
    let identity = json!({
        "format": artifact.format.as_str(),
        "sha256": sha256,
        "documents": [],
        "binding": null,
    });
    let draft = EvidenceDraft {
        operation: ToolName::OpenBinary.as_str().to_string(),
        subject: Some(artifact.subject(&sha256)),
        provider: native_identity(),
        parameters: json!({"provider_id": input.provider_id.as_deref().unwrap_or("auto")}),
        result: identity.clone(),
        confidence: Confidence::Observed,
        limitations: vec![
            "An archive has no code documents: inspect_artifact lists its contents; nothing is \
             extracted."
                .into(),
        ],
        locations: vec![file_name_location(&artifact.path)],
        local_path: Some(artifact.display.clone()),
    };
    let evidence = session.record(draft)?;
    let mut result = identity;
    result["path"] = json!(artifact.display);
    result["bundle"] = Value::Null;
    result["artifact_format"] = json!(artifact.format.as_str());
    result["current_document"] = Value::Null;
    result["next"] = json!("inspect_artifact");
    // An Electron archive also has an application graph; the analysis reads
    // the archive itself, so it needs no open target.
    result["available_actions"] = match artifact.format {
        ArtifactFormat::Asar => json!([AvailableAction::analyze_javascript(&artifact.display)]),
        _ => json!([]),
    };
    Ok((result, Some(evidence)))
}

fn file_name_location(path: &Path) -> Location {
    Location::ArtifactPath {
        path: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// Records no Evidence: the ledger it would go into (with the
/// residual-unknown registry) is being cleared.
pub struct CloseBinary;

impl Tool for CloseBinary {
    const NAME: ToolName = ToolName::CloseBinary;
    type Input = CloseBinaryInput;

    fn run(_: CloseBinaryInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let closed = session.close();
        Ok((
            json!({"closed": closed, "ledger_cleared": true, "unknowns_cleared": true}),
            None,
        ))
    }
}

pub struct SetCurrentDocument;

impl Tool for SetCurrentDocument {
    const NAME: ToolName = ToolName::SetCurrentDocument;
    type Input = SetCurrentDocumentInput;

    fn run(input: SetCurrentDocumentInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let current = session.set_current_document(&input.document)?;
        Ok((json!({"current_document": current}), None))
    }
}
