//! Stopping a run from outside. The server asks the host to stop with
//! SIGTERM when the call is cancelled, runs past the operator's deadline,
//! or the server itself is stopping; the host is also sent SIGTERM when
//! the server dies (its parent-death signal), and a terminal's Ctrl-C
//! (SIGINT) or hang-up (SIGHUP) reaches it with the server's process group.
//!
//! None of these may kill the host outright: it is the subreaper of every
//! process the target started, so dying would leave them to init. Each
//! only raises a flag; the run loop sees it within one tick, terminates the
//! target's group as at a timeout, cleans up, verifies, and replies.
//!
//! Only the server (the pid in [`PARENT_ENV`]) and the kernel may ask: the
//! program under capture runs as the same user when the server is not
//! root, and its own `kill(getppid(), SIGTERM)` must not end its run as
//! though rea had stopped it. The server starts the host with these
//! signals blocked, so one sent before [`install`] waits for it.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::capture::wire::{PARENT_ENV, STOP_SIGNALS};

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The server's pid; 0 when the host was started by hand (then any sender
/// may ask).
static SERVER: AtomicI32 = AtomicI32::new(0);

extern "C" fn request(_signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only loads, a field read and an atomic store: async-signal-safe.
    // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo.
    let (code, sender) = unsafe { ((*info).si_code, (*info).si_pid()) };
    let server = SERVER.load(Ordering::SeqCst);
    // SI_USER cannot be forged by another process (sigqueue may only send
    // negative codes), so its pid is the sender's.
    let from_server = code == libc::SI_USER && sender == server;
    if server == 0 || from_server || code == libc::SI_KERNEL {
        REQUESTED.store(true, Ordering::SeqCst);
    }
}

/// Takes the stop signals from here on. A server that has already died
/// (the host was re-parented before it could take its death signal)
/// counts as a stop request.
pub fn install() -> std::io::Result<()> {
    let server = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|&pid| pid > 0)
        .unwrap_or(0);
    SERVER.store(server, Ordering::SeqCst);
    // SAFETY: plain structs filled in place; the handler is the
    // async-signal-safe `request`. Unblocking delivers any stop signal that
    // arrived while the host was starting.
    unsafe {
        let mut stops: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut stops);
        for signal in STOP_SIGNALS {
            libc::sigaddset(&mut stops, signal);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = request
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if libc::sigprocmask(libc::SIG_UNBLOCK, &stops, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if server != 0 && libc::getppid() != server {
            REQUESTED.store(true, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
