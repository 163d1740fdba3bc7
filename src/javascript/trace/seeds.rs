//! Seed matching for `trace_application_feature`: which nodes a seed
//! names, per seed kind, exact or by substring, with or without case.

use serde::Serialize;
use serde_json::Value;

use super::{FeatureSeed, Layer, SeedKind, SeedMatch, attr_str, attr_strings};
use crate::javascript::{Analysis, Node, NodeKind};

/// Most characters of a seed value.
pub const MAX_SEED_CHARS: usize = 4096;
/// Most string attribute values a `string` seed reads per node.
const MAX_STRINGS_PER_NODE: usize = 512;
/// Deepest attribute nesting a `string` seed reads.
const MAX_ATTRIBUTE_DEPTH: usize = 4;

/// One node a seed matched, and the value that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeedHit {
    pub node_id: String,
    pub kind: NodeKind,
    pub name: String,
    pub layer: Layer,
    pub matched: String,
}

/// The seed's matches in node order: the first `cap`, and the total.
pub fn matches(analysis: &Analysis, seed: &FeatureSeed, cap: usize) -> (Vec<SeedHit>, usize) {
    let matcher = Matcher::new(seed);
    let mut hits = Vec::new();
    let mut total = 0;
    for node in &analysis.nodes {
        let Some(matched) = candidates(node, seed.kind)
            .into_iter()
            .find(|c| matcher.hits(c))
        else {
            continue;
        };
        total += 1;
        if hits.len() < cap {
            hits.push(SeedHit {
                node_id: node.node_id.clone(),
                kind: node.kind,
                name: node.name.clone(),
                layer: Layer::of(node),
                matched,
            });
        }
    }
    (hits, total)
}

/// Whether `text` matches the seed (used to pick the exports to show).
pub fn seed_hits(seed: &FeatureSeed, text: &str) -> bool {
    Matcher::new(seed).hits(text)
}

struct Matcher {
    needle: String,
    mode: SeedMatch,
    case_sensitive: bool,
}

impl Matcher {
    fn new(seed: &FeatureSeed) -> Matcher {
        Matcher {
            needle: if seed.case_sensitive {
                seed.value.clone()
            } else {
                seed.value.to_lowercase()
            },
            mode: seed.match_mode,
            case_sensitive: seed.case_sensitive,
        }
    }

    fn hits(&self, text: &str) -> bool {
        let folded;
        let text = if self.case_sensitive {
            text
        } else {
            folded = text.to_lowercase();
            &folded
        };
        match self.mode {
            SeedMatch::Exact => text == self.needle,
            SeedMatch::Contains => text.contains(&self.needle),
        }
    }
}

/// The values of `node` a seed of `kind` is compared with, in order.
fn candidates(node: &Node, kind: SeedKind) -> Vec<String> {
    let name = || vec![node.name.clone()];
    match (kind, node.kind) {
        (SeedKind::NodeId, _) => vec![node.node_id.clone()],
        (SeedKind::Channel, NodeKind::IpcChannel) => name(),
        (SeedKind::Api, NodeKind::ExposedApi) => std::iter::once(node.name.clone())
            .chain(
                attr_strings(node, "members")
                    .into_iter()
                    .map(|m| format!("{}.{m}", node.name)),
            )
            .collect(),
        (SeedKind::Module, NodeKind::Module | NodeKind::HtmlPage | NodeKind::NativeModule) => {
            name()
        }
        (SeedKind::Route, NodeKind::HtmlPage | NodeKind::Url | NodeKind::Protocol) => name(),
        (SeedKind::Route, NodeKind::Webview) => attr_str(node, "src")
            .map(|s| vec![s.to_owned()])
            .unwrap_or_default(),
        (SeedKind::NativeExport, NodeKind::NativeModule) => attr_strings(node, "exports")
            .into_iter()
            .map(str::to_owned)
            .collect(),
        (SeedKind::String, _) => {
            let mut out = name();
            for value in node.attributes.values() {
                strings(value, 0, &mut out);
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The string values inside an attribute, bounded in depth and count.
fn strings(value: &Value, depth: usize, out: &mut Vec<String>) {
    if out.len() >= MAX_STRINGS_PER_NODE || depth > MAX_ATTRIBUTE_DEPTH {
        return;
    }
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, depth + 1, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, depth + 1, out)),
        _ => {}
    }
}
