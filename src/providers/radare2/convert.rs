//! radare2 instructions and references to the provider-neutral types: flow,
//! mnemonic and operands, reference kinds, `xrefs_to` and callers. Pure
//! functions, tested on captured radare2 5.7.4 output (`tests.rs`).

use std::collections::BTreeSet;

use super::super::code::{CallSite, DataReference, Flow, Instruction, RefKind, Xref};
use super::json::{OpJson, SectionJson, XrefJson};

/// The loaded sections of the file, to tell data references from numbers.
/// radare2 5.7.4 also reports immediates and structure offsets as `DATA`
/// references (`mov dword [rbx + 0x90], 0xd` refers to `0xd`), so a data
/// reference is kept only when its target lies in a loaded section. With no
/// section table (a raw blob), every reference is kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sections(Vec<(u64, u64)>);

impl Sections {
    pub fn new(sections: &[SectionJson]) -> Sections {
        let mut ranges: Vec<(u64, u64)> = sections
            .iter()
            .filter(|s| {
                s.perm
                    .as_deref()
                    .is_some_and(|p| p.contains(['r', 'w', 'x']))
            })
            .filter_map(|s| {
                let start = s.vaddr?;
                let size = s.vsize.filter(|&v| v > 0)?;
                Some((start, start.saturating_add(size)))
            })
            .collect();
        ranges.sort_unstable();
        Sections(ranges)
    }

    pub fn contains(&self, address: u64) -> bool {
        self.0.is_empty() || self.0.iter().any(|&(s, e)| s <= address && address < e)
    }
}

/// How control leaves an instruction, from radare2's operation type. The
/// `u`/`r`/`i`/`m` variants (`ucall`, `rcall`, `ircall`, `ujmp`, `rjmp`,
/// `irjmp`, `mjmp`, …) go through a register or memory. `cret` (a
/// conditional return, absent on x86 and AArch64) reads as `Return`.
pub(crate) fn flow(op: &OpJson) -> Flow {
    let kind = op.kind.as_deref().unwrap_or("").to_ascii_lowercase();
    match kind.as_str() {
        "ret" | "cret" => Flow::Return,
        "trap" | "ill" | "invalid" => Flow::Stop,
        "call" | "ccall" => match op.jump {
            Some(target) => Flow::Call { target },
            None => Flow::IndirectCall,
        },
        "ucall" | "rcall" | "icall" | "ircall" | "uccall" => Flow::IndirectCall,
        "jmp" => match op.jump {
            Some(target) => Flow::Jump { target },
            None => Flow::IndirectJump,
        },
        "cjmp" => match op.jump {
            Some(target) => Flow::ConditionalJump { target },
            None => Flow::IndirectJump,
        },
        "ujmp" | "rjmp" | "ijmp" | "irjmp" | "mjmp" | "ucjmp" | "rcjmp" | "mcjmp" | "switch" => {
            Flow::IndirectJump
        }
        _ => Flow::Sequential,
    }
}

/// Prefixes that belong to the mnemonic (`rep movsb`, `lock cmpxchg`).
const PREFIXES: [&str; 10] = [
    "rep", "repe", "repz", "repne", "repnz", "lock", "bnd", "notrack", "xacquire", "xrelease",
];

/// Splits radare2's `opcode` text into a lowercase mnemonic (with its
/// prefixes) and the operand text.
pub(crate) fn split_opcode(text: &str) -> (String, String) {
    let lower = text.trim().to_ascii_lowercase();
    let mut rest = lower.as_str();
    let mut mnemonic = String::new();
    loop {
        let (word, tail) = match rest.find(char::is_whitespace) {
            Some(i) => (&rest[..i], rest[i..].trim_start()),
            None => (rest, ""),
        };
        if !mnemonic.is_empty() {
            mnemonic.push(' ');
        }
        mnemonic.push_str(word);
        rest = tail;
        if !PREFIXES.contains(&word) || rest.is_empty() {
            break;
        }
    }
    (mnemonic, rest.to_string())
}

/// Whether a branch mnemonic is conditional (x86 `jcc`/`loop`, AArch64
/// `b.cond`/`cbz`/`tbz`).
fn is_conditional_branch(mnemonic: &str) -> bool {
    let last = mnemonic.rsplit(' ').next().unwrap_or(mnemonic);
    (last.starts_with('j') && last != "jmp")
        || last.starts_with("loop")
        || last.starts_with("b.")
        || matches!(last, "cbz" | "cbnz" | "tbz" | "tbnz")
}

/// The kind of a radare2 reference (`CALL`, `CODE`, `DATA`, `STRING`) made
/// by an instruction with `mnemonic`. `DATA` is refined by the instruction:
/// taking an address (`lea`, `adr`, `adrp`) is `Address`, a writable access
/// (`perm` with `w`) is `Write`, anything else `Read`. `None` for a type
/// radare2 5.7.4 does not document.
pub(crate) fn reference_kind(kind: &str, perm: Option<&str>, mnemonic: &str) -> Option<RefKind> {
    match kind.to_ascii_uppercase().as_str() {
        "CALL" => Some(RefKind::Call),
        "CODE" | "JMP" | "JUMP" => Some(if is_conditional_branch(mnemonic) {
            RefKind::ConditionalJump
        } else {
            RefKind::Jump
        }),
        "DATA" => Some(data_kind(perm, mnemonic)),
        "STRING" => Some(RefKind::Address),
        _ => None,
    }
}

fn data_kind(perm: Option<&str>, mnemonic: &str) -> RefKind {
    let last = mnemonic.rsplit(' ').next().unwrap_or(mnemonic);
    if matches!(last, "lea" | "adr" | "adrp") {
        RefKind::Address
    } else if perm.is_some_and(|p| p.contains('w')) {
        RefKind::Write
    } else {
        RefKind::Read
    }
}

/// The data references (`DATA`, `STRING`) of one instruction, in radare2's
/// order.
fn data_references(op: &OpJson, mnemonic: &str, sections: &Sections) -> Vec<DataReference> {
    op.refs
        .iter()
        .filter(|r| matches!(r.kind.as_deref(), Some("DATA" | "STRING")))
        .filter(|r| r.addr.is_some_and(|a| sections.contains(a)))
        .filter_map(|r| {
            let kind = reference_kind(r.kind.as_deref()?, r.perm.as_deref(), mnemonic)?;
            Some(DataReference {
                target: r.addr?,
                kind,
            })
        })
        .collect()
}

fn decode_hex(hex: &str) -> Vec<u8> {
    let digits = hex.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Vec::new();
    }
    let value = |d: u8| (d as char).to_digit(16);
    digits
        .chunks(2)
        .map(|pair| Some((value(pair[0])? * 16 + value(pair[1])?) as u8))
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_default()
}

/// One instruction with its data references; `None` without an address.
pub(crate) fn instruction(
    op: &OpJson,
    sections: &Sections,
) -> Option<(Instruction, Vec<DataReference>)> {
    let address = op.offset?;
    let (mnemonic, operands) = split_opcode(op.opcode.as_deref().unwrap_or(""));
    let refs = data_references(op, &mnemonic, sections);
    let instruction = Instruction {
        address,
        bytes: decode_hex(op.bytes.as_deref().unwrap_or("")),
        mnemonic,
        operands,
        flow: flow(op),
        data: refs.first().copied(),
    };
    Some((instruction, refs))
}

/// References to one address, as `xrefs_to` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XrefsTo {
    /// In address order of the referring instruction.
    pub xrefs: Vec<Xref>,
    /// True when more than the requested limit existed.
    pub truncated: bool,
    pub limitations: Vec<String>,
}

/// `axtj` items as references to `address`, at most `limit`. A reference
/// type radare2 does not document is reported as `Read`, with a limitation.
pub(crate) fn xrefs_to(address: u64, items: &[XrefJson], limit: usize) -> XrefsTo {
    let mut unknown = BTreeSet::new();
    let mut xrefs: Vec<Xref> = items
        .iter()
        .filter_map(|x| {
            let from = x.from?;
            let (mnemonic, _) = split_opcode(x.opcode.as_deref().unwrap_or(""));
            let kind_name = x.kind.as_deref().unwrap_or("");
            let kind =
                reference_kind(kind_name, x.perm.as_deref(), &mnemonic).unwrap_or_else(|| {
                    unknown.insert(kind_name.to_string());
                    RefKind::Read
                });
            Some(Xref {
                from,
                to: address,
                kind,
            })
        })
        .collect();
    xrefs.sort();
    xrefs.dedup();
    let truncated = xrefs.len() > limit;
    xrefs.truncate(limit);
    let limitations = unknown
        .into_iter()
        .map(|k| format!("radare2 reference type {k:?} is reported as read"))
        .collect();
    XrefsTo {
        xrefs,
        truncated,
        limitations,
    }
}

/// The `CALL` references of `axtj` as call sites of `entry`.
pub(crate) fn callers(entry: u64, items: &[XrefJson]) -> Vec<CallSite> {
    let mut sites: Vec<CallSite> = items
        .iter()
        .filter(|x| {
            x.kind
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case("CALL"))
        })
        .filter_map(|x| {
            Some(CallSite {
                at: x.from?,
                target: entry,
            })
        })
        .collect();
    sites.sort();
    sites.dedup();
    sites
}
