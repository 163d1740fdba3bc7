//! The radare2 deep provider, driven out of process over the r2pipe protocol.
//!
//! radare2 is a large C code base that parses hostile input; a crash or a
//! hang in it must never take the MCP server down. So radare2 never runs in
//! the server process. Two launch forms speak the same protocol (write
//! `CMD\n`, read the answer up to a NUL byte; one NUL after loading):
//! - an `r2` executable found on `PATH`, run as `r2 -q0 -N …`;
//! - `rea radare2-host`, our own small host process that `dlopen`s the
//!   `libr_core` of an r2libr installation (`REA_RADARE2_LIBR`).
//!
//! [`detect`] only looks at files. [`Radare2Session`] starts the process on
//! first use, bounds every command by a timeout and an output cap, and turns
//! radare2's JSON into the provider-neutral types of [`super::code`]. Every
//! command text is built in `command.rs` from constants and `0x…` addresses,
//! never from caller strings; the target path travels as data (argv, then
//! `r_core_file_open`), never inside a command (`target_path.rs`).

mod command;
mod convert;
mod detect;
mod dossier;
mod error;
pub mod host;
mod inventory;
mod json;
mod names;
mod session;
mod target_path;

#[cfg(test)]
mod tests;

pub use command::AnalysisDepth;
pub use convert::XrefsTo;
pub use detect::{
    Detection, DetectionEnv, LIBR_ENV, Launcher, Unavailable, UnavailableCode, detect, detect_in,
};
pub use error::Radare2Error;
pub use names::symbol_name;
pub use session::{
    DEFAULT_ANALYSIS_TIMEOUT, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_QUERY_TIMEOUT, Radare2Options,
    Radare2Session, Timeouts,
};

/// The provider id, as `open_binary`'s `provider_id` names it.
pub const PROVIDER_ID: &str = "radare2";

/// At most this many procedures are kept (the lowest addresses); the
/// inventory is then `truncated`, as the native provider's.
pub const MAX_PROCEDURES: usize = 1_000_000;

/// The one remediation for a missing radare2, shared by detection and errors.
pub const INSTALL_REMEDIATION: &str = "install radare2 so `r2` is on PATH, or `pip install r2libr==5.7.4` and set REA_RADARE2_LIBR=<dir with libr_core.so>";
