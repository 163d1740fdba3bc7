//! Target admission: the one function `open_binary`, `rea doctor --target`
//! and `rea procedures` share. It opens a path once, beneath the operator's
//! read roots, and hands on the descriptors: nothing after admission goes
//! back to the path.
//!
//! Files are admitted as they are (the provider then decides whether it reads
//! the format). A macOS `.app` bundle is admitted through its Info.plist
//! `CFBundleExecutable`, opened beneath the bundle's own `Contents/MacOS`
//! handle, so neither a symlinked executable nor a symlinked `MacOS`
//! directory can lead outside it. Every other directory is refused.

use std::path::{Path, PathBuf};

use crate::ground::confined::{ConfinedDir, ConfinedFile, Node, OpenError, Roots};

/// What `open_binary`, `rea doctor` and `rea analyze` say of a directory
/// that is neither an `.app` bundle nor an application.
pub const NO_ANALYSIS_APPLIES: &str = "no analysis applies to it: it is neither a macOS .app bundle nor a JavaScript application (no package.json, JavaScript, HTML or .asar file near its top)";

use crate::artifacts::MAX_PLIST_BYTES;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("{path} is a directory, not a binary target{}", match available_action {
        Some(a) => format!("; it looks like a JavaScript application: analyze it with {} (input_path) or `{}`", a.tool, a.cli),
        None => format!("; {NO_ANALYSIS_APPLIES}"),
    })]
    NotABinaryTarget {
        path: String,
        available_action: Option<AvailableAction>,
    },
    #[error("{path} is not a usable .app bundle: {reason}")]
    InvalidBundle { path: String, reason: String },
    #[error("read root {path} cannot be used: {reason}")]
    BadReadRoot { path: String, reason: String },
}

impl AdmissionError {}

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

/// The operator's read roots, opened once; empty means unconfined.
#[derive(Debug, Clone, Default)]
pub struct ReadRoots(Roots);

impl ReadRoots {
    pub fn new(roots: &[PathBuf]) -> Result<ReadRoots, AdmissionError> {
        Roots::open("read", roots)
            .map(ReadRoots)
            .map_err(|e| AdmissionError::BadReadRoot {
                path: e.path,
                reason: e.reason,
            })
    }

    pub fn is_confined(&self) -> bool {
        self.0.is_confined()
    }

    /// The roots' canonical paths.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.0.paths()
    }

    /// The opened roots, for readers that open through them.
    pub fn handles(&self) -> &Roots {
        &self.0
    }

    /// Opens `path` (a regular file or a directory) beneath a root.
    pub fn open(&self, path: &Path) -> Result<Node, AdmissionError> {
        Ok(self.0.open_path(path)?)
    }
}

/// An admitted target: what was asked for, and the descriptors to read.
#[derive(Debug)]
pub struct AdmittedTarget {
    /// The path as requested, made absolute.
    pub requested: PathBuf,
    /// The path of the file the code view reads (the bundle's executable
    /// under `requested` for an `.app`). For display and for matching
    /// process module maps only: it is never opened again.
    pub file_path: PathBuf,
    /// The file the code view reads, opened.
    pub file: ConfinedFile,
    /// The bundle directory when `requested` was an `.app`, opened.
    pub bundle: Option<ConfinedDir>,
}

pub fn admit(path: &Path, roots: &ReadRoots) -> Result<AdmittedTarget, AdmissionError> {
    let requested = std::path::absolute(path).map_err(|e| OpenError::NotFound {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let shown = requested.display().to_string();
    match roots.open(&requested)? {
        Node::File(file) => Ok(AdmittedTarget {
            file_path: requested.clone(),
            requested,
            file,
            bundle: None,
        }),
        Node::Dir(dir) => {
            let is_app = requested
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("app"));
            if !is_app {
                let available_action = crate::javascript::looks_like_application(&dir)
                    .then(|| AvailableAction::analyze_javascript(&shown));
                return Err(AdmissionError::NotABinaryTarget {
                    path: shown,
                    available_action,
                });
            }
            let (file, name) = bundle_executable(&dir, &shown)?;
            Ok(AdmittedTarget {
                file_path: requested.join("Contents/MacOS").join(name),
                requested,
                file,
                bundle: Some(dir),
            })
        }
    }
}

/// The bundle's executable, opened beneath its `Contents/MacOS`, and its
/// name. Messages never quote the name: it was read from the bundle.
fn bundle_executable(
    bundle: &ConfinedDir,
    shown: &str,
) -> Result<(ConfinedFile, String), AdmissionError> {
    let invalid = |reason: String| AdmissionError::InvalidBundle {
        path: shown.to_string(),
        reason,
    };
    let plist_file = bundle
        .open_file(Path::new("Contents/Info.plist"))
        .map_err(|e| {
            invalid(format!(
                "Contents/Info.plist cannot be opened ({})",
                e.kind()
            ))
        })?;
    let bytes = plist_file
        .read_bounded(MAX_PLIST_BYTES)
        .map_err(|e| match e {
            OpenError::TooLarge { size, limit, .. } => invalid(format!(
                "Contents/Info.plist is {size} bytes; the limit is {limit}"
            )),
            other => invalid(format!(
                "Contents/Info.plist cannot be read ({})",
                other.kind()
            )),
        })?;
    let info: plist::Value = plist::from_bytes(&bytes)
        .map_err(|_| invalid("Contents/Info.plist does not parse as a property list".into()))?;
    let name = info
        .as_dictionary()
        .and_then(|d| d.get("CFBundleExecutable"))
        .and_then(plist::Value::as_string)
        .ok_or_else(|| invalid("Info.plist has no CFBundleExecutable string".into()))?;
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(invalid(format!(
            "CFBundleExecutable ({} characters) is not a plain file name",
            name.chars().count()
        )));
    }
    let macos = bundle
        .open_dir(Path::new("Contents/MacOS"))
        .map_err(|e| match e {
            OpenError::OutsideRoots { .. } => {
                invalid("Contents/MacOS resolves outside the bundle".into())
            }
            other => invalid(format!("cannot open Contents/MacOS ({})", other.kind())),
        })?;
    let file = macos.open_file(Path::new(name)).map_err(|e| match e {
        OpenError::OutsideRoots { .. } => {
            invalid("the CFBundleExecutable file resolves outside Contents/MacOS".into())
        }
        OpenError::NotRegular { kind, .. } => invalid(format!(
            "the CFBundleExecutable file in Contents/MacOS is {kind}, not a regular file"
        )),
        other => invalid(format!(
            "the CFBundleExecutable file in Contents/MacOS cannot be opened ({})",
            other.kind()
        )),
    })?;
    Ok((file, name.to_owned()))
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
        assert_eq!(t.file_path.file_name().unwrap(), "Demo");
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
        assert!(matches!(err, AdmissionError::InvalidBundle { .. }));
        assert!(err.to_string().contains("outside Contents/MacOS"), "{err}");
        assert!(!err.to_string().contains("MacOS/Demo"), "{err}");
    }

    #[test]
    fn unsafe_executable_names_are_rejected() {
        for name in ["../x", "", "..", "a/b"] {
            let dir = tempfile::tempdir().unwrap();
            let bundle = app(dir.path(), &plist_with(name));
            let err = admit(&bundle, &ReadRoots::default()).unwrap_err();
            assert!(
                matches!(err, AdmissionError::InvalidBundle { .. }),
                "{name}"
            );
        }
    }

    #[test]
    fn other_directories_are_not_binary_targets() {
        let dir = tempfile::tempdir().unwrap();
        let err = admit(dir.path(), &ReadRoots::default()).unwrap_err();
        assert!(matches!(
            err,
            AdmissionError::NotABinaryTarget {
                available_action: None,
                ..
            }
        ));
        assert!(err.to_string().contains("no analysis applies"), "{err}");
    }

    #[test]
    fn javascript_directories_name_the_analysis_that_applies() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("my app");
        std::fs::create_dir(&app).unwrap();
        std::fs::write(app.join("package.json"), r#"{"main":"main.js"}"#).unwrap();
        let err = admit(&app, &ReadRoots::default()).unwrap_err();
        let AdmissionError::NotABinaryTarget {
            available_action: Some(action),
            ..
        } = &err
        else {
            panic!("expected a directory with an analysis that applies, got {err}")
        };
        let shown = app.display().to_string();
        let action = serde_json::to_value(action).unwrap();
        assert_eq!(action["tool"], "analyze_javascript_application");
        assert_eq!(action["arguments"]["input_path"], shown.as_str());
        assert_eq!(action["cli"], format!("rea analyze '{shown}'"));
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
        assert!(matches!(
            err,
            AdmissionError::Open(OpenError::OutsideRoots { label: "read", .. })
        ));
        std::fs::write(inside.path().join("ok"), b"x").unwrap();
        assert!(admit(&inside.path().join("ok"), &roots).is_ok());
    }

    #[test]
    fn a_symlinked_macos_directory_cannot_lend_a_system_binary() {
        // F8: Contents/MacOS -> a system binary directory, CFBundleExecutable a shell.
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("Demo.app");
        std::fs::create_dir_all(bundle.join("Contents")).unwrap();
        std::fs::write(bundle.join("Contents/Info.plist"), plist_with("sh")).unwrap();
        std::os::unix::fs::symlink("/bin", bundle.join("Contents/MacOS")).unwrap();
        let err = admit(&bundle, &ReadRoots::default()).unwrap_err();
        assert!(matches!(err, AdmissionError::InvalidBundle { .. }));
        assert!(err.to_string().contains("outside the bundle"), "{err}");
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = admit(&fifo, &ReadRoots::default()).unwrap_err();
        assert!(matches!(
            err,
            AdmissionError::Open(OpenError::NotRegular { .. })
        ));
        let roots = ReadRoots::new(&[dir.path().to_path_buf()]).unwrap();
        assert!(matches!(
            admit(&fifo, &roots).unwrap_err(),
            AdmissionError::Open(OpenError::NotRegular { .. })
        ));
    }
}
