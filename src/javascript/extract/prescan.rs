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
//!
//! Without a grammar the scan cannot always tell a regex from a division
//! or JSX text from code, and a misjudgement would skip (as a string or
//! comment) text the parser reads as code. Skipped text is therefore
//! scanned again as code and its nesting added ([`Scan::hidden`]).

/// Deepest bracket nesting `( [ { ${ \`` accepted.
pub(crate) const MAX_BRACKET_DEPTH: usize = 1_000;
/// Largest estimated parser nesting (brackets plus nesting operators).
pub(crate) const MAX_NESTING: usize = 4_000;

/// How deep hidden text is re-scanned as code (see [`Scan::hidden`]).
const MAX_LEVEL: u8 = 2;
/// Hidden spans shorter than this are not re-scanned: they cannot hide
/// more nesting than the stack reservation absorbs many times over.
const MIN_HIDDEN: usize = 32;

/// Why a text must not be parsed, or `None`.
pub(crate) fn refuse(text: &str, typescript: bool) -> Option<String> {
    Scan::new(text.as_bytes(), typescript, 0).run().err()
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
    /// Whether a `/` right after this bracket's closer starts a regular
    /// expression: after `if (...)` and after a block `{...}` it does,
    /// after `(a)` or an object literal it divides.
    regex_after: bool,
}

impl Frame {
    fn new(kind: Kind, regex_after: bool) -> Frame {
        Frame {
            kind,
            count: 0,
            regex_after,
        }
    }
}

struct Scan<'t> {
    bytes: &'t [u8],
    /// 0 for the text itself, 1 and more for hidden text re-scanned.
    level: u8,
    /// The largest estimate (depth plus counts) seen so far.
    max_seen: usize,
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
    /// The last token was `.` or `?.`: the next word is a property name,
    /// even `if` or `return` (it must not decide regex versus division).
    after_dot: bool,
    /// The next token starts a statement (set by block openers, control
    /// headers, `else`/`do`/`try`/`finally`).
    next_is_statement: bool,
    /// The current token starts a statement.
    statement_start: bool,
    /// `if`/`while`/`for`/`with` was seen: the next `(` is a control header.
    control_pending: bool,
    /// Bracket depth at which a function or class expression's body opens.
    function_body_at: Option<usize>,
    /// The last token was `)` / `=>` (set by it, moved to `prev_*` at
    /// the next token): a `{` after either opens a block.
    after_close_paren: bool,
    after_arrow: bool,
    prev_close_paren: bool,
    prev_arrow: bool,
    /// The last token ended an operand (a name, literal or closer). A word
    /// right after one cannot continue the expression (`"x" id`, JSX or
    /// HTML text): the parser stops or starts a new statement there, so
    /// the segment ends, as after a newline.
    prev_operand: bool,
}

/// Words that go on with the statement before them (`} else`, `do x;
/// while`, TypeScript's `A extends B ? ...` and `x is T`).
const CONTINUING_WORDS: &[&[u8]] = &[b"else", b"while", b"extends", b"implements", b"is"];
/// Binary keywords: they continue an expression and nest nothing.
const BINARY_WORDS: &[&[u8]] = &[b"in", b"instanceof", b"of", b"as", b"satisfies"];
/// Nesting keywords that may also be identifiers.
const CONTEXTUAL_WORDS: &[&[u8]] = &[
    b"let",
    b"async",
    b"module",
    b"namespace",
    b"declare",
    b"readonly",
    b"unique",
];
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

impl<'t> Scan<'t> {
    fn new(bytes: &'t [u8], typescript: bool, level: u8) -> Self {
        Scan {
            bytes,
            level,
            max_seen: 0,
            at: 0,
            frames: vec![Frame::new(Kind::Base, true)],
            total: 0,
            expect_operand: true,
            operand_before_newline: false,
            boundary: false,
            typescript,
            after_dot: false,
            next_is_statement: true,
            statement_start: true,
            control_pending: false,
            function_body_at: None,
            after_close_paren: false,
            after_arrow: false,
            prev_close_paren: false,
            prev_arrow: false,
            prev_operand: false,
        }
    }

    /// Checks text this scan skips (string, regex, comment or template
    /// text) as if it were code. A tokeniser without a grammar can take a
    /// regex for a division (after `}` or `await`) or JSX text for code, and
    /// then skip, as a string or comment, what the parser reads as code: an
    /// attacker's million `(` would hide there. Each skipped span is
    /// therefore scanned again, from a fresh state, and its nesting added to
    /// the nesting around it; the re-scan goes [`MAX_LEVEL`] deep.
    fn hidden(&mut self, start: usize, end: usize) -> Result<(), String> {
        let end = end.min(self.bytes.len());
        if self.level >= MAX_LEVEL || end < start + MIN_HIDDEN {
            return Ok(());
        }
        let mut inner = Scan::new(&self.bytes[start..end], self.typescript, self.level + 1);
        let outer = self.frames.len() - 1 + self.total;
        let too_deep = || {
            format!(
                "text skipped as a string, comment or regex at byte {start} would nest deeper \
                 than {MAX_NESTING} levels if read as code"
            )
        };
        inner.run().map_err(|_| too_deep())?;
        if outer + inner.max_seen > MAX_NESTING {
            return Err(too_deep());
        }
        Ok(())
    }

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
                b'/' if self.peek(1) == Some(b'/') => {
                    let start = self.at + 2;
                    self.skip_line();
                    self.hidden(start, self.at)?;
                }
                b'/' if self.peek(1) == Some(b'*') => {
                    let start = self.at + 2;
                    self.skip_block_comment();
                    self.hidden(start, self.at)?;
                }
                b'\'' | b'"' => {
                    self.token_start(false);
                    let start = self.at + 1;
                    self.skip_string(b);
                    self.hidden(start, self.at)?;
                    self.operand_end();
                }
                b'`' => {
                    self.token_start(true);
                    self.prev_operand = false;
                    self.at += 1;
                    self.push(Kind::TemplateText, false)?;
                }
                b'/' if self.expect_operand => {
                    self.token_start(false);
                    let start = self.at + 1;
                    self.skip_regex();
                    self.hidden(start, self.at)?;
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
        let reset = (self.boundary || self.operand_before_newline) && !continues;
        if reset {
            self.reset();
        }
        self.statement_start = self.next_is_statement || reset;
        self.next_is_statement = false;
        self.boundary = false;
        self.operand_before_newline = false;
        self.prev_close_paren = std::mem::take(&mut self.after_close_paren);
        self.prev_arrow = std::mem::take(&mut self.after_arrow);
    }

    fn reset(&mut self) {
        if let Some(frame) = self.frames.last_mut() {
            self.total -= frame.count;
            frame.count = 0;
        }
    }

    fn operand_end(&mut self) {
        self.expect_operand = false;
        self.prev_operand = true;
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

    fn check(&mut self) -> Result<(), String> {
        let depth = self.frames.len() - 1;
        self.max_seen = self.max_seen.max(depth + self.total);
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

    fn push(&mut self, kind: Kind, regex_after: bool) -> Result<(), String> {
        self.frames.push(Frame::new(kind, regex_after));
        self.expect_operand = true;
        self.check()
    }

    /// Closes the innermost bracket (a stray closer at the top level is
    /// ignored) and returns whether a `/` after it starts a regex.
    fn pop(&mut self) -> bool {
        if self.frames.len() > 1
            && let Some(frame) = self.frames.pop()
        {
            self.total -= frame.count;
            return frame.regex_after;
        }
        false
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
        let start = self.at;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'`' => {
                    self.hidden(start, self.at)?;
                    self.at += 1;
                    self.pop();
                    self.operand_end();
                    return Ok(());
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.hidden(start, self.at)?;
                    self.at += 2;
                    return self.push(Kind::TemplateExpr, false);
                }
                _ => self.at += 1,
            }
        }
        self.hidden(start, self.at)
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
        let after_operand = std::mem::take(&mut self.prev_operand);
        if std::mem::take(&mut self.after_dot) {
            // A property name, whatever it spells.
            self.token_start(true);
            self.operand_end();
            return Ok(());
        }
        let binary = BINARY_WORDS.contains(&word);
        let continues = binary || CONTINUING_WORDS.contains(&word);
        if after_operand {
            self.boundary = true;
        }
        self.token_start(continues);
        if binary {
            self.expect_operand = true;
        } else if NESTING_WORDS.contains(&word) {
            // Contextual keywords may be plain identifiers (`let / 2`), so
            // they do not announce a regular expression; `await`/`yield`
            // usually are operators.
            self.expect_operand = !CONTEXTUAL_WORDS.contains(&word);
            match word {
                b"if" | b"while" | b"for" | b"with" => self.control_pending = true,
                b"else" | b"do" | b"try" | b"finally" => self.next_is_statement = true,
                b"function" | b"class" if !self.statement_start => {
                    self.function_body_at = Some(self.frames.len());
                }
                _ => {}
            }
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
        self.after_dot = false;
        self.prev_operand = false;
        match b {
            b'(' => {
                self.at += 1;
                let control = std::mem::take(&mut self.control_pending);
                self.push(Kind::Bracket, control)
            }
            b'[' => {
                self.at += 1;
                self.push(Kind::Bracket, false)
            }
            b'{' => {
                self.at += 1;
                let mut block = self.statement_start || self.prev_close_paren || self.prev_arrow;
                if self.function_body_at == Some(self.frames.len()) {
                    // A function or class expression's body: an operand.
                    self.function_body_at = None;
                    block = false;
                }
                self.next_is_statement = block;
                self.push(Kind::Bracket, block)
            }
            b')' | b']' => {
                self.at += 1;
                let control = self.pop();
                self.expect_operand = control;
                // After `if (...)` a statement follows, not an operator.
                self.prev_operand = !control;
                self.next_is_statement = control;
                self.after_close_paren = b == b')';
                Ok(())
            }
            b'}' => {
                self.at += 1;
                let template = self
                    .frames
                    .last()
                    .is_some_and(|f| f.kind == Kind::TemplateExpr);
                let block = self.pop();
                self.expect_operand = block;
                self.prev_operand = true;
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
                self.after_dot = !spread;
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
            self.prev_operand = true;
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
        self.after_dot = op == b"?.";
        self.after_arrow = op == b"=>";
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
    fn strings_comments_and_regexes_hide_unbalanced_brackets() {
        ok(&format!("'{}'", "(".repeat(900)));
        ok(&format!("/* {} */", "(".repeat(900)));
        ok(&format!("// {}", "(".repeat(900)));
        ok(&format!("x = /{}/", "\\(".repeat(900)));
        ok(&format!("x = /[{}]/", "(".repeat(900)));
        ok(&"s = ')' + '(';\n".repeat(10_000));
    }

    /// Text that is not code (HTML in a string, JSX text) does not add up:
    /// a word right after an operand ends the segment.
    #[test]
    fn markup_does_not_accumulate() {
        let items = "<li class=\"a\"><span id=\"b\">t</span></li>".repeat(3_000);
        ok(&format!("x.innerHTML = '<ol class=\"c\">{items}</ol>'"));
        ok(&format!(
            "x = <ol>{}</ol>",
            "<li className=\"a\">don't</li>\n".repeat(3_000)
        ));
        // TypeScript conditional types go on through `extends`.
        let chain = format!("type X = {}T;", "T extends A ? B : ".repeat(MAX_NESTING));
        assert!(refuse(&chain, true).is_some());
        // `async x => async x => ...` goes on through `async`.
        refused(&format!("{}x", "async x => ".repeat(MAX_NESTING)));
    }

    /// Skipped text is re-scanned as code: whatever a misjudged token would
    /// hide from the count is still bounded.
    #[test]
    fn hidden_text_is_rescanned() {
        refused(&format!("'{}'", "(".repeat(MAX_BRACKET_DEPTH + 1)));
        refused(&format!("/* {} */", "!".repeat(MAX_NESTING + 1)));
        refused(&format!("x = `{}`", "a?a:".repeat(MAX_NESTING)));
        // Nesting outside and inside add up.
        let half = "(".repeat(MAX_NESTING / 2 + 1);
        refused(&format!("x = [{}, '{half}']", "!".repeat(MAX_NESTING / 2)));
    }

    /// Places where a regex and a division look alike: misjudging one
    /// would hide the rest of the line from the count.
    #[test]
    fn regex_and_division_are_told_apart() {
        let deep = "(".repeat(MAX_BRACKET_DEPTH + 1);
        // Divisions: taking them for a regex would hide the rest of the line.
        refused(&format!("x = a.if / 2 + {deep}"));
        refused(&format!("x = (a) / 2; {deep}"));
        refused(&format!("x = {{}} / 2 + {deep}"));
        refused(&format!("x = function () {{}} / 2 + {deep}"));
        refused(&format!("let / 2 + {deep}"));
        // Regexes, with quotes and brackets, after `if (...)`, blocks and
        // function declarations.
        ok("if (a) /['\"(]/.test(b)");
        ok("{}\n/[)]/.test(b); x = 1");
        ok("function f() {} /'/.test(b)");
        ok("x = () => {}\n/\"/.test(b)");
    }
}
