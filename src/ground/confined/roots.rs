//! Operator roots, opened once as directory handles, and how a requested
//! path is located under one of them.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_fs_ext::FollowSymlinks;
use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::handle::{self, ConfinedDir, Node};
use super::{ConfinedFile, OpenError};
use crate::ground::text::{PATH_CHARS, excerpt};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{label} root {path} cannot be used: {reason}")]
pub struct RootError {
    pub label: &'static str,
    pub path: String,
    pub reason: String,
}

struct Root {
    /// The root as the operator named it, made absolute.
    given: PathBuf,
    /// Its canonical path when it was opened.
    real: PathBuf,
    dir: ConfinedDir,
}

/// The operator's roots of one kind (`read` or `write`); none means
/// unconfined (for reading) or disabled (for writing, decided by the
/// caller).
#[derive(Clone)]
pub struct Roots {
    label: &'static str,
    roots: Arc<Vec<Root>>,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            label: "read",
            roots: Arc::default(),
        }
    }
}

impl std::fmt::Debug for Roots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Roots")
            .field("label", &self.label)
            .field("roots", &self.paths())
            .finish()
    }
}

/// `path` with `.` dropped, or `None` when it has a `..` (which only the
/// file system can resolve).
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => return None,
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

impl Roots {
    /// Opens each root directory; `label` (`read`, `write`) names them in
    /// messages.
    pub fn open(label: &'static str, paths: &[PathBuf]) -> Result<Roots, RootError> {
        let mut roots = Vec::with_capacity(paths.len());
        for path in paths {
            let bad = |reason: String| RootError {
                label,
                path: path.display().to_string(),
                reason,
            };
            let given = std::path::absolute(path).map_err(|e| bad(e.to_string()))?;
            let real = given.canonicalize().map_err(|e| bad(e.to_string()))?;
            let dir = Dir::open_ambient_dir(&real, ambient_authority()).map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOTDIR) {
                    bad("not a directory".into())
                } else {
                    bad(e.to_string())
                }
            })?;
            roots.push(Root {
                given: lexical(&given).unwrap_or_else(|| real.clone()),
                dir: ConfinedDir::from_dir(dir, real.display().to_string()),
                real,
            });
        }
        Ok(Roots {
            label,
            roots: Arc::new(roots),
        })
    }

    /// The same roots narrowed to their subdirectory `name` (one plain
    /// path component), each made if missing (mode 0700) and opened beneath
    /// its root without following a symlink: a root of its own for one
    /// user of a shared server.
    pub fn subdirectories(&self, name: &str) -> Result<Roots, RootError> {
        let mut roots = Vec::with_capacity(self.roots.len());
        for root in self.roots.iter() {
            let bad = |reason: String| RootError {
                label: self.label,
                path: root.real.join(name).display().to_string(),
                reason,
            };
            let plain = Path::new(name).components().count() == 1
                && matches!(
                    Path::new(name).components().next(),
                    Some(Component::Normal(_))
                );
            if !plain {
                return Err(bad("not a plain directory name".into()));
            }
            let mut builder = cap_std::fs::DirBuilder::new();
            cap_std::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match root.dir.cap().create_dir_with(name, &builder) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(bad(e.to_string())),
            }
            let dir = root
                .dir
                .open_no_symlinks(Path::new(name))
                .and_then(Node::into_dir)
                .map_err(|e| bad(e.to_string()))?;
            roots.push(Root {
                given: root.given.join(name),
                real: root.real.join(name),
                dir: dir.shown_as(root.real.join(name).display().to_string()),
            });
        }
        Ok(Roots {
            label: self.label,
            roots: Arc::new(roots),
        })
    }

    pub fn label(&self) -> &'static str {
        self.label
    }

    /// Whether any root is set.
    pub fn is_confined(&self) -> bool {
        !self.roots.is_empty()
    }

    /// The roots' canonical paths.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|r| r.real.clone()).collect()
    }

    fn listed(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.real.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn outside(&self, shown: &str) -> OpenError {
        OpenError::OutsideRoots {
            path: shown.to_owned(),
            label: self.label,
            roots: self.listed(),
        }
    }

    /// The root `path` lies under and the rest of the path. The path is
    /// first taken as written; when it has `..` or lies under no root as
    /// written, its canonical form decides. Either way this only *locates*:
    /// the open that follows resolves the rest beneath the root's handle,
    /// so a component swapped for a symlink afterwards cannot leave it.
    fn locate(&self, path: &Path, shown: &str) -> Result<(&Root, PathBuf), OpenError> {
        let absolute = std::path::absolute(path).map_err(|e| OpenError::NotFound {
            path: shown.to_owned(),
            reason: e.to_string(),
        })?;
        if let Some(plain) = lexical(&absolute) {
            for root in self.roots.iter() {
                for base in [&root.given, &root.real] {
                    if let Ok(rest) = plain.strip_prefix(base) {
                        return Ok((root, rest.to_path_buf()));
                    }
                }
            }
        }
        let real = absolute.canonicalize().map_err(|e| OpenError::NotFound {
            path: shown.to_owned(),
            reason: e.to_string(),
        })?;
        for root in self.roots.iter() {
            if let Ok(rest) = real.strip_prefix(&root.real) {
                return Ok((root, rest.to_path_buf()));
            }
        }
        Err(self.outside(shown))
    }

    /// Opens `path` (a regular file or a directory) beneath its root, or
    /// anywhere when no root is set. Symlinks inside a root are followed
    /// while they stay inside it.
    pub fn open_path(&self, path: &Path) -> Result<Node, OpenError> {
        let shown = excerpt(&path.display().to_string(), PATH_CHARS);
        if !self.is_confined() {
            return handle::open_ambient(path, shown);
        }
        let (root, rest) = self.locate(path, &shown)?;
        let node = root
            .dir
            .open_with(&rest, FollowSymlinks::Yes, self.label, &self.listed())?;
        Ok(rename(node, shown))
    }

    pub fn open_file(&self, path: &Path) -> Result<ConfinedFile, OpenError> {
        self.open_path(path)?.into_file()
    }

    pub fn open_dir(&self, path: &Path) -> Result<ConfinedDir, OpenError> {
        self.open_path(path)?.into_dir()
    }

    /// The parent directory of `path`, opened beneath its root, and the
    /// final name: where a file is to be created. The final component
    /// must be a plain name.
    pub fn open_parent(&self, path: &Path) -> Result<(ConfinedDir, std::ffi::OsString), OpenError> {
        let shown = excerpt(&path.display().to_string(), PATH_CHARS);
        let absolute = std::path::absolute(path).map_err(|e| OpenError::NotFound {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
            return Err(OpenError::NotFound {
                path: shown,
                reason: "it names no file".into(),
            });
        };
        let dir = if self.is_confined() {
            let (root, rest) = self.locate(parent, &shown)?;
            root.dir
                .open_with(&rest, FollowSymlinks::Yes, self.label, &self.listed())?
                .into_dir()?
        } else {
            handle::open_ambient(parent, excerpt(&parent.display().to_string(), PATH_CHARS))?
                .into_dir()?
        };
        Ok((dir, name.to_owned()))
    }
}

/// The node, shown as the caller named it.
fn rename(node: Node, shown: String) -> Node {
    match node {
        Node::File(f) => Node::File(f.shown_as(shown)),
        Node::Dir(d) => Node::Dir(d.shown_as(shown)),
    }
}
