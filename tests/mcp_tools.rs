//! Name-level procedure tools through the MCP surface: search_procedures and
//! procedure_address, checked against llvm-nm.

mod common;

use common::{Era, call, connect, sample_binary};
use serde_json::{Value, json};

fn addresses_of(nm: &[(u64, char, String)], name: &str) -> Vec<String> {
    nm.iter()
        .filter(|(_, _, n)| n == name)
        .map(|(a, _, _)| format!("{a:#x}"))
        .collect()
}

fn matched(page: &Value) -> Vec<String> {
    page["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["matched_name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn search_and_resolve_names_in_a_compiled_binary() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = sample_binary(dir.path(), "names.elf", "first_procedure") else {
        return;
    };
    let Some(nm) = common::llvm_nm(&["--defined-only"], &bin) else {
        return;
    };
    let (client, _, _) = connect(Era::Legacy).await;
    call(&client, "open_binary", json!({"path": bin})).await;

    let (page, failed) = call(
        &client,
        "search_procedures",
        json!({"pattern": "FIRST_PROC"}),
    )
    .await;
    assert!(!failed, "{page}");
    assert_eq!(matched(&page), ["first_procedure"]);
    assert_eq!(
        page["result"]["items"][0]["address"],
        json!(addresses_of(&nm, "first_procedure")[0])
    );
    assert!(
        page["evidence"]["evidence_id"]
            .as_str()
            .unwrap()
            .starts_with("ev_")
    );

    let (page, _) = call(
        &client,
        "search_procedures",
        json!({"pattern": "FIRST_PROC", "case_sensitive": true}),
    )
    .await;
    assert_eq!(page["result"]["total"], 0);

    let (page, _) = call(
        &client,
        "search_procedures",
        json!({"pattern": "^(unique|first)_", "mode": "regex"}),
    )
    .await;
    let mut names = matched(&page);
    names.sort();
    assert_eq!(names, ["first_procedure", "unique_helper"]);

    let (page, _) = call(
        &client,
        "search_procedures",
        json!({"pattern": "duplicate", "limit": 1}),
    )
    .await;
    assert_eq!(page["result"]["total"], 2);
    assert_eq!(page["result"]["has_more"], true);
    assert_eq!(page["result"]["next_offset"], 1);

    let (page, failed) = call(
        &client,
        "search_procedures",
        json!({"pattern": "(", "mode": "regex"}),
    )
    .await;
    assert!(failed);
    assert_eq!(page["error"]["code"], "invalid_pattern");

    let (found, failed) = call(
        &client,
        "procedure_address",
        json!({"procedure": "first_procedure"}),
    )
    .await;
    assert!(!failed, "{found}");
    let address = addresses_of(&nm, "first_procedure")[0].clone();
    assert_eq!(found["result"]["address"], json!(address));
    let (again, _) = call(&client, "procedure_address", json!({"procedure": address})).await;
    assert_eq!(again["result"]["name"], "first_procedure");

    let (err, failed) = call(
        &client,
        "procedure_address",
        json!({"procedure": "duplicate"}),
    )
    .await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "ambiguous_procedure");
    for a in addresses_of(&nm, "duplicate") {
        assert!(
            err["error"]["message"].as_str().unwrap().contains(&a),
            "{err}"
        );
    }
    let (err, _) = call(
        &client,
        "procedure_address",
        json!({"procedure": "first_procedur"}),
    )
    .await;
    assert_eq!(err["error"]["code"], "unknown_procedure");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `first_procedure`")
    );
    let inside = format!(
        "{:#x}",
        u64::from_str_radix(address.trim_start_matches("0x"), 16).unwrap() + 1
    );
    let (err, _) = call(&client, "procedure_address", json!({"procedure": inside})).await;
    assert_eq!(err["error"]["code"], "not_a_procedure_start");
}

#[tokio::test]
async fn demangled_cpp_names_are_searchable_and_resolvable() {
    let Some(path) = common::fixture("watcher-linux-x64.node") else {
        return;
    };
    let (client, _, _) = connect(Era::Modern).await;
    call(&client, "open_binary", json!({"path": path})).await;
    let (page, failed) = call(
        &client,
        "search_procedures",
        json!({"pattern": "subscribe(Napi::CallbackInfo"}),
    )
    .await;
    assert!(!failed, "{page}");
    let items = page["result"]["items"].as_array().unwrap();
    let hit = items
        .iter()
        .find(|i| i["matched_name"] == "_Z9subscribeRKN4Napi12CallbackInfoE")
        .unwrap_or_else(|| panic!("{page}"));
    assert_eq!(hit["demangled"], "subscribe(Napi::CallbackInfo const&)");
    assert_eq!(hit["address"], "0x25590");
    let (found, failed) = call(
        &client,
        "procedure_address",
        json!({"procedure": "subscribe(Napi::CallbackInfo const&)"}),
    )
    .await;
    assert!(!failed, "{found}");
    assert_eq!(found["result"]["address"], "0x25590");
}
