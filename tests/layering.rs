//! The layering ARCHITECTURE.md states is the layering the code has.
//!
//! ARCHITECTURE.md holds a fenced `layers` block: one line per top-level
//! module of `src/`, naming the modules it may import (`*` for any). This
//! test reads that block, scans every non-test source file under each module
//! for `crate::<module>` paths (plain, grouped `crate::{a, b}` and
//! `super::` chains that climb out of the module), and fails on any import
//! the table does not allow, or on a module the table does not place.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ANY: &str = "*";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `layers` block of ARCHITECTURE.md: module → modules it may import.
fn stated_layers() -> BTreeMap<String, BTreeSet<String>> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut lines = text.lines().skip_while(|l| l.trim() != "```layers");
    assert!(
        lines.next().is_some(),
        "ARCHITECTURE.md must hold a ```layers block"
    );
    let mut table = BTreeMap::new();
    for line in lines.take_while(|l| l.trim() != "```") {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (module, allowed) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("layers line without ':': {line}"));
        let allowed = allowed.split_whitespace().map(str::to_owned).collect();
        assert!(
            table.insert(module.trim().to_owned(), allowed).is_none(),
            "{module} is placed twice in the layers block"
        );
    }
    table
}

/// The top-level modules of the library and the binary.
fn top_modules() -> BTreeSet<String> {
    let src = root().join("src");
    fs::read_dir(&src)
        .expect("src/")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_stem()?.to_str()?.to_owned();
            let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
            (is_module && name != "lib" && name != "main").then_some(name)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "tests" {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// The file's text without comments and without `#[cfg(test)]` items.
fn production_code(text: &str) -> String {
    let mut kept = String::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth = 0i64;
    let mut pending_test_item = false;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim();
        if skip_depth.is_none() && trimmed.starts_with("#[cfg(test)]") {
            pending_test_item = true;
            continue;
        }
        let opens = code.matches('{').count() as i64;
        let closes = code.matches('}').count() as i64;
        if pending_test_item {
            pending_test_item = false;
            if opens > closes {
                skip_depth = Some(depth);
                depth += opens - closes;
                continue;
            }
            // A one-line test item (`mod tests;`, `use …;`).
            continue;
        }
        depth += opens - closes;
        if let Some(start) = skip_depth {
            if depth <= start {
                skip_depth = None;
            }
            continue;
        }
        kept.push_str(code);
        kept.push('\n');
    }
    kept
}

/// The top-level modules a piece of code names through `crate::`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(at) = code[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        let glued = start > 0 && {
            let before = bytes[start - 1];
            before.is_ascii_alphanumeric() || before == b'_' || before == b'$'
        };
        if glued {
            continue;
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                if let Some(name) = leading_ident(item.trim()) {
                    named.insert(name);
                }
            }
        } else if let Some(name) = leading_ident(rest) {
            named.insert(name);
        }
    }
    named
}

fn leading_ident(s: &str) -> Option<String> {
    let ident: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!ident.is_empty()).then_some(ident)
}

/// How many `super::` a path may climb from `file` without leaving its
/// top-level module.
fn super_budget(src: &Path, file: &Path) -> usize {
    let relative = file.strip_prefix(src).expect("under src");
    let dirs = relative.components().count() - 1;
    let is_mod_file = file
        .file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs");
    // `a/b.rs` is module a::b (may climb 1); `a/b/mod.rs` is a::b (may climb 1).
    if is_mod_file {
        dirs.saturating_sub(1)
    } else {
        dirs
    }
}

fn max_super_chain(code: &str) -> usize {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .map(|token| {
            let mut count = 0;
            let mut rest = token;
            while let Some(next) = rest.strip_prefix("super::") {
                count += 1;
                rest = next;
            }
            count
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn every_module_imports_only_what_architecture_md_allows() {
    let layers = stated_layers();
    let modules = top_modules();
    let unplaced: Vec<_> = modules
        .iter()
        .filter(|m| !layers.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "ARCHITECTURE.md's layers block does not place {unplaced:?}"
    );
    let src = root().join("src");
    let mut violations = Vec::new();
    let mut scanned = 0;
    for module in &modules {
        let allowed = &layers[module];
        let mut files = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{module}.rs")));
        }
        for file in files {
            scanned += 1;
            let code = production_code(&fs::read_to_string(&file).expect("source"));
            let shown = file.strip_prefix(root()).unwrap().display().to_string();
            for named in crate_paths(&code) {
                let ok = named == *module || allowed.contains(ANY) || allowed.contains(&named);
                // `crate::` in the binary names the binary's own modules.
                let binary_local = module == "cli";
                if !ok && !binary_local {
                    violations.push(format!("{shown} imports crate::{named}"));
                }
            }
            if max_super_chain(&code) > super_budget(&src, &file) {
                violations.push(format!("{shown} climbs out of {module} with super::"));
            }
        }
    }
    assert!(scanned > 100, "scanned only {scanned} files");
    assert!(
        violations.is_empty(),
        "imports across the stated layering:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_layers_block_names_only_real_modules() {
    let modules = top_modules();
    for (module, allowed) in stated_layers() {
        assert!(
            modules.contains(&module),
            "layers names {module}, not in src/"
        );
        for other in allowed {
            assert!(
                other == ANY || modules.contains(&other),
                "{module} may import {other}, which is not in src/"
            );
        }
    }
}

#[test]
fn the_scanner_sees_the_import_forms_it_checks() {
    let code = production_code(
        "use crate::session::X;\nuse crate::{tools::A, ground};\nlet s = \"mycrate::foo\";\n\
         // use crate::server::Y;\n#[cfg(test)]\nmod tests {\n    use crate::cli::Z;\n}\n",
    );
    let named: Vec<_> = crate_paths(&code).into_iter().collect();
    assert_eq!(named, ["ground", "session", "tools"]);
    assert_eq!(max_super_chain("use super::super::super::x;"), 3);
}
