//! Bounded process capture: run one program under strict limits and
//! describe what happened — exit or signal, crash location with a module
//! map, bounded output, CPU and memory, files changed, and whether every
//! process it started was killed and reaped.
//!
//! The target never runs inside the server process. [`run`] starts
//! `rea capture-host` (the hidden subcommand, [`host::serve`]), hands it
//! the [`Scenario`] as JSON and reads back one [`Capture`]; the host does
//! the fork, ptrace, rlimits and reaping, and the server only enforces an
//! outer deadline on the host. Policy (which roots, whether capture is on
//! at all) belongs to the tool layer; this module refuses only what is
//! unsafe everywhere (relative paths, running as root, oversized input).

pub mod error;
#[cfg(unix)]
pub mod files;
#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(target_os = "linux")]
pub mod host;
pub mod interpreter;
pub mod procfs;
pub mod redact;
#[cfg(unix)]
mod supervise;
pub mod types;
pub mod wire;

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use supervise::Waited;

pub use error::CaptureError;
pub use interpreter::{Interpreter, InterpreterError, Program};
pub use types::{
    Capture, CaptureLimits, Cleanup, Crash, EnvVar, Exit, ExitReason, FileChanges, FileEntry,
    Mapping, RunAs, Scenario, Stream, Timing, Tracing,
};

/// Environment variable naming the `rea` binary that serves
/// `capture-host` (tests point it at `CARGO_BIN_EXE_rea`).
pub const HOST_ENV: &str = "REA_CAPTURE_HOST";

/// Time the host gets beyond the scenario's timeout: termination grace,
/// cleanup, draining, and the two directory snapshots.
pub const HOST_GRACE: Duration = Duration::from_secs(60);

/// Makes the host's descriptors [`wire::EXECUTABLE_FD`],
/// [`wire::WORKING_FD`] and, for a script, [`wire::INTERPRETER_FD`] the
/// opened executable, working directory and interpreter. They are first
/// copied above all three numbers (close-on-exec), so moving one cannot
/// overwrite another; `dup2` in the child then clears close-on-exec on
/// the ones it places.
fn inherit(command: &mut Command, opened: &Opened<'_>) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    const ABOVE: i32 = 10;
    let copy = |fd: BorrowedFd<'_>| -> std::io::Result<OwnedFd> {
        // SAFETY: F_DUPFD_CLOEXEC on a valid descriptor returns a new one we own.
        let raw = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, ABOVE) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor.
        Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(raw) })
    };
    let mut copies = vec![
        (
            copy(opened.program.file.file().as_fd())?,
            wire::EXECUTABLE_FD,
        ),
        (copy(opened.working_directory)?, wire::WORKING_FD),
    ];
    if let Some(interpreter) = &opened.program.interpreter {
        copies.push((copy(interpreter.file.file().as_fd())?, wire::INTERPRETER_FD));
    }
    let places: Vec<(i32, i32)> = copies
        .iter()
        .map(|(fd, to)| (fd.as_raw_fd(), *to))
        .collect();
    // SAFETY: dup2 only, async-signal-safe; the copies stay open in the
    // parent until the command (which owns them) is dropped.
    unsafe {
        command.pre_exec(move || {
            let _keep = &copies;
            for &(from, to) in &places {
                if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Ok(())
}

/// The executable that serves `capture-host`: `host`, else
/// `$REA_CAPTURE_HOST`, else this process's own executable.
pub fn host_executable(host: Option<&Path>) -> Result<PathBuf, CaptureError> {
    if let Some(h) = host {
        return Ok(h.to_path_buf());
    }
    if let Some(h) = std::env::var_os(HOST_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    std::env::current_exe().map_err(|e| CaptureError::HostStart(e.to_string()))
}

/// The target's program (the executable and, for a script, the
/// interpreter decided from its `#!` line) and working directory, opened
/// by the caller (beneath the operator's roots): the host runs the program
/// from these descriptors and never looks the paths up, or reads the `#!`
/// line, again.
pub struct Opened<'a> {
    pub program: &'a Program,
    pub working_directory: BorrowedFd<'a>,
}

/// Runs `scenario` in a capture host and returns the validated capture.
/// Blocking: call it from a blocking thread. `host` overrides the binary
/// (see [`host_executable`]). The executable, a script's interpreters and
/// the working directory are opened here, once and unconfined; the server
/// opens them beneath its roots and calls [`run_opened`].
pub fn run(scenario: &Scenario, host: Option<&Path>) -> Result<Capture, CaptureError> {
    run_with_grace(scenario, host, HOST_GRACE, &|| false)
}

/// [`run`] with the host's allowance beyond `timeout_ms` given (the host
/// is killed, `HostDeadline`, once `timeout_ms + grace` has passed) and
/// the run stopped early once `stop` says so (see [`run_opened`]).
pub fn run_with_grace(
    scenario: &Scenario,
    host: Option<&Path>,
    grace: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Capture, CaptureError> {
    scenario.validate()?;
    let roots = crate::ground::confined::Roots::default();
    let spawn_error = |e: crate::ground::confined::OpenError| CaptureError::Spawn(e.to_string());
    let executable = roots.open_file(&scenario.executable).map_err(spawn_error)?;
    let program = Program::resolve(executable, &mut |path| roots.open_file(path))
        .map_err(|e| CaptureError::Spawn(format!("the executable's #! interpreter {e}")))?;
    let working = roots
        .open_dir(&scenario.working_directory)
        .map_err(spawn_error)?;
    let opened = Opened {
        program: &program,
        working_directory: working.as_fd(),
    };
    run_opened(scenario, host, &opened, grace, stop)
}

/// Runs `scenario` from descriptors the caller opened. Once `stop` says
/// so (the call was cancelled, say), the host is asked to end the run and
/// clean up, and the answer is [`CaptureError::Stopped`].
pub fn run_opened(
    scenario: &Scenario,
    host: Option<&Path>,
    opened: &Opened<'_>,
    grace: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Capture, CaptureError> {
    scenario.validate()?;
    if !cfg!(target_os = "linux") {
        return Err(CaptureError::Unsupported);
    }
    if stop() {
        // Nothing has started, so nothing is left to clean up.
        return Err(CaptureError::Stopped {
            cleanup_verified: true,
        });
    }
    let exe = host_executable(host)?;
    let input = serde_json::to_vec(scenario).map_err(|e| CaptureError::Io(e.to_string()))?;
    let mut command = Command::new(&exe);
    command.args(["capture-host", "--inherited-descriptors"]);
    if let Some(interpreter) = &opened.program.interpreter {
        for arg in &interpreter.argv {
            let mut flag =
                std::ffi::OsString::from(format!("--{}=", wire::INTERPRETER_ARGV_OPTION));
            flag.push(arg);
            command.arg(flag);
        }
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    inherit(&mut command, opened).map_err(|e| CaptureError::HostStart(e.to_string()))?;
    supervise::tie_to_server(&mut command);
    let mut child = command
        .spawn()
        .map_err(|e| CaptureError::HostStart(format!("{}: {e}", exe.display())))?;
    let deadline_ms = scenario.timeout_ms + grace.as_millis() as u64;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(CaptureError::HostStart("no pipes to the host".into()));
    };
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let limit = wire::max_reply_bytes(scenario);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut stdout = stdout;
        let read = (&mut stdout).take(limit + 1).read_to_end(&mut out);
        // Keep draining so an oversized reply cannot block the host.
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        read.map(|_| out)
    });
    let waited = supervise::wait(&mut child, Duration::from_millis(deadline_ms), stop)
        .map_err(|e| CaptureError::HostFailed(e.to_string()))?;
    let (status, asked_to_stop) = match waited {
        Waited::Exited(status) => (status, false),
        Waited::Stopped(status) => (status, true),
        Waited::Killed {
            asked_to_stop: true,
        } => {
            return Err(CaptureError::Stopped {
                cleanup_verified: false,
            });
        }
        Waited::Killed {
            asked_to_stop: false,
        } => return Err(CaptureError::HostDeadline(deadline_ms)),
    };
    let _ = writer.join();
    let reply = reader
        .join()
        .map_err(|_| CaptureError::HostFailed("the reply reader panicked".into()))?
        .map_err(|e| CaptureError::HostFailed(e.to_string()))
        .and_then(|out| read_reply(&out, limit, status));
    if asked_to_stop {
        // The run is over either way; the host's word on its cleanup is
        // all that is left to say.
        let cleanup_verified = match reply {
            Ok(capture) => capture.cleanup.verified,
            Err(CaptureError::Stopped { cleanup_verified }) => cleanup_verified,
            Err(_) => false,
        };
        return Err(CaptureError::Stopped { cleanup_verified });
    }
    reply
}

/// The validated capture in the host's reply `out`.
fn read_reply(
    out: &[u8],
    limit: u64,
    status: std::process::ExitStatus,
) -> Result<Capture, CaptureError> {
    if out.len() as u64 > limit {
        return Err(CaptureError::HostFailed(format!(
            "the reply exceeded {limit} bytes"
        )));
    }
    if out.is_empty() {
        return Err(CaptureError::HostFailed(format!(
            "no reply (host exit status {status}); see its stderr"
        )));
    }
    let reply: wire::HostReply = serde_json::from_slice(out)
        .map_err(|e| CaptureError::HostFailed(format!("unreadable reply: {e}")))?;
    let capture = reply.into_result()?;
    capture.validate()?;
    Ok(capture)
}
