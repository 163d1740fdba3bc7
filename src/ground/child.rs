//! A child process rea drives over a pipe: a request is one line on stdin,
//! an answer is everything on stdout up to the next delimiter byte (NUL for
//! radare2's r2pipe, a newline for the decompile worker).
//!
//! stdout and stderr are drained by reader threads, so a wait is always a
//! channel receive with a deadline: a hung child cannot hang rea. stderr is
//! kept only as a short tail for error messages. Dropping a [`Process`] kills
//! and reaps the child. [`ChildOptions`] can cap the child's address space
//! and tie its life to rea's: such children are started by one long-lived
//! spawner thread, because the kernel's parent-death signal follows the
//! thread that forked, and a pool thread may end while its child lives on.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of stderr kept for diagnostics.
const STDERR_TAIL_BYTES: usize = 4096;
/// Characters of cleaned stderr put into an error message.
const STDERR_MESSAGE_CHARS: usize = 600;
/// stdout chunks buffered ahead of the reader (64 KiB each).
const CHUNK_BYTES: usize = 64 * 1024;
const CHUNKS_IN_FLIGHT: usize = 64;
/// How long an exiting child gets before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How often a wait asks whether it was interrupted.
pub const POLL: Duration = Duration::from_millis(50);

/// Why no answer was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFailure {
    Timeout,
    /// stdout closed: the process exited or closed it.
    Eof,
    TooLarge,
    /// The caller's interruption check said stop.
    Interrupted,
}

/// How a child is framed and confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildOptions {
    /// The byte that ends an answer on stdout.
    pub delimiter: u8,
    /// `RLIMIT_AS` for the child, in bytes; `None` leaves it as inherited.
    pub memory_bytes: Option<u64>,
    /// Kill the child (SIGKILL) when rea exits, however it exits.
    pub die_with_rea: bool,
}

impl ChildOptions {
    /// r2pipe framing, no limits: what a plain helper needs.
    pub const PLAIN: ChildOptions = ChildOptions {
        delimiter: 0,
        memory_bytes: None,
        die_with_rea: false,
    };
}

pub struct Process {
    delimiter: u8,
    child: Child,
    stdin: Option<ChildStdin>,
    chunks: Receiver<Vec<u8>>,
    pending: Vec<u8>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    reaped: bool,
}

/// The descriptor number a child reads its target through.
pub const TARGET_FD: i32 = 3;

impl Process {
    /// Starts `program` with [`ChildOptions::PLAIN`]; see [`Process::spawn_with`].
    pub fn spawn(
        program: &Path,
        args: &[OsString],
        target: Option<&std::fs::File>,
    ) -> io::Result<Process> {
        Process::spawn_with(program, args, target, ChildOptions::PLAIN)
    }

    /// Starts `program`. `target`, when given, becomes the child's
    /// descriptor [`TARGET_FD`], so the child reads the file the server
    /// opened (as `/proc/self/fd/3`) instead of opening a path again.
    pub fn spawn_with(
        program: &Path,
        args: &[OsString],
        target: Option<&std::fs::File>,
        options: ChildOptions,
    ) -> io::Result<Process> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let fd = target.map(std::os::fd::AsRawFd::as_raw_fd);
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (dup2, fcntl, setrlimit,
        // prctl, getppid) on a descriptor that stays open in the parent
        // until spawn returns.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                if let Some(fd) = fd {
                    if fd == TARGET_FD {
                        // dup2 onto itself keeps close-on-exec: clear it.
                        if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                            return Err(io::Error::last_os_error());
                        }
                    } else if libc::dup2(fd, TARGET_FD) == -1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(bytes) = options.memory_bytes {
                    let limit = libc::rlimit {
                        rlim_cur: bytes as libc::rlim_t,
                        rlim_max: bytes as libc::rlim_t,
                    };
                    if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                #[cfg(target_os = "linux")]
                if options.die_with_rea {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // rea died between fork and prctl: nobody would kill us.
                    if libc::getppid() != parent {
                        return Err(io::Error::from_raw_os_error(libc::ESRCH));
                    }
                }
                let _ = parent;
                Ok(())
            });
        }
        let mut child = if options.die_with_rea {
            spawner::spawn(command)?
        } else {
            command.spawn()?
        };
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other("the child's pipes were not created"));
        };
        let (tx, chunks) = sync_channel(CHUNKS_IN_FLIGHT);
        let spawned = std::thread::Builder::new()
            .name("child-stdout".into())
            .spawn(move || pump_stdout(stdout, tx));
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
        let stderr_reader = spawned.and_then(|_| {
            let tail = Arc::clone(&tail);
            std::thread::Builder::new()
                .name("child-stderr".into())
                .spawn(move || keep_tail(stderr, &tail))
        });
        let stderr_reader = match stderr_reader {
            Ok(handle) => handle,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(Process {
            delimiter: options.delimiter,
            child,
            stdin: Some(stdin),
            chunks,
            pending: Vec::new(),
            stderr: tail,
            stderr_reader: Some(stderr_reader),
            reaped: false,
        })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Writes one command line.
    pub fn send(&mut self, line: &str) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// Reads one answer (without its delimiter), waiting at most `timeout`
    /// and accepting at most `limit` bytes.
    pub fn read_answer(&mut self, timeout: Duration, limit: usize) -> Result<Vec<u8>, ReadFailure> {
        self.read_answer_unless(timeout, limit, &|| false)
    }

    /// [`Process::read_answer`], giving up with [`ReadFailure::Interrupted`]
    /// within [`POLL`] of `interrupted` saying so.
    pub fn read_answer_unless(
        &mut self,
        timeout: Duration,
        limit: usize,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Vec<u8>, ReadFailure> {
        let deadline = Instant::now().checked_add(timeout);
        let mut scanned = 0;
        let delimiter = self.delimiter;
        loop {
            if let Some(pos) = self.pending[scanned..].iter().position(|&b| b == delimiter) {
                let end = scanned + pos;
                if end > limit {
                    return Err(ReadFailure::TooLarge);
                }
                let mut answer: Vec<u8> = self.pending.drain(..=end).collect();
                answer.pop();
                return Ok(answer);
            }
            scanned = self.pending.len();
            if scanned > limit {
                return Err(ReadFailure::TooLarge);
            }
            let wait = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::MAX,
            };
            if wait.is_zero() {
                return Err(ReadFailure::Timeout);
            }
            if interrupted() {
                return Err(ReadFailure::Interrupted);
            }
            match self.chunks.recv_timeout(wait.min(POLL)) {
                Ok(chunk) => self.pending.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(ReadFailure::Eof),
            }
        }
    }

    /// After stdout closed: waits briefly for the exit, kills otherwise, and
    /// describes how the process ended plus its last diagnostics.
    pub fn finish(&mut self) -> (String, String) {
        self.stdin = None;
        let deadline = Instant::now() + EXIT_GRACE;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    break match self.child.wait() {
                        Ok(s) => format!("closed its output and was killed: {s}"),
                        Err(e) => format!("closed its output; cannot reap it: {e}"),
                    };
                }
                Err(e) => break format!("cannot read its exit status: {e}"),
            }
        };
        self.reaped = true;
        // The stderr pipe closes with the process; give the reader a moment
        // to take the last lines.
        if let Some(reader) = self.stderr_reader.take() {
            let until = Instant::now() + Duration::from_millis(500);
            while !reader.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let stderr = self.stderr_tail();
        (status, stderr)
    }

    /// The last diagnostics, cleaned of terminal control sequences.
    pub fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = match self.stderr.lock() {
            Ok(tail) => tail.iter().copied().collect(),
            Err(poisoned) => poisoned.into_inner().iter().copied().collect(),
        };
        clean_diagnostics(&bytes)
    }

    /// Kills and reaps the child now (what dropping it does).
    pub fn kill(mut self) {
        self.kill_and_reap();
    }

    fn kill_and_reap(&mut self) {
        if !self.reaped {
            self.stdin = None;
            let _ = self.child.kill();
            let _ = self.child.wait();
            self.reaped = true;
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill_and_reap();
    }
}

fn pump_stdout(mut stdout: impl Read, tx: SyncSender<Vec<u8>>) {
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        match stdout.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn keep_tail(mut stderr: impl Read, tail: &Mutex<VecDeque<u8>>) {
    let mut buf = [0u8; 4096];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let mut tail = match tail.lock() {
                    Ok(t) => t,
                    Err(poisoned) => poisoned.into_inner(),
                };
                tail.extend(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                tail.drain(..excess);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// stderr as one line for a message: ANSI escape sequences and other
/// controls removed, lines joined with ` | `, the last characters kept.
pub fn clean_diagnostics(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ parameters final-byte; other escapes: one char.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\n' | '\r' => {
                let trimmed = line.trim();
                if !trimmed.is_empty() {
                    lines.push(trimmed.to_string());
                }
                line.clear();
            }
            c if c.is_control() => {}
            c => line.push(c),
        }
    }
    let trimmed = line.trim();
    if !trimmed.is_empty() {
        lines.push(trimmed.to_string());
    }
    let joined = lines.join(" | ");
    let count = joined.chars().count();
    if count <= STDERR_MESSAGE_CHARS {
        joined
    } else {
        let skip = count - STDERR_MESSAGE_CHARS;
        format!("…{}", joined.chars().skip(skip).collect::<String>())
    }
}

/// The one thread that forks children tied to rea's life (see the module
/// doc): it lives as long as the process, so their parent-death signal only
/// fires when rea itself ends.
mod spawner {
    use std::io;
    use std::process::{Child, Command};
    use std::sync::mpsc::{Sender, channel};
    use std::sync::{Mutex, OnceLock};

    type Order = (Command, Sender<io::Result<Child>>);

    fn orders() -> io::Result<&'static Mutex<Sender<Order>>> {
        static ORDERS: OnceLock<Option<Mutex<Sender<Order>>>> = OnceLock::new();
        ORDERS
            .get_or_init(|| {
                let (tx, rx) = channel::<Order>();
                std::thread::Builder::new()
                    .name("child-spawner".into())
                    .spawn(move || {
                        for (mut command, reply) in rx {
                            let _ = reply.send(command.spawn());
                        }
                    })
                    .ok()
                    .map(|_| Mutex::new(tx))
            })
            .as_ref()
            .ok_or_else(|| io::Error::other("cannot start the child-spawner thread"))
    }

    pub fn spawn(command: Command) -> io::Result<Child> {
        let (reply, answer) = channel();
        orders()?
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .send((command, reply))
            .map_err(|_| io::Error::other("the child-spawner thread ended"))?;
        answer
            .recv()
            .map_err(|_| io::Error::other("the child-spawner thread ended"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_lose_escapes_and_keep_the_end() {
        let raw = b"\x1b[31mERROR: \x1b[0mInvalid config key\n[ ] Analyze\r\x1b[2K[x] Analyze\n";
        assert_eq!(
            clean_diagnostics(raw),
            "ERROR: Invalid config key | [ ] Analyze | [x] Analyze"
        );
        let long = "x".repeat(5000);
        let cleaned = clean_diagnostics(long.as_bytes());
        assert!(cleaned.starts_with('…'));
        assert_eq!(cleaned.chars().count(), STDERR_MESSAGE_CHARS + 1);
        assert_eq!(clean_diagnostics(b"\xff\x00ok"), "\u{fffd}ok");
    }

    #[cfg(unix)]
    fn sh(script: &str) -> Process {
        Process::spawn(
            Path::new("/bin/sh"),
            &[OsString::from("-c"), OsString::from(script)],
            None,
        )
        .unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn answers_are_split_at_nul_bytes() {
        let mut p = sh("printf 'first\\0second\\0'; cat >/dev/null");
        let t = Duration::from_secs(10);
        assert_eq!(p.read_answer(t, 100).unwrap(), b"first");
        assert_eq!(p.read_answer(t, 100).unwrap(), b"second");
        assert_eq!(
            p.read_answer(Duration::from_millis(50), 100),
            Err(ReadFailure::Timeout)
        );
    }

    #[cfg(unix)]
    #[test]
    fn too_large_and_eof_are_reported() {
        let mut p = sh("head -c 5000 /dev/zero | tr '\\0' x; printf '\\0'; echo gone >&2");
        assert_eq!(
            p.read_answer(Duration::from_secs(10), 1000),
            Err(ReadFailure::TooLarge)
        );
        let mut p = sh("echo 'cannot open' >&2; exit 3");
        assert_eq!(
            p.read_answer(Duration::from_secs(10), 1000),
            Err(ReadFailure::Eof)
        );
        let (status, stderr) = p.finish();
        assert!(status.contains('3'), "{status}");
        assert_eq!(stderr, "cannot open");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lines_frame_answers_and_limits_apply() {
        let options = ChildOptions {
            delimiter: b'\n',
            memory_bytes: Some(64 << 20),
            die_with_rea: true,
        };
        let script = "printf 'one\\ntwo\\n'; ulimit -v; exec sleep 30";
        let mut p = Process::spawn_with(
            Path::new("/bin/sh"),
            &[OsString::from("-c"), OsString::from(script)],
            None,
            options,
        )
        .unwrap();
        let t = Duration::from_secs(10);
        assert_eq!(p.read_answer(t, 100).unwrap(), b"one");
        assert_eq!(p.read_answer(t, 100).unwrap(), b"two");
        // `ulimit -v` prints the cap in KiB.
        assert_eq!(p.read_answer(t, 100).unwrap(), b"65536");
        let status = std::fs::read_to_string(format!("/proc/{}/status", p.id())).unwrap();
        assert!(status.contains("State:"), "{status}");
        let asked = Instant::now();
        assert_eq!(
            p.read_answer_unless(t, 100, &|| asked.elapsed() > Duration::from_millis(100)),
            Err(ReadFailure::Interrupted)
        );
        assert!(asked.elapsed() < Duration::from_secs(5));
        p.kill();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn drop_kills_and_reaps_a_hung_child() {
        let p = sh("exec sleep 30");
        let pid = p.id();
        assert!(Path::new(&format!("/proc/{pid}")).exists());
        let started = Instant::now();
        drop(p);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }
}
