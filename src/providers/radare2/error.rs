//! Typed failures of the radare2 provider. Each says what happened and what
//! to do; [`Radare2Error::code`] is the stable code a tool reports. None of
//! them ever leads to another provider being used instead (ADR-0001).

use super::super::format_address;
use super::detect::Unavailable;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Radare2Error {
    #[error("radare2 is not available ({}): {}; {}", .0.code.as_str(), .0.detail, .0.remediation())]
    Unavailable(Unavailable),
    #[error(
        "rea will not give {path} to radare2: {reason}; copy or link the file to a plain absolute path"
    )]
    UnsafePath { path: String, reason: String },
    #[error(
        "cannot start radare2 ({program}): {reason}; check that the program exists and is executable"
    )]
    Spawn { program: String, reason: String },
    #[error(
        "radare2 did not finish `{command}` within {seconds} s, so rea stopped the radare2 process; raise the radare2 timeout, or retry (the next request starts a fresh radare2 and re-runs its analysis)"
    )]
    Timeout { command: String, seconds: f64 },
    #[error("radare2 ended during `{command}` ({status}){}; the next request starts a fresh radare2 process", stderr_suffix(.stderr))]
    Exited {
        command: String,
        status: String,
        stderr: String,
    },
    #[error(
        "the answer to `{command}` exceeded {limit} bytes, so rea stopped the radare2 process; raise the radare2 output limit"
    )]
    OutputTooLarge { command: String, limit: usize },
    #[error("radare2 knows no function at {}, even after `af` there; pass a function entry from the procedure list", format_address(*.address))]
    NoFunction { address: u64 },
    #[error(
        "radare2 answered `{command}` with output rea cannot read ({reason}); this radare2 version may differ from 5.7.4"
    )]
    BadOutput { command: String, reason: String },
    #[error("invalid radare2 option {name}={value:?}: {reason}")]
    InvalidOption {
        name: String,
        value: String,
        reason: String,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its last diagnostics: {stderr}")
    }
}

impl Radare2Error {}

impl From<Unavailable> for Radare2Error {
    fn from(u: Unavailable) -> Self {
        Radare2Error::Unavailable(u)
    }
}
