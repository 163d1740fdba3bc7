//! Starting the target. Everything between `fork` and `exec` runs in
//! [`CommandExt::pre_exec`], where only async-signal-safe calls are
//! allowed: the values it needs (limits, ids, the working directory as a
//! C string, a pipe) are prepared before the fork.

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use crate::capture::error::CaptureError;
use crate::capture::types::{NOBODY, RunAs, Scenario};

/// The started target.
pub struct Spawned {
    pub child: Child,
    pub pid: i32,
    /// `Ok` when `PTRACE_TRACEME` succeeded, else why it did not.
    pub traced: Result<(), String>,
}

/// The account to switch to: `Some` when the host runs as root, `None`
/// when it cannot switch (and then the caller's `run_as` must be itself).
fn identity(scenario: &Scenario) -> Result<Option<RunAs>, CaptureError> {
    // SAFETY: getters without preconditions.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if euid == 0 {
        let who = scenario.run_as.unwrap_or(NOBODY);
        if who.uid == 0 || who.gid == 0 {
            return Err(CaptureError::WouldRunAsRoot);
        }
        return Ok(Some(who));
    }
    match scenario.run_as {
        Some(r) if r.uid != euid || r.gid != egid => Err(CaptureError::InvalidScenario {
            field: "run_as".into(),
            reason: format!(
                "asks for {}:{} but rea runs as {euid}:{egid} and can switch users only as root",
                r.uid, r.gid
            ),
        }),
        _ => Ok(None),
    }
}

fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Forks and execs the target: own session, rlimits, unprivileged ids,
/// death signal, ptrace, cleared environment, stdio pipes.
pub fn spawn(scenario: &Scenario) -> Result<Spawned, CaptureError> {
    let who = identity(scenario)?;
    let cwd = CString::new(scenario.working_directory.as_os_str().as_bytes()).map_err(|_| {
        CaptureError::InvalidScenario {
            field: "working_directory".into(),
            reason: "contains NUL".into(),
        }
    })?;
    let l = scenario.limits;
    let rlimits = [
        (libc::RLIMIT_NPROC, l.processes),
        (libc::RLIMIT_FSIZE, l.file_size_bytes),
        (libc::RLIMIT_CPU, l.cpu_seconds),
        (libc::RLIMIT_CORE, 0),
    ];
    let (report_r, report_w) = pipe_cloexec().map_err(|e| CaptureError::Io(e.to_string()))?;
    let report_fd = {
        use std::os::fd::AsRawFd;
        report_w.as_raw_fd()
    };

    let mut cmd = Command::new(&scenario.executable);
    cmd.args(&scenario.arguments)
        .env_clear()
        .envs(scenario.environment.iter().map(|e| (&e.name, &e.value)))
        .stdin(if scenario.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let pre_exec = move || -> io::Result<()> {
        // SAFETY (whole block): async-signal-safe libc calls on values
        // prepared before the fork.
        unsafe {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            for (resource, value) in rlimits {
                let lim = libc::rlimit {
                    rlim_cur: value as libc::rlim_t,
                    rlim_max: value as libc::rlim_t,
                };
                if libc::setrlimit(resource, &lim) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if let Some(who) = who {
                // Groups first, then gid, then uid: after setuid nothing
                // else may be dropped.
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(who.gid) != 0
                    || libc::setuid(who.uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            if libc::getuid() == 0 || libc::geteuid() == 0 {
                return Err(io::Error::from_raw_os_error(libc::EPERM));
            }
            if libc::chdir(cwd.as_ptr()) != 0 {
                return Err(io::Error::last_os_error());
            }
            // After the uid change, which clears the death signal.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            let none: *mut libc::c_void = std::ptr::null_mut();
            if libc::ptrace(libc::PTRACE_TRACEME, 0, none, none) != 0 {
                let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
                let bytes = errno.to_ne_bytes();
                libc::write(report_fd, bytes.as_ptr().cast(), bytes.len());
            }
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe calls and does not
    // allocate.
    unsafe {
        cmd.pre_exec(pre_exec);
    }
    let child = cmd
        .spawn()
        .map_err(|e| CaptureError::Spawn(e.to_string()))?;
    drop(report_w);
    drop(cmd);
    let mut buf = [0u8; 4];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::from(report_r);
        f.read(&mut buf).unwrap_or(0)
    };
    let traced = if n == 4 {
        Err(format!(
            "ptrace refused: {}",
            io::Error::from_raw_os_error(i32::from_ne_bytes(buf))
        ))
    } else {
        Ok(())
    };
    let pid = i32::try_from(child.id()).map_err(|e| CaptureError::Io(e.to_string()))?;
    Ok(Spawned { child, pid, traced })
}
