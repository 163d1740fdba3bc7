//! The artifact the analyst opened, as a whole: a plain file, a universal
//! Mach-O, a macOS `.app` bundle, or an archive (zip family, `ar`, `.asar`).
//!
//! Every successful `open_binary` has one. Only some have code documents:
//! an archive is inspected (`inspect_artifact`) but not disassembled, since
//! nothing is ever extracted from it. The inspection is computed on first
//! use and kept for the target's lifetime, keyed by its limits, so paging
//! through a large artifact walks it once.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::ground::confined::{ConfinedDir, ConfinedFile};

use super::evidence::Subject;
use crate::artifacts::{self, ArtifactError, ArtifactFormat, Inspection, Limits};

/// How many inspections (distinct limit sets) a target keeps.
const KEPT_INSPECTIONS: usize = 2;

/// The opened root of an artifact: every later read goes through it.
pub enum ArtifactRoot {
    /// A file, and for an asar the `<archive>.unpacked` directory beside
    /// it when there is one.
    File {
        file: ConfinedFile,
        unpacked: Option<ConfinedDir>,
    },
    /// An `.app` bundle directory.
    Bundle(ConfinedDir),
}

pub struct ArtifactTarget {
    root: ArtifactRoot,
    /// The path the root was opened at (as requested, made absolute).
    pub path: PathBuf,
    /// The path as requested, for display.
    pub display: String,
    pub format: ArtifactFormat,
    /// sha256 of the root file; `None` for a bundle directory, whose digest
    /// is its inspection's listing digest.
    file_sha256: Option<String>,
    inspections: Mutex<Vec<(Limits, Arc<Inspection>)>>,
}

impl ArtifactTarget {
    /// `sha256` is the root file's digest (the opener hashed the same
    /// descriptor); a bundle directory has none.
    pub(crate) fn new(
        root: ArtifactRoot,
        path: PathBuf,
        format: ArtifactFormat,
        sha256: Option<String>,
    ) -> ArtifactTarget {
        let file_sha256 = match &root {
            ArtifactRoot::Bundle(_) => None,
            ArtifactRoot::File { .. } => sha256,
        };
        let display = path.display().to_string();
        ArtifactTarget {
            root,
            path,
            display,
            format,
            file_sha256,
            inspections: Mutex::new(Vec::new()),
        }
    }

    /// Whether the artifact has documents the code tools can read.
    pub fn has_code(&self) -> bool {
        !matches!(
            self.format,
            ArtifactFormat::Zip | ArtifactFormat::Ar | ArtifactFormat::Asar
        )
    }

    pub fn file_sha256(&self) -> Option<&str> {
        self.file_sha256.as_deref()
    }

    /// The Evidence subject of the whole artifact, once its digest is known.
    pub fn subject(&self, root_sha256: &str) -> Subject {
        Subject {
            sha256: root_sha256.to_string(),
            format: self.format.as_str().to_string(),
            architecture: None,
        }
    }

    /// The inspection under `limits`, walked on first request.
    pub fn inspection(&self, limits: &Limits) -> Result<Arc<Inspection>, ArtifactError> {
        if let Some(found) = self.kept(limits) {
            return Ok(found);
        }
        let inspection = Arc::new(match &self.root {
            ArtifactRoot::Bundle(dir) => artifacts::inspect_bundle(dir, limits)?,
            ArtifactRoot::File { file, unpacked } => {
                let unpacked = match unpacked {
                    Some(dir) => Some(dir.try_clone().map_err(|e| io(file, e))?),
                    None => None,
                };
                artifacts::inspect_file(file, self.format, unpacked, limits)?
            }
        });
        let mut kept = self.inspections.lock().unwrap_or_else(|p| p.into_inner());
        if !kept.iter().any(|(l, _)| l == limits) {
            if kept.len() >= KEPT_INSPECTIONS {
                kept.remove(0);
            }
            kept.push((*limits, inspection.clone()));
        }
        Ok(inspection)
    }

    fn kept(&self, limits: &Limits) -> Option<Arc<Inspection>> {
        let kept = self.inspections.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter()
            .find(|(l, _)| l == limits)
            .map(|(_, i)| i.clone())
    }
}

fn io(file: &ConfinedFile, e: std::io::Error) -> ArtifactError {
    ArtifactError::Io {
        path: file.shown().to_string(),
        reason: e.to_string(),
    }
}
