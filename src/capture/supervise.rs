//! The capture host as the server sees it: started tied to the server,
//! asked to stop when the call is, and killed together with everything
//! under it when it does not end in time.
//!
//! The host is the subreaper of every process the target starts, so it
//! must not simply be killed: its descendants would pass to init and live
//! on. Asked to stop (SIGTERM), it ends the run and reaps them itself;
//! only a host that has not ended [`STOP_GRACE`] later, or at the outer
//! deadline, is killed, and then its descendants first.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use super::procfs;
use super::wire::{PARENT_ENV, STOP_SIGNALS};

/// How long the host gets, once asked to stop, to end the run, clean up
/// and reply: its termination grace, cleanup rounds, output drain and the
/// second directory snapshot fit well within it.
pub const STOP_GRACE: Duration = Duration::from_secs(15);

/// How often the host is checked on.
const TICK: Duration = Duration::from_millis(10);
/// How often a stop request is repeated until the host ends.
const ASK_AGAIN: Duration = Duration::from_millis(500);

/// Starts the host tied to this process: it knows the server's pid (only
/// that process may ask it to stop), starts with the stop signals blocked
/// (one sent before it can take them waits for it), and is sent SIGTERM
/// when the thread that waits for it ends (the server died), so it cleans
/// up then too. A server already gone before that was set fails the spawn.
pub fn tie_to_server(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    command.env(PARENT_ENV, parent.to_string());
    // SAFETY: the signal set is built before the fork; in the child only
    // async-signal-safe calls (sigprocmask, prctl, getppid) run.
    unsafe {
        let mut stops: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut stops);
        for signal in STOP_SIGNALS {
            libc::sigaddset(&mut stops, signal);
        }
        command.pre_exec(move || {
            if libc::sigprocmask(libc::SIG_BLOCK, &stops, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// How waiting for the host ended.
pub enum Waited {
    /// It exited by itself.
    Exited(ExitStatus),
    /// It exited after being asked to stop.
    Stopped(ExitStatus),
    /// It did not end in time and was killed with its descendants; `true`
    /// when it had been asked to stop.
    Killed { asked_to_stop: bool },
}

/// Waits for `host` until it exits, asking it to stop once `stop` says so,
/// and killing it (descendants first) at `deadline` or [`STOP_GRACE`]
/// after the request.
pub fn wait(
    host: &mut Child,
    deadline: Duration,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Waited> {
    let start = Instant::now();
    let mut asked: Option<Instant> = None;
    let mut last_asked: Option<Instant> = None;
    loop {
        if let Some(status) = host.try_wait()? {
            return Ok(match asked {
                Some(_) => Waited::Stopped(status),
                None => Waited::Exited(status),
            });
        }
        if asked.is_none() && stop() {
            asked = Some(Instant::now());
        }
        // Asked again every so often: a signal already pending is not
        // queued twice, so a request that arrives while another sender's
        // SIGTERM (which the host refuses) is pending would be lost.
        if asked.is_some() && last_asked.is_none_or(|at| at.elapsed() >= ASK_AGAIN) {
            // SAFETY: signalling our own unreaped child by its pid.
            unsafe { libc::kill(host.id() as libc::pid_t, libc::SIGTERM) };
            last_asked = Some(Instant::now());
        }
        let overdue = match asked {
            Some(at) => at.elapsed() >= STOP_GRACE,
            None => start.elapsed() >= deadline,
        };
        if overdue {
            kill_with_descendants(host);
            return Ok(Waited::Killed {
                asked_to_stop: asked.is_some(),
            });
        }
        std::thread::sleep(TICK);
    }
}

/// SIGKILLs everything below `host`, then `host`, and reaps it: killed
/// first, the descendants cannot outlive it by passing to init.
///
/// The host is stopped first (SIGSTOP), so it reaps nothing while this
/// runs, and each process is killed through a pidfd opened while it is
/// still the child of the parent the scan saw: a pid freed and reused
/// between the scan and the kill is never signalled. Scans repeat until
/// none is left alive (one may fork between a scan and its kill), a
/// bounded number of times.
fn kill_with_descendants(host: &mut Child) {
    const ROUNDS: usize = 50;
    let root = host.id() as i32;
    // SAFETY: signalling our own unreaped child by its pid.
    unsafe { libc::kill(root, libc::SIGSTOP) };
    for _ in 0..ROUNDS {
        let alive: Vec<(i32, i32)> = procfs::descendants_of(root)
            .into_iter()
            .filter(|d| d.state != 'Z')
            .map(|d| (d.pid, d.parent))
            .collect();
        if alive.is_empty() {
            break;
        }
        for (pid, parent) in alive {
            kill_if_child_of(pid, parent);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = host.kill();
    let _ = host.wait();
}

/// SIGKILLs `pid` if it is still the child of `parent`.
#[cfg(target_os = "linux")]
fn kill_if_child_of(pid: i32, parent: i32) {
    // SAFETY: pidfd_open and pidfd_send_signal take plain integers and a
    // null siginfo; the descriptor is closed here.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if fd < 0 {
            // A kernel before 5.3 has no pidfds: the parent check and a
            // plain kill are the best it allows.
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS)
                && procfs::parent_of(pid) == Some(parent)
            {
                libc::kill(pid, libc::SIGKILL);
            }
            return;
        }
        if procfs::parent_of(pid) == Some(parent) {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
        libc::close(fd);
    }
}

/// SIGKILLs `pid` if it is still the child of `parent`.
#[cfg(not(target_os = "linux"))]
fn kill_if_child_of(pid: i32, parent: i32) {
    if procfs::parent_of(pid) == Some(parent) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}
