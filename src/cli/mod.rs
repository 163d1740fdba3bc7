//! Command-line interface. Each subcommand mirrors an MCP surface so people
//! and CI can use what agents use: `prompts` (list/get/lint), `doctor`,
//! `procedures` (the twin of `list_procedures`), `analyze` (the twin of
//! `analyze_javascript_application`), `mcp` itself, and `serve` (MCP over
//! HTTP for a team).

mod analyze;
mod analyze_summary;
mod capture_host;
mod decompile;
mod doctor;
mod index;
mod mcp;
mod procedures;
mod prompts;
mod radare2_host;
mod refusal;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use rea::session::CaptureSettings;

#[derive(Debug, Parser)]
#[command(
    name = "rea",
    version,
    about = "Evidence-first reverse engineering over MCP"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Process capture is off unless these enable it (see README, "Process
/// capture policy").
#[derive(Debug, clap::Args)]
struct CaptureArgs {
    /// Allow capture_process_scenario (every call still needs approved: true).
    #[arg(long = "enable-process-capture")]
    enabled: bool,
    /// Executables may be run only from under DIR (repeatable; symlinks resolved).
    #[arg(long = "capture-executable-root", value_name = "DIR")]
    executable_roots: Vec<PathBuf>,
    /// Captures may run only in working directories under DIR (repeatable).
    #[arg(long = "capture-working-root", value_name = "DIR")]
    working_roots: Vec<PathBuf>,
    /// Run captures as USER (a name or UID:GID) when the server runs as root;
    /// default nobody.
    #[arg(long = "capture-user", value_name = "USER")]
    user: Option<String>,
    /// The network captures run in: `isolated` (the default: a new network
    /// namespace with only loopback) or `host` (the machine's network).
    #[arg(long = "capture-network", value_name = "MODE", value_parser = parse_network)]
    network: Option<rea::capture::types::Network>,
    /// Read capture settings from a TOML file (enabled, executable_roots,
    /// working_roots, user); the flags above add to it.
    #[arg(long = "capture-config", value_name = "FILE")]
    config: Option<PathBuf>,
}

/// What every session of a server runs under, for `rea mcp` and `rea serve`.
#[derive(Debug, clap::Args)]
struct ServerArgs {
    /// Load prompts from DIR at start, watch it, and reload valid changes.
    #[arg(long, value_name = "DIR")]
    prompts_dir: Option<PathBuf>,
    /// Confine every path a tool reads to DIR (repeatable).
    #[arg(long = "read-root", value_name = "DIR")]
    read_roots: Vec<PathBuf>,
    /// Allow tools that write files (export_evidence_bundle) to write
    /// under DIR (repeatable). Without it, writing is disabled.
    #[arg(long = "write-root", value_name = "DIR")]
    write_roots: Vec<PathBuf>,
    /// Refuse to open targets larger than BYTES (default 4 GiB).
    #[arg(long = "max-target-bytes", value_name = "BYTES", default_value_t = rea::session::DEFAULT_MAX_TARGET_BYTES)]
    max_target_bytes: u64,
    /// Stop a call that runs longer than SECONDS: an open (the previous
    /// target stays active), reading an application, a capture (its
    /// processes are killed); nothing of it is recorded.
    #[arg(long = "call-timeout", value_name = "SECONDS", default_value_t = rea::session::DEFAULT_CALL_TIMEOUT.as_secs())]
    call_timeout: u64,
    #[command(flatten)]
    capture: CaptureArgs,
    #[command(flatten)]
    decompiler: DecompilerArgs,
}

/// The decompiler's workers: what each may use (see README, "Decompiler").
#[derive(Debug, clap::Args)]
struct DecompilerArgs {
    /// Stop decompiling one procedure after SECONDS (its worker is killed;
    /// the procedure answers incomplete: timeout).
    #[arg(
        long = "decompile-timeout",
        value_name = "SECONDS",
        default_value_t = 30
    )]
    timeout: u64,
    /// Cap each decompile worker's address space at BYTES (default 2 GiB).
    #[arg(long = "decompile-memory", value_name = "BYTES", default_value_t = 2 << 30)]
    memory: u64,
    /// Decompile workers a batch may use at once (default: the number of cores).
    #[arg(long = "decompile-workers", value_name = "N")]
    workers: Option<usize>,
}

impl DecompilerArgs {
    /// Configures the process's worker pool.
    fn apply(&self) {
        let limits = rea::decompiler::Limits {
            memory_bytes: self.memory.max(64 << 20),
            deadline: std::time::Duration::from_secs(self.timeout.max(1)),
            ..rea::decompiler::Limits::default()
        };
        let workers = self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(1)
        });
        rea::decompiler::shared().configure(None, limits, workers);
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (stdout carries JSON-RPC only; logs go to stderr).
    Mcp {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Serve MCP over streamable HTTP at /mcp for several analysts, each in a
    /// workspace of their own (see README, "A server for a team").
    Serve {
        /// The address to listen on, e.g. 127.0.0.1:8765 (port 0 picks one;
        /// the start line on stderr names it).
        #[arg(long, value_name = "ADDR")]
        listen: std::net::SocketAddr,
        /// TOML [[token]] tables (name, token of 16+ characters), one per
        /// analyst; required to listen beyond loopback. Must be the owner's
        /// alone (mode 0600 or 0400). Reloaded on SIGHUP or a change.
        #[arg(long = "tokens-file", value_name = "FILE")]
        tokens_file: Option<PathBuf>,
        /// Also accept requests whose Host (and Origin) name HOST, e.g. the
        /// DNS name clients reach the server by (repeatable).
        #[arg(long = "allow-host", value_name = "HOST")]
        allowed_hosts: Vec<String>,
        /// Most workspaces held at once: legacy sessions, and separately the
        /// workspaces of analysts whose requests carry no session.
        #[arg(long = "max-workspaces", value_name = "N", default_value_t = 64)]
        max_workspaces: usize,
        /// End a session, or drop a workspace, idle for SECONDS.
        #[arg(long = "idle-timeout", value_name = "SECONDS", default_value_t = rea::server::http::DEFAULT_IDLE.as_secs())]
        idle_timeout: u64,
        /// Refuse request bodies larger than BYTES (HTTP 413).
        #[arg(long = "max-body-bytes", value_name = "BYTES", default_value_t = rea::server::http::DEFAULT_MAX_BODY_BYTES)]
        max_body_bytes: usize,
        /// Most connections held at once; when full, the oldest that has not
        /// shown a valid token is closed to make room.
        #[arg(long = "max-connections", value_name = "N", default_value_t = rea::server::http::DEFAULT_MAX_CONNECTIONS)]
        max_connections: usize,
        /// Close a connection whose request headers take longer than
        /// SECONDS, or that sits idle that long between requests.
        #[arg(long = "header-timeout", value_name = "SECONDS", default_value_t = rea::server::http::DEFAULT_HEADER_TIMEOUT.as_secs())]
        header_timeout: u64,
        /// Answer 408 to a request whose body takes longer than SECONDS.
        #[arg(long = "body-timeout", value_name = "SECONDS", default_value_t = rea::server::http::DEFAULT_BODY_TIMEOUT.as_secs())]
        body_timeout: u64,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Inspect, render and lint the guided prompt catalog.
    Prompts {
        #[command(subcommand)]
        command: PromptsCommand,
    },
    /// Check the installation and, optionally, whether a target can be opened.
    Doctor {
        /// A file or .app bundle to admit and open, as open_binary would.
        #[arg(long, value_name = "PATH")]
        target: Option<PathBuf>,
        /// Confine the target check to DIR (repeatable), as `rea mcp --read-root`.
        #[arg(long = "read-root", value_name = "DIR")]
        read_roots: Vec<PathBuf>,
    },
    /// Analyze a JavaScript/Electron application directory or .asar without
    /// running it: entry points, windows and their security settings, IPC
    /// channels, exposed APIs, native modules, unknowns.
    Analyze {
        /// The application directory (e.g. resources/app) or .asar archive.
        path: PathBuf,
        /// Print the whole analysis as one JSON object instead of a summary.
        #[arg(long)]
        json: bool,
        /// Read source maps named by minified files (off by default).
        #[arg(long)]
        read_source_maps: bool,
        /// Confine the path to DIR (repeatable), as `rea mcp --read-root`.
        #[arg(long = "read-root", value_name = "DIR")]
        read_roots: Vec<PathBuf>,
    },
    /// Build a document's code index and print its size and build time as JSON.
    Index {
        /// The executable or .app bundle.
        file: PathBuf,
        /// Document name (see list_documents); the first document by default.
        #[arg(long)]
        document: Option<String>,
    },
    /// Print a document's procedures, one `address [name]` per line.
    Procedures {
        /// The executable or .app bundle.
        file: PathBuf,
        /// Document name (see list_documents); the first document by default.
        #[arg(long)]
        document: Option<String>,
        /// List only what the symbol tables, PE exports and entry point name
        /// (what `nm` sees), without unwind-table or code discovery.
        #[arg(long)]
        symbols_only: bool,
        /// Print how each procedure was found after its address
        /// (`call_target,tail_call`; a fragment as `fragment_of=0x…`).
        #[arg(long)]
        found_by: bool,
    },
    /// Serve radare2's libraries over the r2pipe protocol (started by the
    /// radare2 provider; stdout carries protocol bytes only).
    /// Decompile procedures to C (the twin of procedure_pseudo_code): C on
    /// stdout, failures on stderr and a non-zero exit.
    Decompile {
        file: PathBuf,
        /// Procedures: names or entry addresses.
        #[arg(required = true, value_name = "PROC")]
        procedures: Vec<String>,
        /// The document of a universal binary (default: the first).
        #[arg(long)]
        document: Option<String>,
        /// The outline (control flow, calls, strings, with line numbers).
        #[arg(long)]
        outline: bool,
        /// The tool's answers as JSON, one line per page.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        decompiler: DecompilerArgs,
    },
    /// The decompile worker (started by rea itself).
    #[command(hide = true)]
    DecompileWorker,
    #[command(hide = true)]
    Radare2Host {
        /// The directory holding libr_core.so (REA_RADARE2_LIBR).
        #[arg(long, value_name = "DIR")]
        libr: PathBuf,
        /// A radare2 setting applied before loading (repeatable).
        #[arg(short = 'e', value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// The absolute path of the file to load.
        file: PathBuf,
    },
    /// Run one process-capture scenario read as JSON on stdin and write
    /// the result as JSON on stdout (started by process capture; stdout
    /// carries that result only).
    #[command(hide = true)]
    CaptureHost {
        /// The executable is descriptor 3 and the working directory
        /// descriptor 4, opened by the server beneath its roots.
        #[arg(long)]
        inherited_descriptors: bool,
        /// The executable is a script the server read once: run the
        /// interpreter it opened (descriptor 5) with these arguments
        /// before the script's name (repeated, in order).
        #[arg(long = rea::capture::wire::INTERPRETER_ARGV_OPTION, value_name = "ARG", allow_hyphen_values = true)]
        interpreter_argv: Vec<std::ffi::OsString>,
    },
}

#[derive(Debug, Subcommand)]
enum PromptsCommand {
    /// List the prompts in catalog order.
    List,
    /// Show one prompt's arguments and starting points.
    Show { name: String },
    /// Print exactly the text prompts/get returns.
    Render {
        name: String,
        /// An argument as NAME=VALUE (repeatable).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Render as in a session where this fact holds (repeatable):
        /// application_analysis_retained, binary_layout_retained,
        /// target_open, process_capture_enabled, unknowns_recorded.
        /// Without any, no target is open and nothing is retained.
        #[arg(long = "fact", value_name = "FACT")]
        facts: Vec<String>,
    },
    /// Check a prompts directory exactly as a --prompts-dir reload would
    /// (without DIR: the sources compiled into this binary).
    Lint {
        /// The directory to check.
        dir: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LintFormat {
    Text,
    /// GitHub Actions workflow annotations.
    Github,
}

/// A CLI failure: printed as `rea: [code] message`, exit status 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line asks for something that cannot be done as asked.
    #[error("[usage] {0}")]
    Usage(String),
    /// The command ran and failed; `code` is the same code the MCP tool
    /// answers, where there is one.
    #[error("[{code}] {message}")]
    Failed { code: &'static str, message: String },
}

impl CliError {
    pub fn failed(code: &'static str, message: impl Into<String>) -> CliError {
        CliError::Failed {
            code,
            message: message.into(),
        }
    }

    /// A failure as the MCP tool would report it: its code, its message and
    /// its remediation.
    pub fn tool(error: impl Into<rea::tools::ToolError>) -> CliError {
        let error = error.into();
        CliError::failed(
            error.code.as_str(),
            format!("{}. {}", error.message, error.remediation),
        )
    }
}

pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Mcp { server } => mcp::run(server_setup(server)?),
        Command::Serve {
            listen,
            tokens_file,
            allowed_hosts,
            max_workspaces,
            idle_timeout,
            max_body_bytes,
            max_connections,
            header_timeout,
            body_timeout,
            server,
        } => serve::run(
            server_setup(server)?,
            serve::Listen {
                listen,
                tokens_file,
                allowed_hosts,
                max_workspaces,
                idle: std::time::Duration::from_secs(idle_timeout.max(1)),
                max_body_bytes,
                max_connections,
                header_timeout: std::time::Duration::from_secs(header_timeout.max(1)),
                body_timeout: std::time::Duration::from_secs(body_timeout.max(1)),
            },
        ),
        Command::Prompts { command } => match command {
            PromptsCommand::List => prompts::list(),
            PromptsCommand::Show { name } => prompts::show(&name),
            PromptsCommand::Render { name, args, facts } => prompts::render(&name, &args, &facts),
            PromptsCommand::Lint { dir, format } => prompts::lint(dir.as_deref(), format),
        },
        Command::Doctor { target, read_roots } => doctor::run(target.as_deref(), &read_roots),
        Command::Analyze {
            path,
            json,
            read_source_maps,
            read_roots,
        } => analyze::run(analyze::AnalyzeArgs {
            path: &path,
            read_roots: &read_roots,
            json,
            read_source_maps,
        }),
        Command::Index { file, document } => index::run(&file, document.as_deref()),
        Command::Procedures {
            file,
            document,
            symbols_only,
            found_by,
        } => procedures::run(
            &file,
            document.as_deref(),
            procedures::Listing {
                symbols_only,
                found_by,
            },
        ),
        Command::Decompile {
            file,
            procedures,
            document,
            outline,
            json,
            decompiler,
        } => {
            decompiler.apply();
            decompile::run(decompile::Request {
                file: &file,
                procedures: &procedures,
                document: document.as_deref(),
                outline,
                json,
            })
        }
        Command::DecompileWorker => match rea::decompiler::worker::run() {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => Err(CliError::failed("decompile_worker_failed", e.to_string())),
        },
        Command::Radare2Host {
            libr,
            settings,
            file,
        } => radare2_host::run(&libr, &settings, &file),
        Command::CaptureHost {
            inherited_descriptors,
            interpreter_argv,
        } => capture_host::run(inherited_descriptors, interpreter_argv),
    }
}

/// The capture settings of `rea mcp`: the config file (if any) with the
/// flags on top.
fn parse_network(text: &str) -> Result<rea::capture::types::Network, String> {
    match text {
        "isolated" => Ok(rea::capture::types::Network::Isolated),
        "host" => Ok(rea::capture::types::Network::Host),
        other => Err(format!(
            "`{other}` is not a network mode; use isolated or host"
        )),
    }
}

fn server_setup(args: ServerArgs) -> Result<mcp::Setup, CliError> {
    args.decompiler.apply();
    Ok(mcp::Setup {
        prompts_dir: args.prompts_dir,
        read_roots: args.read_roots,
        write_roots: args.write_roots,
        capture: capture_settings(args.capture)?,
        open: rea::session::OpenPolicy {
            max_target_bytes: args.max_target_bytes,
            call_timeout: std::time::Duration::from_secs(args.call_timeout.max(1)),
        },
    })
}

fn capture_settings(args: CaptureArgs) -> Result<CaptureSettings, CliError> {
    let from_file = match &args.config {
        Some(path) => {
            CaptureSettings::from_file(path).map_err(|e| CliError::Usage(e.to_string()))?
        }
        None => CaptureSettings::default(),
    };
    Ok(from_file.merged(CaptureSettings {
        enabled: args.enabled,
        executable_roots: args.executable_roots,
        working_roots: args.working_roots,
        user: args.user,
        network: args.network,
    }))
}
