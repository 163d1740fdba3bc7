//! Hostile input: `extract` must neither crash nor overflow the stack nor
//! panic, on a thread of [`EXTRACT_STACK_BYTES`]; deep texts are either
//! refused before parsing or parsed with the walk truncated.

use proptest::prelude::*;

use super::prescan::{MAX_BRACKET_DEPTH, MAX_NESTING};
use super::*;

const DEEP: usize = 100_000;

fn nested(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

/// Hostile shapes, each `DEEP` levels (or about 1 MB) deep.
fn hostile() -> Vec<(&'static str, Language, String)> {
    use Language::*;
    vec![
        ("parens", JavaScript, nested("(", "a", ")", DEEP)),
        ("arrays", JavaScript, nested("[", "a", "]", DEEP)),
        (
            "objects",
            JavaScript,
            format!("x = {}", nested("{a:", "1", "}", DEEP)),
        ),
        ("blocks", JavaScript, nested("{", "", "}", DEEP)),
        ("calls in args", JavaScript, nested("f(", "", ")", DEEP)),
        ("templates", JavaScript, nested("`${", "a", "}`", DEEP)),
        ("ternaries", JavaScript, format!("{}a", "a?a:".repeat(DEEP))),
        ("exponents", JavaScript, format!("{}a", "a**".repeat(DEEP))),
        ("assignments", JavaScript, format!("{}a", "a=".repeat(DEEP))),
        ("arrows", JavaScript, format!("{}a", "a=>".repeat(DEEP))),
        ("logical not", JavaScript, format!("{}a", "!".repeat(DEEP))),
        ("negations", JavaScript, format!("{}a", "- ".repeat(DEEP))),
        ("typeof", JavaScript, format!("{}a", "typeof ".repeat(DEEP))),
        ("new", JavaScript, format!("{}a", "new ".repeat(DEEP))),
        ("await", Module, format!("{}a", "await ".repeat(DEEP))),
        ("spread", JavaScript, format!("f({}a)", "...".repeat(DEEP))),
        ("if if", JavaScript, format!("{}a;", "if(a)".repeat(DEEP))),
        (
            "else if",
            JavaScript,
            format!("{}{{}}", "if(a){}else ".repeat(DEEP)),
        ),
        ("labels", JavaScript, format!("{}a;", "l:".repeat(DEEP))),
        ("sums", JavaScript, format!("{}a", "a+".repeat(500_000))),
        ("members", JavaScript, format!("a{}", ".a".repeat(500_000))),
        (
            "call chains",
            JavaScript,
            format!("a{}", "()".repeat(500_000)),
        ),
        (
            "index chains",
            JavaScript,
            format!("a{}", "[0]".repeat(300_000)),
        ),
        ("commas", JavaScript, format!("{}a", "a,".repeat(500_000))),
        ("jsx", Jsx, nested("<a>", "x", "</a>", DEEP)),
        (
            "generics",
            TypeScript,
            format!("let x: {}a{};", "A<".repeat(DEEP), ">".repeat(DEEP)),
        ),
        (
            "namespaces",
            TypeScript,
            format!("namespace a{} {{}}", ".a".repeat(DEEP)),
        ),
        (
            "qualified types",
            TypeScript,
            format!("let x: a{};", ".a".repeat(DEEP)),
        ),
        (
            "destructuring",
            JavaScript,
            format!("{} = x", nested("[", "a", "]", DEEP)),
        ),
        ("unterminated", JavaScript, "(".repeat(DEEP) + "'"),
        // Where a regex and a division look alike (`await` is a name in scripts).
        (
            "await divided",
            JavaScript,
            format!("x = await / 2 + {}", "(".repeat(DEEP)),
        ),
        (
            "yield divided",
            JavaScript,
            format!("x = yield / 2 + {}", "(".repeat(DEEP)),
        ),
        (
            "keyword property",
            JavaScript,
            format!("x = a.if / 2 + {}", "(".repeat(DEEP)),
        ),
        (
            "regex quote",
            JavaScript,
            format!("if (a) /'/.test(b) + {}", "(".repeat(DEEP)),
        ),
        (
            "block then regex",
            JavaScript,
            format!("switch (a) {{ case 1: {{}} /'/; {}", "(".repeat(DEEP)),
        ),
        (
            "jsx text quote",
            Jsx,
            format!("x = <a>'{{{}a", "(".repeat(DEEP)),
        ),
        (
            "jsx text comment",
            Jsx,
            format!("x = <a>//{{{}a", "(".repeat(DEEP)),
        ),
        (
            "jsx text template",
            Jsx,
            format!("x = <a>`{{{}a", "!".repeat(DEEP)),
        ),
    ]
}

#[test]
fn hostile_nesting_never_crashes() {
    let outcomes = run_with_stack(|| {
        hostile()
            .into_iter()
            .map(|(name, language, text)| (name, extract(&text, language).parse))
            .collect::<Vec<_>>()
    })
    .expect("the extraction thread finishes");
    for (name, parse) in &outcomes {
        assert!(
            parse.parsed != parse.not_parsed.is_some(),
            "{name}: parsed and not_parsed disagree: {parse:?}"
        );
    }
    let outcome = |name: &str| &outcomes.iter().find(|(n, _)| *n == name).expect(name).1;
    // Right-nesting shapes are refused; left-associative chains parse
    // iteratively and are cut by the walk instead.
    for name in [
        "parens",
        "ternaries",
        "exponents",
        "logical not",
        "if if",
        "else if",
        "labels",
        "await divided",
        "yield divided",
        "keyword property",
        "regex quote",
        "block then regex",
        "jsx text quote",
        "jsx text comment",
        "jsx text template",
    ] {
        assert!(
            outcome(name).not_parsed.is_some(),
            "{name}: {:?}",
            outcome(name)
        );
    }
    for name in ["sums", "members", "call chains", "index chains"] {
        let parse = outcome(name);
        assert!(parse.parsed && parse.walk_truncated, "{name}: {parse:?}");
    }
    assert!(outcome("commas").parsed && !outcome("commas").walk_truncated);
}

/// The deepest accepted inputs, per shape: these are what the stack
/// reservation must hold, so they run on exactly that stack.
#[test]
fn nesting_just_under_the_bounds_parses_on_the_documented_stack() {
    let depth = MAX_BRACKET_DEPTH - 1;
    let ops = MAX_NESTING - 10;
    let texts = vec![
        nested("(", "a", ")", depth),
        nested("[", "a", "]", depth),
        format!("x = {}", nested("{a:", "1", "}", depth)),
        nested("f(", "", ")", depth),
        format!("x = {}", nested("`${", "a", "}`", depth / 2)),
        format!("{}a", "a?a:".repeat(ops / 2)),
        format!("{}a", "a**".repeat(ops)),
        format!("{}a", "a=".repeat(ops)),
        format!("{}a", "a=>".repeat(ops)),
        format!("{}a", "!".repeat(ops)),
        format!("{}a", "typeof ".repeat(ops)),
        format!("{}a", "new ".repeat(ops)),
        format!("{}a;", "if(a)".repeat(ops)),
        format!("{}{{}}", "if(a){}else ".repeat(ops / 2)),
        format!("{}a;", "l:".repeat(ops / 2)),
        // Both bounds at once: brackets, each holding operators.
        nested("(!!", "a", ")", depth.min(ops / 3)),
    ];
    let results = run_with_stack(move || {
        texts
            .iter()
            .map(|text| extract(text, Language::JavaScript).parse)
            .collect::<Vec<_>>()
    })
    .expect("the extraction thread finishes");
    for (i, parse) in results.iter().enumerate() {
        assert!(parse.parsed, "text {i} refused: {:?}", parse.not_parsed);
    }
}

/// Source-like fragments for token soups.
fn token() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "`",
        "${",
        "'",
        "\"",
        "/",
        "*",
        "//",
        "/*",
        "*/",
        "\n",
        "a",
        "ipcMain",
        ".",
        "on",
        "require",
        "new",
        "BrowserWindow",
        "=",
        "=>",
        "?",
        ":",
        ",",
        ";",
        "!",
        "-",
        "<",
        ">",
        "</",
        "/>",
        "if",
        "else",
        "'x'",
        "0",
        "é",
        "\\",
        "#",
        "@",
        "import",
        "export",
        "from",
        "window",
        "contextBridge",
        "exposeInMainWorld",
        "https://x",
        "webPreferences",
        "loadURL",
        "Menu",
        "buildFromTemplate",
        "label",
    ])
}

const LANGUAGES: [Language; 5] = Language::ALL;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_text_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048), l in 0usize..5) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parse = run_with_stack(move || extract(&text, LANGUAGES[l]).parse);
        prop_assert!(parse.is_some());
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(token(), 0..400), l in 0usize..5) {
        let text = tokens.join(" ");
        let facts = run_with_stack(move || extract(&text, LANGUAGES[l]));
        let facts = facts.expect("no panic");
        prop_assert!(facts.parse.diagnostics.len() <= MAX_DIAGNOSTICS);
        for url in &facts.urls {
            prop_assert!(url.url.chars().count() <= crate::javascript::model::EXCERPT_CHARS);
        }
    }
}
