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

fn readelf_needed(path: &std::path::Path) -> Option<Vec<String>> {
    let out = std::process::Command::new("llvm-readelf")
        .arg("-d")
        .arg(path)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains("(NEEDED)"))
                .filter_map(|l| {
                    l.split('[')
                        .nth(1)
                        .and_then(|r| r.split(']').next())
                        .map(str::to_string)
                })
                .collect(),
        ),
        _ => {
            common::skip("cannot run llvm-readelf -d");
            None
        }
    }
}

#[tokio::test]
async fn binary_layout_reports_libraries_imports_and_subsystem() {
    let (Some(elf), Some(pe)) = (
        common::fixture("watcher-linux-x64.node"),
        common::fixture("esbuild-win32-x64.exe"),
    ) else {
        return;
    };
    let Some(needed) = readelf_needed(&elf) else {
        return;
    };
    let (client, _, _) = connect(Era::Legacy).await;
    call(&client, "open_binary", json!({"path": elf})).await;
    let (layout, failed) = call(&client, "inspect_binary_layout", json!({})).await;
    assert!(!failed, "{layout}");
    assert_eq!(layout["result"]["needed_libraries"]["items"], json!(needed));
    let (sections, _) = call(
        &client,
        "inspect_binary_layout",
        json!({"list": "sections", "limit": 1000}),
    )
    .await;
    assert!(sections["result"]["sections"].get("next_offset").is_none());
    assert!(
        sections["result"]["sections"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == ".text" && s["kind"] == "text")
    );
    assert!(
        layout["evidence"]["evidence_id"]
            .as_str()
            .unwrap()
            .starts_with("ev_")
    );

    call(&client, "open_binary", json!({"path": pe})).await;
    let (layout, _) = call(&client, "inspect_binary_layout", json!({})).await;
    let result = &layout["result"];
    assert_eq!(result["pe_subsystem"], "windows-cui");
    assert_eq!(result["entry_point"], "0x14008c940");
    assert_eq!(result["needed_libraries"]["items"], json!(["kernel32.dll"]));
    // esbuild imports 50 entries, two of them (GetProcAddress, LoadLibraryExW)
    // twice through a second descriptor; the layout lists distinct imports.
    let Ok(out) = std::process::Command::new("llvm-readobj")
        .arg("--coff-imports")
        .arg(&pe)
        .output()
    else {
        common::skip("cannot run llvm-readobj");
        return;
    };
    let expected: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Symbol: "))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_string)
        .collect();
    assert_eq!(result["imports"]["total"], 48);
    assert_eq!(
        result["imports"]["next_offset"], 20,
        "the summary shows the first 20"
    );
    let (page, _) = call(
        &client,
        "inspect_binary_layout",
        json!({"list": "imports", "offset": 0, "limit": 100}),
    )
    .await;
    let imported: std::collections::BTreeSet<String> = page["result"]["imports"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(imported, expected);
    assert_eq!(imported.len(), 48);
}

#[tokio::test]
async fn strings_in_data_sections_are_found_with_addresses_inside_them() {
    let dir = tempfile::tempdir().unwrap();
    let source = r#"
#include <stdio.h>
const char *needle = "rea-needle-string: offline search";
int main(void) { puts(needle); return 0; }
"#;
    let Some(bin) = common::compile_c(dir.path(), "strings.elf", &[("s.c", source)]) else {
        return;
    };
    let (client, _, _) = connect(Era::Modern).await;
    call(&client, "open_binary", json!({"path": bin})).await;
    let (page, failed) = call(
        &client,
        "search_strings",
        json!({"pattern": "OFFLINE SEARCH"}),
    )
    .await;
    assert!(!failed, "{page}");
    let items = page["result"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["value"], "rea-needle-string: offline search");
    assert_eq!(items[0]["encoding"], "ascii");
    let address = u64::from_str_radix(
        items[0]["address"]
            .as_str()
            .unwrap()
            .trim_start_matches("0x"),
        16,
    )
    .unwrap();
    let section = items[0]["section"].as_str().unwrap().to_string();
    let (layout, _) = call(
        &client,
        "inspect_binary_layout",
        json!({"list": "sections", "limit": 1000}),
    )
    .await;
    let holder = layout["result"]["sections"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == section.as_str())
        .unwrap_or_else(|| panic!("no section {section}"));
    let start = u64::from_str_radix(
        holder["address"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    let size = holder["size"].as_u64().unwrap();
    assert!(
        (start..start + size).contains(&address),
        "{address:#x} outside {section}"
    );
    let (page, _) = call(
        &client,
        "search_strings",
        json!({"pattern": "needle-s[a-z]+:", "mode": "regex", "case_sensitive": true}),
    )
    .await;
    assert_eq!(page["result"]["total"], 1);
}

#[tokio::test]
async fn binary_session_reports_the_process_capture_policy() {
    use rea::session::{CapturePolicy, CaptureSettings, Policies};
    // Off by default, with the reason.
    let (client, _, _) = common::connect(common::Era::Modern).await;
    let (status, _) = common::call(&client, "binary_session", json!({})).await;
    let capture = &status["result"]["process_capture"];
    assert_eq!(capture["enabled"], json!(false), "{capture}");
    assert!(
        capture["reason"]
            .as_str()
            .unwrap()
            .contains("--enable-process-capture")
    );

    // Enabled by the operator, for named roots.
    let dir = tempfile::tempdir().unwrap();
    let policy = CapturePolicy::new(CaptureSettings {
        enabled: true,
        executable_roots: vec![dir.path().to_path_buf()],
        working_roots: vec![dir.path().to_path_buf()],
        user: Some("65534:65534".into()).filter(|_| common::running_as_root()),
        network: None,
    })
    .unwrap();
    let hub = rea::server::Hub::with_policies(
        rea::catalog::render::LoadedCatalog::embedded().unwrap(),
        Policies {
            capture: policy,
            ..Policies::default()
        },
        rea::session::DeepProviders::none(),
    );
    let (client, _, _) = common::connect_to(&hub, common::Era::Legacy).await;
    let (status, _) = common::call(&client, "binary_session", json!({})).await;
    let capture = &status["result"]["process_capture"];
    assert_eq!(capture["enabled"], json!(true), "{capture}");
    assert_eq!(
        capture["executable_roots"],
        json!([dir.path().canonicalize().unwrap()])
    );
}

#[tokio::test]
async fn a_huge_unknown_tool_name_is_refused_briefly() {
    use rmcp::model::CallToolRequestParams;
    let (client, _, _) = connect(Era::Legacy).await;
    let name = "x".repeat(1 << 20);
    let err = client
        .call_tool(CallToolRequestParams::new(name))
        .await
        .expect_err("an unknown tool is a protocol error");
    let message = err.to_string();
    assert!(
        message.contains("unknown tool"),
        "{}",
        &message[..message.len().min(300)]
    );
    assert!(
        message.len() < 4_000,
        "the name is quoted in part: {} bytes",
        message.len()
    );
}
