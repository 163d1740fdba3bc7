//! Instructions as relocation-independent text: the mnemonic and the shape
//! of its operands, with every number the dossier identifies as an address
//! replaced by what it stands for.
//!
//! The same code linked at another address differs only in those numbers,
//! so after this it compares equal, while a changed register, immediate or
//! instruction still shows. Abstractions (the dossier says which number is
//! which; nothing is guessed from magnitudes):
//! * a branch target inside the listing → `<i:N>`, the index of the
//!   instruction it reaches, which survives relocation;
//! * a call's target → `<call:NAME>` (`<call>` without a name; who is
//!   called is the `callees` dimension);
//! * a data reference's target, RIP-relative displacement or AArch64
//!   page offset → `<str>` when it is a string, else `<data>`;
//! * an AArch64 `adrp` page of a referenced address → `<page>`;
//! * any other address the dossier names, and the last number of a
//!   branch instruction (its target) → `<addr>` / `<code>`.
//!
//! Immediates that happen to be addresses but that the dossier does not
//! identify as references stay literal; that is a stated limitation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::dossier::Dossier;
use crate::tools::shared::procedures::parse_address;

static HEX: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"0x[0-9a-f]+").ok());
static PC_RELATIVE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\b(rip|eip) [+-] 0x[0-9a-f]+").ok());

/// What the numbers at one instruction may stand for.
#[derive(Default)]
struct Site {
    /// Name of the procedure called here, when it has one.
    callee_name: Option<String>,
    call_targets: Vec<u64>,
    /// `(target, is a string)` of the data references made here.
    data: Vec<(u64, bool)>,
}

/// The normalized text of every instruction of `dossier`, in order.
pub fn normalized(dossier: &Dossier) -> Vec<String> {
    let index: BTreeMap<u64, usize> = dossier
        .instructions
        .iter()
        .enumerate()
        .map(|(i, instruction)| (instruction.address, i))
        .collect();
    let mut sites: BTreeMap<u64, Site> = BTreeMap::new();
    let mut known: BTreeSet<u64> = BTreeSet::new();
    let mut pages: BTreeSet<u64> = BTreeSet::new();
    for callee in &dossier.callees {
        let site = sites.entry(callee.at).or_default();
        site.callee_name.clone_from(&callee.name);
        site.call_targets.push(callee.target);
        site.call_targets.extend(callee.through_stub);
        known.insert(callee.target);
        known.extend(callee.through_stub);
    }
    for reference in dossier.references.iter().flatten() {
        let site = sites.entry(reference.at).or_default();
        site.data
            .push((reference.target, reference.string.is_some()));
        known.insert(reference.target);
        known.extend(reference.string_address);
        pages.insert(reference.target & !0xfff);
    }
    for block in &dossier.blocks {
        known.insert(block.start);
        known.extend(block.successors.iter().map(|(_, target)| *target));
    }
    let context = Context {
        index,
        sites,
        known,
        pages,
    };
    dossier
        .instructions
        .iter()
        .map(|i| context.line(i.address, &i.mnemonic, &i.operands))
        .collect()
}

struct Context {
    index: BTreeMap<u64, usize>,
    sites: BTreeMap<u64, Site>,
    known: BTreeSet<u64>,
    pages: BTreeSet<u64>,
}

impl Context {
    fn line(&self, address: u64, mnemonic: &str, operands: &str) -> String {
        let empty = Site::default();
        let site = self.sites.get(&address).unwrap_or(&empty);
        let data_token = |target: Option<(u64, bool)>| match target {
            Some((_, true)) => "<str>",
            _ => "<data>",
        };
        let mut text = operands.to_owned();
        if !site.data.is_empty()
            && let Some(pc_relative) = PC_RELATIVE.as_ref()
        {
            let token = data_token(site.data.first().copied());
            text = pc_relative
                .replace_all(&text, |c: &Captures<'_>| format!("{} + {token}", &c[1]))
                .into_owned();
        }
        let branch = is_branch(mnemonic);
        let last = HEX
            .as_ref()
            .and_then(|hex| hex.find_iter(&text).last().map(|m| m.start()));
        if let Some(hex) = HEX.as_ref() {
            text = hex
                .replace_all(&text, |c: &Captures<'_>| {
                    let literal = &c[0];
                    let at = c.get(0).map_or(0, |m| m.start());
                    let Some(value) = parse_address(literal) else {
                        return literal.to_owned();
                    };
                    let immediate = at > 0 && text.as_bytes().get(at - 1) == Some(&b'#');
                    self.abstraction(site, value, immediate, branch && Some(at) == last)
                        .unwrap_or_else(|| literal.to_owned())
                })
                .into_owned();
        }
        if text.is_empty() {
            mnemonic.to_owned()
        } else {
            format!("{mnemonic} {text}")
        }
    }

    /// The token a number at this instruction stands for, if it is an address.
    /// `immediate`: an ARM `#` immediate, which may be a page offset.
    fn abstraction(
        &self,
        site: &Site,
        value: u64,
        immediate: bool,
        branch_target: bool,
    ) -> Option<String> {
        if site.call_targets.contains(&value) {
            return Some(match &site.callee_name {
                Some(name) => format!("<call:{name}>"),
                None => "<call>".to_owned(),
            });
        }
        if let Some(&(_, string)) = site
            .data
            .iter()
            .find(|(target, _)| *target == value || (immediate && (target & 0xfff) == value))
        {
            return Some(if string { "<str>" } else { "<data>" }.to_owned());
        }
        if let Some(i) = self.index.get(&value) {
            return Some(format!("<i:{i}>"));
        }
        if self.pages.contains(&value) {
            return Some("<page>".to_owned());
        }
        if self.known.contains(&value) {
            return Some("<addr>".to_owned());
        }
        branch_target.then(|| "<code>".to_owned())
    }
}

/// Direct branches and calls whose last number is their target.
fn is_branch(mnemonic: &str) -> bool {
    mnemonic.starts_with('j')
        || mnemonic.starts_with("call")
        || mnemonic.starts_with("loop")
        || mnemonic.starts_with("b.")
        || matches!(mnemonic, "b" | "bl" | "cbz" | "cbnz" | "tbz" | "tbnz")
}

#[cfg(test)]
mod tests {
    use super::super::dossier::{Block, Callee, Dossier, Instruction, Reference};
    use super::*;

    fn instruction(address: u64, mnemonic: &str, operands: &str) -> Instruction {
        Instruction {
            address,
            mnemonic: mnemonic.into(),
            operands: operands.into(),
        }
    }

    /// A small x86-64 function at `base` whose call, string reference and
    /// loop branch all name addresses that move with `base`; `constant` is
    /// an immediate that does not.
    fn sample(base: u64, constant: u64) -> Dossier {
        let string = base + 0x2000;
        let puts = base - 0x100;
        let displacement = string - (base + 0x7 + 0x7);
        Dossier {
            evidence_id: String::new(),
            document: None,
            procedure: serde_json::Value::Null,
            instructions: vec![
                instruction(base, "mov", &format!("eax, {constant:#x}")),
                instruction(
                    base + 0x7,
                    "lea",
                    &format!("rdi, [rip + {displacement:#x}]"),
                ),
                instruction(base + 0xe, "call", &format!("{:#x}", puts)),
                instruction(base + 0x13, "jne", &format!("{base:#x}")),
                instruction(base + 0x15, "jmp", &format!("{:#x}", base + 0x9999)),
                instruction(base + 0x1a, "ret", ""),
            ],
            blocks: vec![Block {
                start: base,
                instruction_count: 6,
                successors: vec![],
            }],
            callees: vec![Callee {
                at: base + 0xe,
                target: puts,
                name: Some("puts".into()),
                through_stub: None,
            }],
            references: Some(vec![Reference {
                at: base + 0x7,
                target: string,
                kind: "address".into(),
                string: Some("hello".into()),
                string_address: Some(string),
            }]),
            truncated: false,
        }
    }

    #[test]
    fn relocation_is_abstracted_and_real_changes_remain() {
        let here = normalized(&sample(0x401000, 0x2a));
        assert_eq!(
            here,
            [
                "mov eax, 0x2a",
                "lea rdi, [rip + <str>]",
                "call <call:puts>",
                "jne <i:0>",
                "jmp <code>",
                "ret",
            ]
        );
        assert_eq!(normalized(&sample(0x555000, 0x2a)), here);
        assert_ne!(normalized(&sample(0x401000, 0x2b)), here);
    }

    #[test]
    fn arm64_pages_and_page_offsets_are_abstracted() {
        let target = 0x10_0000_3f28u64;
        let dossier = Dossier {
            instructions: vec![
                instruction(0x1_0000_0000, "adrp", "x0, 0x1000003000"),
                instruction(0x1_0000_0004, "add", "x0, x0, #0xf28"),
                instruction(0x1_0000_0008, "add", "x0, x0, #0xf28"),
            ],
            references: Some(vec![Reference {
                at: 0x1_0000_0004,
                target,
                kind: "address".into(),
                string: None,
                string_address: None,
            }]),
            ..sample(0x1_0000_0000, 0)
        };
        let lines = normalized(&Dossier {
            callees: vec![],
            blocks: vec![],
            ..dossier
        });
        // Only the paired `add` carries the reference; the other keeps its immediate.
        assert_eq!(
            lines,
            [
                "adrp x0, <page>",
                "add x0, x0, #<data>",
                "add x0, x0, #0xf28"
            ]
        );
    }
}
