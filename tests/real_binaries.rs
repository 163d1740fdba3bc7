//! Real binaries nobody here wrote, opened through the MCP tools and checked
//! against independent oracles (`llvm-nm`, `llvm-objdump -p`): a system ELF,
//! a Mach-O thin bundle, two universal Mach-O files and two PE32+ images.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{Era, call, connect};
use serde_json::{Value, json};

/// Every `(address, name)` pair (aliases included) and every address, read
/// through `list_procedures` pages until `has_more` is false.
async fn inventory(
    client: &common::Client,
    document: &str,
) -> (BTreeSet<(String, String)>, BTreeSet<String>, u64) {
    inventory_named_by(client, document, None).await
}

/// [`inventory`], counting only the names of procedures that `source`
/// (a `found_by` value) found, when given.
async fn inventory_named_by(
    client: &common::Client,
    document: &str,
    source: Option<&str>,
) -> (BTreeSet<(String, String)>, BTreeSet<String>, u64) {
    let mut named = BTreeSet::new();
    let mut addresses = BTreeSet::new();
    let mut offset = 0u64;
    loop {
        let (page, failed) = call(
            client,
            "list_procedures",
            json!({"document": document, "offset": offset, "limit": 500}),
        )
        .await;
        assert!(!failed, "{page}");
        let result = &page["result"];
        assert!(
            page["evidence"]["evidence_id"]
                .as_str()
                .unwrap()
                .starts_with("ev_")
        );
        assert_eq!(result["truncated"], false);
        for item in result["items"].as_array().unwrap() {
            let address = item["address"].as_str().unwrap().to_string();
            assert!(address.starts_with("0x") && address == address.to_lowercase());
            addresses.insert(address.clone());
            let found_by = |wanted: &str| {
                item["found_by"]
                    .as_array()
                    .is_some_and(|found| found.contains(&json!(wanted)))
            };
            // Imports are named by the import tables, not the symbol
            // tables llvm-nm reads (tests/mcp_code.rs checks them).
            let counted = source.is_none_or(found_by) && !found_by("import");
            if !counted {
                continue;
            }
            for name in item["name"].as_str().into_iter().chain(
                item["aliases"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str),
            ) {
                named.insert((address.clone(), name.to_string()));
            }
        }
        if result["has_more"] == false {
            assert_eq!(result["next_offset"], Value::Null);
            return (named, addresses, result["total"].as_u64().unwrap());
        }
        offset = result["next_offset"].as_u64().unwrap();
    }
}

fn pairs(functions: &[(u64, String)]) -> BTreeSet<(String, String)> {
    functions
        .iter()
        .map(|(a, n)| (format!("{a:#x}"), n.clone()))
        .collect()
}

async fn open(client: &common::Client, path: &Path) -> Value {
    let (opened, failed) = call(client, "open_binary", json!({"path": path})).await;
    assert!(!failed, "{opened}");
    opened["result"].clone()
}

#[tokio::test]
async fn universal_mach_o_slices_match_llvm_nm_per_architecture() {
    for fixture in ["fsevents.node", "markupsafe-speedups-universal2.so"] {
        let Some(path) = common::fixture(fixture) else {
            return;
        };
        let (client, _, _) = connect(Era::Legacy).await;
        let opened = open(&client, &path).await;
        assert_eq!(opened["format"], "mach-o-universal");
        let documents = opened["documents"].clone();
        assert_eq!(
            documents,
            json!([format!("{fixture} (x86_64)"), format!("{fixture} (arm64)")])
        );
        for arch in ["x86_64", "arm64"] {
            let Some(functions) = common::nm_functions(&[&format!("--arch={arch}")], &path) else {
                return;
            };
            assert!(!functions.is_empty());
            let document = format!("{fixture} ({arch})");
            let (named, addresses, total) = inventory(&client, &document).await;
            assert_eq!(named, pairs(&functions), "{document}");
            assert_eq!(total as usize, addresses.len());
            let (overview, _) =
                call(&client, "binary_overview", json!({"document": document})).await;
            assert_eq!(overview["result"]["architecture"], arch);
            assert_eq!(overview["result"]["format"], "mach-o");
        }
    }
}

#[tokio::test]
async fn thin_mach_o_bundle_matches_llvm_nm() {
    let Some(path) = common::fixture("watcher-darwin-arm64.node") else {
        return;
    };
    let Some(functions) = common::nm_functions(&[], &path) else {
        return;
    };
    let (client, _, _) = connect(Era::Modern).await;
    let opened = open(&client, &path).await;
    assert_eq!(opened["documents"], json!(["watcher-darwin-arm64.node"]));
    let (named, _, _) = inventory(&client, "watcher-darwin-arm64.node").await;
    assert_eq!(named, pairs(&functions));
    assert!(named.contains(&(
        "0x1db4".to_string(),
        "__Z9subscribeRKN4Napi12CallbackInfoE".to_string()
    )));
}

/// What `llvm-objdump -p` says of a PE image.
struct PeHeaders {
    /// ImageBase + AddressOfEntryPoint.
    entry: u64,
    /// `(ImageBase + RVA, name)` of every export.
    exports: Vec<(u64, String)>,
    image_base: u64,
}

fn pe_oracle(path: &Path) -> Option<PeHeaders> {
    let out = match Command::new("llvm-objdump").arg("-p").arg(path).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            common::skip("cannot run llvm-objdump -p");
            return None;
        }
    };
    let field = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| u64::from_str_radix(v, 16).ok())
    };
    let base = field("ImageBase")?;
    let entry = base + field("AddressOfEntryPoint")?;
    let mut exports = Vec::new();
    let mut in_table = false;
    for line in out.lines() {
        if line.starts_with("Export Table:") {
            in_table = true;
        } else if in_table {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() == 3 && cols[0].parse::<u32>().is_ok() {
                let rva = u64::from_str_radix(cols[1].trim_start_matches("0x"), 16).ok()?;
                exports.push((base + rva, cols[2].to_string()));
            } else if line.trim().is_empty() {
                in_table = false;
            }
        }
    }
    Some(PeHeaders {
        entry,
        exports,
        image_base: base,
    })
}

#[tokio::test]
async fn pe32_plus_exports_and_entry_points_match_llvm_objdump() {
    for fixture in ["watcher-win32-x64.node", "esbuild-win32-x64.exe"] {
        let Some(path) = common::fixture(fixture) else {
            return;
        };
        let Some(PeHeaders {
            entry,
            exports,
            image_base,
        }) = pe_oracle(&path)
        else {
            return;
        };
        let (client, _, _) = connect(Era::Legacy).await;
        let opened = open(&client, &path).await;
        assert_eq!(opened["format"], "pe");
        // esbuild is a Go program: Go's function table names its functions
        // too (see stripped_go_executables_are_named_by_their_function_table);
        // the export table is what llvm-objdump lists.
        let (named, addresses, _) = inventory_named_by(&client, fixture, Some("export")).await;
        assert_eq!(named, pairs(&exports), "{fixture}");
        assert!(
            addresses.contains(&format!("{entry:#x}")),
            "{fixture}: entry {entry:#x}"
        );
        let (overview, _) = call(&client, "binary_overview", json!({})).await;
        assert_eq!(overview["result"]["entry_point"], format!("{entry:#x}"));
        assert_eq!(overview["result"]["image_base"], format!("{image_base:#x}"));
    }
}

/// Runs an oracle command; `None` (after a skip) when it cannot run.
fn oracle_output(program: &str, args: &[&str], path: &Path) -> Option<String> {
    match Command::new(program).args(args).arg(path).output() {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        _ => {
            common::skip(&format!("cannot run {program}"));
            None
        }
    }
}

/// The virtual address of the `PT_LOAD` that maps file offset 0, from `readelf -lW`.
fn elf_header_load_address(path: &Path) -> Option<u64> {
    let out = oracle_output("readelf", &["-lW"], path)?;
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|cols| cols.first() == Some(&"LOAD") && cols.len() > 4)
        .find(|cols| hex(cols[1]) == Some(0) && hex(cols[4]).is_some_and(|size| size > 0))
        .and_then(|cols| hex(cols[2]))
}

/// The `vmaddr` of the segment command with `fileoff 0` and file bytes,
/// from `llvm-objdump --macho --private-headers`.
fn mach_o_header_segment_address(path: &Path, arch: Option<&str>) -> Option<u64> {
    let arch = arch.map(|a| format!("--arch={a}"));
    let mut args = vec!["--macho", "--private-headers"];
    args.extend(arch.as_deref());
    let out = oracle_output("llvm-objdump", &args, path)?;
    let mut found = None;
    for command in out.split("Load command") {
        let field = |name: &str| {
            command
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .and_then(|l| l.split_whitespace().nth(1))
        };
        let number = |v: &str| match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        };
        if let (Some(vmaddr), Some("0"), Some(filesize)) =
            (field("vmaddr"), field("fileoff"), field("filesize"))
            && filesize != "0"
            && let Some(address) = number(vmaddr)
        {
            found = Some(found.map_or(address, |f: u64| f.min(address)));
        }
    }
    found
}

/// `image_base` is where the file's header is linked: what a crash
/// report's module load address corresponds to. Checked against readelf
/// (a PIE and a fixed-address executable) and llvm-objdump (Mach-O thin
/// and universal; PE is checked with its exports above).
#[tokio::test]
async fn image_base_is_the_link_address_of_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let source = [("main.c", "int main(void) { return 0; }\n")];
    let Some(fixed) = common::compile_c_with(dir.path(), "fixed", &["-no-pie"], &source) else {
        return;
    };
    let mut cases: Vec<(std::path::PathBuf, Option<String>, u64)> = Vec::new();
    for path in [Path::new("/usr/bin/ls").to_path_buf(), fixed] {
        let Some(base) = elf_header_load_address(&path) else {
            return;
        };
        cases.push((path, None, base));
    }
    assert_eq!(cases[0].2, 0, "the system ls is position-independent");
    assert_ne!(cases[1].2, 0, "-no-pie links at a fixed address");
    for (fixture, archs) in [
        ("watcher-darwin-arm64.node", vec![None]),
        ("fsevents.node", vec![Some("x86_64"), Some("arm64")]),
    ] {
        let Some(path) = common::fixture(fixture) else {
            return;
        };
        for arch in archs {
            let Some(base) = mach_o_header_segment_address(&path, arch) else {
                return;
            };
            let document = arch.map(|a| format!("{fixture} ({a})"));
            cases.push((path.clone(), document, base));
        }
    }
    let (client, _, _) = connect(Era::Modern).await;
    for (path, document, base) in cases {
        open(&client, &path).await;
        let arguments = match &document {
            Some(d) => json!({"document": d}),
            None => json!({}),
        };
        let (overview, failed) = call(&client, "binary_overview", arguments).await;
        assert!(!failed, "{overview}");
        assert_eq!(
            overview["result"]["image_base"],
            format!("{base:#x}"),
            "{} {document:?}",
            path.display()
        );
    }
}

#[tokio::test]
async fn a_system_elf_library_matches_llvm_nm_dynamic_symbols() {
    let Ok(path) = std::fs::canonicalize("/usr/lib/x86_64-linux-gnu/libz.so.1") else {
        common::skip("no system libz.so.1");
        return;
    };
    let Some(functions) = common::nm_functions(&["-D"], &path) else {
        return;
    };
    let (client, _, _) = connect(Era::Modern).await;
    let opened = open(&client, &path).await;
    assert_eq!(opened["format"], "elf");
    let document = path.file_name().unwrap().to_string_lossy().into_owned();
    let (named, _, _) = inventory(&client, &document).await;
    // Stripped: only the dynamic table names functions.
    assert_eq!(named, pairs(&functions));
    assert!(named.iter().any(|(_, n)| n == "inflate"));
}

/// Why an `llvm-nm` symbol is not a procedure, or `None` if no rule explains it.
fn classify_nm_only(row: &common::NmRow) -> Option<&'static str> {
    match (row.kind.as_str(), row.class.as_str()) {
        ("OBJECT" | "TLS" | "COMMON", _) => Some("ELF data object, not a function"),
        ("SECTION" | "FILE", _) => Some("ELF section or file symbol"),
        ("NOTYPE", _) => Some("ELF untyped marker symbol (_end, __bss_start, ...)"),
        ("", "a" | "A") => Some("absolute symbol"),
        ("", class) if !matches!(class, "T" | "t") => {
            Some("Mach-O symbol in a non-text section (data, bss, const)")
        }
        _ => None,
    }
}

/// The symbol-derived inventory (`rea procedures --symbols-only`'s view)
/// against every defined symbol `llvm-nm` lists: each difference, in either
/// direction, must be explained by a rule above; none may be unclassified.
#[test]
fn symbol_procedures_differ_from_llvm_nm_only_by_classified_rules() {
    use rea::providers::native::NativeImage;
    use std::collections::BTreeMap;
    // (fixture, llvm-nm arguments, document index)
    let cases: [(&str, &[&str], usize); 6] = [
        ("watcher-linux-x64.node", &["-D"], 0),
        ("watcher-darwin-arm64.node", &[], 0),
        ("fsevents.node", &["--arch=x86_64"], 0),
        ("fsevents.node", &["--arch=arm64"], 1),
        ("markupsafe-speedups-universal2.so", &["--arch=x86_64"], 0),
        ("markupsafe-speedups-universal2.so", &["--arch=arm64"], 1),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(compiled) = common::sample_binary(dir.path(), "sample.elf", "feature") else {
        return;
    };
    let mut paths = Vec::new();
    for (name, args, document) in cases {
        let Some(path) = common::fixture(name) else {
            return;
        };
        paths.push((name.to_owned(), path, args, document));
    }
    paths.push(("compiled C program (.symtab)".to_owned(), compiled, &[], 0));
    for (name, path, args, document) in paths {
        let Some(rows) = common::nm_rows(args, &path) else {
            return;
        };
        let image = NativeImage::open(&path).expect("fixture opens");
        let inventory = image.symbol_inventory(document).expect("inventory");
        let ours: BTreeSet<(u64, String)> = inventory
            .procedures
            .iter()
            .flat_map(|p| {
                p.name
                    .iter()
                    .chain(&p.aliases)
                    .map(move |n| (p.address, n.to_string()))
            })
            .collect();
        let theirs: BTreeSet<(u64, String)> =
            rows.iter().map(|r| (r.address, r.name.clone())).collect();
        let mut rules: BTreeMap<&str, usize> = BTreeMap::new();
        let mut unclassified = Vec::new();
        for row in &rows {
            if ours.contains(&(row.address, row.name.clone())) {
                assert!(
                    row.is_function(),
                    "{name}: a non-function became a procedure: {row:?}"
                );
                continue;
            }
            match classify_nm_only(row) {
                Some(rule) => *rules.entry(rule).or_default() += 1,
                None => unclassified.push(format!("only in llvm-nm: {row:?}")),
            }
        }
        // Nothing is ours alone: every symbol-derived name is a defined
        // function symbol llvm-nm lists at the same address.
        for (address, symbol) in ours.difference(&theirs) {
            unclassified.push(format!("only in rea: {address:#x} {symbol}"));
        }
        eprintln!(
            "{name} {args:?}: {} shared, differences by rule: {rules:?}",
            ours.len()
        );
        assert!(
            unclassified.is_empty(),
            "{name} {args:?}: {unclassified:#?}"
        );
        assert!(!ours.is_empty(), "{name}: no procedures compared");
    }
}

/// Stripped Go executables keep Go's function table: every function gets
/// its Go name back, and the table agrees with the code, since every direct
/// call target the disassembler finds is one of its function starts.
#[test]
fn stripped_go_executables_are_named_by_their_function_table() {
    use rea::providers::Source;
    use rea::providers::native::NativeImage;
    for name in [
        "esbuild-linux-x64",
        "esbuild-linux-arm64",
        "esbuild-win32-x64.exe",
    ] {
        let Some(path) = common::fixture(name) else {
            return;
        };
        let image = NativeImage::open(&path).expect("fixture opens");
        let inventory = image.inventory(0).expect("inventory");
        let named = |wanted: &str| {
            inventory
                .procedures
                .iter()
                .any(|p| p.name.as_deref() == Some(wanted) && p.sources.contains(Source::GoPclntab))
        };
        assert!(named("main.main") && named("runtime.main"), "{name}");
        let go = inventory
            .procedures
            .iter()
            .filter(|p| p.sources.contains(Source::GoPclntab))
            .count();
        assert!(go > 8000, "{name}: {go} Go functions");
        let unexplained: Vec<String> = inventory
            .procedures
            .iter()
            .filter(|p| p.sources.contains(Source::CallTarget))
            .filter(|p| !p.sources.contains(Source::GoPclntab))
            .map(|p| format!("{:#x} {:?}", p.address, p.sources.names()))
            .collect();
        // PE images also carry a few C runtime helpers outside Go's table.
        assert!(
            unexplained.len() <= 8,
            "{name}: call targets Go does not list: {unexplained:?}"
        );
    }
}

/// Mach-O pointer slots are the file's rebases, as `llvm-objdump --macho
/// --rebase` lists them (no scan, no inference), and each pointer lies in
/// one of the image's segments.
#[test]
fn macho_pointer_slots_are_the_rebases_llvm_objdump_lists() {
    use rea::providers::native::NativeImage;
    use rea::providers::native::pointers::PointerSource;
    let cases: [(&str, &[&str], usize); 5] = [
        ("watcher-darwin-arm64.node", &[], 0),
        ("fsevents.node", &["--arch=x86_64"], 0),
        ("fsevents.node", &["--arch=arm64"], 1),
        ("markupsafe-speedups-universal2.so", &["--arch=x86_64"], 0),
        ("markupsafe-speedups-universal2.so", &["--arch=arm64"], 1),
    ];
    for (name, args, document) in cases {
        let Some(path) = common::fixture(name) else {
            return;
        };
        let listed = Command::new("llvm-objdump")
            .args(["--macho", "--rebase"])
            .args(args)
            .arg(&path)
            .output()
            .expect("run llvm-objdump --rebase");
        assert!(listed.status.success(), "{name}");
        let theirs: BTreeSet<u64> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let [_, _, address, "pointer"] = fields[..] else {
                    return None;
                };
                u64::from_str_radix(address.strip_prefix("0x")?, 16).ok()
            })
            .collect();
        assert!(!theirs.is_empty(), "{name}: llvm-objdump lists rebases");
        let image = NativeImage::open(&path).expect("fixture opens");
        let pointers = image.data_pointers(document).expect("pointers");
        assert_eq!(pointers.source, PointerSource::Relocations, "{name}");
        let ours: BTreeSet<u64> = pointers.slots().map(|(slot, _)| slot).collect();
        assert_eq!(
            ours, theirs,
            "{name} {args:?}: slots differ from the rebases"
        );
        let overview = image.overview(document, 100).expect("overview");
        let segments: Vec<(u64, u64)> = overview
            .segments
            .iter()
            .map(|segment| {
                let start = u64::from_str_radix(&segment.address[2..], 16).expect("hex");
                (start, start + segment.size)
            })
            .collect();
        for (slot, target) in pointers.slots() {
            assert!(
                segments
                    .iter()
                    .any(|&(start, end)| (start..end).contains(&target)),
                "{name}: the pointer at {slot:#x} ({target:#x}) is outside the image"
            );
        }
    }
}
