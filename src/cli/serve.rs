//! `rea serve`: MCP over streamable HTTP for a team, each analyst in a
//! workspace of their own. Prints one line at start (the address, never a
//! token) and stops on SIGINT or SIGTERM: no new connections, in-flight
//! calls cancelled, sessions and workspaces closed, exit 0. SIGHUP reloads
//! the tokens file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rea::server::Hub;
use rea::server::http::{self, HttpOptions};
use rea::server::tokens::TokenStore;
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
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
}

pub fn run(setup: Setup, listen: Listen) -> Result<ExitCode, CliError> {
    let tokens = match &listen.tokens_file {
        Some(path) => Some(
            TokenStore::load(path)
                .map_err(|e| CliError::failed("tokens_file_refused", e.to_string()))?,
        ),
        None => None,
    };
    let analysts = tokens.as_ref().map(|t| t.current().names().count());
    let max_connections = descriptors::fit_connections(listen.max_connections);
    let checked = setup.check()?;
    if tokens.is_some() {
        shared_writes_stay_apart(&checked.policies)?;
    }
    runtime()?.block_on(async move {
        let workspaces = Workspaces::new(listen.max_workspaces, listen.idle)
            .with_own_write_dirs(tokens.is_some());
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
            max_connections,
            header_timeout: listen.header_timeout,
            body_timeout: listen.body_timeout,
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
        serving.await;
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

/// Descriptors: each connection holds one, and targets, captures and the
/// prompts watcher need their own.
mod descriptors {
    /// Descriptors kept for everything but connections.
    const RESERVED: u64 = 128;

    /// Raises the soft descriptor limit to the hard one, and returns
    /// `wanted` or, when even that limit cannot hold `wanted` connections
    /// and the reserve, as many as it can (saying so).
    pub fn fit_connections(wanted: usize) -> usize {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid rlimit for the call to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return wanted;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            // SAFETY: `raised` is a valid rlimit within the hard limit.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                limit = raised;
            }
        }
        let room = usize::try_from(limit.rlim_cur.saturating_sub(RESERVED)).unwrap_or(usize::MAX);
        if wanted > room {
            tracing::warn!(
                "--max-connections {wanted} does not fit this process's descriptor limit ({}); \
                 holding at most {room}",
                limit.rlim_cur
            );
        }
        wanted.min(room).max(1)
    }
}

/// On a server of several analysts, what one analyst writes must not be
/// readable or replaceable by another: each writes beneath a directory of
/// their own in every write root, and no write root may lie inside a read
/// root (or hold one), since every analyst reads everything the read roots
/// hold. Reads must then be confined, too.
fn shared_writes_stay_apart(policies: &rea::session::Policies) -> Result<(), CliError> {
    let writes = policies.write_roots.roots();
    if writes.is_empty() {
        return Ok(());
    }
    let reads = policies.read_roots.roots();
    let refuse = |why: String| Err(CliError::Usage(why));
    if reads.is_empty() {
        return refuse(
            "--write-root with --tokens-file needs --read-root: without one every analyst may \
             read any file, including what the others wrote"
                .to_owned(),
        );
    }
    for w in &writes {
        if let Some(r) = reads.iter().find(|r| w.starts_with(r) || r.starts_with(w)) {
            return refuse(format!(
                "write root {} and read root {} overlap: every analyst could read what the \
                 others write; give --write-root a directory outside every --read-root",
                w.display(),
                r.display()
            ));
        }
    }
    Ok(())
}
