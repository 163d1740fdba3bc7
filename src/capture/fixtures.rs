//! Hand-made captures for unit tests (the engine's own and the tools'
//! that read captures): valid by construction, so a test changes only what
//! it is about.

use sha2::Digest;

use super::types::{Network, SCHEMA_VERSION};
use super::{
    Capture, Cleanup, Crash, Exit, ExitReason, FileChanges, Mapping, Stream, Timing, Tracing,
};

/// A stream that kept `text` of `total` bytes written.
pub(crate) fn stream(text: &str, total: u64) -> Stream {
    Stream {
        text: text.into(),
        sha256: crate::ground::digest::hex(&sha2::Sha256::digest(text.as_bytes())),
        stored_bytes: text.len() as u64,
        total_bytes: total,
        truncated: total > text.len() as u64,
    }
}

/// A run that exited with `code`, printing `out`.
pub(crate) fn exited(code: i32, out: &str) -> Capture {
    Capture {
        schema_version: SCHEMA_VERSION,
        exit: Exit {
            code: Some(code),
            signal: None,
            signal_name: None,
            reason: ExitReason::Exited,
        },
        crash: None,
        stdout: stream(out, out.len() as u64),
        stderr: stream("", 0),
        timing: Timing {
            wall_ms: 1,
            user_ms: 0,
            system_ms: 0,
        },
        max_rss_kib: 1,
        host_peak_rss_kib: None,
        processes_seen: 1,
        files: FileChanges::default(),
        cleanup: Cleanup {
            verified: true,
            survivors_killed: 0,
        },
        tracing: Tracing {
            attached: true,
            reason: None,
        },
        network: Network::Isolated,
        limitations: Vec::new(),
    }
}

pub(crate) fn mapping(path: &str, start: u64, end: u64, offset: u64) -> Mapping {
    Mapping {
        path: path.into(),
        start: format!("{start:#x}"),
        end: format!("{end:#x}"),
        offset: format!("{offset:#x}"),
        perms: "r-xp".into(),
    }
}

/// A SIGSEGV at `pc` touching `fault`, with `maps`.
pub(crate) fn crashed(pc: Option<u64>, fault: Option<u64>, maps: Vec<Mapping>) -> Capture {
    let mut c = exited(0, "");
    c.exit = Exit {
        code: None,
        signal: Some(11),
        signal_name: Some("SIGSEGV".into()),
        reason: ExitReason::Signaled,
    };
    c.crash = Some(Crash {
        signal: 11,
        signal_name: "SIGSEGV".into(),
        fault_address: fault.map(|f| format!("{f:#x}")),
        program_counter: pc.map(|p| format!("{p:#x}")),
        module_map: maps,
        module_map_truncated: false,
        unknown_reason: pc.is_none().then(|| "ptrace was not permitted".to_owned()),
    });
    c.validate().expect("a valid crash capture");
    c
}
