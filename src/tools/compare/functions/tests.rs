//! Dimension statuses of `compare_functions` on hand-made dossiers.

use serde_json::{Value, json};

use super::super::dossier::{Block, Callee, Dossier, Instruction, Reference};
use super::compare;

/// A function at `base` of `body` (mnemonic, operands), 4 bytes per
/// instruction, closed by a `jmp` back to the entry; a string reference at
/// instruction 0 and a call to `callee` at instruction 1.
fn dossier(base: u64, body: &[(&str, &str)], callee: Option<&str>, string: &str) -> Dossier {
    let mut instructions: Vec<Instruction> = body
        .iter()
        .enumerate()
        .map(|(i, (m, o))| Instruction {
            address: base + 4 * i as u64,
            mnemonic: (*m).into(),
            operands: (*o).into(),
        })
        .collect();
    let end = base + 4 * instructions.len() as u64;
    instructions.push(Instruction {
        address: end,
        mnemonic: "jmp".into(),
        operands: format!("{base:#x}"),
    });
    Dossier {
        evidence_id: String::new(),
        document: None,
        procedure: Value::Null,
        blocks: vec![Block {
            start: base,
            instruction_count: instructions.len() as u64,
            successors: vec![("jump".into(), base)],
        }],
        instructions,
        callees: vec![Callee {
            at: base + 4,
            target: base + 0x1000,
            name: callee.map(str::to_owned),
            through_stub: None,
        }],
        references: Some(vec![Reference {
            at: base,
            target: base + 0x8000,
            kind: "address".into(),
            string: Some(string.into()),
            string_address: Some(base + 0x8000),
        }]),
        truncated: false,
    }
}

fn statuses(result: &Value) -> Value {
    let dims = result["dimensions"].as_object().unwrap();
    let mut out = serde_json::Map::new();
    for (name, d) in dims {
        out.insert(name.clone(), d["status"].clone());
    }
    out.insert("overall".into(), result["status"].clone());
    Value::Object(out)
}

fn run(left: &Dossier, right: &Dossier) -> (Value, Vec<String>) {
    compare(left, right, json!({}), json!({}))
}

fn body_with_call(base: u64, add: &str) -> Vec<(String, String)> {
    vec![
        ("lea".into(), "rdi, [rip + 0x7ffc]".into()),
        ("call".into(), format!("{:#x}", base + 0x1000)),
        ("add".into(), add.into()),
    ]
}

fn make(base: u64, add: &str, callee: Option<&str>, string: &str) -> Dossier {
    let body = body_with_call(base, add);
    let refs: Vec<(&str, &str)> = body.iter().map(|(m, o)| (m.as_str(), o.as_str())).collect();
    dossier(base, &refs, callee, string)
}

#[test]
fn relocated_identical_code_is_unchanged_in_every_dimension() {
    let (result, _) = run(
        &make(0x1000, "eax, 0x1", Some("puts"), "hi"),
        &make(0x5000, "eax, 0x1", Some("puts"), "hi"),
    );
    assert_eq!(
        statuses(&result),
        json!({"instructions": "unchanged", "blocks": "unchanged", "callees": "unchanged",
               "strings": "unchanged", "data_references": "unchanged", "overall": "unchanged"})
    );
    assert_eq!(
        result["dimensions"]["instructions"]["hunks"]["total"],
        json!(0)
    );
}

#[test]
fn a_changed_immediate_callee_and_string_are_changes() {
    let (result, _) = run(
        &make(0x1000, "eax, 0x1", Some("puts"), "hi"),
        &make(0x5000, "eax, 0x2", Some("printf"), "bye"),
    );
    let s = statuses(&result);
    assert_eq!(s["instructions"], json!("changed"));
    assert_eq!(s["callees"], json!("changed"));
    assert_eq!(s["strings"], json!("changed"));
    assert_eq!(s["blocks"], json!("unchanged"));
    assert_eq!(s["overall"], json!("changed"));
    let hunk = &result["dimensions"]["instructions"]["hunks"]["items"][0];
    // Calls are abstracted to their callee's name, so the call shows too.
    assert_eq!(hunk["left"], json!(["call <call:puts>", "add eax, 0x1"]));
    assert_eq!(hunk["right"], json!(["call <call:printf>", "add eax, 0x2"]));
    assert_eq!(hunk["left_index"], json!(1));
    assert_eq!(hunk["left_address"], json!("0x1004"));
    assert_eq!(hunk["right_address"], json!("0x5004"));
    let added = &result["dimensions"]["callees"]["added"]["items"][0];
    assert_eq!(added["callee"], json!("printf"));
}

#[test]
fn truncation_is_never_unchanged_but_a_visible_difference_is_a_change() {
    let full = make(0x1000, "eax, 0x1", Some("puts"), "hi");
    let mut cut = make(0x5000, "eax, 0x1", Some("puts"), "hi");
    cut.instructions.truncate(2);
    cut.truncated = true;
    let (result, limitations) = run(&full, &cut);
    let s = statuses(&result);
    assert_eq!(s["instructions"], json!("truncated"));
    assert_eq!(s["blocks"], json!("truncated"));
    assert_eq!(s["overall"], json!("truncated"));
    assert!(limitations.iter().any(|l| l.contains("truncated")));

    let mut cut_changed = make(0x5000, "eax, 0x1", Some("puts"), "hi");
    cut_changed.instructions[0].mnemonic = "mov".into();
    cut_changed.instructions.truncate(2);
    cut_changed.truncated = true;
    let (result, _) = run(&full, &cut_changed);
    assert_eq!(statuses(&result)["instructions"], json!("changed"));
    assert_eq!(statuses(&result)["overall"], json!("changed"));

    // The complete side ends where the cut side still lists code: a change.
    let mut short = make(0x5000, "eax, 0x1", Some("puts"), "hi");
    short.instructions.truncate(2);
    let mut long_cut = full.clone();
    long_cut.truncated = true;
    let (result, _) = run(&long_cut, &short);
    assert_eq!(statuses(&result)["instructions"], json!("changed"));
}

#[test]
fn unnamed_callees_compare_by_address_with_a_note_and_missing_references_are_unknown() {
    let mut left = make(0x1000, "eax, 0x1", None, "hi");
    let mut right = make(0x1000, "eax, 0x1", None, "hi");
    left.references = None;
    right.references = None;
    let (result, limitations) = run(&left, &right);
    let s = statuses(&result);
    assert_eq!(s["callees"], json!("unchanged"));
    assert_eq!(s["strings"], json!("unknown"));
    assert_eq!(s["data_references"], json!("unknown"));
    assert_eq!(s["overall"], json!("unknown"));
    assert!(
        result["dimensions"]["strings"]["reason"]
            .as_str()
            .unwrap()
            .contains("no reference list")
    );
    assert!(limitations.iter().any(|l| l.contains("without a name")));
}

#[test]
fn block_shape_changes_are_seen() {
    let left = make(0x1000, "eax, 0x1", Some("puts"), "hi");
    let mut right = make(0x1000, "eax, 0x1", Some("puts"), "hi");
    right.blocks[0].successors = vec![("fallthrough".into(), 0x9999)];
    let (result, _) = run(&left, &right);
    assert_eq!(statuses(&result)["blocks"], json!("changed"));
    assert_eq!(
        result["dimensions"]["blocks"]["differences"]["total"],
        json!(1)
    );
}

#[test]
fn an_added_callee_alone_is_a_change_of_the_whole_function() {
    let left = make(0x1000, "eax, 0x1", Some("puts"), "hi");
    let mut right = make(0x1000, "eax, 0x1", Some("puts"), "hi");
    // A second call site the listing does not show as an instruction.
    right.callees.push(Callee {
        at: 0x2000,
        target: 0x3000,
        name: Some("abort".into()),
        through_stub: None,
    });
    let (result, _) = run(&left, &right);
    let s = statuses(&result);
    assert_eq!(s["callees"], json!("added"));
    assert_eq!(s["instructions"], json!("unchanged"));
    assert_eq!(s["overall"], json!("changed"));
}
