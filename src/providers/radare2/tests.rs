//! The JSON-to-neutral-types rules on output captured from radare2 5.7.4
//! (r2libr) on `watcher-linux-x64.node` (see `testdata/`), and the session's
//! failure handling against a scripted stand-in for `r2 -q0`.

use super::super::Source;
use super::super::code::{CallSite, Edge, EdgeKind, Flow, RefKind, UnresolvedKind, Xref};
use super::convert::{self, Sections};
use super::json::{
    BlockJson, FunctionJson, OpJson, SectionJson, SymbolJson, VersionJson, XrefJson, parse_list,
    parse_object,
};
use super::{dossier, inventory};

macro_rules! testdata {
    ($name:literal) => {
        include_str!(concat!("testdata/", $name))
    };
}

fn list<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    parse_list("test", text).unwrap()
}

fn sections() -> Sections {
    Sections::new(&list::<SectionJson>(testdata!("sections_iSj.json")))
}

/// `pdj COUNT @ START` answered from a captured linear listing.
fn fetch_from(ops: &[OpJson]) -> impl FnMut(usize, u64) -> Result<Vec<OpJson>, ()> + '_ {
    move |count, start| {
        Ok(ops
            .iter()
            .filter(|o| o.offset.is_some_and(|a| a >= start))
            .take(count)
            .cloned()
            .collect())
    }
}

#[test]
fn version_is_read_from_question_vj() {
    let v: VersionJson = parse_object("?Vj", testdata!("version.json")).unwrap();
    assert_eq!(v.version.as_deref(), Some("5.7.4"));
}

#[test]
fn inventory_keeps_radare2_names_and_raw_symbols() {
    let functions: Vec<FunctionJson> = list(testdata!("aflj.json"));
    let symbols: Vec<SymbolJson> = list(testdata!("isj.json"));
    let inventory = inventory::inventory(functions.clone(), &symbols, 100);
    assert!(!inventory.truncated);
    let addresses: Vec<u64> = inventory.procedures.iter().map(|p| p.address).collect();
    assert_eq!(
        addresses,
        [0x1db90, 0x1e670, 0x1ed60, 0x38330, 0x3c2b0, 0x3edb0]
    );
    let at = |a: u64| {
        inventory
            .procedures
            .iter()
            .find(|p| p.address == a)
            .unwrap()
    };
    for p in &inventory.procedures {
        assert_eq!(p.sources.iter().collect::<Vec<_>>(), [Source::Radare2]);
    }
    // A symbol-table function: radare2's name, realsz (not the 108301-byte
    // min..max bound span), and the raw symbol as an alias.
    let unref = at(0x38330);
    assert_eq!(unref.name.as_deref(), Some("sym._ZN7Watcher5unrefEv"));
    assert_eq!(unref.size, Some(28));
    assert_eq!(unref.aliases, ["_ZN7Watcher5unrefEv"]);
    assert_eq!(
        super::symbol_name(unref.name.as_deref().unwrap()),
        Some("_ZN7Watcher5unrefEv")
    );
    // A long name radare2 cut: the whole raw symbol survives as an alias.
    let long = at(0x3c2b0);
    let name = long.name.as_deref().unwrap();
    let raw = super::symbol_name(name).unwrap();
    assert_eq!(long.aliases.len(), 1);
    assert!(long.aliases[0].starts_with(raw) && long.aliases[0].len() > raw.len());
    assert!(long.aliases[0].ends_with("_M_find_before_nodeEmRKS2_m"));
    // Imports and radare2's own names carry no symbol.
    assert_eq!(at(0x1db90).name.as_deref(), Some("sym.imp.memcpy"));
    assert!(at(0x1db90).aliases.is_empty());
    assert_eq!(at(0x1e670).name.as_deref(), Some("fcn.0001e670"));
    assert_eq!(at(0x1ed60).name.as_deref(), Some("entry0"));

    // Duplicates merge by address; the cap keeps the lowest addresses.
    let mut twice = functions.clone();
    twice.extend(functions.iter().cloned().map(|mut f| {
        f.name = f.name.map(|n| format!("{n}.again"));
        f
    }));
    let merged = inventory::inventory(twice, &symbols, 2);
    assert!(merged.truncated);
    assert_eq!(merged.procedures.len(), 2);
    assert_eq!(merged.procedures[0].aliases, ["sym.imp.memcpy.again"]);
}

#[test]
fn non_utf8_names_are_counted_not_reported() {
    let functions: Vec<FunctionJson> =
        list("[{\"offset\": 16, \"name\": \"sym.bad\u{fffd}\", \"realsz\": 4}]");
    let inventory = inventory::inventory(functions, &[], 10);
    assert_eq!(inventory.non_utf8_names, 1);
    assert_eq!(inventory.procedures[0].name, None);
}

#[test]
fn operation_types_map_to_flow() {
    let op = |kind: &str, jump: Option<u64>| OpJson {
        kind: Some(kind.to_string()),
        jump,
        ..OpJson::default()
    };
    let cases = [
        (op("call", Some(0x10)), Flow::Call { target: 0x10 }),
        (op("call", None), Flow::IndirectCall),
        (op("ucall", None), Flow::IndirectCall),
        (op("rcall", None), Flow::IndirectCall),
        (op("ircall", Some(0x10)), Flow::IndirectCall),
        (op("jmp", Some(0x20)), Flow::Jump { target: 0x20 }),
        (op("jmp", None), Flow::IndirectJump),
        (
            op("cjmp", Some(0x30)),
            Flow::ConditionalJump { target: 0x30 },
        ),
        (op("ujmp", None), Flow::IndirectJump),
        (op("rjmp", None), Flow::IndirectJump),
        (op("irjmp", None), Flow::IndirectJump),
        (op("mjmp", None), Flow::IndirectJump),
        (op("ret", None), Flow::Return),
        (op("cret", None), Flow::Return),
        (op("trap", None), Flow::Stop),
        (op("ill", None), Flow::Stop),
        (op("mov", Some(0x40)), Flow::Sequential),
        (op("null", None), Flow::Sequential),
        (op("something-new", None), Flow::Sequential),
        (OpJson::default(), Flow::Sequential),
    ];
    for (op, expected) in cases {
        assert_eq!(convert::flow(&op), expected, "{:?}", op.kind);
    }
    // The same on captured instructions: a cjmp, a call, a tail jmp, a ret.
    let ops: Vec<OpJson> = list(testdata!("pdj_dirtree_write.json"));
    let flow_at = |a: u64| convert::flow(ops.iter().find(|o| o.offset == Some(a)).unwrap());
    assert_eq!(flow_at(0x3edcd), Flow::ConditionalJump { target: 0x3eddf });
    assert_eq!(flow_at(0x3edd6), Flow::Call { target: 0x1e570 });
    assert_eq!(flow_at(0x3ee2a), Flow::Jump { target: 0x1dac0 });
    assert_eq!(flow_at(0x3ee3a), Flow::Return);
    let switch: Vec<OpJson> = list(testdata!("pdj_switch_dispatch.json"));
    assert_eq!(convert::flow(switch.last().unwrap()), Flow::IndirectJump);
}

#[test]
fn opcode_text_splits_into_mnemonic_and_operands() {
    let split = |s: &str| convert::split_opcode(s);
    assert_eq!(
        split("mov rax, qword [rdi + 0x178]"),
        ("mov".into(), "rax, qword [rdi + 0x178]".into())
    );
    assert_eq!(split("ret"), ("ret".into(), String::new()));
    assert_eq!(
        split("rep movsb byte [rdi], byte [rsi]"),
        ("rep movsb".into(), "byte [rdi], byte [rsi]".into())
    );
    assert_eq!(
        split("LOCK CMPXCHG qword [rdx], rcx"),
        ("lock cmpxchg".into(), "qword [rdx], rcx".into())
    );
    assert_eq!(split("  "), (String::new(), String::new()));
    assert_eq!(split("rep"), ("rep".into(), String::new()));
}

#[test]
fn reference_types_map_to_kinds() {
    let kind = convert::reference_kind;
    assert_eq!(kind("CALL", Some("--x"), "call"), Some(RefKind::Call));
    assert_eq!(kind("CODE", Some("--x"), "jmp"), Some(RefKind::Jump));
    assert_eq!(kind("CODE", None, "jne"), Some(RefKind::ConditionalJump));
    assert_eq!(kind("CODE", None, "b.eq"), Some(RefKind::ConditionalJump));
    assert_eq!(kind("CODE", None, "cbz"), Some(RefKind::ConditionalJump));
    assert_eq!(kind("DATA", Some("r--"), "mov"), Some(RefKind::Read));
    assert_eq!(kind("DATA", Some("-w-"), "mov"), Some(RefKind::Write));
    assert_eq!(kind("DATA", Some("r--"), "lea"), Some(RefKind::Address));
    assert_eq!(kind("DATA", None, "adrp"), Some(RefKind::Address));
    assert_eq!(kind("STRING", Some("r--"), "mov"), Some(RefKind::Address));
    assert_eq!(kind("ICOD", None, "mov"), None);
}

#[test]
fn dossier_of_a_captured_function() {
    let blocks: Vec<BlockJson> = list(testdata!("afbj_dirtree_write.json"));
    let linear: Vec<OpJson> = list(testdata!("pdj_dirtree_write.json"));
    let entry = 0x3edb0;
    let (ops, truncated) =
        dossier::list_instructions(&blocks, entry, 1000, fetch_from(&linear)).unwrap();
    assert!(!truncated);
    // 49 block instructions; the padding `nop` at 0x3ee2f is not in a block.
    assert_eq!(ops.len(), 49);
    assert!(ops.iter().all(|o| o.offset != Some(0x3ee2f)));
    let d = dossier::dossier(entry, &blocks, &ops, truncated, 1000, &sections());
    assert_eq!(d.entry, entry);
    assert_eq!(d.end, Some(0x3ee4a));
    assert_eq!(d.instructions.len(), 49);
    assert!(
        d.instructions
            .windows(2)
            .all(|w| w[0].address < w[1].address)
    );
    let first = &d.instructions[0];
    assert_eq!(
        (first.mnemonic.as_str(), first.bytes.as_slice()),
        ("push", &[0x55u8][..])
    );
    let lea = d
        .instructions
        .iter()
        .find(|i| i.address == 0x3ede3)
        .unwrap();
    assert_eq!(lea.operands, "rsi, [rip + 0x31657]");
    assert_eq!(
        lea.data.map(|r| (r.target, r.kind)),
        Some((0x70441, RefKind::Address))
    );

    assert_eq!(
        d.callees,
        [
            (0x3edd6, 0x1e570),
            (0x3edef, 0x1e4a0),
            (0x3ee07, 0x1d1b0),
            (0x3ee3d, 0x1d9b0)
        ]
        .map(|(at, target)| CallSite { at, target })
    );
    assert_eq!(
        d.references,
        [
            Xref {
                from: 0x3edc3,
                to: 0x7ef48,
                kind: RefKind::Read
            },
            Xref {
                from: 0x3edcf,
                to: 0x803e0,
                kind: RefKind::Address
            },
            Xref {
                from: 0x3ede3,
                to: 0x70441,
                kind: RefKind::Address
            },
            Xref {
                from: 0x3ee1d,
                to: 0x803e0,
                kind: RefKind::Address
            },
        ]
    );
    assert!(d.unresolved.is_empty());
    assert!(d.limitations.is_empty(), "{:?}", d.limitations);

    assert_eq!(d.blocks.len(), 9);
    let edges = |start: u64| {
        d.blocks
            .iter()
            .find(|b| b.start == start)
            .unwrap()
            .successors
            .clone()
    };
    let edge = |target, kind| Edge { target, kind };
    assert_eq!(
        edges(0x3edb0),
        [
            edge(0x3eddf, EdgeKind::ConditionalTaken),
            edge(0x3edcf, EdgeKind::ConditionalNotTaken)
        ]
    );
    // radare2 writes `jump` for a plain run into the next block.
    assert_eq!(edges(0x3edfd), [edge(0x3ee00, EdgeKind::Fallthrough)]);
    // A loop back to itself.
    assert_eq!(edges(0x3ee00)[0], edge(0x3ee00, EdgeKind::ConditionalTaken));
    // The tail jump radare2 followed into other code.
    assert_eq!(edges(0x3ee3b), [edge(0x2006c, EdgeKind::Jump)]);
    // Tail call to an import and `ret`: no successors.
    assert!(edges(0x3ee19).is_empty() && edges(0x3ee30).is_empty());
    let entry_block = d.blocks.iter().find(|b| b.start == entry).unwrap();
    assert_eq!(
        (entry_block.end, entry_block.instruction_count),
        (0x3edcf, 11)
    );
}

#[test]
fn listing_under_a_budget_starts_at_the_entry() {
    let blocks: Vec<BlockJson> = list(testdata!("afbj_unref.json"));
    let linear: Vec<OpJson> = list(testdata!("pdfj_unref_ops.json"));
    let entry = 0x38330;
    let (ops, truncated) =
        dossier::list_instructions(&blocks, entry, 4, fetch_from(&linear)).unwrap();
    assert!(truncated);
    let listed: Vec<u64> = ops.iter().filter_map(|o| o.offset).collect();
    assert_eq!(listed, [0x38330, 0x38337, 0x3833e, 0x38340]);
    let d = dossier::dossier(entry, &blocks, &ops, truncated, 4, &sections());
    assert!(d.truncated);
    assert!(
        d.limitations[0].contains("stops after 4 instructions"),
        "{:?}",
        d.limitations
    );
    // Blocks stay complete under a budget.
    assert_eq!(d.blocks.len(), 4);

    let (ops, truncated) =
        dossier::list_instructions(&blocks, entry, usize::MAX, fetch_from(&linear)).unwrap();
    assert!(!truncated);
    let d = dossier::dossier(entry, &blocks, &ops, truncated, usize::MAX, &sections());
    assert_eq!(d.instructions.len(), 6);
    // The PLT stub radare2 attributes to the function: an indirect jump
    // through the GOT, which it reads.
    assert_eq!(d.unresolved.len(), 1);
    assert_eq!(
        (d.unresolved[0].at, d.unresolved[0].kind),
        (0x1dc40, UnresolvedKind::IndirectJump)
    );
    assert_eq!(
        d.references,
        [Xref {
            from: 0x1dc40,
            to: 0x7f620,
            kind: RefKind::Read
        }]
    );
    // The extent bridges the alignment padding before the tail block.
    assert_eq!(d.end, Some(0x3834d));
    assert!(
        d.limitations
            .iter()
            .any(|l| l.starts_with("1 basic block(s) lie outside")),
        "{:?}",
        d.limitations
    );
    let ret_block = d.blocks.iter().find(|b| b.start == 0x38348).unwrap();
    assert_eq!(
        ret_block.successors,
        [Edge {
            target: 0x1dc40,
            kind: EdgeKind::Jump
        }]
    );

    let (none, truncated) =
        dossier::list_instructions(&blocks, entry, 0, fetch_from(&linear)).unwrap();
    assert!(none.is_empty() && truncated);
}

#[test]
fn numbers_radare2_calls_references_are_dropped() {
    // `mov dword [rbx + 0x90], 0xd`: radare2 5.7.4 reports a DATA write to
    // 0xd, which lies in no loaded section.
    let ops: Vec<OpJson> = list(testdata!("pdj_immediate_store.json"));
    assert_eq!(ops[0].refs[0].addr, Some(0xd));
    let d = dossier::dossier(0x45cb0, &[], &ops, false, 10, &sections());
    assert!(d.references.is_empty());
    assert_eq!(d.instructions[0].data, None);
    // Without a section table nothing can be told apart, so it is kept.
    let d = dossier::dossier(0x45cb0, &[], &ops, false, 10, &Sections::default());
    assert_eq!(
        d.references,
        [Xref {
            from: 0x45cb0,
            to: 0xd,
            kind: RefKind::Write
        }]
    );
}

#[test]
fn switch_cases_become_jump_edges() {
    let blocks: Vec<BlockJson> = list(testdata!("afbj_switch_excerpt.json"));
    let ops: Vec<OpJson> = list(testdata!("pdj_switch_dispatch.json"));
    let d = dossier::dossier(0x5ab40, &blocks, &ops, false, 100, &sections());
    let dispatch = d.blocks.iter().find(|b| b.start == 0x5ab8a).unwrap();
    let targets: Vec<u64> = dispatch.successors.iter().map(|e| e.target).collect();
    // 12 cases, 9 distinct targets, all jump edges.
    assert_eq!(targets.len(), 9);
    assert!(dispatch.successors.iter().all(|e| e.kind == EdgeKind::Jump));
    assert!(targets.contains(&0x5af70) && targets.contains(&0x5aba0));
    assert!(d.limitations.iter().any(|l| l.contains("switch cases")));
    assert_eq!(d.unresolved.len(), 1);
}

#[test]
fn xrefs_to_and_callers_from_axtj() {
    let calls: Vec<XrefJson> = list(testdata!("axtj_calls_excerpt.json"));
    let x = convert::xrefs_to(0x1e570, &calls, 100);
    assert!(!x.truncated && x.limitations.is_empty());
    assert_eq!(x.xrefs.len(), 4);
    assert!(
        x.xrefs
            .iter()
            .all(|r| r.kind == RefKind::Call && r.to == 0x1e570)
    );
    assert_eq!(x.xrefs[0].from, 0x2b53c);
    let limited = convert::xrefs_to(0x1e570, &calls, 3);
    assert!(limited.truncated);
    assert_eq!(limited.xrefs, x.xrefs[..3]);
    let callers = convert::callers(0x1e570, &calls);
    assert_eq!(callers.len(), 4);
    assert_eq!(
        callers[0],
        CallSite {
            at: 0x2b53c,
            target: 0x1e570
        }
    );

    let lea: Vec<XrefJson> = list(testdata!("axtj_lea.json"));
    let x = convert::xrefs_to(0x70441, &lea, 10);
    assert_eq!(
        x.xrefs,
        [Xref {
            from: 0x3ede3,
            to: 0x70441,
            kind: RefKind::Address
        }]
    );
    assert!(convert::callers(0x70441, &lea).is_empty());

    let jumps: Vec<XrefJson> = list(testdata!("axtj_jumps.json"));
    let x = convert::xrefs_to(0x1ed87, &jumps, 10);
    assert_eq!(x.xrefs.len(), 2);
    assert!(x.xrefs.iter().all(|r| r.kind == RefKind::Jump));

    let odd: Vec<XrefJson> = list(r#"[{"from": 16, "type": "ICOD"}, {"type": "CALL"}]"#);
    let x = convert::xrefs_to(0x20, &odd, 10);
    assert_eq!(
        x.xrefs,
        [Xref {
            from: 16,
            to: 0x20,
            kind: RefKind::Read
        }]
    );
    assert_eq!(
        x.limitations,
        ["radare2 reference type \"ICOD\" is reported as read"]
    );
}

#[test]
fn symbols_radare2_may_have_cut_are_not_aliases() {
    let functions: Vec<FunctionJson> =
        list(r#"[{"offset": 16, "name": "sym._ZN1a", "realsz": 4}]"#);
    let long = format!("_Z{}", "x".repeat(252));
    assert_eq!(long.len(), 254);
    let symbols: Vec<SymbolJson> = list(&format!(
        r#"[{{"vaddr": 16, "realname": "{long}", "type": "FUNC"}},
            {{"vaddr": 16, "realname": "_ZN1aEv", "type": "FUNC", "is_imported": false}},
            {{"vaddr": 16, "realname": "memcpy", "type": "FUNC", "is_imported": true}},
            {{"vaddr": 16, "realname": "obj", "type": "OBJ"}}]"#
    ));
    let inventory = inventory::inventory(functions, &symbols, 10);
    assert_eq!(inventory.procedures[0].aliases, ["_ZN1aEv"]);
}

#[test]
fn afij_spans_far_blocks_so_size_is_realsz() {
    // The PLT stub radare2 attributes to Watcher::unref makes `size`
    // (maxbound - minbound) 108301 bytes for 28 bytes of code.
    let info: Vec<FunctionJson> = list(testdata!("afij_unref.json"));
    assert_eq!(info[0].offset, Some(0x38330));
    assert_eq!((info[0].size, info[0].realsz), (Some(108_301), Some(28)));
    let inventory = inventory::inventory(info, &[], 10);
    assert_eq!(inventory.procedures[0].size, Some(28));
}
