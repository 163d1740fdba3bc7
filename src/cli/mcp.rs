//! `rea mcp`: serve MCP over stdio.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use rea::catalog::render::LoadedCatalog;
use rea::server::{Hub, ReaServer, reload};
use rea::session::{
    CapturePolicy, CaptureSettings, DeepProviders, Policies, ReadRoots, WriteRoots,
};
use rmcp::ServiceExt;

use super::{CliError, refusal};

pub fn run(
    prompts_dir: Option<PathBuf>,
    read_roots: &[PathBuf],
    write_roots: &[PathBuf],
    capture: CaptureSettings,
) -> Result<ExitCode, CliError> {
    serve(prompts_dir, read_roots, write_roots, capture).inspect_err(|e| {
        // A client that started the server should read why it is not
        // serving, not only "connection closed".
        if !std::io::stdin().is_terminal() {
            refusal::answer_until_eof(&e.to_string());
        }
    })
}

fn serve(
    prompts_dir: Option<PathBuf>,
    read_roots: &[PathBuf],
    write_roots: &[PathBuf],
    capture: CaptureSettings,
) -> Result<ExitCode, CliError> {
    let roots = ReadRoots::new(read_roots).map_err(|e| CliError::Usage(e.to_string()))?;
    let write_roots = WriteRoots::new(write_roots).map_err(|e| CliError::Usage(e.to_string()))?;
    let capture = CapturePolicy::new(capture).map_err(|e| CliError::Usage(e.to_string()))?;
    // Files only: no radare2 process starts until a target is opened with it.
    let deep = DeepProviders::detect().map_err(|e| CliError::Usage(e.to_string()))?;
    let catalog = match &prompts_dir {
        Some(dir) => LoadedCatalog::from_dir(dir),
        None => LoadedCatalog::embedded(),
    }
    .map_err(|diags| {
        let lines: Vec<String> = diags.iter().map(ToString::to_string).collect();
        CliError::Failed(format!(
            "the prompt catalog does not validate; not starting:\n{}",
            lines.join("\n")
        ))
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        let policies = Policies {
            read_roots: roots,
            write_roots,
            capture,
        };
        let hub = Hub::with_policies(catalog, policies, deep);
        let _watcher =
            match prompts_dir {
                Some(dir) => Some(reload::watch(hub.clone(), dir.clone()).map_err(|e| {
                    CliError::Failed(format!("cannot watch {}: {e}", dir.display()))
                })?),
                None => None,
            };
        tracing::info!("rea mcp serving on stdio");
        let service = ReaServer::new(hub)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::Failed(format!("MCP initialization failed: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| CliError::Failed(format!("MCP service ended with an error: {e}")))?;
        Ok(ExitCode::SUCCESS)
    })
}
