//! `verify_reconstruction`: a finite specification of claims, each naming
//! one dimension of one retained comparison and the outcome expected there,
//! judged pass | fail | unknown.
//!
//! A claim is unknown, never passed, when its comparison is not retained,
//! is not a comparison, lacks the dimension, or reports it `truncated` or
//! `unknown`. Expecting `changed` is met by any observed difference
//! (`changed`, `added` or `removed`); `added`, `removed` and `unchanged`
//! are met only by themselves. Overall: fail if any claim fails, else
//! unknown if any is unknown, else pass. A pass speaks only for its claim
//! and dimension.

use crate::tools::tool::{Call, Tool};
use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{ComparisonStatus, read_comparison};
use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::Session;
use crate::session::evidence::is_evidence_id;
use crate::tools::inputs::{ClaimSpec, ExpectedOutcome, VerifyReconstructionInput};
use crate::tools::shared::ledger::{fetch, record_derived};
use crate::tools::{HandlerResult, ToolError, ToolName};

pub const MAX_CLAIMS: usize = 100;
const MAX_NAME: usize = 256;
const MAX_CLAIM_ID: usize = 128;
const MAX_TITLE: usize = 512;
const MAX_DIMENSION: usize = 64;
/// Most dimension names a "no such dimension" reason lists.
const KNOWN_DIMENSIONS: usize = 16;

/// The verdict on one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Unknown => "unknown",
        }
    }

    /// Fail if any fails, else unknown if any is unknown, else pass.
    pub fn overall(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut overall = Verdict::Pass;
        for verdict in verdicts {
            match verdict {
                Verdict::Fail => return Verdict::Fail,
                Verdict::Unknown => overall = Verdict::Unknown,
                Verdict::Pass => {}
            }
        }
        overall
    }
}

impl ExpectedOutcome {
    fn as_str(self) -> &'static str {
        match self {
            ExpectedOutcome::Unchanged => "unchanged",
            ExpectedOutcome::Changed => "changed",
            ExpectedOutcome::Added => "added",
            ExpectedOutcome::Removed => "removed",
        }
    }

    /// Whether a conclusive observed status meets this expectation.
    fn met_by(self, observed: ComparisonStatus) -> bool {
        match self {
            ExpectedOutcome::Unchanged => observed == ComparisonStatus::Unchanged,
            ExpectedOutcome::Changed => observed.is_difference(),
            ExpectedOutcome::Added => observed == ComparisonStatus::Added,
            ExpectedOutcome::Removed => observed == ComparisonStatus::Removed,
        }
    }
}

/// Checks a text field: trimmed, 1..=max characters, no control characters.
fn text(field: &str, value: &str, max: usize) -> Result<(), ToolError> {
    let trimmed = value.trim();
    let length = trimmed.chars().count();
    if length == 0 || length > max {
        return Err(ToolError::invalid_arguments(format!(
            "{field} must be 1-{max} characters (got {length})"
        )));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(ToolError::invalid_arguments(format!(
            "{field} must not contain control characters"
        )));
    }
    Ok(())
}

fn validate(input: &VerifyReconstructionInput) -> Result<(), ToolError> {
    let spec = &input.specification;
    if spec.schema_version != 1 {
        return Err(ToolError::invalid_arguments(format!(
            "specification.schema_version {} is not supported; write 1",
            spec.schema_version
        )));
    }
    text("specification.name", &spec.name, MAX_NAME)?;
    if spec.claims.is_empty() || spec.claims.len() > MAX_CLAIMS {
        return Err(ToolError::invalid_arguments(format!(
            "specification.claims must hold 1-{MAX_CLAIMS} claims (got {}); split a larger \
             specification into several",
            spec.claims.len()
        )));
    }
    let mut ids = BTreeSet::new();
    for (i, claim) in spec.claims.iter().enumerate() {
        let at = |name: &str| format!("specification.claims[{i}].{name}");
        text(&at("claim_id"), &claim.claim_id, MAX_CLAIM_ID)?;
        text(&at("title"), &claim.title, MAX_TITLE)?;
        text(&at("dimension"), &claim.dimension, MAX_DIMENSION)?;
        if !is_evidence_id(claim.comparison_evidence_id.trim()) {
            return Err(ToolError::invalid_arguments(format!(
                "{} is not an Evidence ID (ev_ followed by 64 lowercase hex digits)",
                at("comparison_evidence_id")
            )));
        }
        if !ids.insert(claim.claim_id.trim()) {
            return Err(ToolError::invalid_arguments(format!(
                "claim_id `{}` appears more than once; claim ids must be unique",
                claim.claim_id.trim()
            )));
        }
    }
    Ok(())
}

/// The verdict on one claim, the observed status and the reason.
fn judge(
    session: &Session,
    claim: &ClaimSpec,
) -> (Verdict, Option<ComparisonStatus>, Option<String>, String) {
    let id = claim.comparison_evidence_id.trim();
    let dimension = claim.dimension.trim();
    let evidence = match fetch(session, "comparison_evidence_id", id) {
        Ok(evidence) => evidence,
        // validate() has checked the id's shape, so this is "not retained".
        Err(e) => {
            return (
                Verdict::Unknown,
                None,
                None,
                format!("{e}; re-run the comparison"),
            );
        }
    };
    // The record may come from a bundle: its operation name and dimension
    // names are quoted only in part, and only a few of them, since up to
    // MAX_CLAIMS claims may quote the same record.
    let operation = Some(excerpt(&evidence.body.operation, EXCERPT_CHARS));
    let view = match read_comparison(&evidence) {
        Ok(view) => view,
        Err(e) => return (Verdict::Unknown, None, operation, e.to_string()),
    };
    let Some(&observed) = view.dimensions.get(dimension) else {
        let mut known: Vec<String> = view
            .dimensions
            .keys()
            .take(KNOWN_DIMENSIONS)
            .map(|k| excerpt(k, EXCERPT_CHARS))
            .collect();
        if view.dimensions.len() > KNOWN_DIMENSIONS {
            known.push(format!(
                "and {} more",
                view.dimensions.len() - KNOWN_DIMENSIONS
            ));
        }
        return (
            Verdict::Unknown,
            None,
            operation,
            format!(
                "the {} result has no dimension `{dimension}` (it has: {})",
                view.operation,
                known.join(", ")
            ),
        );
    };
    let expected = claim.expected.as_str();
    if !observed.is_conclusive() {
        return (
            Verdict::Unknown,
            Some(observed),
            operation,
            format!(
                "dimension `{dimension}` is {}, which can neither confirm nor refute `{expected}`",
                observed.as_str()
            ),
        );
    }
    let verdict = if claim.expected.met_by(observed) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let reason = format!(
        "dimension `{dimension}` is {}; the claim expects {expected}",
        observed.as_str()
    );
    (verdict, Some(observed), operation, reason)
}

pub struct VerifyReconstruction;

impl Tool for VerifyReconstruction {
    const NAME: ToolName = ToolName::VerifyReconstruction;
    type Input = VerifyReconstructionInput;

    fn run(input: VerifyReconstructionInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        validate(&input)?;
        let spec = &input.specification;
        let mut verdicts = Vec::with_capacity(spec.claims.len());
        let claims: Vec<Value> = spec
        .claims
        .iter()
        .map(|claim| {
            let (verdict, observed, operation, reason) = judge(session, claim);
            verdicts.push(verdict);
            let (claim_id, dimension) = (claim.claim_id.trim(), claim.dimension.trim());
            let id = claim.comparison_evidence_id.trim();
            json!({
                "claim_id": claim_id,
                "title": claim.title.trim(),
                "comparison_evidence_id": id,
                "comparison_operation": operation,
                "dimension": dimension,
                "expected": claim.expected.as_str(),
                "observed": observed,
                "verdict": verdict.as_str(),
                "reason": reason,
                "scope": format!(
                    "this verdict speaks only for claim `{claim_id}` on dimension `{dimension}` of \
                     comparison {id}, nothing else"
                ),
            })
        })
        .collect();
        let count = |v: Verdict| verdicts.iter().filter(|&&x| x == v).count();
        let overall = Verdict::overall(verdicts.iter().copied());
        let result = json!({
            "status": overall.as_str(),
            "name": spec.name.trim(),
            "schema_version": spec.schema_version,
            "summary": {
                "pass": count(Verdict::Pass),
                "fail": count(Verdict::Fail),
                "unknown": count(Verdict::Unknown),
                "total": verdicts.len(),
            },
            "claims": claims,
            "scope": "a pass speaks only for the listed claims, each on its one dimension of its one \
                      comparison; it says nothing about anything the claims do not name",
        });
        let parameters = json!({"specification": specification_json(&input)});
        let limitations = vec![
            "claims are judged from retained comparison Evidence only; a truncated or unknown \
         dimension never passes"
                .to_owned(),
        ];
        record_derived(
            session,
            ToolName::VerifyReconstruction,
            parameters,
            result,
            limitations,
        )
    }
}

/// The specification as recorded in the Evidence parameters (trimmed).
fn specification_json(input: &VerifyReconstructionInput) -> Value {
    let spec = &input.specification;
    json!({
        "schema_version": spec.schema_version,
        "name": spec.name.trim(),
        "claims": spec.claims.iter().map(|c| json!({
            "claim_id": c.claim_id.trim(),
            "title": c.title.trim(),
            "comparison_evidence_id": c.comparison_evidence_id.trim(),
            "dimension": c.dimension.trim(),
            "expected": c.expected.as_str(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ComparisonStatus::*;

    #[test]
    fn overall_is_fail_then_unknown_then_pass() {
        use Verdict::{Fail, Pass, Unknown as U};
        assert_eq!(Verdict::overall([Pass, Pass]), Pass);
        assert_eq!(Verdict::overall([Pass, U]), U);
        assert_eq!(Verdict::overall([U, Fail, Pass]), Fail);
    }

    #[test]
    fn expectations_are_met_only_by_conclusive_matching_statuses() {
        let changed = ExpectedOutcome::Changed;
        assert!(changed.met_by(Changed) && changed.met_by(Added) && changed.met_by(Removed));
        assert!(!changed.met_by(Unchanged));
        assert!(ExpectedOutcome::Unchanged.met_by(Unchanged));
        assert!(!ExpectedOutcome::Unchanged.met_by(Changed));
        assert!(!ExpectedOutcome::Added.met_by(Changed));
        assert!(ExpectedOutcome::Removed.met_by(Removed));
        for expected in [
            ExpectedOutcome::Unchanged,
            ExpectedOutcome::Changed,
            ExpectedOutcome::Added,
            ExpectedOutcome::Removed,
        ] {
            // judge() never asks about these, but a match would be a defect.
            assert!(!expected.met_by(Truncated) && !expected.met_by(Unknown));
        }
    }

    /// Records from a bundle may carry megabytes of operation or dimension
    /// names; a hundred claims quoting them stay small.
    #[test]
    fn reasons_quote_hostile_records_only_in_part() {
        use crate::tools::inputs::ReconstructionSpec;
        let mut session = Session::default();
        let mut record = |operation: String, result: Value| {
            let forged = super::super::tests::evidence(&operation, result);
            session.record(forged.body).unwrap().evidence_id
        };
        let dimensions: serde_json::Map<String, Value> = (0..2000)
            .map(|i| (format!("{i:0>500}"), json!({"status": "changed"})))
            .collect();
        let many = record(
            "compare_functions".into(),
            json!({"status": "changed", "dimensions": dimensions}),
        );
        let named = record("X".repeat(1 << 20), json!({}));
        let claims = (0..MAX_CLAIMS)
            .map(|i| ClaimSpec {
                claim_id: format!("c{i}"),
                title: "t".into(),
                comparison_evidence_id: if i % 2 == 0 { &many } else { &named }.clone(),
                dimension: "absent".into(),
                expected: ExpectedOutcome::Unchanged,
            })
            .collect();
        let input = VerifyReconstructionInput {
            specification: ReconstructionSpec {
                schema_version: 1,
                name: "hostile".into(),
                claims,
            },
        };
        let (result, _) =
            Call::on(&mut session, |call| VerifyReconstruction::run(input, call)).unwrap();
        let size = result.to_string().len();
        assert!(size < 256 * 1024, "the result holds {size} bytes");
        assert_eq!(result["status"], json!("unknown"));
    }
}
