//! rmcp's own client against the real `rea mcp` binary over a child
//! process's stdio, in both protocol eras: negotiation, prompts/list, and the
//! document/procedure completion lifecycle on the pinned universal Mach-O
//! fixture, with expectations from `llvm-nm`.

mod common;

use std::collections::HashMap;

use rmcp::ServiceExt;
use rmcp::model::{CompletionContext, CompletionInfo, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, Peer, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const PROMPTS: [&str; 6] = [
    "investigate_feature",
    "compare_application_versions",
    "verify_reconstruction",
    "trace_crash",
    "audit_residual_unknowns",
    "prepare_bounded_process_capture",
];

const ARM64: &str = "fsevents.node (arm64)";
const X86_64: &str = "fsevents.node (x86_64)";

type Client = RunningService<RoleClient, ()>;

fn transport() -> TokioChildProcess {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rea"));
    // These tests pin the built-in provider; a radare2 on this machine
    // (r2 on PATH, REA_RADARE2_LIBR) is exercised in tests/mcp_radare2.rs.
    cmd.arg("mcp")
        .env_remove("REA_LOG")
        .env("REA_ANALYSIS_PROVIDER", "native");
    TokioChildProcess::new(cmd).expect("rea mcp starts")
}

async fn connect(era: common::Era) -> Client {
    match era {
        common::Era::Legacy => ().serve(transport()).await.expect("legacy client connects"),
        common::Era::Modern => rmcp::service::ClientServiceExt::serve_with_lifecycle(
            (),
            transport(),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("modern client connects"),
    }
}

fn expected_version(era: common::Era) -> ProtocolVersion {
    match era {
        common::Era::Legacy => ProtocolVersion::V_2025_11_25,
        common::Era::Modern => ProtocolVersion::V_2026_07_28,
    }
}

async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> (Value, bool) {
    common::call_peer_with(peer, tool, args).await
}

async fn complete(
    peer: &Peer<RoleClient>,
    argument: &str,
    value: &str,
    document: Option<&str>,
) -> CompletionInfo {
    let context = document.map(|d| {
        CompletionContext::with_arguments(HashMap::from([("document".to_string(), d.to_string())]))
    });
    peer.complete_prompt_argument("investigate_feature", argument, value, context)
        .await
        .unwrap_or_else(|e| panic!("completion/complete {argument}: {e}"))
}

#[tokio::test]
async fn both_eras_negotiate_their_version_and_list_prompts() {
    for era in common::ERAS {
        let client = connect(era).await;
        let info = client.peer_info().expect("server info after the handshake");
        assert_eq!(info.protocol_version, expected_version(era), "{era:?}");
        let prompts = client.list_all_prompts().await.expect("prompts/list");
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, PROMPTS, "{era:?}");
        client.cancel().await.expect("close");
    }
}

#[tokio::test]
async fn completion_lifecycle_on_the_universal_fixture() {
    let Some(path) = common::fixture("fsevents.node") else {
        return;
    };
    let Some(functions) = common::nm_functions(&["--arch=arm64"], &path) else {
        return;
    };
    // A bundle has no entry point; candidates are every address and each
    // name that identifies exactly one address.
    let candidates = common::expected_candidates(&functions, &[]);
    let name = "_FSEStart";
    assert!(
        candidates.iter().any(|c| c == name),
        "{name} is a unique name in llvm-nm --arch=arm64"
    );
    let prefix = name.to_lowercase();
    let matching: Vec<String> = candidates
        .iter()
        .filter(|c| c.to_lowercase().starts_with(&prefix))
        .cloned()
        .collect();
    assert!(
        matching.len() > 1,
        "the .cold parts share the prefix: {matching:?}"
    );
    let address = functions
        .iter()
        .find(|(_, n)| n == name)
        .map(|(a, _)| format!("{a:#x}"))
        .expect("an address");
    assert_eq!(address, "0xea0", "tests/fixtures/README.md oracle");

    for era in common::ERAS {
        let client = connect(era).await;
        assert_eq!(
            client.peer_info().expect("info").protocol_version,
            expected_version(era)
        );
        assert_eq!(
            client.list_all_prompts().await.expect("prompts/list").len(),
            PROMPTS.len()
        );

        // Nothing open yet: nothing to complete.
        let info = complete(&client, "document", "fsevents", None).await;
        assert!(info.values.is_empty(), "{era:?}: {:?}", info.values);

        let (opened, failed) = call(&client, "open_binary", json!({"path": path})).await;
        assert!(!failed, "{era:?}: open_binary failed: {opened}");

        let info = complete(&client, "document", "fsevents", None).await;
        assert_eq!(common::values(&info), [ARM64, X86_64], "{era:?}");
        assert_eq!((info.total, info.has_more), (Some(2), Some(false)));

        let info = complete(&client, "procedure", name, Some(ARM64)).await;
        assert!(
            info.values.iter().any(|v| v == name),
            "{era:?}: {name} not offered: {:?}",
            info.values
        );
        assert_eq!(info.total, Some(matching.len() as u32), "{era:?}");
        assert_eq!(info.values, matching, "{era:?}");
        assert_eq!(info.has_more, Some(false));

        // The context selects the slice: the arm64 address completes there.
        let info = complete(&client, "procedure", &address, Some(ARM64)).await;
        assert!(info.values.contains(&address), "{era:?}: {:?}", info.values);

        let (closed, failed) = call(&client, "close_binary", json!({})).await;
        assert!(!failed, "{era:?}: close_binary failed: {closed}");
        for (argument, value, document) in [
            ("document", "fsevents", None),
            ("procedure", name, Some(ARM64)),
            ("procedure", "", Some(X86_64)),
        ] {
            let info = complete(&client, argument, value, document).await;
            assert!(
                info.values.is_empty(),
                "{era:?}: {argument} after close: {:?}",
                info.values
            );
            assert_eq!((info.total, info.has_more), (Some(0), Some(false)));
        }
        client.cancel().await.expect("close");
    }
}
