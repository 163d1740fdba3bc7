//! `compare_application_versions`: two retained application analyses,
//! dimension by dimension, in the shared comparison vocabulary
//! ([`crate::tools::compare`]): keyed deltas whose additions and removals
//! count only when the other side was seen completely.
//!
//! Identity is what stays put between versions: logical paths for modules
//! and addons, names for dependencies, channels, APIs, protocols and hosts.
//! A window has no name: it is matched by (creating file, binding,
//! constructor) only when that key is unique on both sides; any other
//! window is listed as unmatched and never guessed at.

use crate::tools::shared::ledger::record_derived;
use crate::tools::tool::{Call, Tool};
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::fetch_analysis;
use crate::javascript::trace::{Graph, attr_str, attr_strings};
use crate::javascript::{Analysis, CoverageStatus, EdgeKind, NodeKind};
use crate::tools::compare::{
    ComparisonStatus, Completeness, KeyedDelta, capped, comparison_result, delta_status, dimension,
};
use crate::tools::inputs::CompareApplicationVersionsInput;
use crate::tools::{HandlerResult, ToolName};

pub struct CompareApplicationVersions;

impl Tool for CompareApplicationVersions {
    const NAME: ToolName = ToolName::CompareApplicationVersions;
    type Input = CompareApplicationVersionsInput;

    fn run(input: CompareApplicationVersionsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let left = fetch_analysis(session, "left_evidence_id", &input.left_evidence_id)?;
        let right = fetch_analysis(session, "right_evidence_id", &input.right_evidence_id)?;
        let (result, limitations) = compare(&left, &right);
        let parameters = json!({
            "left_evidence_id": input.left_evidence_id,
            "right_evidence_id": input.right_evidence_id,
            "left_analysis_id": left.analysis_id,
            "right_analysis_id": right.analysis_id,
        });
        record_derived(
            session,
            ToolName::CompareApplicationVersions,
            parameters,
            result,
            limitations,
        )
    }
}

/// The comparison result and its limitations.
pub fn compare(left: &Analysis, right: &Analysis) -> (Value, Vec<String>) {
    let completeness = Completeness {
        left: left.coverage.status == CoverageStatus::Complete,
        right: right.coverage.status == CoverageStatus::Complete,
    };
    let (lg, rg) = (Graph::new(left), Graph::new(right));
    let mut dimensions = Map::new();
    dimensions.insert("package".into(), package(left, right));
    dimensions.insert(
        "entry_points".into(),
        keyed(
            &entry_points(left),
            &entry_points(right),
            completeness,
            |_, _| json!(null),
        ),
    );
    dimensions.insert(
        "modules".into(),
        keyed(&modules(left), &modules(right), completeness, |_, _| {
            json!(null)
        }),
    );
    dimensions.insert(
        "dependencies".into(),
        keyed(
            &dependencies(left),
            &dependencies(right),
            completeness,
            |l, r| json!({"left": l, "right": r}),
        ),
    );
    dimensions.insert(
        "ipc_channels".into(),
        keyed(
            &channels(&lg),
            &channels(&rg),
            completeness,
            |l, r| json!({"left_sides": l, "right_sides": r}),
        ),
    );
    dimensions.insert(
        "exposed_apis".into(),
        keyed(
            &apis(left),
            &apis(right),
            completeness,
            |l, r| json!({"members_added": set_minus(r, l), "members_removed": set_minus(l, r)}),
        ),
    );
    dimensions.insert("windows".into(), windows(&lg, &rg, completeness));
    dimensions.insert(
        "native_modules".into(),
        keyed(&natives(left), &natives(right), completeness, |l, r| {
            json!({
                "left_sha256": l.0, "right_sha256": r.0,
                "exports_added": set_minus(&r.1, &l.1),
                "exports_removed": set_minus(&l.1, &r.1),
            })
        }),
    );
    dimensions.insert(
        "protocols".into(),
        keyed(
            &names(left, NodeKind::Protocol),
            &names(right, NodeKind::Protocol),
            completeness,
            |_, _| json!(null),
        ),
    );
    dimensions.insert(
        "url_hosts".into(),
        keyed(&hosts(left), &hosts(right), completeness, |_, _| {
            json!(null)
        }),
    );
    let mut limitations = Vec::new();
    for (name, side) in [("left", left), ("right", right)] {
        if side.coverage.status != CoverageStatus::Complete {
            limitations.push(format!(
                "{name}: the analysis coverage is {}; what it did not see is neither added nor \
                 removed",
                json!(side.coverage.status).as_str().unwrap_or("incomplete")
            ));
        }
    }
    let mut extra = Map::new();
    extra.insert("left".into(), side_summary(left));
    extra.insert("right".into(), side_summary(right));
    extra.insert("limitations".into(), json!(limitations));
    (comparison_result(dimensions, extra), limitations)
}

fn side_summary(a: &Analysis) -> Value {
    json!({
        "analysis_id": a.analysis_id,
        "graph_sha256": a.graph_sha256,
        "format": a.format,
        "name": a.package.as_ref().and_then(|p| p.name.clone()),
        "version": a.package.as_ref().and_then(|p| p.version.clone()),
        "coverage": a.coverage.status,
    })
}

/// A keyed dimension: the shared delta, listed (capped), each changed key
/// with `detail(left, right)`.
fn keyed<V: PartialEq>(
    left: &BTreeMap<String, V>,
    right: &BTreeMap<String, V>,
    completeness: Completeness,
    detail: impl Fn(&V, &V) -> Value,
) -> Value {
    let delta = KeyedDelta::of(left, right, completeness);
    let changed: Vec<Value> = delta
        .changed
        .iter()
        .map(|k| {
            let mut item = json!({"key": k});
            let d = detail(&left[k], &right[k]);
            if let Value::Object(map) = d {
                item.as_object_mut()
                    .into_iter()
                    .for_each(|o| o.extend(map.clone()));
            }
            item
        })
        .collect();
    dimension(
        delta.status(completeness),
        json!({
            "added": capped(&delta.added, |k| json!(k)),
            "removed": capped(&delta.removed, |k| json!(k)),
            "changed": capped(&changed, Value::clone),
            "unseen": delta.unseen,
            "left_total": left.len(),
            "right_total": right.len(),
        }),
    )
}

/// Name and version are read whole from `package.json` whatever the
/// coverage, so they compare conclusively.
fn package(left: &Analysis, right: &Analysis) -> Value {
    let pick = |a: &Analysis| {
        a.package
            .as_ref()
            .map(|p| (p.name.clone(), p.version.clone(), p.main.clone()))
    };
    let (l, r) = (pick(left), pick(right));
    let changed = usize::from(l != r);
    let field = |v: &Option<(Option<String>, Option<String>, Option<String>)>, i: usize| {
        v.as_ref().and_then(|t| match i {
            0 => t.0.clone(),
            1 => t.1.clone(),
            _ => t.2.clone(),
        })
    };
    dimension(
        delta_status(0, 0, changed, Completeness::COMPLETE),
        json!({
            "name": {"left": field(&l, 0), "right": field(&r, 0)},
            "version": {"left": field(&l, 1), "right": field(&r, 1)},
            "main": {"left": field(&l, 2), "right": field(&r, 2)},
        }),
    )
}

fn entry_points(a: &Analysis) -> BTreeMap<String, ()> {
    a.entry_points
        .iter()
        .map(|e| {
            let kind = json!(e.kind);
            (format!("{}:{}", kind.as_str().unwrap_or(""), e.path), ())
        })
        .collect()
}

/// Modules and pages by path, with their content hash.
fn modules(a: &Analysis) -> BTreeMap<String, Option<String>> {
    a.nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::Module | NodeKind::HtmlPage))
        .map(|n| (n.name.clone(), attr_str(n, "sha256").map(str::to_owned)))
        .collect()
}

/// Declared dependencies by name: (type, range).
fn dependencies(a: &Analysis) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    if let Some(p) = &a.package {
        for (kind, list) in [
            ("devDependencies", &p.dev_dependencies),
            ("optionalDependencies", &p.optional_dependencies),
            ("dependencies", &p.dependencies),
        ] {
            for (name, range) in list {
                out.insert(name.clone(), (kind.to_owned(), range.clone()));
            }
        }
    }
    out
}

/// Channels by name: which sides use them (handle, send, listen).
fn channels(g: &Graph<'_>) -> BTreeMap<String, Vec<&'static str>> {
    g.analysis
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::IpcChannel)
        .map(|n| {
            let sides: Vec<&'static str> = [
                (EdgeKind::IpcHandle, "handle"),
                (EdgeKind::IpcSend, "send"),
                (EdgeKind::IpcListen, "listen"),
            ]
            .into_iter()
            .filter(|(kind, _)| !g.sources(&n.node_id, *kind).is_empty())
            .map(|(_, side)| side)
            .collect();
            (n.name.clone(), sides)
        })
        .collect()
}

fn apis(a: &Analysis) -> BTreeMap<String, BTreeSet<String>> {
    a.nodes
        .iter()
        .filter(|n| n.kind == NodeKind::ExposedApi)
        .map(|n| {
            let members = attr_strings(n, "members")
                .into_iter()
                .map(str::to_owned)
                .collect();
            (n.name.clone(), members)
        })
        .collect()
}

/// Native addons by path: (sha256, exports).
fn natives(a: &Analysis) -> BTreeMap<String, (Option<String>, BTreeSet<String>)> {
    a.nodes
        .iter()
        .filter(|n| n.kind == NodeKind::NativeModule)
        .map(|n| {
            let exports = attr_strings(n, "exports")
                .into_iter()
                .map(str::to_owned)
                .collect();
            (
                n.name.clone(),
                (attr_str(n, "sha256").map(str::to_owned), exports),
            )
        })
        .collect()
}

fn names(a: &Analysis, kind: NodeKind) -> BTreeMap<String, ()> {
    a.nodes
        .iter()
        .filter(|n| n.kind == kind)
        .map(|n| (n.name.clone(), ()))
        .collect()
}

fn hosts(a: &Analysis) -> BTreeMap<String, ()> {
    a.nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Url)
        .filter_map(|n| attr_str(n, "host"))
        .filter(|h| !h.is_empty())
        .map(|h| (h.to_owned(), ()))
        .collect()
}

fn set_minus(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Vec<String> {
    a.difference(b).cloned().collect()
}

/// Windows keyed by (creating file, binding, constructor); the keys that
/// occur once, with their settings, and the windows whose key does not.
struct Windows {
    unique: BTreeMap<String, Value>,
    ambiguous: Vec<Value>,
}

fn window_side(g: &Graph<'_>) -> Windows {
    let mut by_key: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for w in g
        .analysis
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Window)
    {
        let file = g
            .sources(&w.node_id, EdgeKind::CreatesWindow)
            .first()
            .map(|m| m.name.clone())
            .unwrap_or_else(|| w.location.file.clone());
        let binding = w.attributes.get("binding").cloned().unwrap_or(Value::Null);
        let constructor = w
            .attributes
            .get("constructor")
            .cloned()
            .unwrap_or(Value::Null);
        let key = format!(
            "{file}#{}#{}",
            binding.as_str().unwrap_or("(no binding)"),
            constructor.as_str().unwrap_or("(unknown constructor)")
        );
        by_key.entry(key).or_default().push(json!({
            "location": w.location,
            "web_preferences": w.attributes.get("web_preferences"),
            "effective": w.attributes.get("effective"),
        }));
    }
    let mut out = Windows {
        unique: BTreeMap::new(),
        ambiguous: Vec::new(),
    };
    for (key, mut found) in by_key {
        if found.len() == 1 {
            out.unique.insert(key, found.remove(0));
        } else {
            out.ambiguous
                .push(json!({"key": key, "count": found.len()}));
        }
    }
    out
}

/// Matched windows compare their settings (not their line: moving a
/// window is not a change of it); a key unique on one side only but
/// present on the other as several windows is unmatched, not added.
fn windows(lg: &Graph<'_>, rg: &Graph<'_>, completeness: Completeness) -> Value {
    let (l, r) = (window_side(lg), window_side(rg));
    let ambiguous_keys: BTreeSet<&str> = l
        .ambiguous
        .iter()
        .chain(&r.ambiguous)
        .filter_map(|a| a["key"].as_str())
        .collect();
    let settings = |w: &Windows| -> BTreeMap<String, Value> {
        w.unique
            .iter()
            .filter(|(k, _)| !ambiguous_keys.contains(k.as_str()))
            .map(|(k, v)| {
                (
                    k.clone(),
                    json!({"web_preferences": v["web_preferences"], "effective": v["effective"]}),
                )
            })
            .collect()
    };
    let (ls, rs) = (settings(&l), settings(&r));
    let unmatched: Vec<Value> = l
        .ambiguous
        .iter()
        .map(|a| json!({"side": "left", "key": a["key"], "count": a["count"]}))
        .chain(
            r.ambiguous
                .iter()
                .map(|a| json!({"side": "right", "key": a["key"], "count": a["count"]})),
        )
        .collect();
    let mut value = keyed(
        &ls,
        &rs,
        completeness,
        |a, b| json!({"left": a, "right": b}),
    );
    let has_unmatched = !unmatched.is_empty();
    if let Some(map) = value.as_object_mut() {
        map.insert("unmatched".into(), capped(&unmatched, Value::clone));
        // Unmatched windows leave the dimension undecided when nothing
        // else was observed to differ.
        let status = map
            .get("status")
            .and_then(Value::as_str)
            .and_then(ComparisonStatus::parse);
        if has_unmatched && status.is_some_and(|s| !s.is_difference()) {
            map.insert("status".into(), json!(ComparisonStatus::Unknown));
        }
    }
    value
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
