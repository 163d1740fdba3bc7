//! The host protocol: the scenario goes to `rea capture-host` as JSON on
//! stdin; one [`HostReply`] comes back as JSON on stdout.

use serde::{Deserialize, Serialize};

use super::error::CaptureError;
use super::types::{Capture, MAX_LIMITS, MAX_STDIN_BYTES, Scenario};

/// The host's descriptor for the target's executable: the server opens it
/// beneath its roots and the host runs the program from it (`execveat`).
pub const EXECUTABLE_FD: i32 = 3;
/// The host's descriptor for the target's working directory (`fchdir`).
pub const WORKING_FD: i32 = 4;
/// The host's descriptor for the interpreter of a script (see
/// [`super::interpreter`]): the program the host runs, with the script as
/// `/dev/fd/3`.
pub const INTERPRETER_FD: i32 = 5;
/// The host's option (repeated, one value each, in order) giving what
/// precedes the script's name in the interpreter's argument vector
/// ([`super::Interpreter::argv`]); present only for a script.
pub const INTERPRETER_ARGV_OPTION: &str = "interpreter-argv";

/// The environment variable that gives the host its server's pid: only a
/// stop request from that process (or from the kernel, as a terminal's
/// Ctrl-C) is taken, never one from the program under capture.
pub const PARENT_ENV: &str = "REA_CAPTURE_PARENT";

/// The signals that ask the host to stop. The server starts the host with
/// them blocked; the host unblocks them once it can take them, so one sent
/// in between waits instead of killing it.
pub const STOP_SIGNALS: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// The largest scenario the host reads (arguments, environment and stdin
/// at their maxima fit with room to spare).
pub const MAX_SCENARIO_BYTES: u64 = 64 * 1024 * 1024;

/// What the host answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum HostReply {
    Captured { capture: Box<Capture> },
    Failed { kind: String, message: String },
}

impl HostReply {
    pub fn from_error(e: &CaptureError) -> Self {
        let kind = match e {
            CaptureError::Unsupported => "unsupported",
            CaptureError::InvalidScenario { .. } => "invalid_scenario",
            CaptureError::WouldRunAsRoot => "would_run_as_root",
            CaptureError::Spawn(_) => "spawn",
            CaptureError::NetworkIsolation(_) => "network_isolation",
            CaptureError::Stopped { .. } => "stopped",
            _ => "host",
        };
        let message = match e {
            CaptureError::InvalidScenario { field, reason } => format!("{field}\u{1f}{reason}"),
            CaptureError::Spawn(m)
            | CaptureError::NetworkIsolation(m)
            | CaptureError::Io(m)
            | CaptureError::HostFailed(m) => m.clone(),
            CaptureError::Stopped { cleanup_verified } => if *cleanup_verified {
                "verified"
            } else {
                "unverified"
            }
            .to_owned(),
            other => other.to_string(),
        };
        HostReply::Failed {
            kind: kind.to_string(),
            message,
        }
    }

    /// The reply as the caller's result.
    pub fn into_result(self) -> Result<Capture, CaptureError> {
        match self {
            HostReply::Captured { capture } => Ok(*capture),
            HostReply::Failed { kind, message } => Err(match kind.as_str() {
                "unsupported" => CaptureError::Unsupported,
                "invalid_scenario" => {
                    let (field, reason) = message
                        .split_once('\u{1f}')
                        .unwrap_or(("scenario", &message));
                    CaptureError::InvalidScenario {
                        field: field.to_string(),
                        reason: reason.to_string(),
                    }
                }
                "would_run_as_root" => CaptureError::WouldRunAsRoot,
                "spawn" => CaptureError::Spawn(message),
                "network_isolation" => CaptureError::NetworkIsolation(message),
                "stopped" => CaptureError::Stopped {
                    cleanup_verified: message == "verified",
                },
                _ => CaptureError::HostFailed(message),
            }),
        }
    }
}

/// The most bytes a reply to `scenario` can take: each stream at worst
/// six JSON bytes per kept byte (`\u0000`) times the growth of redaction,
/// file listings at worst a few KiB per entry, and a fixed allowance.
pub fn max_reply_bytes(scenario: &Scenario) -> u64 {
    let l = &scenario.limits;
    // A secret of v bytes becomes a marker of name + 12 bytes.
    let growth = scenario
        .environment
        .iter()
        .filter(|e| e.secret && !e.value.is_empty())
        .map(|e| (e.name.len() as u64 + 12).div_ceil(e.value.len() as u64))
        .max()
        .unwrap_or(1)
        .max(1);
    let stream = l.output_bytes.min(MAX_LIMITS.output_bytes) * 6 * growth;
    let files = l.files_listed.min(MAX_LIMITS.files_listed) * 3 * 4 * 1024;
    2 * stream + files + MAX_STDIN_BYTES as u64 + 8 * 1024 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_round_trip_by_kind() {
        for e in [
            CaptureError::Unsupported,
            CaptureError::WouldRunAsRoot,
            CaptureError::Spawn("no such file".into()),
            CaptureError::NetworkIsolation("unshare: EPERM".into()),
            CaptureError::InvalidScenario {
                field: "timeout_ms".into(),
                reason: "must be positive".into(),
            },
            CaptureError::Io("boom".into()),
            CaptureError::Stopped {
                cleanup_verified: true,
            },
            CaptureError::Stopped {
                cleanup_verified: false,
            },
        ] {
            let before = e.to_string();
            let json = serde_json::to_string(&HostReply::from_error(&e)).expect("json");
            let back: HostReply = serde_json::from_str(&json).expect("parse");
            let after = back.into_result().expect_err("an error");
            if matches!(e, CaptureError::Io(_)) {
                assert!(matches!(after, CaptureError::HostFailed(_)));
            } else {
                assert_eq!(after.to_string(), before);
            }
        }
    }
}
