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

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn request(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Makes SIGTERM, SIGINT and SIGHUP ask for a stop. The target does not
/// inherit this: `execve` resets caught signals to their defaults.
pub fn install() -> std::io::Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only stores an
        // atomic; no SA_RESTART, so a blocking poll returns at once.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = request as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if installed != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
