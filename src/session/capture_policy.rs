//! Process-capture policy: nothing runs unless the operator enabled capture
//! and named where executables and working directories may be, and the
//! call itself says `approved: true`. Prompt arguments and completion
//! values never grant anything; only this policy and the call's own field do.
//!
//! Settings come from `rea mcp` flags and/or a TOML file
//! (`--capture-config`); flags add roots to the file's and override its
//! `enabled` and `user`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::capture::interpreter::{InterpreterError, Program};
use crate::capture::types::Network;
use crate::ground::confined::{ConfinedDir, Node, OpenError, Roots};
use crate::ground::text::{EXCERPT_CHARS, excerpt};

/// Largest capture config file and `/etc/passwd` read.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// The user a capture runs as when the server runs as root: process-count
/// limits do not bind root.
pub const DEFAULT_CAPTURE_USER: &str = "nobody";

/// What the operator asked for, before validation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaptureSettings {
    pub enabled: bool,
    pub executable_roots: Vec<PathBuf>,
    pub working_roots: Vec<PathBuf>,
    /// A user name from `/etc/passwd`, or `UID:GID`.
    pub user: Option<String>,
    /// `isolated` (the default) or `host`.
    pub network: Option<Network>,
}

impl CaptureSettings {
    /// Reads a TOML settings file (bounded).
    pub fn from_file(path: &Path) -> Result<CaptureSettings, CapturePolicyError> {
        let bad = |reason: String| CapturePolicyError::BadConfig {
            path: path.display().to_string(),
            reason,
        };
        let text = read_bounded(path).map_err(bad)?;
        toml::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    /// These settings with `flags` applied on top: roots are added, and an
    /// explicit `enabled` or `user` wins.
    pub fn merged(mut self, flags: CaptureSettings) -> CaptureSettings {
        self.enabled |= flags.enabled;
        self.executable_roots.extend(flags.executable_roots);
        self.working_roots.extend(flags.working_roots);
        if flags.user.is_some() {
            self.user = flags.user;
        }
        if flags.network.is_some() {
            self.network = flags.network;
        }
        self
    }
}

/// The account a capture runs as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunAs {
    pub user: String,
    pub uid: u32,
    pub gid: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapturePolicyError {
    #[error("capture config {path} cannot be used: {reason}")]
    BadConfig { path: String, reason: String },
    #[error("capture root {path} cannot be used: {reason}")]
    BadRoot { path: String, reason: String },
    #[error("capture user {user} cannot be used: {reason}")]
    BadUser { user: String, reason: String },
    #[error(
        "process capture is enabled but names no {which} root; name at least one with --capture-{which}-root"
    )]
    MissingRoots { which: &'static str },
}

/// Why a path is refused for a capture.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapturePathError {
    #[error("{field} {path} is not an absolute path")]
    Relative { field: &'static str, path: String },
    #[error("{field} {path} cannot be resolved: {reason}")]
    Unresolvable {
        field: &'static str,
        path: String,
        reason: String,
    },
    #[error("{field} {path} is outside the operator's {which} roots ({roots})")]
    OutsideRoots {
        field: &'static str,
        path: String,
        which: &'static str,
        roots: String,
    },
    /// A script whose `#!` interpreter (chain) is not an absolute path
    /// inside the executable roots. The interpreter's name is not quoted:
    /// it was read from the file.
    #[error("executable {path} is a script whose #! interpreter {reason}")]
    Interpreter { path: String, reason: String },
    #[error("{field} {path} is not {expected}")]
    WrongKind {
        field: &'static str,
        path: String,
        expected: &'static str,
    },
}

/// The validated policy a server runs with.
#[derive(Debug, Clone, Default)]
pub struct CapturePolicy {
    enabled: bool,
    executable_roots: Roots,
    working_roots: Roots,
    run_as: Option<RunAs>,
    network: Network,
    /// The `rea` binary that serves `capture-host`; `None` is this process's
    /// own executable (right for `rea mcp`; in-process servers in tests name
    /// the built binary).
    host: Option<PathBuf>,
}

impl CapturePolicy {
    /// This policy with captures served by the `rea` binary at `host`.
    pub fn with_host(mut self, host: PathBuf) -> CapturePolicy {
        self.host = Some(host);
        self
    }

    pub fn host(&self) -> Option<&Path> {
        self.host.as_deref()
    }

    /// Validates operator settings. Disabled settings are accepted as they
    /// are (their roots are not checked); enabled ones need both kinds of
    /// root, existing directories, and — when the server runs as root — a
    /// user to drop to.
    pub fn new(settings: CaptureSettings) -> Result<CapturePolicy, CapturePolicyError> {
        if !settings.enabled {
            return Ok(CapturePolicy::default());
        }
        let executable_roots = opened_roots("executable", &settings.executable_roots)?;
        let working_roots = opened_roots("working", &settings.working_roots)?;
        if !executable_roots.is_confined() {
            return Err(CapturePolicyError::MissingRoots {
                which: "executable",
            });
        }
        if !working_roots.is_confined() {
            return Err(CapturePolicyError::MissingRoots { which: "working" });
        }
        let run_as = match (running_as_root(), settings.user) {
            (true, user) => Some(resolve_user(
                user.as_deref().unwrap_or(DEFAULT_CAPTURE_USER),
            )?),
            (false, Some(user)) => {
                return Err(CapturePolicyError::BadUser {
                    user,
                    reason: "only a server running as root can run captures as another user".into(),
                });
            }
            (false, None) => None,
        };
        Ok(CapturePolicy {
            enabled: true,
            executable_roots,
            working_roots,
            run_as,
            network: settings.network.unwrap_or_default(),
            host: None,
        })
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    pub fn run_as(&self) -> Option<&RunAs> {
        self.run_as.as_ref()
    }

    /// The network captures run in.
    pub fn network(&self) -> Network {
        self.network
    }

    /// What `binary_session` reports.
    pub fn status(&self) -> Value {
        let shown = |roots: &Roots| {
            roots
                .paths()
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
        };
        json!({
            "enabled": self.enabled,
            "executable_roots": shown(&self.executable_roots),
            "working_roots": shown(&self.working_roots),
            "run_as": self.run_as,
            "network": self.network.as_str(),
            "reason": if self.enabled {
                "enabled by the operator; every call also needs approved: true"
            } else {
                "disabled: start the server with --enable-process-capture and at least one \
                 --capture-executable-root and --capture-working-root (or --capture-config FILE)"
            },
        })
    }

    /// What is missing for a call with `approved` to run, or nothing.
    pub fn missing(&self, approved: bool) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.enabled {
            missing.push(
                "operator setting: rea mcp --enable-process-capture with --capture-executable-root \
                 and --capture-working-root (or --capture-config FILE)",
            );
        }
        if !approved {
            missing.push("request field: approved: true");
        }
        missing
    }

    /// Opens an executable once, beneath the executable roots (symlinks
    /// followed only while they stay inside); it must be a regular file.
    /// A script's `#!` interpreter, and that interpreter's own, must be
    /// absolute paths inside the executable roots too: they are read once,
    /// here, and opened beneath the roots, and the capture runs the
    /// interpreter opened here (see [`crate::capture::interpreter`]).
    pub fn executable(&self, path: &str) -> Result<(PathBuf, Program), CapturePathError> {
        let (absolute, node) = open_in(path, "executable", &self.executable_roots)?;
        let file = node
            .into_file()
            .map_err(|_| wrong_kind("executable", path))?;
        let program = Program::resolve(file, &mut |interpreter| {
            self.executable_roots.open_file(interpreter)
        })
        .map_err(|e| CapturePathError::Interpreter {
            path: excerpt(path, EXCERPT_CHARS),
            reason: match e {
                InterpreterError::Unreadable(_) => "cannot be read",
                InterpreterError::Relative => "is not an absolute path",
                InterpreterError::Unrunnable => "is missing or cut off",
                InterpreterError::Open(OpenError::OutsideRoots { .. }) => {
                    "lies outside the operator's executable roots; install the interpreter \
                     under an executable root or run a binary"
                }
                InterpreterError::Open(_) => "cannot be opened as a regular file",
                InterpreterError::TooDeep => "chain is deeper than the kernel follows",
            }
            .to_string(),
        })?;
        Ok((absolute, program))
    }

    /// Opens a working directory once, beneath the working roots.
    pub fn working_directory(
        &self,
        path: &str,
    ) -> Result<(PathBuf, ConfinedDir), CapturePathError> {
        let (absolute, node) = open_in(path, "working_directory", &self.working_roots)?;
        let dir = node
            .into_dir()
            .map_err(|_| wrong_kind("working_directory", path))?;
        Ok((absolute, dir))
    }
}

/// `path` is not what `field` needs: the executable a regular file, the
/// working directory a directory.
fn wrong_kind(field: &'static str, path: &str) -> CapturePathError {
    CapturePathError::WrongKind {
        field,
        path: excerpt(path, EXCERPT_CHARS),
        expected: if field == "executable" {
            "a regular file"
        } else {
            "a directory"
        },
    }
}

/// Opens `path` (absolute) once beneath `roots`.
fn open_in(
    path: &str,
    field: &'static str,
    roots: &Roots,
) -> Result<(PathBuf, Node), CapturePathError> {
    let shown = excerpt(path, EXCERPT_CHARS);
    if !Path::new(path).is_absolute() {
        return Err(CapturePathError::Relative { field, path: shown });
    }
    match roots.open_path(Path::new(path)) {
        Ok(node) => Ok((PathBuf::from(path), node)),
        Err(OpenError::OutsideRoots { roots: listed, .. }) => Err(CapturePathError::OutsideRoots {
            field,
            path: shown,
            which: roots.label(),
            roots: listed,
        }),
        Err(OpenError::NotRegular { .. }) => Err(wrong_kind(field, path)),
        Err(e) => Err(CapturePathError::Unresolvable {
            field,
            path: shown,
            reason: match e {
                OpenError::NotFound { reason, .. } | OpenError::Io { reason, .. } => reason,
                other => other.kind().to_string(),
            },
        }),
    }
}

fn opened_roots(label: &'static str, roots: &[PathBuf]) -> Result<Roots, CapturePolicyError> {
    Roots::open(label, roots).map_err(|e| CapturePolicyError::BadRoot {
        path: e.path,
        reason: e.reason,
    })
}

/// Whether the server's effective user is root (Linux: `/proc/self/status`).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// `UID:GID`, or a name looked up in `/etc/passwd`.
fn resolve_user(user: &str) -> Result<RunAs, CapturePolicyError> {
    let bad = |reason: String| CapturePolicyError::BadUser {
        user: excerpt(user, EXCERPT_CHARS),
        reason,
    };
    let run_as = if let Some((uid, gid)) = user.split_once(':') {
        RunAs {
            user: user.to_string(),
            uid: uid.parse().map_err(|_| bad("UID is not a number".into()))?,
            gid: gid.parse().map_err(|_| bad("GID is not a number".into()))?,
        }
    } else {
        let passwd = read_bounded(Path::new("/etc/passwd")).map_err(bad)?;
        passwd
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                (fields.len() >= 4 && fields[0] == user).then(|| (fields[2], fields[3]))
            })
            .find_map(|(uid, gid)| {
                Some(RunAs {
                    user: user.to_string(),
                    uid: uid.parse().ok()?,
                    gid: gid.parse().ok()?,
                })
            })
            .ok_or_else(|| bad("no such user in /etc/passwd".into()))?
    };
    if run_as.uid == 0 || run_as.gid == 0 {
        return Err(bad(
            "captures never run as root: process limits do not bind it".into(),
        ));
    }
    Ok(run_as)
}

fn read_bounded(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_SETTINGS_BYTES {
        return Err(format!(
            "{} bytes; the limit is {MAX_SETTINGS_BYTES}",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled(exec: &Path, work: &Path) -> CaptureSettings {
        CaptureSettings {
            enabled: true,
            executable_roots: vec![exec.to_path_buf()],
            working_roots: vec![work.to_path_buf()],
            user: if running_as_root() {
                Some("65534:65534".into())
            } else {
                None
            },
            network: None,
        }
    }

    #[test]
    fn capture_is_off_unless_enabled_with_both_roots() {
        let off = CapturePolicy::new(CaptureSettings::default()).unwrap();
        assert!(!off.is_enabled());
        assert_eq!(off.missing(true).len(), 1);
        assert_eq!(off.missing(false).len(), 2);
        assert_eq!(off.status()["enabled"], json!(false));

        let dir = tempfile::tempdir().unwrap();
        let mut settings = enabled(dir.path(), dir.path());
        settings.working_roots.clear();
        assert_eq!(
            CapturePolicy::new(settings).unwrap_err(),
            CapturePolicyError::MissingRoots { which: "working" }
        );
        let on = CapturePolicy::new(enabled(dir.path(), dir.path())).unwrap();
        assert!(on.is_enabled());
        assert!(on.missing(true).is_empty());
        assert_eq!(on.missing(false), ["request field: approved: true"]);
    }

    #[test]
    fn paths_must_be_absolute_resolved_and_inside_their_roots() {
        let dir = tempfile::tempdir().unwrap();
        let exec_root = dir.path().join("bin");
        let work_root = dir.path().join("work");
        std::fs::create_dir_all(&exec_root).unwrap();
        std::fs::create_dir_all(&work_root).unwrap();
        let program = exec_root.join("tool");
        std::fs::write(&program, b"#!/bin/sh\n").unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, b"x").unwrap();
        std::os::unix::fs::symlink(&outside, exec_root.join("escape")).unwrap();
        let policy = CapturePolicy::new(enabled(&exec_root, &work_root)).unwrap();

        std::fs::write(&program, b"\x7fELF-not-a-script").unwrap();
        let (path, _program) = policy.executable(program.to_str().unwrap()).unwrap();
        assert_eq!(path, program);
        assert!(matches!(
            policy.executable("bin/tool"),
            Err(CapturePathError::Relative { .. })
        ));
        assert!(matches!(
            policy.executable(outside.to_str().unwrap()),
            Err(CapturePathError::OutsideRoots { .. })
        ));
        let escaped = policy.executable(exec_root.join("escape").to_str().unwrap());
        assert!(
            matches!(escaped, Err(CapturePathError::OutsideRoots { .. })),
            "a symlink escaping the root is refused: {escaped:?}"
        );
        assert!(matches!(
            policy.executable(work_root.to_str().unwrap()),
            Err(CapturePathError::OutsideRoots { .. })
        ));
        assert!(
            policy
                .working_directory(work_root.to_str().unwrap())
                .is_ok()
        );
        assert!(matches!(
            policy.working_directory(program.to_str().unwrap()),
            Err(CapturePathError::OutsideRoots { .. })
        ));
        // A script's interpreter must be inside the executable roots too.
        std::fs::write(&program, b"#!/bin/sh\necho hi\n").unwrap();
        let err = policy.executable(program.to_str().unwrap()).unwrap_err();
        assert!(matches!(err, CapturePathError::Interpreter { .. }), "{err}");
        assert!(!err.to_string().contains("/bin/sh"), "never quoted: {err}");
        std::fs::write(exec_root.join("interp"), b"\x7fELF").unwrap();
        let inside = format!("#!  {}/interp -x\n", exec_root.display());
        std::fs::write(&program, inside).unwrap();
        assert!(policy.executable(program.to_str().unwrap()).is_ok());
        std::fs::write(&program, b"#!sh\n").unwrap();
        assert!(policy.executable(program.to_str().unwrap()).is_err());
        // A chain that loops never ends the kernel's way either.
        std::fs::write(&program, format!("#!{}\n", program.display())).unwrap();
        let err = policy.executable(program.to_str().unwrap()).unwrap_err();
        assert!(err.to_string().contains("deeper"), "{err}");
        let huge = format!("/{}", "a".repeat(100_000));
        let message = policy.executable(&huge).unwrap_err().to_string();
        assert!(message.len() < 2_000, "hostile paths are quoted in part");
    }

    #[test]
    fn users_resolve_from_passwd_or_numbers_and_never_to_root() {
        assert_eq!(
            resolve_user("65534:65534").unwrap(),
            RunAs {
                user: "65534:65534".into(),
                uid: 65534,
                gid: 65534
            }
        );
        assert!(resolve_user("0:0").is_err());
        assert!(resolve_user("root").is_err());
        assert!(resolve_user("no-such-user-here").is_err());
        if std::fs::read_to_string("/etc/passwd").is_ok_and(|p| p.contains("\nnobody:")) {
            assert!(resolve_user("nobody").unwrap().uid != 0);
        }
    }

    #[test]
    fn a_config_file_and_flags_merge() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("capture.toml");
        std::fs::write(
            &file,
            format!(
                "enabled = true\nexecutable_roots = [{:?}]\nworking_roots = []\n",
                dir.path()
            ),
        )
        .unwrap();
        let from_file = CaptureSettings::from_file(&file).unwrap();
        let merged = from_file.merged(CaptureSettings {
            working_roots: vec![dir.path().to_path_buf()],
            ..CaptureSettings::default()
        });
        assert!(merged.enabled);
        assert_eq!(merged.working_roots.len(), 1);
        std::fs::write(&file, "enabled = true\nsurprise = 1\n").unwrap();
        assert!(
            CaptureSettings::from_file(&file).is_err(),
            "unknown keys are refused"
        );
    }
}
