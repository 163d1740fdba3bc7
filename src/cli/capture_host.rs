//! `rea capture-host` (hidden): the process that runs one process-capture
//! scenario, so the target is never forked from the MCP server. See
//! `rea::capture::host` for the protocol.

use std::process::ExitCode;

use super::CliError;

#[cfg(target_os = "linux")]
pub fn run() -> Result<ExitCode, CliError> {
    rea::capture::host::serve().map_err(|e| CliError::Failed(format!("capture host: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(target_os = "linux"))]
pub fn run() -> Result<ExitCode, CliError> {
    Err(CliError::Failed(
        rea::capture::CaptureError::Unsupported.to_string(),
    ))
}
