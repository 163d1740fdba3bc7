//! `rea mcp`: serve MCP over stdio; and the set-up it shares with `rea
//! serve` (policies, deep providers, the prompt catalog and its watcher).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rea::catalog::render::LoadedCatalog;
use rea::server::{Hub, ReaServer, reload};
use rea::session::{
    CapturePolicy, CaptureSettings, DeepProviders, OpenPolicy, Policies, ReadRoots, WriteRoots,
};
use rmcp::ServiceExt;

use super::{CliError, refusal};

/// What every session of a server runs under, as the command line gave it.
pub struct Setup {
    pub prompts_dir: Option<PathBuf>,
    pub read_roots: Vec<PathBuf>,
    pub write_roots: Vec<PathBuf>,
    pub capture: CaptureSettings,
    pub open: OpenPolicy,
}

/// The setup checked: the operator's policies, the detected deep providers
/// and the loaded prompt catalog.
pub struct Checked {
    pub prompts_dir: Option<PathBuf>,
    pub policies: Policies,
    pub deep: DeepProviders,
    pub catalog: Arc<LoadedCatalog>,
}

impl Setup {
    pub fn check(self) -> Result<Checked, CliError> {
        let read_roots =
            ReadRoots::new(&self.read_roots).map_err(|e| CliError::Usage(e.to_string()))?;
        let write_roots =
            WriteRoots::new(&self.write_roots).map_err(|e| CliError::Usage(e.to_string()))?;
        let capture =
            CapturePolicy::new(self.capture).map_err(|e| CliError::Usage(e.to_string()))?;
        // Files only: no radare2 process starts until a target is opened with it.
        let deep = DeepProviders::detect().map_err(|e| CliError::Usage(e.to_string()))?;
        let catalog = match &self.prompts_dir {
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
        Ok(Checked {
            prompts_dir: self.prompts_dir,
            policies: Policies {
                read_roots,
                write_roots,
                capture,
                open: self.open,
            },
            deep,
            catalog,
        })
    }
}

/// Watches `dir` (when given) and reloads valid changes into `hub`.
pub fn watch(
    hub: &Arc<Hub>,
    dir: Option<PathBuf>,
) -> Result<Option<notify::RecommendedWatcher>, CliError> {
    match dir {
        Some(dir) => reload::watch(hub.clone(), dir.clone())
            .map(Some)
            .map_err(|e| {
                CliError::failed(
                    "watch_failed",
                    format!("cannot watch {}: {e}", dir.display()),
                )
            }),
        None => Ok(None),
    }
}

/// A multi-threaded runtime for a server.
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            CliError::failed(
                "runtime_failed",
                format!("cannot start the async runtime: {e}"),
            )
        })
}

pub fn run(setup: Setup) -> Result<ExitCode, CliError> {
    serve(setup).inspect_err(|e| {
        // A client that started the server should read why it is not
        // serving, not only "connection closed".
        if !std::io::stdin().is_terminal() {
            refusal::answer_until_eof(&e.to_string());
        }
    })
}

fn serve(setup: Setup) -> Result<ExitCode, CliError> {
    let checked = setup.check()?;
    runtime()?.block_on(async move {
        let hub = Hub::with_policies(checked.catalog, checked.policies, checked.deep);
        let _watcher = watch(&hub, checked.prompts_dir)?;
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
