//! The declarative model of the two catalogs: guided prompts (`prompts/*.toml`)
//! and tools (`src/tools/catalog.toml`).
//!
//! This file is compiled twice: into the crate and into `build.rs` (through
//! `#[path]`), so the build, `rea prompts lint` and the `--prompts-dir` reload
//! path all read the files with one set of types. Keep it free of crate-internal
//! imports.

use serde::Deserialize;

// build.rs compiles this file without reading the constant.
#[allow(unused_imports)]
pub use super::hidden::MAX_VALUE_SCALARS;

/// Where a completable argument draws its suggestions from. A closed set: the
/// validator rejects any other family name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionFamily {
    Document,
    Procedure,
    Provider,
    Evidence,
    Capture,
    Manifest,
    Occurrence,
    Unknown,
}

impl CompletionFamily {
    pub const ALL: [CompletionFamily; 8] = [
        CompletionFamily::Document,
        CompletionFamily::Procedure,
        CompletionFamily::Provider,
        CompletionFamily::Evidence,
        CompletionFamily::Capture,
        CompletionFamily::Manifest,
        CompletionFamily::Occurrence,
        CompletionFamily::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CompletionFamily::Document => "document",
            CompletionFamily::Procedure => "procedure",
            CompletionFamily::Provider => "provider",
            CompletionFamily::Evidence => "evidence",
            CompletionFamily::Capture => "capture",
            CompletionFamily::Manifest => "manifest",
            CompletionFamily::Occurrence => "occurrence",
            CompletionFamily::Unknown => "unknown",
        }
    }
}

/// `prompts/catalog.toml`: the order in which prompts are listed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogOrder {
    pub prompts: Vec<String>,
}

/// One `prompts/<name>.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    pub name: String,
    pub title: String,
    pub description: String,
    pub objective: String,
    /// Tools the rendered prompt offers as optional starting points, in the
    /// order the template cites them.
    pub starting_points: Vec<String>,
    #[serde(default)]
    pub arguments: Vec<ArgumentSpec>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentSpec {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub completion: Option<CompletionFamily>,
}

impl PromptSpec {
    /// The part of a prompt that only a rebuild may change: argument names,
    /// order, required flags and completion families.
    pub fn shape(&self) -> Vec<(String, bool, Option<CompletionFamily>)> {
        self.arguments
            .iter()
            .map(|a| (a.name.clone(), a.required, a.completion))
            .collect()
    }
}

/// `src/tools/catalog.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCatalogSpec {
    pub tools: Vec<ToolSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    /// The module of `crate::tools` that holds (or re-exports) the tool's
    /// `impl Tool`, a snake_case identifier; the generated registry names it.
    pub module: String,
    pub title: String,
    pub description: String,
    /// What calling the tool may do. Empty means a pure read of session state.
    #[serde(default)]
    pub effects: Vec<Effect>,
    /// Whether the tool fails with `target_required` when no target is open.
    pub requires_target: bool,
    /// The top-level fields of the tool's input. A unit test holds them
    /// equal to the input schema, so templates can be checked against them
    /// without the schema (which only the compiled crate knows).
    pub parameters: Vec<String>,
}

/// What a template may cite: every tool by name, with its parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolIndex {
    tools: std::collections::BTreeMap<String, Vec<String>>,
}

impl ToolIndex {
    pub fn new(tools: &[ToolSpec]) -> ToolIndex {
        ToolIndex {
            tools: tools
                .iter()
                .map(|t| (t.name.clone(), t.parameters.clone()))
                .collect(),
        }
    }

    pub fn contains(&self, tool: &str) -> bool {
        self.tools.contains_key(tool)
    }

    /// The parameters of `tool`; `None` for a tool not in the catalog.
    pub fn parameters(&self, tool: &str) -> Option<&[String]> {
        self.tools.get(tool).map(Vec::as_slice)
    }

    /// Tool names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    ReadsTarget,
    MutatesSession,
    LaunchesProcess,
    WritesFiles,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::ReadsTarget => "reads_target",
            Effect::MutatesSession => "mutates_session",
            Effect::LaunchesProcess => "launches_process",
            Effect::WritesFiles => "writes_files",
        }
    }
}
