//! Process captures as retained Evidence: the operation that records them
//! and the check that a record still holds a valid capture.
//!
//! Completion (family `capture`) and the tools that read captures back
//! (comparison, correlation) go through [`capture_of`] only, so "a retained
//! capture" means the same thing everywhere: Evidence of operation
//! `capture_process_scenario` whose result parses strictly as a
//! [`Capture`] and passes [`Capture::validate`].

use super::evidence::Evidence;
use crate::capture::Capture;

/// The Evidence operation that holds process captures.
pub const CAPTURE_PROCESS_SCENARIO: &str = "capture_process_scenario";

/// The capture a record holds, when it is a valid process capture.
pub fn capture_of(evidence: &Evidence) -> Option<Capture> {
    if evidence.body.operation != CAPTURE_PROCESS_SCENARIO {
        return None;
    }
    let capture: Capture = serde_json::from_value(evidence.body.result.clone()).ok()?;
    capture.validate().is_ok().then_some(capture)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::session::{Confidence, EvidenceDraft, native_identity};

    fn capture_json() -> Value {
        json!({
            "schema_version": 1,
            "exit": {"code": 0, "signal": null, "signal_name": null, "reason": "exited"},
            "crash": null,
            "stdout": {"text": "", "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                       "stored_bytes": 0, "total_bytes": 0, "truncated": false},
            "stderr": {"text": "", "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                       "stored_bytes": 0, "total_bytes": 0, "truncated": false},
            "timing": {"wall_ms": 1, "user_ms": 0, "system_ms": 0},
            "max_rss_kib": 1,
            "host_peak_rss_kib": null,
            "processes_seen": 1,
            "files": {"created": [], "changed": [], "deleted": [], "truncated": false},
            "cleanup": {"verified": true, "survivors_killed": 0},
            "tracing": {"attached": true, "reason": null},
            "limitations": [],
        })
    }

    fn record(operation: &str, result: Value) -> Evidence {
        EvidenceDraft {
            operation: operation.to_string(),
            subject: None,
            provider: native_identity(),
            parameters: json!({}),
            result,
            confidence: Confidence::Observed,
            limitations: Vec::new(),
            locations: Vec::new(),
            local_path: None,
        }
        .seal()
        .expect("seal")
    }

    #[test]
    fn only_valid_captures_of_the_capture_operation_count() {
        assert!(capture_of(&record(CAPTURE_PROCESS_SCENARIO, capture_json())).is_some());
        assert!(
            capture_of(&record("inspect_artifact", capture_json())).is_none(),
            "another operation's record is not a capture"
        );
        let mut both = capture_json();
        both["exit"]["signal"] = json!(11);
        assert!(
            capture_of(&record(CAPTURE_PROCESS_SCENARIO, both)).is_none(),
            "a capture that fails validation is not offered"
        );
        let mut extra = capture_json();
        extra["surprise"] = json!(true);
        assert!(capture_of(&record(CAPTURE_PROCESS_SCENARIO, extra)).is_none());
        assert!(capture_of(&record(CAPTURE_PROCESS_SCENARIO, json!("text"))).is_none());
    }
}
