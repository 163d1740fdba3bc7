//! `rea capture-host` (hidden): the process that runs one process-capture
//! scenario, so the target is never forked from the MCP server. See
//! `rea::capture::host` for the protocol.

use std::ffi::OsString;
use std::process::ExitCode;

use super::CliError;

#[cfg(target_os = "linux")]
pub fn run(
    inherited_descriptors: bool,
    interpreter_argv: Vec<OsString>,
) -> Result<ExitCode, CliError> {
    rea::capture::host::serve(inherited_descriptors, interpreter_argv)
        .map_err(|e| CliError::failed("capture_failed", format!("capture host: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(target_os = "linux"))]
pub fn run(
    _inherited_descriptors: bool,
    _interpreter_argv: Vec<OsString>,
) -> Result<ExitCode, CliError> {
    Err(CliError::failed(
        "unsupported_platform",
        rea::capture::CaptureError::Unsupported.to_string(),
    ))
}
