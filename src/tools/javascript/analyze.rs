//! `analyze_javascript_application`: the application at `input_path`, read
//! (never run) into an [`Analysis`]. The whole analysis becomes one record
//! (`javascript_application_graph`), which the ledger and bundles keep for
//! the tools that read it; the answer is a second record, its summary,
//! that names the first by `graph_evidence_id`.
//!
//! The path is opened once beneath the operator's read roots, as every
//! reader opens (`confined`); the walk then reads only through that
//! handle, so nothing swapped in meanwhile can lead outside. The session's
//! active target is neither needed nor changed. The handler already runs
//! on a blocking thread (the server calls every tool there), so the
//! analysis runs inline and reports its progress through the call's
//! progress channel.

use crate::tools::ToolName;
use crate::tools::errors::ErrorCode;
use crate::tools::tool::{Call, Tool};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::{ANALYZE_OPERATION, GRAPH_OPERATION, encode};
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::javascript::{self, Analysis, Input, InputFormat, Limits, Options};
use crate::providers::native::Progress;
use crate::session::{
    Confidence, EvidenceDraft, Location, ReadRoots, Session, Subject, native_identity,
};
use crate::tools::inputs::{AnalyzeJavascriptApplicationInput, ApplicationFormat};
use crate::tools::{HandlerResult, ToolError};

/// Longest accepted `input_path`, in characters.
pub const MAX_INPUT_PATH_CHARS: usize = 16_384;
/// Most entry-point locations named on the Evidence record.
const MAX_LOCATIONS: usize = 32;

/// Records the whole analysis, then its summary, which is the answer.
fn record_analysis(session: &mut Session, graph: EvidenceDraft) -> HandlerResult {
    let mut result = summary(&graph.result);
    let summary = EvidenceDraft {
        operation: ANALYZE_OPERATION.to_owned(),
        subject: graph.subject.clone(),
        provider: graph.provider.clone(),
        parameters: graph.parameters.clone(),
        result: Value::Null,
        confidence: graph.confidence,
        limitations: graph.limitations.clone(),
        locations: graph.locations.clone(),
        local_path: graph.local_path.clone(),
    };
    let graph = session.record(graph)?;
    result["graph_evidence_id"] = json!(graph.evidence_id);
    crate::tools::recorded(session, EvidenceDraft { result, ..summary })
}

/// What an analysis answers first: its identity, package, entry points,
/// coverage, statistics and limits, and how many findings of each kind
/// there are. The graph and the findings themselves stay in the graph
/// record, read through `inspect_analysis_view` (the riskiest first),
/// `trace_application_feature` and `compare_application_versions`; the
/// limitations are the Evidence's own.
fn summary(analysis: &Value) -> Value {
    let mut summary = Map::new();
    for key in [
        "schema_version",
        "analysis_id",
        "format",
        "root_sha256",
        "graph_sha256",
        "package",
        "entry_points",
        "coverage",
        "statistics",
        "limits",
    ] {
        if let Some(value) = analysis.get(key) {
            summary.insert(key.to_owned(), value.clone());
        }
    }
    let findings = &analysis["findings"];
    let count = |list: &str| findings[list].as_array().map_or(0, Vec::len);
    summary.insert(
        "findings".to_owned(),
        json!({
            "observations": count("observations"),
            "relationships": count("relationships"),
            "unknowns": count("unknowns"),
            "omitted": findings["omitted"],
        }),
    );
    summary.insert(
        "next".to_owned(),
        json!("inspect_analysis_view(evidence_id) for entry points, seeds to trace and the riskiest findings"),
    );
    Value::Object(summary)
}

/// Reads and parses the application without holding the session: it is
/// held only for the read roots and, at the end, to record the Evidence.
pub struct AnalyzeJavascriptApplication;

impl Tool for AnalyzeJavascriptApplication {
    const NAME: ToolName = ToolName::AnalyzeJavascriptApplication;
    type Input = AnalyzeJavascriptApplicationInput;

    fn run(input: AnalyzeJavascriptApplicationInput, call: &Call<'_>) -> HandlerResult {
        call.without_lock(
            |s| s.read_roots().clone(),
            |roots| analysis_draft(input, &roots, call.progress),
            record_analysis,
        )
    }
}

/// The analysis of the requested application, as the Evidence it becomes.
fn analysis_draft(
    input: AnalyzeJavascriptApplicationInput,
    roots: &ReadRoots,
    progress: Progress<'_>,
) -> Result<EvidenceDraft, ToolError> {
    let limits = input.limits.unwrap_or_default();
    limits.validate()?;
    let requested = checked_path(&input.input_path)?;
    let opened = Input::open(roots.handles(), requested)?;
    let format = check_format(&opened, requested, input.format)?;
    let options = Options {
        limits,
        read_source_maps: input.read_source_maps,
    };
    let reporter = Reporter {
        total: AtomicU64::new(0),
        done: AtomicU64::new(0),
        report: progress,
    };
    let analysis = javascript::analyze_input(&opened, &options, &reporter)?;
    let result = encode(&analysis, "analysis")?;
    Ok(EvidenceDraft {
        operation: GRAPH_OPERATION.to_owned(),
        subject: Some(subject(&analysis)),
        provider: native_identity(),
        parameters: parameters(format, &options),
        result,
        confidence: Confidence::Observed,
        limitations: analysis.limitations.clone(),
        locations: locations(&analysis),
        local_path: Some(requested.display().to_string()),
    })
}

/// The path as given: absolute and bounded.
fn checked_path(text: &str) -> Result<&Path, ToolError> {
    if text.is_empty() || text.chars().nth(MAX_INPUT_PATH_CHARS).is_some() {
        return Err(ToolError::invalid_arguments(format!(
            "input_path must be 1-{MAX_INPUT_PATH_CHARS} characters"
        )));
    }
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err(ToolError::invalid_arguments(format!(
            "input_path `{}` is not absolute; pass the absolute path of the application \
             directory or .asar file",
            excerpt(text, 4 * EXCERPT_CHARS)
        )));
    }
    Ok(path)
}

/// The input's format, as opened, checked against what the caller asked
/// for. (Anything neither a directory nor a regular file was refused by the
/// open, without blocking.)
fn check_format(
    opened: &Input,
    requested: &Path,
    asked: ApplicationFormat,
) -> Result<InputFormat, ToolError> {
    let shown = excerpt(&requested.display().to_string(), 4 * EXCERPT_CHARS);
    let found = opened.format();
    let wanted = match asked {
        ApplicationFormat::Auto => return Ok(found),
        ApplicationFormat::Directory => InputFormat::Directory,
        ApplicationFormat::Asar => InputFormat::Asar,
    };
    if wanted == found {
        Ok(found)
    } else {
        Err(ToolError::new(
            ErrorCode::InputFormatMismatch,
            format!(
                "format is {} but {shown} is {}",
                wanted.as_str(),
                match found {
                    InputFormat::Directory => "a directory",
                    InputFormat::Asar => "a file",
                }
            ),
        ))
    }
}

/// The application's identity: the root digest and how it was read.
fn subject(analysis: &Analysis) -> Subject {
    Subject {
        sha256: analysis.root_sha256.clone(),
        format: format!("javascript-{}", analysis.format.as_str()),
        architecture: None,
    }
}

/// Identity parameters: the format, the source-map choice and the limits
/// that differ from the defaults (so default and explicit-default calls
/// are the same Evidence). Never a local path.
fn parameters(format: InputFormat, options: &Options) -> Value {
    let mut limits = Map::new();
    for ((name, value, _), (_, default, _)) in options
        .limits
        .fields()
        .into_iter()
        .zip(Limits::default().fields())
    {
        if value != default {
            limits.insert(name.to_owned(), json!(value));
        }
    }
    json!({
        "format": format.as_str(),
        "read_source_maps": options.read_source_maps,
        "limits": limits,
    })
}

/// The entry points' files.
fn locations(analysis: &Analysis) -> Vec<Location> {
    let mut paths: Vec<&str> = analysis
        .entry_points
        .iter()
        .map(|e| e.path.as_str())
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
        .into_iter()
        .take(MAX_LOCATIONS)
        .map(|path| Location::ArtifactPath {
            path: path.to_owned(),
        })
        .collect()
}

/// Turns the library's per-file progress into `(done, total)` reports.
struct Reporter<'a> {
    total: AtomicU64,
    done: AtomicU64,
    report: Progress<'a>,
}

impl javascript::Progress for Reporter<'_> {
    fn total(&self, files: u64) {
        self.total.store(files, Ordering::Relaxed);
        (self.report)(self.done.load(Ordering::Relaxed), files);
    }

    fn advance(&self, _path: &str) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        (self.report)(done, self.total.load(Ordering::Relaxed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_oversized_paths_are_refused() {
        assert_eq!(checked_path("app").unwrap_err().code, "invalid_arguments");
        assert_eq!(checked_path("").unwrap_err().code, "invalid_arguments");
        let long = format!("/{}", "a".repeat(MAX_INPUT_PATH_CHARS));
        assert_eq!(checked_path(&long).unwrap_err().code, "invalid_arguments");
        assert!(checked_path("/srv/app").is_ok());
    }

    #[test]
    fn a_format_mismatch_is_typed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("app.asar");
        std::fs::write(&file, b"x").unwrap();
        let roots = crate::ground::confined::Roots::default();
        let detect =
            |path: &Path, asked| check_format(&Input::open(&roots, path).unwrap(), path, asked);
        assert_eq!(
            detect(dir.path(), ApplicationFormat::Asar)
                .unwrap_err()
                .code,
            "input_format_mismatch"
        );
        assert_eq!(
            detect(&file, ApplicationFormat::Directory)
                .unwrap_err()
                .code,
            "input_format_mismatch"
        );
        assert_eq!(
            detect(&file, ApplicationFormat::Auto).unwrap(),
            InputFormat::Asar
        );
        assert_eq!(
            detect(dir.path(), ApplicationFormat::Directory).unwrap(),
            InputFormat::Directory
        );
    }

    #[test]
    fn parameters_name_only_non_default_limits() {
        let mut options = Options::default();
        assert_eq!(parameters(InputFormat::Asar, &options)["limits"], json!({}));
        options.limits.max_depth = 3;
        options.read_source_maps = true;
        assert_eq!(
            parameters(InputFormat::Directory, &options),
            json!({"format": "directory", "read_source_maps": true, "limits": {"max_depth": 3}})
        );
    }
}
