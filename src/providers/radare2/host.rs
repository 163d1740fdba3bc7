//! The libr host: `rea radare2-host --libr DIR [-e KEY=VALUE]... -- FILE`.
//!
//! It gives an r2libr installation (shared libraries, no `r2` executable)
//! the same r2pipe protocol as `r2 -q0`, in its own process, so a crash or
//! hang inside radare2 never touches the server. It `dlopen`s `libr_core`,
//! applies the settings, opens FILE with `r_core_file_open` and
//! `r_core_bin_load` (the path is data there, never a command), writes one
//! NUL, then answers each stdin line with `r_core_cmd_str` output plus a NUL
//! until stdin closes.
//!
//! **stdout carries protocol bytes only.** Before any library is loaded, the
//! host keeps private close-on-exec duplicates of stdin and stdout for the
//! protocol, points descriptor 1 at stderr and descriptor 0 at `/dev/null`.
//! Whatever radare2 prints on its own lands in stderr (which the client
//! keeps as diagnostics), and nothing in radare2 can consume protocol input.

use std::ffi::{CStr, CString};
use std::io::{self, BufRead, Write};
use std::path::Path;

use super::Radare2Error;
use super::target_path::check_target_path;

/// What the host is asked to serve.
#[derive(Debug, Clone, Copy)]
pub struct HostRequest<'a> {
    /// The directory holding `libr_core.so` / `.dylib`.
    pub libr: &'a Path,
    /// radare2 settings (`KEY=VALUE`), applied before the file loads.
    pub settings: &'a [String],
    pub file: &'a Path,
}

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Target(#[from] Radare2Error),
    #[error(
        "invalid radare2 setting {0:?}: expected KEY=VALUE made of letters, digits, `.`, `_` and `-`"
    )]
    Setting(String),
    #[error(
        "no libr_{name} shared library in {dir}; point REA_RADARE2_LIBR at r2libr's libr directory"
    )]
    MissingLibrary { dir: String, name: &'static str },
    #[error("cannot load {path}: {reason}; use the r2libr==5.7.4 libraries for this platform")]
    Library { path: String, reason: String },
    #[error("{library} has no usable {symbol}: {reason}; use radare2 5.7.4 libraries")]
    Symbol {
        library: String,
        symbol: String,
        reason: String,
    },
    #[error("r_core_new failed; the radare2 libraries cannot start here")]
    CoreNew,
    #[error("radare2 could not open {path}; check that the file is readable")]
    Open { path: String },
    #[error("protocol I/O failed: {0}")]
    Io(#[from] io::Error),
    #[error("the radare2 host needs a Unix system; install radare2 so `r2` is on PATH instead")]
    Unsupported,
}

/// Settings are spliced into `e KEY=VALUE` commands, so only a closed
/// alphabet passes: no spaces, `;`, `|`, `` ` ``, `@`, `~` or `!`.
pub(crate) fn check_setting(setting: &str) -> Result<(), HostError> {
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    };
    match setting.split_once('=') {
        Some((key, value)) if valid(key) && valid(value) => Ok(()),
        _ => Err(HostError::Setting(setting.to_string())),
    }
}

/// Answers each line of `input` with `run(line)` and a NUL until EOF. A line
/// is a command without its `\n` (or `\r\n`); a line holding a NUL byte
/// cannot be a C string and gets an empty answer. NUL bytes in an answer
/// are dropped, so framing cannot break.
pub(crate) fn serve<R: BufRead, W: Write>(
    mut input: R,
    output: &mut W,
    mut run: impl FnMut(&CStr) -> Vec<u8>,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let mut answer = match CString::new(line.as_slice()) {
            Ok(command) => run(&command),
            Err(_) => Vec::new(),
        };
        answer.retain(|&b| b != 0);
        output.write_all(&answer)?;
        output.write_all(b"\0")?;
        output.flush()?;
    }
}

/// Runs the host until stdin closes.
pub fn run(request: &HostRequest<'_>) -> Result<(), HostError> {
    check_target_path(request.file)?;
    for setting in request.settings {
        check_setting(setting)?;
    }
    imp::run(request)
}

#[cfg(not(unix))]
mod imp {
    use super::{HostError, HostRequest};

    pub(super) fn run(_request: &HostRequest<'_>) -> Result<(), HostError> {
        Err(HostError::Unsupported)
    }
}

#[cfg(unix)]
mod imp {
    use std::ffi::{CStr, CString, c_char, c_int, c_void};
    use std::fs::File;
    use std::io::{self, BufReader, Write};
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::ptr::NonNull;

    use libloading::Library;

    use super::super::detect::library_path;
    use super::{HostError, HostRequest, serve};

    type CoreNew = unsafe extern "C" fn() -> *mut c_void;
    type CoreFree = unsafe extern "C" fn(*mut c_void);
    type CoreCmdStr = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_char;
    type CoreFileOpen = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, u64) -> *mut c_void;
    type CoreBinLoad = unsafe extern "C" fn(*mut c_void, *const c_char, u64) -> bool;
    type MemFree = unsafe extern "C" fn(*mut c_void);

    /// `R_PERM_R | R_PERM_X`, as `r2` opens files by default.
    const R_PERM_RX: c_int = 4 | 1;
    /// `UT64_MAX`: let radare2 take the base address from the file.
    const BASE_FROM_FILE: u64 = u64::MAX;

    unsafe extern "C" {
        /// POSIX `dup2(2)`, from the C library std already links.
        fn dup2(oldfd: c_int, newfd: c_int) -> c_int;
    }

    pub(super) fn run(request: &HostRequest<'_>) -> Result<(), HostError> {
        let (input, mut output) = take_protocol_streams()?;
        let core = LibrCore::load(request.libr)?;
        for setting in request.settings {
            let command = CString::new(format!("e {setting}"))
                .map_err(|_| HostError::Setting(setting.clone()))?;
            core.command(&command);
        }
        core.open(request.file)?;
        output.write_all(b"\0")?;
        output.flush()?;
        serve(BufReader::new(input), &mut output, |line| {
            core.command(line)
        })?;
        Ok(())
    }

    /// Private duplicates of stdin and stdout for the protocol; then fd 0
    /// reads `/dev/null` and fd 1 writes to stderr.
    fn take_protocol_streams() -> io::Result<(File, File)> {
        let input = File::from(io::stdin().as_fd().try_clone_to_owned()?);
        let output = File::from(io::stdout().as_fd().try_clone_to_owned()?);
        let null = File::open("/dev/null")?;
        redirect(null.as_raw_fd(), 0)?;
        redirect(2, 1)?;
        Ok((input, output))
    }

    fn redirect(from: RawFd, to: RawFd) -> io::Result<()> {
        // SAFETY: dup2 only replaces descriptor `to` with a copy of `from`;
        // both are open descriptors of this process, and no Rust object
        // owns 0 or 1 in a way that the swap could invalidate.
        if unsafe { dup2(from, to) } < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// One `RCore` and the libr functions rea calls.
    struct LibrCore {
        core: NonNull<c_void>,
        free: CoreFree,
        cmd_str: CoreCmdStr,
        file_open: CoreFileOpen,
        bin_load: CoreBinLoad,
        mem_free: MemFree,
        // Keep the libraries loaded while the pointers above live; fields
        // drop after `Drop::drop` has freed the core.
        _util: Library,
        _core_library: Library,
    }

    fn open_library(dir: &Path, name: &'static str) -> Result<(Library, String), HostError> {
        let path = library_path(dir, name).ok_or_else(|| HostError::MissingLibrary {
            dir: dir.display().to_string(),
            name: name.trim_start_matches("r_"),
        })?;
        let shown = path.display().to_string();
        // SAFETY: loading runs the library's initialisers; these are
        // radare2's own libraries, found where the operator pointed.
        let library = unsafe { Library::new(&path) }.map_err(|e| HostError::Library {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        Ok((library, shown))
    }

    /// Copies a function pointer of type `T` out of `library`.
    ///
    /// # Safety
    /// `T` must be the symbol's true C signature.
    unsafe fn symbol<T: Copy>(
        library: &Library,
        shown: &str,
        name: &'static CStr,
    ) -> Result<T, HostError> {
        // SAFETY: the caller guarantees the type; the pointer is used only
        // while `library` stays loaded (LibrCore owns it).
        unsafe { library.get::<T>(name) }
            .map(|s| *s)
            .map_err(|e| HostError::Symbol {
                library: shown.to_string(),
                symbol: name.to_string_lossy().into_owned(),
                reason: e.to_string(),
            })
    }

    impl LibrCore {
        fn load(dir: &Path) -> Result<LibrCore, HostError> {
            let (core_library, core_shown) = open_library(dir, "r_core")?;
            let (util, util_shown) = open_library(dir, "r_util")?;
            // SAFETY: the signatures are radare2 5.7.4's (r_core.h,
            // r_util/r_mem.h): RCore *r_core_new(void); void
            // r_core_free(RCore *); char *r_core_cmd_str(RCore *, const char
            // *); RIODesc *r_core_file_open(RCore *, const char *, int,
            // ut64); bool r_core_bin_load(RCore *, const char *, ut64); void
            // r_mem_free(void *).
            let (new, free, cmd_str, file_open, bin_load, mem_free) = unsafe {
                let (lib, shown) = (&core_library, core_shown.as_str());
                (
                    symbol::<CoreNew>(lib, shown, c"r_core_new")?,
                    symbol::<CoreFree>(lib, shown, c"r_core_free")?,
                    symbol::<CoreCmdStr>(lib, shown, c"r_core_cmd_str")?,
                    symbol::<CoreFileOpen>(lib, shown, c"r_core_file_open")?,
                    symbol::<CoreBinLoad>(lib, shown, c"r_core_bin_load")?,
                    symbol::<MemFree>(&util, &util_shown, c"r_mem_free")?,
                )
            };
            // SAFETY: r_core_new takes no arguments and returns an owned
            // core or NULL.
            let core = NonNull::new(unsafe { new() }).ok_or(HostError::CoreNew)?;
            Ok(LibrCore {
                core,
                free,
                cmd_str,
                file_open,
                bin_load,
                mem_free,
                _util: util,
                _core_library: core_library,
            })
        }

        /// Opens and loads `file` the way `r2 FILE` does.
        fn open(&self, file: &Path) -> Result<(), HostError> {
            let shown = || HostError::Open {
                path: file.display().to_string(),
            };
            let path = CString::new(file.as_os_str().as_bytes()).map_err(|_| shown())?;
            // SAFETY: `core` is live; `path` is a NUL-terminated string that
            // outlives both calls, which copy what they keep.
            let desc = unsafe { (self.file_open)(self.core.as_ptr(), path.as_ptr(), R_PERM_RX, 0) };
            if desc.is_null() {
                return Err(shown());
            }
            // SAFETY: as above.
            if !unsafe { (self.bin_load)(self.core.as_ptr(), path.as_ptr(), BASE_FROM_FILE) } {
                // `r2` goes on with the raw bytes too; say so on stderr.
                eprintln!(
                    "rea radare2-host: radare2 found no binary format in {}; it analyses the raw bytes",
                    file.display()
                );
            }
            Ok(())
        }

        /// Runs one command and returns its output.
        fn command(&self, line: &CStr) -> Vec<u8> {
            // SAFETY: `core` is live and `line` is NUL-terminated; the result
            // is NULL or a heap string radare2 allocated for us.
            let answer = unsafe { (self.cmd_str)(self.core.as_ptr(), line.as_ptr()) };
            if answer.is_null() {
                return Vec::new();
            }
            // SAFETY: radare2 returned a NUL-terminated string, which we copy
            // and then free exactly once with radare2's own allocator.
            unsafe {
                let bytes = CStr::from_ptr(answer).to_bytes().to_vec();
                (self.mem_free)(answer.cast());
                bytes
            }
        }
    }

    impl Drop for LibrCore {
        fn drop(&mut self) {
            // SAFETY: `core` came from r_core_new and is freed once, before
            // the libraries unload.
            unsafe { (self.free)(self.core.as_ptr()) };
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_directory_without_libr_is_a_typed_error() {
            let dir = tempfile::tempdir().unwrap();
            let err = LibrCore::load(dir.path()).err().unwrap();
            assert!(
                matches!(err, HostError::MissingLibrary { name: "core", .. }),
                "{err}"
            );
            assert!(err.to_string().contains("REA_RADARE2_LIBR"));
            std::fs::write(dir.path().join("libr_core.so"), b"not a library").unwrap();
            let err = LibrCore::load(dir.path()).err().unwrap();
            assert!(matches!(err, HostError::Library { .. }), "{err}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_frames_each_line_and_survives_odd_input() {
        let input = b"?V\r\naflj\n\nbad\0line\nlast-without-newline".as_slice();
        let mut output = Vec::new();
        let mut seen = Vec::new();
        serve(input, &mut output, |line| {
            seen.push(line.to_string_lossy().into_owned());
            match line.to_bytes() {
                b"?V" => b"5.7.4 2\n".to_vec(),
                b"aflj" => b"[]\0sneaky".to_vec(),
                _ => Vec::new(),
            }
        })
        .unwrap();
        assert_eq!(seen, ["?V", "aflj", "", "last-without-newline"]);
        assert_eq!(output, b"5.7.4 2\n\0[]sneaky\0\0\0\0");
    }

    #[test]
    fn settings_are_a_closed_alphabet() {
        for ok in ["scr.color=0", "bin.demangle=false", "anal.cc=ms-x64"] {
            assert!(check_setting(ok).is_ok(), "{ok}");
        }
        for bad in [
            "scr.color",
            "=1",
            "a=",
            "a=b;!id",
            "a=b c",
            "a=`x`",
            "a@b=1",
            "a=b|c",
        ] {
            assert!(check_setting(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_host_refuses_unsafe_targets_before_loading_anything() {
        let dir = Path::new("/nonexistent");
        for file in ["relative.node", "/tmp/zip://a", "/tmp/a\nb"] {
            let err = run(&HostRequest {
                libr: dir,
                settings: &[],
                file: Path::new(file),
            })
            .unwrap_err();
            assert!(matches!(err, HostError::Target(_)), "{file}: {err}");
        }
        let err = run(&HostRequest {
            libr: dir,
            settings: &["a=b;!id".to_string()],
            file: Path::new("/tmp/x"),
        })
        .unwrap_err();
        assert!(matches!(err, HostError::Setting(_)), "{err}");
    }
}
