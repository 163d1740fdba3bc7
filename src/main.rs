//! The `rea` command line: the MCP server and its CLI twins.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // stdout may carry JSON-RPC (`rea mcp`); every log line goes to stderr,
    // without session ids.
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, filter};
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(rea::server::log::ScrubbedStderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(log_filter())
        .with_filter(filter::filter_fn(|meta| !too_verbose_for_mcp_library(meta)));
    tracing_subscriber::registry().with(layer).init();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rea: {e}");
            ExitCode::from(2)
        }
    }
}

/// `REA_LOG` (default `warn`), for rea and the MCP library alike.
fn log_filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("REA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"))
}

/// The MCP library is capped at `info` whatever `REA_LOG` asks: its debug
/// and trace events print whole JSON-RPC messages, and tool arguments may
/// carry secret values (a capture's environment) that must never reach a
/// log. Below the cap it obeys `REA_LOG` like everything else.
fn too_verbose_for_mcp_library(meta: &tracing::Metadata<'_>) -> bool {
    meta.target().starts_with("rmcp") && *meta.level() > tracing::Level::INFO
}
