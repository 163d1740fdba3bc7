//! completion/complete through an in-process rmcp client, in both protocol
//! eras, against binaries compiled for the test (ports REA's completion
//! tests, with rea's deliberate differences: complete inventories with exact
//! totals, `total: 0` for over-long values, no `total` when not completable).

mod common;

use common::{ERAS, Era, call, complete, complete_with, connect, sample_binary, values};
use rmcp::model::{CompleteRequestParams, ErrorCode, Reference};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

#[tokio::test]
async fn arguments_that_do_not_complete_answer_empty_without_total() {
    for era in ERAS {
        let (client, _, _) = connect(era).await;
        for (prompt, arg) in [
            ("investigate_feature", "feature"),
            ("investigate_feature", "nonexistent"),
        ] {
            let info = complete(&client, prompt, arg, "").await;
            assert!(info.values.is_empty());
            assert_eq!(info.has_more, Some(false));
            assert_eq!(info.total, None, "{era:?} {arg}");
        }
        let long = "a".repeat(4097);
        let info = complete(&client, "investigate_feature", "document", &long).await;
        assert!(info.values.is_empty());
        assert_eq!((info.total, info.has_more), (Some(0), Some(false)));
    }
}

#[tokio::test]
async fn unknown_prompts_and_resource_references_are_invalid_params() {
    for era in ERAS {
        let (client, _, _) = connect(era).await;
        let err = client
            .complete_prompt_argument("nope", "document", "", None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS),
            "{err:?}"
        );
        let err = client
            .complete(CompleteRequestParams::new(
                Reference::for_resource("rea://evidence/{id}"),
                rmcp::model::ArgumentInfo::new("id", ""),
            ))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS),
            "{err:?}"
        );
    }
}

#[tokio::test]
async fn target_free_completion_is_empty_except_auto() {
    for era in ERAS {
        let (client, server, _) = connect(era).await;
        for (prompt, arg) in [
            ("investigate_feature", "document"),
            ("investigate_feature", "procedure"),
            ("verify_reconstruction", "comparison_evidence_id"),
            ("trace_crash", "capture_evidence_id"),
            ("compare_application_versions", "left_manifest_id"),
            ("compare_application_versions", "focus_occurrence_id"),
            ("audit_residual_unknowns", "unknown_id"),
        ] {
            let info = complete(&client, prompt, arg, "").await;
            assert!(info.values.is_empty(), "{prompt}.{arg}");
            assert_eq!((info.total, info.has_more), (Some(0), Some(false)));
        }
        let info = complete(&client, "investigate_feature", "provider_id", "A").await;
        assert_eq!(values(&info), ["auto"]);
        assert!(
            server.session().lock().unwrap().target().is_none(),
            "completion opened nothing"
        );
    }
}

#[tokio::test]
async fn lifecycle_documents_procedures_evidence_then_empty_after_close() {
    let dir = tempfile::tempdir().unwrap();
    let Some(first) = sample_binary(dir.path(), "first.elf", "first_procedure") else {
        return;
    };
    let Some(second) = sample_binary(dir.path(), "second.elf", "second_procedure") else {
        return;
    };
    let Some(nm) = common::llvm_nm(&["--defined-only"], &first) else {
        return;
    };
    for era in ERAS {
        let (client, _, _) = connect(era).await;
        let (opened, failed) = call(&client, "open_binary", json!({"path": first})).await;
        assert!(!failed, "{opened}");
        assert!(
            opened["evidence"]["evidence_id"]
                .as_str()
                .unwrap()
                .starts_with("ev_")
        );

        let info = complete(&client, "investigate_feature", "document", "FIRST").await;
        assert_eq!(values(&info), ["first.elf"], "{era:?}");

        // A unique function name completes; the name shared by two static
        // functions does not, but both of its addresses do.
        let ctx = Some(json!({"document": "first.elf"}));
        let info = complete_with(
            &client,
            "investigate_feature",
            "procedure",
            "first",
            ctx.clone(),
        )
        .await;
        assert_eq!(values(&info), ["first_procedure"]);
        let info = complete_with(
            &client,
            "investigate_feature",
            "procedure",
            "dup",
            ctx.clone(),
        )
        .await;
        assert!(
            info.values.is_empty(),
            "duplicate is not unique: {:?}",
            info.values
        );
        let duplicate_addresses: Vec<String> = nm
            .iter()
            .filter(|(_, _, n)| n == "duplicate")
            .map(|(a, _, _)| format!("{a:#x}"))
            .collect();
        assert_eq!(duplicate_addresses.len(), 2);
        let first_address = nm
            .iter()
            .find(|(_, _, n)| n == "first_procedure")
            .map(|(a, _, _)| format!("{a:#x}"))
            .unwrap();
        for address in duplicate_addresses.iter().chain([&first_address]) {
            let info =
                complete_with(&client, "trace_crash", "procedure", address, ctx.clone()).await;
            assert!(
                info.values.contains(address),
                "{address} not offered: {:?}",
                info.values
            );
        }
        // A name with a right-to-left override is never offered (its address still is).
        let info = complete_with(
            &client,
            "investigate_feature",
            "procedure",
            "evil",
            ctx.clone(),
        )
        .await;
        assert!(info.values.is_empty(), "{:?}", info.values);

        // The document context must name a document of the target.
        let info = complete_with(
            &client,
            "investigate_feature",
            "procedure",
            "first",
            Some(json!({"document": "nope"})),
        )
        .await;
        assert!(info.values.is_empty());

        // Concurrent completions agree.
        let answers = futures_join(&client, 16).await;
        assert!(answers.windows(2).all(|w| w[0] == w[1]));
        assert!(answers[0].iter().all(|v| v.starts_with("0x")));

        // Switching targets changes documents and procedures, keeps Evidence.
        let (_, failed) = call(&client, "open_binary", json!({"path": second})).await;
        assert!(!failed);
        assert!(
            complete(&client, "investigate_feature", "document", "first")
                .await
                .values
                .is_empty()
        );
        assert_eq!(
            values(&complete(&client, "investigate_feature", "document", "sec").await),
            ["second.elf"]
        );
        assert_eq!(
            values(&complete(&client, "investigate_feature", "procedure", "second_p").await),
            ["second_procedure"]
        );
        let evidence = complete(
            &client,
            "verify_reconstruction",
            "comparison_evidence_id",
            "ev_",
        )
        .await;
        assert_eq!(evidence.total, Some(2), "both opens are retained");

        let (_, failed) = call(&client, "close_binary", json!({})).await;
        assert!(!failed);
        for (prompt, arg) in [
            ("investigate_feature", "document"),
            ("investigate_feature", "procedure"),
            ("verify_reconstruction", "comparison_evidence_id"),
        ] {
            let info = complete(&client, prompt, arg, "").await;
            assert_eq!(info.total, Some(0), "{prompt}.{arg} after close");
        }
    }
}

async fn futures_join(client: &common::Client, n: usize) -> Vec<Vec<String>> {
    let mut tasks = Vec::new();
    for _ in 0..n {
        let peer = client.peer().clone();
        tasks.push(tokio::spawn(async move {
            peer.complete_prompt_argument("investigate_feature", "procedure", "0x", None)
                .await
                .expect("completion")
                .values
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test]
async fn evidence_completion_covers_the_whole_ledger_with_exact_total() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = sample_binary(dir.path(), "ledger.elf", "first_procedure") else {
        return;
    };
    for era in ERAS {
        let (client, _, _) = connect(era).await;
        call(&client, "open_binary", json!({"path": bin})).await;
        // open_binary plus 149 distinct list_procedures pages = 150 records;
        // then every call again, which must deduplicate.
        for round in 0..2 {
            for limit in 1..=149 {
                let (page, failed) =
                    call(&client, "list_procedures", json!({"limit": limit})).await;
                assert!(!failed, "{page}");
                if round == 1 {
                    assert!(page["evidence"]["evidence_id"].is_string());
                }
            }
        }
        let info = complete(
            &client,
            "verify_reconstruction",
            "comparison_evidence_id",
            "EV_",
        )
        .await;
        assert_eq!(info.total, Some(150));
        assert_eq!(info.values.len(), 100);
        assert_eq!(info.has_more, Some(true));
        let mut sorted = info.values.clone();
        sorted.sort();
        assert_eq!(info.values, sorted);
        // Families whose producing tools do not exist yet stay empty even
        // with a full ledger.
        for (prompt, arg) in [
            ("trace_crash", "capture_evidence_id"),
            ("compare_application_versions", "right_manifest_id"),
            ("compare_application_versions", "focus_occurrence_id"),
            ("audit_residual_unknowns", "unknown_id"),
        ] {
            assert_eq!(
                complete(&client, prompt, arg, "").await.total,
                Some(0),
                "{prompt}.{arg}"
            );
        }
        call(&client, "close_binary", json!({})).await;
        assert_eq!(
            complete(&client, "audit_residual_unknowns", "evidence_id", "")
                .await
                .total,
            Some(0)
        );
    }
}

#[tokio::test]
async fn completion_and_rendering_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = sample_binary(dir.path(), "pure.elf", "first_procedure") else {
        return;
    };
    for era in [Era::Legacy, Era::Modern] {
        let (client, server, _) = connect(era).await;
        call(&client, "open_binary", json!({"path": bin})).await;
        call(&client, "list_procedures", json!({})).await;
        let snapshot = |client: &common::Client| {
            let client = client.peer().clone();
            async move {
                let (status, _) = common::call_peer(&client, "binary_session").await;
                status
            }
        };
        let before: Value = snapshot(&client).await;
        let ledger_before: Vec<String> = server
            .session()
            .lock()
            .unwrap()
            .ledger()
            .records()
            .map(|r| r.evidence_id.clone())
            .collect();
        for i in 0..100 {
            let arg = ["document", "procedure", "provider_id"][i % 3];
            complete(&client, "investigate_feature", arg, "").await;
            client
                .get_prompt(
                    rmcp::model::GetPromptRequestParams::new("investigate_feature").with_arguments(
                        common::object(json!({"feature": "x", "document": "pure.elf"})),
                    ),
                )
                .await
                .unwrap();
        }
        let after: Value = snapshot(&client).await;
        let ledger_after: Vec<String> = server
            .session()
            .lock()
            .unwrap()
            .ledger()
            .records()
            .map(|r| r.evidence_id.clone())
            .collect();
        assert_eq!(before, after);
        assert_eq!(ledger_before, ledger_after);
    }
}
