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
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("REA_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
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
