//! Session-aware completion of guided-prompt arguments.
//!
//! Each completable argument names a family; each family is a live projection
//! of the session, read on every request (there is no completion cache).
//! Completion is a pure read: it records no Evidence, changes no selection
//! and starts nothing. Provider errors, unsupported operations and malformed
//! output produce an empty answer, never an error and never an unverified
//! identifier.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::catalog::generated::prompts::PromptName;
use crate::catalog::spec::{CompletionFamily, MAX_VALUE_SCALARS};
use crate::matching::{CompletionPage, complete};
use crate::session::artifact_records::{InspectionPage, inventory_page};
use crate::session::capture_records::capture_of;
use crate::session::unknowns::Status;
use crate::session::{ActiveTarget, DEEP_PROVIDERS, Evidence, Session};

/// What a completion request resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The argument does not complete (or is not declared): `values: []`,
    /// `hasMore: false`, no `total`.
    NotCompletable,
    /// Matches over the complete candidate set.
    Page(CompletionPage),
}

/// Completes `argument` of `prompt` given the typed `value` and the other
/// arguments already chosen (`context`).
pub fn complete_argument(
    prompt: PromptName,
    argument: &str,
    value: &str,
    context: Option<&HashMap<String, String>>,
    session: &Mutex<Session>,
) -> Answer {
    let Some(family) = prompt
        .arguments()
        .iter()
        .find(|a| a.name == argument)
        .and_then(|a| a.completion)
    else {
        return Answer::NotCompletable;
    };
    if value.chars().nth(MAX_VALUE_SCALARS).is_some() {
        return Answer::Page(CompletionPage::default());
    }
    Answer::Page(family_page(family, value, context, session))
}

/// What completion takes from the session, under the lock and nothing more.
struct View {
    target: Option<Arc<ActiveTarget>>,
    current_document: Option<usize>,
    evidence: Vec<Arc<Evidence>>,
    /// IDs of the unknown heads that are not resolved.
    unresolved: Vec<String>,
}

fn view(session: &Mutex<Session>, family: CompletionFamily) -> View {
    let session = session.lock().unwrap_or_else(|p| p.into_inner());
    View {
        target: session.target().cloned(),
        current_document: session.current_document(),
        evidence: if matches!(
            family,
            CompletionFamily::Evidence
                | CompletionFamily::Manifest
                | CompletionFamily::Occurrence
                | CompletionFamily::Capture
        ) {
            session.ledger().records().cloned().collect()
        } else {
            Vec::new()
        },
        unresolved: if family == CompletionFamily::Unknown {
            session
                .ledger()
                .unknowns()
                .heads()
                .filter(|h| h.state.status != Status::Resolved)
                .map(|h| h.unknown_id.clone())
                .collect()
        } else {
            Vec::new()
        },
    }
}

fn family_page(
    family: CompletionFamily,
    value: &str,
    context: Option<&HashMap<String, String>>,
    session: &Mutex<Session>,
) -> CompletionPage {
    let view = view(session, family);
    match family {
        CompletionFamily::Document => match &view.target {
            Some(t) => complete(t.document_names(), value),
            None => CompletionPage::default(),
        },
        CompletionFamily::Procedure => procedures(&view, value, context),
        CompletionFamily::Provider => complete(
            std::iter::once("auto").chain(DEEP_PROVIDERS.iter().copied()),
            value,
        ),
        CompletionFamily::Evidence => {
            complete(view.evidence.iter().map(|e| e.evidence_id.as_str()), value)
        }
        CompletionFamily::Manifest => {
            let pages = inventory_pages(&view);
            complete(pages.iter().map(|p| p.manifest.manifest_id.as_str()), value)
        }
        CompletionFamily::Occurrence => {
            let pages = inventory_pages(&view);
            complete(
                pages
                    .iter()
                    .flat_map(|p| p.occurrences.items.iter())
                    .map(|o| o.occurrence_id.as_str()),
                value,
            )
        }
        // Current heads whose status is not resolved: the unknowns an audit
        // still has to settle.
        CompletionFamily::Unknown => complete(view.unresolved.iter().map(String::as_str), value),
        // Process captures: Evidence of `capture_process_scenario` whose
        // result still validates as a capture.
        CompletionFamily::Capture => complete(
            view.evidence
                .iter()
                .filter(|e| capture_of(e).is_some())
                .map(|e| e.evidence_id.as_str()),
            value,
        ),
    }
}

/// The retained `inspect_artifact` pages whose results validate.
fn inventory_pages(view: &View) -> Vec<InspectionPage> {
    view.evidence
        .iter()
        .filter_map(|e| inventory_page(e))
        .collect()
}

/// Every address of the document's complete inventory, plus each name that
/// identifies exactly one address. The document is `context.document` when
/// given (an unknown one yields nothing), else the current document.
fn procedures(
    view: &View,
    value: &str,
    context: Option<&HashMap<String, String>>,
) -> CompletionPage {
    let Some(target) = &view.target else {
        return CompletionPage::default();
    };
    let requested = context
        .and_then(|c| c.get("document"))
        .map(|d| d.trim())
        .filter(|d| !d.is_empty());
    let document = match requested {
        Some(d) if d.chars().nth(MAX_VALUE_SCALARS).is_some() => return CompletionPage::default(),
        Some(d) => match target.image.document_index(d) {
            Ok(i) => i,
            Err(_) => return CompletionPage::default(),
        },
        None => match view.current_document {
            Some(i) => i,
            None => return CompletionPage::default(),
        },
    };
    match target.procedure_index(document) {
        Ok(index) => index.candidates.query(value),
        Err(_) => CompletionPage::default(),
    }
}
