//! The investigation record end to end through the real `rea mcp` binary:
//! Evidence from a compiled C binary, residual unknowns (CAS, the
//! verified-resolution rule), bundle export under `--write-root`, and import
//! into a NEW server process, after which listing, get_evidence and
//! completion answer exactly as before the export.

mod common;

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::CompletionInfo;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

async fn server(args: &[&Path]) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rea"));
    cmd.arg("mcp")
        .env_remove("REA_LOG")
        .env("REA_ANALYSIS_PROVIDER", "native");
    for dir in args {
        cmd.arg("--write-root").arg(dir);
    }
    ().serve(TokioChildProcess::new(cmd).expect("rea mcp starts"))
        .await
        .expect("client connects")
}

async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> (Value, bool) {
    common::call_peer_with(peer, tool, args).await
}

/// A residual-unknown revision as an answer states it: the recorded state
/// as the result, its digest and mutation history as context.
fn unknown_of(answer: &Value) -> Value {
    let mut revision = answer["result"].clone();
    for (k, v) in answer["context"].as_object().expect("context") {
        revision[k] = v.clone();
    }
    revision
}

/// The result of a call that must succeed.
async fn ok(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Value {
    let (out, failed) = call(peer, tool, args).await;
    assert!(!failed, "{tool} failed: {out}");
    out
}

/// The error code of a call that must fail, with the whole error.
async fn fails(peer: &Peer<RoleClient>, tool: &str, args: Value) -> (String, Value) {
    let (out, failed) = call(peer, tool, args).await;
    assert!(failed, "{tool} should fail: {out}");
    assert!(out.get("evidence").is_none(), "failures carry no Evidence");
    let code = out["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (code, out["error"].clone())
}

async fn complete(peer: &Peer<RoleClient>, argument: &str) -> CompletionInfo {
    peer.complete_prompt_argument("audit_residual_unknowns", argument, "", None)
        .await
        .unwrap_or_else(|e| panic!("completion/complete {argument}: {e}"))
}

/// What must survive a restart: heads, records and completion answers.
async fn snapshot(peer: &Peer<RoleClient>, ids: &[String]) -> Value {
    let unknowns = ok(peer, "list_unknowns", json!({}))
        .await
        .pointer("/result/items")
        .cloned();
    let evidence = ok(peer, "list_evidence", json!({"limit": 500})).await["result"].clone();
    let mut records = Vec::new();
    for id in ids {
        records.push(ok(peer, "get_evidence", json!({"evidence_id": id})).await["result"].clone());
    }
    let unknown_values = complete(peer, "unknown_id").await.values;
    let evidence_values = complete(peer, "evidence_id").await.values;
    json!({
        "unknowns": unknowns,
        "evidence": evidence,
        "records": records,
        "unknown_completion": unknown_values,
        "evidence_completion": evidence_values,
    })
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".rea-tmp-"))
        .collect()
}

#[tokio::test]
async fn an_investigation_survives_export_and_import_into_a_new_server() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = common::sample_binary(dir.path(), "records.elf", "first_procedure") else {
        return;
    };
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();

    let first = server(&[&out]).await;
    let status = ok(&first, "binary_session", json!({})).await;
    assert_eq!(status["result"]["write_policy"]["enabled"], json!(true));
    let opened = ok(&first, "open_binary", json!({"path": bin})).await;
    let opened_id = opened["evidence"]["evidence_id"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = ok(&first, "list_procedures", json!({})).await;
    let listed_id = listed["evidence"]["evidence_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Evidence tools.
    let page = ok(
        &first,
        "list_evidence",
        json!({"operation": "list_procedures"}),
    )
    .await;
    assert_eq!(page["evidence"], Value::Null, "listing records no Evidence");
    assert_eq!(page["result"]["total"], json!(1));
    assert_eq!(page["result"]["items"][0]["evidence_id"], json!(listed_id));
    let record = ok(&first, "get_evidence", json!({"evidence_id": listed_id})).await;
    let mut header = record["result"].clone();
    let recorded_result = header.as_object_mut().unwrap().remove("result").unwrap();
    assert_eq!(
        header, listed["evidence"],
        "get_evidence returns the whole record"
    );
    assert_eq!(recorded_result, listed["result"]);
    let (code, error) = fails(
        &first,
        "get_evidence",
        json!({"evidence_id": format!("ev_{}", "0".repeat(64))}),
    )
    .await;
    assert_eq!(code, "evidence_not_found");
    assert!(
        error["remediation"]
            .as_str()
            .unwrap()
            .contains("list_evidence")
    );
    assert_eq!(
        fails(&first, "get_evidence", json!({"evidence_id": "ev_nope"}))
            .await
            .0,
        "invalid_arguments"
    );

    // Unknowns: approval, then CAS.
    let question = json!({
        "question": "Which  server does first_procedure contact?",
        "domain": "network",
        "severity": "high",
        "supporting_evidence_ids": [listed_id],
        "required_confidence": "observed",
        "required_authority": "shipped-artifact",
        "recommended_probes": [{"operation": "trace_feature", "rationale": "find the URL"}],
    });
    assert_eq!(
        fails(&first, "record_unknown", question.clone()).await.0,
        "approval_required"
    );
    let mut approved = question.clone();
    approved["approved"] = json!(true);
    let recorded = ok(&first, "record_unknown", approved).await;
    let open = unknown_of(&recorded);
    let open_id = open["unknown_id"].as_str().unwrap().to_string();
    assert_eq!(open["revision"], json!(1));
    assert_eq!(
        open["question"],
        json!("Which  server does first_procedure contact?")
    );
    let sha256 = opened["result"]["sha256"].clone();
    assert_eq!(open["scope_digest"], sha256, "scoped to the active target");
    assert_eq!(recorded["evidence"]["subject"]["sha256"], sha256);
    assert_eq!(
        recorded["evidence"]["provider"]["id"],
        json!("rea-unknown-registry")
    );
    assert_eq!(
        open["mutation_evidence_ids"],
        json!([recorded["evidence"]["evidence_id"]])
    );
    let state = |status: &str, supporting: &[&str]| {
        json!({
            "unknown_id": open_id,
            "status": status,
            "severity": "high",
            "supporting_evidence_ids": supporting,
            "required_confidence": "observed",
            "required_authority": "shipped-artifact",
            "approved": true,
        })
    };
    let mut investigating = state("investigating", &[&listed_id]);
    investigating["expected_revision"] = json!(1);
    let second = ok(&first, "update_unknown", investigating.clone()).await;
    assert_eq!(second["result"]["revision"], json!(2));
    let (code, error) = fails(&first, "update_unknown", investigating).await;
    assert_eq!(code, "revision_conflict");
    assert_eq!(error["data"]["current_head"], unknown_of(&second));

    // A verified resolution is refused without qualifying supporting Evidence:
    // the registry's own mutation record never qualifies...
    let mutation = recorded["evidence"]["evidence_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut by_mutation = state("resolved", &[&mutation]);
    by_mutation["expected_revision"] = json!(2);
    by_mutation["resolution"] =
        json!({"disposition": "verified", "rationale": "recorded", "evidence_ids": [mutation]});
    let (code, error) = fails(&first, "update_unknown", by_mutation).await;
    assert_eq!(code, "invalid_transition");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("mutation record"),
        "{error}"
    );
    // ...nor does a record that is cited but not supporting.
    let mut unsupported = state("resolved", &[&listed_id]);
    unsupported["expected_revision"] = json!(2);
    unsupported["resolution"] =
        json!({"disposition": "verified", "rationale": "opened", "evidence_ids": [opened_id]});
    assert_eq!(
        fails(&first, "update_unknown", unsupported).await.0,
        "invalid_transition"
    );

    // A second unknown, resolved by the observed inventory.
    let mut other = question.clone();
    other["question"] = json!("Is first_procedure reachable from main?");
    other["approved"] = json!(true);
    let resolved_id = ok(&first, "record_unknown", other).await["result"]["unknown_id"]
        .as_str()
        .unwrap()
        .to_string();
    let resolve = json!({
        "unknown_id": resolved_id,
        "expected_revision": 1,
        "status": "resolved",
        "severity": "high",
        "supporting_evidence_ids": [listed_id],
        "required_confidence": "observed",
        "resolution": {"disposition": "verified", "rationale": "listed", "evidence_ids": [listed_id]},
        "approved": true,
    });
    ok(&first, "update_unknown", resolve).await;
    let verdict = ok(
        &first,
        "verify_unknown_resolution",
        json!({"unknown_id": resolved_id}),
    )
    .await;
    assert_eq!(verdict["result"]["valid"], json!(true));
    assert_eq!(
        verdict["result"]["truth_verified"],
        json!(true),
        "{verdict}"
    );
    assert_eq!(
        fails(
            &first,
            "verify_unknown_resolution",
            json!({"unknown_id": "unk_x"})
        )
        .await
        .0,
        "invalid_arguments"
    );
    let absent = format!("unk_{}", "0".repeat(64));
    assert_eq!(
        fails(
            &first,
            "verify_unknown_resolution",
            json!({"unknown_id": absent})
        )
        .await
        .0,
        "unknown_not_found"
    );
    let verdict = ok(
        &first,
        "verify_unknown_resolution",
        json!({"unknown_id": open_id}),
    )
    .await;
    assert_eq!(verdict["result"]["valid"], json!(false));
    assert_eq!(verdict["result"]["truth_verified"], json!(false));

    let filtered = ok(&first, "list_unknowns", json!({"status": "resolved"})).await;
    assert_eq!(filtered["result"]["total"], json!(1));
    assert_eq!(
        filtered["result"]["items"][0]["unknown_id"],
        json!(resolved_id)
    );

    let ids = vec![opened_id.clone(), listed_id.clone(), mutation.clone()];
    let before = snapshot(&first, &ids).await;
    assert_eq!(
        before["unknown_completion"],
        json!([open_id]),
        "only unresolved heads"
    );
    assert!(
        before["evidence_completion"]
            .as_array()
            .unwrap()
            .contains(&json!(listed_id))
    );

    // Export: approval, confinement, overwrite.
    let bundle = out.join("investigation.json");
    assert_eq!(
        fails(&first, "export_evidence_bundle", json!({"path": bundle}))
            .await
            .0,
        "approval_required"
    );
    let (code, _) = fails(
        &first,
        "export_evidence_bundle",
        json!({"path": dir.path().join("outside.json"), "approved": true}),
    )
    .await;
    assert_eq!(code, "outside_write_roots");
    let (code, _) = fails(
        &first,
        "export_evidence_bundle",
        json!({"path": out.join("../escape.json"), "approved": true}),
    )
    .await;
    assert_eq!(code, "invalid_path");
    let exported = ok(
        &first,
        "export_evidence_bundle",
        json!({"path": bundle, "approved": true}),
    )
    .await;
    assert_eq!(exported["evidence"], Value::Null);
    let summary = &exported["result"];
    let before_total = before["evidence"]["total"].as_u64().unwrap();
    assert_eq!(summary["records"], json!(before_total));
    assert_eq!(
        summary["unknowns"],
        json!(4),
        "two revisions of each unknown"
    );
    assert_eq!(
        summary["bytes"],
        json!(std::fs::metadata(&bundle).unwrap().len())
    );
    assert_eq!(
        fails(
            &first,
            "export_evidence_bundle",
            json!({"path": bundle, "approved": true})
        )
        .await
        .0,
        "already_exists"
    );
    let again = ok(
        &first,
        "export_evidence_bundle",
        json!({"path": bundle, "approved": true, "overwrite": true}),
    )
    .await;
    assert_eq!(
        again["result"]["bundle_sha256"], summary["bundle_sha256"],
        "deterministic"
    );
    assert!(temp_files(&out).is_empty());
    first.cancel().await.expect("close the first server");

    // A NEW server process, with writing disabled.
    let second = server(&[]).await;
    let status = ok(&second, "binary_session", json!({})).await;
    let export_status = status["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == json!("export_evidence_bundle"))
        .cloned()
        .unwrap();
    assert_eq!(export_status["reason"], json!("policy_disabled"));
    let (code, error) = fails(
        &second,
        "export_evidence_bundle",
        json!({"path": out.join("x.json"), "approved": true}),
    )
    .await;
    assert_eq!(code, "write_disabled");
    assert!(
        error["remediation"]
            .as_str()
            .unwrap()
            .contains("--write-root")
    );
    assert!(complete(&second, "unknown_id").await.values.is_empty());

    let imported = ok(&second, "import_evidence_bundle", json!({"path": bundle})).await;
    assert_eq!(imported["result"]["records_added"], json!(before_total));
    assert_eq!(imported["result"]["unknowns_added"], json!(4));
    assert_eq!(
        imported["result"]["bundle_sha256"],
        summary["bundle_sha256"]
    );
    let after = snapshot(&second, &ids).await;
    assert_eq!(after, before);

    // The imported chain continues: CAS against the imported head.
    let mut blocked = state("blocked", &[&listed_id]);
    blocked["expected_revision"] = json!(2);
    let third = ok(&second, "update_unknown", blocked).await;
    assert_eq!(third["result"]["revision"], json!(3));

    // close_binary clears the registry with the ledger.
    ok(&second, "open_binary", json!({"path": bin})).await;
    let closed = ok(&second, "close_binary", json!({})).await;
    assert_eq!(closed["result"]["unknowns_cleared"], json!(true));
    let empty = ok(&second, "list_unknowns", json!({})).await;
    assert_eq!(empty["result"]["total"], json!(0));
    assert!(complete(&second, "unknown_id").await.values.is_empty());
    assert!(complete(&second, "evidence_id").await.values.is_empty());

    // An imported ledger can be cleared with nothing open.
    ok(&second, "import_evidence_bundle", json!({"path": bundle})).await;
    let closed = ok(&second, "close_binary", json!({})).await;
    assert_eq!(closed["result"]["closed"], Value::Null);
    assert!(complete(&second, "evidence_id").await.values.is_empty());
    second.cancel().await.expect("close the second server");
}

#[tokio::test]
async fn a_tampered_bundle_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = common::sample_binary(dir.path(), "tamper.elf", "first_procedure") else {
        return;
    };
    let client = server(&[dir.path()]).await;
    ok(&client, "open_binary", json!({"path": bin})).await;
    let bundle = dir.path().join("b.json");
    ok(
        &client,
        "export_evidence_bundle",
        json!({"path": bundle, "approved": true}),
    )
    .await;
    let mut value: Value = serde_json::from_slice(&std::fs::read(&bundle).unwrap()).unwrap();
    value["records"][0]["result"]["sha256"] = json!("0".repeat(64));
    std::fs::write(&bundle, serde_json::to_vec(&value).unwrap()).unwrap();
    ok(&client, "close_binary", json!({})).await;
    let (code, error) = fails(&client, "import_evidence_bundle", json!({"path": bundle})).await;
    assert_eq!(code, "integrity_error", "{error}");
    let page = ok(&client, "list_evidence", json!({})).await;
    assert_eq!(page["result"]["total"], json!(0), "nothing was imported");
    client.cancel().await.expect("close");
}

#[test]
fn an_unusable_write_root_stops_the_server_before_it_serves() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-directory");
    std::fs::write(&file, b"x").unwrap();
    for root in [dir.path().join("missing"), file] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rea"))
            .arg("mcp")
            .arg("--write-root")
            .arg(&root)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{root:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("write root"), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing is served on stdout");
    }
}
