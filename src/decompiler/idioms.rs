//! Idioms whose text is noise to a reader, folded into one comment each.
//!
//! The stack protector: the engine prints the canary's load at the start
//! (`lVar1 = *(int64_t *)(in_FS_OFFSET + 0x28);`, or from
//! `__stack_chk_guard` on Mach-O and AArch64) and its check at each exit
//! (`if (lVar1 != …) { __stack_chk_fail(); }`, or `if (lVar1 == …) { … }`
//! followed by the failing call). Both become one comment where the check
//! was; the instructions the removed lines came from stay in the address map,
//! on the comment.

use std::sync::LazyLock;

use regex::Regex;

use super::protocol::Line;

/// What replaces the check.
pub const CANARY_COMMENT: &str =
    "/* stack protector: the canary is checked here (__stack_chk_fail) */";

/// The guard as the engine prints it.
const GUARD: &str = r"(?:\*\([A-Za-z0-9_]+ \*\)\(in_FS_OFFSET \+ 0x28\)|\*\([A-Za-z0-9_]+ \*\)_*stack_chk_guard|_*stack_chk_guard)";

static LOAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^\s*([A-Za-z_][A-Za-z0-9_]*) = {GUARD};$")).expect("a valid pattern")
});

/// Folds the stack-protector idiom in `lines`, when both its load and a
/// check of the loaded value are there; otherwise leaves them as they are.
pub fn fold_stack_protector(lines: &mut Vec<Line>) {
    let Some((load, var)) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| LOAD.captures(&l.text).map(|c| (i, c[1].to_string())))
    else {
        return;
    };
    let var = regex::escape(&var);
    let differs = Regex::new(&format!(
        r"^(\s*)if \((?:{var} != {GUARD}|{GUARD} != {var})\) \{{$"
    ))
    .expect("a valid pattern");
    let equals = Regex::new(&format!(
        r"^(\s*)if \((?:{var} == {GUARD}|{GUARD} == {var})\) \{{$"
    ))
    .expect("a valid pattern");
    let mut folded = false;
    let mut i = 0;
    while i < lines.len() {
        if let Some(c) = differs.captures(&lines[i].text) {
            let indent = c[1].to_string();
            if let Some(end) = block_end(lines, i, &indent)
                && lines[i + 1..end].iter().any(|l| is_fail(&l.text))
            {
                let addresses = union(&lines[i..=end]);
                lines.splice(i..=end, [comment(&indent, addresses)]);
                folded = true;
            }
        } else if let Some(c) = equals.captures(&lines[i].text) {
            let indent = c[1].to_string();
            if let Some(end) = block_end(lines, i, &indent) {
                // After the block: the engine's warning, then the call.
                let mut fail = end + 1;
                while fail < lines.len() && lines[fail].text.trim_start().starts_with("/*") {
                    fail += 1;
                }
                if fail < lines.len() && is_fail(&lines[fail].text) {
                    let mut addresses = union(&lines[i..=i]);
                    addresses.extend(union(&lines[end..=fail]));
                    addresses.sort_unstable();
                    addresses.dedup();
                    let body: Vec<Line> = lines[i + 1..end]
                        .iter()
                        .map(|l| Line {
                            text: l.text.strip_prefix("  ").unwrap_or(&l.text).to_string(),
                            addresses: l.addresses.clone(),
                        })
                        .collect();
                    let mut replacement = vec![comment(&indent, addresses)];
                    replacement.extend(body);
                    let added = replacement.len();
                    lines.splice(i..=fail, replacement);
                    folded = true;
                    i += added;
                    continue;
                }
            }
        }
        i += 1;
    }
    if folded {
        let kept = lines.remove(load);
        // The load's instructions join the first comment.
        if let Some(first) = lines
            .iter_mut()
            .find(|l| l.text.trim_start() == CANARY_COMMENT)
        {
            first.addresses.extend(kept.addresses);
            first.addresses.sort_unstable();
            first.addresses.dedup();
        }
    }
}

fn is_fail(text: &str) -> bool {
    let t = text.trim_start();
    t.trim_start_matches('_').starts_with("stack_chk_fail(")
}

/// The line closing the block opened at `open` (the first `}` at its
/// indentation).
fn block_end(lines: &[Line], open: usize, indent: &str) -> Option<usize> {
    let close = format!("{indent}}}");
    (open + 1..lines.len()).find(|&j| lines[j].text == close)
}

fn union(lines: &[Line]) -> Vec<u64> {
    let mut all: Vec<u64> = lines
        .iter()
        .flat_map(|l| l.addresses.iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn comment(indent: &str, addresses: Vec<u64>) -> Line {
    Line {
        text: format!("{indent}{CANARY_COMMENT}"),
        addresses,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text.lines()
            .enumerate()
            .map(|(i, t)| Line {
                text: t.to_string(),
                addresses: vec![i as u64],
            })
            .collect()
    }

    fn texts(lines: &[Line]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_failing_check_becomes_one_comment() {
        let mut c = lines(
            "int32_t f(void)\n{\n  int64_t lVar1;\n\n  lVar1 = *(int64_t *)(in_FS_OFFSET + 0x28);\n  g();\n  if (lVar1 != *(int64_t *)(in_FS_OFFSET + 0x28)) {\n                    /* WARNING: Subroutine does not return */\n    __stack_chk_fail();\n  }\n  return 0;\n}",
        );
        fold_stack_protector(&mut c);
        assert_eq!(
            texts(&c),
            [
                "int32_t f(void)",
                "{",
                "  int64_t lVar1;",
                "",
                "  g();",
                &format!("  {CANARY_COMMENT}"),
                "  return 0;",
                "}"
            ]
        );
        // The load (4) and the check's lines (6-9) stay mapped, on the comment.
        assert_eq!(c[5].addresses, [4, 6, 7, 8, 9]);
    }

    #[test]
    fn a_passing_check_keeps_its_body() {
        let mut c = lines(
            "{\n  lVar2 = *(int64_t *)___stack_chk_guard;\n  if (*(int64_t *)___stack_chk_guard == lVar2) {\n    return x;\n  }\n                    /* WARNING: Subroutine does not return */\n  ___stack_chk_fail();\n}",
        );
        fold_stack_protector(&mut c);
        assert_eq!(
            texts(&c),
            ["{", &format!("  {CANARY_COMMENT}"), "  return x;", "}"]
        );
    }

    #[test]
    fn without_a_check_nothing_changes() {
        let text = "{\n  lVar1 = *(int64_t *)(in_FS_OFFSET + 0x28);\n  if (lVar1 != 0) {\n    g();\n  }\n}";
        let mut c = lines(text);
        fold_stack_protector(&mut c);
        assert_eq!(texts(&c), text.lines().collect::<Vec<_>>());
    }
}
