//! `inspect_binary_layout`: the load-relevant structure of one document.

use serde_json::json;

use super::inputs::InspectBinaryLayoutInput;
use super::{HandlerResult, ToolName};
use crate::session::Session;

pub(crate) fn inspect_binary_layout(
    input: InspectBinaryLayoutInput,
    session: &mut Session,
) -> HandlerResult {
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let layout = target.image.layout(document)?;
    let limitations = layout.limitations.clone();
    let mut result = serde_json::to_value(&layout).unwrap_or_default();
    result["document"] = json!(name);
    let draft = target.file_observation(
        ToolName::InspectBinaryLayout.as_str(),
        target.document_subject(document),
        json!({"document": name}),
        result.clone(),
        limitations,
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}
