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

use super::Launch;
use super::seccomp::Filter;
use crate::capture::error::CaptureError;
use crate::capture::types::{NOBODY, Network, RunAs, Scenario};

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

use crate::capture::wire::{EXECUTABLE_FD, INTERPRETER_FD, WORKING_FD};

/// What the child reports through its close-on-exec pipe: a tag and an
/// errno. `PTRACE` is not fatal (the run goes on untraced); `NETWORK` and
/// `FILTER` are (nothing runs without the isolation the scenario asked
/// for); `EXEC` says the failure was `execveat`'s own.
const REPORT_PTRACE: u8 = b'P';
const REPORT_NETWORK: u8 = b'N';
const REPORT_FILTER: u8 = b'F';
const REPORT_EXEC: u8 = b'X';

/// The script's name in its interpreter's argument vector: the descriptor
/// it is left open on, as the kernel names a script run from a descriptor.
const SCRIPT_NAME: &str = "/dev/fd/3";

fn c_string(field: &str, text: &[u8]) -> Result<CString, CaptureError> {
    CString::new(text).map_err(|_| CaptureError::InvalidScenario {
        field: field.into(),
        reason: "contains NUL".into(),
    })
}

/// A pointer array for execve, ending in null; `strings` must outlive it.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// What the child needs, prepared before the fork: execve's pointer arrays
/// (into strings that outlive the spawn) and the loopback request.
struct Prepared {
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    loopback: libc::ifreq,
}

// SAFETY: the pointers are only read, in the forked child, while the
// strings they point into are alive (they outlive `Command::spawn`).
unsafe impl Send for Prepared {}
// SAFETY: as above; nothing writes through them.
unsafe impl Sync for Prepared {}

/// The request that brings `lo` up, prepared before the fork.
fn loopback_request() -> libc::ifreq {
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    request
}

/// Brings the new network namespace's loopback interface up, so the run can
/// reach itself on 127.0.0.1 and nothing else. Async-signal-safe calls only.
///
/// # Safety
/// Call only in the child between fork and exec.
unsafe fn loopback_up(mut request: libc::ifreq) -> bool {
    // SAFETY (whole body): socket, ioctl and close on a request prepared
    // before the fork.
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if socket < 0 {
            return false;
        }
        let mut up = libc::ioctl(socket, libc::SIOCGIFFLAGS as _, &mut request) == 0;
        if up {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            up = libc::ioctl(socket, libc::SIOCSIFFLAGS as _, &request) == 0;
        }
        libc::close(socket);
        up
    }
}

/// # Safety
/// Call only in the child between fork and exec.
unsafe fn report(fd: i32, tag: u8) {
    let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let mut record = [0u8; 5];
    record[0] = tag;
    record[1..].copy_from_slice(&errno.to_ne_bytes());
    // SAFETY: write of a local buffer to a descriptor the child holds.
    unsafe { libc::write(fd, record.as_ptr().cast(), record.len()) };
}

/// Forks and execs the target from the descriptors [`EXECUTABLE_FD`] and
/// [`WORKING_FD`]: own session, an isolated network unless the scenario
/// says `host` (its own namespace, and the [`seccomp`](super::seccomp)
/// filter that keeps it off the host's Unix sockets), rlimits,
/// unprivileged ids, no new privileges, death signal, ptrace, exactly the
/// scenario's environment, stdio pipes. A [`Launch::Script`] runs its
/// interpreter from [`INTERPRETER_FD`], with the executable's descriptor
/// left open across exec for it to read the script through (`/dev/fd/3`).
/// The descriptor executed is always close-on-exec, so the kernel never
/// takes it for a script and never picks an interpreter itself.
pub fn spawn(scenario: &Scenario, launch: &Launch) -> Result<Spawned, CaptureError> {
    let who = identity(scenario)?;
    let arguments = scenario
        .arguments
        .iter()
        .map(|a| c_string("arguments", a.as_bytes()));
    let (program_fd, argv): (i32, Vec<CString>) = match launch {
        Launch::Binary => (
            EXECUTABLE_FD,
            std::iter::once(c_string(
                "executable",
                scenario.executable.as_os_str().as_bytes(),
            ))
            .chain(arguments)
            .collect::<Result<_, _>>()?,
        ),
        Launch::Script { argv } => (
            INTERPRETER_FD,
            argv.iter()
                .map(|a| c_string("interpreter", a.as_bytes()))
                .chain(std::iter::once(c_string("script", SCRIPT_NAME.as_bytes())))
                .chain(arguments)
                .collect::<Result<_, _>>()?,
        ),
    };
    let script = matches!(launch, Launch::Script { .. });
    let envp: Vec<CString> = scenario
        .environment
        .iter()
        .map(|e| c_string("environment", format!("{}={}", e.name, e.value).as_bytes()))
        .collect::<Result<_, _>>()?;
    let image = Prepared {
        argv: pointers(&argv),
        envp: pointers(&envp),
        loopback: loopback_request(),
    };
    let isolate = scenario.network == Network::Isolated;
    let filter = if isolate {
        Some(Filter::new().ok_or_else(|| {
            CaptureError::NetworkIsolation(format!(
                "rea has no seccomp filter for {}",
                std::env::consts::ARCH
            ))
        })?)
    } else {
        None
    };
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
    // The program std would run is never run: the pre-exec step execs the
    // descriptor itself, so no path is looked up.
    let mut cmd = Command::new(&scenario.executable);
    cmd.env_clear()
        .stdin(if scenario.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let pre_exec = move || -> io::Result<()> {
        // The whole `Prepared` (which is Send), not its fields one by one.
        let image = &image;
        // SAFETY (whole block): async-signal-safe libc calls on values
        // prepared before the fork.
        unsafe {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if isolate {
                // Root makes the namespace directly; anyone else needs a
                // user namespace to own it.
                let flags = if libc::geteuid() == 0 {
                    libc::CLONE_NEWNET
                } else {
                    libc::CLONE_NEWUSER | libc::CLONE_NEWNET
                };
                if libc::unshare(flags) != 0 {
                    report(report_fd, REPORT_NETWORK);
                    return Err(io::Error::last_os_error());
                }
                loopback_up(image.loopback);
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
            if libc::fchdir(WORKING_FD) != 0 {
                return Err(io::Error::last_os_error());
            }
            // After the uid change, which clears the death signal.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Neither setuid binaries nor file capabilities raise it.
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(filter) = &filter
                && !filter.install()
            {
                report(report_fd, REPORT_FILTER);
                return Err(io::Error::last_os_error());
            }
            // The script stays open for its interpreter; what is executed
            // is close-on-exec, which the kernel refuses to run as a script.
            let keep = if script { 0 } else { libc::FD_CLOEXEC };
            if libc::fcntl(EXECUTABLE_FD, libc::F_SETFD, keep) != 0
                || libc::fcntl(WORKING_FD, libc::F_SETFD, libc::FD_CLOEXEC) != 0
                || (script && libc::fcntl(INTERPRETER_FD, libc::F_SETFD, libc::FD_CLOEXEC) != 0)
            {
                return Err(io::Error::last_os_error());
            }
            // The kernel no longer executes the script, so its own check
            // is made here: the script must be executable by this account
            // on a mount that allows it, as for `execve`.
            if script
                && libc::syscall(
                    libc::SYS_faccessat2,
                    EXECUTABLE_FD,
                    c"".as_ptr(),
                    libc::X_OK,
                    libc::AT_EMPTY_PATH | libc::AT_EACCESS,
                ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            let none: *mut libc::c_void = std::ptr::null_mut();
            if libc::ptrace(libc::PTRACE_TRACEME, 0, none, none) != 0 {
                report(report_fd, REPORT_PTRACE);
            }
            libc::syscall(
                libc::SYS_execveat,
                program_fd,
                c"".as_ptr(),
                image.argv.as_ptr(),
                image.envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            );
            report(report_fd, REPORT_EXEC);
        }
        Err(io::Error::last_os_error())
    };
    // SAFETY: the closure only makes async-signal-safe calls and does not
    // allocate.
    unsafe {
        cmd.pre_exec(pre_exec);
    }
    let spawned = cmd.spawn();
    drop(report_w);
    drop(cmd);
    let mut records = Vec::new();
    {
        use std::io::Read;
        let f = std::fs::File::from(report_r);
        let _ = f.take(64).read_to_end(&mut records);
    }
    let reported = |tag: u8| {
        records
            .chunks_exact(5)
            .find(|r| r[0] == tag)
            .map(|r| io::Error::from_raw_os_error(i32::from_ne_bytes([r[1], r[2], r[3], r[4]])))
    };
    let child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return Err(
                match (
                    reported(REPORT_NETWORK),
                    reported(REPORT_FILTER),
                    reported(REPORT_EXEC),
                ) {
                    (Some(why), _, _) => CaptureError::NetworkIsolation(format!("unshare: {why}")),
                    (_, Some(why), _) => {
                        CaptureError::NetworkIsolation(format!("seccomp filter: {why}"))
                    }
                    (_, _, Some(why)) if why.raw_os_error() == Some(libc::ENOENT) => {
                        CaptureError::Spawn(format!(
                            "execveat: {why}: the program's ELF loader is missing, or the file \
                             became a #! script after rea read it (rea runs a script only \
                             through the interpreter it decided when the call was made)"
                        ))
                    }
                    _ => CaptureError::Spawn(e.to_string()),
                },
            );
        }
    };
    let traced = match reported(REPORT_PTRACE) {
        Some(why) => Err(format!("ptrace refused: {why}")),
        None => Ok(()),
    };
    let pid = i32::try_from(child.id()).map_err(|e| CaptureError::Io(e.to_string()))?;
    Ok(Spawned { child, pid, traced })
}
