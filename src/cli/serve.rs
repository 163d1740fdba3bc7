//! `rea serve`: MCP over streamable HTTP for a team, each analyst in a
//! workspace of their own. Prints one line at start (the address, never a
//! token) and stops on SIGINT or SIGTERM: no new connections, in-flight
//! calls cancelled, sessions and workspaces closed, exit 0.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rea::server::Hub;
use rea::server::http::{self, HttpOptions};
use rea::server::tokens::Tokens;
use rea::server::workspaces::Workspaces;
use tokio_util::sync::CancellationToken;

use super::CliError;
use super::mcp::{Setup, runtime, watch};

/// How and for whom the server listens.
pub struct Listen {
    pub listen: SocketAddr,
    pub tokens_file: Option<PathBuf>,
    pub allowed_hosts: Vec<String>,
    pub max_workspaces: usize,
    pub idle: Duration,
    pub max_body_bytes: usize,
}

pub fn run(setup: Setup, listen: Listen) -> Result<ExitCode, CliError> {
    let tokens = match &listen.tokens_file {
        Some(path) => Some(
            Tokens::load(path)
                .map_err(|e| CliError::failed("tokens_file_refused", e.to_string()))?,
        ),
        None => None,
    };
    let analysts = tokens.as_ref().map(|t| t.names().count());
    let checked = setup.check()?;
    runtime()?.block_on(async move {
        let workspaces = Workspaces::new(listen.max_workspaces, listen.idle);
        let hub = Hub::serving(checked.catalog, checked.policies, checked.deep, workspaces);
        let _watcher = watch(&hub, checked.prompts_dir)?;
        let shutdown = CancellationToken::new();
        let options = HttpOptions {
            listen: listen.listen,
            tokens,
            allowed_hosts: listen.allowed_hosts,
            max_body_bytes: listen.max_body_bytes,
            idle: listen.idle,
            max_sessions: listen.max_workspaces,
        };
        let (bound, serving) = http::bind(hub, options, shutdown.clone())
            .await
            .map_err(|e| CliError::failed("serve_refused", e.to_string()))?;
        let who = match analysts {
            Some(n) => format!("{n} analyst token(s)"),
            None => "loopback only, no tokens".to_owned(),
        };
        say(&format!(
            "rea serve: listening on http://{bound}/mcp ({who})"
        ));
        tokio::spawn(stop_on_signal(shutdown));
        serving
            .await
            .map_err(|e| CliError::failed("serve_failed", e.to_string()))?;
        say("rea serve: stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// One status line on stderr. A closed stderr does not stop the server.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Cancels `shutdown` on SIGINT or SIGTERM.
async fn stop_on_signal(shutdown: CancellationToken) {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
    shutdown.cancel();
}
