//! `rea analyze <directory|.asar>`: the CLI twin of
//! `analyze_javascript_application`. Reads the application without running
//! any of it, under the same read roots `rea mcp --read-root` would apply,
//! and prints a readable summary (or, with `--json`, the whole analysis).
//! A progress bar goes to stderr, and only when stderr is a terminal.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rea::javascript::{self, Analysis, Options, Progress};
use rea::session::ReadRoots;

use super::CliError;
use super::analyze_summary::write_summary;

/// What `rea analyze` was asked to do.
pub struct AnalyzeArgs<'a> {
    pub path: &'a Path,
    pub read_roots: &'a [std::path::PathBuf],
    pub json: bool,
    pub read_source_maps: bool,
}

pub fn run(args: AnalyzeArgs<'_>) -> Result<ExitCode, CliError> {
    let roots = ReadRoots::new(args.read_roots).map_err(|e| {
        let error = rea::tools::ToolError::from(e);
        CliError::Usage(format!("{}. {}", error.message, error.remediation))
    })?;
    let input = javascript::Input::open(roots.handles(), args.path).map_err(CliError::tool)?;
    // What `rea doctor` says of such a directory, rather than an empty graph.
    if let javascript::Input::Directory(dir) = &input
        && !javascript::looks_like_application(dir)
    {
        return Err(CliError::failed(
            "not_an_application",
            format!(
                "{}: {}",
                args.path.display(),
                rea::session::admission::NO_ANALYSIS_APPLIES
            ),
        ));
    }
    let options = Options {
        read_source_maps: args.read_source_maps,
        ..Options::default()
    };
    let bar = Bar::new();
    let result = javascript::analyze_input(&input, &options, &bar);
    bar.finish();
    let analysis = result.map_err(CliError::tool)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = if args.json {
        write_json(&mut out, &analysis)
    } else {
        write_summary(&mut out, &analysis, &args.path.display().to_string())
    }
    .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // A closed pipe (`| head`) is a normal way to stop reading.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(CliError::failed(
            "write_failed",
            format!("cannot write: {e}"),
        )),
    }
}

fn write_json(out: &mut impl Write, analysis: &Analysis) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, analysis)?;
    writeln!(out)
}

/// The progress bar: hidden unless stderr is a terminal, so pipes and CI
/// logs stay clean.
struct Bar(ProgressBar);

impl Bar {
    fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} analyzing {pos}/{len} files {wide_bar} {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Bar(bar)
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Progress for Bar {
    fn total(&self, files: u64) {
        self.0.set_length(files);
    }

    fn advance(&self, _path: &str) {
        self.0.inc(1);
    }
}
