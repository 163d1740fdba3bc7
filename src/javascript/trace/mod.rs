//! `trace_application_feature`: a bounded breadth-first walk of a retained
//! application graph from the nodes a seed names, reporting the shortest
//! path to every window, page, module and native addon it reaches, the
//! layers those paths cross, and where native code takes over.
//!
//! Unresolved edges are reported where met and never followed. A package
//! or built-in reached from elsewhere is not walked backwards: every module
//! imports `electron`, and a shared dependency does not join its importers
//! into one feature. Its forward edges (a package shipping an addon) are
//! still followed.
//!
//! A pure walk over an [`Analysis`]: `trace_application_feature` runs it on
//! a retained record and records the result.

mod index;
mod layer;
mod request;
pub mod seeds;

use std::collections::{BTreeSet, HashMap, VecDeque};

use serde::Serialize;
use serde_json::json;

pub use index::{Graph, attr_str, attr_strings};
pub use layer::Layer;
pub use request::{FeatureSeed, SeedKind, SeedMatch, TraceDirection, TraceLimits};
pub use seeds::MAX_SEED_CHARS;

use crate::javascript::{Analysis, Edge, EdgeKind, InputFormat, Node, NodeKind, SourceLocation};
use seeds::SeedHit;

/// Most items listed per list of a trace (the total is always given).
const LIST_CAP: usize = 50;

/// Most exports named per native hand-off when none matched the seed.
const HANDOFF_EXPORTS: usize = 10;

/// The edge a step was reached by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Via {
    pub edge_id: String,
    pub kind: EdgeKind,
    pub detail: Option<String>,
    /// `forward` (along the edge) or `backward` (against it).
    pub direction: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub node_id: String,
    pub kind: NodeKind,
    pub name: String,
    pub layer: Layer,
    pub location: SourceLocation,
    /// How this step was reached (none for the seed).
    pub via: Option<Via>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Path {
    /// The layer of the node the path reaches.
    pub target_layer: Layer,
    /// The distinct layers along the path, in order of appearance.
    pub layers: Vec<Layer>,
    pub crosses_layers: bool,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BriefNode {
    pub node_id: String,
    pub kind: NodeKind,
    pub name: String,
    pub layer: Layer,
    pub depth: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BriefEdge {
    pub edge_id: String,
    pub kind: EdgeKind,
    pub from: String,
    pub to: Option<String>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Handoff {
    pub node_id: String,
    /// Logical path inside the analysed application.
    pub path: String,
    pub sha256: Option<String>,
    pub format: Option<String>,
    pub architectures: Vec<String>,
    /// Exports matching the seed, or the first few.
    pub exports: Vec<String>,
    pub exports_total: Option<u64>,
    pub unpacked: Option<bool>,
    pub next: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unresolved {
    pub edge_id: String,
    pub kind: EdgeKind,
    pub from: String,
    pub from_name: String,
    pub detail: Option<String>,
    pub reason: Option<String>,
    pub location: Option<SourceLocation>,
}

/// A capped list with its total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capped<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub capped: bool,
}

impl<T> Capped<T> {
    fn of(mut all: Vec<T>, cap: usize) -> Capped<T> {
        let total = all.len();
        all.truncate(cap);
        Capped {
            items: all,
            total,
            capped: total > cap,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceCoverage {
    /// `complete` or `truncated`.
    pub status: &'static str,
    /// The limits that cut the trace, in declaration order.
    pub limits_hit: Vec<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    pub analysis_id: String,
    pub seed_matches: Capped<SeedHit>,
    pub layers_reached: Vec<Layer>,
    pub paths: Capped<Path>,
    pub subgraph: Subgraph,
    pub native_handoffs: Vec<Handoff>,
    pub unresolved_edges: Capped<Unresolved>,
    pub coverage: TraceCoverage,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subgraph {
    pub nodes: Vec<BriefNode>,
    pub edges: Vec<BriefEdge>,
}

impl Trace {
    /// What the trace could not show, as Evidence limitations.
    pub fn limitations(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .coverage
            .limits_hit
            .iter()
            .map(|l| format!("the trace stopped at its {l} limit; what lies beyond is not shown"))
            .collect();
        if self.unresolved_edges.total > 0 {
            out.push(format!(
                "{} unresolved edge(s) met were not followed",
                self.unresolved_edges.total
            ));
        }
        out
    }
}

/// Where the walk came from to reach a node.
struct Visit {
    depth: u32,
    parent: Option<(String, usize, &'static str)>,
}

/// The whole trace over one analysis.
pub fn trace(
    analysis: &Analysis,
    seed: &FeatureSeed,
    direction: TraceDirection,
    limits: TraceLimits,
) -> Trace {
    let graph = Graph::new(analysis);
    let (hits, total_hits) = seeds::matches(analysis, seed, limits.max_seed_matches as usize);
    let mut hit = BTreeSet::new();
    if total_hits > hits.len() {
        hit.insert("max_seed_matches");
    }

    let mut visits: HashMap<String, Visit> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut queue = VecDeque::new();
    for h in &hits {
        if !visits.contains_key(&h.node_id) {
            visits.insert(
                h.node_id.clone(),
                Visit {
                    depth: 0,
                    parent: None,
                },
            );
            order.push(h.node_id.clone());
            queue.push_back(h.node_id.clone());
        }
    }
    let mut followed: Vec<usize> = Vec::new();
    let mut followed_set: BTreeSet<usize> = BTreeSet::new();
    let mut unresolved: Vec<usize> = Vec::new();
    let edge_index: HashMap<&str, usize> = analysis
        .edges
        .iter()
        .enumerate()
        .map(|(i, e)| (e.edge_id.as_str(), i))
        .collect();
    let forward = direction != TraceDirection::Backward;
    let backward = direction != TraceDirection::Forward;

    'walk: while let Some(id) = queue.pop_front() {
        let depth = visits[&id].depth;
        let Some(node) = graph.node(&id) else {
            continue;
        };
        let mut next: Vec<(&Edge, &str, &'static str)> = Vec::new();
        if forward {
            for edge in graph.outgoing(&id) {
                match &edge.to {
                    Some(to) => next.push((edge, to.as_str(), "forward")),
                    None => {
                        let i = edge_index[edge.edge_id.as_str()];
                        if !unresolved.contains(&i) {
                            unresolved.push(i);
                        }
                    }
                }
            }
        }
        let hub = depth > 0 && matches!(node.kind, NodeKind::Builtin | NodeKind::Package);
        if backward && !hub {
            for edge in graph.incoming(&id) {
                next.push((edge, edge.from.as_str(), "backward"));
            }
        }
        if depth >= limits.max_depth {
            if next.iter().any(|(_, n, _)| !visits.contains_key(*n)) {
                hit.insert("max_depth");
            }
            continue;
        }
        for (edge, neighbour, way) in next {
            let i = edge_index[edge.edge_id.as_str()];
            if !followed_set.contains(&i) {
                if followed.len() >= limits.max_edges as usize {
                    hit.insert("max_edges");
                    break 'walk;
                }
                followed.push(i);
                followed_set.insert(i);
            }
            if visits.contains_key(neighbour) || graph.node(neighbour).is_none() {
                continue;
            }
            if visits.len() >= limits.max_nodes as usize {
                hit.insert("max_nodes");
                continue;
            }
            visits.insert(
                neighbour.to_owned(),
                Visit {
                    depth: depth + 1,
                    parent: Some((id.clone(), i, way)),
                },
            );
            order.push(neighbour.to_owned());
            queue.push_back(neighbour.to_owned());
        }
    }

    // Paths: to every reached node of interest, nearest first.
    let mut targets: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|id| visits[*id].depth > 0)
        .filter(|id| graph.node(id).is_some_and(is_destination))
        .collect();
    targets.sort_by_key(|id| (visits[*id].depth, graph.position(id)));
    let path_total = targets.len();
    if path_total > limits.max_paths as usize {
        hit.insert("max_paths");
    }
    let paths: Vec<Path> = targets
        .iter()
        .take(limits.max_paths as usize)
        .map(|id| path_to(&graph, &visits, id))
        .collect();

    let mut reached_nodes: Vec<&Node> = order.iter().filter_map(|id| graph.node(id)).collect();
    reached_nodes.sort_by_key(|n| graph.position(&n.node_id));
    let layers_reached: Vec<Layer> = reached_nodes
        .iter()
        .map(|n| Layer::of(n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let native_handoffs: Vec<Handoff> = reached_nodes
        .iter()
        .filter(|n| n.kind == NodeKind::NativeModule)
        .map(|n| handoff(n, seed, analysis.format))
        .collect();
    let subgraph = Subgraph {
        nodes: reached_nodes
            .iter()
            .map(|n| BriefNode {
                node_id: n.node_id.clone(),
                kind: n.kind,
                name: n.name.clone(),
                layer: Layer::of(n),
                depth: visits[&n.node_id].depth,
            })
            .collect(),
        edges: followed_set
            .iter()
            .map(|&i| {
                let e = &analysis.edges[i];
                BriefEdge {
                    edge_id: e.edge_id.clone(),
                    kind: e.kind,
                    from: e.from.clone(),
                    to: e.to.clone(),
                    detail: e.detail.clone(),
                }
            })
            .collect(),
    };
    unresolved.sort_unstable();
    let unresolved_items: Vec<Unresolved> = unresolved
        .iter()
        .map(|&i| {
            let e = &analysis.edges[i];
            Unresolved {
                edge_id: e.edge_id.clone(),
                kind: e.kind,
                from: e.from.clone(),
                from_name: graph
                    .node(&e.from)
                    .map(|n| n.name.clone())
                    .unwrap_or_default(),
                detail: e.detail.clone(),
                reason: e.unresolved.clone(),
                location: e.location.clone(),
            }
        })
        .collect();
    let limits_hit: Vec<&'static str> = limits
        .fields()
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| hit.contains(name))
        .collect();
    let coverage = TraceCoverage {
        status: if limits_hit.is_empty() {
            "complete"
        } else {
            "truncated"
        },
        limits_hit,
    };
    let summary = summary(
        seed,
        total_hits,
        &subgraph,
        &layers_reached,
        &native_handoffs,
        unresolved_items.len(),
        &coverage,
    );
    Trace {
        analysis_id: analysis.analysis_id.clone(),
        seed_matches: Capped {
            items: hits,
            total: total_hits,
            capped: total_hits > limits.max_seed_matches as usize,
        },
        layers_reached,
        paths: Capped {
            items: paths,
            total: path_total,
            capped: path_total > limits.max_paths as usize,
        },
        subgraph,
        native_handoffs,
        unresolved_edges: Capped::of(unresolved_items, LIST_CAP),
        coverage,
        summary,
    }
}

/// Windows, pages, native addons and modules of a known process: the
/// places a feature lives in, one per layer.
fn is_destination(node: &Node) -> bool {
    match node.kind {
        NodeKind::Window | NodeKind::HtmlPage | NodeKind::NativeModule => true,
        NodeKind::Module => Layer::of(node) != Layer::Unknown,
        _ => false,
    }
}

fn path_to(graph: &Graph<'_>, visits: &HashMap<String, Visit>, target: &str) -> Path {
    let mut steps = Vec::new();
    let mut cursor = Some(target.to_owned());
    while let Some(id) = cursor {
        let visit = &visits[&id];
        let node = graph.node(&id);
        let via = visit.parent.as_ref().map(|(_, i, way)| {
            let e = &graph.analysis.edges[*i];
            Via {
                edge_id: e.edge_id.clone(),
                kind: e.kind,
                detail: e.detail.clone(),
                direction: way,
            }
        });
        if let Some(node) = node {
            steps.push(Step {
                node_id: node.node_id.clone(),
                kind: node.kind,
                name: node.name.clone(),
                layer: Layer::of(node),
                location: node.location.clone(),
                via,
            });
        }
        cursor = visit.parent.as_ref().map(|(p, _, _)| p.clone());
    }
    steps.reverse();
    let mut layers: Vec<Layer> = Vec::new();
    for step in &steps {
        if !layers.contains(&step.layer) {
            layers.push(step.layer);
        }
    }
    Path {
        target_layer: steps.last().map(|s| s.layer).unwrap_or(Layer::Unknown),
        crosses_layers: layers.iter().filter(|l| **l != Layer::Unknown).count() > 1,
        layers,
        steps,
    }
}

fn handoff(node: &Node, seed: &FeatureSeed, format: InputFormat) -> Handoff {
    let exports = attr_strings(node, "exports");
    let matched: Vec<String> = if seed.kind == SeedKind::NativeExport {
        exports
            .iter()
            .filter(|e| seeds::seed_hits(seed, e))
            .map(|e| (*e).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    let shown = if matched.is_empty() {
        exports
            .iter()
            .take(HANDOFF_EXPORTS)
            .map(|e| (*e).to_owned())
            .collect()
    } else {
        matched
    };
    let unpacked = node.attributes.get("unpacked").and_then(|v| v.as_bool());
    Handoff {
        node_id: node.node_id.clone(),
        path: node.name.clone(),
        sha256: attr_str(node, "sha256").map(str::to_owned),
        format: attr_str(node, "format").map(str::to_owned),
        architectures: attr_strings(node, "architectures")
            .into_iter()
            .map(str::to_owned)
            .collect(),
        exports: shown,
        exports_total: node
            .attributes
            .get("exports_total")
            .and_then(|v| v.as_u64()),
        unpacked,
        next: next_step(&node.name, format, unpacked),
    }
}

/// How to continue in native code. The record keeps no local path, so the
/// file is named relative to what was analysed.
fn next_step(path: &str, format: InputFormat, unpacked: Option<bool>) -> serde_json::Value {
    let continue_with = "then binary_overview, inspect_binary_layout and trace_feature continue in \
                         native code";
    match (format, unpacked) {
        (InputFormat::Directory, _) => json!({
            "tool": "open_binary",
            "relative_path": path,
            "relative_to": "the analysed directory",
            "note": format!("Call open_binary with the analysed directory joined with `{path}`; {continue_with}."),
        }),
        (InputFormat::Asar, Some(true)) => json!({
            "tool": "open_binary",
            "relative_path": path,
            "relative_to": "<archive>.asar.unpacked",
            "note": format!("The addon is unpacked: call open_binary with `<archive>.asar.unpacked/{path}` beside the analysed archive; {continue_with}."),
        }),
        (InputFormat::Asar, _) => json!({
            "tool": "open_binary",
            "relative_path": path,
            "relative_to": null,
            "extract_first": true,
            "note": format!("The addon is packed inside the archive: extract `{path}` from it first (open_binary on the .asar with inspect_artifact lists it), then call open_binary on the extracted file; {continue_with}."),
        }),
    }
}

fn summary(
    seed: &FeatureSeed,
    matches: usize,
    subgraph: &Subgraph,
    layers: &[Layer],
    handoffs: &[Handoff],
    unresolved: usize,
    coverage: &TraceCoverage,
) -> String {
    let kind = json!(seed.kind);
    let kind = kind.as_str().unwrap_or("seed");
    if matches == 0 {
        return format!(
            "No node matches the {kind} seed; inspect_analysis_view lists seeds that do."
        );
    }
    let layers: Vec<String> = layers
        .iter()
        .map(|l| json!(l).as_str().unwrap_or("unknown").to_owned())
        .collect();
    let mut text = format!(
        "The {kind} seed matched {matches} node(s); the trace reached {} node(s) over {} edge(s) \
         in the layers {}",
        subgraph.nodes.len(),
        subgraph.edges.len(),
        layers.join(", "),
    );
    if !handoffs.is_empty() {
        let names: Vec<&str> = handoffs.iter().map(|h| h.path.as_str()).collect();
        text.push_str(&format!("; native code takes over in {}", names.join(", ")));
    }
    if unresolved > 0 {
        text.push_str(&format!(
            "; {unresolved} unresolved edge(s) were not followed"
        ));
    }
    if coverage.limits_hit.is_empty() {
        text.push_str("; complete.");
    } else {
        text.push_str(&format!(
            "; truncated by {}.",
            coverage.limits_hit.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests;
