//! Agreement with `llvm-objdump` (see `oracle.rs` for the comparison):
//! compiled C on x86_64 and i386, Go code on x86_64 and AArch64, and a
//! clang-built Mach-O on AArch64.
//!
//! Every rule below names one spelling difference between iced-x86 or
//! yaxpeax-arm and LLVM 14 and checks that both sides still mean the same
//! operands; anything else is an unexplained difference and fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object as _, ObjectSection as _};

use super::super::fixtures::{fixture, skip_or_fail, tool_available};
use super::oracle::{Line, Report, Syntax};
use crate::providers::code::Arch;

// ------------------------------------------------------------ x86 rules

const X86_PREFIXES: &[&str] = &[
    "lock", "rep", "repne", "data16", "addr32", "notrack", "cs", "ds", "es", "ss", "fs", "gs",
    "xacquire", "xrelease", "bnd",
];

const X86_64: Syntax = Syntax {
    arch: Arch::X86_64,
    comment: "#",
    prefixes: X86_PREFIXES,
    explain: explain_x86,
};

const I386: Syntax = Syntax {
    arch: Arch::X86,
    ..X86_64
};

/// Intel syntax for every x86 listing.
const X86_ARGS: &[&str] = &["--x86-asm-syntax=intel"];

fn explain_x86(ours: &Line, theirs: &Line) -> Option<&'static str> {
    if ours.mnemonic != theirs.mnemonic {
        return None;
    }
    let operands = (ours.operands.as_str(), theirs.operands.as_str());
    if implicit_shift_count(&ours.mnemonic, operands) {
        Some("shift or rotate by one: llvm-objdump leaves the implicit 1 out")
    } else if short_imul(&ours.mnemonic, operands) {
        Some("imul r, r, imm: iced prints `imul r, imm`")
    } else if is_string_instruction(ours) {
        Some("string instruction: iced leaves implicit es: and accumulator operands out")
    } else if implicit_x87_operands(&ours.mnemonic, operands) {
        Some(
            "x87: iced names the implicit st, llvm-objdump the implicit st(1), st of faddp-like pops",
        )
    } else if same_absolute_displacement(operands) {
        Some("absolute displacement: iced prints it unsigned, llvm-objdump sign-extended")
    } else {
        None
    }
}

/// `shr rax, 0x1` (ours) against `shr rax` (llvm).
fn implicit_shift_count(mnemonic: &str, (ours, theirs): (&str, &str)) -> bool {
    const SHIFTS: [&str; 8] = ["rol", "ror", "rcl", "rcr", "shl", "sal", "shr", "sar"];
    SHIFTS.contains(&mnemonic) && ours == format!("{theirs}, 0x1")
}

/// `imul rbx, 0x1a935` (ours) against `imul rbx, rbx, 0x1a935` (llvm).
fn short_imul(mnemonic: &str, (ours, theirs): (&str, &str)) -> bool {
    let Some((register, immediate)) = ours.split_once(", ") else {
        return false;
    };
    mnemonic == "imul" && theirs == format!("{register}, {register}, {immediate}")
}

/// `fld st, qword ptr [eax]` (ours) against `fld qword ptr [eax]`, and
/// `faddp` (ours) against `faddp st(0x1), st` (llvm).
fn implicit_x87_operands(mnemonic: &str, (ours, theirs): (&str, &str)) -> bool {
    let without_st = ours
        .strip_prefix("st, ")
        .or_else(|| ours.strip_suffix(", st"));
    mnemonic.starts_with('f')
        && (without_st == Some(theirs) || (ours.is_empty() && theirs == "st(0x1), st"))
}

/// `rep stosq qword ptr [rdi]` and friends; llvm adds `es:` and `rax`.
fn is_string_instruction(line: &Line) -> bool {
    const REPEATS: [&str; 5] = ["rep", "repe", "repz", "repne", "repnz"];
    const STRINGS: [&str; 7] = ["movs", "stos", "lods", "scas", "cmps", "ins", "outs"];
    let word = if REPEATS.contains(&line.mnemonic.as_str()) {
        line.operands.split(' ').next().unwrap_or_default()
    } else {
        line.mnemonic.as_str()
    };
    STRINGS.iter().any(|string| {
        word.strip_prefix(string)
            .is_some_and(|suffix| ["b", "w", "d", "q"].contains(&suffix))
    })
}

/// `fs:[0xfffffffffffffff8]` (ours) against `fs:[-0x8]` (llvm): the same
/// text around one bracketed number with the same 64-bit value.
fn same_absolute_displacement((ours, theirs): (&str, &str)) -> bool {
    let bracketed = |text: &str| {
        let (head, rest) = text.split_once('[')?;
        let (number, tail) = rest.split_once(']')?;
        Some((head.to_owned(), signed_value(number)?, tail.to_owned()))
    };
    matches!((bracketed(ours), bracketed(theirs)), (Some(a), Some(b)) if a == b)
}

/// `0x10` or `-0x10` as a 64-bit two's-complement value.
fn signed_value(text: &str) -> Option<u64> {
    match text.strip_prefix('-') {
        Some(magnitude) => signed_value(magnitude).map(u64::wrapping_neg),
        None => u64::from_str_radix(text.strip_prefix("0x")?, 16).ok(),
    }
}

// ------------------------------------------------------------ AArch64 rules

const AARCH64: Syntax = Syntax {
    arch: Arch::Aarch64,
    comment: "//",
    prefixes: &[],
    explain: explain_arm64,
};

/// For the Mach-O, whose mnemonics must all match exactly.
const AARCH64_SAME_MNEMONICS: Syntax = Syntax {
    explain: explain_arm64_operands,
    ..AARCH64
};

/// LLVM 14 only decodes extensions it is told about: LSE atomics, crypto
/// and the v8.5 system registers all occur in Go's runtime.
const AARCH64_ARGS: &[&str] = &["--mattr=+v8.5a,+aes,+sha2,+sha3,+sm4"];

fn explain_arm64(ours: &Line, theirs: &Line) -> Option<&'static str> {
    let system = ["dc", "ic", "at", "tlbi"];
    if ours.mnemonic == "sys"
        && system.contains(&theirs.mnemonic.as_str())
        && last_operand(&ours.operands) == last_operand(&theirs.operands)
    {
        return Some("sys: yaxpeax has no dc/ic/at/tlbi aliases");
    }
    explain_arm64_operands(ours, theirs)
}

/// Rules for lines whose mnemonics are equal.
fn explain_arm64_operands(ours: &Line, theirs: &Line) -> Option<&'static str> {
    if ours.mnemonic != theirs.mnemonic {
        return None;
    }
    let operands = (ours.operands.as_str(), theirs.operands.as_str());
    match ours.mnemonic.as_str() {
        "adr" if adr_target(ours, theirs) => {
            Some("adr: LLVM 14 prints the offset, we print the address")
        }
        "mov" if same_immediate(operands) => {
            Some("mov immediate: yaxpeax prints it unsigned, llvm-objdump signed")
        }
        "fmov" if same_float(operands) => Some("fmov immediate: float spelled with fewer digits"),
        "mrs" | "msr" if system_register_by_encoding(operands) => {
            Some("mrs/msr: yaxpeax spells most system registers by encoding")
        }
        _ => None,
    }
}

fn last_operand(operands: &str) -> &str {
    operands.rsplit(", ").next().unwrap_or_default()
}

/// `adr x8, 0x970c0` (ours, at 0x970bc) against `adr x8, #0x4` (llvm).
fn adr_target(ours: &Line, theirs: &Line) -> bool {
    let (Some((register, target)), Some((their_register, offset))) = (
        ours.operands.split_once(", "),
        theirs.operands.split_once(", #"),
    ) else {
        return false;
    };
    register == their_register
        && signed_value(target)
            .zip(signed_value(offset))
            .is_some_and(|(target, offset)| target == ours.address.wrapping_add(offset))
}

/// `x2, #0xffffffffffffffff` (ours) against `x2, #-0x1` (llvm): equal
/// modulo the register width.
fn same_immediate((ours, theirs): (&str, &str)) -> bool {
    let parse = |text: &str| {
        let (register, immediate) = text.split_once(", #")?;
        Some((register.to_owned(), signed_value(immediate)?))
    };
    let (Some((register, mine)), Some((their_register, value))) = (parse(ours), parse(theirs))
    else {
        return false;
    };
    let mask = if register.starts_with('w') {
        u64::from(u32::MAX)
    } else {
        u64::MAX
    };
    register == their_register && mine & mask == value & mask
}

/// `d1, #1.0` (ours) against `d1, #1.00000000` (llvm).
fn same_float((ours, theirs): (&str, &str)) -> bool {
    let parse = |text: &str| {
        let (register, value) = text.split_once(", #")?;
        Some((register.to_owned(), value.parse::<f64>().ok()?))
    };
    matches!((parse(ours), parse(theirs)), (Some(a), Some(b)) if a == b)
}

/// `x0, s3_3_c4_c2_5` (ours) against `x0, dit` (llvm): the operands
/// differ only where ours is a generic `s<op0>_<op1>_c<n>_c<m>_<op2>` or
/// `pstate.<n>` name.
fn system_register_by_encoding((ours, theirs): (&str, &str)) -> bool {
    let generic = |name: &str| {
        name.starts_with("pstate.")
            || (name.starts_with('s') && name.split('_').count() == 5 && name.contains("_c"))
    };
    let (mine, their): (Vec<&str>, Vec<&str>) =
        (ours.split(", ").collect(), theirs.split(", ").collect());
    mine.len() == their.len()
        && mine
            .iter()
            .zip(&their)
            .all(|(mine, their)| mine == their || generic(mine))
}

// ------------------------------------------------------------ compiled C

/// Three functions covering loops, a jump table, globals, strings, calls,
/// SSE arithmetic, inlined string stores and a trap. No headers, so that
/// a compiler without libc headers for `-m32` still builds it.
const C_SOURCE: &str = r#"
struct item { const char *name; long value; };
static struct item table[8] = {{"a", 1}, {"b", 2}, {"c", 3}};
long counter;
double scale = 1.5;

long sum_table(int n) {
    long total = 0;
    for (int i = 0; i < n && i < 8; i++)
        total += table[i].value * (long)scale + (long)table[i].name[0];
    counter += total;
    return total;
}

const char *classify(int code) {
    switch (code) {
    case 0: return "zero";
    case 1: return "one";
    case 2: return "two";
    case 3: return "three";
    case 4: return "four";
    case 5: return "five";
    case 6: return "six";
    default: return code < 0 ? "negative" : "many";
    }
}

void fill(char *dst, const char *src, unsigned n, double *out) {
    __builtin_memcpy(dst, src, n);
    __builtin_memset(dst + n, 0, 64);
    for (unsigned i = 0; i < n; i++)
        out[i] = out[i] * scale + (double)dst[i];
    if (n > 1000)
        __builtin_trap();
}
"#;

const C_FUNCTIONS: [&str; 3] = ["sum_table", "classify", "fill"];

/// Compiles [`C_SOURCE`] with `cc -O1 -c` and `flags` into `dir`, or
/// `None` (after [`skip_or_fail`]) when the compiler cannot.
fn compile(dir: &Path, flags: &[&str]) -> Option<PathBuf> {
    let source = dir.join("oracle.c");
    let object_path = dir.join("oracle.o");
    std::fs::write(&source, C_SOURCE).expect("write the C source");
    let output = Command::new("cc")
        .args(["-O1", "-c"])
        .args(flags)
        .arg("-o")
        .arg(&object_path)
        .arg(&source)
        .output()
        .expect("run cc");
    if output.status.success() {
        return Some(object_path);
    }
    skip_or_fail(&format!(
        "cc {flags:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    ));
    None
}

fn tools_available() -> bool {
    let available = tool_available("cc") && tool_available("llvm-objdump");
    if !available {
        skip_or_fail("cc or llvm-objdump is not installed");
    }
    available
}

#[test]
fn x86_64_object_matches_llvm_objdump() {
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let Some(object_path) = compile(dir.path(), &[]) else {
        return;
    };
    let mut report = Report::default();
    report.add_symbols(&object_path, &C_FUNCTIONS, &X86_64, X86_ARGS);
    report.assert_agrees("x86_64 object", 60);
}

#[test]
fn i386_object_matches_llvm_objdump() {
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    // Without PIC, globals are absolute 32-bit addresses.
    let Some(object_path) = compile(dir.path(), &["-m32", "-fno-pic"]) else {
        return;
    };
    let mut report = Report::default();
    report.add_symbols(&object_path, &C_FUNCTIONS, &I386, X86_ARGS);
    report.assert_agrees("i386 object", 60);
}

// ------------------------------------------------------------ real binaries

/// How much of a Go `.text` to compare: enough for AVX-512 (x86_64) and
/// LSE/crypto (AArch64) code, quick in a debug build.
const GO_TEXT_BYTES: u64 = 256 * 1024;

/// Address of the named section.
fn section_start(path: &Path, name: &str) -> u64 {
    let data = std::fs::read(path).expect("read the fixture");
    let file = object::File::parse(&*data).expect("parse the fixture");
    let section = file
        .section_by_name(name)
        .unwrap_or_else(|| panic!("no section {name}"));
    section.address()
}

#[test]
fn x86_64_go_text_matches_llvm_objdump() {
    if !tools_available() {
        return;
    }
    let Some(path) = fixture("esbuild-linux-x64") else {
        return;
    };
    let start = section_start(&path, ".text");
    let mut report = Report::default();
    report.add_range(&path, start..start + GO_TEXT_BYTES, &X86_64, X86_ARGS);
    report.assert_agrees("esbuild-linux-x64 .text", 50_000);
}

#[test]
fn arm64_go_text_matches_llvm_objdump() {
    if !tools_available() {
        return;
    }
    let Some(path) = fixture("esbuild-linux-arm64") else {
        return;
    };
    let start = section_start(&path, ".text");
    let mut report = Report::default();
    report.add_range(&path, start..start + GO_TEXT_BYTES, &AARCH64, AARCH64_ARGS);
    report.assert_agrees("esbuild-linux-arm64 .text", 60_000);
}

/// The whole `__text` of a clang-built Mach-O: every mnemonic must match.
/// llvm-objdump prints Mach-O arm64 in Apple's syntax (`movi.2d v0`),
/// also with `--macho`; `--triple=aarch64` selects the generic printer
/// the other listings use.
#[test]
fn arm64_macho_text_matches_llvm_objdump() {
    if !tools_available() {
        return;
    }
    let Some(path) = fixture("watcher-darwin-arm64.node") else {
        return;
    };
    let data = std::fs::read(&path).expect("read the fixture");
    let file = object::File::parse(&*data).expect("parse the fixture");
    let text = file.section_by_name("__text").expect("a __text section");
    let range = text.address()..text.address() + text.size();
    let args = [&["--triple=aarch64"], AARCH64_ARGS].concat();
    let mut report = Report::default();
    report.add_range(&path, range, &AARCH64_SAME_MNEMONICS, &args);
    report.assert_agrees("watcher-darwin-arm64 __text", 50_000);
}
