//! The native counterpart of the analysis view: a `binary_overview` or
//! `inspect_binary_layout` record read back as a place to start — the
//! entry point, exports and imports worth tracing with `trace_feature`,
//! and what the record could not say.

use serde_json::{Value, json};

use crate::session::Evidence;
use crate::tools::ToolName;
use crate::tools::compare::capped;

/// The view and its limitations, from a native record.
pub fn view(evidence: &Evidence) -> (Value, Vec<String>) {
    let body = &evidence.body;
    let result = &body.result;
    let text = |key: &str| result.get(key).and_then(Value::as_str);
    let names = |key: &str| -> Vec<Value> {
        result
            .get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.get("name").and_then(Value::as_str))
                    .filter(|n| !n.is_empty() && !n.starts_with('#'))
                    .map(Value::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let trace_seed =
        |name: &Value, why: &str| json!({"tool": "trace_feature", "query": name, "why": why});
    let exports: Vec<Value> = names("exports")
        .iter()
        .map(|n| trace_seed(n, "exported symbol: an entry into this code"))
        .collect();
    let imports: Vec<Value> = names("imports")
        .iter()
        .map(|n| trace_seed(n, "imported symbol: what this code calls out to"))
        .collect();
    let layout = body.operation == ToolName::InspectBinaryLayout.as_str();
    let mut unknowns: Vec<String> = body.limitations.clone();
    if !layout {
        unknowns.push(
            "binary_overview does not list exports or imports; run inspect_binary_layout on this \
             document for them"
                .to_owned(),
        );
    }
    unknowns.push(
        "strings are not part of this record; search_strings lists them and trace_feature \
         starts from them"
            .to_owned(),
    );
    let entry = text("entry_point");
    let view = json!({
        "kind": "native-binary",
        "source_operation": body.operation,
        "subject": body.subject,
        "document": text("document"),
        "format": result.get("format"),
        "architecture": text("architecture"),
        "entry_point": entry,
        "seeds": {
            "entry_point": entry.map(|a| json!({
                "tool": "procedure_callees",
                "procedure": a,
                "why": "where execution starts",
            })),
            "exports": capped(&exports, Value::clone),
            "imports": capped(&imports, Value::clone),
            "needed_libraries": result.get("needed_libraries"),
        },
        "unknowns": unknowns,
        "next": "Open the same file with open_binary if it is not the active target, then use \
                 the seeds with the native tools.",
    });
    (view, body.limitations.clone())
}
