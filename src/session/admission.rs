//! Target admission: the one function `open_binary` and `rea doctor --target`
//! share. It resolves a path to the file a provider should read, confined to
//! the operator's read roots.
//!
//! Files are admitted as they are (the provider then decides whether it reads
//! the format). A macOS `.app` bundle is admitted through its Info.plist
//! `CFBundleExecutable`, resolved inside `Contents/MacOS`; a symlink that
//! escapes that directory is rejected. Every other directory is refused.

use std::path::{Path, PathBuf};

/// Bound on the Info.plist we are willing to parse.
pub(crate) const MAX_PLIST_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error("cannot open {path}: {reason}")]
    NotFound { path: String, reason: String },
    #[error("{path} is outside the operator's read roots ({roots})")]
    OutsideReadRoots { path: String, roots: String },
    #[error("{path} is a directory, not a binary target{}", match available_action {
        Some(a) => format!("; it looks like a JavaScript application: analyze it with {} (input_path) or `{}`", a.tool, a.cli),
        None => "; no analysis applies to it: it is neither a macOS .app bundle nor a JavaScript application (no package.json, JavaScript, HTML or .asar file near its top)".to_string(),
    })]
    NotABinaryTarget {
        path: String,
        available_action: Option<AvailableAction>,
    },
    #[error("{path} is not a usable .app bundle: {reason}")]
    InvalidBundle { path: String, reason: String },
    #[error("{path} is not a regular file")]
    NotARegularFile { path: String },
    #[error("read root {path} cannot be used: {reason}")]
    BadReadRoot { path: String, reason: String },
}

impl AdmissionError {
    pub fn code(&self) -> &'static str {
        match self {
            AdmissionError::NotFound { .. } => "not_found",
            AdmissionError::OutsideReadRoots { .. } => "outside_read_roots",
            AdmissionError::NotABinaryTarget { .. } => "not_a_binary_target",
            AdmissionError::InvalidBundle { .. } => "invalid_bundle",
            AdmissionError::NotARegularFile { .. } => "not_a_regular_file",
            AdmissionError::BadReadRoot { .. } => "bad_read_root",
        }
    }

    pub fn remediation(&self) -> String {
        match self {
            AdmissionError::NotFound { .. } => {
                "Check the path; relative paths resolve against the server's working directory.".into()
            }
            AdmissionError::OutsideReadRoots { .. } => {
                "Choose a file under one of the read roots, or ask the operator to add a --read-root.".into()
            }
            AdmissionError::NotABinaryTarget { available_action, .. } => match available_action {
                Some(a) => format!(
                    "Call {} with input_path set to this directory (no open_binary needed), or run `{}`.",
                    a.tool, a.cli
                ),
                None => "Open an executable file, an archive or a macOS .app bundle.".into(),
            },
            AdmissionError::InvalidBundle { .. } => {
                "Open the executable inside Contents/MacOS directly, or repair the bundle's Info.plist.".into()
            }
            AdmissionError::NotARegularFile { .. } => "Open a regular file.".into(),
            AdmissionError::BadReadRoot { .. } => "Pass existing directories to --read-root.".into(),
        }
    }

    /// Structured detail a client can act on: the analysis that does apply.
    pub fn data(&self) -> Option<serde_json::Value> {
        match self {
            AdmissionError::NotABinaryTarget {
                available_action, ..
            } => Some(serde_json::json!({ "available_action": available_action })),
            _ => None,
        }
    }
}

/// An analysis that applies where `open_binary` does not: the tool, its
/// arguments and the equivalent command line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AvailableAction {
    pub tool: &'static str,
    pub arguments: AvailableArguments,
    pub cli: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AvailableArguments {
    pub input_path: String,
}

impl AvailableAction {
    /// `analyze_javascript_application` on `path` (shown as requested).
    pub fn analyze_javascript(path: &str) -> AvailableAction {
        AvailableAction {
            tool: "analyze_javascript_application",
            arguments: AvailableArguments {
                input_path: path.to_owned(),
            },
            cli: format!("rea analyze {}", shell_quoted(path)),
        }
    }
}

/// `path` as one POSIX shell word (quoted only when it needs to be).
fn shell_quoted(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c));
    if plain {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// The operator's read roots; empty means unconfined.
#[derive(Debug, Clone, Default)]
pub struct ReadRoots(Vec<PathBuf>);

impl ReadRoots {
    pub fn new(roots: &[PathBuf]) -> Result<ReadRoots, AdmissionError> {
        roots
            .iter()
            .map(|r| {
                r.canonicalize().map_err(|e| AdmissionError::BadReadRoot {
                    path: r.display().to_string(),
                    reason: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(ReadRoots)
    }

    pub fn is_confined(&self) -> bool {
        !self.0.is_empty()
    }

    pub fn roots(&self) -> &[PathBuf] {
        &self.0
    }

    /// Canonicalizes `path` (resolving every symlink) and checks it lies
    /// under a root.
    pub fn confine(&self, path: &Path) -> Result<PathBuf, AdmissionError> {
        let real = path.canonicalize().map_err(|e| AdmissionError::NotFound {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        if self.0.is_empty() || self.0.iter().any(|root| real.starts_with(root)) {
            Ok(real)
        } else {
            Err(AdmissionError::OutsideReadRoots {
                path: path.display().to_string(),
                roots: self
                    .0
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    }
}

/// An admitted target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmittedTarget {
    /// The path as requested, made absolute.
    pub requested: PathBuf,
    /// The canonical path of the file to read.
    pub file: PathBuf,
    /// The canonical bundle directory when `requested` was an `.app`.
    pub bundle: Option<PathBuf>,
}

pub fn admit(path: &Path, roots: &ReadRoots) -> Result<AdmittedTarget, AdmissionError> {
    let requested = std::path::absolute(path).map_err(|e| AdmissionError::NotFound {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let real = roots.confine(&requested)?;
    let shown = requested.display().to_string();
    let meta = std::fs::metadata(&real).map_err(|e| AdmissionError::NotFound {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    if meta.is_dir() {
        let is_app = real
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("app"));
        if !is_app {
            let available_action = crate::javascript::looks_like_application(&real)
                .then(|| AvailableAction::analyze_javascript(&shown));
            return Err(AdmissionError::NotABinaryTarget {
                path: shown,
                available_action,
            });
        }
        let file = bundle_executable(&real, &shown, roots)?;
        return Ok(AdmittedTarget {
            requested,
            file,
            bundle: Some(real),
        });
    }
    if !meta.is_file() {
        return Err(AdmissionError::NotARegularFile { path: shown });
    }
    Ok(AdmittedTarget {
        requested,
        file: real,
        bundle: None,
    })
}

fn bundle_executable(
    bundle: &Path,
    shown: &str,
    roots: &ReadRoots,
) -> Result<PathBuf, AdmissionError> {
    let invalid = |reason: String| AdmissionError::InvalidBundle {
        path: shown.to_string(),
        reason,
    };
    let plist_path = bundle.join("Contents/Info.plist");
    let size = std::fs::metadata(&plist_path)
        .map_err(|e| invalid(format!("cannot read Contents/Info.plist: {e}")))?
        .len();
    if size > MAX_PLIST_BYTES {
        return Err(invalid(format!(
            "Contents/Info.plist is {size} bytes; the limit is {MAX_PLIST_BYTES}"
        )));
    }
    let info: plist::Value = plist::from_file(&plist_path)
        .map_err(|e| invalid(format!("Contents/Info.plist does not parse: {e}")))?;
    let name = info
        .as_dictionary()
        .and_then(|d| d.get("CFBundleExecutable"))
        .and_then(plist::Value::as_string)
        .ok_or_else(|| invalid("Info.plist has no CFBundleExecutable string".into()))?;
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(invalid(format!(
            "CFBundleExecutable {name:?} is not a plain file name"
        )));
    }
    let macos = bundle
        .join("Contents/MacOS")
        .canonicalize()
        .map_err(|e| invalid(format!("cannot open Contents/MacOS: {e}")))?;
    let program = macos.join(name);
    let real = program
        .canonicalize()
        .map_err(|e| invalid(format!("executable Contents/MacOS/{name} is missing: {e}")))?;
    if !real.starts_with(&macos) {
        return Err(invalid(format!(
            "Contents/MacOS/{name} resolves to {} outside Contents/MacOS",
            real.display()
        )));
    }
    let real = roots.confine(&real)?;
    if !real.is_file() {
        return Err(invalid(format!(
            "Contents/MacOS/{name} is not a regular file"
        )));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(dir: &Path, plist: &str) -> PathBuf {
        let bundle = dir.join("Demo.app");
        std::fs::create_dir_all(bundle.join("Contents/MacOS")).unwrap();
        std::fs::write(bundle.join("Contents/Info.plist"), plist).unwrap();
        bundle
    }

    fn plist_with(name: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>CFBundleExecutable</key><string>{name}</string></dict></plist>"#
        )
    }

    #[test]
    fn app_bundle_resolves_its_executable() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = app(dir.path(), &plist_with("Demo"));
        std::fs::write(bundle.join("Contents/MacOS/Demo"), b"\xcf\xfa\xed\xfe").unwrap();
        let t = admit(&bundle, &ReadRoots::default()).unwrap();
        assert_eq!(t.file.file_name().unwrap(), "Demo");
        assert!(t.bundle.is_some());
    }

    #[test]
    fn bundle_symlink_escape_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = app(dir.path(), &plist_with("Demo"));
        std::fs::write(dir.path().join("outside"), b"x").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("outside"),
            bundle.join("Contents/MacOS/Demo"),
        )
        .unwrap();
        let err = admit(&bundle, &ReadRoots::default()).unwrap_err();
        assert_eq!(err.code(), "invalid_bundle");
        assert!(err.to_string().contains("outside Contents/MacOS"), "{err}");
    }

    #[test]
    fn unsafe_executable_names_are_rejected() {
        for name in ["../x", "", "..", "a/b"] {
            let dir = tempfile::tempdir().unwrap();
            let bundle = app(dir.path(), &plist_with(name));
            let err = admit(&bundle, &ReadRoots::default()).unwrap_err();
            assert_eq!(err.code(), "invalid_bundle", "{name}");
        }
    }

    #[test]
    fn other_directories_are_not_binary_targets() {
        let dir = tempfile::tempdir().unwrap();
        let err = admit(dir.path(), &ReadRoots::default()).unwrap_err();
        assert_eq!(err.code(), "not_a_binary_target");
        assert!(err.remediation().contains(".app"));
        assert!(err.to_string().contains("no analysis applies"), "{err}");
        assert_eq!(
            err.data().unwrap()["available_action"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn javascript_directories_name_the_analysis_that_applies() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("my app");
        std::fs::create_dir(&app).unwrap();
        std::fs::write(app.join("package.json"), r#"{"main":"main.js"}"#).unwrap();
        let err = admit(&app, &ReadRoots::default()).unwrap_err();
        assert_eq!(err.code(), "not_a_binary_target");
        let shown = app.display().to_string();
        let action = &err.data().unwrap()["available_action"];
        assert_eq!(action["tool"], "analyze_javascript_application");
        assert_eq!(action["arguments"]["input_path"], shown.as_str());
        assert_eq!(action["cli"], format!("rea analyze '{shown}'"));
        assert!(err.remediation().contains("analyze_javascript_application"));
        assert!(err.to_string().contains("rea analyze"), "{err}");
    }

    #[test]
    fn shell_quoting_keeps_one_word() {
        assert_eq!(shell_quoted("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quoted("/a b"), "'/a b'");
        assert_eq!(shell_quoted("/it's"), "'/it'\\''s'");
    }

    #[test]
    fn read_roots_confine_through_symlinks() {
        let inside = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), inside.path().join("link"))
            .unwrap();
        let roots = ReadRoots::new(&[inside.path().to_path_buf()]).unwrap();
        let err = admit(&inside.path().join("link"), &roots).unwrap_err();
        assert_eq!(err.code(), "outside_read_roots");
        std::fs::write(inside.path().join("ok"), b"x").unwrap();
        assert!(admit(&inside.path().join("ok"), &roots).is_ok());
    }
}
