//! The llvm-objdump oracle: parsing its listings, normalizing text on
//! both sides, and comparing listings in lockstep.
//!
//! A comparison walks our [`disassemble`] output and the oracle's listing
//! together: addresses must be equal for every instruction, mnemonics and
//! operands equal after [`normalize`], except for differences that an
//! explicit, named rule of the architecture explains (see
//! `oracle_tests.rs`). Each such difference is counted per rule; an
//! unexplained one fails the test.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

use super::super::fixtures::run;
use super::{BAD_MNEMONIC, disassemble};
use crate::providers::code::{Arch, Instruction};

// ------------------------------------------------------------ the oracle

/// One instruction as llvm-objdump prints it, already normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Line {
    pub(super) address: u64,
    pub(super) mnemonic: String,
    pub(super) operands: String,
}

/// Instruction lines of `llvm-objdump -d --no-show-raw-insn` output
/// (`  401000:  mov  rax, rbx`); headers, labels and `...` are skipped,
/// and an undecodable `<unknown>` word is objdump's `(bad)`.
/// llvm-objdump prints an x86 prefix such as `lock` on a line of its own;
/// it is joined with the instruction it prefixes, which is how we print
/// it.
pub(super) fn parse_objdump(listing: &str, syntax: &Syntax) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut prefix: Option<Line> = None;
    for line in listing.lines() {
        let Some((address, text)) = line.split_once(':') else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(address.trim(), 16) else {
            continue;
        };
        if !line.starts_with(' ') {
            continue; // `0000000000001000 <symbol>:` headers
        }
        let parsed = if text.trim() == "<unknown>" {
            split(address, BAD_MNEMONIC, syntax.comment)
        } else {
            split(address, text, syntax.comment)
        };
        if let Some(first) = prefix.take() {
            let joined = format!("{} {} {}", first.mnemonic, parsed.mnemonic, parsed.operands);
            lines.push(split(first.address, &joined, syntax.comment));
        } else if parsed.operands.is_empty() && syntax.prefixes.contains(&parsed.mnemonic.as_str())
        {
            prefix = Some(parsed);
        } else {
            lines.push(parsed);
        }
    }
    lines.extend(prefix);
    lines
}

/// An instruction of ours, normalized like the oracle's lines.
pub(super) fn ours_line(instruction: &Instruction, comment: &str) -> Line {
    let text = format!("{} {}", instruction.mnemonic, instruction.operands);
    split(instruction.address, &text, comment)
}

fn split(address: u64, text: &str, comment: &str) -> Line {
    let text = normalize(text, comment);
    let (mnemonic, operands) = text.split_once(' ').unwrap_or((&text, ""));
    Line {
        address,
        mnemonic: mnemonic.to_owned(),
        operands: operands.to_owned(),
    }
}

/// Canonical text for comparison: the comment (from `comment`, `#` for
/// x86 and `//` for AArch64) and symbolic `<sym+0x10>` annotations
/// dropped, lowercase, whitespace collapsed to single spaces (none inside
/// AArch64 register lists `{v0.2d, v1.2d}` or before an AVX-512 mask
/// `{k1}{z}`), and every integer that is not part of a name (`r8`, `x29`,
/// `v0.16b`) spelled as lowercase `0x` hex, with its attached sign kept
/// (`#-8` → `#-0x8`).
fn normalize(text: &str, comment: &str) -> String {
    let text = text.split(comment).next().unwrap_or_default();
    let mut plain = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => plain.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    let collapsed = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    let braces = collapsed
        .replace("{ ", "{")
        .replace(" }", "}")
        .replace(" {k", "{k")
        .replace(" {z", "{z");
    hex_numbers(&braces)
}

/// Rewrites standalone integers (decimal or `0x` hex) as `0x` hex;
/// digits inside names and floating-point numbers stay as they are.
fn hex_numbers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let (mut copied, mut index) = (0, 0);
    while index < bytes.len() {
        let standalone = index == 0 || !is_name_byte(bytes[index - 1]);
        if !(bytes[index].is_ascii_digit() && standalone) {
            index += 1;
            continue;
        }
        out.push_str(&text[copied..index]);
        let (length, value) = integer_at(&text[index..]);
        match value {
            Some(value) => out.push_str(&format!("{value:#x}")),
            None => out.push_str(&text[index..index + length]),
        }
        index += length;
        copied = index;
    }
    out.push_str(&text[copied..]);
    out
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.'
}

/// Length of the number token at the start of `text`, and its value when
/// it is an integer that fits in 64 bits.
fn integer_at(text: &str) -> (usize, Option<u64>) {
    let length = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .unwrap_or(text.len());
    let token = &text[..length];
    let value = match token.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => token.parse::<u64>().ok(),
    };
    (length, value)
}

// ------------------------------------------------------------ comparison

/// Outcome of lockstep comparisons.
#[derive(Debug, Default)]
pub(super) struct Report {
    compared: usize,
    exact: usize,
    /// Differences explained by a named rule, counted per rule.
    explained: BTreeMap<&'static str, usize>,
    unexplained: Vec<String>,
}

/// How to read one architecture's listings.
pub(super) struct Syntax {
    pub(super) arch: Arch,
    /// Where a comment starts in llvm-objdump's text.
    pub(super) comment: &'static str,
    /// Prefixes llvm-objdump prints on a line of their own.
    pub(super) prefixes: &'static [&'static str],
    /// Names the rule that explains a difference between our line and the
    /// oracle's, or `None`.
    pub(super) explain: fn(&Line, &Line) -> Option<&'static str>,
}

impl Report {
    /// Compares `ours_all` with `oracle` in lockstep and adds the outcome.
    fn add(&mut self, ours_all: &[Instruction], oracle: &[Line], syntax: &Syntax) {
        assert_eq!(
            ours_all.len(),
            oracle.len(),
            "instruction counts differ from {:?}",
            oracle.first()
        );
        for (instruction, theirs) in ours_all.iter().zip(oracle) {
            let mine = ours_line(instruction, syntax.comment);
            self.compared += 1;
            assert_eq!(mine.address, theirs.address, "{mine:?} vs {theirs:?}");
            if mine == *theirs {
                self.exact += 1;
            } else if let Some(rule) = (syntax.explain)(&mine, theirs) {
                *self.explained.entry(rule).or_default() += 1;
            } else {
                self.unexplained.push(format!(
                    "{:#x}: ours `{} {}` vs llvm-objdump `{} {}`",
                    mine.address, mine.mnemonic, mine.operands, theirs.mnemonic, theirs.operands
                ));
            }
        }
    }

    /// Fails unless at least `minimum` instructions were compared and
    /// every difference was explained.
    pub(super) fn assert_agrees(&self, what: &str, minimum: usize) {
        eprintln!("{what}: {self:?}");
        assert!(
            self.compared >= minimum,
            "{what}: compared only {} instructions",
            self.compared
        );
        assert!(
            self.unexplained.is_empty(),
            "{what}: {} unexplained differences:\n{}",
            self.unexplained.len(),
            self.unexplained.join("\n")
        );
    }

    /// Compares the named function symbols of the binary at `path`.
    pub(super) fn add_symbols(
        &mut self,
        path: &Path,
        names: &[&str],
        syntax: &Syntax,
        args: &[&str],
    ) {
        let data = std::fs::read(path).expect("read the binary");
        let file = object::File::parse(&*data).expect("parse the binary");
        for name in names {
            let (address, bytes) = symbol_bytes(&file, name);
            let ours_all = disassemble(syntax.arch, bytes, address, usize::MAX);
            let symbols = format!("--disassemble-symbols={name}");
            let listing = objdump(path, &[args, &[symbols.as_str()]].concat());
            self.add(&ours_all, &parse_objdump(&listing, syntax), syntax);
        }
    }

    /// Compares the instructions of `[start, stop)` in the binary at
    /// `path` that start at least one maximal instruction before `stop`:
    /// our bytes end at `stop`, while llvm-objdump decodes the last
    /// instruction across it.
    pub(super) fn add_range(
        &mut self,
        path: &Path,
        range: Range<u64>,
        syntax: &Syntax,
        args: &[&str],
    ) {
        let data = std::fs::read(path).expect("read the binary");
        let file = object::File::parse(&*data).expect("parse the binary");
        let bytes = range_bytes(&file, range.clone());
        let limit = range.end - syntax.arch.max_instruction_len() as u64;
        let ours_all: Vec<Instruction> = disassemble(syntax.arch, bytes, range.start, usize::MAX)
            .into_iter()
            .filter(|instruction| instruction.address < limit)
            .collect();
        let (start, stop) = (
            format!("--start-address={:#x}", range.start),
            format!("--stop-address={:#x}", range.end),
        );
        let listing = objdump(
            path,
            &[args, &["-z", start.as_str(), stop.as_str()]].concat(),
        );
        let mut oracle = parse_objdump(&listing, syntax);
        oracle.retain(|line| line.address < limit);
        self.add(&ours_all, &oracle, syntax);
    }
}

/// `llvm-objdump -d --no-show-raw-insn` with `args` on `path`.
fn objdump(path: &Path, args: &[&str]) -> String {
    let mut all = vec!["-d", "--no-show-raw-insn"];
    all.extend_from_slice(args);
    all.push(path.to_str().expect("UTF-8 path"));
    run("llvm-objdump", &all)
}

/// Address and bytes of the named symbol, its extent taken from the
/// symbol size or, where the format records none (Mach-O), from the next
/// symbol in the same section.
fn symbol_bytes<'a>(file: &object::File<'a>, name: &str) -> (u64, &'a [u8]) {
    let symbol = file
        .symbols()
        .find(|symbol| symbol.name() == Ok(name))
        .unwrap_or_else(|| panic!("no symbol {name}"));
    let index = symbol.section_index().expect("a defined symbol");
    let section = file.section_by_index(index).expect("its section");
    let start = symbol.address();
    let end = if symbol.size() > 0 {
        start + symbol.size()
    } else {
        file.symbols()
            .filter(|other| other.section_index() == Some(index) && other.address() > start)
            .map(|other| other.address())
            .min()
            .unwrap_or(section.address() + section.size())
    };
    (start, range_bytes(file, start..end))
}

/// Bytes of the section holding `range`, by virtual address.
fn range_bytes<'a>(file: &object::File<'a>, range: Range<u64>) -> &'a [u8] {
    let section = file
        .sections()
        .find(|section| {
            section.address() <= range.start && range.end <= section.address() + section.size()
        })
        .expect("a section holds the range");
    let data = section.data().expect("section data");
    let offset = (range.start - section.address()) as usize;
    &data[offset..offset + (range.end - range.start) as usize]
}
