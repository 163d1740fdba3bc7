//! The built-in decompiler through the real `rea` binary: `procedure_pseudo_code`
//! over stdio and `rea decompile`, on programs compiled here from source (the
//! source and llvm-objdump are the truth) and on hostile inputs.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::stdio::{McpChild, initialize};
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea");

/// Source of a small program whose functions call libc with arguments.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
int parse_command(const char *cmd, char *out, unsigned long outlen) {
    if (strcmp(cmd, "help") == 0) { puts("usage: cmd [args]"); return 0; }
    unsigned long n = strlen(cmd);
    if (n >= outlen) return -1;
    for (unsigned long i = 0; i < n; i++) { char c = cmd[i]; if (c >= 'a' && c <= 'z') c -= 32; out[i] = c; }
    out[n] = 0;
    return (int)n;
}
const char *color_name(int c) {
    switch (c) { case 0: return "red"; case 1: return "green"; case 2: return "blue"; case 3: return "cyan";
    case 4: return "magenta"; case 5: return "yellow"; case 6: return "black"; default: return "unknown"; }
}
int sum_positive(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) if (a[i] > 0) s += a[i]; return s; }
int main(int argc, char **argv) {
    char buf[64];
    int r = parse_command(argc > 1 ? argv[1] : "help", buf, sizeof buf);
    int a[3] = {argc, -1, 2};
    printf("%d %s %s %d\n", r, buf, color_name(argc), sum_positive(a, 3));
    return 0;
}
"#;

/// A function the engine needs seconds for: thousands of branches.
fn big_source() -> String {
    let mut s = String::from("int big(int *a, int n) {\n  int s = n;\n");
    for i in 0..3000 {
        s.push_str(&format!(
            "  if (a[{}] > {i}) s += a[{}] * {}; else if (s & {}) s ^= {i};\n",
            i % 97,
            (i * 7) % 97,
            i + 1,
            i % 31
        ));
    }
    s.push_str("  return s;\n}\nint small(int x) { return x * 3 + 1; }\n");
    s.push_str("int main(int c, char **v) { int a[100] = {0}; (void)v; a[1] = c; return big(a, c) + small(c); }\n");
    s
}

/// A program as built, its stripped copy, and its functions by address.
type Built = (PathBuf, PathBuf, Vec<(u64, String)>);

/// The program built with `flags`, then a stripped copy; and the function
/// addresses from the unstripped symbol table.
fn build(dir: &Path, name: &str, source: &str, flags: &[&str]) -> Option<Built> {
    let exe = common::compile_c_with(dir, name, flags, &[(&format!("{name}.c"), source)])?;
    let functions = common::nm_functions(&[], &exe)?;
    let stripped = dir.join(format!("{name}-stripped"));
    let status = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&exe)
        .status()
        .expect("strip runs");
    assert!(status.success());
    Some((exe, stripped, functions))
}

fn address_of(functions: &[(u64, String)], name: &str) -> u64 {
    functions
        .iter()
        .find(|(_, n)| n == name)
        .unwrap_or_else(|| panic!("{name} in the symbol table"))
        .0
}

/// `rea mcp` with `args`, initialized, the file open with the built-in provider.
fn server_on(path: &Path, args: &[&str]) -> McpChild {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut server = McpChild::spawn(&args, "warn");
    initialize(&mut server);
    let opened = call(
        &mut server,
        2,
        "open_binary",
        json!({"path": path, "provider_id": "native"}),
    );
    assert!(opened.get("result").is_some(), "{opened}");
    server
}

/// The structured answer of a tool call.
fn call(server: &mut McpChild, id: u64, tool: &str, arguments: Value) -> Value {
    server.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}}));
    let result = server.response(id);
    assert_eq!(result["isError"], false, "{tool} failed: {result}");
    result["structuredContent"].clone()
}

fn pseudo_code(server: &mut McpChild, id: u64, arguments: Value) -> Vec<Value> {
    let answer = call(server, id, "procedure_pseudo_code", arguments);
    answer["result"]["procedures"]
        .as_array()
        .expect("procedures")
        .clone()
}

fn lines(item: &Value) -> Vec<String> {
    item["lines"]
        .as_array()
        .unwrap_or_else(|| panic!("lines in {item}"))
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect()
}

/// Instruction addresses of `[start, end)` as llvm-objdump decodes them.
fn instruction_starts(path: &Path, start: u64, end: u64) -> BTreeSet<u64> {
    let out = Command::new("llvm-objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--start-address={start:#x}"))
        .arg(format!("--stop-address={end:#x}"))
        .arg(path)
        .output()
        .expect("llvm-objdump runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (address, rest) = l.trim_start().split_once(':')?;
            (!rest.is_empty()).then(|| u64::from_str_radix(address, 16).ok())?
        })
        .collect()
}

#[test]
fn a_stripped_program_reads_as_c_with_imports_strings_and_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, stripped, functions)) = build(dir.path(), "prog", PROGRAM, &["-O2"]) else {
        return;
    };
    let entry = address_of(&functions, "parse_command");
    let mut server = server_on(&stripped, &[]);
    let items = pseudo_code(
        &mut server,
        3,
        json!({"procedures": [format!("{entry:#x}")]}),
    );
    let item = &items[0];
    assert_eq!(item["outcome"], "complete", "{item}");
    let text = lines(item).join("\n");
    // The imports by name, with their arguments; the strings as literals.
    assert!(text.contains("strcmp(param_1,\"help\")"), "{text}");
    assert!(text.contains("puts(\"usage: cmd [args]\")"), "{text}");
    assert!(text.contains("strlen(param_1)"), "{text}");
    // Standard C types only.
    for core in ["int4", "uint8 ", "xunknown", "undefined"] {
        assert!(!text.contains(core), "{core} in {text}");
    }
    // Each callee's call site is where objdump sees the call.
    for callee in item["callees"].as_array().unwrap() {
        let name = callee["name"].as_str().unwrap();
        if ["strcmp", "puts", "strlen"].contains(&name) {
            let sites = common::objdump_plt_sites(&exe, name);
            let site = callee["call_site"].as_str().unwrap().to_owned();
            assert!(
                sites.contains(&site),
                "{name} at {site}, objdump: {sites:?}"
            );
        }
    }
    // Every mapped address is an instruction of the procedure, and most
    // statements have one.
    let end = functions
        .iter()
        .map(|(a, _)| *a)
        .filter(|&a| a > entry)
        .min()
        .unwrap_or(entry + 0x1000);
    let starts = instruction_starts(&exe, entry, end);
    let map = item["address_map"].as_str().unwrap();
    let mapped = rea::decompiler::view::parse_address_map(map, entry).expect("a map");
    assert_eq!(mapped.len(), lines(item).len());
    let as_lines: Vec<rea::decompiler::protocol::Line> = lines(item)
        .into_iter()
        .zip(&mapped)
        .map(|(text, addresses)| rea::decompiler::protocol::Line {
            text,
            addresses: addresses.clone(),
        })
        .collect();
    for line in &as_lines {
        for address in &line.addresses {
            assert!(
                starts.contains(address),
                "{address:#x} ({}) is no instruction start",
                line.text
            );
        }
    }
    let statements = rea::decompiler::view::statement_lines(&as_lines);
    let with_address = statements
        .iter()
        .filter(|&&i| !as_lines[i].addresses.is_empty())
        .count();
    let statements = statements.len();
    assert!(
        with_address * 100 >= statements * 80,
        "{with_address}/{statements} statements mapped"
    );
    assert!(
        map.len() * 5 <= text.len(),
        "the map costs {} of {} bytes",
        map.len(),
        text.len()
    );
    // The record recomputes and names the decompiler.
    let id = item["evidence_id"].as_str().unwrap();
    let record = call(&mut server, 4, "get_evidence", json!({"evidence_id": id}));
    let parameters = &record["result"]["parameters"];
    assert_eq!(parameters["decompiler"], "ghidra-decompiler", "{record}");
    assert!(parameters["knowledge"].as_str().unwrap().starts_with("kn_"));
    let _ = server.finish();
}

#[test]
fn pages_and_the_outline_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, stripped, functions)) = build(dir.path(), "prog", PROGRAM, &["-O0"]) else {
        return;
    };
    let main = format!("{:#x}", address_of(&functions, "main"));
    let mut server = server_on(&stripped, &[]);
    let whole = &pseudo_code(&mut server, 3, json!({"procedures": [main], "limit": 5000}))[0];
    let all = lines(whole);
    assert!(whole.get("next_offset").is_none());
    assert_eq!(whole["total_lines"], all.len());
    let mut paged = Vec::new();
    let mut offset = 0u64;
    let mut id = 4;
    loop {
        let page = &pseudo_code(
            &mut server,
            id,
            json!({"procedures": [main], "limit": 7, "offset": offset}),
        )[0];
        id += 1;
        let got = lines(page);
        assert!(got.len() <= 7);
        let map =
            rea::decompiler::view::parse_address_map(page["address_map"].as_str().unwrap(), 0)
                .unwrap();
        assert_eq!(map.len(), got.len().max(1));
        paged.extend(got);
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(paged, all, "the pages put together are the whole text");
    let outline = &pseudo_code(
        &mut server,
        id,
        json!({"procedures": [main], "view": "outline", "limit": 5000}),
    )[0];
    let entries = outline["outline"].as_array().unwrap();
    assert!(!entries.is_empty());
    for entry in entries {
        let number = entry[0].as_u64().unwrap() as usize;
        let shown = entry[1].as_str().unwrap().trim_end_matches('…');
        assert!(
            all[number - 1].starts_with(shown),
            "line {number}: {shown:?} vs {:?}",
            all[number - 1]
        );
    }
    assert!(
        entries
            .iter()
            .any(|e| e[1].as_str().unwrap().contains("printf("))
    );
    let _ = server.finish();
}

#[test]
fn a_procedure_past_its_deadline_is_incomplete_and_the_rest_complete() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, stripped, functions)) = build(dir.path(), "big", &big_source(), &["-O1"]) else {
        return;
    };
    let big = format!("{:#x}", address_of(&functions, "big"));
    let small = format!("{:#x}", address_of(&functions, "small"));
    let mut server = server_on(&stripped, &["--decompile-timeout", "1"]);
    let asked = Instant::now();
    let items = pseudo_code(&mut server, 3, json!({"procedures": [big, small]}));
    assert_eq!(items[0]["outcome"], "incomplete", "{}", items[0]);
    assert_eq!(items[0]["reason"], "timeout");
    assert_eq!(items[1]["outcome"], "complete", "{}", items[1]);
    assert!(asked.elapsed() < Duration::from_secs(30));
    // The session answers on.
    let status = call(&mut server, 4, "binary_session", json!({}));
    assert!(status["result"].is_object());
    let _ = server.finish();
}

/// The pids of `rea decompile-worker` processes whose parent is `parent`.
fn workers_of(parent: u32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
        let ppid: Option<u32> = after.split(' ').nth(1).and_then(|p| p.parse().ok());
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains("decompile-worker") {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_worker_killed_mid_call_fails_that_procedure_and_the_next_call_works() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, stripped, functions)) = build(dir.path(), "big", &big_source(), &["-O1"]) else {
        return;
    };
    let big = format!("{:#x}", address_of(&functions, "big"));
    let small = format!("{:#x}", address_of(&functions, "small"));
    let mut server = server_on(&stripped, &["--decompile-timeout", "120"]);
    let pid = server.child.id();
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "procedure_pseudo_code", "arguments": {"procedures": [big]}}}));
    let worker = common::wait_for("a decompile worker", || workers_of(pid).first().copied());
    // Let it get into the procedure, then kill it.
    common::wait_for_cpu(worker as u32, 0.0, 0.3);
    let killed = Command::new("kill")
        .args(["-KILL", &worker.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let result = server.response(3);
    let item = &result["structuredContent"]["result"]["procedures"][0];
    assert_eq!(item["outcome"], "incomplete", "{item}");
    assert_eq!(item["reason"], "decompiler_failed", "{item}");
    assert!(
        item["detail"].as_str().unwrap().contains("signal"),
        "{item}"
    );
    let next = &pseudo_code(&mut server, 4, json!({"procedures": [small]}))[0];
    assert_eq!(next["outcome"], "complete", "{next}");
    let _ = server.finish();
}

/// `rea decompile` output per procedure, keyed by its header line.
fn decompiled(
    path: &Path,
    procedures: &[&str],
    workers: &str,
) -> std::collections::BTreeMap<String, String> {
    let out = Command::new(REA)
        .arg("decompile")
        .arg(path)
        .args(procedures)
        .args(["--decompile-workers", workers])
        .output()
        .expect("rea decompile runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut by_procedure = std::collections::BTreeMap::new();
    for block in text.split("\n/* ").filter(|b| !b.trim().is_empty()) {
        let block = block.trim_start_matches("/* ");
        let (head, body) = block.split_once('\n').unwrap();
        by_procedure.insert(head.to_owned(), body.trim_end().to_owned());
    }
    by_procedure
}

#[test]
fn the_same_procedure_reads_the_same_in_any_order_on_any_worker() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, stripped, functions)) = build(dir.path(), "prog", PROGRAM, &["-O2"]) else {
        return;
    };
    let names = ["main", "parse_command", "color_name", "sum_positive"];
    let addresses: Vec<String> = names
        .iter()
        .map(|n| format!("{:#x}", address_of(&functions, n)))
        .collect();
    let forward: Vec<&str> = addresses.iter().map(String::as_str).collect();
    let backward: Vec<&str> = forward.iter().rev().copied().collect();
    let one = decompiled(&stripped, &forward, "1");
    let two = decompiled(&stripped, &backward, "2");
    assert_eq!(one.len(), names.len());
    assert_eq!(one, two);
}

/// `rea decompile FILE PROC` as it exits: its stdout, or its stderr on failure.
fn rea_decompile(path: &Path, procedure: &str) -> Result<String, String> {
    let out = Command::new(REA)
        .arg("decompile")
        .arg(path)
        .arg(procedure)
        .output()
        .expect("rea decompile runs");
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).expect("C is UTF-8"))
    } else {
        assert!(out.stdout.is_empty(), "a failure prints no C");
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn rea_decompile_prints_c_and_fails_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, _, _)) = build(dir.path(), "prog", PROGRAM, &["-O2"]) else {
        return;
    };
    let text = rea_decompile(&exe, "parse_command").expect("C");
    assert!(text.contains("parse_command("), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour in a pipe");
    let refused = rea_decompile(&exe, "no_such_function").expect_err("a failure");
    assert!(refused.contains("no_such_function"), "{refused}");
}

#[test]
fn names_a_reader_cannot_see_are_escaped_in_the_c() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = common::sample_binary(dir.path(), "sample", "feature") else {
        return;
    };
    let text = rea_decompile(&exe, "main").expect("C");
    assert!(!text.contains('\u{202e}'), "{text}");
    assert!(text.contains("evil\\u202Ename("), "{text}");
}

/// Resident memory of `pid` in bytes.
fn resident(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse().ok())
        .unwrap();
    kib * 1024
}

#[test]
fn a_truncated_pe_answers_within_its_deadline_and_the_server_does_not_grow() {
    let Some(pe) = common::fixture("watcher-win32-x64.node") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Headers and the start of .text only: the section table promises bytes
    // the file no longer has (what drove the engine to 5 GB unconfined).
    let bytes = std::fs::read(&pe).unwrap();
    let cut = dir.path().join("truncated.node");
    std::fs::write(&cut, &bytes[..6000]).unwrap();
    let mut server = server_on(&cut, &["--decompile-timeout", "5"]);
    let listed = call(&mut server, 3, "list_procedures", json!({"limit": 8}));
    let procedures: Vec<String> = listed["result"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["address"].as_str().unwrap().to_owned())
        .collect();
    assert!(!procedures.is_empty(), "{listed}");
    let pid = server.child.id();
    let before = resident(pid);
    let asked = Instant::now();
    let items = pseudo_code(&mut server, 4, json!({"procedures": procedures}));
    // Two workers at 5 s each, plus their starts.
    assert!(asked.elapsed() < Duration::from_secs(5 * items.len() as u64 + 30));
    // Nothing rea lists starts in bytes the file holds, so nothing is
    // decoded: each answers at once that the file lacks the bytes.
    for item in &items {
        assert_eq!(item["outcome"], "incomplete", "{item}");
        assert_eq!(item["reason"], "not_in_file", "{item}");
    }
    let grown = resident(pid).saturating_sub(before);
    assert!(grown < 64 << 20, "the server grew by {grown} bytes");
    let _ = server.finish();
}

#[test]
fn the_stack_protector_reads_as_one_comment() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, _, _)) = build(
        dir.path(),
        "guarded",
        PROGRAM,
        &["-O2", "-fstack-protector-all"],
    ) else {
        return;
    };
    // The oracle: the compiled code does check the canary.
    assert!(!common::objdump_plt_sites(&exe, "__stack_chk_fail").is_empty());
    let text = rea_decompile(&exe, "main").expect("C");
    assert!(
        text.contains(rea::decompiler::idioms::CANARY_COMMENT),
        "{text}"
    );
    assert!(!text.contains("__stack_chk_fail("), "{text}");
    assert!(!text.contains("in_FS_OFFSET + 0x28"), "{text}");
}

#[test]
fn a_document_the_engine_cannot_load_fails_each_procedure_once_and_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let Some((exe, _, _)) = build(dir.path(), "prog", PROGRAM, &["-O2"]) else {
        return;
    };
    // The same file, said to be PowerPC (e_machine 20): rea still lists its
    // symbols; the engine here has no PowerPC language.
    let mut bytes = std::fs::read(&exe).unwrap();
    bytes[18..20].copy_from_slice(&20u16.to_le_bytes());
    let ppc = dir.path().join("prog-ppc");
    std::fs::write(&ppc, bytes).unwrap();
    let out = Command::new(REA)
        .arg("decompile")
        .arg(&ppc)
        .args(["main", "parse_command", "color_name", "sum_positive"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let refused: Vec<&str> = stderr
        .lines()
        .filter(|l| l.ends_with("(engine_refused)"))
        .collect();
    assert_eq!(refused.len(), 4, "{stderr}");
    assert!(refused.iter().all(|l| l.contains("PowerPC")), "{stderr}");
}
