//! Why a confined open failed. Messages name the path as the caller gave it
//! and the kind of problem; nothing read from a file ever appears in them.

use std::io;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("cannot open {path}: {reason}")]
    NotFound { path: String, reason: String },
    #[error("{path} is outside the operator's {label} roots ({roots})")]
    OutsideRoots {
        path: String,
        label: &'static str,
        roots: String,
    },
    #[error("{path} is {kind}, not a regular file")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path} is not a directory")]
    NotADirectory { path: String },
    #[error("{path} is {size} bytes; the limit is {limit} bytes")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
}

impl OpenError {
    /// The kind of problem in a few words, without the path: for messages
    /// about a file met inside a container, whose path is said elsewhere.
    pub fn kind(&self) -> &'static str {
        match self {
            OpenError::NotFound { .. } => "not found",
            OpenError::OutsideRoots { .. } => "outside the roots",
            OpenError::NotRegular { .. } => "not a regular file",
            OpenError::NotADirectory { .. } => "not a directory",
            OpenError::TooLarge { .. } => "too large",
            OpenError::Io { .. } => "unreadable",
        }
    }

    /// Maps an error of opening `path` beneath a root. cap-std reports an
    /// escape (a `..`, absolute or symlink path that would leave the root)
    /// as a permission error without an OS code.
    pub(crate) fn from_open(path: &str, label: &'static str, roots: &str, e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none() {
            return OpenError::OutsideRoots {
                path: path.to_owned(),
                label,
                roots: roots.to_owned(),
            };
        }
        match e.raw_os_error() {
            Some(libc::ELOOP) => OpenError::NotRegular {
                path: path.to_owned(),
                kind: "a symbolic link",
            },
            Some(libc::ENOTDIR) | Some(libc::ENOENT) => OpenError::NotFound {
                path: path.to_owned(),
                reason: e.to_string(),
            },
            _ => OpenError::Io {
                path: path.to_owned(),
                reason: e.to_string(),
            },
        }
    }
}
