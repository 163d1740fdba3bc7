//! The native counterpart of the analysis view: a `binary_overview` or
//! `inspect_binary_layout` record read back as a place to start — the
//! entry point, exports and imports worth tracing with `trace_feature`,
//! and what the record could not say.

use serde_json::{Value, json};

use crate::session::Evidence;
use crate::tools::ToolName;
use crate::tools::compare::LIST_CAP;

/// The view and its limitations, from a native record.
pub fn view(evidence: &Evidence) -> (Value, Vec<String>) {
    let body = &evidence.body;
    let result = &body.result;
    let text = |key: &str| result.get(key).and_then(Value::as_str);
    // A layout lists each long list as a page {total, items, next_offset}.
    let names = |key: &str| -> (Vec<Value>, u64) {
        let list = result.get(key);
        let items = list
            .and_then(|l| l.get("items"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let total = list
            .and_then(|l| l.get("total"))
            .and_then(Value::as_u64)
            .unwrap_or(items.len() as u64);
        let named = items
            .iter()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .filter(|n| !n.is_empty() && !n.starts_with('#'))
            .take(LIST_CAP)
            .map(Value::from)
            .collect();
        (named, total)
    };
    let seeds = |key: &str, why: &str| {
        let (names, total) = names(key);
        json!({
            "names": names,
            "total": total,
            "why": why,
            "next": format!(
                "trace_feature(query) or procedure_callers(procedure) on a name; \
                 inspect_binary_layout(list={key}) pages all {total}"
            ),
        })
    };
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
            "exports": seeds("exports", "exported symbols: entries into this code"),
            "imports": seeds("imports", "imported symbols: what this code calls out to"),
            "needed_libraries": result.get("needed_libraries"),
        },
        "unknowns": unknowns,
        "next": "Open the same file with open_binary if it is not the active target, then use \
                 the seeds with the native tools.",
    });
    (view, body.limitations.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(operation: ToolName, result: Value) -> Evidence {
        crate::tools::javascript::testkit::record(
            operation.as_str(),
            result,
            vec!["segment table cut".into()],
        )
    }

    #[test]
    fn a_layout_offers_exports_and_imports_as_native_seeds() {
        let evidence = record(
            ToolName::InspectBinaryLayout,
            json!({
                "document": "addon.node", "format": "elf", "architecture": "x86_64",
                "entry_point": "0x1040",
                "exports": {"total": 2, "items": [{"name": "napi_register_module_v1", "address": "0x2000"}, {"name": "#7", "address": "0x2100"}]},
                "imports": {"total": 40, "items": [{"library": "", "name": "uv_fs_open"}], "next_offset": 1},
                "needed_libraries": {"total": 1, "items": ["libc.so.6"]},
            }),
        );
        let (view, limitations) = view(&evidence);
        assert_eq!(view["kind"], "native-binary");
        assert_eq!(view["entry_point"], "0x1040");
        assert_eq!(view["seeds"]["entry_point"]["procedure"], "0x1040");
        // An export by ordinal only has no name to trace.
        assert_eq!(
            view["seeds"]["exports"]["names"],
            json!(["napi_register_module_v1"])
        );
        assert_eq!(view["seeds"]["imports"]["names"], json!(["uv_fs_open"]));
        assert_eq!(
            view["seeds"]["imports"]["total"], 40,
            "the layout's total, not the page's"
        );
        assert_eq!(limitations, vec!["segment table cut"]);
        assert_eq!(view["unknowns"][0], "segment table cut");
    }

    #[test]
    fn an_overview_says_where_exports_are_listed() {
        let evidence = record(
            ToolName::BinaryOverview,
            json!({"document": "a", "format": "elf", "architecture": "x86_64", "entry_point": null}),
        );
        let (view, _) = view(&evidence);
        assert_eq!(view["seeds"]["entry_point"], Value::Null);
        assert_eq!(view["seeds"]["exports"]["total"], 0);
        assert!(
            view["unknowns"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u.as_str().unwrap().contains("inspect_binary_layout"))
        );
    }
}
