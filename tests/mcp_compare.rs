//! compare_functions and verify_reconstruction end to end over MCP, on
//! three builds of one small C program compiled here: the original, the
//! same code relocated by an extra function placed before it, and one
//! whose body changed.

mod common;

use std::path::{Path, PathBuf};

use common::{Client, Era, call, compile_c, connect};
use serde_json::{Value, json};

/// `target` uses a string, calls `helper` and `puts`; `EXTRA` is spliced in
/// before it and `BODY` is its arithmetic.
fn source(extra: &str, body: &str) -> String {
    format!(
        r#"
#include <stdio.h>
{extra}
__attribute__((noinline)) int helper(int x) {{ return x ^ 0x55; }}
__attribute__((noinline)) int target(int x) {{
    puts("COMPARE_ME greeting");
    int y = helper(x);
    return {body};
}}
int main(int argc, char **argv) {{ (void)argv; return target(argc); }}
"#
    )
}

const PADDING: &str = r#"
__attribute__((noinline)) int padding(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }
int (*volatile keep)(int) = padding;
"#;

/// The original, relocated and changed builds.
fn builds(dir: &Path) -> Option<[PathBuf; 3]> {
    let original = compile_c(dir, "original", &[("o.c", &source("", "y * 3 + 1"))])?;
    let relocated = compile_c(dir, "relocated", &[("r.c", &source(PADDING, "y * 3 + 1"))])?;
    let changed = compile_c(dir, "changed", &[("c.c", &source("", "y * 5 - x"))])?;
    Some([original, relocated, changed])
}

fn ok(value: &(Value, bool)) -> &Value {
    assert!(!value.1, "tool failed: {}", value.0);
    let evidence = &value.0["evidence"];
    assert!(evidence["evidence_id"].is_string(), "Evidence inline");
    &value.0["result"]
}

fn error_code(value: &(Value, bool)) -> &str {
    assert!(value.1, "expected a failure: {}", value.0);
    assert!(
        value.0.get("evidence").is_none(),
        "a failure carries no Evidence"
    );
    value.0["error"]["code"].as_str().expect("error code")
}

/// Opens `path`, analyzes `target` and returns (Evidence id, result).
async fn dossier(client: &Client, path: &Path, max_instructions: u32) -> (String, Value) {
    ok(&call(client, "open_binary", json!({"path": path})).await);
    let analyzed = call(
        client,
        "analyze_function",
        json!({"procedure": "target", "max_instructions": max_instructions}),
    )
    .await;
    let result = ok(&analyzed).clone();
    let id = analyzed.0["evidence"]["evidence_id"]
        .as_str()
        .expect("id")
        .to_owned();
    (id, result)
}

/// compare_functions on two Evidence ids: (comparison Evidence id, result).
async fn compare(client: &Client, left: &str, right: &str) -> (String, Value) {
    let compared = call(
        client,
        "compare_functions",
        json!({"left_evidence_id": left, "right_evidence_id": right}),
    )
    .await;
    let result = ok(&compared).clone();
    let evidence = &compared.0["evidence"];
    common::assert_said_once(&compared.0);
    assert_eq!(
        result, compared.0["result"],
        "the Evidence is the comparison"
    );
    assert_eq!(evidence["operation"], json!("compare_functions"));
    assert_eq!(evidence["confidence"], json!("derived"));
    assert_eq!(
        evidence["parameters"],
        json!({"left_evidence_id": left, "right_evidence_id": right})
    );
    (
        evidence["evidence_id"].as_str().expect("id").to_owned(),
        result,
    )
}

fn status(result: &Value, dimension: &str) -> Value {
    result["dimensions"][dimension]["status"].clone()
}

fn claim(id: &str, evidence: &str, dimension: &str, expected: &str) -> Value {
    json!({
        "claim_id": id,
        "title": format!("{dimension} {expected}"),
        "comparison_evidence_id": evidence,
        "dimension": dimension,
        "expected": expected,
    })
}

async fn verify(client: &Client, claims: Vec<Value>) -> (Value, bool) {
    let specification = json!({"schema_version": 1, "name": "target rebuild", "claims": claims});
    call(
        client,
        "verify_reconstruction",
        json!({"specification": specification}),
    )
    .await
}

#[tokio::test]
async fn relocation_is_unchanged_a_changed_body_is_changed_and_claims_are_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some([original, relocated, changed]) = builds(dir.path()) else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let (original_id, original_dossier) = dossier(&client, &original, 300).await;
    let (relocated_id, relocated_dossier) = dossier(&client, &relocated, 300).await;
    let (changed_id, _) = dossier(&client, &changed, 300).await;
    // The padding really moved the function, so addresses differ.
    assert_ne!(
        original_dossier["procedure"]["address"],
        relocated_dossier["procedure"]["address"]
    );
    assert_eq!(original_dossier["truncated"], json!(false));

    let (relocated_cmp, same) = compare(&client, &original_id, &relocated_id).await;
    for dimension in [
        "instructions",
        "blocks",
        "callees",
        "strings",
        "data_references",
    ] {
        assert_eq!(
            status(&same, dimension),
            json!("unchanged"),
            "{dimension}: {same}"
        );
    }
    assert_eq!(same["status"], json!("unchanged"));
    let count = original_dossier["instructions"].as_array().unwrap().len();
    assert_eq!(same["dimensions"]["instructions"]["matched"], json!(count));
    assert_eq!(same["left"]["evidence_id"], json!(original_id));

    let (changed_cmp, different) = compare(&client, &original_id, &changed_id).await;
    assert_eq!(
        status(&different, "instructions"),
        json!("changed"),
        "{different}"
    );
    assert_eq!(different["status"], json!("changed"));
    assert_eq!(status(&different, "callees"), json!("unchanged"));
    assert_eq!(status(&different, "strings"), json!("unchanged"));
    let hunks = &different["dimensions"]["instructions"]["hunks"];
    assert!(hunks["total"].as_u64().unwrap() >= 1, "{hunks}");

    // Truncated listings: equal visible parts are truncated, never unchanged.
    let (short_original, _) = dossier(&client, &original, 3).await;
    let (short_relocated, _) = dossier(&client, &relocated, 3).await;
    let (truncated_cmp, cut) = compare(&client, &short_original, &short_relocated).await;
    assert_eq!(status(&cut, "instructions"), json!("truncated"), "{cut}");
    assert_eq!(cut["status"], json!("truncated"));

    let missing = format!("ev_{}", "0".repeat(64));
    let judged = verify(
        &client,
        vec![
            claim(
                "relocated-code",
                &relocated_cmp,
                "instructions",
                "unchanged",
            ),
            claim("changed-code", &changed_cmp, "instructions", "changed"),
            claim(
                "wrongly-unchanged",
                &changed_cmp,
                "instructions",
                "unchanged",
            ),
            claim("gone", &missing, "instructions", "unchanged"),
            claim(
                "not-a-comparison",
                &original_id,
                "instructions",
                "unchanged",
            ),
            claim("no-such-dimension", &relocated_cmp, "syscalls", "unchanged"),
            claim("cut", &truncated_cmp, "instructions", "unchanged"),
        ],
    )
    .await;
    let result = ok(&judged);
    let verdicts = common::claim_verdicts(result);
    assert_eq!(
        verdicts,
        [
            ("relocated-code", "pass"),
            ("changed-code", "pass"),
            ("wrongly-unchanged", "fail"),
            ("gone", "unknown"),
            ("not-a-comparison", "unknown"),
            ("no-such-dimension", "unknown"),
            ("cut", "unknown"),
        ]
    );
    assert_eq!(result["status"], json!("fail"));
    assert_eq!(
        result["summary"],
        json!({"pass": 2, "fail": 1, "unknown": 4, "total": 7})
    );
    let claims = result["claims"].as_array().unwrap();
    assert!(
        claims[3]["reason"]
            .as_str()
            .unwrap()
            .contains("not retained")
    );
    assert!(
        claims[4]["reason"]
            .as_str()
            .unwrap()
            .contains("not a comparison")
    );
    assert!(
        claims[5]["reason"]
            .as_str()
            .unwrap()
            .contains("instructions")
    );
    assert!(claims[6]["reason"].as_str().unwrap().contains("truncated"));
    for c in claims {
        let scope = c["scope"].as_str().unwrap();
        assert!(scope.contains(c["claim_id"].as_str().unwrap()) && scope.contains("only"));
    }
    let evidence = &judged.0["evidence"];
    common::assert_said_once(&judged.0);
    assert_eq!(evidence["operation"], json!("verify_reconstruction"));
    assert_eq!(
        evidence["parameters"]["specification"]["claims"][0]["comparison_evidence_id"],
        json!(relocated_cmp)
    );

    // Without the failing claim the weakest verdict is unknown; with only
    // passing claims, pass.
    for (second, overall) in [
        (claim("gone", &missing, "callees", "unchanged"), "unknown"),
        (
            claim("same-callees", &changed_cmp, "callees", "unchanged"),
            "pass",
        ),
    ] {
        let first = claim("relocated", &relocated_cmp, "instructions", "unchanged");
        let judged = verify(&client, vec![first, second]).await;
        assert_eq!(ok(&judged)["status"], json!(overall));
    }
}

#[tokio::test]
async fn wrong_inputs_are_typed_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some([original, ..]) = builds(dir.path()) else {
        return;
    };
    let (client, _server, _) = connect(Era::Legacy).await;
    let (analyzed, _) = dossier(&client, &original, 300).await;
    let opened = call(&client, "list_documents", json!({})).await;
    let not_a_dossier = opened.0["evidence"]["evidence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let missing = format!("ev_{}", "a".repeat(64));
    let cases = [
        (
            json!({"left_evidence_id": "ev_123", "right_evidence_id": analyzed}),
            "invalid_arguments",
        ),
        (
            json!({"left_evidence_id": analyzed, "right_evidence_id": missing}),
            "evidence_not_found",
        ),
        (
            json!({"left_evidence_id": not_a_dossier, "right_evidence_id": analyzed}),
            "wrong_evidence_kind",
        ),
        (json!({"left_evidence_id": analyzed}), "invalid_arguments"),
    ];
    for (args, code) in cases {
        let answer = call(&client, "compare_functions", args.clone()).await;
        assert_eq!(error_code(&answer), code, "{args}");
    }
    let duplicate = verify(
        &client,
        vec![
            claim("a", &missing, "instructions", "unchanged"),
            claim("a", &missing, "callees", "unchanged"),
        ],
    )
    .await;
    assert_eq!(error_code(&duplicate), "invalid_arguments");
    let too_many: Vec<Value> = (0..101)
        .map(|i| claim(&format!("c{i}"), &missing, "instructions", "unchanged"))
        .collect();
    assert_eq!(
        error_code(&verify(&client, too_many).await),
        "invalid_arguments"
    );
    assert_eq!(
        error_code(&verify(&client, vec![]).await),
        "invalid_arguments"
    );
    let bad_expectation = verify(&client, vec![claim("a", &missing, "instructions", "same")]).await;
    assert_eq!(error_code(&bad_expectation), "invalid_arguments");
    let wrong_version = call(
        &client,
        "verify_reconstruction",
        json!({"specification": {"schema_version": 2, "name": "x", "claims": [claim("a", &missing, "instructions", "unchanged")]}}),
    )
    .await;
    assert_eq!(error_code(&wrong_version), "invalid_arguments");

    // Comparisons read the ledger; close_binary clears it.
    let closed = call(&client, "close_binary", json!({})).await;
    assert!(!closed.1, "close_binary: {}", closed.0);
    let after = call(
        &client,
        "compare_functions",
        json!({"left_evidence_id": analyzed, "right_evidence_id": analyzed}),
    )
    .await;
    assert_eq!(error_code(&after), "evidence_not_found");
}
