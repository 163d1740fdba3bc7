//! Procedure discovery on a stripped binary whose unwind tables are
//! zeroed: what recursive descent, pointers, jump tables and code gaps
//! recover, and `main` named from the C runtime's call, scored against
//! the unstripped build's symbol table (`nm`).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use object::{Object, ObjectSection};

/// Callbacks reached only through a table, a switch compiled to a jump
/// table, a noreturn error path and a cold fragment.
const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int __attribute__((noinline)) op_add(int a, int b) { return a + b + (int)strlen("add"); }
static int __attribute__((noinline)) op_sub(int a, int b) { return a - b - (int)strlen("sub"); }
static int __attribute__((noinline)) op_mul(int a, int b) { return a * b ^ (int)strlen("mul"); }
static int __attribute__((noinline)) op_div(int a, int b) { return b ? a / b : -(int)strlen("div"); }

struct op { const char *name; int (*run)(int, int); };
static const struct op ops[] = {
    {"add", op_add}, {"sub", op_sub}, {"mul", op_mul}, {"div", op_div},
};

static void __attribute__((noinline, noreturn)) fail(const char *why) {
    fprintf(stderr, "fatal: %s\n", why);
    exit(2);
}

static int __attribute__((noinline)) classify(int c) {
    switch (c) {
    case 0: return puts("zero");
    case 1: return puts("one") + 1;
    case 2: return puts("two") * 2;
    case 3: return puts("three") - 3;
    case 4: return puts("four") ^ 4;
    case 5: return puts("five") + 55;
    case 6: return puts("six") * 66;
    case 7: return puts("seven") - 77;
    default: return -1;
    }
}

int main(int argc, char **argv) {
    if (argc > 5) {
        if (__builtin_expect(argv[1][0] == 'x', 0))
            fail(argv[1]);
    }
    int total = 0;
    for (int i = 0; i < argc; i++) {
        const struct op *op = &ops[i % 4];
        total += op->run(i, argc);
        total += classify(i + argc);
    }
    printf("%d\n", total);
    return 0;
}
"#;

/// Functions with a size, by `nm -S`: `(address, size, name)`.
fn truth(path: &Path) -> BTreeSet<(u64, u64, String)> {
    let out = Command::new("nm")
        .arg("-S")
        .arg(path)
        .output()
        .expect("run nm");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [address, size, kind, name] = fields[..] else {
                return None;
            };
            let size = u64::from_str_radix(size, 16).ok()?;
            let address = u64::from_str_radix(address, 16).ok()?;
            (size > 0 && matches!(kind, "t" | "T")).then(|| (address, size, name.to_owned()))
        })
        .collect()
}

/// Overwrites `.eh_frame` and `.eh_frame_hdr` with zeros.
fn zero_unwind_tables(path: &Path) {
    let mut bytes = std::fs::read(path).expect("read binary");
    let ranges: Vec<(u64, u64)> = {
        let file = object::File::parse(&*bytes).expect("parse");
        file.sections()
            .filter(|s| matches!(s.name(), Ok(".eh_frame" | ".eh_frame_hdr")))
            .filter_map(|s| s.file_range())
            .collect()
    };
    assert!(!ranges.is_empty(), "the build has unwind tables to remove");
    for (offset, size) in ranges {
        bytes[offset as usize..(offset + size) as usize].fill(0);
    }
    std::fs::write(path, bytes).expect("write binary");
}

fn check(flags: &[&str], name: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(built) = common::compile_c_with(dir.path(), name, flags, &[("ops.c", SOURCE)]) else {
        return;
    };
    let truth = truth(&built);
    let stripped = dir.path().join(format!("{name}.stripped"));
    let status = Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(&stripped)
        .arg(&built)
        .status()
        .expect("run strip");
    assert!(status.success());
    zero_unwind_tables(&stripped);
    let listed = common::rea_procedures(&stripped);
    let found: BTreeSet<u64> = listed.iter().map(|(address, _)| *address).collect();
    // `main` has its name back, from `_start`'s call to the C runtime.
    let main = truth
        .iter()
        .find(|(_, _, symbol)| symbol == "main")
        .map(|(address, _, _)| *address)
        .expect("the build has main");
    let named_main: Vec<u64> = listed
        .iter()
        .filter(|(_, name)| name.as_deref() == Some("main"))
        .map(|(address, _)| *address)
        .collect();
    assert_eq!(named_main, [main], "main is named at nm's address");
    // Every function of the program is found, the ones reached only
    // through the table and the cold fragment included...
    let ours = [
        "op_add", "op_sub", "op_mul", "op_div", "fail", "classify", "main",
    ];
    for (address, _, symbol) in &truth {
        let base = symbol.split('.').next().unwrap_or(symbol);
        if ours.contains(&base) {
            assert!(
                found.contains(address),
                "{symbol} at {address:#x} not found: {found:x?}"
            );
        }
    }
    // ...and no start falls inside one of them (switch cases and the code
    // after the noreturn call are not procedures).
    for (address, size, symbol) in &truth {
        let base = symbol.split('.').next().unwrap_or(symbol);
        if !ours.contains(&base) {
            continue;
        }
        let inside: Vec<_> = found.range(address + 1..address + size).collect();
        assert!(inside.is_empty(), "starts inside {symbol}: {inside:x?}");
    }
}

#[test]
fn a_stripped_pie_without_unwind_tables_keeps_every_function() {
    check(&["-O2"], "ops-pie");
}

#[test]
fn a_stripped_static_binary_without_unwind_tables_keeps_the_programs_functions() {
    check(&["-O2", "-static"], "ops-static");
}
