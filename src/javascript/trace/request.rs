//! What a trace is asked: the seed that starts it, the direction it walks
//! and its bounds. These are also the tool's input types, so their doc
//! comments are the schema's descriptions.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::javascript::JsError;

/// What a feature seed names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SeedKind {
    /// A node id (`jsn_…`).
    NodeId,
    /// An IPC channel name.
    Channel,
    /// An exposed API key, or `key.member`.
    Api,
    /// A module, page or native addon path.
    Module,
    /// Any node name or string attribute (menu labels, URLs, hosts).
    String,
    /// A page, URL, protocol or load target.
    Route,
    /// A symbol a native addon exports.
    NativeExport,
}

/// How a seed value is compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SeedMatch {
    #[default]
    Exact,
    Contains,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeatureSeed {
    pub kind: SeedKind,
    /// 1-4096 characters.
    pub value: String,
    /// `exact` (default) or `contains`.
    #[serde(default, rename = "match")]
    pub match_mode: SeedMatch,
    /// Compare case exactly (default true).
    #[serde(default = "yes")]
    pub case_sensitive: bool,
}

fn yes() -> bool {
    true
}

/// Which way edges are followed from the seed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TraceDirection {
    /// Along and against edges (default).
    #[default]
    Both,
    /// From an edge's source to its target only.
    Forward,
    /// From an edge's target to its source only.
    Backward,
}

/// Bounds of one trace; every field but `max_paths` (default 20) defaults
/// to its maximum, and none may exceed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceLimits {
    /// Most edges from a seed, 1-12.
    pub max_depth: u32,
    /// Most edges followed, 1-4000.
    pub max_edges: u32,
    /// Most nodes reached, 1-2000.
    pub max_nodes: u32,
    /// Most paths returned, 1-100 (default 20).
    pub max_paths: u32,
    /// Most seed matches started from, 1-25.
    pub max_seed_matches: u32,
}

impl TraceLimits {
    pub const MAX: TraceLimits = TraceLimits {
        max_depth: 12,
        max_edges: 4000,
        max_nodes: 2000,
        max_paths: 100,
        max_seed_matches: 25,
    };

    /// Each field with its value and maximum.
    pub fn fields(&self) -> [(&'static str, u32, u32); 5] {
        let m = TraceLimits::MAX;
        [
            ("max_depth", self.max_depth, m.max_depth),
            ("max_edges", self.max_edges, m.max_edges),
            ("max_nodes", self.max_nodes, m.max_nodes),
            ("max_paths", self.max_paths, m.max_paths),
            (
                "max_seed_matches",
                self.max_seed_matches,
                m.max_seed_matches,
            ),
        ]
    }

    /// Zero or over-the-maximum values are refused, never clamped.
    pub fn validate(&self) -> Result<(), JsError> {
        let fields = self
            .fields()
            .map(|(f, v, m)| (f, u64::from(v), u64::from(m)));
        match crate::ground::limits::out_of_range(fields) {
            Some((field, value, max)) => Err(JsError::LimitOutOfRange { field, value, max }),
            None => Ok(()),
        }
    }
}

impl Default for TraceLimits {
    /// The maxima, but 20 paths: the shortest paths say most, and every
    /// reached node is counted whatever the cap.
    fn default() -> Self {
        TraceLimits {
            max_paths: 20,
            ..TraceLimits::MAX
        }
    }
}
