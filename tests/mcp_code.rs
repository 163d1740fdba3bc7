//! The code tools end to end over MCP, on a stripped ELF whose call graph
//! and strings are known: from a feature string to the procedures that use
//! it, their disassembly, callers and a call path.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Era, call, compile_c_with, connect, nm_functions, skip};
use serde_json::{Value, json};

/// `leaf` uses the feature string; `middle` calls `leaf`; `top` calls both;
/// `lonely` calls nothing and nobody calls it directly; `dispatch` calls
/// through a pointer.
const SOURCE: &str = r#"
#include <stdio.h>
__attribute__((noinline)) int leaf(int x) { puts("FEATURE_OFFLINE_SEARCH is enabled"); return x + 1; }
__attribute__((noinline)) int middle(int x) { return leaf(x) * 3; }
__attribute__((noinline)) int top(int x) { return middle(x) + leaf(x + 2); }
__attribute__((noinline)) int lonely(int x) { return x * 7; }
__attribute__((noinline)) int dispatch(int (*f)(int), int x) { return f(x) + 1; }
int main(int argc, char **argv) { (void)argv; return top(argc) + dispatch(lonely, argc); }
"#;

/// The sample, its stripped copy, and the function addresses from the
/// unstripped symbol table (strip moves no code).
fn stripped_sample(dir: &Path) -> Option<(PathBuf, BTreeMap<String, u64>)> {
    let full = compile_c_with(dir, "feature", &["-O1", "-fno-inline"], &[("f.c", SOURCE)])?;
    let functions: BTreeMap<String, u64> = nm_functions(&[], &full)?
        .into_iter()
        .map(|(address, name)| (name, address))
        .collect();
    let stripped = dir.join("feature.stripped");
    let status = Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(&stripped)
        .arg(&full)
        .status();
    match status {
        Ok(s) if s.success() => Some((stripped, functions)),
        Ok(s) => panic!("strip failed: {s}"),
        Err(e) => {
            skip(&format!("cannot run strip: {e}"));
            None
        }
    }
}

/// `pc=BEGIN..END` of every FDE `readelf --debug-dump=frames` lists, as
/// `0x` addresses.
fn fde_starts(path: &Path) -> Vec<String> {
    let out = Command::new("readelf")
        .arg("--debug-dump=frames")
        .arg(path)
        .output()
        .expect("run readelf");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| line.contains(" FDE "))
        .filter_map(|line| {
            line.split("pc=")
                .nth(1)?
                .split("..")
                .next()
                .map(str::to_owned)
        })
        .filter_map(|hex| u64::from_str_radix(&hex, 16).ok())
        .map(|a| format!("{a:#x}"))
        .collect()
}

fn address(functions: &BTreeMap<String, u64>, name: &str) -> String {
    format!("{:#x}", functions[name])
}

fn result(value: &(Value, bool)) -> &Value {
    assert!(!value.1, "tool failed: {}", value.0);
    assert!(
        value.0["evidence"]["evidence_id"].is_string(),
        "Evidence inline"
    );
    &value.0["result"]
}

fn addresses(items: &Value, key: &str) -> Vec<String> {
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i[key]["address"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_feature_string_leads_to_code_callers_and_a_path_in_a_stripped_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((stripped, functions)) = stripped_sample(dir.path()) else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let opened = call(&client, "open_binary", json!({"path": stripped})).await;
    result(&opened);

    // Stripped: no names, but every function is found by .eh_frame or calls.
    let listed = call(&client, "list_procedures", json!({"limit": 500})).await;
    let items = result(&listed)["items"].as_array().expect("items").clone();
    // At least 90% of the function starts `.eh_frame` declares (readelf's
    // FDEs are the oracle).
    let found: Vec<&str> = items.iter().filter_map(|i| i["address"].as_str()).collect();
    let fdes = fde_starts(&stripped);
    assert!(!fdes.is_empty(), "readelf lists FDEs");
    let covered = fdes.iter().filter(|a| found.contains(&a.as_str())).count();
    assert!(
        covered * 10 >= fdes.len() * 9,
        "{covered} of {} .eh_frame function starts discovered",
        fdes.len()
    );
    // The C runtime's constructor and destructor helpers have no FDE and no
    // direct caller; `.init_array` and `.fini_array` point at them.
    for name in ["frame_dummy", "__do_global_dtors_aux"] {
        let wanted = address(&functions, name);
        let item = items.iter().find(|i| i["address"] == json!(wanted));
        assert!(
            item.is_some_and(|i| i["found_by"]
                .as_array()
                .is_some_and(|f| f.contains(&json!("init_array")))),
            "{name} at {wanted}: {item:?}"
        );
    }
    for name in ["leaf", "middle", "top", "lonely", "dispatch", "main"] {
        let wanted = address(&functions, name);
        let item = items
            .iter()
            .find(|i| i["address"] == json!(wanted))
            .unwrap_or_else(|| panic!("{name} at {wanted} not discovered: {items:?}"));
        let found_by = item["found_by"].as_array().expect("found_by");
        assert!(!found_by.is_empty());
        if name == "main" {
            // Named again from `_start`'s call to `__libc_start_main`, and
            // marked as that inference.
            assert_eq!(item["name"], json!("main"), "{item}");
            assert!(found_by.contains(&json!("c_runtime_main")), "{item}");
        } else {
            assert!(item.get("name").is_none(), "stripped: {item}");
        }
    }

    let traced = call(
        &client,
        "trace_feature",
        json!({"query": "offline_search", "max_depth": 2}),
    )
    .await;
    let trace = result(&traced);
    assert_eq!(trace["strings"]["total"], json!(1), "{trace}");
    let reached = &trace["procedures"]["items"];
    let depth_of = |name: &str| {
        reached
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|p| p["address"] == json!(address(&functions, name)))
            })
            .map(|p| p["depth"].clone())
    };
    assert_eq!(depth_of("leaf"), Some(json!(0)), "{trace}");
    assert_eq!(depth_of("middle"), Some(json!(1)), "{trace}");
    assert_eq!(
        depth_of("top"),
        Some(json!(1)),
        "top calls leaf directly: {trace}"
    );
    assert_eq!(depth_of("lonely"), None);
    assert!(
        trace["unknowns"]["items"]
            .as_array()
            .is_some_and(|u| u.iter().any(|x| x["kind"] == "indirect_calls_not_followed")),
        "{trace}"
    );

    let leaf = address(&functions, "leaf");
    let analyzed = call(&client, "analyze_function", json!({"procedure": leaf})).await;
    let dossier = result(&analyzed);
    assert!(
        !dossier["instructions"]
            .as_array()
            .expect("listing")
            .is_empty()
    );
    assert!(
        dossier["references"]
            .as_array()
            .expect("references")
            .iter()
            .any(|r| r["string"] == json!("FEATURE_OFFLINE_SEARCH is enabled")),
        "the string reference is resolved: {dossier}"
    );
    let mut callers = addresses(&dossier["callers"], "procedure");
    callers.sort();
    callers.dedup();
    let mut expected = vec![address(&functions, "middle"), address(&functions, "top")];
    expected.sort();
    assert_eq!(callers, expected);

    let path = call(
        &client,
        "build_call_path",
        json!({"start": address(&functions, "main"), "goal": leaf}),
    )
    .await;
    let path = result(&path);
    assert_eq!(path["status"], json!("found"), "{path}");
    let first: Vec<&str> = path["paths"][0]
        .as_array()
        .expect("a path")
        .iter()
        .filter_map(|p| p["address"].as_str())
        .collect();
    assert_eq!(
        first,
        [
            address(&functions, "main"),
            address(&functions, "top"),
            leaf.clone()
        ]
    );

    let none = call(
        &client,
        "build_call_path",
        json!({"start": address(&functions, "dispatch"), "goal": leaf}),
    )
    .await;
    assert_eq!(
        result(&none)["status"],
        json!("unknown"),
        "dispatch calls through a pointer, so a hidden path is possible"
    );
    let none = call(
        &client,
        "build_call_path",
        json!({"start": address(&functions, "lonely"), "goal": leaf}),
    )
    .await;
    assert_eq!(result(&none)["status"], json!("not_found"));

    let inside = functions["middle"] + 1;
    let located = call(
        &client,
        "resolve_containing_procedure",
        json!({"address": format!("{inside:#x}")}),
    )
    .await;
    let located = result(&located);
    assert_eq!(
        located["procedure"]["address"],
        json!(address(&functions, "middle"))
    );
    assert_eq!(located["offset"], json!(1));
    assert_eq!(located["extent"], json!("stated_size"), "an FDE states it");
    let outside = call(
        &client,
        "resolve_containing_procedure",
        json!({"address": "0x7fff00000000"}),
    )
    .await;
    assert!(outside.1);
    assert_eq!(outside.0["error"]["code"], json!("outside_segments"));

    let refs = call(&client, "xrefs", json!({"address": leaf})).await;
    let refs = result(&refs);
    assert_eq!(refs["total"], json!(2), "two direct calls to leaf: {refs}");
    assert!(
        refs["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|r| r["kind"] == "call")
    );
}

/// Without unwind tables or symbols nothing states where a procedure
/// ends: the extent runs to the next known start, and says so.
#[tokio::test]
async fn an_extent_no_table_states_says_it_runs_to_the_next_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = [
        "-O1",
        "-fno-inline",
        "-fno-asynchronous-unwind-tables",
        "-fno-unwind-tables",
        "-s",
    ];
    let Some(bare) = compile_c_with(dir.path(), "bare", &flags, &[("f.c", SOURCE)]) else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    result(&call(&client, "open_binary", json!({"path": bare})).await);
    let main = call(&client, "procedure_address", json!({"procedure": "main"})).await;
    let main = result(&main)["address"].as_str().unwrap().to_owned();
    let inside = u64::from_str_radix(main.trim_start_matches("0x"), 16).unwrap() + 1;
    let located = call(
        &client,
        "resolve_containing_procedure",
        json!({"address": format!("{inside:#x}")}),
    )
    .await;
    let located = result(&located);
    assert_eq!(located["procedure"]["address"], json!(main), "{located}");
    assert_eq!(located["extent"], json!("until_next_start"), "{located}");
}

#[tokio::test]
async fn callers_and_callees_are_symmetric() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((stripped, functions)) = stripped_sample(dir.path()) else {
        return;
    };
    let (client, _server, _) = connect(Era::Legacy).await;
    result(&call(&client, "open_binary", json!({"path": stripped})).await);
    const NAMES: [&str; 6] = ["leaf", "middle", "top", "lonely", "dispatch", "main"];
    let mut callee_pairs = Vec::new();
    let mut caller_pairs = Vec::new();
    for name in NAMES {
        let entry = address(&functions, name);
        let out = call(&client, "procedure_callees", json!({"procedure": entry})).await;
        for callee in addresses(&result(&out)["items"], "procedure") {
            callee_pairs.push((entry.clone(), callee));
        }
        let out = call(&client, "procedure_callers", json!({"procedure": entry})).await;
        for caller in addresses(&result(&out)["items"], "procedure") {
            caller_pairs.push((caller, entry.clone()));
        }
    }
    // Restricted to the named functions on both sides.
    let named: Vec<String> = NAMES.iter().map(|n| address(&functions, n)).collect();
    let keep = |pairs: Vec<(String, String)>| {
        let mut pairs: Vec<_> = pairs
            .into_iter()
            .filter(|(a, b)| named.contains(a) && named.contains(b))
            .collect();
        pairs.sort();
        pairs
    };
    let callee_pairs = keep(callee_pairs);
    assert_eq!(callee_pairs, keep(caller_pairs));
    assert!(callee_pairs.contains(&(address(&functions, "top"), address(&functions, "middle"))));
}

/// The first list_procedures on a document sweeps its code; with a progress
/// token the client hears about it before the response, in increasing order.
#[tokio::test]
async fn the_first_code_sweep_reports_progress_to_a_client_that_asked() {
    use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
    let Some(path) = common::fixture("esbuild-linux-x64") else {
        return;
    };
    for era in common::ERAS {
        let (client, _server, counter) = connect(era).await;
        result(&call(&client, "open_binary", json!({"path": path})).await);
        // Opening hashes the file and reports that too; this test is about
        // the sweep, so it starts from an empty log.
        counter.progress.lock().expect("progress log").clear();
        let mut meta = RequestMetaObject::default();
        meta.set_progress_token(ProgressToken(NumberOrString::Number(41)));
        let mut request = CallToolRequestParams::new("list_procedures")
            .with_arguments(common::object(json!({"limit": 1})));
        request.meta = Some(meta);
        let response = client.call_tool(request).await.expect("tools/call answers");
        assert_ne!(response.is_error, Some(true));
        let progress = counter.progress.lock().expect("progress log").clone();
        assert!(
            progress.len() >= 3,
            "{era:?}: start, steps and end: {progress:?}"
        );
        // rmcp's client substitutes its own token for the one we set; the
        // server echoes whichever token the request carried.
        let token = &progress[0].progress_token;
        assert!(
            progress.iter().all(|p| &p.progress_token == token),
            "{progress:?}"
        );
        assert!(
            progress.windows(2).all(|w| w[0].progress < w[1].progress),
            "{progress:?}"
        );
        let last = progress.last().expect("some progress");
        assert_eq!(
            Some(last.progress),
            last.total,
            "{era:?}: ends at the total"
        );
        // A second call reuses the index: no sweep, no progress.
        let again = client
            .call_tool(
                CallToolRequestParams::new("list_procedures")
                    .with_arguments(common::object(json!({"limit": 1}))),
            )
            .await
            .expect("tools/call answers");
        assert_ne!(again.is_error, Some(true));
        assert_eq!(
            counter.progress.lock().expect("progress log").len(),
            progress.len()
        );
    }
}

/// A real stripped binary nobody here built: the parcel watcher's Linux
/// addon (no `.symtab`; procedures come from `.dynsym`, `.eh_frame` and
/// call targets). Its JavaScript option name `ignoreGlobs` leads to the
/// code that reads it, that code's disassembly, its callers and a path.
#[tokio::test]
async fn a_feature_string_in_a_real_stripped_addon_leads_to_code() {
    let Some(path) = common::fixture("watcher-linux-x64.node") else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    result(&call(&client, "open_binary", json!({"path": path})).await);
    let traced = call(
        &client,
        "trace_feature",
        json!({"query": "ignoreGlobs", "case_sensitive": true, "max_depth": 1}),
    )
    .await;
    let trace = result(&traced).clone();
    let reached = trace["procedures"]["items"]
        .as_array()
        .expect("procedures")
        .clone();
    let user = reached
        .iter()
        .find(|p| p["depth"] == json!(0))
        .unwrap_or_else(|| panic!("no procedure references the string: {trace}"));
    let user_address = user["address"].as_str().expect("address").to_owned();
    let caller = reached
        .iter()
        .find(|p| {
            p["depth"] == json!(1)
                && p["via"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|r| r["callee"] == json!(user_address)))
        })
        .unwrap_or_else(|| panic!("no caller of {user_address}: {trace}"));

    let dossier = call(
        &client,
        "analyze_function",
        json!({"procedure": user_address}),
    )
    .await;
    let dossier = result(&dossier);
    assert!(
        dossier["references"]
            .as_array()
            .expect("references")
            .iter()
            .any(|r| r["string"] == json!("ignoreGlobs")),
        "{dossier}"
    );
    assert!(dossier["blocks"].as_array().is_some_and(|b| !b.is_empty()));

    let path_out = call(
        &client,
        "build_call_path",
        json!({"start": caller["address"], "goal": user_address}),
    )
    .await;
    let found = result(&path_out);
    assert_eq!(found["status"], json!("found"), "{found}");
    assert_eq!(
        found["paths"][0].as_array().map(Vec::len),
        Some(2),
        "{found}"
    );
}

/// Over every procedure of a real addon (stubs included):
/// `procedure_callers(f)` contains g exactly when `procedure_callees(g)`
/// contains f, calls through PLT stubs resolved to the same functions.
#[test]
fn callers_and_callees_are_symmetric_over_a_whole_real_addon() {
    use rea::providers::native::NativeImage;
    use std::collections::BTreeSet;
    let Some(path) = common::fixture("watcher-linux-x64.node") else {
        return;
    };
    let image = NativeImage::open(&path).expect("fixture opens");
    let inventory = image.inventory(0).expect("inventory");
    assert!(
        !image.thunks(0).expect("thunks").is_empty(),
        "exported functions are called through the PLT"
    );
    let mut from_callees = BTreeSet::new();
    let mut from_callers = BTreeSet::new();
    for procedure in &inventory.procedures {
        for edge in image.callees(0, procedure.address).expect("callees") {
            from_callees.insert((edge.caller, edge.at, edge.callee));
        }
        for edge in image.callers(0, procedure.address).expect("callers") {
            if edge.caller.is_some() {
                from_callers.insert((edge.caller, edge.at, edge.callee));
            }
        }
    }
    assert!(
        from_callees.len() > 1000,
        "{} call edges",
        from_callees.len()
    );
    assert_eq!(from_callees, from_callers);
}

/// Real stripped Go executables (esbuild for Linux x86-64 and arm64: no
/// symbols, no `.eh_frame`; procedures come from call targets alone). An
/// error message leads to the code that uses it (RIP-relative `lea` on
/// x86-64, `adrp`+`add` on arm64), its disassembly and a call path from a
/// caller two levels up.
#[tokio::test]
async fn a_message_in_stripped_go_executables_leads_to_code_and_a_path() {
    for fixture in ["esbuild-linux-x64", "esbuild-linux-arm64"] {
        let Some(path) = common::fixture(fixture) else {
            return;
        };
        let (client, _server, _) = connect(Era::Legacy).await;
        result(&call(&client, "open_binary", json!({"path": path})).await);
        let traced = call(
            &client,
            "trace_feature",
            json!({"query": "Cannot use both \"outfile\" and \"outdir\"", "max_depth": 2}),
        )
        .await;
        let trace = result(&traced).clone();
        assert_eq!(trace["strings"]["total"], json!(1), "{fixture}: {trace}");
        let reached = trace["procedures"]["items"]
            .as_array()
            .expect("procedures")
            .clone();
        let user = reached
            .iter()
            .find(|p| p["depth"] == json!(0))
            .unwrap_or_else(|| panic!("{fixture}: no code uses the message: {trace}"));
        let far = reached
            .iter()
            .find(|p| p["depth"] == json!(2))
            .unwrap_or_else(|| panic!("{fixture}: no caller two levels up: {trace}"));
        let dossier = call(
            &client,
            "analyze_function",
            json!({"procedure": user["address"], "max_instructions": 50}),
        )
        .await;
        assert!(
            !result(&dossier)["instructions"]
                .as_array()
                .expect("listing")
                .is_empty()
        );
        let found = call(
            &client,
            "build_call_path",
            json!({"start": far["address"], "goal": user["address"]}),
        )
        .await;
        let found = result(&found);
        assert_eq!(found["status"], json!("found"), "{fixture}: {found}");
        assert_eq!(
            found["paths"][0].as_array().map(Vec::len),
            Some(3),
            "{fixture}: {found}"
        );
    }
}

/// F4: a procedure called from far more places than an answer should
/// carry lists a bounded number of call sites per caller, counts the rest,
/// and says where all of them are paged (xrefs).
#[tokio::test]
async fn call_sites_are_bounded_per_procedure_and_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let calls = "target();\n".repeat(100);
    let source = format!(
        "__attribute__((noinline)) int target(void) {{ return 1; }}\n\
         __attribute__((noinline)) void many(void) {{\n{calls}}}\n\
         int main(void) {{ many(); return 0; }}\n"
    );
    let Some(exe) = compile_c_with(dir.path(), "many", &["-O0"], &[("many.c", &source)]) else {
        return;
    };
    let (client, _server, _) = connect(Era::Legacy).await;
    result(&call(&client, "open_binary", json!({"path": exe})).await);
    let answer = call(&client, "procedure_callers", json!({"procedure": "target"})).await;
    let items = result(&answer)["items"].as_array().expect("items").clone();
    let many = items
        .iter()
        .find(|i| i["procedure"]["name"] == "many")
        .expect("many calls target");
    assert_eq!(
        many["call_sites"].as_array().expect("sites").len(),
        32,
        "{many}"
    );
    assert_eq!(many["call_sites_omitted"], 68, "{many}");
    let limitations = answer.0["evidence"]["limitations"].to_string();
    assert!(limitations.contains("xrefs"), "{limitations}");
    let address = result(&call(&client, "procedure_address", json!({"procedure": "target"})).await)
        ["address"]
        .clone();
    let xrefs = call(&client, "xrefs", json!({"address": address, "limit": 500})).await;
    let total = result(&xrefs)["total"].as_u64().expect("total");
    assert!(total >= 100, "every call site is paged by xrefs: {total}");
}

/// An option table whose strings no instruction names: `help` walks the
/// table and prints each entry's text.
const TABLE_SOURCE: &str = r#"
#include <stdio.h>
#include <string.h>
struct entry { const char *name; const char *help; int id; };
struct entry table[] = {
  {"alpha", "TABLE_ONLY_HELP_ALPHA", 1},
  {"beta", "TABLE_ONLY_HELP_BETA", 2},
  {"gamma", "TABLE_ONLY_HELP_GAMMA", 3},
};
__attribute__((noinline)) int lookup(const char *name) {
  for (unsigned i = 0; i < sizeof table / sizeof *table; i++)
    if (!strcmp(table[i].name, name)) return table[i].id;
  return -1;
}
__attribute__((noinline)) void help(void) {
  for (unsigned i = 0; i < sizeof table / sizeof *table; i++) puts(table[i].help);
}
int main(int argc, char **argv) { if (argc > 1) return lookup(argv[1]); help(); return 0; }
"#;

/// A string reached only through a pointer table leads to the code that
/// walks the table, in a position-independent build (the pointers are
/// `RELATIVE` relocations) and a fixed-address one (found by the aligned
/// scan). The slot is `table + 56` (entry 2's `help`) by the unstripped
/// symbol table; `help` is the procedure that must be reached.
#[tokio::test]
async fn a_string_in_a_pointer_table_leads_to_the_code_that_uses_the_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, flags, source) in [
        ("table-pie", ["-O1", "-fPIE", "-pie"], "relocations"),
        (
            "table-fixed",
            ["-O1", "-fno-pie", "-no-pie"],
            "aligned_scan",
        ),
    ] {
        let Some(full) = compile_c_with(dir.path(), name, &flags, &[("t.c", TABLE_SOURCE)]) else {
            return;
        };
        let Some(symbols) = common::llvm_nm(&[], &full) else {
            return;
        };
        let symbol = |wanted: &str| {
            symbols
                .iter()
                .find(|(_, _, n)| n == wanted)
                .map(|(a, _, _)| *a)
                .unwrap_or_else(|| panic!("{wanted} in {name}"))
        };
        let slot = format!("{:#x}", symbol("table") + 56);
        let help = format!("{:#x}", symbol("help"));
        let stripped = dir.path().join(format!("{name}.stripped"));
        let status = Command::new("strip")
            .args(["--strip-all", "-o"])
            .arg(&stripped)
            .arg(&full)
            .status()
            .expect("strip");
        assert!(status.success());

        let (client, _server, _) = connect(Era::Modern).await;
        result(&call(&client, "open_binary", json!({"path": stripped})).await);
        let traced = call(
            &client,
            "trace_feature",
            json!({"query": "TABLE_ONLY_HELP_GAMMA"}),
        )
        .await;
        let trace = result(&traced);
        let string = &trace["strings"]["items"][0];
        assert_eq!(string["references"], 0, "{name}: {string}");
        assert_eq!(string["pointer_slots"], 1, "{name}: {string}");
        let reached = trace["procedures"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["address"] == json!(help))
            .unwrap_or_else(|| panic!("{name}: help {help} not reached: {trace}"));
        assert_eq!(reached["depth"], 0);
        assert!(
            reached["via"]
                .as_array()
                .unwrap()
                .iter()
                .any(|via| via["kind"] == "table_mediated" && via["slot"] == json!(slot)),
            "{name}: {reached}"
        );
        let limitations = traced.0["evidence"]["limitations"].to_string();
        assert!(limitations.contains("derived"), "{name}: {limitations}");

        let address = string["address"].as_str().unwrap().to_owned();
        let xrefs = call(&client, "xrefs", json!({"address": address})).await;
        let pointers = &result(&xrefs)["pointers"];
        assert_eq!(pointers["source"], source, "{name}: {pointers}");
        assert_eq!(
            pointers["items"][0]["slot"],
            json!(slot),
            "{name}: {pointers}"
        );
        let users = pointers["items"][0]["used_by"].as_array().unwrap();
        assert!(
            users
                .iter()
                .any(|u| u["procedure"]["address"] == json!(help)),
            "{name}: {pointers}"
        );
    }
}

/// On the system's stripped `ls`, the long option name "dired" is named by
/// no instruction, only by the `struct option` table; `trace_feature`
/// reaches code through the slot readelf lists as a `RELATIVE` relocation
/// to the string.
#[tokio::test]
async fn a_long_option_of_system_ls_leads_to_code_through_its_option_table() {
    let ls = Path::new("/usr/bin/ls");
    let relocations = Command::new("readelf")
        .arg("-rW")
        .arg(ls)
        .output()
        .expect("readelf");
    let text = String::from_utf8_lossy(&relocations.stdout);
    let (client, _server, _) = connect(Era::Modern).await;
    result(&call(&client, "open_binary", json!({"path": ls})).await);
    let traced = call(
        &client,
        "trace_feature",
        json!({"query": "^dired$", "mode": "regex", "case_sensitive": true}),
    )
    .await;
    let trace = result(&traced);
    let string = &trace["strings"]["items"][0];
    assert_eq!(string["references"], 0, "{string}");
    let address = u64::from_str_radix(
        string["address"].as_str().unwrap().trim_start_matches("0x"),
        16,
    )
    .unwrap();
    let slots: Vec<String> = text
        .lines()
        .filter(|line| line.contains("_RELATIVE"))
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let slot = u64::from_str_radix(words.next()?, 16).ok()?;
            let target = u64::from_str_radix(words.last()?, 16).ok()?;
            (target == address).then(|| format!("{slot:#x}"))
        })
        .collect();
    assert_eq!(slots.len(), 1, "readelf: {slots:?}");
    let via_table: Vec<&Value> = trace["procedures"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["via"].as_array().unwrap())
        .filter(|via| via["kind"] == "table_mediated")
        .collect();
    assert!(!via_table.is_empty(), "{trace}");
    assert!(
        via_table.iter().all(|via| via["slot"] == json!(slots[0])),
        "{via_table:?}"
    );
}
