//! The capture contract: what a caller asks for ([`Scenario`]) and what
//! comes back ([`Capture`]). Inputs are strict (`deny_unknown_fields`, hard
//! maxima) because they arrive from MCP clients; the output carries
//! [`Capture::validate`] because the completion family `capture` and the
//! comparison tools trust only captures whose invariants hold.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::CaptureError;

/// The only schema version this build writes and accepts.
pub const SCHEMA_VERSION: u32 = 1;
/// At most this many arguments.
pub const MAX_ARGUMENTS: usize = 256;
/// At most this many environment entries.
pub const MAX_ENVIRONMENT: usize = 256;
/// Longest argument or environment value, in bytes.
pub const MAX_VALUE_BYTES: usize = 32 * 1024;
/// Longest environment name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest stdin, in bytes.
pub const MAX_STDIN_BYTES: usize = 1024 * 1024;
/// Longest path (executable, working directory), in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// The wall-clock timeout ceiling.
pub const MAX_TIMEOUT_MS: u64 = 300_000;
/// The value that replaces a secret environment value in anything recorded.
pub const REDACTED: &str = "[redacted]";

/// One experiment: run `executable` once, under limits, and observe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Absolute path of the program to run.
    pub executable: PathBuf,
    /// Absolute path of the directory it runs in; its files are listed
    /// before and after the run.
    pub working_directory: PathBuf,
    /// `argv[1..]`; `argv[0]` is the executable path.
    #[serde(default)]
    pub arguments: Vec<String>,
    /// The whole environment of the process: nothing is inherited.
    #[serde(default)]
    pub environment: Vec<EnvVar>,
    /// Bytes fed to stdin, as UTF-8 text (JSON strings cannot carry
    /// arbitrary bytes, and every scenario so far feeds text); `None`
    /// connects stdin to `/dev/null`.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Wall-clock limit for the whole run.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// The run ends when neither stream produced output for this long.
    #[serde(default = "default_idle_timeout_ms")]
    pub idle_timeout_ms: u64,
    #[serde(default)]
    pub limits: CaptureLimits,
    /// The unprivileged account the process runs as when the host runs as
    /// root; `nobody` (65534/65534) when absent.
    #[serde(default)]
    pub run_as: Option<RunAs>,
    /// What network the run may reach: only its own loopback unless the
    /// operator allowed the host's.
    #[serde(default)]
    pub network: Network,
}

/// The network a capture runs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// A new network namespace with only a loopback interface.
    #[default]
    Isolated,
    /// The host's network, by explicit operator setting.
    Host,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Isolated => "isolated",
            Network::Host => "host",
        }
    }

    /// What records made before the field existed ran in.
    fn before_isolation() -> Network {
        Network::Host
    }
}

fn default_timeout_ms() -> u64 {
    30_000
}

fn default_idle_timeout_ms() -> u64 {
    30_000
}

/// One environment entry. A `secret` value is never recorded: it is
/// `[redacted]` wherever the scenario is echoed, and its occurrences in
/// captured output and file names become `[redacted:NAME]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub secret: bool,
}

/// Bounds on what the process may do and on what is kept of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CaptureLimits {
    /// Bytes kept per stream (stdout, stderr); the rest is counted and dropped.
    pub output_bytes: u64,
    /// `RLIMIT_NPROC` of the process (counts every process of its user).
    pub processes: u64,
    /// `RLIMIT_FSIZE`: the largest file it may write.
    pub file_size_bytes: u64,
    /// `RLIMIT_CPU`, in seconds.
    pub cpu_seconds: u64,
    /// Entries listed in each working-directory snapshot.
    pub files_listed: u64,
}

impl Default for CaptureLimits {
    fn default() -> Self {
        Self {
            output_bytes: 1_000_000,
            processes: 256,
            file_size_bytes: 10_000_000,
            cpu_seconds: 30,
            files_listed: 10_000,
        }
    }
}

/// Hard maxima: a request above one is refused, not clamped, so a caller
/// never believes it got more than it did.
pub const MAX_LIMITS: CaptureLimits = CaptureLimits {
    output_bytes: 16 * 1024 * 1024,
    processes: 4096,
    file_size_bytes: 1024 * 1024 * 1024,
    cpu_seconds: 300,
    files_listed: 100_000,
};

/// The numeric user and group the process runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
}

/// `nobody:nogroup`.
pub const NOBODY: RunAs = RunAs {
    uid: 65534,
    gid: 65534,
};

fn invalid(field: &str, reason: impl Into<String>) -> CaptureError {
    CaptureError::InvalidScenario {
        field: field.to_string(),
        reason: reason.into(),
    }
}

fn check_path(field: &str, path: &std::path::Path) -> Result<(), CaptureError> {
    let text = path.as_os_str().as_encoded_bytes();
    if !path.is_absolute() {
        return Err(invalid(
            field,
            format!("`{}` is relative; give an absolute path", path.display()),
        ));
    }
    if text.len() > MAX_PATH_BYTES || text.contains(&0) {
        return Err(invalid(
            field,
            format!("must be at most {MAX_PATH_BYTES} bytes without NUL"),
        ));
    }
    Ok(())
}

fn check_value(field: &str, value: &str) -> Result<(), CaptureError> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(invalid(
            field,
            format!("is {} bytes; at most {MAX_VALUE_BYTES}", value.len()),
        ));
    }
    if value.contains('\0') {
        return Err(invalid(field, "contains NUL, which no process can receive"));
    }
    Ok(())
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Scenario {
    /// Checks every field against its format and maximum; the error names
    /// the field and says what to change.
    pub fn validate(&self) -> Result<(), CaptureError> {
        check_path("executable", &self.executable)?;
        check_path("working_directory", &self.working_directory)?;
        if self.arguments.len() > MAX_ARGUMENTS {
            return Err(invalid(
                "arguments",
                format!("{} given; at most {MAX_ARGUMENTS}", self.arguments.len()),
            ));
        }
        for (i, a) in self.arguments.iter().enumerate() {
            check_value(&format!("arguments[{i}]"), a)?;
        }
        if self.environment.len() > MAX_ENVIRONMENT {
            return Err(invalid(
                "environment",
                format!(
                    "{} given; at most {MAX_ENVIRONMENT}",
                    self.environment.len()
                ),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, e) in self.environment.iter().enumerate() {
            if e.name.len() > MAX_NAME_BYTES || !is_env_name(&e.name) {
                return Err(invalid(
                    &format!("environment[{i}].name"),
                    "must match ^[A-Za-z_][A-Za-z0-9_]*$ (at most 256 bytes)",
                ));
            }
            if !seen.insert(e.name.as_str()) {
                return Err(invalid(
                    &format!("environment[{i}].name"),
                    format!("`{}` is listed twice; list each name once", e.name),
                ));
            }
            // The message names the entry, never its value.
            check_value(&format!("environment[{i}].value"), &e.value)?;
        }
        if let Some(stdin) = &self.stdin
            && stdin.len() > MAX_STDIN_BYTES
        {
            return Err(invalid(
                "stdin",
                format!("is {} bytes; at most {MAX_STDIN_BYTES}", stdin.len()),
            ));
        }
        for (field, v) in [
            ("timeout_ms", self.timeout_ms),
            ("idle_timeout_ms", self.idle_timeout_ms),
        ] {
            if v == 0 || v > MAX_TIMEOUT_MS {
                return Err(invalid(field, format!("must be 1..={MAX_TIMEOUT_MS}")));
            }
        }
        let l = &self.limits;
        for (field, v, max) in [
            (
                "limits.output_bytes",
                l.output_bytes,
                MAX_LIMITS.output_bytes,
            ),
            ("limits.processes", l.processes, MAX_LIMITS.processes),
            (
                "limits.file_size_bytes",
                l.file_size_bytes,
                MAX_LIMITS.file_size_bytes,
            ),
            ("limits.cpu_seconds", l.cpu_seconds, MAX_LIMITS.cpu_seconds),
            (
                "limits.files_listed",
                l.files_listed,
                MAX_LIMITS.files_listed,
            ),
        ] {
            if v == 0 || v > max {
                return Err(invalid(field, format!("must be 1..={max}")));
            }
        }
        if let Some(r) = self.run_as
            && (r.uid == 0 || r.gid == 0)
        {
            return Err(invalid(
                "run_as",
                "uid and gid must not be 0: the process never runs as root",
            ));
        }
        Ok(())
    }

    /// The scenario as it may be recorded: every secret value replaced by
    /// `[redacted]`, and its occurrences in arguments, other values and
    /// stdin by `[redacted:NAME]`.
    pub fn redacted(&self) -> Scenario {
        let secrets = super::redact::Secrets::of(self);
        let mut s = self.clone();
        for a in &mut s.arguments {
            *a = secrets.redact_str(a);
        }
        s.stdin = s.stdin.map(|t| secrets.redact_str(&t));
        for e in &mut s.environment {
            if !e.secret {
                e.value = secrets.redact_str(&e.value);
            }
        }
        for e in &mut s.environment {
            if e.secret {
                e.value = REDACTED.to_string();
            }
        }
        s
    }
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitReason {
    /// The process called exit.
    Exited,
    /// A signal it did not survive, from itself or another process.
    Signaled,
    /// The wall-clock timeout: rea terminated it.
    Timeout,
    /// No output for `idle_timeout_ms`: rea terminated it.
    IdleTimeout,
    /// rea was asked to stop the run (the call was cancelled or ran past
    /// the operator's deadline, or the server is stopping) and terminated
    /// it.
    Stopped,
}

/// How the initial process ended: exactly one of `code` and `signal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub signal_name: Option<String>,
    pub reason: ExitReason,
}

/// One file-backed mapping of the crashed process (`/proc/PID/maps`):
/// with it, a PC becomes `offset + (pc - start)` in `path`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    pub path: String,
    pub start: String,
    pub end: String,
    pub offset: String,
    pub perms: String,
}

/// What is known of a crash: the signal always; the fault address and PC
/// only when ptrace saw the signal arrive (`unknown_reason` says why not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    pub signal: i32,
    pub signal_name: String,
    pub fault_address: Option<String>,
    pub program_counter: Option<String>,
    pub module_map: Vec<Mapping>,
    pub module_map_truncated: bool,
    pub unknown_reason: Option<String>,
}

/// One captured stream: the kept prefix as UTF-8-lossy text (secrets
/// redacted), the sha256 of the kept bytes after redaction, and how many
/// bytes the process wrote in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    pub text: String,
    pub sha256: String,
    pub stored_bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub wall_ms: u64,
    /// CPU time of every descendant rea reaped (`RUSAGE_CHILDREN`).
    pub user_ms: u64,
    pub system_ms: u64,
}

/// One entry of a working-directory snapshot, relative to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub path: String,
    /// `file`, `directory`, `symlink` or `other`.
    pub kind: String,
    pub size: u64,
    /// sha256 of the first `hashed_bytes` bytes (regular files only).
    pub sha256: Option<String>,
    pub hashed_bytes: u64,
}

/// What changed under the working directory between the two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FileChanges {
    pub created: Vec<FileEntry>,
    /// The entry after the run.
    pub changed: Vec<FileEntry>,
    pub deleted: Vec<FileEntry>,
    /// A snapshot hit `files_listed` or the depth limit: changes beyond it
    /// are unknown.
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cleanup {
    /// A final `/proc` scan found no process left whose parent is the host.
    pub verified: bool,
    /// Processes still alive after the initial process ended (or was
    /// terminated) that rea killed.
    pub survivors_killed: u64,
}

/// Whether ptrace watched the initial process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tracing {
    pub attached: bool,
    /// Why not, when not attached.
    pub reason: Option<String>,
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    pub schema_version: u32,
    pub exit: Exit,
    pub crash: Option<Crash>,
    pub stdout: Stream,
    pub stderr: Stream,
    pub timing: Timing,
    /// Largest resident set of any reaped descendant (`RUSAGE_CHILDREN`).
    pub max_rss_kib: u64,
    /// The capture host's own peak RSS (`VmHWM`): shows that a flood did
    /// not grow memory.
    pub host_peak_rss_kib: Option<u64>,
    /// Distinct processes the host reaped, the initial one included.
    pub processes_seen: u64,
    pub files: FileChanges,
    pub cleanup: Cleanup,
    pub tracing: Tracing,
    /// The network the run could reach.
    #[serde(default = "Network::before_isolation")]
    pub network: Network,
    pub limitations: Vec<String>,
}

/// Signals that count as a crash.
pub const CRASH_SIGNALS: [i32; 6] = [4, 5, 6, 7, 8, 11];

fn broken(reason: impl Into<String>) -> CaptureError {
    CaptureError::InvalidCapture(reason.into())
}

fn is_hex(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.len() <= 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Stream {
    fn validate(&self, name: &str) -> Result<(), CaptureError> {
        if self.stored_bytes > self.total_bytes {
            return Err(broken(format!("{name}: more bytes stored than written")));
        }
        if self.truncated != (self.total_bytes > self.stored_bytes) {
            return Err(broken(format!(
                "{name}: truncated must hold exactly when bytes were dropped"
            )));
        }
        if !is_sha256(&self.sha256) {
            return Err(broken(format!("{name}: sha256 is not lowercase hex")));
        }
        Ok(())
    }
}

impl Capture {
    /// The semantic invariants every capture this build produces holds;
    /// anything else was tampered with or comes from another version.
    pub fn validate(&self) -> Result<(), CaptureError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(broken(format!(
                "schema_version {} is not {SCHEMA_VERSION}; capture again",
                self.schema_version
            )));
        }
        let e = &self.exit;
        match (e.code, e.signal) {
            (Some(_), None) | (None, Some(_)) => {}
            _ => return Err(broken("exit: exactly one of code and signal must be set")),
        }
        if e.signal.is_some() != e.signal_name.is_some() {
            return Err(broken("exit: signal_name goes with signal"));
        }
        match e.reason {
            ExitReason::Exited if e.code.is_none() => {
                return Err(broken("exit: reason exited needs a code"));
            }
            ExitReason::Signaled if e.signal.is_none() => {
                return Err(broken("exit: reason signaled needs a signal"));
            }
            _ => {}
        }
        let crash_signal = e.reason == ExitReason::Signaled
            && e.signal.is_some_and(|s| CRASH_SIGNALS.contains(&s));
        match &self.crash {
            None if crash_signal => {
                return Err(broken("crash: a fatal crash signal must come with a crash"));
            }
            Some(_) if !crash_signal => {
                return Err(broken("crash: only a death by a crash signal is a crash"));
            }
            Some(c) => {
                if Some(c.signal) != e.signal {
                    return Err(broken("crash: signal differs from the exit signal"));
                }
                for v in [&c.fault_address, &c.program_counter].into_iter().flatten() {
                    if !is_hex(v) {
                        return Err(broken("crash: addresses are 0x-prefixed hex"));
                    }
                }
                if c.program_counter.is_none() && c.unknown_reason.is_none() {
                    return Err(broken("crash: an unknown program counter needs a reason"));
                }
                for m in &c.module_map {
                    if ![&m.start, &m.end, &m.offset].iter().all(|v| is_hex(v)) {
                        return Err(broken("crash: module_map values are 0x-prefixed hex"));
                    }
                }
            }
            None => {}
        }
        self.stdout.validate("stdout")?;
        self.stderr.validate("stderr")?;
        if self.processes_seen == 0 {
            return Err(broken("processes_seen counts the initial process"));
        }
        if self.tracing.attached == self.tracing.reason.is_some() {
            return Err(broken("tracing: a reason goes with attached = false only"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scenario(extra: serde_json::Value) -> Result<Scenario, serde_json::Error> {
        let mut base = json!({"executable": "/bin/true", "working_directory": "/tmp"});
        if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        serde_json::from_value(base)
    }

    fn field_of(r: Result<(), CaptureError>) -> String {
        match r {
            Err(CaptureError::InvalidScenario { field, .. }) => field,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_valid() {
        let s = scenario(json!({})).expect("scenario");
        s.validate().expect("valid");
        assert_eq!(s.limits, CaptureLimits::default());
        assert_eq!(s.timeout_ms, 30_000);
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(scenario(json!({"inherit_environment": true})).is_err());
        assert!(scenario(json!({"limits": {"frames": 1}})).is_err());
    }

    #[test]
    fn each_bound_names_its_field() {
        let cases = [
            (json!({"executable": "rel/x"}), "executable"),
            (json!({"working_directory": "."}), "working_directory"),
            (json!({"arguments": vec!["a"; 257]}), "arguments"),
            (
                json!({"arguments": ["ok", "x".repeat(MAX_VALUE_BYTES + 1)]}),
                "arguments[1]",
            ),
            (
                json!({"environment": [{"name": "1BAD", "value": "v"}]}),
                "environment[0].name",
            ),
            (
                json!({"environment": [{"name": "A-B", "value": "v"}]}),
                "environment[0].name",
            ),
            (
                json!({"environment": [{"name": "A", "value": "v"}, {"name": "A", "value": "w"}]}),
                "environment[1].name",
            ),
            (
                json!({"environment": [{"name": "A", "value": "a\u{0}b"}]}),
                "environment[0].value",
            ),
            (json!({"stdin": "x".repeat(MAX_STDIN_BYTES + 1)}), "stdin"),
            (json!({"timeout_ms": 0}), "timeout_ms"),
            (
                json!({"idle_timeout_ms": MAX_TIMEOUT_MS + 1}),
                "idle_timeout_ms",
            ),
            (
                json!({"limits": {"output_bytes": MAX_LIMITS.output_bytes + 1}}),
                "limits.output_bytes",
            ),
            (json!({"limits": {"processes": 0}}), "limits.processes"),
            (json!({"run_as": {"uid": 0, "gid": 5}}), "run_as"),
        ];
        for (input, field) in cases {
            let s = scenario(input.clone()).expect("parses");
            assert_eq!(field_of(s.validate()), field, "{input}");
        }
    }

    #[test]
    fn secret_values_stay_out_of_errors() {
        let s = scenario(json!({"environment": [
            {"name": "K", "value": format!("hunter2{}", "x".repeat(MAX_VALUE_BYTES)), "secret": true}
        ]}))
        .expect("parses");
        let message = s.validate().expect_err("too long").to_string();
        assert!(!message.contains("hunter2"), "{message}");
    }

    use crate::capture::fixtures::stream;

    fn exited() -> Capture {
        crate::capture::fixtures::exited(0, "hi")
    }

    fn crashed() -> Capture {
        crate::capture::fixtures::crashed(Some(0x401000), Some(0), Vec::new())
    }

    #[test]
    fn consistent_captures_validate() {
        exited().validate().expect("exit");
        crashed().validate().expect("crash");
        let mut t = exited();
        t.stdout = stream("hi", 10);
        t.validate().expect("truncated");
        let mut k = exited();
        k.exit = Exit {
            code: None,
            signal: Some(9),
            signal_name: Some("SIGKILL".into()),
            reason: ExitReason::Timeout,
        };
        k.validate().expect("killed at timeout");
    }

    type Mutation = Box<dyn Fn(&mut Capture)>;

    #[test]
    fn broken_invariants_are_refused() {
        let mut mutations: Vec<Mutation> = vec![
            Box::new(|c| c.schema_version = 2),
            Box::new(|c| c.exit.signal = Some(9)),
            Box::new(|c| c.exit.code = None),
            Box::new(|c| c.exit.reason = ExitReason::Signaled),
            Box::new(|c| c.stdout.truncated = true),
            Box::new(|c| c.stdout.total_bytes = 1),
            Box::new(|c| c.stdout.sha256 = "XY".into()),
            Box::new(|c| c.processes_seen = 0),
            Box::new(|c| c.tracing.reason = Some("why".into())),
            Box::new(|c| c.crash = crashed().crash),
        ];
        for (i, m) in mutations.iter_mut().enumerate() {
            let mut c = exited();
            m(&mut c);
            assert!(c.validate().is_err(), "mutation {i} passed");
        }
        let crash_mutations: Vec<Mutation> = vec![
            Box::new(|c| c.crash = None),
            Box::new(|c| c.crash.as_mut().expect("crash").signal = 6),
            Box::new(|c| c.crash.as_mut().expect("crash").program_counter = Some("401000".into())),
            Box::new(|c| c.crash.as_mut().expect("crash").program_counter = None),
            Box::new(|c| {
                c.exit.signal = Some(15);
                c.exit.signal_name = Some("SIGTERM".into());
            }),
        ];
        for (i, m) in crash_mutations.iter().enumerate() {
            let mut c = crashed();
            m(&mut c);
            assert!(c.validate().is_err(), "crash mutation {i} passed");
        }
    }
}
