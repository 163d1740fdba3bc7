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
use std::time::Duration;

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
    /// Size and time limits on opening targets.
    open_policy: OpenPolicy,
}

/// The operator's policies every session of a server runs under.
#[derive(Debug, Clone, Default)]
pub struct Policies {
    pub read_roots: ReadRoots,
    pub write_roots: WriteRoots,
    pub capture: CapturePolicy,
    pub open: OpenPolicy,
}

/// What [`Session::open`] opened.
#[derive(Clone)]
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
    #[error("{}", match .0 {
        Interruption::Cancelled => "the client cancelled the request; the previous target stays active".to_string(),
        Interruption::TimedOut(limit) => format!("the call ran past the operator's deadline of {} s and stopped; the previous target stays active", limit.as_secs()),
    })]
    Interrupted(Interruption),
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

    /// The session with the operator's limits on opening targets.
    pub fn with_open_policy(mut self, open_policy: OpenPolicy) -> Session {
        self.open_policy = open_policy;
        self
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

    /// What opening a target needs, without the session: an open can then
    /// run (hashing, mapping) while the session keeps answering.
    pub fn opener(&self) -> Opener {
        Opener {
            read_roots: self.read_roots.clone(),
            deep: self.deep.clone(),
            policy: self.open_policy,
        }
    }

    /// Opens `path` and makes it the active target. On failure the previous
    /// target stays active. See [`Opener::open`].
    pub fn open(&mut self, path: &Path, provider_id: Option<&str>) -> Result<Opened, SessionError> {
        let opened = self.opener().open(path, provider_id, &Watch::quiet())?;
        self.install(&opened);
        Ok(opened)
    }

    /// Makes an opened target the active one (the ledger stays).
    pub fn install(&mut self, opened: &Opened) {
        self.artifact = Some(opened.artifact.clone());
        self.target = opened.binary.clone();
        self.current_document = 0;
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

/// Operator limits on opening targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenPolicy {
    /// Larger files are refused (`file_too_large`) before anything reads them.
    pub max_target_bytes: u64,
    /// An open still hashing after this long stops (`call_timeout`).
    pub call_timeout: Duration,
}

/// The default `--max-target-bytes`: 4 GiB, about 15 s of hashing here.
pub const DEFAULT_MAX_TARGET_BYTES: u64 = 4 << 30;
/// The default `--call-timeout`.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for OpenPolicy {
    fn default() -> Self {
        OpenPolicy {
            max_target_bytes: DEFAULT_MAX_TARGET_BYTES,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

/// Why a long operation stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The client cancelled the request.
    Cancelled,
    /// The operator's deadline passed.
    TimedOut(Duration),
}

/// What a long open reports to, and asks whether to go on.
pub struct Watch<'a> {
    /// `(done, total)` bytes.
    pub progress: &'a dyn Fn(u64, u64),
    /// `Some` once the work should stop.
    pub interrupted: &'a dyn Fn() -> Option<Interruption>,
}

impl Watch<'static> {
    /// No reports, never interrupted.
    pub fn quiet() -> Watch<'static> {
        Watch {
            progress: &|_, _| {},
            interrupted: &|| None,
        }
    }
}

/// Opens targets for a session without holding it.
#[derive(Clone)]
pub struct Opener {
    read_roots: ReadRoots,
    deep: Arc<DeepProviders>,
    policy: OpenPolicy,
}

impl Opener {
    /// Opens `path` once beneath the read roots and builds the target,
    /// hashing it with progress reports and stopping when `watch` says so.
    /// Nothing of the session changes: [`Session::install`] does that.
    ///
    /// Archives (zip family, `ar`, `.asar`) are opened as artifacts only;
    /// everything else must be a binary the native provider reads (a plain
    /// file, a universal Mach-O, or an `.app` bundle's executable), whose
    /// artifact view is the file or the bundle.
    pub fn open(
        &self,
        path: &Path,
        provider_id: Option<&str>,
        watch: &Watch<'_>,
    ) -> Result<Opened, SessionError> {
        let admitted = admission::admit(path, &self.read_roots)?;
        let size = admitted.file.len();
        if size > self.policy.max_target_bytes {
            return Err(
                AdmissionError::from(crate::ground::confined::OpenError::TooLarge {
                    path: admitted.file_path.display().to_string(),
                    size,
                    limit: self.policy.max_target_bytes,
                })
                .into(),
            );
        }
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
        // Identity is part of every record: hash the opened file now, in
        // chunks that report progress and can stop.
        let mut stopped = None;
        let sha256 = admitted
            .file
            .sha256(&mut |done, total| {
                (watch.progress)(done, total);
                stopped = (watch.interrupted)();
                stopped.is_none()
            })
            .map_err(io)?;
        let Some(sha256) = sha256 else {
            return Err(SessionError::Interrupted(
                stopped.unwrap_or(Interruption::Cancelled),
            ));
        };
        let path = admitted.requested.clone();
        let binary = match format {
            ArtifactFormat::Zip | ArtifactFormat::Ar | ArtifactFormat::Asar => None,
            _ => Some(self.open_binary(admitted, provider_id, sha256.clone())?),
        };
        let artifact = Arc::new(ArtifactTarget::new(root, path, format, Some(sha256)));
        Ok(Opened { artifact, binary })
    }

    fn open_binary(
        &self,
        admitted: AdmittedTarget,
        provider_id: Option<&str>,
        sha256: String,
    ) -> Result<Arc<ActiveTarget>, SessionError> {
        let image = NativeImage::from_file(&admitted.file, &admitted.file_path)?;
        image.set_sha256(sha256);
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
        Ok(target)
    }
}

#[cfg(test)]
mod open_tests {
    use super::*;
    use std::cell::Cell;

    /// A file of `size` bytes starting with a real ELF.
    fn elf_of_size(dir: &Path, size: u64) -> std::path::PathBuf {
        let path = dir.join("t.elf");
        std::fs::write(&path, crate::providers::native::fixtures::tiny_elf()).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(size)
            .unwrap();
        path
    }

    #[test]
    fn an_interrupted_open_stops_within_a_chunk_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = elf_of_size(dir.path(), 64 << 20);
        let session = Session::default();
        let chunks = Cell::new(0u32);
        let progress = |_, _| chunks.set(chunks.get() + 1);
        let interrupted = || (chunks.get() >= 3).then_some(Interruption::Cancelled);
        let watch = Watch {
            progress: &progress,
            interrupted: &interrupted,
        };
        let err = session.opener().open(&path, None, &watch).err().unwrap();
        assert_eq!(err, SessionError::Interrupted(Interruption::Cancelled));
        assert_eq!(chunks.get(), 3, "stopped at the first check that said so");
        assert!(session.target().is_none());
        // Uninterrupted, the same file opens with its whole-file identity.
        let opened = session.opener().open(&path, None, &Watch::quiet()).unwrap();
        let expected = crate::ground::confined::Roots::default()
            .open_file(&path)
            .unwrap()
            .sha256(&mut |_, _| true)
            .unwrap()
            .unwrap();
        assert_eq!(opened.binary.unwrap().image.sha256(), expected);
    }

    #[test]
    fn targets_over_the_size_limit_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = elf_of_size(dir.path(), 2 << 20);
        let session = Session::default().with_open_policy(OpenPolicy {
            max_target_bytes: 1 << 20,
            ..OpenPolicy::default()
        });
        let err = session
            .opener()
            .open(&path, None, &Watch::quiet())
            .err()
            .unwrap();
        let SessionError::Admission(AdmissionError::Open(e)) = &err else {
            panic!("{err}");
        };
        assert!(matches!(
            e,
            crate::ground::confined::OpenError::TooLarge { .. }
        ));
        assert!(err.to_string().contains("1048576"), "{err}");
    }
}
