//! Every tool answers in one shape, each fact once: the result, the
//! Evidence header (the record without its result, from which the client
//! recomputes the Evidence ID) and, under `context`, only what the record
//! does not say. No member is `null`, except inside the Evidence subject,
//! which is hashed as spelled.

mod common;

use std::collections::BTreeSet;

use common::synth_elf::{
    Contents, Elf, SHF_ALLOC, SHF_EXECINSTR, SHF_WRITE, SHT_DYNAMIC, SHT_PROGBITS, SHT_STRTAB,
    SHT_SYMTAB, Section, dynamic, strtab, sym,
};
use common::{Era, call, connect};
use rea::tools::ToolName;
use serde_json::{Value, json};

/// Tools whose answers are checked by the suites that can run them (a
/// capture needs an operator policy and a traced run; a bundle a write
/// root), with `assert_said_once` there.
const CHECKED_ELSEWHERE: [&str; 5] = [
    "capture_process_scenario",     // tests/mcp_capture.rs
    "compare_process_captures",     // tests/mcp_correlate.rs
    "correlate_static_and_runtime", // tests/mcp_correlate.rs
    "export_evidence_bundle",       // tests/mcp_records.rs
    "import_evidence_bundle",       // tests/mcp_records.rs
];

/// Tools that only read or change session state and record no Evidence.
const WITHOUT_EVIDENCE: [&str; 8] = [
    "binary_session",
    "close_binary",
    "set_current_document",
    "list_evidence",
    "get_evidence",
    "list_unknowns",
    "verify_unknown_resolution",
    "export_evidence_bundle",
];

/// Tools that answer several procedures, each with an Evidence record of
/// its own: the item carries its `evidence_id`, and the record's result is
/// the item without it.
const PER_ITEM_EVIDENCE: [&str; 1] = ["procedure_pseudo_code"];

/// The members of `value` that are `null`, by path, outside `evidence.subject`.
fn null_members(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (k, v) in members {
                let here = format!("{path}.{k}");
                if v.is_null() {
                    out.push(here);
                } else if here != ".evidence.subject" {
                    null_members(v, &here, out);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| null_members(v, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

struct Checker {
    client: common::Client,
    seen: BTreeSet<String>,
}

impl Checker {
    /// Calls a tool that must succeed and checks the answer's shape;
    /// returns the answer.
    async fn answer(&mut self, tool: &str, arguments: Value) -> Value {
        let (answer, failed) = call(&self.client, tool, arguments.clone()).await;
        assert!(!failed, "{tool} {arguments}: {answer}");
        let bytes = answer.to_string().len();
        assert!(bytes <= 32 * 1024, "{tool}: a {bytes}-byte answer");
        let mut nulls = Vec::new();
        null_members(&answer, "", &mut nulls);
        assert!(nulls.is_empty(), "{tool}: null members {nulls:?}");
        let members: BTreeSet<&str> = answer
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(
            members.is_subset(&BTreeSet::from(["result", "evidence", "context"])),
            "{tool}: {members:?}"
        );
        if let Some(context) = answer.get("context").and_then(Value::as_object) {
            for (k, v) in context {
                assert_ne!(
                    answer["result"].get(k),
                    Some(v),
                    "{tool}: context repeats {k}"
                );
            }
        }
        if PER_ITEM_EVIDENCE.contains(&tool) {
            assert!(answer.get("evidence").is_none(), "{tool}: {answer}");
            for item in answer["result"]["procedures"].as_array().unwrap() {
                let id = item["evidence_id"].as_str().unwrap();
                let (record, failed) =
                    call(&self.client, "get_evidence", json!({"evidence_id": id})).await;
                assert!(!failed, "{record}");
                let mut without = item.clone();
                without.as_object_mut().unwrap().remove("evidence_id");
                assert_eq!(
                    record["result"]["result"], without,
                    "{tool}: the record is the item"
                );
                assert_eq!(record["result"]["operation"], json!(tool));
            }
        } else if WITHOUT_EVIDENCE.contains(&tool) {
            assert!(
                answer.get("evidence").is_none(),
                "{tool} records no Evidence"
            );
            assert!(answer.get("context").is_none(), "{tool}");
        } else {
            common::assert_said_once(&answer);
            assert_eq!(answer["evidence"]["operation"], json!(tool));
        }
        self.seen.insert(tool.to_string());
        answer
    }

    async fn id(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.answer(tool, arguments).await;
        answer["evidence"]["evidence_id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

#[tokio::test]
async fn every_tool_states_each_fact_once_and_its_evidence_id_recomputes() {
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = common::sample_binary(dir.path(), "sample", "feature_entry") else {
        return;
    };
    let Some(other) = common::sample_binary(dir.path(), "other", "feature_entry") else {
        return;
    };
    let fixtures = [
        "markupsafe-2.1.5-manylinux-x86_64.whl",
        "markupsafe-3.0.2-manylinux-x86_64.whl",
        "electron-log-4.4.8",
        "electron-log-5.0.0",
    ];
    let Some(fixtures) = fixtures
        .iter()
        .map(|f| common::fixture(f))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;
    let mut c = Checker {
        client,
        seen: BTreeSet::new(),
    };

    c.answer("binary_session", json!({})).await;
    let opened = c.answer("open_binary", json!({"path": other})).await;
    assert!(
        opened["context"]["path"].is_string(),
        "the display path is context"
    );
    let left = c
        .id("analyze_function", json!({"procedure": "feature_entry"}))
        .await;
    c.answer("open_binary", json!({"path": binary})).await;
    c.answer("list_documents", json!({})).await;
    c.answer("set_current_document", json!({"document": "sample"}))
        .await;
    let overview = c.id("binary_overview", json!({})).await;
    c.answer("list_procedures", json!({"limit": 5})).await;
    c.answer("search_procedures", json!({"pattern": "feature"}))
        .await;
    let main = c
        .answer("procedure_address", json!({"procedure": "main"}))
        .await;
    let main = main["result"]["address"].as_str().unwrap().to_string();
    c.answer("inspect_binary_layout", json!({})).await;
    c.answer("search_strings", json!({"pattern": "a", "limit": 3}))
        .await;
    c.answer("resolve_containing_procedure", json!({"address": main}))
        .await;
    let right = c
        .id("analyze_function", json!({"procedure": "feature_entry"}))
        .await;
    c.answer("xrefs", json!({"address": "feature_entry"})).await;
    c.answer(
        "procedure_pseudo_code",
        json!({"procedures": ["main", "feature_entry"]}),
    )
    .await;
    c.answer("procedure_callers", json!({"procedure": "feature_entry"}))
        .await;
    c.answer("procedure_callees", json!({"procedure": "main"}))
        .await;
    c.answer("trace_feature", json!({"query": "feature"})).await;
    c.answer(
        "build_call_path",
        json!({"start": "main", "goal": "feature_entry"}),
    )
    .await;
    c.answer("inspect_analysis_view", json!({"evidence_id": overview}))
        .await;
    let compared = c
        .id(
            "compare_functions",
            json!({"left_evidence_id": left, "right_evidence_id": right}),
        )
        .await;
    c.answer(
        "verify_reconstruction",
        json!({"specification": {"schema_version": 1, "name": "same", "claims": [{
            "claim_id": "c1", "title": "same code", "comparison_evidence_id": compared,
            "dimension": "instructions", "expected": "unchanged"}]}}),
    )
    .await;
    c.answer("list_evidence", json!({"limit": 3})).await;
    c.answer("get_evidence", json!({"evidence_id": compared}))
        .await;

    let recorded = c
        .answer(
            "record_unknown",
            json!({"question": "Who calls feature_entry?", "domain": "calls",
                   "severity": "low", "approved": true}),
        )
        .await;
    let unknown = recorded["result"]["unknown_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(recorded["context"]["revision_digest"].is_string());
    c.answer(
        "update_unknown",
        json!({"unknown_id": unknown, "expected_revision": 1, "status": "investigating",
               "severity": "low", "approved": true}),
    )
    .await;
    c.answer("list_unknowns", json!({})).await;
    c.answer("verify_unknown_resolution", json!({"unknown_id": unknown}))
        .await;

    let mut manifests = Vec::new();
    for wheel in &fixtures[..2] {
        c.answer("open_binary", json!({"path": wheel})).await;
        let page = c
            .answer("inspect_artifact", json!({"occurrence_limit": 500}))
            .await;
        manifests.push(page["result"]["manifest"]["manifest_id"].clone());
    }
    c.answer(
        "compare_artifacts",
        json!({"left": manifests[0], "right": manifests[1]}),
    )
    .await;

    let mut analyses = Vec::new();
    for app in &fixtures[2..] {
        analyses.push(
            c.id("analyze_javascript_application", json!({"input_path": app}))
                .await,
        );
    }
    c.answer("inspect_analysis_view", json!({"evidence_id": analyses[1]}))
        .await;
    c.answer(
        "trace_application_feature",
        json!({"evidence_id": analyses[1], "seed": {"kind": "module", "value": "src", "match": "contains"}}),
    )
    .await;
    c.answer(
        "compare_application_versions",
        json!({"left_evidence_id": analyses[0], "right_evidence_id": analyses[1]}),
    )
    .await;
    c.answer("close_binary", json!({})).await;

    let every: BTreeSet<String> = ToolName::ALL
        .iter()
        .map(|t| t.as_str().to_string())
        .filter(|t| !CHECKED_ELSEWHERE.contains(&t.as_str()))
        .collect();
    assert_eq!(c.seen, every, "every tool is checked here or elsewhere");
}

/// The catalog a client loads before anything else: the goal is at most
/// 40 KiB; the README's performance table has the figure this prints.
#[tokio::test]
async fn tools_list_is_at_most_40_kib() {
    let (client, _server, _) = connect(Era::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), ToolName::ALL.len());
    let bytes = serde_json::to_string(&json!({"tools": tools}))
        .unwrap()
        .len();
    println!("tools/list: {bytes} bytes for {} tools", tools.len());
    assert!(bytes <= 40 * 1024, "tools/list is {bytes} bytes");
}

/// Where the hostile files below map their code.
const TEXT: u64 = 0x40_1000;

/// The `.text` section of those files, holding `code` at [`TEXT`].
fn text_section(code: Vec<u8>) -> Section {
    Section::new(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT, code)
}

/// An ELF whose dynamic table names one short library 20,000 times.
fn elf_needing_one_library_20000_times() -> Vec<u8> {
    let mut elf = Elf::new(TEXT);
    elf.section(text_section(vec![0xc3; 16]));
    let strings = elf.section(Section::new(
        ".dynstr",
        SHT_STRTAB,
        SHF_ALLOC,
        0x50_0000,
        b"\0a.so\0".to_vec(),
    ));
    let mut entries: Vec<u8> = (0..20_000).flat_map(|_| dynamic(1, 1)).collect(); // DT_NEEDED
    entries.extend_from_slice(&dynamic(0, 0));
    elf.section(
        Section::new(
            ".dynamic",
            SHT_DYNAMIC,
            SHF_ALLOC | SHF_WRITE,
            0x60_0000,
            entries,
        )
        .link(strings)
        .entsize(16),
    );
    elf.build()
}

/// An ELF with 5,000 executable sections over the same 4 KiB of file
/// bytes: far more code than the file holds, so most are past the budget.
fn elf_with_5000_executable_sections() -> Vec<u8> {
    let mut elf = Elf::new(TEXT);
    let text = elf.section(text_section(vec![0x90; 4096]));
    for index in 0..5_000u64 {
        let mut copy = Section::new(
            &format!(".t{index}"),
            SHT_PROGBITS,
            SHF_ALLOC | SHF_EXECINSTR,
            0x100_0000 + index * 0x1000,
            Vec::new(),
        );
        copy.contents = Contents::Shared {
            section: text,
            size: 4096,
        };
        elf.section(copy);
    }
    elf.build()
}

/// An ELF whose one function (at the entry point) loads the address of
/// 2,000 different 4,000-character strings, one `lea` each.
fn elf_with_a_function_naming_2000_long_strings() -> Vec<u8> {
    const RODATA: u64 = 0x50_0000;
    const STRING: u64 = 4001;
    let mut code = Vec::new();
    for index in 0..2_000u64 {
        let at = TEXT + code.len() as u64;
        let target = RODATA + index * STRING;
        code.extend_from_slice(&[0x48, 0x8d, 0x05]); // lea rax, [rip + disp32]
        code.extend_from_slice(&((target.wrapping_sub(at + 7)) as u32).to_le_bytes());
    }
    code.push(0xc3);
    let mut rodata = Vec::new();
    for index in 0..2_000u64 {
        rodata.extend(format!("{index:04}").bytes());
        rodata.extend(std::iter::repeat_n(
            b'a' + (index % 26) as u8,
            STRING as usize - 5,
        ));
        rodata.push(0);
    }
    let mut elf = Elf::new(TEXT);
    elf.section(text_section(code));
    elf.section(Section::new(
        ".rodata",
        SHT_PROGBITS,
        SHF_ALLOC,
        RODATA,
        rodata,
    ));
    elf.build()
}

/// An ELF whose 300 functions have distinct 4,000-character names, the
/// first with 40 more such names as aliases.
fn elf_with_300_functions_of_long_names() -> Vec<u8> {
    let names: Vec<Vec<u8>> = (0..340u32)
        .map(|index| {
            let mut name = format!("f{index:04}").into_bytes();
            name.resize(4000, b'a' + (index % 26) as u8);
            name
        })
        .collect();
    let refs: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
    let (strings, offsets) = strtab(&refs);
    let mut elf = Elf::new(TEXT);
    let text = elf.section(text_section(vec![0xc3; 300 * 16]));
    let mut symbols = vec![0u8; 24];
    for (index, &offset) in offsets.iter().enumerate() {
        let address = if index >= 300 {
            TEXT
        } else {
            TEXT + 16 * index as u64
        };
        symbols.extend_from_slice(&sym(offset, 0x12, text as u16, address, 16));
    }
    let names = elf.section(Section::new(".strtab", SHT_STRTAB, 0, 0, strings));
    elf.section(
        Section::new(".symtab", SHT_SYMTAB, 0, 0, symbols)
            .link(names)
            .entsize(24),
    );
    elf.build()
}

/// A hostile file (repeated libraries, thousands of sections, a function
/// naming thousands of long strings) makes no default answer pass 32 KiB,
/// and the largest answer a call may ask for stays under the ceiling of
/// every answer without being refused.
#[tokio::test]
async fn hostile_files_keep_every_default_answer_within_32_kib() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: Vec<u8>| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let needing = write("needing", elf_needing_one_library_20000_times());
    let sections = write("sections", elf_with_5000_executable_sections());
    let strings = write("strings", elf_with_a_function_naming_2000_long_strings());
    let (client, _server, _) = connect(Era::Modern).await;
    let mut c = Checker {
        client,
        seen: BTreeSet::new(),
    };

    c.answer("open_binary", json!({"path": needing})).await;
    let layout = c.answer("inspect_binary_layout", json!({})).await;
    let needed = &layout["result"]["needed_libraries"];
    assert_eq!(needed["total"], 1, "{needed}");
    assert_eq!(needed["items"], json!(["a.so"]));
    assert_eq!(layout["result"]["needed_libraries_repeated"], 19_999);
    let page = c
        .answer("inspect_binary_layout", json!({"list": "needed_libraries"}))
        .await;
    assert_eq!(page["result"]["needed_libraries"]["items"], json!(["a.so"]));
    c.answer("list_procedures", json!({})).await;

    c.answer("open_binary", json!({"path": sections})).await;
    let listed = c.answer("list_procedures", json!({})).await;
    let limitations = listed["evidence"]["limitations"].as_array().unwrap();
    let budget: Vec<&str> = limitations
        .iter()
        .filter_map(Value::as_str)
        .filter(|s| s.contains("code analysis budget"))
        .collect();
    assert_eq!(
        budget.len(),
        1,
        "one sentence for the kind: {limitations:?}"
    );
    c.answer("inspect_binary_layout", json!({})).await;

    c.answer("open_binary", json!({"path": strings})).await;
    let entry = format!("{TEXT:#x}");
    let dossier = c
        .answer("analyze_function", json!({"procedure": entry}))
        .await;
    let reference = &dossier["result"]["references"][0];
    assert_eq!(reference["string_chars"], 4000, "{reference}");
    assert!(reference["string"].as_str().unwrap().chars().count() <= 241);
    assert_eq!(dossier["result"]["truncated"], true);
    let (largest, failed) = call(
        &c.client,
        "analyze_function",
        json!({"procedure": entry, "max_instructions": 20000}),
    )
    .await;
    assert!(!failed, "{}", largest["error"]);
    let bytes = largest.to_string().len();
    assert!(bytes <= 4 << 20, "a {bytes}-byte answer");
    c.answer("trace_feature", json!({"query": "aaaa"})).await;

    let names = write("names", elf_with_300_functions_of_long_names());
    c.answer("open_binary", json!({"path": names})).await;
    let listed = c.answer("list_procedures", json!({})).await;
    let first = &listed["result"]["items"][0];
    assert_eq!(first["name_chars"], 4000, "{first}");
    assert!(first["name"].as_str().unwrap().chars().count() <= 513);
    assert_eq!(first["aliases_total"], 40, "{first}");
    assert_eq!(first["aliases"].as_array().unwrap().len(), 8);
    let returned = listed["result"]["items"].as_array().unwrap().len();
    assert!(returned < 100, "a page of long names stops early");
    assert_eq!(
        listed["result"]["next_offset"], returned,
        "{}",
        listed["result"]
    );
    let found = c
        .answer("search_procedures", json!({"pattern": "f0"}))
        .await;
    assert_eq!(found["result"]["total"], 300, "one match per procedure");
    assert_eq!(found["result"]["items"][0]["matched_name_chars"], 4000);
    let resolved = c
        .answer(
            "procedure_address",
            json!({"procedure": format!("{TEXT:#x}")}),
        )
        .await;
    assert_eq!(resolved["result"]["aliases_total"], 40);
    c.answer("trace_feature", json!({"query": "f01"})).await;
}
