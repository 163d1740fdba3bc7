//! Write policy: where tools may create files. Writing is off unless the
//! operator names write roots (`rea mcp --write-root DIR`); a path is then
//! accepted only if its parent resolves (through every symlink) inside a
//! root, it has no `..` component, and its final component is not a symlink.

use std::path::{Component, Path, PathBuf};

use crate::ground::confined::{self, OpenError, Roots, WriteTarget};

use crate::ground::text::{EXCERPT_CHARS, excerpt};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("writing files is disabled: the operator configured no write root")]
    Disabled,
    #[error("write root {path} cannot be used: {reason}")]
    BadRoot { path: String, reason: String },
    #[error("{path} is outside the operator's write roots ({roots})")]
    OutsideRoots { path: String, roots: String },
    #[error("{path} is not an acceptable output path: {reason}")]
    BadPath { path: String, reason: String },
    #[error("{path} already exists")]
    AlreadyExists { path: String },
    #[error("cannot write {path}: {reason}")]
    Io { path: String, reason: String },
}

impl WriteError {}

/// The operator's write roots, opened once; empty means writing is off.
#[derive(Debug, Clone, Default)]
pub struct WriteRoots(Roots);

/// Where a file will be written: its parent directory, opened beneath a
/// write root, and its name there; `path` is what to report.
#[derive(Debug)]
pub struct Destination {
    pub path: PathBuf,
    target: WriteTarget,
}

impl WriteRoots {
    pub fn new(roots: &[PathBuf]) -> Result<WriteRoots, WriteError> {
        Roots::open("write", roots)
            .map(WriteRoots)
            .map_err(|e| WriteError::BadRoot {
                path: e.path,
                reason: e.reason,
            })
    }

    pub fn is_enabled(&self) -> bool {
        self.0.is_confined()
    }

    /// The roots' canonical paths.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.0.paths()
    }

    /// These roots narrowed to their subdirectory `name`, made if missing:
    /// on a shared server each analyst writes beneath a directory of their
    /// own, so no one replaces another's file.
    pub fn for_user(&self, name: &str) -> Result<WriteRoots, WriteError> {
        self.0
            .subdirectories(name)
            .map(WriteRoots)
            .map_err(|e| WriteError::BadRoot {
                path: e.path,
                reason: e.reason,
            })
    }

    /// Opens an existing `path` beneath these roots to read it back (a
    /// bundle written earlier); `None` when writing is off or `path` lies
    /// outside them.
    pub fn open_to_read(&self, path: &Path) -> Option<Result<confined::Node, OpenError>> {
        if !self.is_enabled() {
            return None;
        }
        match self.0.open_path(path) {
            Err(OpenError::OutsideRoots { .. }) => None,
            other => Some(other),
        }
    }

    /// Where `path` would be written, or why it may not be. The parent is
    /// opened beneath its root here; the write then happens relative to
    /// that handle, so nothing swapped in later redirects it.
    pub fn resolve(&self, path: &Path, overwrite: bool) -> Result<Destination, WriteError> {
        if !self.is_enabled() {
            return Err(WriteError::Disabled);
        }
        let shown = excerpt(&path.display().to_string(), 4 * EXCERPT_CHARS);
        let bad = |reason: &str| WriteError::BadPath {
            path: shown.clone(),
            reason: reason.to_string(),
        };
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(bad("`..` components are not accepted"));
        }
        let absolute = std::path::absolute(path).map_err(|e| bad(&e.to_string()))?;
        let (dir, name) = self.0.open_parent(&absolute).map_err(|e| match e {
            OpenError::OutsideRoots { roots, .. } => WriteError::OutsideRoots {
                path: shown.clone(),
                roots,
            },
            other => bad(&format!(
                "its directory cannot be opened ({})",
                other.kind()
            )),
        })?;
        match dir.symlink_metadata(Path::new(&name)) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(bad("it is a symlink")),
            Ok(meta) if !meta.is_file() => return Err(bad("it exists and is not a regular file")),
            Ok(_) if !overwrite => return Err(WriteError::AlreadyExists { path: shown }),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(WriteError::Io {
                    path: shown,
                    reason: e.to_string(),
                });
            }
        }
        Ok(Destination {
            path: absolute,
            target: WriteTarget { dir, name },
        })
    }
}

/// Writes `bytes` to `destination` atomically (see
/// [`confined::write_atomically`](crate::ground::confined::write_atomically)):
/// without `overwrite`, a file that appeared meanwhile is not replaced.
pub fn write_atomically(
    destination: &Destination,
    bytes: &[u8],
    overwrite: bool,
) -> Result<(), WriteError> {
    let shown = || destination.path.display().to_string();
    confined::write_atomically(&destination.target, bytes, overwrite).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            WriteError::AlreadyExists { path: shown() }
        } else {
            WriteError::Io {
                path: shown(),
                reason: e.to_string(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".rea-tmp-"))
            .collect()
    }

    #[test]
    fn no_write_root_means_writing_is_disabled() {
        let err = WriteRoots::default()
            .resolve(Path::new("/tmp/x.json"), false)
            .unwrap_err();
        assert_eq!(err, WriteError::Disabled);
    }

    #[test]
    fn paths_are_confined_to_the_roots() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let roots = WriteRoots::new(&[root.path().to_path_buf()]).unwrap();
        let inside = root.path().join("bundle.json");
        assert_eq!(roots.resolve(&inside, false).unwrap().path, inside);
        let err = roots
            .resolve(&outside.path().join("b.json"), false)
            .unwrap_err();
        assert!(matches!(err, WriteError::OutsideRoots { .. }));
        // `..` is refused outright, even when it would land inside.
        std::fs::create_dir(root.path().join("sub")).unwrap();
        let dotdot = root.path().join("sub/../../escape.json");
        assert!(matches!(
            roots.resolve(&dotdot, false).unwrap_err(),
            WriteError::BadPath { .. }
        ));
        // A symlinked directory inside the root that points outside.
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        let err = roots
            .resolve(&root.path().join("link/b.json"), false)
            .unwrap_err();
        assert!(matches!(err, WriteError::OutsideRoots { .. }));
        // A symlink as the final component, even one pointing inside.
        std::fs::write(root.path().join("real.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(root.path().join("real.json"), root.path().join("ln.json"))
            .unwrap();
        let err = roots
            .resolve(&root.path().join("ln.json"), true)
            .unwrap_err();
        assert!(matches!(err, WriteError::BadPath { .. }));
        // Existing files need overwrite.
        assert!(matches!(
            roots
                .resolve(&root.path().join("real.json"), false)
                .unwrap_err(),
            WriteError::AlreadyExists { .. }
        ));
        assert!(roots.resolve(&root.path().join("real.json"), true).is_ok());
        assert!(matches!(
            WriteRoots::new(&[root.path().join("real.json")]).unwrap_err(),
            WriteError::BadRoot { .. }
        ));
    }

    /// A refusal quotes a hostile path only in part.
    #[test]
    fn refusals_quote_a_huge_path_only_in_part() {
        let root = tempfile::tempdir().unwrap();
        let roots = WriteRoots::new(&[root.path().to_path_buf()]).unwrap();
        for path in [
            root.path().join("a".repeat(1 << 20)),
            root.path().join("missing").join("b".repeat(1 << 20)),
            PathBuf::from("/").join("c".repeat(1 << 20)),
        ] {
            let message = roots.resolve(&path, false).unwrap_err().to_string();
            assert!(message.len() < 1024, "echoed {} bytes", message.len());
        }
    }

    #[test]
    fn atomic_writes_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let roots = WriteRoots::new(&[dir.path().to_path_buf()]).unwrap();
        let target = dir.path().join("out.json");
        let at = roots.resolve(&target, true).unwrap();
        write_atomically(&at, b"one", false).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        // Refusing to replace leaves the old content and no temp file.
        let err = write_atomically(&at, b"two", false).unwrap_err();
        assert!(matches!(err, WriteError::AlreadyExists { .. }));
        assert_eq!(std::fs::read(&target).unwrap(), b"one");
        write_atomically(&at, b"three", true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"three");
        // Renaming onto a directory fails after the temp file was written.
        let taken = roots.resolve(&dir.path().join("taken"), true).unwrap();
        std::fs::create_dir(dir.path().join("taken")).unwrap();
        assert!(write_atomically(&taken, b"x", true).is_err());
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }
}
