//! Is radare2 usable here, and how would it be started? Detection only looks
//! at files: it starts no process and loads no library, so `binary_session`
//! and completion can ask it freely (ADR-0001: target-free discovery starts
//! nothing).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::INSTALL_REMEDIATION;

/// The environment variable naming a directory that holds `libr_core.so`
/// (or `.dylib`), e.g. r2libr's `site-packages/libr/libr`.
pub const LIBR_ENV: &str = "REA_RADARE2_LIBR";

/// Executable names looked up on `PATH`, in order.
const EXECUTABLES: [&str; 2] = ["r2", "radare2"];

/// How a radare2 process is started. Both forms speak the r2pipe protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launcher {
    /// An `r2` executable, run as `r2 -q0 -N …`.
    R2Pipe { executable: PathBuf },
    /// rea's own host process (`host radare2-host --libr DIR …`), which loads
    /// `libr_core` from `dir`. `host` is the `rea` executable: the running
    /// server's `current_exe()`, or `CARGO_BIN_EXE_rea` in tests.
    Libr { dir: PathBuf, host: PathBuf },
}

/// Why radare2 cannot be used, in the provider-selection vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnavailableCode {
    /// Neither `r2` nor `radare2` is on `PATH`, and no libr is configured.
    ExecutableMissing,
    /// `REA_RADARE2_LIBR` is set but holds no radare2 libraries.
    RuntimeMissing,
    /// The libr host cannot run here (not Unix, or the rea executable is
    /// unknown).
    UnsupportedHost,
}

impl UnavailableCode {
    pub fn as_str(self) -> &'static str {
        match self {
            UnavailableCode::ExecutableMissing => "executable_missing",
            UnavailableCode::RuntimeMissing => "runtime_missing",
            UnavailableCode::UnsupportedHost => "unsupported_host",
        }
    }
}

/// An unavailable radare2: a stable code, what was looked at, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    pub code: UnavailableCode,
    pub detail: String,
}

impl Unavailable {
    pub fn remediation(&self) -> &'static str {
        match self.code {
            UnavailableCode::UnsupportedHost => {
                "run rea on Linux or macOS, or install radare2 so `r2` is on PATH"
            }
            _ => INSTALL_REMEDIATION,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    Available(Launcher),
    Unavailable(Unavailable),
}

/// What detection reads, so tests can pass fake directories.
#[derive(Debug, Clone, Default)]
pub struct DetectionEnv {
    /// The `PATH` value.
    pub path: Option<OsString>,
    /// The `REA_RADARE2_LIBR` value.
    pub libr: Option<OsString>,
    /// The rea executable that can run `radare2-host`.
    pub host: Option<PathBuf>,
}

impl DetectionEnv {
    /// This process's `PATH`, `REA_RADARE2_LIBR` and executable.
    pub fn from_process() -> DetectionEnv {
        DetectionEnv {
            path: std::env::var_os("PATH"),
            libr: std::env::var_os(LIBR_ENV),
            host: std::env::current_exe().ok(),
        }
    }
}

/// Detects radare2 for this process.
pub fn detect() -> Detection {
    detect_in(&DetectionEnv::from_process())
}

/// Detects radare2 in `env`. An explicit `REA_RADARE2_LIBR` wins over `PATH`
/// and, when it is wrong, is reported rather than silently replaced by an
/// `r2` from `PATH`: the operator asked for that runtime.
pub fn detect_in(env: &DetectionEnv) -> Detection {
    if let Some(dir) = env.libr.as_ref().filter(|v| !v.is_empty()) {
        return detect_libr(Path::new(dir), env.host.as_deref());
    }
    let found = env.path.as_ref().and_then(|path| {
        std::env::split_paths(path)
            .filter(|dir| dir.is_absolute())
            .flat_map(|dir| EXECUTABLES.map(|name| dir.join(executable_file_name(name))))
            .find(|candidate| is_executable(candidate))
    });
    match found {
        Some(executable) => Detection::Available(Launcher::R2Pipe { executable }),
        None => Detection::Unavailable(Unavailable {
            code: UnavailableCode::ExecutableMissing,
            detail: format!("no `r2` or `radare2` executable on PATH, and {LIBR_ENV} is not set"),
        }),
    }
}

fn detect_libr(dir: &Path, host: Option<&Path>) -> Detection {
    let unavailable = |code, detail| Detection::Unavailable(Unavailable { code, detail });
    if !cfg!(unix) {
        return unavailable(
            UnavailableCode::UnsupportedHost,
            "the libr host (rea radare2-host) needs a Unix system".to_string(),
        );
    }
    if library_path(dir, "r_core").is_none() || library_path(dir, "r_util").is_none() {
        return unavailable(
            UnavailableCode::RuntimeMissing,
            format!(
                "{LIBR_ENV}={} holds no libr_core and libr_util shared libraries",
                dir.display()
            ),
        );
    }
    match host {
        Some(host) if host.is_file() => Detection::Available(Launcher::Libr {
            dir: dir.to_path_buf(),
            host: host.to_path_buf(),
        }),
        _ => unavailable(
            UnavailableCode::UnsupportedHost,
            "the rea executable that would run the radare2 host cannot be located".to_string(),
        ),
    }
}

/// `dir/lib<name>.so` or `dir/lib<name>.dylib`, whichever exists (in that
/// order). The host loads exactly the file detection saw.
pub(crate) fn library_path(dir: &Path, name: &str) -> Option<PathBuf> {
    ["so", "dylib"]
        .iter()
        .map(|ext| dir.join(format!("lib{name}.{ext}")))
        .find(|p| p.is_file())
}

fn executable_file_name(name: &str) -> String {
    if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(path: &Path, mode: u32) {
        fs::write(path, b"").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
        }
        #[cfg(not(unix))]
        let _ = mode;
    }

    fn env(path: Option<&Path>, libr: Option<&Path>, host: Option<&Path>) -> DetectionEnv {
        DetectionEnv {
            path: path.map(|p| p.as_os_str().to_owned()),
            libr: libr.map(|p| p.as_os_str().to_owned()),
            host: host.map(Path::to_path_buf),
        }
    }

    #[test]
    fn nothing_configured_is_executable_missing() {
        let empty = tempfile::tempdir().unwrap();
        let Detection::Unavailable(u) = detect_in(&env(Some(empty.path()), None, None)) else {
            panic!("expected unavailable");
        };
        assert_eq!(u.code.as_str(), "executable_missing");
        assert!(u.remediation().contains("REA_RADARE2_LIBR"));
        assert!(u.remediation().contains("r2libr==5.7.4"));
        let Detection::Unavailable(u) = detect_in(&DetectionEnv::default()) else {
            panic!("expected unavailable");
        };
        assert_eq!(u.code, UnavailableCode::ExecutableMissing);
    }

    #[cfg(unix)]
    #[test]
    fn finds_r2_on_path_but_not_a_non_executable_one() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        touch(&first.path().join("r2"), 0o644);
        touch(&second.path().join("radare2"), 0o755);
        let path = std::env::join_paths([first.path(), second.path()]).unwrap();
        let detection = detect_in(&DetectionEnv {
            path: Some(path),
            ..DetectionEnv::default()
        });
        assert_eq!(
            detection,
            Detection::Available(Launcher::R2Pipe {
                executable: second.path().join("radare2")
            })
        );
    }

    #[cfg(unix)]
    #[test]
    fn relative_path_entries_are_ignored() {
        // A PATH entry relative to the working directory that does lead to
        // an `r2`: it would change meaning with the working directory.
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("r2"), 0o755);
        let cwd = std::env::current_dir().unwrap();
        let mut relative = PathBuf::new();
        for _ in cwd.components().skip(1) {
            relative.push("..");
        }
        relative.push(dir.path().strip_prefix("/").unwrap());
        assert!(relative.is_relative() && relative.join("r2").is_file());
        let detection = detect_in(&DetectionEnv {
            path: Some(relative.into_os_string()),
            ..DetectionEnv::default()
        });
        assert!(matches!(detection, Detection::Unavailable(_)));
    }

    #[cfg(unix)]
    #[test]
    fn libr_dir_is_preferred_and_checked() {
        let libr = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        touch(&bin.path().join("r2"), 0o755);
        let host = bin.path().join("rea");
        touch(&host, 0o755);

        // Set but empty: reported, not replaced by the r2 on PATH.
        let Detection::Unavailable(u) =
            detect_in(&env(Some(bin.path()), Some(libr.path()), Some(&host)))
        else {
            panic!("expected unavailable");
        };
        assert_eq!(u.code.as_str(), "runtime_missing");
        assert!(u.detail.contains("REA_RADARE2_LIBR="), "{}", u.detail);

        touch(&libr.path().join("libr_core.so"), 0o755);
        touch(&libr.path().join("libr_util.so"), 0o755);
        assert_eq!(
            detect_in(&env(Some(bin.path()), Some(libr.path()), Some(&host))),
            Detection::Available(Launcher::Libr {
                dir: libr.path().to_path_buf(),
                host: host.clone()
            })
        );

        // Without a known rea executable the host cannot be started.
        let Detection::Unavailable(u) = detect_in(&env(None, Some(libr.path()), None)) else {
            panic!("expected unavailable");
        };
        assert_eq!(u.code.as_str(), "unsupported_host");
    }

    #[cfg(unix)]
    #[test]
    fn dylib_names_count_and_empty_variable_means_unset() {
        let libr = tempfile::tempdir().unwrap();
        touch(&libr.path().join("libr_core.dylib"), 0o755);
        touch(&libr.path().join("libr_util.dylib"), 0o755);
        assert!(library_path(libr.path(), "r_core").is_some());
        let detection = detect_in(&DetectionEnv {
            path: None,
            libr: Some(OsString::new()),
            host: None,
        });
        let Detection::Unavailable(u) = detection else {
            panic!("expected unavailable");
        };
        assert_eq!(u.code, UnavailableCode::ExecutableMissing);
    }
}
