//! `rea mcp`: serve MCP over stdio.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use rea::catalog::render::LoadedCatalog;
use rea::server::{Hub, ReaServer, reload};
use rea::session::{
    CapturePolicy, CaptureSettings, DeepProviders, OpenPolicy, Policies, ReadRoots, WriteRoots,
};
use rmcp::ServiceExt;

use super::{CliError, refusal};

pub fn run(
    prompts_dir: Option<PathBuf>,
    read_roots: &[PathBuf],
    write_roots: &[PathBuf],
    capture: CaptureSettings,
    open: OpenPolicy,
) -> Result<ExitCode, CliError> {
    serve(prompts_dir, read_roots, write_roots, capture, open).inspect_err(|e| {
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
    open: OpenPolicy,
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
        CliError::failed(
            "catalog_invalid",
            format!(
                "the prompt catalog does not validate; not starting:\n{}",
                lines.join("\n")
            ),
        )
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            CliError::failed(
                "runtime_failed",
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    runtime.block_on(async move {
        let policies = Policies {
            read_roots: roots,
            write_roots,
            capture,
            open,
        };
        let hub = Hub::with_policies(catalog, policies, deep);
        let _watcher = match prompts_dir {
            Some(dir) => Some(reload::watch(hub.clone(), dir.clone()).map_err(|e| {
                CliError::failed(
                    "watch_failed",
                    format!("cannot watch {}: {e}", dir.display()),
                )
            })?),
            None => None,
        };
        tracing::info!("rea mcp serving on stdio");
        let (transport, flushed) = rea::server::stdio::guarded();
        let outcome = match ReaServer::new(hub).serve(transport).await {
            Ok(service) => service.waiting().await.map(|_| ()).map_err(|e| {
                CliError::failed(
                    "mcp_service_failed",
                    format!("MCP service ended with an error: {e}"),
                )
            }),
            Err(e) => Err(CliError::failed(
                "mcp_initialization_failed",
                format!("MCP initialization failed: {e}"),
            )),
        };
        // Every answer the library wrote reaches stdout before the exit.
        let _ = flushed.await;
        outcome?;
        Ok(ExitCode::SUCCESS)
    })
}
