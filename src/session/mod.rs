//! The binary session: one active target, its provider binding, the Evidence
//! ledger and the per-document procedure indexes.
//!
//! Lifecycle: opening another target switches to it and keeps the ledger (an
//! investigation compares targets); only [`Session::close`] (or the end of the
//! connection, which drops the session) clears the target, the ledger and
//! everything else the session owns.

pub mod admission;
mod analysis;
pub mod canonical;
pub mod evidence;
pub mod ledger;
mod procedure_index;

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::providers::native::{FunctionError, NativeImage};
use crate::providers::{NATIVE_PROVIDER_ID, ProviderError};

pub use admission::{AdmissionError, AdmittedTarget, ReadRoots};
pub use evidence::{Confidence, Evidence, EvidenceDraft, Location, ProviderIdentity, Subject};
pub use ledger::{Ledger, LedgerError, Recorded};
pub use procedure_index::ProcedureIndex;

/// Identity of the built-in provider, as recorded in Evidence.
pub fn native_identity() -> ProviderIdentity {
    ProviderIdentity {
        id: NATIVE_PROVIDER_ID.to_string(),
        name: "rea native provider (object)".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Deep providers this build knows. None yet: radare2 arrives with its own
/// issue. Sorted by id; the order is not a priority.
pub const DEEP_PROVIDERS: &[&str] = &[];

/// How the binding was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionSource {
    /// The request named the provider.
    Request,
    /// `auto` found no deep candidate for this target; the built-in provider serves it.
    AutoNoDeepCandidate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    pub provider: ProviderIdentity,
    pub selection_source: SelectionSource,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error(
        "provider id {0:?} is not valid: use `auto`, `native` or a deep provider id ([a-z][a-z0-9-]*, at most 64 characters)"
    )]
    Invalid(String),
    #[error("unknown provider {id:?}; this build offers: {known}")]
    Unknown { id: String, known: String },
}

/// Resolves a `provider_id` request. There is never a fallback: a named
/// provider that cannot serve is an error.
pub fn select_provider(requested: Option<&str>) -> Result<Binding, SelectionError> {
    let id = requested.map(str::trim).unwrap_or("auto");
    let shape_ok = !id.is_empty()
        && id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !shape_ok {
        return Err(SelectionError::Invalid(id.to_string()));
    }
    match id {
        "auto" => Ok(Binding {
            provider: native_identity(),
            selection_source: SelectionSource::AutoNoDeepCandidate,
        }),
        NATIVE_PROVIDER_ID => Ok(Binding {
            provider: native_identity(),
            selection_source: SelectionSource::Request,
        }),
        other => Err(SelectionError::Unknown {
            id: other.to_string(),
            known: std::iter::once("auto")
                .chain(std::iter::once(NATIVE_PROVIDER_ID))
                .chain(DEEP_PROVIDERS.iter().copied())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The open target. Immutable once opened, so completion can read it without
/// holding the session lock.
pub struct ActiveTarget {
    pub admitted: AdmittedTarget,
    pub image: NativeImage,
    pub binding: Binding,
    indexes: Vec<procedure_index::Slot>,
}

impl ActiveTarget {
    /// Document names, in file order.
    pub fn document_names(&self) -> Vec<String> {
        self.image
            .documents()
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    /// The file-level Evidence subject.
    pub fn subject(&self) -> Subject {
        let documents = self.image.documents();
        Subject {
            sha256: self.image.sha256().to_string(),
            format: self.image.format().as_str().to_string(),
            architecture: match documents {
                [only] => Some(only.architecture.clone()),
                _ => None,
            },
        }
    }

    /// The Evidence subject of one document.
    pub fn document_subject(&self, document: usize) -> Subject {
        let info = &self.image.documents()[document];
        Subject {
            sha256: self.image.sha256().to_string(),
            format: info.format.as_str().to_string(),
            architecture: Some(info.architecture.clone()),
        }
    }

    /// The procedure inventory of a document with its prepared completion
    /// index, built together on first use.
    pub fn procedure_index(&self, document: usize) -> Result<Arc<ProcedureIndex>, ProviderError> {
        self.indexes[document].get_or_build(&self.image, document, &|_, _| {})
    }

    pub fn display_path(&self) -> String {
        self.admitted.requested.display().to_string()
    }

    /// A draft of something the bound provider read from this target.
    pub fn observation(
        &self,
        operation: &'static str,
        subject: Subject,
        parameters: serde_json::Value,
        result: serde_json::Value,
        limitations: Vec<String>,
    ) -> EvidenceDraft {
        EvidenceDraft {
            operation,
            subject: Some(subject),
            provider: self.binding.provider.clone(),
            parameters,
            result,
            confidence: Confidence::Observed,
            limitations,
            locations: Vec::new(),
            local_path: Some(self.display_path()),
        }
    }
}

/// The per-connection session.
#[derive(Default)]
pub struct Session {
    read_roots: ReadRoots,
    target: Option<Arc<ActiveTarget>>,
    current_document: usize,
    ledger: Ledger,
}

/// Why an operation on the session failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("no target is open")]
    TargetRequired,
    #[error(transparent)]
    Admission(#[from] AdmissionError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Function(#[from] FunctionError),
    #[error(transparent)]
    Selection(#[from] SelectionError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("cannot record Evidence: {0}")]
    Evidence(String),
}

impl Session {
    pub fn new(read_roots: ReadRoots) -> Session {
        Session {
            read_roots,
            ..Session::default()
        }
    }

    pub fn read_roots(&self) -> &ReadRoots {
        &self.read_roots
    }

    pub fn target(&self) -> Option<&Arc<ActiveTarget>> {
        self.target.as_ref()
    }

    pub fn require_target(&self) -> Result<&Arc<ActiveTarget>, SessionError> {
        self.target.as_ref().ok_or(SessionError::TargetRequired)
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn current_document(&self) -> Option<usize> {
        self.target.as_ref().map(|_| self.current_document)
    }

    /// Opens `path` and makes it the active target. On failure the previous
    /// target stays active.
    pub fn open(
        &mut self,
        path: &Path,
        provider_id: Option<&str>,
    ) -> Result<Arc<ActiveTarget>, SessionError> {
        let binding = select_provider(provider_id)?;
        let admitted = admission::admit(path, &self.read_roots)?;
        let image = NativeImage::open(&admitted.file)?;
        let indexes = (0..image.documents().len())
            .map(|_| procedure_index::Slot::default())
            .collect();
        let target = Arc::new(ActiveTarget {
            admitted,
            image,
            binding,
            indexes,
        });
        // Identity is part of every record; compute it while opening.
        let _ = target.image.sha256();
        self.target = Some(target.clone());
        self.current_document = 0;
        Ok(target)
    }

    /// Closes the target and clears everything the session owns.
    pub fn close(&mut self) -> Result<String, SessionError> {
        let target = self.target.take().ok_or(SessionError::TargetRequired)?;
        self.ledger = Ledger::default();
        self.current_document = 0;
        Ok(target.display_path())
    }

    /// Resolves an optional document name to an index (default: current).
    pub fn document_index(&self, name: Option<&str>) -> Result<usize, SessionError> {
        let target = self.require_target()?;
        match name {
            Some(name) => Ok(target.image.document_index(name)?),
            None => Ok(self.current_document),
        }
    }

    pub fn set_current_document(&mut self, name: &str) -> Result<String, SessionError> {
        let index = self.document_index(Some(name))?;
        self.current_document = index;
        Ok(name.to_string())
    }

    /// Seals and records Evidence.
    pub fn record(&mut self, draft: EvidenceDraft) -> Result<Evidence, SessionError> {
        let evidence = draft
            .seal()
            .map_err(|e| SessionError::Evidence(e.to_string()))?;
        self.ledger.record(evidence.clone())?;
        Ok(evidence)
    }
}
