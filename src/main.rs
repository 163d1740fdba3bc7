//! The `rea` command line: the MCP server and its CLI twins.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // stdout may carry JSON-RPC (`rea mcp`); every log line goes to stderr.
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(log_filter())
        .init();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rea: {e}");
            ExitCode::from(2)
        }
    }
}

/// `REA_LOG` (default `warn`), with the MCP library held at `info` whatever
/// it asks: rmcp's debug and trace events print whole JSON-RPC messages, and
/// tool arguments may carry secret values (a capture's environment) that
/// must never reach a log.
fn log_filter() -> tracing_subscriber::EnvFilter {
    let filter = tracing_subscriber::EnvFilter::try_from_env("REA_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    match "rmcp=info".parse() {
        Ok(cap) => filter.add_directive(cap),
        Err(_) => filter,
    }
}
