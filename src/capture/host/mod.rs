//! `rea capture-host`: the process that runs one scenario. It reads the
//! [`Scenario`] as JSON on stdin and writes one [`HostReply`] as JSON on
//! stdout (nothing else goes there); logs go to stderr and never carry
//! environment values.
//!
//! The host makes itself a child subreaper, so every descendant of the
//! target — double forks and `setsid` included — is re-parented to it,
//! can be found through `/proc` (ppid == host) and is reaped here.

mod output;
mod seccomp;
mod spawn;
mod stop;
mod trace;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::error::CaptureError;
use super::files;
use super::interpreter::Program;
use super::procfs;
use super::redact::Secrets;
use super::types::{
    CRASH_SIGNALS, Capture, Cleanup, Exit, ExitReason, SCHEMA_VERSION, Scenario, Timing, Tracing,
};
use super::wire::{
    EXECUTABLE_FD, HostReply, INTERPRETER_ARGV_OPTION, INTERPRETER_FD, MAX_SCENARIO_BYTES,
    WORKING_FD,
};
use output::Collector;

/// Between SIGTERM and SIGKILL at a timeout.
const TERM_GRACE: Duration = Duration::from_millis(300);
/// How long leftover output is drained after everything is dead.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// Rounds of find-kill-reap over `/proc` before giving up.
const CLEANUP_ROUNDS: usize = 200;
/// One `poll` wait; also the granularity of the deadlines.
const TICK_MS: i32 = 10;

/// Entry point of the hidden subcommand: reads the scenario, runs it,
/// writes the reply. An `Err` means the reply itself could not be written.
///
/// `inherited`: the executable and working directory are already this
/// process's descriptors [`EXECUTABLE_FD`] and [`WORKING_FD`] (the server
/// opened them beneath its roots), and, when `interpreter_argv` is not
/// empty, the executable is a script whose interpreter (which the server
/// decided from the script's `#!` line) is [`INTERPRETER_FD`]. Otherwise
/// the scenario's paths are opened here, once, the interpreter decided
/// here, and all placed there.
pub fn serve(inherited: bool, interpreter_argv: Vec<OsString>) -> std::io::Result<()> {
    stop::install()?;
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut input)?;
    let reply = if input.len() as u64 > MAX_SCENARIO_BYTES {
        HostReply::from_error(&CaptureError::InvalidScenario {
            field: "scenario".into(),
            reason: format!("is larger than {MAX_SCENARIO_BYTES} bytes"),
        })
    } else {
        match serde_json::from_slice::<Scenario>(&input) {
            Err(e) => HostReply::from_error(&CaptureError::InvalidScenario {
                field: "scenario".into(),
                // serde's message names the field, never a string value.
                reason: format!("is not valid JSON for a scenario: {e}"),
            }),
            Ok(scenario) => match place_descriptors(&scenario, inherited, interpreter_argv)
                .and_then(|launch| run(&scenario, &launch))
            {
                Ok(capture) => HostReply::Captured {
                    capture: Box::new(capture),
                },
                Err(e) => HostReply::from_error(&e),
            },
        }
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &reply)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Puts the executable on [`EXECUTABLE_FD`], the working directory on
/// [`WORKING_FD`] and a script's interpreter on [`INTERPRETER_FD`]
/// (opening the scenario's paths and deciding the interpreter unless
/// `inherited`), checks their kinds through the descriptors, and says how
/// the program is started. The `#!` line is never read here when the
/// server decided it.
fn place_descriptors(
    scenario: &Scenario,
    inherited: bool,
    interpreter_argv: Vec<OsString>,
) -> Result<Launch, CaptureError> {
    let spawn_error = |what: &str, e: &dyn std::fmt::Display| {
        CaptureError::Spawn(format!("the {what} cannot be used: {e}"))
    };
    let launch = if inherited {
        Launch::from_argv(interpreter_argv)
    } else {
        if !interpreter_argv.is_empty() {
            return Err(CaptureError::InvalidScenario {
                field: INTERPRETER_ARGV_OPTION.into(),
                reason: "is given only with the descriptors the server opened".into(),
            });
        }
        use std::os::fd::{IntoRawFd, OwnedFd};
        let roots = crate::ground::confined::Roots::default();
        let executable = roots
            .open_file(&scenario.executable)
            .map_err(|e| spawn_error("executable", &e))?;
        let program = Program::resolve(executable, &mut |path| roots.open_file(path))
            .map_err(|e| spawn_error("executable", &format!("its #! interpreter {e}")))?;
        let working = roots
            .open_dir(&scenario.working_directory)
            .map_err(|e| spawn_error("working directory", &e))?
            .into_fd();
        let mut placed: Vec<(OwnedFd, i32)> = vec![
            (program.file.into_file().into(), EXECUTABLE_FD),
            (working, WORKING_FD),
        ];
        let launch = match program.interpreter {
            Some(interpreter) => {
                placed.push((interpreter.file.into_file().into(), INTERPRETER_FD));
                Launch::from_argv(interpreter.argv)
            }
            None => Launch::Binary,
        };
        // All move above the numbers first, so placing one can never
        // close another (any may already sit on 3, 4 or 5).
        let mut high = Vec::with_capacity(placed.len());
        for (fd, at) in placed {
            let fd = fd.into_raw_fd();
            // SAFETY: descriptor calls on descriptors this function owns.
            unsafe {
                high.push((libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10), at));
                libc::close(fd);
            }
        }
        for (fd, at) in high {
            // SAFETY: as above.
            let placed = unsafe { fd >= 0 && libc::dup3(fd, at, libc::O_CLOEXEC) >= 0 };
            // SAFETY: as above.
            unsafe { libc::close(fd) };
            if !placed {
                return Err(CaptureError::Io(
                    std::io::Error::last_os_error().to_string(),
                ));
            }
        }
        launch
    };
    // SAFETY: fstat into a local struct.
    let kind = |fd: i32| unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some(st.st_mode & libc::S_IFMT)
    };
    if kind(EXECUTABLE_FD) != Some(libc::S_IFREG) {
        return Err(spawn_error("executable", &"it is not an open regular file"));
    }
    if matches!(launch, Launch::Script { .. }) && kind(INTERPRETER_FD) != Some(libc::S_IFREG) {
        return Err(spawn_error(
            "interpreter",
            &"it is not an open regular file",
        ));
    }
    if kind(WORKING_FD) != Some(libc::S_IFDIR) {
        return Err(spawn_error(
            "working directory",
            &"it is not an open directory",
        ));
    }
    Ok(launch)
}

/// How the target is started. Either way the kernel executes a
/// descriptor with close-on-exec set, so it never reads a `#!` line: a
/// file that became a script after it was read fails to start (`ENOENT`)
/// instead of running an interpreter nobody checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// [`EXECUTABLE_FD`] itself.
    Binary,
    /// [`INTERPRETER_FD`], with `argv` then `/dev/fd/3` (the script,
    /// left open across exec) then the scenario's arguments.
    Script { argv: Vec<OsString> },
}

impl Launch {
    fn from_argv(argv: Vec<OsString>) -> Launch {
        if argv.is_empty() {
            Launch::Binary
        } else {
            Launch::Script { argv }
        }
    }
}

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Reads what is available on `fd` into `sink`; `false` at end of file.
fn drain(fd: i32, sink: &mut Collector, buf: &mut [u8]) -> (bool, bool) {
    let mut got = false;
    // Bounded per tick so one flooding stream cannot starve the other
    // or the deadline checks.
    for _ in 0..64 {
        // SAFETY: buf is a live buffer of buf.len() bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            sink.push(&buf[..n as usize]);
            got = true;
        } else if n == 0 {
            return (false, got);
        } else {
            let err = std::io::Error::last_os_error().raw_os_error();
            if err == Some(libc::EINTR) {
                continue;
            }
            return (err == Some(libc::EAGAIN), got);
        }
    }
    (true, got)
}

/// The two output pipes.
struct Pipes {
    fds: [i32; 2],
    open: [bool; 2],
    sinks: [Collector; 2],
    buf: Vec<u8>,
}

impl Pipes {
    /// Waits up to `timeout_ms` for output and reads it; `true` if any
    /// arrived.
    fn pump(&mut self, timeout_ms: i32) -> bool {
        let mut pfds: Vec<libc::pollfd> = (0..2)
            .filter(|&i| self.open[i])
            .map(|i| libc::pollfd {
                fd: self.fds[i],
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if pfds.is_empty() {
            std::thread::sleep(Duration::from_millis(timeout_ms.max(0) as u64));
            return false;
        }
        // SAFETY: pfds is a live array of pfds.len() entries.
        let ready =
            unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
        if ready <= 0 {
            return false;
        }
        let mut got = false;
        for p in pfds.iter().filter(|p| p.revents != 0) {
            let i = usize::from(p.fd != self.fds[0]);
            let (still_open, read) = drain(p.fd, &mut self.sinks[i], &mut self.buf);
            self.open[i] = still_open;
            got |= read;
        }
        got
    }
}

/// What waiting reported about the initial process.
struct Ended {
    status: i32,
}

fn kill(pid: i32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Reaps every child that has changed state without blocking: ptrace
/// stops of the initial process go to `tracer`, its end is returned, and
/// every reaped pid is added to `seen`.
fn reap(
    target: i32,
    tracer: &mut Option<trace::Tracer>,
    seen: &mut BTreeSet<i32>,
) -> Option<Ended> {
    let mut ended = None;
    loop {
        let mut status = 0;
        // SAFETY: status is a live int.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
        if pid <= 0 {
            return ended;
        }
        if libc::WIFSTOPPED(status) {
            if pid == target
                && let Some(t) = tracer.as_mut()
            {
                t.on_stop(status);
            }
            continue;
        }
        seen.insert(pid);
        if pid == target {
            ended = Some(Ended { status });
        }
    }
}

/// Kills and reaps every process still parented to the host, and the
/// initial process's group, until a scan finds none (killing one may
/// re-parent its children here). Returns (verified, killed).
fn clean_up(host: i32, group: i32, seen: &mut BTreeSet<i32>) -> (bool, u64) {
    let mut killed = BTreeSet::new();
    let mut none = None;
    for _ in 0..CLEANUP_ROUNDS {
        reap(-1, &mut none, seen);
        let left = procfs::children_of(host);
        // Scanned before the group kill, so live members are counted.
        for &(pid, state) in &left {
            kill(pid, libc::SIGKILL);
            if state != 'Z' {
                killed.insert(pid);
            }
        }
        kill(-group, libc::SIGKILL);
        if left.is_empty() {
            return (true, killed.len() as u64);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    reap(-1, &mut none, seen);
    (procfs::children_of(host).is_empty(), killed.len() as u64)
}

fn millis(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1000 + (tv.tv_usec.max(0) as u64) / 1000
}

/// Runs `scenario` to its end and describes what happened. Call it only
/// in a process of its own (it makes that process a subreaper and reaps
/// every child it has): `rea capture-host`.
///
/// The executable and working directory are [`EXECUTABLE_FD`] and
/// [`WORKING_FD`], and a script's interpreter [`INTERPRETER_FD`] (see
/// [`serve`]); `launch` says which runs.
pub fn run(scenario: &Scenario, launch: &Launch) -> Result<Capture, CaptureError> {
    scenario.validate()?;
    let secrets = Secrets::of(scenario);
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) } != 0 {
        return Err(CaptureError::Io(format!(
            "PR_SET_CHILD_SUBREAPER failed: {}",
            std::io::Error::last_os_error()
        )));
    }
    let host = std::process::id() as i32;
    // The working directory as the descriptor holds it, whatever its path
    // names now.
    let working = std::path::PathBuf::from(format!("/proc/self/fd/{WORKING_FD}"));
    let before = files::snapshot(&working, scenario.limits.files_listed);
    let start = Instant::now();
    if stop::requested() {
        // Asked to stop while starting: nothing has run, nothing is left.
        return Err(CaptureError::Stopped {
            cleanup_verified: true,
        });
    }
    let mut spawned = spawn::spawn(scenario, launch)?;
    let target = spawned.pid;
    tracing::debug!(
        pid = target,
        traced = spawned.traced.is_ok(),
        "capture target started"
    );
    if let (Some(mut pipe), Some(text)) = (spawned.child.stdin.take(), scenario.stdin.clone()) {
        // A thread, so a process that never reads cannot stall the host;
        // it ends with EPIPE once the reader is gone.
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let (Some(stdout), Some(stderr)) = (spawned.child.stdout.take(), spawned.child.stderr.take())
    else {
        return Err(CaptureError::Io("the output pipes were not created".into()));
    };
    let fds = [stdout.as_raw_fd(), stderr.as_raw_fd()];
    fds.iter().for_each(|&fd| set_nonblocking(fd));
    let mut pipes = Pipes {
        fds,
        open: [true, true],
        sinks: [
            Collector::new(scenario.limits.output_bytes),
            Collector::new(scenario.limits.output_bytes),
        ],
        buf: vec![0u8; 64 * 1024],
    };
    let mut tracer = spawned.traced.is_ok().then(|| trace::Tracer::new(target));
    let mut seen = BTreeSet::new();
    let timeout = Duration::from_millis(scenario.timeout_ms);
    let idle = Duration::from_millis(scenario.idle_timeout_ms);
    let mut last_output = Instant::now();
    let mut stop: Option<(ExitReason, Instant)> = None;
    let mut killed_group = false;
    let ended = loop {
        if pipes.pump(TICK_MS) {
            last_output = Instant::now();
        }
        if let Some(ended) = reap(target, &mut tracer, &mut seen) {
            break ended;
        }
        let now = Instant::now();
        match stop {
            None => {
                let reason = if stop::requested() {
                    Some(ExitReason::Stopped)
                } else if now - start >= timeout {
                    Some(ExitReason::Timeout)
                } else if now - last_output >= idle {
                    Some(ExitReason::IdleTimeout)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    tracing::debug!(?reason, "terminating the capture target's group");
                    kill(-target, libc::SIGTERM);
                    stop = Some((reason, now));
                }
            }
            Some((_, since)) if !killed_group && now - since >= TERM_GRACE => {
                kill(-target, libc::SIGKILL);
                kill(target, libc::SIGKILL);
                killed_group = true;
            }
            Some(_) => {}
        }
    };
    let wall_ms = start.elapsed().as_millis() as u64;
    // The initial process is gone: its group and every re-parented
    // descendant go too.
    let (verified, survivors_killed) = clean_up(host, target, &mut seen);
    let drain_until = Instant::now() + DRAIN_LIMIT;
    while (pipes.open[0] || pipes.open[1]) && Instant::now() < drain_until {
        pipes.pump(TICK_MS);
    }
    let mut limitations = Vec::new();
    if pipes.open[0] || pipes.open[1] {
        limitations
            .push("an output stream was still open after cleanup; its tail may be missing".into());
    }
    drop((stdout, stderr));
    let status = ended.status;
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else {
        (None, Some(libc::WTERMSIG(status)))
    };
    let reason = match (stop, signal) {
        (Some((r, _)), _) => r,
        (None, Some(_)) => ExitReason::Signaled,
        (None, None) => ExitReason::Exited,
    };
    let crash = match signal {
        Some(sig) if reason == ExitReason::Signaled && CRASH_SIGNALS.contains(&sig) => Some(
            match (
                tracer.as_mut().and_then(|t| t.crash.take()),
                &spawned.traced,
            ) {
                (Some(c), _) if c.signal == sig => c,
                (_, Err(why)) => trace::unseen_crash(sig, why),
                _ => trace::unseen_crash(sig, "ptrace did not see the signal arrive"),
            },
        ),
        _ => None,
    };
    // Mapped file names can hold a secret too (a library named after one).
    let crash = crash.map(|mut c| {
        for mapping in &mut c.module_map {
            mapping.path = secrets.redact_str(&mapping.path);
        }
        c
    });
    // SAFETY: getrusage fills a plain struct.
    let usage = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let after = files::snapshot(&working, scenario.limits.files_listed);
    let [out_sink, err_sink] = pipes.sinks;
    if !secrets.is_empty() {
        limitations.push(
            "secret environment values are replaced by [redacted:NAME] in output and file names; a secret the program transformed (encoded, split) is not recognised".into(),
        );
    }
    limitations.push(
        "only the initial process is traced: a crash in a descendant shows as its exit only".into(),
    );
    limitations.push(
        "limits.processes is RLIMIT_NPROC: it counts every process of the run_as user on the machine, not only this run's".into(),
    );
    tracing::debug!(
        wall_ms,
        processes = seen.len(),
        survivors_killed,
        verified,
        "capture finished"
    );
    Ok(Capture {
        schema_version: SCHEMA_VERSION,
        exit: Exit {
            code,
            signal,
            signal_name: signal.map(trace::signal_name),
            reason,
        },
        crash,
        stdout: out_sink.finish(&secrets),
        stderr: err_sink.finish(&secrets),
        timing: Timing {
            wall_ms,
            user_ms: millis(usage.ru_utime),
            system_ms: millis(usage.ru_stime),
        },
        max_rss_kib: usage.ru_maxrss.max(0) as u64,
        host_peak_rss_kib: procfs::own_peak_rss_kib(),
        processes_seen: seen.len() as u64,
        files: files::diff(&before, &after, &secrets),
        cleanup: Cleanup {
            verified,
            survivors_killed,
        },
        tracing: Tracing {
            attached: spawned.traced.is_ok(),
            reason: spawned.traced.err(),
        },
        network: scenario.network,
        limitations,
    })
}
