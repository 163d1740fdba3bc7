//! Test helpers of the application tools: the engine's analyses (see
//! [`crate::javascript::testkit`]) and records sealed around them.

use serde_json::{Value, json};

pub(crate) use crate::javascript::testkit::{at, demo};
use crate::session::{Confidence, Evidence, EvidenceDraft, native_identity};

/// A sealed native-provider record of `operation` holding `result`.
pub(crate) fn record(operation: &str, result: Value, limitations: Vec<String>) -> Evidence {
    EvidenceDraft {
        operation: operation.to_owned(),
        subject: None,
        provider: native_identity(),
        parameters: json!({}),
        result,
        confidence: Confidence::Observed,
        limitations,
        locations: Vec::new(),
        local_path: None,
    }
    .seal()
    .expect("a small record seals")
}
