//! ptrace of the initial process only (no `PTRACE_O_TRACEFORK`): enough
//! to see a crash signal arrive, read where it happened, and let it kill
//! the process as it would have without us.

use std::io::Read;

use crate::capture::procfs;
use crate::capture::types::{CRASH_SIGNALS, Crash};

/// Bytes of `/proc/PID/maps` read for one crash.
const MAX_MAPS_BYTES: u64 = 4 * 1024 * 1024;

/// The name of a signal number (`SIGSEGV`), or `SIG<n>`.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("SIG{sig}"),
    };
    name.to_string()
}

/// The tracer's state for the initial process.
pub struct Tracer {
    pid: i32,
    /// Still waiting for the `SIGTRAP` stop that follows the traced exec.
    awaiting_exec: bool,
    /// The last crash signal seen arriving; reported only if the process
    /// then dies of that signal (a handler may survive it).
    pub crash: Option<Crash>,
}

fn ptrace_call(
    request: libc::c_uint,
    pid: i32,
    addr: *mut libc::c_void,
    data: *mut libc::c_void,
) -> libc::c_long {
    // SAFETY: requests below pass pointers to live, correctly sized
    // buffers or null.
    unsafe { libc::ptrace(request, pid, addr, data) }
}

fn resume(pid: i32, sig: i32) {
    ptrace_call(
        libc::PTRACE_CONT,
        pid,
        std::ptr::null_mut(),
        sig as usize as *mut libc::c_void,
    );
}

fn program_counter(pid: i32) -> Result<u64, String> {
    // SAFETY: user_regs_struct is plain data; zero is a valid value.
    let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec {
        iov_base: (&raw mut regs).cast(),
        iov_len: std::mem::size_of::<libc::user_regs_struct>(),
    };
    // NT_PRSTATUS travels in the address argument.
    let nt_prstatus = std::ptr::without_provenance_mut::<libc::c_void>(1);
    if ptrace_call(
        libc::PTRACE_GETREGSET,
        pid,
        nt_prstatus,
        (&raw mut iov).cast(),
    ) != 0
    {
        return Err(format!(
            "PTRACE_GETREGSET failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    #[cfg(target_arch = "x86_64")]
    return Ok(regs.rip);
    #[cfg(target_arch = "aarch64")]
    return Ok(regs.pc);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    Err("reading the program counter is implemented for x86_64 and aarch64 only".into())
}

/// The fault address of a kernel-generated fault (`si_code > 0`) for the
/// signals that carry one; `None` otherwise (SIGABRT, SIGTRAP, `kill`).
fn fault_address(pid: i32, sig: i32) -> Result<Option<u64>, String> {
    // SAFETY: siginfo_t is plain data; zero is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    if ptrace_call(
        libc::PTRACE_GETSIGINFO,
        pid,
        std::ptr::null_mut(),
        (&raw mut info).cast(),
    ) != 0
    {
        return Err(format!(
            "PTRACE_GETSIGINFO failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    let carries = matches!(
        sig,
        libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
    );
    if carries && info.si_code > 0 {
        // SAFETY: for these signals with si_code > 0 the union holds si_addr.
        Ok(Some(unsafe { info.si_addr() } as usize as u64))
    } else {
        Ok(None)
    }
}

fn module_map(pid: i32) -> (Vec<crate::capture::types::Mapping>, bool, Option<String>) {
    let mut text = String::new();
    match std::fs::File::open(format!("/proc/{pid}/maps")) {
        Ok(f) => {
            if let Err(e) = f.take(MAX_MAPS_BYTES).read_to_string(&mut text) {
                return (Vec::new(), false, Some(format!("reading maps failed: {e}")));
            }
        }
        Err(e) => return (Vec::new(), false, Some(format!("opening maps failed: {e}"))),
    }
    let (maps, truncated) = procfs::parse_maps(&text);
    (maps, truncated || text.len() as u64 >= MAX_MAPS_BYTES, None)
}

impl Tracer {
    pub fn new(pid: i32) -> Self {
        Self {
            pid,
            awaiting_exec: true,
            crash: None,
        }
    }

    /// Handles one ptrace stop of the initial process (`status` from
    /// `waitpid`) and resumes it.
    pub fn on_stop(&mut self, status: i32) {
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if self.awaiting_exec && sig == libc::SIGTRAP {
            self.awaiting_exec = false;
            // Exec stops become events, so a plain SIGTRAP later is a
            // real trap; the process dies if the host does.
            let options = libc::PTRACE_O_EXITKILL | libc::PTRACE_O_TRACEEXEC;
            ptrace_call(
                libc::PTRACE_SETOPTIONS,
                self.pid,
                std::ptr::null_mut(),
                options as usize as *mut libc::c_void,
            );
            resume(self.pid, 0);
            return;
        }
        if event != 0 {
            resume(self.pid, 0);
            return;
        }
        if CRASH_SIGNALS.contains(&sig) {
            self.crash = Some(self.read_crash(sig));
            resume(self.pid, sig);
            return;
        }
        if matches!(
            sig,
            libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
        ) {
            // A group-stop has no siginfo: resuming it with 0 lets the
            // process run on (a limitation of PTRACE_TRACEME tracing).
            let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
            let group_stop = ptrace_call(
                libc::PTRACE_GETSIGINFO,
                self.pid,
                std::ptr::null_mut(),
                info.as_mut_ptr().cast(),
            ) != 0;
            resume(self.pid, if group_stop { 0 } else { sig });
            return;
        }
        resume(self.pid, sig);
    }

    fn read_crash(&self, sig: i32) -> Crash {
        let mut reasons = Vec::new();
        let fault = fault_address(self.pid, sig).unwrap_or_else(|e| {
            reasons.push(e);
            None
        });
        let pc = program_counter(self.pid).map_err(|e| reasons.push(e)).ok();
        let (module_map, module_map_truncated, maps_error) = module_map(self.pid);
        reasons.extend(maps_error);
        Crash {
            signal: sig,
            signal_name: signal_name(sig),
            fault_address: fault.map(|a| format!("{a:#x}")),
            program_counter: pc.map(|a| format!("{a:#x}")),
            module_map,
            module_map_truncated,
            unknown_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        }
    }
}

/// The crash record for a process that died of `sig` without ptrace
/// having seen it.
pub fn unseen_crash(sig: i32, reason: &str) -> Crash {
    Crash {
        signal: sig,
        signal_name: signal_name(sig),
        fault_address: None,
        program_counter: None,
        module_map: Vec::new(),
        module_map_truncated: false,
        unknown_reason: Some(reason.to_string()),
    }
}
