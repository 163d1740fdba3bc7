//! What an answer shows of a procedure's C: its signature, a page of lines
//! with a compact address map, or an outline of a long one.

use super::protocol::{Decompiled, Line};

/// The prototype: the lines before the body's opening brace, comments
/// (the engine's warnings) left out, joined into one.
pub fn signature(lines: &[Line]) -> String {
    let mut parts = Vec::new();
    for line in lines {
        let text = line.text.trim();
        if text == "{" {
            break;
        }
        if text.is_empty() || text.starts_with("/*") {
            continue;
        }
        parts.push(text);
    }
    parts.join(" ")
}

/// The address map of `lines`: one entry per line, `;`-separated; an entry
/// is the line's instruction addresses as hex offsets from `entry`
/// (`-` before one below it), `,`-separated, empty for a line with none.
/// `0;;4,9` says line 1 starts at the entry, line 2 has no instruction,
/// line 3 comes from entry+4 and entry+9.
pub fn address_map(lines: &[Line], entry: u64) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        for (j, &address) in line.addresses.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            if address >= entry {
                out.push_str(&format!("{:x}", address - entry));
            } else {
                out.push_str(&format!("-{:x}", entry - address));
            }
        }
    }
    out
}

/// [`address_map`] read back: each line's addresses. `None` if the text is
/// not a map of that form.
pub fn parse_address_map(map: &str, entry: u64) -> Option<Vec<Vec<u64>>> {
    map.split(';')
        .map(|line| {
            if line.is_empty() {
                return Some(Vec::new());
            }
            line.split(',')
                .map(|offset| match offset.strip_prefix('-') {
                    Some(below) => entry.checked_sub(u64::from_str_radix(below, 16).ok()?),
                    None => entry.checked_add(u64::from_str_radix(offset, 16).ok()?),
                })
                .collect()
        })
        .collect()
}

/// The indices of the statement lines of a procedure's C (what address
/// coverage counts): lines that end in `;` or open a control statement,
/// after the declarations that open the body (up to its first blank line).
pub fn statement_lines(lines: &[Line]) -> Vec<usize> {
    let body = lines
        .iter()
        .position(|l| l.text == "{")
        .map_or(0, |b| b + 1);
    let declarations = lines[body..]
        .iter()
        .take_while(|l| !l.text.trim().is_empty())
        .count();
    let declarations = if body + declarations < lines.len() {
        declarations
    } else {
        0
    };
    (body + declarations..lines.len())
        .filter(|&i| {
            let t = lines[i].text.trim();
            t.ends_with(';') && !t.starts_with("/*")
                || ["if ", "if(", "while", "for ", "for(", "switch", "} while"]
                    .iter()
                    .any(|k| t.starts_with(k))
        })
        .collect()
}

/// The outline of a procedure: line numbers (1-based) and the lines that
/// shape it (control flow, calls, returns, strings), each cut to 100
/// characters, indentation kept.
pub fn outline(done: &Decompiled) -> Vec<(usize, String)> {
    let callees: Vec<String> = done
        .callees
        .iter()
        .map(|c| format!("{}(", c.name))
        .collect();
    done.lines
        .iter()
        .enumerate()
        .filter(|(_, line)| shapes(&line.text, &callees))
        .map(|(i, line)| (i + 1, cut(&line.text, 100)))
        .collect()
}

fn shapes(text: &str, callees: &[String]) -> bool {
    const CONTROL: [&str; 12] = [
        "if ", "if(", "else", "while", "for ", "for(", "do ", "switch", "case ", "default:",
        "return", "goto ",
    ];
    let t = text.trim_start();
    CONTROL.iter().any(|k| t.starts_with(k))
        || t.starts_with("} while")
        || t.starts_with("} else")
        || t.contains('"')
        || callees.iter().any(|c| t.contains(c.as_str()))
}

fn cut(text: &str, max: usize) -> String {
    crate::ground::text::excerpt(text.trim_end(), max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line(text: &str, addresses: &[u64]) -> Line {
        Line {
            text: text.into(),
            addresses: addresses.to_vec(),
        }
    }

    #[test]
    fn the_signature_skips_warnings_and_joins_lines() {
        let lines = [
            line("/* WARNING: something */", &[]),
            line("int32_t f(int32_t a,", &[]),
            line("          char *b)", &[]),
            line("{", &[]),
            line("  return a;", &[0x10]),
        ];
        assert_eq!(signature(&lines), "int32_t f(int32_t a, char *b)");
    }

    #[test]
    fn the_map_is_offsets_from_the_entry() {
        let lines = [
            line("a", &[0x1000]),
            line("b", &[]),
            line("c", &[0x1004, 0x1009, 0xff0]),
        ];
        let map = address_map(&lines, 0x1000);
        assert_eq!(map, "0;;4,9,-10");
        let back = parse_address_map(&map, 0x1000).unwrap();
        assert_eq!(
            back,
            vec![vec![0x1000], vec![], vec![0x1004, 0x1009, 0xff0]]
        );
    }

    #[test]
    fn statements_leave_out_the_declarations() {
        let lines = [
            line("int32_t f(void)", &[]),
            line("{", &[]),
            line("  int32_t x;", &[]),
            line("", &[]),
            line("  x = g(1);", &[1]),
            line("  if (x == 0) {", &[2]),
            line("  }", &[]),
            line("  return x;", &[4]),
            line("}", &[]),
        ];
        assert_eq!(statement_lines(&lines), [4, 5, 7]);
    }

    #[test]
    fn the_outline_keeps_the_shape() {
        let done = Decompiled {
            lines: vec![
                line("int32_t f(void)", &[]),
                line("{", &[]),
                line("  int32_t x;", &[]),
                line("  x = g(1);", &[1]),
                line("  if (x == 0) {", &[2]),
                line("    puts(\"zero\");", &[3]),
                line("  }", &[]),
                line("  return x;", &[4]),
                line("}", &[]),
            ],
            callees: vec![super::super::protocol::Callee {
                name: "g".into(),
                address: Some(9),
                call_site: 1,
            }],
            strings: vec![],
        };
        let numbers: Vec<usize> = outline(&done).into_iter().map(|(n, _)| n).collect();
        assert_eq!(numbers, [4, 5, 6, 8]);
    }

    proptest! {
        #[test]
        fn any_map_reads_back(entry in 0u64..u64::MAX / 2, lines in proptest::collection::vec(proptest::collection::vec(0u64..u64::MAX / 2, 0..4), 0..20)) {
            let lines: Vec<Line> = lines.into_iter().map(|a| Line { text: String::new(), addresses: a }).collect();
            let map = address_map(&lines, entry);
            let back = parse_address_map(&map, entry).unwrap();
            if lines.is_empty() {
                prop_assert_eq!(back, vec![Vec::<u64>::new()]);
            } else {
                let want: Vec<Vec<u64>> = lines.iter().map(|l| l.addresses.clone()).collect();
                prop_assert_eq!(back, want);
            }
        }

        #[test]
        fn any_text_is_safe_to_parse(text in ".*") {
            let _ = parse_address_map(&text, 0x1000);
        }
    }
}
