//! A cheap lexical guard run before parsing.
//!
//! oxc's parser is recursive descent with no depth limit: every bracket,
//! prefix operator, right-associative operator (`?:`, `=`, `=>`, `**`) and
//! nested statement (`if if if`, labels) costs stack frames. A hostile file
//! of a million `(` would exhaust any stack. This scan tokenises roughly
//! (strings, comments, templates and regular expressions are skipped, not
//! validated) and estimates the deepest nesting the parser could reach:
//! the bracket depth plus, for each open bracket level, the nesting
//! operators and keywords in its current statement segment. A segment ends
//! where nesting cannot continue: a `,`, a `;` or `}` (unless `else` or
//! `while` follows), or a newline where automatic semicolon insertion
//! applies. Texts over the bounds are not parsed; the bounds sit far above
//! real code (bundles nest a few hundred levels at most) and far below what
//! the extraction stack ([`super::EXTRACT_STACK_BYTES`]) can hold.
//!
//! Left-associative chains (`a+b+c`, `a.b.c`, `f()()`) are parsed by loops,
//! not recursion, so they are not counted; the AST walk bounds them instead.

/// Deepest bracket nesting `( [ { ${ \`` accepted.
pub(crate) const MAX_BRACKET_DEPTH: usize = 1_000;
/// Largest estimated parser nesting (brackets plus nesting operators).
pub(crate) const MAX_NESTING: usize = 4_000;

/// Why a text must not be parsed, or `None`.
pub(crate) fn refuse(text: &str, typescript: bool) -> Option<String> {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        at: 0,
        frames: vec![Frame::new(Kind::Base)],
        total: 0,
        expect_operand: true,
        operand_before_newline: false,
        boundary: false,
        typescript,
    };
    scan.run().err()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Base,
    Bracket,
    /// Inside a template literal's text.
    TemplateText,
    /// Inside a template literal's `${ }`.
    TemplateExpr,
}

struct Frame {
    kind: Kind,
    /// Nesting operators in the current statement segment of this level.
    count: usize,
}

impl Frame {
    fn new(kind: Kind) -> Frame {
        Frame { kind, count: 0 }
    }
}

struct Scan<'t> {
    bytes: &'t [u8],
    at: usize,
    frames: Vec<Frame>,
    /// Sum of the frames' counts (the bracket depth is `frames.len() - 1`).
    total: usize,
    /// True where an operand (not an operator) comes next: decides prefix
    /// versus binary `+ - <` and regular expression versus division.
    expect_operand: bool,
    /// The last token ended an operand and a newline followed it.
    operand_before_newline: bool,
    /// A `;` or `}` ended a statement; the next token decides the reset.
    boundary: bool,
    /// TypeScript: `<` always opens type arguments and `.` may nest
    /// namespace declarations (`namespace a.b.c {}` parses recursively).
    typescript: bool,
}

/// Binary keywords: they continue an expression and nest nothing.
const BINARY_WORDS: &[&[u8]] = &[b"in", b"instanceof", b"of", b"as", b"satisfies"];
/// Keywords that start a nested expression or statement.
const NESTING_WORDS: &[&[u8]] = &[
    b"if",
    b"else",
    b"for",
    b"while",
    b"do",
    b"with",
    b"switch",
    b"case",
    b"default",
    b"try",
    b"catch",
    b"finally",
    b"throw",
    b"return",
    b"new",
    b"delete",
    b"typeof",
    b"void",
    b"await",
    b"yield",
    b"function",
    b"class",
    b"extends",
    b"var",
    b"let",
    b"const",
    b"import",
    b"export",
    b"async",
    b"keyof",
    b"readonly",
    b"infer",
    b"unique",
    b"namespace",
    b"module",
    b"declare",
];

impl Scan<'_> {
    fn run(&mut self) -> Result<(), String> {
        while self.at < self.bytes.len() {
            if self
                .frames
                .last()
                .is_some_and(|f| f.kind == Kind::TemplateText)
            {
                self.template_text()?;
                continue;
            }
            let b = self.bytes[self.at];
            match b {
                b'\n' | b'\r' => {
                    if !self.expect_operand {
                        self.operand_before_newline = true;
                    }
                    self.at += 1;
                }
                b' ' | b'\t' | 0x0b | 0x0c => self.at += 1,
                b'/' if self.peek(1) == Some(b'/') => self.skip_line(),
                b'/' if self.peek(1) == Some(b'*') => self.skip_block_comment(),
                b'\'' | b'"' => {
                    self.token_start(false);
                    self.skip_string(b);
                    self.operand_end();
                }
                b'`' => {
                    self.token_start(true);
                    self.at += 1;
                    self.push(Kind::TemplateText)?;
                }
                b'/' if self.expect_operand => {
                    self.token_start(false);
                    self.skip_regex();
                    self.operand_end();
                }
                b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'#' | b'\\' | 0x80.. => {
                    self.word()?
                }
                _ => self.punctuator()?,
            }
        }
        Ok(())
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.at + ahead).copied()
    }

    /// Applies a pending statement-boundary reset before a token.
    /// `continues` is true for `else`/`while` (the statement goes on) and
    /// for tokens that cannot start a statement after a newline.
    fn token_start(&mut self, continues: bool) {
        if (self.boundary || self.operand_before_newline) && !continues {
            self.reset();
        }
        self.boundary = false;
        self.operand_before_newline = false;
    }

    fn reset(&mut self) {
        if let Some(frame) = self.frames.last_mut() {
            self.total -= frame.count;
            frame.count = 0;
        }
    }

    fn operand_end(&mut self) {
        self.expect_operand = false;
    }

    fn nest(&mut self) -> Result<(), String> {
        if let Some(frame) = self.frames.last_mut() {
            frame.count += 1;
            self.total += 1;
        }
        self.check()
    }

    fn unnest(&mut self) {
        if let Some(frame) = self.frames.last_mut()
            && frame.count > 0
        {
            frame.count -= 1;
            self.total -= 1;
        }
    }

    fn check(&self) -> Result<(), String> {
        let depth = self.frames.len() - 1;
        if depth > MAX_BRACKET_DEPTH {
            return Err(format!(
                "brackets nest deeper than {MAX_BRACKET_DEPTH} levels (byte {})",
                self.at
            ));
        }
        if depth + self.total > MAX_NESTING {
            return Err(format!(
                "expressions or statements nest deeper than {MAX_NESTING} levels (byte {})",
                self.at
            ));
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind) -> Result<(), String> {
        self.frames.push(Frame::new(kind));
        self.expect_operand = true;
        self.check()
    }

    /// Closes the innermost bracket; a stray closer at the top level is ignored.
    fn pop(&mut self) {
        if self.frames.len() > 1
            && let Some(frame) = self.frames.pop()
        {
            self.total -= frame.count;
        }
    }

    fn skip_line(&mut self) {
        while self.at < self.bytes.len() && self.bytes[self.at] != b'\n' {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        self.at += 2;
        while self.at < self.bytes.len() {
            if self.bytes[self.at] == b'*' && self.peek(1) == Some(b'/') {
                self.at += 2;
                return;
            }
            if self.bytes[self.at] == b'\n' && !self.expect_operand {
                self.operand_before_newline = true;
            }
            self.at += 1;
        }
    }

    /// Skips a quoted string; an unterminated one ends at the line end.
    fn skip_string(&mut self, quote: u8) {
        self.at += 1;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'\n' => return,
                b if b == quote => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    /// Skips `/re/` (classes may hold `/`); ends at the line end if open.
    fn skip_regex(&mut self) {
        self.at += 1;
        let mut class = false;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'\n' => return,
                b'[' => {
                    class = true;
                    self.at += 1;
                }
                b']' => {
                    class = false;
                    self.at += 1;
                }
                b'/' if !class => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    fn template_text(&mut self) -> Result<(), String> {
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    self.pop();
                    self.operand_end();
                    return Ok(());
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.at += 2;
                    return self.push(Kind::TemplateExpr);
                }
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    fn word(&mut self) -> Result<(), String> {
        let start = self.at;
        while self.at < self.bytes.len()
            && matches!(self.bytes[self.at],
                b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'#' | b'\\' | 0x80..)
        {
            self.at += 1;
        }
        let word = &self.bytes[start..self.at];
        let binary = BINARY_WORDS.contains(&word);
        let continues = binary || word == b"else" || word == b"while";
        self.token_start(continues);
        if binary {
            self.expect_operand = true;
        } else if NESTING_WORDS.contains(&word) {
            self.expect_operand = true;
            self.nest()?;
        } else {
            // Identifiers, numbers and operand keywords (`this`, `null`).
            self.operand_end();
        }
        Ok(())
    }

    fn punctuator(&mut self) -> Result<(), String> {
        let b = self.bytes[self.at];
        let next = self.peek(1);
        // Only these can start a new statement after `}` or a newline;
        // every other punctuator continues the expression (no ASI).
        let continues = !matches!(b, b'{' | b'!' | b'~' | b'@' | b';');
        self.token_start(continues);
        match b {
            b'(' | b'[' | b'{' => {
                self.at += 1;
                self.push(Kind::Bracket)
            }
            b')' | b']' => {
                self.at += 1;
                self.pop();
                self.operand_end();
                Ok(())
            }
            b'}' => {
                self.at += 1;
                let template = self
                    .frames
                    .last()
                    .is_some_and(|f| f.kind == Kind::TemplateExpr);
                self.pop();
                self.operand_end();
                if !template {
                    self.boundary = true;
                }
                Ok(())
            }
            b',' => {
                self.at += 1;
                self.reset();
                self.expect_operand = true;
                Ok(())
            }
            b';' => {
                self.at += 1;
                self.boundary = true;
                self.expect_operand = true;
                Ok(())
            }
            b'.' => {
                let spread = next == Some(b'.') && self.peek(2) == Some(b'.');
                self.at += if spread { 3 } else { 1 };
                self.expect_operand = true;
                if spread || self.typescript {
                    self.nest()
                } else {
                    Ok(())
                }
            }
            b'<' if next == Some(b'/') => {
                // A JSX closing tag ends the element its `<` opened.
                self.at += 2;
                self.unnest();
                self.expect_operand = false;
                Ok(())
            }
            b'/' if next == Some(b'>') => {
                // A self-closing JSX element.
                self.at += 2;
                self.unnest();
                self.expect_operand = true;
                Ok(())
            }
            _ => self.operator(),
        }
    }

    /// Operators: counts the ones that nest (prefix and right-associative).
    fn operator(&mut self) -> Result<(), String> {
        let prefix = self.expect_operand;
        let len = self.operator_len();
        let op = &self.bytes[self.at..self.at + len];
        self.at += len;
        if matches!(op, b"++" | b"--") && !prefix {
            // Postfix update: the operand goes on.
            return Ok(());
        }
        let nests = match op {
            b"++" | b"--" | b"+" | b"-" => prefix,
            b"<" => prefix || self.typescript,
            b"!" | b"~" | b"@" | b"?" | b":" | b"=>" | b"**" => true,
            b"==" | b"===" | b"!=" | b"!==" | b"<=" | b">=" => false,
            // Assignments, plain or compound, are right-associative.
            _ => op.last() == Some(&b'='),
        };
        self.expect_operand = true;
        if nests { self.nest() } else { Ok(()) }
    }

    /// Length of the longest operator at the cursor (1 for unknown bytes).
    fn operator_len(&self) -> usize {
        const OPS: &[&[u8]] = &[
            b">>>=", b"===", b"!==", b"**=", b"<<=", b">>=", b">>>", b"&&=", b"||=", b"??=", b"=>",
            b"==", b"!=", b"<=", b">=", b"&&", b"||", b"??", b"?.", b"++", b"--", b"+=", b"-=",
            b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"**", b"<<", b">>",
        ];
        let rest = &self.bytes[self.at..];
        OPS.iter()
            .find(|op| rest.starts_with(op))
            .map_or(1, |op| op.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) {
        assert_eq!(refuse(text, false), None, "refused: {text:.80}");
    }

    fn refused(text: &str) {
        assert!(refuse(text, false).is_some(), "accepted: {text:.80}");
    }

    #[test]
    fn ordinary_code_passes() {
        ok("const a = require('a');\nif (a) { b(); } else if (c) { d(); } else { e(); }\n");
        ok("x = a ? b : c ? d : e; y = `t${`u${v}`}`; z = /[(]/.test(s);");
        ok(&"a = 1\nb = c ? d : e\n".repeat(10_000));
        ok(&"f(a, b ? c : !d, e = 1);".repeat(10_000));
        ok(&format!("{}x", "a + ".repeat(100_000)));
        ok(&"switch (x) { case 1: case 2: y(); }".repeat(1_000));
    }

    #[test]
    fn deep_nesting_is_refused() {
        refused(&"(".repeat(1_001));
        refused(&format!("{}a{}", "[".repeat(5_000), "]".repeat(5_000)));
        refused(&"!".repeat(MAX_NESTING + 1));
        refused(&format!("{}a", "typeof ".repeat(MAX_NESTING + 1)));
        refused(&format!("{}a", "- ".repeat(MAX_NESTING + 1)));
        refused(&format!("{}a", "a ? a : ".repeat(MAX_NESTING)));
        refused(&format!("{}a", "a ** ".repeat(MAX_NESTING + 1)));
        refused(&format!("{}a", "a => ".repeat(MAX_NESTING + 1)));
        refused(&format!("{}a;", "if (a) ".repeat(MAX_NESTING)));
        refused(&format!("{}a;", "l: ".repeat(MAX_NESTING + 1)));
        refused(&"if (a) {} else ".repeat(MAX_NESTING));
        refused(&"`${".repeat(600));
    }

    #[test]
    fn strings_comments_and_regexes_hide_brackets() {
        ok(&format!("'{}'", "(".repeat(5_000)));
        ok(&format!("/* {} */", "(".repeat(5_000)));
        ok(&format!("// {}", "(".repeat(5_000)));
        ok(&format!("x = /{}/", "\\(".repeat(5_000)));
    }
}
