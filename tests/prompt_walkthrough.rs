//! An agent follows `investigate_feature` on the stripped system `ls`, as
//! the rendered prompt routes it: open the native file, derive terms the
//! binary would contain, ask who calls the imports those terms name, trace
//! and cross-reference the user-visible text, and connect main to the code.
//! Every step answers on the stripped binary (checked against objdump), and
//! the blind spots come back as limitations and unknowns, which the
//! prompt's discipline tells the agent to report as such.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{Era, call, connect};
use regex::Regex;
use serde_json::{Value, json};

/// The result of a call that must succeed.
async fn answer(client: &common::Client, tool: &str, arguments: Value) -> Value {
    let (content, failed) = call(client, tool, arguments.clone()).await;
    assert!(!failed, "{tool} {arguments}: {content}");
    content
}

/// The tools a prompt cites, in the order it cites them (first citation).
fn cited_in_order(text: &str) -> Vec<String> {
    let citation = Regex::new(r"`([a-z_]+)(?:\([a-z_, ]*\))?`").unwrap();
    let mut seen = Vec::new();
    for found in citation.captures_iter(text) {
        let tool = found[1].to_string();
        if !seen.contains(&tool) {
            seen.push(tool);
        }
    }
    seen
}

/// Addresses of the instructions objdump annotates with `# <address>`.
fn objdump_references(path: &Path, address: &str) -> BTreeSet<String> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(path)
        .output()
        .expect("objdump runs");
    assert!(out.status.success());
    let comment = format!("# {} ", address.trim_start_matches("0x"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|line| line.contains(&comment))
        .filter_map(|line| line.trim_start().split_once(':'))
        .map(|(at, _)| format!("{:#x}", u64::from_str_radix(at, 16).unwrap()))
        .collect()
}

fn call_sites(callers: &Value) -> Vec<String> {
    let mut sites: Vec<String> = callers["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|item| {
            let tails = item["tail_call_sites"].as_array().cloned();
            item["call_sites"]
                .as_array()
                .unwrap()
                .clone()
                .into_iter()
                .chain(tails.unwrap_or_default())
        })
        .map(|site| site.as_str().unwrap().to_owned())
        .collect();
    sites.sort();
    sites
}

fn limitations(content: &Value) -> String {
    content["evidence"]["limitations"].to_string()
}

#[tokio::test]
async fn investigate_feature_on_stripped_ls_reaches_import_callers_strings_and_main() {
    let ls = Path::new("/usr/bin/ls");
    if !ls.is_file() {
        common::skip("no /usr/bin/ls");
        return;
    }
    let (client, _server, _) = connect(Era::Modern).await;
    let text = common::prompt_text(
        &client,
        "investigate_feature",
        json!({"feature": "colored output", "target_path": ls}),
    )
    .await;

    // The route the prompt gives: decide and open, then imports and their
    // callers, then the text, then a path from main.
    let order = cited_in_order(&text);
    let at = |tool: &str| {
        order
            .iter()
            .position(|t| t == tool)
            .unwrap_or_else(|| panic!("the prompt never cites {tool}: {text}"))
    };
    assert!(at("open_binary") < at("inspect_binary_layout"));
    assert!(at("inspect_binary_layout") < at("procedure_callers"));
    assert!(at("procedure_callers") < at("trace_feature"));
    assert!(at("trace_feature") < at("search_strings"));
    assert!(at("search_strings") < at("xrefs"));
    assert!(at("xrefs") < at("build_call_path"));
    assert!(text.contains("An import is a procedure by name even in a stripped binary"));
    assert!(text.contains("Read each result's limitations"));

    // Route: a native file is opened.
    let opened = answer(&client, "open_binary", json!({"path": ls})).await;
    assert_eq!(opened["result"]["format"], "elf");

    // Imports the terms name ("colored output": is the output a terminal,
    // what does the environment say), and who calls them.
    let layout = answer(&client, "inspect_binary_layout", json!({})).await;
    assert!(layout["result"]["imports"]["total"].as_u64().unwrap() > 20);
    let layout = answer(
        &client,
        "inspect_binary_layout",
        json!({"list": "imports", "limit": 1000}),
    )
    .await;
    let imports: BTreeSet<&str> = layout["result"]["imports"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    let mut getenv_callers = Vec::new();
    for api in ["isatty", "getenv"] {
        assert!(imports.contains(api), "ls imports {api}");
        let callers = answer(
            &client,
            "procedure_callers",
            json!({"procedure": api, "limit": 500}),
        )
        .await;
        assert_eq!(
            call_sites(&callers),
            common::objdump_plt_sites(ls, api),
            "{api}"
        );
        assert!(
            limitations(&callers).contains("not seen"),
            "calls through pointers are a stated blind spot: {callers}"
        );
        if api == "getenv" {
            getenv_callers = callers["result"]["items"].as_array().unwrap().clone();
        }
    }

    // The user-visible text: traced, then cross-referenced.
    let trace = answer(&client, "trace_feature", json!({"query": "LS_COLORS"})).await;
    let trace = &trace["result"];
    let exact = trace["strings"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["value"] == "LS_COLORS")
        .expect("the environment variable's name is a string in ls");
    assert!(exact["references"].as_u64().unwrap() > 0, "{exact}");
    let kinds: Vec<&str> = trace["unknowns"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"indirect_calls_not_followed"),
        "the trace names its blind spot as an unknown: {kinds:?}"
    );

    let found = answer(&client, "search_strings", json!({"pattern": "LS_COLORS"})).await;
    let address = found["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["value"] == "LS_COLORS")
        .map(|s| s["address"].as_str().unwrap().to_owned())
        .expect("search_strings finds it too");
    let xrefs = answer(&client, "xrefs", json!({"address": address})).await;
    let from: BTreeSet<String> = xrefs["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["from"].as_str().unwrap().to_owned())
        .collect();
    assert!(!from.is_empty());
    assert_eq!(from, objdump_references(ls, &address));

    // main, inferred on a stripped executable, reaches a getenv caller.
    let main = answer(&client, "procedure_address", json!({"procedure": "main"})).await;
    assert!(
        main["result"]["found_by"]
            .as_array()
            .unwrap()
            .contains(&json!("c_runtime_main")),
        "{main}"
    );
    let main = main["result"]["address"].as_str().unwrap().to_owned();
    let goal = getenv_callers
        .iter()
        .filter_map(|c| c["procedure"]["address"].as_str())
        .find(|a| *a != main)
        .expect("a getenv caller other than main")
        .to_owned();
    let path = answer(
        &client,
        "build_call_path",
        json!({"start": "main", "goal": goal}),
    )
    .await;
    assert_eq!(path["result"]["status"], "found", "{path}");
    let first = &path["result"]["paths"][0];
    assert_eq!(first[0]["address"], json!(main));
    assert_eq!(
        first.as_array().unwrap().last().unwrap()["address"],
        json!(goal)
    );
}
