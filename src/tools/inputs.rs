//! Typed tool inputs. Their schemars schemas are the `inputSchema` of
//! `tools/list`; unknown fields are rejected.

pub use crate::javascript::trace::{FeatureSeed, TraceDirection, TraceLimits};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::ToolError;
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::unknowns::{Probe, Relationship, Resolution, Severity, Status};
use crate::session::{Authority, Confidence};

pub(crate) fn parse<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, ToolError> {
    serde_json::from_value(serde_json::Value::Object(arguments)).map_err(|e| {
        // serde quotes an unknown field or variant whole: bound it.
        ToolError::invalid_arguments(format!(
            "invalid arguments: {}",
            excerpt(&e.to_string(), 4 * EXCERPT_CHARS)
        ))
    })
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BinarySessionInput {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenBinaryInput {
    /// Path of an executable file or a macOS .app bundle. Relative paths
    /// resolve against the server's working directory.
    pub path: String,
    /// `auto` (default), `native`, or a deep provider id. A named provider
    /// that cannot serve the target is an error, never a fallback.
    #[serde(default)]
    pub provider_id: Option<String>,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseBinaryInput {}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDocumentsInput {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCurrentDocumentInput {
    /// A document name exactly as list_documents returns it.
    pub document: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BinaryOverviewInput {
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// Most segments to list (1-200, default 50); the total is always reported.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListProceduresInput {
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// Input of every search tool (`search_procedures`, `search_strings`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    /// Text to find (or a regex, with mode regex); 1-256 characters.
    pub pattern: String,
    /// `literal` (default) or `regex`.
    #[serde(default)]
    pub mode: Option<super::pattern::SearchMode>,
    /// Match case exactly (default false: case and compatibility forms fold).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcedureAddressInput {
    /// A procedure name (raw or demangled, exact) or an address (`0x` hex).
    pub procedure: String,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectBinaryLayoutInput {
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// Page one list instead of the summary.
    #[serde(default)]
    pub list: Option<LayoutList>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Items per list, 1-1000 (default 20 in the summary, 200 for one list).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
}

/// The long lists of a layout, which are paged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LayoutList {
    Segments,
    Sections,
    Imports,
    Exports,
    NeededLibraries,
    Rpaths,
    TlsCallbacks,
}

impl LayoutList {
    pub const ALL: [LayoutList; 7] = [
        LayoutList::Segments,
        LayoutList::Sections,
        LayoutList::Imports,
        LayoutList::Exports,
        LayoutList::NeededLibraries,
        LayoutList::Rpaths,
        LayoutList::TlsCallbacks,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LayoutList::Segments => "segments",
            LayoutList::Sections => "sections",
            LayoutList::Imports => "imports",
            LayoutList::Exports => "exports",
            LayoutList::NeededLibraries => "needed_libraries",
            LayoutList::Rpaths => "rpaths",
            LayoutList::TlsCallbacks => "tls_callbacks",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveContainingProcedureInput {
    /// An address (`0x` hex or decimal), e.g. a crash PC or a reference site.
    pub address: String,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeFunctionInput {
    /// The procedure: a name (raw or demangled, exact) or its entry address.
    pub procedure: String,
    /// Most instructions to list, 1-20000 (default 300); more is flagged as truncated.
    #[serde(default)]
    #[schemars(range(min = 1, max = 20000))]
    pub max_instructions: Option<u32>,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PseudoCodeInput {
    /// Names or entry addresses.
    pub procedures: Vec<String>,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// `code` (default) or `outline`.
    #[serde(default)]
    pub view: Option<PseudoCodeView>,
    /// First line of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Lines per page (default 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PseudoCodeView {
    Code,
    Outline,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct XrefsInput {
    /// The referenced address (`0x` hex or decimal) or a procedure name.
    pub address: String,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// Input of `procedure_callers` and `procedure_callees`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcedureCallsInput {
    /// The procedure: a name (raw or demangled, exact) or its entry address.
    pub procedure: String,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceFeatureInput {
    /// Feature text to trace: matched against strings and procedure names; 1-256 characters.
    pub query: String,
    /// `literal` (default) or `regex`.
    #[serde(default)]
    pub mode: Option<super::pattern::SearchMode>,
    /// Match case exactly (default false).
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
    /// Most matching strings and names to start from, 1-100 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub max_seeds: Option<u32>,
    /// Levels of callers to follow from the procedures that use a match, 0-8 (default 2).
    #[serde(default)]
    #[schemars(range(min = 0, max = 8))]
    pub max_depth: Option<u32>,
    /// Operation budget (references and call edges visited), 100-100000 (default 5000).
    #[serde(default)]
    #[schemars(range(min = 100, max = 100000))]
    pub budget: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildCallPathInput {
    /// Where the path starts: a procedure name or entry address.
    pub start: String,
    /// Where it should arrive: a procedure name or entry address.
    pub goal: String,
    /// Longest path, in calls, 1-32 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 32))]
    pub max_depth: Option<u32>,
    /// Most paths to return, 1-20 (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub max_paths: Option<u32>,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListEvidenceInput {
    /// Only records of this operation (exact name, e.g. `list_procedures`).
    #[serde(default)]
    pub operation: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetEvidenceInput {
    /// `ev_` and 64 lowercase hex digits, as list_evidence returns it.
    pub evidence_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportEvidenceBundleInput {
    /// Output file, inside one of the operator's write roots.
    pub path: String,
    /// Must be true: the user approved writing this file.
    #[serde(default)]
    pub approved: bool,
    /// Replace the file if it exists (default false).
    #[serde(default)]
    pub overwrite: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportEvidenceBundleInput {
    /// A bundle file written by export_evidence_bundle, under the read roots.
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordUnknownInput {
    /// The open question (1-1000 characters; whitespace runs count as one).
    pub question: String,
    /// The area it belongs to, e.g. `networking` (1-100 characters).
    pub domain: String,
    pub severity: Severity,
    /// Held Evidence that bears on the question (at most 100).
    #[serde(default)]
    pub supporting_evidence_ids: Vec<String>,
    /// Held Evidence that contradicts a working answer (at most 100).
    #[serde(default)]
    pub contradicting_evidence_ids: Vec<String>,
    /// The authority resolving Evidence must have.
    #[serde(default)]
    pub required_authority: Option<Authority>,
    /// The least confidence resolving Evidence must have.
    #[serde(default)]
    pub required_confidence: Option<Confidence>,
    /// Probes that might settle it (at most 20).
    #[serde(default)]
    pub recommended_probes: Vec<Probe>,
    /// Links to existing unknowns (at most 100; depends-on may not cycle).
    #[serde(default)]
    pub relationships: Vec<Relationship>,
    /// Must be true: the user approved recording this unknown.
    #[serde(default)]
    pub approved: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListUnknownsInput {
    #[serde(default)]
    pub status: Option<Status>,
    #[serde(default)]
    pub severity: Option<Severity>,
    /// Exact domain.
    #[serde(default)]
    pub domain: Option<String>,
    /// First item of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Page size (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// The whole new state; what is omitted becomes empty.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUnknownInput {
    pub unknown_id: String,
    /// The head revision this update replaces (compare-and-swap).
    pub expected_revision: u64,
    pub status: Status,
    pub severity: Severity,
    #[serde(default)]
    pub supporting_evidence_ids: Vec<String>,
    #[serde(default)]
    pub contradicting_evidence_ids: Vec<String>,
    #[serde(default)]
    pub required_authority: Option<Authority>,
    #[serde(default)]
    pub required_confidence: Option<Confidence>,
    #[serde(default)]
    pub recommended_probes: Vec<Probe>,
    #[serde(default)]
    pub relationships: Vec<Relationship>,
    /// Required exactly when status is resolved.
    #[serde(default)]
    pub resolution: Option<Resolution>,
    /// Must be true: the user approved this change.
    #[serde(default)]
    pub approved: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyUnknownResolutionInput {
    pub unknown_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareFunctionsInput {
    /// Evidence ID (`ev_…`) of a retained analyze_function result: the left (older, original) side.
    pub left_evidence_id: String,
    /// Evidence ID (`ev_…`) of a retained analyze_function result: the right (newer, reconstructed) side.
    pub right_evidence_id: String,
}

/// The outcome a claim expects on its dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedOutcome {
    /// Both sides seen completely and equal.
    Unchanged,
    /// Any observed difference (changed, added or removed).
    Changed,
    /// Only additions on the right side.
    Added,
    /// Only removals from the left side.
    Removed,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// Unique within the specification; 1-128 characters.
    pub claim_id: String,
    /// What the claim asserts, for people; 1-512 characters.
    pub title: String,
    /// Evidence ID (`ev_…`) of a retained comparison (compare_functions or another comparison tool).
    pub comparison_evidence_id: String,
    /// The comparison dimension the claim is about, e.g. `instructions`, `callees`; 1-64 characters.
    pub dimension: String,
    /// The outcome expected on that dimension.
    pub expected: ExpectedOutcome,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReconstructionSpec {
    /// Must be 1.
    pub schema_version: u32,
    /// Name of the specification; 1-256 characters.
    pub name: String,
    /// 1-100 claims with unique claim ids.
    #[schemars(length(min = 1, max = 100))]
    pub claims: Vec<ClaimSpec>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyReconstructionInput {
    /// A finite reconstruction specification.
    pub specification: ReconstructionSpec,
}

/// Input of `inspect_artifact`: traversal limits and one page of each list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArtifactInput {
    /// Traversal limits; each field defaults to (and may not exceed) its maximum.
    #[serde(default)]
    pub limits: Option<crate::artifacts::Limits>,
    /// First occurrence of the page (default 0).
    #[serde(default)]
    pub occurrence_offset: Option<u64>,
    /// Occurrences per page, 1-500 (default 40).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub occurrence_limit: Option<u32>,
    /// First node (distinct content) of the page (default 0).
    #[serde(default)]
    pub node_offset: Option<u64>,
    /// Nodes per page, 1-500 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub node_limit: Option<u32>,
    /// First edge of the page (default 0).
    #[serde(default)]
    pub edge_offset: Option<u64>,
    /// Edges per page, 1-500 (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub edge_limit: Option<u32>,
}

/// Input of `compare_artifacts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareArtifactsInput {
    /// The earlier side: a manifest id (`agm_…`) or the evidence_id of one of
    /// its `inspect_artifact` pages.
    pub left: String,
    /// The later side, the same way.
    pub right: String,
    /// First change of the page (default 0).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Changes per page, 1-500 (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

/// Input of `capture_process_scenario`: one bounded run and the question
/// it should answer. Nothing runs unless the operator enabled capture and
/// `approved` is true.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureProcessScenarioInput {
    /// Absolute path of the program, inside an operator executable root
    /// once every symlink is resolved.
    pub executable: String,
    /// Absolute path of the directory it runs in, inside an operator
    /// working root; its files are listed before and after the run.
    pub working_directory: String,
    /// `argv[1..]` (at most 256; `argv[0]` is the executable).
    #[serde(default)]
    pub arguments: Vec<String>,
    /// The whole environment (at most 256 entries; nothing is inherited).
    /// A `secret: true` value is never recorded.
    #[serde(default)]
    pub environment: Vec<crate::capture::EnvVar>,
    /// Text fed to stdin (at most 1 MiB); stdin is /dev/null when absent.
    #[serde(default)]
    pub stdin: Option<String>,
    /// Wall-clock limit, 1-300000 ms (default 30000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 300000))]
    pub timeout_ms: Option<u64>,
    /// The run ends after this long without output, 1-300000 ms (default 30000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 300000))]
    pub idle_timeout_ms: Option<u64>,
    /// Limits on the process and on what is kept; absent fields take
    /// their defaults, and a value above its maximum is refused.
    #[serde(default)]
    pub limits: Option<crate::capture::CaptureLimits>,
    /// What the run should answer (1-1000 characters); recorded with it.
    #[schemars(length(min = 1, max = 1000))]
    pub question: String,
    /// Must be true: the user approved running this program.
    #[serde(default)]
    pub approved: bool,
}

/// Input of `compare_process_captures`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareProcessCapturesInput {
    /// The earlier run: the evidence_id of a `capture_process_scenario` result.
    pub left_evidence_id: String,
    /// The later run, the same way.
    pub right_evidence_id: String,
}

/// Input of `correlate_static_and_runtime`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrelateStaticAndRuntimeInput {
    /// The evidence_id of a `capture_process_scenario` result that crashed.
    pub capture_evidence_id: String,
    /// Default: the current document.
    #[serde(default)]
    pub document: Option<String>,
}

/// How `analyze_javascript_application` should read `input_path`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApplicationFormat {
    /// A directory is read as a directory, a file as an `.asar` archive.
    #[default]
    Auto,
    /// The path must be a directory.
    Directory,
    /// The path must be an `.asar` file.
    Asar,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeJavascriptApplicationInput {
    /// Absolute path of an application directory or an `.asar` archive,
    /// inside the operator's read roots (1-16384 characters).
    pub input_path: String,
    /// `auto` (default), `directory` or `asar`; a path of the other kind is
    /// an error.
    #[serde(default)]
    pub format: ApplicationFormat,
    /// Read `sourceMappingURL` maps beside minified files (default false).
    #[serde(default)]
    pub read_source_maps: bool,
    /// Analysis limits; each field defaults to (and may not exceed) its maximum.
    #[serde(default)]
    pub limits: Option<crate::javascript::Limits>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectAnalysisViewInput {
    /// The evidence_id of an analyze_javascript_application, binary_overview
    /// or inspect_binary_layout result.
    pub evidence_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceApplicationFeatureInput {
    /// The evidence_id of an analyze_javascript_application result.
    pub evidence_id: String,
    pub seed: FeatureSeed,
    /// `both` (default), `forward` or `backward`.
    #[serde(default)]
    pub direction: TraceDirection,
    #[serde(default)]
    pub limits: TraceLimits,
    /// Also list every node and edge the trace touched, with node and edge
    /// ids on every step (default false: their counts).
    #[serde(default)]
    pub include_subgraph: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareApplicationVersionsInput {
    /// The earlier version: evidence_id of an analyze_javascript_application result.
    pub left_evidence_id: String,
    /// The later version, the same way (the same id twice yields no differences).
    pub right_evidence_id: String,
}
