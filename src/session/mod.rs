//! The binary session: one active target, its provider binding, the Evidence
//! ledger and the per-document procedure indexes.
//!
//! Lifecycle: opening another target switches to it and keeps the ledger (an
//! investigation compares targets); only [`Session::close`] (or the end of the
//! connection, which drops the session) clears the target, the ledger and
//! everything else the session owns.

pub mod admission;
mod analysis;
pub mod artifact_records;
pub mod artifact_target;
pub mod bundle;
pub mod canonical;
pub mod capture_policy;
pub mod capture_records;
pub mod deep;
pub mod evidence;
pub mod ledger;
pub mod policy;
mod procedure_index;
pub mod unknowns;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::artifacts::{self, ArtifactError, ArtifactFormat};
use crate::providers::native::{Extents, FunctionError, NativeImage};
use crate::providers::radare2::{Radare2Error, Radare2Session};
use crate::providers::{Inventory, NATIVE_PROVIDER_ID, ProviderError};

pub use admission::{AdmissionError, AdmittedTarget, AvailableAction, ReadRoots};
pub use artifact_target::{ArtifactRoot, ArtifactTarget};
pub use bundle::{BundleError, ExportSummary, ImportSummary};
pub use capture_policy::{CapturePolicy, CapturePolicyError, CaptureSettings};
pub use deep::{Choice, DEEP_PROVIDERS, DeepProviders, SelectionError, SelectionSource};
pub use evidence::{
    Authority, Confidence, Evidence, EvidenceDraft, Location, ProviderIdentity, Subject,
};
pub use ledger::{Ledger, LedgerError, Recorded};
pub use policy::{WriteError, WriteRoots};
pub use procedure_index::ProcedureIndex;
pub use unknowns::UnknownError;

/// Identity of the built-in provider, as recorded in Evidence.
pub fn native_identity() -> ProviderIdentity {
    ProviderIdentity {
        id: NATIVE_PROVIDER_ID.to_string(),
        name: "rea native provider (object)".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The provider bound to the active target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    pub provider: ProviderIdentity,
    pub selection_source: SelectionSource,
}

/// Who answers code questions for the active target.
pub(crate) enum Backend {
    Native,
    Radare2(Box<Radare2Backend>),
}

/// A radare2 process bound to the target, and its cached inventory. The
/// process restarts on the next call after a timeout or crash (the
/// provider's own rule); the session never falls back to another provider.
pub(crate) struct Radare2Backend {
    pub session: Mutex<Radare2Session>,
    /// radare2's inventory and its extents (bounded by the file's
    /// sections), loaded on first use.
    pub inventory: Mutex<Option<(Arc<Inventory>, Arc<Extents>)>>,
}

/// The open target. Immutable once opened, so completion can read it without
/// holding the session lock.
pub struct ActiveTarget {
    pub admitted: AdmittedTarget,
    /// The file as the built-in provider reads it: documents, layout,
    /// strings and identity come from here whatever the binding.
    pub image: NativeImage,
    pub binding: Binding,
    pub(crate) backend: Backend,
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
    pub fn procedure_index(&self, document: usize) -> Result<Arc<ProcedureIndex>, SessionError> {
        self.procedure_index_with_progress(document, &|_, _| {})
    }

    pub fn display_path(&self) -> String {
        self.admitted.requested.display().to_string()
    }

    /// A draft of something the built-in provider read from the file itself
    /// (documents, layout, strings), whatever provider is bound.
    pub fn file_observation(
        &self,
        operation: &'static str,
        subject: Subject,
        parameters: serde_json::Value,
        result: serde_json::Value,
        limitations: Vec<String>,
    ) -> EvidenceDraft {
        EvidenceDraft {
            provider: native_identity(),
            ..self.observation(operation, subject, parameters, result, limitations)
        }
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
            operation: operation.to_string(),
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
    deep: Arc<DeepProviders>,
    /// The opened artifact as a whole; set whenever a target is open.
    artifact: Option<Arc<ArtifactTarget>>,
    /// Its code documents, when it has any (not for archives).
    target: Option<Arc<ActiveTarget>>,
    current_document: usize,
    /// Evidence records and residual-unknown revisions.
    ledger: Ledger,
    /// Where tools may write files (empty: nowhere).
    write_roots: WriteRoots,
    /// Whether and where processes may be run (off by default).
    capture: CapturePolicy,
}

/// The operator's policies every session of a server runs under.
#[derive(Debug, Clone, Default)]
pub struct Policies {
    pub read_roots: ReadRoots,
    pub write_roots: WriteRoots,
    pub capture: CapturePolicy,
}

/// What [`Session::open`] opened.
pub struct Opened {
    pub artifact: Arc<ArtifactTarget>,
    /// The code view; `None` for an archive.
    pub binary: Option<Arc<ActiveTarget>>,
}

/// Why an operation on the session failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("no target is open")]
    TargetRequired,
    #[error("{path} is a {format} archive: it has no code documents to analyse")]
    NoCodeDocuments { path: String, format: &'static str },
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error(transparent)]
    Admission(#[from] AdmissionError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Function(#[from] FunctionError),
    #[error(transparent)]
    Radare2(#[from] Radare2Error),
    #[error(transparent)]
    Selection(#[from] SelectionError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("cannot record Evidence: {0}")]
    Evidence(String),
    #[error(transparent)]
    Unknown(#[from] UnknownError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Bundle(#[from] BundleError),
}

impl Session {
    pub fn new(read_roots: ReadRoots, deep: Arc<DeepProviders>) -> Session {
        Session {
            read_roots,
            deep,
            ..Session::default()
        }
    }

    /// The session with the operator's write roots.
    pub fn with_write_roots(mut self, write_roots: WriteRoots) -> Session {
        self.write_roots = write_roots;
        self
    }

    pub fn write_roots(&self) -> &WriteRoots {
        &self.write_roots
    }

    /// The session with the operator's process-capture policy.
    pub fn with_capture_policy(mut self, capture: CapturePolicy) -> Session {
        self.capture = capture;
        self
    }

    pub fn capture_policy(&self) -> &CapturePolicy {
        &self.capture
    }

    /// The deep providers this server offers.
    pub fn deep_providers(&self) -> &DeepProviders {
        &self.deep
    }

    pub fn read_roots(&self) -> &ReadRoots {
        &self.read_roots
    }

    pub fn target(&self) -> Option<&Arc<ActiveTarget>> {
        self.target.as_ref()
    }

    /// The code view of the open target. An open archive (which has none)
    /// is its own error, so the analyst learns why rather than being told
    /// nothing is open.
    pub fn require_target(&self) -> Result<&Arc<ActiveTarget>, SessionError> {
        match (&self.target, &self.artifact) {
            (Some(target), _) => Ok(target),
            (None, Some(artifact)) => Err(SessionError::NoCodeDocuments {
                path: artifact.display.clone(),
                format: artifact.format.as_str(),
            }),
            (None, None) => Err(SessionError::TargetRequired),
        }
    }

    /// The opened artifact as a whole (any target, archives included).
    pub fn artifact(&self) -> Option<&Arc<ArtifactTarget>> {
        self.artifact.as_ref()
    }

    pub fn require_artifact(&self) -> Result<&Arc<ArtifactTarget>, SessionError> {
        self.artifact.as_ref().ok_or(SessionError::TargetRequired)
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn current_document(&self) -> Option<usize> {
        self.target.as_ref().map(|_| self.current_document)
    }

    /// Opens `path` and makes it the active target. On failure the previous
    /// target stays active.
    ///
    /// Archives (zip family, `ar`, `.asar`) are opened as artifacts only;
    /// everything else must be a binary the native provider reads (a plain
    /// file, a universal Mach-O, or an `.app` bundle's executable), whose
    /// artifact view is the file or the bundle.
    pub fn open(&mut self, path: &Path, provider_id: Option<&str>) -> Result<Opened, SessionError> {
        let admitted = admission::admit(path, &self.read_roots)?;
        let io = |e: std::io::Error| ArtifactError::Io {
            path: admitted.requested.display().to_string(),
            reason: e.to_string(),
        };
        let (format, root) = match &admitted.bundle {
            Some(dir) => (
                ArtifactFormat::AppBundle,
                ArtifactRoot::Bundle(dir.try_clone().map_err(io)?),
            ),
            None => {
                let format = artifacts::sniff(&admitted.file)?.unwrap_or(ArtifactFormat::File);
                let unpacked = match format {
                    ArtifactFormat::Asar => artifacts::asar::unpacked_dir(
                        self.read_roots.handles(),
                        &admitted.requested,
                    ),
                    _ => None,
                };
                let file = admitted.file.try_clone().map_err(io)?;
                (format, ArtifactRoot::File { file, unpacked })
            }
        };
        let path = admitted.requested.clone();
        let binary = match format {
            ArtifactFormat::Zip | ArtifactFormat::Ar | ArtifactFormat::Asar => None,
            _ => Some(self.open_binary(admitted, provider_id)?),
        };
        // A file read as a binary was hashed by the code view: reuse it.
        let known = match (&binary, format) {
            (_, ArtifactFormat::AppBundle) | (None, _) => None,
            (Some(b), _) => Some(b.image.sha256().to_string()),
        };
        let artifact = Arc::new(ArtifactTarget::new(root, path, format, known)?);
        self.artifact = Some(artifact.clone());
        self.target = binary.clone();
        self.current_document = 0;
        Ok(Opened { artifact, binary })
    }

    fn open_binary(
        &self,
        admitted: AdmittedTarget,
        provider_id: Option<&str>,
    ) -> Result<Arc<ActiveTarget>, SessionError> {
        let image = NativeImage::from_file(&admitted.file, &admitted.file_path)?;
        let (binding, backend) = match self.deep.select(provider_id, image.format())? {
            Choice::Native(selection_source) => (
                Binding {
                    provider: native_identity(),
                    selection_source,
                },
                Backend::Native,
            ),
            Choice::Radare2 {
                launcher,
                options,
                source,
            } => {
                let descriptor = admitted.file.try_clone().map_err(|e| ProviderError::Io {
                    path: admitted.file.shown().to_string(),
                    reason: e.to_string(),
                })?;
                let mut radare2 = Radare2Session::from_file(
                    descriptor.into_file(),
                    &admitted.file_path,
                    launcher,
                    options,
                )?;
                radare2.open()?;
                let provider = radare2.identity()?;
                let backend = Backend::Radare2(Box::new(Radare2Backend {
                    session: Mutex::new(radare2),
                    inventory: Mutex::new(None),
                }));
                (
                    Binding {
                        provider,
                        selection_source: source,
                    },
                    backend,
                )
            }
        };
        let indexes = (0..image.documents().len())
            .map(|_| procedure_index::Slot::default())
            .collect();
        let target = Arc::new(ActiveTarget {
            admitted,
            image,
            binding,
            backend,
            indexes,
        });
        // Identity is part of every record; compute it while opening.
        let _ = target.image.sha256();
        Ok(target)
    }

    /// Closes the target and clears everything the session owns: the
    /// ledger takes the residual-unknown registry with it.
    ///
    /// Works with nothing open too, so a ledger filled by an import can
    /// always be cleared. Returns the path of the target that was open.
    pub fn close(&mut self) -> Option<String> {
        let artifact = self.artifact.take();
        self.target = None;
        self.ledger = Ledger::default();
        self.current_document = 0;
        artifact.map(|a| a.display.clone())
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
