//! radare2 bound through `open_binary` and answering the same tool names
//! over MCP: selection rules, Evidence identity, overlap with the native
//! provider, and a radare2 timeout that fails one call while the server
//! keeps serving. Skips (or fails with REA_REQUIRE_EXTERNALS=1) without
//! radare2.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::{Era, call, connect_to};
use rea::catalog::render::LoadedCatalog;
use rea::providers::radare2::{
    Detection, DetectionEnv, Radare2Options, Timeouts, detect_in, symbol_name,
};
use rea::server::Hub;
use rea::session::{DeepProviders, ReadRoots};
use serde_json::{Value, json};

/// The fixture: a 0.5 MB ELF x86-64 shared object with dynamic symbols.
const FIXTURE: &str = "watcher-linux-x64.node";

fn hub(detection: Detection, options: Radare2Options) -> Arc<Hub> {
    Hub::with_deep_providers(
        LoadedCatalog::embedded().expect("embedded catalog"),
        ReadRoots::default(),
        DeepProviders::with_radare2(detection, options),
    )
}

fn ok(out: &(Value, bool)) -> &Value {
    assert!(!out.1, "tool failed: {}", out.0);
    &out.0["result"]
}

/// Every `{name, aliases}` of a procedure page, as symbol names.
fn symbol_names(items: &Value, radare2: bool) -> BTreeSet<(String, String)> {
    let mut names = BTreeSet::new();
    for item in items.as_array().into_iter().flatten() {
        let address = item["address"].as_str().unwrap_or_default().to_owned();
        // Imports at their stubs are named by the import tables; radare2
        // names its own PLT entries `sym.imp.*`, compared elsewhere.
        let imported = item["found_by"]
            .as_array()
            .is_some_and(|found| found.contains(&json!("import")));
        if imported {
            continue;
        }
        let listed = item["name"].as_str().into_iter().chain(
            item["aliases"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
        for name in listed {
            let raw = if radare2 {
                symbol_name(name)
            } else {
                Some(name)
            };
            if let Some(raw) = raw {
                names.insert((address.clone(), raw.to_owned()));
            }
        }
    }
    names
}

async fn all_procedures(client: &common::Client) -> Value {
    let mut items = Vec::new();
    let mut offset = 0u64;
    loop {
        let page = call(
            client,
            "list_procedures",
            json!({"offset": offset, "limit": 500}),
        )
        .await;
        let page = ok(&page).clone();
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => return Value::Array(items),
        }
    }
}

#[tokio::test]
async fn radare2_answers_the_code_tools_and_overlaps_the_native_provider() {
    let Some(detection) = common::radare2() else {
        return;
    };
    let Some(file) = common::fixture(FIXTURE) else {
        return;
    };
    let hub = hub(detection, Radare2Options::default());
    let (client, _server, _) = connect_to(&hub, Era::Modern).await;

    // Target-free status lists the candidate without starting anything.
    let status = call(&client, "binary_session", json!({})).await;
    let candidates = &ok(&status)["providers"]["deep_candidates"];
    assert_eq!(candidates[0]["provider"], json!("radare2"));
    assert_eq!(candidates[0]["availability"], json!("available"));
    assert_eq!(candidates[0]["target_support"], json!("unknown"));

    // Native first, for the comparison.
    ok(&call(
        &client,
        "open_binary",
        json!({"path": file, "provider_id": "native"}),
    )
    .await);
    let native = symbol_names(&all_procedures(&client).await, false);

    // auto with one available candidate binds radare2.
    let opened = call(&client, "open_binary", json!({"path": file})).await;
    let binding = &ok(&opened)["binding"];
    assert_eq!(binding["provider_id"], json!("radare2"));
    assert_eq!(binding["selection_source"], json!("auto_single_candidate"));
    let listed = call(&client, "list_procedures", json!({"limit": 10})).await;
    let provider = &listed.0["evidence"]["provider"];
    assert_eq!(provider["id"], json!("radare2"));
    assert!(
        provider["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("5.")),
        "{provider}"
    );
    let radare2 = symbol_names(&all_procedures(&client).await, true);

    // Symbol-named functions (by address, since radare2 shortens long
    // names): radare2 finds at least 90% of the native ones.
    let native_functions: BTreeSet<&String> = native.iter().map(|(address, _)| address).collect();
    let radare2_functions: BTreeSet<&String> = radare2.iter().map(|(address, _)| address).collect();
    let missing: Vec<_> = native
        .iter()
        .filter(|(a, _)| !radare2_functions.contains(a))
        .collect();
    let shared = native_functions.len()
        - missing
            .iter()
            .map(|(a, _)| a)
            .collect::<BTreeSet<_>>()
            .len();
    assert!(
        shared * 10 >= native_functions.len() * 9,
        "overlap {shared} of {} symbol-named functions; missing from radare2: {:?}",
        native_functions.len(),
        &missing[..missing.len().min(20)]
    );

    // The same code tools answer from radare2.
    let unref = "0x38330";
    let dossier = call(&client, "analyze_function", json!({"procedure": unref})).await;
    let dossier = ok(&dossier);
    assert!(
        !dossier["instructions"]
            .as_array()
            .expect("listing")
            .is_empty()
    );
    assert_eq!(dossier["procedure"]["address"], json!(unref));
    let callers = call(&client, "procedure_callers", json!({"procedure": unref})).await;
    ok(&callers);
    let callees = call(&client, "procedure_callees", json!({"procedure": unref})).await;
    assert_eq!(callees.0["evidence"]["provider"]["id"], json!("radare2"));

    // A feature trace and a call path run over radare2's analysis.
    let traced = call(
        &client,
        "trace_feature",
        json!({"query": "ignoreGlobs", "case_sensitive": true, "max_depth": 1}),
    )
    .await;
    let trace = ok(&traced);
    assert_eq!(traced.0["evidence"]["provider"]["id"], json!("radare2"));
    let user = trace["procedures"]["items"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["depth"] == json!(0)))
        .unwrap_or_else(|| panic!("radare2 finds the code using the string: {trace}"));
    let path = call(
        &client,
        "build_call_path",
        json!({"start": user["address"], "goal": user["address"]}),
    )
    .await;
    assert_eq!(ok(&path)["status"], json!("found"));
    assert_eq!(path.0["evidence"]["provider"]["id"], json!("radare2"));

    // File facts still come from the file reader, and say so.
    let strings = call(&client, "search_strings", json!({"pattern": "watch"})).await;
    assert_eq!(strings.0["evidence"]["provider"]["id"], json!("native"));
}

#[tokio::test]
async fn a_radare2_timeout_is_a_typed_error_and_the_server_keeps_serving() {
    let Some(detection) = common::radare2() else {
        return;
    };
    let Some(file) = common::fixture(FIXTURE) else {
        return;
    };
    let tiny = Radare2Options {
        timeouts: Timeouts {
            analysis: Duration::from_millis(1),
            query: Duration::from_millis(1),
        },
        ..Radare2Options::default()
    };
    let hub = hub(detection, tiny);
    let (client, _server, _) = connect_to(&hub, Era::Legacy).await;
    let failed = call(
        &client,
        "open_binary",
        json!({"path": file, "provider_id": "radare2"}),
    )
    .await;
    assert!(failed.1, "{}", failed.0);
    assert_eq!(
        failed.0["error"]["code"],
        json!("provider_timeout"),
        "{}",
        failed.0
    );
    assert!(failed.0["evidence"].is_null());
    // Nothing was opened, and the server still answers.
    let status = call(&client, "binary_session", json!({})).await;
    assert_eq!(ok(&status)["open"], json!(false));
    // Never a fallback: the explicit native binding is a separate request.
    let native = call(
        &client,
        "open_binary",
        json!({"path": file, "provider_id": "native"}),
    )
    .await;
    assert_eq!(ok(&native)["binding"]["provider_id"], json!("native"));
}

#[tokio::test]
async fn an_unavailable_radare2_is_an_error_when_named_and_skipped_by_auto() {
    let Some(file) = common::fixture(FIXTURE) else {
        return;
    };
    let missing = DetectionEnv {
        path: Some("/nonexistent".into()),
        libr: None,
        host: None,
    };
    let hub = hub(detect_in(&missing), Radare2Options::default());
    let (client, _server, _) = connect_to(&hub, Era::Modern).await;
    let named = call(
        &client,
        "open_binary",
        json!({"path": file, "provider_id": "radare2"}),
    )
    .await;
    assert!(named.1);
    assert_eq!(named.0["error"]["code"], json!("provider_unavailable"));
    assert!(
        named.0["error"]["remediation"]
            .as_str()
            .is_some_and(|r| r.contains("r2libr"))
    );
    let auto = call(&client, "open_binary", json!({"path": file})).await;
    assert_eq!(
        ok(&auto)["binding"]["selection_source"],
        json!("auto_no_deep_candidate")
    );
}
