//! `trace_application_feature`: runs [`crate::javascript::trace`] on a
//! retained application analysis and records the trace as derived Evidence.

use serde_json::json;

use super::{encode, fetch_analysis};
use crate::javascript::trace::{MAX_SEED_CHARS, trace};
use crate::tools::inputs::TraceApplicationFeatureInput;
use crate::tools::shared::ledger::record_derived;
use crate::tools::tool::{Call, Tool};
use crate::tools::{HandlerResult, ToolError, ToolName};

pub struct TraceApplicationFeature;

impl Tool for TraceApplicationFeature {
    const NAME: ToolName = ToolName::TraceApplicationFeature;
    type Input = TraceApplicationFeatureInput;

    fn run(input: TraceApplicationFeatureInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        input.limits.validate()?;
        let chars = input.seed.value.chars().take(MAX_SEED_CHARS + 1).count();
        if chars == 0 || chars > MAX_SEED_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "seed.value must be 1-{MAX_SEED_CHARS} characters"
            )));
        }
        let analysis = fetch_analysis(session, "evidence_id", &input.evidence_id)?;
        let traced = trace(&analysis, &input.seed, input.direction, input.limits);
        let limitations = traced.limitations();
        let mut result = encode(&traced, "trace")?;
        let mut parameters = json!({
            "evidence_id": input.evidence_id,
            "analysis_id": analysis.analysis_id,
            "seed": input.seed,
            "direction": input.direction,
            "limits": input.limits,
        });
        if input.include_subgraph {
            parameters["include_subgraph"] = json!(true);
        } else {
            without_subgraph(&mut result);
        }
        record_derived(
            session,
            ToolName::TraceApplicationFeature,
            parameters,
            result,
            limitations,
        )
    }
}

/// A trace as it is answered by default: the subgraph as counts, the
/// paths' steps without node and edge ids (names, kinds, layers and
/// locations say where each step is; `include_subgraph` lists them all).
fn without_subgraph(result: &mut serde_json::Value) {
    let counts = json!({
        "nodes": result["subgraph"]["nodes"].as_array().map_or(0, Vec::len),
        "edges": result["subgraph"]["edges"].as_array().map_or(0, Vec::len),
    });
    result["subgraph"] = counts;
    if let Some(paths) = result["paths"]["items"].as_array_mut() {
        for step in paths
            .iter_mut()
            .filter_map(|p| p["steps"].as_array_mut())
            .flatten()
        {
            if let Some(step) = step.as_object_mut() {
                step.remove("node_id");
                if let Some(serde_json::Value::Object(via)) = step.get_mut("via") {
                    via.remove("edge_id");
                }
            }
        }
    }
}
