//! `rea radare2-host` (hidden): the process that runs radare2's libraries
//! for the radare2 provider, so radare2 never runs inside the MCP server.
//! The provider starts it; people have no reason to. See
//! `rea::providers::radare2::host` for the protocol and the stdout guard.

use std::path::Path;
use std::process::ExitCode;

use rea::providers::radare2::host::{self, HostRequest};

use super::CliError;

pub fn run(libr: &Path, settings: &[String], file: &Path) -> Result<ExitCode, CliError> {
    host::run(&HostRequest {
        libr,
        settings,
        file,
    })
    .map_err(|e| CliError::failed("radare2_host_failed", e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
