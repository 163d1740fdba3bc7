//! `inspect_analysis_view`: a compact place to start from a retained
//! analysis. For a JavaScript application: what it is, where it starts,
//! its windows, the seeds worth tracing, the riskiest observations and the
//! unknowns; for a native document (`binary_overview`,
//! `inspect_binary_layout` Evidence) the native counterpart. Every list is
//! capped with its total, so a large application stays a short answer.

use crate::tools::tool::{Call, Tool};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{ANALYZE_OPERATION, GRAPH_OPERATION, analysis_of, graph_record, native_view};
use crate::javascript::trace::Layer;
use crate::javascript::trace::{Graph, attr_str, attr_strings};
use crate::javascript::{Analysis, EdgeKind, Node, NodeKind};
use crate::tools::compare::capped;
use crate::tools::inputs::InspectAnalysisViewInput;
use crate::tools::shared::ledger::{fetch_operation, record_derived};
use crate::tools::{HandlerResult, ToolName};

/// Most observations shown (highest severity first).
const OBSERVATIONS: usize = 20;
/// Most unknowns shown individually.
const UNKNOWNS: usize = 10;
/// Most exports offered as seeds per native addon.
const EXPORTS_PER_ADDON: usize = 10;

pub struct InspectAnalysisView;

impl Tool for InspectAnalysisView {
    const NAME: ToolName = ToolName::InspectAnalysisView;
    type Input = InspectAnalysisViewInput;

    fn run(input: InspectAnalysisViewInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let evidence = fetch_operation(
            session,
            "evidence_id",
            &input.evidence_id,
            &[
                ANALYZE_OPERATION,
                GRAPH_OPERATION,
                ToolName::BinaryOverview.as_str(),
                ToolName::InspectBinaryLayout.as_str(),
            ],
        )?;
        let application =
            [ANALYZE_OPERATION, GRAPH_OPERATION].contains(&evidence.body.operation.as_str());
        let (result, limitations) = if application {
            let graph = graph_record(session, "evidence_id", evidence)?;
            let analysis = analysis_of(&graph, "evidence_id")?;
            let mut result = view(&analysis);
            // The seeds are ready to use with this very record.
            result["trace_with"] = json!({
                "tool": ToolName::TraceApplicationFeature.as_str(),
                "evidence_id": input.evidence_id,
            });
            (result, analysis.limitations.clone())
        } else {
            native_view::view(&evidence)
        };
        record_derived(
            session,
            ToolName::InspectAnalysisView,
            json!({"evidence_id": input.evidence_id}),
            result,
            limitations,
        )
    }
}

/// The view of one application analysis.
pub fn view(analysis: &Analysis) -> Value {
    let graph = Graph::new(analysis);
    let package = analysis.package.as_ref();
    let entry_points: Vec<Value> = analysis
        .entry_points
        .iter()
        .map(|e| {
            let layer = graph.node(&e.node_id).map(Layer::of);
            json!({"kind": e.kind, "path": e.path, "node_id": e.node_id, "layer": layer})
        })
        .collect();
    let windows: Vec<Value> = nodes(analysis, NodeKind::Window)
        .map(|w| window(&graph, w))
        .collect();
    let mut observations: Vec<&crate::javascript::Observation> =
        analysis.findings.observations.iter().collect();
    observations.sort_by_key(|o| o.severity);
    let observation_total =
        analysis.findings.observations.len() as u64 + analysis.findings.omitted.observations;
    let mut unknowns_by_kind: BTreeMap<String, u64> = BTreeMap::new();
    for u in &analysis.findings.unknowns {
        let kind = json!(u.kind);
        *unknowns_by_kind
            .entry(kind.as_str().unwrap_or("unknown").to_owned())
            .or_default() += 1;
    }
    json!({
        "kind": "javascript-application",
        "application": {
            "name": package.and_then(|p| p.product_name.clone().or_else(|| p.name.clone())),
            "version": package.and_then(|p| p.version.clone()),
            "format": analysis.format,
            "analysis_id": analysis.analysis_id,
            "graph_sha256": analysis.graph_sha256,
            "root_sha256": analysis.root_sha256,
        },
        "entry_points": capped(&entry_points, Value::clone),
        "windows": capped(&windows, Value::clone),
        "seeds": seeds(&graph),
        "observations": {
            "items": observations.iter().take(OBSERVATIONS).collect::<Vec<_>>(),
            "total": observation_total,
            "capped": observation_total > OBSERVATIONS as u64,
        },
        "unknowns": {
            "by_kind": unknowns_by_kind,
            "first": analysis.findings.unknowns.iter().take(UNKNOWNS).collect::<Vec<_>>(),
            "total": analysis.findings.unknowns.len() as u64 + analysis.findings.omitted.unknowns,
            "unresolved_edges": analysis.statistics.unresolved_edges,
        },
        "coverage": analysis.coverage,
        "next": "Pass a seed to trace_application_feature with the analysis evidence_id \
                 (trace_with); native addons continue with open_binary.",
    })
}

fn nodes(analysis: &Analysis, kind: NodeKind) -> impl Iterator<Item = &Node> {
    analysis.nodes.iter().filter(move |n| n.kind == kind)
}

/// A window: its settings, who creates it, what it loads and its preload.
fn window(graph: &Graph<'_>, w: &Node) -> Value {
    let names =
        |nodes: Vec<&Node>| -> Vec<String> { nodes.iter().map(|n| n.name.clone()).collect() };
    let unresolved_loads: Vec<Value> = graph
        .outgoing(&w.node_id)
        .filter(|e| e.to.is_none() && matches!(e.kind, EdgeKind::LoadsPage | EdgeKind::Preload))
        .map(|e| json!({"kind": e.kind, "detail": e.detail, "reason": e.unresolved}))
        .collect();
    json!({
        "node_id": w.node_id,
        "location": w.location,
        "constructor": w.attributes.get("constructor"),
        "binding": w.attributes.get("binding"),
        "created_by": names(graph.sources(&w.node_id, EdgeKind::CreatesWindow)),
        "web_preferences": w.attributes.get("web_preferences"),
        "effective": w.attributes.get("effective"),
        "electron_major": w.attributes.get("electron_major"),
        "loads": names(graph.targets(&w.node_id, EdgeKind::LoadsPage)),
        "preload": names(graph.targets(&w.node_id, EdgeKind::Preload)),
        "unresolved": unresolved_loads,
    })
}

fn seed(kind: &str, value: &str, why: String) -> Value {
    json!({"kind": kind, "value": value, "match": "exact", "why": why})
}

/// Ready-to-use `trace_application_feature` seeds, by category.
fn seeds(graph: &Graph<'_>) -> Value {
    let analysis = graph.analysis;
    let files = |nodes: Vec<&Node>| -> String {
        let mut names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.join(", ")
    };

    // Channels: paired ones (a sender and a receiver) first.
    let mut channels: Vec<(bool, Value)> = nodes(analysis, NodeKind::IpcChannel)
        .map(|c| {
            let handlers = graph.sources(&c.node_id, EdgeKind::IpcHandle);
            let senders = graph.sources(&c.node_id, EdgeKind::IpcSend);
            let listeners = graph.sources(&c.node_id, EdgeKind::IpcListen);
            let paired = (!handlers.is_empty() && !senders.is_empty())
                || (!senders.is_empty() && !listeners.is_empty());
            let mut why = Vec::new();
            if !handlers.is_empty() {
                why.push(format!("handled in {}", files(handlers)));
            }
            if !senders.is_empty() {
                why.push(format!("sent from {}", files(senders)));
            }
            if !listeners.is_empty() {
                why.push(format!("listened to in {}", files(listeners)));
            }
            let why = format!(
                "IPC channel{}: {}",
                if paired {
                    " (paired)"
                } else {
                    " (one side only)"
                },
                why.join("; ")
            );
            (paired, seed("channel", &c.name, why))
        })
        .collect();
    channels.sort_by_key(|(paired, _)| !*paired);
    let channels: Vec<Value> = channels.into_iter().map(|(_, v)| v).collect();

    let apis: Vec<Value> = nodes(analysis, NodeKind::ExposedApi)
        .map(|a| {
            let members = attr_strings(a, "members");
            seed(
                "api",
                &a.name,
                format!(
                    "exposed to renderers by {} (members: {}); used by {}",
                    files(graph.sources(&a.node_id, EdgeKind::ExposesApi)),
                    if members.is_empty() {
                        "none seen".to_owned()
                    } else {
                        members.join(", ")
                    },
                    match files(graph.sources(&a.node_id, EdgeKind::UsesApi)) {
                        s if s.is_empty() => "no renderer seen".to_owned(),
                        s => s,
                    }
                ),
            )
        })
        .collect();

    let mut routes: Vec<Value> = Vec::new();
    for page in nodes(analysis, NodeKind::HtmlPage) {
        let windows = graph.sources(&page.node_id, EdgeKind::LoadsPage);
        if !windows.is_empty() {
            routes.push(seed(
                "route",
                &page.name,
                format!("page loaded by {} window(s)", windows.len()),
            ));
        }
    }
    for protocol in nodes(analysis, NodeKind::Protocol) {
        let methods = attr_strings(protocol, "methods");
        routes.push(seed(
            "route",
            &protocol.name,
            format!("custom protocol ({})", methods.join(", ")),
        ));
    }
    for url in nodes(analysis, NodeKind::Url) {
        let loaded = !graph.sources(&url.node_id, EdgeKind::LoadsPage).is_empty();
        let opened = !graph
            .sources(&url.node_id, EdgeKind::OpensExternal)
            .is_empty();
        let how = match (loaded, opened) {
            (true, _) => "URL loaded in a window",
            (false, true) => "URL opened externally",
            _ => "URL in a string literal",
        };
        routes.push(seed(
            "route",
            &url.name,
            format!(
                "{how} (host {})",
                attr_str(url, "host").unwrap_or("unknown")
            ),
        ));
    }

    let mut native: Vec<Value> = Vec::new();
    for addon in nodes(analysis, NodeKind::NativeModule) {
        let loaders = graph.sources(&addon.node_id, EdgeKind::LoadsNative);
        native.push(seed(
            "module",
            &addon.name,
            format!(
                "native addon ({}) loaded by {}",
                attr_str(addon, "format").unwrap_or("unknown format"),
                match files(loaders) {
                    s if s.is_empty() => "nothing seen".to_owned(),
                    s => s,
                }
            ),
        ));
        for export in attr_strings(addon, "exports")
            .into_iter()
            .take(EXPORTS_PER_ADDON)
        {
            native.push(seed(
                "native-export",
                export,
                format!("exported by {}", addon.name),
            ));
        }
    }

    let mut strings: Vec<Value> = Vec::new();
    for menu in nodes(analysis, NodeKind::Menu) {
        for label in attr_strings(menu, "labels") {
            strings.push(seed(
                "string",
                label,
                format!("menu label ({}:{})", menu.location.file, menu.location.line),
            ));
        }
    }

    json!({
        "channels": capped(&channels, Value::clone),
        "apis": capped(&apis, Value::clone),
        "routes": capped(&routes, Value::clone),
        "native": capped(&native, Value::clone),
        "strings": capped(&strings, Value::clone),
    })
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
