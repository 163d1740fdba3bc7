//! `main` and `wmain` of stripped MinGW-w64 executables, named from the C
//! runtime's handover (`__getmainargs`, then `call main` with `argc`),
//! checked against the unstripped build's symbol table (`llvm-nm`). The
//! MSVC runtime's handover is checked against radare2 in `radare2.rs`.

mod common;

use std::path::Path;
use std::process::Command;

const COMPILER: &str = "x86_64-w64-mingw32-gcc";
const STRIP: &str = "x86_64-w64-mingw32-strip";

const NARROW: &str = r#"
#include <stdio.h>
#include <string.h>
static int __attribute__((noinline)) weigh(const char *s) { return (int)strlen(s) * 3; }
int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i < argc; i++) total += weigh(argv[i]);
    printf("total %d\n", total);
    return total & 0x7f;
}
"#;

const WIDE: &str = r#"
#include <stdio.h>
#include <wchar.h>
int wmain(int argc, wchar_t **argv) {
    wprintf(L"%d %ls\n", argc, argv[0]);
    return argc;
}
"#;

/// The address `llvm-nm` gives the defined text symbol `name`.
fn nm_address(file: &Path, name: &str) -> Option<u64> {
    let found: Vec<u64> = common::llvm_nm(&["--defined-only"], file)?
        .into_iter()
        .filter(|(_, kind, symbol)| symbol == name && kind.eq_ignore_ascii_case(&'t'))
        .map(|(address, _, _)| address)
        .collect();
    assert_eq!(found.len(), 1, "llvm-nm lists {name} once: {found:x?}");
    Some(found[0])
}

fn check(source: &str, flags: &[&str], name: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(built) = common::compile_with(
        COMPILER,
        dir.path(),
        "program.exe",
        flags,
        &[("program.c", source)],
    ) else {
        return;
    };
    let Some(truth) = nm_address(&built, name) else {
        return;
    };
    let stripped = dir.path().join("stripped.exe");
    let status = Command::new(STRIP)
        .arg("-o")
        .arg(&stripped)
        .arg(&built)
        .status()
        .expect("run the MinGW strip");
    assert!(status.success());
    let no_symbols = Command::new("llvm-nm").arg(&stripped).output().unwrap();
    assert!(
        String::from_utf8_lossy(&no_symbols.stdout)
            .trim()
            .is_empty(),
        "the stripped build has no symbols left"
    );
    let listed = common::rea_procedures(&stripped);
    let named: Vec<u64> = listed
        .iter()
        .filter(|(_, listed_name)| listed_name.as_deref() == Some(name))
        .map(|(address, _)| *address)
        .collect();
    assert_eq!(named, [truth], "{name} is named at llvm-nm's address");
    for other in ["main", "wmain"].into_iter().filter(|&other| other != name) {
        assert!(
            listed.iter().all(|(_, n)| n.as_deref() != Some(other)),
            "no {other} is named"
        );
    }
}

#[test]
fn mingw_main_is_named_where_the_symbol_table_says() {
    check(NARROW, &["-O2"], "main");
}

#[test]
fn mingw_wmain_is_named_where_the_symbol_table_says() {
    check(WIDE, &["-O2", "-municode"], "wmain");
}

#[test]
fn mingw_main_is_named_without_optimisation_too() {
    check(NARROW, &["-O0"], "main");
}
